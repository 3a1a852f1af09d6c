"""Sphinx extension of the course book: language switcher, offline JavaScript.

* ``tc_languages``: ``[[code, name], ...]``; every page gets a switcher whose links land on
  the same page in the other languages (``../<code>/<page>.html``).
* ``tc_node_modules``: the folder ``npm ci`` filled; the files listed in ``VENDOR`` are copied
  into ``_static/vendor/`` of the site, so that bertviz's libraries are served by the site
  itself, never by a CDN.
* ``tc_chrome``: the page chrome in the page's language. The themes and myst-nb leave a few
  interface strings untranslated in French and Italian (sidebar toggles, the launch button,
  the hidden-code toggle, ...): ``CHROME`` gives them in each language, the footer is our own
  template, and ``build-finished`` replaces each English attribute or text that remains in
  the written pages (tests/site/test_page_language.py checks that none is left).
* The head of every page: a favicon of the site's own (no request for ``/favicon.ico``
  that would answer 404), the theme's colour mode defaulting to "auto" (pydata's template
  otherwise writes an empty mode, and its script logs "Got invalid theme mode"), and a
  meta description in the page's language: the page's first paragraph, shortened.
* No widget embedder: the explorers are self-contained HTML and JavaScript
  (``transformer_course/reader/js``), and no chapter output holds ipywidgets, so no page loads
  ``@jupyter-widgets/html-manager`` (tests/site/test_site.py checks that no page holds widget
  state).
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

HERE = Path(__file__).resolve().parent

# node_modules path -> path under _static/vendor/
VENDOR = {
    "requirejs/require.js": "require.js",
    "d3/dist/d3.min.js": "d3.min.js",
    "jquery/dist/jquery.min.js": "jquery.min.js",
}


# Interface strings that the themes (sphinx-book-theme, pydata-sphinx-theme), myst-nb and
# sphinx-copybutton show in English on French and Italian pages, in the page's language.
CHROME: dict[str, dict[str, str]] = {
    "fr": {
        "Toggle hidden content": "Afficher ou masquer le contenu",
        "Launch interactive content": "Ouvrir dans un environnement interactif",
        "Launch on Colab": "Ouvrir dans Colab",
        "Colab logo": "Logo de Colab",
        "Toggle primary sidebar": "Afficher ou masquer le sommaire",
        "Toggle secondary sidebar": "Afficher ou masquer le plan de la page",
        "Main": "Sommaire du livre",
        "Link to this heading": "Lien vers cette rubrique",
        "System Settings": "Réglages du système",
        "Color mode": "Thème",
        "Page": "Page",
        "Language": "Langue",
        "Show code cell source": "Afficher le code de la cellule",
        "Hide code cell source": "Masquer le code de la cellule",
        "footer": "© 2026 Le cours «\u00a0Attention et Transformers\u00a0» · licence MIT",
    },
    "it": {
        "Toggle hidden content": "Mostrate o nascondete il contenuto",
        "Launch interactive content": "Aprite in un ambiente interattivo",
        "Launch on Colab": "Aprite in Colab",
        "Colab logo": "Logo di Colab",
        "Toggle primary sidebar": "Mostrate o nascondete l’indice",
        "Toggle secondary sidebar": "Mostrate o nascondete lo schema della pagina",
        "Main": "Indice del libro",
        "Link to this heading": "Collegamento a questo paragrafo",
        "System Settings": "Impostazioni di sistema",
        "Color mode": "Tema",
        "Page": "Pagina",
        "Language": "Lingua",
        "Show code cell source": "Mostrate il codice della cella",
        "Hide code cell source": "Nascondete il codice della cella",
        "footer": "© 2026 Il corso «Attenzione e Transformer» · licenza MIT",
    },
    "en": {
        "Language": "Language",
        "Show code cell source": "Show code cell source",
        "Hide code cell source": "Hide code cell source",
        "footer": "© 2026 The Attention & Transformers course · MIT licence",
    },
}
# The themes' own Italian speaks to one reader (tu: «Torna in alto»); the book says voi.
ITALIAN_VOI: dict[str, str] = {
    "Passa ai contenuti principali": "Passate al contenuto principale",
    "Torna in alto": "Tornate in alto",
    "Cerca": "Cercate",
    "Scarica il file sorgente": "Scaricate il file sorgente",
    "Scarica il file del taccuino": "Scaricate il notebook",
    "Scarica questa pagina": "Scaricate questa pagina",
    "Clicca per mostrare": "Cliccate per mostrare",
    "Clicca per nascondere": "Cliccate per nascondere",
}
# sphinx-copybutton's Italian, in the voi form, replaces its own on Italian sites.
COPYBUTTON_IT = """  'it' : {
    'copy': 'Copiate',
    'copy_to_clipboard': 'Copiate negli appunti',
    'copy_success': 'Copiato!',
    'copy_failure': 'Copia non riuscita',
  },
