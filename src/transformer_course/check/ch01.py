"""Checkers of chapter 1's transfer exercises: a new idea applied somewhere new.

* :func:`linear_rnn_influence`: the backward pass of a linear recurrent network by hand,
  where the gradient shrinks, keeps its size or explodes with the distance.
* :func:`reachable`: which points soft and hard attention can output, from the
  coefficients that give a point as a combination of ``n + 1`` inputs in ``n`` dimensions.
* :func:`streaming_attention`: a soft-attention output computed chunk by chunk, with a
  running maximum, when the largest score is not known in advance.
* :func:`score_gradients`: predict, then run; how the output of hard and of soft
  attention moves when the scores move.
* :func:`kernel_regression`: Nadaraya-Watson kernel regression written as soft attention,
  a query point attending to training points through a Gaussian kernel.
* :func:`symmetries`: a test that tells a permutation-equivariant set function from an
  invariant one and from one that is neither.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Sequence

import torch

from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _ints,
    _kind,
    _num,
    _parts,
    _run,
    _shape,
)

__all__ = ["kernel_regression", "linear_rnn_influence", "reachable", "score_gradients",
           "streaming_attention", "symmetries"]


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


# --- the vanishing gradient of a linear recurrent network, by hand ------------------------------

def _influence(w: torch.Tensor, u: torch.Tensor, length: int, *, transpose: bool = True,
               extra: int = 0, with_u: bool = True) -> torch.Tensor:
    """``|| U^T (W^T)^(L-k) 1 ||`` for k = 1..L, entry 0 for x_1: how much the sum of the
    entries of the last state of ``s_k = W s_(k-1) + U x_k`` depends on each input.
    ``transpose=False``, ``extra=1`` and ``with_u=False`` give three classic mistakes."""
    w, u = w.double(), u.double()
    step = w.T if transpose else w
    back = torch.ones(w.shape[0], dtype=torch.float64)  # d(sum of s_L) / d s_L
    for _step in range(extra):
        back = step @ back
    norms = []
    for _step in range(length):                          # from x_L back to x_1
        norms.append((u.T @ back if with_u else back).norm())
        back = step @ back                               # one step back: times W^T
    return torch.stack(norms).flip(0)                    # (L,): entry 0 for x_1


def _jacobian_sizes(w: torch.Tensor, u: torch.Tensor, length: int) -> torch.Tensor:
    """``|| W^(L-k) U ||`` (Frobenius) for k = 1..L: the size of the whole Jacobian
    ``d s_L / d x_k``, a classic confusion with the gradient of the sum of its entries."""
    w, u = w.double(), u.double()
    power, sizes = torch.eye(w.shape[0], dtype=torch.float64), []
    for _step in range(length):
        sizes.append((power @ u).norm())
        power = w @ power
    return torch.stack(sizes).flip(0)


def _relative(got: torch.Tensor, expected: torch.Tensor) -> float:
    """The largest relative difference (``expected`` has no zero entry)."""
    return float(((got - expected).abs() / expected.abs()).max())


def linear_rnn_influence(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]
                         ) -> CheckResult:
    """Check ``fn(W, U, length)`` -> the ``(length,)`` tensor of the norms
    ``|| d(sum of the entries of s_L) / d x_k || = || U^T (W^T)^(L-k) 1 ||`` for k = 1..L
    (entry 0 for the first input), where ``s_k = W s_(k-1) + U x_k``, ``s_0 = 0`` and
    ``L = length``: the measurement of section 1.1 for a linear recurrent network, done by
    hand. ``W`` is ``(n, n)``, ``U`` is ``(n, m)``. The values span many orders of magnitude,
    so they are compared relatively (within 0.1%).
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(105)
        n = 4
        rotation = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))[0]
        rotation[:, 0] *= torch.linalg.det(rotation).sign()  # det = +1: a rotation
        eye = torch.eye(n)
        cases = [
            (_("a random W {w} and U {u}, {steps} steps").format(
                w=_shape((n, n)), u=_shape((n, 3)), steps=_num(6)),
             0.6 * torch.randn(n, n, generator=g), torch.randn(n, 3, generator=g), 6),
            (_("W = {c} I and U = I, {steps} steps").format(c=_num(0.5), steps=_num(60)),
             0.5 * eye, eye, 60),
            (_("an orthogonal W (a rotation) and U = I, {steps} steps").format(steps=_num(30)),
             rotation.float(), eye, 30),
            (_("W = {c} I and U = I, {steps} steps").format(c=_num(1.1), steps=_num(40)),
             1.1 * eye, eye, 40),
        ]
        for what, w, u, length in cases:
            got = _as_tensor(_call(f, w.clone(), u.clone(), length, what=what), what=what)
            expected = _influence(w, u, length)
            if got.shape != expected.shape:
                raise _CheckFailedError(
                    _("on {what} the shape is {got}, expected {expected}").format(
                        what=what, got=_shape(got.shape), expected=_shape(expected.shape)))
            got = got.to(torch.float64)
            if not bool(torch.isfinite(got).all()):
                index = int((~torch.isfinite(got)).nonzero()[0, 0])
                raise _CheckFailedError(
                    _("on {what} entry {index} is {value} (not finite)").format(
                        what=what, index=_shape((index,)), value=_num(got[index].item())))
            if _relative(got, expected) <= 1e-3:
                continue
            for wrong, message in [
                (expected.flip(0),
                 _("on {what} the entries are in reverse order: entry 0 belongs to the first "
                   "input x_1, the farthest from the last state")),
                (_influence(w, u, length, transpose=False),
                 _("on {what} the gradient goes back through W itself: each step back "
                   "multiplies it by the transpose W^T (the two differ when W is not "
                   "symmetric)")),
                (_influence(w, u, length, extra=1),
                 _("on {what} every power of W is one too high: the last input reaches s_L "
                   "through U alone, so its gradient is U^T 1, with no W")),
                (_influence(w, u, length, with_u=False),
                 _("on {what} U is missing: x_k enters the state through U, so each gradient "
                   "ends with a product by U^T")),
                (_jacobian_sizes(w, u, length),
                 _("on {what} these are the sizes of the whole Jacobians d s_L / d x_k; "
                   "section 1.1 measured the gradient of the sum of the entries of s_L, "
                   "U^T (W^T)^(L-k) 1")),
            ]:
                if _relative(got, wrong) <= 1e-3 and _relative(wrong, expected) > 1e-3:
                    raise _CheckFailedError(message.format(what=what))
            index = int(((got - expected).abs() / expected).argmax())
            raise _CheckFailedError(
                _("on {what} entry {index} is {got}, expected {expected} (relative error "
                  "{error})").format(what=what, index=_shape((index,)),
                                     got=_num(got[index].item()),
                                     expected=_num(expected[index].item()),
                                     error=_num(_relative(got, expected))))
        return _("the gradient is multiplied by W^T at every step back: it shrinks, keeps its "
                 "size (an orthogonal W) or explodes, as the powers of W do")
    return _run("linear_rnn_influence", fn, body)


