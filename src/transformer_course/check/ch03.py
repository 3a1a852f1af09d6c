"""Checkers of chapter 3's transfer exercises: a new idea applied somewhere new.

* :func:`lookup_spread`: the soft answer of a dictionary and how much the values it blends
  disagree, their standard deviation under the same weights;
* :func:`chunked_attention`: scaled dot-product attention computed one block of keys at a
  time, with a running maximum and running sums, never holding the whole score matrix;
* :func:`cosine_lookup`: a soft dictionary whose similarity is the cosine of the angle
  between the query and each key (attention that sees orientation only);
* :func:`beta_for_weight`: the inverse temperature at which the best key gets a chosen
  weight;
* :func:`score_variance`: the variance of ``q · k`` predicted for inputs of any mean and
  variance;
* :func:`mha_projections`: the queries, keys and values of ``nn.MultiheadAttention`` read
  from its own parameters, packed or separate, for self- and cross-attention.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .. import functional as _ref
from ..i18n import format_number, get_language
from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _kind,
    _num,
    _parts,
    _run,
    _shape,
)

__all__ = ["beta_for_weight", "chunked_attention", "cosine_lookup", "lookup_spread",
           "mha_projections", "score_variance"]


def _real(got: object, *, what: str) -> float:
    """A number the reader returned (a Python number or a one-element tensor), finite."""
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
    value = float(got)
    if not math.isfinite(value):
        raise _CheckFailedError(
            _("on {what} it returned {value}, expected a finite number").format(
                what=what, value=_num(value)))
    return value


def _numbers(values: list[float], decimals: int) -> str:
    """A list of numbers in parentheses, separated by semicolons where the decimal
    separator is a comma (``(1,8; 0,9)``)."""
    separator = ", " if "," not in format_number(0.5) else (
        "\u202f; " if get_language() == "fr" else "; ")  # French: a thin space before ;
    return "(" + separator.join(format_number(v, decimals) for v in values) + ")"


def _close(a: float, b: float, *, rel: float = 1e-4) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


# --- the soft answer and its spread ------------------------------------------------------------

def _spread_reference(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                      beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    weights = _ref.soft_argmax(keys @ query, beta)                 # (m,): one per key
    mean = weights @ values                                        # (d_v,)
    spread = (weights @ (values - mean) ** 2).sqrt()               # (d_v,)
    return mean, spread


def lookup_spread(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(query, keys, values, beta) -> (mean, spread)``: the soft answer of a
    dictionary, ``mean = sum_j a_j v_j`` with ``a = softmax(beta * keys @ query)``, and for
    every value feature the standard deviation of the values under the same weights,
    ``spread = sqrt(sum_j a_j (v_j - mean)**2)``; ``query`` ``(d,)``, ``keys`` ``(m, d)``,
    ``values`` ``(m, d_v)``, both results ``(d_v,)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(32)
        keys = torch.randn(5, 3, generator=g, dtype=torch.float64)
        values = torch.randn(5, 2, generator=g, dtype=torch.float64) * 10 + 50
        query = torch.randn(3, generator=g, dtype=torch.float64)
        cases = [
            (_("soft retrieval with beta = {beta}").format(beta=_num(1)), query, keys, values,
             1.0),
            (_("beta = 0"), query, keys, values, 0.0),
            (_("soft retrieval with beta = {beta}").format(beta=_num(40)), query, keys, values,
             40.0),
            (_("{m} keys in {d} dimensions, values of size {d_v}, beta = {beta}").format(
                m=_num(7), d=_num(4), d_v=_num(3), beta=_num(2)),
             torch.randn(4, generator=g, dtype=torch.float64),
             torch.randn(7, 4, generator=g, dtype=torch.float64),
             torch.randn(7, 3, generator=g, dtype=torch.float64) * 5, 2.0),
        ]
        for what, q, k, v, beta in cases:
            got = _call(f, q.clone(), k.clone(), v.clone(), beta, what=what)
            if isinstance(got, torch.Tensor):
                raise _CheckFailedError(
                    _("on {what} it returned one tensor, expected a tuple (mean, spread): the "
                      "soft answer and the standard deviation of the values").format(what=what))
            mean, spread = _parts(got, 2, "(mean, spread)", what=what)
            expected_mean, expected_spread = _spread_reference(q, k, v, beta)
            _compare(mean, expected_mean,
                     what=_("{what} (the mean)").format(what=what), atol=1e-4)
            what_spread = _("{what} (the spread)").format(what=what)
            try:
                _compare(spread, expected_spread, what=what_spread, atol=1e-4)
            except _CheckFailedError:
                _explain_spread(spread, q, k, v, beta, expected_mean, expected_spread,
                                what_spread)
                raise
        return _("the soft answer is the mean of the values under the weights, and their "
                 "spread says how much the blended values disagree")
    return _run("lookup_spread", fn, body)


def _explain_spread(got: object, query: torch.Tensor, keys: torch.Tensor,
                    values: torch.Tensor, beta: float, mean: torch.Tensor,
                    spread: torch.Tensor, what: str) -> None:
    """Name the classic mistakes of the weighted standard deviation."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if not got.is_floating_point() or got.shape != spread.shape:
        return
    got = got.to(torch.float64)
    weights = _ref.soft_argmax(keys @ query, beta)
    plain = values.mean(dim=0)
    candidates = (
        (spread**2, _("on {what} it returned the variance: the spread is its square root")),
        (values.std(dim=0, correction=0),
         _("on {what} every value counts the same: weigh each squared deviation by the weight "
           "a_j of its key")),
        (values.std(dim=0),
         _("on {what} every value counts the same: weigh each squared deviation by the weight "
           "a_j of its key")),
        ((weights @ (values - plain) ** 2).sqrt(),
         _("on {what} the deviations are measured from the plain mean of the values: measure "
           "them from the soft answer, the weighted mean")),
        ((weights @ (values - mean).abs()),
         _("on {what} it averages the absolute deviations: the standard deviation is the "
           "square root of the weighted mean of the squared deviations")),
    )
    for wrong, message in candidates:
        if torch.allclose(got, wrong, atol=1e-4) and not torch.allclose(wrong, spread,
                                                                          atol=1e-4):
            raise _CheckFailedError(message.format(what=what))


