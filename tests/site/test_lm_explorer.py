"""The language-model explorer (widgets.lm_explorer): the weights JSON rebuilds the model,
bad input is named, the payload is small, and in headless Chromium with the network cut the
page's logits and attention rows are PyTorch's for the same weights, in English, French and
Italian, with and without the KV cache, for every setting a reader can pick.

The models are seeded and untrained, with weights spread wider than the default
initialisation so that the logits and the attention rows are far from uniform (training
would add nothing to these checks), except one test that trains briefly to compare the
page's greedy text with LanguageModel.generate. tests/site/test_lm_explorer_site.py checks the
explorer of the built chapter 10 pages."""

from __future__ import annotations

import inspect
import json
import math
import re
import sys
from pathlib import Path

import pytest
import torch

import transformer_course as tc
from browsing import Visit, serve
from lm_pages import (
    LMDriver,
    english_words,
    greedy_text,
    ids_of,
    page_texts,
    pytorch,
    rebuild,
    rule,
)
from transformer_course import data, training, widgets
from transformer_course.reader import lm_explorer as lm_module
from transformer_course.reader import page as page_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sphinxext"))
import coursebook_lean as lean

LANGS = ("en", "fr", "it")
CHAPTER = dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0, max_len=320)
WEIGHTS_LIMIT = 300_000  # bytes of the weights JSON in the page (issue 22)
PROMPTS = {
    "en": ["The attention we", "Each head", ""],
    "fr": ["L’attention", "Chaque tête « lit »", "Zürich ✓"],
    "it": ["L’attenzione", "Ogni testa", "ß"],
}


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    tc.set_language("en")


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models: one torch thread is faster than two spinning on a loaded machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tokenizer_of(lang: str) -> data.CharTokenizer:
    return data.CharTokenizer.from_texts([data.course_corpus((lang,))])


