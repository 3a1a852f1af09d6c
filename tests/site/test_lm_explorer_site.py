"""The language-model explorer of the built chapter 10 pages (`make book`), in Chromium with
the network cut: the model that the chapter trained on that language's prose runs in the
page, and for several prompts and steps its logits and attention rows are PyTorch's for the
weights the page loads; it writes the same text with and without the KV cache, twice
with the same seed, the argmax at T = 0 and with top-k = 1; no page error, no English on the
French and Italian pages. tests/site/test_lm_explorer.py checks the explorer itself."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

import transformer_course as tc
from lm_pages import LMDriver, english_words, greedy_text, page_texts
from transformer_course import data
from transformer_course.reader import lm_explorer as lm_module

pytest.importorskip("playwright.sync_api", reason="requirements.txt installs it")

ROOT = Path(__file__).resolve().parents[2]
LANGS = list(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["languages"])
PAGE = "10_language_models"
WEIGHTS_LIMIT = 300_000
PROMPTS = {
    "en": ["The attention we", "Each head ", ""],
    "fr": ["Le modèle calcul", "Chaque tête ", "Zürich ✓"],
    "it": ["L'attenzione pes", "Ogni testa ", "ß"],
}


def chapter(lang: str) -> list[dict]:
    nb = json.loads((ROOT / "book" / lang / f"{PAGE}.ipynb").read_text(encoding="utf-8"))
    return nb["cells"]


def lm_config(lang: str) -> dict:
    """The chapter's own LM_CONFIG, read from its code."""
    for cell in chapter(lang):
        match = re.search(r"^LM_CONFIG = (dict\(.*?\))$", "".join(cell["source"]), re.M)
        if cell["cell_type"] == "code" and match:
            call = ast.parse(match.group(1), mode="eval").body
            return {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    raise AssertionError(f"{lang}/{PAGE} defines no LM_CONFIG")


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    tc.set_language("en")


@pytest.mark.parametrize("lang", LANGS)
def test_the_chapter_shows_the_explorer_after_section_10_4(lang):
    cells = chapter(lang)
    headings = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                and re.match(r"## 10\.[45] ", "".join(c["source"]))]
    calls = [i for i, c in enumerate(cells) if c["cell_type"] == "code"
             and "widgets.lm_explorer(model, tokenizer" in "".join(c["source"])]
    assert len(headings) == 2 and len(calls) == 1, f"{lang}/{PAGE}: {headings}, {calls}"
    assert headings[0] < calls[0] < headings[1]


@pytest.mark.parametrize("lang", LANGS)
def test_the_chapter_explorer_agrees_with_pytorch(visit, site, lang, record_property):
    v = visit(f"{lang}/{PAGE}.html")
    roots = v.page.locator(".tc-explorer[data-kind='lm']")
    roots.first.wait_for(state="attached", timeout=20000)
    assert roots.count() == 1
    root = roots.first
    root.scroll_into_view_if_needed()
    d = LMDriver(v, root)
    assert root.get_attribute("lang") == lang
    # the chapter's model: its configuration, the characters of that language's prose
    tokenizer = data.CharTokenizer.from_texts([data.course_corpus((lang,))])
    assert d.weights["chars"] == tokenizer.itos
    assert d.weights["config"] == dict(vocab_size=len(tokenizer), **lm_config(lang),
                                       tie_embeddings=True, norm_first=True)
    # the page carries no weights: the explorer loaded them from their own file when it came
    # near the screen (coursebook_lean.external_weights)
    script = root.locator("script.tc-weights")
    src = script.get_attribute("data-src")
    assert script.text_content() == "" and src.startswith("_static/lm/"), src
    size = (site / lang / src).stat().st_size
    record_property("weights_file_bytes", size)
    assert size < WEIGHTS_LIMIT, size
    d.check(steps=0)
    # several prompts and steps: logits and attention rows against PyTorch
    for prompt in PROMPTS[lang]:
        d.start(prompt)
        d.step(3)
        d.write()
    d.set_range("input.tc-temperature", 1.3)
    d.set_top_k("8")
    d.set_range("input.tc-top-p", 0.9)
    d.start(PROMPTS[lang][1])
    d.step(2)
    d.write()
    d.start(PROMPTS[lang][1])
    seeded = d.write()
    # the same seed and settings write the same text, with the cache and without
    d.start(PROMPTS[lang][1])
    assert d.write()["text"] == seeded["text"]
    d.cache(False)
    d.start(PROMPTS[lang][1])
    without = d.write()
    assert without["text"] == seeded["text"] and without["logits"] == seeded["logits"]
    d.cache(True)
    # T = 0 is the argmax, and top-k = 1 is greedy at any temperature
    d.set_top_k("")
    d.root.locator("input.tc-temperature").press("Home")
    greedy = d.start(PROMPTS[lang][0])
    greedy = d.write()
    assert greedy["text"] == greedy_text(d, PROMPTS[lang][0], greedy["steps"])
    d.root.locator("input.tc-temperature").press("End")
    d.set_top_k("1")
    d.start(PROMPTS[lang][0])
    assert d.write()["text"] == greedy["text"]
    assert d.checked >= 20
    if lang != "en":  # no English for a French or Italian reader
        tc.set_language("en")
        words = english_words(lm_module._strings(1, "int8"), d.payload["strings"])
        for text in page_texts(root):
            found = {w for w in re.findall(r"[^\W\d_]+", text.lower()) if w in words}
            assert not found, (text, found)
    assert v.blocked == [] and v.real_errors == [], (v.blocked, v.real_errors)
