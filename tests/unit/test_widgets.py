"""The explorers, Python side: the tensors they hand to the page are the package's, any β is
finite, bad input is named, the HTML is self-contained and small, every text goes through the
catalogs, and the kernel-only text box works (tests/site/test_explorers_browser.py drives the
page)."""

import json
import math
import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser

import pytest
import torch

import transformer_course as tc
from transformer_course import i18n, widgets
from transformer_course.utils import STATIC_ENV

LIMIT = 150_000  # bytes of HTML per explorer


@pytest.fixture
def english():
    tc.set_language("en")
    yield
    tc.set_language("en")


@pytest.fixture
def marked(monkeypatch):
    """Every catalog lookup of the explorers wraps its message in ⟦ ⟧."""
    from transformer_course.reader import page as page_module

    monkeypatch.setattr(widgets, "_", lambda message: f"⟦{message}⟧")
    monkeypatch.setattr(page_module, "_", lambda message: f"⟦{message}⟧")  # the shared note
    monkeypatch.setattr(widgets, "ngettext",
                        lambda one, many, n: f"⟦{one if n == 1 else many}⟧")


def rule(scores, mask, beta, hard):
    """The explorers' rule, in float64: softmax(β·scores) over the allowed keys, or the
    one-hot argmax (first index on ties); a row without any allowed key is all zeros."""
    scores = torch.as_tensor(scores, dtype=torch.float64)
    mask = torch.as_tensor(mask, dtype=torch.bool)
    empty = ~mask.any(-1, keepdim=True)
    if hard:
        best = scores.masked_fill(~mask, float("-inf")).argmax(-1)
        weights = torch.nn.functional.one_hot(best, scores.shape[-1]).to(torch.float64)
    else:
        weights = torch.softmax((beta * scores).masked_fill(~mask, float("-inf")), -1)
    return weights.masked_fill(empty, 0.0)


# --- the tensors are the package's -----------------------------------------------------------

def test_beta_explorer_scores_are_the_dot_products(english):
    e = widgets.beta_explorer()
    x = e.x
    assert e.kind == "beta" and e.tokens == ["x₁", "x₂", "x₃", "x₄", "x₅"] and x.shape == (5, 2)
    torch.testing.assert_close(e.scores[1], (x @ x.T)[None])
    assert e.modules == {} and e.mask.all() and e.beta == 1.0 and not e.hard
    for beta in (0.0, 0.5, 4.0):
        got = e.compute(beta=beta)
        out, weights = tc.attention(x, x, x, beta=beta)
        torch.testing.assert_close(got["weights"], weights)
        torch.testing.assert_close(got["outputs"], out)
        torch.testing.assert_close(got["weights"].double(), rule(e.scores[1][0], e.mask, beta,
                                                                 False), atol=1e-6, rtol=0)
    hard = e.compute(hard=True)["weights"]
    torch.testing.assert_close(hard.double(), rule(e.scores[1][0], e.mask, 1.0, True))


