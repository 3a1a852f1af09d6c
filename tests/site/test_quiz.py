"""The quiz component's Python side: building questions, bad input, the page it writes, the
reader's number formats, and every numeric key of the built chapters recomputed."""

from __future__ import annotations

import html as html_module
import json
import math
import os
import re
from pathlib import Path

import pytest
import torch

import transformer_course as tc
from transformer_course import quiz as q

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = re.compile(r"\d\d_.*\.html")


def sample(lang: str = "en") -> q.Quiz:
    """One question of each kind (texts in English whatever the UI language)."""
    tc.set_language(lang)
    quiz = q.Quiz()
    quiz.single("Which β gives uniform attention?", ["$\\beta \\to 0$", "$\\beta \\to \\infty$"],
                answer=0, explanation="Every $e^{\\beta s}$ is 1.", href="#the-two-limits-of",
                section="2.4", feedback={1: "That is hard attention."})
    quiz.multiple("Which are true?", ["a", "b", "c"], answers=[0, 2], explanation="a and c.",
                  href="#x", feedback={1: "b is false.", 2: "c is true."})
    quiz.numeric("Weight?", key="tc.soft_argmax(torch.tensor([1.0, 2.0, 3.0]), beta=2.0)[2]",
                 tolerance=0.005, decimals=2, explanation="It is {answer}.", href="#x",
                 hint="Take the softmax.")
    quiz.numeric("Shape?", key="tuple(tc.split_heads(torch.zeros(2, 10, 512), 8).shape)",
                 explanation="It is {answer}.", href="#x")
    quiz.picture("Causal?", [tc.causal_mask(4).float(), torch.ones(4, 4) / 4], answer=0,
                 explanation="The lower triangle.", href="#x", tokens=list("abcd"))
    tc.set_language("en")
    return quiz


def test_the_submodule_loads_lazily_and_builds_every_kind():
    quiz = sample()
    assert [question.kind for question in quiz.questions] == [
        "single", "multiple", "numeric", "numeric", "picture"]
    assert "quiz" in dir(tc) and tc.quiz is q
    assert "5 questions" in repr(quiz)


def test_numeric_keys_are_computed_now_by_the_package():
    quiz = sample()
    weight, shape = quiz.questions[2].value, quiz.questions[3].value
    expected = torch.softmax(torch.tensor([2.0, 4.0, 6.0]), -1)[2].item()
    assert weight == pytest.approx(expected, rel=1e-6)
    assert shape == [2, 8, 10, 64]


def test_evaluate_key_kinds_and_seeded_randomness():
    assert q.evaluate_key("math.sqrt(64)") == 8.0
    assert q.evaluate_key("torch.Size([3, 7])") == [3, 7]
    assert q.evaluate_key("torch.randn(1)") == q.evaluate_key("torch.randn(1)")
    state = torch.random.get_rng_state()
    q.evaluate_key("torch.randn(3).sum()")
    assert torch.equal(state, torch.random.get_rng_state())  # the global generator is untouched


@pytest.mark.parametrize("key, error, words", [
    (3, TypeError, "key must be a str"),
    ("", ValueError, "must not be empty"),
    ("tc.soft_argmax(", ValueError, "not a Python expression"),
    ("tc.no_such_function()", ValueError, "failed"),
    ("float('nan')", ValueError, "not a finite number"),
    ("math.inf", ValueError, "not a finite number"),
    ("torch.ones(3)", TypeError, "one real number"),
    ("'text'", TypeError, "number or a shape"),
    ("True", TypeError, "number or a shape"),
    ("(2, 3.5)", TypeError, "shape"),
])
def test_bad_keys_are_named(key, error, words):
    with pytest.raises(error, match=words):
        q.evaluate_key(key)


