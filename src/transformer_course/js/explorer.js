/* Attention explorers of transformer_course, computed in the page.
 *
 * Python (transformer_course.widgets) computes what needs PyTorch: the raw scores q.k of
 * every head and the value vectors. This file computes what the reader changes, in the
 * browser: beta, hard or soft attention, the mask, the number of heads and the head shown.
 *
 *   weights[i] = softmax(beta * scores[i]) over the keys that row i may attend to,
 *                or the one-hot argmax of those scores (lowest index on ties) when hard;
 *                a row with no allowed key is all zeros.
 *   outputs    = weights @ values
 *
 * The softmax subtracts the row's largest allowed score first, so that exp never
 * overflows: any finite beta >= 0 gives finite weights, never NaN.
 *
 * Each explorer is a <div class="tc-explorer" data-kind="..."> holding its data in a
 * <script type="application/json" class="tc-explorer-payload">. After every change the
 * root's data-state attribute holds JSON {beta, hard, num_heads, head, scores, mask,
 * weights} for the head on show (head is 0-based; mask: true = may attend).
 *
 * This file is inlined in every explorer's HTML after common.js (numbers in the reader's
 * format, DOM helpers), so it may run several times on a page:
 * it defines window.TcExplorer once and then mounts the explorer whose script is running
 * (or, where document.currentScript is not available, every explorer not yet mounted).
 * It uses no global id, and no other file or host.
 */
