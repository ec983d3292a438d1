// safeagents console: the sessions list follows the store through one server-sent-event
// stream (no polling). Each "session" event carries the rendered row of a session that
// changed; "totals" carries the counts under the page's filters.
(function () {
  "use strict";
  var rows = document.getElementById("session-rows");
  if (!rows || !rows.dataset.events || !window.EventSource) return;
  var status = document.getElementById("live-status");
  var source = new EventSource(rows.dataset.events);

  function rowFrom(html) {
    var holder = document.createElement("tbody");
    holder.innerHTML = html.trim();
    return holder.firstElementChild;
  }

  source.addEventListener("session", function (event) {
    var data = JSON.parse(event.data);
    var row = rowFrom(data.html);
    if (!row) return;
    var old = document.getElementById("session-" + data.id);
    if (old) old.remove();
    row.classList.add("fresh");
    rows.insertBefore(row, rows.firstElementChild);
    var empty = document.getElementById("no-sessions");
    if (empty) empty.remove();
  });

  source.addEventListener("totals", function (event) {
    var totals = JSON.parse(event.data);
    Object.keys(totals).forEach(function (name) {
      var cell = document.querySelector('[data-total="' + name + '"]');
      if (cell) cell.textContent = totals[name];
    });
  });

  source.onopen = function () { if (status) { status.textContent = "live"; status.classList.remove("off"); } };
  source.onerror = function () { if (status) { status.textContent = "reconnecting…"; status.classList.add("off"); } };
}());