def test_heads_explorer_scores_are_the_modules_projections(english):
    e = widgets.heads_explorer()
    assert e.tokens == "The dog ate the food because it was hungry".split()
    assert list(e.scores) == [1, 2, 4, 8] and e.num_heads == 4 and e.head == 0
    assert e.beta_auto and e.beta == pytest.approx(1 / math.sqrt(8))
    x = e.x[None]  # (1, L, d_model)
    for h, module in e.modules.items():
        assert isinstance(module, tc.MultiHeadAttention) and module.num_heads == h
        q = tc.split_heads(module.W_q(x), h)[0]
        k = tc.split_heads(module.W_k(x), h)[0]
        v = tc.split_heads(module.W_v(x), h)[0]
        torch.testing.assert_close(e.scores[h], q @ k.transpose(-2, -1))
        torch.testing.assert_close(e.values[h], v)
        assert e.scores[h].shape == (h, 9, 9) and e.values[h].shape == (h, 9, 32 // h)
        # the module's own forward pass (β = 1/sqrt(d_head)) gives the rule's weights
        _, weights = module(x, x, x)
        for j in range(h):
            torch.testing.assert_close(weights[0, j].double(), rule(
                e.scores[h][j], torch.ones(9, 9, dtype=torch.bool), 1 / math.sqrt(32 // h),
                False), atol=1e-5, rtol=0)
            torch.testing.assert_close(e.compute(num_heads=h, head=j)["weights"], weights[0, j])
    # the heads differ from one another
    w = torch.stack([e.compute(num_heads=8, head=j)["weights"] for j in range(8)])
    assert (w[1:] - w[:1]).abs().amax() > 0.2


def test_explorers_leave_the_global_random_state_alone(english):
    state = torch.get_rng_state()
    widgets.heads_explorer()
    widgets.masks_explorer()
    assert torch.equal(torch.get_rng_state(), state)
    a, b = widgets.heads_explorer(seed=3), widgets.heads_explorer(seed=3)
    torch.testing.assert_close(a.scores[8], b.scores[8])
    assert not torch.allclose(widgets.heads_explorer(seed=4).scores[8], a.scores[8])


def test_own_vectors_and_tokens():
    x = torch.randn(4, 12)
    e = widgets.heads_explorer(x, ["a", "b", "c", "d"], head_counts=(1, 3), num_heads=3,
                               head=2, beta=2.0, hard=True, device="cpu")
    assert e.tokens == ["a", "b", "c", "d"] and torch.equal(e.x, x)
    assert e.num_heads == 3 and e.head == 2 and e.beta == 2.0 and not e.beta_auto and e.hard
    assert widgets.heads_explorer(torch.randn(4, 16)).tokens == ["t1", "t2", "t3", "t4"]
    # words are encoded: the same word gets the same vector, positions make them differ
    e = widgets.heads_explorer(sentence="le chat et le chien")
    assert e.tokens == ["le", "chat", "et", "le", "chien"]
    vectors = widgets.embed_tokens(["le", "le"], 32) - tc.sinusoidal_encoding(2, 32)
    torch.testing.assert_close(vectors[0], vectors[1])
    assert widgets.tokenize("Le chien a mangé parce qu’il avait faim.") == [
        "Le", "chien", "a", "mangé", "parce", "qu’il", "avait", "faim", "."]


def test_masks_explorer_presets_and_clicked_keys(english):
    e = widgets.masks_explorer()
    assert e.tokens == ["The", "cat", "sat", "on", "the", "mat"]
    assert e.beta == pytest.approx(0.25) and e.beta_auto and list(e.scores) == [1]
    module = e.modules[1]
    x = e.x[None]
    torch.testing.assert_close(e.scores[1], module.W_q(x) @ module.W_k(x).transpose(-2, -1))
    causal = e.mask_for("causal")
    assert torch.equal(causal, tc.causal_mask(6))
    padded = e.mask_for("padding", 2)
    assert padded[:, :4].all() and not padded[:, 4:].any()
    both = e.mask_for("causal + padding", 2, masked_keys=[0])
    assert torch.equal(both, tc.causal_mask(6) & padded & (torch.arange(6) != 0))
    everything = e.mask_for("padding", 6)
    got = e.compute(mask=everything)
    assert torch.all(got["weights"] == 0) and torch.all(got["outputs"] == 0)
    row0 = e.compute(mask=e.mask_for("causal", masked_keys=[0]), hard=True)["weights"][0]
    assert torch.all(row0 == 0)  # query 0 may only see key 0, which is masked
    start = widgets.masks_explorer(mask="causal + padding", pads=2, masked_keys=[1])
    assert torch.equal(start.mask, start.mask_for("causal + padding", 2, [1]))
    assert start.payload()["mask"] == {"preset": "causal + padding", "pads": 2,
                                       "masked_keys": [1]}


@pytest.mark.parametrize("beta", [0.0, 1e-12, 1e-3, 1.0, 1e3, 1e6, 1e30])
def test_any_beta_is_finite(beta):
    for e in (widgets.beta_explorer(beta=beta), widgets.heads_explorer(beta=beta),
              widgets.masks_explorer(beta=beta, mask="causal + padding", pads=3)):
        got = e.compute()
        assert torch.isfinite(got["weights"]).all() and torch.isfinite(got["outputs"]).all()
        expected = rule(got["scores"], got["mask"], beta, False)
        assert torch.isfinite(expected).all()
        sums = expected.sum(-1)
        assert torch.all(((sums - 1).abs() < 1e-9) | (sums == 0))
    e = widgets.beta_explorer(beta=0.0)
    w = e.compute()["weights"]
    torch.testing.assert_close(w, torch.full_like(w, 0.2))  # uniform


def test_payload_carries_the_tensors_to_7_significant_digits(english):
    e = widgets.heads_explorer()
    data = e.payload()
    assert [c["num_heads"] for c in data["configs"]] == [1, 2, 4, 8]
    assert data["config"] == 2 and data["tokens"] == e.tokens and data["beta_auto"]
    for config in data["configs"]:
        h = config["num_heads"]
        assert config["d_head"] == 32 // h
        torch.testing.assert_close(torch.tensor(config["scores"]), e.scores[h], atol=1e-5,
                                   rtol=1e-6)
        torch.testing.assert_close(torch.tensor(config["values"]), e.values[h], atol=1e-5,
                                   rtol=1e-6)
    assert data["beta_min"] == 1e-3 and data["beta_max"] >= 1000
    beta = widgets.beta_explorer().payload()
    assert beta["points"] == [[2.0, 0.3], [1.7, 0.9], [-0.4, 1.9], [-1.0, 1.6], [-1.2, -1.5]]
    assert widgets.beta_explorer(torch.randn(3, 4)).payload()["points"] is None


# --- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: widgets.beta_explorer(torch.randn(3, 2), ["a", "b"]), ValueError,
     r"labels has 2 names but x \(3, 2\) has 3 rows"),
    (lambda: widgets.beta_explorer(torch.randn(3)), ValueError, r"x must have 2 dim.*\(3,\)"),
    (lambda: widgets.beta_explorer(torch.ones(3, 2, dtype=torch.long)), TypeError,
     "x must be a floating-point tensor"),
    (lambda: widgets.beta_explorer([[1.0, 2.0]]), TypeError, "x must be a torch.Tensor"),
    (lambda: widgets.beta_explorer(torch.full((2, 2), float("nan"))), ValueError,
     r"x of shape \(2, 2\) holds NaN"),
    (lambda: widgets.beta_explorer(torch.randn(21, 2)), ValueError, "at most 20"),
    (lambda: widgets.beta_explorer(torch.full((2, 2), 1e30)), ValueError, "overflow"),
    (lambda: widgets.beta_explorer(beta=-1.0), ValueError, "beta must be finite and >= 0"),
    (lambda: widgets.beta_explorer(beta=float("inf")), ValueError, "beta must be finite"),
    (lambda: widgets.beta_explorer(hard="yes"), TypeError, "hard must be True or False"),
    (lambda: widgets.heads_explorer(torch.randn(3, 6), head_counts=(1, 4)), ValueError,
     r"head_counts \[4\] do not divide d_model=6"),
    (lambda: widgets.heads_explorer(head_counts=()), ValueError, "head_counts must not be empty"),
    (lambda: widgets.heads_explorer(head_counts=(2, 2)), ValueError, "repeated"),
    (lambda: widgets.heads_explorer(num_heads=3), ValueError, "num_heads=3 must be one of"),
    (lambda: widgets.heads_explorer(num_heads=2, head=2), ValueError, "head=2 must be < "),
    (lambda: widgets.heads_explorer(torch.randn(3, 8), ["a"]), ValueError,
     r"tokens has 1 labels but x \(3, 8\) has 3 rows"),
    (lambda: widgets.heads_explorer(sentence="a b", tokens=["a", "b"]), ValueError,
     "sentence or tokens, not both"),
    (lambda: widgets.heads_explorer(sentence="  "), ValueError, "has no word"),
    (lambda: widgets.heads_explorer(sentence=3), TypeError, "sentence must be a str"),
    (lambda: widgets.heads_explorer(tokens="abc"), TypeError, "tokens must be a list of str"),
    (lambda: widgets.heads_explorer(sentence=" ".join(["w"] * 21)), ValueError, "at most 20"),
    (lambda: widgets.heads_explorer(d_model=0), ValueError, "d_model must be >= 1"),
    (lambda: widgets.masks_explorer([]), ValueError, "tokens must not be empty"),
    (lambda: widgets.masks_explorer(["a", 1]), TypeError, "tokens must hold non-empty str"),
    (lambda: widgets.masks_explorer(mask="future"), ValueError, "mask must be one of"),
    (lambda: widgets.masks_explorer(mask="padding", pads=7), ValueError,
     "pads=7 is more than the 6 tokens"),
    (lambda: widgets.masks_explorer(masked_keys=[6]), ValueError, r"masked_keys .*\[0, 6\)"),
    (lambda: widgets.masks_explorer(device=3), TypeError, "device must be"),
    (lambda: widgets.sentence_box("beta"), ValueError, "kind must be 'heads' or 'masks'"),
])
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


