// Registers the service worker that keeps the lesson usable offline, and hands it the
// current page and everything the page loaded, so a reload without a network still works.
let registered = false;

function cacheThisPage(registration) {
  const worker = registration.active || registration.waiting || registration.installing;
  if (!worker) return;
  const urls = [location.href.split("#")[0]];
  for (const entry of performance.getEntriesByType("resource")) {
    if (entry.name.startsWith(location.origin)) urls.push(entry.name);
  }
  worker.postMessage({ type: "cache-urls", urls });
}

export function registerOffline() {
  if (!("serviceWorker" in navigator) || location.protocol === "file:") return;
  // Register once the page is live and the browser is idle, so the runtime precache does not
  // compete with the first render.
  const hasWidgets = document.querySelector("[data-widget]") !== null;
  const live = hasWidgets
    ? new Promise((resolve) => document.addEventListener("widget:updated", resolve, { once: true }))
    : Promise.resolve();
  const idle = () =>
    new Promise((resolve) => ("requestIdleCallback" in window ? requestIdleCallback(resolve, { timeout: 2000 }) : setTimeout(resolve, 200)));
  live.then(idle).then(async () => {
    if (!registered) {
      registered = true;
      const url = new URL("../sw.js", import.meta.url);
      await navigator.serviceWorker.register(url, { scope: new URL("../", import.meta.url).pathname });
    }
    const registration = await navigator.serviceWorker.ready;
    cacheThisPage(registration);
  }).catch(() => {
    // Offline support is a bonus: the lesson works without it.
  });
}
