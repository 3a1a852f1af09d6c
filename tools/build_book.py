#!/usr/bin/env python3
"""Build the book in every language: ``_build/html/{en,fr,it}/`` and a root ``index.html``.

Jupyter Book 1 has no translations, so each language folder under ``book/`` is built as its
own book from the shared ``_config.yml`` and ``_toc.yml``, with that language's ``language``
(theme strings, ``<html lang>``, search) and title. Warnings and cell errors fail the build.

The languages build side by side (``--jobs``, default: all at once), each notebook kernel on
one torch thread (``--threads``) so that they share the machine's cores instead of fighting
over them: the chapters' models are small, and on a busy machine two threads made one
training step of chapter 8 twenty times slower than one. Each language's log is
``_build/languages/<lang>/build.log``.

Then the teacher's kit and the student's copy, each language's as soon as its pages are
built: its decks (``tools/build_decks.py``), then its decks' PDFs and its book's PDF
(``tools/build_pdfs.py``, a Chromium per language, side by side like the languages).
``--pages-only`` skips them.

Usage: python tools/build_book.py [LANG ...] [--jobs N] [--threads N] [--pages-only]
"""

from __future__ import annotations

import argparse
import html
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import runs
import yaml

ROOT = Path(__file__).resolve().parent.parent
# The site's icon, inline on the root page (the chapters link the copy in their _static) and
# in every deck (tools/build_decks.py imports it from here).
FAVICON = "data:image/svg+xml," + quote(
    (ROOT / "tools" / "sphinxext" / "static" / "favicon.svg").read_text(encoding="utf-8").strip())
BUILD = ROOT / "_build"
SITE = BUILD / "html"


def language_config(config: dict, lang: str) -> dict:
    """The shared configuration specialised for one language."""
    out = {k: v for k, v in config.items() if k not in ("languages", "site_url")}
    out["title"] = config["languages"][lang]["title"]
    out.setdefault("repository", {})["path_to_book"] = f"book/{lang}"
    sphinx = out.setdefault("sphinx", {})
    sphinx.setdefault("local_extensions", {})["coursebook"] = str(ROOT / "tools" / "sphinxext")
    settings = sphinx.setdefault("config", {})
    settings["language"] = lang
    theme = settings.setdefault("html_theme_options", {})
    theme["search_bar_text"] = config["languages"][lang]["search"]
    # each page's canonical link: its address on the published site
    settings["html_baseurl"] = f"{config['site_url'].rstrip('/')}/{lang}/"
    settings["tc_languages"] = [[code, meta["name"]] for code, meta in config["languages"].items()]
    settings["tc_node_modules"] = str(ROOT / "node_modules")
    return out


def build_language(config: dict, lang: str, *, threads: int | None = None,
                   log: Path | None = None) -> Path:
    """Build one language into ``_build/html/<lang>``; raise if Sphinx or a cell fails."""
    work = BUILD / "languages" / lang
    work.mkdir(parents=True, exist_ok=True)
    cfg_path = work / "_config.yml"
    cfg_path.write_text(yaml.safe_dump(language_config(config, lang), allow_unicode=True,
                                       sort_keys=False), encoding="utf-8")
    command = [
        str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT / "book" / lang),
        "--config", str(cfg_path), "--toc", str(ROOT / "_toc.yml"),
        "--path-output", str(work), "--all", "-W", "-n", "--keep-going",
    ]
    # Executed notebooks point bertviz at the JavaScript the site serves (see viz.py), and
    # know that their outputs become a static page (no kernel behind the controls).
    # The kernels compute as on every other machine (runs.ARITHMETIC).
    env = {**os.environ, "TRANSFORMER_COURSE_JS": "_static/vendor", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "TRANSFORMER_COURSE_STATIC": "1", **runs.ARITHMETIC}
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    if log is None:
        subprocess.run(command, check=True, cwd=ROOT, env=env)
    else:
        with log.open("w", encoding="utf-8") as handle:
            done = subprocess.run(command, cwd=ROOT, env=env, stdout=handle,
                                  stderr=subprocess.STDOUT)
        if done.returncode:
            tail = log.read_text(encoding="utf-8", errors="replace")[-6000:]
            raise RuntimeError(f"building {lang} failed (log: {log}):\n{tail}")
    target = SITE / lang
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(work / "_build" / "html", target)
    return target


