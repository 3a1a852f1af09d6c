// The sidebars' buttons that the reader sees, made to work. pydata-sphinx-theme 0.17 opens
// (on a phone) or collapses (on a wide screen) a sidebar from the first `.primary-toggle` or
// `.secondary-toggle` of the page only (querySelector): its own navbar buttons, which the book
// theme hides. The book theme's buttons in the article header, the visible ones, get no
// listener, so that on a phone the table of contents could not be opened at all
// (pydata-sphinx-theme issue 2451). A click on one of them is passed on to the theme's button
// of the same side.
(function () {
  "use strict";

  ["primary", "secondary"].forEach(function (side) {
    var buttons = document.querySelectorAll("." + side + "-toggle");
    for (var i = 1; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        event.preventDefault();
        buttons[0].click();
      });
    }
  });
})();
