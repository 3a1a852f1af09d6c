"""Lean pages: what every page of the book loads, cut to what it uses.

A chapter page transferred 3.8 to 5.5 MB on first load; DESIGN section 7 allows 2.5 MB.
Three things the theme and Jupyter Book put on every page go at the end of the build:

**Icons.** The theme's icons as a few kilobytes of CSS instead of Font Awesome's 1.5 MB
script.

pydata-sphinx-theme draws its icons (``<i class="fa-solid fa-bars">``: the sidebar toggles,
search, theme switch, download, launch, ...) by loading Font Awesome's JavaScript, which
turns each ``<i>`` into an inline SVG: 1.49 MB on every page, the largest thing a chapter
page loaded. This extension replaces it, at the end of the build, with
``_static/tc-icons.css``: for each icon the written pages use, and only those, the SVG of
the npm package ``@fortawesome/fontawesome-free`` (installed by ``npm ci``, the same icons)
as a CSS mask painted in the text's colour, so that icons follow the theme's light and dark
modes. The script tags are removed from the pages. The theme's icons drawn by CSS
pseudo-elements keep using its own webfont, which the browser loads only when needed (the
icon classes no longer ask for it).

The theme also loads the search index (``searchindex.js``, ``searchtools.js``,
``language_data.js``) on every page for its search-as-you-type dialog; with that option off
(the default, and ours) the dialog only sends the reader to ``search.html``, so the three
scripts are kept on that page alone.

**MathJax** is not loaded at all: the formulas are typeset at build time
(``coursebook_maths``).

**sphinx-design.** Its style sheet and tab script (62 KB) are kept on the pages that use
one of its components (``sd-`` classes) only.

**Scripts deferred.** Sphinx, sphinx-copybutton, sphinx-togglebutton and the book theme
load their scripts in the page's head without ``defer``: the browser stops parsing the page
until each one has arrived and run, though each starts its work only once the page is parsed
(they wait for ``DOMContentLoaded`` or check ``document.readyState``). They are marked
``defer``, which keeps their order and lets the page paint first. Three stay as they are:
``documentation_options.js``, because the page's inline scripts set its
``DOCUMENTATION_OPTIONS`` while parsing; ``clipboard.min.js``, which registers itself with
RequireJS instead of as ``ClipboardJS`` when it runs after a bertviz view has loaded RequireJS
(the copy buttons then fail); and the search page's scripts, since ``searchtools.js`` calls
``doctools.js`` at once.

**The language model's weights.** Chapter 10's explorer carries its model's weights in the
output, a few hundred kilobytes of base64 that the page downloaded and parsed before its
first paint, though the model runs only when the reader comes near it. They move to a
script file of their own, ``_static/lm/<hash>.js``, which stores them in
``window.TcWeights[<hash>]``; the page keeps an empty ``<script class="tc-weights">`` whose
``data-src`` and ``data-key`` name it, and the explorer loads it when it starts. A script
element, unlike ``fetch``, also loads from a folder opened on disk. Notebooks and decks keep
the weights inline.

**Style sheets.** The theme's style sheet (pydata-sphinx-theme, 397 KB) styles every
component Bootstrap and the theme offer, and myst-nb's (43 KB) every kind of notebook
output; a chapter page uses a fraction of either, and the browser must read both before it
paints. PurgeCSS (npm's ``purgecss``, ``tools/css/purge.js``) keeps the rules whose
selectors name something the site's pages or scripts mention (the scripts count, so that
what they switch on while the reader uses a page, as the sidebars and the dark mode do, keeps
its style), with the book theme's sheet as well. The source maps, which no longer match, go.

**Pictures.** A chapter's plots came with no size and loaded with the page: Lighthouse's
mobile profile counted the 300 KB of chapter 6's four plots, all below the first screen,
before the first paragraph's paint (3.4 s). Every ``<img>`` is marked ``loading="lazy"``
(the browser fetches it as it nears the screen) and ``decoding="async"``; a picture of the book
(``_images/``) that has no width, height or style of its own gets its pixel size as
``width`` and ``height``, so that the page keeps its place as pictures arrive
(``course.css`` keeps the proportions where ``max-width`` shrinks one). The book's PDF
loads them all (``build_pdfs.py``).

**Style recomputed once.** The theme's head script sets the page's colour theme to
localStorage's, or to "auto" on a first visit, and the theme's deferred script then resolves
"auto" to "light" or "dark": the change of ``data-theme`` on ``<html>`` made the browser
recompute the style of every element of the page (a sixth of a second of a phone's main
thread on chapter 3). The head script resolves it as the theme's script would (the mode the
reader chose, else the system's preference), so that the later write changes nothing.

**Scroll stops measured near the screen.** The theme makes every code block, output and table
that scrolls sideways focusable, by measuring them all when the page has loaded: that laid
out, in one long task, the sections that ``course.css`` leaves for later
(``content-visibility: auto``). Its pass is switched off in its script, and ``tc-scroll.js``
does the same work, with the display formulas, for each block as it nears the screen. A
change of the pinned theme that moves the pass fails the build.

**Thebe.** Jupyter Book always adds sphinx-thebe, which writes its configuration on every
page (with the address of its script on a CDN) and declares ``THEBE_JS_URL`` twice, a page
error in every browser. With ``launch_buttons.thebe`` off (ours), nothing on the page can
start it: its script, style and configuration are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import quote, unquote

from PIL import Image
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

PACKAGE = "@fortawesome/fontawesome-free"
STYLES = {"fa-solid": "solid", "fas": "solid", "fa-regular": "regular", "far": "regular",
          "fa-brands": "brands", "fab": "brands"}
# Classes that change an icon's size or behaviour rather than name one.
MODIFIERS = frozenset({"fa-lg", "fa-xs", "fa-sm", "fa-xl", "fa-2x", "fa-3x", "fa-fw",
                       "fa-spin", "fa-pulse", "fa-border", "fa-inverse", "fa-stack"})
SCRIPT = re.compile(r'<(?:script[^>]*src|link[^>]*href)="[^"]*_static/scripts/fontawesome\.js'
                    r'[^"]*"[^>]*>(?:</script>)?\n?')
SEARCH = re.compile(r'\s*<script src="[^"]*(?:_static/searchtools\.js|_static/language_data\.js|'
                    r'searchindex\.js)[^"]*"></script>')
THEBE = re.compile(r'\s*<script>const THEBE_JS_URL = [^<]*</script>|'
                   r'\s*<script[^>]*src="[^"]*_static/sphinx-thebe\.js[^"]*"[^>]*></script>|'
                   r'\s*<link[^>]*href="[^"]*_static/sphinx-thebe\.css[^"]*"[^>]*/?>|'
                   r'\s*<script type="text/x-thebe-config">.*?</script>', re.S)
DESIGN = re.compile(r'\s*<(?:link[^>]*href="[^"]*_static/sphinx-design\.min\.css[^"]*"[^>]*/?>|'
                    r'script[^>]*src="[^"]*_static/design-tabs\.js[^"]*"[^>]*></script>)')
DEFERRED = re.compile(r'<script src="([^"]*_static/(?:doctools|sphinx_highlight|translations|'
                      r'copybutton|togglebutton|scripts/sphinx-book-theme)\.js[^"]*)"></script>')
WEIGHTS = re.compile(r'<script type="application/json" class="tc-weights">(.*?)</script>', re.S)
IMG = re.compile(r"<img\b[^>]*>")
MODE = re.compile(r'(<script data-cfasync="false">)\s*document\.documentElement\.dataset\.mode = '
                  r'localStorage\.getItem\("mode"\) \|\| "(\w*)";\s*document\.documentElement'
                  r'\.dataset\.theme = localStorage\.getItem\("theme"\) \|\| "\w*";\s*(</script>)')
RESOLVED_MODE = (r'\1\n    {\n      const mode = localStorage.getItem("mode") || "\2";'
                 r'\n      const dark = matchMedia("(prefers-color-scheme: dark)").matches;'
                 r'\n      document.documentElement.dataset.mode = mode;'
                 r'\n      document.documentElement.dataset.theme ='
                 r'\n        mode === "light" || mode === "dark" ? mode : dark ? "dark" : "light";'
                 r'\n    }\n  \3')
# pydata-sphinx-theme 0.17's pass over the blocks that scroll (see the docstring), and the
# same function returning at once.
THEME_SCRIPT = Path("_static") / "scripts" / "pydata-sphinx-theme.js"
THEME_STOPS = 'function I(){const e=()=>{document.querySelectorAll(["pre",'
OUR_STOPS = 'function I(){return;const e=()=>{document.querySelectorAll(["pre",'
CLASS = re.compile(r'class="([^"]*\bfa-[^"]*)"')
VIEWBOX = re.compile(r'viewBox="0 0 (\d+) (\d+)"')
CSS_NAME = "tc-icons.css"
PURGE = Path(__file__).resolve().parent.parent / "css" / "purge.js"
# The style sheets cut to what the site uses (the glob: myst-nb's name carries a hash).
THEME_SHEETS = ("_static/styles/pydata-sphinx-theme.css", "_static/styles/sphinx-book-theme.css",
                "_static/mystnb.*.css")


def _configure(app: Sphinx, config: Config) -> None:
    app.add_css_file(CSS_NAME)


def _icons(html: str) -> set[tuple[str, str]]:
    """The ``(style, name)`` of every Font Awesome icon a page uses."""
    found = set()
    for classes in CLASS.findall(html):
        tokens = classes.split()
        style = next((STYLES[t] for t in tokens if t in STYLES), "solid")
        for token in tokens:
            if token.startswith("fa-") and token not in STYLES and token not in MODIFIERS:
                found.add((style, token[3:]))
    return found


def icon_css(icons: set[tuple[str, str]], svgs: Path) -> str:
    """One zero-specificity rule per icon: the SVG as a mask over the text colour."""
    rules = [f"/* Icons from Font Awesome Free ({PACKAGE}, CC BY 4.0), drawn as CSS masks. */",
             ":where(.fa-lg){font-size:1.25em;line-height:.05em;vertical-align:-.075em}",
             ":where(.fa-fw){text-align:center;width:1.25em}",
             # The masks draw the icons: the classes need no webfont any more.
             ".fa,.fa-solid,.fas,.fa-regular,.far,.fa-brands,.fab{font-family:inherit}"]
    for style, name in sorted(icons):
        path = svgs / style / f"{name}.svg"
        if not path.exists():
            raise ExtensionError(f"the theme uses the icon fa-{name} ({style}), which {path} "
                                 "does not have")
        svg = re.sub(r"<!--.*?-->", "", path.read_text(encoding="utf-8"))
        width, height = (int(n) for n in VIEWBOX.search(svg).groups())
        url = 'url("data:image/svg+xml,' + quote(svg, safe=" =:/<>") + '")'
        rules.append(
            f":where(.fa-{name}){{display:inline-block;width:{width / height:.4g}em;"
            f"height:1em;vertical-align:-.125em;background-color:currentColor;"
            f"-webkit-mask:{url} center/contain no-repeat;mask:{url} center/contain no-repeat}}")
    return "\n".join(rules) + "\n"


def deferred(html: str) -> str:
    """The page with the scripts that wait for the parsed page anyway marked ``defer``."""
    return DEFERRED.sub(r'<script defer src="\1"></script>', html)


def picture_size(path: Path) -> tuple[int, int] | None:
    """A picture's width and height in pixels, read from its header by Pillow (which
    matplotlib installs); None for a file Pillow cannot read, such as an SVG."""
    try:
        with Image.open(path) as picture:
            return picture.size
    except OSError:  # UnidentifiedImageError too
        return None


def lazy_pictures(html: str, page: Path) -> str:
    """The page with every ``<img>`` loaded lazily, and sized when it is a picture of the
    book's that the tag does not size."""
    def mark(match: re.Match) -> str:
        tag = match.group(0)
        if re.search(r"\sloading=", tag):
            return tag
        extra = ' loading="lazy" decoding="async"'
        # A picture of the book's (Sphinx copies them to _images/), not the theme's icons,
        # which its style sheet sizes, nor data: or http: addresses.
        src = re.search(r'\ssrc="((?:\.\./)*_images/[^":]+)"', tag)
        if src and not re.search(r"\s(?:width|height|style)=", tag):
            size = picture_size(page.parent / unquote(src.group(1)))
            if size:
                extra += f' width="{size[0]}" height="{size[1]}"'
        return tag[:4] + extra + tag[4:]

    return IMG.sub(mark, html)


