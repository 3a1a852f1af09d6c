// Compatibility fixes for widgets on the static pages of the course book.
// 1. The theme's Font Awesome must nest its SVGs instead of replacing the <i> elements,
//    which the widget embedder still holds on to (the Play widget, icons in buttons).
window.FontAwesomeConfig = { autoReplaceSvg: "nest" };

// 2. The widget embedder typesets labels with MathJax 2 (MathJax.Hub.Queue); the site uses
//    MathJax 3. Give MathJax 3 the one MathJax 2 call the embedder makes.
(function () {
  function addHub() {
    var mj = window.MathJax;
    if (mj && !mj.Hub) {
      mj.Hub = {
        Queue: function () {
          if (window.MathJax && window.MathJax.typesetPromise) {
            window.MathJax.typesetPromise().catch(function () {});
          }
        },
      };
    }
  }
  addHub();
  document.addEventListener("DOMContentLoaded", addHub);
  window.addEventListener("load", addHub);
  var tries = 0;
  var timer = setInterval(function () {
    addHub();
    if (++tries > 100) clearInterval(timer);
  }, 50);
})();
