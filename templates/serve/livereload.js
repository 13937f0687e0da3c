// site_builder serve: reload this page when the site is rebuilt.  Loaded only by the
// preview server (it adds the <script> tag to each page as it serves it), never
// published.  The server sends the site's version on /__livereload (Server-Sent
// Events); the page knows the version it was served with, so a rebuild that
// finished before the connection opened still reloads it.  While the search index is
// older than the pages (the tag's data-search="pending"; "search" events after), a notice
// under the search box says so; it goes when the index has caught up, without a reload.
"use strict";
(function () {
  var script = document.currentScript;
  var served = script ? script.getAttribute("data-version") : null;
  var CATCHING_UP = "Search is catching up with the latest change: results may show the previous text.";
  function searchNotice(pending) {
    var notice = document.getElementById("search-catching-up");
    var form = document.getElementById("search");
    if (!pending) {
      if (notice) notice.remove();
      return;
    }
    if (notice || !form) return;
    notice = document.createElement("p");
    notice.id = "search-catching-up";
    notice.className = "search-status";
    notice.setAttribute("role", "status");
    notice.textContent = CATCHING_UP;
    form.insertAdjacentElement("afterend", notice);
  }
  var pending = script !== null && script.getAttribute("data-search") === "pending";
  if (pending) {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", function () { searchNotice(pending); });
    } else {
      searchNotice(pending);
    }
  }
  if (!window.EventSource) return;
  var source = new EventSource("/__livereload");
  source.addEventListener("search", function (event) {
    var wasPending = pending;
    pending = event.data === "pending";
    searchNotice(pending);
    // the site's search (static/site.js) drops the index it loaded and reads the new one
    if (wasPending && !pending) document.dispatchEvent(new CustomEvent("site-builder:search-updated"));
  });
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
