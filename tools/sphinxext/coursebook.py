"""Sphinx extension of the course book: language switcher, offline JavaScript, widget fixes.

* ``tc_languages``: ``[[code, name], ...]``; every page gets a switcher whose links land on
  the same page in the other languages (``../<code>/<page>.html``).
* ``tc_node_modules``: the folder ``npm ci`` filled; the files listed in ``VENDOR`` are copied
  into ``_static/vendor/`` of the site, so that the widget embedder and bertviz's libraries
  are served by the site itself, never by a CDN.
* ``course.js``: small compatibility fixes between the widget embedder, MathJax 3 and the
  theme's icons.
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
    "@jupyter-widgets/html-manager/dist": "html-manager",
    "requirejs/require.js": "require.js",
    "d3/dist/d3.min.js": "d3.min.js",
    "jquery/dist/jquery.min.js": "jquery.min.js",
}
WIDGET_EMBEDDER = "vendor/html-manager/embed.js"


def _configure(app: Sphinx, config: Config) -> None:
    config.templates_path.append(str(HERE / "templates"))
    config.html_static_path.append(str(HERE / "static"))
    options = dict(config.html_theme_options or {})
    end = list(options.get("article_header_end") or ["article-header-buttons.html"])
    if "language-switcher.html" not in end:
        end.insert(0, "language-switcher.html")
    options["article_header_end"] = end
    config.html_theme_options = options
    # The widget embedder from npm, served by the site (no require.js needed).
    config.nb_ipywidgets_js = {WIDGET_EMBEDDER: {}}
    app.add_js_file("course.js", priority=100)  # before the theme's and the embedder's
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
    app.connect("config-inited", _configure)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_vendor)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
