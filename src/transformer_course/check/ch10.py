"""Checkers of chapter 10's transfer exercises: a new idea applied somewhere new.

* :func:`label_smoothing_loss`: the cross-entropy against smoothed targets, written by hand
  and compared with ``F.cross_entropy(..., label_smoothing=epsilon)``;
* :func:`top_p_probabilities`: nucleus (top-p) sampling, the distribution that keeps the
  smallest set of most likely tokens whose probability reaches ``p``;
* :func:`kv_cache_bytes`: the memory of a KV cache, with grouped-query attention.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _kind,
    _num,
    _run,
    _shape,
)

__all__ = ["kv_cache_bytes", "label_smoothing_loss", "top_p_probabilities"]


def _close(got: torch.Tensor, other: torch.Tensor, atol: float = 1e-5) -> bool:
    """Whether ``got`` equals ``other`` (same shape, finite, within ``atol``)."""
    return (got.shape == other.shape and bool(torch.isfinite(got).all())
            and torch.allclose(got.double(), other.double(), atol=atol, rtol=1e-5))


# --- label smoothing ----------------------------------------------------------------------------

def _smoothed(logits: torch.Tensor, targets: torch.Tensor, epsilon: float, *,
              others_only: bool = False, keep: float | None = None) -> torch.Tensor:
    """Per-example cross-entropy against smoothed targets, in float64.

    ``others_only`` spreads ``epsilon`` over the ``V - 1`` wrong classes (a common variant,
    not PyTorch's); ``keep`` overrides the weight of the true class (``1 - epsilon`` with
    the uniform part forgotten)."""
    logp = torch.log_softmax(logits.double(), dim=-1)  # (N, V)
    vocab = logits.shape[-1]
    one_hot = F.one_hot(targets, vocab).double()  # (N, V)
    if others_only:
        q = (1 - epsilon) * one_hot + epsilon / (vocab - 1) * (1 - one_hot)
    elif keep is not None:
        q = keep * one_hot
    else:
        q = (1 - epsilon) * one_hot + epsilon / vocab
    return -(q * logp).sum(-1)  # (N,)


def _explain_smoothing(got: torch.Tensor, logits: torch.Tensor, targets: torch.Tensor,
                       epsilon: float, what: str) -> None:
    """Name the typical label-smoothing mistakes before the generic comparison."""
    per_example = _smoothed(logits, targets, epsilon)
    count = logits.shape[0]
    if not bool(torch.isfinite(got).all()):
        raise _CheckFailedError(
            _("on {what} the loss is not finite: log(softmax(logits)) underflows to log 0 = "
              "-inf for large logits; use torch.log_softmax, which subtracts the maximum "
              "first").format(what=what))
    if got.shape == per_example.shape and got.numel() > 1:
        raise _CheckFailedError(
            _("on {what} you returned one loss per example, shape {shape}: return their mean, "
              "a single number").format(what=what, shape=_shape(got.shape)))
    if got.numel() != 1:
        return
    value = got.reshape(())
    candidates = [
        (F.cross_entropy(logits.double(), targets).reshape(()),
         _("on {what} you returned the plain cross-entropy: epsilon = {epsilon} was ignored; "
           "the target puts 1 - epsilon on the true class and spreads epsilon over all "
           "classes")),
        (_smoothed(logits, targets, epsilon, others_only=True).mean(),
         _("on {what} epsilon is spread over the V - 1 wrong classes only; PyTorch's "
           "convention (and the exercise's) spreads epsilon / V over all V classes, the true "
           "one included: q = (1 - epsilon) one_hot + epsilon / V")),
        (_smoothed(logits, targets, epsilon, keep=1 - epsilon).mean(),
         _("on {what} only the true class's share 1 - epsilon is counted; add the uniform "
           "part: epsilon times the average of -log p over all V classes")),
        (per_example.sum(),
         _("on {what} you summed the losses of the {count} examples; take their mean")),
    ]
    for wrong, message in candidates:
        right = per_example.mean()
        if abs(float(wrong) - float(right)) > 1e-6 and abs(float(value) - float(wrong)) < 1e-5:
            raise _CheckFailedError(message.format(what=what, epsilon=_num(epsilon),
                                                   count=_num(count)))


def label_smoothing_loss(fn: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
                         ) -> CheckResult:
    """Check ``fn(logits, targets, epsilon)`` -> the mean cross-entropy against smoothed
    targets ``q = (1 - epsilon) one_hot(targets) + epsilon / V``, for ``logits (N, V)`` and
    integer ``targets (N,)``: a scalar tensor equal to
    ``F.cross_entropy(logits, targets, label_smoothing=epsilon)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(1001)
        cases = [
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.0), n=_num(6), v=_num(5)),
             torch.randn(6, 5, generator=g) * 2, torch.randint(0, 5, (6,), generator=g), 0.0),
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.1), n=_num(6), v=_num(5)),
             torch.randn(6, 5, generator=g) * 2, torch.randint(0, 5, (6,), generator=g), 0.1),
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.3), n=_num(8), v=_num(11)),
             torch.randn(8, 11, generator=g) * 3, torch.randint(0, 11, (8,), generator=g),
             0.3),
            (_("logits as large as {size} (does log(softmax) underflow?)").format(
                size=_num(200)),
             torch.randn(4, 7, generator=g) * 200, torch.randint(0, 7, (4,), generator=g),
             0.1),
        ]
        for what, logits, targets, epsilon in cases:
            expected = F.cross_entropy(logits.double(), targets, label_smoothing=epsilon)
            got = _as_tensor(_call(f, logits.clone(), targets.clone(), epsilon, what=what),
                             what=what)
            _explain_smoothing(got.double(), logits, targets, epsilon, what)
            if got.numel() == 1:
                got = got.reshape(())
            _compare(got, expected, what=what, atol=1e-4)
        return _("equals F.cross_entropy(..., label_smoothing=epsilon): 1 - epsilon on the "
                 "true class, epsilon / V on every class, averaged over the examples")
    return _run("label_smoothing_loss", fn, body)


