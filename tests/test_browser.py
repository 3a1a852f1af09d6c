"""The built site in headless Chromium with the network cut: every request outside
127.0.0.1 is blocked and counted. Pages must load with zero blocked requests and zero page
errors, render their maths, and keep their widgets and bertviz views working."""

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest
import yaml

sync_api = pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

ROOT = Path(__file__).resolve().parent.parent
LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
PAGES = sorted(p.stem for p in (ROOT / "book" / "en").iterdir() if p.suffix in (".md", ".ipynb"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# sphinx-thebe declares THEBE_JS_URL twice on every page: a known, harmless error.
KNOWN_ERRORS = ("THEBE_JS_URL",)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: .ci/run installs Debian's chromium package")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
            "--disable-dev-shm-usage"])
        yield b
        b.close()


class Visit:
    """A page opened with the network cut, recording what it tried and what broke."""

    def __init__(self, browser, server, path):
        self.blocked, self.errors = [], []
        self.page = browser.new_page(viewport={"width": 1280, "height": 1000})
        self.page.route("**/*", self._route(server))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(f"{server}/{path}", wait_until="load")
        self.page.wait_for_load_state("networkidle")

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


@pytest.fixture
def visit(browser, server):
    opened = []

    def open_page(path):
        v = Visit(browser, server, path)
        opened.append(v)
        return v

    yield open_page
    for v in opened:
        v.close()


def has_math(lang, page):
    path = ROOT / "book" / lang / (page + (".ipynb" if (ROOT / "book" / lang / f"{page}.ipynb")
                                           .exists() else ".md"))
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "".join("".join(c["source"]) for c in json.loads(text)["cells"]
                       if c["cell_type"] == "markdown")
    return "$" in text


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES)
def test_page_works_offline(visit, lang, page):
    v = visit(f"{lang}/{page}.html")
    if has_math(lang, page):
        v.page.wait_for_selector("mjx-container", state="attached", timeout=20000)
        assert v.page.locator("mjx-container").count() > 0
        assert v.page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"
    v.page.wait_for_timeout(300)
    assert v.blocked == [], f"requests to the outside: {v.blocked}"
    assert v.real_errors == [], v.real_errors
    assert v.page.locator("html").get_attribute("lang") == lang


def visible_picture(page):
    image = page.locator(".tc-explorer img").first
    image.wait_for(state="visible", timeout=20000)
    return image.screenshot()


def press_slider(explorer, steps=3):
    handle = explorer.locator(".noUi-handle").first
    start = handle.get_attribute("aria-valuenow")
    handle.focus()
    for _ in range(steps):
        handle.press("ArrowRight")
    assert handle.get_attribute("aria-valuenow") != start, "the slider did not move"


def click_button(explorer, label):
    explorer.get_by_role("button", name=label, exact=True).click()


# For each chapter with an explorer: the controls to operate, in order. Every step must
# change the picture, with no kernel behind the page.
EXPLORERS = {
    "02_self_attention": [("slider", None), ("button", "hard")],
    "04_multi_head_attention": [("button", "4"), ("slider", None), ("button", "8")],
    "05_masks": [("button", "causal"), ("button", "padding"), ("slider", None)],
}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", [p for p in EXPLORERS if p in PAGES])
def test_explorer_controls_change_the_picture_without_a_kernel(visit, lang, page):
    v = visit(f"{lang}/{page}.html")
    explorer = v.page.locator(".tc-explorer").first
    explorer.scroll_into_view_if_needed()
    seen = [visible_picture(v.page)]
    for kind, label in EXPLORERS[page]:
        if kind == "slider":
            press_slider(explorer)
        else:
            click_button(explorer, label)
        v.page.wait_for_timeout(400)
        picture = visible_picture(v.page)
        assert picture not in seen, f"{kind} {label or ''} did not change the picture"
        seen.append(picture)
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


BERTVIZ_PAGES = [p for p in ("01_attention", "09_tokens_and_bert") if p in PAGES]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", BERTVIZ_PAGES)
def test_bertviz_draws_its_tokens_offline(visit, lang, page):
    v = visit(f"{lang}/{page}.html")
    view = v.page.locator(".tc-bertviz").first
    view.scroll_into_view_if_needed()
    v.page.wait_for_selector(".tc-bertviz svg text", timeout=20000)
    words = v.page.locator(".tc-bertviz svg text").all_text_contents()
    assert "cat" in words and "tired" in words and "[CLS]" in words, words
    assert v.page.locator(".tc-bertviz select").count() >= 1  # the layer menu was filled
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


@pytest.mark.parametrize("lang", LANGS)
def test_bertviz_model_view_draws_every_head(visit, lang):
    if "09_tokens_and_bert" not in PAGES:
        pytest.fail("chapter 9 is missing")
    v = visit(f"{lang}/09_tokens_and_bert.html")
    views = v.page.locator(".tc-bertviz")
    assert views.count() == 2, "a head view and a model view"
    model_view = views.nth(1)
    model_view.scroll_into_view_if_needed()
    v.page.wait_for_timeout(1500)
    # 6 layers x 12 heads of thumbnails, each an SVG group drawn by d3
    assert model_view.locator("svg").count() >= 1
    assert model_view.locator("svg g").count() >= 72, model_view.inner_html()[:500]
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


def test_switcher_lands_on_the_same_chapter(visit):
    v = visit("en/02_self_attention.html")
    v.page.locator(".tc-language-switcher a[hreflang=it]").click()
    v.page.wait_for_load_state("load")
    assert v.page.url.endswith("/it/02_self_attention.html")
    assert v.page.locator("html").get_attribute("lang") == "it"
    v.page.locator(".tc-language-switcher a[hreflang=fr]").click()
    v.page.wait_for_load_state("load")
    assert v.page.url.endswith("/fr/02_self_attention.html")


def test_root_page_sends_readers_to_their_language(browser, server):
    context = browser.new_context(locale="it-IT")
    page = context.new_page()
    page.goto(f"{server}/index.html")
    page.wait_for_url("**/it/index.html", timeout=10000)
    assert page.locator("html").get_attribute("lang") == "it"
    context.close()
