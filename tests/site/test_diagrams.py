"""tc.diagram draws the course's modules from their own tree: the numbers of its data-model
equal the module's, the blocks follow the module's real order, every block links to the
section that teaches it (an anchor checked against the headings of each language), the labels
are in the reader's language, and the output is self-contained and small."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch
from torch import nn

import transformer_course as tc
from diagramming import LIMIT, english_in, english_words, fragments, models, visible
from transformer_course import diagrams
from transformer_course.diagrams import SECTIONS, Diagram, section_href

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "fr", "it")
ATTENTION = {"self_attention", "masked_self_attention", "cross_attention"}
NORMS = {"add_norm", "norm"}
TABLES = {"embedding", "positions", "segments"}
KINDS = set(diagrams.GROUPS)


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    tc.set_language("en")


def on_meta(build):
    def make():
        with torch.device("meta"):
            return build()
    return make


CASES = {
    "attention": lambda: tc.MultiHeadAttention(12, 3),
    "attention-kdim-vdim": lambda: tc.MultiHeadAttention(32, 4, kdim=48, vdim=40),
    "attention-no-bias": lambda: tc.MultiHeadAttention(16, 2, bias=False, dropout=0.1),
    "feed-forward": lambda: tc.FeedForward(32, 128),
    "feed-forward-gelu-no-bias": lambda: tc.FeedForward(16, 40, activation="gelu", bias=False,
                                                        dropout=0.2),
    "encoder-layer-post": lambda: tc.EncoderLayer(32, 4, 128, dropout=0.0),
    "encoder-layer-pre": lambda: tc.EncoderLayer(32, 4, 128, norm_first=True),
    "encoder-layer-gelu-no-bias": lambda: tc.EncoderLayer(16, 2, 32, activation="gelu",
                                                          bias=False, eps=1e-6),
    "decoder-layer-post": lambda: tc.DecoderLayer(32, 4, 128, dropout=0.0),
    "decoder-layer-pre": lambda: tc.DecoderLayer(16, 2, 32, norm_first=True),
    "encoder-post": lambda: tc.Encoder(16, 2, 32, 3),
    "encoder-pre": lambda: tc.Encoder(16, 2, 32, 2, norm_first=True),
    "encoder-pre-no-final-norm": lambda: tc.Encoder(16, 2, 32, 2, norm_first=True,
                                                    final_norm=False),
    "encoder-post-final-norm": lambda: tc.Encoder(16, 2, 32, 2, final_norm=True),
    "decoder-post": lambda: tc.Decoder(16, 2, 32, 2),
    "decoder-pre": lambda: tc.Decoder(16, 4, 32, 3, norm_first=True),
    "transformer": lambda: tc.Transformer(20, 30, d_model=16, num_heads=2, num_layers=2,
                                          d_ff=32),
    "transformer-tied-pre-gelu": lambda: tc.Transformer(25, 25, d_model=16, num_heads=2,
                                                        num_layers=1, d_ff=32,
                                                        tie_embeddings=True, norm_first=True,
                                                        activation="gelu", max_len=64,
                                                        pad_id=3),
    "classifier-cls": lambda: tc.TransformerClassifier(50, 3, d_model=16, num_heads=2,
                                                       num_layers=1, d_ff=32),
    "classifier-max-sinusoidal-pre": lambda: tc.TransformerClassifier(
        50, 1, d_model=16, num_heads=2, num_layers=2, d_ff=32, pooling="max",
        positional="sinusoidal", norm_first=True, max_len=40),
    "classifier-mean": lambda: tc.TransformerClassifier(50, 2, d_model=16, num_heads=4,
                                                        num_layers=1, d_ff=32, pooling="mean"),
    "lm-tied": lambda: tc.LanguageModel(40, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                                        max_len=64),
    "lm-untied-post": lambda: tc.LanguageModel(40, d_model=16, num_heads=2, num_layers=1,
                                               d_ff=32, max_len=64, tie_embeddings=False,
                                               norm_first=False),
    "bert": lambda: tc.BertEncoder(100, 16, 2, 2, 32, max_len=20, type_vocab_size=3, pad_id=1),
    "bert-no-pooler": lambda: tc.BertEncoder(100, 16, 2, 1, 32, max_len=20, pooler=False),
    "minilm-on-meta": on_meta(lambda: tc.BertEncoder(30522, 384, 12, 6, 1536)),
    "paper-base-on-meta": on_meta(lambda: tc.Transformer(37000, 37000, tie_embeddings=True)),
}


def unique_numel(modules, skip=frozenset()):
    seen, total = set(skip), 0
    for m in modules:
        for p in m.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                total += p.numel()
    return total, seen


def of_type(module, cls, *, root=True):
    return [m for m in module.modules() if isinstance(m, cls) and (root or m is not module)]


@pytest.mark.parametrize("case", CASES)
def test_data_model_numbers_equal_the_module(case):
    module = CASES[case]()
    d = tc.diagram(module)
    [model] = models(d.html())
    assert model == json.loads(json.dumps(d.model))
    assert model["module"] == type(module).__name__
    total = sum(p.numel() for p in module.parameters())
    assert model["parameters"] == total
    blocks = model["blocks"]
    assert sum(b["parameters"] for b in blocks) == total
    # getattr(tc, module)(**config) builds a module with the same parameters
    with torch.device("meta"):
        rebuilt = getattr(tc, model["module"])(**model["config"])
    assert [(n, p.shape) for n, p in rebuilt.named_parameters()] == [
        (n, p.shape) for n, p in module.named_parameters()]
    for b in blocks:
        assert set(b) >= {"kind", "class", "parameters", "input", "output", "href"}
        assert b["kind"] in KINDS and b["parameters"] >= 0
        assert all(isinstance(s, list) and s and all(isinstance(x, (int, str)) for x in s)
                   for s in b["input"] + b["output"]), b
        owner, name = b["class"].rsplit(".", 1)
        assert hasattr(tc if owner == "transformer_course" else nn, name), b["class"]
    # each group of blocks holds exactly the parameters of the modules that implement it
    by_kind = lambda kinds: sum(b["parameters"] for b in blocks if b["kind"] in kinds)  # noqa: E731
    if isinstance(module, tc.MultiHeadAttention):
        assert by_kind({"projection"}) == unique_numel(of_type(module, nn.Linear))[0]
        return
    if isinstance(module, tc.FeedForward):
        assert by_kind({"linear"}) == unique_numel(of_type(module, nn.Linear))[0]
        return
    assert by_kind(ATTENTION) == unique_numel(of_type(module, tc.MultiHeadAttention))[0]
    assert by_kind({"feed_forward"}) == unique_numel(of_type(module, tc.FeedForward))[0]
    assert by_kind(NORMS) == unique_numel(of_type(module, nn.LayerNorm))[0]
    tables, seen = unique_numel(of_type(module, nn.Embedding))
    assert by_kind(TABLES) == tables
    inner = {id(p) for m in of_type(module, tc.MultiHeadAttention) + of_type(module, tc.FeedForward)
             for p in m.parameters()}
    assert by_kind({"head", "pooler"}) == unique_numel(of_type(module, nn.Linear), seen | inner)[0]


def kinds(module):
    return [b["kind"] for b in tc.diagram(module).model["blocks"]]


def test_blocks_follow_the_real_order_post_norm_or_pre_norm():
    post = ["self_attention", "add_norm", "feed_forward", "add_norm"]
    pre = ["norm", "self_attention", "add", "norm", "feed_forward", "add"]
    assert kinds(tc.EncoderLayer(16, 2, 32)) == post
    assert kinds(tc.EncoderLayer(16, 2, 32, norm_first=True)) == pre
    assert kinds(tc.DecoderLayer(16, 2, 32)) == [
        "masked_self_attention", "add_norm", "cross_attention", "add_norm", "feed_forward",
        "add_norm"]
    assert kinds(tc.DecoderLayer(16, 2, 32, norm_first=True)) == [
        "norm", "masked_self_attention", "add", "norm", "cross_attention", "add", "norm",
        "feed_forward", "add"]
    assert kinds(tc.Encoder(16, 2, 32, 2, norm_first=True)) == [*pre, "norm"]
    assert kinds(tc.Encoder(16, 2, 32, 2)) == post
    masked = ["norm", "masked_self_attention", "add", "norm", "feed_forward", "add"]
    assert kinds(tc.LanguageModel(30, d_model=16, num_heads=2, num_layers=2, d_ff=32)) == [
        "embedding", "positions", *masked, "norm", "head"]
    assert kinds(tc.TransformerClassifier(30, 2, d_model=16, num_heads=2, d_ff=32)) == [
        "embedding", "positions", *post, "pooling", "head"]
    assert kinds(tc.BertEncoder(30, 16, 2, 2, 32)) == [
        "embedding", "positions", "segments", "norm", *post, "pooler"]
    assert kinds(tc.Transformer(20, 20, d_model=16, num_heads=2, num_layers=2, d_ff=32)) == [
        "embedding", "positions", *post, "embedding", "positions", "masked_self_attention",
        "add_norm", "cross_attention", "add_norm", "feed_forward", "add_norm", "head"]
    assert kinds(tc.MultiHeadAttention(16, 2)) == [
        "projection", "projection", "projection", "split_heads", "attention", "merge_heads",
        "projection"]
    assert kinds(tc.FeedForward(16, 32)) == ["linear", "activation", "linear"]
    stack = tc.diagram(tc.Decoder(16, 2, 32, 3, norm_first=True)).model["blocks"]
    assert [b.get("repeat", 1) for b in stack] == [3] * 9 + [1]  # the final norm is once


def test_shared_weights_are_counted_once_and_named():
    tied = tc.diagram(tc.Transformer(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                                     tie_embeddings=True)).model["blocks"]
    source = next(i for i, b in enumerate(tied) if b["kind"] == "embedding")
    target = next(i for i, b in enumerate(tied) if b["kind"] == "embedding" and i != source)
    head = tied[-1]
    assert tied[source]["parameters"] == 20 * 16
    assert tied[target]["parameters"] == 0 and tied[target]["shares"] == source
    assert head["kind"] == "head" and head["parameters"] == 0 and head["shares"] == source
    untied = tc.diagram(tc.Transformer(20, 30, d_model=16, num_heads=2, num_layers=1,
                                       d_ff=32)).model["blocks"]
    assert untied[-1]["parameters"] == 30 * 16 + 30 and "shares" not in untied[-1]
    lm = tc.diagram(tc.LanguageModel(40, d_model=16, num_heads=2, num_layers=1, d_ff=32))
    assert lm.model["blocks"][-1]["parameters"] == 0 and lm.model["blocks"][-1]["shares"] == 0
    assert "“Token embedding”" in lm.html()  # the details name the block it shares with
    untied_lm = tc.LanguageModel(40, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                                 tie_embeddings=False)
    assert tc.diagram(untied_lm).model["blocks"][-1]["parameters"] == 40 * 16


def test_shapes_come_from_the_sizes_or_an_example():
    model = tc.Transformer(20, 30, d_model=16, num_heads=2, num_layers=2, d_ff=32)
    blocks = tc.diagram(model).model["blocks"]
    assert blocks[0]["input"] == [["B", "L_s"]] and blocks[0]["output"] == [["B", "L_s", 16]]
    cross = next(b for b in blocks if b["kind"] == "cross_attention")
    assert cross["input"] == [["B", "L_t", 16], ["B", "L_s", 16]]
    assert blocks[-1]["output"] == [["B", "L_t", 30]]
    heads = tc.diagram(tc.MultiHeadAttention(32, 4, kdim=48, vdim=40)).model["blocks"]
    assert [b["input"] for b in heads[:3]] == [[["B", "L_q", 32]], [["B", "L_k", 48]],
                                               [["B", "L_k", 40]]]
    assert heads[4]["output"] == [["B", 4, "L_q", 8], ["B", 4, "L_q", "L_k"]]
    ff = tc.diagram(tc.FeedForward(16, 40)).model["blocks"]
    assert ff[0]["output"] == [["B", "L", 40]] and ff[2]["output"] == [["B", "L", 16]]


EXAMPLES = {
    "transformer": (lambda: tc.Transformer(20, 30, d_model=16, num_heads=2, num_layers=2,
                                           d_ff=32),
                    lambda: (torch.tensor([[5, 6, 7, 0]]), torch.tensor([[1, 2, 3]]))),
    "lm": (lambda: tc.LanguageModel(40, d_model=16, num_heads=2, num_layers=2, d_ff=32),
           lambda: torch.randint(0, 40, (2, 7))),
    "bert": (lambda: tc.BertEncoder(100, 16, 2, 2, 32, max_len=20),
             lambda: torch.randint(0, 100, (3, 5))),
    "classifier": (lambda: tc.TransformerClassifier(50, 3, d_model=16, num_heads=2,
                                                    num_layers=2, d_ff=32),
                   lambda: torch.randint(1, 50, (2, 6))),
    "decoder-layer": (lambda: tc.DecoderLayer(16, 2, 32, norm_first=True),
                      lambda: (torch.randn(2, 4, 16), torch.randn(2, 9, 16))),
    "attention": (lambda: tc.MultiHeadAttention(16, 4),
                  lambda: (torch.randn(2, 3, 16), torch.randn(2, 5, 16), torch.randn(2, 5, 16))),
}


@pytest.mark.parametrize("case", EXAMPLES)
def test_an_example_gives_every_shape_as_the_module_computes_it(case):
    build, example = EXAMPLES[case]
    module, inputs = build(), example()
    module.train()
    state = torch.get_rng_state()
    d = tc.diagram(module, example=inputs)
    assert torch.equal(torch.get_rng_state(), state) and module.training
    blocks = d.model["blocks"]
    assert all(isinstance(x, int) for b in blocks for s in b["input"] + b["output"] for x in s)
    # the first call of each kind of sub-module, recorded by hooks, against the first block
    seen = {}

    def record(name):
        def hook(module, args, out):
            seen.setdefault(name, tuple((out[0] if isinstance(out, tuple) else out).shape))
        return hook

    hooks = [m.register_forward_hook(record(name))
             for name, cls in (("attention", tc.MultiHeadAttention), ("ff", tc.FeedForward),
                          ("norm", nn.LayerNorm), ("embedding", nn.Embedding),
                          ("linear", nn.Linear))
        for m in module.modules() if isinstance(m, cls)]
    module.eval()
    with torch.no_grad():
        out = module(*inputs) if isinstance(inputs, tuple) else module(inputs)
    for h in hooks:
        h.remove()
    first = {}
    for b in blocks:
        first.setdefault(b["kind"], tuple(b["output"][0]))
    if "attention" in seen and case != "attention":
        assert seen["attention"] == next(first[k] for k in first if k in ATTENTION)
    if "ff" in seen:
        assert seen["ff"] == first["feed_forward"]
    if "embedding" in seen:
        assert seen["embedding"] == first["embedding"]
    if case == "attention":
        assert seen["linear"] == first["projection"]
    if case == "bert":
        out = out.pooler_output
    elif isinstance(out, tuple):
        out = out[0]
    assert tuple(out.shape) == tuple(blocks[-1]["output"][0])


def test_bad_input_is_a_clear_error():
    for bad in (nn.Linear(4, 4), nn.TransformerEncoderLayer(8, 2, batch_first=True)):
        with pytest.raises(TypeError, match=r"draws the course's own modules .*tc\.from_torch"):
            tc.diagram(bad)
    for bad in ("EncoderLayer", None, 3):
        with pytest.raises(TypeError, match="module must be a torch.nn.Module of the course"):
            tc.diagram(bad)
    lm = tc.LanguageModel(30, d_model=16, num_heads=2, num_layers=1, d_ff=32)
    lm.head = nn.Linear(16, 30)  # a bias the class never builds
    with pytest.raises(ValueError, match="has parameters that LanguageModel"):
        tc.diagram(lm)
    layer = tc.EncoderLayer(16, 2, 32)
    with pytest.raises(ValueError, match="must hold 1 tensor"):
        tc.diagram(layer, example=(torch.randn(1, 3, 16), torch.randn(1, 3, 16)))
    with pytest.raises(ValueError, match=r"\(B, L, d\) tensors"):
        tc.diagram(layer, example=torch.randn(3, 16))
    with pytest.raises(ValueError, match=r"\(B, L, 16\)"):  # the layer's own check
        tc.diagram(layer, example=torch.randn(1, 3, 12))
    with pytest.raises(TypeError, match="example must be a tensor"):
        tc.diagram(layer, example=[[1.0, 2.0]])
    with pytest.raises(ValueError, match=r"\(B, L\) token ids"):
        tc.diagram(tc.LanguageModel(30, d_model=16, num_heads=2, num_layers=1, d_ff=32),
                   example=torch.zeros(1, 2, 3, dtype=torch.long))


@pytest.mark.parametrize("lang", LANGS)
def test_every_block_links_to_the_section_that_teaches_it(lang, monkeypatch):
    tc.set_language(lang)
    for case in ("transformer-tied-pre-gelu", "attention-kdim-vdim", "bert", "lm-tied",
                 "classifier-max-sinusoidal-pre", "feed-forward", "decoder-pre"):
        module = CASES[case]()
        monkeypatch.delenv("TRANSFORMER_COURSE_STATIC", raising=False)
        outside = tc.diagram(module)
        monkeypatch.setenv("TRANSFORMER_COURSE_STATIC", "1")
        book = tc.diagram(module)
        for d in (outside, book):
            for b in d.model["blocks"]:
                section = SECTIONS[b["section"]]
                assert b["href"] == f"{section['page']}.html#{section[lang]}"
        # in the book every block is a link to its section, elsewhere a focusable element
        links = re.findall(r'<a class="tc-d-block[^"]*" data-i="(\d+)"[^>]*href="([^"]*)"',
                           book.html())
        assert [(int(i), h) for i, h in links] == [
            (i, b["href"]) for i, b in enumerate(book.model["blocks"])]
        assert '<a class="tc-d-block' not in outside.html()
        assert outside.html().count('tabindex="0"') == len(outside.model["blocks"])
        for b in book.model["blocks"]:  # and the details say which section, in words
            assert f">{b['section']}</a>" in book.html()
            assert f" {b['section']} " in outside.html() or f" {b['section']}<" in outside.html()


def heading_ids(lang):
    """page -> {id: heading text} for the sections of every chapter, as docutils (hence the
    book) derives the ids from the headings that MyST parses."""
    from docutils import nodes
    from docutils.core import publish_doctree
    from myst_parser.parsers.docutils_ import Parser

    out = {}
    for path in sorted((ROOT / "book" / lang).glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        markdown = "\n\n".join("".join(c["source"]) for c in cells
                               if c["cell_type"] == "markdown")
        headings = [line for line in markdown.splitlines() if re.match(r"#{1,3} ", line)]
        doc = publish_doctree("\n\n".join(headings), parser=Parser(), settings_overrides={
            "myst_enable_extensions": ["dollarmath", "colon_fence", "substitution", "tasklist"],
            "report_level": 4})
        out[path.stem] = {i: s[0].astext() for s in doc.findall(nodes.section) for i in s["ids"]}
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_section_anchors_match_the_headings_of_each_language(lang):
    ids = heading_ids(lang)
    for number, entry in SECTIONS.items():
        page = ids[entry["page"]]
        assert entry[lang] in page, (
            f"{lang}/{entry['page']}: no heading has the id {entry[lang]!r} (section {number}); "
            f"its sections: {sorted(page)}")
        assert page[entry[lang]].startswith(f"{number} "), (number, page[entry[lang]])


@pytest.mark.parametrize("lang", ["fr", "it"])
def test_labels_and_numbers_are_in_the_readers_language(lang):
    words = english_words(lang)
    assert {"hover", "embedding", "parameters", "section"} & words  # the check can fail
    tc.set_language(lang)
    for case in CASES:
        d = tc.diagram(CASES[case]())
        text = visible(d.html())
        assert english_in(text, words) == [], (case, english_in(text, words), text[:300])
        for b in d.model["blocks"]:
            assert english_in(b["label"], words) == [], b["label"]
    big = tc.diagram(CASES["paper-base-on-meta"]())
    grouped = {"fr": "63\u202f082\u202f496", "it": "63.082.496"}[lang]
    assert grouped in big.title() and grouped in visible(big.html())
    if lang == "fr":  # French spacing before : ; ! ? and inside « »
        text = visible(big.html()) + visible(tc.diagram(CASES["lm-tied"]()).html())
        bad = [text[max(0, m.start() - 20):m.end() + 5]
               for m in re.finditer(r"\S[;!?:](?=\s)", text)]
        assert bad == [], f"no no-break space before the mark: {bad[:5]}"
        assert re.search(r"«(?!\u00a0)|(?<!\u00a0)»", text) is None


def test_saved_files_are_self_contained(tmp_path):
    d = tc.diagram(CASES["transformer-tied-pre-gelu"]())
    page = d.save(tmp_path / "diagram.html").read_text(encoding="utf-8")
    svg = d.save(tmp_path / "diagram.svg").read_text(encoding="utf-8")
    for text in (page, svg):
        assert re.search(r"\b(src|href)\s*=\s*[\"']?\s*(https?:)?//", text) is None
        assert "<link" not in text and "@import" not in text and "url(" not in text
        assert "<iframe" not in text and "<img" not in text
    assert re.findall(r"https?://[^\s\"'<>]+", page) == []
    assert re.findall(r"https?://[^\s\"'<>]+", svg) == ["http://www.w3.org/2000/svg"]  # xmlns
    ET.fromstring(svg)  # a well-formed SVG document, with its style and no script
    assert "<script" not in svg and "<style>" in svg
    drawing = re.search(r"<svg\b.*?</svg>", page, re.S).group(0)
    ET.fromstring(drawing.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1))
    assert page.startswith("<!DOCTYPE html>") and 'lang="en"' in page
    assert len(fragments(page)) == 1


def chapter_modules(lang):
    """The diagrams of the book's places, built with the chapters' own sizes."""
    from transformer_course import data

    examples = data.sentiment_examples(6000, seed=0)
    words = data.WordTokenizer.from_texts(text for text, _ in examples)
    src_tok, tgt_tok = data.date_tokenizers()
    chars = data.CharTokenizer.from_texts([data.course_corpus((lang,))])
    with torch.device("meta"):
        return {
            "home": tc.Transformer(37000, 37000, tie_embeddings=True),
            "04-mha": tc.MultiHeadAttention(12, 3),
            "07-post": tc.EncoderLayer(32, 4, 128, dropout=0.0),
            "07-pre": tc.EncoderLayer(32, 4, 128, dropout=0.0, norm_first=True),
            "07-classifier": tc.TransformerClassifier(len(words), 2, d_model=64, num_heads=4,
                                                      num_layers=2, d_ff=128, dropout=0.1),
            "08-decoder-layer": tc.DecoderLayer(32, 4, 128, dropout=0.0),
            "08-dates": tc.Transformer(len(src_tok), len(tgt_tok), d_model=64, num_heads=4,
                                       num_layers=2, d_ff=256, dropout=0.0),
            "09-minilm": tc.BertEncoder(30522, 384, 12, 6, 1536),
            "10-lm": tc.LanguageModel(len(chars), d_model=64, num_heads=4, num_layers=2,
                                      d_ff=256, dropout=0.0, max_len=320),
        }


@pytest.mark.parametrize("lang", LANGS)
def test_the_book_diagrams_are_small(lang, monkeypatch):
    monkeypatch.setenv("TRANSFORMER_COURSE_STATIC", "1")  # with their links, as in the book
    tc.set_language(lang)
    sizes = {name: len(tc.diagram(m).html().encode("utf-8"))
             for name, m in chapter_modules(lang).items()}
    print(lang, sizes)
    assert max(sizes.values()) < LIMIT, sizes


def test_side_by_side(tmp_path):
    post, pre = tc.diagram(CASES["encoder-layer-post"]()), tc.diagram(CASES["encoder-layer-pre"]())
    row = post.beside(pre)
    assert [m["config"]["norm_first"] for m in models(row.html())] == [False, True]
    assert len(fragments(row.save(tmp_path / "row.html").read_text(encoding="utf-8"))) == 2
    with pytest.raises(TypeError, match="DiagramRow takes Diagram objects"):
        post.beside("pre-norm")


def test_the_top_level_import_does_not_load_the_diagrams():
    code = ("import sys, transformer_course as tc; a = 'transformer_course.reader.diagrams' in "
            "sys.modules; tc.diagram(tc.FeedForward(4, 8)); "
            "print(a, 'transformer_course.reader.diagrams' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
    assert isinstance(tc.diagram(tc.FeedForward(4, 8)), Diagram)
    assert section_href("7.6", "it") == "07_encoder.html#post-norm-o-pre-norm"


def test_the_home_page_directive_draws_the_module_in_the_page_language(tmp_path):
    """tools/sphinxext/coursebook_diagram.py in a one-page Sphinx project, in French."""
    (tmp_path / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tools' / 'sphinxext')!r})\n"
        "extensions = ['myst_parser', 'coursebook_diagram']\n"
        "language = 'fr'\n", encoding="utf-8")
    (tmp_path / "index.md").write_text(
        "# Accueil\n\n```{course-diagram} Transformer\n"
        ':config: {"src_vocab_size": 37000, "tgt_vocab_size": 37000, "tie_embeddings": true}\n'
        "```\n", encoding="utf-8")
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRANSFORMER_COURSE_STATIC"}
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html",
                           str(tmp_path), str(tmp_path / "out")], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    [model] = models(page)
    assert model["module"] == "Transformer" and model["parameters"] == 63_082_496
    assert model["config"]["d_model"] == 512 and model["config"]["tie_embeddings"] is True
    assert 'href="06_positional_encoding.html#l-encodage-sinusoidal"' in page  # links, in French
    assert "Plongement de la source" in page and "63\u202f082\u202f496" in page
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "conf.py").write_text((tmp_path / "conf.py").read_text(), encoding="utf-8")
    (bad / "index.md").write_text("# x\n\n```{course-diagram} Linear\n```\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(bad),
                           str(bad / "out")], capture_output=True, text=True, env=env)
    assert done.returncode != 0 and "'Linear' is not one of" in done.stderr
