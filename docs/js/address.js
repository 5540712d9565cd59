// Mirrors a widget's inputs in the page address (?WIDGET.INPUT=value), so a link
// reproduces exactly what the reader sees. Values go to the engine as text, which validates
// them like any typed input; nothing from the address is ever put into the page as markup.
const MAX_VALUE_CHARS = 2000;

function prefix(root) {
  return `${root.dataset.widget}.`;
}

function mirrored(root) {
  return new Set((root.dataset.urlState || "").split(",").filter(Boolean));
}

export function applyAddress(root, setInput) {
  if (!root.dataset.urlState) return false;
  const params = new URLSearchParams(location.search);
  let applied = false;
  for (const [key, value] of params) {
    if (!key.startsWith(prefix(root)) || value.length > MAX_VALUE_CHARS) continue;
    const name = key.slice(prefix(root).length);
    if (mirrored(root).has(name) && root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`)) {
      setInput(root, name, value);
      applied = true;
    }
  }
  return applied;
}

export function writeAddress(root, inputs) {
  const params = new URLSearchParams(location.search);
  for (const key of [...params.keys()]) if (key.startsWith(prefix(root))) params.delete(key);
  for (const [name, value] of Object.entries(inputs)) {
    // A value too long for an address (a pasted config.json) is not kept; the engine says so.
    if (mirrored(root).has(name) && value.length <= MAX_VALUE_CHARS) params.set(prefix(root) + name, value);
  }
  const query = params.toString();
  history.replaceState(history.state, "", `${location.pathname}${query ? "?" + query : ""}${location.hash}`);
}
