"""Explorers: attention computed in the page, for any β, any mask and any head.

Each explorer is a self-contained piece of HTML and JavaScript, the way bertviz works.
Python computes what needs PyTorch, on :func:`transformer_course.device`: the raw scores
``q · k`` of every head (through the package's projections) and the value vectors. The
browser computes what the reader changes: β (a log slider from exactly 0 to 1000, and a box
for any β ≥ 0), hard or soft attention, the number of heads and the head shown, the mask
(presets, and keys masked with a click), and draws the weights and the output vectors.

    >>> from transformer_course import widgets
    >>> explorer = widgets.heads_explorer(sentence="The dog ate the food because it was hungry")
    >>> explorer.scores[4].shape        # 4 heads, 9 queries, 9 keys   # doctest: +SKIP
    torch.Size([4, 9, 9])
    >>> explorer                        # in a notebook: the explorer   # doctest: +SKIP

The output needs no kernel and no other file or host: the same HTML works in the static
book, Colab, JupyterLab, Notebook 7 and VS Code, and :meth:`Explorer.save` writes it to a
standalone page. The browser applies one rule, which tests check against PyTorch:

* ``weights = softmax(β · scores)`` over the keys a query may attend to (computed with the
  largest allowed score subtracted first, so that β = 1e6 is finite), or, when hard, the
  one-hot argmax (lowest index on ties);
* a query with no allowed key gets all-zero weights and a zero output, never NaN;
* ``outputs = weights @ values``.

After every change the root element (``class="tc-explorer"``, ``data-kind`` = ``beta``,
``heads`` or ``masks``) holds in ``data-state`` the JSON ``{beta, hard, num_heads, head,
scores, mask, weights}`` of the head on show (``head`` counts from 0; ``mask``: True = may
attend).

Every text the reader sees comes from the package's gettext catalogs
(:mod:`transformer_course.i18n`) in the language of :func:`transformer_course.set_language`,
and numbers use that language's decimal and group separators. The JavaScript and CSS live
in ``js/explorer.js`` and ``js/explorer.css`` next to this module and are inlined in every
output.

:func:`lm_explorer` (in :mod:`.lm_explorer`) is the fourth explorer: chapter 10's trained
language model, its weights in the page, writing in the reader's browser.

With a kernel, :func:`sentence_box` adds a text box: type a sentence, and PyTorch encodes it
and builds the explorer again (ipywidgets 7.7 or 8, the ``jupyter`` extra, imported only
there; without it the box shows the explorer of its first sentence and says what to install).
"""

from __future__ import annotations

import html as _html
import math
import re
import zlib
from collections.abc import Sequence
from typing import Any

import torch

from .._checks import check_beta, check_positive_int, check_tensor, shape_of
from .._optional import install_hint
from ..functional import attention, causal_mask, padding_mask, split_heads
from ..i18n import format_integer, get_language, ngettext
from ..i18n import gettext as _
from ..layers import MultiHeadAttention
from ..positional import sinusoidal_encoding
from ..utils import device as best_device
from ..utils import static_build
from .lm_explorer import LMExplorer, lm_explorer
from .page import HtmlOutput, asset, inline_json, number_format, trust_note

__all__ = [
    "MASK_PRESETS",
    "MAX_TOKENS",
    "Explorer",
    "LMExplorer",
    "beta_explorer",
    "embed_tokens",
    "heads_explorer",
    "lm_explorer",
    "masks_explorer",
    "sentence_box",
    "tokenize",
]

MAX_TOKENS = 20
"""Longest sequence an explorer takes (keeps the page light and the heatmaps readable)."""

MASK_PRESETS = ("none", "causal", "padding", "causal + padding")
"""The masks explorer's presets; a key can also be masked with a click, on top of them."""

BETA_MIN, BETA_MAX = 1e-3, 1000.0  # the β slider: 0, then a log scale from BETA_MIN to BETA_MAX

# Example sentences in the reader's language. They are course content, chosen to match the
# chapters (chapter 4's ambiguous pronoun, chapter 5's six words), so they are kept here for
# every language rather than left to the message catalogs.
SENTENCES = {
    "heads": {
        "en": "The dog ate the food because it was hungry",
        "fr": "Le chien a mangé la nourriture parce qu’il avait faim",
        "it": "Il cane ha mangiato il cibo perché aveva fame",
    },
    "masks": {
        "en": "The cat sat on the mat",
        "fr": "Le chat dort sur le tapis",
        "it": "Il gatto si siede sul tappeto",
    },
}