# --- which points can soft and hard attention reach? --------------------------------------------

def _coefficients(x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """The ``t = n + 1`` coefficients with ``sum_i a_i x_i = h`` and ``sum_i a_i = 1``."""
    system = torch.cat([x.T, torch.ones(1, x.shape[0], dtype=x.dtype)])  # (n + 1, t)
    return torch.linalg.solve(system, torch.cat([h, torch.ones(1, dtype=h.dtype)]))


def _reachable_mistake(where: str, soft: bool, hard: bool, answers: tuple[bool, bool]) -> str:
    """What is wrong with the answers ``(soft, hard)`` for a point ``h`` that lies
    ``where`` (inside, near a vertex, on the boundary, at a vertex, outside, or outside
    with a coefficient of 1: "one")."""
    if answers[0] != soft:
        if where == "one":
            where = "outside"
        return {
            "inside": _("on {what} no coefficient is negative: h is inside the "
                        "convex hull, and soft attention reaches it"),
            "boundary": _("on {what} h lies on the boundary: one coefficient is 0, "
                          "a weight that drops its input, and soft attention reaches "
                          "it (if that coefficient came out as a tiny negative number "
                          "such as -1e-8, compare with a tolerance)"),
            "near": _("on {what} no coefficient is negative: h is inside the "
                      "convex hull, and soft attention reaches it"),
            "vertex": _("on {what} h is one of the inputs: a one-hot a satisfies "
                        "the constraints of soft attention too (compare with a "
                        "tolerance: the zeros may come out as tiny numbers)"),
            "outside": _("on {what} a coefficient is negative: h lies outside the "
                         "convex hull, where no weighted average of the inputs can "
                         "go"),
        }[where]
    if hard:
        return _("on {what} h is one of the inputs, so hard attention reaches "
                 "it; a is one-hot only up to rounding: compare with a "
                 "tolerance")
    if where == "one":
        return _("on {what}, the other coefficients are 0.5 and -0.5: h is not one of the "
                 "inputs; a is one-hot only when every other coefficient is 0")
    if where == "near":
        return _("on {what} one coefficient is 0.9, but h is not one of the "
                 "inputs: hard attention outputs an x_i itself, never a point "
                 "near one, however large its weight")
    return _("on {what} h is not one of the inputs: hard attention can "
             "only output the x_i themselves")


def reachable(fn: Callable[[torch.Tensor, torch.Tensor], tuple]) -> CheckResult:
    """Check ``fn(x, h) -> (a, soft, hard)`` for ``t = n + 1`` inputs in general position,
    the rows of ``x`` ``(t, n)``, and a point ``h`` ``(n,)``: ``a`` ``(t,)`` the only
    coefficients with ``sum_i a_i x_i = h`` and ``sum_i a_i = 1``; ``soft`` whether soft
    attention can output ``h`` (no negative coefficient: inside the convex hull or on its
    boundary); ``hard`` whether hard attention can (``h`` is one of the inputs, ``a`` is
    one-hot). Points on the boundary and at a vertex come with rounding errors of order
    1e-7 in ``a``.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(106)
        triangle = torch.tensor([[2.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])  # section 1.4
        tetrahedron = torch.randn(4, 3, generator=g)
        # (what, x, the coefficients that make h, soft, hard, where h is)
        cases = [
            (_("the triangle of section 1.4, a point inside"), triangle,
             torch.tensor([0.5, 0.3, 0.2]), True, False, "inside"),
            (_("the triangle of section 1.4, a point on an edge"), triangle,
             torch.tensor([0.5, 0.0, 0.5]), True, False, "boundary"),
            (_("the triangle of section 1.4, the vertex x_2"), triangle,
             torch.tensor([0.0, 1.0, 0.0]), True, True, "vertex"),
            (_("the triangle of section 1.4, a point near the vertex x_1"), triangle,
             torch.tensor([0.9, 0.06, 0.04]), True, False, "near"),
            (_("the triangle of section 1.4, a point outside"), triangle,
             torch.tensor([1.2, 0.4, -0.6]), False, False, "outside"),
            (_("the triangle of section 1.4, a point outside with a coefficient of 1"),
             triangle, torch.tensor([1.0, 0.5, -0.5]), False, False, "one"),
            (_("{t} points of a line, a point between them").format(t=_num(2)),
             torch.tensor([[-1.0], [3.0]]), torch.tensor([0.25, 0.75]), True, False, "inside"),
            (_("a tetrahedron in {n} dimensions, a point inside").format(n=_num(3)),
             tetrahedron, torch.tensor([0.1, 0.4, 0.3, 0.2]), True, False, "inside"),
            (_("a tetrahedron in {n} dimensions, a point outside").format(n=_num(3)),
             tetrahedron, torch.tensor([0.6, 0.6, -0.3, 0.1]), False, False, "outside"),
            (_("a tetrahedron in {n} dimensions, a point on a face").format(n=_num(3)),
             tetrahedron, torch.tensor([0.3, 0.3, 0.4, 0.0]), True, False, "boundary"),
            (_("a tetrahedron in {n} dimensions, the vertex x_2").format(n=_num(3)),
             tetrahedron, torch.tensor([0.0, 1.0, 0.0, 0.0]), True, True, "vertex"),
        ]
        for what, x, a_true, soft, hard, where in cases:
            h = a_true @ x
            got = _parts(_call(f, x.clone(), h.clone(), what=what), 3, "(a, soft, hard)",
                         what=what)
            a = _as_tensor(got[0], what=what)
            expected = _coefficients(x.double(), h.double())
            if a.shape == expected.shape and bool(torch.isfinite(a).all()):
                a64 = a.to(torch.float64)
                total = float(a64.sum())
                combination = a64 @ x.double()
                if abs(total - 1) > 1e-4 and torch.allclose(combination, h.double(), atol=1e-4):
                    raise _CheckFailedError(
                        _("on {what} the coefficients give h but sum to {total}, not 1: add "
                          "sum_i a_i = 1 to the equations, as a row of ones").format(
                            what=what, total=_num(round(total, 4))))
            _compare(a, expected, what=what, atol=1e-4)
            answers = (_as_bool(got[1], what=what, name="soft"),
                       _as_bool(got[2], what=what, name="hard"))
            if answers == (hard, soft) and soft != hard:
                raise _CheckFailedError(
                    _("on {what} the two answers are swapped: return (a, soft, hard), in "
                      "this order").format(what=what))
            if answers != (soft, hard):
                raise _CheckFailedError(_reachable_mistake(where, soft, hard, answers)
                                        .format(what=what))
        return _("the coefficients sum to 1 and give h; soft attention reaches h when none is "
                 "negative (on the boundary one of them is 0), hard attention only at the "
                 "inputs themselves")
    return _run("reachable", fn, body)


# --- soft attention over a stream of chunks -----------------------------------------------------

def streaming_attention(fn: Callable[[object], torch.Tensor]) -> CheckResult:
    """Check ``fn(chunks)`` -> ``sum_j softmax(s)_j v_j``, the ``(n,)`` soft-attention output
    of one query whose scores and values arrive as an iterator of chunks
    ``(scores (c,), values (c, n))``, which can be read only once: the largest score is not
    known before the last chunk. Scores reach 1000, so ``exp`` overflows unless a running
    maximum is subtracted, and what was summed so far must be rescaled when it grows.
    """
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(107)

        def values(c: int) -> torch.Tensor:
            return torch.randn(c, 3, generator=g)

        def scores(c: int) -> torch.Tensor:
            return 2 * torch.randn(c, generator=g)

        cases = [
            (_("{t} scores in one chunk").format(t=_num(5)), [(scores(5), values(5))]),
            (_("{count} chunks of {size} scores").format(count=_num(4), size=_num(3)),
             [(scores(3), values(3)) for _chunk in range(4)]),
            (_("chunks of {sizes} scores").format(sizes=_ints([1, 4, 2])),
             [(scores(c), values(c)) for c in (1, 4, 2)]),
            (_("scores that grow from chunk to chunk, up to {big}").format(big=_num(1000)),
             [(torch.tensor([-20.0, -10.0, 0.0]), values(3)),
              (torch.tensor([300.0, 200.0, 250.0]), values(3)),
              (torch.tensor([995.0, 1000.0, 990.0]), values(3))]),
            (_("the largest score first, smaller ones after"),
             [(torch.tensor([1000.0, 998.0]), values(2)),
              (torch.tensor([997.0, 999.0, 0.0]), values(3))]),
        ]
        for what, chunks in cases:
            all_scores = torch.cat([s for s, _v in chunks]).double()
            all_values = torch.cat([v for _s, v in chunks]).double()
            expected = torch.softmax(all_scores, -1) @ all_values
            stream = _OnePassStream(chunks)
            got = _as_tensor(_call(f, stream, what=what), what=what)
            if stream.kept is not None:
                raise _CheckFailedError(
                    _("on {what} chunk {kept} was still held when chunk {asked} was asked "
                      "for: the answer keeps the chunks, while the stream is there because "
                      "they do not fit in memory together; keep only the running maximum "
                      "and the two running sums").format(
                        what=what, kept=_num(stream.kept), asked=_num(stream.kept + 2)))
            if got.shape == expected.shape and got.is_floating_point():
                if not bool(torch.isfinite(got).all()):
                    raise _CheckFailedError(
                        _("on {what} some entries are not finite: exp of a score near 1000 "
                          "overflows; subtract the largest score seen so far, and when a later "
                          "chunk holds a larger one, multiply what you have summed by "
                          "exp(old maximum - new maximum)").format(what=what))
                separately = torch.stack([torch.softmax(s.double(), -1) @ v.double()
                                          for s, v in chunks]).mean(0)
                if len(chunks) > 1 and torch.allclose(got.double(), separately, atol=1e-4) \
                        and not torch.allclose(separately, expected, atol=1e-4):
                    raise _CheckFailedError(
                        _("on {what} each chunk was normalised on its own: the softmax "
                          "normalises over all the scores, so keep one running sum of the "
                          "exponentials for the whole stream").format(what=what))
            _compare(got, expected, what=what, atol=1e-4)
        return _("one pass, a running maximum and two running sums rescaled when it grows: "
                 "the softmax over all the scores, without overflow")
    return _run("streaming_attention", fn, body)


class _OnePassStream:
    """The chunks of one case, each handed out once, that notes whether the answer keeps
    them: when chunk k + 2 is asked for, chunk k must be gone (the loop variables may still
    hold chunk k + 1). CPython frees a tensor as soon as nothing refers to it."""

    def __init__(self, chunks: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> None:
        self._waiting = [(s.clone(), v.clone()) for s, v in chunks]
        self._handed: list[tuple[weakref.ref, weakref.ref]] = []
        self.kept: int | None = None  # the first chunk (from 1) still held two chunks later

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        done = len(self._handed)
        if self.kept is None and done >= 2 and any(ref() is not None
                                                   for ref in self._handed[-2]):
            self.kept = done - 1
        if not self._waiting:
            raise StopIteration
        scores, values = self._waiting.pop(0)
        self._handed.append((weakref.ref(scores), weakref.ref(values)))
        return scores, values


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


# --- equivariant, invariant or neither? ---------------------------------------------------------

def _as_bool(got: object, *, what: str, name: str) -> bool:
    """A yes/no answer: a Python or NumPy bool, or a one-element boolean tensor or array."""
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.dtype == torch.bool \
            and got.device.type != "meta":
        return bool(got.item())
    if type(got).__name__ in ("bool", "bool_"):
        return bool(got)
    if type(got).__name__ == "ndarray" and got.size == 1 and got.dtype.kind == "b":
        return bool(got.item())
    raise _CheckFailedError(
        _("on {what} {name} is {kind}, expected True or False").format(
            what=what, name=name, kind=_kind(got)))


def _symmetry_cases(t: int, n: int) -> list[tuple[str, Callable, bool, bool, str, str]]:
    """Set functions of a ``(t, n)`` tensor of rows, each with its true answers
    ``(equivariant, invariant)`` and what to say about a wrong one."""
    g = torch.Generator().manual_seed(103)
    queries = torch.randn(t, n, generator=g)    # fixed queries for the pooling
    positions = torch.randn(t, n, generator=g)  # one fixed vector per place

    def like(fixed: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return fixed.to(device=x.device, dtype=x.dtype)

    def self_attention(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ x.T, dim=-1) @ x

    def pooling(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(like(queries, x) @ x.T, dim=-1) @ x

    shuffled = _("shuffling the rows shuffles its outputs the same way")
    not_invariant = _("shuffling the rows moves its outputs, so it is not invariant")
    only_reversal = _("it commutes with the reversal of the rows and with few other "
                      "permutations: test random permutations (torch.randperm), not only the "
                      "reversal")
    only_roll = _("it commutes with the rotations of the rows (torch.roll) and with no other "
                  "permutation: test random permutations (torch.randperm), not only a "
                  "rotation")
    return [
        (_("self-attention softmax(x x^T) x"), self_attention, True, False,
         shuffled + _(" (if your test compares exactly, compare with a tolerance, "
                      "torch.allclose: a sum taken in another order rounds differently in "
                      "its last bits)"), not_invariant),
        (_("the mean of the rows, repeated on every row"),
         lambda x: x.mean(0, keepdim=True).expand_as(x), True, True,
         _("every row is the mean, which no shuffle changes: it is equivariant and invariant "
           "at once"),
         _("every row is the mean, which no shuffle changes: it is equivariant and invariant "
           "at once")),
        (_("each column sorted"), lambda x: x.sort(dim=0).values, False, True,
         _("sorting gives the same rows whatever their order: invariant, not equivariant"),
         _("sorting gives the same rows whatever their order: invariant, not equivariant")),
        (_("the running sum of the rows (cumsum)"), lambda x: x.cumsum(0), False, False,
         _("row i sums the rows before it, so the order matters"),
         _("row i sums the rows before it, so the order matters")),
        (_("the sum of each row and its mirror row x_(t+1-i)"), lambda x: x + x.flip(0),
         False, False, only_reversal, only_reversal),
        (_("the sum of each row and the next (the last row wraps round to the first)"),
         lambda x: x + x.roll(-1, 0), False, False, only_roll, only_roll),
        (_("each row plus the third row"), lambda x: x + x[2], False, False,
         _("every output row depends on which row is third: a swap of two rows other than "
           "the third shuffles the outputs the same way, other permutations do not; test "
           "random permutations (torch.randperm), not one swap"),
         not_invariant),
        (_("each row plus its two neighbours (wrapping round)"),
         lambda x: x + x.roll(1, 0) + x.roll(-1, 0), False, False,
         _("it commutes with the rotations and with the reversal of the rows, and with few "
           "other permutations: test random permutations (torch.randperm)"),
         _("it commutes with the rotations and with the reversal of the rows, and with few "
           "other permutations: test random permutations (torch.randperm)")),
        (_("pooling by attention: {t} fixed queries attend to the rows").format(t=_num(t)),
         pooling, False, True,
         _("the output has one row per fixed query, not per input row: shuffling the input "
           "rows does not shuffle it"),
         _("the rows only give the keys and the values, which a shuffle permutes together: "
           "the weighted averages do not change")),
        (_("self-attention after adding a fixed vector to each place"),
         lambda x: self_attention(x + like(positions, x)), False, False,
         _("the fixed vectors belong to the places, not to the rows: a shuffled row gets "
           "another vector"),
         _("the fixed vectors belong to the places, not to the rows: a shuffled row gets "
           "another vector")),
    ]


def symmetries(fn: Callable[[Callable, int, int], tuple]) -> CheckResult:
    """Check ``fn(f, t, n) -> (equivariant, invariant)``: whether the function ``f``, which
    maps a ``(t, n)`` tensor of ``t`` row vectors to a ``(t, m)`` tensor, is
    permutation-equivariant (``f(x[p]) == f(x)[p]`` for every permutation ``p`` of the rows)
    and whether it is permutation-invariant (``f(x[p]) == f(x)``), as two booleans.

    The functions include some that commute with one kind of permutation only (the reversal,
    the rotations), so a test that tries a single kind of shuffle gets them wrong, and
    floating-point ones whose shuffled sums differ in their last bits.
    """
    def yes_no(value: bool) -> str:
        return _("yes") if value else _("no")

    def body(f: Callable) -> str:
        torch.manual_seed(104)  # the reader's random permutations, the same on every run
        t, n = 7, 16
        for what, function, equivariant, invariant, why_e, why_i in _symmetry_cases(t, n):
            got = _parts(_call(f, function, t, n, what=what), 2, "(equivariant, invariant)",
                         what=what)
            answers = (_as_bool(got[0], what=what, name=_("equivariant")),
                       _as_bool(got[1], what=what, name=_("invariant")))
            if answers == (invariant, equivariant) and equivariant != invariant:
                raise _CheckFailedError(
                    _("on {what} the two answers are swapped: return (equivariant, "
                      "invariant), in this order").format(what=what))
            for name, answer, truth, why in ((_("equivariant"), answers[0], equivariant, why_e),
                                              (_("invariant"), answers[1], invariant, why_i)):
                if answer != truth:
                    raise _CheckFailedError(
                        _("on {what} it answered {name}: {got}, expected {expected}: {why}")
                        .format(what=what, name=name, got=yes_no(answer),
                                expected=yes_no(truth), why=why))
        return _("random shuffles tell equivariant, invariant and neither apart, even for "
                 "functions that survive a reversal, a rotation or one swap of two rows")
    return _run("symmetries", fn, body)
