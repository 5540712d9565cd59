// Offline reading: registers the service worker (docs/sw.js) and, once the page is live and
// the browser idle, asks it to save the whole lesson, unless the reader said no here or the
// browser's data saver is on. The indicator in the footer says how far saving has got, and
// its checkbox keeps the reader's choice on this device (store.js).
import { store } from "./store.js";

const CHOICE_KEY = "local:offline"; // "on" or "off"; none: on, unless data saver is on
let registered = false;
let listening = false;
/**
 * How far saving has got: "waiting" (not asked yet), "saving" (`saved` of `total` files),
 * "ready", "failed" or "off".
 * @typedef {{state: string, saved?: number, total?: number}} Report
 */
// What the worker said last, shown again on each page instant navigation brings in.
/** @type {Report} */
let last = { state: "waiting" };

function dataSaver() {
  return Boolean(navigator.connection && navigator.connection.saveData);
}

function wanted() {
  const choice = store.load(CHOICE_KEY);
  return choice === "on" || (choice !== "off" && !dataSaver());
}

/** @param {Report} report */
function describe(report) {
  switch (report.state) {
    case "ready":
      return "Available offline: every page of this lesson is saved on this device.";
    case "saving":
      if (!report.total) return "Saving this lesson for offline reading…";
      return `Saving this lesson for offline reading: ${report.saved} of ${report.total} files.`;
    case "failed":
      return "Saving for offline reading stopped (the network failed); it goes on from the next page you open.";
    case "off":
      return dataSaver() && store.load(CHOICE_KEY) !== "off"
        ? "Data saver is on, so the lesson is not saved for offline reading: pages you open are kept."
        : "Not saved for offline reading: pages you open are kept.";
    default:
      return "This lesson is saved for offline reading once this page is ready.";
  }
}

/** @returns {HTMLElement | null} */
function indicator() {
  return document.querySelector("[data-lesson-offline]");
}

/** @param {Report} report */
function show(report) {
  last = report;
  const box = indicator();
  if (!box) return;
  box.hidden = false;
  box.dataset.offlineState = report.state;
  const status = /** @type {Element} */ (box.querySelector("[role=status]"));
  // Screen readers announce the status once saving ends, not at every file.
  status.setAttribute("aria-busy", String(report.state === "saving"));
  status.textContent = describe(report);
  /** @type {HTMLInputElement} */ (box.querySelector("input[name=save-offline]")).checked = wanted();
}

/** @returns {Promise<ServiceWorker>} */
async function activeWorker() {
  const registration = await navigator.serviceWorker.ready;
  // `ready` resolves once the registration has an active worker.
  return /** @type {ServiceWorker} */ (registration.active);
}

function thisPageAndItsFiles() {
  const urls = [location.href.split("#")[0]];
  for (const entry of performance.getEntriesByType("resource")) {
    if (entry.name.startsWith(location.origin)) urls.push(entry.name);
  }
  return urls;
}

async function ask() {
  const worker = await activeWorker();
  // This page first, so it reopens offline even if the reader leaves the network right away.
  worker.postMessage({ type: "save-urls", urls: thisPageAndItsFiles() });
  if (wanted()) worker.postMessage({ type: "save-lesson" });
  else show({ state: "off" });
}

function listen() {
  if (listening) return;
  listening = true;
  followNewerBuilds();
  navigator.serviceWorker.addEventListener("message", (event) => {
    const data = event.data || {};
    if (data.type === "offline-progress" && wanted()) show({ state: "saving", saved: data.saved, total: data.total });
    else if (data.type === "offline-ready" && wanted()) show({ state: "ready" });
    else if (data.type === "offline-failed" && wanted()) show({ state: "failed" });
    else if (data.type === "offline-off") show({ state: "off" });
  });
}

// A worker of a newer build took over this page (it was controlled by an older one): the
// newer pages need their own scripts and runtime, so links now load pages in full, not by
// instant navigation into this page's older scripts.
/** @param {MouseEvent} event */
function loadInFull(event) {
  const link = event.target instanceof Element ? /** @type {HTMLAnchorElement | null} */ (event.target.closest("a[href]")) : null;
  if (!link || link.target || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin || (url.pathname === location.pathname && url.search === location.search)) return;
  event.preventDefault();
  event.stopPropagation();
  location.assign(url.href);
}

function followNewerBuilds() {
  // The first worker to control this page is of its own build (it registered it).
  let controlled = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener("controllerchange", () => {
    if (controlled) document.addEventListener("click", loadInFull, true);
    controlled = true;
  });
}

function bindChoice() {
  const box = indicator();
  const toggle = box && /** @type {HTMLInputElement | null} */ (box.querySelector("input[name=save-offline]"));
  if (!toggle || toggle.dataset.bound) return;
  toggle.dataset.bound = "1";
  toggle.addEventListener("change", async () => {
    store.save(CHOICE_KEY, toggle.checked ? "on" : "off");
    if (!registered) return show(toggle.checked ? { state: "waiting" } : { state: "off" });
    const worker = await activeWorker();
    worker.postMessage({ type: toggle.checked ? "save-lesson" : "forget-lesson" });
    if (toggle.checked) show({ state: "saving", saved: 0, total: last.total || 0 });
  });
}

// The offline page names the address that could not be opened: link to it for a retry.
function linkTheMissedAddress() {
  const link = /** @type {HTMLAnchorElement | null} */ (document.querySelector("[data-offline-from]"));
  const from = new URLSearchParams(location.search).get("from");
  if (!link || !from) return;
  const target = new URL(from, new URL("../", location.href));
  if (target.origin !== location.origin) return;
  link.href = target.href;
  link.textContent = target.pathname + target.search;
}

export function registerOffline() {
  if (!("serviceWorker" in navigator) || location.protocol === "file:") return;
  linkTheMissedAddress();
  listen();
  bindChoice();
  show(wanted() || last.state !== "waiting" ? last : { state: "off" });
  // Register once the page is live and the browser is idle, so neither the worker's install
  // nor the saving competes with what the reader is waiting for.
  const hasWidgets = document.querySelector("[data-widget]") !== null;
  const live = hasWidgets
    ? new Promise((resolve) => document.addEventListener("widget:updated", resolve, { once: true }))
    : Promise.resolve();
  const idle = () =>
    new Promise((resolve) => ("requestIdleCallback" in window ? requestIdleCallback(resolve, { timeout: 2000 }) : setTimeout(resolve, 200)));
  live
    .then(idle)
    .then(async () => {
      if (!registered) {
        registered = true;
        const url = new URL("../sw.js", import.meta.url);
        await navigator.serviceWorker.register(url, { scope: new URL("../", import.meta.url).pathname });
      }
      await ask();
    })
    .catch(() => {
      // Offline reading is a bonus: the lesson works without it.
    });
}
