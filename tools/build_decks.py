#!/usr/bin/env python3
"""Build a reveal.js deck per chapter and language from the chapters' own cells and marks.

A deck is a teacher's condensed chapter, written nowhere else: the marks live in the cells'
metadata of ``book/<lang>/NN_name.ipynb`` and the slides show the outputs of the notebook
the book build executed (``_build/languages/<lang>/_build/jupyter_execute/``), so that a
deck cannot drift from its chapter. The marks (README, "Decks"):

* ``slideshow.slide_type`` (Jupyter's convention, as RISE reads it): ``slide`` starts a slide,
  ``fragment`` adds to it on the next key press, ``-`` adds to it at once; a cell without a
  mark, or ``skip``, stays out of the deck;
* ``deck``: ``title`` (every slide has one), ``notes`` (the speaker notes, every slide has
  them), ``text`` (markdown shown on the slide: for a markdown cell instead of the cell, for
  a code cell above its outputs), ``code`` (also show a code cell's source) and, on the quiz
  cell only, ``questions`` (the 1-based numbers of the quiz questions the slide asks).

Formulas are typeset at build time (MathJax under Node, ``tools/tex/typeset.js``) into SVG
with hidden MathML for screen readers: the deck loads no MathJax and shows no raw LaTeX.
Explorers, diagrams and quizzes are the chapter's own self-contained outputs, live in the
deck. Each language's ``slides/`` folder holds reveal.js (from npm), the decks and their
assets, and nothing outside it: downloaded, it still works offline.

Output: ``_build/html/<lang>/slides/<NN_name>.html``. A malformed mark or a formula MathJax
cannot read stops the build with a message naming the chapter and the cell.

Usage: python tools/build_decks.py [LANG ...]
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from mdit_py_plugins.dollarmath import dollarmath_plugin

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
sys.path.insert(0, str(ROOT / "tools"))
# The site's icon, inline: a deck folder opened on its own asks no server for /favicon.ico.
from build_book import FAVICON  # noqa: E402  (one definition, the book's)
from coursebook_typography import _APOSTROPHE, french_spacing  # noqa: E402  (the pages' rules)

BOOK = ROOT / "book"
BUILD = ROOT / "_build"
SITE = BUILD / "html"
HERE = Path(__file__).resolve().parent / "deck"
NODE_MODULES = ROOT / "node_modules"

SLIDE_TYPES = {"slide", "fragment", "-", "skip"}
DECK_KEYS = {"title", "text", "notes", "code", "questions"}
MIN_SLIDES = 8

# node_modules path -> path under slides/ (reveal.js, its speaker notes, bertviz's libraries)
ASSETS = {
    "reveal.js/dist/reveal.js": "reveal/reveal.js",
    "reveal.js/dist/reveal.css": "reveal/reveal.css",
    "reveal.js/dist/theme/white.css": "reveal/white.css",
    "reveal.js/dist/plugin/notes.js": "reveal/notes.js",
    "requirejs/require.js": "vendor/require.js",
    "d3/dist/d3.min.js": "vendor/d3.min.js",
    "jquery/dist/jquery.min.js": "vendor/jquery.min.js",
}

# The deck's own few words, in each language (reveal.js's controls and our title slide).
CHROME = {
    "en": {"previous": "Previous slide", "next": "Next slide", "chapter": "Chapter {n}",
           "keys": "Arrows or space: next slide · S: speaker notes · F: full screen · "
                   "Esc: overview",
           "title_notes": "The deck of chapter {n}, {title}. Press S for the speaker view; "
                          "the chapter itself is in the book, with every exercise.",
           "book": "Chapter in the book", "deck": "Deck"},
    "fr": {"previous": "Diapositive précédente", "next": "Diapositive suivante",
           "chapter": "Chapitre {n}",
           "keys": "Flèches ou espace : diapositive suivante · S : notes de l’orateur · "
                   "F : plein écran · Échap : vue d’ensemble",
           "title_notes": "Le support du chapitre {n}, {title}. La touche S ouvre la vue de "
                          "l’orateur ; le chapitre complet, avec tous ses exercices, est "
                          "dans le livre.",
           "book": "Le chapitre dans le livre", "deck": "Diapositives"},
    "it": {"previous": "Diapositiva precedente", "next": "Diapositiva successiva",
           "chapter": "Capitolo {n}",
           "keys": "Frecce o spazio: diapositiva successiva · S: note del relatore · "
                   "F: schermo intero · Esc: panoramica",
           "title_notes": "Le diapositive del capitolo {n}, {title}. Il tasto S apre la "
                          "vista del relatore; il capitolo completo, con tutti gli esercizi, "
                          "è nel libro.",
           "book": "Il capitolo nel libro", "deck": "Diapositive"},
}


# reveal.js's speaker view (its notes plugin writes the window from a template), in each
# language: each English text and its translation. Every text must be found exactly once, so
# that a new reveal.js that words them differently fails the build instead of leaving English.
SPEAKER_VIEW = {
    "fr": [
        ('<html lang="en">', '<html lang="fr">'),
        ("<title>reveal.js - Speaker View</title>", "<title>Vue de l’orateur</title>"),
        (">Loading speaker view...<", ">Chargement de la vue de l’orateur…<"),
        (">Upcoming</span>", ">À suivre</span>"),
        ('>Time <span class="reset-button">Click to Reset</span>',
         '>Temps <span class="reset-button">Cliquer pour remettre à zéro</span>'),
        (">Pacing – Time to finish current slide<",
         ">Rythme – temps restant sur cette diapositive<"),
        ("'Layout' + ( title", "'Disposition' + ( title"),
        ("'default': 'Default'", "'default': 'Par défaut'"),
        ("'wide': 'Wide'", "'wide': 'Large'"),
        ("'tall': 'Tall'", "'tall': 'Haute'"),
        ("'notes-only': 'Notes only'", "'notes-only': 'Notes seules'"),
        ("toLocaleTimeString( 'en-US', { hour12: true",
         "toLocaleTimeString( 'fr-FR', { hour12: false"),
    ],
    "it": [
        ('<html lang="en">', '<html lang="it">'),
        ("<title>reveal.js - Speaker View</title>", "<title>Vista del relatore</title>"),
        (">Loading speaker view...<", ">Caricamento della vista del relatore…<"),
        (">Upcoming</span>", ">Successiva</span>"),
        ('>Time <span class="reset-button">Click to Reset</span>',
         '>Tempo <span class="reset-button">Clic per azzerare</span>'),
        (">Notes</h4>", ">Note</h4>"),
        (">Pacing – Time to finish current slide<",
         ">Ritmo – tempo rimasto su questa diapositiva<"),
        ("'Layout' + ( title", "'Disposizione' + ( title"),
        ("'default': 'Default'", "'default': 'Predefinita'"),
        ("'wide': 'Wide'", "'wide': 'Larga'"),
        ("'tall': 'Tall'", "'tall': 'Alta'"),
        ("'notes-only': 'Notes only'", "'notes-only': 'Solo note'"),
        ("toLocaleTimeString( 'en-US', { hour12: true",
         "toLocaleTimeString( 'it-IT', { hour12: false"),
    ],
}


class DeckError(ValueError):
    """A malformed slide mark or a deck that cannot be built: names the chapter and cell."""


@dataclass
class Slide:
    title: str
    notes: str
    parts: list[tuple[str, bool]] = field(default_factory=list)  # (html, is_fragment)
    kind: str = "content"


# --- markdown and maths -------------------------------------------------------------------------

class Maths:
    """Formulas collected while the slides are written, typeset together at the end."""

    def __init__(self) -> None:
        self.items: list[dict] = []

    def placeholder(self, tex: str, display: bool) -> str:
        self.items.append({"tex": tex, "display": display})
        return f"\x00TEX{len(self.items) - 1}\x00"

    def typeset(self, pages: dict[str, str], where: str) -> dict[str, str]:
        if not self.items:
            return pages
        done = subprocess.run(["node", str(ROOT / "tools" / "tex" / "typeset.js"), "svg"],
                              input=json.dumps(self.items),
                              capture_output=True, text=True, cwd=ROOT,
                              env={"NODE_PATH": str(NODE_MODULES), "PATH": _path()})
        if done.returncode:
            raise DeckError(f"{where}: {done.stderr.strip()}")
        result = json.loads(done.stdout)
        svgs, css = result["html"], f'<style id="MJX-SVG-styles">{result["css"]}</style>'
        swap = re.compile("\x00TEX(\\d+)\x00")
        return {name: swap.sub(lambda m: svgs[int(m.group(1))], page).replace(
                    "</head>", css + "\n</head>", 1)
                for name, page in pages.items()}


def _path() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


_ROLE = re.compile(r"\{[a-z:-]+\}`([^`<]*?)(?:\s*<[^>]*>)?`")


_LANG_SPAN = re.compile(r'<span\b[^>]*\blang="([\w-]+)"')


def typography(text: str, lang: str, before: str = "") -> str:
    """A piece of prose in the typography of the book's pages: in French and Italian an
    apostrophe after a letter is ’, and French has its no-break spaces."""
    if lang in ("fr", "it"):
        text = _APOSTROPHE.sub("\u2019", text)
    return french_spacing(text, before) if lang == "fr" else text


def _prose(lang: str):
    """The renderer of prose text: the language's typography, as on the pages (not inside a
    passage marked as another language, ``<span lang="en">``)."""

    def text(self, tokens, idx, options, env):
        content = tokens[idx].content
        if not env.get("other"):
            content = typography(content, lang, env.get("before", ""))
        env["before"] = tokens[idx].content
        return escapeHtml(content)

    def inline_html(self, tokens, idx, options, env):
        content = tokens[idx].content
        opened = _LANG_SPAN.search(content)
        if opened and opened.group(1) != lang:
            env["other"] = env.get("other", 0) + 1
        elif env.get("other") and content.startswith("</span"):
            env["other"] -= 1
        return content

    return text, inline_html


def markdown(text: str, maths: Maths, lang: str = "en") -> str:
    """A slide's markdown as HTML, its ``$...$`` and ``$$...$$`` left for MathJax, its prose
    in the typography of ``lang``."""
    md = MarkdownIt("commonmark", {"html": True, "typographer": False}).enable("table")
    prose_text, inline_html = _prose(lang)
    md.add_render_rule("text", prose_text)
    md.add_render_rule("html_inline", inline_html)
    md.use(dollarmath_plugin, double_inline=True)
    md.add_render_rule("math_inline", lambda self, tokens, idx, options, env:
                       maths.placeholder(tokens[idx].content, False))
    md.add_render_rule("math_inline_double", lambda self, tokens, idx, options, env:
                       maths.placeholder(tokens[idx].content, True))
    md.add_render_rule("math_block", lambda self, tokens, idx, options, env:
                       '<div class="deck-display">'
                       + maths.placeholder(tokens[idx].content, True) + "</div>")
    return md.render(_ROLE.sub(r"\1", text))


# --- reading the chapters -----------------------------------------------------------------------

def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _check_marks(where: str, cell: dict) -> tuple[str | None, dict]:
    """A cell's slide type and deck settings, or a DeckError naming the cell."""
    meta = cell.get("metadata", {})
    show = meta.get("slideshow")
    deck = meta.get("deck", {})
    if show is None:
        if deck:
            raise DeckError(f"{where}: 'deck' metadata without a slideshow.slide_type")
        return None, {}
    if not isinstance(show, dict) or show.get("slide_type") not in SLIDE_TYPES:
        raise DeckError(f"{where}: slideshow.slide_type must be one of "
                        f"{sorted(SLIDE_TYPES)}, got {show!r}")
    kind = show["slide_type"]
    if not isinstance(deck, dict) or set(deck) - DECK_KEYS:
        raise DeckError(f"{where}: 'deck' must be an object with keys among "
                        f"{sorted(DECK_KEYS)}, got {deck!r}")
    if kind == "skip":
        return None, {}
    for key in ("title", "text", "notes"):
        if key in deck and (not isinstance(deck[key], str) or not deck[key].strip()):
            raise DeckError(f"{where}: deck.{key} must be a non-empty string, got {deck[key]!r}")
    if kind == "slide" and not ("title" in deck and "notes" in deck):
        raise DeckError(f"{where}: a cell that starts a slide needs deck.title and deck.notes")
    if "code" in deck and not isinstance(deck["code"], bool):
        raise DeckError(f"{where}: deck.code must be true or false, got {deck['code']!r}")
    if "questions" in deck:
        questions = deck["questions"]
        if (not isinstance(questions, list) or not questions
                or not all(isinstance(q, int) and not isinstance(q, bool) and q >= 1
                           for q in questions)):
            raise DeckError(f"{where}: deck.questions must be a list of question numbers "
                            f"(from 1), got {questions!r}")
    if cell["cell_type"] == "markdown" and ({"code", "questions"} & set(deck)):
        raise DeckError(f"{where}: deck.code and deck.questions are for code cells")
    return kind, deck