# --- attention one block of keys at a time --------------------------------------------------------

class _Watch(TorchDispatchMode):
    """Records the shape of every tensor the reader's function creates."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for item in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(item, torch.Tensor):
                self.shapes.append(tuple(item.shape))
        return out


def _holds_every_score(shape: tuple[int, ...], l_q: int, l_k: int) -> bool:
    """Whether a tensor of this shape has room for a score per query and key: a dimension of
    size ``L_q`` and another of size ``L_k``, wherever they are (a trailing dimension of 1
    or of ``d_k`` added behind them hides nothing)."""
    return any(size == l_q and any(other == l_k for j, other in enumerate(shape) if j != i)
               for i, size in enumerate(shape))


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: float | None = None,
          ) -> torch.Tensor:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    weights = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1)  # (..., L_q, L_k)
    return weights @ v  # (..., L_q, d_v)


def _blocks(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, chunk: int, *,
            rescale: bool = True, normalise: bool = True, average: bool = False
            ) -> torch.Tensor:
    """Chunked attention and its classic mistakes: old sums not rescaled when the maximum
    grows, no final division, or each block normalised alone and the blocks averaged."""
    scale = 1 / math.sqrt(q.shape[-1])
    top = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)  # (..., L_q, 1)
    total = torch.zeros_like(top)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)  # (..., L_q, d_v)
    outputs = []
    for start in range(0, k.shape[-2], chunk):
        s = q @ k[..., start:start + chunk, :].transpose(-2, -1) * scale  # (..., L_q, c)
        block_values = v[..., start:start + chunk, :]
        if average:
            outputs.append(torch.softmax(s, dim=-1) @ block_values)
            continue
        new_top = torch.maximum(top, s.max(dim=-1, keepdim=True).values)
        keep = torch.exp(top - new_top) if rescale else torch.ones_like(top)
        e = torch.exp(s - new_top)
        total = total * keep + e.sum(dim=-1, keepdim=True)
        acc = acc * keep + e @ block_values
        top = new_top
    if average:
        return torch.stack(outputs).mean(dim=0)
    return acc / total if normalise else acc


def chunked_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(Q, K, V, chunk)`` -> ``softmax(Q K^T / sqrt(d_k)) V`` for ``Q``
    ``(..., L_q, d_k)``, ``K`` ``(..., L_k, d_k)`` and ``V`` ``(..., L_k, d_v)``, computed
    ``chunk`` keys at a time: the checker watches every tensor the function creates, and one
    with a dimension of ``L_q`` and another of ``L_k`` (room for the whole score matrix)
    fails, and so does one with a dimension of ``L_k`` and none of ``d_k`` or ``d_v`` (the
    scores of every key for some query).
    One case has scores above a thousand (up to about 1,200), past the largest number whose
    exponential float64 can hold (about 709.8), so the running maximum is needed."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(33)

        def draw(*shape: int, scale: float = 1.0) -> torch.Tensor:
            return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

        q, k, v = draw(2, 3, 5), draw(2, 11, 5), draw(2, 11, 4)
        cases = [
            (_("Q {q}, K {k}, V {v}, chunk = {chunk}"), q, k, v, 4),
            (_("Q {q}, K {k}, V {v}, chunk = {chunk}"), q, k, v, 1),
            (_("Q {q}, K {k}, V {v}, chunk = {chunk} (one block)"), q, k, v, 16),
            (_("Q {q}, K {k}, V {v}, chunk = {chunk}"), draw(3, 5), draw(11, 5), draw(11, 4), 3),
            (_("scores up to about {big}: Q {q}, K {k}, V {v}, chunk = {chunk}"),
             draw(2, 3, 5, scale=25), draw(2, 11, 5, scale=25), v, 4),
        ]
        for template, q, k, v, chunk in cases:
            big = float((q @ k.transpose(-2, -1)).max() / math.sqrt(q.shape[-1]))  # the top score
            what = template.format(q=_shape(q.shape), k=_shape(k.shape), v=_shape(v.shape),
                                   chunk=_num(chunk), big=_num(round(big, -2)))
            watch = _Watch()
            with watch:
                got = _call(f, q.clone(), k.clone(), v.clone(), chunk, what=what)
            l_q, l_k = q.shape[-2], k.shape[-2]
            full = [shape for shape in watch.shapes if _holds_every_score(shape, l_q, l_k)]
            expected = _sdpa(q, k, v)
            try:
                _compare(got, expected, what=what, atol=1e-6)
            except _CheckFailedError:
                _explain_chunked(got, q, k, v, chunk, what)
                raise
            if full and chunk < l_k:
                raise _CheckFailedError(
                    _("on {what} it built a tensor of shape {shape}, the whole score matrix: "
                      "keep only the scores of one block of {chunk} keys at a time").format(
                        what=what, shape=_shape(full[0]), chunk=_num(chunk)))
            widths = {q.shape[-1], v.shape[-1]}  # d_k and d_v: keys and values, not scores
            rows = [shape for shape in watch.shapes
                    if l_k in shape and not widths.intersection(shape)]
            if rows and chunk < l_k:
                raise _CheckFailedError(
                    _("on {what} it built a tensor of shape {shape}, the scores of every key "
                      "for a query: keep only the scores of one block of {chunk} keys at a "
                      "time").format(what=what, shape=_shape(rows[0]), chunk=_num(chunk)))
        return _("the same output as scaled dot-product attention, one block of keys at a "
                 "time, with a running maximum and running sums")
    return _run("chunked_attention", fn, body)


def _explain_chunked(got: object, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     chunk: int, what: str) -> None:
    """Name the classic mistakes of attention computed block by block."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    expected = _sdpa(q, k, v)
    if not got.is_floating_point() or got.shape != expected.shape:
        return
    if not bool(torch.isfinite(got).all()):
        raise _CheckFailedError(
            _("on {what} the result is not finite: subtract the running maximum before the "
              "exponential, and when it grows multiply the old sums by exp(m_old - m_new)")
            .format(what=what))
    got = got.to(torch.float64)
    candidates = (
        (_sdpa(q, k, v, scale=1.0),
         _("on {what} the scores are not divided by sqrt(d_k) = {root}")),
        (_blocks(q, k, v, chunk, rescale=False),
         _("on {what} the sums of the earlier blocks were not rescaled when the maximum grew: "
           "multiply them by exp(m_old - m_new)")),
        (_blocks(q, k, v, chunk, normalise=False),
         _("on {what} the weighted sum of the values is not divided by the sum of the "
           "exponentials")),
        (_blocks(q, k, v, chunk, average=True),
         _("on {what} each block is normalised on its own and the blocks are averaged: a "
           "block's share of the weight depends on its sum of exponentials, not on its "
           "size")),
    )
    for wrong, message in candidates:
        if bool(torch.isfinite(wrong).all()) and torch.allclose(got, wrong, atol=1e-6) \
                and not torch.allclose(wrong, expected, atol=1e-6):
            raise _CheckFailedError(message.format(what=what,
                                                   root=format_number(math.sqrt(q.shape[-1]),
                                                                      2)))


