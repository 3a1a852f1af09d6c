"""Headless Chromium with the network cut, shared by the browser tests (fixtures in
conftest.py): every request outside the local test server is blocked and counted, and page
errors are recorded."""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
import time
from pathlib import Path
from typing import ClassVar

# Page errors that are not the course's own (none left: the book's Sphinx extension removes
# sphinx-thebe, which declared THEBE_JS_URL twice on every page, since thebe is off).
KNOWN_ERRORS: tuple[str, ...] = ()
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    """The browser to drive: $TC_CHROMIUM, else `chromium` (or `chromium-browser`) on the PATH,
    else None for Playwright's own bundled Chromium."""
    return (os.environ.get("TC_CHROMIUM") or shutil.which("chromium")
            or shutil.which("chromium-browser"))


def launch(playwright, *extra_args):
    """Chromium (``chromium_path``) with the tests' flags and ``extra_args``; ``playwright`` is
    a Playwright instance, or the ``browser_type`` of a browser already launched."""
    path = chromium_path()
    if path is not None and not Path(path).exists():
        raise FileNotFoundError(f"TC_CHROMIUM={path} does not exist")
    options = {"executable_path": path} if path else {}
    chromium = getattr(playwright, "chromium", playwright)
    return chromium.launch(args=[*CHROMIUM_ARGS, *extra_args], **options)


def close(browser):
    """Close a browser that ``launch`` started, and forget its spare page (see Visit)."""
    _SPARE.pop(id(browser), None)
    browser.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    slow: ClassVar[dict[str, float]] = {}  # path -> seconds to wait before answering

    def log_message(self, *args):
        pass

    def do_GET(self):
        time.sleep(self.slow.get(self.path.split("?")[0], 0))
        super().do_GET()


@contextlib.contextmanager
def serve(directory, *, slow: dict[str, float] | None = None):
    """Serve a folder on 127.0.0.1 (a free port); yields the base URL. ``slow`` maps a path
    ("/vendor/d3.min.js") to the seconds its answer waits, like a slow network's."""
    handler = type("_Handler", (_Quiet,), {"slow": dict(slow or {})})
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# A spare page per browser: the page that the last closed visit left, navigated again by
# the next one (see Visit).
_SPARE: dict[int, tuple[object, object]] = {}
CLEAR_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"


class Visit:
    """A page opened with the network cut, recording what it tried and what broke.

    A visit navigates the page that the browser's last closed visit left, rather than
    opening a new one: each new page starts a renderer process, which cost Chromium 156
    about 1 s of CPU here, as much again as a chapter page itself. Before the page is
    handed on, its visit's handlers come off and the site's storage and cookies are
    cleared; the next visit sets its own viewport. Nothing comes from the HTTP cache: while
    a page routes its requests (the network cut), Playwright turns the cache off.
    """

    def __init__(self, browser, server, path, *, viewport=None):
        self.blocked, self.errors, self.console = [], [], []
        self.browser = browser
        viewport = viewport or {"width": 1280, "height": 1000}
        spare = _SPARE.pop(id(browser), None)
        if spare is not None and spare[0] is browser and not spare[1].is_closed():
            self.page = spare[1]
            self.page.set_viewport_size(viewport)
        else:
            self.page = browser.new_page(viewport=viewport)
        self.page.route("**/*", self._route(server))
        self.page.on("pageerror", self._error)
        self.page.on("console", self._console)
        # "load" waits for the page's own scripts, styles and images. Never wait for
        # "networkidle": it is flaky across machines; tests wait on what the page shows.
        self.page.goto(f"{server}/{path}", wait_until="load")

    def _error(self, error):
        self.errors.append(str(error))

    def _console(self, message):
        # what the page's console shows as an error or a warning (a 404 among them)
        if message.type in ("error", "warning"):
            self.console.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    def _route(self, server):
        def handle(route):
            if route.request.url.startswith(server + "/") or route.request.url.startswith(
                    ("data:", "blob:")):
                route.continue_()
            else:
                self.blocked.append(route.request.url)
                route.abort()
        return handle

    @property
    def real_errors(self):
        return [e for e in self.errors if not any(k in e for k in KNOWN_ERRORS)]

    def close(self):
        """Hand the page on to the next visit (a second spare is closed)."""
        page = self.page
        if page.is_closed() or id(self.browser) in _SPARE:
            page.close()
            return
        try:
            page.remove_listener("pageerror", self._error)
            page.remove_listener("console", self._console)
            page.unroute_all(behavior="ignoreErrors")
            page.evaluate(CLEAR_STORAGE)
            page.context.clear_cookies()
        except Exception:  # a page that broke is not handed on
            page.close()
            return
        _SPARE[id(self.browser)] = (self.browser, page)


# What JupyterLab and VS Code do with an output: its HTML set with innerHTML (scripts set
# that way do not run), each script re-created, and the output attached 50 ms later.
INSERT_LATER = """html => {
  const host = document.createElement('div');
  host.innerHTML = html;
  host.querySelectorAll('script').forEach(old => {
    const s = document.createElement('script');
    s.textContent = old.textContent;
    old.replaceWith(s);
  });
  setTimeout(() => document.body.appendChild(host), 50);
}"""


def insert_later(page, html: str) -> None:
    """Insert an output's HTML into ``page`` as JupyterLab and VS Code do (INSERT_LATER)."""
    page.evaluate(INSERT_LATER, html)