(function () {
  "use strict";
  var VERSION = 1;
  if (!window.TcExplorer || !(window.TcExplorer.version >= VERSION)) {
    window.TcExplorer = create();
  }
  window.TcExplorer.boot(document.currentScript || null);

  function create() {
    var SLIDER_STEPS = 600; // positions of the beta slider; position 0 is beta = 0
    var counter = 0;

    // --- attention --------------------------------------------------------------------

    function attend(scores, mask, beta, hard) {
      var out = [];
      for (var i = 0; i < scores.length; i++) {
        var row = scores[i], allowed = mask[i], n = row.length;
        var w = new Array(n).fill(0), best = -1, j;
        for (j = 0; j < n; j++) {
          if (allowed[j] && (best < 0 || row[j] > row[best])) best = j; // first max wins
        }
        if (best >= 0) {
          if (hard) {
            w[best] = 1;
          } else {
            var top = row[best], sum = 0;
            for (j = 0; j < n; j++) {
              if (allowed[j]) {
                w[j] = Math.exp(beta * (row[j] - top)); // <= 1, and 1 at the max
                sum += w[j];
              }
            }
            for (j = 0; j < n; j++) w[j] /= sum; // sum >= 1
          }
        }
        out.push(w);
      }
      return out;
    }

    function matmul(a, b) {
      var out = [];
      for (var i = 0; i < a.length; i++) {
        var row = new Array(b[0].length).fill(0);
        for (var j = 0; j < b.length; j++) {
          if (a[i][j] === 0) continue;
          for (var k = 0; k < row.length; k++) row[k] += a[i][j] * b[j][k];
        }
        out.push(row);
      }
      return out;
    }

    // The shared helpers (common.js, inlined just before this file).
    var C = window.TcCommon;
    var numbers = C.numbers, el = C.el, fill = C.fill, blue = C.blue, ink = C.ink;

    var SVG = null; // the SVG namespace, read from the HTML parser (no URL in this file)
    function svg(tag, attrs, text) {
      if (!SVG) {
        var probe = document.createElement("div");
        probe.innerHTML = "<svg/>";
        SVG = probe.firstChild.namespaceURI;
      }
      var node = document.createElementNS(SVG, tag);
      Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
      if (text !== undefined) node.textContent = text;
      return node;
    }

    function diverging(t) { // -1 blue, 0 white, +1 red
      t = Math.max(-1, Math.min(1, t));
      var c = t >= 0 ? [202, 0, 32] : [5, 113, 176], f = Math.abs(t);
      return "rgb(" + c.map(function (v) { return Math.round(255 + f * (v - 255)); }).join(",") + ")";
    }

    // --- one explorer --------------------------------------------------------------------------

    function Explorer(root, P) {
      var S = P.strings, kind = P.kind, tokens = P.tokens, L = tokens.length;
      var num = numbers(P.numbers || {});
      var uid = "tc-x-" + (++counter) + "-" + Math.random().toString(36).slice(2, 8);
      var betaMin = P.beta_min, betaMax = P.beta_max;
      var st = {
        beta: P.beta, betaAuto: !!P.beta_auto, hard: !!P.hard,
        config: P.config || 0, head: P.head || 0,
        preset: P.mask ? P.mask.preset : "none", pads: P.mask ? P.mask.pads : 0,
        keyOff: tokens.map(function (_, j) {
          return !!(P.mask && P.mask.masked_keys && P.mask.masked_keys.indexOf(j) >= 0);
        }),
      };

      function cfg() { return P.configs[st.config]; }
      function padding() { return kind === "masks" && /padding/.test(st.preset); }
      function causal() { return kind === "masks" && /causal/.test(st.preset); }
      function isPad(j) { return padding() && j >= L - st.pads; }
      function label(j) { return isPad(j) ? "[PAD]" : tokens[j]; }
      function defaultBeta() { return 1 / Math.sqrt(cfg().d_head); }

      function currentMask() {
        var mask = [];
        for (var i = 0; i < L; i++) {
          var row = [];
          for (var j = 0; j < L; j++) row.push(!(causal() && j > i) && !isPad(j) && !st.keyOff[j]);
          mask.push(row);
        }
        return mask;
      }

      // beta slider: position 0 is beta = 0, then a log scale from beta_min to beta_max
      function betaAt(pos) {
        if (pos <= 0) return 0;
        if (pos >= SLIDER_STEPS) return betaMax;
        if (pos === 1) return betaMin;
        var lo = Math.log(betaMin), hi = Math.log(betaMax);
        return Math.exp(lo + (hi - lo) * (pos - 1) / (SLIDER_STEPS - 1));
      }
      function positionOf(beta) {
        if (beta <= 0) return 0;
        var lo = Math.log(betaMin), hi = Math.log(betaMax);
        var pos = 1 + Math.round((Math.log(beta) - lo) / (hi - lo) * (SLIDER_STEPS - 1));
        return Math.max(1, Math.min(SLIDER_STEPS, pos));
      }

      // --- controls ---
      var mountPoint = root.querySelector(".tc-x-mount");
      mountPoint.textContent = "";

      var title = el("div", { className: "tc-x-heading" }, [
        el("strong", { text: S.title }), " ", el("span", { text: S.caption })]);
      mountPoint.appendChild(title);

      var slider = el("input", {
        type: "range", className: "tc-x-beta-slider", min: 0, max: SLIDER_STEPS, step: 1,
        "aria-label": S.beta_slider, title: S.beta_slider });
      var box = el("input", {
        type: "text", className: "tc-x-beta-box", inputmode: "decimal", size: 9,
        spellcheck: "false", autocomplete: "off", "aria-label": S.beta_box, title: S.beta_box });
      var reset = P.beta_auto_available ? el("button", {
        type: "button", className: "tc-x-beta-reset", text: S.beta_reset, title: S.beta_reset_tip
      }) : null;
      var hardBox = el("input", { type: "checkbox", className: "tc-x-hard" });
      var hardLabel = el("label", { className: "tc-x-check" }, [hardBox, " " + S.hard]);
      var betaEnds = el("span", { className: "tc-x-ends" }, [
        el("span", { text: "0" }), el("span", { text: num.short(betaMax) })]);
      mountPoint.appendChild(el("div", { className: "tc-x-row tc-x-beta-row" }, [
        el("span", { className: "tc-x-label", text: S.beta_label }),
        el("span", { className: "tc-x-slider-wrap" }, [slider, betaEnds]),
        box, reset, hardLabel]));

      slider.addEventListener("input", function () {
        st.beta = betaAt(Number(slider.value));
        st.betaAuto = false;
        box.classList.remove("tc-x-invalid");
        box.removeAttribute("aria-invalid");
        update();
      });
      function commitBox() {
        var value = num.parse(box.value);
        if (!isFinite(value) || value < 0) {
          box.classList.add("tc-x-invalid");
          box.setAttribute("aria-invalid", "true");
          box.title = S.beta_invalid;
          return;
        }
        box.classList.remove("tc-x-invalid");
        box.removeAttribute("aria-invalid");
        box.title = S.beta_box;
        st.beta = value;
        st.betaAuto = false;
        update(true);
      }
      box.addEventListener("change", commitBox);
      box.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); commitBox(); }
      });
      if (reset) {
        reset.addEventListener("click", function () {
          st.betaAuto = true;
          st.beta = defaultBeta();
          box.classList.remove("tc-x-invalid");
          update(true);
        });
      }
      hardBox.addEventListener("change", function () { st.hard = hardBox.checked; update(); });

      function radios(name, options, checked, onChange, cls) {
        var group = el("span", { className: "tc-x-seg " + cls, role: "radiogroup" });
        var inputs = options.map(function (option) {
          var input = el("input", { type: "radio", name: uid + "-" + name, value: option.value });
          input.checked = option.value === checked;
          input.addEventListener("change", function () { if (input.checked) onChange(option.value); });
          group.appendChild(el("label", {}, [input, el("span", { text: option.text })]));
          return input;
        });
        return { node: group, inputs: inputs };
      }

      var headSlider = null, headReadout = null, presetRadios = null, padSlider = null,
        padReadout = null, unmask = null;
      if (kind === "heads") {
        var countRadios = radios("h", P.configs.map(function (c, k) {
          return { value: String(k), text: String(c.num_heads) };
        }), String(st.config), function (value) {
          st.config = Number(value);
          st.head = Math.min(st.head, cfg().num_heads - 1);
          update(true);
        }, "tc-x-heads");
        headSlider = el("input", { type: "range", className: "tc-x-head-slider", min: 1, step: 1,
          "aria-label": S.head_label });
        headReadout = el("output", { className: "tc-x-readout tc-x-head-readout" });
        headSlider.addEventListener("input", function () {
          st.head = Number(headSlider.value) - 1;
          update();
        });
        mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
          el("span", { className: "tc-x-label", text: S.heads_label }), countRadios.node,
          el("span", { className: "tc-x-label", text: S.head_label }), headSlider, headReadout]));
      }
      if (kind === "masks") {
        presetRadios = radios("mask", P.presets.map(function (key) {
          return { value: key, text: S.presets[key] };
        }), st.preset, function (value) { st.preset = value; update(true); }, "tc-x-presets");
        padSlider = el("input", { type: "range", className: "tc-x-pads", min: 0, max: L, step: 1,
          "aria-label": S.pads_label });
        padReadout = el("output", { className: "tc-x-readout tc-x-pads-readout" });
        padSlider.addEventListener("input", function () {
          st.pads = Number(padSlider.value);
          update();
        });
        unmask = el("button", { type: "button", className: "tc-x-unmask", text: S.unmask_all });
        unmask.addEventListener("click", function () {
          st.keyOff = st.keyOff.map(function () { return false; });
          update();
        });
        mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
          el("span", { className: "tc-x-label", text: S.mask_label }), presetRadios.node]));
        mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
          el("span", { className: "tc-x-label", text: S.pads_label }), padSlider, padReadout,
          unmask]));
      }

      // --- views ---
      var mapTitle = el("figcaption", { className: "tc-x-title" });
      var mapBox = el("div", { className: "tc-x-map" });
      var outTitle = el("figcaption", { className: "tc-x-title" });
      var outBox = el("div", { className: "tc-x-out" });
      mountPoint.appendChild(el("div", { className: "tc-x-view" }, [
        el("figure", { className: "tc-x-panel" }, [mapTitle, mapBox]),
        el("figure", { className: "tc-x-panel" }, [outTitle, outBox])]));
      var minisTitle = null, minisBox = null;
      if (kind === "heads") {
        minisTitle = el("figcaption", { className: "tc-x-title" });
        minisBox = el("div", { className: "tc-x-minis" });
        mountPoint.appendChild(el("figure", { className: "tc-x-panel tc-x-minis-panel" },
          [minisTitle, minisBox]));
      }

      function toggleKey(j) {
        if (kind !== "masks" || isPad(j)) return;
        st.keyOff[j] = !st.keyOff[j];
        update();
      }

      function heatmap(weights, mask) {
        var long = tokens.some(function (t) { return t.length > 3; }) || padding();
        var head = el("tr", {}, [el("th", { className: "tc-x-corner", text: S.queries })]);
        for (var j = 0; j < L; j++) {
          var text = label(j);
          var keyNode;
          if (kind === "masks") {
            keyNode = el("button", {
              type: "button", className: "tc-x-key" + (st.keyOff[j] ? " tc-x-off" : ""),
              "data-key": j, "aria-pressed": st.keyOff[j] ? "true" : "false",
              title: isPad(j) ? S.pad_tip : S.key_tip, disabled: isPad(j) }, [text]);
            keyNode.addEventListener("click", toggleKey.bind(null, j));
          } else {
            keyNode = el("span", { className: "tc-x-keytext", text: text });
          }
          head.appendChild(el("th", { scope: "col", className: long ? "tc-x-vertical" : "" },
            [keyNode]));
        }
        var body = el("tbody");
        for (var i = 0; i < L; i++) {
          var tr = el("tr", {}, [el("th", { scope: "row", text: label(i) })]);
          var any = false;
          for (j = 0; j < L; j++) {
            var w = weights[i][j], cell;
            if (mask[i][j]) {
              any = true;
              cell = el("td", { style: "background:" + blue(w) + ";color:" + ink(w),
                text: num.fixed(w, 2) });
            } else {
              cell = el("td", { className: "tc-x-masked", "aria-label": S.masked });
            }
            if (kind === "masks" && !isPad(j)) {
              cell.classList.add("tc-x-clickable");
              cell.title = S.key_tip;
              cell.addEventListener("click", toggleKey.bind(null, j));
            }
            tr.appendChild(cell);
          }
          tr.appendChild(el("td", { className: "tc-x-note", text: any ? "" : S.no_key }));
          body.appendChild(tr);
        }
        return el("div", { className: "tc-x-axes" }, [
          el("div", { className: "tc-x-axis", text: S.keys }),
          el("table", { className: "tc-x-heat" }, [el("thead", {}, [head]), body])]);
      }

      function valuesMap(outputs) {
        var top = 0;
        outputs.forEach(function (row) {
          row.forEach(function (v) { top = Math.max(top, Math.abs(v)); });
        });
        var table = el("table", { className: "tc-x-heat tc-x-values" });
        for (var i = 0; i < outputs.length; i++) {
          var tr = el("tr", {}, [el("th", { scope: "row", text: label(i) })]);
          for (var k = 0; k < outputs[i].length; k++) {
            var v = outputs[i][k];
            tr.appendChild(el("td", { style: "background:" + diverging(top ? v / top : 0),
              title: num.fixed(v, 3) }));
          }
          table.appendChild(tr);
        }
        return table;
      }

      function plane(outputs) {
        var pts = P.points, size = 260, pad = 14, span = 0;
        pts.forEach(function (p) { span = Math.max(span, Math.abs(p[0]), Math.abs(p[1])); });
        span = (span || 1) * 1.3;
        function sx(v) { return pad + (v + span) / (2 * span) * (size - 2 * pad); }
        function sy(v) { return pad + (span - v) / (2 * span) * (size - 2 * pad); }
        var root = svg("svg", { viewBox: "0 0 " + size + " " + (size + 34), width: size,
          height: size + 34, class: "tc-x-plane", role: "img", "aria-label": S.plane_title });
        root.appendChild(svg("line", { x1: sx(-span), y1: sy(0), x2: sx(span), y2: sy(0),
          class: "tc-x-axisline" }));
        root.appendChild(svg("line", { x1: sx(0), y1: sy(-span), x2: sx(0), y2: sy(span),
          class: "tc-x-axisline" }));
        pts.forEach(function (p, i) {
          var o = outputs[i], x1 = sx(p[0]), y1 = sy(p[1]), x2 = sx(o[0]), y2 = sy(o[1]);
          var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy);
          if (len > 6) {
            root.appendChild(svg("line", { x1: x1, y1: y1, x2: x2, y2: y2, class: "tc-x-arrow" }));
            var ux = dx / len, uy = dy / len, bx = x2 - 7 * ux, by = y2 - 7 * uy;
            root.appendChild(svg("polygon", { class: "tc-x-arrowhead", points: [
              x2 + "," + y2, (bx - 3 * uy) + "," + (by + 3 * ux),
              (bx + 3 * uy) + "," + (by - 3 * ux)].join(" ") }));
          }
        });
        pts.forEach(function (p) {
          root.appendChild(svg("circle", { cx: sx(p[0]), cy: sy(p[1]), r: 4, class: "tc-x-in" }));
        });
        outputs.forEach(function (o) {
          var x = sx(o[0]), y = sy(o[1]);
          root.appendChild(svg("path", { d: "M" + (x - 4) + "," + (y - 4) + "L" + (x + 4) + "," +
            (y + 4) + "M" + (x - 4) + "," + (y + 4) + "L" + (x + 4) + "," + (y - 4),
            class: "tc-x-cross" }));
        });
        pts.forEach(function (p, i) { // labels last, on top
          root.appendChild(svg("text", { x: sx(p[0]) + 6, y: sy(p[1]) - 5, class: "tc-x-inlabel" },
            tokens[i]));
        });
        root.appendChild(svg("circle", { cx: 20, cy: size + 10, r: 4, class: "tc-x-in" }));
        root.appendChild(svg("text", { x: 30, y: size + 14, class: "tc-x-legend" }, S.inputs_legend));
        root.appendChild(svg("path", { d: "M16," + (size + 22) + "L24," + (size + 30) + "M16," +
          (size + 30) + "L24," + (size + 22), class: "tc-x-cross" }));
        root.appendChild(svg("text", { x: 30, y: size + 30, class: "tc-x-legend" },
          S.outputs_legend));
        return root;
      }

      function minis(all, shownHead) {
        var nodes = all.map(function (weights, k) {
          var grid = el("span", { className: "tc-x-minigrid",
            style: "grid-template-columns:repeat(" + L + ",var(--tc-x-mini))" });
          weights.forEach(function (row) {
            row.forEach(function (w) {
              grid.appendChild(el("span", { style: "background:" + blue(w) }));
            });
          });
          var button = el("button", {
            type: "button", className: "tc-x-mini" + (k === shownHead ? " tc-x-selected" : ""),
            "data-head": k, "aria-pressed": k === shownHead ? "true" : "false",
            "aria-label": fill(S.head_n, { head: k + 1 }), title: fill(S.head_n, { head: k + 1 }),
            disabled: all.length === 1 }, [grid, el("span", { text: String(k + 1) })]);
          button.addEventListener("click", function () { st.head = k; update(); });
          return button;
        });
        return nodes;
      }

      // --- one update: state, views, controls, data-state ---
      function update(syncBox) {
        var c = cfg(), H = c.num_heads;
        st.head = Math.max(0, Math.min(st.head, H - 1));
        if (st.betaAuto) st.beta = defaultBeta();
        var mask = currentMask();
        var scores = c.scores[st.head];
        var weights = attend(scores, mask, st.beta, st.hard);
        var outputs = matmul(weights, c.values[st.head]);

        // Controls that would have no effect are disabled.
        var spread = mask.some(function (row) {
          return row.filter(Boolean).length > 1;
        }); // beta and hard/soft only matter where a row has two allowed keys or more
        slider.disabled = st.hard || !spread;
        box.disabled = st.hard || !spread;
        hardBox.disabled = !spread;
        hardBox.checked = st.hard;
        slider.value = String(positionOf(st.beta));
        if (syncBox || document.activeElement !== box) box.value = num.short(st.beta);
        if (reset) reset.disabled = st.hard || !spread || st.betaAuto;
        if (headSlider) {
          headSlider.max = String(H);
          headSlider.value = String(st.head + 1);
          headSlider.disabled = H === 1;
          headReadout.textContent = fill(S.head_of, { head: st.head + 1, count: H });
        }
        if (presetRadios) {
          presetRadios.inputs.forEach(function (input) { input.checked = input.value === st.preset; });
          padSlider.value = String(st.pads);
          padSlider.disabled = !padding();
          padReadout.textContent = String(st.pads);
          unmask.disabled = !st.keyOff.some(function (off, j) { return off && !isPad(j); });
        }

        // Views.
        var betaText = num.short(st.beta);
        if (kind === "heads") {
          mapTitle.textContent = fill(S.head_title, { head: st.head + 1, count: H,
            d_head: c.d_head }) + " · " + (st.hard ? S.hard_title : fill(S.soft_title, { beta: betaText }));
        } else if (kind === "masks") {
          mapTitle.textContent = fill(padding() ? S.mask_title_pads : S.mask_title, {
            preset: S.presets[st.preset], count: st.pads }) + " · " +
            (st.hard ? S.hard_title : fill(S.soft_title, { beta: betaText }));
        } else {
          mapTitle.textContent = st.hard ? S.hard_title : fill(S.soft_title, { beta: betaText });
        }
        mapBox.textContent = "";
        mapBox.appendChild(heatmap(weights, mask));
        outBox.textContent = "";
        if (P.points) {
          outTitle.textContent = S.plane_title;
          outBox.appendChild(plane(outputs));
        } else {
          outTitle.textContent = fill(S.outputs_title, { d: c.values[st.head][0].length });
          outBox.appendChild(valuesMap(outputs));
        }
        if (minisBox) {
          minisTitle.textContent = S.all_heads[String(H)] || "";
          minisBox.textContent = "";
          minis(c.scores.map(function (s) { return attend(s, mask, st.beta, st.hard); }), st.head)
            .forEach(function (node) { minisBox.appendChild(node); });
        }

        root.setAttribute("data-state", JSON.stringify({
          beta: st.beta, hard: st.hard, num_heads: H, head: st.head,
          scores: scores, mask: mask, weights: weights }));
      }

      update(true);
    }

    // --- mounting ------------------------------------------------------------------------------

    function mount(root) {
      if (!root || root.hasAttribute("data-tc-mounted")) return;
      var data = null;
      for (var i = 0; i < root.children.length; i++) {
        if (root.children[i].classList.contains("tc-explorer-payload")) data = root.children[i];
      }
      if (!data || !root.querySelector(".tc-x-mount")) return;
      root.setAttribute("data-tc-mounted", "");
      new Explorer(root, JSON.parse(data.textContent));
    }

    var boot = C.booter(".tc-explorer", mount);

    return { version: VERSION, boot: boot, mount: mount, attend: attend };
  }
})();
