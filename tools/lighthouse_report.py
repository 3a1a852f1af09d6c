#!/usr/bin/env python3
"""Lighthouse on pages of the built site, for the developer's note.

Lighthouse is npm's ``lighthouse`` (pinned in package.json, installed by ``npm ci``), run by
Node on the Chromium that the browser tests drive (tools/find_browser.py), in its default
mobile profile (a mid-range phone, simulated slow 4G and CPU). The site is served from
127.0.0.1 and Chromium resolves no other host: nothing comes from the internet.

Prints a table: each page's four scores (performance, accessibility, best practices, SEO),
its largest contentful paint, total blocking time and the bytes it transferred. Performance,
LCP and TBT depend on how busy the machine is: they are reported here, never asserted
(tests/site/test_audits_browser.py asserts accessibility, best practices and SEO, which do not).

Usage: python tools/lighthouse_report.py [--site DIR] [--chapters] [--gzip] [PAGE ...]
  PAGE        a page of the site, e.g. en/04_multi_head_attention.html (default: the six
              pages measured in issue 30)
  --chapters  every chapter page of the three languages, then each column's worst
  --gzip      send HTML, CSS, JavaScript and JSON gzip-compressed, as static hosts (GitHub
              Pages among them) do; without it they go uncompressed, as a plain file server
              sends them
  --site DIR  the built site (default: _build/html)
Pages run one after the other (20 to 40 s each on two busy cores).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "node_modules" / "lighthouse" / "core" / "index.js"
LAUNCHER = ROOT / "node_modules" / "chrome-launcher" / "dist" / "index.js"
TEXT = frozenset({".html", ".css", ".js", ".json", ".svg", ".txt", ".xml"})
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
ISSUE_PAGES = ["en/index.html", "en/04_multi_head_attention.html", "fr/02_self_attention.html",
               "fr/10_language_models.html", "it/07_encoder.html", "it/09_tokens_and_bert.html"]
# Chromium as the browser tests start it, headless, resolving no host but 127.0.0.1.
CHROME_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
# One Node process and one Chromium for all the pages; each page's report (its screenshots
# left out, the list of its requests always in) is one line of JSON. A page gets two minutes
# to load: a guard against a hang, not against a busy machine.
SCRIPT = """
const [launcher, core, chromePath, flags, categories, urls] = JSON.parse(process.argv[1]);
const {launch} = await import(launcher);
const {default: lighthouse} = await import(core);
const chrome = await launch({chromePath, chromeFlags: flags});
try {
  for (const url of urls) {
    const {lhr} = await lighthouse(url, {
      port: chrome.port, onlyCategories: categories, onlyAudits: ["network-requests"],
      logLevel: "error",
      disableFullPageScreenshot: true, maxWaitForLoad: 120000});
    delete lhr.audits["screenshot-thumbnails"];
    delete lhr.audits["final-screenshot"];
    process.stdout.write(JSON.stringify(lhr) + "\\n");
  }
} finally {
  await chrome.kill();
}
"""


def chrome_path() -> str:
    """The Chromium of the browser tests: $TC_CHROMIUM, Debian's chromium, else Playwright's."""
    sys.path.insert(0, str(ROOT / "tools"))
    from find_browser import candidates

    for path in candidates():
        if path is not None and Path(path).exists():
            return path
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        return playwright.chromium.executable_path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Compressing(_Quiet):
    """Text sent gzip-compressed to a browser that accepts it, as static hosts send it."""

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if (path.suffix not in TEXT or not path.is_file()
                or "gzip" not in self.headers.get("Accept-Encoding", "")):
            super().do_GET()
            return
        body = _gzipped(path)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@functools.cache
def _gzipped(path: Path) -> bytes:
    return gzip.compress(path.read_bytes(), compresslevel=9, mtime=0)


@contextlib.contextmanager
def serve(directory: Path, *, compress: bool = False):
    """Serve a folder on 127.0.0.1 (a free port); yields the base URL. With ``compress``,
    text goes out gzip-compressed to a browser that asks for it."""
    handler = _Compressing if compress else _Quiet
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def run(urls: list[str], categories: list[str] = CATEGORIES) -> list[dict]:
    """Lighthouse's report (its JSON, as a dict) of each URL, in order."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("Node.js is missing: Lighthouse runs on it (apt-get install nodejs)")
    if not LIGHTHOUSE.exists():
        raise RuntimeError(f"{LIGHTHOUSE} is missing: run `npm ci` at the repository root")
    arguments = [LAUNCHER.as_uri(), LIGHTHOUSE.as_uri(), chrome_path(), CHROME_FLAGS,
                 categories, urls]
    done = subprocess.run([node, "--input-type=module", "-e", SCRIPT, json.dumps(arguments)],
                          capture_output=True, text=True, timeout=300 + 180 * len(urls))
    if done.returncode != 0:
        raise RuntimeError(f"Lighthouse failed ({done.returncode}): {done.stderr[-3000:]}")
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(reports) != len(urls):
        raise RuntimeError(f"Lighthouse gave {len(reports)} reports for {len(urls)} pages: "
                           f"{done.stderr[-3000:]}")
    for report in reports:
        if report.get("runtimeError"):
            raise RuntimeError(f"Lighthouse on {report['requestedUrl']}: "
                               f"{report['runtimeError']}")
    return reports


