"""``import transformer_course`` stays light and exposes the contract's names."""

import subprocess
import sys

import transformer_course as tc

HEAVY = ("transformers", "bertviz", "ipywidgets", "matplotlib")


def test_top_level_import_is_light():
    code = ("import sys, transformer_course; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_submodules_load_lazily():
    code = ("import sys, transformer_course as tc; tc.data; a = 'matplotlib' in sys.modules; "
            "tc.plotting; print(a, 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_widgets_and_viz_load_lazily():
    code = ("import sys, transformer_course as tc; tc.widgets.beta_explorer; tc.viz.head_view; "
            "print('ipywidgets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # The explorers are HTML + JavaScript: only widgets.sentence_box imports ipywidgets.
    assert out.stdout.strip() == "False"


def test_contract_names():
    for name in ("attention", "soft_argmax", "hard_argmax", "causal_mask", "padding_mask",
                 "MultiHeadAttention", "sinusoidal_encoding", "FeedForward", "EncoderLayer",
                 "DecoderLayer", "Encoder", "Decoder", "Transformer", "TransformerClassifier",
                 "from_torch", "from_huggingface", "device", "seed_everything"):
        assert hasattr(tc, name), name
    assert set(tc.__all__) <= set(dir(tc))
    for sub in ("data", "training", "plotting", "widgets", "viz", "check", "bench"):
        assert sub in dir(tc)
