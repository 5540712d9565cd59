// Types shared by the page's scripts (docs/js/*.js), and what the page's globals hold beyond
// TypeScript's DOM library.

/** A widget's form values by input name, as text (the engine parses and checks them). */
type WidgetInputs = Record<string, string>;

/** Puts `value` into the widget's input `name` (no-op when it has none). */
type SetInput = (root: HTMLElement, name: string, value: string) => void;

/**
 * What the engine answers for a render (engine/browser.py: update), or what the page puts in
 * its place when the render failed: either `html` and `set`, or `error` and (usually) `field`.
 */
interface EngineReply {
  /** The widget's result, rendered and escaped by the engine. */
  html?: string;
  /** Inputs the engine changed (a pressed button's new state). */
  set?: Record<string, string>;
  /** Notes beside inputs the engine accepted (input name -> text), never refusals. */
  notes?: Record<string, string>;
  /** Why the inputs were refused, and the input at fault ("widget" for the whole). */
  error?: string;
  field?: string;
  /** The engine failed on these inputs (a bug in it, not the reader's input). */
  internal?: boolean;
}

/** What partials/boot-engine.html leaves for engine-client.js. */
interface EarlyEngine {
  worker: Worker | null;
  messages: Event[];
  listener?: (event: Event) => void;
  start(): void;
  /** Hints the runtime's files at low priority (a first visit: no service worker), at first paint. */
  preloadRuntime(): void;
  afterFirstPaint(fn: () => void, fallbackMs?: number): void;
}

/** The Network Information API's data saver (Chromium only, hence optional). */
interface NetworkInformation {
  readonly saveData?: boolean;
}

interface Navigator {
  readonly connection?: NetworkInformation;
}

interface Window {
  __lessonEarlyEngine?: EarlyEngine;
  __lessonEngine: typeof import("../docs/js/engine-client.js").engine;
  /** Material's instant navigation: emits once per page it shows. */
  document$?: { subscribe(next: () => void): unknown };
}
