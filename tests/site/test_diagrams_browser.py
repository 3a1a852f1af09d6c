"""Diagrams in headless Chromium with the network cut, as Colab, JupyterLab, Notebook 7 and VS
Code get them (each diagram's HTML saved to a page of its own): no page error, no request, a
block's details on hover and on keyboard focus, labels that fit their blocks in every
language, readable colours in light and dark themes, and a drawing without JavaScript."""

from __future__ import annotations

import pytest
import torch

import transformer_course as tc
from browsing import Visit, insert_later, serve
from diagramming import models
from transformer_course.diagrams import Diagram

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

# name -> (language, module, book links)
PAGES = {
    "encoder-layer-post": ("en", lambda: tc.EncoderLayer(32, 4, 128, dropout=0.0), False),
    "attention": ("en", lambda: tc.MultiHeadAttention(32, 4, kdim=48, vdim=48), False),
    "transformer-tied-pre": ("en", lambda: tc.Transformer(40, 40, d_model=32, num_heads=4,
                                                          num_layers=2, d_ff=64,
                                                          tie_embeddings=True,
                                                          norm_first=True), False),
    "decoder-layer-fr": ("fr", lambda: tc.DecoderLayer(32, 4, 128), False),
    "decoder-it": ("it", lambda: tc.Decoder(32, 4, 128, 2), False),
    "minilm-fr": ("fr", lambda: tc.BertEncoder(30522, 384, 12, 6, 1536), True),
    "classifier-it": ("it", lambda: tc.TransformerClassifier(120, 2, d_model=64, num_heads=4,
                                                             num_layers=2, d_ff=128,
                                                             pooling="max"), True),
    "lm-en": ("en", lambda: tc.LanguageModel(96, d_model=64, num_heads=4, num_layers=2,
                                             d_ff=256, max_len=320), True),
    "feed-forward-fr": ("fr", lambda: tc.FeedForward(32, 128, activation="gelu"), False),
}
NUMBERS = {"en": ",", "fr": "\u202f", "it": "."}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("diagrams")
    drawn = {}
    for name, (lang, build, links) in PAGES.items():
        tc.set_language(lang)
        with torch.device("meta") if name.startswith("minilm") else torch.device("cpu"):
            module = build()
        drawn[name] = Diagram(module, links=links)
        drawn[name].save(folder / f"{name}.html")
    tc.set_language("en")
    post, pre = (tc.diagram(tc.EncoderLayer(32, 4, 128, norm_first=first))
                 for first in (False, True))
    post.beside(pre).save(folder / "row.html")
    (folder / "empty.html").write_text("<!DOCTYPE html><html><body></body></html>",
                                       encoding="utf-8")
    with serve(folder) as url:
        yield url, drawn


@pytest.fixture
def open_page(browser, pages):
    url = pages[0]
    opened = []

    def visit(name):
        v = Visit(browser, url, f"{name}.html")
        opened.append(v)
        v.page.wait_for_selector(".tc-diagram[data-tc-mounted]", state="attached")
        return v

    yield visit
    for v in opened:
        v.close()


def details_of(diagram, i, lang):
    """What the panel must say about block i: its name, class, count and section."""
    b = diagram.model["blocks"][i]
    tc.set_language(lang)
    try:
        count = tc.format_integer(b["parameters"])
    finally:
        tc.set_language("en")
    return [b["label"], b["class"], count, b["section"]]


def shown(v, root):
    return root.get_attribute("data-shown")


@pytest.mark.parametrize("name", PAGES)
def test_hover_shows_each_blocks_details(open_page, pages, name):
    lang, _build, links = PAGES[name]
    diagram = pages[1][name]
    v = open_page(name)
    root = v.page.locator(".tc-diagram")
    [model] = models(v.page.content())
    assert model == diagram.model
    blocks = root.locator(".tc-d-block")
    assert blocks.count() == len(model["blocks"])
    assert root.locator("a.tc-d-block").count() == (len(model["blocks"]) if links else 0)
    panel = root.locator(".tc-d-panel")
    hint = panel.inner_text()
    assert root.locator(".tc-d-nojs").count() == 0 and root.locator(".tc-d-hint").is_visible()
    for i in range(blocks.count()):
        blocks.nth(i).hover()
        v.page.wait_for_function("([e, i]) => e.getAttribute('data-shown') === String(i)",
                                 arg=[root.element_handle(), i])
        text = panel.inner_text()
        for part in details_of(diagram, i, lang):
            assert part in text, (i, part, text)
        assert "tc-d-active" in blocks.nth(i).get_attribute("class")
    assert hint not in text
    v.page.mouse.move(1, 1)  # away from the diagram: the last details stay (its link too)
    v.page.wait_for_timeout(100)
    assert shown(v, root) == str(blocks.count() - 1) and panel.inner_text() == text
    if any(b["parameters"] >= 1000 for b in model["blocks"]):
        assert NUMBERS[lang] in root.locator(".tc-d-title").inner_text()
    assert v.blocked == [] and v.errors == [], (v.blocked, v.errors)


