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
  var SLIDER_STEPS = 600; // positions of the beta slider; position 0 is beta = 0
  var C = window.TcCommon; // common.js, inlined just before this file
  var numbers = C.numbers, el = C.el, fill = C.fill, blue = C.blue, ink = C.ink;
  var counter = 0; // explorers mounted, for names unique on the page
  if (!window.TcExplorer || !(window.TcExplorer.version >= VERSION)) {
    window.TcExplorer = {
      version: VERSION, boot: C.booter(".tc-explorer", mount), mount: mount, attend: attend
    };
  }
  window.TcExplorer.boot(document.currentScript || null);

  // --- attention ------------------------------------------------------------------------

  // The weights of every query row (see the header): softmax(beta * scores) over the
  // allowed keys, or their one-hot argmax when hard; zeros where no key is allowed.
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

  function matmul(a, b) { // a @ b, skipping the zero weights
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

  // --- drawing helpers ------------------------------------------------------------------

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

  // --- mounting -------------------------------------------------------------------------

  // Mounts the explorer under root, from its payload (a direct child script).
  function mount(root) {
    if (!root || root.hasAttribute("data-tc-mounted")) return;
    var data = null;
    for (var i = 0; i < root.children.length; i++) {
      if (root.children[i].classList.contains("tc-explorer-payload")) data = root.children[i];
    }
    if (!data || !root.querySelector(".tc-x-mount")) return;
    root.setAttribute("data-tc-mounted", "");
    start(root, JSON.parse(data.textContent));
  }

  // Builds the controls and views of one explorer (P: its payload), then draws it. Every
  // function below takes the explorer x that this returns to.
  function start(root, P) {
    var x = newExplorer(root, P);
    var mountPoint = root.querySelector(".tc-x-mount");
    mountPoint.textContent = "";
    mountPoint.appendChild(el("div", { className: "tc-x-heading" }, [
      el("strong", { text: x.S.title }), " ", el("span", { text: x.S.caption })]));
    buildBetaRow(x, mountPoint);
    if (x.kind === "heads") buildHeadsRow(x, mountPoint);
    if (x.kind === "masks") buildMasksRows(x, mountPoint);
    buildViews(x, mountPoint);
    update(x, true);
    return x;
  }

  // One explorer: its payload P, texts S, number format, state st (what the reader chose)
  // and ui (its controls and views, null where its kind has none).
  function newExplorer(root, P) {
    var tokens = P.tokens;
    return {
      root: root, P: P, S: P.strings, kind: P.kind, tokens: tokens, L: tokens.length,
      num: numbers(P.numbers || {}),
      uid: "tc-x-" + (++counter) + "-" + Math.random().toString(36).slice(2, 8),
      st: {
        beta: P.beta, betaAuto: !!P.beta_auto, hard: !!P.hard,
        config: P.config || 0, head: P.head || 0,
        preset: P.mask ? P.mask.preset : "none", pads: P.mask ? P.mask.pads : 0,
        keyOff: tokens.map(function (_, j) {
          return !!(P.mask && P.mask.masked_keys && P.mask.masked_keys.indexOf(j) >= 0);
        })
      },
      ui: {
        reset: null, headSlider: null, headReadout: null, presetRadios: null, padSlider: null,
        padReadout: null, unmask: null, minisTitle: null, minisBox: null
      }
    };
  }

  // --- the state ------------------------------------------------------------------------

  function cfg(x) { return x.P.configs[x.st.config]; } // the number of heads shown
  function padding(x) { return x.kind === "masks" && /padding/.test(x.st.preset); }
  function causal(x) { return x.kind === "masks" && /causal/.test(x.st.preset); }
  function isPad(x, j) { return padding(x) && j >= x.L - x.st.pads; }
  function label(x, j) { return isPad(x, j) ? "[PAD]" : x.tokens[j]; }
  function defaultBeta(x) { return 1 / Math.sqrt(cfg(x).d_head); }

  // mask[i][j]: whether query i may attend to key j (causal, padding, keys switched off).
  function currentMask(x) {
    var mask = [];
    for (var i = 0; i < x.L; i++) {
      var row = [];
      for (var j = 0; j < x.L; j++) {
        row.push(!(causal(x) && j > i) && !isPad(x, j) && !x.st.keyOff[j]);
      }
      mask.push(row);
    }
    return mask;
  }

  // beta slider: position 0 is beta = 0, then a log scale from beta_min to beta_max
  function betaAt(x, pos) {
    var betaMin = x.P.beta_min, betaMax = x.P.beta_max;
    if (pos <= 0) return 0;
    if (pos >= SLIDER_STEPS) return betaMax;
    if (pos === 1) return betaMin;
    var lo = Math.log(betaMin), hi = Math.log(betaMax);
    return Math.exp(lo + (hi - lo) * (pos - 1) / (SLIDER_STEPS - 1));
  }
  function positionOf(x, beta) {
    if (beta <= 0) return 0;
    var lo = Math.log(x.P.beta_min), hi = Math.log(x.P.beta_max);
    var pos = 1 + Math.round((Math.log(beta) - lo) / (hi - lo) * (SLIDER_STEPS - 1));
    return Math.max(1, Math.min(SLIDER_STEPS, pos));
  }

  // --- controls -------------------------------------------------------------------------

  // beta: a slider, a box to type it in, a reset to 1/sqrt(d_head), and hard attention.
  function buildBetaRow(x, mountPoint) {
    var S = x.S, ui = x.ui;
    ui.slider = el("input", {
      type: "range", className: "tc-x-beta-slider", min: 0, max: SLIDER_STEPS, step: 1,
      "aria-label": S.beta_slider, title: S.beta_slider });
    ui.box = el("input", {
      type: "text", className: "tc-x-beta-box", inputmode: "decimal", size: 9,
      spellcheck: "false", autocomplete: "off", "aria-label": S.beta_box, title: S.beta_box });
    ui.reset = x.P.beta_auto_available ? el("button", {
      type: "button", className: "tc-x-beta-reset", text: S.beta_reset, title: S.beta_reset_tip
    }) : null;
    ui.hardBox = el("input", { type: "checkbox", className: "tc-x-hard" });
    var hardLabel = el("label", { className: "tc-x-check" }, [ui.hardBox, " " + S.hard]);
    var betaEnds = el("span", { className: "tc-x-ends" }, [
      el("span", { text: "0" }), el("span", { text: x.num.short(x.P.beta_max) })]);
    mountPoint.appendChild(el("div", { className: "tc-x-row tc-x-beta-row" }, [
      el("span", { className: "tc-x-label", text: S.beta_label }),
      el("span", { className: "tc-x-slider-wrap" }, [ui.slider, betaEnds]),
      ui.box, ui.reset, hardLabel]));
    wireBeta(x);
  }

  function wireBeta(x) {
    var ui = x.ui, st = x.st;
    ui.slider.addEventListener("input", function () {
      st.beta = betaAt(x, Number(ui.slider.value));
      st.betaAuto = false;
      ui.box.classList.remove("tc-x-invalid");
      ui.box.removeAttribute("aria-invalid");
      update(x);
    });
    ui.box.addEventListener("change", function () { commitBox(x); });
    ui.box.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); commitBox(x); }
    });
    if (ui.reset) {
      ui.reset.addEventListener("click", function () {
        st.betaAuto = true;
        st.beta = defaultBeta(x);
        ui.box.classList.remove("tc-x-invalid");
        update(x, true);
      });
    }
    ui.hardBox.addEventListener("change", function () { st.hard = ui.hardBox.checked; update(x); });
  }

  // The beta typed in the box, if it is a number >= 0; else the box is marked invalid.
  function commitBox(x) {
    var box = x.ui.box, value = x.num.parse(box.value);
    if (!isFinite(value) || value < 0) {
      box.classList.add("tc-x-invalid");
      box.setAttribute("aria-invalid", "true");
      box.title = x.S.beta_invalid;
      return;
    }
    box.classList.remove("tc-x-invalid");
    box.removeAttribute("aria-invalid");
    box.title = x.S.beta_box;
    x.st.beta = value;
    x.st.betaAuto = false;
    update(x, true);
  }

  // A group of radio buttons (options: {value, text}) -> {node, inputs}.
  function radios(x, name, options, checked, onChange, cls) {
    var group = el("span", { className: "tc-x-seg " + cls, role: "radiogroup" });
    var inputs = options.map(function (option) {
      var input = el("input", { type: "radio", name: x.uid + "-" + name, value: option.value });
      input.checked = option.value === checked;
      input.addEventListener("change", function () { if (input.checked) onChange(option.value); });
      group.appendChild(el("label", {}, [input, el("span", { text: option.text })]));
      return input;
    });
    return { node: group, inputs: inputs };
  }

  // kind "heads": the number of heads, and the head shown.
  function buildHeadsRow(x, mountPoint) {
    var S = x.S, st = x.st, ui = x.ui;
    var countRadios = radios(x, "h", x.P.configs.map(function (c, k) {
      return { value: String(k), text: String(c.num_heads) };
    }), String(st.config), function (value) {
      st.config = Number(value);
      st.head = Math.min(st.head, cfg(x).num_heads - 1);
      update(x, true);
    }, "tc-x-heads");
    ui.headSlider = el("input", { type: "range", className: "tc-x-head-slider", min: 1, step: 1,
      "aria-label": S.head_label });
    ui.headReadout = el("output", { className: "tc-x-readout tc-x-head-readout" });
    ui.headSlider.addEventListener("input", function () {
      st.head = Number(ui.headSlider.value) - 1;
      update(x);
    });
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.heads_label }), countRadios.node,
      el("span", { className: "tc-x-label", text: S.head_label }), ui.headSlider,
      ui.headReadout]));
  }

  // kind "masks": the mask preset, the number of padding tokens, and "unmask all".
  function buildMasksRows(x, mountPoint) {
    var S = x.S, st = x.st, ui = x.ui;
    ui.presetRadios = radios(x, "mask", x.P.presets.map(function (key) {
      return { value: key, text: S.presets[key] };
    }), st.preset, function (value) { st.preset = value; update(x, true); }, "tc-x-presets");
    ui.padSlider = el("input", { type: "range", className: "tc-x-pads", min: 0, max: x.L,
      step: 1, "aria-label": S.pads_label });
    ui.padReadout = el("output", { className: "tc-x-readout tc-x-pads-readout" });
    ui.padSlider.addEventListener("input", function () {
      st.pads = Number(ui.padSlider.value);
      update(x);
    });
    ui.unmask = el("button", { type: "button", className: "tc-x-unmask", text: S.unmask_all });
    ui.unmask.addEventListener("click", function () {
      st.keyOff = st.keyOff.map(function () { return false; });
      update(x);
    });
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.mask_label }), ui.presetRadios.node]));
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.pads_label }), ui.padSlider, ui.padReadout,
      ui.unmask]));
  }

  // The panels: the weights, the outputs and (kind "heads") every head in miniature.
  function buildViews(x, mountPoint) {
    var ui = x.ui;
    // The title says what the map shows (head, mask, hard or soft with its beta): a screen
    // reader hears it again after each change of a control, then can read the table.
    ui.mapTitle = el("figcaption", { className: "tc-x-title", "aria-live": "polite" });
    ui.mapBox = el("div", { className: "tc-x-map" });
    ui.outTitle = el("figcaption", { className: "tc-x-title" });
    ui.outBox = el("div", { className: "tc-x-out" });
    mountPoint.appendChild(el("div", { className: "tc-x-view" }, [
      el("figure", { className: "tc-x-panel" }, [ui.mapTitle, ui.mapBox]),
      el("figure", { className: "tc-x-panel" }, [ui.outTitle, ui.outBox])]));
    if (x.kind !== "heads") return;
    ui.minisTitle = el("figcaption", { className: "tc-x-title" });
    ui.minisBox = el("div", { className: "tc-x-minis" });
    mountPoint.appendChild(el("figure", { className: "tc-x-panel tc-x-minis-panel" },
      [ui.minisTitle, ui.minisBox]));
  }

  function toggleKey(x, j) { // kind "masks": a click on a key (not a pad) switches it
    if (x.kind !== "masks" || isPad(x, j)) return;
    x.st.keyOff[j] = !x.st.keyOff[j];
    update(x);
  }

  // --- views ----------------------------------------------------------------------------

  // The weights as a table: a row per query, a column per key.
  function heatmap(x, weights, mask) {
    var long = x.tokens.some(function (t) { return t.length > 3; }) || padding(x);
    var head = el("tr", {}, [el("th", { className: "tc-x-corner", text: x.S.queries })]);
    for (var j = 0; j < x.L; j++) {
      head.appendChild(el("th", { scope: "col", className: long ? "tc-x-vertical" : "" },
        [keyHeader(x, j)]));
    }
    var body = el("tbody");
    for (var i = 0; i < x.L; i++) body.appendChild(weightsRow(x, i, weights[i], mask[i]));
    return el("div", { className: "tc-x-axes" }, [
      el("div", { className: "tc-x-axis", text: x.S.keys }),
      el("table", { className: "tc-x-heat" }, [el("thead", {}, [head]), body])]);
  }

  // A key's column header: a button that masks it (kind "masks"), else its text.
  function keyHeader(x, j) {
    var S = x.S, text = label(x, j);
    if (x.kind !== "masks") return el("span", { className: "tc-x-keytext", text: text });
    var button = el("button", {
      type: "button", className: "tc-x-key" + (x.st.keyOff[j] ? " tc-x-off" : ""),
      "data-key": j, "aria-pressed": x.st.keyOff[j] ? "true" : "false",
      title: isPad(x, j) ? S.pad_tip : S.key_tip, disabled: isPad(x, j) }, [text]);
    button.addEventListener("click", toggleKey.bind(null, x, j));
    return button;
  }

  // Query i's row: its weights (2 decimals), masked cells blank, a note if nothing is allowed.
  function weightsRow(x, i, weights, allowed) {
    var tr = el("tr", {}, [el("th", { scope: "row", text: label(x, i) })]);
    var any = false;
    for (var j = 0; j < x.L; j++) {
      var w = weights[j], cell;
      if (allowed[j]) {
        any = true;
        cell = el("td", { style: "background:" + blue(w) + ";color:" + ink(w),
          text: x.num.fixed(w, 2) });
      } else {
        cell = el("td", { className: "tc-x-masked", "aria-label": x.S.masked });
      }
      if (x.kind === "masks" && !isPad(x, j)) {
        cell.classList.add("tc-x-clickable");
        cell.title = x.S.key_tip;
        cell.addEventListener("click", toggleKey.bind(null, x, j));
      }
      tr.appendChild(cell);
    }
    tr.appendChild(el("td", { className: "tc-x-note", text: any ? "" : x.S.no_key }));
    return tr;
  }

  // The outputs as a diverging heatmap, a row per token (values in the titles).
  function valuesMap(x, outputs) {
    var top = 0;
    outputs.forEach(function (row) {
      row.forEach(function (v) { top = Math.max(top, Math.abs(v)); });
    });
    var table = el("table", { className: "tc-x-heat tc-x-values" });
    for (var i = 0; i < outputs.length; i++) {
      var tr = el("tr", {}, [el("th", { scope: "row", text: label(x, i) })]);
      for (var k = 0; k < outputs[i].length; k++) {
        var v = outputs[i][k];
        tr.appendChild(el("td", { style: "background:" + diverging(top ? v / top : 0),
          title: x.num.fixed(v, 3) }));
      }
      table.appendChild(tr);
    }
    return table;
  }

  // 2-D inputs (P.points) and outputs in the plane: an arrow from each input to its output.
  function plane(x, outputs) {
    var pts = x.P.points, size = 260, pad = 14, span = 0;
    pts.forEach(function (p) { span = Math.max(span, Math.abs(p[0]), Math.abs(p[1])); });
    span = (span || 1) * 1.3;
    var at = {
      x: function (v) { return pad + (v + span) / (2 * span) * (size - 2 * pad); },
      y: function (v) { return pad + (span - v) / (2 * span) * (size - 2 * pad); }
    };
    var drawing = svg("svg", { viewBox: "0 0 " + size + " " + (size + 34), width: size,
      height: size + 34, class: "tc-x-plane", role: "img", "aria-label": x.S.plane_title });
    drawing.appendChild(svg("line", { x1: at.x(-span), y1: at.y(0), x2: at.x(span), y2: at.y(0),
      class: "tc-x-axisline" }));
    drawing.appendChild(svg("line", { x1: at.x(0), y1: at.y(-span), x2: at.x(0), y2: at.y(span),
      class: "tc-x-axisline" }));
    pts.forEach(function (p, i) { arrow(drawing, at.x(p[0]), at.y(p[1]), at.x(outputs[i][0]),
      at.y(outputs[i][1])); });
    pts.forEach(function (p) {
      drawing.appendChild(svg("circle", { cx: at.x(p[0]), cy: at.y(p[1]), r: 4,
        class: "tc-x-in" }));
    });
    outputs.forEach(function (o) { drawing.appendChild(cross(at.x(o[0]), at.y(o[1]))); });
    pts.forEach(function (p, i) { // labels last, on top
      drawing.appendChild(svg("text", { x: at.x(p[0]) + 6, y: at.y(p[1]) - 5,
        class: "tc-x-inlabel" }, x.tokens[i]));
    });
    planeLegend(x, drawing, size);
    return drawing;
  }

  // An arrow from (x1, y1) to (x2, y2), left out when shorter than its head.
  function arrow(drawing, x1, y1, x2, y2) {
    var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy);
    if (len <= 6) return;
    drawing.appendChild(svg("line", { x1: x1, y1: y1, x2: x2, y2: y2, class: "tc-x-arrow" }));
    var ux = dx / len, uy = dy / len, bx = x2 - 7 * ux, by = y2 - 7 * uy;
    drawing.appendChild(svg("polygon", { class: "tc-x-arrowhead", points: [
      x2 + "," + y2, (bx - 3 * uy) + "," + (by + 3 * ux),
      (bx + 3 * uy) + "," + (by - 3 * ux)].join(" ") }));
  }

  function cross(x, y) { // an output's mark
    return svg("path", { d: "M" + (x - 4) + "," + (y - 4) + "L" + (x + 4) + "," +
      (y + 4) + "M" + (x - 4) + "," + (y + 4) + "L" + (x + 4) + "," + (y - 4),
      class: "tc-x-cross" });
  }

  function planeLegend(x, drawing, size) { // under the plane: inputs o, outputs x
    drawing.appendChild(svg("circle", { cx: 20, cy: size + 10, r: 4, class: "tc-x-in" }));
    drawing.appendChild(svg("text", { x: 30, y: size + 14, class: "tc-x-legend" },
      x.S.inputs_legend));
    drawing.appendChild(svg("path", { d: "M16," + (size + 22) + "L24," + (size + 30) + "M16," +
      (size + 30) + "L24," + (size + 22), class: "tc-x-cross" }));
    drawing.appendChild(svg("text", { x: 30, y: size + 30, class: "tc-x-legend" },
      x.S.outputs_legend));
  }

  // kind "heads": every head's weights in miniature, each a button that shows it.
  function minis(x, all, shownHead) {
    var S = x.S;
    return all.map(function (weights, k) {
      var grid = el("span", { className: "tc-x-minigrid",
        style: "grid-template-columns:repeat(" + x.L + ",var(--tc-x-mini))" });
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
      button.addEventListener("click", function () { x.st.head = k; update(x); });
      return button;
    });
  }

  // --- one update: state, controls, views, data-state -----------------------------------

  function update(x, syncBox) {
    var r = computeHead(x);
    syncControls(x, r, syncBox);
    drawViews(x, r);
    x.root.setAttribute("data-state", JSON.stringify({
      beta: x.st.beta, hard: x.st.hard, num_heads: r.H, head: x.st.head,
      scores: r.scores, mask: r.mask, weights: r.weights }));
  }

  // The head on show, from the state: its mask, scores, weights and outputs.
  function computeHead(x) {
    var st = x.st, c = cfg(x), H = c.num_heads;
    st.head = Math.max(0, Math.min(st.head, H - 1));
    if (st.betaAuto) st.beta = defaultBeta(x);
    var mask = currentMask(x), scores = c.scores[st.head];
    var weights = attend(scores, mask, st.beta, st.hard);
    return { c: c, H: H, mask: mask, scores: scores, weights: weights,
      outputs: matmul(weights, c.values[st.head]) };
  }

  // The controls show the state; those that would have no effect are disabled.
  function syncControls(x, r, syncBox) {
    var st = x.st, ui = x.ui;
    var spread = r.mask.some(function (row) {
      return row.filter(Boolean).length > 1;
    }); // beta and hard/soft only matter where a row has two allowed keys or more
    ui.slider.disabled = st.hard || !spread;
    ui.box.disabled = st.hard || !spread;
    ui.hardBox.disabled = !spread;
    ui.hardBox.checked = st.hard;
    ui.slider.value = String(positionOf(x, st.beta));
    if (syncBox || document.activeElement !== ui.box) ui.box.value = x.num.short(st.beta);
    if (ui.reset) ui.reset.disabled = st.hard || !spread || st.betaAuto;
    if (ui.headSlider) {
      ui.headSlider.max = String(r.H);
      ui.headSlider.value = String(st.head + 1);
      ui.headSlider.disabled = r.H === 1;
      ui.headReadout.textContent = fill(x.S.head_of, { head: st.head + 1, count: r.H });
    }
    if (ui.presetRadios) {
      ui.presetRadios.inputs.forEach(function (input) {
        input.checked = input.value === st.preset;
      });
      ui.padSlider.value = String(st.pads);
      ui.padSlider.disabled = !padding(x);
      ui.padReadout.textContent = String(st.pads);
      ui.unmask.disabled = !st.keyOff.some(function (off, j) { return off && !isPad(x, j); });
    }
  }

  // The panels redrawn: weights, outputs (plane or heatmap) and the miniatures.
  function drawViews(x, r) {
    var S = x.S, st = x.st, ui = x.ui;
    ui.mapTitle.textContent = mapTitle(x, r);
    ui.mapBox.textContent = "";
    ui.mapBox.appendChild(heatmap(x, r.weights, r.mask));
    ui.outBox.textContent = "";
    if (x.P.points) {
      ui.outTitle.textContent = S.plane_title;
      ui.outBox.appendChild(plane(x, r.outputs));
    } else {
      ui.outTitle.textContent = fill(S.outputs_title, { d: r.c.values[st.head][0].length });
      ui.outBox.appendChild(valuesMap(x, r.outputs));
    }
    if (!ui.minisBox) return;
    ui.minisTitle.textContent = S.all_heads[String(r.H)] || "";
    ui.minisBox.textContent = "";
    minis(x, r.c.scores.map(function (s) { return attend(s, r.mask, st.beta, st.hard); }),
      st.head).forEach(function (node) { ui.minisBox.appendChild(node); });
  }

  // The weights' title: the head or mask shown, then hard, or soft with its beta.
  function mapTitle(x, r) {
    var S = x.S, st = x.st;
    var attention = st.hard ? S.hard_title : fill(S.soft_title, { beta: x.num.short(st.beta) });
    if (x.kind === "heads") {
      return fill(S.head_title, { head: st.head + 1, count: r.H, d_head: r.c.d_head }) +
        " · " + attention;
    }
    if (x.kind === "masks") {
      return fill(padding(x) ? S.mask_title_pads : S.mask_title, {
        preset: S.presets[st.preset], count: st.pads }) + " · " + attention;
    }
    return attention;
  }
})();
