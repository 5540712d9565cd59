// docs/js/runtime-config.js, which the build writes (macros/build_hook.py): what the page's
// scripts and the engine's worker read from it.
export declare const RUNTIME: {
  /** The engine's core wheel's site path. */
  readonly wheel: string;
  /** The engine's chunk archives: chunk name -> site path. */
  readonly chunks: Readonly<Record<string, string>>;
  /** The chunks each widget's render needs: widget name -> chunk names. */
  readonly widget_chunks: Readonly<Record<string, readonly string[]>>;
  /** The shipped standard library's site path. */
  readonly stdlib: string;
  /** The site folder of the catalogue files the wheel leaves out (NAME.json each). */
  readonly apart: string;
  /** Pyodide's version. */
  readonly pyodide: string;
  /** The runtime's download, in megabytes (rounded). */
  readonly download_MB: number;
  /** The longest saved or linked text the engine takes, in characters. */
  readonly max_input_chars: number;
  /** The deepest nesting of [ and { the engine parses. */
  readonly max_json_depth: number;
  /** The longest value a page address carries as typed, in characters (longer ones go compressed). */
  readonly max_address_chars: number;
  /** The longest page address written or copied, compressed values included, in characters. */
  readonly max_link_chars: number;
};