def spread_model(vocab_size: int, *, seed: int = 0, d_model: int = 32, max_len: int = 64,
                 **options) -> tc.LanguageModel:
    """A seeded, untrained model whose logits and attention rows are far from uniform."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = tc.LanguageModel(vocab_size, d_model=d_model, num_heads=4, num_layers=2,
                                 d_ff=2 * d_model, dropout=0.0, max_len=max_len, **options)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.startswith(("embed", "head")):
                    p.normal_(0.0, 0.5)
                elif name.startswith("position"):
                    p.normal_(0.0, 0.3)
                elif "norm" in name and name.endswith("weight"):
                    p.copy_(1.0 + 0.2 * torch.randn_like(p))
                elif p.dim() == 2:
                    p.normal_(0.0, 1.5 / math.sqrt(p.shape[1]))
                else:
                    p.normal_(0.0, 0.2)
    return model.eval()


@pytest.fixture(scope="module")
def tokenizers():
    return {lang: tokenizer_of(lang) for lang in LANGS}


@pytest.fixture(scope="module")
def models(tokenizers):
    return {lang: spread_model(len(tok), seed=i) for i, (lang, tok) in
            enumerate(tokenizers.items())}


# --- the weights JSON ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", lm_module.FORMATS)
def test_weights_rebuild_the_model(tokenizers, models, fmt):
    tok, model = tokenizers["fr"], models["fr"]
    weights = json.loads(json.dumps(lm_module.lm_weights(model, tok, weights=fmt)))
    assert weights["config"] == dict(vocab_size=len(tok), d_model=32, num_heads=4, num_layers=2,
                                     d_ff=64, dropout=0.0, max_len=64, tie_embeddings=True,
                                     norm_first=True)
    assert set(weights["config"]) <= set(inspect.signature(tc.LanguageModel).parameters)
    assert weights["chars"] == tok.itos and weights["chars"][:4] == list(tok.specials)
    assert weights["specials"] == {"<pad>": 0, "<bos>": 1, "<eos>": 2, "<unk>": 3}
    assert weights["unk_id"] == tok.unk_id
    assert list(weights["tensors"]) == list(model.state_dict())
    for key, entry in weights["tensors"].items():
        assert entry["shape"] == list(model.state_dict()[key].shape)
        assert entry["dtype"] == ("int8" if fmt == "int8" and len(entry["shape"]) == 2
                                  else "float32" if fmt == "float32" else "float16")
    ours = rebuild(weights)  # tests/site/lm_pages.py decodes it with struct, independently
    theirs = lm_module.model_from_weights(weights)
    for key, value in model.state_dict().items():
        got = ours.state_dict()[key]
        assert torch.equal(got, theirs.state_dict()[key]), key
        if fmt == "float32":
            assert torch.equal(got, value), key
        elif fmt == "float16" or value.dim() == 1:
            torch.testing.assert_close(got, value.half().float(), atol=0, rtol=0)
        else:  # int8: within half a step of the row's scale, the row's largest kept exactly
            step = value.abs().amax(1, keepdim=True) / 127
            assert ((got - value).abs() <= step / 2 + 1e-7).all(), key
            torch.testing.assert_close(got.abs().amax(1), value.abs().amax(1))
    assert ours.head.weight is ours.embed.weight
    ids = torch.tensor([tok.encode("L’attention « lit »")])
    with torch.no_grad():
        gap = (ours(ids) - model(ids)).abs().max().item()
    # logits of a few units here; the trained model of the last test moves by less than 0.1
    assert gap < {"float32": 1e-5, "float16": 2e-2, "int8": 0.5}[fmt], gap


def test_untied_post_norm_models_round_trip(tokenizers):
    tok = tokenizers["en"]
    model = spread_model(len(tok), tie_embeddings=False, norm_first=False)
    weights = lm_module.lm_weights(model, tok, weights="float32")
    assert weights["config"]["tie_embeddings"] is False
    assert weights["config"]["norm_first"] is False
    rebuilt = rebuild(weights)
    for key, value in model.state_dict().items():
        assert torch.equal(rebuilt.state_dict()[key], value), key


def test_chapter_model_payload_is_small(tokenizers, record_property):
    """Chapter 10's configuration, with the English characters: the weights JSON stays under
    300 kB, 8-bit integers with a scale per row; 16-bit floats would not."""
    tok = tokenizers["en"]
    torch.manual_seed(0)
    model = tc.LanguageModel(len(tok), **CHAPTER)
    explorer = widgets.lm_explorer(model, tok)
    html = explorer.html()
    weights = re.search(r'class="tc-weights">(.*?)</script>', html, re.S).group(1)
    parameters = sum(p.numel() for p in model.parameters())
    assert explorer.parameters == parameters and 120_000 < parameters < 135_000
    # one byte per weight (the tied matrix twice, as state_dict lists it) + a scale per row
    rows = sum(t.shape[0] for t in model.state_dict().values() if t.dim() == 2)
    vectors = sum(t.numel() for t in model.state_dict().values() if t.dim() == 1)
    matrices = sum(t.numel() for t in model.state_dict().values() if t.dim() == 2)
    assert explorer.weight_bytes == matrices + 4 * rows + 2 * vectors
    record_property("weights_json_bytes", len(weights.encode()))
    record_property("html_bytes", len(html.encode()))
    assert len(weights.encode()) < WEIGHTS_LIMIT and len(html.encode()) < WEIGHTS_LIMIT
    half = widgets.lm_explorer(model, tok, weights="float16")
    assert len(json.dumps(half.weights)) > WEIGHTS_LIMIT  # why int8 is the default


def test_write_follows_the_pages_rule(tokenizers, models):
    """LMExplorer.write against the rule written again in tests/site/lm_pages.py."""
    from lm_pages import pick, uniform

    tok, model = tokenizers["en"], models["en"]
    explorer = widgets.lm_explorer(model, tok, prompt="Each head", temperature=1.3, top_k=12,
                                   top_p=0.85, seed=3)
    weights = explorer.weights
    allowed = [i for i in range(len(tok)) if i not in weights["specials"].values()]
    text = "Each head"
    for step in range(20):
        logits, _ = pytorch(rebuild(weights).double(), ids_of(weights, text))
        text += tok.itos[pick(rule(logits.tolist(), allowed, 1.3, 12, 0.85), uniform(3, step))]
    assert explorer.write(steps=20) == text
    assert explorer.write(steps=0) == "Each head" and explorer.write("", 0) == "\n"
    greedy = explorer.write(steps=30, temperature=0.0)
    assert greedy == explorer.write(steps=30, top_k=1, seed=99)  # top-k = 1 is greedy
    assert len(explorer.write("x" * 60, 30)) == 64  # stops at max_len
    assert explorer.page_model.embed.weight.dtype == torch.float32  # left as it was


def test_reference_is_the_rebuilt_model(tokenizers, models):
    tok, model = tokenizers["it"], models["it"]
    explorer = widgets.lm_explorer(model, tok)
    again = rebuild(explorer.weights)
    for text in ("L’attenzione", "", "ß€", "x" * 64):
        logits, rows = explorer.reference(text)
        want, want_rows = pytorch(again, ids_of(explorer.weights, text))
        torch.testing.assert_close(logits.double(), want, atol=1e-6, rtol=0)
        for got, expected in zip(rows, want_rows, strict=True):
            torch.testing.assert_close(got.double(), expected, atol=1e-6, rtol=0)
    assert ids_of(explorer.weights, "ß") == [tok.unk_id] == tok.encode("ß")
    assert ids_of(explorer.weights, "") == tok.encode("\n")
    with pytest.raises(ValueError, match="max_len"):
        explorer.reference("x" * 65)


# --- the Python side: settings, bad input, HTML ---------------------------------------------------

def test_settings_and_defaults(tokenizers, models):
    for lang in LANGS:
        tc.set_language(lang)
        e = widgets.lm_explorer(models[lang], tokenizers[lang])
        assert e.prompt == lm_module.PROMPTS[lang] and e.language == lang
        assert (e.temperature, e.top_k, e.top_p, e.seed, e.format) == (0.8, None, 1.0, 0, "int8")
        assert e.numbers["decimal"] == ("." if lang == "en" else ",")
    e = widgets.lm_explorer(models["en"], tokenizers["en"], prompt="", temperature=0.333,
                            top_k=500, top_p=0.904, seed=2**32 - 1)
    assert (e.prompt, e.temperature, e.top_k, e.top_p, e.seed) == ("", 0.33, 500, 0.9,
                                                                    2**32 - 1)
    assert widgets.lm_explorer is lm_module.lm_explorer and "lm_explorer" in widgets.__all__
    for lang, words in (("en", "weights in int8"), ("fr", "poids en int8"),
                        ("it", "pesi in int8")):
        with tc.i18n.speaking(lang):
            built = widgets.lm_explorer(models[lang], tokenizers[lang])
        assert repr(built).startswith(f"<{built.strings['title']}") and words in repr(built)
        assert lang == "en" or "weights" not in repr(built), repr(built)


@pytest.mark.parametrize("call, error, match", [
    (lambda m, t: widgets.lm_explorer(torch.nn.Linear(2, 2), t), TypeError, "LanguageModel"),
    (lambda m, t: widgets.lm_explorer(tc.Transformer(9, 9, d_model=8, num_heads=2,
                                                     num_layers=1, d_ff=8), t),
     TypeError, "model must be a transformer_course.LanguageModel, got Transformer"),
    (lambda m, t: widgets.lm_explorer(m, data.WordTokenizer(["a", "b"])), TypeError,
     "CharTokenizer"),
    (lambda m, t: widgets.lm_explorer(m, data.CharTokenizer("abc")), ValueError,
     r"tokenizer has 7 tokens but model.vocab_size=\d+"),
    (lambda m, t: widgets.lm_explorer(m, "abc"), TypeError, "got str"),
    (lambda m, t: widgets.lm_explorer(m, t, prompt=5), TypeError, "prompt must be a str"),
    (lambda m, t: widgets.lm_explorer(m, t, prompt="x" * 65), ValueError,
     "prompt has 65 characters but the model reads at most max_len=64"),
    (lambda m, t: widgets.lm_explorer(m, t, temperature=-0.1), ValueError, "temperature"),
    (lambda m, t: widgets.lm_explorer(m, t, temperature=2.5), ValueError, "temperature"),
    (lambda m, t: widgets.lm_explorer(m, t, temperature=float("nan")), ValueError,
     "temperature"),
    (lambda m, t: widgets.lm_explorer(m, t, temperature="1"), TypeError, "temperature"),
    (lambda m, t: widgets.lm_explorer(m, t, top_k=0), ValueError, "top_k must be >= 1"),
    (lambda m, t: widgets.lm_explorer(m, t, top_k=2.0), TypeError, "top_k must be an int"),
    (lambda m, t: widgets.lm_explorer(m, t, top_p=0.0), ValueError, "top_p"),
    (lambda m, t: widgets.lm_explorer(m, t, top_p=1.5), ValueError, "top_p"),
    (lambda m, t: widgets.lm_explorer(m, t, seed=-1), ValueError, "seed"),
    (lambda m, t: widgets.lm_explorer(m, t, seed=2**32), ValueError, "seed"),
    (lambda m, t: widgets.lm_explorer(m, t, seed=True), TypeError, "seed"),
    (lambda m, t: widgets.lm_explorer(m, t, weights="int4"), ValueError, "weights must be one"),
    (lambda m, t: lm_module.model_from_weights({"config": {}}), TypeError, "lm_weights"),
    (lambda m, t: widgets.lm_explorer(m, t).write(steps=-1), ValueError, "steps must be >= 0"),
    (lambda m, t: widgets.lm_explorer(m, t).write("x" * 65), ValueError, "max_len=64"),
    (lambda m, t: widgets.lm_explorer(m, t).write(top_k=0), ValueError, "top_k"),
    (lambda m, t: widgets.lm_explorer(m, t).write(top_p=0), ValueError, "top_p"),
    (lambda m, t: widgets.lm_explorer(m, t).write(seed=-2), ValueError, "seed"),
])
def test_bad_input_is_named(tokenizers, models, call, error, match):
    with pytest.raises(error, match=match):
        call(models["en"], tokenizers["en"])


def test_weights_must_be_finite_and_real(tokenizers):
    tok = tokenizers["en"]
    model = spread_model(len(tok))
    with torch.no_grad():
        model.blocks[1].ff.linear1.weight[3, 5] = float("nan")
    with pytest.raises(ValueError, match=r"blocks.1.ff.linear1.weight.*NaN"):
        widgets.lm_explorer(model, tok)
    with pytest.raises(ValueError, match="only its 4 special tokens"):
        widgets.lm_explorer(spread_model(4), data.CharTokenizer(""))


def test_html_is_self_contained_and_escaped(tokenizers):
    tok = data.CharTokenizer.from_texts(["a</script><b>&c"])  # characters that break HTML
    explorer = widgets.lm_explorer(spread_model(len(tok)), tok, prompt="</script>")
    html = explorer.html()
    assert html.count("</script>") == 3 and "<script>alert" not in html
    assert not re.search(r"https?://|src=|href=|@import|url\(", html)
    weights = json.loads(re.search(r'class="tc-weights">(.*?)</script>', html, re.S).group(1))
    assert weights["chars"] == tok.itos and {"<", "/", "&"} <= set(weights["chars"])
    payload = json.loads(re.search(r'class="tc-lm-payload">(.*?)</script>', html, re.S)
                         .group(1))
    assert payload["prompt"] == "</script>"
    assert html.startswith('<div class="tc-explorer') and 'data-kind="lm"' in html


def test_every_text_goes_through_the_catalogs(tokenizers, models, monkeypatch):
    monkeypatch.setattr(lm_module, "_", lambda message: f"⟦{message}⟧")
    monkeypatch.setattr(page_module, "_", lambda message: f"⟦{message}⟧")
    e = widgets.lm_explorer(models["en"], tokenizers["en"])
    assert all(s.startswith("⟦") and s.endswith("⟧") for s in e.strings.values()), e.strings
    assert re.search(r'class="tc-x-mount"><p>⟦', e.html())


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_strings_are_translated(tokenizers, models, lang):
    english = widgets.lm_explorer(models["en"], tokenizers["en"]).strings
    tc.set_language(lang)
    translated = widgets.lm_explorer(models[lang], tokenizers[lang]).strings
    same = {k for k in english if english[k] == translated[k]}
    # symbols and formulas, and "prompt", which the Italian chapter keeps
    assert same <= {"top_k_label", "top_p_label", "top_p_readout", "temperature_readout",
                     "prompt_label"}, same
    assert english_words(english, translated), "no English word to look for"
    for key, text in translated.items():  # the placeholders the page fills survive
        assert set(re.findall(r"\{\w+\}", text)) == set(re.findall(r"\{\w+\}", english[key]))


# --- in Chromium, with the network cut -------------------------------------------------------

@pytest.fixture(scope="module")
def pages(tmp_path_factory, tokenizers, models):
    """One standalone page per language (what Colab, JupyterLab and VS Code get), a page
    with a small max_len, one with a post-norm untied model, and one with several explorers."""
    folder = tmp_path_factory.mktemp("lm")
    explorers = {}
    for lang in LANGS:
        tc.set_language(lang)
        explorers[lang] = widgets.lm_explorer(models[lang], tokenizers[lang], seed=7)
        explorers[lang].save(folder / f"{lang}.html")
    tc.set_language("en")
    tok = tokenizers["en"]
    explorers["short"] = widgets.lm_explorer(spread_model(len(tok), max_len=24, seed=5), tok,
                                             prompt="The attention", temperature=1.0)
    explorers["short"].save(folder / "short.html")
    explorers["post"] = widgets.lm_explorer(
        spread_model(len(tok), seed=6, tie_embeddings=False, norm_first=False), tok,
        weights="float16", top_k=5, top_p=0.8)
    explorers["post"].save(folder / "post.html")
    several = [explorers["en"].html(), widgets.masks_explorer().html(), explorers["en"].html()]
    (folder / "several.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + "".join(several)
        + "</body></html>", encoding="utf-8")
    (folder / "empty.html").write_text("<!DOCTYPE html><html><body></body></html>",
                                       encoding="utf-8")
    far = '<div style="height: 4000px">far below</div>'  # several screens, past the margin
    (folder / "far.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + far
        + explorers["en"].html() + "</body></html>", encoding="utf-8")
    # the built site's form: the weights in a file of their own, beside a page one folder
    # down; and the same page whose file went missing
    for name in ("moved", "lost"):
        page = folder / name / "page.html"
        page.parent.mkdir()
        page.write_text(lean.external_weights((folder / "en.html").read_text(encoding="utf-8"),
                                              page, folder / name), encoding="utf-8")
    for file in (folder / "lost" / "_static" / "lm").glob("*.js"):
        file.unlink()
    with serve(folder) as url:
        yield url, explorers


@pytest.fixture
def open_page(browser, pages):
    url = pages[0]
    opened = []

    def open_(name):
        v = Visit(browser, url, f"{name}.html")
        opened.append(v)
        return v

    yield open_
    for v in opened:
        assert v.blocked == [] and v.errors == [], (v.blocked, v.errors)
        v.close()


def driver(v, index=0):
    return LMDriver(v, v.page.locator(".tc-explorer[data-kind='lm']").nth(index))


@pytest.mark.parametrize("lang", LANGS)
def test_page_agrees_with_pytorch(open_page, pages, lang):
    v = open_page(lang)
    d = driver(v)
    explorer = pages[1][lang]
    assert d.root.get_attribute("lang") == lang
    first = d.check(prompt=lm_module.PROMPTS[lang], temperature=0.8, top_k=None, top_p=1,
                    seed=7, steps=0)
    assert first["cache_positions"] == len(lm_module.PROMPTS[lang])
    assert d.weights == json.loads(json.dumps(explorer.weights))
    for prompt in PROMPTS[lang]:
        d.start(prompt)
        d.step(3)
        s = d.write()
        # the package's Python copy of the page's rule writes the same text
        assert explorer.write(prompt, s["steps"], temperature=s["temperature"],
                              top_k=s["top_k"], top_p=s["top_p"], seed=s["seed"]) == s["text"]
    d.start(PROMPTS[lang][0])
    d.set_range("input.tc-temperature", 1.5)
    d.set_top_k("5")
    d.set_range("input.tc-top-p", 0.9)
    d.check(temperature=1.5, top_k=5, top_p=0.9)
    d.step(4)
    d.set_range("input.tc-temperature", 0.3)
    d.write()
    d.start(PROMPTS[lang][1])
    s = d.write()
    assert explorer.write(PROMPTS[lang][1], s["steps"], temperature=0.3, top_k=5, top_p=0.9,
                          seed=7) == s["text"]
    assert d.checked >= 20
    if lang != "en":  # no English for a French or Italian reader
        tc.set_language("en")
        words = english_words(lm_module._strings(1, "int8"), d.payload["strings"])
        for text in page_texts(d.root):
            found = {w for w in re.findall(r"[^\W\d_]+", text.lower()) if w in words}
            assert not found, (text, found)
        decimal = d.root.locator(".tc-lm-p").first.inner_text()
        assert re.fullmatch(r"\d,\d{3}", decimal), decimal


def test_the_cache_changes_no_character(open_page):
    v = open_page("en")
    d = driver(v)
    d.set_range("input.tc-temperature", 1.0)
    d.start("Each head")
    with_cache = d.write()
    assert with_cache["cache_positions"] == len(with_cache["text"])
    d.cache(False)
    d.start("Each head")
    assert d.state()["cache_positions"] == 0
    assert v.page.locator(".tc-lm-cache-text").inner_text() == d.text(
        "cache_off", positions=len("Each head"))
    without = d.write()
    assert without["text"] == with_cache["text"] and without["cache_positions"] == 0
    assert without["logits"] == with_cache["logits"]  # the same numbers, bit for bit
    assert without["attention"] == with_cache["attention"]
    # switched halfway, both ways: the cache picks up where it was left
    d.cache(True)
    d.start("Each head")
    d.step(3)
    d.cache(False)
    d.step(3)
    d.cache(True)
    s = d.step(3)
    assert with_cache["text"].startswith(s["text"]) and s["cache_positions"] == len(s["text"])


def test_a_seed_writes_the_same_text_again(open_page):
    v = open_page("fr")
    d = driver(v)
    d.set_range("input.tc-temperature", 1.2)
    d.start("Chaque tête")
    first = d.write()
    assert first["steps"] > 0
    d.start("Chaque tête")
    assert d.write()["text"] == first["text"]
    d.set_seed(8)
    other = d.check(seed=8, steps=0)
    other = d.write()
    assert other["text"] != first["text"]
    d.set_seed(7)
    d.check(seed=7, steps=0)
    assert d.write()["text"] == first["text"]
    d.root.locator("button.tc-restart").click()  # start over with the same settings
    d.check(steps=0, seed=7)
    v.page.reload(wait_until="load")  # and after a reload, with the same settings
    d = driver(v)
    d.set_range("input.tc-temperature", 1.2)
    d.start("Chaque tête")
    assert d.write()["text"] == first["text"]


def test_zero_temperature_is_the_argmax_and_top_k_one_is_greedy(open_page):
    v = open_page("it")
    d = driver(v)
    d.root.locator("input.tc-temperature").press("Home")
    d.check(temperature=0)
    assert d.root.locator(".tc-lm-t-readout").inner_text() == d.text("temperature_zero")
    d.start("Ogni testa")
    greedy = d.write()
    assert greedy["text"] == greedy_text(d, "Ogni testa", greedy["steps"])
    # T -> 0: at T = 0.01 the distribution is nearly one-hot and the text the same
    d.root.locator("input.tc-temperature").press("ArrowRight")
    s = d.start("Ogni testa")
    assert s["temperature"] == 0.01
    probs = rule(s["logits"], d.allowed, 0.01, None, 1)
    assert max(probs) > 0.99
    assert d.write()["text"] == greedy["text"]
    # top-k = 1 at the hottest temperature: greedy again, whatever the seed
    d.root.locator("input.tc-temperature").press("End")
    d.set_top_k("1")
    for seed in (7, 123):
        d.set_seed(seed)
        s = d.start("Ogni testa")
        assert s["temperature"] == 2 and s["top_k"] == 1
        assert d.write()["text"] == greedy["text"]
        kept = [b for b in d.root.locator(".tc-lm-bar").evaluate_all(
            "rs => rs.map(r => Number(r.dataset.p))") if b > 0]
        assert kept == [1.0]


def test_settings_at_their_edges(open_page, pages):
    v = open_page("fr")
    d = driver(v)
    count = len(d.allowed)
    # top-k larger than the vocabulary: nothing is cut
    d.set_top_k("1000")
    d.check(top_k=1000)
    assert v.page.locator(".tc-lm-draw").inner_text().startswith(
        d.text("bars_kept", kept=count, count=count))
    # what is not a whole number >= 1 is refused, and changes nothing
    before = d.raw()
    for bad in ("0", "2.5", "-3"):
        d.set_top_k(bad)
        assert d.root.locator("input.tc-top-k").get_attribute("aria-invalid") == "true"
        assert d.raw() == before
    d.set_top_k("")  # empty: no cut
    d.check(top_k=None)
    assert d.root.locator("input.tc-top-k").get_attribute("aria-invalid") is None
    for bad in ("-1", "4294967296", "1.5"):
        d.set_seed(bad)
        assert d.root.locator("input.tc-seed").get_attribute("aria-invalid") == "true"
        assert d.state()["seed"] == 7
    tc.set_language("fr")  # the largest seed, written as a French reader writes it
    assert d.root.locator("input.tc-seed").get_attribute("title") == d.text(
        "seed_invalid", max=tc.format_integer(2**32 - 1))
    assert "\u202f" in tc.format_integer(2**32 - 1)
    # top-p at its smallest keeps the likeliest character only; at 1 it cuts nothing
    d.root.locator("input.tc-top-p").press("Home")
    s = d.check(top_p=0.01)
    assert sum(p > 0 for p in rule(s["logits"], d.allowed, s["temperature"], None, 0.01)) == 1
    d.step(2)
    d.root.locator("input.tc-top-p").press("End")
    d.check(top_p=1)
    # the empty prompt starts from a line break, and says so
    s = d.start("")
    assert s["text"] == "\n" and v.page.locator("[data-note='empty']").count() == 1
    d.step(2)
    # characters the model does not know are read as <unk>, and named
    s = d.start("ß€ et ✓")
    assert ids_of(d.weights, "ß€")[0] == d.weights["unk_id"]
    note = v.page.locator("[data-note='unknown']").inner_text()
    assert all(c in note for c in "ß€✓") and v.page.locator(".tc-lm-unknown").count() == 3
    d.write()
    assert v.page.locator("[data-note='empty']").count() == 0


def test_the_end_of_the_position_table(open_page):
    v = open_page("short")  # max_len = 24
    d = driver(v)
    s = d.write_to_the_end()
    assert len(s["text"]) == 24 and s["steps"] == 24 - len("The attention")
    assert v.page.locator("[data-note='limit']").inner_text() == d.text("limit", max_len=24)
    assert d.root.locator("button.tc-step").is_disabled()
    assert d.root.locator("button.tc-write").is_disabled()
    # a prompt longer than the model can read is cut, and said so
    long = "The attention of every head " * 2
    d.root.locator("input.tc-prompt").evaluate("(e, t) => { e.value = t; }", long)
    d.root.locator("input.tc-prompt").press("Enter")
    s = d.check(prompt=long, steps=0)
    assert s["text"] == long[:24]
    assert v.page.locator("[data-note='prompt_cut']").count() == 1
    d.root.locator("input.tc-prompt").fill("The")
    d.root.locator("button.tc-restart").click()
    s = d.check(prompt="The", steps=0)
    assert v.page.locator("[data-note]").count() == 0 and not d.root.locator(
        "button.tc-step").is_disabled()


def test_post_norm_untied_float16_model(open_page):
    d = driver(open_page("post"))
    d.check(top_k=5, top_p=0.8)
    assert d.weights["tensors"]["head.weight"]["dtype"] == "float16"
    d.start("Each head")
    d.step(3)
    d.write()


def test_every_control_works_from_the_keyboard(open_page):
    v = open_page("en")
    d = driver(v)
    page = v.page
    d.root.locator("input.tc-temperature").focus()
    page.keyboard.press("ArrowLeft")
    d.check(temperature=0.79)
    d.root.locator("input.tc-top-p").focus()
    page.keyboard.press("ArrowLeft")
    d.check(top_p=0.99)
    d.root.locator("input.tc-top-k").focus()
    page.keyboard.press("ArrowUp")
    d.check(top_k=1)
    page.keyboard.press("ArrowUp")
    d.check(top_k=2)
    d.root.locator("button.tc-step").focus()
    page.keyboard.press("Enter")
    d.check(steps=1)
    page.keyboard.press("Space")
    d.check(steps=2)
    d.root.locator("input.tc-seed").focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    d.check(seed=8, steps=0)
    d.root.locator("input.tc-prompt").focus()
    page.keyboard.press("End")
    page.keyboard.type("ll")
    page.keyboard.press("Enter")
    d.check(prompt="The attention well", steps=0)
    d.root.locator("button.tc-write").focus()
    page.keyboard.press("Enter")
    d.idle()
    assert d.check()["steps"] > 0


@pytest.mark.parametrize("how", ["scroll", "start-all"])
def test_an_explorer_far_below_starts_when_near_or_asked(open_page, how):
    """The model runs on its prompt only once the reader comes near it (a phone's first
    paint does not wait for it), or when the PDF builder or an audit sends "tc:start-all"."""
    v = open_page("far")
    root = v.page.locator(".tc-explorer[data-kind='lm']")
    root.wait_for(state="attached")
    assert root.get_attribute("data-tc-waiting") == ""
    assert root.get_attribute("data-tc-mounted") is None
    assert root.get_attribute("data-state") is None
    if how == "scroll":
        root.scroll_into_view_if_needed()
    else:
        v.page.evaluate("document.dispatchEvent(new Event('tc:start-all'))")
    v.page.wait_for_function("e => e.hasAttribute('data-state')", arg=root.element_handle(),
                             timeout=20000)
    d = driver(v)
    assert d.check()["steps"] == 0


def test_weights_in_their_own_file_load_when_the_explorer_starts(open_page, pages):
    """The built site moves the weights out of the page (coursebook_lean.external_weights):
    the page carries an empty script naming their file, which the explorer loads when it
    starts, and it computes what PyTorch computes with them."""
    v = open_page("moved/page")
    root = v.page.locator(".tc-explorer[data-kind='lm']")
    script = root.locator("script.tc-weights")
    assert script.text_content() == ""
    assert re.fullmatch(r"_static/lm/[0-9a-f]{16}\.js", script.get_attribute("data-src"))
    d = driver(v)
    assert d.weights == json.loads(json.dumps(pages[1]["en"].weights))
    d.check(steps=0)
    d.step(2)
    d.write()


def test_weights_that_do_not_load_are_named_not_thrown(browser, pages):
    """A page kept without its folder: the explorer says which file it could not load."""
    v = Visit(browser, pages[0], "lost/page.html")
    root = v.page.locator(".tc-explorer[data-kind='lm']")
    alert = root.locator("[role='alert']")
    alert.wait_for(timeout=20000)
    src = root.locator("script.tc-weights").get_attribute("data-src")
    assert alert.text_content() == (f"The model's weights did not load from {src}: this page "
                                    "needs the folder it came with.")
    assert root.get_attribute("data-state") is None and v.errors == [] and v.blocked == []
    v.close()


def test_several_explorers_on_a_page(open_page, pages):
    v = open_page("several")
    assert v.page.locator(".tc-explorer").count() == 3
    first, second = driver(v, 0), driver(v, 1)
    untouched = first.raw()
    second.start("Each head")
    second.step(2)
    assert first.raw() == untouched
    first.step()
    masks = v.page.locator(".tc-explorer[data-kind='masks']")
    assert masks.get_attribute("data-state")  # the attention explorer runs beside them
    assert v.page.evaluate("[window.TcLm.version, window.TcCommon.version]") == [3, 4]
    assert v.page.locator("[id]").count() == 0


def test_front_ends_that_insert_html_later_still_mount_it(browser, pages):
    """JupyterLab and VS Code insert the output with innerHTML and re-create its scripts,
    sometimes before attaching it; other front ends evaluate the script's text."""
    url, explorers = pages
    v = Visit(browser, url, "empty.html")
    v.page.evaluate("""html => {
        const recreate = host => host.querySelectorAll('script').forEach(old => {
          const s = document.createElement('script');
          if (old.type) s.type = old.type;
          if (old.className) s.className = old.className;
          s.textContent = old.textContent;
          old.parentNode.replaceChild(s, old);
        });
        const a = document.createElement('div');
        document.body.appendChild(a); a.innerHTML = html; recreate(a);
        const b = document.createElement('div');
        b.innerHTML = html; recreate(b); document.body.appendChild(b);
        const c = document.createElement('div');
        c.innerHTML = html; document.body.appendChild(c);
        c.querySelectorAll('script:not([type])').forEach(s => (0, eval)(s.textContent));
    }""", explorers["en"].html())
    for i in range(3):
        d = driver(v, i)
        d.step()
    assert v.errors == [] and v.blocked == []
    v.close()


