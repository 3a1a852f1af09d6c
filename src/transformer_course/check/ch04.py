"""Checkers of chapter 4's transfer exercises: a new idea applied somewhere new.

* :func:`heads_of_any_width`: multi-head attention whose heads have a width ``d_head``
  other than ``d_model / h`` (projections to ``h * d_head``, then ``W_o`` back);
* :func:`grouped_query_attention`: several query heads sharing one key/value head;
* :func:`attention_parameter_count`: the number of parameters of such a layer, checked
  against modules built by torch (and the package's own when the sizes are the usual ones);
* :func:`without_heads`: a trained layer with some heads switched off (their outputs zeroed
  before ``W_o``), the experiment behind head pruning;
* :func:`attention_at_offset`: how much weight each head gives to the token a fixed number of
  places away (the previous one, the next one), the measure behind a claim about a
  positional head, tested on many sentences against a control;
* :func:`split_heads_strided`: another way to cut the features into heads, every h-th feature
  to the same head, which is the usual split after a reordering of the features.

Heads are numbered from 1 in the verdicts, as in the book's prose; the functions a reader
writes take indices counted from 0, and the verdicts say so wherever both appear.
"""

from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Callable, Sequence

import torch
from torch import nn

from .. import functional as _ref
from ..i18n import format_integer, ngettext
from ..i18n import gettext as _
from ..layers import MultiHeadAttention
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _kind,
    _num,
    _run,
    _scores,
    _shape,
)

__all__ = ["attention_at_offset", "attention_parameter_count", "grouped_query_attention",
           "heads_of_any_width", "split_heads_strided", "without_heads"]


def _heads(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor,
           w_o: torch.Tensor, num_heads: int, num_kv_heads: int, *, beta: float | None = None,
           pairing: str = "groups") -> torch.Tensor:
    """Reference multi-head self-attention, vectors as rows, no biases.

    Query head j attends with key/value head ``j // (num_heads // num_kv_heads)`` (pairing
    ``"groups"``) or ``j % num_kv_heads`` (``"round-robin"``, a classic mistake)."""
    q = _ref.split_heads(x @ w_q.T, num_heads)  # (B, h, L, d_head)
    k = _ref.split_heads(x @ w_k.T, num_kv_heads)  # (B, g, L, d_head)
    v = _ref.split_heads(x @ w_v.T, num_kv_heads)  # (B, g, L, d_head)
    share = num_heads // num_kv_heads
    if pairing == "groups":
        k, v = k.repeat_interleave(share, dim=1), v.repeat_interleave(share, dim=1)
    else:
        k, v = k.repeat(1, share, 1, 1), v.repeat(1, share, 1, 1)  # (B, h, L, d_head)
    heads, _weights = _ref.attention(q, k, v, beta=beta)  # (B, h, L, d_head)
    return _ref.merge_heads(heads) @ w_o.T  # (B, L, d_model)


def _matches(got: torch.Tensor, wrong: torch.Tensor) -> bool:
    return got.shape == wrong.shape and bool(torch.allclose(got.to(wrong.dtype), wrong,
                                                            atol=1e-5))