def test_bad_questions_raise_errors_naming_the_argument():
    quiz = q.Quiz()
    common = {"explanation": "e", "href": "#x"}
    cases = [
        (lambda: quiz.single("t", ["a", "b"], answer=2, **common), ValueError, "answer=2"),
        (lambda: quiz.single("t", ["a", "b"], answer="0", **common), TypeError, "answer"),
        (lambda: quiz.single("t", ["a"], answer=0, **common), ValueError, "options"),
        (lambda: quiz.single("t", ["a", "a"], answer=0, **common), ValueError, "differ"),
        (lambda: quiz.single("t", "ab", answer=0, **common), TypeError, "options"),
        (lambda: quiz.single("", ["a", "b"], answer=0, **common), ValueError, "text"),
        (lambda: quiz.single("$x", ["a", "b"], answer=0, **common), ValueError, r"\$"),
        (lambda: quiz.single("t", ["a", "b"], answer=0, explanation="e", href="section 2"),
         ValueError, "href"),
        (lambda: quiz.single("t", ["a", "b"], answer=0, explanation="e",
                             href="https://example.org"), ValueError, "href"),
        (lambda: quiz.single("t", ["a", "b"], answer=0, feedback={5: "x"}, **common),
         ValueError, "feedback"),
        (lambda: quiz.multiple("t", ["a", "b"], answers=[], **common), ValueError,
         "no right option|at least one right"),
        (lambda: quiz.multiple("t", ["a", "b"], answers=[0, 1], **common), ValueError,
         "wrong option"),
        (lambda: quiz.multiple("t", ["a", "b", "c"], answers=[0, 0], **common), ValueError,
         "repeated"),
        (lambda: quiz.numeric("t", key="0.25", tolerance=-0.1, **common), ValueError,
         "tolerance"),
        (lambda: quiz.numeric("t", key="0.25", tolerance=float("nan"), **common), ValueError,
         "tolerance"),
        (lambda: quiz.numeric("t", key="0.25", **common), ValueError, "tolerance > 0"),
        (lambda: quiz.numeric("t", key="(2, 3)", tolerance=1, **common), ValueError,
         "tolerance must be 0 for a shape"),
        (lambda: quiz.numeric("t", key="0.6652", tolerance=0.001, decimals=2, **common),
         ValueError, "outside the tolerance"),
        (lambda: quiz.numeric("t", key="1/0", tolerance=0.1, **common), ValueError, "failed"),
        (lambda: quiz.picture("t", [torch.ones(3)], answer=0, **common), ValueError,
         "2 to 8"),
        (lambda: quiz.picture("t", [torch.ones(3), torch.zeros(2, 2)], answer=0, **common),
         ValueError, "2-D"),
        (lambda: quiz.picture("t", [torch.ones(2, 2), -torch.ones(2, 2)], answer=0, **common),
         ValueError, ">= 0"),
        (lambda: quiz.picture("t", [torch.ones(2, 2), torch.ones(2, 2)], answer=0, **common),
         ValueError, "same map"),
        (lambda: quiz.picture("t", [torch.ones(20, 20), torch.zeros(2, 2)], answer=0,
                              **common), ValueError, "rows and columns"),
        (lambda: quiz.picture("t", [torch.eye(2), torch.ones(2, 2)], answer=0,
                              tokens=["a"], **common), ValueError, "tokens"),
    ]
    for make, error, words in cases:
        with pytest.raises(error, match=words):
            make()
    assert quiz.questions == []  # nothing half-added
    with pytest.raises(ValueError, match="no question"):
        quiz.html()
    with pytest.raises(ValueError, match="language"):
        q.Quiz(language="de")
    with pytest.raises(ValueError, match="kind must be one of"):
        quiz._common("essay", "t", "e", "#x", None)


def test_the_page_follows_the_contract_and_records_keys():
    html = sample().html()
    assert html.startswith('<div class="tc-quiz"')
    kinds = re.findall(r'class="tc-question" data-kind="(\w+)"', html)
    assert kinds == ["single", "multiple", "numeric", "numeric", "picture"]
    assert html.count('class="tc-option"') == 2 + 3 + 2
    assert html.count('<input class="tc-answer"') == 2
    assert html.count('class="tc-check"') == 3  # the multiple question and two numbers
    assert html.count('class="tc-explanation" hidden') == 5
    assert "<svg" in html and "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    [data] = q.read_quizzes(html)
    numeric = [d for d in data["questions"] if d["kind"] == "numeric"]
    assert numeric[0]["key"] == "tc.soft_argmax(torch.tensor([1.0, 2.0, 3.0]), beta=2.0)[2]"
    assert numeric[1] == {"kind": "numeric", "href": "#x", "key": numeric[1]["key"],
                          "value": [2, 8, 10, 64], "tolerance": 0.0, "shape": True}
    assert data["questions"][0]["answers"] == [0] and data["questions"][1]["answers"] == [0, 2]