# --- a soft dictionary that compares directions only --------------------------------------------

def _cosine_reference(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                      beta: float) -> torch.Tensor:
    cosines = torch.nn.functional.cosine_similarity(keys, query[None], dim=-1)  # (m,)
    return _ref.soft_argmax(cosines, beta) @ values


def _explain_cosine(got: torch.Tensor, query: torch.Tensor, keys: torch.Tensor,
                    values: torch.Tensor, beta: float, what: str) -> None:
    """Name the classic mistakes: a plain dot product, one side not normalised, β left out."""
    unit_q = query / query.norm()
    unit_k = keys / keys.norm(dim=-1, keepdim=True)
    cosines = unit_k @ unit_q
    candidates = (
        (keys @ query * beta,
         _("on {what} it matches the plain dot product q · k: divide each score by |q| |k| "
           "so that only the angle counts")),
        (keys @ unit_q * beta,
         _("on {what} the keys are not normalised: a long key still gets a large score "
           "whatever its direction")),
        (unit_k @ query * beta,
         _("on {what} the query is not normalised: every score is |q| = {norm} times its "
           "cosine, as if beta were {norm} times larger")),
        (cosines,
         _("on {what} the cosines are not multiplied by beta = {beta}")),
    )
    for scores, message in candidates:
        wrong = torch.softmax(scores, dim=-1) @ values
        if got.shape == wrong.shape and torch.allclose(got.to(wrong.dtype), wrong, atol=1e-5):
            norm = format_number(query.norm().item(), 2)
            raise _CheckFailedError(message.format(what=what, norm=norm, beta=_num(beta)))


