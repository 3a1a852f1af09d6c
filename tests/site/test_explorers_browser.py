"""The explorers in headless Chromium with the network cut: every control a reader has, and
after each change the page's numbers (the root's data-state) against the rule computed with
torch, and its scores against the tensors the package computed.

Two settings: (a) each explorer's HTML written to a standalone file, which is what Colab,
JupyterLab, Notebook 7 and VS Code get; (b) the explorers of the built book in every language,
recomputed here by calling the chapter's own explorer function in the page's language."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import torch
import yaml

import transformer_course as tc
from browsing import Visit, serve
from transformer_course import widgets

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

ROOT = Path(__file__).resolve().parents[2]
LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
LIMIT = 150_000  # bytes of one explorer's payload
DECIMAL = {"en": ".", "fr": ",", "it": ","}

# Chapter page -> (kind, the call in the chapter's code cell, the same call here)
CHAPTERS = {
    "02_self_attention": ("beta", "widgets.beta_explorer()", lambda: widgets.beta_explorer()),
    "04_multi_head_attention": ("heads", "widgets.heads_explorer()",
                                lambda: widgets.heads_explorer()),
    "05_masks": ("masks", "widgets.masks_explorer()", lambda: widgets.masks_explorer()),
}


def rule(scores, mask, beta, hard):
    """softmax(β·scores) over the allowed keys, or the one-hot argmax (first index on ties);
    a row without any allowed key is all zeros. In float64."""
    scores = torch.as_tensor(scores, dtype=torch.float64)
    mask = torch.as_tensor(mask, dtype=torch.bool)
    empty = ~mask.any(-1, keepdim=True)
    if hard:
        best = scores.masked_fill(~mask, float("-inf")).argmax(-1)
        weights = torch.nn.functional.one_hot(best, scores.shape[-1]).to(torch.float64)
    else:
        weights = torch.softmax((beta * scores).masked_fill(~mask, float("-inf")), -1)
    return weights.masked_fill(empty, 0.0)


def slider_beta(position, steps=600, low=1e-3, high=1000.0):
    """The β at a position of the explorer's log slider (0 is exactly 0)."""
    if position <= 0:
        return 0.0
    if position >= steps:
        return high
    return math.exp(math.log(low) + (math.log(high) - math.log(low)) * (position - 1)
                    / (steps - 1))


class Driver:
    """Operates one explorer on a page and checks its data-state after every change."""

    def __init__(self, visit: Visit, explorer: widgets.Explorer, root, lang="en"):
        self.visit, self.page, self.explorer, self.root = visit, visit.page, explorer, root
        self.decimal = DECIMAL[lang]
        self.checked = 0
        root.wait_for(state="attached")
        self.page.wait_for_function("e => e.hasAttribute('data-state')",
                                    arg=root.element_handle(), timeout=20000)

    def raw(self):
        return self.root.get_attribute("data-state")

    def text(self, name, **values):
        """A text of the page's own catalog strings, filled in."""
        payload = self.root.locator("script.tc-explorer-payload").text_content()
        return json.loads(payload)["strings"][name].format(**values)

    def state(self):
        return json.loads(self.raw())

    def change(self, action, **expected):
        """Do something that must change the page's state, then check the new state."""
        before = self.raw()
        action()
        self.page.wait_for_function("([e, s]) => e.getAttribute('data-state') !== s",
                                    arg=[self.root.element_handle(), before], timeout=10000)
        return self.check(**expected)

    def check(self, **expected):
        s = self.state()
        assert set(s) == {"beta", "hard", "num_heads", "head", "scores", "mask", "weights"}
        h, k = s["num_heads"], s["head"]
        assert h in self.explorer.scores and 0 <= k < h, (h, k)
        scores = torch.tensor(s["scores"], dtype=torch.float64)
        torch.testing.assert_close(scores, self.explorer.scores[h][k].double(), atol=1e-5,
                                   rtol=1e-6)
        mask = torch.tensor(s["mask"], dtype=torch.bool)
        weights = torch.tensor(s["weights"], dtype=torch.float64)
        assert torch.isfinite(weights).all()
        assert isinstance(s["beta"], (int, float)) and s["beta"] >= 0 and isinstance(s["hard"],
                                                                                   bool)
        torch.testing.assert_close(weights, rule(scores, mask, s["beta"], s["hard"]),
                                   atol=1e-5, rtol=0)
        if s["hard"] or s["beta"] <= 8:  # and the package's attention, in float32, agrees
            package = self.explorer.compute(beta=s["beta"], hard=s["hard"], num_heads=h,
                                            head=k, mask=mask)["weights"]
            torch.testing.assert_close(weights, package.double(), atol=1e-4, rtol=0)
        for key, value in expected.items():
            if key == "mask":
                assert torch.equal(mask, value), (mask, value)
            elif key == "beta":
                assert s["beta"] == pytest.approx(value, rel=1e-9, abs=0), (s["beta"], value)
            else:
                assert s[key] == value, (key, s[key], value)
        self.checked += 1
        return s

    # controls
    def press(self, selector, key):
        self.root.locator(selector).press(key)

    def set_range(self, selector, value):
        self.root.locator(selector).evaluate(
            "(e, v) => { e.value = String(v); e.dispatchEvent(new Event('input', "
            "{bubbles: true})); }", value)

    def type_beta(self, text):
        box = self.root.locator(".tc-x-beta-box")
        box.fill(text)
        box.press("Enter")

    def number(self, value):
        return str(value).replace(".", self.decimal)

    def disabled(self, selector, index=0):
        return self.root.locator(selector).nth(index).is_disabled()


