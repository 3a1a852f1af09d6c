"""Each language's typography on the built pages: French no-break spaces and guillemets,
apostrophes that stay apostrophes next to markup, decimal commas in French and Italian."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))

from coursebook_typography import FrenchSpacing, french_spacing  # noqa: E402

from pages import prose  # noqa: E402

NARROW, NBSP = "\u202f", "\u00a0"
PAGES = sorted(p.stem for p in (ROOT / "book" / "en").iterdir() if p.suffix in (".md", ".ipynb"))


def test_french_spacing_rules():
    assert french_spacing("Pourquoi ? Parce que.") == f"Pourquoi{NARROW}? Parce que."
    assert french_spacing("Oui! Non; peut-être?") == f"Oui{NARROW}! Non{NARROW}; peut-être{NARROW}?"
    assert french_spacing("Remarque : voici") == f"Remarque{NBSP}: voici"
    assert french_spacing("Remarque: voici") == f"Remarque{NBSP}: voici"
    assert french_spacing(": la suite", before="**Note**") == f"{NBSP}: la suite"
    assert french_spacing("un « mot » et un «mot»") == (
        f"un «{NBSP}mot{NBSP}» et un «{NBSP}mot{NBSP}»")
    assert french_spacing("une “citation” ici") == f"une «{NBSP}citation{NBSP}» ici"
    for untouched in ("https://example.org", "à 10:30", "x=1;y=2", "a?b", "déjà vu"):
        assert french_spacing(untouched) == untouched


@pytest.mark.parametrize("page", PAGES)
def test_french_pages_have_their_spaces_and_guillemets(site, page):
    text = prose(site / "fr" / f"{page}.html")
    bad = []
    for match in re.finditer(r"[;!?:](?=\s|$)", text):
        wanted = NBSP if match.group() == ":" else NARROW
        if text[match.start() - 1:match.start()] != wanted:
            bad.append(text[max(0, match.start() - 30):match.end() + 5])
    bad += [text[max(0, m.start() - 30):m.end() + 30] for m in
            re.finditer(rf"«(?!{NBSP})|(?<!{NBSP})»", text)]
    bad += [text[max(0, m.start() - 30):m.end() + 30] for m in re.finditer(r"[“”]", text)]
    assert bad == [], f"fr/{page}: {bad[:5]}"


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_apostrophes_stay_apostrophes_next_to_markup(site, lang):
    for page in PAGES:
        html = (site / lang / f"{page}.html").read_text(encoding="utf-8")
        glued = re.findall(r"[^\W\d_][”“]<", html) + re.findall(r"[^\W\d_][”“][^\W\d_]", html)
        assert glued == [], f"{lang}/{page}: a quote mark where an apostrophe belongs: {glued[:5]}"
        text = prose(site / lang / f"{page}.html")
        assert re.search(r"[^\W\d_]'[^\W\d_]", text) is None, f"{lang}/{page}: ASCII apostrophe"


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_decimal_numbers_use_a_comma(site, lang):
    for page in PAGES:
        text = prose(site / lang / f"{page}.html")
        # 0.5 or 3.14 in prose (section numbers such as 7.5 have one digit after the dot;
        # software versions such as Python 3.11 are not decimal numbers)
        found = [m.group() for m in re.finditer(
                     r"(?<![\w.§/])(?:0\.\d+|\d+\.\d{2,})(?![\w.])", text)
                 if not re.search(r"(?i)(python|torch|version|ipywidgets|v)\s*$",
                                  text[max(0, m.start() - 12):m.start()])
                 # Italian groups thousands with a point: 30.522 is thirty thousand
                 and not (lang == "it" and re.fullmatch(r"[1-9]\d{0,2}(\.\d{3})+", m.group()))]
        assert found == [], f"{lang}/{page}: decimal points in the prose: {found[:5]}"


def test_french_spacing_replaces_a_line_break_before_the_mark():
    assert french_spacing("une question\n: la suite") == f"une question{NBSP}: la suite"
    assert french_spacing("vraiment\n?") == f"vraiment{NARROW}?"


def test_french_spacing_across_a_soft_line_break_node():
    """MyST gives a soft line break its own Text node: "question", "\\n", ": la suite"."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    document = new_document("page", get_default_settings(Parser))
    paragraph = nodes.paragraph()
    for piece in ["une question", "\n", ": la suite et des réels", "\n", "; puis", " 10:30"]:
        paragraph += nodes.Text(piece)
    document += paragraph

    class French(FrenchSpacing):
        config = type("Config", (), {"language": "fr"})()

    transform = French.__new__(French)
    transform.document = document
    transform.apply()
    assert paragraph.astext() == (f"une question{NBSP}: la suite et des réels{NARROW}; puis 10:30")


def _french(pieces):
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    document = new_document("page", get_default_settings(Parser))
    paragraph = nodes.paragraph()
    for piece in pieces:
        paragraph += nodes.raw("", piece, format="html") if piece.startswith("<") \
            else nodes.Text(piece)
    document += paragraph

    class French(FrenchSpacing):
        config = type("Config", (), {"language": "fr"})()

    transform = French.__new__(French)
    transform.document = document
    transform.apply()
    return paragraph.astext()


def test_the_break_before_a_mark_is_the_one_replaced_not_an_earlier_one():
    """Text nodes compare as strings: replacing the second "\\n" must not replace the first
    (the page showed « les textes quele modèle »)."""
    pieces = ["les textes que", "\n", "le modèle lit, et la question", "\n", ": le modèle"]
    assert _french(pieces) == f"les textes que\nle modèle lit, et la question{NBSP}: le modèle"


def test_an_english_passage_keeps_its_own_typography():
    assert _french(["Devlin et al., ", '<span lang="en">', "BERT: Pre-training?",
                    "</span>", ", puis : la suite"]) == (
        f'Devlin et al., <span lang="en">BERT: Pre-training?</span>, puis{NBSP}: la suite')
