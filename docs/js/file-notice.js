// Runs only in the downloaded copy opened from disk (file://), where browsers refuse module
// scripts and workers: the widgets keep their build-time numbers and say how to go live.
(function () {
  if (location.protocol !== "file:") return;
  function explain() {
    var statuses = document.querySelectorAll("[data-widget] .widget-status");
    for (var i = 0; i < statuses.length; i++) {
      statuses[i].textContent =
        "Offline copy: these numbers were computed when the lesson was built. To make the " +
        "widgets live, serve this folder with any local static server (for example run " +
        "`python3 -m http.server` inside it) and open the address it prints.";
    }
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", explain);
  else explain();
})();