def _outputs_html(where: str, cell: dict, language: str) -> str:
    """The executed outputs of a code cell, as the book shows them.

    The book merges a cell's prints into one block (``nb_merge_streams``): myst-nb appends
    every later print to the first one, in the executed notebook too, and the page shows
    that first block alone, where the first print was. So does the deck.
    """
    parts = []
    alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
    printed = False
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream" and output.get("name") == "stdout":
            if not printed:
                text = _source({"source": output.get("text", "")})
                parts.append(f'<pre class="deck-text">{html.escape(text)}</pre>')
            printed = True
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            if "text/html" in data:
                parts.append('<div class="deck-html">'
                             + _source({"source": data["text/html"]}) + "</div>")
            elif "image/svg+xml" in data:
                parts.append(_source({"source": data["image/svg+xml"]}))
            elif "image/png" in data:
                png = _source({"source": data["image/png"]}).replace("\n", "")
                base64.b64decode(png, validate=True)
                parts.append(f'<img class="deck-figure" alt="{html.escape(alt)}" '
                             f'src="data:image/png;base64,{png}">')
            elif "text/plain" in data:
                parts.append(f'<pre class="deck-text">'
                             f'{html.escape(_source({"source": data["text/plain"]}))}</pre>')
        elif kind == "error":
            raise DeckError(f"{where}: the executed cell holds an error")
    if not parts:
        raise DeckError(f"{where}: a code cell on a slide has no output to show")
    # bertviz's libraries are served from the deck's own folder.
    return ('<div class="cell_output deck-output">'
            + "".join(parts).replace("_static/vendor/", "vendor/") + "</div>")


