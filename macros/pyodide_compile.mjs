// Build step: the runtime the reader's browser gets, made and checked by the very Pyodide the
// site ships, under Node.
//
// `compile` boots Pyodide on the stock standard library as sources, with Pyodide's own start-up
// modules made lean (macros/pyodide_lean.py), imports the engine from its plain wheel's files
// and runs the corpus (macros/corpus.py: every widget under every input, every plan and the
// parity cases); then, for each engine module that run loaded, it imports every standard-library
// module that module names in an import statement anywhere (a lazy import on a path the corpus
// missed is still shipped). What was loaded from the standard library by then, start-up
// included, is what the site uses; the engine modules loaded, with every engine module their
// import statements name (transitively), are the engine the browser needs. It writes:
//   - those engine modules as .pyc files (arcname -> base64, JSON), for a sourceless wheel
//     (the CLI and the build's tables and figures stay out), without the functions' type hints;
//   - python_stdlib.zip holding the used modules only, as .pyc (no source beside them), with
//     no column positions, no docstrings (a class's is one space) and, outside Pyodide's own
//     modules, no function type hints;
//   - a JSON record: the zip entries shipped, the modules imported by name (standard library
//     and engine: `check` imports them all, so one left out is named), the imports that
//     failed on the stock runtime (optional ones) and the corpus's digest.
// `check` boots Pyodide on a given standard-library zip, package lock and engine archives (the
// ones the site ships: the core wheel and every chunk), puts the core on sys.path and adds the
// chunks as the reader's browser does (docs/js/engine-worker.js: Python imports the engine from
// the archives; no package installer runs), runs the same corpus and imports, and writes the
// same record: the build compares the two.
// All .pyc files are unchecked-hash (PEP 552): valid whatever the file times.
//
// Usage: node pyodide_compile.mjs compile ENGINE_DIR CORPUS_DIR STDLIB_ZIP OUT_ENGINE_JSON OUT_STDLIB_ZIP OUT_RECORD_JSON
//        node pyodide_compile.mjs check CORE_WHEEL CORPUS_DIR STDLIB_ZIP LOCK_JSON IMPORTS_JSON OUT_RECORD_JSON [CHUNK_ZIP...]
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { loadPyodide } from "pyodide";

const [mode, enginePath, corpusDir, stdlibPath, ...rest] = process.argv.slice(2);
// No column positions in the bytecode (PEP 657): tracebacks keep their line numbers, the
// files lose about a quarter of their size.
const env = { PYTHONNODEBUGRANGES: "1" };
/** @type {Parameters<typeof loadPyodide>[0]} */
const options = { stdLibURL: stdlibPath, env };
if (mode === "check") options.lockFileURL = rest[0];
const pyodide = await loadPyodide(options);
const sysPath = pyodide.pyimport("sys").path;
if (mode === "check") {
  // As the reader's browser does (docs/js/engine-worker.js): the core on sys.path, then every
  // chunk made importable (the whole engine: the corpus renders every widget).
  pyodide.FS.writeFile("/lib/engine.zip", new Uint8Array(await readFile(enginePath)));
  sysPath.insert(0, "/lib/engine.zip");
  const browser = pyodide.pyimport("engine.browser");
  for (const chunk of rest.slice(3)) {
    const path = `/lib/${basename(chunk)}`;
    pyodide.FS.writeFile(path, new Uint8Array(await readFile(chunk)));
    browser.add_archive(path);
  }
} else {
  // The plain wheel's files (sources: the corpus reads the engine's import statements).
  for (const name of await readdir(enginePath, { recursive: true })) {
    const from = join(enginePath, name);
    if (!(await stat(from)).isFile()) continue;
    pyodide.FS.mkdirTree(join("/engine-src", dirname(name)));
    pyodide.FS.writeFile(join("/engine-src", name), await readFile(from));
  }
  sysPath.insert(0, "/engine-src");
}
pyodide.FS.mkdirTree("/corpus");
for (const name of await readdir(corpusDir)) {
  pyodide.FS.writeFile(`/corpus/${name}`, await readFile(join(corpusDir, name)));
}
pyodide.globals.set("named_json", mode === "check" ? await readFile(rest[1], "utf8") : "null");
// The catalogue files the wheel leaves out, read as the worker reads them (beside the wheel,
// in data/; docs/js/engine-worker.js readApart). The plain wheel of `compile` carries them.
pyodide.globals.set("read_apart", (/** @type {string} */ name) => {
  try {
    return readFileSync(join(dirname(enginePath), "data", `${name}.json`), "utf8");
  } catch {
    return null;
  }
});
// Before this script imports anything of its own: a finder last on sys.meta_path sees every
// import that no other finder could satisfy, then the corpus runs and the named imports follow.
const record = JSON.parse(pyodide.runPython(`
import sys

class _Missed:
    names = set()

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        cls.names.add(name)
        return None

sys.meta_path.append(_Missed)
sys.path.insert(0, "/corpus")
import importlib, json, os
import corpus as _corpus, runtime_imports
import engine.browser
engine.browser.read_apart_with(read_apart)
try:
    corpus = _corpus.browser_corpus_json()
except ImportError as error:  # a module left out: the named imports below name it
    corpus = json.dumps({"failed": repr(error), "widgets": {}})
named = json.loads(named_json)
if named is None:
    engine_modules = runtime_imports.engine_modules_named()
    named = runtime_imports.stdlib_imports_of_loaded_engine() + engine_modules
for name in named:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
stdlib_zip = os.path.dirname(os.path.dirname(json.__file__))
origins = (getattr(getattr(m, "__spec__", None), "origin", None) or "" for m in list(sys.modules.values()))
json.dumps({
    "entries": sorted({o[len(stdlib_zip) + 1:] for o in origins if o.startswith(stdlib_zip + "/")}),
    "named": named,
    "missed": sorted(_Missed.names),
    "corpus": corpus,
})
`));
record.digest = createHash("sha256").update(record.corpus).digest("hex");
const widgets = Object.values(JSON.parse(record.corpus).widgets);
record.widget_cases = widgets.reduce((n, cases) => n + Object.keys(cases).length, 0);
delete record.corpus;