def drive_beta_controls(d: Driver, length: int):
    """β from 0 to the slider's end, typed values, hard and soft."""
    ones = torch.ones(length, length, dtype=torch.bool)
    d.check(hard=False, mask=ones)
    d.change(lambda: d.press(".tc-x-beta-slider", "Home"), beta=0.0)
    w = torch.tensor(d.state()["weights"])
    torch.testing.assert_close(w, torch.full_like(w, 1 / length))  # uniform at β = 0
    d.change(lambda: d.press(".tc-x-beta-slider", "End"), beta=1000.0)
    assert d.root.locator(".tc-x-beta-box").input_value().replace("\u202f", " ") in (
        "1,000", "1 000", "1.000")
    d.change(lambda: d.press(".tc-x-beta-slider", "ArrowLeft"), beta=slider_beta(599))
    for position in (1, 150, 420):
        d.change(lambda p=position: d.set_range(".tc-x-beta-slider", p),
                 beta=slider_beta(position))
    for typed, value in (("0.5", 0.5), ("1e6", 1e6), ("2.5", 2.5), ("0", 0.0),
                         ("1e-9", 1e-9), ("7", 7.0)):
        d.change(lambda t=typed: d.type_beta(d.number(t) if "e" not in t else t), beta=value)
    before = d.raw()
    for bad in ("-1", "abc", "1/2"):
        d.type_beta(bad)
        assert d.root.locator(".tc-x-beta-box").get_attribute("aria-invalid") == "true"
        assert d.raw() == before, f"{bad!r} changed the state"
    d.change(lambda: d.type_beta(d.number("0.25")), beta=0.25)
    assert d.root.locator(".tc-x-beta-box").get_attribute("aria-invalid") is None
    # hard attention: β has no effect, so its controls are disabled
    s = d.change(lambda: d.root.locator(".tc-x-hard").check(), hard=True, beta=0.25)
    assert d.disabled(".tc-x-beta-slider") and d.disabled(".tc-x-beta-box")
    rows = torch.tensor(s["weights"])
    assert torch.all((rows == 0) | (rows == 1)) and torch.all(rows.sum(-1) == 1)
    d.change(lambda: d.root.locator(".tc-x-hard").uncheck(), hard=False)
    assert not d.disabled(".tc-x-beta-slider") and not d.disabled(".tc-x-beta-box")