_QUESTION = re.compile(r'<div class="tc-question" data-kind="(\w+)" data-index="(\d+)"')


def _quiz_html(where: str, outputs: str, questions: list[int]) -> str:
    """The chapter's quiz with only the chosen questions shown (the others stay, hidden, so
    that the quiz's script still finds all of them)."""
    found = [int(m.group(2)) for m in _QUESTION.finditer(outputs)]
    if not found:
        raise DeckError(f"{where}: deck.questions is set but the cell's output is no quiz")
    missing = [q for q in questions if q - 1 not in found]
    if missing:
        raise DeckError(f"{where}: the quiz has {len(found)} questions, no question "
                        f"{missing[0]}")

    def keep(match: re.Match) -> str:
        shown = int(match.group(2)) + 1 in questions
        return match.group(0) + ("" if shown else " hidden")

    return '<div class="deck-quiz">' + _QUESTION.sub(keep, outputs) + "</div>"


# with its other attributes (in an option, the package names it: role="img" aria-label=...)
_QUIZ_MATH = re.compile(r'(<span class="tc-math" data-tex="([^"]*)"[^>]*>)(.*?)(</span>)', re.S)


def _quiz_maths(outputs: str, maths: Maths) -> str:
    """The quiz's inline maths typeset now (the page's MathJax would do it in the book)."""
    return _QUIZ_MATH.sub(lambda m: m.group(1) + maths.placeholder(html.unescape(m.group(2)),
                                                                  False) + m.group(4), outputs)


