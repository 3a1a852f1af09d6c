// A display formula wider than the page scrolls sideways (the theme's mjx-container has
// overflow: auto); one that does is made focusable, so that a keyboard can scroll it too
// (WCAG 2.1.1; axe: scrollable-region-focusable).
(function () {
  "use strict";

  function markScrollable() {
    document.querySelectorAll("div.math mjx-container").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) box.setAttribute("tabindex", "0");
      else box.removeAttribute("tabindex");
    });
  }

  var pending = null;
  function later() {
    if (pending === null) {
      pending = window.requestAnimationFrame(function () { pending = null; markScrollable(); });
    }
  }

  // once the page and its fonts are in (a formula's width depends on them), then on resize
  if (document.readyState === "complete") markScrollable();
  else window.addEventListener("load", markScrollable);
  window.addEventListener("resize", later);
})();