def drive_heads(d: Driver):
    e = d.explorer
    counts = list(e.scores)
    assert counts == [1, 2, 4, 8] and e.num_heads == 4
    d_head = {h: e.queries[h].shape[-1] for h in counts}
    minis = d.root.locator(".tc-x-mini")
    d.check(num_heads=4, head=0, beta=1 / math.sqrt(d_head[4]), hard=False)
    assert minis.count() == 4
    # β = 1/sqrt(d_head) follows h until the reader moves it
    d.change(lambda: d.root.locator(".tc-x-heads label").nth(3).click(), num_heads=8, head=0,
             beta=1 / math.sqrt(d_head[8]))
    assert minis.count() == 8 and d.disabled(".tc-x-beta-reset")
    d.change(lambda: d.press(".tc-x-head-slider", "End"), head=7)
    assert d.root.locator(".tc-x-head-readout").inner_text() == d.text("head_of", head=8,
                                                                        count=8)
    d.change(lambda: d.press(".tc-x-head-slider", "ArrowLeft"), head=6)
    # fewer heads: the head clamps to the last one there is
    d.change(lambda: d.root.locator(".tc-x-heads label").nth(1).click(), num_heads=2, head=1,
             beta=1 / math.sqrt(d_head[2]))
    assert d.root.locator(".tc-x-head-readout").inner_text() == d.text("head_of", head=2,
                                                                        count=2)
    assert d.root.locator(".tc-x-head-slider").get_attribute("max") == "2"
    d.change(lambda: d.press(".tc-x-head-slider", "Home"), head=0)
    # one head: nothing to choose, so the head controls are disabled
    d.change(lambda: d.root.locator(".tc-x-heads label").nth(0).click(), num_heads=1, head=0,
             beta=1 / math.sqrt(d_head[1]))
    assert d.disabled(".tc-x-head-slider") and d.disabled(".tc-x-mini")
    d.change(lambda: d.root.locator(".tc-x-heads label").nth(2).click(), num_heads=4, head=0)
    assert not d.disabled(".tc-x-head-slider")
    d.change(lambda: minis.nth(2).click(), head=2)
    assert minis.nth(2).get_attribute("aria-pressed") == "true"
    # the reader's β stays when h changes; the reset button brings 1/sqrt(d_head) back
    d.change(lambda: d.press(".tc-x-beta-slider", "End"), beta=1000.0)
    assert not d.disabled(".tc-x-beta-reset")
    d.change(lambda: d.root.locator(".tc-x-heads label").nth(3).click(), num_heads=8, head=2,
             beta=1000.0)
    d.change(lambda: d.root.locator(".tc-x-beta-reset").click(), beta=1 / math.sqrt(d_head[8]))
    assert d.disabled(".tc-x-beta-reset")
    d.change(lambda: d.root.locator(".tc-x-hard").check(), hard=True)
    assert d.disabled(".tc-x-beta-reset") and d.disabled(".tc-x-beta-slider")
    d.change(lambda: minis.nth(5).click(), head=5, hard=True)
    d.change(lambda: d.root.locator(".tc-x-hard").uncheck(), hard=False)
    d.change(lambda: d.press(".tc-x-beta-slider", "Home"), beta=0.0)
    d.change(lambda: d.root.locator(".tc-x-beta-reset").click(), beta=1 / math.sqrt(d_head[8]))


