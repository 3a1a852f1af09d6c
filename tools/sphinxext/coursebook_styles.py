"""One style sheet per page: the sheets a page links, merged in their order.

A chapter page linked eleven style sheets (the theme's two, Pygments', the book theme's,
the toggle and copy buttons', myst-nb's, the icons', the course's and the maths'), each a
request that the browser must finish before it paints. On a phone's connection they queue:
Lighthouse's mobile profile put the first paint of the Italian chapter 7 at 2.9 s, and at
1.5 s with the same rules in one file.

At the very end of the build (after the style sheets were cut to what the site uses and the
maths' sheet was written), each page's ``<link rel="stylesheet">`` tags are replaced by one,
where the first was, to ``_static/styles/tc-<hash>.css``: the sheets' text in the same order
(so the cascade is unchanged), ``@import`` of a local sheet inlined, and each relative
``url()`` rewritten for the sheet's new folder. Pages that link the same sheets share one
file (a chapter with maths, a page without). The original sheets stay where they were.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

LINK = re.compile(r'[ \t]*<link (?=[^>]*rel="stylesheet")[^>]*href="([^"?#]+)[^"]*"[^>]*>\n?')
URL = re.compile(r"""url\(\s*(['"]?)([^)'"]+)\1\s*\)""")
IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?['"]([^'"]+)['"]\s*\)?\s*;""")
SOURCE_MAP = re.compile(r"/\*# sourceMappingURL=[^*]*\*/")
ABSOLUTE = re.compile(r"(?:[a-z][a-z0-9+.-]*:|/|#)", re.I)  # data:, https:, /x, #id
FOLDER = Path("_static") / "styles"


def sheet_text(path: Path, into: Path, *, within: tuple[Path, ...] = ()) -> str:
    """The text of the sheet at ``path`` for a file in the folder ``into``: its local
    ``@import`` inlined, its relative ``url()`` rebased, its source map comment gone."""
    if path in within:
        raise ExtensionError(f"{path} imports itself")
    if not path.is_file():
        raise ExtensionError(f"a page links the style sheet {path}, which is not there")
    text = path.read_text(encoding="utf-8")

    def inline(match: re.Match) -> str:
        ref = match.group(1)
        if ABSOLUTE.match(ref):
            raise ExtensionError(f"{path} imports {ref}, which is not a file of the site")
        return sheet_text((path.parent / ref).resolve(), into, within=(*within, path))

    def rebase(match: re.Match) -> str:
        quote, ref = match.groups()
        if ABSOLUTE.match(ref):
            return match.group(0)
        target = os.path.relpath((path.parent / ref).resolve(), into)
        return f"url({quote}{Path(target).as_posix()}{quote})"

    return SOURCE_MAP.sub("", URL.sub(rebase, IMPORT.sub(inline, text)))


def merge_style_sheets(outdir: Path) -> dict[str, int]:
    """Give each page of ``outdir`` one merged style sheet; return each merged file's name
    and the number of pages that link it."""
    into = (outdir / FOLDER).resolve()
    made: dict[tuple[Path, ...], Path] = {}
    pages: dict[str, int] = {}
    for page in sorted(outdir.glob("*.html")):
        html = page.read_text(encoding="utf-8")
        head_end = html.find("</head>")
        links = list(LINK.finditer(html, 0, head_end))
        if len(links) < 2:
            continue
        sheets = tuple((page.parent / m.group(1)).resolve() for m in links)
        if sheets not in made:
            text = "\n".join(sheet_text(sheet, into) for sheet in sheets)
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
            made[sheets] = into / f"tc-{digest}.css"
            made[sheets].write_text(text, encoding="utf-8")
        href = Path(os.path.relpath(made[sheets], page.parent)).as_posix()
        first = links[0].start()
        head = LINK.sub("", html[first:head_end])
        page.write_text(f'{html[:first]}<link rel="stylesheet" href="{href}" />\n{head}'
                        f"{html[head_end:]}", encoding="utf-8")
        pages[made[sheets].name] = pages.get(made[sheets].name, 0) + 1
    return pages


def _merge(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        merge_style_sheets(Path(app.outdir))


def setup(app: Sphinx) -> dict:
    # last: after the sheets were cut (coursebook_lean) and the maths' sheet written
    # (coursebook_maths, priority 800)
    app.connect("build-finished", _merge, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
