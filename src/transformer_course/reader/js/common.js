/* Helpers shared by the components of transformer_course (explorer.js, lm_explorer.js,
 * quiz.js, diagram.js).
 *
 * Inlined before each explorer's own script, it defines window.TcCommon once per page:
 *   numbers(spec)        numbers as the reader writes them (spec: decimal, group, minus):
 *                        fixed(value, digits), short(value) (3 significant digits),
 *                        general(value) (up to 10), and parse(text), which reads "0,5",
 *                        "0.5", "1 000", "1e6" or "−2";
 *   el(tag, attrs, kids) a DOM element ("text" and "className" attributes are properties);
 *   fill(template, map)  a catalog string with its {name} placeholders filled in;
 *   blue(t)              a colour from white (t = 0) to dark blue (t = 1), like "Blues";
 *   ink(t)               the text colour for a cell of blue(t): black or white, whichever
 *                        contrasts more (never below 4.5:1, WCAG's AA for text);
 *   booter(sel, mount)   boot(script): mounts the component (CSS selector sel) whose
 *                        script is running, or, with no current script, every one not
 *                        yet mounted, now and again once the front end has attached it;
 *   whenNear(el, start)  start() once, when el comes near the screen (see below).
 * It uses no global id, and no other file or host.
 */
(function () {
  "use strict";
  var VERSION = 4;
  if (window.TcCommon && window.TcCommon.version >= VERSION) return;
  window.TcCommon = {
    version: VERSION, numbers: numbers, el: el, fill: fill, blue: blue, ink: ink,
    booter: booter, whenNear: whenNear
  };

  // --- numbers in the reader's language ---------------------------------------------------
  // One module for every component: the explorers, the language model and the quizzes.

  // The numbers of one page. spec: {decimal, group, minus} as Python's number_format gives
  // them (defaults ".", no groups, "-").
  function numbers(spec) {
    var f = { dec: spec.decimal || ".", grp: spec.group || "", minus: spec.minus || "-" };
    return {
      fixed: function (value, digits) { return fixed(f, value, digits); },
      short: function (value) { return short(f, value); },
      general: function (value) { return general(f, value); },
      parse: function (text) { return parse(f, text); }
    };
  }

  // JavaScript's "-1234.5" as the reader writes it: their minus sign, groups of three
  // digits once the whole part has groupFrom digits or more, their decimal separator.
  function localize(f, text, groupFrom) {
    var sign = "";
    if (text.charAt(0) === "-") { sign = f.minus; text = text.slice(1); }
    var parts = text.split("."), whole = parts[0];
    if (f.grp && whole.length >= groupFrom && /^\d+$/.test(whole)) {
      whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, f.grp);
    }
    return sign + whole + (parts.length > 1 ? f.dec + parts[1] : "");
  }

  function trimZeros(text) { return text.replace(/0+$/, "").replace(/\.$/, ""); } // "1.50" -> "1.5"

  // Exactly `digits` decimals; never "-0.00".
  function fixed(f, value, digits) {
    var text = value.toFixed(digits);
    if (/^-0(\.0*)?$/.test(text)) text = text.slice(1);
    return localize(f, text, 4);
  }

  // 3 significant digits, whole numbers kept whole; E-notation below 1e-3 and from 1e15.
  function short(f, value) {
    if (value === 0) return "0";
    var a = Math.abs(value);
    if (a >= 1e-3 && a < 1e15) {
      var text = a >= 1000 ? Math.round(value).toString() : value.toPrecision(3);
      if (text.indexOf("e") >= 0) text = String(Number(text)); // 999.5: "1.00e+3" -> "1000"
      if (text.indexOf(".") >= 0) text = trimZeros(text);
      return localize(f, text, 4);
    }
    return scientific(f, value.toExponential(2));
  }

  // Up to 10 significant digits (what a reader typed, read back); E-notation where
  // JavaScript writes an exponent (below 1e-6 and from 1e21).
  function general(f, value) {
    var text = String(Number(value.toPrecision(10)));
    return /e/.test(text) ? scientific(f, text) : localize(f, text, 4);
  }

  // JavaScript's "-1.50e-7" as the reader writes it: "−1,5E−7" on a French page.
  function scientific(f, text) {
    var parts = text.split("e"), mantissa = parts[0];
    if (mantissa.indexOf(".") >= 0) mantissa = trimZeros(mantissa);
    return localize(f, mantissa, 4) + "E" + localize(f, parts[1].replace("+", ""), 4);
  }

  function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  // A reader's number: "0,25", "0.25", "1 000", "1.000" (Italian), "1e-3", "-2", "−2".
  // Liberal where it is unambiguous: on a French page "0.25" is read as 0.25 too. NaN when
  // it is not a number.
  function parse(f, text) {
    var s = String(text).trim().replace(/[\s\u00a0\u202f\u2009]/g, "");
    s = s.replace(/[\u2212\u2013]/g, "-"); // the minus sign and the en dash, on any page
    if (f.minus !== "-") s = s.split(f.minus).join("-");
    if (!s) return NaN;
    var g = f.grp.trim();
    if (g && g !== f.dec && s.indexOf(g) >= 0) {
      var grouped = new RegExp("^[-+]?[1-9]\\d{0,2}(" + escapeRegExp(g) + "\\d{3})+(" +
        escapeRegExp(f.dec) + "\\d*)?([eE][-+]?\\d+)?$");
      if (grouped.test(s)) s = s.split(g).join("");
    }
    if (f.dec !== "." && s.indexOf(".") < 0) s = s.replace(f.dec, ".");
    if (s.indexOf(".") < 0 && s.split(",").length === 2) {
      // "1,000" where the decimal separator is "." is a thousand; "0,25" anywhere a quarter
      s = /^[-+]?[1-9]\d{0,2},\d{3}$/.test(s) && f.dec === "." ? s.replace(",", "") :
        s.replace(",", ".");
    }
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return NaN;
    return Number(s);
  }

  // --- small DOM helpers --------------------------------------------------------------------

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "text") node.textContent = value;
        else if (key === "className") node.className = value;
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function fill(template, values) {
    return String(template).replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole;
    });
  }

  // white -> dark blue, like matplotlib's "Blues"
  var BLUES = [[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
  function blueRGB(t) {
    t = Math.max(0, Math.min(1, t)) * (BLUES.length - 1);
    var i = Math.min(Math.floor(t), BLUES.length - 2), f = t - i, a = BLUES[i], b = BLUES[i + 1];
    return [0, 1, 2].map(function (k) { return Math.round(a[k] + f * (b[k] - a[k])); });
  }

  function blue(t) { return "rgb(" + blueRGB(t).join(",") + ")"; }

  // WCAG's relative luminance of a colour; black or white text, whichever contrasts more
  // with blue(t) (where the two are equal, each still gives 4.58:1)
  function ink(t) {
    var c = blueRGB(t).map(function (v) {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    var lum = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    return 1.05 / (lum + 0.05) > (lum + 0.05) / 0.05 ? "#fff" : "#000";
  }

  // --- mounting -------------------------------------------------------------------------

  function booter(selector, mount) {
    function mountAll() {
      var roots = document.querySelectorAll(selector + ":not([data-tc-mounted])");
      for (var i = 0; i < roots.length; i++) mount(roots[i]);
    }
    return function boot(script) {
      var root = script && script.closest ? script.closest(selector) : null;
      if (root) {
        mount(root);
        return;
      }
      // No current script (some front ends): mount what is there, and look again once the
      // front end has attached the output to the page.
      mountAll();
      [0, 100, 500, 2000].forEach(function (delay) { setTimeout(mountAll, delay); });
    };
  }

  // --- starting when seen ---------------------------------------------------------------

  // Calls start() once: when element comes within a screen of the visible part of the page,
  // so that work that costs a phone seconds waits until the reader scrolls to it; at once
  // where that cannot be watched; and on the event "tc:start-all" (sent by the PDF builder
  // and the audits) or when the reader prints. The element is marked data-tc-waiting, then
  // data-tc-started.
  function whenNear(element, start) {
    if (element.hasAttribute("data-tc-waiting")) return;
    element.setAttribute("data-tc-waiting", "");
    if (!window.IntersectionObserver) {
      element.setAttribute("data-tc-started", "");
      start();
      return;
    }
    var started = false;
    var near = new IntersectionObserver(function (entries) {
      if (entries.some(function (entry) { return entry.isIntersecting; })) go();
    }, { rootMargin: "600px 0px" });
    function go() {
      if (started) return;
      started = true;
      element.setAttribute("data-tc-started", "");
      near.disconnect();
      document.removeEventListener("tc:start-all", go);
      window.removeEventListener("beforeprint", go);
      start();
    }
    near.observe(element);
    document.addEventListener("tc:start-all", go);
    window.addEventListener("beforeprint", go);
  }
})();
