"""The book's pages carry only what they use (tools/sphinxext/coursebook_lean.py): the
theme's icons as CSS masks drawn from Font Awesome's own SVGs, not its 1.5 MB script."""

import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
import coursebook_lean as lean  # noqa: E402
import coursebook_styles as styles  # noqa: E402

SVGS = ROOT / "node_modules" / lean.PACKAGE / "svgs"
STYLE_SHEET = re.compile(r'<link [^>]*rel="stylesheet"[^>]*href="([^"]+)"')


def test_icons_are_found_in_the_classes_a_page_uses():
    html = ('<i class="fa-solid fa-bars"></i><span class="fab fa-github"></span>'
            '<i class="theme-switch fa-solid fa-sun  fa-lg"></i><p class="other">x</p>')
    assert lean._icons(html) == {("solid", "bars"), ("brands", "github"), ("solid", "sun")}


def test_each_icon_becomes_a_mask_in_the_text_colour():
    if not SVGS.is_dir():
        pytest.fail(f"{SVGS} is missing: run `npm ci` (make setup does)")
    css = lean.icon_css({("solid", "bars"), ("brands", "github")}, SVGS)
    assert ":where(.fa-bars){display:inline-block;width:0.875em;" in css  # 448 x 512
    assert css.count(";mask:url(\"data:image/svg+xml,") == 2  # and -webkit-mask
    assert "background-color:currentColor" in css and "CC BY 4.0" in css
    with pytest.raises(Exception, match="fa-no-such-icon"):
        lean.icon_css({("solid", "no-such-icon")}, SVGS)


def test_scripts_that_wait_for_the_page_are_deferred_in_order():
    head = "".join(f'<script src="_static/{name}.js?v=1"></script>' for name in (
        "documentation_options", "doctools", "sphinx_highlight", "clipboard.min", "copybutton",
        "scripts/sphinx-book-theme", "togglebutton", "translations"))
    blocking = re.findall(r'<script src="_static/([^"?]*)', lean.deferred(head))
    assert blocking == ["documentation_options.js", "clipboard.min.js"]
    assert re.findall(r'<script defer src="_static/([^"?]*)', lean.deferred(head)) == [
        "doctools.js", "sphinx_highlight.js", "copybutton.js", "scripts/sphinx-book-theme.js",
        "togglebutton.js", "translations.js"]


def test_pictures_load_lazily_and_the_book_s_get_their_size(tmp_path):
    from PIL import Image

    (tmp_path / "_images").mkdir()
    (tmp_path / "_static").mkdir()
    Image.new("RGB", (640, 360)).save(tmp_path / "_images" / "a plot.png")
    Image.new("RGB", (640, 360)).save(tmp_path / "_static" / "logo.png")  # the theme's
    (tmp_path / "_images" / "b.svg").write_text("<svg/>", encoding="utf-8")
    page = tmp_path / "page.html"
    html = ('<p><img alt="A" src="_images/a%20plot.png" /></p><img src="_images/b.svg">'
            '<img src="_images/a%20plot.png" width="50%"><img src="data:image/png;base64,AA==">'
            '<img loading="eager" src="_images/a%20plot.png"><img src="_static/logo.png">')
    once = lean.lazy_pictures(html, page)
    assert re.findall(r"<img[^>]*>", once) == [
        '<img loading="lazy" decoding="async" width="640" height="360" alt="A" '
        'src="_images/a%20plot.png" />',
        '<img loading="lazy" decoding="async" src="_images/b.svg">',
        '<img loading="lazy" decoding="async" src="_images/a%20plot.png" width="50%">',
        '<img loading="lazy" decoding="async" src="data:image/png;base64,AA==">',
        '<img loading="eager" src="_images/a%20plot.png">',
        '<img loading="lazy" decoding="async" src="_static/logo.png">']
    assert lean.lazy_pictures(once, page) == once  # a second build changes nothing
    assert lean.picture_size(tmp_path / "_images" / "b.svg") is None


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_built_pictures_load_lazily_at_their_own_size(site, lang):
    sized = 0
    for page in sorted((site / lang).glob("*.html")):
        for tag in re.findall(r"<img\b[^>]*>", page.read_text(encoding="utf-8")):
            assert 'loading="lazy"' in tag, (page.name, tag[:120])
            src = re.search(r'src="([^"]+)"', tag).group(1)
            if "_images/" in src:
                size = re.search(r'width="(\d+)" height="(\d+)"', tag)
                assert size, (page.name, tag[:120])
                on_disk = lean.picture_size(page.parent / unquote(src))
                assert on_disk == tuple(map(int, size.groups())), (page.name, src)
                sized += 1
    assert sized >= 30, f"{lang}: {sized} sized pictures"


