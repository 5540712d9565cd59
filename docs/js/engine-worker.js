// Module Web Worker: loads the self-hosted Pyodide core and the engine wheel, then renders
// widgets on request by calling engine.browser.update (Python). No formula lives here.
import { loadPyodide } from "../pyodide/pyodide.mjs";
import { RUNTIME } from "./runtime-config.js";

let update = null;

function progress(stage) {
  postMessage({ type: "progress", stage });
}

async function init() {
  try {
    progress(`Downloading the Python runtime (about ${RUNTIME.download_MB} MB, once)…`);
    // The engine wheel downloads while Pyodide starts.
    const wheel = fetch(new URL(`../${RUNTIME.wheel}`, import.meta.url)).then((response) => {
      if (!response.ok) throw new Error(`engine wheel: HTTP ${response.status}`);
      return response.arrayBuffer();
    });
    const pyodide = await loadPyodide({
      indexURL: new URL("../pyodide/", import.meta.url).href,
      fullStdLib: false,
    });
    progress("Loading the engine…");
    pyodide.unpackArchive(await wheel, "wheel");
    const browser = pyodide.pyimport("engine.browser");
    update = browser.update;
    postMessage({ type: "ready" });
  } catch (error) {
    postMessage({ type: "failed", error: String(error && error.message ? error.message : error) });
  }
}

self.addEventListener("message", (event) => {
  const message = event.data;
  if (message.type === "init") {
    init();
  } else if (message.type === "render") {
    let json;
    try {
      json = update(message.widget, message.inputs);
    } catch (error) {
      json = JSON.stringify({ error: `The engine failed: ${error.message}`, field: "widget" });
    }
    postMessage({ type: "result", id: message.id, json });
  }
});
