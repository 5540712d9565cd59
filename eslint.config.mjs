// ESLint for the site's JavaScript: the page's module scripts, the engine's worker, the
// service worker, the inline head scripts and the build's Node script. Each kind of file gets
// the globals of the place it runs in, so a name that exists only elsewhere is an error.
import js from "@eslint/js";
import html from "eslint-plugin-html";
import globals from "globals";

// Browser globals that are easy to use by mistake for a local (a missing `const status`
// would silently read window.status).
const confusingBrowserGlobals = ["event", "name", "status", "length", "top", "parent", "opener", "closed", "origin", "frames", "external", "find", "print"];

export default [
  { ignores: ["node_modules/", "site/", "build/", ".venv/", "bench/out/"] },
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "array-callback-return": "error",
      eqeqeq: "error",
      "no-constructor-return": "error",
      "no-empty": ["error", { allowEmptyCatch: true }],
      "no-self-compare": "error",
      "no-template-curly-in-string": "error",
      "no-unmodified-loop-condition": "error",
      "no-unreachable-loop": "error",
      "no-unused-vars": ["error", { caughtErrors: "none" }],
      "no-use-before-define": ["error", { functions: false, classes: true, variables: false }],
    },
  },
  {
    files: ["docs/js/**/*.js"],
    ignores: ["docs/js/engine-worker.js", "docs/js/file-notice.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
    rules: { "no-restricted-globals": ["error", ...confusingBrowserGlobals] },
  },
  {
    // A classic script (it must run from file://, where module scripts do not).
    files: ["docs/js/file-notice.js"],
    languageOptions: { sourceType: "script", globals: globals.browser },
    rules: { "no-restricted-globals": ["error", ...confusingBrowserGlobals] },
  },
  {
    files: ["docs/js/engine-worker.js"],
    languageOptions: { sourceType: "module", globals: globals.worker },
  },
  {
    files: ["docs/sw.js"],
    languageOptions: {
      sourceType: "script",
      globals: {
        ...globals.serviceworker,
        // Filled in by the build (macros/service_worker.py) with JSON literals.
        __FILES__: "readonly",
        __INSTALL__: "readonly",
        __DIGEST_HEX_CHARS__: "readonly",
      },
    },
  },
  {
    // The inline scripts of the theme's partials (Jinja templates: only the <script>s are linted).
    files: ["overrides/**/*.html"],
    plugins: { html },
    languageOptions: {
      sourceType: "script",
      // The theme's own helpers, defined by its inline script before these run.
      globals: { ...globals.browser, __md_get: "readonly", __md_scope: "readonly" },
    },
    rules: { "no-restricted-globals": ["error", ...confusingBrowserGlobals] },
  },
  {
    files: ["macros/**/*.mjs", "tests/**/*.mjs", "bench/**/*.mjs", "eslint.config.mjs"],
    languageOptions: { sourceType: "module", globals: globals.node },
  },
];
