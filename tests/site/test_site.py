"""The built site: every page in every language, language switcher, Colab links, offline."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
LANGS = list(CONFIG["languages"])
PAGES = sorted(p.stem for p in (ROOT / "book" / "en").iterdir() if p.suffix in (".md", ".ipynb"))
NOTEBOOKS = sorted(p.stem for p in (ROOT / "book" / "en").glob("*.ipynb"))


class Tags(HTMLParser):
    """Collect the tags of a page with their attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(path):
    parser = Tags()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.tags


def test_every_page_is_built_in_every_language(site):
    assert PAGES, "book/en has no pages"
    for lang in LANGS:
        for page in PAGES:
            assert (site / lang / f"{page}.html").exists(), f"{lang}/{page}.html was not built"
    assert (site / "index.html").exists()


@pytest.mark.parametrize("lang", LANGS)
def test_html_lang_and_localised_theme(site, lang):
    meta = CONFIG["languages"][lang]
    for page in PAGES:
        html = (site / lang / f"{page}.html").read_text(encoding="utf-8")
        assert re.search(rf'<html lang="{lang}"', html), f"{lang}/{page}: wrong <html lang>"
        assert f'placeholder="{meta["search"]}"' in html, f"{lang}/{page}: search box"
        assert "<title>" in html and meta["title"] in html, page
    toc_title = {"en": "Contents", "fr": "Contenu", "it": "Contenuti"}[lang]  # theme strings
    assert toc_title in (site / lang / "02_self_attention.html").read_text(encoding="utf-8")
    options = (site / lang / "_static" / "documentation_options.js").read_text(encoding="utf-8")
    assert f"LANGUAGE: '{lang}'" in options  # the search index's stemmer and stop words
    assert (site / lang / "searchindex.js").exists()


def test_every_page_has_a_description_a_canonical_link_and_an_icon(site):
    """The head a search engine and a browser read: a description in the page's language (its
    first paragraph: not the English page's words on a French or Italian page), the canonical
    address on the published site, and the site's icon (no request for /favicon.ico)."""
    base = CONFIG["site_url"].rstrip("/")
    descriptions = {}
    for lang in LANGS:
        for page in PAGES:
            tags = parse(site / lang / f"{page}.html")
            metas = [a.get("content", "") for t, a in tags
                     if t == "meta" and a.get("name") == "description"]
            assert len(metas) == 1 and len(metas[0]) >= 40, f"{lang}/{page}: description {metas}"
            assert len(metas[0]) <= 160, f"{lang}/{page}: description of {len(metas[0])} chars"
            descriptions[lang, page] = metas[0]
            links = {a.get("rel"): a.get("href") for t, a in tags if t == "link"}
            assert links.get("canonical") == f"{base}/{lang}/{page}.html", (lang, page, links)
            assert links.get("icon", "").endswith("favicon.svg"), (lang, page, links)
            if lang != "en" and ("en", page) in descriptions:
                assert metas[0] != descriptions["en", page], f"{lang}/{page}: English description"
        # the search field's name is its visible text (no aria-label that differs from it)
        fields = [a for t, a in tags
                  if t == "button" and "search-button-field" in a.get("class", "")]
        assert fields and not any("aria-label" in a for a in fields), (lang, page, fields)
    root = {a.get("rel"): a.get("href") for t, a in parse(site / "index.html") if t == "link"}
    assert root.get("canonical") == f"{base}/index.html"
    assert root.get("icon", "").startswith("data:image/svg+xml,"), root


@pytest.mark.parametrize("lang", LANGS)
def test_switcher_lands_on_the_same_page(site, lang):
    for page in PAGES:
        tags = parse(site / lang / f"{page}.html")
        links = [a for tag, a in tags if tag == "a" and "tc-language" in a.get("class", "")]
        assert {a["hreflang"] for a in links} == set(LANGS) - {lang}, page
        for a in links:
            assert a["href"] == f"../{a['hreflang']}/{page}.html"
            assert (site / lang / a["href"]).resolve().exists(), a["href"]


