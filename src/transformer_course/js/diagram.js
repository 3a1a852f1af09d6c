/* Diagrams of transformer_course modules (transformer_course.diagrams).
 *
 * Python draws the whole diagram: the SVG, the text description (an <ol> with one <li
 * data-i="k"> per block) and the panel under the drawing. This file only shows, in the
 * panel, the details of the block under the pointer or with the keyboard focus: it copies
 * that block's item of the text description, and marks the block (class tc-d-active; the
 * root's data-shown attribute holds its index). With nothing hovered or focused the panel
 * shows its hint again. Without this script (an untrusted notebook) the drawing and the text
 * description are still there.
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
      var hint = panel.innerHTML, hovered = null, focused = null;
      var blocks = root.querySelectorAll(".tc-d-block");

      function show(block) {
        for (var k = 0; k < blocks.length; k++) {
          blocks[k].classList.toggle("tc-d-active", blocks[k] === block);
        }
        var item = block && root.querySelector(
          '.tc-d-text li[data-i="' + block.getAttribute("data-i") + '"]');
        if (!item) {
          panel.innerHTML = hint;
          root.removeAttribute("data-shown");
          return;
        }
        panel.innerHTML = item.innerHTML;
        root.setAttribute("data-shown", block.getAttribute("data-i"));
      }

      root.addEventListener("mouseover", function (event) {
        var block = blockOf(event.target, root);
        if (block && block !== hovered) {
          hovered = block;
          show(block);
        }
      });
      root.addEventListener("mouseout", function (event) {
        var block = blockOf(event.target, root);
        if (block && blockOf(event.relatedTarget, root) !== block) {
          hovered = null;
          show(focused);
        }
      });
      root.addEventListener("focusin", function (event) {
        var block = blockOf(event.target, root);
        if (block) {
          focused = block;
          show(block);
        }
      });
      root.addEventListener("focusout", function (event) {
        if (blockOf(event.target, root)) {
          focused = null;
          show(hovered);
        }
      });
    }

    function mountAll() {
      var roots = document.querySelectorAll(".tc-diagram:not([data-tc-mounted])");
      for (var i = 0; i < roots.length; i++) mount(roots[i]);
    }

    function boot(script) {
      var root = script && script.closest ? script.closest(".tc-diagram") : null;
      if (root) {
        mount(root);
        return;
      }
      // No current script (some front ends): mount what is there, and look again once the
      // front end has attached the output to the page.
      mountAll();
      [0, 100, 500, 2000].forEach(function (delay) { setTimeout(mountAll, delay); });
    }

    return { version: VERSION, boot: boot, mount: mount, mountAll: mountAll };
  }
})();
