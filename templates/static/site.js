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
  setUpOnThisPage();
  setUpOutputFolds();
  setUpTabsets();
  openFoldsForPrint();
});

// ---- folded code and output (hide-input, hide-output, code-fold) are printed open, then
// closed again: a reader's paper copy holds everything

function openFoldsForPrint() {
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.cell-fold:not([open]), details.callout-fold:not([open])").forEach(function (fold) {
      fold.open = true;
      opened.push(fold);
    });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (fold) { fold.open = false; });
    opened = [];
  });
}

// ---- Quarto's tabsets: without script every panel is a section under its heading (read and
// printed whole); here the headings become a tablist (WAI-ARIA's tabs pattern: one tab in the
// Tab order, arrow keys, Home and End move and select), and choosing a tab of a group
// (class tabset-group-NAME) chooses the tab of the same name in the page's other tabsets of it.

function setUpTabsets() {
  document.querySelectorAll(".tabset").forEach(function (set, n) {
    var panels = Array.prototype.filter.call(set.children, function (child) {
      return child.classList.contains("tab-panel");
    });
    if (!panels.length) return;
    var list = document.createElement("div");
    list.className = "tablist";
    list.setAttribute("role", "tablist");
    panels.forEach(function (panel, k) {
      var title = panel.querySelector(".tab-title");
      var tab = document.createElement("button");
      tab.type = "button";
      tab.className = "tab";
      tab.id = "tabset-" + n + "-tab-" + k;
      tab.textContent = title ? title.textContent : "Tab " + (k + 1);
      tab.setAttribute("role", "tab");
      panel.id = panel.id || "tabset-" + n + "-panel-" + k;
      tab.setAttribute("aria-controls", panel.id);
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
      tab.addEventListener("click", function () { chooseTab(set, k, true); });
      tab.addEventListener("keydown", function (event) {
        var last = panels.length - 1;
        var to = {ArrowRight: k === last ? 0 : k + 1, ArrowLeft: k === 0 ? last : k - 1, Home: 0, End: last}[event.key];
        if (to === undefined) return;
        event.preventDefault();
        chooseTab(set, to, true);
        set.querySelectorAll(":scope > .tablist > [role=tab]")[to].focus();
      });
      list.appendChild(tab);
    });
    set.insertBefore(list, set.firstChild);
    set.classList.add("tabset-tabs");
    chooseTab(set, 0, false);
  });
}

function chooseTab(set, index, inGroup) {
  var tabs = set.querySelectorAll(":scope > .tablist > [role=tab]");
  tabs.forEach(function (tab, k) {
    var chosen = k === index;
    tab.setAttribute("aria-selected", chosen ? "true" : "false");
    tab.tabIndex = chosen ? 0 : -1;
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !chosen;
  });
  var group = Array.prototype.find.call(set.classList, function (name) {
    return name.indexOf("tabset-group-") === 0;
  });
  if (!inGroup || !group || !tabs[index]) return;
  var name = tabs[index].textContent;
  document.querySelectorAll(".tabset." + group).forEach(function (other) {
    if (other === set) return;
    var same = Array.prototype.findIndex.call(other.querySelectorAll(":scope > .tablist > [role=tab]"),
      function (tab) { return tab.textContent === name; });
    if (same >= 0) chooseTab(other, same, false);
  });
}

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
    // The button sits in the block's head row, never over the code (issue 14).
    var head = box.closest(".cell").querySelector(".cell-head") || box;
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
    head.appendChild(button);
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
  function load(fresh) {
    if (!pagefind || fresh) {
      // fresh: the index changed under the loaded one; Pagefind forgets it and reads the new one
      var before = pagefind && fresh ? pagefind.then(function (module) { return module.destroy(); })
        .catch(function () {}) : Promise.resolve();
      pagefind = before.then(function () {
        return import(new URL("pagefind/pagefind.js", SITE_ROOT).href);
      }).then(function (module) {
        module.options({ baseUrl: SITE_ROOT.pathname });
        return module.init().then(function () { return mergeParts(module); })
          .then(function () { return module; });
      });
    }
    return pagefind;
  }
  // A large site's index comes in parts (site/publish/search_shards.py): the main index's
  // pagefind-entry.json names the others, which Pagefind merges into its search.
  function mergeParts(module) {
    return fetch(new URL("pagefind/pagefind-entry.json", SITE_ROOT).href, { cache: "no-cache" })
      .then(function (response) { return response.json(); })
      .then(function (entry) {
        return Promise.all((entry.shards || []).map(function (folder) {
          return module.mergeIndex(new URL("pagefind/" + folder + "/", SITE_ROOT).pathname,
            { baseUrl: SITE_ROOT.pathname });
        }));
      });
  }
  // serve made the search index again after this page was loaded (templates/serve/livereload.js)
  document.addEventListener("site-builder:search-updated", function () {
    if (!pagefind) return;
    load(true);
    if (input.value.trim()) run();
  });
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
  input.setAttribute("aria-keyshortcuts", "/");
  document.addEventListener("keydown", function (event) {
    // "/" jumps to search, as on most documentation sites, unless the reader is typing.
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
  input.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || !input.value) return;
    event.preventDefault();
    input.value = "";
    if (!form.classList.contains("offline")) run();
  });
  if (location.protocol === "file:") {
    // Say it before the reader types, in the page's flow rather than in a drop-down.
    form.classList.add("offline");
    say(FROM_DISK);
    return;
  }
  input.addEventListener("input", run);
}

