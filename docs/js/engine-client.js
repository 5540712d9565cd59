// The page's side of the engine: one module Web Worker per tab running Pyodide with the
// engine wheel, shared by every widget and kept across instant navigation.
let worker = null;
let nextId = 1;
const pending = new Map();
const progressListeners = new Set();
let lastStage = "";
let resolveReady;
let rejectReady;
const readyPromise = new Promise((resolve, reject) => {
  resolveReady = resolve;
  rejectReady = reject;
});

function onMessage(event) {
  const message = event.data;
  if (message.type === "progress") {
    lastStage = message.stage;
    for (const listener of progressListeners) listener(message.stage);
  } else if (message.type === "ready") {
    progressListeners.clear();
    resolveReady();
  } else if (message.type === "failed") {
    rejectReady(new Error(message.error));
  } else if (message.type === "result") {
    const resolve = pending.get(message.id);
    pending.delete(message.id);
    // A runtime that failed fatally may answer with no JSON at all: settle the render as a
    // failure rather than throw here and leave it waiting for ever.
    if (!resolve) return;
    if (typeof message.json === "string") resolve(JSON.parse(message.json));
    else resolve({ error: "The engine failed: the Python runtime stopped.", field: "widget", fatal: true });
  }
}

export const engine = {
  /** Start the worker (once per tab). */
  start() {
    if (worker) return readyPromise;
    const onError = (event) => rejectReady(new Error(event.message || "the engine worker failed to load"));
    const early = window.__lessonEarlyEngine;
    if (early) early.start(); // no-op once the head script has started it at first paint
    if (early && early.worker) {
      // Started by the head script (partials/boot-engine.html): take it over and replay
      // what it said.
      worker = early.worker;
      worker.removeEventListener("message", early.listener);
      worker.removeEventListener("error", early.listener);
      worker.addEventListener("message", onMessage);
      worker.addEventListener("error", onError);
      for (const event of early.messages) (event.type === "error" ? onError : onMessage)(event);
      early.messages = [];
      return readyPromise;
    }
    try {
      worker = new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" });
    } catch (error) {
      rejectReady(error);
      return readyPromise;
    }
    worker.addEventListener("message", onMessage);
    worker.addEventListener("error", onError);
    worker.postMessage({ type: "init" });
    return readyPromise;
  },
  /**
   * Start the worker once the page has painted (or after `fallbackMs`), so the text and the
   * build-time numbers paint first. The head script (partials/boot-engine.html) knows when
   * that is; without it (instant navigation from a page without widgets) the page painted
   * long ago.
   */
  startAfterFirstPaint(fallbackMs) {
    const early = window.__lessonEarlyEngine;
    if (early && early.afterFirstPaint) early.afterFirstPaint(() => engine.start(), fallbackMs);
    else engine.start();
  },
  /** Resolves when the engine is live; does not start it. */
  ready() {
    return readyPromise;
  },
  onProgress(listener) {
    progressListeners.add(listener);
    if (lastStage) listener(lastStage);
  },
  /** Ask the engine to render widget `name` for `inputs`; resolves to {html} or {error, field}. */
  async render(name, inputs) {
    await readyPromise;
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ type: "render", id, widget: name, inputs: JSON.stringify(inputs) });
    });
  },
};

// Tests and the benchmark read this to know the engine's state; it carries no numbers.
window.__lessonEngine = engine;