if (mode === "check") {
  await writeFile(rest[2], JSON.stringify(record));
  process.exit(0);
}
const [engineOut, stdlibOut, recordOut] = rest;
pyodide.globals.set("used_json", JSON.stringify(record.entries));
pyodide.globals.set("named_json", JSON.stringify(record.named));
const result = pyodide.runPython(`
import ast, base64, json, os, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

used = [e for e in json.loads(used_json) if e.endswith(".py")]
shipped_engine = {sys.modules[name].__file__ for name in json.loads(named_json) if name.split(".")[0] == "engine"}
stdlib_zip = os.path.dirname(os.path.dirname(json.__file__))


def _is_docstring(statement):
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)

def _without_docstrings(tree):
    # No one reads a docstring in the reader's browser. Module and function docstrings go;
    # a class's becomes one space, so that a class keeps a true __doc__ (dataclasses builds
    # one, slowly, for a class that has none; enum gives one too). Line numbers are unchanged.
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not node.body or not _is_docstring(node.body[0]):
            continue
        first = node.body[0]
        if isinstance(node, ast.ClassDef):
            first.value = ast.copy_location(ast.Constant(" "), first.value)
        else:
            node.body[0] = ast.copy_location(ast.Pass(), first) if len(node.body) == 1 else None
            node.body = [n for n in node.body if n is not None]
    return tree

def _without_function_annotations(tree):
    # The engine's functions carry type hints for mypy, and nothing in the browser reads a
    # function's __annotations__ (a class's stay: dataclasses reads them for the fields).
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            arguments = node.args
            for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
                if argument is not None:
                    argument.annotation = None
    return tree

def pyc(source_bytes, filename, function_annotations=True):
    # Line numbers stay: without them the traceback module fails (and with it every Python
    # error Pyodide hands to JavaScript).
    tree = _without_docstrings(ast.parse(source_bytes, filename))
    if not function_annotations:
        tree = _without_function_annotations(tree)
    code = compile(tree, filename, "exec", dont_inherit=True)
    # Unchecked (PEP 552): the loader never compares the hash, and no source ships to compare
    # it with, so it is zeros (eight bytes a file that would not compress).
    return _code_to_hash_pyc(code, bytes(8), checked=False)

# 1. The engine: every module, from the unpacked wheel, as engine/x.pyc (sourceless).
import engine
package_root = os.path.dirname(os.path.dirname(engine.__file__))
engine_pyc = {}
for folder, _, files in sorted(os.walk(os.path.dirname(engine.__file__))):
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        path = os.path.join(folder, name)
        if path not in shipped_engine:  # only the build and the CLI import it
            continue
        rel = os.path.relpath(path, package_root)
        with open(path, "rb") as f:
            data = f.read()
        engine_pyc[rel + "c"] = base64.b64encode(pyc(data, rel, function_annotations=False)).decode()

# 2. The standard library the site uses, as bytecode only, entries in the stock zip's order.
out_path = "/tmp/python_stdlib.zip"
with zipfile.ZipFile(stdlib_zip) as source, zipfile.ZipFile(out_path, "w") as target:
    for info in source.infolist():
        if info.filename not in used:
            continue
        compiled = zipfile.ZipInfo(info.filename[:-3] + ".pyc", date_time=info.date_time)
        compiled.compress_type = zipfile.ZIP_DEFLATED
        compiled.external_attr = info.external_attr
        # Pyodide's own modules keep their functions' type hints: its JavaScript bindings
        # (_pyodide/jsbind.py) read them.
        ours = info.filename.startswith(("_pyodide/", "pyodide/"))
        data = pyc(source.read(info), f"{stdlib_zip}/{info.filename}", function_annotations=ours)
        target.writestr(compiled, data, compresslevel=9)
json.dumps(engine_pyc)
`);
await writeFile(engineOut, result);
await writeFile(stdlibOut, pyodide.FS.readFile("/tmp/python_stdlib.zip"));
await writeFile(recordOut, JSON.stringify(record));
