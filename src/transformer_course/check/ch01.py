"""Checkers of chapter 1's transfer exercises: a new idea applied somewhere new.

* :func:`score_gradients`: predict, then run; how the output of hard and of soft
  attention moves when the scores move.
* :func:`kernel_regression`: Nadaraya-Watson kernel regression written as soft attention,
  a query point attending to training points through a Gaussian kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _num,
    _parts,
    _run,
)

__all__ = ["kernel_regression", "score_gradients"]


def _matches(got: torch.Tensor, wrong: torch.Tensor, atol: float) -> bool:
    """Whether ``got`` equals a known wrong answer (same shape, finite, within ``atol``)."""
    wrong = wrong.to(torch.float64)
    got = got.to(torch.float64)
    return (got.shape == wrong.shape and bool(torch.isfinite(wrong).all())
            and bool(torch.isfinite(got).all())
            and bool(torch.allclose(got, wrong, rtol=1e-4, atol=atol)))


def _explain(got: object, candidates: Sequence[tuple[torch.Tensor, str]], *, what: str,
             atol: float) -> None:
    """Raise the message of the first known mistake that ``got`` reproduces."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    for wrong, message in candidates:
        if _matches(got, wrong, atol):
            raise _CheckFailedError(message.format(what=what))


# --- predict, then run: gradients of hard and soft attention -------------------------------------

