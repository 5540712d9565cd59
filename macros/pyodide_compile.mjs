// Build step: compile the engine's Python sources to bytecode with the very Pyodide the site
// ships, so readers' browsers import them without compiling (unchecked-hash .pyc files, valid
// whatever the file times). Reads {"engine/x.py": source, ...} as JSON from the file given
// first; writes {"engine/__pycache__/x.cpython-314.pyc": base64, ...} to the file given second.
import { readFile, writeFile } from "node:fs/promises";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const [sourcesPath, outputPath] = process.argv.slice(2);
const pyodide = await loadPyodide();
pyodide.globals.set("sources_json", await readFile(sourcesPath, "utf8"));
const compiled = pyodide.runPython(`
import base64, importlib.util, json, os, py_compile

out = {}
for rel, text in json.loads(sources_json).items():
    source = os.path.join("/tmp/engine-src", rel)
    os.makedirs(os.path.dirname(source), exist_ok=True)
    with open(source, "w") as f:
        f.write(text)
    cached = importlib.util.cache_from_source(rel)
    target = os.path.join("/tmp/engine-pyc", cached)
    py_compile.compile(source, cfile=target, dfile=rel, doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    with open(target, "rb") as f:
        out[cached] = base64.b64encode(f.read()).decode()
json.dumps(out)
`);
await writeFile(outputPath, compiled);
