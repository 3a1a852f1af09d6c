#!/usr/bin/env python3
"""PDFs of the course: every deck (one page per slide) and the whole book, per language.

Both are printed by Chromium (Debian's, through Playwright), from the pages the build wrote,
so that a PDF shows exactly what the site shows: the executed outputs, the maths as the build
typeset it, the figures, and the explorers, diagrams and bertviz views in their first state
as pictures. Chromium was chosen over Sphinx's LaTeX builder because it prints the HTML
outputs (explorers, diagrams, quizzes) as they are, needs no TeX installation (about 1 GB
of Debian packages) and prints a language's book in about a minute (README, "PDFs").

* ``_build/html/<lang>/slides/<NN_name>.pdf``: reveal.js's print view (``?print-pdf``),
  16:9, one page per slide; the number of pages is checked against the number of slides.
* ``_build/html/<lang>/book.pdf``: a title page and a table of contents with page numbers,
  then the home page, the ten chapters, the glossary and the references, and an appendix
  with the quizzes' keys. Chromium writes the bookmarks (one per heading) and the page
  numbers; the contents' numbers are read from the printed body's bookmarks (pypdf), so
  they cannot be wrong. The questions of a quiz print as questions; their keys are in the
  appendix.

A PDF that fails to print, or a deck whose page count differs from its slides, stops the
build with a message naming the file.

Usage: python tools/build_pdfs.py [LANG ...] [--decks-only | --book-only]
"""

from __future__ import annotations

import argparse
import html
import io
import re
import sys
import time
from pathlib import Path

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, TextStringObject

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "src"))

WORDS = {
    "en": {"contents": "Contents", "keys": "Quiz answers", "chapter": "Chapter {n}",
           "home": "Welcome", "subtitle": "An interactive course, in print",
           "printed": "Printed from the course's web pages, with every output of their run."},
    "fr": {"contents": "Table des matières", "keys": "Réponses des quiz",
           "chapter": "Chapitre {n}", "home": "Accueil",
           "subtitle": "Un cours interactif, imprimé",
           "printed": "Imprimé à partir des pages web du cours, avec tous les résultats de "
                      "leur exécution."},
    "it": {"contents": "Indice", "keys": "Soluzioni dei quiz", "chapter": "Capitolo {n}",
           "home": "Benvenuti", "subtitle": "Un corso interattivo, stampato",
           "printed": "Stampato dalle pagine web del corso, con tutti i risultati della loro "
                      "esecuzione."},
}

PRINT_CSS = """
@page { size: A4; margin: 16mm 15mm 18mm; }
html, body { background: #fff !important; }
body { font-size: 10.5pt; hyphens: auto; }
.tc-print-part { break-before: page; }
.tc-print-part:first-child { break-before: auto; }
.headerlink, .tc-quiz-footer, .tc-q-how, .tc-quiz-note, .tc-check, .tc-answer,
  .toggle-details__summary, .cell_input .copybtn, button.copybtn, .tc-lang-switch,
  .tc-explanation, .tc-tolerance, .tc-progress { display: none !important; }
details, details > * { display: block !important; }
details > summary { display: none !important; }
div.cell_output, .cell_input, figure, img, .tc-explorer, .tc-diagram, .tc-question,
  mjx-container[display="true"] { break-inside: avoid; }
pre { white-space: pre-wrap !important; word-break: break-word; }
img { max-width: 100% !important; height: auto !important; }
.tc-question:not([data-kind="picture"]) .tc-options { counter-reset: tc-option; }
.tc-question:not([data-kind="picture"]) .tc-option::before {
  counter-increment: tc-option; content: counter(tc-option, upper-alpha) ". "; font-weight: 700; }
.tc-keys li { margin: 0 0 0.4em; }
.tc-keys .tc-key { font-weight: 700; }
h1 { font-size: 22pt; }
"""

FRONT_CSS = """
@page { size: A4; margin: 0; }
body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.page { position: relative; width: 210mm; height: 297mm; box-sizing: border-box;
  padding: 30mm 22mm; break-after: page; overflow: hidden; }
.page:last-child { break-after: auto; }
.number { position: absolute; bottom: 9mm; left: 0; right: 0; text-align: center;
  font-size: 9pt; color: #333; }
h1 { font-size: 30pt; margin: 60mm 0 8mm; color: #10305c; }
.subtitle { font-size: 15pt; color: #44546a; }
.printed { font-size: 10pt; color: #44546a; margin-top: 20mm; }
h2 { font-size: 20pt; color: #10305c; margin: 0 0 10mm; }
ol { list-style: none; padding: 0; margin: 0; font-size: 12pt; }
li { display: flex; align-items: baseline; margin: 0 0 4mm; }
li .title { flex: 0 1 auto; }
li .dots { flex: 1 1 auto; border-bottom: 1px dotted #666; margin: 0 3mm; }
li .at { flex: 0 0 auto; }
"""

FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#333;">'
          '<span class="pageNumber"></span></div>')


class PdfError(RuntimeError):
    """A PDF that could not be printed, named."""


def launch(playwright):
    from find_browser import ARGS, candidates

    path = candidates()[0]  # $TC_CHROMIUM, Debian's chromium, else Playwright's own
    options = {"executable_path": path} if path else {}
    return playwright.chromium.launch(args=ARGS, **options)


# How long Chromium may take to open, lay out or print a page. The book's whole text is one
# page: on a loaded machine (load 16 on two cores) its load alone passed Playwright's
# default of 30 s; a build must not fail for being slow, only a page that never loads does.
PATIENCE_MS = 900_000


def offline(page) -> None:
    """Any request outside the built site fails the print (the PDF must not need it); and
    the page waits as long as a busy machine needs (PATIENCE_MS)."""
    page.set_default_timeout(PATIENCE_MS)
    page.set_default_navigation_timeout(PATIENCE_MS)
    blocked: list[str] = []

    def handle(route):
        url = route.request.url
        if url.startswith(("file://", "data:", "blob:", "about:")):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    page.route("**/*", handle)
    page.blocked = blocked  # type: ignore[attr-defined]


def print_decks(browser, lang: str) -> list[tuple[str, int, int]]:
    """Every deck of ``lang`` to PDF; return (deck, slides, bytes) for each."""
    folder = SITE / lang / "slides"
    decks = sorted(folder.glob("[0-9][0-9]_*.html"))
    if not decks:
        raise PdfError(f"no deck in {folder}: build the decks first (make slides)")
    out = []
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    offline(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    for deck in decks:
        page.goto(deck.as_uri() + "?print-pdf")
        page.wait_for_function("document.documentElement.getAttribute('data-tc-deck-pdf')")
        _start_all(page, errors, str(deck))
        slides = page.evaluate("document.querySelectorAll('.reveal .slides section').length")
        target = deck.with_suffix(".pdf")
        page.pdf(path=str(target), prefer_css_page_size=True, print_background=True)
        pages = len(PdfReader(str(target)).pages)
        if errors or page.blocked:
            raise PdfError(f"{deck}: page errors {errors} or blocked requests {page.blocked}")
        if pages != slides:
            raise PdfError(f"{target}: {pages} pages for {slides} slides")
        out.append((deck.stem, slides, target.stat().st_size))
    page.close()
    return out


# --- the book -----------------------------------------------------------------------------------

_ARTICLE = re.compile(r'<article class="bd-article"[^>]*>(.*?)</article>', re.S)
_HEAD_LINK = re.compile(r'<link [^>]*rel="stylesheet"[^>]*>')


def pages_in_order() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"]] + [e["file"] for e in toc["chapters"] if e["file"] != "teachers"]


def _article(lang: str, name: str) -> str:
    text = (SITE / lang / f"{name}.html").read_text(encoding="utf-8")
    match = _ARTICLE.search(text)
    if not match:
        raise PdfError(f"{lang}/{name}.html: no article to print")
    # The site loads its pictures as they near the screen (coursebook_lean); print loads all.
    body = match.group(1).replace(' loading="lazy"', "")
    # Links to another page of the book go to that part of the PDF.
    body = re.sub(r'href="([0-9a-z_]+)\.html(?:#[^"]*)?"',
                  lambda m: f'href="#tc-part-{m.group(1)}"', body)
    return body


def _head(lang: str, first: str) -> str:
    text = (SITE / lang / f"{first}.html").read_text(encoding="utf-8")
    head = text.split("</head>", 1)[0]
    return "\n".join(_HEAD_LINK.findall(head))  # the maths are typeset already


def _quiz_keys(lang: str, names: list[str]) -> str:
    from transformer_course import i18n
    from transformer_course.reader import quiz

    words = WORDS[lang]
    previous = i18n.get_language()
    i18n.set_language(lang)
    try:
        blocks = []
        for number, name in enumerate(names, start=1):
            page = (SITE / lang / f"{name}.html").read_text(encoding="utf-8")
            found = quiz.read_quizzes(page)
            whys = re.findall(r'<p class="tc-why" data-why="explanation" hidden>(.*?)</p>',
                              page, re.S)
            items = []
            for q_index, q in enumerate(q for data in found for q in data["questions"]):
                if q["kind"] == "numeric":
                    value = q["value"]
                    key = ("(" + ", ".join(str(v) for v in value) + ")"
                           if isinstance(value, list)
                           else i18n.format_number(float(f"{value:.6g}")))
                else:
                    key = ", ".join("ABCDEFGH"[a] for a in q["answers"])
                why = whys[q_index] if q_index < len(whys) else ""
                items.append(f'<li><span class="tc-key">{q_index + 1}. '
                             f"{html.escape(key)}</span> {why}</li>")
            if items:
                heading = html.escape(words["chapter"].format(n=number))
                blocks.append(f"<h2>{heading}</h2><ol class=\"tc-keys\" "
                              f'style="list-style:none;padding:0">{"".join(items)}</ol>')
    finally:
        i18n.set_language(previous)
    return "".join(blocks)


def book_html(lang: str) -> str:
    names = pages_in_order()
    chapters = [n for n in names if re.match(r"\d\d_", n)]
    parts = [f'<section class="tc-print-part" id="tc-part-{name}">{_article(lang, name)}'
             f"</section>" for name in names]
    keys = (f'<section class="tc-print-part" id="tc-part-keys"><h1>'
            f'{html.escape(WORDS[lang]["keys"])}</h1>{_quiz_keys(lang, chapters)}</section>')
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
            f"<title>book</title>{_head(lang, chapters[0])}<style>{PRINT_CSS}</style></head>"
            f'<body class="tc-print"><main class="bd-main"><div class="bd-article-container">'
            f'{"".join(parts)}{keys}</div></main></body></html>')