# --- inputs ----------------------------------------------------------------------------------

def tokenize(sentence: str) -> list[str]:
    """Cut a sentence into words and punctuation marks (``qu’il`` stays one word).

    Raises:
        TypeError: if ``sentence`` is not a string.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return re.findall(r"\w+(?:['’]\w+)*|[^\w\s]", sentence)


def embed_tokens(tokens: Sequence[str], d_model: int, *, seed: int = 0) -> torch.Tensor:
    """Toy token vectors: a fixed random vector per word plus its position's encoding.

    The word's vector is drawn from a generator seeded by ``seed`` and the word itself
    (lower case), so that a word always gets the same vector; the sinusoidal encoding of
    chapter 6 is added so that equal words at different places differ. No training is
    involved: the explorers show what attention computes, not what a model has learned.

    Returns:
        ``(L, d_model)`` float32 tensor on the CPU.
    """
    tokens = _check_tokens("tokens", tokens)
    d_model = check_positive_int("d_model", d_model)
    seed = check_positive_int("seed", seed, allow_zero=True)
    rows = []
    for token in tokens:
        word = zlib.crc32(token.lower().encode("utf-8"))
        generator = torch.Generator().manual_seed(seed * 4_294_967_311 + word)
        rows.append(torch.randn(d_model, generator=generator))
    return torch.stack(rows) + sinusoidal_encoding(len(tokens), d_model)


def _check_tokens(name: str, tokens: object) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a list of str, got {type(tokens).__name__}")
    tokens = list(tokens)
    bad = [t for t in tokens if not isinstance(t, str) or not t.strip()]
    if bad:
        raise TypeError(f"{name} must hold non-empty str labels, got {bad[0]!r}")
    if not tokens:
        raise ValueError(f"{name} must not be empty")
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"{name} has {len(tokens)} entries; an explorer takes at most "
                         f"{MAX_TOKENS}")
    return tokens


def _check_x(name: str, x: object) -> torch.Tensor:
    check_tensor(name, x, ndim=2, floating=True)
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape "
                         f"{shape_of(x)}")
    if x.shape[0] > MAX_TOKENS:
        raise ValueError(f"{name} of shape {shape_of(x)} has {x.shape[0]} rows; an explorer "
                         f"takes at most {MAX_TOKENS}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} of shape {shape_of(x)} holds NaN or infinite values")
    return x.detach()


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return value


def _device(device: torch.device | str | None) -> torch.device:
    if device is None:
        return best_device()
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a torch.device or a str, got {type(device).__name__}")
    return torch.device(device)


def _sequence(
    x: torch.Tensor | None,
    tokens: Sequence[str] | None,
    sentence: str | None,
    *,
    kind: str,
    d_model: int,
    seed: int,
) -> tuple[list[str], torch.Tensor]:
    """The labels and the vectors of a heads or masks explorer, from what the reader gave."""
    if sentence is not None and tokens is not None:
        raise ValueError("give sentence or tokens, not both")
    if sentence is not None:
        words = tokenize(sentence)
        if not words:
            raise ValueError(f"sentence {sentence!r} has no word")
        tokens = words
    if tokens is not None:
        tokens = _check_tokens("tokens", tokens)
    if x is not None:
        x = _check_x("x", x)
        if tokens is None:
            tokens = [f"t{i + 1}" for i in range(len(x))]
        elif len(tokens) != len(x):
            raise ValueError(f"tokens has {len(tokens)} labels but x {shape_of(x)} has "
                             f"{len(x)} rows")
        return tokens, x.to("cpu", torch.float32)
    if tokens is None:
        tokens = tokenize(SENTENCES[kind][get_language()])
    return tokens, embed_tokens(tokens, d_model, seed=seed)


def _seeded_attention(d_model: int, num_heads: int, seed: int) -> MultiHeadAttention:
    """The package's multi-head attention with seeded weights (the global RNG is left
    alone). Query and key weights of standard deviation 1/sqrt(d_model), larger than the
    default initialisation, make β·q·k about as spread as unit-variance scores: distinct
    patterns, neither uniform nor one-hot at the default β = 1/sqrt(d_head)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = MultiHeadAttention(d_model, num_heads)
        for projection in (module.W_q, module.W_k):
            torch.nn.init.normal_(projection.weight, std=1.0 / math.sqrt(d_model))
    return module.eval()


