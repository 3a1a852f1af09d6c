/* The language-model explorer of transformer_course: chapter 10's model, run in the page.
 *
 * Python (transformer_course._lm_explorer) packs a trained LanguageModel into
 * <script type="application/json" class="tc-weights">: config (its keyword arguments),
 * chars (the tokenizer's symbols in id order), tensors (every state_dict entry: dtype,
 * shape, base64 data of little-endian numbers; an int8 matrix also has one float32 scale
 * per row and stands for data * scale[row]). This file runs the model, one position at a
 * time, with a KV cache:
 *
 *   x = embed[id] + position[t]
 *   every layer (pre-norm):  h = LN1(x);  q, k, v = W_q h + b_q, W_k h + b_k, W_v h + b_v
 *                            k and v are kept in the cache, row t
 *                            a_head = softmax(q_head . K_head^T / sqrt(d_head)) over rows 0..t
 *                            x = x + W_o concat(a_head V_head) + b_o
 *                            x = x + W_2 gelu(W_1 LN2(x) + b_1) + b_2
 *   (post-norm: x = LN1(x + attention(x)); x = LN2(x + ff(x)); no final norm)
 *   logits = head . LN_final(x)          head = embed when the embeddings are tied
 *
 * and samples the next character: p = softmax(logits / T) over the characters (special
 * tokens get 0; T = 0 is the argmax, lowest id on ties), keeping the top_k largest logits
 * (ties kept), then the fewest most likely characters whose probabilities reach top_p
 * (ties kept), renormalised. A step takes the next number u of a seeded mulberry32 stream
 * (state += 0x6D2B79F5 mod 2^32, one number per step whatever the settings) and writes the
 * first character, in id order, whose cumulative probability exceeds u.
 *
 * The root <div class="tc-explorer" data-kind="lm"> holds in data-state, after every change,
 * JSON {prompt, text, temperature, top_k, top_p, seed, steps, logits, attention,
 * cache_positions}: logits are the V next-character logits given text, attention[l][h] the
 * attention row of text's last position in layer l + 1, head h + 1. data-busy is set while
 * a line is being written. A hidden switch for tests, data-cache="off" on the root, makes
 * every step recompute the keys and values of all positions instead of reading the cache.
 *
 * Inlined after common.js in every output, it defines window.TcLm once per page and mounts
 * the explorer whose script is running (or every one not yet mounted). No global id, no
 * other file or host.
 */
