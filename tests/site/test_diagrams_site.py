"""The diagrams of the built book, in every language: every place the course promises one has
it (the home page, chapters 4, 7, 8, 9 and 10), its numbers equal those of the module its
config builds, every block links to an anchor that exists in the book of that language, its
texts are in that language, it weighs less than 40 KB, and Chromium with the network cut
draws it with its details on hover and on keyboard focus."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

import pytest
import torch
import yaml

import transformer_course as tc
from diagramming import (
    LIMIT,
    REQUIRED,
    english_in,
    english_words,
    fragments,
    missing_places,
    models,
    visible,
)

ROOT = Path(__file__).resolve().parents[2]
LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
PAGES = sorted(p.stem for p in (ROOT / "book" / "en").iterdir() if p.suffix in (".md", ".ipynb"))


@cache
def ids_of(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", sorted(REQUIRED))
def test_every_required_place_shows_its_diagram(site, lang, page):
    found = models((site / lang / f"{page}.html").read_text(encoding="utf-8"))
    missing = missing_places(page, found)
    assert missing == [], (f"{lang}/{page}.html lacks a diagram of {missing} "
                           f"(it has {[m['module'] for m in found]})")


@pytest.mark.parametrize("lang", LANGS)
def test_book_diagrams_are_true_linked_small_and_in_the_pages_language(site, lang):
    words = english_words(lang) if lang != "en" else set()
    seen = 0
    for page in PAGES:
        text = (site / lang / f"{page}.html").read_text(encoding="utf-8")
        for fragment, model in zip(fragments(text), models(text), strict=True):
            seen += 1
            where = f"{lang}/{page}: {model['module']}"
            assert len(fragment.encode("utf-8")) < LIMIT, (where, len(fragment.encode()))
            assert f'lang="{lang}"' in fragment[:200], where
            with torch.device("meta"):
                rebuilt = getattr(tc, model["module"])(**model["config"])
            total = sum(p.numel() for p in rebuilt.parameters())
            assert model["parameters"] == total, where
            assert sum(b["parameters"] for b in model["blocks"]) == total, where
            links = [html.unescape(h) for h in re.findall(
                r'<a class="tc-d-block[^"]*" data-i="\d+"[^>]*href="([^"]*)"', fragment)]
            assert links == [b["href"] for b in model["blocks"]], f"{where}: blocks not linked"
            for b in model["blocks"]:
                target, _sep, anchor = b["href"].partition("#")
                path = site / lang / target
                assert path.exists(), f"{where}: {b['href']} leads to no page"
                assert anchor in ids_of(path), f"{where}: no anchor #{anchor} in {lang}/{target}"
                assert english_in(b["label"], words) == [], (where, b["label"])
            assert english_in(visible(fragment), words) == [], (
                where, english_in(visible(fragment), words))
    assert seen >= sum(len(v) for v in REQUIRED.values())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", sorted(REQUIRED))
def test_book_diagrams_in_chromium(visit, lang, page):
    v = visit(f"{lang}/{page}.html")
    roots = v.page.locator(".tc-diagram[data-model]")
    assert roots.count() >= len(REQUIRED[page])
    for k in range(roots.count()):
        root = roots.nth(k)
        root.wait_for(state="attached")
        v.page.wait_for_function("e => e.hasAttribute('data-tc-mounted')",
                                 arg=root.element_handle(), timeout=20000)
        [model] = models(root.evaluate("e => e.outerHTML"))
        blocks = root.locator(".tc-d-block")
        assert blocks.count() == len(model["blocks"])
        panel = root.locator(".tc-d-panel")
        last = len(model["blocks"]) - 1
        blocks.nth(0).scroll_into_view_if_needed()
        blocks.nth(0).hover()  # the pointer
        v.page.wait_for_function("e => e.getAttribute('data-shown') === '0'",
                                 arg=root.element_handle())
        assert model["blocks"][0]["class"] in panel.inner_text()
        blocks.nth(last).focus()  # the keyboard
        v.page.wait_for_function("([e, i]) => e.getAttribute('data-shown') === String(i)",
                                 arg=[root.element_handle(), last])
        text = panel.inner_text()
        assert model["blocks"][last]["class"] in text and model["blocks"][last]["section"] in text
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)
