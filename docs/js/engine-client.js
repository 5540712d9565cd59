// The page's side of the engine: one module Web Worker per tab running Pyodide with the
// engine wheel, shared by every widget and kept across instant navigation.
//
// Never stuck: a start that fails (a blocked script, wasm or wheel; a wheel that will not
// unpack; a worker that errors) or stalls (no progress for STALL_MS: said, and still live if
// the start finishes after all), and a render that gets
// no answer within RENDER_MS (a worker that died, e.g. out of memory), end in the "failed"
// state, which every widget shows with its build-time numbers kept. A worker that dies in
// mid-session is restarted once, on the next render, before the engine gives up;
// `engine.retry()` (the widgets' "Try again") starts a fresh worker.

// No progress for this long while starting means the start is stuck (ms). A reader sees the
// error state 20 s after the last sign of progress, within the 30 s the lesson promises.
const STALL_MS = 20_000;
// A render takes milliseconds; no answer for this long means the worker is gone (ms).
const RENDER_MS = 8_000;

/**
 * A render sent (or to be sent) to the worker; `timer` gives up on it.
 * @typedef {{
 *   resolve: (reply: EngineReply) => void,
 *   reject: (error: Error) => void,
 *   message: {type: "render", widget: string, inputs: string},
 *   timer?: number,
 *   rearm?: () => void,
 * }} Request
 */
/** @typedef {{promise: Promise<void>, resolve: () => void, reject: (error: Error) => void}} Deferred */

/** @type {Worker | null} */
let worker = null;
let nextId = 1;
/** @type {Map<number, Request>} */
const pending = new Map();
/** @type {Set<(stage: string) => void>} */
const progressListeners = new Set();
/** @type {Set<(state: string, reason: string) => void>} */
const stateListeners = new Set();
let lastStage = "";
let state = "idle"; // idle | loading | ready | failed
let failure = "";
let restartsLeft = 1;
let stallTimer = 0;
let ready = makeReady();
/** The widgets the page has asked to render: a new worker downloads their chunks as it starts. */
const wanted = new Set();

/** Tell the worker (when there is one) which widgets the page will render. */
function prefetch() {
  if (worker) for (const widget of wanted) worker.postMessage({ type: "prefetch", widget });
}

/** @returns {Deferred} */
function makeReady() {
  const deferred = /** @type {Deferred} */ ({});
  deferred.promise = new Promise((resolve, reject) => {
    deferred.resolve = resolve;
    deferred.reject = reject;
  });
  deferred.promise.catch(() => {}); // failures reach the widgets through onState
  return deferred;
}

/**
 * @param {string} next
 * @param {string} [detail] what failed, for "failed"
 */
function setState(next, detail = "") {
  state = next;
  if (next === "failed") failure = detail;
  for (const listener of stateListeners) listener(next, detail);
}

function armStallTimer() {
  clearTimeout(stallTimer);
  stallTimer = setTimeout(() => {
    // Said, but not given up: a slow download may still finish, and then the widgets go live.
    setState("failed", "the Python runtime stopped making progress while starting (a slow or interrupted download?)");
  }, STALL_MS);
}

/**
 * Give up: stop the worker, refuse what waits on it, and tell every widget.
 * @param {string} reason
 */
function fail(reason) {
  clearTimeout(stallTimer);
  if (worker) worker.terminate();
  worker = null;
  for (const request of pending.values()) request.reject(new Error(reason));
  pending.clear();
  ready.reject(new Error(reason));
  setState("failed", reason);
}

/** @param {MessageEvent} event */
function onMessage(event) {
  // A worker given up on (or replaced by "Try again") may still have messages on the way.
  if (event.target instanceof Worker && event.target !== worker) return;
  const message = event.data;
  if (message.type === "progress") {
    if (state === "ready") {
      // A chunk of the engine downloading for a render (engine-worker.js): it is on its way.
      for (const request of pending.values()) if (request.rearm) request.rearm();
      return;
    }
    lastStage = message.stage;
    armStallTimer();
    for (const listener of progressListeners) listener(message.stage);
  } else if (message.type === "ready") {
    clearTimeout(stallTimer);
    ready.resolve();
    setState("ready");
  } else if (message.type === "aborted") {
    fail(message.said); // a download cut off or refused (engine-worker.js): it never resumes
  } else if (message.type === "failed") {
    fail(`the Python runtime could not be loaded: ${message.error}`);
  } else if (message.type === "result") {
    const request = pending.get(message.id);
    pending.delete(message.id);
    if (!request) return;
    clearTimeout(request.timer);
    // A runtime that failed fatally may answer with no JSON at all: the engine has failed.
    if (typeof message.json !== "string") {
      request.reject(new Error("the Python runtime stopped"));
      return fail("the Python runtime stopped");
    }
    restartsLeft = 1; // this worker works: a later death may be restarted again
    request.resolve(JSON.parse(message.json));
  }
}

/** @param {Partial<ErrorEvent>} [event] */
function onError(event) {
  if (event && typeof event.preventDefault === "function") event.preventDefault();
  const reason = (event && event.message) || "the engine's worker stopped";
  if (state === "ready") {
    // Died in mid-session: the next render restarts it once.
    if (worker) worker.terminate();
    worker = null;
    for (const request of pending.values()) clearTimeout(request.timer);
    const waiting = [...pending.values()];
    pending.clear();
    for (const request of waiting) resend(request);
  } else {
    fail(`the Python runtime could not be loaded: ${reason}`);
  }
}