def test_weights_move_to_one_file_per_model(tmp_path):
    weights = '{"chars":["\\u003c/script\\u003e","é"],"tensors":{"a":{"data":"AAE="}}}'
    other = '{"chars":["b"]}'
    div = '<div class="tc-explorer"><script type="application/json" class="tc-weights">{}</script>'
    page = tmp_path / "sub" / "page.html"
    html = lean.external_weights(div.format(weights) + div.format(other) + div.format(weights),
                                 page, tmp_path)
    files = sorted((tmp_path / "_static" / "lm").glob("*.js"))
    assert len(files) == 2 and "class=\"tc-weights\">{" not in html
    found = re.findall(r'class="tc-weights" data-src="([^"]+)" data-key="([0-9a-f]{16})"></script>',
                       html)
    assert [src for src, _ in found] == [f"../_static/lm/{key}.js" for _, key in found]
    assert found[0] == found[2] != found[1]
    text = (tmp_path / "_static" / "lm" / f"{found[0][1]}.js").read_text(encoding="utf-8")
    prefix = f'(window.TcWeights = window.TcWeights || {{}})["{found[0][1]}"] = '
    assert text.startswith(prefix) and text.endswith(";\n")
    assert json.loads(text[len(prefix):-2]) == json.loads(weights)


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_built_pages_carry_no_weights_and_name_files_that_exist(site, lang):
    moved = 0
    for page in sorted((site / lang).glob("*.html")):
        html = page.read_text(encoding="utf-8")
        assert not re.search(r'class="tc-weights">[^<]', html), page.name
        for src in re.findall(r'class="tc-weights" data-src="([^"]+)"', html):
            assert (page.parent / src).is_file(), (page.name, src)
            moved += 1
    assert moved == 1  # chapter 10's explorer


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_built_pages_load_no_font_awesome_script_search_index_or_thebe(site, lang):
    maths = 'mjx-container[jax="CHTML"]'  # MathJax's own rules, first in tc-maths.css
    assert maths in (site / lang / "_static" / "tc-maths.css").read_text(encoding="utf-8")
    for page in sorted((site / lang).glob("*.html")):
        html = page.read_text(encoding="utf-8")
        assert "fontawesome.js" not in html and "THEBE_JS_URL" not in html, page.name
        assert ("searchindex.js" in html) == (page.name == "search.html"), page.name
        if page.name != "search.html":  # nothing else stops the page from painting
            blocking = re.findall(r'<script src="[^"]*_static/([^"?]*)', html)
            assert set(blocking) <= {"documentation_options.js", "clipboard.min.js"}, (
                page.name, blocking)
        # no page loads MathJax: its formulas were typeset when the book was built, and a page
        # with maths links their stylesheet (genindex and search have none)
        assert not re.search(r'<script[^>]*src="[^"]*mathjax', html, re.I), page.name
        assert "window.MathJax = " not in html, page.name  # (the quiz's script asks for one)
        (sheet,) = STYLE_SHEET.findall(html.split("</head>", 1)[0]) or [None]
        merged = (page.parent / sheet).read_text(encoding="utf-8") if sheet else ""
        assert (maths in merged) == ("<mjx-container" in html), page.name
    assert (site / lang / "_static" / "tc-icons.css").stat().st_size < 40_000


THEME_HEAD = """<head>
  <script data-cfasync="false">
    document.documentElement.dataset.mode = localStorage.getItem("mode") || "auto";
    document.documentElement.dataset.theme = localStorage.getItem("theme") || "auto";
  </script>
</head>"""


def test_the_head_script_resolves_the_colour_theme_as_the_theme_script_would():
    html = lean.resolved_mode(THEME_HEAD)
    assert 'localStorage.getItem("theme")' not in html  # a stale theme is never reused
    assert 'const mode = localStorage.getItem("mode") || "auto";' in html
    assert 'mode === "light" || mode === "dark" ? mode : dark ? "dark" : "light"' in html
    assert lean.resolved_mode(html) == html  # once only
    assert lean.resolved_mode("<head></head>") == "<head></head>"


def test_the_theme_script_s_own_scroll_stops_are_switched_off_once(tmp_path):
    script = tmp_path / lean.THEME_SCRIPT
    script.parent.mkdir(parents=True)
    script.write_text("(()=>{" + lean.THEME_STOPS + '".x"].join(", "))}})()')
    lean.theme_without_stops(tmp_path)
    lean.theme_without_stops(tmp_path)
    assert script.read_text().count("function I(){return;") == 1
    script.write_text("(()=>{function J(){}})()")  # another version of the theme
    with pytest.raises(Exception, match="scroll-stop pass"):
        lean.theme_without_stops(tmp_path)


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_built_pages_resolve_their_theme_in_the_head_and_the_theme_measures_nothing(site, lang):
    script = (site / lang / lean.THEME_SCRIPT).read_text(encoding="utf-8")
    assert lean.OUR_STOPS in script and lean.THEME_STOPS not in script
    for page in sorted((site / lang).glob("*.html")):
        html = page.read_text(encoding="utf-8")
        assert 'localStorage.getItem("theme") || "' not in html, page.name
        assert 'const dark = matchMedia("(prefers-color-scheme: dark)").matches;' in html, (
            page.name)


