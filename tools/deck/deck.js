/* The course's decks: reveal.js set up for a 16:9 lecture, in the deck's language.
 *
 * Keyboard: arrows or space move, S opens the speaker notes, F full screen, Esc the
 * overview. A slide whose content is taller than the slide (an explorer, a quiz) is scaled
 * down to fit, never cut. reveal.js's controls are named in the deck's language. */
(function () {
  "use strict";

  var WIDTH = 1280, HEIGHT = 720;

  function labels() {
    try {
      return JSON.parse(document.documentElement.getAttribute("data-tc-deck-labels")) || {};
    } catch (error) {
      return {};
    }
  }

  function nameControls() {
    var words = labels();
    var pairs = [[".navigate-left, .navigate-up", words.previous],
                 [".navigate-right, .navigate-down", words.next]];
    pairs.forEach(function (pair) {
      if (!pair[1]) return;
      document.querySelectorAll(".reveal .controls " + pair[0]).forEach(function (button) {
        button.setAttribute("aria-label", pair[1]);
      });
    });
  }

  // The largest zoom at which the slide's content fits below its title, without overflowing
  // sideways: up to 1.6 for an explorer, a diagram, a quiz or a bertviz view (they are drawn
  // for a page, smaller than a projected slide), at most 1 for text and figures.
  var ZOOMS = [1.6, 1.45, 1.3, 1.15, 1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.42, 0.35];

  function fits(section, body) {
    var box = body.getBoundingClientRect(), frame = section.getBoundingClientRect();
    if (box.bottom > frame.bottom + 1 || box.right > frame.right + 1) return false;
    var wide = body.querySelectorAll(".tc-explorer, .tc-diagram, pre");
    for (var i = 0; i < wide.length; i++) {
      if (wide[i].scrollWidth > wide[i].clientWidth + 2) return false;
    }
    return true;
  }

  function fit(section) {
    if (!section) return;
    var body = section.querySelector(".deck-fit");
    if (!body) return;
    var grows = !!body.querySelector(".deck-html");
    var zooms = ZOOMS.filter(function (z) { return grows || z <= 1; });
    for (var i = 0; i < zooms.length; i++) {
      body.style.zoom = String(zooms[i]);
      if (fits(section, body)) return;
    }
  }

  function fitAll() {
    document.querySelectorAll(".reveal .slides section").forEach(fit);
  }

  function start() {
    if (!window.Reveal) return;
    var plugins = window.RevealNotes ? [window.RevealNotes] : [];
    window.Reveal.initialize({
      width: WIDTH, height: HEIGHT, margin: 0.04, center: false, hash: true,
      controls: true, progress: true, slideNumber: "c/t", help: false, jumpToSlide: false,
      transition: "none", pdfSeparateFragments: false, pdfMaxPagesPerSlide: 1,
      plugins: plugins
    }).then(function () {
      nameControls();
      fit(window.Reveal.getCurrentSlide());
      document.documentElement.setAttribute("data-tc-deck-ready", "1");
    });
    window.Reveal.on("slidechanged", function (event) {
      nameControls();
      fit(event.currentSlide);
    });
    window.Reveal.on("pdf-ready", function () {
      fitAll();
      document.documentElement.setAttribute("data-tc-deck-pdf", "1");
    });
  }

  start();
})();