# --- the page -----------------------------------------------------------------------------------

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def every_explorer():
    return [widgets.beta_explorer(), widgets.beta_explorer(torch.randn(4, 3)),
            widgets.heads_explorer(), widgets.masks_explorer(mask="padding", pads=1)]


def test_html_is_self_contained_and_small(english):
    for e in [*every_explorer(),
              widgets.heads_explorer(sentence=" ".join(f"w{i}" for i in range(20)))]:
        page = e.html()
        size = len(page.encode("utf-8"))
        assert size < LIMIT, f"{e.kind}: {size} bytes"
        parser = Tags()
        parser.feed(page)
        tags = parser.tags
        assert tags[0][0] == "div" and tags[0][1]["data-kind"] == e.kind
        assert "tc-explorer" in tags[0][1]["class"].split()
        for tag, attrs in tags:
            assert "src" not in attrs and "href" not in attrs, (tag, attrs)
        lowered = page.lower()
        for needle in ("http:", "https:", "//cdn", "url(", "@import", "import(", "fetch(",
                       "xmlhttprequest", "<link", "<iframe", "<img"):
            assert needle not in lowered, needle
        assert [t for t, _ in tags].count("script") == 2  # the data, and the code
        data = re.search(r'<script type="application/json" class="tc-explorer-payload">(.*?)'
                         r"</script>", page, re.S).group(1)
        assert json.loads(data)["kind"] == e.kind


