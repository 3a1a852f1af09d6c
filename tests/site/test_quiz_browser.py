"""Quizzes in headless Chromium with the network cut: for every quiz and every question, the
right answer is accepted and every wrong option rejected, each with its explanation; numbers
in the reader's format and within the tolerance; answering again replaces the verdict; a
keyboard-only pass; the score; no page error and no English from the package on French and
Italian pages.

Two settings: (a) quizzes saved by the package in each language (what Colab and Jupyter get);
(b) every chapter page of the built book in every language (each must have a quiz), or the
folder named by $TC_QUIZ_SITE laid out like it (``en/NN_name.html``, ...)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from browsing import Visit, serve
from test_quiz import sample

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.stem for p in (ROOT / "book" / "en").glob("[0-9][0-9]_*.ipynb"))
LANGS = ("en", "fr", "it")
# The package's English texts a French or Italian reader must never see in a quiz.
ENGLISH = ("Right!", "Not quite", "Try again", "Score:", "Check", "Start again",
           "Pick one answer", "Select every right answer", "Type your answer",
           "Pick the right picture", "Read section", "Accepted within", "not a number",
           "Read as", "Your answer", "right answer is not selected")


def written(value: float, decimal: str) -> str:
    text = repr(float(value))
    if "e" in text:
        text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text.replace(".", decimal)


# What a question shows: its verdict, and its explanation when visible (as Playwright's
# is_visible: a non-empty box and not visibility: hidden).
SHOWN = """q => {
  const visible = e => {
    if (!e) return false;
    const box = e.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== "hidden";
  };
  const ex = q.querySelector(".tc-explanation");
  const link = ex && ex.querySelector(".tc-link a");
  const whys = ex ? [...ex.querySelectorAll(".tc-why")].filter(visible)
    .map(w => w.innerText.trim()) : [];
  const verdict = q.querySelector(".tc-verdict");
  return {
    verdict: q.getAttribute("data-verdict"), explanation: visible(ex),
    text: visible(ex) ? ex.innerText.trim() : "",
    link: visible(link) ? link.innerText.trim() : "", whys: whys,
    verdictText: verdict ? verdict.innerText : "", all: q.innerText
  };
}"""


# A brief pass over a whole quiz, in the page: each step fires the DOM events a reader's
# click or Enter fires (the quiz's own handlers answer them), then reads what SHOWN reads.
BRIEF = """(root, steps) => {
  const shown = SHOWN;
  const questions = root.querySelectorAll(".tc-question");
  return steps.map(step => {
    const q = questions[step.q], a = step.action;
    const options = [...q.querySelectorAll(".tc-option")];
    if ("click" in a) options[a.click].click();
    if ("choose" in a) {
      options.forEach((o, i) => {
        if ((o.getAttribute("aria-pressed") === "true") !== a.choose.includes(i)) o.click();
      });
      q.querySelector(".tc-check").click();
    }
    if ("type" in a) {
      const box = q.querySelector("input.tc-answer");
      box.focus();
      box.value = a.type;
      box.dispatchEvent(new Event("input", {bubbles: true}));
      if (a.enter) box.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
      else q.querySelector(".tc-check").click();
    }
    return {...shown(q), kind: q.getAttribute("data-kind")};
  });
}""".replace("SHOWN", SHOWN)


# The answer boxes and check buttons of a question, by kind (options alone: none).
BOXES = {"numeric": [1, 1], "multiple": [0, 1]}


class QuizDriver:
    """Answers the questions of one quiz and checks what the page shows."""

    def __init__(self, visit: Visit, root):
        self.visit, self.page, self.root = visit, visit.page, root
        root.wait_for(state="attached")
        self.page.wait_for_function("e => e.hasAttribute('data-tc-mounted')",
                                    arg=root.element_handle(), timeout=20000)
        self.data = json.loads(root.locator("script.tc-quiz-data").text_content())
        self.lang = self.data["language"]
        self.decimal = self.data["numbers"]["decimal"]
        self.questions = root.locator(".tc-question")
        assert self.questions.count() == len(self.data["questions"])
        self.checked = 0

    def expect(self, question, verdict: str):
        """The verdict the page shows now, with a visible, non-empty explanation."""
        # one round trip to the page (a dozen locator calls made these tests the slowest)
        return self.check_shown(question.evaluate(SHOWN), verdict)

    def check_shown(self, state, verdict: str):
        assert state["verdict"] == verdict, state
        assert state["explanation"] and state["text"]
        assert state["link"]
        assert state["whys"] and all(state["whys"]), state["whys"]
        assert state["verdictText"].strip()
        if self.lang != "en":
            assert not [e for e in ENGLISH if e in state["all"]], state["all"]
        self.checked += 1
        return state["text"]

    def answer_options(self, question, entry):
        options = question.locator(".tc-option")
        # every option focusable (one round trip for all of them)
        assert options.evaluate_all("els => els.map(e => e.tabIndex >= 0)") == [True] * entry[
            "options"]
        if entry["kind"] == "multiple":
            self.answer_multiple(question, entry, options)
            return
        wrong = [i for i in range(entry["options"]) if i not in entry["answers"]]
        seen = set()
        for index in wrong:  # wrong options are rejected
            options.nth(index).click()
            seen.add(self.expect(question, "wrong"))
        options.nth(entry["answers"][0]).click()  # the right one replaces the verdict
        right = self.expect(question, "right")
        options.nth(wrong[0]).click()
        self.expect(question, "wrong")
        options.nth(entry["answers"][0]).click()
        assert self.expect(question, "right") == right  # the same explanation again

    def answer_multiple(self, question, entry, options):
        check = question.locator(".tc-check")

        def choose(selected):
            for index in range(entry["options"]):
                pressed = options.nth(index).get_attribute("aria-pressed") == "true"
                if pressed != (index in selected):
                    options.nth(index).click()
            check.click()

        choose(set(entry["answers"]))
        self.expect(question, "right")
        for index in range(entry["options"]):  # one option flipped: always wrong
            flipped = set(entry["answers"]) ^ {index}
            choose(flipped)
            self.expect(question, "wrong")
        choose(set())
        self.expect(question, "wrong")
        choose(set(entry["answers"]))
        self.expect(question, "right")

    def type_answer(self, question, text, *, enter=True):
        box = question.locator("input.tc-answer")
        box.fill(text)
        if enter:
            box.press("Enter")
        else:
            question.locator(".tc-check").click()

    def answer_number(self, question, entry):
        if entry["shape"]:
            shape = entry["value"]
            for text in (f"({', '.join(map(str, shape))})", " ".join(map(str, shape)),
                         f"[{'; '.join(map(str, shape))}]", " × ".join(map(str, shape))):
                self.type_answer(question, text)
                self.expect(question, "right")
            for wrong in (shape[::-1] if shape[::-1] != shape else [*shape, 1],
                          shape[:-1] or [shape[0] + 1], [*shape[:-1], shape[-1] + 1]):
                self.type_answer(question, f"({', '.join(map(str, wrong))})", enter=False)
                self.expect(question, "wrong")
        else:
            value, tol = entry["value"], entry["tolerance"]
            inside = [value, value + 0.9 * tol, value - 0.9 * tol]
            for number in inside:
                self.type_answer(question, written(number, self.decimal))
                self.expect(question, "right")
            if self.decimal == "," and not float(value).is_integer():
                # liberal where unambiguous: a point is read too
                self.type_answer(question, written(value, "."), enter=False)
                self.expect(question, "right")
            margin = max(2 * tol, 1e-3 * abs(value), 1.0 if tol == 0 else 0.0)
            outside = [value + margin, value - margin, -value if value else 1.0]
            for number in outside:
                self.type_answer(question, written(number, self.decimal), enter=False)
                self.expect(question, "wrong")
        # unreadable input: no verdict, an error message, nothing else changes
        self.type_answer(question, "abc")
        assert question.get_attribute("data-verdict") is None
        assert question.locator("input.tc-answer").get_attribute("aria-invalid") == "true"
        assert not question.locator(".tc-explanation").is_visible()
        assert question.locator(".tc-verdict").inner_text().strip()

    def brief_plan(self):
        """The steps of a brief pass, as data: (question, action, expected verdict). Each
        question is answered right and wrong once (a numeric one also with a point where the
        page writes a comma) and ends on its right answer."""
        steps = []
        for index, entry in enumerate(self.data["questions"]):
            def step(action, verdict, index=index):
                steps.append({"q": index, "action": action, "verdict": verdict})
            if entry["kind"] == "multiple":
                right = sorted(entry["answers"])
                step({"choose": right}, "right")
                step({"choose": sorted(set(right) ^ {0})}, "wrong")
                step({"choose": right}, "right")
            elif entry["kind"] in ("single", "picture"):
                wrong = [i for i in range(entry["options"]) if i not in entry["answers"]]
                step({"click": wrong[0]}, "wrong")
                step({"click": entry["answers"][0]}, "right")
            elif entry["shape"]:
                shape = entry["value"]
                for text in (f"({', '.join(map(str, shape))})", " ".join(map(str, shape)),
                             f"[{'; '.join(map(str, shape))}]", " × ".join(map(str, shape))):
                    step({"type": text, "enter": True}, "right")
                for bad in (shape[::-1] if shape[::-1] != shape else [*shape, 1],
                            shape[:-1] or [shape[0] + 1], [*shape[:-1], shape[-1] + 1]):
                    step({"type": f"({', '.join(map(str, bad))})", "enter": False}, "wrong")
                step({"type": f"({', '.join(map(str, shape))})", "enter": True}, "right")
            else:
                value, tol = entry["value"], entry["tolerance"]
                step({"type": written(value, self.decimal), "enter": True}, "right")
                if self.decimal == "," and not float(value).is_integer():
                    step({"type": written(value, "."), "enter": False}, "right")
                margin = max(2 * tol, 1e-3 * abs(value), 1.0 if tol == 0 else 0.0)
                step({"type": written(value + margin, self.decimal), "enter": False}, "wrong")
                step({"type": written(value, self.decimal), "enter": True}, "right")
        return steps

    def answer_briefly(self):
        """A brief pass in one round trip to the page: the page's own click and keydown
        handlers run (the DOM events a click or Enter fires), each verdict is read as
        ``expect`` reads it. Mouse and keyboard themselves are driven on the saved quizzes
        and by ``keyboard_pass``: here, the keys and texts of every built page."""
        steps = self.brief_plan()
        states = self.root.evaluate(BRIEF, steps)
        assert len(states) == len(steps)
        for step, state in zip(steps, states, strict=True):
            assert state["kind"] == self.data["questions"][step["q"]]["kind"]
            self.check_shown(state, step["verdict"])

    def answer_everything(self):
        for index, entry in enumerate(self.data["questions"]):
            question = self.questions.nth(index)
            # kind, no verdict yet, and a numeric question's box and button: one round trip
            assert question.evaluate(
                "q => [q.getAttribute('data-kind'), q.getAttribute('data-verdict'), "
                "q.querySelectorAll('input.tc-answer').length, "
                "q.querySelectorAll('.tc-check').length]"
            ) == [entry["kind"], None, *BOXES.get(entry["kind"], [0, 0])]
            if entry["kind"] == "numeric":
                self.answer_number(question, entry)
            else:
                self.answer_options(question, entry)

    def score(self):
        return int(self.root.get_attribute("data-score"))

    def check_score_and_reset(self):
        """After a brief pass, which ends every question on its right answer: the score is
        full, on the page too, and the reset button clears every verdict."""
        total = len(self.data["questions"])
        assert self.score() == total
        assert re.search(rf"\b{total}\s*/\s*{total}\b", self.root.locator(".tc-score").inner_text())
        self.root.locator(".tc-reset").click()
        assert self.root.evaluate(
            "q => [q.getAttribute('data-score'), "
            "q.querySelectorAll('.tc-question[data-verdict]').length]") == ["0", 0]

    def right_everywhere(self):
        """Answer every question right (by mouse), then check the score."""
        for index, entry in enumerate(self.data["questions"]):
            question = self.questions.nth(index)
            if entry["kind"] == "numeric":
                value = entry["value"]
                self.type_answer(question, f"({', '.join(map(str, value))})" if entry["shape"]
                                 else written(value, self.decimal))
            elif entry["kind"] == "multiple":
                self.answer_multiple(question, entry, question.locator(".tc-option"))
            else:
                question.locator(".tc-option").nth(entry["answers"][0]).click()
            assert question.get_attribute("data-verdict") == "right"
        total = len(self.data["questions"])
        assert self.score() == total
        assert re.search(rf"\b{total}\s*/\s*{total}\b", self.root.locator(".tc-score").inner_text())
        self.root.locator(".tc-reset").click()
        assert self.score() == 0
        assert self.root.locator(".tc-question[data-verdict]").count() == 0
        assert not self.root.locator(".tc-explanation").first.is_visible()


def keyboard_pass(driver: QuizDriver):
    """Answer the first question of each kind with the keyboard alone."""
    page, root = driver.page, driver.root
    root.evaluate("e => { e.setAttribute('tabindex', '-1'); e.focus(); }")

    def tab_to(selector_js):
        for _ in range(400):
            page.keyboard.press("Tab")
            if page.evaluate(selector_js):
                return
        raise AssertionError(f"Tab never reached {selector_js}")

    done = set()
    for index, entry in enumerate(driver.data["questions"]):
        kind = entry["kind"]
        if kind in done:
            continue
        done.add(kind)
        inside = (f"(() => {{ const q = document.activeElement.closest('.tc-question'); "
                  f"return q && q.closest('.tc-quiz') && q.getAttribute('data-index') === "
                  f"'{index}'")
        question = driver.questions.nth(index)
        if kind in ("single", "picture"):
            right = entry["answers"][0]
            tab_to(inside + f" && document.activeElement.getAttribute('data-option') === "
                            f"'{right}'; }})()")
            page.keyboard.press("Enter")
            driver.expect(question, "right")
            page.keyboard.press("Shift+Tab" if right else "Tab")
            page.keyboard.press("Space")
            driver.expect(question, "wrong")
        elif kind == "multiple":
            for option in entry["answers"]:
                tab_to(inside + f" && document.activeElement.getAttribute('data-option') === "
                                f"'{option}'; }})()")
                page.keyboard.press("Space")
            tab_to(inside + " && document.activeElement.classList.contains('tc-check'); })()")
            page.keyboard.press("Enter")
            driver.expect(question, "right")
        else:
            tab_to(inside + " && document.activeElement.classList.contains('tc-answer'); })()")
            value = entry["value"]
            page.keyboard.type(f"({', '.join(map(str, value))})" if entry["shape"]
                               else written(value, driver.decimal))
            page.keyboard.press("Enter")
            driver.expect(question, "right")


def drive_page(visit: Visit, *, lang: str, brief: bool = False, keyboard: bool = True):
    """Every quiz of the page: every path with the mouse, or (brief) the keys and texts of
    each question in one round trip; then the keyboard alone."""
    roots = visit.page.locator(".tc-quiz")
    roots.first.wait_for(state="attached", timeout=20000)
    assert roots.count() >= 1, "no quiz on the page"
    checked = 0
    for i in range(roots.count()):
        driver = QuizDriver(visit, roots.nth(i))
        assert driver.lang == lang and roots.nth(i).get_attribute("lang") == lang
        assert 1 <= len(driver.data["questions"]) <= 10
        if brief:
            driver.answer_briefly()
        else:
            driver.answer_everything()
        if brief:
            driver.check_score_and_reset()
        if keyboard:
            driver.root.locator(".tc-reset").click()
            keyboard_pass(driver)
        if not brief:
            driver.root.locator(".tc-reset").click()
            driver.right_everywhere()
        checked += driver.checked
    assert visit.blocked == [], visit.blocked
    assert visit.real_errors == [], visit.real_errors
    return checked


# --- (a) quizzes saved by the package ----------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quizzes")
    for lang in LANGS:
        sample(lang).save(folder / f"{lang}.html")
    two = sample("fr").html() + sample("fr").html()
    (folder / "two.html").write_text(f"<!DOCTYPE html><html lang='fr'><head><meta charset="
                                     f"'utf-8'></head><body>{two}</body></html>",
                                     encoding="utf-8")
    with serve(folder) as url:
        yield url, folder


@pytest.mark.parametrize("lang", LANGS)
def test_saved_quiz_grades_every_answer(browser, saved, lang):
    url, _ = saved
    visit = Visit(browser, url, f"{lang}.html")
    assert drive_page(visit, lang=lang) > 30
    visit.close()


@pytest.mark.parametrize("lang, typed, verdict", [
    ("fr", "0,87", "right"), ("fr", "0.87", "right"), ("fr", "0,8668", "right"),
    ("fr", "0,88", "wrong"), ("it", "0,87", "right"), ("en", "0.87", "right"),
    ("en", ".87", "right"), ("en", "0,87", "right"), ("it", "87/100", "right"),
    ("fr", "  0,866 ", "right"), ("en", "1,000", "wrong"),
    ("it", "0.866", "right"),  # a leading zero is never a group of thousands
])
def test_numbers_are_read_in_the_reader_format(browser, saved, lang, typed, verdict):
    url, _ = saved
    visit = Visit(browser, url, f"{lang}.html")
    driver = QuizDriver(visit, visit.page.locator(".tc-quiz"))
    question = driver.questions.nth(2)
    driver.type_answer(question, typed)
    driver.expect(question, verdict)
    assert visit.errors == [] and visit.blocked == []
    visit.close()


def test_two_quizzes_on_a_page_keep_their_own_state(browser, saved):
    url, _ = saved
    visit = Visit(browser, url, "two.html")
    roots = visit.page.locator(".tc-quiz")
    assert roots.count() == 2
    first, second = QuizDriver(visit, roots.nth(0)), QuizDriver(visit, roots.nth(1))
    first.questions.nth(0).locator(".tc-option").nth(0).click()
    assert first.score() == 1 and second.score() == 0
    assert second.questions.nth(0).get_attribute("data-verdict") is None
    assert visit.page.locator(".tc-quiz [id]").count() == 0
    assert visit.errors == [] and visit.blocked == []
    visit.close()


def test_maths_is_typeset_by_mathjax_when_the_page_has_it(browser, saved):
    """A stand-in for MathJax 3: the quiz hands its maths to MathJax.typesetPromise."""
    url, folder = saved
    html = (folder / "en.html").read_text(encoding="utf-8").replace(
        "<head>", "<head><script>window.MathJax = {version: '3.2.2', typesetPromise: "
                  "roots => { window.typeset = roots.map(r => r.className); "
                  "return Promise.resolve(); }};</script>", 1)
    (folder / "mathjax.html").write_text(html, encoding="utf-8")
    visit = Visit(browser, url, "mathjax.html")
    QuizDriver(visit, visit.page.locator(".tc-quiz"))
    assert visit.page.evaluate("window.typeset") == ["tc-quiz"]
    first = visit.page.locator(".tc-math").first
    assert first.text_content().startswith("\\(") and first.text_content().endswith("\\)")
    plain = Visit(browser, url, "en.html")  # without MathJax: the Unicode text stays
    QuizDriver(plain, plain.page.locator(".tc-quiz"))
    assert plain.page.locator(".tc-math").first.text_content() == "β→0"
    assert visit.errors == plain.errors == []
    visit.close()
    plain.close()


# --- (b) every chapter page of the built book ----------------------------------------------------

@pytest.fixture(scope="module")
def quiz_pages(request):
    folder = os.environ.get("TC_QUIZ_SITE")
    site = Path(folder) if folder else request.getfixturevalue("site")
    with serve(site) as url:
        yield url, site


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_quiz_grades_every_answer(browser, quiz_pages, lang, chapter):
    url, site = quiz_pages
    page = site / lang / f"{chapter}.html"
    assert page.exists(), f"{page} is missing"
    assert 'class="tc-quiz"' in page.read_text(encoding="utf-8"), f"{lang}/{chapter} has no quiz"
    visit = Visit(browser, url, f"{lang}/{chapter}.html")
    # every key and explanation of the page; the keyboard on one chapter per language
    assert drive_page(visit, lang=lang, brief=True, keyboard=chapter == CHAPTERS[0]) >= 6
    visit.close()
