"""Maths typeset when the book is built, not in the reader's browser.

MathJax used to typeset every formula of a page in the reader's browser: about 1 s of a
phone's main thread on a chapter page, before which the maths showed as TeX. At the end of
the build this extension hands every formula of the language's pages to MathJax under Node
(``tools/tex/typeset.js``, npm ``mathjax-full``), once per distinct formula, and writes what
MathJax would have written in the browser: CommonHTML, its web fonts (served from the site)
and the hidden MathML that screen readers read. The pages then load no MathJax at all.

What is typeset, as MathJax's in-page configuration did:

- the formulas Sphinx writes, ``<span class="math ...">\\(...\\)</span>`` and
  ``<div class="math ...">\\[...\\]</div>``;
- the quizzes' maths, ``<span class="tc-math" data-tex="...">`` (an explanation that quotes
  the reader's answer is written in the browser, and keeps the Unicode text that the package
  writes where there is no MathJax).

The stylesheet (``_static/tc-maths.css``) holds the glyphs the language's pages use. A formula
MathJax cannot read fails the build with its text, and so does TeX left in a page.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[2]
TYPESET = ROOT / "tools" / "tex" / "typeset.js"
CSS_NAME = "tc-maths.css"
FONTS = Path("mathjax") / "output" / "chtml" / "fonts" / "woff-v2"  # under _static

SPHINX_MATH = re.compile(r'(<(span|div) class="math notranslate nohighlight"[^>]*>)(.*?)(</\2>)',
                         re.S)
DELIMITED = re.compile(r"\\\((.*?)\\\)|\\\[(.*?)\\\]", re.S)
# A quiz formula not yet drawn (no data-tc-typeset), with its other attributes (in an option,
# the package names it: role="img" aria-label="its reading"), then its Unicode text.
QUIZ_MATH = re.compile(r'<span class="tc-math" data-tex="([^"]*)"'
                       r'((?: (?!data-tc-typeset)[\w-]+="[^"]*")*)>[^<]*(?:<(?!/span>)[^<]*)*')
MATHJAX_SCRIPTS = re.compile(r'\s*<script>window\.MathJax = .*?</script>'
                             r'|\s*<script[^>]*src="[^"]*_static/mathjax/[^"]*"[^>]*></script>',
                             re.S)


def formulas(page: str) -> set[tuple[str, bool]]:
    """The distinct ``(tex, display)`` of a page."""
    found = set()
    for match in SPHINX_MATH.finditer(page):
        for inline, display in DELIMITED.findall(match.group(3)):
            found.add((html.unescape(display or inline).strip(), bool(display)))
    for tex, _ in QUIZ_MATH.findall(page):
        found.add((html.unescape(tex).strip(), False))
    return found


def typeset(items: list[tuple[str, bool]], node_modules: Path) -> tuple[str, dict]:
    """MathJax's stylesheet and each formula's CommonHTML, from one Node process."""
    payload = json.dumps([{"tex": tex, "display": display} for tex, display in items])
    done = subprocess.run(["node", str(TYPESET), "chtml", FONTS.as_posix()], input=payload,
                          capture_output=True, text=True,
                          env={**os.environ, "NODE_PATH": str(node_modules)})
    if done.returncode:
        raise ExtensionError(f"MathJax (tools/tex/typeset.js): {done.stderr.strip()}")
    result = json.loads(done.stdout)
    return result["css"], dict(zip(items, result["html"], strict=True))


def rewrite(page: str, drawn: dict, stylesheet: str) -> str:
    """The page with its formulas drawn, MathJax's scripts gone and the stylesheet linked."""

    def sphinx(match: re.Match) -> str:
        def one(inner: re.Match) -> str:
            inline, display = inner.group(1), inner.group(2)
            return drawn[(html.unescape(display or inline).strip(), display is not None)]

        return match.group(1) + DELIMITED.sub(one, match.group(3)) + match.group(4)

    out = SPHINX_MATH.sub(sphinx, page)
    out = QUIZ_MATH.sub(lambda m: _quiz_span(m, drawn), out)
    out = MATHJAX_SCRIPTS.sub("", out)
    return out.replace("</head>", f'<link rel="stylesheet" href="{stylesheet}" />\n</head>', 1)


def _quiz_span(match: re.Match, drawn: dict) -> str:
    """A quiz formula drawn, its attributes kept; its Unicode text (which holds no span) is
    dropped."""
    tex = html.unescape(match.group(1)).strip()
    return (f'<span class="tc-math" data-tex="{match.group(1)}"{match.group(2)} '
            f'data-tc-typeset="1">{drawn[(tex, False)]}')


def _leftover(page: str) -> str | None:
    """TeX that a reader would see: delimiters left in the page's text."""
    text = re.sub(r"<(script|style|pre|code|textarea)\b.*?</\1>", "", page, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    found = re.search(r"\\\(|\\\[|\$\$", text)
    return None if found is None else text[max(0, found.start() - 60):found.start() + 60]


def _typeset_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    node_modules = Path(app.config.tc_node_modules)
    pages = {path: path.read_text(encoding="utf-8") for path in sorted(outdir.rglob("*.html"))}
    wanted = sorted(set().union(*(formulas(text) for text in pages.values())))
    css, drawn = typeset(wanted, node_modules) if wanted else ("", {})
    static = outdir / "_static"
    (static / CSS_NAME).write_text(css, encoding="utf-8")
    for path, text in pages.items():
        depth = len(path.relative_to(outdir).parts) - 1
        new = rewrite(text, drawn, "../" * depth + f"_static/{CSS_NAME}") \
            if formulas(text) else MATHJAX_SCRIPTS.sub("", text)
        left = _leftover(new)
        if left is not None:
            raise ExtensionError(f"{path.relative_to(outdir)}: TeX left untypeset: {left!r}")
        if new != text:
            path.write_text(new, encoding="utf-8")
    _keep_fonts_only(static / "mathjax")


def _keep_fonts_only(mathjax: Path) -> None:
    """MathJax's scripts are not loaded any more: its folder keeps the web fonts."""
    fonts = mathjax.parent / FONTS
    if not fonts.is_dir():
        raise ExtensionError(f"{fonts} is missing: MathJax's web fonts (sphinx-mathjax-offline)")
    keep = mathjax.parent / "tc-mathjax-fonts"
    shutil.move(str(fonts), keep)
    shutil.rmtree(mathjax)
    fonts.parent.mkdir(parents=True)
    shutil.move(str(keep), fonts)


def setup(app: Sphinx) -> dict:
    # after sphinx-mathjax-offline has copied MathJax (its fonts) into _static (priority 500)
    app.connect("build-finished", _typeset_pages, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
