// Runs macros/corpus.py's parity cases inside Pyodide under Node (the same npm runtime the site ships,
// with the site's precompiled standard library), with the engine imported from its wheel as the
// site's worker does (on sys.path: docs/js/engine-worker.js), and prints the results as JSON on
// stdout.
// The catalogue files the wheel leaves out are read from data/ beside it, as the worker fetches
// them from beside the site's wheel.
// Usage: node run_cases.mjs ENGINE_WHEEL CORPUS_PY STDLIB_ZIP [CHUNK_ZIP...]
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { loadPyodide } from "pyodide";

const [wheelPath, casesPath, stdlibPath, ...chunkPaths] = process.argv.slice(2);
const pyodide = await loadPyodide({ stdLibURL: stdlibPath });
pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(await readFile(wheelPath)));
pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");
// The whole engine: every chunk made importable, as the worker does for a widget that needs it.
const browser = pyodide.pyimport("engine.browser");
for (const [index, chunkPath] of chunkPaths.entries()) {
  pyodide.FS.writeFile(`/lib/engine-chunk-${index}.zip`, new Uint8Array(await readFile(chunkPath)));
  browser.add_archive(`/lib/engine-chunk-${index}.zip`);
}
pyodide.FS.writeFile("/tmp/corpus.py", await readFile(casesPath, "utf8"));
pyodide.globals.set("read_apart", (/** @type {string} */ name) => {
  try {
    return readFileSync(join(dirname(wheelPath), "data", `${name}.json`), "utf8");
  } catch {
    return null;
  }
});
const json = pyodide.runPython(`
import sys
sys.path.insert(0, "/tmp")
import corpus
import engine.browser
engine.browser.read_apart_with(read_apart)
import json as _json
_results = _json.loads(corpus.parity_json())
_results["json_module_file"] = sys.modules["json"].__file__
_json.dumps(_results)
`);
process.stdout.write(json);
