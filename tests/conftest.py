import os
import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile(
    "course", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("course")

# One torch thread per test process when several run side by side (pytest-xdist workers, or
# the wheel's tests beside the browser tests: TC_TEST_THREADS): tiny operators on a thread
# pool that has fewer cores than threads wait for each other, and a checker's 0.2 s became
# 45 s that way.
if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("TC_TEST_THREADS"):
    torch.set_num_threads(int(os.environ.get("TC_TEST_THREADS") or 1))

TESTS = Path(__file__).resolve().parent
# `make test` sets it: the package's own tests (those the sdist ships, MANIFEST.in) then run
# once, against the installed wheel, inside tests/test_wheel.py, not again on the checkout.
WHEEL_ONLY = "TC_PACKAGE_TESTS"


def _shipped() -> set[str]:
    manifest = TESTS.parent / "MANIFEST.in"
    patterns = [p for line in manifest.read_text(encoding="utf-8").splitlines()
                if re.match(r"include\s", line) for p in line.split()[1:]]
    return {path.name for path in TESTS.glob("test_*.py")
            if any(path.relative_to(TESTS.parent).match(p) for p in patterns)}


def pytest_ignore_collect(collection_path, config):
    if os.environ.get(WHEEL_ONLY) == "wheel" and collection_path.parent == TESTS:
        return collection_path.name in _shipped() or None
    return None


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


@pytest.fixture
def deterministic():
    """For tests of a training result: one thread and deterministic kernels, so that a seeded
    run repeats exactly on a machine. Other CPUs still round differently: such tests also
    keep a margin."""
    threads = torch.get_num_threads()
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(was_deterministic)
    torch.set_num_threads(threads)


# The built book; TC_SITE points the site tests at another build (a fresh clone's, say).
SITE = Path(os.environ.get("TC_SITE") or Path(__file__).resolve().parent.parent / "_build" / "html")


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


@pytest.fixture
def plain_texts(monkeypatch):
    """Explorers with their English message ids whatever the catalogs hold: for tests that
    compare numbers."""
    from transformer_course import i18n, widgets

    monkeypatch.setattr(widgets, "_", lambda message: message)
    monkeypatch.setattr(widgets, "ngettext", lambda one, many, n: one if n == 1 else many)
    yield
    i18n.set_language("en")