def test_every_text_on_the_page_comes_from_the_catalogs(browser, tmp_path, tokenizers, models,
                                                         monkeypatch):
    """With every catalog message wrapped in ⟦ ⟧, the page shows nothing else but
    characters, numbers and symbols."""
    monkeypatch.setattr(lm_module, "_", lambda message: f"⟦{message}⟧")
    monkeypatch.setattr(page_module, "_", lambda message: f"⟦{message}⟧")
    tok = tokenizers["en"]
    explorer = widgets.lm_explorer(spread_model(len(tok), max_len=20), tok, prompt="ß")
    explorer.save(tmp_path / "page.html")
    with serve(tmp_path) as url:
        v = Visit(browser, url, "page.html")
        d = LMDriver(v, v.page.locator(".tc-explorer"))
        d.write_to_the_end()  # every note shows
        d.root.locator("input.tc-temperature").press("Home")
        texts = page_texts(d.root)
        left = []
        for text in texts:
            rest = text
            while re.search(r"⟦[^⟦⟧]*⟧", rest):
                rest = re.sub(r"⟦[^⟦⟧]*⟧", "", rest)
            rest = re.sub(r"[\d.,\s★·…“”]|<unk>|ß", "", rest)
            if rest:
                left.append(text)
        assert left == [], left
        assert v.page.locator("[data-note]").count() == 2  # unknown character, the limit
        assert v.errors == [] and v.blocked == []
        v.close()


