"""The fixtures of the checkout's tests: the built site, and headless Chromium with the network
cut (helpers in browsing.py). The fixtures every test shares are in tests/conftest.py."""

import os
from pathlib import Path

import pytest

# The built book; TC_SITE points the site tests at another build (a fresh clone's, say).
SITE = Path(os.environ.get("TC_SITE") or Path(__file__).resolve().parents[2] / "_build" / "html")


@pytest.fixture(scope="session")
def site():
    """The built book (``make book``; ``make test`` builds it before running the tests)."""
    if not (SITE / "index.html").exists():
        pytest.fail(f"{SITE} is missing: build the book first with `make book`")
    return SITE


# --- headless Chromium with the network cut (helpers in browsing.py) ---------------------------

@pytest.fixture(scope="module")
def browser():
    """Chromium: $TC_CHROMIUM, else `chromium` on the PATH, else Playwright's own."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")
    from browsing import close, launch

    with sync_api.sync_playwright() as playwright:
        b = launch(playwright)
        yield b
        close(b)


@pytest.fixture(scope="module")
def server(site):
    """The built site, served on 127.0.0.1."""
    from browsing import serve

    with serve(site) as url:
        yield url


@pytest.fixture
def visit(browser, server):
    """Open pages of the built site with the network cut; closed after the test."""
    from browsing import Visit

    opened = []

    def open_page(path):
        v = Visit(browser, server, path)
        opened.append(v)
        return v

    yield open_page
    for v in opened:
        v.close()
