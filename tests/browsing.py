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
from pathlib import Path

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


def launch(playwright):
    path = chromium_path()
    if path is not None and not Path(path).exists():
        raise FileNotFoundError(f"TC_CHROMIUM={path} does not exist")
    options = {"executable_path": path} if path else {}
    return playwright.chromium.launch(args=CHROMIUM_ARGS, **options)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory):
    """Serve a folder on 127.0.0.1 (a free port); yields the base URL."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Visit:
    """A page opened with the network cut, recording what it tried and what broke."""

    def __init__(self, browser, server, path, *, viewport=None):
        self.blocked, self.errors = [], []
        self.page = browser.new_page(viewport=viewport or {"width": 1280, "height": 1000})
        self.page.route("**/*", self._route(server))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        # "load" waits for the page's own scripts, styles and images. Never wait for
        # "networkidle": it is flaky across machines; tests wait on what the page shows.
        self.page.goto(f"{server}/{path}", wait_until="load")

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
        self.page.close()