# --- what the page needs ---------------------------------------------------------------------

def _assets() -> tuple[str, str]:
    """The explorer's JavaScript (the shared helpers first) and CSS, compacted."""
    return asset("common.js", "explorer.js"), asset("explorer.css")


def _strings(kind: str, head_counts: Sequence[int] = ()) -> dict[str, Any]:
    """Every text an explorer shows, in the reader's language ({name} placeholders are
    filled in by the page)."""
    titles = {
        "beta": (_("β explorer"),
                 _("Soft attention becomes uniform as β → 0 and hard as β grows.")),
        "heads": (_("Heads explorer"),
                  _("Each head has its own slice of W_q, W_k and W_v, hence its own "
                    "attention pattern. Click a small map to show that head.")),
        "masks": (_("Masks explorer"),
                  _("Hatched cells are masked: their weight is exactly 0. Click a key to "
                    "mask or unmask it for every query.")),
    }
    title, caption = titles[kind]
    return {
        "title": title,
        "caption": caption,
        "beta_label": _("β"),
        "beta_slider": _("β on a log scale, from 0 to the right end"),
        "beta_box": _("Type any β ≥ 0, then press Enter"),
        "beta_invalid": _("β must be a number ≥ 0"),
        "beta_reset": _("β = 1/√d_head"),
        "beta_reset_tip": _("Back to β = 1/√d_head, which then follows the number of heads"),
        "hard": _("hard attention (argmax)"),
        "hard_title": _("hard attention (argmax)"),
        "soft_title": _("soft attention, β = {beta}"),
        "keys": _("keys"),
        "queries": _("queries"),
        "masked": _("masked"),
        "no_key": _("no key: zero output"),
        "outputs_title": _("output vectors: weights × values ({d} numbers each)"),
        "plane_title": _("each x_i moves to its output h_i"),
        "inputs_legend": _("inputs x_i"),
        "outputs_legend": _("outputs h_i = X a_i"),
        "heads_label": _("heads h"),
        "head_label": _("head"),
        "head_of": _("head {head} of {count}"),
        "head_title": _("head {head} of {count} (d_head = {d_head})"),
        "head_n": _("head {head}"),
        "all_heads": {str(h): ngettext("the only head", "all {count} heads", h).format(count=h)
                      for h in head_counts},
        "mask_label": _("mask"),
        "presets": {"none": _("none"), "causal": _("causal"), "padding": _("padding"),
                    "causal + padding": _("causal + padding")},
        "pads_label": _("[PAD] at the end"),
        "mask_title": _("mask: {preset}"),
        "mask_title_pads": _("mask: {preset}, {count} × [PAD]"),
        "key_tip": _("Click to mask or unmask this key for every query"),
        "pad_tip": _("This [PAD] is masked by the padding mask"),
        "unmask_all": _("unmask every key"),
    }


def _rounded(t: torch.Tensor) -> list:
    """A tensor as nested lists of floats with 7 significant digits (float32 precision)."""

    def walk(value: Any) -> Any:
        return [walk(v) for v in value] if isinstance(value, list) else float(f"{value:.7g}")

    return walk(t.detach().cpu().tolist())