# --- nucleus (top-p) sampling ---------------------------------------------------------------

def _top_p(logits: torch.Tensor, p: float, *, include_crossing: bool = True,
           renormalise: bool = True, sort: bool = True) -> torch.Tensor:
    """The reference (and, with a flag off, a typical mistake), in float64."""
    probs = torch.softmax(logits.double(), dim=-1)  # (..., V)
    if sort:
        ordered, order = probs.sort(dim=-1, descending=True)
    else:
        ordered, order = probs, torch.arange(probs.shape[-1]).expand_as(probs)
    total = ordered.cumsum(dim=-1)
    before = total - ordered  # the mass of the tokens ranked before each one
    keep_sorted = before < p if include_crossing else total < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True) if renormalise else kept


def _top_p_cases() -> list[tuple[str, torch.Tensor, float]]:
    g = torch.Generator().manual_seed(1002)
    exact = torch.tensor([0.125, 0.5, 0.125, 0.25]).log()  # the largest is not first
    return [
        (_("probabilities {probs} with p = {p}").format(
            probs="(" + ", ".join(_num(x) for x in (0.125, 0.5, 0.125, 0.25)) + ")",
            p=_num(0.7)),
         exact, 0.7),
        (_("a {shape} batch of logits with p = {p}").format(shape=_shape((3, 10)), p=_num(0.9)),
         torch.randn(3, 10, generator=g) * 2, 0.9),
        (_("a {shape} batch of logits with p = {p}").format(shape=_shape((2, 3, 8)),
                                                            p=_num(0.5)),
         torch.randn(2, 3, 8, generator=g) * 2, 0.5),
        (_("p = {p} (only the most likely token)").format(p=_num(0.01)),
         torch.randn(2, 6, generator=g) * 2, 0.01),
        (_("p = {p} (every token)").format(p=_num(1)), torch.randn(2, 6, generator=g), 1.0),
    ]


def _explain_top_p(got: torch.Tensor, logits: torch.Tensor, p: float, what: str) -> None:
    """Name the typical top-p mistakes before the generic comparison."""
    expected = _top_p(logits, p)
    if got.shape != expected.shape:
        return
    if not bool(torch.isfinite(got).all()):
        if bool((got == float("-inf")).any()):
            raise _CheckFailedError(
                _("on {what} the answer holds -inf: return probabilities (zero for the "
                  "tokens left out, the others renormalised), not masked logits")
                .format(what=what))
        return
    if _close(got, expected):
        return
    mistakes = [
        (_top_p(logits, p, renormalise=False),
         _("on {what} the kept probabilities are right but do not sum to 1: divide them by "
           "their total")),
        (_top_p(logits, p, include_crossing=False),
         _("on {what} the token that makes the total reach p is left out; keep the smallest "
           "set of most likely tokens whose probability is at least p, that token included")),
        (_top_p(logits, p, sort=False),
         _("on {what} the cumulative sum runs in vocabulary order; sort the tokens by "
           "probability, most likely first, before adding up")),
        (_top_p(logits, p, sort=False, include_crossing=False),
         _("on {what} the cumulative sum runs in vocabulary order; sort the tokens by "
           "probability, most likely first, before adding up")),
        (torch.softmax(logits.double(), dim=-1),
         _("on {what} you returned the whole softmax: the tokens outside the nucleus must get "
           "probability 0")),
    ]
    for wrong, message in mistakes:
        if not _close(wrong, expected) and _close(got, wrong):
            raise _CheckFailedError(message.format(what=what))


