"""The glossary of the course book, generated from one data file: ``book/glossary.yml``.

The directive ``glossary-table`` (in MyST: a ```` ```{glossary-table} ```` fence) renders,
for the language of the page being built (``language``):

* ``terms`` (the default): one row per term, sorted in the page's language: the term in the
  page's language (with its accepted synonyms), the two other languages, the meaning in the
  page's language, and links to the chapters that introduce it;
* ``notes``: the lecture notes' own wording, in the page's language, with the course's term
  and a flag (same term, another term preferred, mistranslation, error) that says why.

The tables are written as MyST markdown and parsed in place, so that the meanings keep their
inline maths and the chapter numbers become real cross-document links (a chapter that is
still planned, listed in ``planned``, is shown without a link). The data file is a
dependency of the page: editing it rebuilds the glossary. ``tc_glossary`` (a config value)
is its path, ``book/glossary.yml`` of the repository by default.

The directive ``style-sheet`` renders the page language's part of the style sheet,
``book/style.yml`` (``tc_style``): its rules, one item each, and the table of the phrases
that have one accepted form, with the forms to avoid. tests/site/test_style.py checks the same
rules on the book.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PATH = ROOT / "book" / "glossary.yml"
DEFAULT_STYLE_PATH = ROOT / "book" / "style.yml"
LANGUAGES = ("en", "fr", "it")

# Words of the tables themselves, per page language.
LABELS: dict[str, dict[str, str]] = {
    "en": {"en": "English", "fr": "French", "it": "Italian", "meaning": "meaning",
           "chapters": "chapters", "also": "also", "upcoming": "upcoming",
           "notes_term": "in the lecture notes", "source": "source",
           "course_term": "in this course", "remark": "remark",
           "use": "we write", "avoid": "rather than"},
    "fr": {"en": "anglais", "fr": "français", "it": "italien", "meaning": "sens",
           "chapters": "chapitres", "also": "aussi", "upcoming": "à venir",
           "notes_term": "dans les notes de cours", "source": "source",
           "course_term": "dans ce cours", "remark": "remarque",
           "use": "on écrit", "avoid": "plutôt que"},
    "it": {"en": "inglese", "fr": "francese", "it": "italiano", "meaning": "significato",
           "chapters": "capitoli", "also": "anche", "upcoming": "in arrivo",
           "notes_term": "negli appunti", "source": "fonte",
           "course_term": "in questo corso", "remark": "osservazione",
           "use": "si scrive", "avoid": "invece di"},
}

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]{}<>|#~$])")


def escape(text: str) -> str:
    """Plain text as MyST markdown: every character with a meaning is escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def sort_key(text: str) -> str:
    """Alphabetical order as a reader expects it: no accents, no case, no leading ``[``."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in plain if not unicodedata.combining(c)).casefold()
    return re.sub(r"^[^\w]+", "", plain)


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def load_glossary(path: Path | str = DEFAULT_PATH) -> dict[str, Any]:
    """The glossary data (cached until the file changes)."""
    path = Path(path)
    return _load(str(path), path.stat().st_mtime)


def chapter_cell(data: dict[str, Any], numbers: list[int], lang: str,
                 found_docs: set[str] | None) -> str:
    """``[1](01_attention.ipynb), [8](08_decoder.ipynb)``; a planned chapter has no link."""
    cells = []
    for number in numbers:
        stem = data["chapters"][number]
        if found_docs is None or stem in found_docs:
            cells.append(f"[{number}]({stem}.ipynb)")
        else:
            cells.append(f"{number} ({LABELS[lang]['upcoming']})")
    return ", ".join(cells)


def term_cell(entry: dict[str, Any], lang: str) -> str:
    """The term in bold, then its accepted synonyms in italics."""
    text = f"**{escape(entry['term'])}**"
    synonyms = entry.get("synonyms") or []
    if synonyms:
        text += f" ({LABELS[lang]['also']} " + ", ".join(f"*{escape(s)}*" for s in synonyms)
        text += ")"
    return text


def terms_markdown(data: dict[str, Any], lang: str,
                   found_docs: set[str] | None = None) -> list[str]:
    """The table of terms for a page in ``lang``, as MyST markdown lines."""
    labels = LABELS[lang]
    others = [code for code in LANGUAGES if code != lang]
    header = [labels[lang], *(labels[code] for code in others), labels["meaning"],
              labels["chapters"]]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for item in sorted(data["terms"], key=lambda t: sort_key(t[lang]["term"])):
        row = [term_cell(item[lang], lang),
               # Terms of the other languages carry their language, for screen readers.
               *(f'<span lang="{code}">{escape(item[code]["term"])}</span>' for code in others),
               " ".join(item[lang]["meaning"].split()),
               chapter_cell(data, item.get("chapters") or [], lang, found_docs)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def notes_markdown(data: dict[str, Any], lang: str) -> list[str]:
    """The lecture notes' own terms in ``lang``, with the course's term and the flag."""
    labels = LABELS[lang]
    header = [labels["notes_term"], labels["source"], labels["course_term"], labels["remark"]]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    rows = []
    for item in data["terms"]:
        for note in item[lang].get("notes") or []:
            kind = escape(data["kinds"][note["kind"]][lang])
            flag = " ".join(note["flag"].split())
            rows.append((sort_key(note["term"]), [
                f"*{escape(note['term'])}*",
                escape(data["sources"][note["source"]][lang]),
                escape(item[lang]["term"]),
                f"**{kind}.** {flag}",
            ]))
    for _, row in sorted(rows, key=lambda r: r[0]):
        lines.append("| " + " | ".join(row) + " |")
    return lines


def style_markdown(data: dict[str, Any], lang: str) -> list[str]:
    """The style sheet of ``lang`` as MyST markdown lines: its rules as a list (their text is
    markdown), then the table of the phrases with one accepted form."""
    sheet = data["languages"][lang]
    lines = [f"- {' '.join(rule['rule'].split())}" for rule in sheet["rules"]]
    words = sheet.get("words") or []
    if words:
        labels = LABELS[lang]
        lines += ["", f"| {labels['use']} | {labels['avoid']} |", "| --- | --- |"]
        for entry in words:
            avoid = ", ".join(f"*{escape(v)}*" for v in entry["avoid"])
            lines.append(f"| **{escape(entry['use'])}** | {avoid} |")
    return lines


class StyleSheet(SphinxDirective):
    """``{style-sheet}``: the page language's writing choices, from book/style.yml."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        lang = self.config.language or "en"
        path = Path(self.config.tc_style)
        if not path.exists():
            raise ExtensionError(f"style-sheet: {path} is missing")
        self.env.note_dependency(str(path))
        data = load_glossary(path)
        if lang not in data.get("languages", {}):
            raise self.error(f"style-sheet: no style sheet for language {lang!r}")
        container = nodes.container(classes=["tc-style-sheet"])
        self.state.nested_parse(StringList(style_markdown(data, lang), source=str(path)),
                                self.content_offset, container)
        return [container]


