"""transformer_course: the attention, multi-head attention, encoder and decoder of the course.

    >>> import torch, transformer_course as tc
    >>> x = torch.randn(2, 5, 16)
    >>> out, weights = tc.attention(x, x, x, beta=1.0)
    >>> weights.shape
    torch.Size([2, 5, 5])

The layout shows the architecture:

* the model, at the top: ``functional``, ``layers``, ``positional``, ``cache``, ``models``,
  ``lm``, ``generation``, ``bert`` and ``interop``; then ``data``, ``training`` and
  ``utils``, and the package's own plumbing (``_checks``, ``_optional``, ``i18n``);
* ``reader``: the reader's interface (explorers, diagrams, quizzes, plots, their JavaScript);
* ``book``: the book's plumbing (claims);
* ``check``: the exercises' checkers; ``bench``: the benchmark
  (``python -m transformer_course.bench``).

The model never imports ``reader`` or ``book``. The top-level import stays light (torch
only); ``data``, ``training``, ``plotting``, ``widgets``, ``quiz``, ``viz``, ``diagrams``,
``check`` and ``bench`` are loaded on first use, under their old names too
(``tc.widgets`` is ``transformer_course.reader.widgets``).
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from .bert import BertEncoder, BertEncoderOutput, from_huggingface
from .book.claims import ClaimError, claim
from .cache import KVCache, LayerCache
from .functional import (
    attention,
    causal_mask,
    hard_argmax,
    merge_heads,
    padding_mask,
    soft_argmax,
    split_heads,
)
from .i18n import (
    format_integer,
    format_number,
    format_percent,
    format_tensor,
    get_language,
    set_language,
    yes_no,
)
from .interop import from_torch
from .layers import (
    Decoder,
    DecoderAttention,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    FeedForward,
    MultiHeadAttention,
)
from .lm import LanguageModel
from .models import Transformer, TransformerAttention, TransformerClassifier
from .positional import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    sinusoidal_encoding,
)
from .utils import device, seed_everything

__version__ = "0.2.0"

# tc.<name> -> the submodule it loads on first use (the reader's modules under their old names).
_SUBMODULES = {
    "bench": "bench", "book": "book", "check": "check", "claims": "book.claims", "data": "data",
    "diagrams": "reader.diagrams", "generation": "generation", "plotting": "reader.plotting",
    "quiz": "reader.quiz", "reader": "reader", "training": "training", "viz": "reader.viz",
    "widgets": "reader.widgets",
}

__all__ = [
    "BertEncoder",
    "BertEncoderOutput",
    "ClaimError",
    "Decoder",
    "DecoderAttention",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "KVCache",
    "LanguageModel",
    "LayerCache",
    "LearnedPositionalEmbedding",
    "MultiHeadAttention",
    "SinusoidalPositionalEncoding",
    "Transformer",
    "TransformerAttention",
    "TransformerClassifier",
    "attention",
    "causal_mask",
    "claim",
    "device",
    "diagram",
    "format_integer",
    "format_number",
    "format_percent",
    "format_tensor",
    "from_huggingface",
    "from_torch",
    "get_language",
    "hard_argmax",
    "merge_heads",
    "padding_mask",
    "seed_everything",
    "set_language",
    "sinusoidal_encoding",
    "soft_argmax",
    "split_heads",
    "yes_no",
]


def diagram(module: torch.nn.Module, *, example: object = None) -> Any:
    """Draw one of the course's modules from its own tree: blocks, shapes, parameters.

    Returns a :class:`transformer_course.reader.diagrams.Diagram`, which displays itself in
    a notebook (self-contained SVG, style and script) and has ``.html()``, ``.svg`` and
    ``.save(path)``. See :func:`transformer_course.reader.diagrams.diagram` for the
    arguments.
    """
    from .reader.diagrams import diagram as draw

    return draw(module, example=example)


def __getattr__(name: str) -> Any:
    """Load the heavier submodules (``tc.plotting``, ``tc.data``, ...) on first access."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{_SUBMODULES[name]}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
