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
from .layers import MultiHeadAttention
from .positional import sinusoidal_encoding as _sinusoidal_encoding

__all__ = [
    "CheckResult",
    "attention",
    "causal_mask",
    "cross_attention",
    "embedding_lookup",
    "encoder_layer",
    "entropy",
    "feed_forward",
    "greedy_decode",
    "hard_argmax",
    "layer_norm",
    "lookup",
    "masked_softmax",
    "mean_pooling",
    "merge_heads",
    "multi_head_attention",
    "offset",
    "pad_batch",
    "padding_mask",
    "project_qkv",
    "self_attention",
    "shift_matrix",
    "sinusoidal_encoding",
    "soft_argmax",
    "softmax",
    "split_heads",
    "teacher_forcing",
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


def lookup(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(query, keys, values, beta, hard)`` -> the value a soft (or hard) dictionary
    returns for one query: ``[soft](arg)max_beta(keys @ query) @ values``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(11)
        keys, values = torch.randn(5, 3, generator=g), torch.randn(5, 2, generator=g)
        query = torch.randn(3, generator=g)
        for beta, hard in ((1.0, False), (0.0, False), (5.0, False), (1.0, True)):
            what = "hard retrieval" if hard else f"soft retrieval with beta = {beta:g}"
            expected, _ = _ref.attention(query[None], keys, values, beta=beta, hard=hard)
            got = _call(f, query.clone(), keys.clone(), values.clone(), beta, hard, what=what)
            _compare(got, expected[0], what=what)
        return "hard retrieval returns the best value, soft retrieval a weighted blend"
    return _run("lookup", fn, body)


def project_qkv(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(x, w_qkv, d_qk)`` -> ``(q, k, v)`` from one stacked weight of shape
    ``(2 d_qk + d_v, n)``, vectors as rows."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(12)
        x = torch.randn(4, 6, generator=g)
        for d_qk, d_v in ((3, 3), (2, 5)):
            w = torch.randn(2 * d_qk + d_v, 6, generator=g)
            what = f"d_qk = {d_qk}, d_v = {d_v}"
            got = _call(f, x.clone(), w.clone(), d_qk, what=what)
            if not isinstance(got, (tuple, list)) or len(got) != 3:
                raise _CheckFailedError(f"on {what} expected a tuple (q, k, v), got "
                                        f"{type(got).__name__}")
            for name, part, rows in zip("qkv", got, w.split([d_qk, d_qk, d_v]), strict=True):
                _compare(part, x @ rows.T, what=f"{what}, {name}")
        return "q = W_q x, k = W_k x and v = W_v x from a single product"
    return _run("project_qkv", fn, body)


def multi_head_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, w_o, num_heads)`` -> multi-head self-attention of
    ``x`` ``(B, L, d)`` with ``(d, d)`` weights used as ``x @ w.T`` (no biases)."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(13)
        x = torch.randn(2, 5, 12, generator=g)
        weights = [torch.randn(12, 12, generator=g) / 12**0.5 for _ in range(4)]
        for heads in (1, 3, 4):
            module = MultiHeadAttention(12, heads, bias=False)
            with torch.no_grad():
                for layer, w in zip((module.W_q, module.W_k, module.W_v, module.W_o), weights,
                                    strict=True):
                    layer.weight.copy_(w)
                expected, _ = module(x, x, x)
            what = f"x {tuple(x.shape)} with {heads} heads"
            got = _call(f, x.clone(), *(w.clone() for w in weights), heads, what=what)
            _compare(got, expected, what=what)
        return "split into heads, attend in each, concatenate, mix with W_o"
    return _run("multi_head_attention", fn, body)


def masked_softmax(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores, mask)`` -> softmax over the positions where ``mask`` is True,
    exactly 0 elsewhere, and an all-zero row (never NaN) when a row has no True."""
    def body(f: Callable) -> str:
        s = _scores(14, 3, 4)
        cases = [("a causal mask", _ref.causal_mask(4)[:3]),
                 ("no mask at all (every entry True)", torch.ones(3, 4, dtype=torch.bool)),
                 ("a row with every key masked", torch.tensor([[True, False, True, False],
                                                               [False, False, False, False],
                                                               [True, True, True, True]]))]
        for what, mask in cases:
            expected = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
            expected = torch.where(mask.any(-1, keepdim=True), expected, 0.0)
            got = _call(f, s.clone(), mask.clone(), what=what)
            _compare(got, expected, what=what)
        return "masked positions get exactly 0 and a row with nothing to attend to is all 0"
    return _run("masked_softmax", fn, body)


def shift_matrix(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(k, d_model)`` -> the ``(d_model, d_model)`` matrix ``M_k`` with
    ``E[p + k] = M_k E[p]`` for every position p of the sinusoidal encoding."""
    def body(f: Callable) -> str:
        table = _sinusoidal_encoding(200, 16, dtype=torch.float64)
        for k in (1, 3, 40):
            what = f"k = {k}, d_model = 16"
            got = _call(f, k, 16, what=what)
            if not isinstance(got, torch.Tensor) or got.shape != (16, 16):
                shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
                raise _CheckFailedError(f"on {what} expected a (16, 16) matrix, got {shape}")
            moved = table[:-k] @ got.detach().to(torch.float64).T  # M_k E_p for every p
            _compare(moved, table[k:], what=f"{what} (M_k E_p against E_(p+k) for all p)",
                     atol=1e-5)
        return "one rotation per (sin, cos) pair, the same for every position"
    return _run("shift_matrix", fn, body)


def offset(fn: Callable[[torch.Tensor, torch.Tensor, int], int]) -> CheckResult:
    """Check ``fn(e_p, e_q, d_model)`` -> the integer ``q - p`` read from two sinusoidal
    encodings."""
    def body(f: Callable) -> str:
        table = _sinusoidal_encoding(1200, 32, dtype=torch.float64)
        for p, q in ((0, 1), (10, 3), (500, 1100), (7, 7), (1000, 250)):
            what = f"positions p = {p}, q = {q}"
            got = _call(f, table[p].clone(), table[q].clone(), 32, what=what)
            try:
                value = round(float(got))
            except (TypeError, ValueError):
                raise _CheckFailedError(f"on {what} expected a number, got {got!r}") from None
            if value != q - p:
                raise _CheckFailedError(f"on {what} got {value}, expected {q - p}")
        return "the offset q - p is readable from the encodings alone"
    return _run("offset", fn, body)


def layer_norm(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)`` -> LayerNorm over the last dimension."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(15)
        x = torch.randn(2, 3, 8, generator=g) * 4 + 2
        for what, gamma, beta in (("gamma = 1, beta = 0", torch.ones(8), torch.zeros(8)),
                                  ("a learned gamma and beta", torch.randn(8, generator=g),
                                   torch.randn(8, generator=g))):
            expected = torch.nn.functional.layer_norm(x, (8,), gamma, beta, 1e-5)
            _compare(_call(f, x.clone(), gamma.clone(), beta.clone(), 1e-5, what=what),
                     expected, what=what, atol=1e-4)
        return "each vector centred, scaled to unit variance, then gamma * . + beta"
    return _run("layer_norm", fn, body)


def feed_forward(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w1, b1, w2, b2)`` -> ``relu(x W1^T + b1) W2^T + b2`` position by
    position."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(16)
        x = torch.randn(2, 5, 6, generator=g)
        w1, b1 = torch.randn(24, 6, generator=g), torch.randn(24, generator=g)
        w2, b2 = torch.randn(6, 24, generator=g), torch.randn(6, generator=g)
        expected = torch.relu(x @ w1.T + b1) @ w2.T + b2
        what = "x (2, 5, 6) with d_ff = 24"
        _compare(_call(f, x.clone(), w1, b1, w2, b2, what=what), expected, what=what, atol=1e-4)
        return "two linear layers and a ReLU, the same at every position"
    return _run("feed_forward", fn, body)


def encoder_layer(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, attend, ffn, norm1, norm2, norm_first)`` -> one post-norm or pre-norm
    encoder layer assembled from its sub-layers."""
    def body(f: Callable) -> str:
        from .layers import EncoderLayer

        torch.manual_seed(17)
        x = torch.randn(2, 5, 16)
        for norm_first in (False, True):
            layer = EncoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first).eval()
            with torch.no_grad():
                expected = layer(x)

                def attend(h: torch.Tensor, layer: EncoderLayer = layer) -> torch.Tensor:
                    return layer.self_attn(h, h, h)[0]

                what = "pre-norm" if norm_first else "post-norm"
                got = _call(f, x.clone(), attend, layer.ff, layer.norm1, layer.norm2, norm_first,
                            what=what)
            _compare(got, expected, what=what, atol=1e-5)
        return "Add & Norm around attention and the FFN, in both orders"
    return _run("encoder_layer", fn, body)


def teacher_forcing(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(y, bos_id, eos_id)`` -> ``(decoder_input, expected_output)``:
    ``<bos> y`` and ``y <eos>``, both ``(B, n + 1)``."""
    def body(f: Callable) -> str:
        y = torch.tensor([[5, 6, 7], [8, 9, 10]])
        got = _call(f, y.clone(), 1, 2, what="y = [[5, 6, 7], [8, 9, 10]], bos 1, eos 2")
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise _CheckFailedError("expected a pair (decoder_input, expected_output), got "
                                    f"{type(got).__name__}")
        what = "y = [[5, 6, 7], [8, 9, 10]]"
        _compare(got[0], torch.tensor([[1, 5, 6, 7], [1, 8, 9, 10]]), what=f"{what}, the input",
                 exact=True)
        _compare(got[1], torch.tensor([[5, 6, 7, 2], [8, 9, 10, 2]]), what=f"{what}, the target",
                 exact=True)
        return "the input starts with <bos>, the target ends with <eos>: a shift by one"
    return _run("teacher_forcing", fn, body)


def cross_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(y, memory, w_q, w_k, w_v)`` -> single-head cross-attention: queries from
    ``y``, keys and values from ``memory``, scale ``1/sqrt(d)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(18)
        y, memory = torch.randn(2, 3, 8, generator=g), torch.randn(2, 6, 8, generator=g)
        w = [torch.randn(8, 8, generator=g) / 8**0.5 for _ in range(3)]
        expected, _ = _ref.attention(y @ w[0].T, memory @ w[1].T, memory @ w[2].T)
        what = "y (2, 3, 8) and memory (2, 6, 8)"
        got = _call(f, y.clone(), memory.clone(), *w, what=what)
        if isinstance(got, torch.Tensor) and got.shape == (2, 6, 8):
            raise _CheckFailedError(f"on {what} the output has one row per memory position: "
                                    "the queries must come from the decoder states y")
        _compare(got, expected, what=what)
        return "one output per decoder position, built from the encoder's values"
    return _run("cross_attention", fn, body)


def greedy_decode(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(model, src, bos_id, eos_id, max_len)`` against
    :meth:`transformer_course.Transformer.greedy_decode` on a small random model."""
    def body(f: Callable) -> str:
        from .models import Transformer

        torch.manual_seed(19)
        model = Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                            dropout=0.0).eval()
        with torch.no_grad():  # make <eos> (2) likely enough to end some sequences early
            model.generator.bias[2] += 1.5
        src = torch.tensor([[3, 4, 5, 0], [6, 7, 8, 9], [10, 11, 3, 4]])
        for max_len in (1, 6):
            what = f"3 sources with max_len = {max_len}"
            with torch.no_grad():
                expected = model.greedy_decode(src, bos_id=1, eos_id=2, max_len=max_len)
                got = _call(f, model, src.clone(), 1, 2, max_len, what=what)
            _compare(got, expected, what=what, exact=True)
        return "one token at a time, the most likely one, stopping at <eos>"
    return _run("greedy_decode", fn, body)


def embedding_lookup(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(ids, table)`` -> ``table[ids]`` (the rows of the embedding matrix)."""
    def body(f: Callable) -> str:
        table = _scores(20, 10, 4)
        for what, ids in (("ids [3, 0, 9]", torch.tensor([3, 0, 9])),
                          ("a (2, 3) batch of ids", torch.tensor([[1, 2, 2], [9, 8, 0]]))):
            _compare(_call(f, ids.clone(), table.clone(), what=what), table[ids], what=what)
        return "row i of the embedding matrix for id i"
    return _run("embedding_lookup", fn, body)


def pad_batch(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(sequences, cls_id, sep_id, pad_id)`` -> ``(ids, attention_mask)``, both
    ``(B, L)``: ``[CLS] ... [SEP]`` then padding on the right."""
    def body(f: Callable) -> str:
        sequences = [[7, 8, 9], [5], [4, 4, 4, 4]]
        expected_ids = torch.tensor([[101, 7, 8, 9, 102, 0], [101, 5, 102, 0, 0, 0],
                                     [101, 4, 4, 4, 4, 102]])
        what = "sequences [[7, 8, 9], [5], [4, 4, 4, 4]]"
        got = _call(f, [list(s) for s in sequences], 101, 102, 0, what=what)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise _CheckFailedError("expected a pair (ids, attention_mask), got "
                                    f"{type(got).__name__}")
        _compare(got[0], expected_ids, what=f"{what}, the ids", exact=True)
        _compare(got[1], (expected_ids != 0).long(), what=f"{what}, the mask", exact=True)
        return "[CLS] and [SEP] around every sequence, [PAD] to the longest, a 1/0 mask"
    return _run("pad_batch", fn, body)


def mean_pooling(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(hidden, attention_mask)`` -> the mean of ``hidden`` over real tokens."""
    def body(f: Callable) -> str:
        hidden = _scores(21, 2, 5, 3)
        mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
        expected = torch.stack([hidden[0, :3].mean(0), hidden[1].mean(0)])
        what = "two sequences, the first with 2 padding positions"
        _compare(_call(f, hidden.clone(), mask.clone(), what=what), expected, what=what)
        return "padding does not dilute the average"
    return _run("mean_pooling", fn, body)
