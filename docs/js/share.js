// The widget frame's "Copy link" and a plan's "Copy as command": put the text on the
// clipboard, or where the browser cannot (no clipboard API, no permission, an insecure
// page), show it in a text field, selected, for the reader to copy. A link comes from the
// form (address.js); a command is the engine's own text in the result. No formula here.
import { leftOutWords, linkTo } from "./address.js";

/** @param {string} text */
async function toClipboard(text) {
  try {
    if (!window.isSecureContext || !navigator.clipboard) return false;
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false; // refused (no permission, page not focused): the field below does it
  }
}

/**
 * @param {HTMLElement} root
 * @param {HTMLElement} button
 * @param {WidgetInputs} inputs
 */
async function textToCopy(root, button, inputs) {
  if (button.dataset.copy === "link") {
    const { url, left } = await linkTo(root, inputs);
    return { text: url, note: left.length ? ` ${leftOutWords(left)}` : "" };
  }
  const code = /** @type {Element} */ (button.closest(".widget-copy")).querySelector(".widget-command-text");
  return { text: code ? code.textContent : "", note: "" };
}

/** @param {Element} row a copy row: its status and its text field */
function reset(row) {
  /** @type {Element} */ (row.querySelector(".widget-copy-status")).textContent = "";
  /** @type {HTMLInputElement} */ (row.querySelector(".widget-copy-text")).hidden = true;
}

/**
 * Handle the copy buttons of the widget `root`; `readInputs()` gives its form's values.
 * @param {HTMLElement} root
 * @param {() => WidgetInputs} readInputs
 */
export function mountCopy(root, readInputs) {
  root.addEventListener("click", async (event) => {
    const button = /** @type {HTMLElement | null} */ (/** @type {Element} */ (event.target).closest("[data-copy]"));
    if (!button || !root.contains(button)) return;
    const row = /** @type {Element} */ (button.closest(".widget-copy"));
    const field = /** @type {HTMLInputElement} */ (row.querySelector(".widget-copy-text"));
    const status = /** @type {Element} */ (row.querySelector(".widget-copy-status"));
    const { text, note } = await textToCopy(root, button, readInputs());
    field.value = text;
    if (await toClipboard(text)) {
      field.hidden = true;
      status.textContent = `Copied.${note}`;
    } else {
      field.hidden = false;
      field.focus();
      field.select();
      status.textContent = `Selected: press Ctrl+C (⌘C on a Mac) to copy it.${note}`;
    }
  });
  // A changed input makes a copied link old news: say nothing rather than "Copied".
  /** @type {Element} */ (root.querySelector(".widget-controls")).addEventListener("input", () => {
    const row = root.querySelector(".widget-copy-link");
    if (row) reset(row);
  });
}
