"""bertviz views in headless Chromium with the network cut, each saved to a page of its own
with the libraries that npm installed: a view far below the screen is not started (its
thousands of SVG elements wait), it draws when it comes near, the PDF builder's
"tc:start-all" draws every view, and a front end that inserts the HTML later (JupyterLab,
VS Code) still gets it drawn."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import transformer_course as tc
from browsing import Visit, insert_later, serve

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")
viz = pytest.importorskip("transformer_course.viz")
pytest.importorskip("bertviz")

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = {"requirejs/require.js": "require.js", "d3/dist/d3.min.js": "d3.min.js",
             "jquery/dist/jquery.min.js": "jquery.min.js"}
TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]
FAR = '<div style="height: 4000px">far below</div>'  # several screens, beyond the margin
SLOW_D3 = 8.0  # seconds: more than require.js's own limit, 7 s


def started(v, index: int) -> bool:
    return v.page.evaluate(
        "i => document.querySelectorAll('.tc-bertviz')[i].hasAttribute('data-tc-started')",
        index)


def drawn(v, index: int, least: int, timeout: float = 20000) -> None:
    """Wait until view ``index`` holds at least ``least`` SVG groups or texts."""
    v.page.wait_for_function(
        "([i, least]) => document.querySelectorAll('.tc-bertviz')[i]"
        "?.querySelectorAll('svg g, svg text').length >= least", arg=[index, least],
        timeout=timeout)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("views")
    (folder / "vendor").mkdir()
    for source, name in LIBRARIES.items():
        path = ROOT / "node_modules" / source
        if not path.exists():
            pytest.fail(f"{path} is missing: run `npm ci` (the README's setup)")
        shutil.copy(path, folder / "vendor" / name)
    torch.manual_seed(0)
    encoder = tc.Encoder(16, 4, 32, 2).eval()
    _, maps = encoder(torch.randn(1, len(TOKENS), 16), return_attention=True)
    head = viz.head_view(maps, TOKENS, base_url="vendor").html
    model = viz.model_view(maps, TOKENS, base_url="vendor").html
    page = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>" \
           "</head><body>{}</body></html>"
    (folder / "far.html").write_text(page.format("far", FAR + head + FAR + model),
                                     encoding="utf-8")
    (folder / "empty.html").write_text(page.format("empty", ""), encoding="utf-8")
    (folder / "slow").mkdir()
    shutil.copytree(folder / "vendor", folder / "slow" / "vendor")
    (folder / "slow" / "view.html").write_text(page.format("slow", head), encoding="utf-8")
    # d3 arrives after require.js's default limit of 7 s (a slow phone, a busy machine)
    with serve(folder, slow={"/slow/vendor/d3.min.js": SLOW_D3}) as url:
        yield url, head


def test_views_far_below_wait_and_draw_when_near(browser, pages):
    v = Visit(browser, pages[0], "far.html")
    try:
        # not started: no require.js was asked for, nothing drawn
        assert not started(v, 0) and not started(v, 1)
        assert v.page.locator("script[src$='require.js']").count() == 0
        assert v.page.locator(".tc-bertviz svg").count() == 0
        v.page.locator(".tc-bertviz").first.scroll_into_view_if_needed()
        drawn(v, 0, len(TOKENS))
        words = v.page.locator(".tc-bertviz").first.locator("svg text").all_text_contents()
        assert "cat" in words and "[CLS]" in words, words
        assert not started(v, 1)  # the model view is still a screen or more away
        assert v.errors == [] and v.blocked == []
    finally:
        v.close()


def test_start_all_draws_every_view(browser, pages):
    """What the PDF builder does before printing a page or a deck."""
    v = Visit(browser, pages[0], "far.html")
    try:
        v.page.evaluate("document.dispatchEvent(new Event('tc:start-all'))")
        drawn(v, 0, len(TOKENS))
        drawn(v, 1, 2 * 4)  # 2 layers x 4 heads of thumbnails
        assert started(v, 0) and started(v, 1)
        assert v.page.locator("script[src$='require.js']").count() >= 1
        assert v.errors == [] and v.blocked == []
    finally:
        v.close()


def test_front_ends_that_insert_html_later_still_draw_it(browser, pages):
    """JupyterLab and VS Code set an output's HTML with innerHTML (its scripts do not run),
    then re-create each script, sometimes before the output is attached."""
    url, head = pages
    v = Visit(browser, url, "empty.html")
    try:
        insert_later(v.page, head)
        drawn(v, 0, len(TOKENS))
        assert v.errors == [] and v.blocked == []
    finally:
        v.close()


def test_a_library_that_arrives_late_still_draws_the_view(browser, pages):
    """require.js gives up on a module after 7 s by default (its waitSeconds) and bertviz's
    view then never draws: on a busy machine, the PDF builder waited for it until its own
    time ran out. The view waits as long as d3 takes."""
    v = Visit(browser, pages[0], "slow/view.html")
    try:
        drawn(v, 0, len(TOKENS), timeout=(SLOW_D3 + 30) * 1000)
        assert v.errors == [] and v.blocked == []
    finally:
        v.close()


def test_a_view_out_of_the_page_when_d3_arrives_draws_once_it_is_back(browser, pages):
    """A deck's print view (reveal.js) takes its slides out of the page for a frame while it
    lays them out as pages. A view whose d3 arrived in that frame found no element to draw
    into, and never tried again: the deck's PDF waited for it until its time ran out."""
    v = Visit(browser, pages[0], "far.html")
    try:
        v.page.evaluate("""() => {
          const view = document.querySelector('.tc-bertviz');
          window.tcHeld = [view, view.parentNode, view.nextSibling];
          view.remove();
          document.dispatchEvent(new Event('tc:start-all'));
        }""")
        v.page.wait_for_function("window.requirejs && requirejs.defined('d3')"
                                 " && requirejs.defined('jquery')")
        v.page.wait_for_timeout(300)  # bertviz's callback has had its turn, out of the page
        assert v.page.evaluate("window.tcHeld[0].querySelectorAll('svg').length") == 0
        v.page.evaluate("() => { const [view, parent, next] = window.tcHeld;"
                        " parent.insertBefore(view, next); }")
        drawn(v, 0, len(TOKENS))
        assert v.errors == [] and v.blocked == []
    finally:
        v.close()
