#!/usr/bin/env python3
"""Write the course's own prose as a plain-text corpus, one file per language.

Chapter 10 trains a character-level language model on it: a corpus the project owns and
that needs no download. The text is the prose of the book (markdown cells and pages) with
maths, code, links and markup taken out, one paragraph per line. The files are package
data (``src/transformer_course/corpus/<lang>.txt``) so that Colab, where the package is
installed alone, has them too. Run it again after the chapters change (``make corpus``).

Usage: python tools/make_corpus.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "transformer_course" / "corpus"
LANGS = ("en", "fr", "it")


def markdown_of(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


def plain(markdown: str) -> list[str]:
    """The paragraphs of a markdown text as plain prose (no maths, code, links or tables)."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)  # code blocks and directives
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)  # display maths
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith(("|", "#", "<", ":::", "{")):
            continue  # tables, headings, raw HTML, directives
        block = re.sub(r"\$[^$]*\$", "", block)  # inline maths
        block = re.sub(r"`[^`]*`", "", block)  # inline code
        block = re.sub(r"<[^>]+>", "", block)  # inline HTML
        block = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", block)  # links keep their text
        block = re.sub(r"[*_]{1,3}([^*_]+)[*_]{1,3}", r"\1", block)  # emphasis
        block = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", block, flags=re.M)  # list markers
        block = " ".join(block.split())
        block = re.sub(r"\s+([,.)])", r"\1", block).replace("( ", "(")
        if len(block) >= 40 and re.search(r"[^\W\d_]{3}", block):
            paragraphs.append(block)
    return paragraphs


def corpus(lang: str) -> str:
    pages = sorted((ROOT / "book" / lang).glob("*.ipynb")) + sorted(
        p for p in (ROOT / "book" / lang).glob("*.md") if p.stem not in ("references",))
    lines = [line for page in pages for line in plain(markdown_of(page))]
    return "\n".join(lines) + "\n"


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for lang in LANGS:
        text = corpus(lang)
        (OUT / f"{lang}.txt").write_text(text, encoding="utf-8")
        print(f"{lang}: {len(text):,} characters, {text.count(chr(10)):,} paragraphs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