function isTyping(target) {
  if (!target || !target.closest) return false;
  return Boolean(target.closest("input, textarea, select, [contenteditable]:not([contenteditable='false'])"));
}

// One entry of the results: the page when its title or introduction matched (or nothing
// more precise is known), and each block whose code, output or description matched,
// linking to the block's anchor ("attention \u203a B-train").
function resultItem(hit) {
  var li = document.createElement("li");
  var name = (hit.meta && hit.meta.title) || hit.url;
  var split = blockHits(hit);
  if (split.page || !split.blocks.length) {
    li.appendChild(resultLink(hit.url, name, "result-title"));
    var excerpt = document.createElement("span");
    excerpt.className = "result-excerpt";
    if (split.page) appendWords(excerpt, split.page.words, split.page.marked);
    else if (hit.excerpt) appendExcerpt(excerpt, hit.excerpt);
    if (excerpt.firstChild) li.appendChild(excerpt);
  }
  if (split.blocks.length) {
    var sub = document.createElement("ul");
    sub.className = "result-blocks";
    split.blocks.forEach(function (block) {
      var item = document.createElement("li");
      var url = hit.url.split("#")[0] + "#" + encodeURIComponent(block.id);
      item.appendChild(resultLink(url, name + " \u203a " + (block.label || block.id), "result-title"));
      var excerpt = document.createElement("span");
      excerpt.className = "result-excerpt";
      appendWords(excerpt, block.words, block.marked);
      item.appendChild(excerpt);
      sub.appendChild(item);
    });
    li.appendChild(sub);
  }
  return li;
}

function resultLink(href, text, className) {
  var a = document.createElement("a");
  a.href = href;
  var span = document.createElement("span");
  span.className = className;
  span.textContent = text;
  a.appendChild(span);
  return a;
}

var MAX_BLOCK_HITS = 3;
var BLOCK_EXCERPT_WORDS = 24;

// Pagefind lists every element with an id it met (hit.anchors, with the position of the
// first word after it).  A block is a <section id="ID"> whose id the page lists in its
// "blocks" metadata ("ID=NAME" when the page calls it NAME); prose and output may hold
// sections of their own, which end a block.
// A matched word belongs to the last section that starts at or before it: a block's, or
// else the page's own (title, summary, purpose, prose).
function blockHits(hit) {
  var names = [];
  var labels = {};
  ((hit.meta && hit.meta.blocks) || "").split(" ").filter(Boolean).forEach(function (n) {
    var pair = n.split("=");
    try {
      var id = decodeURIComponent(pair[0]);
      labels[id] = pair.length > 1 ? decodeURIComponent(pair[1]) : id;
      names.push(id);
    } catch (e) { /* not a block of this page's making */ }
  });
  var starts = (hit.anchors || []).filter(function (a) { return a.element === "section" && a.id; })
    .sort(function (x, y) { return x.location - y.location; });
  var words = (hit.content || "").split(/[\r\n\s]+/g);
  var before = []; // matches outside every block
  var found = {};
  var order = [];
  (hit.locations || []).forEach(function (at) {
    var owner = null;
    starts.forEach(function (a, i) { if (a.location <= at) owner = i; });
    if (owner === null || names.indexOf(starts[owner].id) === -1) { before.push(at); return; }
    if (!found[owner]) { found[owner] = []; order.push(owner); }
    found[owner].push(at);
  });
  var blocks = order.sort(function (x, y) { return found[y].length - found[x].length || x - y; })
    .slice(0, MAX_BLOCK_HITS)
    .sort(function (x, y) { return x - y; })
    .map(function (i) {
      var end = i + 1 < starts.length ? starts[i + 1].location : words.length;
      var part = excerptWords(words, starts[i].location, end, found[i]);
      part.id = starts[i].id;
      part.label = labels[part.id];
      return part;
    });
  var page = before.length ? excerptWords(words, 0, words.length, before) : null;
  return { page: page, blocks: blocks };
}