def test_labels_cannot_break_out_of_the_page():
    e = widgets.masks_explorer(["</script><script>alert(1)</script>", "<b>&amp;"])
    page = e.html()
    assert "alert(1)</script>" not in page and page.count("</script>") == 2
    assert json.loads(re.search(r'class="tc-explorer-payload">(.*?)</script>', page,
                                re.S).group(1))["tokens"][1] == "<b>&amp;"


def test_every_text_comes_from_the_catalogs(marked, english):
    for e in every_explorer():
        strings = e.payload()["strings"]

        def walk(value):
            if isinstance(value, dict):
                for item in value.values():
                    yield from walk(item)
            else:
                yield value

        texts = list(walk(strings))
        assert texts and all(t.startswith("⟦") and t.endswith("⟧") for t in texts), texts
        note = re.search(r'class="tc-x-mount"><p>(.*?)</p>', e.html()).group(1)
        assert note.startswith("⟦")
    assert "⟦the only head⟧" in widgets.heads_explorer().strings["all_heads"].values()


def test_language_sets_sentences_and_number_format(monkeypatch, english):
    monkeypatch.setattr(widgets, "_", lambda message: message)  # catalogs aside
    monkeypatch.setattr(widgets, "ngettext", lambda one, many, n: one if n == 1 else many)
    expected = {"en": (".", ",", "The"), "fr": (",", "\u202f", "Le"), "it": (",", ".", "Il")}
    for lang, (decimal, group, first) in expected.items():
        tc.set_language(lang)
        e = widgets.masks_explorer()
        assert e.tokens[0] == first and e.language == lang
        assert e.numbers["decimal"] == decimal and e.numbers["group"] == group
        assert f'lang="{lang}"' in e.html()
        assert widgets.heads_explorer().tokens[0] == first
        assert len(e.tokens) == 6