def cosine_lookup(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(query, keys, values, beta)`` -> ``softmax(beta * cos(query, keys)) @ values``:
    a soft dictionary whose score is the cosine of the angle between the query ``(d,)`` and
    each key (a row of ``keys`` ``(m, d)``), returning a ``(d_v,)`` blend of the rows of
    ``values`` ``(m, d_v)``. The cases hold keys and queries of very different lengths, so
    that a plain dot product, or a cosine that normalises one side only, gives another
    answer."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(31)
        keys = torch.randn(5, 3, generator=g)
        keys = keys * torch.tensor([0.5, 4.0, 1.0, 0.3, 2.0])[:, None]  # lengths far apart
        values = torch.randn(5, 2, generator=g)
        query = torch.randn(3, generator=g) * 2.5
        lengths = keys.norm(dim=-1)
        wide_keys = torch.randn(6, 8, generator=g) * (torch.rand(6, 1, generator=g) * 4 + 0.2)
        cases = [
            (_("a query of length {length} and keys of lengths {low} to {high}, beta = {beta}")
             .format(length=format_number(query.norm().item(), 2),
                     low=format_number(lengths.min().item(), 2),
                     high=format_number(lengths.max().item(), 2), beta=_num(4.0)),
             query, keys, values, 4.0),
            (_("beta = 0"), query, keys, values, 0.0),
            (_("the same query ten times longer, beta = {beta}").format(beta=_num(4.0)),
             query * 10, keys, values, 4.0),
            (_("{m} keys in {d} dimensions, beta = {beta}").format(m=_num(6), d=_num(8),
                                                                 beta=_num(20.0)),
             torch.randn(8, generator=g), wide_keys, torch.randn(6, 4, generator=g), 20.0),
        ]
        for what, q, k, v, beta in cases:
            expected = _cosine_reference(q, k, v, beta)
            got = _call(f, q.clone(), k.clone(), v.clone(), beta, what=what)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor):
                    _explain_cosine(_as_tensor(got, what=what), q, k, v, beta, what)
                raise
        return _("the weights depend on the angles only: lengthening the query or a key "
                 "changes nothing")
    return _run("cosine_lookup", fn, body)


# --- the inverse temperature for a given weight -------------------------------------------------

def _largest_weight(scores: torch.Tensor, beta: float) -> float:
    return torch.softmax(beta * scores.to(torch.float64), dim=-1).max().item()


