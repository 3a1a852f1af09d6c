/* Quiz progress kept in the reader's own browser (transformer_course.quiz, the book's home).
 *
 * Each chapter's quiz remembers the reader's last answer to each of its questions in
 * localStorage (one entry, "tc-course-progress"; no server, no cookie), so that a reload
 * brings the answers, verdicts and score back. The book's home page lists the chapters as
 * done (every question answered) or not, with their scores, and a button clears it all.
 * A chapter is the page's file name ("04_multi_head_attention"), whatever its language, so
 * that a reader who switches language keeps their progress. Where the page is no chapter
 * of the book (Colab, Jupyter, a deck) nothing is stored. An entry that is not what this
 * file wrote (edited by hand, another version) is ignored and removed, never thrown.
 *
 *   chapterOf(location)          the chapter of a page, or null
 *   answers(chapter, total)      {index: {answer, verdict}} remembered for that quiz
 *   record(chapter, total, index, answer, verdict), forget(chapter), clear()
 *   summary(chapter)             {total, answered, right, done} or null
 *   mountTable(root)             fills a .tc-progress table of the home page
 */
(function () {
  "use strict";
  var VERSION = 1, KEY = "tc-course-progress";
  if (window.TcProgress && window.TcProgress.version >= VERSION) return;
  window.TcProgress = {
    version: VERSION, chapterOf: chapterOf, answers: answers, record: record,
    forget: forget, clear: clear, summary: summary, mountTable: mountTable
  };
  window.TcCommon.booter(".tc-progress", mountTable)(document.currentScript || null);

  // --- the stored entry ----------------------------------------------------------------------

  function store() {
    try { return window.localStorage || null; } catch (error) { return null; }
  }

  function validAnswer(saved) {
    if (!saved || typeof saved !== "object") return false;
    if (saved.verdict !== "right" && saved.verdict !== "wrong") return false;
    var a = saved.answer;
    return typeof a === "string" ||
      (Array.isArray(a) && a.every(function (i) { return i === (i | 0) && i >= 0; }));
  }

  function validChapter(entry) {
    if (!entry || typeof entry !== "object" || !(entry.total >= 1)) return false;
    if (!entry.answers || typeof entry.answers !== "object") return false;
    return Object.keys(entry.answers).every(function (k) {
      return /^\d+$/.test(k) && Number(k) < entry.total && validAnswer(entry.answers[k]);
    });
  }

  function load() {
    var s = store(), data = null;
    if (!s) return { version: VERSION, chapters: {} };
    try { data = JSON.parse(s.getItem(KEY) || "null"); } catch (error) { data = undefined; }
    var ok = data && data.version === VERSION && data.chapters &&
      typeof data.chapters === "object" && !Array.isArray(data.chapters) &&
      Object.keys(data.chapters).every(function (c) { return validChapter(data.chapters[c]); });
    if (ok) return data;
    if (data !== null) { try { s.removeItem(KEY); } catch (error) { /* private mode */ } }
    return { version: VERSION, chapters: {} };
  }

  function save(data) {
    var s = store();
    if (!s) return;
    try { s.setItem(KEY, JSON.stringify(data)); } catch (error) { /* full or private */ }
  }

  // --- chapters ------------------------------------------------------------------------------

  function chapterOf(where) {
    var path = String((where && where.pathname) || "");
    if (/\/slides\//.test(path)) return null;
    var match = /\/(\d\d_[a-z0-9_]+)\.html$/.exec(path);
    return match ? match[1] : null;
  }

  function answers(chapter, total) {
    var entry = load().chapters[chapter];
    return entry && entry.total === total ? entry.answers : {};
  }

  function record(chapter, total, index, answer, verdict) {
    if (!chapter || !validAnswer({ answer: answer, verdict: verdict })) return;
    var data = load(), entry = data.chapters[chapter];
    if (!entry || entry.total !== total) entry = data.chapters[chapter] = { total: total, answers: {} };
    entry.answers[String(index)] = { answer: answer, verdict: verdict };
    save(data);
  }

  function forget(chapter) {
    var data = load();
    delete data.chapters[chapter];
    save(data);
  }

  function clear() {
    var s = store();
    if (s) { try { s.removeItem(KEY); } catch (error) { /* private mode */ } }
  }

  function summary(chapter) {
    var entry = load().chapters[chapter];
    if (!entry) return null;
    var keys = Object.keys(entry.answers), right = keys.filter(function (k) {
      return entry.answers[k].verdict === "right";
    }).length;
    return { total: entry.total, answered: keys.length, right: right,
             done: keys.length === entry.total };
  }

  // --- the home page's table -----------------------------------------------------------------

  function statusCell(root, chapter) {
    var words = root.dataset, s = summary(chapter), fill = window.TcCommon.fill;
    if (!s) return { text: words.none, state: "none" };
    var score = fill(words.score, { right: s.right, total: s.total });
    if (s.done) return { text: words.done + " · " + score, state: "done" };
    return { text: fill(words.partial, { answered: s.answered, total: s.total }) + " · " + score,
             state: "partial" };
  }

  function paint(root) {
    root.querySelectorAll("[data-chapter]").forEach(function (row) {
      var cell = row.querySelector(".tc-progress-status"), status = statusCell(root, row.dataset.chapter);
      cell.textContent = status.text;
      row.setAttribute("data-state", status.state);
    });
  }

  function mountTable(root) {
    if (!root || root.hasAttribute("data-tc-mounted")) return;
    root.setAttribute("data-tc-mounted", "");
    var reset = root.querySelector(".tc-progress-reset");
    if (reset) {
      reset.hidden = false;
      reset.addEventListener("click", function () {
        clear();
        paint(root);
        var said = root.querySelector(".tc-progress-said");
        if (said) said.textContent = root.dataset.cleared;
      });
    }
    paint(root);
    window.addEventListener("storage", function () { paint(root); });
  }
})();