def test_texts_keep_maths_readable_without_mathjax():
    html = q._markup("$\\frac{1}{\\sqrt{d_k}}$, $\\boldsymbol{X}^\\top x_i$ and `a < b`")
    assert "1/√d<sub>k</sub>" in html
    assert "<b>X</b><sup>⊤</sup>x<sub>i</sub>" in html
    assert 'data-tex="\\frac{1}{\\sqrt{d_k}}"' in html and "<code>a &lt; b</code>" in html
    assert q._markup("<script>") == "&lt;script&gt;"
    assert q._markup("**bold** and *it*") == "<strong>bold</strong> and <em>it</em>"


def test_an_option_with_a_formula_is_named_by_its_reading():
    """The book draws formulas at build time, and a drawn formula names no button: in an
    option, each formula is an image named by its Unicode reading, and the button is named by
    its content (which holds its visible text, WCAG 2.5.3), never by an aria-label."""
    quiz = q.Quiz(language="en")
    options = ["$\\boldsymbol{x}_3$", "The mean of $\\beta \\to 0$ and `tc.attention`",
               "**None** of them"]
    quiz.single("Which one? $x$", options,
                answer=0, explanation="Because $y$.", href="#a")
    page = quiz.html()
    buttons = re.findall(r'<button type="button" class="tc-option".*?</button>', page, re.S)
    assert len(buttons) == 3
    assert all("aria-label" not in b.split(">", 1)[0] for b in buttons), buttons
    assert 'data-tex="\\boldsymbol{x}_3" role="img" aria-label="x3">' in buttons[0]
    assert 'role="img" aria-label="β→0">' in buttons[1]
    assert "<code>tc.attention</code>" in buttons[1]
    assert "aria-label" not in buttons[2]
    assert page.count('role="img"') == 2  # the question's and the explanation's maths: none


@pytest.mark.parametrize("lang, decimal, answer", [
    ("en", ".", "0.87"), ("fr", ",", "0,87"), ("it", ",", "0,87")])
def test_numbers_and_texts_follow_the_language(lang, decimal, answer):
    html = sample(lang).html()
    [data] = q.read_quizzes(html)
    assert data["language"] == lang and data["numbers"]["decimal"] == decimal
    assert f"It is {answer}." in html  # {answer} in the reader's format
    assert f"± 0{decimal}005" in html
    assert f'lang="{lang}"' in html


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_no_english_from_the_package_on_french_and_italian_quizzes(lang):
    html = sample(lang).html()
    [data] = q.read_quizzes(html)
    english = [q.Quiz(language="en")._strings()[k] for k in data["strings"]]
    assert not set(data["strings"].values()) & set(english)
    shown = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    for message in ("Pick one answer.", "Check", "Start again", "Score:", "a number",
                    "Read section", "Accepted within", "This quiz runs JavaScript"):
        assert message not in shown, message
    assert "picture A" not in shown  # the pictures' names too


def test_a_quiz_keeps_its_language_after_set_language():
    quiz = sample("fr")
    tc.set_language("it")
    try:
        assert "Vérifier" in quiz.html() and "Verifica" not in quiz.html()
        assert tc.get_language() == "it"
    finally:
        tc.set_language("en")