(function () {
  "use strict";
  var VERSION = 1;
  if (!window.TcLm || !(window.TcLm.version >= VERSION)) {
    window.TcLm = create();
  }
  window.TcLm.boot(document.currentScript || null);

  function create() {
    var C = window.TcCommon;
    var numbers = C.numbers, el = C.el, fill = C.fill, blue = C.blue;
    var SHOWN = 10; // bars of the next-character distribution
    var ATTENDED = 40; // the last positions drawn in the attention rows

    // --- the weights ----------------------------------------------------------------------

    function bytesOf(text) {
      var bin = atob(text), out = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    }

    function half(bits) { // an IEEE 754 half-precision number
      var sign = bits & 0x8000 ? -1 : 1, exp = (bits >> 10) & 0x1f, frac = bits & 0x3ff;
      if (exp === 0) return sign * frac * Math.pow(2, -24);
      if (exp === 31) return frac ? NaN : sign * Infinity;
      return sign * (1 + frac / 1024) * Math.pow(2, exp - 15);
    }

    function decode(entry) { // -> Float32Array, row-major
      var n = entry.shape.reduce(function (a, b) { return a * b; }, 1);
      var out = new Float32Array(n), view = new DataView(bytesOf(entry.data).buffer), i;
      if (entry.dtype === "int8") {
        var scales = new DataView(bytesOf(entry.scale).buffer);
        var cols = entry.shape.length > 1 ? entry.shape[1] : n;
        for (i = 0; i < n; i++) {
          out[i] = view.getInt8(i) * scales.getFloat32(4 * Math.floor(i / cols), true);
        }
      } else if (entry.dtype === "float16") {
        for (i = 0; i < n; i++) out[i] = half(view.getUint16(2 * i, true));
      } else if (entry.dtype === "float32") {
        for (i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
      } else {
        throw new Error("tc-weights: unknown dtype " + entry.dtype);
      }
      return out;
    }

    function Model(W) {
      var cfg = W.config, T = W.tensors;
      function t(key) {
        if (!T[key]) throw new Error("tc-weights: no tensor " + key);
        return decode(T[key]);
      }
      function maybe(key) { return T[key] ? decode(T[key]) : null; }
      var m = {
        d: cfg.d_model, H: cfg.num_heads, dh: cfg.d_model / cfg.num_heads, V: cfg.vocab_size,
        dff: cfg.d_ff, maxLen: cfg.max_len, normFirst: cfg.norm_first !== false,
        eps: W.layer_norm_eps || 1e-5, layers: []
      };
      m.embed = t("embed.weight");
      m.position = t("position.weight");
      m.head = cfg.tie_embeddings === false ? t("head.weight") : m.embed;
      for (var l = 0; l < cfg.num_layers; l++) {
        var p = "blocks.layers." + l + ".";
        m.layers.push({
          Wq: t(p + "self_attn.W_q.weight"), bq: maybe(p + "self_attn.W_q.bias"),
          Wk: t(p + "self_attn.W_k.weight"), bk: maybe(p + "self_attn.W_k.bias"),
          Wv: t(p + "self_attn.W_v.weight"), bv: maybe(p + "self_attn.W_v.bias"),
          Wo: t(p + "self_attn.W_o.weight"), bo: maybe(p + "self_attn.W_o.bias"),
          W1: t(p + "ff.linear1.weight"), b1: maybe(p + "ff.linear1.bias"),
          W2: t(p + "ff.linear2.weight"), b2: maybe(p + "ff.linear2.bias"),
          n1w: t(p + "norm1.weight"), n1b: maybe(p + "norm1.bias"),
          n2w: t(p + "norm2.weight"), n2b: maybe(p + "norm2.bias")
        });
      }
      m.final = T["blocks.norm.weight"] ?
        { w: t("blocks.norm.weight"), b: maybe("blocks.norm.bias") } : null;
      return m;
    }

    // --- the forward pass, one position ----------------------------------------------------

    function Cache(m) { // keys and values of every layer, one row of d_model per position
      this.length = 0;
      this.K = [];
      this.V = [];
      for (var l = 0; l < m.layers.length; l++) {
        this.K.push(new Float32Array(m.maxLen * m.d)); // float32, as PyTorch keeps them
        this.V.push(new Float32Array(m.maxLen * m.d));
      }
    }

    function linear(W, b, x, out, rows, cols) { // out = W x + b, W: (rows, cols)
      for (var i = 0; i < rows; i++) {
        var s = b ? b[i] : 0, off = i * cols;
        for (var j = 0; j < cols; j++) s += W[off + j] * x[j];
        out[i] = s;
      }
    }

    function layerNorm(x, w, b, eps, out) {
      var n = x.length, mean = 0, v = 0, i;
      for (i = 0; i < n; i++) mean += x[i];
      mean /= n;
      for (i = 0; i < n; i++) v += (x[i] - mean) * (x[i] - mean);
      var inv = 1 / Math.sqrt(v / n + eps);
      for (i = 0; i < n; i++) out[i] = (x[i] - mean) * inv * w[i] + (b ? b[i] : 0);
    }

    function erf(x) { // Numerical Recipes' erfc, fractional error below 1.2e-7
      var z = Math.abs(x), t = 1 / (1 + 0.5 * z);
      var r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 +
        t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 +
        t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
      return x >= 0 ? 1 - r : r - 1;
    }

    function gelu(x) { return 0.5 * x * (1 + erf(x / Math.SQRT2)); } // F.gelu, exact form

    function feedForward(m, L, x, hidden, out) {
      linear(L.W1, L.b1, x, hidden, m.dff, m.d);
      for (var i = 0; i < m.dff; i++) hidden[i] = gelu(hidden[i]);
      linear(L.W2, L.b2, hidden, out, m.d, m.dff);
    }

    // The model at position pos for token id: its keys and values go into row pos of the
    // cache, whose rows 0..pos-1 must hold the earlier positions'. Returns the next-token
    // logits and, if want, every layer's and head's attention row (length pos + 1).
    function forward(m, cache, id, pos, want) {
      var d = m.d, dh = m.dh, n = pos + 1, i, j, l, hd;
      var x = new Float64Array(d), h = new Float64Array(d), q = new Float64Array(d);
      var k = new Float64Array(d), v = new Float64Array(d), ctx = new Float64Array(d);
      var a = new Float64Array(d), f = new Float64Array(d), hidden = new Float64Array(m.dff);
      var w = new Float64Array(n), scale = 1 / Math.sqrt(dh), attention = want ? [] : null;
      for (i = 0; i < d; i++) x[i] = m.embed[id * d + i] + m.position[pos * d + i];
      for (l = 0; l < m.layers.length; l++) {
        var L = m.layers[l], K = cache.K[l], V = cache.V[l], rows = want ? [] : null;
        if (m.normFirst) layerNorm(x, L.n1w, L.n1b, m.eps, h); else h.set(x);
        linear(L.Wq, L.bq, h, q, d, d);
        linear(L.Wk, L.bk, h, k, d, d);
        linear(L.Wv, L.bv, h, v, d, d);
        K.set(k, pos * d);
        V.set(v, pos * d);
        for (hd = 0; hd < m.H; hd++) {
          var off = hd * dh, top = -Infinity, sum = 0;
          for (j = 0; j < n; j++) {
            var s = 0, row = j * d + off;
            for (i = 0; i < dh; i++) s += q[off + i] * scale * K[row + i];
            w[j] = s;
            if (s > top) top = s;
          }
          for (j = 0; j < n; j++) { w[j] = Math.exp(w[j] - top); sum += w[j]; }
          for (i = 0; i < dh; i++) ctx[off + i] = 0;
          for (j = 0; j < n; j++) {
            w[j] /= sum;
            for (i = 0; i < dh; i++) ctx[off + i] += w[j] * V[j * d + off + i];
          }
          if (want) rows.push(Array.prototype.slice.call(w));
        }
        if (want) attention.push(rows);
        linear(L.Wo, L.bo, ctx, a, d, d);
        if (m.normFirst) {
          for (i = 0; i < d; i++) x[i] += a[i];
          layerNorm(x, L.n2w, L.n2b, m.eps, h);
          feedForward(m, L, h, hidden, f);
          for (i = 0; i < d; i++) x[i] += f[i];
        } else {
          for (i = 0; i < d; i++) h[i] = x[i] + a[i];
          layerNorm(h, L.n1w, L.n1b, m.eps, x);
          feedForward(m, L, x, hidden, f);
          for (i = 0; i < d; i++) h[i] = x[i] + f[i];
          layerNorm(h, L.n2w, L.n2b, m.eps, x);
        }
      }
      if (m.final) {
        layerNorm(x, m.final.w, m.final.b, m.eps, h);
        x = h;
      }
      var logits = new Float64Array(m.V);
      for (var t = 0; t < m.V; t++) {
        var z = 0;
        for (i = 0; i < d; i++) z += m.head[t * d + i] * x[i];
        logits[t] = z;
      }
      return { logits: logits, attention: attention };
    }

    // --- sampling ------------------------------------------------------------------------------

    // The distribution a step draws from. allowed: the ids that may be written, in id
    // order. Returns probs (length V, 0 outside the kept set), kept, and which ids top-k
    // and top-p cut.
    function distribution(logits, allowed, T, topK, topP) {
      var V = logits.length, probs = new Float64Array(V), cutK = {}, cutP = {};
      var kept = allowed.slice(), i, id;
      if (topK !== null && topK < kept.length) {
        var kth = kept.map(function (j) { return logits[j]; })
          .sort(function (a, b) { return b - a; })[topK - 1];
        kept = kept.filter(function (j) {
          if (logits[j] >= kth) return true; // ties with the k-th are kept
          cutK[j] = true;
          return false;
        });
      }
      if (T === 0) { // the argmax (lowest id on ties); top-k and top-p keep it anyway
        var best = kept[0];
        for (i = 1; i < kept.length; i++) if (logits[kept[i]] > logits[best]) best = kept[i];
        probs[best] = 1;
        return { probs: probs, kept: 1, cutK: cutK, cutP: cutP };
      }
      var top = -Infinity, sum = 0;
      for (i = 0; i < kept.length; i++) top = Math.max(top, logits[kept[i]]);
      for (i = 0; i < kept.length; i++) {
        id = kept[i];
        probs[id] = Math.exp((logits[id] - top) / T); // <= 1, and 1 at the largest
        sum += probs[id];
      }
      for (i = 0; i < kept.length; i++) probs[kept[i]] /= sum;
      if (topP < 1) {
        var order = kept.slice().sort(function (a, b) { return probs[b] - probs[a] || a - b; });
        var before = 0, last = 0;
        for (i = 0; i < order.length && before < topP; i++) { // mass of the likelier ones < p
          last = probs[order[i]];
          before += last;
        }
        sum = 0;
        kept = kept.filter(function (j) {
          if (probs[j] >= last) { sum += probs[j]; return true; } // ties with the last kept
          cutP[j] = true;
          probs[j] = 0;
          return false;
        });
        for (i = 0; i < kept.length; i++) probs[kept[i]] /= sum;
      }
      var count = 0;
      for (i = 0; i < kept.length; i++) if (probs[kept[i]] > 0) count++;
      return { probs: probs, kept: count, cutK: cutK, cutP: cutP };
    }

    function draw(probs, u) { // the first id whose cumulative probability exceeds u
      var total = 0, last = -1;
      for (var i = 0; i < probs.length; i++) {
        if (probs[i] > 0) {
          total += probs[i];
          last = i;
          if (total > u) return i;
        }
      }
      return last; // rounding left the total a hair below u
    }

    function mulberry(state) { // -> [u in [0, 1), the next state]
      var a = (state + 0x6D2B79F5) | 0;
      var t = Math.imul(a ^ (a >>> 15), a | 1);
      t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
      return [((t ^ (t >>> 14)) >>> 0) / 4294967296, a];
    }

    // --- one explorer ----------------------------------------------------------------------------

    function Explorer(root, W, P) {
      var S = P.strings, num = numbers(P.numbers || {});
      var m = Model(W), chars = W.chars, V = m.V, maxLen = m.maxLen;
      var stoi = {}, specialIds = {}, allowed = [];
      Object.keys(W.specials || {}).forEach(function (name) { specialIds[W.specials[name]] = name; });
      chars.forEach(function (c, i) {
        if (!(i in specialIds)) { stoi[c] = i; allowed.push(i); }
      });
      var unkId = W.unk_id, cache = new Cache(m), scratch = new Cache(m);
      var st = {
        prompt: P.prompt, chars: [], ids: [], steps: 0, T: P.temperature, topK: P.top_k,
        topP: P.top_p, seed: P.seed, rng: P.seed | 0, logits: null, attention: null,
        dist: null, nextId: null, nextU: 0, positions: 0, unknown: [], cut: false,
        empty: false, run: 0, busy: false
      };

      function shown(c) { return c === " " ? "\u2423" : c === "\n" ? "\u21b5" : c; }
      function named(c) { return c === " " ? S.space : c === "\n" ? S.line_break : c; }
      function atLimit() { return st.ids.length >= maxLen; }
      function cacheOn() { return root.getAttribute("data-cache") !== "off"; }

      // --- the model on the text ---
      function compute() {
        var n = st.ids.length, r = null, pos;
        if (cacheOn()) {
          cache.length = Math.min(cache.length, n - 1); // the last position gives the rows
          for (pos = cache.length; pos < n; pos++) {
            r = forward(m, cache, st.ids[pos], pos, pos === n - 1);
          }
          cache.length = n;
          st.positions = n;
        } else { // the hidden switch: recompute every position, nothing kept
          for (pos = 0; pos < n; pos++) r = forward(m, scratch, st.ids[pos], pos, pos === n - 1);
          st.positions = 0;
        }
        st.logits = r.logits;
        st.attention = r.attention;
        reshape();
      }

      function reshape() { // T, top-k or top-p changed: the same logits, a new distribution
        st.dist = distribution(st.logits, allowed, st.T, st.topK, st.topP);
        st.nextU = mulberry(st.rng)[0];
        st.nextId = atLimit() ? null : draw(st.dist.probs, st.nextU);
      }

      function startOver(text) {
        st.run++; // stops a line being written
        st.busy = false;
        root.removeAttribute("data-busy");
        st.prompt = text;
        var cs = Array.from(text);
        st.cut = cs.length > maxLen;
        if (st.cut) cs = cs.slice(0, maxLen);
        st.empty = cs.length === 0;
        if (st.empty) cs = ["\n"];
        st.chars = cs;
        st.unknown = [];
        st.ids = cs.map(function (c) {
          if (Object.prototype.hasOwnProperty.call(stoi, c)) return stoi[c];
          if (st.unknown.indexOf(c) < 0) st.unknown.push(c);
          return unkId;
        });
        st.steps = 0;
        st.rng = st.seed | 0;
        cache.length = 0;
        compute();
      }

      function stepOnce() { // -> the character written, or null at the limit
        if (atLimit()) return null;
        var drawn = mulberry(st.rng);
        var id = draw(st.dist.probs, drawn[0]);
        st.rng = drawn[1];
        st.ids.push(id);
        st.chars.push(chars[id]);
        st.steps++;
        compute();
        return chars[id];
      }

      // --- controls ---
      var mountPoint = root.querySelector(".tc-x-mount");
      mountPoint.textContent = "";
      mountPoint.appendChild(el("div", { className: "tc-x-heading" }, [
        el("strong", { text: S.title }), " ", el("span", { text: S.caption })]));

      var promptBox = el("input", {
        type: "text", className: "tc-prompt", maxlength: maxLen, size: 42, spellcheck: "false",
        autocomplete: "off", "aria-label": S.prompt_label, title: S.prompt_tip });
      promptBox.value = P.prompt;
      var restart = el("button", { type: "button", className: "tc-restart", text: S.restart,
        title: S.restart_tip });
      mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
        el("span", { className: "tc-x-label", text: S.prompt_label }), promptBox, restart]));

      var temperature = el("input", {
        type: "range", className: "tc-temperature", min: 0, max: P.temperature_max,
        step: 0.01, "aria-label": S.temperature_label, title: S.temperature_tip });
      temperature.value = String(P.temperature);
      var tReadout = el("output", { className: "tc-x-readout tc-lm-t-readout" });
      var topK = el("input", {
        type: "number", className: "tc-top-k", min: 1, step: 1, inputmode: "numeric",
        placeholder: S.top_k_placeholder, "aria-label": S.top_k_label, title: S.top_k_tip });
      topK.value = P.top_k === null ? "" : String(P.top_k);
      var topP = el("input", {
        type: "range", className: "tc-top-p", min: 0.01, max: 1, step: 0.01,
        "aria-label": S.top_p_label, title: S.top_p_tip });
      topP.value = String(P.top_p);
      var pReadout = el("output", { className: "tc-x-readout tc-lm-p-readout" });
      var seedBox = el("input", {
        type: "number", className: "tc-seed", min: 0, max: P.seed_max, step: 1,
        inputmode: "numeric", "aria-label": S.seed_label, title: S.seed_tip });
      seedBox.value = String(P.seed);
      mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
        el("span", { className: "tc-x-label", text: S.temperature_label }), temperature, tReadout]));
      mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
        el("span", { className: "tc-x-label", text: S.top_k_label }), topK,
        el("span", { className: "tc-x-label", text: S.top_p_label }), topP, pReadout,
        el("span", { className: "tc-x-label", text: S.seed_label }), seedBox]));

      var stepButton = el("button", { type: "button", className: "tc-step", text: S.step,
        title: S.step_tip });
      var writeButton = el("button", { type: "button", className: "tc-write", text: S.write,
        title: fill(S.write_tip, { count: P.write_length }) });
      var writtenReadout = el("output", { className: "tc-x-readout tc-lm-steps" });
      mountPoint.appendChild(el("div", { className: "tc-x-row" }, [stepButton, writeButton,
        writtenReadout]));

      var notes = el("div", { className: "tc-lm-notes", "aria-live": "polite" });
      var textBox = el("div", { className: "tc-lm-text", "aria-label": S.text_title,
        title: S.text_title });
      mountPoint.appendChild(notes);
      mountPoint.appendChild(textBox);

      var barsTitle = el("figcaption", { className: "tc-x-title" });
      var bars = el("div", { className: "tc-lm-bars" });
      var barsNote = el("p", { className: "tc-lm-draw" });
      var legend = el("div", { className: "tc-lm-legend" }, [
        el("span", { className: "tc-lm-key tc-lm-key-model" }), " " + S.bars_model + " ",
        el("span", { className: "tc-lm-key tc-lm-key-sample" }), " " + S.bars_sample]);
      var specialNames = Object.keys(W.specials || {});
      var specialsNote = specialNames.length ? el("p", { className: "tc-lm-specials",
        text: fill(S.specials, { names: specialNames.join(", ") }) }) : null;
      var attTitle = el("figcaption", { className: "tc-x-title" });
      var attBox = el("div", { className: "tc-lm-attention" });
      var cacheTitle = el("figcaption", { className: "tc-x-title", text: S.cache_title });
      var meter = el("span", { className: "tc-lm-fill" });
      var cacheText = el("p", { className: "tc-lm-cache-text" });
      var cacheBox = el("div", { className: "tc-lm-cache" }, [
        el("div", { className: "tc-lm-meter" }, [meter]), cacheText]);
      mountPoint.appendChild(el("div", { className: "tc-x-view" }, [
        el("figure", { className: "tc-x-panel tc-lm-dist" }, [barsTitle, legend, bars, barsNote,
          specialsNote]),
        el("figure", { className: "tc-x-panel tc-lm-att" }, [attTitle, attBox]),
        el("figure", { className: "tc-x-panel tc-lm-kv" }, [cacheTitle, cacheBox])]));

      function invalid(box, bad, tip) {
        if (bad) {
          box.classList.add("tc-x-invalid");
          box.setAttribute("aria-invalid", "true");
          box.title = tip;
        } else {
          box.classList.remove("tc-x-invalid");
          box.removeAttribute("aria-invalid");
        }
      }

      promptBox.addEventListener("keydown", function (event) {
        if (event.key === "Enter") {
          event.preventDefault();
          startOver(promptBox.value);
          render();
        }
      });
      restart.addEventListener("click", function () { startOver(promptBox.value); render(); });
      temperature.addEventListener("input", function () {
        var value = Number(temperature.value);
        if (!isFinite(value) || value < 0) return;
        st.T = value;
        reshape();
        render();
      });
      topK.addEventListener("input", function () {
        var text = topK.value.trim();
        if (text === "" && !(topK.validity && topK.validity.badInput)) {
          st.topK = null;
        } else {
          var value = Number(text);
          if (!/^\d+$/.test(text) || value < 1) {
            invalid(topK, true, S.top_k_invalid);
            return;
          }
          st.topK = value;
        }
        invalid(topK, false);
        topK.title = S.top_k_tip;
        reshape();
        render();
      });
      topP.addEventListener("input", function () {
        var value = Number(topP.value);
        if (!(value > 0 && value <= 1)) return;
        st.topP = value;
        reshape();
        render();
      });
      function commitSeed(always) {
        var text = seedBox.value.trim(), value = Number(text);
        if (!/^\d+$/.test(text) || value > P.seed_max) {
          invalid(seedBox, true, fill(S.seed_invalid, { max: num.fixed(P.seed_max, 0) }));
          return;
        }
        invalid(seedBox, false);
        seedBox.title = S.seed_tip;
        if (!always && value === st.seed) return;
        st.seed = value;
        startOver(st.prompt);
        render();
      }
      seedBox.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); commitSeed(true); }
      });
      seedBox.addEventListener("change", function () { commitSeed(false); });
      stepButton.addEventListener("click", function () {
        if (st.busy) return;
        stepOnce();
        render();
      });
      writeButton.addEventListener("click", function () {
        if (st.busy) return;
        var run = ++st.run, count = 0;
        st.busy = true;
        root.setAttribute("data-busy", "");
        render();
        var drawn = Date.now();
        function next() {
          if (st.run !== run) return; // started over meanwhile
          var c = stepOnce();
          count++;
          if (c === null || c === "\n" || count >= P.write_length || atLimit()) {
            st.busy = false;
            root.removeAttribute("data-busy");
            render();
            return;
          }
          // The text at every character; the panels about every 100 ms, which is all an
          // eye can follow (redrawing them costs more than the model's step).
          var full = Date.now() - drawn >= 100;
          if (full) drawn = Date.now();
          render(!full);
          setTimeout(next, 0); // let the page draw each character
        }
        setTimeout(next, 0);
      });

      // --- views ---
      function renderText() {
        textBox.textContent = "";
        var first = st.chars.length - st.steps; // the prompt's characters come first
        var unknown = {};
        st.unknown.forEach(function (c) { unknown[c] = true; });
        var prompt = el("span", { className: "tc-lm-prompt" });
        for (var i = 0; i < first; i++) {
          var c = st.chars[i];
          if (unknown[c]) {
            prompt.appendChild(el("span", { className: "tc-lm-unknown", title: "<unk>", text: c }));
          } else {
            prompt.appendChild(document.createTextNode(c));
          }
        }
        textBox.appendChild(prompt);
        if (st.steps > 0) {
          textBox.appendChild(el("span", { className: "tc-lm-written",
            text: st.chars.slice(first, st.chars.length - 1).join("") }));
          textBox.appendChild(el("span", { className: "tc-lm-written tc-lm-last",
            text: st.chars[st.chars.length - 1] }));
        }
      }

      function renderNotes() {
        notes.textContent = "";
        function note(kind, text) {
          notes.appendChild(el("p", { className: "tc-lm-note", "data-note": kind, text: text }));
        }
        if (st.empty) note("empty", S.empty);
        if (st.cut) note("prompt_cut", fill(S.prompt_cut, { max_len: maxLen }));
        if (st.unknown.length) {
          note("unknown", fill(S.unknown, { chars: st.unknown.map(function (c) {
            return fill(S.quoted, { char: c }); }).join(", ") }));
        }
        if (atLimit()) note("limit", fill(S.limit, { max_len: maxLen }));
      }

      function renderBars() {
        var probs = st.dist.probs, model = distribution(st.logits, allowed, 1, null, 1).probs;
        var order = allowed.slice().sort(function (a, b) {
          return st.logits[b] - st.logits[a] || a - b; });
        var rows = order.slice(0, SHOWN);
        if (st.nextId !== null && rows.indexOf(st.nextId) < 0) rows.push(st.nextId);
        var context = st.chars.slice(-12).map(shown).join("");
        if (st.chars.length > 12) context = "\u2026" + context;
        barsTitle.textContent = fill(S.bars_title, { context: context });
        bars.textContent = "";
        var scale = 0;
        rows.forEach(function (id) { scale = Math.max(scale, model[id], probs[id]); });
        scale = scale || 1; // the longest bar fills its track
        rows.forEach(function (id) {
          var rank = order.indexOf(id) + 1, isNext = id === st.nextId;
          var cut = st.dist.cutK[id] ? S.cut_top_k : st.dist.cutP[id] ? S.cut_top_p : "";
          var noteText = isNext ? "\u2605 " + S.bars_next : cut;
          if (rank > SHOWN) noteText = fill(S.rank, { rank: rank }) + " \u00b7 " + noteText;
          bars.appendChild(el("div", {
            className: "tc-lm-bar" + (isNext ? " tc-lm-next" : "") + (cut ? " tc-lm-cut" : ""),
            "data-id": id, "data-p": probs[id], "data-model": model[id] }, [
            el("span", { className: "tc-lm-char", title: named(chars[id]), text: shown(chars[id]) }),
            el("span", { className: "tc-lm-track" }, [
              el("span", { className: "tc-lm-model", style: "width:" + (100 * model[id] / scale).toFixed(2) + "%" }),
              el("span", { className: "tc-lm-sample", style: "width:" + (100 * probs[id] / scale).toFixed(2) + "%" })]),
            el("span", { className: "tc-lm-p", text: num.fixed(probs[id], 3) }),
            el("span", { className: "tc-lm-why", text: noteText })]));
        });
        var kept = fill(S.bars_kept, { kept: st.dist.kept, count: allowed.length });
        var how = st.T === 0 ? S.bars_greedy : fill(S.bars_draw, { u: num.fixed(st.nextU, 3) });
        barsNote.textContent = atLimit() ? kept : kept + ". " + how;
      }

      function renderAttention() {
        var n = st.chars.length, start = Math.max(0, n - ATTENDED);
        attTitle.textContent = fill(S.attention_title, { char: shown(st.chars[n - 1]) });
        var head = el("tr", {}, [el("th")]);
        if (start > 0) head.appendChild(el("th", { className: "tc-lm-earlier", text: "\u2026" }));
        for (var j = start; j < n; j++) {
          head.appendChild(el("th", { scope: "col", title: named(st.chars[j]),
            text: shown(st.chars[j]) }));
        }
        var body = el("tbody");
        st.attention.forEach(function (layer, l) {
          layer.forEach(function (row, h) {
            var label = fill(S.layer_head, { layer: l + 1, head: h + 1 });
            var tr = el("tr", {}, [el("th", { scope: "row", text: label })]);
            var top = 0, earlier = 0, k;
            for (k = 0; k < n; k++) {
              if (k < start) earlier += row[k]; else top = Math.max(top, row[k]);
            }
            top = top || 1; // each row shaded by its largest weight among the cells shown
            if (start > 0) {
              tr.appendChild(el("td", { style: "background:" + blue(Math.min(1, earlier / top)),
                title: fill(S.earlier, { count: start, weight: num.fixed(earlier, 3) }) }));
            }
            for (k = start; k < n; k++) {
              tr.appendChild(el("td", { style: "background:" + blue(row[k] / top),
                title: fill(S.attention_tip, { layer: l + 1, head: h + 1,
                  char: shown(st.chars[k]), position: k + 1, weight: num.fixed(row[k], 3) }) }));
            }
            body.appendChild(tr);
          });
        });
        attBox.textContent = "";
        attBox.appendChild(el("table", { className: "tc-lm-rows" }, [el("thead", {}, [head]), body]));
      }

      function renderCache() {
        var bytes = st.positions * m.layers.length * 2 * m.d * 4; // float32 keys and values
        cacheBox.setAttribute("data-positions", st.positions);
        cacheBox.setAttribute("data-bytes", bytes);
        meter.style.width = (100 * st.positions / maxLen).toFixed(2) + "%";
        cacheText.textContent = cacheOn() ?
          fill(S.cache_on, { positions: st.positions, max_len: maxLen, layers: m.layers.length,
            d_model: m.d, bytes: num.fixed(bytes, 0) }) :
          fill(S.cache_off, { positions: st.ids.length });
      }

      function render(light) {
        stepButton.disabled = st.busy || atLimit();
        writeButton.disabled = st.busy || atLimit();
        tReadout.textContent = st.T === 0 ? S.temperature_zero :
          fill(S.temperature_readout, { t: num.fixed(st.T, 2), beta: num.short(1 / st.T) });
        pReadout.textContent = st.topP >= 1 ? S.top_p_off :
          fill(S.top_p_readout, { p: num.fixed(st.topP, 2) });
        writtenReadout.textContent = fill(S.written, { steps: st.steps });
        renderText();
        if (!light) {
          renderNotes();
          renderBars();
          renderAttention();
          renderCache();
        }
        root.setAttribute("data-state", JSON.stringify({
          prompt: st.prompt, text: st.chars.join(""), temperature: st.T, top_k: st.topK,
          top_p: st.topP, seed: st.seed, steps: st.steps,
          logits: Array.prototype.slice.call(st.logits), attention: st.attention,
          cache_positions: st.positions }));
      }

      startOver(P.prompt);
      render();
    }

    // --- mounting --------------------------------------------------------------------------------

    function child(root, cls) {
      for (var i = 0; i < root.children.length; i++) {
        if (root.children[i].classList.contains(cls)) return root.children[i];
      }
      return null;
    }

    function mount(root) {
      if (!root || root.hasAttribute("data-tc-mounted")) return;
      var weights = child(root, "tc-weights"), data = child(root, "tc-lm-payload");
      if (!weights || !data || !root.querySelector(".tc-x-mount")) return;
      root.setAttribute("data-tc-mounted", "");
      new Explorer(root, JSON.parse(weights.textContent), JSON.parse(data.textContent));
    }

    var boot = C.booter(".tc-explorer[data-kind='lm']", mount);

    return {
      version: VERSION, boot: boot, mount: mount, Model: Model,
      Cache: Cache, forward: forward, distribution: distribution, draw: draw,
      mulberry: mulberry
    };
  }
})();
