"""Exercise checkers: pass your function, get back what is right or what is wrong.

    >>> import transformer_course as tc
    >>> def my_softmax(s):
    ...     e = s.exp()
    ...     return e / e.sum(-1, keepdim=True)
    >>> tc.check.softmax(my_softmax)  # doctest: +SKIP
    ✗ softmax: ... overflows for large scores (got NaN) ...

Each checker calls your function on several inputs, compares it with the package, and
returns a :class:`CheckResult` that is truthy when everything passed and that explains
the first failure in words (shape, dtype, which entry, by how much).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import functional as _ref
from .positional import sinusoidal_encoding as _sinusoidal_encoding

__all__ = [
    "CheckResult",
    "attention",
    "causal_mask",
    "entropy",
    "hard_argmax",
    "merge_heads",
    "padding_mask",
    "self_attention",
    "sinusoidal_encoding",
    "soft_argmax",
    "softmax",
    "split_heads",
    "weighted_sum",
]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of a checker: ``passed`` and a sentence saying why."""

    name: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"{'✓' if self.passed else '✗'} {self.name}: {self.message}"

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        mark = "✓" if self.passed else "✗"
        return (f'<p style="color:{colour}"><b>{mark} {html.escape(self.name)}</b>: '
                f"{html.escape(self.message)}</p>")

    def raise_if_failed(self) -> CheckResult:
        """Raise ``AssertionError`` with the message when the check failed."""
        if not self.passed:
            raise AssertionError(repr(self))
        return self


class _CheckFailedError(Exception):
    """Raised inside a checker to stop at the first problem."""


def _call(fn: Callable, *args, what: str):
    try:
        return fn(*args)
    except Exception as err:  # the student's code may raise anything: report it
        raise _CheckFailedError(f"calling it on {what} raised {type(err).__name__}: {err}") from err


def _compare(got: object, expected: torch.Tensor, *, what: str, atol: float = 1e-5,
             exact: bool = False) -> None:
    if not isinstance(got, torch.Tensor):
        raise _CheckFailedError(f"on {what} it returned a {type(got).__name__}, expected a tensor")
    if got.shape != expected.shape:
        raise _CheckFailedError(f"on {what} the shape is {tuple(got.shape)}, expected "
                       f"{tuple(expected.shape)}")
    if expected.dtype == torch.bool:
        if got.dtype != torch.bool:
            raise _CheckFailedError(f"on {what} the dtype is {got.dtype}, expected torch.bool")
        wrong = (got != expected).nonzero()
        if len(wrong):
            index = tuple(wrong[0].tolist())
            raise _CheckFailedError(f"on {what} entry {index} is {bool(got[index])}, expected "
                           f"{bool(expected[index])} ({len(wrong)} entries differ)")
        return
    got = got.detach().to("cpu", torch.float64)
    expected = expected.detach().to(torch.float64)
    if not torch.isfinite(got).all():
        index = tuple((~torch.isfinite(got)).nonzero()[0].tolist())
        raise _CheckFailedError(f"on {what} entry {index} is {got[index].item()} (not finite)")
    error = (got - expected).abs()
    if exact:
        atol = 0.0
    if error.max() > atol:
        index = tuple(int(i) for i in torch.unravel_index(error.argmax(), error.shape))
        raise _CheckFailedError(f"on {what} entry {index} is {got[index].item():.6g}, expected "
                       f"{expected[index].item():.6g} (off by {error.max().item():.3g})")


def _run(name: str, fn: object, body: Callable[[Callable], str]) -> CheckResult:
    if not callable(fn):
        return CheckResult(name, False, f"expected a function, got {type(fn).__name__}")
    try:
        return CheckResult(name, True, body(fn))
    except _CheckFailedError as failure:
        return CheckResult(name, False, str(failure))