def drive_masks(d: Driver):
    e = d.explorer
    length = len(e.tokens)
    presets = d.root.locator(".tc-x-presets label")

    def preset(name):
        return lambda: presets.nth(widgets.MASK_PRESETS.index(name)).click()

    def key(j):
        return lambda: d.root.locator(f".tc-x-key[data-key='{j}']").click()

    d.check(mask=e.mask_for("none"), beta=0.25)
    assert d.disabled(".tc-x-pads") and d.disabled(".tc-x-unmask")  # no padding, no clicks
    d.change(preset("causal"), mask=e.mask_for("causal"))
    assert d.disabled(".tc-x-pads")
    d.change(key(2), mask=e.mask_for("causal", masked_keys=[2]))
    assert d.root.locator(".tc-x-key[data-key='2']").get_attribute("aria-pressed") == "true"
    assert not d.disabled(".tc-x-unmask")
    # a click on a cell masks its column (key) too
    cell = d.root.locator(".tc-x-map tbody tr").nth(length - 1).locator("td").nth(1)
    d.change(lambda: cell.click(), mask=e.mask_for("causal", masked_keys=[1, 2]))
    d.change(key(2), mask=e.mask_for("causal", masked_keys=[1]))
    # queries 0 and 1 may only see keys 0 and 1: mask them, and these rows have no key at all
    s = d.change(key(0), mask=e.mask_for("causal", masked_keys=[0, 1]))
    assert s["weights"][0] == s["weights"][1] == [0] * length
    notes = d.root.locator(".tc-x-note").all_inner_texts()
    assert notes[:2] == [d.text("no_key")] * 2 and not any(notes[2:])
    d.change(key(0), mask=e.mask_for("causal", masked_keys=[1]))
    # padding: the [PAD] control works only with a padding preset
    d.change(preset("padding"), mask=e.mask_for("padding", 0, [1]))
    assert not d.disabled(".tc-x-pads")
    d.change(lambda: d.press(".tc-x-pads", "ArrowRight"), mask=e.mask_for("padding", 1, [1]))
    d.change(lambda: d.press(".tc-x-pads", "ArrowRight"), mask=e.mask_for("padding", 2, [1]))
    assert d.disabled(".tc-x-key", length - 1) and not d.disabled(".tc-x-key", 0)
    assert d.root.locator(".tc-x-key").nth(length - 1).inner_text() == "[PAD]"
    d.change(preset("causal + padding"), mask=e.mask_for("causal + padding", 2, [1]))
    s = d.change(lambda: d.press(".tc-x-pads", "End"), mask=e.mask_for("padding", length))
    assert all(row == [0] * length for row in s["weights"])  # every key is [PAD]
    assert d.root.locator(".tc-x-note").all_inner_texts() == [d.text("no_key")] * length
    # nothing left for β or hard/soft to change: disabled
    assert d.disabled(".tc-x-beta-slider") and d.disabled(".tc-x-hard")
    d.change(lambda: d.press(".tc-x-pads", "Home"), mask=e.mask_for("causal", 0, [1]))
    assert not d.disabled(".tc-x-beta-slider") and not d.disabled(".tc-x-hard")
    d.change(lambda: d.root.locator(".tc-x-unmask").click(), mask=e.mask_for("causal"))
    d.change(preset("none"), mask=e.mask_for("none"))
    assert d.disabled(".tc-x-pads")
    for j in range(length):  # mask every key by hand
        d.change(key(j), mask=e.mask_for("none", masked_keys=list(range(j + 1))))
    assert d.root.locator(".tc-x-note").all_inner_texts() == [d.text("no_key")] * length
    d.change(lambda: d.root.locator(".tc-x-unmask").click(), mask=e.mask_for("none"))
    d.change(preset("causal"), mask=e.mask_for("causal"))


def drive(d: Driver, kind: str):
    if kind == "beta":
        drive_beta_controls(d, len(d.explorer.tokens))
    elif kind == "heads":
        drive_heads(d)
        drive_beta_controls(d, len(d.explorer.tokens))
    else:
        drive_masks(d)
        d.change(lambda: d.root.locator(".tc-x-presets label").nth(0).click())
        drive_beta_controls(d, len(d.explorer.tokens))


def explorer_payload_bytes(root):
    """The bytes of one explorer's payload: its style, data and code."""
    return root.evaluate(
        "e => Array.from(e.querySelectorAll(':scope > style, :scope > script'))"
        ".reduce((n, s) => n + new TextEncoder().encode(s.textContent).length, 0)")


# --- (a) standalone files: what Colab and Jupyter get ---------------------------------------

