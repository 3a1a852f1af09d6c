"""The book's PDF per language (`make book`, tools/build_pdfs.py): a bookmark per chapter,
a table of contents whose page numbers are the bookmarks', page numbers on every page, the
figures, no raw LaTeX, the quizzes' keys in an appendix, the language's own prose, and a
size a student can download. The teacher's guide and the links to the decks and PDFs."""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

import pypdfium2 as pdfium
import pytest
import yaml
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[2]
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


def page_texts(path: Path) -> list[str]:
    """Each page's text, read by PDFium (pypdf took about 30 s a book, PDFium 1 s)."""
    document = pdfium.PdfDocument(str(path))
    try:
        return [document[i].get_textpage().get_text_bounded().replace("\r\n", "\n")
                for i in range(len(document))]
    finally:
        document.close()


def words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.lower())


def image_count(reader: PdfReader) -> int:
    """The pictures the pages draw, counted from their resources (not decoded)."""
    count = 0
    for page in reader.pages:
        objects = page.get("/Resources", {}).get("/XObject", {})
        count += sum(objects[name].get_object().get("/Subtype") == "/Image" for name in objects)
    return count


def check_contents(site: Path, lang: str, reader: PdfReader, pages: list[str]) -> None:
    """A bookmark per chapter, and a table of contents whose numbers are the bookmarks'."""
    top = [(o.title, reader.get_destination_page_number(o)) for o in reader.outline
           if not isinstance(o, list)]
    titles = [t for t, _ in top]
    labels = reader.page_labels
    assert labels[:2] == ["i", "ii"] and labels[2] == "1", labels[:3]
    contents = unicodedata.normalize("NFKC", pages[1])  # ligatures: ﬁ is fi
    for name in CHAPTERS:
        heading = title(site, lang, name)
        assert heading in titles, (lang, name, titles)
        at = labels[dict(top)[heading]]
        line = re.search(re.escape(heading[:25]) + r".*?(\d+)\s*$", contents, re.M | re.S)
        assert line and line.group(1) == at, (lang, heading, at)


# One test per language: each book is read once and every check runs on it.
@pytest.mark.parametrize("lang", LANGS)
def test_the_book_pdf_has_its_contents_numbers_maths_figures_language_and_keys(site, lang):
    reader = PdfReader(str(site / lang / "book.pdf"))
    pages = page_texts(site / lang / "book.pdf")
    assert len(pages) == len(reader.pages)
    check_contents(site, lang, reader, pages)
    # every page of the body shows its number, at its foot
    for index in range(2, len(pages)):
        last = pages[index].strip().splitlines()[-1].strip()
        assert last == reader.page_labels[index], (lang, index, last)
    # the maths typeset, the figures there
    text = "\n".join(pages)
    assert not RAW_TEX.findall(text), (lang, RAW_TEX.findall(text)[:5])
    figures = {src for name in printed_pages() for src in re.findall(
        r'<img[^>]*src="(_images/[^"]+)"', (site / lang / f"{name}.html").read_text("utf-8"))}
    assert len(figures) >= 30 and image_count(reader) >= len(figures), (lang, len(figures))
    # the book's own language, and the quizzes' keys last
    counts = {other: sum(words(text).count(w) for w in OWN[other]) for other in LANGS}
    assert counts[lang] > 5 * max(v for k, v in counts.items() if k != lang), counts
    last = [o for o in reader.outline if not isinstance(o, list)][-1]
    assert last.title == {"en": "Quiz answers", "fr": "Réponses des quiz",
                          "it": "Soluzioni dei quiz"}[lang]
    keys = "\n".join(pages[reader.get_destination_page_number(last):])
    assert len(re.findall(r"^\s*1\. [A-H0-9(]", keys, re.M)) >= len(CHAPTERS) - 1
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
