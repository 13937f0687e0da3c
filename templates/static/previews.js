// site_builder: previews of where a citation, a cross-reference or a link to another entry
// leads, shown on hover and on keyboard focus, closed by Escape.  They are read from the
// site's own pages (same origin: the Content-Security-Policy's connect-src 'self'), never
// from elsewhere; without script, or from disk where fetch cannot read pages, the links
// simply lead there.
"use strict";

(function () {
  var ROOT = new URL("..", document.currentScript.src);
  var OPEN_DELAY = 250, CLOSE_DELAY = 200, MAX_TEXT = 700;
  var pages = {}; // URL without fragment -> Promise of its parsed document (or null)
  var box = null, owner = null, openTimer = 0, closeTimer = 0;

  document.addEventListener("DOMContentLoaded", function () {
    var links = document.querySelectorAll(
      "main a.citation-link, main a.xref, main a.term, main .prose a, main .purpose a, " +
      "main .referred-by-list a, main .works-list a, main .glossary a");
    Array.prototype.forEach.call(links, function (link) {
      if (!previewable(link)) return;
      link.addEventListener("mouseenter", function () { schedule(link); });
      link.addEventListener("mouseleave", leave);
      link.addEventListener("focus", function () { show(link); });
      link.addEventListener("blur", function () { if (owner === link) hide(); });
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && box && !box.hidden) { hide(); }
    });
  });

  // A link to this page's own element, or to a page of this site (not a download, not elsewhere).
  function previewable(link) {
    if (link.hasAttribute("download")) return false;
    var url = new URL(link.href, document.baseURI);
    if (url.origin !== location.origin || url.href.indexOf(ROOT.href) !== 0) return false;
    if (samePage(url)) return !!url.hash;
    return /\/(index\.html)?$/.test(url.pathname);
  }

  function samePage(url) {
    return url.pathname === location.pathname && url.search === location.search;
  }

  function schedule(link) {
    clearTimeout(closeTimer);
    clearTimeout(openTimer);
    openTimer = setTimeout(function () { show(link); }, OPEN_DELAY);
  }

  function leave() {
    clearTimeout(openTimer);
    clearTimeout(closeTimer);
    closeTimer = setTimeout(hide, CLOSE_DELAY);
  }

  function ensureBox() {
    if (box) return box;
    box = document.createElement("div");
    box.id = "link-preview";
    box.className = "link-preview";
    box.setAttribute("role", "tooltip");
    box.hidden = true;
    // The reader may move the pointer onto the preview (to read it) without it closing.
    box.addEventListener("mouseenter", function () { clearTimeout(closeTimer); });
    box.addEventListener("mouseleave", leave);
    document.body.appendChild(box);
    return box;
  }

  function show(link) {
    clearTimeout(openTimer);
    clearTimeout(closeTimer);
    var url = new URL(link.href, document.baseURI);
    content(url).then(function (nodes) {
      if (!nodes || !nodes.length) return;
      var el = ensureBox();
      el.textContent = "";
      nodes.forEach(function (n) { el.appendChild(n); });
      if (owner && owner !== link) owner.removeAttribute("aria-describedby");
      owner = link;
      link.setAttribute("aria-describedby", el.id);
      el.hidden = false;
      place(el, link);
    });
  }

  function hide() {
    clearTimeout(openTimer);
    if (box) box.hidden = true;
    if (owner) owner.removeAttribute("aria-describedby");
    owner = null;
  }

  function place(el, link) {
    var r = link.getBoundingClientRect();
    var width = Math.min(448, document.documentElement.clientWidth - 16);
    el.style.width = width + "px";
    var left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 8));
    el.style.left = (left + window.scrollX) + "px";
    el.style.top = (r.bottom + window.scrollY + 6) + "px";
    var below = el.getBoundingClientRect();
    if (below.bottom > window.innerHeight && r.top - below.height - 6 > 0) {
      el.style.top = (r.top + window.scrollY - below.height - 6) + "px";
    }
  }

  // The document a URL names: this one, or another page of the site fetched once.
  function page(url) {
    if (samePage(url)) return Promise.resolve(document);
    var key = url.href.split("#")[0];
    if (!(key in pages)) {
      pages[key] = fetch(key, { credentials: "same-origin" }).then(function (response) {
        if (!response.ok) return null;
        return response.text().then(function (text) {
          return new DOMParser().parseFromString(text, "text/html");
        });
      }).catch(function () { return null; });
    }
    return pages[key];
  }

  function content(url) {
    return page(url).then(function (doc) {
      if (!doc) return null;
      var base = url.href.split("#")[0];
      var id = decodeURIComponent(url.hash.slice(1));
      var target = id ? doc.getElementById(id) : null;
      if (id && !target) return null;
      return (target ? around(target) : summary(doc)).map(function (n) { return clean(n, base); });
    });
  }

  // What shows an element: a figure or equation itself, a section's heading and first paragraph,
  // a definition with its term, a reference entry, else the element (shortened by CSS).
  function around(el) {
    var tag = el.tagName.toLowerCase();
    if (/^h[1-6]$/.test(tag)) return [heading(el.textContent), firstParagraph(el)].filter(Boolean);
    if (tag === "dt") {
      var dd = el.nextElementSibling;
      while (dd && dd.tagName.toLowerCase() === "dt") dd = dd.nextElementSibling;
      return [heading(el.textContent), dd ? dd.cloneNode(true) : null].filter(Boolean);
    }
    if (tag === "li") { // a References entry: its content (a list item alone is no list)
      var div = document.createElement("div");
      Array.prototype.forEach.call(el.childNodes, function (n) { div.appendChild(n.cloneNode(true)); });
      return [div];
    }
    if (tag === "section" || tag === "span" && !el.textContent.trim()) {
      var h = el.querySelector("h1, h2, h3, h4, h5, h6");
      if (h) return [heading(h.textContent), firstParagraph(h)].filter(Boolean);
      var next = el.nextElementSibling;
      if (next && /^h[1-6]$/.test(next.tagName.toLowerCase())) return around(next);
    }
    return [el.cloneNode(true)];
  }

  function firstParagraph(from) {
    for (var n = from.nextElementSibling; n; n = n.nextElementSibling) {
      if (n.tagName.toLowerCase() === "p") return n.cloneNode(true);
      if (/^h[1-6]$/.test(n.tagName.toLowerCase())) break;
    }
    return null;
  }

  function heading(text) {
    var p = document.createElement("p");
    p.className = "link-preview-title";
    p.textContent = text.trim();
    return p;
  }

  // Another entry: its title, its summary and its first figure as a thumbnail.
  function summary(doc) {
    var out = [];
    var h1 = doc.querySelector("main h1");
    if (h1) out.push(heading(h1.textContent));
    var image = doc.querySelector("main figure.artifact-image img");
    if (image) {
      var img = image.cloneNode(false);
      img.className = "link-preview-thumbnail";
      img.removeAttribute("width");
      img.removeAttribute("height");
      img.alt = "";
      out.push(img);
    }
    var text = doc.querySelector("main .docstring-summary, main .purpose p, main .prose p");
    var meta = doc.querySelector('meta[name="description"]');
    var p = document.createElement("p");
    p.textContent = shorten(text ? text.textContent : meta ? meta.getAttribute("content") : "");
    if (p.textContent) out.push(p);
    return out;
  }

  function shorten(text) {
    text = text.replace(/\s+/g, " ").trim();
    return text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) + "\u2026" : text;
  }

  // A copy safe to show here: no ids (they belong to its page), nothing focusable or running,
  // addresses made absolute from the page it came from.
  function clean(node, base) {
    var all = [node].concat(Array.prototype.slice.call(node.querySelectorAll ? node.querySelectorAll("*") : []));
    all.forEach(function (el) {
      if (!el.removeAttribute) return;
      var tag = el.tagName.toLowerCase();
      if (tag === "script" || tag === "style" || tag === "button" || tag === "input") { el.remove(); return; }
      ["id", "aria-describedby", "aria-labelledby", "aria-controls", "for", "loading"].forEach(function (a) { el.removeAttribute(a); });
      if (el.hasAttribute("src")) el.setAttribute("src", new URL(el.getAttribute("src"), base).href);
      if (el.hasAttribute("href")) el.setAttribute("href", new URL(el.getAttribute("href"), base).href);
      if (tag === "a" || el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      if (tag === "details") el.setAttribute("open", "");
    });
    return node;
  }
})();
