"""The chapters' decks: marks in the notebooks (the same in the three languages), the builder's
messages for malformed marks, and the decks and their PDFs that `make book` wrote, opened in
Chromium with the network cut: enough slides, speaker notes, maths typeset, keyboard
navigation, no page error, axe-core's WCAG A and AA rules (auditing.py), explorers that compute
what PyTorch computes, a small transfer."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import build_decks  # noqa: E402

LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
CHAPTERS = build_decks.chapters()
DECK_LIMIT = 2_000_000  # bytes a deck transfers on first load
RAW_TEX = re.compile(r"\\(frac|sqrt|boldsymbol|mathrm|text|sum|top|beta|left|right)\b|\$")
EXPLORERS = {"02_self_attention": "beta", "04_multi_head_attention": "heads",
             "05_masks": "masks", "10_language_models": "lm"}


def notebook(lang: str, name: str) -> dict:
    return json.loads((ROOT / "book" / lang / f"{name}.ipynb").read_text(encoding="utf-8"))


def marks(lang: str, name: str) -> list[tuple]:
    """What a deck's structure depends on, language aside: marked cells and their kinds."""
    out = []
    for cell in notebook(lang, name)["cells"]:
        show = cell.get("metadata", {}).get("slideshow")
        if show:
            deck = cell["metadata"].get("deck", {})
            out.append((cell["id"], show.get("slide_type"), deck.get("code", False),
                        tuple(deck.get("questions", ())), sorted(deck)))
    return out


# --- the marks, in the repository ----------------------------------------------------------------

@pytest.mark.parametrize("name", CHAPTERS)
def test_the_three_languages_mark_the_same_cells(name):
    english = marks("en", name)
    assert sum(kind == "slide" for _, kind, *_ in english) >= build_decks.MIN_SLIDES - 1
    for lang in LANGS:
        assert marks(lang, name) == english, f"{lang}/{name}: not the marks of en/{name}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_every_deck_has_notes_a_formula_a_picture_and_a_quiz_question(lang, name):
    cells = notebook(lang, name)["cells"]
    marked = [c for c in cells if c.get("metadata", {}).get("slideshow")]
    slides = [c for c in marked if c["metadata"]["slideshow"]["slide_type"] == "slide"]
    assert all(c["metadata"]["deck"]["notes"].strip() for c in slides)
    texts = " ".join(c["metadata"].get("deck", {}).get("text", "") for c in marked)
    assert "$" in texts, f"{lang}/{name}: no formula on any slide"
    assert any(c["cell_type"] == "code" and "questions" not in c["metadata"].get("deck", {})
               for c in marked), f"{lang}/{name}: no figure, diagram or explorer"
    assert any("questions" in c["metadata"].get("deck", {}) for c in marked)
    for c in marked:
        assert "remove-cell" not in c.get("metadata", {}).get("tags", []), c["id"]


@pytest.mark.parametrize("name", [n for n in CHAPTERS if n in EXPLORERS])
def test_the_chapter_s_explorer_is_on_a_slide(name):
    for cell in notebook("en", name)["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and ("_explorer()" in source
                                            or "widgets.lm_explorer" in source
                                            or "explorer = widgets" in source):
            if cell.get("metadata", {}).get("slideshow"):
                return
    pytest.fail(f"{name}: the explorer's cell is not on a slide")


# --- bad marks -----------------------------------------------------------------------------------

def _cells():
    return notebook("en", "05_masks")["cells"]


@pytest.mark.parametrize("change, words", [
    (lambda m: m.update(slideshow={"slide_type": "sliide"}), "slideshow.slide_type"),
    (lambda m: m.update(slideshow="slide"), "slideshow.slide_type"),
    (lambda m: m["deck"].pop("notes"), "deck.title and deck.notes"),
    (lambda m: m["deck"].update(colour="red"), "keys among"),
    (lambda m: m["deck"].update(title=""), "deck.title must be a non-empty string"),
    (lambda m: m["deck"].update(questions=[0]), "deck.questions"),
    (lambda m: m.pop("slideshow"), "'deck' metadata without a slideshow.slide_type"),
])
def test_a_malformed_mark_names_the_chapter_and_the_cell(change, words):
    cells = _cells()
    index = next(i for i, c in enumerate(cells)
                 if c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "slide")
    broken = copy.deepcopy(cells)
    change(broken[index]["metadata"])
    with pytest.raises(build_decks.DeckError) as error:
        for i, cell in enumerate(broken):
            build_decks._check_marks(f"en/05_masks.ipynb, cell {i} (id {cell['id']})", cell)
    assert f"en/05_masks.ipynb, cell {index} (id {cells[index]['id']})" in str(error.value)
    assert words in str(error.value)


