// Build step: bytecode for the reader's browser, compiled by the very Pyodide the site ships.
//
// Pyodide ships its standard library as source and compiles every module it imports on each
// start (most of the runtime's start-up time). This script loads the engine from its plain
// wheel, renders every widget once to learn which modules the site really uses, and writes:
//   - the engine's modules as .pyc files (arcname -> base64, JSON), for the wheel;
//   - python_stdlib.zip with each standard-library module that start-up or the engine imports
//     replaced by its .pyc (the others stay as source: they still work, compiled when needed);
//   - the list of the modules it compiled (JSON), for the build's record and the tests.
// All .pyc files are unchecked-hash (PEP 552): valid whatever the file times.
//
// Usage: node pyodide_compile.mjs ENGINE_WHEEL OUT_ENGINE_JSON OUT_STDLIB_ZIP OUT_MODULES_JSON
import { readFile, writeFile } from "node:fs/promises";
import { loadPyodide } from "../node_modules/pyodide/pyodide.mjs";

const [wheelPath, engineOut, stdlibOut, modulesOut] = process.argv.slice(2);
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(await readFile(wheelPath)), "wheel");
// First, before this script imports anything of its own: what start-up, the engine and every
// widget's first render import from the standard library.
const used = JSON.parse(pyodide.runPython(`
import json, sys
from engine import browser, registry
for name in registry.widget_names():
    browser.update(name, "{}")
stdlib_zip = next(p for p in sys.path if p.endswith(".zip"))
origins = (getattr(getattr(m, "__spec__", None), "origin", None) or "" for m in list(sys.modules.values()))
json.dumps(sorted(o[len(stdlib_zip) + 1:] for o in origins if o.startswith(stdlib_zip + "/") and o.endswith(".py")))
`));
pyodide.globals.set("used_json", JSON.stringify(used));
const result = pyodide.runPython(`
import base64, importlib.util, json, os, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

used = set(json.loads(used_json))
stdlib_zip = next(p for p in sys.path if p.endswith(".zip"))

def pyc(source_bytes, filename):
    code = compile(source_bytes, filename, "exec", dont_inherit=True)
    return _code_to_hash_pyc(code, importlib.util.source_hash(source_bytes), checked=False)

# 1. The engine: every module, from the unpacked wheel.
import engine
package_root = os.path.dirname(os.path.dirname(engine.__file__))
engine_pyc = {}
for folder, _, files in sorted(os.walk(os.path.dirname(engine.__file__))):
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        path = os.path.join(folder, name)
        rel = os.path.relpath(path, package_root)
        with open(path, "rb") as f:
            data = f.read()
        engine_pyc[importlib.util.cache_from_source(rel)] = base64.b64encode(pyc(data, rel)).decode()

# 2. The standard library again, the used modules as bytecode, entries in the same order.
out_path = "/tmp/python_stdlib.zip"
with zipfile.ZipFile(stdlib_zip) as source, zipfile.ZipFile(out_path, "w") as target:
    for info in source.infolist():
        data = source.read(info)
        if info.filename in used:
            compiled = zipfile.ZipInfo(info.filename[:-3] + ".pyc", date_time=info.date_time)
            compiled.compress_type = zipfile.ZIP_DEFLATED
            compiled.external_attr = info.external_attr
            target.writestr(compiled, pyc(data, f"{stdlib_zip}/{info.filename}"))
        else:
            target.writestr(info, data)
json.dumps(engine_pyc)
`);
await writeFile(engineOut, result);
await writeFile(stdlibOut, pyodide.FS.readFile("/tmp/python_stdlib.zip"));
await writeFile(modulesOut, JSON.stringify(used));
