/* Helpers shared by the components of transformer_course (explorer.js, lm_explorer.js,
 * quiz.js, diagram.js).
 *
 * Inlined before each explorer's own script, it defines window.TcCommon once per page:
 *   numbers(spec)        numbers as the reader writes them (spec: decimal, group, minus):
 *                        fixed(value, digits), short(value) (3 significant digits), and
 *                        parse(text), which reads "0,5", "0.5", "1 000" or "1e6";
 *   el(tag, attrs, kids) a DOM element ("text" and "className" attributes are properties);
 *   fill(template, map)  a catalog string with its {name} placeholders filled in;
 *   blue(t)              a colour from white (t = 0) to dark blue (t = 1), like "Blues";
 *   ink(t)               the text colour for a cell of blue(t): black or white, whichever
 *                        contrasts more (never below 4.5:1, WCAG's AA for text);
 *   booter(sel, mount)   boot(script): mounts the component (CSS selector sel) whose
 *                        script is running, or, with no current script, every one not
 *                        yet mounted, now and again once the front end has attached it.
 * It uses no global id, and no other file or host.
 */
(function () {
  "use strict";
  var VERSION = 3;
  if (window.TcCommon && window.TcCommon.version >= VERSION) return;
  window.TcCommon = {
    version: VERSION, numbers: numbers, el: el, fill: fill, blue: blue, ink: ink,
    booter: booter
  };

  // --- numbers in the reader's language ---------------------------------------------------

  function numbers(spec) {
    var dec = spec.decimal || ".", grp = spec.group || "", minus = spec.minus || "-";

    function localize(text) {
      var sign = "";
      if (text.charAt(0) === "-") { sign = minus; text = text.slice(1); }
      var parts = text.split("."), whole = parts[0];
      if (grp && whole.length > 3 && /^\d+$/.test(whole)) {
        whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, grp);
      }
      return sign + whole + (parts.length > 1 ? dec + parts[1] : "");
    }

    function fixed(value, digits) {
      var text = value.toFixed(digits);
      if (/^-0(\.0*)?$/.test(text)) text = text.slice(1); // no "-0.00"
      return localize(text);
    }

    function short(value) { // 3 significant digits, whole numbers kept whole
      if (value === 0) return "0";
      var a = Math.abs(value);
      if (a >= 1e-3 && a < 1e15) {
        var text = a >= 1000 ? Math.round(value).toString() : value.toPrecision(3);
        if (text.indexOf("e") < 0 && text.indexOf(".") >= 0) {
          text = text.replace(/0+$/, "").replace(/\.$/, "");
        }
        return localize(text);
      }
      var exp = value.toExponential(2).split("e");
      var mantissa = exp[0].indexOf(".") >= 0 ?
        exp[0].replace(/0+$/, "").replace(/\.$/, "") : exp[0];
      return localize(mantissa) + "E" + exp[1].replace("+", "");
    }

    function escape(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

    function parse(text) { // a reader's number: "0,5", "0.5", "1 000", "1e6" ...
      var s = String(text).trim().replace(/[\s\u00a0\u202f]/g, "");
      if (!s) return NaN;
      if (grp && grp.trim() && grp !== dec && s.indexOf(grp) >= 0) {
        var grouped = new RegExp("^[-+]?[1-9]\\d{0,2}(" + escape(grp) + "\\d{3})+(" +
          escape(dec) + "\\d*)?([eE][-+]?\\d+)?$");
        if (grouped.test(s)) s = s.split(grp).join("");
      }
      if (dec !== "." && s.indexOf(".") < 0) s = s.replace(dec, ".");
      if (s.indexOf(".") < 0 && s.split(",").length === 2) s = s.replace(",", ".");
      s = s.replace(minus, "-");
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return NaN;
      return Number(s);
    }

    return { fixed: fixed, short: short, parse: parse };
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
})();