// A few words of [start, end) around the first match, the matched ones to be marked.
function excerptWords(words, start, end, matches) {
  var first = Math.max(start, Math.min.apply(null, matches) - 6);
  var last = Math.min(end, first + BLOCK_EXCERPT_WORDS);
  var marked = {};
  matches.forEach(function (at) { marked[at - first] = true; });
  return { words: words.slice(first, last), marked: marked };
}

function appendWords(target, words, marked) {
  words.forEach(function (word, i) {
    if (i) target.appendChild(document.createTextNode(" "));
    if (marked[i]) {
      var mark = document.createElement("mark");
      mark.textContent = word;
      target.appendChild(mark);
    } else {
      target.appendChild(document.createTextNode(word));
    }
  });
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

// ---- "On this page": mark the block in view (aria-current) in the list of blocks

function setUpOnThisPage() {
  var lists = document.querySelectorAll("nav.toc");
  if (!lists.length || !("IntersectionObserver" in window)) return;
  var links = {};
  lists.forEach(function (nav) {
    nav.querySelectorAll('a[href^="#"]').forEach(function (a) {
      var id = decodeURIComponent(a.getAttribute("href").slice(1));
      (links[id] = links[id] || []).push(a);
    });
  });
  var sections = Array.prototype.filter.call(document.querySelectorAll("section.cell[id]"),
    function (s) { return links[s.id]; });
  var inView = new Set();
  var current = null;
  function mark(id) {
    if (id === current) return;
    if (current) links[current].forEach(function (a) { a.removeAttribute("aria-current"); });
    current = id;
    if (!id) return;
    links[id].forEach(function (a) {
      a.setAttribute("aria-current", "true");
      keepInSight(a);
    });
  }
  // A block counts as in view while it crosses the upper part of the window, where the eye reads.
  var observer = new IntersectionObserver(function (changes) {
    changes.forEach(function (c) {
      if (c.isIntersecting) inView.add(c.target); else inView.delete(c.target);
    });
    var first = sections.find(function (s) { return inView.has(s); });
    if (first) mark(first.id);
    else if (sections.length && sections[0].getBoundingClientRect().top > 0) mark(null); // above the first block
  }, { rootMargin: "0px 0px -60% 0px" });
  sections.forEach(function (s) { observer.observe(s); });
}

// Scroll the sticky list itself (never the page) so the marked block stays visible in it.
function keepInSight(link) {
  var box = link.closest(".toc-side");
  if (!box || box.scrollHeight <= box.clientHeight) return;
  var top = link.offsetTop - box.offsetTop;
  if (top < box.scrollTop || top + link.offsetHeight > box.scrollTop + box.clientHeight) {
    box.scrollTop = top - box.clientHeight / 3;
  }
}

// ---- long outputs: the control between head and tail shows or hides the middle lines

function setUpOutputFolds() {
  document.querySelectorAll("pre.output-fold").forEach(function (pre) {
    var button = pre.querySelector(".fold-toggle");
    if (!button) return;
    button.addEventListener("click", function () {
      var open = !pre.classList.contains("is-open");
      pre.classList.toggle("is-open", open);
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? button.dataset.hide : button.dataset.show;
      focusableScrollers();
    });
  });
}
