// Follows a training run: the server sends the summary and charts again, drawn anew,
// each time the metrics log grows (server-sent events; the browser reconnects by itself
// and resumes after the last event it got).
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource) {
    return;
  }
  var source = new EventSource(live.getAttribute("data-events"));
  source.addEventListener("charts", function (event) {
    live.innerHTML = event.data;
  });
  source.addEventListener("reset", function () {
    source.close();
    window.location.reload();
  });
})();