/** @param {Worker} target */
function listen(target) {
  target.addEventListener("message", onMessage);
  target.addEventListener("error", onError);
}

/** A new worker, told to start; progress is watched from now on. */
function spawn() {
  ready = makeReady();
  lastStage = "";
  setState("loading");
  armStallTimer();
  try {
    worker = new Worker(new URL("./engine-worker.js", import.meta.url), { type: "module" });
  } catch (error) {
    fail(`this browser cannot start the engine's worker (${/** @type {Error} */ (error).message})`);
    return;
  }
  listen(worker);
  worker.postMessage({ type: "init" });
  prefetch();
}

/** @param {Request} request */
function send(request) {
  const id = nextId++;
  const sentTo = /** @type {Worker} */ (worker);
  pending.set(id, request);
  // Armed again by each sign of progress (a chunk of the engine the render needs downloading).
  request.rearm = () => {
    clearTimeout(request.timer);
    request.timer = setTimeout(() => {
      pending.delete(id);
      if (worker === sentTo) {
        // Gone or stuck: a fresh one takes over.
        worker.terminate();
        worker = null;
      }
      resend(request);
    }, RENDER_MS);
  };
  request.rearm();
  sentTo.postMessage({ ...request.message, id });
}

/**
 * The worker that had `request` is gone: start another (once: the allowance comes back
 * with the next answer) and send `request` again; or give up.
 * @param {Request} request
 */
function resend(request) {
  if (!worker) {
    if (restartsLeft <= 0) {
      const reason = "the engine stopped answering (the browser may have run out of memory)";
      request.reject(new Error(reason));
      fail(reason);
      return;
    }
    restartsLeft -= 1;
    spawn();
  }
  ready.promise.then(() => send(request), (error) => request.reject(error));
}

export const engine = {
  /** Start the worker (once per tab). */
  start() {
    if (state !== "idle") return ready.promise;
    const early = window.__lessonEarlyEngine;
    if (early) early.start(); // no-op once the head script has started it at first paint
    if (early && early.worker) {
      // Started by the head script (partials/boot-engine.html): take it over and replay
      // what it said.
      worker = early.worker;
      const listener = /** @type {(event: Event) => void} */ (early.listener);
      worker.removeEventListener("message", listener);
      worker.removeEventListener("error", listener);
      setState("loading");
      armStallTimer();
      listen(worker);
      // Each handler reads only the fields of its own kind of event.
      for (const event of early.messages) (event.type === "error" ? onError : onMessage)(/** @type {MessageEvent & ErrorEvent} */ (event));
      early.messages = [];
      prefetch();
      return ready.promise;
    }
    spawn();
    return ready.promise;
  },
  /** After a failure: a fresh worker, with its restart allowance back. */
  retry() {
    if (state !== "failed") return ready.promise;
    restartsLeft = 1;
    if (worker) worker.terminate(); // a stalled start
    worker = null;
    const stalled = ready; // renders waiting on the stalled start go to the fresh worker
    spawn();
    ready.promise.then(stalled.resolve, stalled.reject);
    return ready.promise;
  },
  /**
   * Start the worker once the page has painted (or after `fallbackMs`), so the text and the
   * build-time numbers paint first. The head script (partials/boot-engine.html) knows when
   * that is; without it (instant navigation from a page without widgets) the page painted
   * long ago.
   * @param {number} fallbackMs
   */
  startAfterFirstPaint(fallbackMs) {
    const early = window.__lessonEarlyEngine;
    if (early && early.afterFirstPaint) early.afterFirstPaint(() => engine.start(), fallbackMs);
    else engine.start();
  },
  /** Resolves when the engine is live; does not start it. */
  ready() {
    return ready.promise;
  },
  /** The worker now running (tests terminate it to play a worker that died), or null. */
  get worker() {
    return worker;
  },
  /** @param {(stage: string) => void} listener called with each stage's words */
  onProgress(listener) {
    progressListeners.add(listener);
    if (lastStage) listener(lastStage);
  },
  /**
   * Call `listener(state, reason)` now and on every change: "loading", "ready", "failed"
   * (reason: a sentence on what failed). Returns a function that stops the calls.
   * @param {(state: string, reason: string) => void} listener
   */
  onState(listener) {
    stateListeners.add(listener);
    if (state !== "idle") listener(state, state === "failed" ? failure : "");
    return () => stateListeners.delete(listener);
  },
  /**
   * Ask the engine to render widget `name` for `inputs`; resolves to {html} or {error, field}.
   * @param {string} name
   * @param {Record<string, string>} inputs
   * @returns {Promise<EngineReply>}
   */
  async render(name, inputs) {
    if (state === "failed") throw new Error(failure);
    /** @type {Request["message"]} */
    const message = { type: "render", widget: name, inputs: JSON.stringify(inputs) };
    if (!wanted.has(name)) {
      wanted.add(name);
      if (worker) worker.postMessage({ type: "prefetch", widget: name });
    }
    if (!worker && state === "ready") {
      // The worker died since the last render: restart it once.
      return new Promise((resolve, reject) => resend({ resolve, reject, message }));
    }
    await ready.promise;
    return new Promise((resolve, reject) => send({ resolve, reject, message }));
  },
};

// Tests and the benchmark read this to know the engine's state; it carries no numbers.
window.__lessonEngine = engine;