def external_weights(html: str, page: Path, outdir: Path) -> str:
    """The page with each language model's weights moved to ``_static/lm/<hash>.js`` (one
    file per distinct model, shared by the pages that show it)."""
    def move(match: re.Match) -> str:
        data = match.group(1)  # JSON with <, > and & escaped: also a JavaScript expression
        key = hashlib.sha256(data.encode("utf-8")).hexdigest()[:16]
        target = outdir / "_static" / "lm" / f"{key}.js"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"(window.TcWeights = window.TcWeights || {{}})"
                              f"[{json.dumps(key)}] = {data};\n", encoding="utf-8")
        src = Path(os.path.relpath(target, page.parent)).as_posix()
        return (f'<script type="application/json" class="tc-weights" data-src="{src}" '
                f'data-key="{key}"></script>')

    return WEIGHTS.sub(move, html)


def resolved_mode(html: str) -> str:
    """The page with the head script that sets its colour theme resolving "auto" itself."""
    return MODE.sub(RESOLVED_MODE, html)


def theme_without_stops(outdir: Path) -> None:
    """Switch off the theme script's own pass over the blocks that scroll (tc-scroll.js
    does it near the screen)."""
    script = outdir / THEME_SCRIPT
    text = script.read_text(encoding="utf-8")
    if OUR_STOPS in text:
        return
    if text.count(THEME_STOPS) != 1:
        raise ExtensionError(f"{script} no longer holds the theme's scroll-stop pass "
                             f"({THEME_STOPS!r}): update coursebook_lean for the new theme")
    script.write_text(text.replace(THEME_STOPS, OUR_STOPS), encoding="utf-8")


