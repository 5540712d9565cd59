// Bounds on a saved or linked value, checked before it is sent to the engine: a value far too
// long, or nested so deeply that parsing it would overflow the WebAssembly stack (about 5,000
// brackets kill Pyodide), is refused here with a reason. The engine applies the same bounds
// (engine/numbers/bounded_json.py); this file only keeps such text out of the worker. The
// bounds are the engine's, written into runtime-config.js by the build.
import { RUNTIME } from "./runtime-config.js";

export const MAX_STORED_CHARS = RUNTIME.max_input_chars;
const MAX_DEPTH = RUNTIME.max_json_depth;

/**
 * The deepest nesting of [ and { in `text`, brackets inside JSON strings not counted.
 * @param {string} text
 */
function nestingDepth(text) {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth -= 1;
  }
  return deepest;
}

/**
 * Why `text` is refused ("" when it is within bounds); `maxChars` bounds its length.
 * @param {string} text
 * @param {number} maxChars
 */
export function refusal(text, maxChars) {
  if (text.length > maxChars) {
    return `it is too long to be real (${text.length.toLocaleString("en-US")} characters; at most ${maxChars.toLocaleString("en-US")}).`;
  }
  if (nestingDepth(text) > MAX_DEPTH) return `it is nested too deeply to be real (more than ${MAX_DEPTH} levels).`;
  return "";
}
