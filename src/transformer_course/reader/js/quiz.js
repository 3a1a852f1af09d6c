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
  var C = window.TcCommon; // common.js, inlined before this file
  if (!window.TcQuiz || !(window.TcQuiz.version >= VERSION)) {
    window.TcQuiz = {
      version: VERSION, boot: C.booter(".tc-quiz", mount), mount: mount,
      parseNumber: parseNumber, parseShape: parseShape
    };
  }
  window.TcQuiz.boot(document.currentScript || null);

  // --- what the reader typed ------------------------------------------------------------------

  // A number as common.js reads it in the page's format (num: TcCommon.numbers), and also
  // "≈ 0.25" or a fraction "1/4".
  function readNumber(num, text) {
    var s = String(text).trim().replace(/^[≈~=]\s*/, "");
    var slash = s.split("/");
    if (slash.length === 2) {
      var top = readNumber(num, slash[0]), bottom = readNumber(num, slash[1]);
      return bottom === 0 ? NaN : top / bottom;
    }
    if (slash.length > 2) return NaN;
    return num.parse(s);
  }

  // readNumber with the page's format spec {decimal, group, minus} (kept for callers of
  // TcQuiz.parseNumber).
  function parseNumber(text, spec) { return readNumber(C.numbers(spec || {}), text); }

  // A shape: "(2, 8, 10, 64)", "2 8 10 64", "[2; 8]", "2 × 8", "torch.Size([2, 8])".
  function parseShape(text) {
    var s = String(text).trim().replace(/^torch\.Size\s*/, "");
    s = s.replace(/^[([]+/, "").replace(/[)\]]+$/, "").trim();
    if (!/^\d+(\s*[,;×xX*]\s*\d+|\s+\d+)*\s*[,;]?$/.test(s)) return null;
    return s.split(/[^\d]+/).filter(function (p) { return p.length; }).map(Number);
  }

  // --- maths ----------------------------------------------------------------------------------

  // Hands the quiz's maths (.tc-math[data-tex]) to the page's MathJax 3 (or 2), if any.
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

  // --- one quiz -------------------------------------------------------------------------------

  // Mounts the quiz under root: wires its questions, gives back the reader's saved
  // answers, shows the score and typesets the maths.
  function mount(root) {
    var data = gradingData(root);
    if (!data) return;
    root.setAttribute("data-tc-mounted", "");
    var note = root.querySelector(".tc-quiz-note");
    if (note) note.hidden = true;
    var quiz = newQuiz(root, data);
    quiz.elements.forEach(function (element, i) {
      quiz.questions.push(setUp(quiz, element, data.questions[i], i));
    });
    var reset = root.querySelector(".tc-reset");
    if (reset) reset.addEventListener("click", function () { startAgain(quiz); });
    if (quiz.chapter) restoreAll(quiz, quiz.progress.answers(quiz.chapter, quiz.elements.length));
    score(quiz);
    typeset(root);
  }

  // The quiz's grading data, or null if root is mounted already or its data is missing,
  // unreadable or not one entry per question.
  function gradingData(root) {
    if (!root || root.hasAttribute("data-tc-mounted")) return null;
    var script = root.querySelector("script.tc-quiz-data");
    if (!script) return null;
    var data;
    try { data = JSON.parse(script.textContent); } catch (error) { return null; }
    if (root.querySelectorAll(".tc-question").length !== data.questions.length) return null;
    return data;
  }

  // The state of one quiz: its elements, texts, number format and the reader's progress
  // (progress.js; chapter is null off a chapter page of the book).
  function newQuiz(root, data) {
    var progress = window.TcProgress || null;
    return {
      root: root, strings: data.strings, num: C.numbers(data.numbers || {}),
      elements: Array.prototype.slice.call(root.querySelectorAll(".tc-question")),
      questions: [], progress: progress,
      chapter: progress ? progress.chapterOf(window.location) : null
    };
  }

  // "Start again": every answer cleared and forgotten.
  function startAgain(quiz) {
    quiz.questions.forEach(clear);
    if (quiz.chapter) quiz.progress.forget(quiz.chapter);
    score(quiz);
  }

  // The answers saved in the reader's browser ({index: {answer}}), graded again.
  function restoreAll(quiz, saved) {
    Object.keys(saved).forEach(function (index) {
      restoreAnswer(quiz.questions[Number(index)], saved[index].answer);
    });
  }

  // The root's data-score and the score line: the questions whose last answer is right.
  function score(quiz) {
    var right = quiz.elements.filter(function (element) {
      return element.getAttribute("data-verdict") === "right";
    }).length;
    quiz.root.setAttribute("data-score", String(right));
    var line = quiz.root.querySelector(".tc-score");
    if (line) {
      line.textContent = C.fill(quiz.strings.score, { right: right, total: quiz.elements.length });
    }
  }

  // --- one question ---------------------------------------------------------------------------

  // The state of one question (data: its grading data) with its controls wired.
  function setUp(quiz, element, data, index) {
    var question = {
      quiz: quiz, element: element, data: data, index: index,
      options: Array.prototype.slice.call(element.querySelectorAll(".tc-option")),
      check: element.querySelector(".tc-check"),
      input: element.querySelector("input.tc-answer"),
      verdictLine: element.querySelector(".tc-verdict"),
      explanation: element.querySelector(".tc-explanation"),
      whys: Array.prototype.slice.call(element.querySelectorAll(".tc-why")),
      given: null // the answer being graded, remembered with its verdict
    };
    wire(question);
    return question;
  }

  // A click on an option answers (or, for "multiple", toggles it); .tc-check and Enter in
  // the answer box grade.
  function wire(question) {
    var kind = question.data.kind;
    question.options.forEach(function (option, index) {
      option.addEventListener("click", function () {
        if (kind !== "multiple") { answerOne(question, index); return; }
        var on = option.getAttribute("aria-pressed") === "true";
        option.setAttribute("aria-pressed", on ? "false" : "true");
        option.classList.remove("tc-chosen-right", "tc-chosen-wrong");
      });
    });
    if (question.check) {
      question.check.addEventListener("click", function () {
        if (kind === "numeric") answerNumber(question); else answerMany(question);
      });
    }
    if (question.input) {
      question.input.addEventListener("keydown", function (event) {
        if (event.key !== "Enter") return;
        event.preventDefault();
        answerNumber(question);
      });
    }
  }

  // The verdict ("right" or "wrong", then extra) and the texts named (.tc-why's data-why;
  // the explanation if none of them is there); the answer is saved and the score updated.
  function show(question, names, verdict, extra) {
    var quiz = question.quiz, strings = quiz.strings;
    question.element.setAttribute("data-verdict", verdict);
    question.verdictLine.textContent = (verdict === "right" ? strings.right : strings.wrong) +
      (extra ? " " + extra : "");
    question.verdictLine.className = "tc-verdict tc-" + verdict;
    showTexts(question, names);
    question.explanation.hidden = false;
    if (quiz.chapter && question.given !== null) {
      quiz.progress.record(quiz.chapter, quiz.elements.length, question.index, question.given,
        verdict);
    }
    score(quiz);
  }

  // Shows the .tc-why texts named, hides the others; never an empty explanation.
  function showTexts(question, names) {
    var shown = 0;
    question.whys.forEach(function (why) {
      var on = names.indexOf(why.getAttribute("data-why")) >= 0;
      why.hidden = !on;
      if (on) shown++;
    });
    if (shown) return;
    question.whys.forEach(function (why) {
      if (why.getAttribute("data-why") === "explanation") why.hidden = false;
    });
  }

  function has(question, name) { // whether the question has the text data-why=name
    return question.whys.some(function (why) { return why.getAttribute("data-why") === name; });
  }

  // The first of the fallbacks that the question has, else its explanation.
  function wrongTexts(question, fallbacks) {
    for (var k = 0; k < fallbacks.length; k++) {
      if (has(question, fallbacks[k])) return [fallbacks[k]];
    }
    return ["explanation"];
  }

  // Presses the chosen options; with rightSet, marks each of them right or wrong.
  function mark(question, chosen, rightSet) {
    question.options.forEach(function (option, index) {
      var on = chosen.indexOf(index) >= 0;
      option.setAttribute("aria-pressed", on ? "true" : "false");
      option.classList.remove("tc-chosen-right", "tc-chosen-wrong");
      if (on && rightSet) {
        option.classList.add(rightSet.indexOf(index) >= 0 ? "tc-chosen-right" :
          "tc-chosen-wrong");
      }
    });
  }

  // single, picture: option `index` answers.
  function answerOne(question, index) {
    var answers = question.data.answers;
    question.given = [index];
    mark(question, [index], answers);
    if (answers.indexOf(index) >= 0) show(question, ["explanation"], "right");
    else show(question, wrongTexts(question, ["option-" + index, "hint"]), "wrong");
  }

  // multiple: the pressed options are graded; wrong, the feedback of each option chosen
  // wrongly (or "missing", or the hint).
  function answerMany(question) {
    var answers = question.data.answers, chosen = [];
    question.options.forEach(function (option, index) {
      if (option.getAttribute("aria-pressed") === "true") chosen.push(index);
    });
    question.given = chosen;
    mark(question, chosen, answers);
    var names = [], missing = false, extra = false;
    for (var k = 0; k < question.options.length; k++) {
      var isRight = answers.indexOf(k) >= 0, on = chosen.indexOf(k) >= 0;
      if (isRight === on) continue;
      if (isRight) missing = true; else extra = true;
      if (has(question, "option-" + k)) names.push("option-" + k);
    }
    if (!missing && !extra) { show(question, ["explanation"], "right"); return; }
    if (missing && !names.length) names.push("missing");
    if (!names.length) names = wrongTexts(question, ["hint"]);
    show(question, names, "wrong");
  }

  // numeric: the number (or shape) in the answer box, graded within the tolerance and
  // echoed in the page's format; unreadable, a message and no verdict.
  function answerNumber(question) {
    var q = question.data, num = question.quiz.num, text = question.input.value;
    var value = q.shape ? parseShape(text) : readNumber(num, text);
    if (q.shape ? value === null : !isFinite(value)) { unreadable(question); return; }
    question.input.removeAttribute("aria-invalid");
    question.given = text;
    var echo = q.shape ? "" :
      C.fill(question.quiz.strings.you_typed, { value: num.general(value) });
    if (isRightValue(q, value)) show(question, ["explanation"], "right", echo);
    else show(question, wrongTexts(question, ["hint"]), "wrong", echo);
  }

  // Whether a shape is the key's, or a number within the key's tolerance.
  function isRightValue(q, value) {
    if (q.shape) {
      return value.length === q.value.length && value.every(function (v, k) {
        return v === q.value[k];
      });
    }
    var slack = 1e-9 * Math.max(1, Math.abs(q.value));
    return Math.abs(value - q.value) <= q.tolerance + slack;
  }

  // An answer that is not a number (or shape): say so, with an example; no verdict.
  function unreadable(question) {
    var q = question.data, strings = question.quiz.strings;
    question.input.setAttribute("aria-invalid", "true");
    question.element.removeAttribute("data-verdict");
    var example = q.shape ? "(2, 3, 4)" : question.quiz.num.general(0.25);
    question.verdictLine.textContent = C.fill(q.shape ? strings.not_shape : strings.not_number,
      { example: example });
    question.verdictLine.className = "tc-verdict tc-invalid";
    question.explanation.hidden = true;
    score(question.quiz);
  }

  // A saved answer (the text typed, or the options chosen), answered again.
  function restoreAnswer(question, answer) {
    var kind = question.data.kind, options = question.options;
    if (kind === "numeric") {
      if (typeof answer !== "string") return;
      question.input.value = answer;
      answerNumber(question);
      return;
    }
    if (!Array.isArray(answer) || !answer.every(function (k) { return k < options.length; })) {
      return;
    }
    if (kind !== "multiple") { if (answer.length === 1) answerOne(question, answer[0]); return; }
    options.forEach(function (option, k) {
      option.setAttribute("aria-pressed", answer.indexOf(k) >= 0 ? "true" : "false");
    });
    answerMany(question);
  }

  // No answer, no verdict, no text shown.
  function clear(question) {
    question.element.removeAttribute("data-verdict");
    question.verdictLine.textContent = "";
    question.verdictLine.className = "tc-verdict";
    question.explanation.hidden = true;
    question.whys.forEach(function (why) { why.hidden = true; });
    mark(question, [], null);
    if (!question.input) return;
    question.input.value = "";
    question.input.removeAttribute("aria-invalid");
  }
})();