# Each view's state, until every one is drawn ("drawn") or one shows the reader an error.
_VIEWS_STATE = """() => {
  const views = [...document.querySelectorAll('.tc-bertviz')];
  const models = [...document.querySelectorAll(".tc-explorer[data-kind='lm']")];
  const alert = models.map(m => m.querySelector('[role=alert]')).find(a => a);
  if (alert) return 'a language model says: ' + alert.textContent;
  return views.every(v => v.querySelector('svg'))
    && models.every(m => m.hasAttribute('data-state')) && 'drawn';
}"""


def _start_all(page, errors: list[str], what: str) -> None:
    """Start what waits to come near the screen (bertviz's views: viz.py; the language
    model: TcCommon.whenNear) and wait until each is drawn, so that it prints in its first
    state. A page error or a view's error stops the print at once, named, rather than
    waiting out PATIENCE_MS for a view that will never draw."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate("document.dispatchEvent(new Event('tc:start-all'))")
    deadline = time.monotonic() + PATIENCE_MS / 1000
    while True:
        try:
            state = page.wait_for_function(_VIEWS_STATE, timeout=2000).json_value()
        except PlaywrightTimeout:
            state = None
        if state == "drawn":
            return
        if state or errors:
            raise PdfError(f"{what}: a view cannot be drawn: {state or errors}")
        if time.monotonic() > deadline:
            raise PdfError(f"{what}: views not drawn after {PATIENCE_MS // 1000} s")


def _fonts_ready(page) -> None:
    """Wait for the web fonts (the text's and MathJax's glyphs) before printing."""
    page.evaluate("async () => { await document.fonts.ready; }")


# The headings as a reader reads them: maths as its MathML's text, no "#" link.
HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
  .filter(h => h.getClientRects().length)
  .map(h => {
    const c = h.cloneNode(true);
    c.querySelectorAll('mjx-container').forEach(m => {
      const mml = m.querySelector('mjx-assistive-mml');
      m.replaceWith(mml ? mml.textContent : '');
    });
    c.querySelectorAll('.headerlink').forEach(a => a.remove());
    return c.textContent.replace(/\\s+/g, ' ').trim();
  })"""


