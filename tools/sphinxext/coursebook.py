"""Sphinx extension of the course book: language switcher, offline JavaScript.

* ``tc_languages``: ``[[code, name], ...]``; every page gets a switcher whose links land on
  the same page in the other languages (``../<code>/<page>.html``).
* ``tc_node_modules``: the folder ``npm ci`` filled; the files listed in ``VENDOR`` are copied
  into ``_static/vendor/`` of the site, so that bertviz's libraries are served by the site
  itself, never by a CDN.
* No widget embedder: the explorers are self-contained HTML and JavaScript
  (``transformer_course/js``), and no chapter output holds ipywidgets, so no page loads
  ``@jupyter-widgets/html-manager`` (tests/test_site.py checks that no page holds widget state).
"""

from __future__ import annotations

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


def _configure(app: Sphinx, config: Config) -> None:
    config.templates_path.append(str(HERE / "templates"))
    config.html_static_path.append(str(HERE / "static"))
    options = dict(config.html_theme_options or {})
    end = list(options.get("article_header_end") or ["article-header-buttons.html"])
    if "language-switcher.html" not in end:
        end.insert(0, "language-switcher.html")
    options["article_header_end"] = end
    config.html_theme_options = options
    # myst-nb adds its widget scripts (from a CDN by default) to every page that holds
    # ipywidgets state: none does, and none may load anything from outside.
    config.nb_ipywidgets_js = {}
    app.add_css_file("course.css")


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict,
                  doctree: object) -> None:
    up = "../" * (pagename.count("/") + 1)
    here = app.config.language
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


def setup(app: Sphinx) -> dict:
    app.add_config_value("tc_languages", [], "html")
    app.add_config_value("tc_node_modules", "node_modules", "html")
    app.setup_extension("coursebook_typography")  # French and Italian typography
    app.setup_extension("coursebook_glossary")  # the glossary pages, from book/glossary.yml
    app.setup_extension("coursebook_diagram")  # {course-diagram}: tc.diagram at build time
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_vendor)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