def _solve_beta(scores: torch.Tensor, target: float) -> float:
    """The β >= 0 at which the largest weight of softmax(β · scores) is ``target``
    (bisection: that weight grows from 1/m at β = 0 towards 1)."""
    low, high = 0.0, 1.0
    while _largest_weight(scores, high) < target:
        high *= 2.0
    for _step in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if _largest_weight(scores, middle) < target else (low, middle)
    return (low + high) / 2


def beta_for_weight(fn: Callable[[torch.Tensor, float], object]) -> CheckResult:
    """Check ``fn(scores, target)`` -> the inverse temperature ``beta >= 0`` (a number) at
    which the best key gets the weight ``target`` in ``softmax(beta * scores)``, for 2 to 6
    keys and targets from 0.5 to 0.99 (within 0.001)."""
    def body(f: Callable) -> str:
        recipe = torch.tensor([1.8, 0.9, 0.18, 0.99, 1.17])  # the recipe book's scores
        cases = [
            (torch.tensor([0.0, 1.0]), 0.9),
            (recipe, 0.5),
            (recipe, 0.9),
            (torch.tensor([0.3, -1.2, 2.0, 1.9, 0.0, 0.5]), 0.99),
        ]
        for scores, target in cases:
            what = _("scores {scores} and target {target}").format(
                scores=_numbers(scores.tolist(), 2),
                target=_num(target))
            beta = _real(_call(f, scores.clone(), target, what=what), what=what)
            if beta < 0:
                raise _CheckFailedError(
                    _("on {what} it returned beta = {beta}: a negative beta favours the worst "
                      "key; the answer is positive").format(what=what, beta=_num(beta)))
            weight = _largest_weight(scores, beta)
            if abs(weight - target) <= 1e-3:
                continue
            expected = _solve_beta(scores, target)
            if len(scores) > 2:
                top2 = scores.topk(2).values.tolist()
                two_keys = math.log(target / (1 - target)) / (top2[0] - top2[1])
                if _close(beta, two_keys, rel=1e-3):
                    raise _CheckFailedError(
                        _("on {what} it returned {beta}, the answer for two keys only: with "
                          "{m} keys the others share the rest of the weight, so beta must be "
                          "{expected}").format(what=what, beta=format_number(beta, 3),
                                               m=_num(len(scores)),
                                               expected=format_number(expected, 3)))
            if beta > 0 and abs(_largest_weight(scores, 1 / beta) - target) <= 1e-3:
                raise _CheckFailedError(
                    _("on {what} it returned {beta}, which is the temperature T = 1 / beta: "
                      "return beta = {expected}").format(
                        what=what, beta=format_number(beta, 3),
                        expected=format_number(expected, 3)))
            raise _CheckFailedError(
                _("on {what} beta = {beta} gives the best key the weight {weight}, expected "
                  "{target} (at beta = {expected})").format(
                    what=what, beta=format_number(beta, 3), weight=format_number(weight, 4),
                    target=_num(target), expected=format_number(expected, 3)))
        return _("the best key gets exactly the weight asked for, with 2 keys or with many")
    return _run("beta_for_weight", fn, body)


# --- predicting the variance of q . k -----------------------------------------------------------

