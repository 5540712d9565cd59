// Mirrors a widget's inputs in the page address (?WIDGET.INPUT=value), so a link
// reproduces exactly what the reader sees, and writes the link "Copy link" copies (the
// inputs the engine lists in data-link-inputs, and an anchor to the widget). Values go to
// the engine as text, which validates them like any typed input; nothing from the address
// is ever put into the page as markup.
//
// A value longer than the plain limit (a pasted config.json) travels compressed:
// "deflate." and the raw-deflate bytes of its UTF-8 text in base64url. One that makes the
// address longer than the longest address it keeps stays in this tab's sessionStorage, the
// address saying "tab" in its place, and the page says so beside the link.
import { refusal } from "./bounded.js";
import { RUNTIME } from "./runtime-config.js";
import { store } from "./store.js";

// The engine's limits, written by the build (engine/render/options.py).
const MAX_PLAIN_CHARS = RUNTIME.max_address_chars;
const MAX_ADDRESS_CHARS = RUNTIME.max_link_chars;
const DEFLATED = "deflate.";
const IN_TAB = "tab";

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
function mirrors(root) {
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
 * The sessionStorage key of a value kept in this tab for this page's widget.
 * @param {HTMLElement} root
 * @param {string} name
 */
function tabKey(root, name) {
  return `session:address:${location.pathname}#${root.id}.${name}`;
}

/** @param {Uint8Array} bytes */
function toBase64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * `text` compressed for an address, or null where this browser cannot compress.
 * @param {string} text
 */
async function deflate(text) {
  if (typeof CompressionStream === "undefined") return null;
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return DEFLATED + toBase64url(new Uint8Array(await new Response(stream).arrayBuffer()));
}

/**
 * The text of a compressed address value, at most `maxChars` long; throws an Error whose
 * message says why it cannot be read (cut short, not compressed text, too long).
 * @param {string} code base64url, without the "deflate." mark
 * @param {number} maxChars
 */
async function inflate(code, maxChars) {
  if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot unpack a compressed link value.");
  if (!/^[A-Za-z0-9_-]+$/.test(code) || code.length % 4 === 1) throw new Error("it is not a compressed value (cut short or changed by hand?).");
  const binary = atob(code.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (code.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  const reader = new Blob([bytes]).stream()
    .pipeThrough(new DecompressionStream("deflate-raw"))
    .pipeThrough(new TextDecoderStream("utf-8", { fatal: true }))
    .getReader();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += value;
      // Read piece by piece: a few kilobytes that unpack to gigabytes stop here.
      if (text.length > maxChars) {
        reader.cancel().catch(() => {});
        throw new Error(`it unpacks to more than ${maxChars.toLocaleString("en-US")} characters, more than is read here.`);
      }
    }
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("it unpacks")) throw error;
    throw new Error("it is not a compressed value (cut short or changed by hand?).", { cause: error });
  }
}

/**
 * The longest text the engine reads in the input `name` (its data-max-chars, else the
 * engine's limit on any input).
 * @param {HTMLElement} root
 * @param {string} name
 */
function maxCharsOf(root, name) {
  const field = /** @type {HTMLElement | null} */ (root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`));
  return Number(field?.dataset.maxChars) || RUNTIME.max_input_chars;
}

/**
 * A linked value as the text the input takes: plain, unpacked, or the value kept in this
 * tab. Returns the text, or why it is refused.
 * @param {HTMLElement} root
 * @param {string} name
 * @param {string} value
 * @returns {Promise<{text: string} | {why: string}>}
 */
async function linkedText(root, name, value) {
  if (value === IN_TAB) {
    const kept = store.load(tabKey(root, name));
    if (kept === null) {
      return { why: "the link does not carry it: it was too large for an address and is kept only in the tab where it was typed (paste it again here)." };
    }
    return { text: kept };
  }
  if (!value.startsWith(DEFLATED)) {
    const why = refusal(value, MAX_PLAIN_CHARS);
    return why ? { why } : { text: value };
  }
  const tooLong = refusal(value, MAX_ADDRESS_CHARS);
  if (tooLong) return { why: tooLong };
  try {
    const text = await inflate(value.slice(DEFLATED.length), maxCharsOf(root, name));
    const why = refusal(text, maxCharsOf(root, name));
    return why ? { why } : { text };
  } catch (error) {
    return { why: /** @type {Error} */ (error).message };
  }
}

/**
 * Why `text` cannot go into the select `name` (none of its options: a select would silently
 * take none), naming it; "" when it can, or when `name` is not a select.
 * @param {HTMLElement} root
 * @param {string} name
 * @param {string} text
 */
function notAChoice(root, name, text) {
  const field = root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`);
  if (!(field instanceof HTMLSelectElement)) return "";
  if ([...field.options].some((option) => option.value === text)) return "";
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return `the link names ${JSON.stringify(shown)}, which is not one of this page's choices; the page's own is kept.`;
}