# --- a briefly trained model: the page writes what generate() writes ----------------------

def test_trained_model_writes_what_generate_writes(browser, tmp_path, deterministic):
    tok = tokenizer_of("en")
    ids = torch.tensor(tok.encode(data.course_corpus(("en",))[:30_000]))
    tc.seed_everything(0)
    model = tc.LanguageModel(len(tok), **CHAPTER)
    training.fit(model, training.lm_batches(ids, 48, 16, 120, seed=0), training.lm_loss,
                 lr=5e-3, schedule=training.warmup_cosine(20, 120), desc="lm explorer test")
    model.eval()
    explorer = widgets.lm_explorer(model, tok, prompt="The attention ", temperature=0.0)
    explorer.save(tmp_path / "trained.html")
    prompt = torch.tensor([tok.encode("The attention ")])
    greedy = explorer.page_model.generate(prompt, 40, temperature=0.0)
    with serve(tmp_path) as url:
        v = Visit(browser, url, "trained.html")
        d = LMDriver(v, v.page.locator(".tc-explorer"))
        for _ in range(4):
            s = d.write()
            if s["steps"] >= 40:
                break
        assert s["text"][:54] == tok.decode(greedy[0].tolist())
        assert explorer.write(steps=s["steps"]) == s["text"]
        assert v.errors == [] and v.blocked == []
        v.close()
    with torch.no_grad():  # the 8-bit page model stays close to the trained one
        gap = (explorer.page_model(prompt) - model(prompt)).abs().max().item()
    assert gap < 0.1, gap