def score_variance(fn: Callable[..., object]) -> CheckResult:
    """Check ``fn(d, mean_q, var_q, mean_k, var_k)`` -> the variance of ``q · k`` when the
    ``2 d`` entries of ``q`` and ``k`` are independent, those of ``q`` with mean ``mean_q``
    and variance ``var_q``, those of ``k`` with ``mean_k`` and ``var_k``:
    ``d * (var_q * var_k + var_q * mean_k**2 + var_k * mean_q**2)``."""
    def body(f: Callable) -> str:
        cases = [(64, 0.0, 1.0, 0.0, 1.0), (16, 0.0, 4.0, 0.0, 0.25), (256, 0.0, 2.0, 0.0, 2.0),
                 (10, 1.0, 1.0, 0.0, 1.0), (8, 0.5, 2.0, -1.0, 3.0)]
        for d, mq, vq, mk, vk in cases:
            what = _("d = {d}, q of mean {mq} and variance {vq}, k of mean {mk} and variance "
                     "{vk}").format(d=_num(d), mq=_num(mq), vq=_num(vq), mk=_num(mk), vk=_num(vk))
            got = _real(_call(f, d, mq, vq, mk, vk, what=what), what=what)
            expected = d * (vq * vk + vq * mk**2 + vk * mq**2)
            if _close(got, expected, rel=1e-6):
                continue
            mistakes = (
                (d * vq * vk, _("on {what} it returned {got}, expected {expected}: the means "
                                "count too, each product q_j k_j also varies by "
                                "var_q mean_k² + var_k mean_q²")),
                (vq * vk + vq * mk**2 + vk * mq**2,
                 _("on {what} it returned {got}, the variance of one product q_j k_j: the d "
                   "independent products add their variances, expected {expected}")),
                (d * (vq + mq**2) * (vk + mk**2),
                 _("on {what} it returned {got}, the mean of (q_j k_j)² times d: subtract the "
                   "square of the mean of q_j k_j, expected {expected}")),
                (d * (vq + vk),
                 _("on {what} it returned {got}: the variance of a product is not the sum of "
                   "the variances, expected {expected}")),
                (math.sqrt(expected) if expected > 0 else -1.0,
                 _("on {what} it returned {got}, the standard deviation: the variance is its "
                   "square, {expected}")),
            )
            for wrong, message in mistakes:
                if _close(got, wrong, rel=1e-6) and not _close(wrong, expected, rel=1e-6):
                    raise _CheckFailedError(message.format(what=what, got=_num(got),
                                                           expected=_num(expected)))
            raise _CheckFailedError(
                _("on {what} it returned {got}, expected {expected}").format(
                    what=what, got=_num(got), expected=_num(expected)))
        return _("d times the variance of one product, the means included")
    return _run("score_variance", fn, body)


# --- the projections of nn.MultiheadAttention, from its own parameters ----------------------------

def _torch_weights(mha: torch.nn.MultiheadAttention
                   ) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
    """W_q, W_k, W_v and their biases as PyTorch stores them: one packed ``(3E, E)``
    ``in_proj_weight`` when query, key and value all have ``E`` features, else three weights
    ``(E, E)``, ``(E, kdim)``, ``(E, vdim)``; one ``(3E,)`` ``in_proj_bias`` (or None)."""
    e = mha.embed_dim
    if mha.in_proj_weight is not None:
        weights = list(mha.in_proj_weight.detach().double().split(e))
    else:
        weights = [mha.q_proj_weight.detach().double(), mha.k_proj_weight.detach().double(),
                   mha.v_proj_weight.detach().double()]
    if mha.in_proj_bias is None:
        return weights, [None, None, None]
    return weights, list(mha.in_proj_bias.detach().double().split(e))


