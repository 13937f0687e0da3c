// site_builder: draw the page's interactive figures (site/outputs/interactive.py) with the site's own
// plotly.js.  Each figure's data file ran before this one (deferred scripts run in order) and
// left {id, figure} in window.siteFigures.  Nothing is fetched: this works from disk too.
"use strict";

// plotly.js styles its plots through <style> elements it adds, which the page's CSP forbids
// (no inline style).  It looks each one up by id first ("plotly.js-style-..."), then writes
// rules into its .sheet: here that lookup finds a placeholder whose sheet is a constructed
// style sheet, adopted by the document, which the CSP allows.  A <style> it appends with its
// text (the map library's) becomes such a sheet too.  This file runs before plotly.min.js,
// which adds its global rules as it loads.
(function () {
  var PREFIX = "plotly.js-style-";
  var head = document.head;
  var byId = document.getElementById.bind(document);
  var append = head.appendChild;
  var sheets = {};
  if (!("adoptedStyleSheets" in document) || typeof CSSStyleSheet.prototype.replaceSync !== "function") return;

  function placeholder(id, text) {
    // (plotly.js removes the element to drop a plot's rules: the new one starts afresh)
    var sheet = new CSSStyleSheet();
    if (text) sheet.replaceSync(text);
    var old = sheets[id];
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter(function (s) { return s !== old; })
      .concat([sheet]);
    sheets[id] = sheet;
    var element = document.createElement("meta");
    element.id = id;
    Object.defineProperty(element, "sheet", { value: sheet });
    append.call(head, element);
    return element;
  }

  document.getElementById = function (id) {
    var found = byId(id);
    if (found || typeof id !== "string" || id.indexOf(PREFIX) !== 0) return found;
    return placeholder(id, "");
  };
  head.appendChild = function (node) {
    if (!(node instanceof HTMLStyleElement)) return append.call(head, node);
    placeholder(node.id || "", node.textContent);
    return node;
  };
})();

// plotly.js also sets some styles as attributes (d3's attr("style", ...): a heatmap's
// image-rendering and its feature test, a colour bar's fills, a layout image's transform),
// which the CSP refuses (style-src-attr: console errors, and a heatmap drawn blurred).  The same
// declarations set through the CSSOM (element.style) are allowed: the CSP keeps style out of the
// page's markup, and this page's scripts are all its own.  So on the pages that show a figure, a
// script's setAttribute("style", text) sets element.style.cssText instead; markup is untouched.
(function () {
  var set = Element.prototype.setAttribute;
  var setNS = Element.prototype.setAttributeNS;
  function isStyle(element, name) {
    return typeof name === "string" && name.toLowerCase() === "style" && element.style instanceof CSSStyleDeclaration;
  }
  Element.prototype.setAttribute = function (name, value) {
    if (!isStyle(this, name)) return set.call(this, name, value);
    this.style.cssText = String(value);
  };
  Element.prototype.setAttributeNS = function (namespace, name, value) {
    if (namespace || !isStyle(this, name)) return setNS.call(this, namespace, name, value);
    this.style.cssText = String(value);
  };
})();

document.addEventListener("DOMContentLoaded", function () {
  if (!window.Plotly) return; // plotly.js missing: the figures' text forms stay
  (window.siteFigures || []).forEach(function (entry) {
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
});