def _explain_scale(got: torch.Tensor, args: tuple, num_heads: int, num_kv_heads: int,
                   d_model: int, what: str) -> None:
    """Name the classic scaling mistakes: none, by sqrt(d_model / h), by sqrt(h d_head)."""
    d_head = args[1].shape[0] // num_heads
    width = num_heads * d_head
    root = _num(round(math.sqrt(d_head), 3))
    candidates = [
        (1.0, _("on {what} the scores are not divided by sqrt(d_head) = {root}")),
        (1.0 / math.sqrt(width),
         _("on {what} the scores are divided by sqrt(h d_head) = {wrong}, the width of all "
           "the heads together, instead of sqrt(d_head) = {root}")),
    ]
    if d_model % num_heads == 0 and d_model // num_heads != d_head:
        candidates.append((1.0 / math.sqrt(d_model // num_heads),
                           _("on {what} the scores are divided by sqrt(d_model / h) = {wrong} "
                             "instead of sqrt(d_head) = {root}: the heads here are not "
                             "d_model / h wide")))
    for beta, message in candidates:
        if math.isclose(beta, 1.0 / math.sqrt(d_head)):
            continue
        wrong = _heads(*args, num_heads, num_kv_heads, beta=beta)
        if _matches(got, wrong):
            raise _CheckFailedError(message.format(
                what=what, root=root, wrong=_num(round(1.0 / beta, 3))))


def _weights(g: torch.Generator, d_model: int, width: int, kv_width: int) -> tuple:
    w_q = torch.randn(width, d_model, generator=g) / math.sqrt(d_model)
    w_k = torch.randn(kv_width, d_model, generator=g) / math.sqrt(d_model)
    w_v = torch.randn(kv_width, d_model, generator=g) / math.sqrt(d_model)
    w_o = torch.randn(d_model, width, generator=g) / math.sqrt(width)
    return w_q, w_k, w_v, w_o


def heads_of_any_width(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, w_o, num_heads)`` -> multi-head self-attention of ``x``
    ``(B, L, d_model)`` where ``w_q``, ``w_k``, ``w_v`` are ``(h * d_head, d_model)`` and
    ``w_o`` is ``(d_model, h * d_head)``, all used as ``x @ w.T`` (no biases), each head
    ``d_head = w_q.shape[0] / h`` wide and scaled by ``1 / sqrt(d_head)``; ``d_head`` is
    larger than, smaller than, or equal to ``d_model / h``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(41)
        for d_model, num_heads, d_head in ((12, 4, 3), (8, 2, 6), (12, 3, 2), (6, 1, 5)):
            x = torch.randn(2, 5, d_model, generator=g)
            weights = _weights(g, d_model, num_heads * d_head, num_heads * d_head)
            what = ngettext("d_model = {d_model} and {heads} head of width {d_head}",
                            "d_model = {d_model} and {heads} heads of width {d_head}",
                            num_heads).format(d_model=_num(d_model), heads=_num(num_heads),
                                              d_head=_num(d_head))
            expected = _heads(x, *weights, num_heads, num_heads)
            got = _call(f, x.clone(), *(w.clone() for w in weights), num_heads, what=what)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor):
                    _explain_scale(_as_tensor(got, what=what), (x, *weights), num_heads,
                                   num_heads, d_model, what)
                raise
        return _("heads of any width: h * d_head features out of the projections, d_model "
                 "back out of W_o, and the scale of the head's own width")
    return _run("heads_of_any_width", fn, body)


def grouped_query_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, w_o, num_heads, num_kv_heads)`` -> grouped-query
    self-attention of ``x`` ``(B, L, d)``: ``w_q`` and ``w_o`` are ``(d, d)``, ``w_k`` and
    ``w_v`` are ``(num_kv_heads * d_head, d)`` with ``d_head = d / num_heads``, all used as
    ``x @ w.T``; query head j uses key/value head ``j // (num_heads / num_kv_heads)``
    (consecutive query heads form a group), scale ``1 / sqrt(d_head)``. With
    ``num_kv_heads = num_heads`` it is multi-head attention, with 1 multi-query attention."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(42)
        x = torch.randn(2, 5, 12, generator=g)
        for num_heads, num_kv_heads in ((4, 4), (4, 1), (4, 2), (6, 3)):
            d_head = 12 // num_heads
            weights = _weights(g, 12, 12, num_kv_heads * d_head)
            what = ngettext("{heads} query heads sharing {kv} key/value head",
                            "{heads} query heads sharing {kv} key/value heads",
                            num_kv_heads).format(heads=_num(num_heads), kv=_num(num_kv_heads))
            expected = _heads(x, *weights, num_heads, num_kv_heads)
            got = _call(f, x.clone(), *(w.clone() for w in weights), num_heads, num_kv_heads,
                        what=what)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError:
                if not isinstance(got, torch.Tensor):
                    raise
                got = _as_tensor(got, what=what)
                if 1 < num_kv_heads < num_heads and _matches(
                        got, _heads(x, *weights, num_heads, num_kv_heads, pairing="round-robin")):
                    share = num_heads // num_kv_heads
                    raise _CheckFailedError(
                        _("on {what} query head 2 uses key/value head 2, but the {share} "
                          "consecutive query heads 1 to {share} (indices 0 to {last}) form one "
                          "group and share key/value head 1 (index 0): repeat each key/value "
                          "head {share} times in a row (repeat_interleave), not the whole set "
                          "(repeat)").format(
                            what=what, share=_num(share), last=_num(share - 1))) from None
                _explain_scale(got, (x, *weights), num_heads, num_kv_heads, 12, what)
                raise
        return _("each group of query heads attends with its shared keys and values, from "
                 "multi-query (one key/value head) to multi-head attention")
    return _run("grouped_query_attention", fn, body)


