// docs/pyodide/pyodide.mjs is npm's Pyodide, copied into the site by the build.
export { loadPyodide } from "pyodide";
