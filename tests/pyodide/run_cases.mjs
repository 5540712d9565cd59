// Runs tests/parity_cases.py inside Pyodide under Node (the same npm runtime the site ships,
// with the site's precompiled standard library), with the engine imported from its wheel as the
// site's worker does (on sys.path: docs/js/engine-worker.js), and prints the results as JSON on
// stdout.
// Usage: node run_cases.mjs ENGINE_WHEEL PARITY_CASES_PY STDLIB_ZIP
import { readFile } from "node:fs/promises";
import { loadPyodide } from "../../node_modules/pyodide/pyodide.mjs";

const [wheelPath, casesPath, stdlibPath] = process.argv.slice(2);
const pyodide = await loadPyodide({ stdLibURL: stdlibPath });
pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(await readFile(wheelPath)));
pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");
pyodide.FS.writeFile("/tmp/parity_cases.py", await readFile(casesPath, "utf8"));
const json = pyodide.runPython(`
import sys
sys.path.insert(0, "/tmp")
import parity_cases
import json as _json
_results = _json.loads(parity_cases.results_json())
_results["json_module_file"] = sys.modules["json"].__file__
_json.dumps(_results)
`);
process.stdout.write(json);