class GlossaryTable(SphinxDirective):
    """``{glossary-table} [terms|notes]``: a table of the glossary in the page's language."""

    optional_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        part = self.arguments[0] if self.arguments else "terms"
        if part not in ("terms", "notes"):
            raise self.error(f"glossary-table: unknown part {part!r} (terms or notes)")
        lang = self.config.language or "en"
        if lang not in LANGUAGES:
            raise self.error(f"glossary-table: no glossary in language {lang!r}")
        path = Path(self.config.tc_glossary)
        if not path.exists():
            raise ExtensionError(f"glossary-table: {path} is missing")
        self.env.note_dependency(str(path))
        data = load_glossary(path)
        if part == "terms":
            lines = terms_markdown(data, lang, set(self.env.found_docs))
        else:
            lines = notes_markdown(data, lang)
        container = nodes.container(classes=["tc-glossary", f"tc-glossary-{part}"])
        self.state.nested_parse(StringList(lines, source=str(path)), self.content_offset,
                                container)
        return [container]


def setup(app: Sphinx) -> dict:
    app.add_config_value("tc_glossary", str(DEFAULT_PATH), "env")
    app.add_config_value("tc_style", str(DEFAULT_STYLE_PATH), "env")
    app.add_directive("glossary-table", GlossaryTable)
    app.add_directive("style-sheet", StyleSheet)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
