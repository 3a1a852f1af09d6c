"""Checkers of chapter 5's transfer exercises: a new idea applied somewhere new.

* :func:`prefix_lm_mask`: a prompt read in both directions, the rest causal (a prefix LM);
* :func:`left_padded_causal_mask`: a decoder's mask for prompts padded on the left, built
  from a Hugging Face ``attention_mask``;
* :func:`torch_mha`: a course mask (True = may attend) handed to PyTorch's
  ``nn.MultiheadAttention`` (True = blocked), the find-the-bug exercise;
* :func:`sliding_window_mask`: local attention, each position sees a window of its past;
* :func:`packed_causal_mask`: several sequences packed into one row, none seeing another.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from .. import functional as _ref
from ..i18n import gettext as _
from ..i18n import ngettext
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _ints,
    _num,
    _parts,
    _run,
    _shape,
)

__all__ = ["left_padded_causal_mask", "packed_causal_mask", "prefix_lm_mask", "sliding_window_mask",
           "torch_mha"]


# --- a prefix LM: the prompt read in both directions ---------------------------------------------

def _prefix(length: int, prefix: int) -> torch.Tensor:
    """``(L, L)``: True where j <= i or j < prefix."""
    i = torch.arange(length)[:, None]  # queries
    j = torch.arange(length)[None, :]  # keys
    return (j <= i) | (j < prefix)


def _explain_prefix(got: torch.Tensor, length: int, prefix: int, what: str) -> None:
    """Name an off-by-one prefix, then say what the first wrong entry means."""
    expected = _prefix(length, prefix)
    for other, message in (
            (prefix + 1, _("on {what} the prefix holds one position too many: it is positions "
                           "0 to {last}")),
            (prefix - 1, _("on {what} the prefix holds one position too few: it is positions "
                           "0 to {last}"))):
        if 0 <= other <= length and not torch.equal(_prefix(length, other), expected) \
                and torch.equal(got, _prefix(length, other)):
            raise _CheckFailedError(message.format(what=what, last=_num(prefix - 1)))
    i, j = (int(v) for v in (got != expected).nonzero()[0])
    if bool(got[i, j]):
        raise _CheckFailedError(
            _("on {what} query {i} may attend to key {j}, which comes after it and after the "
              "prefix: only the prefix is read in both directions")
            .format(what=what, i=_num(i), j=_num(j)))
    if j < prefix:
        raise _CheckFailedError(
            _("on {what} query {i} may not attend to key {j}, which is in the prefix "
              "(positions 0 to {last}): the prefix is read whole, in both directions")
            .format(what=what, i=_num(i), j=_num(j), last=_num(prefix - 1)))
    raise _CheckFailedError(
        _("on {what} query {i} may not attend to key {j}, which is itself or a position "
          "before it: after the prefix the mask stays causal")
        .format(what=what, i=_num(i), j=_num(j)))


def prefix_lm_mask(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(L, prefix)`` -> the ``(L, L)`` boolean mask of a prefix LM: query i may
    attend to key j when ``j <= i`` or ``j < prefix``. The first ``prefix`` positions (a
    prompt) see one another in both directions; the positions after them stay causal. A
    prefix of 0 gives the causal mask, a prefix of L a mask that is True everywhere."""
    def body(f: Callable) -> str:
        for length, prefix in ((6, 3), (5, 0), (4, 4), (7, 2)):
            what = _("L = {length}, prefix = {prefix}").format(length=_num(length),
                                                               prefix=_num(prefix))
            got = _as_tensor(_call(f, length, prefix, what=what), what=what)
            expected = _prefix(length, prefix)
            if got.shape == expected.shape and got.dtype == torch.bool and not torch.equal(
                    got, expected):
                _explain_prefix(got, length, prefix, what)
            _compare(got, expected, what=what)
        return _("the prefix sees itself whole and the positions after it stay causal; a "
                 "prefix of 0 gives the causal mask")
    return _run("prefix_lm_mask", fn, body)


# --- left padding: a decoder's mask from a Hugging Face attention_mask --------------------------

def _left_padded(attention_mask: torch.Tensor) -> torch.Tensor:
    """``(B, 1, L, L)``: causal, and never a padding key."""
    keys = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, L)
    return _ref.causal_mask(attention_mask.shape[-1]) & keys