def tool(name: str, *langs: str) -> None:
    """Run another of the book's tools on ``langs``; raise with its message if it fails."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / name), *langs], cwd=ROOT,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise RuntimeError(f"{name} {' '.join(langs)} failed:\n{done.stderr.strip()}")


def root_index(config: dict) -> str:
    """A landing page that sends readers to their browser's language, with plain links."""
    langs = config["languages"]
    links = "\n".join(
        f'    <li><a href="{code}/index.html" hreflang="{code}" lang="{code}">'
        f"{html.escape(meta['name'])}: {html.escape(meta['title'])}</a></li>"
        for code, meta in langs.items()
    )
    codes = ", ".join(f'"{code}"' for code in langs)
    description = ("An open course on attention and the Transformer, in three languages: "
                   + ", ".join(meta["name"] for meta in langs.values()) + ".")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{html.escape(config["title"])}</title>
  <meta name="description" content="{html.escape(description)}">
  <link rel="canonical" href="{html.escape(config["site_url"].rstrip("/"))}/index.html">
  <link rel="icon" href="{FAVICON}">
  <script>
    (function () {{
      var known = [{codes}];
      var asked = (navigator.languages || [navigator.language || "en"]);
      for (var i = 0; i < asked.length; i++) {{
        var code = String(asked[i]).slice(0, 2).toLowerCase();
        if (known.indexOf(code) >= 0) {{ window.location.replace(code + "/index.html"); return; }}
      }}
      window.location.replace("en/index.html");
    }})();
  </script>
</head>
<body>
  <h1>{html.escape(config["title"])}</h1>
  <ul>
{links}
  </ul>
</body>
</html>
"""


def main(argv: list[str]) -> int:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    parser = argparse.ArgumentParser(description="Build the book in every language.")
    parser.add_argument("langs", nargs="*", default=list(config["languages"]))
    parser.add_argument("--jobs", type=int, default=None,
                        help="languages built at once (default: all of them)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of each notebook kernel (default: 1)")
    parser.add_argument("--pages-only", action="store_true",
                        help="build the pages only, without the decks and the PDFs")
    args = parser.parse_args(argv)
    unknown = [lang for lang in args.langs if lang not in config["languages"]]
    if unknown:
        parser.error(f"unknown language(s): {unknown}")
    jobs = max(1, args.jobs or len(args.langs))
    SITE.mkdir(parents=True, exist_ok=True)

    def build(lang: str) -> str:
        start = time.perf_counter()
        log = None
        if jobs > 1:
            log = BUILD / "languages" / lang / "build.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            print(f"building {lang} (log: {log.relative_to(ROOT)})", flush=True)
        build_language(config, lang, threads=args.threads, log=log)
        message = f"built {lang} in {time.perf_counter() - start:.0f} s"
        if not args.pages_only:
            extra = time.perf_counter()
            tool("build_decks.py", lang)
            tool("build_pdfs.py", lang)
            message += f" (its decks and PDFs in {time.perf_counter() - extra:.0f} s)"
        print(message, flush=True)
        return message

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(build, lang) for lang in args.langs]
        errors = [f.exception() for f in futures if f.exception() is not None]
    for error in errors:
        print(error, file=sys.stderr)
    if errors:
        return 1
    (SITE / "index.html").write_text(root_index(config), encoding="utf-8")
    (SITE / ".nojekyll").write_text("", encoding="utf-8")
    print(f"site ready in {time.perf_counter() - start:.0f} s: {SITE / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