def test_too_few_slides_and_a_missing_quiz_question_are_errors():
    cells = _cells()
    printed = [{"output_type": "stream", "name": "stdout", "text": "0.5\n"}]
    run = [dict(c, outputs=printed) if c["cell_type"] == "code" else c for c in cells]
    few = copy.deepcopy(cells)
    for cell in few[5:]:
        cell.get("metadata", {}).pop("slideshow", None)
        cell.get("metadata", {}).pop("deck", None)
    with pytest.raises(build_decks.DeckError, match="fewer than 8"):
        build_decks.chapter_slides("en", "05_masks", 5, few, run, build_decks.Maths())
    quiz = '<div class="tc-question" data-kind="single" data-index="0"></div>'
    with pytest.raises(build_decks.DeckError, match="no question 3"):
        build_decks._quiz_html("en/05_masks.ipynb, cell 9", quiz, [3])


def test_a_formula_mathjax_cannot_read_fails_with_its_text():
    maths = build_decks.Maths()
    page = build_decks.markdown(r"An $\frac{1}{$ that never closes", maths)
    with pytest.raises(build_decks.DeckError, match="cannot typeset"):
        maths.typeset({"x": page}, "en decks")


def test_formulas_become_svg_with_mathml_for_screen_readers():
    maths = build_decks.Maths()
    page = build_decks.markdown(r"Soft: $a \geq 0$ and $$\sum_i a_i = 1$$", maths)
    out = maths.typeset({"x": "<head></head>" + page}, "en decks")["x"]
    assert out.count("<svg") == 2 and "mjx-assistive-mml" in out and "$" not in out
    assert 'id="MJX-SVG-styles"' in out


# --- the built decks -----------------------------------------------------------------------------

def slides_of(site, lang: str, name: str) -> list[str]:
    page = (site / lang / "slides" / f"{name}.html").read_text(encoding="utf-8")
    return re.findall(r"<section class=\"deck-\w+\" data-slide=\"\d+\">(.*?)</section>", page,
                      re.S)


def visible(fragment: str) -> str:
    """A slide's text outside code, scripts, styles, maths and notes."""
    fragment = re.sub(r"<(script|style|pre|code|aside|svg|mjx-container|math)\b.*?</\1>", " ",
                      fragment, flags=re.S)
    return re.sub(r"<[^>]+>", " ", fragment)


@pytest.mark.parametrize("lang", LANGS)
def test_every_chapter_has_a_deck_with_enough_slides_and_a_pdf_of_one_page_each(site, lang):
    for name in CHAPTERS:
        slides = slides_of(site, lang, name)
        assert len(slides) >= build_decks.MIN_SLIDES, (lang, name, len(slides))
        pdf = PdfReader(str(site / lang / "slides" / f"{name}.pdf"))
        assert len(pdf.pages) == len(slides), (lang, name)
        box = pdf.pages[0].mediabox
        assert float(box.width) / float(box.height) == pytest.approx(16 / 9, rel=0.01)


@pytest.mark.parametrize("lang", LANGS)
def test_no_slide_is_empty_or_shows_raw_latex_and_every_slide_has_notes(site, lang):
    for name in CHAPTERS:
        for i, slide in enumerate(slides_of(site, lang, name), start=1):
            body, _, notes = slide.partition('<aside class="notes">')
            text = visible(body)
            assert re.sub(r"\s+", "", text) or "<img" in body or "<svg" in body, (name, i)
            assert not RAW_TEX.search(text), (lang, name, i, RAW_TEX.search(text))
            assert re.sub(r"<[^>]+>|\s", "", notes), (lang, name, i, "no speaker notes")


@pytest.mark.parametrize("lang", LANGS)
def test_a_deck_transfers_at_most_2_mb_and_its_folder_needs_nothing_outside(site, lang):
    folder = site / lang / "slides"
    for name in CHAPTERS:
        page = (folder / f"{name}.html").read_text(encoding="utf-8")
        refs = set(re.findall(r'(?:src|href)="([^"#:?]+)"', page))
        local = {r for r in refs if not r.startswith("../")}
        assert refs - local <= {f"../{name}.html"}, refs - local  # only the chapter's link
        size = len(page.encode("utf-8")) + sum((folder / r).stat().st_size for r in local)
        assert size <= DECK_LIMIT, (lang, name, size)
        assert "http://" not in page.replace("http://www.w3.org", "")
        assert re.search(r'<[^>]+(?:src|href)="https://', page) is None


