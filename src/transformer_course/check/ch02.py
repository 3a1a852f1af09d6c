"""Checkers of chapter 2's transfer exercises: a new idea applied somewhere new.

* :func:`soft_maximum`: the soft maximum ``log(sum_j exp(beta s_j)) / beta``, whose gradient is
  the soft argmax.
* :func:`peak_beta`: the inverse temperature at which one weight of a soft argmax is largest.
* :func:`recover_beta`: the inverse temperature of a soft argmax read back from its output.
* :func:`additive_scores`: the additive (Bahdanau) scorer, ``v^T tanh(W_q x_i + W_k x_j)``,
  in place of the dot product.
* :func:`stacked_self_attention`: self-attention applied to its own outputs, layer after
  layer, with nothing else in between.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..i18n import format_number, ngettext
from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _num,
    _number,
    _run,
    _shape,
)

__all__ = ["additive_scores", "peak_beta", "recover_beta", "soft_maximum",
           "stacked_self_attention"]


# --- the soft maximum behind the soft argmax ----------------------------------------------------

def _soft_maximum(scores: torch.Tensor, beta: float) -> torch.Tensor:
    """``log(sum_j exp(beta s_j)) / beta`` along the last dimension, for beta > 0."""
    return torch.logsumexp(beta * scores, dim=-1) / beta


def soft_maximum(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores, beta)`` -> the soft maximum of every row of ``scores`` along the
    last dimension, ``log(sum_j exp(beta s_j)) / beta`` for ``beta > 0``: a tensor of the
    shape of ``scores`` without its last dimension (a 0-d tensor for one row), finite even
    for scores of 1000. Its gradient with respect to the scores is the soft argmax."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(204)
        chapter = torch.tensor([6.0, 5.0, 2.0, -3.0], dtype=torch.float64)
        cases = [
            (_("the scores of section 2.1, beta = {beta}").format(beta=_num(1)), chapter, 1.0),
            (_("the scores of section 2.1, beta = {beta}").format(beta=_num(0.1)), chapter, 0.1),
            (_("{rows} rows of {t} scores, beta = {beta}").format(rows=_num(3), t=_num(5),
                                                                  beta=_num(2.5)),
             torch.randn(3, 5, generator=g, dtype=torch.float64) * 3, 2.5),
            (_("scores as large as {big}, beta = {beta}").format(big=_num(1000), beta=_num(1)),
             torch.tensor([[1000.0, 999.0, 990.0], [-1000.0, -1002.0, -1005.0]],
                          dtype=torch.float64), 1.0),
            (_("scores as large as {big}, beta = {beta}").format(big=_num(40), beta=_num(50)),
             torch.tensor([40.0, 39.5, -12.0, 0.0], dtype=torch.float64), 50.0),
        ]
        for what, scores, beta in cases:
            got = _call(f, scores.clone(), beta, what=what)
            expected = _soft_maximum(scores, beta)
            tolerance = 1e-5 * max(1.0, float(scores.abs().max()))
            try:
                _compare(got, expected, what=what, atol=tolerance)
            except _CheckFailedError:
                _explain_soft_maximum(got, scores, beta, expected, tolerance, what)
                raise
        return _("between the maximum and the maximum plus log(t) / beta, without overflow")
    return _run("soft_maximum", fn, body)


def _explain_soft_maximum(got: object, scores: torch.Tensor, beta: float,
                          expected: torch.Tensor, tolerance: float, what: str) -> None:
    """Name the classic mistakes of the soft maximum."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if not got.is_floating_point():
        return
    got = got.to(torch.float64)
    if got.shape == scores.shape and torch.allclose(got, torch.softmax(beta * scores, dim=-1)):
        raise _CheckFailedError(
            _("on {what} it returned the weights, the soft argmax: the soft maximum is one "
              "number per row, log(sum_j exp(beta s_j)) / beta").format(what=what))
    if got.shape == (*expected.shape, 1):
        raise _CheckFailedError(
            _("on {what} the shape is {got}: one number per row, without keeping the last "
              "dimension (keepdim=False)").format(what=what, got=_shape(got.shape)))
    if got.shape != expected.shape:
        return
    if not bool(torch.isfinite(got).all()):
        raise _CheckFailedError(
            _("on {what} the result overflows: take the largest score out of the exponential "
              "(exercise 1.3) and add it back after the logarithm").format(what=what))
    largest = scores.max(dim=-1).values
    t = scores.shape[-1]
    for wrong, message in (
            (expected * beta,
             _("on {what} it returned beta times the soft maximum: divide the logarithm by "
               "beta")),
            (expected - largest,
             _("on {what} the largest score, taken out for stability, was not added back")),
            (expected - math.log(t) / beta,
             _("on {what} it takes the logarithm of the mean of the exponentials, not of their "
               "sum: the result is log(t) / beta too small")),
            (torch.logsumexp(scores, dim=-1),
             _("on {what} beta is left out: the scores are multiplied by beta before the "
               "exponential and the logarithm is divided by beta"))):
        if torch.allclose(got, wrong, rtol=0.0, atol=tolerance) \
                and not torch.allclose(wrong, expected, rtol=0.0, atol=tolerance):
            raise _CheckFailedError(message.format(what=what))
    if torch.allclose(got, largest, rtol=0.0, atol=tolerance):
        raise _CheckFailedError(
            _("on {what} it returned the plain maximum: at this beta the soft maximum lies "
              "above it, by up to log(t) / beta").format(what=what))


