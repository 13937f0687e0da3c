// site_builder: draw the page's interactive figures (site/interactive.py) with the site's own
// plotly.js.  Each figure's data file ran before this one (deferred scripts run in order) and
// left {id, figure} in window.siteFigures.  Nothing is fetched: this works from disk too.
"use strict";

(function () {
  var figures = window.siteFigures || [];
  if (!window.Plotly) return; // plotly.js missing: the figures' text forms stay
  figures.forEach(function (entry) {
    var box = document.getElementById(entry.id);
    if (!box) return;
    var figure = entry.figure || {};
    // The reader's page, not Plotly's servers: no "edit in Chart Studio" link, no logo.
    var config = Object.assign({}, figure.config || {}, {
      responsive: true, displaylogo: false, showLink: false, showSendToCloud: false,
      showEditInChartStudio: false, plotlyServerURL: "",
    });
    Plotly.newPlot(box, figure.data || [], figure.layout || {}, config).then(function () {
      box.closest(".value-plotly").classList.add("drawn");
    });
  });
})();
