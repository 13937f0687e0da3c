// site_builder serve: reload this page when the site is rebuilt.  Loaded only by the
// preview server (it adds the <script> tag to each page as it serves it), never
// published.  The server sends the site's version on /__livereload (Server-Sent
// Events); the page knows the version it was served with, so a rebuild that
// finished before the connection opened still reloads it.
"use strict";
(function () {
  var script = document.currentScript;
  var served = script ? script.getAttribute("data-version") : null;
  if (!window.EventSource) return;
  var source = new EventSource("/__livereload");
  source.onmessage = function (event) {
    if (served === null) {
      served = event.data;
    } else if (event.data !== served) {
      source.close();
      window.location.reload();
    }
  };
  // On a lost connection EventSource retries by itself; a restarted server sends a new
  // version, which reloads the page.
})();