def test_gettext_is_asked_for_each_text(monkeypatch, english):
    asked = []
    monkeypatch.setattr(i18n, "_translations", lambda lang: _Recorder(asked))
    widgets.heads_explorer()
    assert "Heads explorer" in asked and "no key: zero output" in asked


class _Recorder:
    def __init__(self, asked):
        self.asked = asked

    def gettext(self, message):
        self.asked.append(message)
        return message

    def ngettext(self, one, many, n):
        self.asked.append(one)
        return one if n == 1 else many


def test_save_writes_a_standalone_page(tmp_path, english):
    path = widgets.masks_explorer().save(tmp_path / "masks.html")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in text
    assert 'data-kind="masks"' in text and text.rstrip().endswith("</html>")
    assert repr(widgets.masks_explorer()).startswith("<Masks explorer: 6 tokens, heads 1; ")


@pytest.mark.parametrize("lang, shown, english", [
    ("fr", "affichez-le dans un notebook", ("display", "block", "diagram", "parameter")),
    ("it", "visualizzatelo in un notebook", ("display", "block", "diagram", "parameter"))])
def test_every_page_object_s_repr_speaks_the_language_it_was_built_in(lang, shown, english):
    """A console or a text view shows the repr: a quiz, a diagram, a row of diagrams and an
    explorer say what they hold in their own language, even once another one is set."""
    tc.set_language(lang)
    try:
        quiz = tc.quiz.Quiz().single("?", ["a", "b"], answer=0, explanation="x", href="#x")
        drawn = tc.diagram(tc.EncoderLayer(16, 2, 32))
        objects = [quiz, drawn, tc.reader.diagrams.DiagramRow(drawn, drawn),
                   widgets.masks_explorer()]
    finally:
        tc.set_language("en")
    for obj in objects:
        text = repr(obj)
        assert text.startswith("<") and shown in text, text
        assert not any(word in text for word in english), text
    assert ("1 question" if lang == "fr" else "1 domanda") in repr(quiz)
    assert ("2 schémas côte à côte" if lang == "fr" else "2 schemi affiancati") in repr(objects[2])


def test_the_repr_and_the_no_script_note_speak_the_reader_s_language(monkeypatch):
    tc.set_language("fr")
    try:
        explorer = widgets.heads_explorer(head_counts=(1, 2))
        text = repr(explorer)
        assert text.startswith("<Explorateur de têtes\u00a0: ") and "jetons" in text, text
        html = explorer.html()
        assert "Fichier" not in html  # Jupyter's own menu, named as it shows it
        assert "File → Trust Notebook" in html and "réexécutez" in html
    finally:
        tc.set_language("en")
    note = unescape(widgets.masks_explorer().html())
    assert ("This explorer's JavaScript has not run. In Jupyter, re-run this cell or choose "
            "File → Trust Notebook") in note


# --- with a kernel: the text box ---------------------------------------------------------------

def test_sentence_box_rebuilds_the_explorer(monkeypatch, english):
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv(STATIC_ENV, raising=False)
    box = widgets.sentence_box("heads", head_counts=(1, 2))
    import ipywidgets as W

    assert isinstance(box, W.VBox) and isinstance(box.text, W.Text)
    assert box.explorer.tokens == widgets.SENTENCES["heads"]["en"].split()
    assert list(box.explorer.scores) == [1, 2]
    box.text.value = "attention is all you need"
    assert box.explorer.tokens == ["attention", "is", "all", "you", "need"] and box.error is None
    box.text.value = " ".join(["w"] * 30)
    assert box.error == ("This sentence has 30 tokens; an explorer takes at most 20: "
                         "shorten it.")
    assert len(box.explorer.tokens) == 5  # the last good one
    box.button.click()
    masks = widgets.sentence_box("masks", "one two three")
    assert masks.explorer.kind == "masks" and masks.explorer.tokens == ["one", "two", "three"]


def _shown(box):
    """What the box's output widget holds: one entry per displayed item."""
    return [item["data"]["text/html"] for item in box.output.outputs]


