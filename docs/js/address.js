// Mirrors a widget's inputs in the page address (?WIDGET.INPUT=value), so a link
// reproduces exactly what the reader sees, and writes the link "Copy link" copies (the
// inputs the engine lists in data-link-inputs, and an anchor to the widget). Values go to
// the engine as text, which validates them like any typed input; nothing from the address
// is ever put into the page as markup.
import { refusal } from "./bounded.js";
import { RUNTIME } from "./runtime-config.js";

// The engine's limit, written by the build (engine/render/options.py: ADDRESS_MAX_CHARS).
const MAX_VALUE_CHARS = RUNTIME.max_address_chars;

/** @param {HTMLElement} root */
function prefix(root) {
  return `${root.dataset.widget}.`;
}

/** @param {string | undefined} list comma-separated */
function names(list) {
  return new Set((list || "").split(",").filter(Boolean));
}

// The inputs kept in the address as the reader works: the widget's url_state, or every
// input a link carries once the widget was opened from such a link (so the address stays true).
/** @param {HTMLElement} root */
function mirrored(root) {
  return names(root.dataset.linked ? root.dataset.linkInputs : root.dataset.urlState);
}

/**
 * Whether the address is kept up to date with this widget's inputs.
 * @param {HTMLElement} root
 */
export function mirrors(root) {
  return mirrored(root).size > 0;
}

// A link points at one widget (#its-id); where a page has two of the same widget, only
// that one takes the link's values.
/** @param {HTMLElement} root */
function addressedTo(root) {
  const target = location.hash.slice(1); // widget ids are plain: w-serve-plan-1
  const twins = [...document.querySelectorAll(`[data-widget="${CSS.escape(/** @type {string} */ (root.dataset.widget))}"]`)];
  return twins.length < 2 || !twins.some((twin) => twin.id === target) || root.id === target;
}

/**
 * Put the address's values for this widget into its form. Returns the names applied and a
 * note for each value refused here (too long or too deeply nested to be real), by name.
 * @param {HTMLElement} root
 * @param {SetInput} setInput
 * @returns {{applied: Set<string>, notes: string[]}}
 */
export function applyAddress(root, setInput) {
  const applied = new Set();
  /** @type {string[]} */
  const notes = [];
  const linkable = names(root.dataset.linkInputs);
  if (!linkable.size || !addressedTo(root)) return { applied, notes };
  const params = new URLSearchParams(location.search);
  for (const [key, value] of params) {
    if (!key.startsWith(prefix(root))) continue;
    const name = key.slice(prefix(root).length);
    if (!linkable.has(name) || !root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`)) continue;
    const why = refusal(value, MAX_VALUE_CHARS);
    if (why) notes.push(`${name}: ${why}`);
    else {
      setInput(root, name, value);
      applied.add(name);
    }
  }
  if (applied.size) root.dataset.linked = "1";
  return { applied, notes };
}

/**
 * The link to this widget as it is now: this page with the inputs a link carries (defaults
 * too, so it keeps its meaning) and an anchor to the widget. `left` names the values too
 * long for an address (a pasted config.json), which the link leaves out.
 * @param {HTMLElement} root
 * @param {WidgetInputs} inputs
 * @returns {{url: string, left: string[]}}
 */
export function linkTo(root, inputs) {
  const params = new URLSearchParams();
  const left = [];
  for (const name of names(root.dataset.linkInputs)) {
    if (!(name in inputs)) continue;
    if (inputs[name].length > MAX_VALUE_CHARS) left.push(name);
    else params.set(prefix(root) + name, inputs[name]);
  }
  const query = params.toString();
  const page = location.href.split(/[?#]/)[0];
  return { url: `${page}${query ? "?" + query : ""}#${root.id}`, left };
}

/**
 * Put the widget's mirrored inputs into the page address (replacing its entry in history).
 * @param {HTMLElement} root
 * @param {WidgetInputs} inputs
 */
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
