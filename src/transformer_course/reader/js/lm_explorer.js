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
 * the explorer whose script is running (or every one not yet mounted). No global id and no
 * other host; on the built site, the weights come from a file beside the page (withWeights).
 */
(function () {
  "use strict";
  var VERSION = 3;
  var C = window.TcCommon; // common.js, inlined just before this file
  var numbers = C.numbers, el = C.el, fill = C.fill, blue = C.blue;
  var SHOWN = 10; // bars of the next-character distribution
  var ATTENDED = 40; // the last positions drawn in the attention rows
  if (!window.TcLm || !(window.TcLm.version >= VERSION)) {
    window.TcLm = {
      version: VERSION, boot: C.booter(".tc-explorer[data-kind='lm']", mountWhenNear),
      mount: mount,
      Model: Model, Cache: Cache, forward: forward, distribution: distribution, draw: draw,
      mulberry: mulberry
    };
  }
  window.TcLm.boot(document.currentScript || null);

  // --- the weights ----------------------------------------------------------------------

  function bytesOf(text) { // base64 -> bytes
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

  // The model of the weights JSON W: its sizes and every tensor, decoded.
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
      var p = "blocks." + l + ".";
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
    m.final = T["norm.weight"] ?
      { w: t("norm.weight"), b: maybe("norm.bias") } : null;
    return m;
  }

  // --- the forward pass, one position ---------------------------------------------------

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
    var d = m.d, s = stepVectors(m, pos + 1), attention = want ? [] : null;
    for (var i = 0; i < d; i++) s.x[i] = m.embed[id * d + i] + m.position[pos * d + i];
    for (var l = 0; l < m.layers.length; l++) {
      var rows = layer(m, m.layers[l], cache.K[l], cache.V[l], pos, s, want);
      if (want) attention.push(rows);
    }
    var out = s.x;
    if (m.final) {
      layerNorm(s.x, m.final.w, m.final.b, m.eps, s.h);
      out = s.h;
    }
    return { logits: logitsOf(m, out), attention: attention };
  }

  // The vectors of one step, in float64; w holds one attention row of n positions.
  function stepVectors(m, n) {
    var d = m.d;
    return {
      x: new Float64Array(d), h: new Float64Array(d), q: new Float64Array(d),
      k: new Float64Array(d), v: new Float64Array(d), ctx: new Float64Array(d),
      a: new Float64Array(d), f: new Float64Array(d), hidden: new Float64Array(m.dff),
      w: new Float64Array(n)
    };
  }

  // One layer L at position pos (K, V: its cache): s.x becomes the layer's output.
  // Returns the attention row of each head if want, else null.
  function layer(m, L, K, V, pos, s, want) {
    var d = m.d;
    if (m.normFirst) layerNorm(s.x, L.n1w, L.n1b, m.eps, s.h); else s.h.set(s.x);
    linear(L.Wq, L.bq, s.h, s.q, d, d);
    linear(L.Wk, L.bk, s.h, s.k, d, d);
    linear(L.Wv, L.bv, s.h, s.v, d, d);
    K.set(s.k, pos * d);
    V.set(s.v, pos * d);
    var rows = attendHeads(m, s, K, V, pos + 1, want);
    linear(L.Wo, L.bo, s.ctx, s.a, d, d);
    residuals(m, L, s);
    return rows;
  }

  // s.ctx: every head's softmax(q . K^T / sqrt(d_head)) V over positions 0..n-1.
  function attendHeads(m, s, K, V, n, want) {
    var d = m.d, dh = m.dh, q = s.q, w = s.w, ctx = s.ctx, scale = 1 / Math.sqrt(dh);
    var rows = want ? [] : null, i, j;
    for (var hd = 0; hd < m.H; hd++) {
      var off = hd * dh, top = -Infinity, sum = 0;
      for (j = 0; j < n; j++) {
        var score = 0, row = j * d + off;
        for (i = 0; i < dh; i++) score += q[off + i] * scale * K[row + i];
        w[j] = score;
        if (score > top) top = score;
      }
      for (j = 0; j < n; j++) { w[j] = Math.exp(w[j] - top); sum += w[j]; }
      for (i = 0; i < dh; i++) ctx[off + i] = 0;
      for (j = 0; j < n; j++) {
        w[j] /= sum;
        for (i = 0; i < dh; i++) ctx[off + i] += w[j] * V[j * d + off + i];
      }
      if (want) rows.push(Array.prototype.slice.call(w));
    }
    return rows;
  }

  // The attention's output s.a and the feed-forward block added to s.x, with the layer's
  // norms before (pre-norm) or after (post-norm) each.
  function residuals(m, L, s) {
    var d = m.d, x = s.x, h = s.h, i;
    if (m.normFirst) {
      for (i = 0; i < d; i++) x[i] += s.a[i];
      layerNorm(x, L.n2w, L.n2b, m.eps, h);
      feedForward(m, L, h, s.hidden, s.f);
      for (i = 0; i < d; i++) x[i] += s.f[i];
    } else {
      for (i = 0; i < d; i++) h[i] = x[i] + s.a[i];
      layerNorm(h, L.n1w, L.n1b, m.eps, x);
      feedForward(m, L, x, s.hidden, s.f);
      for (i = 0; i < d; i++) h[i] = x[i] + s.f[i];
      layerNorm(h, L.n2w, L.n2b, m.eps, x);
    }
  }

  function logitsOf(m, x) { // head . x, one logit per token
    var d = m.d, logits = new Float64Array(m.V);
    for (var t = 0; t < m.V; t++) {
      var z = 0;
      for (var i = 0; i < d; i++) z += m.head[t * d + i] * x[i];
      logits[t] = z;
    }
    return logits;
  }

  // --- sampling -------------------------------------------------------------------------

  // The distribution a step draws from. allowed: the ids that may be written, in id
  // order. Returns probs (length V, 0 outside the kept set), kept, and which ids top-k
  // and top-p cut.
  function distribution(logits, allowed, T, topK, topP) {
    var probs = new Float64Array(logits.length), cutK = {}, cutP = {};
    var kept = keepTopK(logits, allowed.slice(), topK, cutK);
    if (T === 0) { // the argmax (lowest id on ties); top-k and top-p keep it anyway
      var best = kept[0];
      for (var i = 1; i < kept.length; i++) if (logits[kept[i]] > logits[best]) best = kept[i];
      probs[best] = 1;
      return { probs: probs, kept: 1, cutK: cutK, cutP: cutP };
    }
    softmax(logits, kept, T, probs);
    if (topP < 1) kept = keepTopP(probs, kept, topP, cutP);
    var count = kept.filter(function (id) { return probs[id] > 0; }).length;
    return { probs: probs, kept: count, cutK: cutK, cutP: cutP };
  }

  // The kept ids whose logits are among the topK largest (ties with the k-th kept); the
  // others are marked in cut.
  function keepTopK(logits, kept, topK, cut) {
    if (topK === null || topK >= kept.length) return kept;
    var kth = kept.map(function (j) { return logits[j]; })
      .sort(function (a, b) { return b - a; })[topK - 1];
    return kept.filter(function (j) {
      if (logits[j] >= kth) return true; // ties with the k-th are kept
      cut[j] = true;
      return false;
    });
  }

  // probs[id] = softmax(logits / T) over the kept ids.
  function softmax(logits, kept, T, probs) {
    var top = -Infinity, sum = 0, i, id;
    for (i = 0; i < kept.length; i++) top = Math.max(top, logits[kept[i]]);
    for (i = 0; i < kept.length; i++) {
      id = kept[i];
      probs[id] = Math.exp((logits[id] - top) / T); // <= 1, and 1 at the largest
      sum += probs[id];
    }
    for (i = 0; i < kept.length; i++) probs[kept[i]] /= sum;
  }

  // The fewest most likely kept ids whose probabilities reach topP (ties kept),
  // renormalised; the others get 0 and are marked in cut.
  function keepTopP(probs, kept, topP, cut) {
    var order = kept.slice().sort(function (a, b) { return probs[b] - probs[a] || a - b; });
    var before = 0, last = 0, sum = 0, i;
    for (i = 0; i < order.length && before < topP; i++) { // mass of the likelier ones < p
      last = probs[order[i]];
      before += last;
    }
    kept = kept.filter(function (j) {
      if (probs[j] >= last) { sum += probs[j]; return true; } // ties with the last kept
      cut[j] = true;
      probs[j] = 0;
      return false;
    });
    for (i = 0; i < kept.length; i++) probs[kept[i]] /= sum;
    return kept;
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

  // --- mounting -------------------------------------------------------------------------

  function child(root, cls) { // root's first direct child of class cls
    for (var i = 0; i < root.children.length; i++) {
      if (root.children[i].classList.contains(cls)) return root.children[i];
    }
    return null;
  }

  // The model runs on its prompt as soon as it mounts: on a phone, that waits until the
  // reader scrolls near it (TcCommon.whenNear).
  function mountWhenNear(root) {
    C.whenNear(root, function () { mount(root); });
  }

  // Mounts the explorer under root, from its weights and payload (direct child scripts).
  function mount(root) {
    if (!root || root.hasAttribute("data-tc-mounted")) return;
    var weights = child(root, "tc-weights"), data = child(root, "tc-lm-payload");
    if (!weights || !data || !root.querySelector(".tc-x-mount")) return;
    root.setAttribute("data-tc-mounted", "");
    var P = JSON.parse(data.textContent);
    withWeights(weights, function (W) { start(root, W, P); }, function (file) {
      var note = root.querySelector(".tc-x-mount");
      note.textContent = "";
      note.appendChild(el("p", { role: "alert",
                                 text: fill(P.strings.weights_missing, { file: file }) }));
    });
  }

  // The weights are the script's JSON in a notebook. The built site moves them to a file of
  // their own, so that a chapter page does not carry them before the reader comes near the
  // explorer: the script is then empty, and its data-src names a file that stores them in
  // window.TcWeights[data-key] (a script element, which also loads from a folder on disk).
  function withWeights(script, use, fail) {
    var src = script.getAttribute("data-src"), key = script.getAttribute("data-key");
    if (!src) {
      use(JSON.parse(script.textContent));
      return;
    }
    var store = window.TcWeights = window.TcWeights || {};
    if (store[key]) {
      use(store[key]);
      return;
    }
    var file = document.createElement("script");
    file.src = src;
    file.onload = function () {
      if (store[key]) use(store[key]);
      else fail(src);
    };
    file.onerror = function () { fail(src); };
    document.head.appendChild(file);
  }

  // Builds the controls and panels of one explorer (W: weights, P: payload), runs the model
  // on the prompt and draws it. Every function below takes the explorer x this returns.
  function start(root, W, P) {
    var x = newExplorer(root, W, P);
    var mountPoint = root.querySelector(".tc-x-mount");
    mountPoint.textContent = "";
    mountPoint.appendChild(el("div", { className: "tc-x-heading" }, [
      el("strong", { text: x.S.title }), " ", el("span", { text: x.S.caption })]));
    buildPromptRow(x, mountPoint);
    buildSamplingRows(x, mountPoint);
    buildStepRow(x, mountPoint);
    buildPanels(x, mountPoint);
    wireSampling(x);
    wireSeed(x);
    startOver(x, P.prompt);
    render(x);
    return x;
  }

  // One explorer: the model m and its caches, the characters (chars, stoi: a character's
  // id, allowed: the ids that may be written), the state st and the controls and panels ui.
  function newExplorer(root, W, P) {
    var m = Model(W), vocab = vocabulary(W);
    return {
      root: root, W: W, P: P, S: P.strings, num: numbers(P.numbers || {}), m: m,
      chars: W.chars, maxLen: m.maxLen, stoi: vocab.stoi, allowed: vocab.allowed,
      unkId: W.unk_id, cache: new Cache(m), scratch: new Cache(m), ui: {},
      st: {
        prompt: P.prompt, chars: [], ids: [], steps: 0, T: P.temperature, topK: P.top_k,
        topP: P.top_p, seed: P.seed, rng: P.seed | 0, logits: null, attention: null,
        dist: null, nextId: null, nextU: 0, positions: 0, unknown: [], cut: false,
        empty: false, run: 0, busy: false
      }
    };
  }

  // Every character but the special tokens: stoi (character -> id) and allowed (ids).
  function vocabulary(W) {
    var specialIds = {}, stoi = {}, allowed = [];
    Object.keys(W.specials || {}).forEach(function (name) { specialIds[W.specials[name]] = name; });
    W.chars.forEach(function (c, i) {
      if (!(i in specialIds)) { stoi[c] = i; allowed.push(i); }
    });
    return { stoi: stoi, allowed: allowed };
  }

  function shown(c) { return c === " " ? "\u2423" : c === "\n" ? "\u21b5" : c; } // ␣, ↵
  function named(x, c) { return c === " " ? x.S.space : c === "\n" ? x.S.line_break : c; }
  function atLimit(x) { return x.st.ids.length >= x.maxLen; }
  function cacheOn(x) { return x.root.getAttribute("data-cache") !== "off"; }

  // --- the model on the text ------------------------------------------------------------

  // The logits and attention rows of the text's last position: the cache's missing
  // positions run, or (the hidden switch) every position again, nothing kept.
  function compute(x) {
    var st = x.st, n = st.ids.length, cache = x.cache, r = null, pos;
    if (cacheOn(x)) {
      cache.length = Math.min(cache.length, n - 1); // the last position gives the rows
      for (pos = cache.length; pos < n; pos++) {
        r = forward(x.m, cache, st.ids[pos], pos, pos === n - 1);
      }
      cache.length = n;
      st.positions = n;
    } else {
      for (pos = 0; pos < n; pos++) r = forward(x.m, x.scratch, st.ids[pos], pos, pos === n - 1);
      st.positions = 0;
    }
    st.logits = r.logits;
    st.attention = r.attention;
    reshape(x);
  }

  function reshape(x) { // T, top-k or top-p changed: the same logits, a new distribution
    var st = x.st;
    st.dist = distribution(st.logits, x.allowed, st.T, st.topK, st.topP);
    st.nextU = mulberry(st.rng)[0];
    st.nextId = atLimit(x) ? null : draw(st.dist.probs, st.nextU);
  }

  // A new text: the prompt (cut to max_len; "\n" if empty; unknown characters as <unk>),
  // the random stream from the seed again, an empty cache; stops a line being written.
  function startOver(x, text) {
    var st = x.st;
    st.run++;
    st.busy = false;
    x.root.removeAttribute("data-busy");
    st.prompt = text;
    var cs = Array.from(text);
    st.cut = cs.length > x.maxLen;
    if (st.cut) cs = cs.slice(0, x.maxLen);
    st.empty = cs.length === 0;
    if (st.empty) cs = ["\n"];
    st.chars = cs;
    st.unknown = [];
    st.ids = cs.map(function (c) {
      if (Object.prototype.hasOwnProperty.call(x.stoi, c)) return x.stoi[c];
      if (st.unknown.indexOf(c) < 0) st.unknown.push(c);
      return x.unkId;
    });
    st.steps = 0;
    st.rng = st.seed | 0;
    x.cache.length = 0;
    compute(x);
  }

  function stepOnce(x) { // -> the character written, or null at the limit
    var st = x.st;
    if (atLimit(x)) return null;
    var drawn = mulberry(st.rng);
    var id = draw(st.dist.probs, drawn[0]);
    st.rng = drawn[1];
    st.ids.push(id);
    st.chars.push(x.chars[id]);
    st.steps++;
    compute(x);
    return x.chars[id];
  }

  // --- controls -------------------------------------------------------------------------

  // The prompt, and "start again" (also Enter in the prompt).
  function buildPromptRow(x, mountPoint) {
    var S = x.S, ui = x.ui;
    ui.promptBox = el("input", {
      type: "text", className: "tc-prompt", maxlength: x.maxLen, size: 42, spellcheck: "false",
      autocomplete: "off", "aria-label": S.prompt_label, title: S.prompt_tip });
    ui.promptBox.value = x.P.prompt;
    var restart = el("button", { type: "button", className: "tc-restart", text: S.restart,
      title: S.restart_tip });
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.prompt_label }), ui.promptBox, restart]));
    ui.promptBox.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        startOver(x, ui.promptBox.value);
        render(x);
      }
    });
    restart.addEventListener("click", function () { startOver(x, ui.promptBox.value); render(x); });
  }

  // Temperature, top-k, top-p and the seed.
  function buildSamplingRows(x, mountPoint) {
    var S = x.S, P = x.P, ui = x.ui;
    ui.temperature = el("input", {
      type: "range", className: "tc-temperature", min: 0, max: P.temperature_max,
      step: 0.01, "aria-label": S.temperature_label, title: S.temperature_tip });
    ui.temperature.value = String(P.temperature);
    ui.tReadout = el("output", { className: "tc-x-readout tc-lm-t-readout" });
    ui.topK = el("input", {
      type: "number", className: "tc-top-k", min: 1, step: 1, inputmode: "numeric",
      placeholder: S.top_k_placeholder, "aria-label": S.top_k_label, title: S.top_k_tip });
    ui.topK.value = P.top_k === null ? "" : String(P.top_k);
    ui.topP = el("input", {
      type: "range", className: "tc-top-p", min: 0.01, max: 1, step: 0.01,
      "aria-label": S.top_p_label, title: S.top_p_tip });
    ui.topP.value = String(P.top_p);
    ui.pReadout = el("output", { className: "tc-x-readout tc-lm-p-readout" });
    ui.seedBox = el("input", {
      type: "number", className: "tc-seed", min: 0, max: P.seed_max, step: 1,
      inputmode: "numeric", "aria-label": S.seed_label, title: S.seed_tip });
    ui.seedBox.value = String(P.seed);
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.temperature_label }), ui.temperature,
      ui.tReadout]));
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [
      el("span", { className: "tc-x-label", text: S.top_k_label }), ui.topK,
      el("span", { className: "tc-x-label", text: S.top_p_label }), ui.topP, ui.pReadout,
      el("span", { className: "tc-x-label", text: S.seed_label }), ui.seedBox]));
  }

  // "Step" writes one character, "write" a line.
  function buildStepRow(x, mountPoint) {
    var S = x.S, ui = x.ui;
    ui.stepButton = el("button", { type: "button", className: "tc-step", text: S.step,
      title: S.step_tip });
    ui.writeButton = el("button", { type: "button", className: "tc-write", text: S.write,
      title: fill(S.write_tip, { count: x.P.write_length }) });
    ui.writtenReadout = el("output", { className: "tc-x-readout tc-lm-steps" });
    mountPoint.appendChild(el("div", { className: "tc-x-row" }, [ui.stepButton, ui.writeButton,
      ui.writtenReadout]));
    ui.stepButton.addEventListener("click", function () {
      if (x.st.busy) return;
      stepOnce(x);
      render(x);
    });
    ui.writeButton.addEventListener("click", function () { writeLine(x); });
  }

  // Sampling changed: the same logits, a new distribution (top-k: a whole number >= 1,
  // or empty for none).
  function wireSampling(x) {
    var st = x.st, ui = x.ui;
    ui.temperature.addEventListener("input", function () {
      var value = Number(ui.temperature.value);
      if (!isFinite(value) || value < 0) return;
      st.T = value;
      reshape(x);
      render(x);
    });
    ui.topK.addEventListener("input", function () {
      var text = ui.topK.value.trim(), value = Number(text);
      if (text === "" && !(ui.topK.validity && ui.topK.validity.badInput)) {
        st.topK = null;
      } else if (!/^\d+$/.test(text) || value < 1) {
        invalid(ui.topK, true, x.S.top_k_invalid);
        return;
      } else {
        st.topK = value;
      }
      invalid(ui.topK, false);
      ui.topK.title = x.S.top_k_tip;
      reshape(x);
      render(x);
    });
    ui.topP.addEventListener("input", function () {
      var value = Number(ui.topP.value);
      if (!(value > 0 && value <= 1)) return;
      st.topP = value;
      reshape(x);
      render(x);
    });
  }

  // The seed, on Enter (always starts over) or change (only if it changed).
  function wireSeed(x) {
    var box = x.ui.seedBox;
    box.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); commitSeed(x, true); }
    });
    box.addEventListener("change", function () { commitSeed(x, false); });
  }

  // A seed in 0..seed_max starts the text over with it; anything else is marked invalid.
  function commitSeed(x, always) {
    var box = x.ui.seedBox, text = box.value.trim(), value = Number(text);
    if (!/^\d+$/.test(text) || value > x.P.seed_max) {
      invalid(box, true, fill(x.S.seed_invalid, { max: x.num.fixed(x.P.seed_max, 0) }));
      return;
    }
    invalid(box, false);
    box.title = x.S.seed_tip;
    if (!always && value === x.st.seed) return;
    x.st.seed = value;
    startOver(x, x.st.prompt);
    render(x);
  }

  function invalid(box, bad, tip) { // marks a box invalid (with tip as its title) or not
    if (bad) {
      box.classList.add("tc-x-invalid");
      box.setAttribute("aria-invalid", "true");
      box.title = tip;
    } else {
      box.classList.remove("tc-x-invalid");
      box.removeAttribute("aria-invalid");
    }
  }

  // "Write": a character at a time, until a line break, write_length characters or the
  // limit (data-busy meanwhile); starting over stops it.
  function writeLine(x) {
    var st = x.st;
    if (st.busy) return;
    var line = { run: ++st.run, count: 0, drawn: 0 };
    st.busy = true;
    x.root.setAttribute("data-busy", "");
    render(x);
    line.drawn = Date.now();
    setTimeout(function () { writeNext(x, line); }, 0);
  }

  function writeNext(x, line) { // one character of writeLine
    var st = x.st;
    if (st.run !== line.run) return; // started over meanwhile
    var c = stepOnce(x);
    line.count++;
    if (c === null || c === "\n" || line.count >= x.P.write_length || atLimit(x)) {
      st.busy = false;
      x.root.removeAttribute("data-busy");
      render(x);
      return;
    }
    // The text at every character; the panels about every 100 ms, which is all an eye can
    // follow (redrawing them costs more than the model's step).
    var full = Date.now() - line.drawn >= 100;
    if (full) line.drawn = Date.now();
    render(x, !full);
    setTimeout(function () { writeNext(x, line); }, 0); // let the page draw each character
  }

  // --- views ----------------------------------------------------------------------------

  // The notes, the text, and three panels: the next character's distribution, the
  // attention rows and the KV cache.
  function buildPanels(x, mountPoint) {
    var S = x.S, ui = x.ui;
    ui.notes = el("div", { className: "tc-lm-notes", "aria-live": "polite" });
    ui.textBox = el("div", { className: "tc-lm-text", "aria-label": S.text_title,
      title: S.text_title });
    mountPoint.appendChild(ui.notes);
    mountPoint.appendChild(ui.textBox);
    ui.barsTitle = el("figcaption", { className: "tc-x-title" });
    ui.bars = el("div", { className: "tc-lm-bars" });
    ui.barsNote = el("p", { className: "tc-lm-draw" });
    var legend = el("div", { className: "tc-lm-legend" }, [
      el("span", { className: "tc-lm-key tc-lm-key-model" }), " " + S.bars_model + " ",
      el("span", { className: "tc-lm-key tc-lm-key-sample" }), " " + S.bars_sample]);
    var specialNames = Object.keys(x.W.specials || {});
    var specialsNote = specialNames.length ? el("p", { className: "tc-lm-specials",
      text: fill(S.specials, { names: specialNames.join(", ") }) }) : null;
    ui.attTitle = el("figcaption", { className: "tc-x-title" });
    ui.attBox = el("div", { className: "tc-lm-attention" });
    var cacheTitle = el("figcaption", { className: "tc-x-title", text: S.cache_title });
    ui.meter = el("span", { className: "tc-lm-fill" });
    ui.cacheText = el("p", { className: "tc-lm-cache-text" });
    ui.cacheBox = el("div", { className: "tc-lm-cache" }, [
      el("div", { className: "tc-lm-meter" }, [ui.meter]), ui.cacheText]);
    mountPoint.appendChild(el("div", { className: "tc-x-view" }, [
      el("figure", { className: "tc-x-panel tc-lm-dist" }, [ui.barsTitle, legend, ui.bars,
        ui.barsNote, specialsNote]),
      el("figure", { className: "tc-x-panel tc-lm-att" }, [ui.attTitle, ui.attBox]),
      el("figure", { className: "tc-x-panel tc-lm-kv" }, [cacheTitle, ui.cacheBox])]));
  }

  // The readouts and the text; unless light, the notes and panels too; then data-state.
  function render(x, light) {
    var st = x.st;
    renderControls(x);
    renderText(x);
    if (!light) {
      renderNotes(x);
      renderBars(x);
      renderAttention(x);
      renderCache(x);
    }
    x.root.setAttribute("data-state", JSON.stringify({
      prompt: st.prompt, text: st.chars.join(""), temperature: st.T, top_k: st.topK,
      top_p: st.topP, seed: st.seed, steps: st.steps,
      logits: Array.prototype.slice.call(st.logits), attention: st.attention,
      cache_positions: st.positions }));
  }

  function renderControls(x) { // the buttons' state and the readouts
    var S = x.S, st = x.st, ui = x.ui, num = x.num;
    ui.stepButton.disabled = st.busy || atLimit(x);
    ui.writeButton.disabled = st.busy || atLimit(x);
    ui.tReadout.textContent = st.T === 0 ? S.temperature_zero :
      fill(S.temperature_readout, { t: num.fixed(st.T, 2), beta: num.short(1 / st.T) });
    ui.pReadout.textContent = st.topP >= 1 ? S.top_p_off :
      fill(S.top_p_readout, { p: num.fixed(st.topP, 2) });
    ui.writtenReadout.textContent = fill(S.written, { steps: st.steps });
  }

  // The prompt (unknown characters marked), then the characters written, the last apart.
  function renderText(x) {
    var st = x.st, textBox = x.ui.textBox;
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

  function renderNotes(x) { // empty prompt, prompt cut, unknown characters, limit reached
    var S = x.S, st = x.st, notes = x.ui.notes;
    notes.textContent = "";
    function note(kind, text) {
      notes.appendChild(el("p", { className: "tc-lm-note", "data-note": kind, text: text }));
    }
    if (st.empty) note("empty", S.empty);
    if (st.cut) note("prompt_cut", fill(S.prompt_cut, { max_len: x.maxLen }));
    if (st.unknown.length) {
      note("unknown", fill(S.unknown, { chars: st.unknown.map(function (c) {
        return fill(S.quoted, { char: c }); }).join(", ") }));
    }
    if (atLimit(x)) note("limit", fill(S.limit, { max_len: x.maxLen }));
  }

  // The SHOWN likeliest next characters (and the one drawn): the model's probability
  // (T = 1, nothing cut) and the one sampled from, then how the draw went.
  function renderBars(x) {
    var S = x.S, st = x.st, ui = x.ui, allowed = x.allowed;
    var model = distribution(st.logits, allowed, 1, null, 1).probs;
    var order = allowed.slice().sort(function (a, b) {
      return st.logits[b] - st.logits[a] || a - b; });
    var rows = order.slice(0, SHOWN);
    if (st.nextId !== null && rows.indexOf(st.nextId) < 0) rows.push(st.nextId);
    var context = st.chars.slice(-12).map(shown).join("");
    if (st.chars.length > 12) context = "\u2026" + context;
    ui.barsTitle.textContent = fill(S.bars_title, { context: context });
    ui.bars.textContent = "";
    var scale = 0;
    rows.forEach(function (id) { scale = Math.max(scale, model[id], st.dist.probs[id]); });
    scale = scale || 1; // the longest bar fills its track
    rows.forEach(function (id) {
      ui.bars.appendChild(bar(x, id, order.indexOf(id) + 1, model[id], scale));
    });
    var kept = fill(S.bars_kept, { kept: st.dist.kept, count: allowed.length });
    var how = st.T === 0 ? S.bars_greedy : fill(S.bars_draw, { u: x.num.fixed(st.nextU, 3) });
    ui.barsNote.textContent = atLimit(x) ? kept : kept + ". " + how;
  }

  // The bar of character id (its rank among the logits; model: its probability at T = 1).
  function bar(x, id, rank, model, scale) {
    var S = x.S, st = x.st, p = st.dist.probs[id], isNext = id === st.nextId;
    var cut = st.dist.cutK[id] ? S.cut_top_k : st.dist.cutP[id] ? S.cut_top_p : "";
    var noteText = isNext ? "\u2605 " + S.bars_next : cut;
    if (rank > SHOWN) noteText = fill(S.rank, { rank: rank }) + " \u00b7 " + noteText;
    return el("div", {
      className: "tc-lm-bar" + (isNext ? " tc-lm-next" : "") + (cut ? " tc-lm-cut" : ""),
      "data-id": id, "data-p": p, "data-model": model }, [
      el("span", { className: "tc-lm-char", title: named(x, x.chars[id]),
        text: shown(x.chars[id]) }),
      el("span", { className: "tc-lm-track" }, [
        el("span", { className: "tc-lm-model",
          style: "width:" + (100 * model / scale).toFixed(2) + "%" }),
        el("span", { className: "tc-lm-sample",
          style: "width:" + (100 * p / scale).toFixed(2) + "%" })]),
      el("span", { className: "tc-lm-p", text: x.num.fixed(p, 3) }),
      el("span", { className: "tc-lm-why", text: noteText })]);
  }

  // The last position's attention row in every layer and head, over the ATTENDED last
  // positions (the earlier ones summed in one cell).
  function renderAttention(x) {
    var st = x.st, n = st.chars.length, start = Math.max(0, n - ATTENDED);
    x.ui.attTitle.textContent = fill(x.S.attention_title, { char: shown(st.chars[n - 1]) });
    var head = el("tr", {}, [el("th")]);
    if (start > 0) head.appendChild(el("th", { className: "tc-lm-earlier", text: "\u2026" }));
    for (var j = start; j < n; j++) {
      head.appendChild(el("th", { scope: "col", title: named(x, st.chars[j]),
        text: shown(st.chars[j]) }));
    }
    var body = el("tbody");
    st.attention.forEach(function (layer, l) {
      layer.forEach(function (row, h) { body.appendChild(attentionRow(x, row, l, h, start)); });
    });
    x.ui.attBox.textContent = "";
    x.ui.attBox.appendChild(el("table", { className: "tc-lm-rows" }, [el("thead", {}, [head]),
      body]));
  }

  // Head h of layer l: each cell shaded by its weight over the row's largest cell shown.
  function attentionRow(x, row, l, h, start) {
    var S = x.S, st = x.st, num = x.num, n = st.chars.length;
    var tr = el("tr", {}, [el("th", { scope: "row",
      text: fill(S.layer_head, { layer: l + 1, head: h + 1 }) })]);
    var top = 0, earlier = 0, k;
    for (k = 0; k < n; k++) {
      if (k < start) earlier += row[k]; else top = Math.max(top, row[k]);
    }
    top = top || 1;
    if (start > 0) {
      tr.appendChild(el("td", { style: "background:" + blue(Math.min(1, earlier / top)),
        title: fill(S.earlier, { count: start, weight: num.fixed(earlier, 3) }) }));
    }
    for (k = start; k < n; k++) {
      tr.appendChild(el("td", { style: "background:" + blue(row[k] / top),
        title: fill(S.attention_tip, { layer: l + 1, head: h + 1,
          char: shown(st.chars[k]), position: k + 1, weight: num.fixed(row[k], 3) }) }));
    }
    return tr;
  }

  function renderCache(x) { // the cache's fill and bytes (float32 keys and values)
    var S = x.S, st = x.st, ui = x.ui, m = x.m;
    var bytes = st.positions * m.layers.length * 2 * m.d * 4;
    ui.cacheBox.setAttribute("data-positions", st.positions);
    ui.cacheBox.setAttribute("data-bytes", bytes);
    ui.meter.style.width = (100 * st.positions / x.maxLen).toFixed(2) + "%";
    ui.cacheText.textContent = cacheOn(x) ?
      fill(S.cache_on, { positions: st.positions, max_len: x.maxLen, layers: m.layers.length,
        d_model: m.d, bytes: x.num.fixed(bytes, 0) }) :
      fill(S.cache_off, { positions: st.ids.length });
  }
})();
