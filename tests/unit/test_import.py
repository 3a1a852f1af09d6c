"""``import transformer_course`` stays light and exposes the contract's names."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    for sub in ("data", "training", "plotting", "widgets", "viz", "check", "bench", "quiz",
                "diagrams", "reader", "book"):
        assert sub in dir(tc)


@pytest.mark.parametrize("old, new", [
    ("widgets", "reader.widgets"), ("quiz", "reader.quiz"), ("diagrams", "reader.diagrams"),
    ("plotting", "reader.plotting"), ("viz", "reader.viz"), ("claims", "book.claims"),
])
def test_a_moved_module_keeps_its_old_name(old, new):
    """Students' code and old notebooks import the reader's modules by their old names: each
    way gives the very module of the new home, in whichever order they come."""
    code = (f"import sys, transformer_course as tc, transformer_course.{old} as a; "
            f"from transformer_course import {old} as b; import transformer_course.{new} as c; "
            f"assert a is b is c is tc.{old} is sys.modules['transformer_course.{new}']; "
            f"assert c.__name__ == 'transformer_course.{new}'; "
            f"from transformer_course.{old} import __all__ as names; "
            f"assert all(hasattr(c, n) for n in names); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_the_package_under_test_is_the_installed_one_when_asked():
    """tools/local_jupyter.py runs these tests against an installed wheel: the module must
    come from that environment's site-packages, never from a source tree."""
    expected = os.environ.get("TRANSFORMER_COURSE_EXPECT_INSTALLED")
    where = Path(tc.__file__).resolve()
    if expected:
        assert where.is_relative_to(Path(expected).resolve()), where
    else:
        assert where.name == "__init__.py" and where.parent.name == "transformer_course"


@pytest.mark.parametrize("blocked, code, extra", [
    ("matplotlib", "import transformer_course.plotting", "plot"),
    ("bertviz", "import torch, transformer_course as tc; "
                "tc.viz.head_view([torch.rand(1, 1, 2, 2)], ['a', 'b'])", "course"),
])
def test_an_optional_part_names_the_extra_that_installs_it(blocked, code, extra):
    """As PyTorch and pandas do: the error says what to install."""
    script = (f"import sys; sys.modules[{blocked!r}] = None  # as if not installed\n"
              f"try:\n    {code}\nexcept ModuleNotFoundError as error:\n"
              f"    print(error.name, '|', error)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.strip()
    name, message = out.split(" | ")
    assert name.split(".")[0] == blocked
    assert f'needs {blocked}, which is not installed: pip install "transformer-course[{extra}]"' \
        in message, message