# --- the inverse temperature at which a weight peaks ----------------------------------------------

def _as_beta(got: object, *, what: str) -> float:
    """A number from an int, a float or a one-element tensor; infinity is allowed."""
    number = _number(got, what=what)
    if math.isnan(number):
        raise _CheckFailedError(_("on {what} got NaN, expected a number").format(what=what))
    return number


def _peak(scores: torch.Tensor, j: int) -> float:
    """The beta >= 0 at which ``softmax(beta * scores)[j]`` is largest: infinity for a best
    score, 0 for a score at or below the plain mean, else the root of
    ``s_j = sum_k a_k s_k``, whose right-hand side grows with beta."""
    s = scores.to(torch.float64)
    if s[j] >= s.max():
        return math.inf
    if s[j] <= s.mean():
        return 0.0

    def above(beta: float) -> bool:  # is s_j still above the weighted average?
        return bool(s[j] > torch.softmax(beta * s, dim=-1) @ s)

    low, high = 0.0, 1.0
    while above(high):
        high *= 2.0
    for _step in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if above(middle) else (low, middle)
    return (low + high) / 2


def peak_beta(fn: Callable[[torch.Tensor, int], float]) -> CheckResult:
    """Check ``fn(scores, j)`` -> the inverse temperature ``beta >= 0`` at which the weight
    of element ``j`` in ``softmax(beta * scores)`` is largest, for ``scores`` of shape
    ``(t,)`` (float64) and ``j`` a Python index from 0: ``math.inf`` for a best score (its
    weight grows for ever), 0 for a score at or below the plain mean (it falls from the
    start), else the beta where ``s_j`` equals the weighted average ``sum_k a_k s_k``
    (within 1e-4 relative; one peak lies above beta = 4, past a bisection kept in [0, 1])."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(205)
        chapter = torch.tensor([6.0, 5.0, 2.0, -3.0], dtype=torch.float64)
        spread = torch.tensor([0.0, 10.0, 20.0, 30.0, 4.0], dtype=torch.float64)
        drawn = torch.randn(7, generator=g, dtype=torch.float64) * 2
        middle = int(drawn.argsort()[-3])  # the third largest: between the mean and the best
        cases = [
            (_("the scores of section 2.1, the weight of x3 (j = {j})").format(j=_num(2)),
             chapter, 2),
            (_("the scores of section 2.1, the weight of x2 (j = {j})").format(j=_num(1)),
             chapter, 1),
            (_("the scores of section 2.1, the weight of x1 (j = {j})").format(j=_num(0)),
             chapter, 0),
            (_("scores {scores}, j = {j}").format(scores=_numbers(spread.tolist()), j=_num(2)),
             spread, 2),
            (_("{t} random scores, j = {j}").format(t=_num(7), j=_num(middle)), drawn, middle),
            (_("two best scores tied, j = {j}").format(j=_num(1)),
             torch.tensor([1.0, 3.0, 3.0, 0.0], dtype=torch.float64), 1),
            (_("a score equal to the mean, j = {j}").format(j=_num(1)),
             torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), 1),
            (_("scores {scores}, j = {j}").format(scores=_numbers([0.0, 0.1, 0.2, 0.3]),
                                                  j=_num(2)),  # a peak above beta = 4
             torch.tensor([0.0, 0.1, 0.2, 0.3], dtype=torch.float64), 2),
        ]
        for what, scores, j in cases:
            got = _as_beta(_call(f, scores.clone(), j, what=what), what=what)
            expected = _peak(scores, j)
            if expected == math.inf:
                if got == math.inf:
                    continue
                raise _CheckFailedError(
                    _("on {what} got {got}: element {j} has the best score, so its weight "
                      "grows with beta for ever; return math.inf").format(
                        what=what, got=_num(got), j=_num(j)))
            if got == math.inf:
                best = int(scores.argmax())
                if abs(best - j) == 1:
                    raise _CheckFailedError(
                        _("on {what} it answers for element {other}: j counts from 0, as Python "
                          "does").format(what=what, other=_num(best)))
                raise _CheckFailedError(
                    _("on {what} got infinity, but element {j} does not have the best score: "
                      "as beta grows the best score takes everything").format(what=what,
                                                                             j=_num(j)))
            if abs(got - expected) <= (1e-4 * expected if expected > 0 else 1e-6):
                continue
            _explain_peak(got, scores, j, expected, what)
            raise _CheckFailedError(_("on {what} got {got}, expected {expected}").format(
                what=what, got=format_number(got, 4), expected=format_number(expected, 4)))
        return _("infinity for the best score, 0 at or below the mean, and in between the beta "
                 "where the score meets the weighted average")
    return _run("peak_beta", fn, body)


def _numbers(values: list[float]) -> str:
    """A list of numbers in parentheses, ``;`` between them where the decimal mark is a comma."""
    separator = "; " if "," in _num(0.5) else ", "
    return "(" + separator.join(_num(v) for v in values) + ")"


def _explain_peak(got: float, scores: torch.Tensor, j: int, expected: float,
                  what: str) -> None:
    """Name the classic mistakes of the peak of a weight."""
    s = scores.to(torch.float64)
    for other in (j - 1, j + 1):
        if 0 <= other < len(s) and 0 < _peak(s, other) < math.inf \
                and abs(got - _peak(s, other)) <= 1e-4 * max(1.0, got):
            raise _CheckFailedError(
                _("on {what} it answers for element {other}: j counts from 0, as Python does")
                .format(what=what, other=_num(other)))
    if expected == 0.0:
        raise _CheckFailedError(
            _("on {what} got {got}, expected 0: this score is not above the plain mean of the "
              "scores, the weighted average at beta = 0, so its weight falls from the start")
            .format(what=what, got=format_number(got, 4)))
    if got > 0 and abs(1 / got - expected) <= 1e-4 * max(1.0, expected):
        raise _CheckFailedError(
            _("on {what} got {got}, which is the temperature T = 1 / beta: return beta = "
              "{expected}").format(what=what, got=format_number(got, 4),
                                   expected=format_number(expected, 4)))
    peak_weight = float(torch.softmax(expected * s, dim=-1)[j])
    if abs(got - peak_weight) <= 1e-4:
        raise _CheckFailedError(
            _("on {what} got {got}, the largest weight itself: return the beta at which it is "
              "reached, {expected}").format(what=what, got=format_number(got, 4),
                                            expected=format_number(expected, 4)))


# --- the temperature read back from the weights ------------------------------------------------

def _as_real(got: object, *, what: str) -> float:
    """A finite number from an int, a float or a one-element tensor; a message otherwise."""
    number = _number(got, what=what)
    if not math.isfinite(number):
        raise _CheckFailedError(
            _("on {what} got {value}: two equal scores give 0 / 0, and a weight of 0 gives "
              "log 0 = -inf; use only positive weights and scores that differ")
            .format(what=what, value=_num(number)))
    return number


def recover_beta(fn: Callable[[torch.Tensor, torch.Tensor], float]) -> CheckResult:
    """Check ``fn(scores, weights) -> beta``: the inverse temperature of a soft argmax read
    back from its output, ``weights = softmax(beta * scores)``, for ``scores`` and
    ``weights`` of shape ``(t,)`` (float64), as a number or a one-element tensor.

    Since ``log a_j - log a_k = beta (s_j - s_k)``, the log-weights are a straight line of
    the scores with slope beta. The cases include ``beta = 0`` (uniform weights), equal
    scores (a pair of them says nothing about beta) and weights that underflow to exactly 0,
    so that every fixed pair of entries meets a tie or a zero.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(201)
        cases = [
            (_("{n} scores with beta = {beta}").format(n=_num(6), beta=_num(1.7)),
             torch.randn(6, generator=g, dtype=torch.float64), 1.7),
            (_("uniform weights (beta = {beta})").format(beta=_num(0)),
             torch.randn(5, generator=g, dtype=torch.float64), 0.0),
            # ties and exact zeros between them touch every pair of entries
            (_("scores with a tie, beta = {beta}").format(beta=_num(0.3)),
             torch.tensor([1.0, 2.0, 2.0, -1.0, 0.5], dtype=torch.float64), 0.3),
            (_("scores with a tie, beta = {beta}").format(beta=_num(0.6)),
             torch.tensor([2.0, 2.0, 1.0, -1.0, 0.5], dtype=torch.float64), 0.6),
            (_("weights with exact zeros, beta = {beta}").format(beta=_num(40)),
             torch.tensor([2.0, 1.5, 0.3, -20.0, -24.0], dtype=torch.float64), 40.0),
            (_("weights with exact zeros, beta = {beta}").format(beta=_num(50)),
             torch.tensor([-20.0, 2.0, 1.5, 0.3, -24.0], dtype=torch.float64), 50.0),
            (_("large negative scores, beta = {beta}").format(beta=_num(2.5)),
             torch.tensor([-50.0, -48.0, -49.5, -47.0], dtype=torch.float64), 2.5),
        ]
        for what, scores, beta in cases:
            weights = torch.softmax(beta * scores, dim=-1)
            got = _as_real(_call(f, scores.clone(), weights.clone(), what=what), what=what)
            if abs(got - beta) <= 1e-4 * max(1.0, beta):
                continue
            if beta > 0 and abs(got - 1 / beta) <= 1e-4 * max(1.0, 1 / beta) \
                    and abs(beta - 1 / beta) > 1e-2:
                raise _CheckFailedError(
                    _("on {what} got {got}, which is the temperature T = 1 / beta: return beta "
                      "= {expected}").format(what=what, got=_num(got), expected=_num(beta)))
            if beta > 0 and abs(got + beta) <= 1e-4 * beta:
                raise _CheckFailedError(
                    _("on {what} got {got}: the sign is wrong, a larger score gets a larger "
                      "weight, so beta = {expected}").format(what=what, got=_num(got),
                                                             expected=_num(beta)))
            raise _CheckFailedError(_("on {what} got {got}, expected {expected}").format(
                what=what, got=_num(got), expected=_num(beta)))
        return _("beta read back from the weights, even with ties, zero weights and beta = 0")
    return _run("recover_beta", fn, body)


