// Module Web Worker: loads the self-hosted Pyodide core and the engine wheel, then renders
// widgets on request by calling engine.widgets.browser.update (Python). No formula lives here.
import { loadPyodide } from "../pyodide/pyodide.mjs";

let update = null;

function progress(stage) {
  postMessage({ type: "progress", stage });
}

async function init(runtime) {
  try {
    progress("Downloading the Python runtime (about 13 MB, once)…");
    const pyodide = await loadPyodide({
      indexURL: new URL("../pyodide/", import.meta.url).href,
      fullStdLib: false,
    });
    progress("Loading the engine…");
    const response = await fetch(new URL(`../${runtime.wheel}`, import.meta.url));
    if (!response.ok) throw new Error(`engine wheel: HTTP ${response.status}`);
    pyodide.unpackArchive(await response.arrayBuffer(), "wheel");
    const browser = pyodide.pyimport("engine.widgets.browser");
    update = browser.update;
    postMessage({ type: "ready" });
  } catch (error) {
    postMessage({ type: "failed", error: String(error && error.message ? error.message : error) });
  }
}

self.addEventListener("message", (event) => {
  const message = event.data;
  if (message.type === "init") {
    init(message.runtime);
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