def _bookmarks(reader: PdfReader, titles: list[str]) -> list[tuple[int, str, int]]:
    """(depth, title, page index) of each of Chromium's bookmarks, in order, titled with the
    page's own headings: Chromium's titles repeat some headings' text twice and lose the
    space at a line break ("keys andvalues"); the bookmarks are the headings, in order."""
    found: list[tuple[int, int]] = []

    def walk(items: list, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                found.append((depth, reader.get_destination_page_number(item)))

    walk(reader.outline, 0)
    if len(found) != len(titles):
        raise PdfError(f"{len(found)} bookmarks for {len(titles)} headings")
    return [(depth, title, at) for (depth, at), title in zip(found, titles, strict=True)]


def front_matter(lang: str, title: str, entries: list[tuple[str, int]]) -> str:
    words = WORDS[lang]
    rows = "".join(f'<li><span class="title">{html.escape(t)}</span><span class="dots"></span>'
                   f'<span class="at">{n}</span></li>' for t, n in entries)
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><style>'
            f"{FRONT_CSS}</style></head><body>"
            f'<section class="page"><h1>{html.escape(title)}</h1>'
            f'<p class="subtitle">{html.escape(words["subtitle"])}</p>'
            f'<p class="printed">{html.escape(words["printed"])}</p>'
            f'<div class="number">i</div></section>'
            f'<section class="page"><h2>{html.escape(words["contents"])}</h2><ol>{rows}</ol>'
            f'<div class="number">ii</div></section></body></html>')


def print_book(browser, lang: str, title: str) -> tuple[int, int]:
    """``_build/html/<lang>/book.pdf``; return its pages and bytes."""
    source = SITE / lang / "_book_print.html"
    source.write_text(book_html(lang), encoding="utf-8")
    page = browser.new_page(viewport={"width": 900, "height": 1200})
    offline(page)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(source.as_uri())
        _start_all(page, errors, f"{lang}/book.pdf")
        _fonts_ready(page)
        body = page.pdf(format="A4", print_background=True, display_header_footer=True,
                        header_template="<span></span>", footer_template=FOOTER,
                        margin={"top": "16mm", "bottom": "18mm", "left": "15mm",
                                "right": "15mm"},
                        outline=True, tagged=True)
        if page.blocked:
            raise PdfError(f"{lang}/book.pdf: blocked requests {page.blocked}")
        reader = PdfReader(io.BytesIO(body))
        try:
            marks = _bookmarks(reader, page.evaluate(HEADINGS))
        except PdfError as error:
            raise PdfError(f"{lang}/book.pdf: {error}") from error
        entries = [(title, at + 1) for depth, title, at in marks if depth == 0]
        if not entries:
            raise PdfError(f"{lang}/book.pdf: the printed body has no bookmarks")
        page.set_content(front_matter(lang, title, entries))
        front = page.pdf(prefer_css_page_size=True, print_background=True, tagged=True)
    finally:
        page.close()
        source.unlink(missing_ok=True)
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(front)), import_outline=False)
    offset = len(writer.pages)
    writer.append(reader, import_outline=False)
    parents: list = []
    for depth, title, at in marks:
        del parents[depth:]
        parent = parents[-1] if parents else None
        parents.append(writer.add_outline_item(title=title, page_number=offset + at,
                                               parent=parent))
    writer.set_page_label(0, offset - 1, style="/r")
    writer.set_page_label(offset, len(writer.pages) - 1, style="/D", start=1)
    writer.add_metadata({"/Title": title})
    writer._root_object[NameObject("/Lang")] = TextStringObject(lang)
    writer.page_mode = "/UseOutlines"  # a reader opens it with the bookmarks shown
    target = SITE / lang / "book.pdf"
    with target.open("wb") as handle:
        writer.write(handle)
    if errors:
        print(f"note: {lang}/book.pdf: page errors while printing: {errors}", file=sys.stderr)
    return len(writer.pages), target.stat().st_size


def main(argv: list[str]) -> int:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    parser = argparse.ArgumentParser(description="Print the decks and the book to PDF.")
    parser.add_argument("langs", nargs="*", default=list(config["languages"]))
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--decks-only", action="store_true")
    only.add_argument("--book-only", action="store_true")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            for lang in args.langs:
                if not args.book_only:
                    start = time.perf_counter()
                    done = print_decks(browser, lang)
                    print(f"deck PDFs {lang} in {time.perf_counter() - start:.0f} s: "
                          + ", ".join(f"{n[:2]} {s} p" for n, s, _ in done), flush=True)
                if not args.decks_only:
                    start = time.perf_counter()
                    pages, size = print_book(browser, lang, config["languages"][lang]["title"])
                    print(f"book PDF {lang}: {pages} pages, {size / 1e6:.1f} MB in "
                          f"{time.perf_counter() - start:.0f} s", flush=True)
        except PdfError as error:
            print(f"PDF error: {error}", file=sys.stderr)
            return 1
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