"""


def chrome(language: str) -> dict[str, str]:
    """The chrome strings of ``language`` (English for a language the course lacks)."""
    return {**CHROME["en"], **CHROME.get(language, {})}


def _configure(app: Sphinx, config: Config) -> None:
    config.templates_path.append(str(HERE / "templates"))
    config.html_static_path.append(str(HERE / "static"))
    config.html_favicon = config.html_favicon or str(HERE / "static" / "favicon.svg")
    options = dict(config.html_theme_options or {})
    end = list(options.get("article_header_end") or ["article-header-buttons.html"])
    if "language-switcher.html" not in end:
        end.insert(0, "language-switcher.html")
    options["article_header_end"] = end
    options["footer_content_items"] = ["tc-footer.html"]  # the footer in the page's language
    config.html_theme_options = options
    strings = chrome(config.language or "en")
    config.nb_code_prompt_show = strings["Show code cell source"]
    config.nb_code_prompt_hide = strings["Hide code cell source"]
    # myst-nb adds its widget scripts (from a CDN by default) to every page that holds
    # ipywidgets state: none does, and none may load anything from outside.
    config.nb_ipywidgets_js = {}
    app.add_css_file("course.css")
    app.add_js_file("tc-scroll.js", loading_method="defer")  # wide formulas: keyboard scroll
    app.add_js_file("tc-sidebars.js", loading_method="defer")  # the visible sidebar buttons


DESCRIPTION_LENGTH = 155  # what search engines show of a description


def description(body: str, limit: int = DESCRIPTION_LENGTH) -> str:
    """The text of the first paragraph of a page's HTML body, cut at a word near ``limit``."""
    match = re.search(r"<p\b[^>]*>(.*?)</p>", body, re.S)
    if match is None:
        return ""
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict,
                  doctree: object) -> None:
    context["default_mode"] = "auto"
    summary = description(context.get("body") or "")
    if summary:
        context["metatags"] = (context.get("metatags") or "") + (
            f'\n<meta name="description" content="{html.escape(summary)}" />')
    up = "../" * (pagename.count("/") + 1)
    here = app.config.language
    context["tc_chrome"] = chrome(here or "en")
    context["tc_language_links"] = [
        {"code": code, "name": name, "current": code == here,
         "href": f"{up}{code}/{pagename}.html"}
        for code, name in app.config.tc_languages
    ]


def _copy_vendor(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    modules = Path(app.config.tc_node_modules)
    target = Path(app.outdir) / "_static" / "vendor"
    for source, name in VENDOR.items():
        path = modules / source
        if not path.exists():
            raise ExtensionError(
                f"{path} is missing: run `npm ci` at the repository root (make book does)"
            )
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, destination, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("*.map", "*.LICENSE.txt"))
        else:
            shutil.copy2(path, destination)


def _localise_chrome(app: Sphinx, exception: Exception | None) -> None:
    """Replace the chrome strings the themes wrote in English, on every written page."""
    if exception is not None or app.builder.format != "html":
        return
    language = app.config.language or "en"
    if language == "en":
        return
    table = {en: text for en, text in chrome(language).items() if en != "footer" and en != text}
    if language == "it":
        table.update(ITALIAN_VOI)
    # A string is a whole attribute value, element text or JavaScript string literal.
    pattern = re.compile("([\"'>])(" + "|".join(re.escape(en) for en in table) + ")([\"'<])")
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        new = pattern.sub(lambda m: m.group(1) + table[m.group(2)] + m.group(3), html)
        if new != html:
            page.write_text(new, encoding="utf-8")
    script = outdir / "_static" / "copybutton.js"
    if language == "it" and script.exists():
        text = script.read_text(encoding="utf-8")
        # Newer releases ship Italian in the tu form ('Copiare'): ours replaces it.
        text = re.sub(r"  'it' : \{[^}]*\},?\n", "", text)
        if "const messages = {\n" in text:
            script.write_text(text.replace("const messages = {\n",
                                           "const messages = {\n" + COPYBUTTON_IT, 1),
                              encoding="utf-8")


# Controls whose visible text is their name, but whose aria-label gave them another one
# (WCAG 2.5.3, label in name; axe: label-content-name-mismatch): the label goes.
# - the theme's search field, a button that shows "Search", then Ctrl+K;
# - myst-nb's toggle of a hidden cell's code, a <summary> that shows "Show code cell source"
#   (or "Hide ..." when open: CSS hides the other line) and was labelled "Toggle hidden
#   content".
NAMED_BY_THEIR_TEXT = re.compile(
    r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"'
    r'|(<summary) aria-label="[^"]*"(>\s*<p class="collapsed admonition-title">)')


def _name_by_visible_text(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = NAMED_BY_THEIR_TEXT.sub(lambda m: m.group(1) or m.group(2) + m.group(3), text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    from coursebook_kernels import use_private_ipc_kernels

    use_private_ipc_kernels()  # the languages build side by side: no kernel port collisions
    app.add_config_value("tc_languages", [], "html")
    app.add_config_value("tc_node_modules", "node_modules", "html")
    app.setup_extension("coursebook_typography")  # French and Italian typography
    app.setup_extension("coursebook_glossary")  # the glossary pages, from book/glossary.yml
    app.setup_extension("coursebook_lean")  # icons as CSS, no search index or thebe per page
    app.setup_extension("coursebook_maths")  # formulas typeset at build time, no MathJax
    app.setup_extension("coursebook_styles")  # one merged style sheet per page
    app.setup_extension("coursebook_streams")  # a print split in two messages stays one line
    app.setup_extension("coursebook_diagram")  # {course-diagram}: tc.diagram at build time
    app.setup_extension("coursebook_teaching")  # decks and PDFs in the menus, quiz progress
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_vendor)
    app.connect("build-finished", _localise_chrome)
    app.connect("build-finished", _name_by_visible_text)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
