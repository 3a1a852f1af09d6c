/* Self-grading quizzes of transformer_course (transformer_course.quiz).
 *
 * Python writes the whole quiz as HTML (questions, options, hidden explanations) and the
 * grading data as JSON in <script type="application/json" class="tc-quiz-data">: for each
 * question its kind, the indices of the right options, or a numeric key's value and
 * tolerance. This file grades what the reader answers:
 *
 *   single, picture   a click (or Enter, Space) on an option answers;
 *   multiple          options are toggled, then .tc-check grades the selection;
 *   numeric           a number (or a shape) typed in input.tc-answer, then Enter or
 *                     .tc-check; read in the page's format and accepted within the tolerance.
 *
 * After each answer the question's data-verdict is "right" or "wrong" (an answer replaces
 * the previous verdict), and its .tc-explanation shows the texts that fit the answer: the
 * explanation, a wrong option's own feedback, or a hint. The score of the page counts the
 * questions whose last answer is right. On a chapter page of the book, each answer is also
 * remembered in the reader's browser (progress.js, inlined before this file) and given back
 * after a reload; "Start again" forgets them. Maths ($...$ in the texts) is typeset by the page's
 * MathJax 3 when there is one; otherwise the Unicode text that Python wrote stays.
 *
 * This file is inlined in every quiz, so it may run several times on a page: it defines
 * window.TcQuiz once, then mounts the quiz whose script is running (or, where
 * document.currentScript is missing, every quiz not yet mounted). It uses no global id, and
 * no other file or host.
 */
