"""The teacher's kit and the student's copy in the site: links to decks and PDFs, progress.

* Every chapter page's download menu offers the chapter's deck, the deck's PDF and the book's
  PDF (instead of the theme's "print this page"); every other page offers the book's PDF.
  The decks and PDFs are written after Sphinx (tools/build_decks.py, tools/build_pdfs.py).
* ``{teaching-links} NN_name`` (the teacher's guide): the chapter's deck, the deck's PDF,
  the notebook and its Colab link, in the page's language.
* ``{course-progress}`` (the home page): the reader's quiz progress, chapter by chapter
  (``transformer_course.reader.quiz.progress_table``), with its reset button.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WORDS = {
    "en": {"deck": "Deck", "deck_pdf": "Deck (PDF)", "book_pdf": "The book (PDF)",
           "notebook": "Notebook", "colab": "Open in Colab",
           "deck_tip": "This chapter's slides, for a lecture",
           "deck_pdf_tip": "This chapter's slides as a PDF, one page per slide",
           "book_pdf_tip": "The whole book as a PDF",
           "links": "Teaching material of chapter {n}"},
    "fr": {"deck": "Diapositives", "deck_pdf": "Diapositives (PDF)",
           "book_pdf": "Le livre (PDF)", "notebook": "Notebook", "colab": "Ouvrir dans Colab",
           "deck_tip": "Les diapositives de ce chapitre, pour un cours",
           "deck_pdf_tip": "Les diapositives de ce chapitre en PDF, une page par diapositive",
           "book_pdf_tip": "Le livre entier en PDF",
           "links": "Supports du chapitre {n}"},
    "it": {"deck": "Diapositive", "deck_pdf": "Diapositive (PDF)",
           "book_pdf": "Il libro (PDF)", "notebook": "Notebook", "colab": "Aprite in Colab",
           "deck_tip": "Le diapositive di questo capitolo, per una lezione",
           "deck_pdf_tip": "Le diapositive di questo capitolo in PDF, una pagina per diapositiva",
           "book_pdf_tip": "L’intero libro in PDF",
           "links": "Materiali del capitolo {n}"},
}
CHAPTER = re.compile(r"^\d\d_[a-z0-9_]+$")


def words(language: str | None) -> dict[str, str]:
    return WORDS.get(language or "en", WORDS["en"])


def _download_menu(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree: object) -> None:
    """The theme's download menu: the deck and its PDF on a chapter, the book's PDF."""
    say = words(app.config.language)
    up = "../" * pagename.count("/")
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        buttons = [b for b in group["buttons"] if b.get("label") != "download-pdf-button"]
        if CHAPTER.match(pagename):
            buttons += [
                {"type": "link", "url": f"{up}slides/{pagename}.html", "text": say["deck"],
                 "tooltip": say["deck_tip"], "icon": "fas fa-chalkboard",
                 "label": "download-deck-button"},
                {"type": "link", "url": f"{up}slides/{pagename}.pdf", "text": say["deck_pdf"],
                 "tooltip": say["deck_pdf_tip"], "icon": "fas fa-file-pdf",
                 "label": "download-deck-pdf-button"},
            ]
        buttons.append({"type": "link", "url": f"{up}book.pdf", "text": say["book_pdf"],
                        "tooltip": say["book_pdf_tip"], "icon": "fas fa-file-pdf",
                        "label": "download-book-pdf-button"})
        group["buttons"] = buttons


def _chapter_title(srcdir: Path, name: str) -> str:
    """A chapter's title as its notebook's first heading gives it ("1. Attention: ...")."""
    notebook = json.loads((srcdir / f"{name}.ipynb").read_text(encoding="utf-8"))
    source = notebook["cells"][0]["source"]
    first = ("".join(source) if isinstance(source, list) else source).lstrip().splitlines()[0]
    return re.sub(r"[*_`]", "", first.lstrip("# ").strip())


class TeachingLinks(SphinxDirective):
    """``{teaching-links} NN_name``: a chapter's deck, deck PDF, notebook and Colab link."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        import html

        name = self.arguments[0]
        srcdir = Path(self.env.srcdir)
        if not CHAPTER.match(name) or not (srcdir / f"{name}.ipynb").exists():
            raise self.error(f"teaching-links: {name!r} is not a chapter of this book")
        say = words(self.env.config.language)
        repo = self.env.config.html_theme_options.get("repository_url", "").rstrip("/")
        branch = self.env.config.html_theme_options.get("repository_branch", "main")
        book = self.env.config.html_theme_options.get("path_to_docs", "")
        colab = (f"https://colab.research.google.com/github/{repo.split('github.com/')[-1]}"
                 f"/blob/{branch}/{book.strip('/')}/{name}.ipynb")
        links = [(f"slides/{name}.html", say["deck"]), (f"slides/{name}.pdf", say["deck_pdf"]),
                 (f"_sources/{name}.ipynb", say["notebook"]), (colab, say["colab"])]
        label = say["links"].format(n=int(name[:2]))
        items = " · ".join(f'<a href="{html.escape(href)}">{html.escape(text)}</a>'
                           for href, text in links)
        markup = (f'<p class="tc-teaching-links" role="navigation" '
                  f'aria-label="{html.escape(label)}">{items}</p>')
        return [nodes.raw("", markup, format="html")]


class CourseProgress(SphinxDirective):
    """``{course-progress}``: the reader's quiz progress per chapter (the home page)."""

    def run(self) -> list[nodes.Node]:
        import yaml

        from transformer_course.reader import quiz

        srcdir = Path(self.env.srcdir)
        toc = yaml.safe_load(Path(self.env.config.external_toc_path).read_text(encoding="utf-8"))
        names = [e["file"] for e in toc["chapters"] if CHAPTER.match(e["file"])]
        chapters = [(name, _chapter_title(srcdir, name)) for name in names]
        html = quiz.progress_table(chapters, language=self.env.config.language or "en")
        return [nodes.raw("", html, format="html")]


def setup(app: Sphinx) -> dict:
    app.add_directive("teaching-links", TeachingLinks)
    app.add_directive("course-progress", CourseProgress)
    app.connect("html-page-context", _download_menu, priority=510)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