class Explorer(HtmlOutput):
    """An attention explorer: the tensors PyTorch computed, and the page that explores them.

    Display it in a notebook (its ``_repr_html_`` is self-contained HTML), or write it to a
    standalone page with :meth:`save`. Built by :func:`beta_explorer`,
    :func:`heads_explorer` and :func:`masks_explorer`.

    Attributes:
        kind: ``"beta"``, ``"heads"`` or ``"masks"``.
        tokens: the label of every position (queries and keys).
        x: ``(L, d_model)`` the input vectors.
        queries, keys, values: ``{h: (h, L, d_head)}`` for every number of heads h offered
            (for the β explorer, ``{1: x[None]}`` each: ``q = k = v = x``).
        scores: ``{h: (h, L, L)}`` the raw ``q · k`` of every head, before β and the mask.
        modules: ``{h: MultiHeadAttention}`` that produced them (empty for the β explorer).
        beta, hard, num_heads, head: the initial setting (``beta_auto``: β is
            ``1 / sqrt(d_head)`` and follows h until the reader moves it).
        mask: ``(L, L)`` the initial mask (True = may attend).
        language: the language of its texts.

    All tensors are on the CPU; ``device`` is where they were computed.
    """

    def __init__(
        self,
        kind: str,
        tokens: list[str],
        x: torch.Tensor,
        queries: dict[int, torch.Tensor],
        keys: dict[int, torch.Tensor],
        values: dict[int, torch.Tensor],
        *,
        device: torch.device,
        beta: float,
        beta_auto: bool,
        hard: bool,
        num_heads: int = 1,
        head: int = 0,
        modules: dict[int, MultiHeadAttention] | None = None,
        preset: str = "none",
        pads: int = 0,
        masked_keys: Sequence[int] = (),
    ) -> None:
        self.kind, self.tokens, self.device = kind, tokens, device
        self.x = x.detach().cpu()
        self.queries = {h: q.detach().cpu() for h, q in queries.items()}
        self.keys = {h: k.detach().cpu() for h, k in keys.items()}
        self.values = {h: v.detach().cpu() for h, v in values.items()}
        self.scores = {h: (queries[h] @ keys[h].transpose(-2, -1)).detach().cpu()
                       for h in queries}  # (h, L, L), computed where q and k are
        for h, s in self.scores.items():
            if not torch.isfinite(s).all():
                raise ValueError(f"the scores q·k overflow for h={h}: scale x "
                                 f"{shape_of(self.x)} down")
        self.modules = {h: m.cpu() for h, m in (modules or {}).items()}
        self.beta, self.beta_auto, self.hard = beta, beta_auto, hard
        self.num_heads, self.head = num_heads, head
        self.preset, self.pads, self.masked_keys = preset, pads, tuple(masked_keys)
        self.mask = self.mask_for(preset, pads, masked_keys)
        self.language = get_language()
        self.strings = _strings(kind, list(self.scores))
        self.numbers = number_format()

    # -- the maths, in Python ---------------------------------------------------------------

    def mask_for(self, preset: str = "none", pads: int = 0,
                 masked_keys: Sequence[int] = ()) -> torch.Tensor:
        """The ``(L, L)`` mask (True = may attend) of a preset, ``pads`` [PAD] at the end,
        and keys masked for every query, built with the package's mask functions."""
        length = len(self.tokens)
        if preset not in MASK_PRESETS:
            raise ValueError(f"mask must be one of {MASK_PRESETS}, got {preset!r}")
        pads = check_positive_int("pads", pads, allow_zero=True)
        if pads > length:
            raise ValueError(f"pads={pads} is more than the {length} tokens")
        keep = torch.ones(length, length, dtype=torch.bool)
        if "causal" in preset:
            keep &= causal_mask(length)
        if "padding" in preset:
            ids = torch.tensor([[1] * (length - pads) + [0] * pads])  # (1, L), 0 = [PAD]
            keep &= padding_mask(ids, pad_id=0)[0, 0]  # (1, L) broadcast to every query
        for j in masked_keys:
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < length:
                raise ValueError(f"masked_keys must hold positions in [0, {length}), got {j!r}")
            keep[:, j] = False
        return keep

    def compute(
        self,
        *,
        beta: float | None = None,
        hard: bool | None = None,
        num_heads: int | None = None,
        head: int | None = None,
        mask: torch.Tensor | None = None,
    ) -> dict[str, torch.Tensor]:
        """One setting computed with :func:`transformer_course.attention` (defaults: the
        initial setting). Returns ``scores``, ``mask``, ``weights`` ``(L, L)`` and
        ``outputs`` ``(L, d_head)`` of the head shown, on the CPU."""
        h = self.num_heads if num_heads is None else num_heads
        if h not in self.scores:
            raise ValueError(f"num_heads must be one of {sorted(self.scores)}, got {h!r}")
        k = self.head if head is None else head
        if not 0 <= k < h:
            raise ValueError(f"head must be in [0, {h}), got {k!r}")
        if beta is None:
            beta = 1.0 / math.sqrt(self.queries[h].shape[-1]) if self.beta_auto else self.beta
        mask = self.mask if mask is None else mask
        q, key, v = (t[h][k].to(self.device) for t in (self.queries, self.keys, self.values))
        outputs, weights = attention(q, key, v, mask=mask.to(self.device), beta=beta,
                                     hard=self.hard if hard is None else hard)
        return {"scores": self.scores[h][k], "mask": mask.cpu(), "weights": weights.cpu(),
                "outputs": outputs.cpu()}

    # -- the page -----------------------------------------------------------------------------

    def payload(self) -> dict[str, Any]:
        """The data the page gets: tokens, scores and values per head, initial setting,
        texts and number format."""
        counts = list(self.scores)
        configs = [{"num_heads": h, "d_head": int(self.queries[h].shape[-1]),
                    "scores": _rounded(self.scores[h]), "values": _rounded(self.values[h])}
                   for h in counts]
        data: dict[str, Any] = {
            "version": 1,
            "kind": self.kind,
            "tokens": self.tokens,
            "configs": configs,
            "config": counts.index(self.num_heads),
            "head": self.head,
            "beta": self.beta,
            "beta_auto": self.beta_auto,
            "beta_auto_available": self.kind != "beta",
            "beta_min": BETA_MIN,
            "beta_max": BETA_MAX,
            "hard": self.hard,
            "points": _rounded(self.x) if self.kind == "beta" and self.x.shape[1] == 2 else None,
            "strings": self.strings,
            "numbers": self.numbers,
        }
        if self.kind == "masks":
            data["presets"] = list(MASK_PRESETS)
            data["mask"] = {"preset": self.preset, "pads": self.pads,
                            "masked_keys": list(self.masked_keys)}
        return data

    def html(self) -> str:
        """The self-contained HTML fragment: inline style, data and script, nothing else."""
        script, style = _assets()
        data = inline_json(self.payload())
        return (
            f'<div class="tc-explorer tex2jax_ignore mathjax_ignore" data-kind="{self.kind}" '
            f'lang="{self.language}">'
            f"<style>{style}</style>"
            f'<script type="application/json" class="tc-explorer-payload">{data}</script>'
            f'<div class="tc-x-mount"><p>{trust_note()}</p></div>'
            f"<script>{script}</script>"
            f"</div>"
        )

    def page_title(self) -> str:
        return self.strings["title"]

    def details(self) -> str:
        count = len(self.tokens)
        tokens = ngettext("{count} token", "{count} tokens", count).format(
            count=format_integer(count))
        heads = ", ".join(format_integer(h) for h in self.scores)
        return _("{tokens}, heads {heads}").format(tokens=tokens, heads=heads)


