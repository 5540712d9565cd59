// Mirrors a widget's inputs in the page address (?WIDGET.INPUT=value), so a link
// reproduces exactly what the reader sees. Values go to the engine as text, which validates
// them like any typed input; nothing from the address is ever put into the page as markup.
import { refusal } from "./bounded.js";

const MAX_VALUE_CHARS = 2000;

function prefix(root) {
  return `${root.dataset.widget}.`;
}

function mirrored(root) {
  return new Set((root.dataset.urlState || "").split(",").filter(Boolean));
}

/**
 * Put the address's values for this widget into its form. Returns the names applied and a
 * note for each value refused here (too long or too deeply nested to be real), by name.
 */
export function applyAddress(root, setInput) {
  const applied = new Set();
  const notes = [];
  if (!root.dataset.urlState) return { applied, notes };
  const params = new URLSearchParams(location.search);
  for (const [key, value] of params) {
    if (!key.startsWith(prefix(root))) continue;
    const name = key.slice(prefix(root).length);
    if (!mirrored(root).has(name) || !root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`)) continue;
    const why = refusal(value, MAX_VALUE_CHARS);
    if (why) notes.push(`${name}: ${why}`);
    else {
      setInput(root, name, value);
      applied.add(name);
    }
  }
  return { applied, notes };
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