def test_sentence_box_shows_one_explorer_per_submission(monkeypatch, english):
    """Typing a sentence then clicking "Show" is one submission (the box reports the text
    on blur, then the click): one explorer, built once; a note replaces it, and an explorer
    replaces the note, never both on screen."""
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv(STATIC_ENV, raising=False)
    built = []
    real = widgets.heads_explorer
    monkeypatch.setattr(widgets, "heads_explorer",
                        lambda **kw: built.append(kw["sentence"]) or real(**kw))
    box = widgets.sentence_box("heads", "the first sentence", head_counts=(1, 2))
    assert built == ["the first sentence"] and len(_shown(box)) == 1
    box.text.value = "a second one"  # Enter, or leaving the box
    box.button.click()  # then the click on "Show": the same submission
    box.button.click()
    assert built == ["the first sentence", "a second one"]
    assert len(_shown(box)) == 1 and 'class="tc-explorer' in _shown(box)[0]
    assert '"a","second","one"' in _shown(box)[0]
    box.text.value = "   "
    assert box.error == "This sentence has no word: type at least one."
    (note,) = _shown(box)
    assert "no word" in note and "tc-explorer " not in note  # the note alone
    box.text.value = "back again"
    (page,) = _shown(box)
    assert box.error is None and "no word" not in page and 'class="tc-explorer' in page


def test_sentence_box_notes_are_in_the_reader_s_language(monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv(STATIC_ENV, raising=False)
    tc.set_language("it")
    try:
        box = widgets.sentence_box("masks")
        assert box.button.description == "Mostrate"
        box.text.value = " ".join(["parola"] * 25)
        assert box.error == ("Questa frase ha 25 token; un esploratore ne accetta al massimo "
                             "20: accorciatela.")
        tc.set_language("fr")
        box.text.value = "?!"
        assert box.text.value == "?!" and box.error is None  # two tokens: an explorer
        box.text.value = ""
        assert box.error == "Cette phrase n’a aucun mot\u00a0: tapez-en au moins un."
    finally:
        tc.set_language("en")


def test_sentence_box_without_ipywidgets_shows_the_explorer_and_what_to_install(
        monkeypatch, marked):
    """`pip install "transformer-course[course]" jupyterlab` brings no ipywidgets: the cell
    shows the explorer of its sentence, says what to install, and "Run all" goes on."""
    monkeypatch.delenv(STATIC_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets now fails
    shown = widgets.sentence_box("heads", "the cat sat", head_counts=(1, 2))
    assert shown.explorer.tokens == ["the", "cat", "sat"] and shown.error is None
    html = shown._repr_html_()
    assert html.count('class="tc-explorer ') == 1 and "tc-explorer-note" in html
    assert shown.note == ('⟦To type a sentence of your own here, install ipywidgets (pip '
                          'install "transformer-course[jupyter]"), restart the kernel and run '
                          'this cell again.⟧')  # a catalog message
    with pytest.raises(ValueError, match="kind must be 'heads' or 'masks'"):
        widgets.sentence_box("beta")
    with pytest.raises(ValueError, match=r"head_counts \[3\] do not divide d_model=32"):
        widgets.sentence_box("heads", head_counts=(3,))  # the author's mistake still raises


def test_sentence_box_without_ipywidgets_names_the_jupyter_extra(monkeypatch, english):
    monkeypatch.delenv(STATIC_ENV, raising=False)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    shown = widgets.sentence_box("masks")
    assert shown.note == ('To type a sentence of your own here, install ipywidgets (pip install '
                          '"transformer-course[jupyter]"), restart the kernel and run this cell '
                          'again.')
    assert repr(shown).startswith(shown.note)


def test_sentence_box_is_a_note_on_the_static_page(monkeypatch, marked):
    monkeypatch.setenv(STATIC_ENV, "1")
    note = widgets.sentence_box("masks")
    html = note._repr_html_()
    assert "⟦In Jupyter or Colab, a text box appears here" in html
    assert "<input" not in html and "<script" not in html


def test_importing_the_explorers_needs_no_widget_library():
    code = ("import sys, transformer_course.widgets as w; w.heads_explorer().html(); "
            "assert 'ipywidgets' not in sys.modules and 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
