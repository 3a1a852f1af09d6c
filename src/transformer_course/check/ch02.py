"""Checkers of chapter 2's transfer exercises: a new idea applied somewhere new.

* :func:`recover_beta`: the inverse temperature of a soft argmax read back from its output.
* :func:`additive_scores`: the additive (Bahdanau) scorer, ``v^T tanh(W_q x_i + W_k x_j)``,
  in place of the dot product.
* :func:`stacked_self_attention`: self-attention applied to its own outputs, layer after
  layer, with nothing else in between.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch

from ..i18n import gettext as _
from ..i18n import ngettext
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

__all__ = ["additive_scores", "recover_beta", "stacked_self_attention"]


# --- the temperature read back from the weights ------------------------------------------------

def _as_real(got: object, *, what: str) -> float:
    """A real number from an int, a float or a one-element tensor; a message otherwise."""
    value = got
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.device.type != "meta" \
            and not got.is_complex():
        value = got.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _CheckFailedError(_("on {what} expected a number, got {kind}")
                                .format(what=what, kind=_kind(got)))
    number = float(value)
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
    scores (a pair of them says nothing about beta) and weights that underflow to exactly 0.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(201)
        cases = [
            (_("{n} scores with beta = {beta}").format(n=_num(6), beta=_num(1.7)),
             torch.randn(6, generator=g, dtype=torch.float64), 1.7),
            (_("uniform weights (beta = {beta})").format(beta=_num(0)),
             torch.randn(5, generator=g, dtype=torch.float64), 0.0),
            (_("scores with a tie, beta = {beta}").format(beta=_num(0.3)),
             torch.tensor([1.0, 2.0, 2.0, -1.0, 0.5], dtype=torch.float64), 0.3),
            (_("weights with exact zeros, beta = {beta}").format(beta=_num(40)),
             torch.tensor([2.0, 1.5, 0.3, -20.0, -24.0], dtype=torch.float64), 40.0),
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