def _open_deck(visit, lang: str, name: str):
    v = visit(f"{lang}/slides/{name}.html")
    v.page.wait_for_function("document.documentElement.getAttribute('data-tc-deck-ready')",
                             timeout=90_000)  # a machine busy with other builds is slow
    return v


def _go_to(v, selector: str) -> int:
    index = v.page.evaluate(
        "s => Reveal.getSlides().findIndex(x => x.querySelector(s))", selector)
    assert index >= 0, selector
    v.page.evaluate("i => Reveal.slide(i)", index)
    return index


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_a_deck_opens_offline_and_moves_with_the_keyboard(visit, lang, name):
    from auditing import assert_accessible

    v = _open_deck(visit, lang, name)
    page = v.page
    assert_accessible(page, f"{lang}/slides/{name}")  # the whole deck, on its first slide
    assert page.evaluate("Reveal.getConfig().width / Reveal.getConfig().height") == \
        pytest.approx(16 / 9, rel=1e-3)
    total = page.evaluate("Reveal.getTotalSlides()")
    assert total >= build_decks.MIN_SLIDES
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("Reveal.getIndices().h") >= 1
    page.keyboard.press("End")
    assert page.evaluate("Reveal.getIndices().h") == total - 1
    labels = page.eval_on_selector_all(".reveal .controls button",
                                       "bs => bs.map(b => b.getAttribute('aria-label'))")
    if lang != "en":
        assert not any(label and "slide" in label for label in labels), labels
    assert page.evaluate("Reveal.getSlideNotes(Reveal.getSlides()[1])").strip()
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)
    assert v.console == [], f"{lang}/slides/{name}: the console shows {v.console}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", [n for n in EXPLORERS if EXPLORERS[n] != "lm"])
def test_a_deck_s_explorer_computes_what_pytorch_computes(visit, plain_texts, lang, name):
    import transformer_course as tc
    from test_explorers_browser import CHAPTERS as PAGES
    from test_explorers_browser import Driver, drive

    kind, _, make = PAGES[name]
    v = _open_deck(visit, lang, name)
    _go_to(v, ".tc-explorer")
    root = v.page.locator(".tc-explorer").first
    assert root.get_attribute("data-kind") == kind and root.get_attribute("data-state")
    tc.set_language(root.get_attribute("lang"))
    drive(Driver(v, make(), root, lang=root.get_attribute("lang")), kind)
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


@pytest.mark.parametrize("lang", LANGS)
def test_the_language_model_in_chapter_10_s_deck_runs_as_pytorch_does(visit, lang):
    from lm_pages import LMDriver

    v = _open_deck(visit, lang, "10_language_models")
    _go_to(v, ".tc-explorer[data-kind='lm']")
    d = LMDriver(v, v.page.locator(".tc-explorer[data-kind='lm']").first)
    d.check(steps=0)
    d.start("")
    d.step(3)
    d.write()
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


@pytest.mark.parametrize("lang", LANGS)
def test_a_deck_s_quiz_question_grades_itself(visit, lang):
    v = _open_deck(visit, lang, "05_masks")
    _go_to(v, ".tc-quiz")
    shown = v.page.locator(".deck-quiz .tc-question:not([hidden])")
    assert 1 <= shown.count() <= 2
    question = shown.first
    question.locator(".tc-option").first.click()
    assert question.get_attribute("data-verdict") in ("right", "wrong")
    assert v.real_errors == []


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_the_speaker_view_speaks_the_deck_s_language(visit, lang):
    v = _open_deck(visit, lang, "05_masks")
    v.page.keyboard.press("ArrowRight")
    with v.page.expect_popup(timeout=90_000) as opened:
        v.page.keyboard.press("s")
    view = opened.value
    view.wait_for_function("document.querySelector('.speaker-controls-notes .value')"
                           " && document.querySelector('.speaker-controls-notes .value')"
                           ".textContent.trim().length > 0", timeout=90_000)
    assert view.evaluate("document.documentElement.lang") == lang
    text = view.inner_text("body")
    for english in ("Upcoming", "Click to Reset", "Loading speaker view", "Pacing", "Layout"):
        assert english not in text, (lang, english)
    shown = " ".join(view.inner_text(".speaker-controls-notes .value").split())
    written = v.page.evaluate("(() => { const d = document.createElement('div');"
                              " d.innerHTML = Reveal.getSlideNotes(Reveal.getCurrentSlide());"
                              " return d.textContent; })()")
    assert shown and shown == " ".join(written.split())
    view.close()
