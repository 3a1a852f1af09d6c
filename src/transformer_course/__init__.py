"""transformer_course: the attention, multi-head attention, encoder and decoder of the course.

    >>> import torch, transformer_course as tc
    >>> x = torch.randn(2, 5, 16)
    >>> out, weights = tc.attention(x, x, x, beta=1.0)
    >>> weights.shape
    torch.Size([2, 5, 5])

The top-level import stays light (torch only); ``data``, ``training``, ``plotting``,
``widgets``, ``quiz``, ``viz``, ``check`` and ``bench`` are submodules loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from .bert import BertEncoder, BertEncoderOutput, from_huggingface
from .cache import KVCache, LayerCache
from .claims import ClaimError, claim
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

_SUBMODULES = (
    "bench", "check", "data", "diagrams", "generation", "plotting", "quiz", "training", "viz",
    "widgets",
)

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
]


def diagram(module: torch.nn.Module, *, example: object = None) -> Any:
    """Draw one of the course's modules from its own tree: blocks, shapes, parameters.

    Returns a :class:`transformer_course.diagrams.Diagram`, which displays itself in a
    notebook (self-contained SVG, style and script) and has ``.html()``, ``.svg`` and
    ``.save(path)``. See :func:`transformer_course.diagrams.diagram` for the arguments.
    """
    from .diagrams import diagram as draw

    return draw(module, example=example)


def __getattr__(name: str) -> Any:
    """Load the heavier submodules (``tc.plotting``, ``tc.data``, ...) on first access."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_SUBMODULES])