# --- the three explorers -----------------------------------------------------------------------

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _default_points() -> tuple[torch.Tensor, list[str]]:
    """Five 2-D vectors: two close pairs and a loner, so that β visibly matters."""
    x = torch.tensor([[2.0, 0.3], [1.7, 0.9], [-0.4, 1.9], [-1.0, 1.6], [-1.2, -1.5]])
    return x, [f"x{i + 1}".translate(_SUBSCRIPTS) for i in range(len(x))]


def beta_explorer(
    x: torch.Tensor | None = None,
    labels: Sequence[str] | None = None,
    *,
    beta: float = 1.0,
    hard: bool = False,
    device: torch.device | str | None = None,
) -> Explorer:
    """Self-attention of a set of vectors: ``a_i = [soft](arg)max_β(X^T x_i)``, ``h_i = X a_i``.

    The queries, keys and values are the vectors themselves, so the scores are the dot
    products ``x_i · x_j``. The page shows the weight matrix (a row per query x_i) and, for
    2-D vectors, the inputs and the outputs in the plane (else the outputs as a heatmap).

    Args:
        x: ``(t, n)`` input vectors, one per row, at most :data:`MAX_TOKENS` (default: five
            2-D vectors).
        labels: a name per vector (default ``x₁, x₂, ...``).
        beta: the initial β (finite, >= 0; the box takes any β, the slider 0 to 1000).
        hard: start with hard attention.
        device: where to compute (default :func:`transformer_course.device`).
    """
    if x is None:
        x, default_labels = _default_points()
        labels = default_labels if labels is None else labels
    x = _check_x("x", x)
    if labels is None:
        labels = [f"x{i + 1}".translate(_SUBSCRIPTS) for i in range(len(x))]
    labels = _check_tokens("labels", labels)
    if len(labels) != len(x):
        raise ValueError(f"labels has {len(labels)} names but x {shape_of(x)} has {len(x)} rows")
    beta = check_beta(beta)
    hard = _check_flag("hard", hard)
    dev = _device(device)
    x_dev = x.to(dev, torch.float32)[None]  # (1, t, n): one "head" whose q = k = v = x
    return Explorer("beta", labels, x, {1: x_dev}, {1: x_dev}, {1: x_dev}, device=dev,
                    beta=beta, beta_auto=False, hard=hard)