# --- counting parameters -----------------------------------------------------------------------

def _count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _projections(d_model: int, num_heads: int, d_head: int, kdim: int, vdim: int,
                 bias: bool) -> dict[str, nn.Linear]:
    """The four projections of a layer with heads of width ``d_head``, on the meta device
    (shapes without memory)."""
    width = num_heads * d_head
    return {"W_q": nn.Linear(d_model, width, bias=bias, device="meta"),
            "W_k": nn.Linear(kdim, width, bias=bias, device="meta"),
            "W_v": nn.Linear(vdim, width, bias=bias, device="meta"),
            "W_o": nn.Linear(width, d_model, bias=bias, device="meta")}


def _integer(got: object, *, what: str) -> int:
    """A whole number the reader returned (an int, a whole float or a one-element tensor)."""
    if isinstance(got, torch.Tensor):
        got = _as_tensor(got, what=what)
        if got.numel() != 1 or got.dtype == torch.bool:
            raise _CheckFailedError(
                _("on {what} it returned a tensor of shape {shape}, expected one number")
                .format(what=what, shape=_shape(got.shape)))
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        raise _CheckFailedError(
            _("on {what} it returned {kind}, expected a number").format(what=what,
                                                                       kind=_kind(got)))
    if not math.isfinite(float(got)) or float(got) != int(got):
        raise _CheckFailedError(
            _("on {what} it returned {value}, expected a whole number of parameters").format(
                what=what, value=_num(float(got))))
    return int(got)


def attention_parameter_count(fn: Callable[..., object]) -> CheckResult:
    """Check ``fn(d_model, num_heads, d_head, kdim, vdim, bias)`` -> the number of
    parameters of a multi-head attention layer whose ``num_heads`` heads are ``d_head``
    wide: ``W_q`` maps ``d_model``, ``W_k`` maps ``kdim`` and ``W_v`` maps ``vdim`` inputs to
    ``h * d_head`` features, ``W_o`` maps them back to ``d_model``; each has a bias when
    ``bias`` is true. Compared with :class:`transformer_course.MultiHeadAttention` when
    ``d_head = d_model / h``, and with four ``nn.Linear`` otherwise."""
    def body(f: Callable) -> str:
        cases = [(512, 8, 64, 512, 512, True), (512, 1, 512, 512, 512, True),
                 (512, 8, 32, 512, 512, True), (256, 4, 64, 768, 1024, False),
                 (64, 2, 48, 64, 32, True)]
        for d_model, num_heads, d_head, kdim, vdim, bias in cases:
            what = _("d_model = {d_model}, {heads} × {d_head}, kdim = {kdim}, vdim = {vdim}, "
                     "bias = {bias}").format(d_model=_num(d_model), heads=_num(num_heads),
                                            d_head=_num(d_head), kdim=_num(kdim),
                                            vdim=_num(vdim), bias=bias)
            parts = _projections(d_model, num_heads, d_head, kdim, vdim, bias)
            expected = sum(_count(p) for p in parts.values())
            if d_head * num_heads == d_model:
                with torch.device("meta"):
                    module = MultiHeadAttention(d_model, num_heads, kdim=kdim, vdim=vdim,
                                                bias=bias)
                expected = _count(module)
            got = _integer(_call(f, d_model, num_heads, d_head, kdim, vdim, bias, what=what),
                           what=what)
            if got == expected:
                continue
            biases = sum(p.bias.numel() for p in parts.values() if p.bias is not None)
            with_biases = sum(_count(p) for p in _projections(d_model, num_heads, d_head, kdim,
                                                              vdim, True).values())
            w_o = _count(parts["W_o"])
            full_width = sum(_count(p) for p in _projections(d_model, num_heads, d_head,
                                                             d_model, d_model, bias).values())
            model_width = sum(_count(p) for p in _projections(d_model, 1, d_model, kdim, vdim,
                                                              bias).values())
            mistakes = [
                (expected - biases, _("on {what} it counted {got}, expected {expected}: the "
                                      "{count} biases are missing"), biases),
                (with_biases, _("on {what} it counted {got}, expected {expected}: with "
                                "bias = False the projections have no bias"), 0),
                (expected - w_o, _("on {what} it counted {got}, expected {expected}: W_o and "
                                   "its {count} parameters are missing"), w_o),
                (full_width, _("on {what} it counted {got}, expected {expected}: W_k reads "
                               "kdim inputs and W_v reads vdim inputs, not d_model"), 0),
                (model_width, _("on {what} it counted {got}, expected {expected}: the "
                                "projections have h × d_head = {width} outputs, not d_model"),
                 0),
            ]
            for wrong, message, count in mistakes:
                if got == wrong != expected:
                    raise _CheckFailedError(message.format(
                        what=what, got=format_integer(got), expected=format_integer(expected),
                        count=format_integer(count),
                        width=_num(num_heads * d_head)))
            raise _CheckFailedError(
                _("on {what} it counted {got}, expected {expected}").format(
                    what=what, got=format_integer(got), expected=format_integer(expected)))
        return _("four projections, weights and biases: the count depends on h only through "
                 "h × d_head")
    return _run("attention_parameter_count", fn, body)


