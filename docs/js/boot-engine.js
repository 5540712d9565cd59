// Starts the lesson's engine worker at the page's first contentful paint, before the module
// scripts run (they wait for the whole page and the theme's scripts). Only on pages with
// widgets (the template includes this script there). Messages that arrive before
// engine-client.js takes the worker over are kept and handed to it.
(function () {
  var script = document.currentScript;
  if (!script || !window.Worker || location.protocol === "file:") return;
  var workerUrl = new URL(script.dataset.worker, location.href).href;
  var early = { worker: null, messages: [] };
  window.__lessonEarlyEngine = early;

  function start() {
    if (early.worker) return;
    try {
      early.worker = new Worker(workerUrl, { type: "module" });
    } catch (error) {
      return; // engine-client.js will try again and report the failure
    }
    early.listener = function (event) { early.messages.push(event); };
    early.worker.addEventListener("message", early.listener);
    early.worker.addEventListener("error", early.listener);
    early.worker.postMessage({ type: "init" });
  }
  try {
    new PerformanceObserver(function (list, observer) {
      if (list.getEntriesByName("first-contentful-paint").length) {
        observer.disconnect();
        start();
      }
    }).observe({ type: "paint", buffered: true });
  } catch (error) {
    /* no paint timing: engine-client.js starts the engine itself */
  }
})();
