// Mounts every [data-widget] on the page and keeps it live through one shared engine worker.
// This file holds no formula: it sends the reader's inputs to the engine (Python, in Pyodide,
// in a Web Worker) and swaps in the HTML the engine rendered.
import { engine } from "./engine-client.js";
import { registerOffline } from "./offline.js";
import { store } from "./store.js";
import { startClock } from "./clock.js";
import { applyAddress, writeAddress } from "./address.js";
import { mountCopy } from "./share.js";
import { MAX_STORED_CHARS, refusal } from "./bounded.js";
import { trackProgress } from "./progress.js";

/**
 * @param {HTMLElement} root
 * @returns {NodeListOf<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>}
 */
function controlsOf(root) {
  return root.querySelectorAll(".widget-controls [name]");
}

/**
 * @param {HTMLElement} root
 * @returns {WidgetInputs}
 */
function readInputs(root) {
  /** @type {WidgetInputs} */
  const values = {};
  for (const field of controlsOf(root)) values[field.name] = field.value;
  return values;
}

/** @type {SetInput} */
function setInput(root, name, value) {
  const field = /** @type {HTMLInputElement | null} */ (root.querySelector(`.widget-controls [name="${CSS.escape(name)}"]`));
  if (field) field.value = value;
  if (field) sayNotch(field);
}

// A slider announces its notch in words the engine wrote for each (data-value-texts), not a
// bare number: "a batch of 64", not "6".
/** @param {Element} field */
function sayNotch(field) {
  const input = /** @type {HTMLInputElement} */ (field);
  if (input.type !== "range" || !input.dataset.valueTexts) return;
  /** @type {unknown} */
  let texts;
  try {
    texts = JSON.parse(input.dataset.valueTexts);
  } catch {
    return;
  }
  const notch = Number(input.value) - Number(input.min || 0);
  const text = Array.isArray(texts) ? texts[notch] : undefined;
  if (typeof text === "string") input.setAttribute("aria-valuetext", text);
  else input.removeAttribute("aria-valuetext");
  // A slider that shows its notch's words (engine Control.shows_value) keeps them in step.
  const shown = input.parentElement?.querySelector("output.widget-value");
  if (shown) shown.textContent = typeof text === "string" ? text : input.value;
}

// Paper has no form (docs/css/lesson.css hides it in print): a line before the result, shown
// only in print, says what each control on screen holds, so a printed result names its inputs.
/** @param {HTMLElement} root */
function notePrintedValues(root) {
  const output = root.querySelector(".widget-result");
  let line = root.querySelector(".widget-print-values");
  if (!output) return;
  if (!line) {
    line = document.createElement("p");
    line.className = "widget-print-values";
    output.before(line);
  }
  const parts = [];
  for (const field of root.querySelectorAll(".widget-controls .widget-field")) {
    const label = field.querySelector("label");
    const control = /** @type {HTMLInputElement | HTMLSelectElement | null} */ (field.querySelector("input[name], select[name]"));
    // A field a choice hides is display: none itself; one in folded inputs still counts.
    if (!label || !control || getComputedStyle(field).display === "none") continue;
    const value = control instanceof HTMLSelectElement
      ? control.selectedOptions[0]?.text ?? control.value
      : control.getAttribute("aria-valuetext") || control.value;
    parts.push(`${label.textContent}: ${value}`);
  }
  line.textContent = parts.join(" · ");
}

/**
 * A field holding more text than the engine reads there (data-max-chars, from the engine's
 * field): refused beside it before the engine is asked; the text stays in the box.
 * @param {HTMLElement} root
 * @returns {EngineReply | null}
 */
function overLimit(root) {
  for (const field of controlsOf(root)) {
    const max = Number(/** @type {HTMLElement} */ (field).dataset.maxChars);
    if (max > 0 && field.value.length > max) {
      const n = field.value.length.toLocaleString("en-US");
      return {
        error: `This is ${n} characters long; at most ${max.toLocaleString("en-US")} are read here. ` +
          "Paste the file's text alone.",
        field: field.name,
      };
    }
  }
  return null;
}

/**
 * @param {HTMLElement} root
 * @param {EngineReply} error a reply with an error
 */