# --- the additive (Bahdanau) scorer ------------------------------------------------------------

def additive_scores(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, v)`` -> the ``(t, t)`` additive scores of a set ``x``
    ``(t, n)``: ``s_ij = v^T tanh(W_q x_i + W_k x_j)``, with ``w_q`` and ``w_k`` of shape
    ``(d, n)`` (used as ``x @ w.T``) and ``v`` of shape ``(d,)``; row ``i`` holds the scores
    of the vector ``x_i`` that asks, column ``j`` the vector ``x_j`` it looks at."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(202)
        for t, n, d in ((4, 3, 5), (6, 2, 3)):
            x = torch.randn(t, n, generator=g)
            w_q, w_k = torch.randn(d, n, generator=g), torch.randn(d, n, generator=g)
            v = torch.randn(d, generator=g)
            what = _("x {x}, W_q and W_k {w}, v {v}").format(x=_shape(x.shape),
                                                             w=_shape(w_q.shape),
                                                             v=_shape(v.shape))
            got = _call(f, x.clone(), w_q.clone(), w_k.clone(), v.clone(), what=what)
            q, k = x.double() @ w_q.double().T, x.double() @ w_k.double().T  # (t, d) each
            summed = q[:, None, :] + k[None, :, :]  # (t, t, d): W_q x_i + W_k x_j
            expected = torch.tanh(summed) @ v.double()  # (t, t)
            try:
                _compare(got, expected, what=what, atol=1e-4)
            except _CheckFailedError:
                _explain_additive(got, expected, summed, q, k, v.double(), what)
                raise
        return _("s_ij = v^T tanh(W_q x_i + W_k x_j): a small network scores every pair")
    return _run("additive_scores", fn, body)


