// site_builder: a "Copy" button per code cell.  It copies the code only, never the
// line numbers (they are <span class="linenos"> inside the highlighted code).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  if (!navigator.clipboard) return; // no Clipboard API (e.g. insecure context): no buttons
  document.querySelectorAll(".cell .code").forEach(function (box) {
    var pre = box.querySelector("pre");
    if (!pre) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-button";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy this block's code");
    button.addEventListener("click", function () {
      var copy = pre.cloneNode(true);
      copy.querySelectorAll(".linenos").forEach(function (n) { n.remove(); });
      navigator.clipboard.writeText(copy.textContent).then(
        function () { flash(button, "Copied"); },
        function () { flash(button, "Copy failed"); }
      );
    });
    box.appendChild(button);
  });
});

function flash(button, text) {
  button.textContent = text;
  setTimeout(function () { button.textContent = "Copy"; }, 1500);
}
