// Service worker: keeps the lesson readable offline, one build at a time.
//
// The build (macros/service_worker.py) fills in FILES, every file of the lesson by site path
// with a digest of its bytes, and VERSION, a digest of that list. This worker answers for
// those files from its own cache, `lesson-VERSION`, and from nothing else, so the pages,
// assets and runtime a reader gets always belong to one build. A file is stored under its
// digest (path?sha=digest), and only once its bytes match it: a new build copies the files
// it shares with the older cache and downloads only the ones that changed.
//
// At install it keeps the runtime and the offline page (INSTALL); the rest of the lesson when
// a page asks for it ("save-lesson", sent once the page is live and the browser idle), or at
// once when the reader already had the whole lesson from an older build. Older `lesson-`
// caches go when this one activates, that is once it holds what they held.
const VERSION = "__BUILD_VERSION__";
const FILES = __FILES__;
const INSTALL = __INSTALL__;
const FALLBACK = "__FALLBACK__";
const DIGEST_HEX_CHARS = __DIGEST_HEX_CHARS__;
const CACHE = `lesson-${VERSION}`;
const SCOPE = self.registration.scope;
// Files fetched at once while saving: few, so a page the reader opens meanwhile is not kept
// waiting behind them.
const BATCH = 4;
// Stored in the cache once it holds every file: the reader keeps the whole lesson.
const COMPLETE = new URL("__lesson-complete", SCOPE).href;

const keyOf = (/** @type {string} */ path) => new URL(`${path}?sha=${FILES[path]}`, SCOPE).href;
const pathOf = (/** @type {string} */ url) => url.slice(SCOPE.length).split(/[?#]/)[0];
const saveData = () => Boolean(self.navigator.connection && self.navigator.connection.saveData);

/** @param {ArrayBuffer} buffer */
async function digestOf(buffer) {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, DIGEST_HEX_CHARS);
}

/**
 * Keep `response` as this build's `path` if its bytes are that file's; say whether it was.
 * @param {Cache} cache
 * @param {string} path
 * @param {Response} response
 */
async function keep(cache, path, response) {
  if (!response.ok) return false;
  if ((await digestOf(await response.clone().arrayBuffer())) !== FILES[path]) return false;
  await cache.put(keyOf(path), response);
  return true;
}

// One file into this build's cache: already there, the same bytes from an older build's
// cache, or the network (revalidating what the browser's HTTP cache holds).
/**
 * @param {Cache} cache
 * @param {string} path
 */
async function save(cache, path) {
  const key = keyOf(path);
  if (await cache.match(key)) return;
  const older = await caches.match(key);
  if (older) return cache.put(key, older);
  const url = new URL(path, SCOPE).href;
  if (await keep(cache, path, await fetch(url, { cache: "no-cache", priority: "low" }))) return;
  // The HTTP cache answered with another build's bytes: ask the server itself.
  if (await keep(cache, path, await fetch(url, { cache: "reload", priority: "low" }))) return;
  throw new Error(`the server holds another build of ${path}`);
}

/**
 * @param {string[]} paths
 * @param {(saved: number, total: number) => void} [onProgress]
 */
async function saveAll(paths, onProgress = () => {}) {
  const cache = await caches.open(CACHE);
  for (let i = 0; i < paths.length; i += BATCH) {
    await Promise.all(paths.slice(i, i + BATCH).map((path) => save(cache, path)));
    onProgress(Math.min(i + BATCH, paths.length), paths.length);
  }
}

async function isComplete(cacheName = CACHE) {
  return Boolean(await (await caches.open(cacheName)).match(COMPLETE));
}

async function olderCompleteCache() {
  for (const name of await caches.keys()) {
    if (name.startsWith("lesson-") && name !== CACHE && (await isComplete(name))) return true;
  }
  return false;
}

/** @param {{type: string, version: string, [more: string]: unknown}} message */
async function broadcast(message) {
  for (const client of await self.clients.matchAll({ includeUncontrolled: true })) client.postMessage(message);
}

// Every file of the lesson, then the mark that says this build's cache is whole.
/** @param {(saved: number, total: number) => void} [report] */
async function saveWhole(report) {
  await saveAll(Object.keys(FILES), report);
  await (await caches.open(CACHE)).put(COMPLETE, new Response(VERSION));
}

/** @type {Promise<unknown> | null} */
let saving = null; // the running "save the whole lesson", shared by every page that asks

function saveLesson() {
  if (!saving) {
    const all = Object.keys(FILES);
    const report = (/** @type {number} */ saved, /** @type {number} */ total) => broadcast({ type: "offline-progress", saved, total, version: VERSION });
    saving = (async () => {
      if (!(await isComplete())) await saveWhole(report);
      await broadcast({ type: "offline-ready", total: all.length, version: VERSION });
    })()
      .catch((error) => broadcast({ type: "offline-failed", reason: String(error.message || error), version: VERSION }))
      .finally(() => {
        saving = null;
      });
  }
  return saving;
}

// The reader opted out: keep what any page needs to open offline (INSTALL), drop the rest.
async function forgetLesson() {
  const cache = await caches.open(CACHE);
  const kept = new Set(INSTALL.map(keyOf));
  for (const request of await cache.keys()) {
    if (!kept.has(request.url)) await cache.delete(request);
  }
  await broadcast({ type: "offline-off", version: VERSION });
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      // A reader who had the whole lesson from an older build gets this build's whole lesson
      // before this worker takes over; the older worker serves the older build meanwhile.
      const whole = !saveData() && (await olderCompleteCache());
      await (whole ? saveWhole() : saveAll(INSTALL));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      // Pages are answered from the cache: a navigation preload would fetch each one again.
      if (self.registration.navigationPreload) await self.registration.navigationPreload.disable();
      const older = (await caches.keys()).filter((name) => name.startsWith("lesson-") && name !== CACHE);
      await Promise.all(older.map((name) => caches.delete(name)));
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "save-lesson") event.waitUntil(saveLesson());
  else if (data.type === "forget-lesson") event.waitUntil(forgetLesson());
  else if (data.type === "save-urls" && Array.isArray(data.urls)) {
    // A reader who does not keep the whole lesson still keeps the pages they open.
    const paths = data.urls.filter((/** @type {unknown} */ url) => String(url).startsWith(SCOPE)).map(pathOf);
    event.waitUntil(saveAll([...new Set(paths)].filter((path) => path in FILES)).catch(() => undefined));
  }
});

// A listed file: from this build's cache, else from the network (and kept if it is this
// build's). Anything else: the network. A page that cannot be had either way: the offline page.
/**
 * @param {Request} request
 * @param {string} path
 */
async function answer(request, path) {
  const cache = await caches.open(CACHE);
  if (path in FILES) {
    const hit = await cache.match(keyOf(path));
    if (hit) return hit;
  }
  try {
    const response = await fetch(request);
    if (path in FILES) keep(cache, path, response.clone()).catch(() => undefined);
    return response;
  } catch (error) {
    if (request.mode !== "navigate" || !(await cache.match(keyOf(FALLBACK)))) throw error;
    const fallback = new URL(FALLBACK, SCOPE);
    fallback.searchParams.set("from", request.url.slice(SCOPE.length));
    return Response.redirect(fallback.href, 302);
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith(SCOPE)) return;
  const path = pathOf(request.url);
  if (path in FILES || request.mode === "navigate") event.respondWith(answer(request, path));
});