def _explain_additive(got: object, expected: torch.Tensor, summed: torch.Tensor,
                      q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, what: str) -> None:
    """Name the classic mistakes of the additive scorer."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if not got.is_floating_point() or got.shape != expected.shape \
            or not bool(torch.isfinite(got).all()):
        return
    got = got.to(torch.float64)
    for wrong, message in (
            (expected.T, _("on {what} rows and columns are swapped: row i must hold the scores "
                           "of x_i, the vector that asks (W_q x_i)")),
            (summed @ v, _("on {what} the tanh is missing: without it s_ij = v^T W_q x_i + "
                           "v^T W_k x_j, and the first term, the same for every j, vanishes "
                           "in the softmax")),
            (q @ k.T, _("on {what} these are dot products of the projections: the additive "
                        "scorer adds W_q x_i and W_k x_j, applies tanh, then takes the dot "
                        "product with v")),
            (torch.tanh(summed).sum(-1), _("on {what} the sum over the d features ignores v: "
                                           "take the dot product with v"))):
        if torch.allclose(got, wrong, rtol=1e-4, atol=1e-4):
            raise _CheckFailedError(message.format(what=what))


# --- self-attention stacked on itself ----------------------------------------------------------

def _stack(x: torch.Tensor, beta: float, layers: int, *, dim: int = -1,
           fixed: bool = False, scale: float = 1.0, beta_after: float | None = None
           ) -> torch.Tensor:
    """``layers`` layers of soft self-attention over the rows, and some classic mistakes:
    softmax along ``dim``, weights computed once (``fixed``), scores times ``scale``, and
    another β after the first layer (``beta_after``)."""
    weights = torch.softmax(beta * scale * x @ x.T, dim=dim)  # (t, t)
    for layer in range(layers):
        if not fixed:
            b = beta if beta_after is None or layer == 0 else beta_after
            weights = torch.softmax(b * scale * x @ x.T, dim=dim)  # (t, t): this layer's scores
        x = weights @ x  # (t, n): row i is h_i, a blend of this layer's inputs
    return x


def stacked_self_attention(fn: Callable[[torch.Tensor, float, int], torch.Tensor]
                           ) -> CheckResult:
    """Check ``fn(x, beta, layers)`` -> the ``(t, n)`` outputs of ``layers`` layers of soft
    self-attention over the rows of ``x`` ``(t, n)``, at inverse temperature ``beta``, each
    layer attending over the outputs of the previous one (its scores computed from its own
    input), with no learned map and no residual path; ``layers = 0`` gives ``x`` back."""
    def vectors(t: int, n: int, beta: float, layers: int) -> str:
        return ngettext("{t} vectors of size {n}, beta = {beta}, {layers} layer",
                        "{t} vectors of size {n}, beta = {beta}, {layers} layers", layers).format(
            t=_num(t), n=_num(n), beta=_num(beta), layers=_num(layers))

    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(203)
        chapter = torch.tensor([[3.0, 0.0], [2.0, 1.0], [0.0, 2.0], [-1.0, -1.0]],
                               dtype=torch.float64)
        cases = [
            (_("the four vectors of section 2.1, beta = {beta}, {layers} layers").format(
                beta=_num(1), layers=_num(3)), chapter, 1.0, 3),
            (vectors(6, 3, 0.5, 1), torch.randn(6, 3, generator=g, dtype=torch.float64), 0.5, 1),
            (_("{t} vectors of size {n}, no layer (the set itself)").format(t=_num(5), n=_num(3)),
             torch.randn(5, 3, generator=g, dtype=torch.float64), 0.7, 0),
            (vectors(7, 4, 0.3, 6), torch.randn(7, 4, generator=g, dtype=torch.float64), 0.3, 6),
            (_("beta = 0, {layers} layers").format(layers=_num(2)),
             torch.randn(5, 2, generator=g, dtype=torch.float64), 0.0, 2),
        ]
        for what, x, beta, layers in cases:
            got = _call(f, x.clone(), beta, layers, what=what)
            expected = _stack(x, beta, layers)
            try:
                _compare(got, expected, what=what, atol=1e-5)
            except _CheckFailedError:
                _explain_stack(got, x, beta, layers, what)
                raise
        return _("each layer averages the outputs of the one before: the set can only "
                 "shrink")
    return _run("stacked_self_attention", fn, body)


def _explain_stack(got: object, x: torch.Tensor, beta: float, layers: int, what: str) -> None:
    """Name the classic mistakes of stacked self-attention."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if not got.is_floating_point() or got.shape != x.shape \
            or not bool(torch.isfinite(got).all()):
        return
    got = got.to(torch.float64)
    candidates = [
        (_stack(x, beta, layers, fixed=True),
         _("on {what} the weights are computed once, from x, and applied {layers} times: "
           "each layer computes its scores from its own input, the outputs of the layer "
           "before")),
        (_stack(x, beta, 1),
         _("on {what} it applies one layer, expected {layers}")),
        (_stack(x, beta, layers + 1),
         _("on {what} it applies one layer too many: {layers} layers, and layers = 0 gives "
           "x back")),
        (_stack(x, beta, max(layers - 1, 0)),
         _("on {what} it applies one layer too few, expected {layers}")),
        (_stack(x, beta, layers, dim=0),
         _("on {what} the softmax runs down the columns: each row of weights (one per "
           "vector that asks) must sum to 1")),
        (_stack(x, beta, layers, scale=1 / math.sqrt(x.shape[-1])),
         _("on {what} the scores are divided by the square root of the size: in this "
           "chapter beta alone multiplies the dot products")),
        (_stack(x, beta, layers, beta_after=1.0),
         _("on {what} beta is used in the first layer only: every layer multiplies its "
           "scores by beta")),
    ]
    for wrong, message in candidates:
        if torch.allclose(got, wrong, rtol=1e-5, atol=1e-6):
            raise _CheckFailedError(message.format(what=what, layers=_num(layers)))