def test_save_writes_a_standalone_page(tmp_path):
    path = sample("it").save(tmp_path / "quiz.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and '<html lang="it">' in page
    assert len(q.read_quizzes(page)) == 1
    assert len(page.encode()) < 60_000


def test_picture_svg_is_light_and_scaled():
    svg = q.picture_svg(torch.tensor([[0.0, 1.0], [0.5, 0.5]]), ["a", "b"], label="A")
    assert svg.count("<rect") == 4 + 1 and 'aria-label="A"' in svg
    assert "#ffffff" in svg and "#084594" in svg  # 0 is white, 1 the darkest blue
    assert len(svg) < 2_000


# --- every numeric key of the built chapters, evaluated again ----------------------------------

def quiz_site(site_fixture_request) -> Path:
    """The built site, or the folder in $TC_QUIZ_SITE laid out like it
    (``en/NN_name.html``...)."""
    folder = os.environ.get("TC_QUIZ_SITE")
    return Path(folder) if folder else site_fixture_request.getfixturevalue("site")


def recompute(key: str):
    """The key evaluated independently of the package's own evaluate_key."""
    value = eval(key, {"tc": tc, "torch": torch, "math": math})
    if isinstance(value, torch.Tensor):
        return value.item()
    if isinstance(value, (tuple, list, torch.Size)):
        return [int(v) for v in value]
    return float(value)


def test_every_numeric_key_of_every_chapter_page_is_recomputed(request):
    site = quiz_site(request)
    pages = sorted(p for lang in ("en", "fr", "it") for p in (site / lang).glob("*.html")
                   if CHAPTER.fullmatch(p.name))
    assert pages, f"no chapter page under {site}"
    checked = 0
    for page in pages:
        quizzes = q.read_quizzes(page.read_text(encoding="utf-8"))
        assert quizzes, f"{page.relative_to(site)} has no quiz"
        for data in quizzes:
            assert 6 <= len(data["questions"]) <= 10, page.name
            for question in data["questions"]:
                if question["kind"] != "numeric":
                    continue
                again = recompute(question["key"])
                if question["shape"]:
                    assert again == question["value"], (page.name, question["key"])
                else:
                    assert again == pytest.approx(question["value"], rel=1e-6, abs=1e-9), (
                        page.name, question["key"])
                    assert question["tolerance"] < max(abs(again), 1e-3), question["key"]
                checked += 1
    assert checked >= len(pages)  # at least one numeric question per chapter page
    print(json.dumps({"pages": len(pages), "keys": checked}))


def test_the_answer_inside_maths_reads_the_same_without_mathjax():
    from transformer_course.quiz import _markup, _with_answer

    html = _markup(_with_answer(r"$2 \times 0.5 = {answer}$, so {answer}.", "1,5"))
    assert 'data-tex="2 \\times 0.5 = 1{,}5"' in html
    assert "answer" not in html and html.count("1,5") == 2


def test_the_progress_table_lists_the_chapters_in_the_reader_s_language():
    html = tc.quiz.progress_table([("01_attention", "1. L’attention"), ("02_self_attention",
                                                                       "2. Auto-attention")],
                                  language="fr")
    assert html.count("data-chapter=") == 2 and 'href="01_attention.html"' in html
    assert 'lang="fr"' in html and "Pas commencé" in html and "TcProgress" in html
    assert "Not started" not in html and "Clear my progress" not in html


@pytest.mark.parametrize("chapters, words", [
    ([], "non-empty list"), ("01_attention", "non-empty list"),
    ([("Attention", "1. Attention")], "file name"), ([("01_attention", " ")], "file name"),
    ([["01_attention", "1. Attention"]], "file name"),
])
def test_the_progress_table_names_bad_chapters(chapters, words):
    with pytest.raises(ValueError, match=words):
        tc.quiz.progress_table(chapters)
    with pytest.raises(ValueError, match="language"):
        tc.quiz.progress_table([("01_attention", "1. Attention")], language="de")


@pytest.mark.parametrize(("lang", "names"), [
    ("en", ["picture A. Row “a”: “b” 100%. Row “b”: “a” 50%, “b” 50%.",
            "picture B. Row “a”: “a”, “b”. Row “b”: nothing."]),
    ("fr", ["image A. Ligne «\u00a0a\u00a0»\u00a0: «\u00a0b\u00a0» 100\u00a0%. "
            "Ligne «\u00a0b\u00a0»\u00a0: «\u00a0a\u00a0» 50\u00a0%, «\u00a0b\u00a0» 50\u00a0%.",
            "image B. Ligne «\u00a0a\u00a0»\u00a0: «\u00a0a\u00a0», «\u00a0b\u00a0». "
            "Ligne «\u00a0b\u00a0»\u00a0: rien."]),
    ("it", ["immagine A. Riga «a»: «b» 100%. Riga «b»: «a» 50%, «b» 50%.",
            "immagine B. Riga «a»: «a», «b». Riga «b»: niente."]),
])
def test_a_picture_option_says_what_it_shows_to_a_screen_reader(lang, names):
    """A picture's name ("picture A") alone leaves a blind reader nothing to answer with
    (issue 30): each option names every row's keys and weights, a mask its keys."""
    quiz = q.Quiz(language=lang)
    quiz.picture("Which map?", [torch.tensor([[0.0, 1.0], [0.5, 0.5]]),
                                torch.tensor([[1.0, 1.0], [0.0, 0.0]])], 0, tokens=["a", "b"],
                 explanation="The first.", href="#maps")
    html = quiz.html()
    labels = [html_module.unescape(label) for label in re.findall(r'<svg class="tc-picture"[^>]*'
                                                                  r'aria-label="([^"]*)"', html)]
    assert labels == names
