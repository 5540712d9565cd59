// Times Python code inside Pyodide under Node (the npm runtime the site ships, its trimmed
// standard library and the browser's sourceless wheel on sys.path, as the site's worker
// imports it) and prints the script's result (a string) on stdout. Node runs the same V8 and
// WebAssembly engine as Chromium, so the times stand for a desktop browser's worker.
// Usage: node pyodide_time.mjs ENGINE_WHEEL STDLIB_ZIP SCRIPT_PY
import { readFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";

const [wheelPath, stdlibPath, scriptPath] = process.argv.slice(2);
const pyodide = await loadPyodide({ stdLibURL: stdlibPath });
pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(await readFile(wheelPath)));
pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");
process.stdout.write(String(pyodide.runPython(await readFile(scriptPath, "utf8"))));
