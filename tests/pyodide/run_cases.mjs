// Runs tests/parity_cases.py inside Pyodide under Node (the same npm runtime the site ships),
// with the engine installed from its wheel, and prints the results as JSON on stdout.
// Usage: node run_cases.mjs ENGINE_WHEEL PARITY_CASES_PY
import { readFile } from "node:fs/promises";
import { loadPyodide } from "../../node_modules/pyodide/pyodide.mjs";

const [wheelPath, casesPath] = process.argv.slice(2);
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(await readFile(wheelPath)), "wheel");
pyodide.FS.writeFile("/tmp/parity_cases.py", await readFile(casesPath, "utf8"));
const json = pyodide.runPython(`
import sys
sys.path.insert(0, "/tmp")
import parity_cases
parity_cases.results_json()
`);
process.stdout.write(json);
