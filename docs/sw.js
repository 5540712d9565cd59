// Service worker: the runtime (Pyodide core, engine wheel, scripts) is cached at install,
// pages and their assets as the reader visits them. The runtime and the theme's hashed assets
// are cache-first (they never change under one name); everything else is network-first, so
// an online reader always gets fresh pages. The build hook fills in VERSION and PRECACHE.
const VERSION = "__BUILD_VERSION__";
const PRECACHE = __PRECACHE_LIST__;
const CACHE = `lesson-${VERSION}`;

self.addEventListener("install", (event) => {
  const base = self.registration.scope;
  event.waitUntil(
    caches
      .open(CACHE)
      // force-cache: take the runtime from the HTTP cache the page just filled, rather
      // than downloading the runtime again.
      .then((cache) => cache.addAll(PRECACHE.map((path) => new Request(new URL(path, base), { cache: "force-cache" }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  // Navigation preload: the browser asks the network for a page while this worker starts up,
  // instead of after.
  const preload = self.registration.navigationPreload ? self.registration.navigationPreload.enable() : null;
  event.waitUntil(
    Promise.resolve(preload)
      .then(() => caches.keys())
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith("lesson-") && k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "cache-urls") {
    const urls = event.data.urls.filter((url) => url.startsWith(self.registration.scope));
    event.waitUntil(
      caches.open(CACHE).then((cache) =>
        Promise.all(urls.map((url) => cache.match(url).then((hit) => hit || cache.add(url).catch(() => undefined)))),
      ),
    );
  }
});

async function networkFirst(request, preloaded) {
  const cache = await caches.open(CACHE);
  try {
    const response = (await preloaded) || (await fetch(request));
    if (response.ok) cache.put(request, response.clone());
    return response;
  } catch (error) {
    const hit = await cache.match(request, { ignoreSearch: true });
    if (hit) return hit;
    throw error;
  }
}

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(request);
  if (hit) return hit;
  const response = await fetch(request);
  if (response.ok) cache.put(request, response.clone());
  return response;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || !request.url.startsWith(self.registration.scope)) return;
  const path = request.url.slice(self.registration.scope.length).split("?")[0];
  const immutable = PRECACHE.includes(path) || path.startsWith("assets/");
  event.respondWith(immutable ? cacheFirst(request) : networkFirst(request, event.preloadResponse));
});