def top_p_probabilities(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(logits, p)`` -> ``(..., V)`` probabilities of nucleus sampling: the
    softmax of ``logits``, restricted to the smallest set of most likely tokens whose
    total probability is at least ``p`` (the token that crosses ``p`` is kept), then
    renormalised so that each row sums to 1."""
    def body(f: Callable) -> str:
        for what, logits, p in _top_p_cases():
            got = _as_tensor(_call(f, logits.clone(), p, what=what), what=what)
            _explain_top_p(got.double(), logits, p, what)
            _compare(got, _top_p(logits, p), what=what, atol=1e-5)
        return _("the smallest set of most likely tokens reaching p, renormalised: p = 1 is "
                 "the softmax, a tiny p the most likely token")
    return _run("top_p_probabilities", fn, body)


# --- the size of a KV cache -----------------------------------------------------------------

_CACHE_CASES = [
    # (num_layers, d_model, num_heads, num_kv_heads, length, batch_size, bytes_per_value)
    (6, 64, 4, 2, 10, 3, 4),  # every typical mistake gives a different number here
    (2, 64, 4, 4, 256, 1, 4),  # the chapter's model, 256 positions, float32
    (12, 768, 12, 12, 1024, 8, 2),  # GPT-2 small, 8 sequences of 1024 tokens, float16
    (80, 8192, 64, 8, 4096, 1, 2),  # a 70-billion-parameter model with 8 key-value heads
    (24, 2048, 16, 1, 2048, 4, 2),  # multi-query attention: one key-value head
]


def _cache_bytes(layers: int, d_model: int, heads: int, kv_heads: int, length: int,
                 batch: int, size: int) -> int:
    return 2 * layers * kv_heads * (d_model // heads) * length * batch * size


def _as_count(got: object, *, what: str) -> int:
    """A whole number from an int, an integral float or a one-element tensor."""
    value = got
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.device.type != "meta" \
            and not got.is_complex():
        value = got.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _CheckFailedError(_("on {what} expected a number of bytes, got {kind}")
                                .format(what=what, kind=_kind(got)))
    number = float(value)
    if not math.isfinite(number) or number != round(number):
        raise _CheckFailedError(
            _("on {what} got {value}: a number of bytes is a whole number")
            .format(what=what, value=_num(number)))
    return int(value) if isinstance(value, numbers.Integral) else round(number)


def kv_cache_bytes(fn: Callable[..., int]) -> CheckResult:
    """Check ``fn(num_layers, d_model, num_heads, num_kv_heads, length, batch_size,
    bytes_per_value)`` -> the bytes of a KV cache: every layer keeps the keys and the values
    of ``num_kv_heads`` heads of size ``d_model / num_heads`` for ``length`` positions of
    ``batch_size`` sequences (``num_kv_heads = num_heads`` without grouped-query
    attention)."""
    def body(f: Callable) -> str:
        for case in _CACHE_CASES:
            layers, d_model, heads, kv_heads, length, batch, size = case
            what = _("{layers} layers, d_model = {d_model}, {heads} heads of which {kv} for "
                     "keys and values, {length} positions, batch {batch}, {size} bytes per "
                     "number").format(layers=_num(layers), d_model=_num(d_model),
                                      heads=_num(heads), kv=_num(kv_heads),
                                      length=_num(length), batch=_num(batch), size=_num(size))
            expected = _cache_bytes(*case)
            got = _as_count(_call(f, *case, what=what), what=what)
            if got == expected:
                continue
            facts = dict(what=what, got=_num(got), expected=_num(expected))
            mistakes = [
                (expected // 2, _("on {what} got {got} bytes, half of {expected}: the cache "
                                  "keeps the values as well as the keys")),
                (_cache_bytes(layers, d_model, heads, heads, length, batch, size),
                 _("on {what} got {got} bytes instead of {expected}: with grouped-query "
                   "attention only the num_kv_heads key-value heads are cached, each of size "
                   "d_model / num_heads")),
                (expected // layers, _("on {what} got {got} bytes instead of {expected}: "
                                       "every layer keeps its own keys and values")),
                (expected // batch, _("on {what} got {got} bytes instead of {expected}: each "
                                      "sequence of the batch has its own cache")),
                (expected // size, _("on {what} got {got} instead of {expected}: multiply the "
                                     "number of values by bytes_per_value to get bytes")),
            ]
            for wrong, message in mistakes:
                if wrong != expected and got == wrong:
                    raise _CheckFailedError(message.format(**facts))
            raise _CheckFailedError(_("on {what} got {got} bytes, expected {expected}")
                                    .format(**facts))
        return _("2 x layers x key-value heads x d_head x positions x batch x bytes: "
                 "grouped-query attention divides the cache by num_heads / num_kv_heads")
    return _run("kv_cache_bytes", fn, body)
