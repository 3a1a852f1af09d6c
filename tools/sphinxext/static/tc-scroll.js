// A block that scrolls sideways on a narrow screen (a display formula wider than the page, a
// long line of code, a wide output or table) takes the keyboard's focus, so that a keyboard
// can scroll it too (WCAG 2.1.1; axe: scrollable-region-focusable). This replaces the theme's
// own pass (coursebook_lean), which measured every block of the page as soon as it loaded and
// so laid out the sections that the page leaves for later (course.css: content-visibility).
//
// Every such block is a tab stop from the start; one that does not scroll leaves the tab
// order (tabindex -1: a block that has the focus keeps it) when it comes near the screen, the
// only time its width is measured, and again after the window is resized.
(function () {
  "use strict";

  var BLOCKS = ["div.math mjx-container", "pre", ".nboutput > .output_area",  // the theme's,
                ".cell_output > .output", ".jp-RenderedHTMLCommon",           // and the maths
                ".pst-scrollable-table-container"].join(", ");

  function measure(block) {
    var scrolls = block.scrollWidth > block.clientWidth + 1 ||
                  block.scrollHeight > block.clientHeight + 1;
    block.tabIndex = scrolls ? 0 : -1;
  }

  function start() {
    var blocks = document.querySelectorAll(BLOCKS);
    var near = new Set();
    blocks.forEach(function (block) { block.tabIndex = 0; });
    if (!("IntersectionObserver" in window)) {
      return;  // every block stays a tab stop
    }
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          near.add(entry.target);
          measure(entry.target);
        } else {
          near.delete(entry.target);
        }
      });
    }, { rootMargin: "100% 0px" });  // a screen above and below
    blocks.forEach(function (block) { observer.observe(block); });

    var pending = null;
    window.addEventListener("resize", function () {
      if (pending !== null) return;
      pending = window.requestAnimationFrame(function () {
        pending = null;
        blocks.forEach(function (block) { if (!near.has(block)) block.tabIndex = 0; });
        near.forEach(measure);
      });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