/**
 * Put the address's values for this widget into its form. Returns the names applied and a
 * note for each value refused here (too long, nested too deeply, a compressed value that
 * does not unpack, none of a select's options), by name.
 * @param {HTMLElement} root
 * @param {SetInput} setInput
 * @returns {Promise<{applied: Set<string>, notes: string[]}>}
 */
export async function applyAddress(root, setInput) {
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
    const read = await linkedText(root, name, value);
    const why = "why" in read ? read.why : notAChoice(root, name, read.text);
    if (why || "why" in read) notes.push(`${name}: ${why}`);
    else {
      setInput(root, name, read.text);
      applied.add(name);
    }
  }
  if (applied.size) root.dataset.linked = "1";
  return { applied, notes };
}

/**
 * The address query for `inputs` (those of `wanted`): each value plain, compressed, or
 * kept in this tab when the address would grow past its limit. Returns the query and the
 * names kept in the tab.
 * @param {HTMLElement} root
 * @param {WidgetInputs} inputs
 * @param {Set<string>} wanted
 * @param {URLSearchParams} params the other widgets' values, kept
 */
async function encode(root, inputs, wanted, params) {
  /** @type {string[]} */
  const inTab = [];
  /** @type {[string, string][]} */
  const packed = [];
  for (const name of wanted) {
    if (!(name in inputs)) continue;
    const value = inputs[name];
    if (value.length <= MAX_PLAIN_CHARS) params.set(prefix(root) + name, value);
    else packed.push([name, (await deflate(value)) || ""]);
  }
  // The shortest compressed values first, so as many as fit travel in the address.
  packed.sort((a, b) => a[1].length - b[1].length);
  const base = `${location.href.split(/[?#]/)[0]}?#${root.id}`.length;
  for (const [name, code] of packed) {
    const longer = base + params.toString().length + prefix(root).length + name.length + code.length + 2;
    if (code && longer <= MAX_ADDRESS_CHARS) {
      params.set(prefix(root) + name, code);
      store.forget(tabKey(root, name));
    } else {
      params.set(prefix(root) + name, IN_TAB);
      store.save(tabKey(root, name), inputs[name]);
      inTab.push(name);
    }
  }
  return { query: params.toString(), inTab };
}

/**
 * The link to this widget as it is now: this page with the inputs a link carries (defaults
 * too, so it keeps its meaning) and an anchor to the widget. `left` names the values too
 * large for any address, kept in this tab only.
 * @param {HTMLElement} root
 * @param {WidgetInputs} inputs
 * @returns {Promise<{url: string, left: string[]}>}
 */
export async function linkTo(root, inputs) {
  const { query, inTab } = await encode(root, inputs, names(root.dataset.linkInputs), new URLSearchParams());
  const page = location.href.split(/[?#]/)[0];
  return { url: `${page}${query ? "?" + query : ""}#${root.id}`, left: inTab };
}

/**
 * The sentence beside "Copy link" while some values are too large for an address ('' when
 * none is).
 * @param {string[]} left
 */
export function leftOutWords(left) {
  if (!left.length) return "";
  return `Too large for a link even compressed: ${left.join(", ")}. This tab keeps it (a reload here shows it), but a copied link does not carry it.`;
}

/**
 * Say beside the widget's "Copy link" what a link leaves out, before the reader relies on it.
 * @param {HTMLElement} root
 * @param {string[]} left
 */
function sayLeftOut(root, left) {
  const row = root.querySelector(".widget-copy-link");
  if (!row) return;
  let note = row.querySelector(".widget-link-note");
  if (!note) {
    note = document.createElement("p");
    note.className = "widget-link-note";
    row.append(note);
  }
  note.textContent = leftOutWords(left);
}

// The latest address write per widget: an older one finishing later is dropped.
/** @type {WeakMap<HTMLElement, number>} */
const writes = new WeakMap();

/**
 * Put the widget's mirrored inputs into the page address (replacing its entry in history),
 * and say beside the link what no address can carry. Widgets that do not mirror their
 * inputs get the note alone, for the link they copy.
 * @param {HTMLElement} root
 * @param {WidgetInputs} inputs
 */
export async function writeAddress(root, inputs) {
  const turn = (writes.get(root) || 0) + 1;
  writes.set(root, turn);
  const params = new URLSearchParams(location.search);
  for (const key of [...params.keys()]) if (key.startsWith(prefix(root))) params.delete(key);
  const wanted = mirrors(root) ? mirrored(root) : names(root.dataset.linkInputs);
  const long = [...wanted].some((name) => (inputs[name] || "").length > MAX_PLAIN_CHARS);
  if (!mirrors(root) && !long) {
    sayLeftOut(root, []);
    return;
  }
  const { query, inTab } = await encode(root, inputs, wanted, mirrors(root) ? params : new URLSearchParams());
  if (writes.get(root) !== turn) return;
  sayLeftOut(root, inTab);
  if (!mirrors(root)) return;
  history.replaceState(history.state, "", `${location.pathname}${query ? "?" + query : ""}${location.hash}`);
}