def _soft_gradient(scores: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """d h / d s_j = a_j (v_j - h) for h = softmax(s) . v."""
    a = torch.softmax(scores, dim=-1)
    return a * (values - a @ values)


def score_gradients(fn: Callable[[torch.Tensor, torch.Tensor], tuple]) -> CheckResult:
    """Check ``fn(scores, values) -> (grad_hard, grad_soft)``, both of shape ``(t,)``: the
    gradient, with respect to the ``t`` scores, of the output ``h = sum_j a_j v_j`` of one
    query, where ``a`` is the one-hot argmax of the scores (hard attention) or their softmax
    (soft attention) and ``values`` holds one number ``v_j`` per element.

    Hard attention's gradient is zero (a small change of the scores does not move the
    argmax, so ``h`` does not move); soft attention's is ``a_j (v_j - h)``.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(101)
        cases = [
            (_("{n} scores spread out").format(n=_num(5)),
             torch.tensor([0.5, 2.0, -1.0, 1.2, 0.1]), torch.randn(5, generator=g)),
            (_("one score far above the others (a saturated softmax)"),
             torch.tensor([12.0, 0.3, -0.4, 1.0]), torch.randn(4, generator=g)),
            (_("{n} scores close together").format(n=_num(6)),
             torch.tensor([0.1, 0.3, -0.2, 0.0, 0.4, -0.1]), torch.randn(6, generator=g) * 2),
        ]
        for what, scores, values in cases:
            got = _parts(_call(f, scores.clone(), values.clone(), what=what), 2,
                         "(grad_hard, grad_soft)", what=what)
            grad_hard, grad_soft = got
            a = torch.softmax(scores.double(), -1)
            v = values.double()
            expected = _soft_gradient(scores.double(), v)
            what_soft = _("{what}, grad_soft").format(what=what)
            try:
                _compare(grad_soft, expected, what=what_soft, atol=1e-3)
            except _CheckFailedError:
                _explain(grad_soft, [
                    (a, _("on {what} grad_soft is the weights a themselves, not the gradient "
                          "of h: the gradient is a_j (v_j - h)")),
                    (a * v, _("on {what} grad_soft treats the other weights as if they stayed "
                              "fixed: raising s_j also lowers every other weight, which adds "
                              "the term - a_j h (the gradient is a_j (v_j - h))")),
                    (-expected, _("on {what} the sign of grad_soft is wrong: raising the "
                                  "score of an element whose value is above h pulls h up")),
                ], what=what, atol=1e-3)
                raise
            what_hard = _("{what}, grad_hard").format(what=what)
            if grad_hard is None:
                raise _CheckFailedError(
                    _("on {what} grad_hard is None: autograd finds no path from the scores "
                      "through the argmax, and that is the answer; return a tensor of zeros")
                    .format(what=what))
            one_hot = torch.nn.functional.one_hot(scores.argmax(), len(scores)).double()
            try:
                _compare(grad_hard, torch.zeros_like(v), what=what_hard, atol=1e-6)
            except _CheckFailedError:
                _explain(grad_hard, [
                    (one_hot, _("on {what} grad_hard is the hard weights, not their "
                                "gradient: a small change of the scores does not change which "
                                "one is largest, so h does not move")),
                    (expected, _("on {what} grad_hard is the gradient of soft attention: "
                                 "hard attention has no softmax, and its output does not "
                                 "move when the scores move a little")),
                    (one_hot * v, _("on {what} grad_hard is a_j v_j: that is how much "
                                    "each element contributes to h, not how h changes when "
                                    "a score changes")),
                ], what=what, atol=1e-6)
                raise
        return _("hard attention: zero gradient, the argmax does not move; soft attention: "
                 "a_j (v_j - h), which fades too when one score dominates")
    return _run("score_gradients", fn, body)


# --- Nadaraya-Watson kernel regression ------------------------------------------------------

def _kernel_scores(x_train: torch.Tensor, x_query: torch.Tensor,
                   bandwidth: float) -> torch.Tensor:
    """(m, t) scores -(x - x_j)^2 / (2 sigma^2), one row per query."""
    return -(x_query[:, None] - x_train[None, :]) ** 2 / (2 * bandwidth**2)


def kernel_regression(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x_train, y_train, x_query, bandwidth)`` -> the Nadaraya-Watson
    predictions ``(m,)`` at the ``m`` points ``x_query``: for each query x, the average of
    ``y_train`` weighted by ``a_j = K(x, x_j) / sum_k K(x, x_k)`` with the Gaussian kernel
    ``K(x, x_j) = exp(-(x - x_j)^2 / (2 bandwidth^2))``; ``x_train`` and ``y_train`` have
    shape ``(t,)``.

    This is soft attention: the query is the new point, the keys are the training points,
    the values their targets and the scores ``-(x - x_j)^2 / (2 bandwidth^2)``. Far from every
    training point with a narrow kernel, every ``K`` underflows to 0: the softmax of the
    scores still gives the nearest point's target, as hard attention would.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(102)
        x_train = (torch.rand(8, generator=g) * 6 - 3).sort().values  # (t,) in [-3, 3]
        y_train = torch.sin(x_train) + 0.1 * torch.randn(8, generator=g)  # (t,)
        queries = torch.tensor([-2.5, -1.0, 0.2, 1.7, 2.9])  # (m,)
        cases = [
            (_("{t} training points, {m} queries, bandwidth = {sigma}").format(
                t=_num(8), m=_num(5), sigma=_num(0.5)), queries, 0.5),
            (_("a wide kernel, bandwidth = {sigma}").format(sigma=_num(3.0)), queries, 3.0),
            (_("queries at the training points, bandwidth = {sigma}").format(
                sigma=_num(0.01)), x_train.clone(), 0.01),
            (_("a query far from every training point (x = {x}), bandwidth = {sigma}").format(
                x=_num(30.0), sigma=_num(0.1)), torch.tensor([30.0, 0.0]), 0.1),
        ]
        for what, x_query, sigma in cases:
            got = _call(f, x_train.clone(), y_train.clone(), x_query.clone(), sigma, what=what)
            x64, y64, q64 = x_train.double(), y_train.double(), x_query.double()
            scores = _kernel_scores(x64, q64, sigma)
            expected = torch.softmax(scores, -1) @ y64
            try:
                _compare(got, expected, what=what, atol=1e-4)
            except _CheckFailedError:
                _explain_kernel(got, x64, y64, q64, sigma, what)
                raise
        return _("each prediction is a weighted average of the training targets, and a "
                 "query far from the data gets the nearest target instead of NaN")
    return _run("kernel_regression", fn, body)


def _explain_kernel(got: object, x: torch.Tensor, y: torch.Tensor, q: torch.Tensor,
                    sigma: float, what: str) -> None:
    """Name the classic mistakes of kernel regression."""
    d2 = (q[:, None] - x[None, :]) ** 2  # (m, t) squared distances
    try:
        tensor = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    if (tensor.is_floating_point() and not bool(torch.isfinite(tensor).all())
            and bool(torch.isfinite(torch.softmax(-d2 / (2 * sigma**2), -1) @ y).all())):
        raise _CheckFailedError(
            _("on {what} some predictions are not finite: far from the data every kernel "
              "value exp(-(x - x_j)^2 / (2 sigma^2)) underflows to 0, and 0 / 0 = NaN; take "
              "the softmax of the scores -(x - x_j)^2 / (2 sigma^2), which subtracts the "
              "largest score first").format(what=what))
    kernel = torch.exp(-d2 / (2 * sigma**2))
    _explain(tensor, [
        (kernel @ y, _("on {what} the weights do not sum to 1: divide by the sum of the "
                       "kernel values over the training points")),
        (torch.softmax(-d2 / (2 * sigma**2), 0) @ y,
         _("on {what} the weights are normalised over the queries: each query needs "
           "weights that sum to 1 over the training points")),
        (torch.softmax(-d2 / (2 * sigma), -1) @ y,
         _("on {what} the kernel divides by 2 sigma instead of 2 sigma^2: the bandwidth is a "
           "standard deviation")),
        (torch.softmax(-d2 / sigma**2, -1) @ y,
         _("on {what} the factor 2 is missing: the kernel is "
           "exp(-(x - x_j)^2 / (2 sigma^2))")),
        (torch.softmax(d2 / (2 * sigma**2), -1) @ y,
         _("on {what} the far points get the largest weights: the score must be minus the "
           "squared distance")),
        (torch.softmax(-d2.sqrt() / (2 * sigma**2), -1) @ y,
         _("on {what} the distance is not squared: the Gaussian kernel uses "
           "(x - x_j)^2")),
    ], what=what, atol=1e-4)