def test_root_page_offers_every_language(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    for lang in LANGS:
        assert f'href="{lang}/index.html"' in html
    assert "navigator.language" in html


@pytest.mark.parametrize("lang", LANGS)
def test_colab_links_point_at_the_matching_notebook(site, lang):
    repo = CONFIG["repository"]["url"].removeprefix("https://github.com/")
    branch = CONFIG["repository"]["branch"]
    for page in NOTEBOOKS:
        hrefs = [a.get("href", "") for tag, a in parse(site / lang / f"{page}.html") if tag == "a"]
        colab = [h for h in hrefs if h.startswith(CONFIG["launch_buttons"]["colab_url"])]
        assert colab == [f"https://colab.research.google.com/github/{repo}/blob/{branch}/"
                         f"book/{lang}/{page}.ipynb"], colab


def install_cell(lang, page):
    nb = json.loads((ROOT / "book" / lang / f"{page}.ipynb").read_text(encoding="utf-8"))
    return "".join(next(c for c in nb["cells"] if c["cell_type"] == "code")["source"])


def test_install_cell_is_the_same_everywhere_and_uses_the_configured_repository():
    assert NOTEBOOKS
    first = install_cell("en", NOTEBOOKS[0])
    match = re.search(r'REPOSITORY = "([^"]+)"', first)
    assert match and match.group(1) == CONFIG["repository"]["url"]
    assert '"google.colab" in sys.modules' in first and "find_spec(\"transformer_course\")" in first
    for lang in LANGS:
        for page in NOTEBOOKS:
            cell = install_cell(lang, page)
            code = [line for line in cell.splitlines() if not line.startswith("#")]
            assert code == [line for line in first.splitlines() if not line.startswith("#")], (
                f"{lang}/{page}: the install cell differs")


def test_notebooks_use_the_best_device():
    for page in NOTEBOOKS:
        text = (ROOT / "book" / "en" / f"{page}.ipynb").read_text(encoding="utf-8")
        assert "tc.device()" in text, page


def external(url):
    return bool(re.match(r"^(https?:)?//", url))


@pytest.mark.parametrize("lang", LANGS)
def test_no_resource_is_loaded_from_outside(site, lang):
    for path in sorted((site / lang).glob("*.html")):
        html = path.read_text(encoding="utf-8")
        for tag, attrs in parse(path):
            if tag in ("script", "img", "iframe", "source", "video", "audio"):
                assert not external(attrs.get("src", "")), f"{path.name}: {tag} {attrs['src']}"
            if tag == "link" and {"stylesheet", "preload", "icon"} & set(
                    attrs.get("rel", "").split()):
                assert not external(attrs.get("href", "")), f"{path.name}: link {attrs['href']}"
        assert "cdn.jsdelivr.net" not in html and "cdnjs.cloudflare.com" not in html, path.name
        for url in re.findall(r"""@import\s+url\(["']?([^"')]+)""", html):
            assert not external(url), f"{path.name}: @import {url}"


@pytest.mark.parametrize("lang", LANGS)
def test_offline_assets_are_served(site, lang):
    static = site / lang / "_static"
    for name in ("vendor/require.js", "vendor/d3.min.js", "vendor/jquery.min.js",
                 "mathjax/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
                 "tc-maths.css", "course.css"):
        assert (static / name).exists(), name


@pytest.mark.parametrize("lang", LANGS)
def test_executed_pages_have_outputs_and_no_errors(site, lang):
    for page in NOTEBOOKS:
        html = (site / lang / f"{page}.html").read_text(encoding="utf-8")
        assert 'class="cell_output' in html, f"{lang}/{page}: no outputs"
        assert "Traceback (most recent call last)" not in html, f"{lang}/{page}"
        assert 'class="output error' not in html and 'class="output traceback' not in html


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_holds_ipywidgets_or_loads_a_widget_embedder(site, lang):
    # The explorers are self-contained HTML and JavaScript; an ipywidgets output (a tqdm bar
    # from tqdm.auto, a widget) would show nothing on the static page, since no embedder loads.
    for path in sorted((site / lang).glob("*.html")):
        html = path.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-state+json" not in html, path.name
        assert "application/vnd.jupyter.widget-view+json" not in html, path.name
        assert "html-manager" not in html and "course.js" not in html, path.name
    explorers = (site / lang / "02_self_attention.html").read_text(encoding="utf-8")
    assert 'class="tc-explorer' in explorers and 'data-kind="beta"' in explorers