@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """Each explorer written to its own page, plus a page that holds several."""
    tc.set_language("en")
    folder = tmp_path_factory.mktemp("explorers")
    explorers = {"beta": widgets.beta_explorer(), "heads": widgets.heads_explorer(),
                 "masks": widgets.masks_explorer(),
                 "beta3d": widgets.beta_explorer(torch.randn(4, 3, generator=torch.Generator()
                                                             .manual_seed(1)))}
    for name, e in explorers.items():
        e.save(folder / f"{name}.html")
    several = [explorers["heads"], explorers["masks"], explorers["masks"]]
    (folder / "several.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        + "".join(e.html() for e in several) + "</body></html>", encoding="utf-8")
    with serve(folder) as url:
        yield url, explorers, folder


@pytest.fixture
def open_standalone(browser, standalone):
    url = standalone[0]
    opened = []

    def open_page(name):
        v = Visit(browser, url, f"{name}.html")
        opened.append(v)
        return v

    yield open_page
    for v in opened:
        v.close()


@pytest.mark.parametrize("kind", ["beta", "heads", "masks"])
def test_standalone_explorer_agrees_with_pytorch(open_standalone, standalone, kind):
    _, explorers, folder = standalone
    v = open_standalone(kind)
    root = v.page.locator(".tc-explorer")
    d = Driver(v, explorers[kind], root)
    assert root.get_attribute("data-kind") == kind
    drive(d, kind)
    assert d.checked >= 15
    size = (folder / f"{kind}.html").stat().st_size
    assert size < LIMIT and explorer_payload_bytes(root) < LIMIT, size
    assert v.blocked == [] and v.errors == [], (v.blocked, v.errors)


def test_a_screen_reader_hears_each_change_of_the_map(open_standalone):
    """The map's title is a polite live region: moving a control with the keyboard changes
    what it says (the head shown, hard or soft and beta), which a screen reader reads out."""
    v = open_standalone("heads")
    root = v.page.locator(".tc-explorer")
    title = root.locator("figcaption.tc-x-title").first
    assert title.get_attribute("aria-live") == "polite"
    before = title.inner_text()
    root.locator("input[type=range]").last.focus()  # the head slider
    v.page.keyboard.press("ArrowRight")
    v.page.wait_for_function("([t, b]) => t.innerText !== b", arg=[title.element_handle(), before])
    after = title.inner_text()
    root.locator("input[type=checkbox]").first.focus()  # hard attention
    v.page.keyboard.press("Space")
    v.page.wait_for_function("([t, b]) => t.innerText !== b", arg=[title.element_handle(), after])
    assert v.errors == [], v.errors


def test_standalone_beta_explorer_draws_the_plane(open_standalone, standalone):
    _, explorers, _ = standalone
    v = open_standalone("beta")
    d = Driver(v, explorers["beta"], v.page.locator(".tc-explorer"))
    plane = d.root.locator("svg.tc-x-plane")
    assert plane.locator("circle.tc-x-in").count() == 5 + 1  # the inputs and the legend
    assert plane.locator("path.tc-x-cross").count() == 5 + 1
    texts = plane.locator("text").all_text_contents()
    assert texts[:5] == ["x₁", "x₂", "x₃", "x₄", "x₅"]
    v3 = open_standalone("beta3d")
    d3 = Driver(v3, explorers["beta3d"], v3.page.locator(".tc-explorer"))
    assert d3.root.locator("svg").count() == 0
    assert d3.root.locator(".tc-x-values tr").count() == 4  # the outputs as a heatmap
    drive_beta_controls(d3, 4)
    assert v.errors == [] == v3.errors


def test_several_explorers_on_a_page_and_one_shown_twice(open_standalone, standalone):
    _, explorers, _ = standalone
    v = open_standalone("several")
    roots = v.page.locator(".tc-explorer")
    assert roots.count() == 3
    heads = Driver(v, explorers["heads"], roots.nth(0))
    first = Driver(v, explorers["masks"], roots.nth(1))
    second = Driver(v, explorers["masks"], roots.nth(2))
    assert v.page.evaluate("window.TcExplorer.version") == 1
    untouched = first.raw()
    second.change(lambda: second.root.locator(".tc-x-key[data-key='1']").click(),
                  mask=explorers["masks"].mask_for("none", masked_keys=[1]))
    second.change(lambda: second.root.locator(".tc-x-presets label").nth(1).click(),
                  mask=explorers["masks"].mask_for("causal", masked_keys=[1]))
    assert first.raw() == untouched  # no shared state, no id clash
    first.change(lambda: first.root.locator(".tc-x-presets label").nth(1).click(),
                 mask=explorers["masks"].mask_for("causal"))
    heads.change(lambda: heads.root.locator(".tc-x-heads label").nth(0).click(), num_heads=1)
    names = v.page.evaluate("Array.from(document.querySelectorAll('input[type=radio]'))"
                            ".map(e => e.name)")
    assert len(set(names)) == 3  # h, and each masks explorer's own presets
    assert v.page.locator("[id]").count() == 0
    assert v.errors == [] and v.blocked == []


def test_front_ends_that_insert_html_later_still_mount_it(browser, standalone):
    """JupyterLab and VS Code set an output's HTML with innerHTML (its scripts do not run),
    then re-create each script, sometimes before the output is attached; other front ends
    evaluate the script's text, with no current script."""
    url, explorers, folder = standalone
    (folder / "empty.html").write_text("<!DOCTYPE html><html><body></body></html>",
                                       encoding="utf-8")
    v = Visit(browser, url, "empty.html")
    html = explorers["masks"].html()
    v.page.evaluate("""html => {
        const recreate = host => host.querySelectorAll('script').forEach(old => {
          const s = document.createElement('script');
          if (old.type) s.type = old.type;
          if (old.className) s.className = old.className;
          s.textContent = old.textContent;
          old.parentNode.replaceChild(s, old);
        });
        const a = document.createElement('div');          // attached, then scripts re-run
        document.body.appendChild(a); a.innerHTML = html; recreate(a);
        const b = document.createElement('div');          // scripts re-run while detached
        b.innerHTML = html; recreate(b); document.body.appendChild(b);
        const c = document.createElement('div');          // script text evaluated
        c.innerHTML = html; document.body.appendChild(c);
        c.querySelectorAll('script:not([type])').forEach(s => (0, eval)(s.textContent));
    }""", html)
    roots = v.page.locator(".tc-explorer")
    assert roots.count() == 3
    for i in range(3):
        d = Driver(v, explorers["masks"], roots.nth(i))
        d.change(lambda d=d: d.root.locator(".tc-x-key[data-key='3']").click(),
                 mask=explorers["masks"].mask_for("none", masked_keys=[3]))
    assert v.errors == [] and v.blocked == []
    v.close()


def test_every_text_on_the_page_comes_from_the_catalogs(browser, tmp_path, monkeypatch):
    """With every catalog message wrapped in ⟦ ⟧, nothing else is left on the page but
    token labels, numbers and [PAD]."""
    monkeypatch.setattr(widgets, "_", lambda message: f"⟦{message}⟧")
    monkeypatch.setattr(widgets, "ngettext", lambda one, many, n: f"⟦{one if n == 1 else many}⟧")
    tc.set_language("en")
    explorers = [widgets.beta_explorer(), widgets.heads_explorer(),
                 widgets.masks_explorer(mask="padding", pads=2, masked_keys=[0])]
    for i, e in enumerate(explorers):
        e.save(tmp_path / f"{i}.html")
    with serve(tmp_path) as url:
        for i, e in enumerate(explorers):
            v = Visit(browser, url, f"{i}.html")
            root = v.page.locator(".tc-explorer")
            d = Driver(v, e, root)
            if e.kind == "heads":
                d.change(root.locator(".tc-x-heads label").nth(0).click)
            d.change(root.locator(".tc-x-hard").check)
            texts = root.evaluate("""e => {
                const out = [], walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
                while (walk.nextNode()) {
                  const p = walk.currentNode.parentNode.tagName;
                  if (p !== 'SCRIPT' && p !== 'STYLE') out.push(walk.currentNode.textContent);
                }
                e.querySelectorAll('[title], [aria-label]').forEach(n => {
                  out.push(n.getAttribute('title') || '');
                  out.push(n.getAttribute('aria-label') || '');
                });
                return out; }""")
            left = []
            for text in texts:
                rest = text
                while re.search(r"⟦[^⟦⟧]*⟧", rest):  # innermost first: texts nest in titles
                    rest = re.sub(r"⟦[^⟦⟧]*⟧", "", rest)
                for token in sorted(e.tokens, key=len, reverse=True):
                    rest = rest.replace(token, "")
                rest = re.sub(r"\[PAD\]|[\d.,\s\u202f·−-]", "", rest)
                if rest:
                    left.append(text)
            assert left == [], f"{e.kind}: texts not from the catalogs: {left}"
            assert v.errors == [] and v.blocked == []
            v.close()


@pytest.mark.parametrize("lang, typed, value, shown", [
    ("fr", "0,5", 0.5, "0,5"), ("fr", "1 000", 1000.0, "1\u202f000"), ("fr", "2.5", 2.5, "2,5"),
    ("it", "0,5", 0.5, "0,5"), ("it", "1.000", 1000.0, "1.000"), ("en", "1,000", 1000.0, "1,000"),
])
def test_numbers_follow_the_language(browser, tmp_path, plain_texts, lang, typed, value, shown):
    tc.set_language(lang)
    e = widgets.masks_explorer()
    e.save(tmp_path / "page.html")
    with serve(tmp_path) as url:
        v = Visit(browser, url, "page.html")
        d = Driver(v, e, v.page.locator(".tc-explorer"), lang)
        assert d.root.get_attribute("lang") == lang
        first_cell = d.root.locator(".tc-x-map tbody td").first.inner_text()
        assert re.fullmatch(r"\d" + re.escape(DECIMAL[lang]) + r"\d\d", first_cell), first_cell
        d.change(lambda: d.type_beta(typed), beta=value)
        assert d.root.locator(".tc-x-beta-box").input_value() == shown
        assert v.errors == [] and v.blocked == []
        v.close()


def test_payload_of_each_explorer_is_small(standalone, record_property):
    _, explorers, _ = standalone
    for kind, e in explorers.items():
        size = len(e.html().encode("utf-8"))
        record_property(f"payload_{kind}", size)
        assert size < LIMIT, (kind, size)
    longest = widgets.heads_explorer(sentence=" ".join(f"w{i}" for i in range(20)))
    assert len(longest.html().encode("utf-8")) < LIMIT


# --- (b) the built book, in every language ---------------------------------------------------

def chapter_call_is(page, lang, call):
    nb = json.loads((ROOT / "book" / lang / f"{page}.ipynb").read_text(encoding="utf-8"))
    return any(call in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(CHAPTERS))
def test_book_explorer_agrees_with_pytorch(visit, plain_texts, lang, page, record_property):
    kind, call, make = CHAPTERS[page]
    assert chapter_call_is(page, lang, call), f"{lang}/{page} no longer calls {call}"
    v = visit(f"{lang}/{page}.html")
    root = v.page.locator(".tc-explorer").first
    root.wait_for(state="attached", timeout=20000)
    assert v.page.locator(".tc-explorer").count() == 1
    assert root.get_attribute("data-kind") == kind
    tc.set_language(root.get_attribute("lang"))  # the language the chapter computed it in
    d = Driver(v, make(), root, lang=root.get_attribute("lang"))
    root.scroll_into_view_if_needed()
    drive(d, kind)
    size = explorer_payload_bytes(root)
    record_property("payload_bytes", size)
    assert size < LIMIT, size
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(CHAPTERS))
def test_book_explorer_speaks_the_page_language(visit, lang, page):
    v = visit(f"{lang}/{page}.html")
    root = v.page.locator(".tc-explorer").first
    root.wait_for(state="attached", timeout=20000)
    assert root.get_attribute("lang") == lang, "the chapter's setup cell sets its language"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", list(CHAPTERS))
def test_explorer_pages_load_no_widget_embedder(site, lang, page):
    html = (site / lang / f"{page}.html").read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" not in html
    assert "html-manager" not in html and "embed.js" not in html
    assert "course.js" not in html


def _luminance(rgb: list[int]) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    linear = [v / 255 / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4
              for v in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_a_weight_cell_s_text_contrasts_with_its_colour(browser):
    """Every shade of the weight maps (blue(t), t from 0 to 1) gets the text colour ink(t)
    chooses: at least 4.5:1, WCAG AA for text (white on the middle blues was 3.3:1)."""
    page = browser.new_page()
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    common = ROOT / "src" / "transformer_course" / "reader" / "js" / "common.js"
    page.add_script_tag(path=str(common))
    shades = page.evaluate("""() => Array.from({length: 201}, (_, i) => i / 200)
        .map(t => [TcCommon.blue(t), TcCommon.ink(t)])""")
    page.close()
    for background, ink in shades:
        bg = _luminance([int(v) for v in re.findall(r"\d+", background)])
        fg = 1.0 if ink == "#fff" else 0.0
        ratio = (max(bg, fg) + 0.05) / (min(bg, fg) + 0.05)
        assert ratio >= 4.5, (background, ink, round(ratio, 2))