def test_a_style_sheet_keeps_the_rules_of_what_pages_and_scripts_name(tmp_path):
    """PurgeCSS (tools/css/purge.js) on a two-file site: a rule stays when a page or a script
    names its class or attribute value, goes otherwise, and the stale source map goes."""
    node_modules = ROOT / "node_modules"
    if not (node_modules / "purgecss").is_dir():
        pytest.fail(f"{node_modules / 'purgecss'} is missing: run `npm ci` (make setup does)")
    static = tmp_path / "_static" / "styles"
    static.mkdir(parents=True)
    (tmp_path / "page.html").write_text('<html data-theme="light"><p class="used">x</p></html>')
    (tmp_path / "_static" / "switch.js").write_text(
        'button.classList.add("opened"); document.documentElement.dataset.theme = "dark";')
    sheet = static / "theme.css"
    original = (".used{color:red}.opened{color:blue}.unused{color:green}"
                "html[data-theme=dark] .used{color:white}p{margin:0}\n"
                "/*# sourceMappingURL=theme.css.map */\n")
    sheet.write_text(original)
    (static / "theme.css.map").write_text('{"version": 3, "sources": [], "names": [], '
                                          '"mappings": ""}')
    sizes = lean.cut_style_sheets(tmp_path, node_modules,
                                  patterns=("_static/styles/theme.css",))
    css = sheet.read_text()
    assert ".used{" in css and ".opened{" in css and "p{" in css
    assert "html[data-theme=dark] .used" in css  # the dark mode: the scripts set data-theme
    assert ".unused" not in css and "sourceMappingURL" not in css
    assert not (static / "theme.css.map").exists()
    assert sizes == {"_static/styles/theme.css": [len(original), len(css)]}


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_the_theme_style_sheets_are_cut_to_what_the_site_uses(site, lang):
    static = site / lang / "_static"
    theme = static / "styles" / "pydata-sphinx-theme.css"
    css = theme.read_text(encoding="utf-8")
    assert theme.stat().st_size < 120_000  # 397 KB as the theme ships it
    assert not (static / "styles" / "pydata-sphinx-theme.css.map").exists()
    # the rules of what the scripts switch on, and of the dark mode, are still there
    for selector in ("html[data-theme=dark]", ".bd-sidebar-primary", ".search-button",
                     ".tooltip.show"):
        assert selector in css, selector
    (mystnb,) = static.glob("mystnb.*.css")
    assert mystnb.stat().st_size < 15_000  # 43 KB as myst-nb ships it


def test_a_page_s_style_sheets_become_one_in_the_same_order(tmp_path):
    """coursebook_styles on a small site: the sheets a page links, merged where the first
    was, in their order, a local @import inlined, relative url()s rebased for
    _static/styles/, the source map comment gone; two pages with the same sheets share
    one file, and a page with one sheet keeps it."""
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "fonts").mkdir()
    (static / "basic.css").write_text("p{margin:0}")
    (static / "styles" / "theme.css").write_text('@import "../basic.css";\n'
                                                 "h1{color:red}\n/*# sourceMappingURL=x */")
    (static / "maths.css").write_text("@font-face{src:url(fonts/m.woff)}"
                                      'i{background:url("data:image/svg+xml,<svg/>")}')
    links = ('<link href="_static/styles/theme.css?digest=1" rel="stylesheet" />\n'
             "<script src=x.js></script>\n"
             '<link rel="stylesheet" href="_static/maths.css" />\n')
    for name in ("a", "b"):
        (tmp_path / f"{name}.html").write_text(f"<html><head>{links}</head><body>"
                                               f'<link rel="stylesheet" href="late.css">'
                                               f"</body></html>")
    one = '<html><head><link rel="stylesheet" href="_static/maths.css" /></head></html>'
    (tmp_path / "c.html").write_text(one)
    made = styles.merge_style_sheets(tmp_path)
    (name,) = made
    assert made == {name: 2} and (tmp_path / "c.html").read_text() == one
    page = (tmp_path / "a.html").read_text()
    assert page == (f'<html><head><link rel="stylesheet" href="_static/styles/{name}" />\n'
                    '<script src=x.js></script>\n</head><body><link rel="stylesheet" '
                    'href="late.css"></body></html>')  # the body's link is not the head's
    merged = (static / "styles" / name).read_text()
    assert merged == ("p{margin:0}\nh1{color:red}\n\n@font-face{src:url(../fonts/m.woff)}"
                      'i{background:url("data:image/svg+xml,<svg/>")}')


@pytest.mark.parametrize("lang", ["en", "fr", "it"])
def test_every_page_links_one_style_sheet_whose_files_are_there(site, lang):
    for page in sorted((site / lang).glob("*.html")):
        head = page.read_text(encoding="utf-8").split("</head>", 1)[0]
        sheets = STYLE_SHEET.findall(head)
        assert len(sheets) == 1 and sheets[0].startswith("_static/styles/tc-"), (page, sheets)
        sheet = page.parent / sheets[0]
        for ref in re.findall(r"""url\(\s*['"]?([^)'"]+)""", sheet.read_text(encoding="utf-8")):
            if not re.match(r"(?:[a-z]+:|#)", ref):
                assert (sheet.parent / ref.split("?")[0].split("#")[0]).is_file(), (sheet, ref)
