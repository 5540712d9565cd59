// Keeps a widget's hidden `state` input on the reader's device: sessionStorage for the
// simulated dgx-1 (this tab, across pages), localStorage for drill scores. Values are opaque
// text to this file; the engine validates them and refuses anything broken or foreign.
const PREFIX = "lesson:";
// Drill scores once kept under their step's number, now under the drill's name: a score
// kept under the old key moves to the new one the first time it is read.
const RENAMED = new Map([
  ["local:drill-training-memory", "local:drill-7"],
  ["local:drill-will-it-fit", "local:drill-17"],
]);
/** @type {Map<string, Set<{root: HTMLElement, callback: (value: string) => void}>>} */
const listeners = new Map();

/** @param {string} key "local:NAME" or "session:NAME" */
function area(key) {
  const [kind] = key.split(":");
  try {
    return kind === "local" ? window.localStorage : window.sessionStorage;
  } catch {
    return null; // storage disabled: the lesson still works, it just forgets
  }
}

/**
 * The value kept under `key`'s old name, moved to `key` (null when there is none).
 * @param {string} key
 * @returns {string | null}
 */
function moveRenamed(key) {
  const old = RENAMED.get(key);
  const value = old ? area(key)?.getItem(PREFIX + old) : null;
  if (typeof value !== "string") return null;
  // A value was read, so `key` has a storage area.
  const storage = /** @type {Storage} */ (area(key));
  storage.setItem(PREFIX + key, value);
  storage.removeItem(PREFIX + old);
  return value;
}

export const store = {
  /**
   * The kept value as stored (null when none); check it with bounded.js before use.
   * @param {string} key
   * @returns {string | null}
   */
  load(key) {
    try {
      const value = area(key)?.getItem(PREFIX + key) ?? moveRenamed(key);
      return typeof value === "string" ? value : null;
    } catch {
      return null;
    }
  },
  /**
   * Keep `value`, and tell the other widgets that follow `key` (not `origin`, which changed it).
   * @param {string} key
   * @param {string} value
   * @param {HTMLElement} [origin]
   */
  save(key, value, origin) {
    try {
      if (this.load(key) === value) return;
      area(key)?.setItem(PREFIX + key, value);
    } catch {
      return;
    }
    for (const { root, callback } of listeners.get(key) || []) {
      if (root !== origin && root.isConnected) callback(value);
    }
  },
  /** @param {string} key */
  forget(key) {
    try {
      area(key)?.removeItem(PREFIX + key);
    } catch {
      /* nothing kept */
    }
  },
  /**
   * @param {string} key
   * @param {HTMLElement} root
   * @param {(value: string) => void} callback
   */
  subscribe(key, root, callback) {
    if (!listeners.has(key)) listeners.set(key, new Set());
    const set = /** @type {Set<{root: HTMLElement, callback: (value: string) => void}>} */ (listeners.get(key));
    for (const entry of set) if (!entry.root.isConnected) set.delete(entry);
    set.add({ root, callback });
  },
};
