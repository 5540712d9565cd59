// The theme builds its search index in a Web Worker as soon as a page loads. On a page with
// live widgets that work competes for the CPU with starting Python, so the search worker is
// created only once the first widget is live (or after 10 s, or at once on pages without
// widgets). Until then its messages wait in a queue; search works the same, just later.
(function () {
  var Native = window.Worker;
  if (!Native || location.protocol === "file:") return;
  var released = false;
  var waiting = [];

  function release() {
    if (released) return;
    released = true;
    for (var i = 0; i < waiting.length; i++) waiting[i]();
    waiting = [];
  }
  function whenReleased(fn) {
    if (released) fn();
    else waiting.push(fn);
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (!document.querySelector("[data-widget]")) release();
  });
  document.addEventListener("widget:updated", release, { once: true });
  setTimeout(release, 10000);

  function DeferredWorker(url, options) {
    var target = new EventTarget();
    var queue = [];
    var real = null;
    target.onmessage = null;
    target.onerror = null;
    target.postMessage = function (data, transfer) {
      if (real) real.postMessage(data, transfer);
      else queue.push([data, transfer]);
    };
    target.terminate = function () {
      if (real) real.terminate();
      queue = [];
      waiting = waiting.filter(function (fn) { return fn !== start; });
    };
    function forward(event) {
      var copy = event.type === "message" ? new MessageEvent("message", { data: event.data }) : new Event(event.type);
      target.dispatchEvent(copy);
      var handler = target["on" + event.type];
      if (typeof handler === "function") handler.call(target, copy);
    }
    function start() {
      real = new Native(url, options);
      real.addEventListener("message", forward);
      real.addEventListener("error", forward);
      for (var i = 0; i < queue.length; i++) real.postMessage(queue[i][0], queue[i][1]);
      queue = [];
    }
    whenReleased(start);
    return target;
  }

  window.Worker = function (url, options) {
    var isSearch = /\/assets\/javascripts\/workers\/search\.[\w]+\.min\.js/.test(String(url));
    return isSearch && !released ? DeferredWorker(url, options) : new Native(url, options);
  };
  window.Worker.prototype = Native.prototype;
})();