def scores(report: dict) -> dict[str, int]:
    """Each category's score, out of 100."""
    return {name: round(100 * category["score"])
            for name, category in report["categories"].items()}


def failures(report: dict, category: str) -> list[str]:
    """What costs a category points: each audit below full marks, with its first items."""
    found = []
    for ref in report["categories"][category]["auditRefs"]:
        audit = report["audits"][ref["id"]]
        if ref["weight"] > 0 and audit["score"] is not None and audit["score"] < 1:
            items = (audit.get("details") or {}).get("items", [])[:3]
            shown = "; ".join(json.dumps(item, ensure_ascii=False)[:200] for item in items)
            found.append(f"{category}: {ref['id']} ({audit['title']}) {shown}".strip())
    return found


def requests(report: dict) -> list[str]:
    """The URL of every request the page made."""
    details = report["audits"]["network-requests"].get("details") or {}
    return [item["url"] for item in details.get("items", [])]


def measures(report: dict) -> dict[str, float]:
    audits = report["audits"]
    return {key: audits[name]["numericValue"] for key, name in
            (("lcp", "largest-contentful-paint"), ("tbt", "total-blocking-time"),
             ("bytes", "total-byte-weight")) if audits.get(name, {}).get("numericValue")
            is not None}


def table(pages: list[str], reports: list[dict]) -> str:
    lines = ["| page | performance | accessibility | best practices | SEO | LCP | TBT | "
             "transferred |", "|" + " --- |" * 8]
    for page, report in zip(pages, reports, strict=True):
        got, seen = scores(report), measures(report)
        lines.append(
            f"| {page.removesuffix('.html')} | "
            + " | ".join(str(got.get(name, "-")) for name in CATEGORIES)
            + f" | {seen['lcp'] / 1000:.1f} s | {seen['tbt']:,.0f} ms"
            + f" | {seen['bytes'] / 1e6:.2f} MB |")
    return "\n".join(lines)


def worst(pages: list[str], reports: list[dict]) -> str:
    """Each column's worst value and the page that has it."""
    rows = [(page.removesuffix(".html"), scores(report), measures(report))
            for page, report in zip(pages, reports, strict=True)]
    parts = [f"{name} {low[1][name]} ({low[0]})" for name in CATEGORIES
             for low in [min(rows, key=lambda row: row[1][name])]]
    for key, shown in (("lcp", "LCP {:.1f} s"), ("tbt", "TBT {:,.0f} ms"),
                       ("bytes", "{:.2f} MB")):
        high = max(rows, key=lambda row: row[2][key])
        value = high[2][key] / {"lcp": 1000, "tbt": 1, "bytes": 1e6}[key]
        parts.append(f"{shown.format(value)} ({high[0]})")
    return "worst: " + ", ".join(parts)


def chapter_pages(site: Path) -> list[str]:
    return [f"{lang}/{page.name}" for lang in ("en", "fr", "it")
            for page in sorted((site / lang).glob("[0-9][0-9]_*.html"))]


def main(argv: list[str]) -> int:
    site = ROOT / "_build" / "html"
    if "--site" in argv:
        at = argv.index("--site")
        site = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    every, compress = "--chapters" in argv, "--gzip" in argv
    pages = [a for a in argv if a not in ("--chapters", "--gzip")] or (
        chapter_pages(site) if every else ISSUE_PAGES)
    missing = [page for page in pages if not (site / page).exists()]
    if missing:
        print(f"not in {site}: {', '.join(missing)} (build the book first)", file=sys.stderr)
        return 1
    with serve(site, compress=compress) as url:
        reports = run([f"{url}/{page}" for page in pages])
    print(table(pages, reports))
    if len(pages) > 1:
        print(worst(pages, reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