def _explain_left_padded(got: torch.Tensor, attention_mask: torch.Tensor, what: str) -> None:
    expected = _left_padded(attention_mask)
    if torch.equal(got, ~expected):
        raise _CheckFailedError(
            _("on {what} True and False are swapped: in this course True means may attend")
            .format(what=what))
    b, _head, i, j = (int(v) for v in (got != expected).nonzero()[0])
    if bool(got[b, 0, i, j]) and j > i:
        raise _CheckFailedError(
            _("on {what} in sequence {b}, query {i} may attend to key {j}, which comes after "
              "it: the mask must also be causal")
            .format(what=what, b=_num(b), i=_num(i), j=_num(j)))
    if bool(got[b, 0, i, j]):
        raise _CheckFailedError(
            _("on {what} in sequence {b}, query {i} may attend to key {j}, a [PAD]: no query "
              "may look at the padding").format(what=what, b=_num(b), i=_num(i), j=_num(j)))
    raise _CheckFailedError(
        _("on {what} in sequence {b}, query {i} may not attend to key {j}, a real token at or "
          "before it").format(what=what, b=_num(b), i=_num(i), j=_num(j)))


def left_padded_causal_mask(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(attention_mask)`` -> the ``(B, 1, L, L)`` boolean mask (True = may attend)
    of a decoder's self-attention over prompts padded on the left, from a Hugging Face
    ``attention_mask`` ``(B, L)`` of 0/1 integers (1 = real token): causal, and never a
    padding key. The ``[PAD]`` queries at the start of a row are left with no key at all."""
    def body(f: Callable) -> str:
        cases = (torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]]),
                 torch.tensor([[1, 1, 1], [0, 1, 1]]))
        for attention_mask in cases:
            what = _("the attention mask {mask}").format(mask=_ints(attention_mask.tolist()))
            got = _as_tensor(_call(f, attention_mask.clone(), what=what), what=what)
            expected = _left_padded(attention_mask)
            if got.shape == expected.shape and got.dtype == torch.bool and not torch.equal(
                    got, expected):
                _explain_left_padded(got, attention_mask, what)
            _compare(got, expected, what=what)
        return _("causal, and never a [PAD] key: the [PAD] queries at the start of a row have "
                 "nothing to attend to")
    return _run("left_padded_causal_mask", fn, body)


# --- the find-the-bug exercise: a course mask in nn.MultiheadAttention ----------------------

def _torch_blocked(mask: torch.Tensor, batch: int, heads: int, length: int, *,
                   invert: bool = True, batch_major: bool = True) -> torch.Tensor:
    """The ``(B * H, L, L)`` ``attn_mask`` of ``nn.MultiheadAttention`` for a course mask;
    ``invert=False`` and ``batch_major=False`` give the two classic mistakes."""
    allowed = mask.expand(batch, heads, length, length)  # (B, H, L, L)
    if not batch_major:  # rows ordered h * B + b, as torch.repeat(H, 1, 1) would give
        allowed = allowed.transpose(0, 1)
    allowed = allowed.reshape(batch * heads, length, length)  # (B * H, L, L)
    return ~allowed if invert else allowed


def _same(got: torch.Tensor, other: torch.Tensor) -> bool:
    """Equal up to float noise, NaN matching NaN."""
    return got.shape == other.shape and torch.allclose(
        got.to(torch.float64), other.to(torch.float64), atol=1e-5, equal_nan=True)


def _explain_torch_mha(got: torch.Tensor, mha: nn.MultiheadAttention, x: torch.Tensor,
                       mask: torch.Tensor, what: str) -> None:
    """Name the classic mistakes: the mask not inverted, the heads of one sequence given the
    mask of another, the mask forgotten, a query left with every key blocked."""
    batch, length = x.shape[0], x.shape[1]
    heads = mha.num_heads
    with torch.no_grad():
        plain = mha(x, x, x)[0]
        as_is = mha(x, x, x, attn_mask=_torch_blocked(mask, batch, heads, length,
                                                      invert=False))[0]
        shuffled = mha(x, x, x, attn_mask=_torch_blocked(mask, batch, heads, length,
                                                         batch_major=False))[0]
    if _same(got, as_is):
        raise _CheckFailedError(
            _("on {what} the mask reached nn.MultiheadAttention without being inverted: "
              "there True means blocked, so each query attended only to the keys it must "
              "not see, and a query allowed to see every key got NaN; pass ~mask")
            .format(what=what))
    if _same(got, plain) and not bool(mask.all()):
        raise _CheckFailedError(
            _("on {what} the output is the one without any mask: the mask never reached "
              "nn.MultiheadAttention").format(what=what))
    if _same(got, shuffled):
        raise _CheckFailedError(
            _("on {what} each head received the mask of another sequence: the rows of a "
              "(B * H, L, L) attn_mask are ordered b * H + h, so expand the mask to "
              "(B, H, L, L) before reshaping it (or use repeat_interleave, not repeat)")
            .format(what=what))
    if got.is_floating_point() and bool(got.isnan().any()):
        raise _CheckFailedError(
            _("on {what} the output holds NaN: nn.MultiheadAttention gives NaN to a query "
              "whose keys are all blocked, so some query had nothing to attend to; "
              "check that True (may attend) became False (not blocked)")
            .format(what=what))


def torch_mha(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(mha, x, mask)`` -> the output ``(B, L, d_model)`` of the PyTorch module
    ``mha`` (``nn.MultiheadAttention``, ``batch_first=True``) as self-attention on ``x``
    under a course mask (True = may attend) broadcastable to ``(B, 1, L, L)``: causal
    ``(L, L)``, padding ``(B, 1, 1, L)`` or both. The reference is the course's module with
    the same weights (:func:`transformer_course.from_torch`) and the mask as it is."""
    def body(f: Callable) -> str:
        from ..interop import from_torch

        torch.manual_seed(50)
        mha = nn.MultiheadAttention(16, 4, batch_first=True).eval()
        ours = from_torch(mha)
        x = torch.randn(2, 5, 16)
        ids = torch.tensor([[3, 7, 2, 0, 0], [5, 1, 4, 6, 8]])
        causal, padding = _ref.causal_mask(5), _ref.padding_mask(ids)
        cases = [(_("a causal mask {shape}").format(shape=_shape(causal.shape)), causal),
                 (_("the padding mask {shape} of ids {ids}").format(
                     shape=_shape(padding.shape), ids=_ints(ids.tolist())), padding),
                 (_("causal and padding combined, {shape}").format(
                     shape=_shape((2, 1, 5, 5))), causal & padding)]
        for what, mask in cases:
            with torch.no_grad():
                expected = ours(x, x, x, mask=mask)[0]
                got = _call(f, mha, x.clone(), mask.clone(), what=what)
            if isinstance(got, tuple):
                got = _parts(got, 2, "(output, weights)", what=what)[0]
            got = _as_tensor(got, what=what)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError:
                if got.shape == expected.shape:
                    _explain_torch_mha(got, mha, x, mask, what)
                raise
        return _("nn.MultiheadAttention gives the course's outputs for causal, padding and "
                 "combined masks: the mask is inverted and given to every head")
    return _run("torch_mha", fn, body)


# --- local attention: a sliding window ---------------------------------------------------------

def _window(length: int, window: int) -> torch.Tensor:
    """``(L, L)``: True where 0 <= i - j < window."""
    i = torch.arange(length)[:, None]  # queries
    j = torch.arange(length)[None, :]  # keys
    return (j <= i) & (i - j < window)


def _explain_window(got: torch.Tensor, length: int, window: int, what: str) -> None:
    """Say what the first wrong entry means, after naming an off-by-one window."""
    if torch.equal(got, _window(length, window + 1)):
        raise _CheckFailedError(
            _("on {what} each query sees one position too many: the window of size {window} "
              "holds the query itself and the {before} positions before it")
            .format(what=what, window=_num(window), before=_num(window - 1)))
    if window > 1 and torch.equal(got, _window(length, window - 1)):
        raise _CheckFailedError(
            _("on {what} each query sees one position too few: the window of size {window} "
              "holds the query itself and the {before} positions before it")
            .format(what=what, window=_num(window), before=_num(window - 1)))
    expected = _window(length, window)
    i, j = (int(v) for v in (got != expected).nonzero()[0])
    if bool(got[i, j]) and j > i:
        raise _CheckFailedError(
            _("on {what} query {i} may attend to key {j}, which comes after it: a sliding "
              "window looks only at the past").format(what=what, i=_num(i), j=_num(j)))
    if bool(got[i, j]):
        raise _CheckFailedError(
            _("on {what} query {i} may attend to key {j}, {distance} positions back, outside "
              "the window of size {window}").format(what=what, i=_num(i), j=_num(j),
                                                    distance=_num(i - j),
                                                    window=_num(window)))
    raise _CheckFailedError(
        _("on {what} query {i} may not attend to key {j}, {distance} positions back, inside "
          "the window of size {window}").format(what=what, i=_num(i), j=_num(j),
                                                distance=_num(i - j), window=_num(window)))


def sliding_window_mask(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(L, window)`` -> the ``(L, L)`` boolean mask of causal local attention:
    query i may attend to key j when ``0 <= i - j < window`` (itself and the ``window - 1``
    positions before it). A window of 1 is the diagonal, a window of L or more the causal
    mask."""
    def body(f: Callable) -> str:
        for length, window in ((6, 3), (5, 1), (4, 10), (8, 4)):
            what = _("L = {length}, window = {window}").format(length=_num(length),
                                                               window=_num(window))
            got = _as_tensor(_call(f, length, window, what=what), what=what)
            expected = _window(length, window)
            if got.shape == expected.shape and got.dtype == torch.bool and not torch.equal(
                    got, expected):
                _explain_window(got, length, window, what)
            _compare(got, expected, what=what)
        return _("each query sees itself and the window - 1 positions before it, never the "
                 "future; a window of L or more is the causal mask")
    return _run("sliding_window_mask", fn, body)


# --- packing: several sequences in one row ------------------------------------------------------

def _segments(lengths: Sequence[int]) -> torch.Tensor:
    """The sequence each position of the pack belongs to: [0, 0, 0, 1, 1] for (3, 2)."""
    return torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))


def _packed(lengths: Sequence[int]) -> torch.Tensor:
    segment = _segments(lengths)
    return (segment[:, None] == segment[None, :]) & _ref.causal_mask(len(segment))


def _explain_packed(got: torch.Tensor, lengths: Sequence[int], what: str) -> None:
    """Say which sequences see each other, or which position is hidden from its own."""
    expected, segment = _packed(lengths), _segments(lengths)
    wrong = (got != expected).nonzero()
    i, j = (int(v) for v in wrong[0])
    count = len(wrong)
    if bool(got[i, j]) and segment[i] != segment[j]:
        raise _CheckFailedError(ngettext(
            "on {what} position {i} (sequence {a}) may attend to position {j} (sequence {b}): "
            "the sequences of a pack must not see each other ({count} entry is wrong)",
            "on {what} position {i} (sequence {a}) may attend to position {j} (sequence {b}): "
            "the sequences of a pack must not see each other ({count} entries are wrong)",
            count).format(what=what, i=_num(i), j=_num(j), a=_num(int(segment[i])),
                          b=_num(int(segment[j])), count=_num(count)))
    if bool(got[i, j]):
        raise _CheckFailedError(ngettext(
            "on {what} position {i} may attend to position {j}, later in its own sequence: "
            "inside each sequence the mask must stay causal ({count} entry is wrong)",
            "on {what} position {i} may attend to position {j}, later in its own sequence: "
            "inside each sequence the mask must stay causal ({count} entries are wrong)",
            count).format(what=what, i=_num(i), j=_num(j), count=_num(count)))
    raise _CheckFailedError(ngettext(
        "on {what} position {i} may not attend to position {j}, which is itself or an earlier "
        "token of its own sequence ({count} entry is wrong)",
        "on {what} position {i} may not attend to position {j}, which is itself or an earlier "
        "token of its own sequence ({count} entries are wrong)",
        count).format(what=what, i=_num(i), j=_num(j), count=_num(count)))


def packed_causal_mask(fn: Callable[[list[int]], torch.Tensor]) -> CheckResult:
    """Check ``fn(lengths)`` -> the ``(N, N)`` boolean mask of a pack of sequences of these
    lengths laid end to end (``N = sum(lengths)``): position i may attend to j when both
    belong to the same sequence and ``j <= i``, a block-diagonal causal mask. With it,
    every sequence of the pack gets the outputs it would get alone."""
    def body(f: Callable) -> str:
        for lengths in ((3, 2), (4,), (2, 1, 3)):
            what = _("lengths {lengths}").format(lengths=_ints(list(lengths)))
            got = _as_tensor(_call(f, list(lengths), what=what), what=what)
            expected = _packed(lengths)
            if got.shape == expected.shape and got.dtype == torch.bool and not torch.equal(
                    got, expected):
                _explain_packed(got, lengths, what)
            _compare(got, expected, what=what)
        return _("a causal block per sequence: each sequence of the pack is processed as if "
                 "it were alone")
    return _run("packed_causal_mask", fn, body)