function showError(root, error) {
  const field = error.field || "widget";
  const slot = /** @type {Element} */ (
    root.querySelector(`.widget-error[data-error-for="${CSS.escape(field)}"]`) ||
    root.querySelector(".widget-status")
  );
  slot.textContent = /** @type {string} */ (error.error);
  const control = root.querySelector(`.widget-controls [name="${CSS.escape(field)}"]`);
  if (control) control.setAttribute("aria-invalid", "true");
  /** @type {Element} */ (root.querySelector(".widget-result")).classList.add("is-stale");
}

/**
 * The engine's notes beside inputs it accepted (a value the other task would refuse, a context
 * beyond the model's maximum), in the inputs' own message slots.
 * @param {HTMLElement} root
 * @param {Record<string, string>} notes input name -> text
 */
function showNotes(root, notes) {
  for (const [name, text] of Object.entries(notes)) {
    const slot = root.querySelector(`.widget-error[data-error-for="${CSS.escape(name)}"]`);
    if (!slot) continue;
    slot.textContent = text;
    slot.classList.add("widget-note");
  }
}

/** @param {HTMLElement} root */
function clearErrors(root) {
  for (const slot of root.querySelectorAll(".widget-error")) {
    slot.textContent = "";
    slot.classList.remove("widget-note");
  }
  for (const control of root.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  /** @type {Element} */ (root.querySelector(".widget-result")).classList.remove("is-stale");
}

/**
 * @param {HTMLElement} root
 * @param {string} state "loading", "live" or "error"
 * @param {string} [text] the status line (unchanged when left out)
 */
function setStatus(root, state, text) {
  root.dataset.state = state;
  const status = root.querySelector(".widget-status");
  if (text !== undefined && status) status.textContent = text;
}

const LIVE = "Live: computed in your browser.";

/** @param {HTMLElement} root */
function mount(root) {
  if (root.dataset.mounted) return;
  root.dataset.mounted = "1";
  const form = /** @type {HTMLFormElement} */ (root.querySelector(".widget-controls"));
  const output = /** @type {Element} */ (root.querySelector(".widget-result"));
  const storeKey = root.dataset.store || "";
  // A result's links to other pages (engine/render/widget.py names them by page) get their
  // addresses from the build; the engine's own renders carry none, so keep the build's.
  /** @type {Map<string, string>} */
  const siteLinks = new Map();
  output.querySelectorAll("a[data-site-page][href]").forEach((a) => {
    siteLinks.set(/** @type {string} */ (/** @type {HTMLElement} */ (a).dataset.sitePage), /** @type {string} */ (a.getAttribute("href")));
  });
  /** @type {Promise<EngineReply>} */
  let chain = Promise.resolve({});
  let plainQueued = false;

  // Ask the engine for this widget's result; `extra` carries a pressed button. Calls run one
  // after another and each reads the inputs when its turn comes, so a button's new state is
  // never overwritten by a render that started before it; plain re-renders that pile up while
  // one is running collapse into one.
  /** @param {{action?: string}} [extra] */
  function refresh(extra = {}) {
    const isAction = Boolean(extra.action);
    if (!isAction) {
      if (plainQueued) return chain;
      plainQueued = true;
    }
    chain = chain.then(() => {
      if (!isAction) plainQueued = false;
      return render(extra).catch((error) => {
        if (root.dataset.state === "error") return { error: error.message, field: "widget" };
        const reply = { error: `The engine failed: ${error.message}`, field: "widget" };
        showError(root, reply);
        return reply;
      });
    });
    return chain;
  }

  /**
   * @param {{action?: string}} extra
   * @returns {Promise<EngineReply>}
   */
  async function render(extra) {
    const tooLong = overLimit(root);
    if (tooLong) {
      clearErrors(root);
      showError(root, tooLong);
      return tooLong;
    }
    // A button's work may take seconds (a search): past a moment, say so; the form stays usable.
    const slow = extra.action ? setTimeout(() => {
      root.setAttribute("aria-busy", "true");
      setStatus(root, /** @type {string} */ (root.dataset.state), "Working…");
    }, 200) : 0;
    let reply;
    try {
      reply = await engine.render(/** @type {string} */ (root.dataset.widget), { ...readInputs(root), ...extra });
    } finally {
      clearTimeout(slow);
      root.removeAttribute("aria-busy");
    }
    clearErrors(root);
    if (reply.error) {
      showError(root, reply);
      return reply;
    }
    // The status describes this render: an earlier failure or note is gone once it is live.
    if (root.dataset.state === "live") setStatus(root, "live", LIVE);
    for (const [name, value] of Object.entries(reply.set || {})) setInput(root, name, value);
    showNotes(root, reply.notes || {});
    // A block the reader opened stays open across renders (an animation renders every tick).
    const open = [...output.querySelectorAll("details")].map((d) => d.open);
    output.innerHTML = /** @type {string} */ (reply.html); // rendered and escaped by the engine
    output.querySelectorAll("details").forEach((d, i) => { if (open[i]) d.open = true; });
    notePrintedValues(root);
    output.querySelectorAll("a[data-site-page]").forEach((a) => {
      const href = siteLinks.get(/** @type {string} */ (/** @type {HTMLElement} */ (a).dataset.sitePage));
      if (href) a.setAttribute("href", href);
    });
    // Frames of simulated time to play (the traffic on dgx-1): fetched only when a result has them.
    const frames = output.querySelector("[data-frames-animate]");
    if (frames) import("./frames.js").then(({ playFrames }) => playFrames(frames));
    if (storeKey) store.save(storeKey, readInputs(root).state, root);
    writeAddress(root, readInputs(root));
    root.dispatchEvent(new CustomEvent("widget:updated", { bubbles: true, detail: reply }));
    return reply;
  }
  /** @type {HTMLElement & {refresh?: typeof refresh}} */ (root).refresh = refresh;

  form.addEventListener("submit", (event) => event.preventDefault());
  notePrintedValues(root);
  mountCopy(root, () => readInputs(root));
  // Every input goes to the engine at once (a render takes about a millisecond). Before the
  // engine is up, the request waits for it and then renders what the form holds by then.
  form.addEventListener("input", (event) => {
    sayNotch(/** @type {Element} */ (event.target));
    if (root.dataset.state !== "error") refresh();
  });
  form.addEventListener("click", (event) => {
    const button = /** @type {HTMLElement | null} */ (/** @type {Element} */ (event.target).closest("[data-action]"));
    if (button && root.dataset.state !== "error") refresh({ action: button.dataset.action });
  });
  if (storeKey) {
    // Another widget changed the shared state (the dgx-1 panel on the same page): follow it.
    store.subscribe(storeKey, root, (value) => {
      if (readInputs(root).state === value) return;
      setInput(root, "state", value);
      if (root.dataset.state === "live") refresh();
    });
  }
  if (root.dataset.clock) startClock(root, refresh, setInput);

  setStatus(root, "loading", "Loading the engine…");
  engine.onProgress((stage) => {
    if (root.dataset.state === "loading") setStatus(root, "loading", stage);
  });

  // Read now, while every widget on the page sees the same kept value (the first to start
  // forgets a refused one).
  const keptRefusal = storeKey ? refusal(store.load(storeKey) || "", MAX_STORED_CHARS) : "";

  /**
   * Linked values the engine refuses: drop each one alone (back to the page's value), keep
   * the others, and say each refusal once. A refusal at a field the link did not set, or set
   * and was already put back (an empty config with the model "config"), comes from a linked
   * value that needs that field: the one whose page value clears the refusal is dropped.
   * Returns the reply to the inputs kept.
   * @param {EngineReply} reply the reply to every linked value
   * @param {Set<string>} applied the names the link set (those dropped are deleted)
   * @param {WidgetInputs} defaults the page's own inputs
   * @param {string[]} notes what was ignored, added to
   * @returns {Promise<EngineReply>}
   */
  async function dropRefusedLinks(reply, applied, defaults, notes) {
    while (reply.error && reply.field !== undefined && applied.size) {
      const refusedField = reply.field;
      const said = `${refusedField}: ${reply.error}`;
      if (!notes.includes(said)) notes.push(said);
      const suspects = applied.has(refusedField) ? [refusedField] : [...applied];
      /** @type {EngineReply | null} */
      let next = null;
      for (const name of suspects) {
        const linked = readInputs(root)[name];
        setInput(root, name, defaults[name]);
        const tried = await refresh();
        if (root.dataset.state === "error") return tried;
        if (name === refusedField || !tried.error || tried.field !== refusedField) {
          applied.delete(name);
          if (name !== refusedField) notes.push(`${name}: not used without a valid ${refusedField}.`);
          next = tried;
          break;
        }
        setInput(root, name, linked);
      }
      if (next === null) return reply; // no one linked value explains it
      reply = next;
    }
    return reply;
  }

  async function goLive() {
    const notes = [];
    if (keptRefusal) notes.push(`the saved state: ${keptRefusal}`);
    if (storeKey) {
      const kept = store.load(storeKey);
      if (kept !== null && refusal(kept, MAX_STORED_CHARS)) store.forget(storeKey);
      else if (kept !== null) setInput(root, "state", kept);
    }
    /** @type {WidgetInputs} */
    const defaults = JSON.parse(/** @type {string} */ (root.dataset.inputs));
    const fromAddress = await applyAddress(root, setInput);
    notes.push(...fromAddress.notes);
    // A widget with a hidden "restore" button puts back the inputs its kept state holds.
    let reply = await refresh(root.querySelector('[data-action="restore"]') ? { action: "restore" } : {});
    if (root.dataset.state === "error") return; // the engine failed meanwhile: it says so
    reply = await dropRefusedLinks(reply, fromAddress.applied, defaults, notes);
    if (reply.error && (storeKey || fromAddress.applied.size)) {
      // A kept or linked value the engine refuses as a whole (corrupted, or from another
      // version): start from the page's own inputs, and say what was ignored.
      if (storeKey) store.forget(storeKey);
      if (!notes.some((note) => note.endsWith(/** @type {string} */ (reply.error)))) notes.push(reply.error);
      for (const [name, value] of Object.entries(defaults)) setInput(root, name, value);
      await refresh();
    }
    if (root.dataset.state === "error") return;
    // Live once the engine's own result is on screen.
    const note = notes.length ? ` Ignored a saved or linked value: ${notes.join(" ")}` : "";
    setStatus(root, "live", `${LIVE}${note}`);
  }

  /** @type {(() => void) | null} */
  let stop = null;
  stop = engine.onState((engineState, reason) => {
    if (!root.isConnected) {
      if (stop) stop();
      return;
    }
    if (engineState === "failed") showEngineFailure(root, reason);
    else {
      for (const button of root.querySelectorAll(".widget-retry")) button.remove();
      if (engineState === "loading" && root.dataset.state === "error") {
        setStatus(root, "loading", "Starting the engine again…");
      } else if (engineState === "ready" && root.dataset.state !== "live") goLive();
    }
  });
}

// The engine failed to start or stopped: keep the build-time numbers, say what failed and
// what the reader can do, and offer to start it again.
/**
 * @param {HTMLElement} root
 * @param {string} reason
 */
function showEngineFailure(root, reason) {
  setStatus(
    root,
    "error",
    `The live engine stopped: ${reason}. The numbers shown were computed when the page was ` +
      "built, for the inputs it opened with. Try again, or reload the page; if it keeps " +
      "failing, a network filter or an old browser may be blocking the Python runtime.",
  );
  if (root.querySelector(".widget-retry")) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "widget-retry md-button";
  button.textContent = "Try again";
  button.addEventListener("click", () => engine.retry());
  /** @type {Element} */ (root.querySelector(".widget-status")).after(button);
}

// The theme's search dialog has no accessible name; give it one.
function nameThemeLandmarks() {
  const search = document.querySelector(".md-search");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search the lesson");
}

// Glossary terms (<abbr title=...>) show their definition on hover; the first use of each
// term on a page can also be focused, so keyboard readers get it without a tab stop per use.
function focusableTerms() {
  const seen = new Set();
  for (const term of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".md-content abbr[title]"))) {
    if (seen.has(term.title) || term.hasAttribute("tabindex")) continue;
    seen.add(term.title);
    term.setAttribute("tabindex", "0");
  }
}

function mountAll() {
  nameThemeLandmarks();
  focusableTerms();
  trackProgress();
  const widgets = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("[data-widget]"));
  // Start Python only where a widget needs it, once the page has painted (or after 100 ms at
  // the latest).
  if (widgets.length) engine.startAfterFirstPaint(100);
  widgets.forEach(mount);
  registerOffline();
}

if (window.document$ && typeof window.document$.subscribe === "function") {
  window.document$.subscribe(mountAll); // Material's instant navigation
} else if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", mountAll);
} else {
  mountAll();
}
