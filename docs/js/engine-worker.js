// Module Web Worker: loads the self-hosted Pyodide core and the engine's core wheel, then
// renders widgets on request by calling engine.browser.update (Python). The rest of the
// engine ships as chunk archives (macros/engine_chunks.py): before a widget's first render,
// the chunks it needs (RUNTIME.widget_chunks) are fetched, once each, and made importable.
// No formula lives here.
import { loadPyodide } from "../pyodide/pyodide.mjs";
import { RUNTIME } from "./runtime-config.js";

/**
 * engine.browser.update once the engine is loaded: (widget name, inputs as JSON) -> reply as JSON.
 * @type {((widget: string, inputs: string) => string) | null}
 */
let update = null;
/**
 * engine.browser.add_archive: makes a chunk archive written into Pyodide's file system importable.
 * @type {((path: string) => void) | null}
 */
let addArchive = null;
/** @type {any} */
let pyodideFS = null;
/** The plain fetch wrapped by withProgress, for the chunks (set by init). @type {typeof fetch | null} */
let chunkFetch = null;
/** Each chunk's download (name -> its bytes), started by a prefetch or a render. @type {Map<string, Promise<Uint8Array>>} */
const downloads = new Map();
/** Each chunk made importable (name -> done). @type {Map<string, Promise<void>>} */
const installed = new Map();
let stage = "";
let lastBeat = 0;

/** @param {string} next the stage, in words for the reader */
function progress(next) {
  stage = next;
  postMessage({ type: "progress", stage });
}

// Every chunk the runtime's downloads receive is a sign of progress (at most one message a
// second): the page's stall timer (engine-client.js) then catches a download that stopped,
// never one that is merely slow. The standard library and the engine wheel ship as one gzip
// stream each (`.gz`, sent by the host as they are; macros/solid_archive.py): their bytes are
// decompressed here, after progress counted them as they came off the wire, so Pyodide (which
// fetches the standard library itself) and the engine's import get the zip.
// A download that was cut off or refused never resumes, and Pyodide does not always say so
// (a wasm whose download broke off leaves its start waiting forever): tell the page at once.
/**
 * @param {string} url
 * @param {any} error
 */
function aborted(url, error) {
  const file = new URL(url, self.location.href).pathname.split("/").pop();
  const why = String(error && error.message ? error.message : error);
  postMessage({
    type: "aborted",
    said: `the download of the Python runtime's ${file} was aborted (${why}): the connection dropped, or a filter blocked it`,
  });
}

// Pyodide starts its wasm with one instantiateStreaming (or instantiate) and, when that fails,
// only logs a warning and waits forever: a wasm cut off short (where the host sent no length
// to check it against), or sent as another type, would read as a start that stopped making
// progress. Tell the page at once instead. (A Module, already compiled, is not a download.)
for (const name of /** @type {const} */ (["instantiateStreaming", "instantiate"])) {
  const start = /** @type {(...args: any[]) => Promise<any>} */ (WebAssembly[name]);
  /** @type {any} */ (WebAssembly)[name] = async (/** @type {any[]} */ ...args) => {
    try {
      return await start(...args);
    } catch (/** @type {any} */ error) {
      if (!(args[0] instanceof WebAssembly.Module)) {
        const why = String(error && error.message ? error.message : error);
        postMessage({
          type: "aborted",
          said: `the Python runtime's pyodide.asm.wasm would not start (${why}): its download was cut off or changed on the way`,
        });
      }
      throw error;
    }
  };
}

/**
 * @param {typeof fetch} fetchOnce
 * @returns {typeof fetch}
 */
