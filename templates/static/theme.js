// site_builder: apply the theme the reader picked (light or dark) before the page is drawn,
// so it never flashes in the other one.  Without a choice the system setting applies (CSS).
"use strict";
(function () {
  // Lets the stylesheet fold long outputs only where the script can unfold them.
  document.documentElement.classList.add("js");
  try {
    var theme = localStorage.getItem("theme");
    if (theme === "light" || theme === "dark") document.documentElement.setAttribute("data-theme", theme);
  } catch (e) { /* storage blocked (privacy settings): follow the system setting */ }
})();
