"""The book's PDF per language (`make book`, tools/build_pdfs.py): a bookmark per chapter,
a table of contents whose page numbers are the bookmarks', page numbers on every page, the
figures, no raw LaTeX, the quizzes' keys in an appendix, the language's own prose, and a
size a student can download. The teacher's guide and the links to the decks and PDFs."""

from __future__ import annotations

import html
import re
import unicodedata
from functools import cache
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
CHAPTERS = [e["file"] for e in TOC["chapters"] if re.match(r"\d\d_", e["file"])]
SIZE_LIMIT = 25_000_000
# Maths that MathJax did not typeset would print as its TeX.
RAW_TEX = re.compile(r"\\(boldsymbol|mathbf|frac|sqrt|operatorname|mathcal|lVert|rVert)\b")
# Short words of each language, none of them a word of the other two.
OWN = {"en": ("the", "which", "this"), "fr": ("les", "des", "est"),
       "it": ("della", "sono", "gli")}


def title(site: Path, lang: str, name: str) -> str:
    """A page's title as the built page shows it (the language's typography applied)."""
    page = (site / lang / f"{name}.html").read_text(encoding="utf-8")
    heading = re.search(r'<article class="bd-article".*?<h1>(.*?)<a class="headerlink"', page,
                        re.S).group(1)
    # (a bookmark writes a no-break space as a space)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", heading))).strip()


def printed_pages() -> list[str]:
    return [TOC["root"]] + [e["file"] for e in TOC["chapters"] if e["file"] != "teachers"]


@cache
def book(site: Path, lang: str) -> PdfReader:
    return PdfReader(str(site / lang / "book.pdf"))


@cache
def texts(site: Path, lang: str) -> tuple[str, ...]:
    return tuple(page.extract_text() or "" for page in book(site, lang).pages)


def words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.lower())


@pytest.mark.parametrize("lang", LANGS)
def test_a_bookmark_per_chapter_and_a_contents_page_that_agrees(site, lang):
    reader = book(site, lang)
    top = [(o.title, reader.get_destination_page_number(o)) for o in reader.outline
           if not isinstance(o, list)]
    titles = [t for t, _ in top]
    for name in CHAPTERS:
        assert title(site, lang, name) in titles, (lang, name, titles)
    labels = reader.page_labels
    assert labels[:2] == ["i", "ii"] and labels[2] == "1"
    contents = unicodedata.normalize("NFKC", texts(site, lang)[1])  # ligatures: ﬁ is fi
    for name in CHAPTERS:
        heading = title(site, lang, name)
        at = labels[dict(top)[heading]]
        line = re.search(re.escape(heading[:25]) + r".*?(\d+)\s*$", contents, re.M | re.S)
        assert line and line.group(1) == at, (lang, heading, at)


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_of_the_body_shows_its_number(site, lang):
    reader, pages = book(site, lang), texts(site, lang)
    for index in range(2, len(pages)):
        label = reader.page_labels[index]
        last = pages[index].strip().splitlines()[-1].strip()
        assert last == label, (lang, index, last, label)


@pytest.mark.parametrize("lang", LANGS)
def test_the_maths_is_typeset_and_the_figures_are_there(site, lang):
    text = "\n".join(texts(site, lang))
    found = RAW_TEX.findall(text)
    assert not found, (lang, found[:5])
    figures = {src for name in printed_pages() for src in re.findall(
        r'<img[^>]*src="(_images/[^"]+)"', (site / lang / f"{name}.html").read_text("utf-8"))}
    images = sum(len(page.images) for page in book(site, lang).pages)
    assert len(figures) >= 30 and images >= len(figures), (lang, images, len(figures))


@pytest.mark.parametrize("lang", LANGS)
def test_the_prose_is_in_the_book_s_language_and_the_quiz_keys_close_it(site, lang):
    reader = book(site, lang)
    counts = {other: sum(words("\n".join(texts(site, lang))).count(w) for w in OWN[other])
              for other in LANGS}
    assert counts[lang] > 5 * max(v for k, v in counts.items() if k != lang), counts
    last = [o for o in reader.outline if not isinstance(o, list)][-1]
    assert last.title == {"en": "Quiz answers", "fr": "Réponses des quiz",
                          "it": "Soluzioni dei quiz"}[lang]
    keys = "\n".join(texts(site, lang)[reader.get_destination_page_number(last):])
    assert len(re.findall(r"^\s*1\. [A-H0-9(]", keys, re.M)) >= len(CHAPTERS) - 1


@pytest.mark.parametrize("lang", LANGS)
def test_the_book_pdf_is_small_enough_to_download(site, lang):
    size = (site / lang / "book.pdf").stat().st_size
    assert 100_000 < size < SIZE_LIMIT, size


# --- links ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_the_teacher_s_guide_links_every_deck_pdf_notebook_and_colab(site, lang):
    page = (site / lang / "teachers.html").read_text(encoding="utf-8")
    hrefs = set(re.findall(r'href="([^"]+)"', page))
    for name in CHAPTERS:
        for href in (f"slides/{name}.html", f"slides/{name}.pdf", f"_sources/{name}.ipynb"):
            assert href in hrefs, (lang, href)
            assert (site / lang / href).exists(), (lang, href)
        colab = ("https://colab.research.google.com/github/attention-transformers-course/"
                 f"attention-transformers/blob/main/book/{lang}/{name}.ipynb")
        assert colab in hrefs, (lang, colab)
    assert "book.pdf" in hrefs


@pytest.mark.parametrize("lang", LANGS)
def test_each_chapter_links_its_deck_its_pdf_and_the_book(site, lang):
    for name in CHAPTERS:
        page = (site / lang / f"{name}.html").read_text(encoding="utf-8")
        for href in (f"slides/{name}.html", f"slides/{name}.pdf", "book.pdf"):
            assert f'href="{href}"' in page, (lang, name, href)
        assert "window.print()" not in page
    home = (site / lang / "index.html").read_text(encoding="utf-8")
    assert 'href="book.pdf"' in home and 'class="tc-progress"' in home