def read_chapter(lang: str, name: str, executed_dir: Path) -> tuple[list[dict], list[dict]]:
    """The chapter's cells (marks) and the executed cells (outputs), matched by id."""
    source = json.loads((BOOK / lang / f"{name}.ipynb").read_text(encoding="utf-8"))
    path = executed_dir / f"{name}.ipynb"
    if not path.exists():
        raise DeckError(f"{lang}/{name}: no executed notebook at {path} (build the book first)")
    executed = json.loads(path.read_text(encoding="utf-8"))
    by_id = {cell.get("id"): cell for cell in executed["cells"]}
    cells = source["cells"]
    missing = [cell.get("id") for cell in cells if cell.get("id") not in by_id]
    if missing:
        raise DeckError(f"{lang}/{name}: the executed notebook lacks cell {missing[0]} "
                        "(build the book again)")
    return cells, [by_id[cell["id"]] for cell in cells]


def chapter_slides(lang: str, name: str, number: int, cells: list[dict], run: list[dict],
                   maths: Maths) -> tuple[str, list[Slide]]:
    """The chapter's title and its slides, from its marks."""
    heading = _source(cells[0]).lstrip().splitlines()[0]
    if not heading.startswith("# "):
        raise DeckError(f"{lang}/{name}.ipynb, cell 0: the chapter does not open with a title")
    title = re.sub(r"^\d+\.\s*", "", heading[2:].strip())
    words = CHROME[lang]
    slides = [Slide(title=title, kind="title",
                    notes=words["title_notes"].format(n=number, title=title))]
    for index, (cell, done) in enumerate(zip(cells, run, strict=True)):
        where = f"{lang}/{name}.ipynb, cell {index} (id {cell.get('id')})"
        kind, deck = _check_marks(where, cell)
        if kind is None:
            continue
        if kind != "slide" and len(slides) == 1:
            raise DeckError(f"{where}: '{kind}' adds to a slide, but no slide has started")
        parts = []
        if deck.get("text"):
            parts.append(markdown(deck["text"], maths, lang))
        if cell["cell_type"] == "markdown":
            if not deck.get("text"):
                parts.append(markdown(_source(cell), maths, lang))
        else:
            if deck.get("code"):
                code = _source(cell)
                if len(code.splitlines()) > 12:
                    raise DeckError(f"{where}: deck.code shows at most 12 lines of code")
                parts.append(f'<pre class="deck-code"><code>{html.escape(code)}</code></pre>')
            outputs = _outputs_html(where, done, lang)
            if "questions" in deck:
                outputs = _quiz_maths(_quiz_html(where, outputs, deck["questions"]), maths)
            elif 'class="tc-quiz"' in outputs:
                raise DeckError(f"{where}: a quiz on a slide needs deck.questions")
            parts.append(outputs)
        body = "".join(parts)
        if kind == "slide":
            slides.append(Slide(title=deck["title"], notes=deck["notes"],
                                kind="quiz" if "questions" in deck else "content"))
        elif deck.get("notes"):
            slides[-1].notes += "\n\n" + deck["notes"]
        slides[-1].parts.append((body, kind == "fragment"))
    if len(slides) < MIN_SLIDES:
        raise DeckError(f"{lang}/{name}.ipynb: its deck has {len(slides)} slides, fewer than "
                        f"{MIN_SLIDES} (mark more cells with slideshow.slide_type)")
    return title, slides