# --- switching heads off ----------------------------------------------------------------------

def _switched_off(module: MultiHeadAttention, x: torch.Tensor, removed: Sequence[int], *,
                  where: str = "heads") -> torch.Tensor:
    """``module`` used as self-attention on ``x`` with the heads of indices ``removed``
    switched off, in float64. ``where`` gives the classic mistakes: ``"features"`` zeroes
    the same slices of the output after ``W_o``, ``"scores"`` zeroes the heads' scores (a
    uniform average remains), ``"no_bias"`` drops the bias of ``W_o``."""
    with torch.no_grad():
        x = x.double()
        q = _ref.split_heads(x @ module.W_q.weight.double().T + module.W_q.bias.double(),
                             module.num_heads)  # (B, h, L, d_head)
        k = _ref.split_heads(x @ module.W_k.weight.double().T + module.W_k.bias.double(),
                             module.num_heads)  # (B, h, L, d_head)
        v = _ref.split_heads(x @ module.W_v.weight.double().T + module.W_v.bias.double(),
                             module.num_heads)  # (B, h, L, d_head)
        keep = torch.ones(module.num_heads, 1, 1, dtype=torch.float64)  # (h, 1, 1)
        keep[list(removed)] = 0.0
        if where == "scores":
            q = q * keep
        heads, _weights = _ref.attention(q, k, v)  # (B, h, L, d_head)
        if where in ("heads", "no_bias"):
            heads = heads * keep
        out = _ref.merge_heads(heads) @ module.W_o.weight.double().T  # (B, L, d_model)
        if where != "no_bias":
            out = out + module.W_o.bias.double()
        if where == "features":
            out = _ref.merge_heads(_ref.split_heads(out, module.num_heads) * keep)
        return out