def _project(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    y = x.double() @ w.T  # (B, L, E), as nn.Linear computes it
    return y if b is None else y + b


def mha_projections(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(mha, query, key, value) -> (q, k, v)``: the queries, keys and values that an
    ``nn.MultiheadAttention(embed_dim, num_heads, batch_first=True, ...)`` computes from
    ``query`` ``(B, L_q, embed_dim)``, ``key`` ``(B, L_k, kdim)`` and ``value``
    ``(B, L_k, vdim)`` before it splits them into heads, each ``(B, L, embed_dim)``, read
    from the module's own parameters.

    When ``kdim`` and ``vdim`` equal ``embed_dim`` PyTorch packs the three weights into
    ``in_proj_weight`` ``(3 embed_dim, embed_dim)``; otherwise ``in_proj_weight`` is None and
    it keeps ``q_proj_weight``, ``k_proj_weight`` ``(embed_dim, kdim)`` and
    ``v_proj_weight`` ``(embed_dim, vdim)``. In both cases one ``in_proj_bias``
    ``(3 embed_dim,)`` holds the three biases (None with ``bias=False``).
    """
    def body(f: Callable) -> str:
        torch.manual_seed(301)  # the modules' initial weights, the same on every run
        cases = [
            (_("self-attention with embed_dim = {e} (query, key and value are one tensor)")
             .format(e=_num(8)), 8, None, None, True, (2, 5), (2, 5), True),
            (_("cross-attention with embed_dim = {e} (three different tensors of one size)")
             .format(e=_num(8)), 8, None, None, True, (2, 5), (2, 5), False),
            (_("embed_dim = {e}, kdim = {k}, vdim = {v}").format(e=_num(8), k=_num(5),
                                                                 v=_num(3)),
             8, 5, 3, True, (2, 4), (2, 6), False),
            (_("embed_dim = {e}, kdim = {k}, vdim = {v}, without bias").format(
                e=_num(6), k=_num(4), v=_num(7)), 6, 4, 7, False, (1, 3), (1, 5), False),
            (_("embed_dim = {e}, kdim = vdim = {e} given explicitly, without bias").format(
                e=_num(6)), 6, 6, 6, False, (2, 3), (2, 4), False),
        ]
        for what, e, kdim, vdim, bias, (b, l_q), (_b, l_k), same in cases:
            mha = torch.nn.MultiheadAttention(e, 2, batch_first=True, kdim=kdim, vdim=vdim,
                                              bias=bias)
            if bias:  # PyTorch starts its biases at zero: make them count
                with torch.no_grad():
                    mha.in_proj_bias.normal_()
            query = torch.randn(b, l_q, e)
            key = query if same else torch.randn(b, l_k, kdim or e)
            value = query if same else torch.randn(b, l_k, vdim or e)
            try:
                got = _call(f, mha, query.clone(), key.clone(), value.clone(), what=what)
            except _CheckFailedError as failure:
                if mha.in_proj_weight is None:
                    raise _CheckFailedError(
                        _("{failure}; with kdim or vdim different from embed_dim, "
                          "in_proj_weight is None and PyTorch keeps q_proj_weight, "
                          "k_proj_weight and v_proj_weight").format(failure=failure)) from None
                raise
            parts = _parts(got, 3, "(q, k, v)", what=what)
            weights, biases = _torch_weights(mha)
            inputs = (query, key, value)
            expected = [_project(x, w, bb) for x, w, bb in zip(inputs, weights, biases,
                                                               strict=True)]
            for name, part, x, exp in zip("qkv", parts, inputs, expected, strict=True):
                what_part = _("{name} of {what}").format(what=what, name=name)
                try:
                    _compare(part, exp, what=what_part, atol=1e-4)
                except _CheckFailedError:
                    _explain_projection(part, name, x, inputs, weights, biases, e,
                                        mha.num_heads, what_part)
                    raise
        return _("PyTorch packs W_q, W_k and W_v into in_proj_weight only when query, key "
                 "and value have embed_dim features; otherwise it keeps three weights, and "
                 "one in_proj_bias holds the three biases")
    return _run("mha_projections", fn, body)


def _explain_projection(got: object, name: str, x: torch.Tensor,
                        inputs: tuple[torch.Tensor, ...], weights: list[torch.Tensor],
                        biases: list[torch.Tensor | None], e: int, heads: int,
                        what: str) -> None:
    """Name the classic mistakes of reading PyTorch's projection weights."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if got.dim() == 4 and got.shape[1] == heads and got.shape[-1] == e // heads:
        raise _CheckFailedError(
            _("on {what} the heads are already split, shape {shape}: return the projection "
              "before the split, (B, L, embed_dim)").format(what=what,
                                                            shape=_shape(got.shape)))
    if not got.is_floating_point() or not bool(torch.isfinite(got).all()):
        return
    got = got.double()
    index = "qkv".index(name)
    w, b = weights[index], biases[index]
    candidates = []
    if b is not None:
        candidates.append((_project(x, w, None), _(
            "on {what} the bias is missing: PyTorch adds in_proj_bias, cut into three "
            "slices of embed_dim like the weight")))
    for other in range(3):
        if other != index and weights[other].shape == w.shape:
            candidates.append((_project(x, weights[other], biases[other]), _(
                "on {what} it uses the slice of another projection: in_proj_weight and "
                "in_proj_bias stack W_q, W_k and W_v in this order, embed_dim rows each")))
    for source in range(3):
        if source != index and inputs[source].shape == x.shape \
                and not torch.equal(inputs[source], x):
            candidates.append((_project(inputs[source], w, b), _(
                "on {what} it projects another input: q comes from query, k from key and v "
                "from value, which differ in cross-attention")))
    if w.shape[0] == w.shape[1]:
        candidates.append((_project(x, w.T, b), _(
            "on {what} the weight is not transposed: nn.Linear stores W as (out, in) and "
            "computes x @ W.T")))
    for wrong, message in candidates:
        if got.shape == wrong.shape and torch.allclose(got, wrong, atol=1e-4):
            raise _CheckFailedError(message.format(what=what))