# --- writing the deck ---------------------------------------------------------------------------

def _inline(text: str, maths: Maths, lang: str) -> str:
    """A title: its prose escaped (French no-break spaces), its ``$...$`` typeset."""
    out, at = [], 0
    for match in re.finditer(r"(?<!\\)\$(.+?)(?<!\\)\$", text):
        out.append(html.escape(typography(text[at:match.start()], lang)))
        out.append(maths.placeholder(match.group(1), False))
        at = match.end()
    out.append(html.escape(typography(text[at:], lang)))
    return "".join(out)


def deck_html(lang: str, name: str, number: int, title: str, slides: list[Slide],
              config: dict, maths: Maths) -> str:
    """The deck's page. reveal.js loads in the head, before any slide: bertviz's require.js
    (chapters 1 and 9) would otherwise take reveal.js's UMD wrapper for an anonymous AMD
    module, and reveal.js would never start."""
    words = CHROME[lang]
    course = config["languages"][lang]["title"]
    sections = []
    for i, slide in enumerate(slides):
        notes = markdown(slide.notes, maths, lang)
        if slide.kind == "title":
            body = (f'<p class="deck-kicker">{html.escape(words["chapter"].format(n=number))}'
                    f" · {html.escape(course)}</p>"
                    f'<h1 class="deck-title">{_inline(title, maths, lang)}</h1>'
                    f'<p class="deck-keys">{html.escape(words["keys"])}</p>'
                    f'<p class="deck-book"><a href="../{name}.html">'
                    f'{html.escape(words["book"])}</a></p>')
        else:
            parts = "".join(f'<div class="deck-part fragment">{part}</div>' if fragment
                            else f'<div class="deck-part">{part}</div>'
                            for part, fragment in slide.parts)
            body = (f"<h2>{_inline(slide.title, maths, lang)}</h2>"
                    f'<div class="deck-fit">{parts}</div>')
        sections.append(f'<section class="deck-{slide.kind}" data-slide="{i + 1}">'
                        f"{body}<aside class=\"notes\">{notes}</aside></section>")
    description = f"{words['deck']}: {title} ({course})"
    labels = html.escape(json.dumps({"previous": words["previous"], "next": words["next"]},
                                    ensure_ascii=False))
    return f"""<!DOCTYPE html>
<html lang="{lang}" data-tc-deck-labels="{labels}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · {html.escape(course)}</title>
<meta name="description" content="{html.escape(description)}">
<link rel="icon" href="{FAVICON}">
<link rel="stylesheet" href="reveal/reveal.css">
<link rel="stylesheet" href="reveal/white.css">
<link rel="stylesheet" href="deck.css">
<script src="reveal/reveal.js"></script>
<script src="reveal/notes.js"></script>
</head>
<body>
<div class="reveal"><div class="slides">
{chr(10).join(sections)}
</div></div>
<script src="deck.js"></script>
</body>
</html>
"""