def _explain_switched_off(got: torch.Tensor, module: MultiHeadAttention, x: torch.Tensor,
                          removed: Sequence[int], what: str) -> None:
    h = module.num_heads
    for shift in (1, -1):
        moved = [r + shift for r in removed]
        if removed and all(0 <= r < h for r in moved) and _matches(
                got, _switched_off(module, x, moved)):
            raise _CheckFailedError(
                ngettext("on {what} it switched off index {got} instead of {expected}: indices "
                         "count from 0, like the head dimension of the tensors, so head 1 of the "
                         "text is index 0",
                         "on {what} it switched off indices {got} instead of {expected}: indices "
                         "count from 0, like the head dimension of the tensors, so head 1 of the "
                         "text is index 0", len(removed)).format(
                    what=what, got=", ".join(_num(r) for r in moved),
                    expected=", ".join(_num(r) for r in removed)))
    if removed and _matches(got, _switched_off(module, x, [])):
        raise _CheckFailedError(
            _("on {what} nothing was switched off: the output is that of all {count} heads")
            .format(what=what, count=_num(h)))
    if removed and _matches(got, _switched_off(module, x, removed, where="features")):
        raise _CheckFailedError(
            _("on {what} the slices of the output were zeroed after W_o: W_o mixes the heads, "
              "so a head must be zeroed before it, in the concatenation").format(what=what))
    if removed and _matches(got, _switched_off(module, x, removed, where="scores")):
        raise _CheckFailedError(
            _("on {what} the switched-off heads still give the average of their values: zero "
              "scores give uniform weights, not a zero output; zero the head's output")
            .format(what=what))
    if _matches(got, _switched_off(module, x, removed, where="no_bias")):
        raise _CheckFailedError(
            _("on {what} the bias of W_o is missing: only the heads are switched off, W_o "
              "keeps its bias").format(what=what))


def without_heads(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(mha, x, removed)`` -> the output ``(B, L, d_model)`` of the
    :class:`transformer_course.MultiHeadAttention` ``mha`` used as self-attention on ``x``,
    with the heads of indices ``removed`` (counted from 0) switched off: their outputs are
    zeros in the concatenation that ``W_o`` mixes; everything else, biases included, is
    unchanged. Each call gets its own copy of the module."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(43)
        cases = ((12, 3, []), (12, 3, [1]), (12, 3, [0, 2]), (16, 4, [3]), (16, 4, [0, 1, 2, 3]))
        for d_model, num_heads, removed in cases:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(torch.randint(10**6, (1,), generator=g)))
                module = MultiHeadAttention(d_model, num_heads).eval()
                with torch.no_grad():  # biases away from 0, so that a missing one shows
                    for layer in (module.W_q, module.W_k, module.W_v, module.W_o):
                        layer.bias.normal_(0.0, 0.5)
            x = torch.randn(2, 5, d_model, generator=g)
            if removed:
                what = ngettext("{heads} heads with the head of index {indices} switched off",
                                "{heads} heads with the heads of indices {indices} switched off",
                                len(removed)).format(heads=_num(num_heads),
                                                     indices=", ".join(_num(r) for r in removed))
            else:
                what = _("{heads} heads, none switched off").format(heads=_num(num_heads))
            got = _call(f, copy.deepcopy(module), x.clone(), list(removed), what=what)
            expected = _switched_off(module, x, removed)
            try:
                _compare(got, expected, what=what, atol=1e-5)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor) and got.shape == expected.shape:
                    _explain_switched_off(_as_tensor(got, what=what), module, x, removed, what)
                raise
        return _("a switched-off head adds nothing to the concatenation; W_o and its bias "
                 "stay as they are")
    return _run("without_heads", fn, body)


# --- a claim about a head: the weight at a fixed offset ----------------------------------------

def _at_offset(weights: torch.Tensor, offset: int) -> torch.Tensor:
    """``(N, H, L, L)`` -> ``(H,)``: the mean of ``weights[n, h, i, i + offset]`` over the
    sentences n and the tokens i that have a token ``offset`` places away."""
    band = torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1)  # (N, H, L - |offset|)
    return band.mean(dim=(0, -1))  # (H,)


def _explain_offset(got: torch.Tensor, weights: torch.Tensor, offset: int, what: str) -> None:
    n, heads, length, _length = weights.shape
    expected = _at_offset(weights, offset)
    have = length - abs(offset)
    if got.shape == (n, heads) and _matches(
            got, torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1).mean(-1)):
        raise _CheckFailedError(
            _("on {what} it returned one number per sentence and head: average over the "
              "sentences too, to get one number per head").format(what=what))
    if got.shape != expected.shape:
        return
    if offset and _matches(got, _at_offset(weights, -offset)):
        raise _CheckFailedError(
            _("on {what} this is the weight at offset {wrong}, not {offset}: row i holds what "
              "token i looks at, so read column i + offset of row i, not row i + offset of "
              "column i").format(what=what, wrong=_num(-offset), offset=_num(offset)))
    if offset and _matches(got, expected * have / length):
        raise _CheckFailedError(
            ngettext("on {what} the average counts a zero for the {missing} token that has no "
                     "token at offset {offset}: average over the {count} tokens that have one",
                     "on {what} the average counts a zero for the {missing} tokens that have no "
                     "token at offset {offset}: average over the {count} tokens that have one",
                     abs(offset)).format(what=what, missing=_num(abs(offset)),
                                         offset=_num(offset), count=_num(have)))
    if have > 1 and _matches(got, expected * have):
        raise _CheckFailedError(
            _("on {what} the weights are added up over the tokens, not averaged").format(
                what=what))