function withProgress(fetchOnce) {
  return async (...args) => {
    const asked = args[0] instanceof Request ? args[0].url : String(args[0]);
    let response;
    try {
      response = await fetchOnce(...args);
    } catch (/** @type {any} */ error) {
      aborted(asked, error);
      throw error;
    }
    if (!response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (/** @type {any} */ error) {
          aborted(asked, error);
          throw error;
        }
        const { done, value } = chunk;
        if (done) {
          controller.close();
          return;
        }
        const now = Date.now();
        if (now - lastBeat > 1000) {
          lastBeat = now;
          postMessage({ type: "progress", stage });
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    const { status, statusText, headers } = response;
    const solid = response.ok && new URL(asked, self.location.href).pathname.endsWith(".gz");
    const bytes = solid ? body.pipeThrough(new DecompressionStream("gzip")) : body;
    return new Response(bytes, { status, statusText, headers });
  };
}

/**
 * A catalogue file the engine's archive leaves out (the config library), fetched the first
 * time the engine reads it. The engine's call is synchronous, and so is this request (a worker
 * may make one): its text, or null when it cannot be had.
 * @param {string} name
 * @returns {string | null}
 */
function readApart(name) {
  const request = new XMLHttpRequest();
  request.open("GET", new URL(`../${RUNTIME.apart}/${name}.json`, import.meta.url), false);
  try {
    request.send();
  } catch {
    return null;
  }
  return request.status === 200 ? request.responseText : null;
}

/**
 * The download of chunk `name`, started once: its bytes, decompressed (a refused or failed
 * download rejects; a cut-off one is told to the page by withProgress, as for the core).
 * @param {string} name
 * @returns {Promise<Uint8Array>}
 */
function download(name) {
  let bytes = downloads.get(name);
  if (!bytes) {
    const fetchOnce = /** @type {typeof fetch} */ (chunkFetch);
    bytes = fetchOnce(new URL(`../${RUNTIME.chunks[name]}`, import.meta.url)).then(async (response) => {
      if (!response.ok) throw new Error(`engine chunk ${name}: HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    });
    bytes.catch(() => {}); // a prefetch nobody waits on yet: the render that needs it says so
    downloads.set(name, bytes);
  }
  return bytes;
}

/**
 * The chunks widget `widget` needs (none for a name the build does not know: the engine then
 * says it does not know it).
 * @param {string} widget
 * @returns {readonly string[]}
 */
function chunksOf(widget) {
  return Object.hasOwn(RUNTIME.widget_chunks, widget) ? RUNTIME.widget_chunks[widget] : [];
}

/**
 * Make every chunk `widget` needs importable: fetched (all at once) and written into Pyodide's
 * file system, each once.
 * @param {string} widget
 * @returns {Promise<void[]>}
 */
function install(widget) {
  return Promise.all(
    chunksOf(widget).map((name) => {
      let done = installed.get(name);
      if (!done) {
        done = download(name).then((bytes) => {
          const path = `/lib/engine-${name}.zip`;
          pyodideFS.writeFile(path, bytes);
          /** @type {NonNullable<typeof addArchive>} */ (addArchive)(path);
        });
        installed.set(name, done);
      }
      return done;
    }),
  );
}

async function init() {
  const plainFetch = self.fetch;
  chunkFetch = withProgress(plainFetch.bind(self));
  self.fetch = withProgress(plainFetch.bind(self));
  try {
    progress(`Downloading the Python runtime (about ${RUNTIME.download_MB} MB, once)…`);
    // The engine wheel downloads while Pyodide starts.
    const wheel = fetch(new URL(`../${RUNTIME.wheel}`, import.meta.url)).then((response) => {
      if (!response.ok) throw new Error(`engine wheel: HTTP ${response.status}`);
      return response.arrayBuffer();
    });
    const pyodide = await loadPyodide({
      indexURL: new URL("../pyodide/", import.meta.url).href,
      stdLibURL: new URL(`../${RUNTIME.stdlib}`, import.meta.url).href,
      fullStdLib: false,
    });
    progress("Loading the engine…");
    const wheelBytes = await wheel;
    self.fetch = plainFetch;
    // Python imports the engine straight from its archive (zipimport; members stored): no
    // package installer runs, so the standard library ships without one
    // (macros/pyodide_lean.py). The build's check does the same (macros/pyodide_compile.mjs).
    pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(wheelBytes));
    pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");
    const browser = pyodide.pyimport("engine.browser");
    browser.read_apart_with(readApart);
    update = browser.update;
    addArchive = browser.add_archive;
    pyodideFS = pyodide.FS;
    postMessage({ type: "ready" });
  } catch (/** @type {any} */ error) {
    self.fetch = plainFetch;
    postMessage({ type: "failed", error: String(error && error.message ? error.message : error) });
  }
}

self.addEventListener("message", (/** @type {MessageEvent} */ event) => {
  const message = event.data;
  if (message.type === "init") {
    init();
  } else if (message.type === "prefetch") {
    // The page will render this widget: its chunks download while Pyodide starts.
    if (chunkFetch) chunksOf(message.widget).forEach(download);
  } else if (message.type === "render") {
    render(message);
  }
});

/** @param {{widget: string, inputs: string, id: number}} message */
async function render(message) {
  try {
    await install(message.widget);
  } catch (/** @type {any} */ error) {
    // As a runtime that could not be loaded: the page shows the build-time numbers and says why.
    postMessage({ type: "failed", error: String(error && error.message ? error.message : error) });
    return;
  }
  let json;
  try {
    json = /** @type {NonNullable<typeof update>} */ (update)(message.widget, message.inputs);
  } catch (/** @type {any} */ error) {
    json = JSON.stringify({ error: `The engine failed: ${error.message}`, field: "widget" });
  }
  postMessage({ type: "result", id: message.id, json });
}