def _scores(seed: int, *shape: int, scale: float = 3.0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


def softmax(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores) -> softmax(scores)`` along the last dimension."""
    def body(f: Callable) -> str:
        cases = [("a vector of 5 scores", _scores(0, 5)),
                 ("a (3, 4) matrix, row by row", _scores(1, 3, 4)),
                 ("scores as large as 1000 (does it overflow?)", _scores(2, 2, 6, scale=1000.0)),
                 ("equal scores", torch.zeros(2, 4))]
        for what, s in cases:
            _compare(_call(f, s.clone(), what=what), torch.softmax(s, -1), what=what)
        return "matches torch.softmax, rows sum to 1, and large scores do not overflow"
    return _run("softmax", fn, body)


def soft_argmax(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores, beta) -> softmax(beta * scores)`` along the last dimension."""
    def body(f: Callable) -> str:
        s = _scores(3, 3, 5)
        for beta in (1.0, 0.0, 0.5, 10.0, 200.0):
            what = f"beta = {beta:g}"
            _compare(_call(f, s.clone(), beta, what=what), _ref.soft_argmax(s, beta), what=what)
        return "right for beta = 0 (uniform) through beta = 200 (nearly one-hot)"
    return _run("soft_argmax", fn, body)


def hard_argmax(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores)`` -> the one-hot argmax along the last dimension, ties to the
    lowest index."""
    def body(f: Callable) -> str:
        cases = [("a (4, 6) matrix", _scores(4, 4, 6)),
                 ("a row with a tie [1, 3, 3, 0]", torch.tensor([[1.0, 3.0, 3.0, 0.0]]))]
        for what, s in cases:
            _compare(_call(f, s.clone(), what=what), _ref.hard_argmax(s), what=what, exact=True)
        return "one 1 per row at the largest score, ties going to the first"
    return _run("hard_argmax", fn, body)


def attention(fn: Callable[..., object]) -> CheckResult:
    """Check ``fn(Q, K, V)`` -> ``softmax(Q K^T / sqrt(d_k)) V`` (an ``(output, weights)``
    tuple is accepted too)."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(5)
        cases = [("Q (4, 8), K (6, 8), V (6, 3)",
                  (torch.randn(4, 8, generator=g), torch.randn(6, 8, generator=g),
                   torch.randn(6, 3, generator=g))),
                 ("a batch: Q (2, 3, 16), K (2, 5, 16), V (2, 5, 4)",
                  (torch.randn(2, 3, 16, generator=g), torch.randn(2, 5, 16, generator=g),
                   torch.randn(2, 5, 4, generator=g)))]
        for what, (q, k, v) in cases:
            got = _call(f, q.clone(), k.clone(), v.clone(), what=what)
            if isinstance(got, tuple):
                got = got[0]
            expected, _ = _ref.attention(q, k, v)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError as failure:
                unscaled, _ = _ref.attention(q, k, v, beta=1.0)
                if isinstance(got, torch.Tensor) and got.shape == unscaled.shape and torch.allclose(
                        got.detach().float(), unscaled, atol=1e-5):
                    raise _CheckFailedError(f"on {what} you forgot to divide the scores by "
                                   f"sqrt(d_k) = {math.sqrt(q.shape[-1]):g}") from None
                raise failure
        return "scaled dot-product attention, batched or not"
    return _run("attention", fn, body)


def causal_mask(fn: Callable[[int], torch.Tensor]) -> CheckResult:
    """Check ``fn(L)`` -> the ``(L, L)`` boolean mask, True where position i may see j <= i."""
    def body(f: Callable) -> str:
        for length in (1, 4, 7):
            what = f"L = {length}"
            _compare(_call(f, length, what=what), _ref.causal_mask(length), what=what)
        return "True on and below the diagonal: nobody sees the future"
    return _run("causal_mask", fn, body)


def padding_mask(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(token_ids, pad_id)`` -> ``(B, 1, 1, L)`` boolean, True for real tokens."""
    def body(f: Callable) -> str:
        ids = torch.tensor([[5, 8, 2, 0, 0], [7, 1, 3, 9, 4]])
        for pad_id in (0, 9):
            what = f"ids {ids.tolist()} with pad_id = {pad_id}"
            _compare(_call(f, ids.clone(), pad_id, what=what), _ref.padding_mask(ids, pad_id),
                     what=what)
        return "(B, 1, 1, L), True for real tokens, broadcastable over heads and queries"
    return _run("padding_mask", fn, body)


def sinusoidal_encoding(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(num_positions, d_model)`` -> the sinusoidal table (sin even, cos odd)."""
    def body(f: Callable) -> str:
        for length, d_model in ((4, 4), (10, 16), (50, 128)):
            what = f"{length} positions, d_model = {d_model}"
            _compare(_call(f, length, d_model, what=what),
                     _sinusoidal_encoding(length, d_model), what=what, atol=1e-4)
        return "sine on even columns, cosine on odd ones, wavelengths up to 10000 * 2 pi"
    return _run("sinusoidal_encoding", fn, body)


def split_heads(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, d_model) -> (B, H, L, d_model / H)``."""
    def body(f: Callable) -> str:
        x = _scores(6, 2, 5, 12)
        for heads in (1, 3, 4):
            what = f"x {tuple(x.shape)} with {heads} heads"
            _compare(_call(f, x.clone(), heads, what=what), _ref.split_heads(x, heads), what=what,
                     exact=True)
        return "each head gets its own contiguous slice of the features"
    return _run("split_heads", fn, body)


def merge_heads(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x)``: ``(B, H, L, d_head) -> (B, L, H * d_head)``, the inverse of
    split_heads."""
    def body(f: Callable) -> str:
        x = _scores(7, 2, 3, 5, 4)
        what = f"x {tuple(x.shape)}"
        _compare(_call(f, x.clone(), what=what), _ref.merge_heads(x), what=what, exact=True)
        return "heads concatenated back along the features"
    return _run("merge_heads", fn, body)


def weighted_sum(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, a)`` -> ``h = X a``, with the t vectors x_i as the rows of ``x`` (t, n)
    and ``a`` a vector of t coefficients."""
    def body(f: Callable) -> str:
        x = _scores(8, 4, 3)
        cases = [("a one-hot a (hard attention)", torch.tensor([0.0, 0.0, 1.0, 0.0])),
                 ("a soft a", torch.tensor([0.1, 0.2, 0.3, 0.4])),
                 ("any a", torch.tensor([2.0, -1.0, 0.5, 0.0]))]
        for what, a in cases:
            _compare(_call(f, x.clone(), a.clone(), what=what), a @ x, what=what)
        return "h = sum_i a_i x_i: a one-hot a picks one x_i, a soft a mixes them"
    return _run("weighted_sum", fn, body)


def self_attention(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, beta)`` -> ``H``: every x_i (a row of ``x``) replaced by
    ``X softmax(beta X^T x_i)``."""
    def body(f: Callable) -> str:
        x = _scores(9, 5, 2, scale=1.0)
        for beta in (0.0, 1.0, 3.0):
            what = f"5 vectors of R^2 with beta = {beta:g}"
            expected, _ = _ref.attention(x, x, x, beta=beta)
            _compare(_call(f, x.clone(), beta, what=what), expected, what=what)
        return "each output is the average of the inputs weighted by softmax(beta X^T x_i)"
    return _run("self_attention", fn, body)


def entropy(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(weights)`` -> the entropy ``-sum_j a_j log a_j`` of each row (natural log,
    with 0 log 0 = 0)."""
    def body(f: Callable) -> str:
        cases = [("uniform rows of 4", torch.full((2, 4), 0.25)),
                 ("one-hot rows (with zeros: 0 log 0 = 0)", torch.eye(3)),
                 ("softmax rows", torch.softmax(_scores(10, 3, 5), -1))]
        for what, w in cases:
            p = w.double()
            expected = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1)
            _compare(_call(f, w.clone(), what=what), expected, what=what)
        return "log(t) for uniform attention, 0 for hard attention"
    return _run("entropy", fn, body)