def attention_at_offset(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(weights, offset)`` -> ``(H,)``: for the attention weights ``(N, H, L, L)`` of
    N sentences of L tokens (row i: what token i looks at) and for each head, the weight that
    a token gives to the token ``offset`` places away (-1: the one before, +1: the one after,
    0: itself), averaged over the tokens that have such a token and over the sentences."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(44)
        for n, heads, length, offset in ((3, 4, 6, -1), (3, 4, 6, 1), (2, 3, 7, -2),
                                         (2, 3, 5, 0), (4, 2, 6, 3)):
            weights = torch.softmax(2 * torch.randn(n, heads, length, length, generator=g), -1)
            previous = torch.eye(length).roll(-1, dims=-1)  # row i: a one at i - 1
            previous[0] = torch.eye(length)[0]  # the first token has no token before it
            weights[:, 0] = previous  # head 1 looks at the token before, exactly
            what = _("{n} sentences of {length} tokens, {heads} heads, offset {offset}").format(
                n=_num(n), length=_num(length), heads=_num(heads), offset=_num(offset))
            got = _call(f, weights.clone(), offset, what=what)
            try:
                _compare(got, _at_offset(weights, offset), what=what)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor):
                    _explain_offset(_as_tensor(got, what=what), weights, offset, what)
                raise
        return _("for each head, what a token gives to the token that many places away, "
                 "averaged over the tokens that have one and over the sentences")
    return _run("attention_at_offset", fn, body)


# --- another split: every h-th feature to the same head -----------------------------------------

def _strided(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """``(B, L, d)`` -> ``(B, h, L, d / h)``; head j gets the features j, j + h, j + 2h..."""
    batch, length, width = x.shape
    return x.view(batch, length, width // num_heads, num_heads).permute(0, 3, 1, 2)


def _explain_strided(got: torch.Tensor, x: torch.Tensor, heads: int, what: str) -> None:
    batch, length, width = x.shape
    d_head = width // heads
    if _matches(got, _ref.split_heads(x, heads)):
        raise _CheckFailedError(
            _("on {what} the head of index 1 gets the features {got}, the contiguous slice of "
              "section 4.3; here it gets the features 1, 1 + h, 1 + 2h and so on: {expected}")
            .format(what=what, got=", ".join(_num(i) for i in range(d_head, 2 * d_head)),
                    expected=", ".join(_num(1 + i * heads) for i in range(d_head))))
    if got.shape == (batch, heads, d_head, length):
        raise _CheckFailedError(
            _("on {what} the shape is {got}: the positions and the features of each head are "
              "swapped, expected (B, h, L, d_head) = {expected}").format(
                what=what, got=_shape(got.shape),
                expected=_shape((batch, heads, length, d_head))))


def split_heads_strided(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, d_model) -> (B, h, L, d_head)``, the head of index
    j getting the features of indices ``j, j + h, ..., j + (d_head - 1) h`` in that order
    (every h-th feature), instead of a contiguous slice."""
    def body(f: Callable) -> str:
        x = _scores(45, 2, 5, 12)
        for heads in (3, 4, 1, 12, 2):
            what = ngettext("x {shape} with {heads} head", "x {shape} with {heads} heads",
                            heads).format(shape=_shape(x.shape), heads=_num(heads))
            got = _call(f, x.clone(), heads, what=what)
            try:
                _compare(got, _strided(x, heads), what=what, exact=True)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor):
                    _explain_strided(_as_tensor(got, what=what), x, heads, what)
                raise
        return _("every h-th feature goes to the same head, in order: the split of section 4.3 "
                 "after a reordering of the features")
    return _run("split_heads_strided", fn, body)