def _check_head_counts(head_counts: object, d_model: int) -> list[int]:
    if isinstance(head_counts, (str, bytes)) or not isinstance(head_counts, Sequence):
        raise TypeError(f"head_counts must be a sequence of int, got {type(head_counts).__name__}")
    counts = [check_positive_int("head_counts", h) for h in head_counts]
    if not counts:
        raise ValueError("head_counts must not be empty")
    if len(set(counts)) != len(counts):
        raise ValueError(f"head_counts {counts} has repeated values")
    bad = [h for h in counts if d_model % h]
    if bad:
        raise ValueError(f"head_counts {bad} do not divide d_model={d_model}")
    return counts


def _initial(beta: float | None, hard: bool) -> tuple[float | None, bool]:
    return (None if beta is None else check_beta(beta)), _check_flag("hard", hard)


def heads_explorer(
    x: torch.Tensor | None = None,
    tokens: Sequence[str] | None = None,
    *,
    sentence: str | None = None,
    head_counts: Sequence[int] = (1, 2, 4, 8),
    num_heads: int | None = None,
    head: int = 0,
    beta: float | None = None,
    hard: bool = False,
    d_model: int = 32,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Explorer:
    """Multi-head self-attention of one sequence: choose h, then the head to show.

    For every h in ``head_counts`` a :class:`~transformer_course.MultiHeadAttention` with
    seeded weights projects the tokens; the scores of head j are ``q_j · k_j``. The page
    shows the chosen head's weights and output vectors (``weights @ V_j``) large, and all h
    heads side by side.

    Args:
        x: ``(L, d_model)`` token vectors (default: the words of ``sentence`` or ``tokens``,
            encoded by :func:`embed_tokens`).
        tokens: a label per position (with ``x``), or the words to encode (without).
        sentence: a sentence to cut into words and encode (default: an example sentence in
            the current language, with an ambiguous pronoun).
        head_counts: the values of h offered; each must divide ``d_model``.
        num_heads: the initial h (default: the middle of ``head_counts``).
        head: the initial head, counted from 0.
        beta: the initial β (default ``1 / sqrt(d_head)``, which then follows h).
        hard: start with hard attention.
        d_model: width of the encoded words (ignored when ``x`` is given).
        seed: seed of the projection weights and of the word vectors.
        device: where to compute (default :func:`transformer_course.device`).
    """
    seed = check_positive_int("seed", seed, allow_zero=True)
    d_model = check_positive_int("d_model", d_model)
    tokens, x = _sequence(x, tokens, sentence, kind="heads", d_model=d_model, seed=seed)
    d_model = x.shape[1]
    counts = _check_head_counts(head_counts, d_model)
    if num_heads is None:
        num_heads = counts[len(counts) // 2]
    if num_heads not in counts:
        raise ValueError(f"num_heads={num_heads!r} must be one of head_counts {counts}")
    head = check_positive_int("head", head, allow_zero=True)
    if head >= num_heads:
        raise ValueError(f"head={head} must be < num_heads={num_heads} (heads count from 0)")
    beta, hard = _initial(beta, hard)
    dev = _device(device)
    x_dev = x.to(dev)[None]  # (1, L, d_model)
    modules, queries, keys, values = {}, {}, {}, {}
    with torch.no_grad():
        for h in counts:
            module = _seeded_attention(d_model, h, seed).to(dev)
            modules[h] = module
            queries[h] = split_heads(module.W_q(x_dev), h)[0]  # (h, L, d_head)
            keys[h] = split_heads(module.W_k(x_dev), h)[0]  # (h, L, d_head)
            values[h] = split_heads(module.W_v(x_dev), h)[0]  # (h, L, d_head)
    auto = beta is None
    return Explorer("heads", tokens, x, queries, keys, values, device=dev, modules=modules,
                    beta=1.0 / math.sqrt(d_model // num_heads) if auto else beta,
                    beta_auto=auto, hard=hard, num_heads=num_heads, head=head)


def masks_explorer(
    tokens: Sequence[str] | None = None,
    *,
    sentence: str | None = None,
    x: torch.Tensor | None = None,
    mask: str = "none",
    pads: int = 0,
    masked_keys: Sequence[int] = (),
    beta: float | None = None,
    hard: bool = False,
    d_model: int = 16,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Explorer:
    """Self-attention of one sentence under a mask the reader chooses.

    The presets are no mask, causal, padding (the last ``pads`` tokens become [PAD]) and
    both; on top of them the reader masks or unmasks any key with a click. A query whose
    keys are all masked gets zero weights and a zero output. The scores come from a
    one-head :class:`~transformer_course.MultiHeadAttention` with seeded weights.

    Args:
        tokens: the words (default: a six-word sentence in the current language).
        sentence: a sentence to cut into words instead.
        x: ``(L, d_model)`` vectors to use instead of encoding the words.
        mask: the initial preset, one of :data:`MASK_PRESETS`.
        pads: the initial number of [PAD] at the end (used by the padding presets).
        masked_keys: positions (from 0) masked for every query at the start.
        beta: the initial β (default ``1 / sqrt(d_model)``).
        hard: start with hard attention.
        d_model: width of the encoded words (ignored when ``x`` is given).
        seed: seed of the projection weights and of the word vectors.
        device: where to compute (default :func:`transformer_course.device`).
    """
    seed = check_positive_int("seed", seed, allow_zero=True)
    d_model = check_positive_int("d_model", d_model)
    tokens, x = _sequence(x, tokens, sentence, kind="masks", d_model=d_model, seed=seed)
    d_model = x.shape[1]
    if isinstance(masked_keys, (str, bytes)) or not isinstance(masked_keys, Sequence):
        raise TypeError(f"masked_keys must be a sequence of int, got "
                        f"{type(masked_keys).__name__}")
    beta, hard = _initial(beta, hard)
    dev = _device(device)
    module = _seeded_attention(d_model, 1, seed).to(dev)
    x_dev = x.to(dev)[None]  # (1, L, d_model)
    with torch.no_grad():
        q = split_heads(module.W_q(x_dev), 1)[0]  # (1, L, d_model)
        k = split_heads(module.W_k(x_dev), 1)[0]
        v = split_heads(module.W_v(x_dev), 1)[0]
    auto = beta is None
    return Explorer("masks", tokens, x, {1: q}, {1: k}, {1: v}, device=dev, modules={1: module},
                    beta=1.0 / math.sqrt(d_model) if auto else beta, beta_auto=auto,
                    hard=hard, preset=mask, pads=pads, masked_keys=list(masked_keys))


# --- with a kernel: type a sentence ------------------------------------------------------------

class _Note:
    """A short HTML note shown instead of a control that cannot work here."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return f'<p class="tc-explorer-note"><em>{_html.escape(self.text)}</em></p>'

    def __repr__(self) -> str:
        return self.text


class _WithoutWidgets:
    """What :func:`sentence_box` shows without ipywidgets: the explorer of its sentence, and
    a note saying what to install to type one's own."""

    def __init__(self, explorer: Explorer, note: str) -> None:
        self.explorer, self.note, self.error = explorer, note, None

    def _repr_html_(self) -> str:
        return _Note(self.note)._repr_html_() + self.explorer.html()

    def __repr__(self) -> str:
        return f"{self.note}\n{self.explorer!r}"


def _sentence_problem(sentence: str) -> str | None:
    """Why a typed sentence cannot become an explorer, in the reader's language; or None."""
    count = len(tokenize(sentence))
    if count == 0:
        return _("This sentence has no word: type at least one.")
    if count > MAX_TOKENS:
        return _("This sentence has {count} tokens; an explorer takes at most {limit}: "
                 "shorten it.").format(count=format_integer(count),
                                       limit=format_integer(MAX_TOKENS))
    return None


def _bundle(shown: Explorer | _Note) -> dict[str, Any]:
    """The display message of ``shown``, as an Output widget keeps it."""
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/plain": repr(shown), "text/html": shown._repr_html_()}}


def sentence_box(kind: str = "heads", sentence: str | None = None, **options: Any) -> Any:
    """A text box whose sentence PyTorch encodes into a heads or masks explorer.

    In Jupyter or Colab this returns an ipywidgets ``VBox`` (ipywidgets 7.7 or 8): a text
    box, a button, and the explorer below them, built again by :func:`heads_explorer` or
    :func:`masks_explorer` for each new sentence the reader submits (Enter, or the
    button). Each submission replaces what the box showed: one explorer, or one note in the
    reader's language saying why the sentence cannot be shown (no word, too many tokens).
    Its attributes: ``explorer`` (the explorer on show, or the last one shown), ``error``
    (the note on show, or None), ``text``, ``button`` and ``output`` (the widgets).

    Without ipywidgets (``pip install "transformer-course[course]" jupyterlab`` does not
    install it) it shows the explorer of ``sentence`` with a one-line note saying what to
    install to type one's own sentence (the ``jupyter`` extra), so that "Run all" goes on.

    When the environment variable ``TRANSFORMER_COURSE_STATIC`` is ``1`` (the book's build,
    where no kernel will follow) it returns a short note instead, saying where the box
    appears.

    Args:
        kind: ``"heads"`` or ``"masks"``.
        sentence: the initial sentence (default: the explorer's example sentence).
        options: passed on to the explorer (``head_counts=``, ``seed=``, ...).

    Raises:
        TypeError, ValueError: for a bad ``kind``, ``sentence`` or option: the first
            explorer is built before the box, so that they surface in the cell.
    """
    factories = {"heads": heads_explorer, "masks": masks_explorer}
    if kind not in factories:
        raise ValueError(f"kind must be 'heads' or 'masks', got {kind!r}")
    if sentence is not None and not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    if static_build():
        return _Note(_("In Jupyter or Colab, a text box appears here: type a sentence and "
                       "PyTorch builds the explorer for it."))
    factory = factories[kind]
    first = sentence if sentence is not None else SENTENCES[kind][get_language()]
    explorer = factory(sentence=first, **options)  # a bad option fails here, in the cell
    try:
        import ipywidgets as W  # only here: the explorers themselves need no widget library
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] != "ipywidgets":
            raise
        return _WithoutWidgets(explorer, _(
            "To type a sentence of your own here, install ipywidgets ({command}), restart "
            "the kernel and run this cell again.").format(command=install_hint("jupyter")))

    text = W.Text(value=first, placeholder=_("Type a sentence"), continuous_update=False,
                  layout=W.Layout(width="32em"))
    button = W.Button(description=_("Show"))
    output = W.Output()
    box = W.VBox([W.HBox([text, button]), output])
    box.text, box.button, box.output = text, button, output
    box.explorer, box.error = explorer, None
    shown = {"sentence": first}

    def replace(item: Explorer | _Note) -> None:
        # The output's whole content at once, never cleared and appended in two messages:
        # two quick submissions cannot leave two explorers, or a stale note, on screen.
        output.outputs = (_bundle(item),)

    def show(*_args: Any) -> None:
        typed = text.value
        if typed == shown["sentence"]:  # already on show: typing then clicking is one
            return                     # submission (the text box reports it on blur)
        shown["sentence"] = typed
        note = _sentence_problem(typed)
        if note is None:
            try:
                box.explorer = factory(sentence=typed, **options)
            except (TypeError, ValueError):
                note = _("PyTorch could not build an explorer for this sentence: try "
                         "another one.")
        box.error = note
        replace(box.explorer if note is None else _Note(note))

    replace(explorer)
    button.on_click(show)
    text.observe(show, names="value")
    return box
