// Times Python code inside Pyodide under Node (the npm runtime the site ships, its trimmed
// standard library and the browser's sourceless wheel on sys.path, as the site's worker
// imports it) and prints the script's result (a string) on stdout. Node runs the same V8 and
// WebAssembly engine as Chromium, so the times stand for a desktop browser's worker.
// Usage: node pyodide_time.mjs ENGINE_WHEEL STDLIB_ZIP SCRIPT_PY [CHUNK_ZIP...]
import { readFile } from "node:fs/promises";
import { loadPyodide } from "pyodide";

const [wheelPath, stdlibPath, scriptPath, ...chunkPaths] = process.argv.slice(2);
const pyodide = await loadPyodide({ stdLibURL: stdlibPath });
pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(await readFile(wheelPath)));
pyodide.pyimport("sys").path.insert(0, "/lib/engine.zip");
// The whole engine: every chunk made importable, as the worker does for a widget that needs it.
const browser = chunkPaths.length ? pyodide.pyimport("engine.browser") : null;
for (const [index, chunkPath] of chunkPaths.entries()) {
  pyodide.FS.writeFile(`/lib/engine-chunk-${index}.zip`, new Uint8Array(await readFile(chunkPath)));
  /** @type {any} */ (browser).add_archive(`/lib/engine-chunk-${index}.zip`);
}
process.stdout.write(String(pyodide.runPython(await readFile(scriptPath, "utf8"))));
