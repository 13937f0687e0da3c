// site_builder: the reader's tools on every page.  No inline script anywhere (the pages'
// Content-Security-Policy forbids it), no request to another origin.
"use strict";

// The site's root folder, from this script's own address: works from disk, from a host's
// root and under any sub-path.  (document.currentScript is only set while this file runs.)
var SITE_ROOT = new URL("..", document.currentScript.src);

document.addEventListener("DOMContentLoaded", function () {
  focusableScrollers();
  window.addEventListener("resize", focusableScrollers);
  addCopyButtons();
  setUpFilter();
  setUpThemeToggle();
  setUpSearch();
});

// ---- code and output that scroll sideways can be scrolled with the keyboard too

function focusableScrollers() {
  document.querySelectorAll("main pre, .csv-preview").forEach(function (box) {
    if (box.scrollWidth > box.clientWidth) box.setAttribute("tabindex", "0");
    else box.removeAttribute("tabindex");
  });
}

// ---- copy buttons: the code only, never the line numbers (<span class="linenos">)

function addCopyButtons() {
  if (!navigator.clipboard) return; // no Clipboard API (e.g. insecure context): no buttons
  document.querySelectorAll(".cell .code").forEach(function (box) {
    // A block may be in parts (the module docstring folded apart): copy them all.
    var pres = Array.prototype.slice.call(box.querySelectorAll("pre"));
    if (!pres.length) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy copy-button";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy this block's code");
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(pres.map(codeText).join("\n")).then(
        function () { flash(button, "Copied"); },
        function () { flash(button, "Copy failed"); }
      );
    });
    box.appendChild(button);
  });
}

function codeText(pre) {
  var copy = pre.cloneNode(true);
  copy.querySelectorAll(".linenos").forEach(function (n) { n.remove(); });
  // Pygments ends the block with a newline the script's block does not have.
  return copy.textContent.replace(/\n$/, "");
}

function flash(button, text) {
  button.textContent = text;
  setTimeout(function () { button.textContent = "Copy"; }, 1500);
}

// ---- index: instant filter over names and summaries

function setUpFilter() {
  var input = document.getElementById("filter");
  if (!input) return;
  var status = document.getElementById("filter-status");
  var items = Array.prototype.slice.call(document.querySelectorAll("li.entry-item"));
  var groups = document.querySelectorAll(".letter-group");
  var letters = document.querySelector("nav.letters");
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (li) {
      var text = li.textContent.toLowerCase();
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      li.hidden = !match;
      if (match) shown += 1;
    });
    groups.forEach(function (g) { g.hidden = !g.querySelector("li.entry-item:not([hidden])"); });
    if (letters) letters.hidden = words.length > 0;
    if (!words.length) status.textContent = "";
    else if (!shown) status.textContent = "No entry matches \u201c" + input.value.trim() + "\u201d.";
    else status.textContent = shown + " of " + items.length + (items.length === 1 ? " entry" : " entries") + " match.";
  }
  input.addEventListener("input", apply);
  if (input.value) apply(); // the browser may restore the box's text on "back"
}

// ---- theme: light or dark, remembered; the system setting until the reader picks one

function setUpThemeToggle() {
  var button = document.getElementById("theme-toggle");
  if (!button) return;
  var root = document.documentElement;
  var systemDark = window.matchMedia("(prefers-color-scheme: dark)");
  function current() {
    return root.getAttribute("data-theme") || (systemDark.matches ? "dark" : "light");
  }
  function label() {
    var other = current() === "dark" ? "light" : "dark";
    button.setAttribute("aria-label", "Switch to " + other + " theme");
    button.title = "Switch to " + other + " theme";
  }
  button.addEventListener("click", function () {
    var next = current() === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    try { localStorage.setItem("theme", next); } catch (e) { /* not remembered, still applied */ }
    label();
  });
  systemDark.addEventListener("change", label);
  label();
}

// ---- search: Pagefind's index, our own small UI (its default UI needs inline styles)

var FROM_DISK = "Search works when the site is served over HTTP; from disk, use the filter on the index page.";
var UNAVAILABLE = "Search is unavailable: this copy of the site has no search index.";

function setUpSearch() {
  var form = document.getElementById("search");
  if (!form) return;
  var input = document.getElementById("search-input");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  var pagefind = null; // a Promise of the Pagefind module, loaded on first use
  var latest = 0;

  function say(text) {
    status.textContent = text;
    form.classList.toggle("has-results", Boolean(text) || list.children.length > 0);
  }
  function load() {
    if (!pagefind) {
      pagefind = import(new URL("pagefind/pagefind.js", SITE_ROOT).href).then(function (module) {
        module.options({ baseUrl: SITE_ROOT.pathname });
        return module.init().then(function () { return module; });
      });
    }
    return pagefind;
  }
  function run() {
    var query = input.value.trim();
    var ticket = ++latest;
    if (!query) { list.replaceChildren(); say(""); return; }
    load().then(function (module) {
      return module.debouncedSearch(query, {}, 150);
    }).then(function (search) {
      if (search === null || ticket !== latest) return; // a newer query superseded this one
      return Promise.all(search.results.slice(0, 10).map(function (r) { return r.data(); }))
        .then(function (hits) {
          if (ticket !== latest) return;
          show(hits, search.results.length, query);
        });
    }).catch(function () {
      pagefind = null; // try again on the next keystroke (the server may come back)
      list.replaceChildren();
      say(UNAVAILABLE);
    });
  }
  function show(hits, total, query) {
    list.replaceChildren.apply(list, hits.map(resultItem));
    if (!total) say("No results for \u201c" + query + "\u201d.");
    else if (total > hits.length) say("Showing " + hits.length + " of " + total + " results.");
    else say(total === 1 ? "1 result." : total + " results.");
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault(); // the results show under the box; Enter just searches now
    if (!form.classList.contains("offline")) run();
  });
  if (location.protocol === "file:") {
    // Say it before the reader types, in the page's flow rather than in a drop-down.
    form.classList.add("offline");
    say(FROM_DISK);
    return;
  }
  input.addEventListener("input", run);
  input.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { input.value = ""; run(); }
  });
}

function resultItem(hit) {
  var li = document.createElement("li");
  var a = document.createElement("a");
  a.href = hit.url;
  var title = document.createElement("span");
  title.className = "result-title";
  title.textContent = (hit.meta && hit.meta.title) || hit.url;
  a.appendChild(title);
  li.appendChild(a);
  if (hit.excerpt) {
    var excerpt = document.createElement("span");
    excerpt.className = "result-excerpt";
    appendExcerpt(excerpt, hit.excerpt);
    li.appendChild(excerpt);
  }
  return li;
}

// Pagefind's excerpt is HTML with <mark> around the matches.  Parse it inertly and copy
// over text and <mark> only, so nothing from the indexed pages can add markup here.
function appendExcerpt(target, html) {
  var doc = new DOMParser().parseFromString("<p>" + html + "</p>", "text/html");
  doc.body.firstChild.childNodes.forEach(function (node) {
    if (node.nodeName === "MARK") {
      var mark = document.createElement("mark");
      mark.textContent = node.textContent;
      target.appendChild(mark);
    } else {
      target.appendChild(document.createTextNode(node.textContent));
    }
  });
}