def cut_style_sheets(outdir: Path, node_modules: Path, *,
                     patterns: tuple[str, ...] = THEME_SHEETS) -> dict[str, list[int]]:
    """Cut the style sheets that ``patterns`` find under ``outdir`` to the rules the site can
    use (``tools/css/purge.js``); return each sheet's bytes before and after."""
    sheets = sorted(p.relative_to(outdir).as_posix() for pattern in patterns
                    for p in outdir.glob(pattern))
    if not sheets:
        return {}
    done = subprocess.run(["node", str(PURGE), str(outdir), *sheets], capture_output=True,
                          text=True, env={**os.environ, "NODE_PATH": str(node_modules)})
    if done.returncode:
        raise ExtensionError(f"PurgeCSS (tools/css/purge.js): {done.stderr.strip()}")
    return json.loads(done.stdout)


def _lighten(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    svgs = Path(app.config.tc_node_modules) / PACKAGE / "svgs"
    if not svgs.is_dir():
        raise ExtensionError(f"{svgs} is missing: run `npm ci` at the repository root "
                             "(make book does)")
    search_as_you_type = str(app.config.html_theme_options.get("search_as_you_type", False))
    launch = app.config.html_theme_options.get("launch_buttons") or {}
    thebe = bool(launch.get("thebe", False))
    used: set[tuple[str, str]] = set()
    for page in outdir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        used |= _icons(html)
        lean = resolved_mode(SCRIPT.sub("", html))
        if page.name != "search.html" and search_as_you_type.lower() != "true":
            lean = SEARCH.sub("", lean)
        if not thebe:
            lean = THEBE.sub("", lean)
        if page.name != "search.html":
            lean = deferred(lean)
        lean = external_weights(lean, page, outdir)
        lean = lazy_pictures(lean, page)
        if 'class="sd-' not in lean and "class='sd-" not in lean:
            lean = DESIGN.sub("", lean)
        if lean != html:
            page.write_text(lean, encoding="utf-8")
    (outdir / "_static" / CSS_NAME).write_text(icon_css(used, svgs), encoding="utf-8")
    for leftover in (outdir / "_static" / "scripts").glob("fontawesome.js*"):
        leftover.unlink()
    theme_without_stops(outdir)
    cut_style_sheets(outdir, Path(app.config.tc_node_modules))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _configure)
    app.connect("build-finished", _lighten)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
