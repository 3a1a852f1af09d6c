/* Diagrams of transformer_course modules (transformer_course.diagrams).
 *
 * Python draws the whole diagram: the SVG, the text description (an <ol> with one <li
 * data-i="k"> per block) and the panel under the drawing. This file only shows, in the
 * panel, the details of the block last under the pointer or with the keyboard focus: it
 * copies that block's item of the text description (so that the panel's link to the section
 * can be reached), and marks the block (class tc-d-active; the root's data-shown attribute
 * holds its index). Without this script (an untrusted notebook) the drawing and the text
 * description are still there, and the panel's note says so; the script swaps that note
 * for a hint.
 *
 * This file is inlined in every diagram, so it may run several times on a page: it defines
 * window.TcDiagram once and then mounts the diagram whose script is running (or, where
 * document.currentScript is not available, every diagram not yet mounted). It uses no
 * global id, and no other file or host.
 */
(function () {
  "use strict";
  var VERSION = 1;
  if (!window.TcDiagram || !(window.TcDiagram.version >= VERSION)) {
    window.TcDiagram = create();
  }
  window.TcDiagram.boot(document.currentScript || null);

  function create() {
    function blockOf(node, root) {
      while (node && node !== root) {
        if (node.classList && node.classList.contains("tc-d-block")) return node;
        node = node.parentNode;
      }
      return null;
    }

    function mount(root) {
      if (!root || root.hasAttribute("data-tc-mounted")) return;
      var panel = root.querySelector(".tc-d-panel");
      if (!panel) return;
      root.setAttribute("data-tc-mounted", "");
      var blocks = root.querySelectorAll(".tc-d-block");
      // with this script running, the panel's hint replaces the note for readers without it
      var note = panel.querySelector(".tc-d-nojs"), hint = panel.querySelector(".tc-d-hint");
      if (note) note.parentNode.removeChild(note);
      if (hint) hint.removeAttribute("hidden");

      function show(block) {
        var item = root.querySelector(
          '.tc-d-text li[data-i="' + block.getAttribute("data-i") + '"]');
        if (!item) return;
        for (var k = 0; k < blocks.length; k++) {
          blocks[k].classList.toggle("tc-d-active", blocks[k] === block);
        }
        panel.innerHTML = item.innerHTML;
        root.setAttribute("data-shown", block.getAttribute("data-i"));
      }

      function follow(event) {
        var block = blockOf(event.target, root);
        if (block && block.getAttribute("data-i") !== root.getAttribute("data-shown")) {
          show(block);
        }
      }
      root.addEventListener("mouseover", follow);
      root.addEventListener("focusin", follow);
    }

    var boot = window.TcCommon.booter(".tc-diagram", mount);

    return { version: VERSION, boot: boot, mount: mount };
  }
})();
