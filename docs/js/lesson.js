// Mounts every [data-widget] on the page and keeps it live through one shared engine worker.
// This file holds no formula: it sends the reader's inputs to the engine (Python, in Pyodide,
// in a Web Worker) and swaps in the HTML the engine rendered.
import { engine } from "./engine-client.js";
import { registerOffline } from "./offline.js";

function readInputs(root) {
  const values = {};
  for (const field of root.querySelectorAll(".widget-controls [name]")) {
    values[field.name] = field.value;
  }
  return values;
}

function showError(root, error) {
  const field = error.field || "widget";
  const slot =
    root.querySelector(`.widget-error[data-error-for="${CSS.escape(field)}"]`) ||
    root.querySelector(".widget-status");
  slot.textContent = error.error;
  const control = root.querySelector(`.widget-controls [name="${CSS.escape(field)}"]`);
  if (control) control.setAttribute("aria-invalid", "true");
  root.querySelector(".widget-result").classList.add("is-stale");
}

function clearErrors(root) {
  for (const slot of root.querySelectorAll(".widget-error")) slot.textContent = "";
  for (const control of root.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
  root.querySelector(".widget-result").classList.remove("is-stale");
}

function setStatus(root, state, text) {
  root.dataset.state = state;
  const status = root.querySelector(".widget-status");
  if (text !== undefined && status) status.textContent = text;
}

function mount(root) {
  if (root.dataset.mounted) return;
  root.dataset.mounted = "1";
  const form = root.querySelector(".widget-controls");
  const output = root.querySelector(".widget-result");
  let sequence = 0;

  async function refresh() {
    const mine = ++sequence;
    const reply = await engine.render(root.dataset.widget, readInputs(root));
    if (mine !== sequence) return; // a newer input is already on its way
    clearErrors(root);
    if (reply.error) {
      showError(root, reply);
    } else {
      output.innerHTML = reply.html; // rendered and escaped by the engine
      root.dispatchEvent(new CustomEvent("widget:updated", { bubbles: true }));
    }
  }

  form.addEventListener("submit", (event) => event.preventDefault());
  // Every input goes to the engine at once (a render takes about a millisecond); replies
  // to superseded inputs are dropped by the sequence check in refresh().
  form.addEventListener("input", () => {
    if (root.dataset.state === "live") refresh();
  });

  setStatus(root, "loading", "Loading the engine…");
  engine.onProgress((stage) => {
    if (root.dataset.state === "loading") setStatus(root, "loading", stage);
  });
  engine
    .ready()
    .then(async () => {
      if (!root.isConnected) return;
      setStatus(root, "live", "Live: computed by the engine in your browser.");
      await refresh();
    })
    .catch((error) => {
      setStatus(root, "error", `The live engine could not start (${error.message}). The numbers shown were computed when the page was built.`);
    });
}

// The theme's search dialog has no accessible name; give it one.
function nameThemeLandmarks() {
  const search = document.querySelector(".md-search");
  if (search && !search.hasAttribute("aria-label")) search.setAttribute("aria-label", "Search the lesson");
}

function mountAll() {
  nameThemeLandmarks();
  const widgets = document.querySelectorAll("[data-widget]");
  // Let the text and build-time numbers paint first; start Python only where a widget needs it.
  if (widgets.length) {
    requestAnimationFrame(() => setTimeout(() => engine.start(), 0));
  }
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