@pytest.mark.parametrize("name", ["encoder-layer-post", "minilm-fr", "classifier-it"])
def test_keyboard_focus_shows_each_blocks_details(open_page, pages, name):
    lang = PAGES[name][0]
    diagram = pages[1][name]
    v = open_page(name)
    root = v.page.locator(".tc-diagram")
    panel = root.locator(".tc-d-panel")
    count = len(diagram.model["blocks"])
    for i in range(count):  # Tab goes from block to block, in the order the data flows
        v.page.keyboard.press("Tab")
        assert v.page.evaluate("document.activeElement.getAttribute('data-i')") == str(i)
        assert shown(v, root) == str(i)
        text = panel.inner_text()
        assert all(part in text for part in details_of(diagram, i, lang)), (i, text)
    v.page.keyboard.press("Tab")  # past the blocks: the last details stay, and can be read
    assert shown(v, root) == str(count - 1)
    if diagram.links:  # the panel's link to the section comes next
        assert v.page.evaluate("document.activeElement.closest('.tc-d-panel') !== null")
        href = v.page.evaluate("document.activeElement.getAttribute('href')")
        assert href == diagram.model["blocks"][-1]["href"]
    v.page.keyboard.press("Shift+Tab")
    assert v.page.evaluate("document.activeElement.getAttribute('data-i')") == str(count - 1)
    assert v.errors == []


@pytest.mark.parametrize("name", PAGES)
def test_labels_fit_inside_their_blocks(open_page, name):
    v = open_page(name)
    overflow = v.page.evaluate("""() => Array.from(document.querySelectorAll('.tc-d-block'))
        .flatMap(b => {
          const box = b.querySelector('rect, circle').getBBox();
          return Array.from(b.querySelectorAll('text')).filter(t => {
            const r = t.getBBox();
            return r.x < box.x + 2 || r.x + r.width > box.x + box.width - 2
                   || r.y < box.y || r.y + r.height > box.y + box.height;
          }).map(t => t.textContent);
        })""")
    assert overflow == []
    texts = v.page.evaluate("""() => Array.from(document.querySelectorAll('svg text'))
        .map(t => t.getBBox()).filter(r => r.width > 0).map(r => [r.x, r.x + r.width])""")
    width = v.page.evaluate("document.querySelector('.tc-diagram svg').viewBox.baseVal.width")
    assert texts and all(0 <= left and right <= width for left, right in texts), (width, texts)


CONTRAST = """root => {
  const lum = c => {
    const [r, g, b] = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map(v => v / 255)
      .map(v => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
  const background = getComputedStyle(root).backgroundColor;
  const out = {background: lum(background), blocks: [], texts: []};
  root.querySelectorAll('.tc-d-block').forEach(b => {
    const fill = getComputedStyle(b.querySelector('rect, circle')).fill;
    b.querySelectorAll('text').forEach(t => out.blocks.push(ratio(getComputedStyle(t).fill, fill)));
  });
  root.querySelectorAll('svg > text').forEach(
    t => out.texts.push(ratio(getComputedStyle(t).fill, background)));
  return out;
}"""

THEMES = {
    "light": None,
    "book dark": "document.documentElement.setAttribute('data-theme', 'dark')",
    "jupyterlab dark": "document.body.setAttribute('data-jp-theme-light', 'false')",
    "vscode dark": "document.body.classList.add('vscode-dark')",
}


@pytest.mark.parametrize("theme", THEMES)
def test_colours_are_readable_in_light_and_dark_themes(open_page, theme):
    for name in ("transformer-tied-pre", "attention", "minilm-fr"):
        v = open_page(name)
        if THEMES[theme]:
            v.page.evaluate(THEMES[theme])
        root = v.page.locator(".tc-diagram")
        measured = root.evaluate(CONTRAST)
        assert (measured["background"] < 0.05) == (theme != "light"), measured["background"]
        assert min(measured["blocks"]) >= 4.5 and min(measured["texts"]) >= 4.5, measured


def test_two_diagrams_side_by_side_work_on_their_own(open_page):
    v = open_page("row")
    roots = v.page.locator(".tc-diagram")
    assert roots.count() == 2
    assert [m["config"]["norm_first"] for m in models(v.page.content())] == [False, True]
    roots.nth(1).locator(".tc-d-block").nth(2).hover()
    assert roots.nth(1).get_attribute("data-shown") == "2"
    assert roots.nth(0).get_attribute("data-shown") is None
    assert v.page.evaluate("window.TcDiagram.version") == 1
    assert v.page.locator("[id]").count() == 0 and v.errors == []


def test_front_ends_that_insert_html_later_still_mount_it(browser, pages):
    """JupyterLab and VS Code set an output's HTML with innerHTML (its scripts do not run),
    then re-create each script, sometimes before the output is attached."""
    url, drawn = pages
    v = Visit(browser, url, "empty.html")
    try:
        insert_later(v.page, drawn["encoder-layer-post"].html())
        root = v.page.locator(".tc-diagram[data-tc-mounted]")
        root.wait_for(state="attached", timeout=10000)
        root.locator(".tc-d-block").nth(0).hover()
        v.page.wait_for_function("e => e.getAttribute('data-shown') === '0'",
                                 arg=root.element_handle())
        assert v.errors == []
    finally:
        v.close()


def test_without_javascript_the_drawing_and_its_text_remain(browser, pages):
    """An untrusted notebook strips the script: the drawing and the text description stay."""
    url, drawn = pages
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{url}/transformer-tied-pre.html", wait_until="load")
        root = page.locator(".tc-diagram")
        assert root.get_attribute("data-tc-mounted") is None
        assert root.locator(".tc-d-nojs").is_visible() and root.locator(".tc-d-hint").is_hidden()
        assert root.locator("svg").bounding_box()["height"] > 300
        root.locator(".tc-d-text summary").click()
        items = root.locator(".tc-d-text li")
        assert items.count() == len(drawn["transformer-tied-pre"].model["blocks"])
        assert items.first.is_visible()
    finally:
        context.close()