def speaker_view(script: str, lang: str) -> str:
    """reveal.js's notes plugin with its speaker view in ``lang``."""
    for english, translated in SPEAKER_VIEW.get(lang, []):
        if script.count(english) != 1:
            raise DeckError(f"reveal.js's speaker view no longer holds {english!r} once: "
                            "update SPEAKER_VIEW in tools/build_decks.py")
        script = script.replace(english, translated)
    return script


def copy_assets(target: Path, lang: str) -> None:
    for source, name in ASSETS.items():
        path = NODE_MODULES / source
        if not path.exists():
            raise DeckError(f"{path} is missing: run `npm ci` at the repository root "
                            "(make book does)")
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if name == "reveal/notes.js":
            destination.write_text(speaker_view(path.read_text(encoding="utf-8"), lang),
                                   encoding="utf-8")
        else:
            shutil.copy2(path, destination)
    for name in ("deck.css", "deck.js"):
        shutil.copy2(HERE / name, target / name)


def chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [entry["file"] for entry in toc["chapters"] if re.match(r"\d\d_", entry["file"])]


def build_language(lang: str, config: dict) -> list[tuple[str, int]]:
    """Write every deck of ``lang``; return (chapter, number of slides) for each."""
    executed = BUILD / "languages" / lang / "_build" / "jupyter_execute"
    target = SITE / lang / "slides"
    target.mkdir(parents=True, exist_ok=True)
    copy_assets(target, lang)
    maths = Maths()
    pages, counts = {}, []
    for number, name in enumerate(chapters(), start=1):
        cells, run = read_chapter(lang, name, executed)
        title, slides = chapter_slides(lang, name, number, cells, run, maths)
        pages[name] = deck_html(lang, name, number, title, slides, config, maths)
        counts.append((name, len(slides)))
    for name, page in maths.typeset(pages, f"{lang} decks").items():
        (target / f"{name}.html").write_text(page, encoding="utf-8")
    return counts


def main(argv: list[str]) -> int:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    parser = argparse.ArgumentParser(description="Build the chapters' decks.")
    parser.add_argument("langs", nargs="*", default=list(config["languages"]))
    args = parser.parse_args(argv)
    for lang in args.langs:
        try:
            counts = build_language(lang, config)
        except DeckError as error:
            print(f"deck error: {error}", file=sys.stderr)
            return 1
        print(f"decks {lang}: " + ", ".join(f"{name[:2]} {n}" for name, n in counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