(function () {
  "use strict";
  var VERSION = 1;
  if (!window.TcQuiz || !(window.TcQuiz.version >= VERSION)) {
    window.TcQuiz = create();
  }
  window.TcQuiz.boot(document.currentScript || null);

  function create() {
    // --- numbers in the reader's language ---------------------------------------------------

    function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

    // A reader's number: "0,25", "0.25", "1 000", "1.000" (Italian), "1e-3", "1/4", "-2".
    // Liberal where it is unambiguous: on a French page "0.25" is read as 0.25 too.
    function parseNumber(text, spec) {
      var dec = spec.decimal || ".", grp = spec.group || "", minus = spec.minus || "-";
      var s = String(text).trim().replace(/^[≈~=]\s*/, "");
      s = s.replace(/[\s\u00a0\u202f\u2009]/g, "").replace(/[\u2212\u2013]/g, "-");
      if (minus && minus !== "-") s = s.split(minus).join("-");
      if (!s) return NaN;
      var slash = s.split("/");
      if (slash.length === 2) {
        var top = parseNumber(slash[0], spec), bottom = parseNumber(slash[1], spec);
        return bottom === 0 ? NaN : top / bottom;
      }
      if (slash.length > 2) return NaN;
      var g = grp.trim();
      if (g && g !== dec && s.indexOf(g) >= 0) {
        var grouped = new RegExp("^[-+]?[1-9]\\d{0,2}(" + escapeRegExp(g) + "\\d{3})+(" +
          escapeRegExp(dec) + "\\d*)?([eE][-+]?\\d+)?$");
        if (grouped.test(s)) s = s.split(g).join("");
      }
      if (dec !== "." && s.indexOf(".") < 0) s = s.replace(dec, ".");
      if (s.indexOf(".") < 0 && s.split(",").length === 2) {
        // "1,000" on an English page is a thousand; "0,25" anywhere is a quarter
        s = /^[-+]?[1-9]\d{0,2},\d{3}$/.test(s) && dec === "." ? s.replace(",", "") :
          s.replace(",", ".");
      }
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return NaN;
      return Number(s);
    }

    // A shape: "(2, 8, 10, 64)", "2 8 10 64", "[2; 8]", "2 × 8", "torch.Size([2, 8])".
    function parseShape(text) {
      var s = String(text).trim().replace(/^torch\.Size\s*/, "");
      s = s.replace(/^[([]+/, "").replace(/[)\]]+$/, "").trim();
      if (!/^\d+(\s*[,;×xX*]\s*\d+|\s+\d+)*\s*[,;]?$/.test(s)) return null;
      return s.split(/[^\d]+/).filter(function (p) { return p.length; }).map(Number);
    }

    function formatNumber(value, spec) {
      var text = String(Number(value.toPrecision(10)));
      if (/e/.test(text)) return text;
      var sign = "";
      if (text.charAt(0) === "-") { sign = spec.minus || "-"; text = text.slice(1); }
      var parts = text.split("."), whole = parts[0];
      if (spec.group && whole.length > 4) {
        whole = whole.replace(/\B(?=(\d{3})+(?!\d))/g, spec.group);
      }
      return sign + whole + (parts.length > 1 ? (spec.decimal || ".") + parts[1] : "");
    }

    function fill(template, values) {
      return template.replace(/\{(\w+)\}/g, function (all, name) {
        return name in values ? String(values[name]) : all;
      });
    }

    // --- maths --------------------------------------------------------------------------------

    function typeset(root) {
      var spans = root.querySelectorAll(".tc-math[data-tex]");
      var mj = window.MathJax;
      if (!spans.length || !mj) return;
      var version = String(mj.version || "");
      var v3 = typeof mj.typesetPromise === "function" || version.charAt(0) === "3" ||
        (!version && typeof mj === "object" && !mj.Hub);
      var v2 = version.charAt(0) === "2" && mj.Hub && typeof mj.Hub.Queue === "function";
      if (!v3 && !v2) return;
      for (var i = 0; i < spans.length; i++) {
        var span = spans[i];
        if (span.getAttribute("data-tc-typeset")) continue;
        span.setAttribute("data-tc-typeset", "1");
        span.classList.add("tex2jax_process", "mathjax_process");
        span.textContent = "\\(" + span.getAttribute("data-tex") + "\\)";
      }
      try {
        if (typeof mj.typesetPromise === "function") {
          mj.typesetPromise([root]).catch(function () {});
        } else if (v2) {
          mj.Hub.Queue(["Typeset", mj.Hub, root]);
        }
        // else: MathJax 3 is configured but not loaded yet; its first pass typesets the
        // page, these spans included (they carry its process classes).
      } catch (error) { /* a broken MathJax must not break the quiz */ }
    }

    // --- one quiz -----------------------------------------------------------------------------

    function mount(root) {
      if (!root || root.hasAttribute("data-tc-mounted")) return;
      var script = root.querySelector("script.tc-quiz-data");
      if (!script) return;
      var data;
      try { data = JSON.parse(script.textContent); } catch (error) { return; }
      var elements = root.querySelectorAll(".tc-question");
      if (elements.length !== data.questions.length) return;
      root.setAttribute("data-tc-mounted", "");
      var note = root.querySelector(".tc-quiz-note");
      if (note) note.hidden = true;
      var strings = data.strings, spec = data.numbers;
      var progress = window.TcProgress || null;
      var chapter = progress ? progress.chapterOf(window.location) : null;
      var questions = [];
      for (var i = 0; i < elements.length; i++) {
        questions.push(setUp(elements[i], data.questions[i], i));
      }
      var reset = root.querySelector(".tc-reset");
      if (reset) {
        reset.addEventListener("click", function () {
          questions.forEach(function (q) { q.clear(); });
          if (chapter) progress.forget(chapter);
          score();
        });
      }
      if (chapter) restore(progress.answers(chapter, elements.length));
      score();
      typeset(root);

      function restore(saved) {
        Object.keys(saved).forEach(function (index) {
          questions[Number(index)].restore(saved[index].answer);
        });
      }

      function score() {
        var right = 0;
        for (var k = 0; k < elements.length; k++) {
          if (elements[k].getAttribute("data-verdict") === "right") right++;
        }
        root.setAttribute("data-score", String(right));
        var line = root.querySelector(".tc-score");
        if (line) line.textContent = fill(strings.score, { right: right, total: elements.length });
      }

      function setUp(element, q, index) {
        var options = Array.prototype.slice.call(element.querySelectorAll(".tc-option"));
        var check = element.querySelector(".tc-check");
        var input = element.querySelector("input.tc-answer");
        var verdictLine = element.querySelector(".tc-verdict");
        var explanation = element.querySelector(".tc-explanation");
        var whys = Array.prototype.slice.call(element.querySelectorAll(".tc-why"));
        var given = null; // the answer being graded, remembered with its verdict

        function show(names, verdict, extra) {
          element.setAttribute("data-verdict", verdict);
          verdictLine.textContent = (verdict === "right" ? strings.right : strings.wrong) +
            (extra ? " " + extra : "");
          verdictLine.className = "tc-verdict tc-" + verdict;
          var shown = 0;
          whys.forEach(function (why) {
            var on = names.indexOf(why.getAttribute("data-why")) >= 0;
            why.hidden = !on;
            if (on) shown++;
          });
          if (!shown) { // never an empty explanation
            whys.forEach(function (why) {
              if (why.getAttribute("data-why") === "explanation") why.hidden = false;
            });
          }
          explanation.hidden = false;
          if (chapter && given !== null) {
            progress.record(chapter, elements.length, index, given, verdict);
          }
          score();
        }

        function has(name) {
          return whys.some(function (why) { return why.getAttribute("data-why") === name; });
        }

        function wrongTexts(fallbacks) {
          for (var k = 0; k < fallbacks.length; k++) {
            if (has(fallbacks[k])) return [fallbacks[k]];
          }
          return ["explanation"];
        }

        function mark(chosen, rightSet) {
          options.forEach(function (option, index) {
            var on = chosen.indexOf(index) >= 0;
            option.setAttribute("aria-pressed", on ? "true" : "false");
            option.classList.remove("tc-chosen-right", "tc-chosen-wrong");
            if (on && rightSet) {
              option.classList.add(rightSet.indexOf(index) >= 0 ? "tc-chosen-right" :
                "tc-chosen-wrong");
            }
          });
        }

        function answerOne(index) {
          var right = q.answers.indexOf(index) >= 0;
          given = [index];
          mark([index], q.answers);
          if (right) show(["explanation"], "right");
          else show(wrongTexts(["option-" + index, "hint"]), "wrong");
        }

        function answerMany() {
          var chosen = [];
          options.forEach(function (option, index) {
            if (option.getAttribute("aria-pressed") === "true") chosen.push(index);
          });
          given = chosen;
          mark(chosen, q.answers);
          var names = [], missing = false, extra = false;
          for (var k = 0; k < options.length; k++) {
            var isRight = q.answers.indexOf(k) >= 0, on = chosen.indexOf(k) >= 0;
            if (isRight === on) continue;
            if (isRight) missing = true; else extra = true;
            if (has("option-" + k)) names.push("option-" + k);
          }
          if (!missing && !extra) { show(["explanation"], "right"); return; }
          if (missing && !names.length) names.push("missing");
          if (!names.length) names = wrongTexts(["hint"]);
          show(names, "wrong");
        }

        function answerNumber() {
          var text = input.value;
          var value = q.shape ? parseShape(text) : parseNumber(text, spec);
          var unreadable = q.shape ? value === null : !isFinite(value);
          if (unreadable) {
            input.setAttribute("aria-invalid", "true");
            element.removeAttribute("data-verdict");
            var example = q.shape ? "(2, 3, 4)" : formatNumber(0.25, spec);
            verdictLine.textContent = fill(q.shape ? strings.not_shape : strings.not_number,
              { example: example });
            verdictLine.className = "tc-verdict tc-invalid";
            explanation.hidden = true;
            score();
            return;
          }
          input.removeAttribute("aria-invalid");
          given = text;
          var right;
          if (q.shape) {
            right = value.length === q.value.length && value.every(function (v, k) {
              return v === q.value[k];
            });
          } else {
            var slack = 1e-9 * Math.max(1, Math.abs(q.value));
            right = Math.abs(value - q.value) <= q.tolerance + slack;
          }
          var echo = q.shape ? "" : fill(strings.you_typed, { value: formatNumber(value, spec) });
          if (right) show(["explanation"], "right", echo);
          else show(wrongTexts(["hint"]), "wrong", echo);
        }

        options.forEach(function (option, index) {
          option.addEventListener("click", function () {
            if (q.kind === "multiple") {
              var on = option.getAttribute("aria-pressed") === "true";
              option.setAttribute("aria-pressed", on ? "false" : "true");
              option.classList.remove("tc-chosen-right", "tc-chosen-wrong");
            } else {
              answerOne(index);
            }
          });
        });
        if (check) {
          check.addEventListener("click", function () {
            if (q.kind === "numeric") answerNumber(); else answerMany();
          });
        }
        if (input) {
          input.addEventListener("keydown", function (event) {
            if (event.key === "Enter") {
              event.preventDefault();
              answerNumber();
            }
          });
        }

        function restore(answer) {
          if (q.kind === "numeric") {
            if (typeof answer !== "string") return;
            input.value = answer;
            answerNumber();
          } else if (Array.isArray(answer) && answer.every(function (k) {
            return k < options.length;
          })) {
            if (q.kind !== "multiple") { if (answer.length === 1) answerOne(answer[0]); return; }
            options.forEach(function (option, k) {
              option.setAttribute("aria-pressed", answer.indexOf(k) >= 0 ? "true" : "false");
            });
            answerMany();
          }
        }

        return {
          restore: restore,
          clear: function () {
            element.removeAttribute("data-verdict");
            verdictLine.textContent = "";
            verdictLine.className = "tc-verdict";
            explanation.hidden = true;
            whys.forEach(function (why) { why.hidden = true; });
            mark([], null);
            if (input) { input.value = ""; input.removeAttribute("aria-invalid"); }
          }
        };
      }
    }

    var boot = window.TcCommon.booter(".tc-quiz", mount);

    return {
      version: VERSION, boot: boot, mount: mount,
      parseNumber: parseNumber, parseShape: parseShape
    };
  }
})();
