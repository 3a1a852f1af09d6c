"""The checkers of the chapters' exercises, one per function a student writes."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch

from .. import functional as _ref
from ..i18n import gettext as _
from ..i18n import ngettext
from ..layers import MultiHeadAttention
from ..positional import sinusoidal_encoding as _sinusoidal_encoding
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
    _scores,
    _shape,
)

__all__ = [
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

def softmax(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores) -> softmax(scores)`` along the last dimension, for vectors,
    matrices and batches, including scores so large (or so negative) that ``exp``
    overflows (or underflows) unless the maximum is subtracted first."""
    def body(f: Callable) -> str:
        cases = [
            (_("a vector of {n} scores").format(n=_num(5)), _scores(0, 5)),
            (_("a {shape} matrix, row by row").format(shape=_shape((3, 4))), _scores(1, 3, 4)),
            (_("a batch of shape {shape}").format(shape=_shape((2, 3, 4))), _scores(22, 2, 3, 4)),
            (_("scores as large as {size} (does it overflow?)").format(size=_num(1000)),
             _scores(2, 2, 6, scale=1000.0)),
            (_("scores as negative as {size} (does it underflow?)").format(size=_num(-1000)),
             -_scores(23, 2, 6, scale=1000.0).abs() - 1000.0),
            (_("equal scores"), torch.zeros(2, 4)),
        ]
        for what, s in cases:
            _compare(_call(f, s.clone(), what=what), torch.softmax(s, -1), what=what)
        return _("matches torch.softmax, rows sum to 1, and large scores do not overflow")
    return _run("softmax", fn, body)


def soft_argmax(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores, beta) -> softmax(beta * scores)`` along the last dimension, from
    ``beta = 0`` (uniform) to ``beta = 200`` (nearly one-hot, where a naive ``exp``
    overflows)."""
    def body(f: Callable) -> str:
        s = _scores(3, 3, 5)
        for beta in (1.0, 0.0, 0.5, 10.0, 200.0):
            what = _("beta = {beta}").format(beta=_num(beta))
            _compare(_call(f, s.clone(), beta, what=what), _ref.soft_argmax(s, beta), what=what)
        return _("right for beta = 0 (uniform) through beta = 200 (nearly one-hot)")
    return _run("soft_argmax", fn, body)


def hard_argmax(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores)`` -> the one-hot argmax along the last dimension (same shape as
    ``scores``), ties going to the lowest index."""
    def body(f: Callable) -> str:
        cases = [(_("a {shape} matrix").format(shape=_shape((4, 6))), _scores(4, 4, 6)),
                 (_("a row with a tie {row}").format(row=_ints([1, 3, 3, 0])),
                  torch.tensor([[1.0, 3.0, 3.0, 0.0]]))]
        for what, s in cases:
            _compare(_call(f, s.clone(), what=what), _ref.hard_argmax(s), what=what, exact=True)
        return _("one 1 per row at the largest score, ties going to the first")
    return _run("hard_argmax", fn, body)


def attention(fn: Callable[..., object]) -> CheckResult:
    """Check ``fn(Q, K, V)`` -> ``softmax(Q K^T / sqrt(d_k)) V``, batched or not (an
    ``(output, weights)`` tuple is accepted too)."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(5)
        cases = [((4, 8), (6, 8), (6, 3)), ((2, 3, 16), (2, 5, 16), (2, 5, 4))]
        for n, shapes in enumerate(cases):
            q, k, v = (torch.randn(*shape, generator=g) for shape in shapes)
            shapes = dict(q=_shape(q.shape), k=_shape(k.shape), v=_shape(v.shape))
            what = (_("a batch: Q {q}, K {k}, V {v}") if n else _("Q {q}, K {k}, V {v}")).format(
                **shapes)
            got = _call(f, q.clone(), k.clone(), v.clone(), what=what)
            if isinstance(got, tuple):
                got = _parts(got, 2, "(output, weights)", what=what)[0]
            expected, _weights = _ref.attention(q, k, v)
            try:
                _compare(got, expected, what=what)
            except _CheckFailedError:
                _explain_attention(got, q, k, v, what)
                raise
        return _("scaled dot-product attention, batched or not")
    return _run("attention", fn, body)


def _explain_attention(got: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       what: str) -> None:
    """Name the classic mistakes: no scaling, or scaling by sqrt(d_v)."""
    try:
        got = _as_tensor(got, what=what)
    except _CheckFailedError:
        return
    d_k, d_v = q.shape[-1], v.shape[-1]
    for beta, message in (
            (1.0, _("on {what} you forgot to divide the scores by sqrt(d_k) = {root}")),
            (1.0 / math.sqrt(d_v), _("on {what} the scores are divided by sqrt(d_v) = {wrong} "
                                     "instead of sqrt(d_k) = {root}"))):
        if d_v == d_k and beta != 1.0:
            continue
        wrong, _weights = _ref.attention(q, k, v, beta=beta)
        if got.shape == wrong.shape and torch.allclose(got.to(torch.float32), wrong, atol=1e-5):
            raise _CheckFailedError(message.format(what=what, root=_num(math.sqrt(d_k)),
                                                   wrong=_num(math.sqrt(d_v))))


def causal_mask(fn: Callable[[int], torch.Tensor]) -> CheckResult:
    """Check ``fn(L)`` -> the ``(L, L)`` boolean mask, True where position i may see j <= i
    (the diagonal included)."""
    def body(f: Callable) -> str:
        for length in (1, 4, 7):
            what = _("L = {length}").format(length=_num(length))
            _compare(_call(f, length, what=what), _ref.causal_mask(length), what=what)
        return _("True on and below the diagonal: nobody sees the future")
    return _run("causal_mask", fn, body)


def padding_mask(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(token_ids, pad_id)`` -> ``(B, 1, 1, L)`` boolean, True for real tokens,
    for any ``pad_id``."""
    def body(f: Callable) -> str:
        ids = torch.tensor([[5, 8, 2, 0, 0], [7, 1, 3, 9, 4]])
        for pad_id in (0, 9):
            what = _("ids {ids} with pad_id = {pad_id}").format(ids=_ints(ids.tolist()),
                                                                pad_id=_num(pad_id))
            _compare(_call(f, ids.clone(), pad_id, what=what), _ref.padding_mask(ids, pad_id),
                     what=what)
        return _("(B, 1, 1, L), True for real tokens, broadcastable over heads and queries")
    return _run("padding_mask", fn, body)


def sinusoidal_encoding(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(num_positions, d_model)`` -> the sinusoidal table (sin on even columns,
    cos on odd ones, base 10000), for even ``d_model``."""
    def body(f: Callable) -> str:
        for length, d_model in ((4, 4), (10, 16), (50, 128)):
            what = _("{length} positions, d_model = {d_model}").format(length=_num(length),
                                                                       d_model=_num(d_model))
            _compare(_call(f, length, d_model, what=what),
                     _sinusoidal_encoding(length, d_model), what=what, atol=1e-4)
        return _("sine on even columns, cosine on odd ones, wavelengths up to 10000 * 2 pi")
    return _run("sinusoidal_encoding", fn, body)


def split_heads(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, num_heads)``: ``(B, L, d_model) -> (B, H, L, d_model / H)``, each head
    taking a contiguous slice of the features."""
    def body(f: Callable) -> str:
        x = _scores(6, 2, 5, 12)
        for heads in (1, 3, 4):
            what = ngettext("x {shape} with {heads} head", "x {shape} with {heads} heads",
                            heads).format(shape=_shape(x.shape), heads=_num(heads))
            _compare(_call(f, x.clone(), heads, what=what), _ref.split_heads(x, heads), what=what,
                     exact=True)
        return _("each head gets its own contiguous slice of the features")
    return _run("split_heads", fn, body)


def merge_heads(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x)``: ``(B, H, L, d_head) -> (B, L, H * d_head)``, the inverse of
    split_heads."""
    def body(f: Callable) -> str:
        x = _scores(7, 2, 3, 5, 4)
        what = _("x {shape}").format(shape=_shape(x.shape))
        _compare(_call(f, x.clone(), what=what), _ref.merge_heads(x), what=what, exact=True)
        return _("heads concatenated back along the features")
    return _run("merge_heads", fn, body)


def weighted_sum(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, a)`` -> ``h = X a``, with the t vectors x_i as the rows of ``x`` (t, n)
    and ``a`` a vector of t coefficients (one-hot, soft or any)."""
    def body(f: Callable) -> str:
        x = _scores(8, 4, 3)
        cases = [(_("a one-hot a (hard attention)"), torch.tensor([0.0, 0.0, 1.0, 0.0])),
                 (_("a soft a"), torch.tensor([0.1, 0.2, 0.3, 0.4])),
                 (_("any a"), torch.tensor([2.0, -1.0, 0.5, 0.0]))]
        for what, a in cases:
            _compare(_call(f, x.clone(), a.clone(), what=what), a @ x, what=what)
        return _("h = sum_i a_i x_i: a one-hot a picks one x_i, a soft a mixes them")
    return _run("weighted_sum", fn, body)


def self_attention(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, beta)`` -> ``H``: every x_i (a row of ``x``) replaced by
    ``X softmax(beta X^T x_i)``."""
    def body(f: Callable) -> str:
        x = _scores(9, 5, 2, scale=1.0)
        for beta in (0.0, 1.0, 3.0):
            what = _("{n} vectors of R^2 with beta = {beta}").format(n=_num(5), beta=_num(beta))
            expected, _weights = _ref.attention(x, x, x, beta=beta)
            _compare(_call(f, x.clone(), beta, what=what), expected, what=what)
        return _("each output is the average of the inputs weighted by softmax(beta X^T x_i)")
    return _run("self_attention", fn, body)


def entropy(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(weights)`` -> the entropy ``-sum_j a_j log a_j`` of each row (natural log,
    with 0 log 0 = 0)."""
    def body(f: Callable) -> str:
        cases = [(_("uniform rows of {n}").format(n=_num(4)), torch.full((2, 4), 0.25)),
                 (_("one-hot rows (with zeros: 0 log 0 = 0)"), torch.eye(3)),
                 (_("softmax rows"), torch.softmax(_scores(10, 3, 5), -1))]
        for what, w in cases:
            p = w.double()
            expected = -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1)
            _compare(_call(f, w.clone(), what=what), expected, what=what)
        return _("log(t) for uniform attention, 0 for hard attention")
    return _run("entropy", fn, body)


def lookup(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(query, keys, values, beta, hard)`` -> the value a soft (or hard) dictionary
    returns for one query: ``[soft](arg)max_beta(keys @ query) @ values``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(11)
        keys, values = torch.randn(5, 3, generator=g), torch.randn(5, 2, generator=g)
        query = torch.randn(3, generator=g)
        for beta, hard in ((1.0, False), (0.0, False), (5.0, False), (1.0, True)):
            what = (_("hard retrieval") if hard
                    else _("soft retrieval with beta = {beta}").format(beta=_num(beta)))
            expected, _weights = _ref.attention(query[None], keys, values, beta=beta, hard=hard)
            got = _call(f, query.clone(), keys.clone(), values.clone(), beta, hard, what=what)
            _compare(got, expected[0], what=what)
        return _("hard retrieval returns the best value, soft retrieval a weighted blend")
    return _run("lookup", fn, body)


def project_qkv(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(x, w_qkv, d_qk)`` -> ``(q, k, v)`` from one stacked weight of shape
    ``(2 d_qk + d_v, n)``, vectors as rows (``d_v`` may differ from ``d_qk``)."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(12)
        x = torch.randn(4, 6, generator=g)
        for d_qk, d_v in ((3, 3), (2, 5)):
            w = torch.randn(2 * d_qk + d_v, 6, generator=g)
            what = _("d_qk = {d_qk}, d_v = {d_v}").format(d_qk=_num(d_qk), d_v=_num(d_v))
            got = _call(f, x.clone(), w.clone(), d_qk, what=what)
            got = _parts(got, 3, "(q, k, v)", what=what)
            for name, part, rows in zip("qkv", got, w.split([d_qk, d_qk, d_v]), strict=True):
                _compare(part, x @ rows.T, what=_("{what}, {name}").format(what=what, name=name))
        return _("q = W_q x, k = W_k x and v = W_v x from a single product")
    return _run("project_qkv", fn, body)


def multi_head_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_q, w_k, w_v, w_o, num_heads)`` -> multi-head self-attention of
    ``x`` ``(B, L, d)`` with ``(d, d)`` weights used as ``x @ w.T`` (no biases), each head
    scaled by ``1 / sqrt(d_head)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(13)
        x = torch.randn(2, 5, 12, generator=g)
        weights = [torch.randn(12, 12, generator=g) / 12**0.5 for _w in range(4)]
        for heads in (1, 3, 4):
            module = MultiHeadAttention(12, heads, bias=False)
            with torch.no_grad():
                for layer, w in zip((module.W_q, module.W_k, module.W_v, module.W_o), weights,
                                    strict=True):
                    layer.weight.copy_(w)
                expected, _weights = module(x, x, x)
            what = ngettext("x {shape} with {heads} head", "x {shape} with {heads} heads",
                            heads).format(shape=_shape(x.shape), heads=_num(heads))
            got = _call(f, x.clone(), *(w.clone() for w in weights), heads, what=what)
            _compare(got, expected, what=what)
        return _("split into heads, attend in each, concatenate, mix with W_o")
    return _run("multi_head_attention", fn, body)


def masked_softmax(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(scores, mask)`` -> softmax over the positions where ``mask`` is True,
    exactly 0 elsewhere, and an all-zero row (never NaN) when a row has no True."""
    def body(f: Callable) -> str:
        s = _scores(14, 3, 4)
        gaps = torch.tensor([[True, False, True, False], [False, False, False, False],
                             [True, True, True, True]])
        cases = [(_("a causal mask"), s, _ref.causal_mask(4)[:3]),
                 (_("no mask at all (every entry True)"), s, torch.ones(3, 4, dtype=torch.bool)),
                 (_("a row with every key masked"), s, gaps),
                 (_("allowed scores far below 0 (about -100)"), s - 100, gaps)]
        for what, scores, mask in cases:
            expected = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
            expected = torch.where(mask.any(-1, keepdim=True), expected, 0.0)
            got = _call(f, scores.clone(), mask.clone(), what=what)
            weights = _as_tensor(got, what=what)
            if (weights.shape == mask.shape and bool(torch.isfinite(weights).all())
                    and bool((weights[~mask] != 0).any())):
                leak = float(f"{float(weights[~mask].abs().max()):.2g}")
                raise _CheckFailedError(
                    _("on {what} a masked position gets a weight of {weight}, not exactly 0: "
                      "fill the masked scores with -inf (a finite number such as -16 still "
                      "leaves them a weight, and takes it all when the allowed scores are "
                      "lower still)").format(what=what, weight=_num(leak)))
            _compare(got, expected, what=what)
        return _("masked positions get exactly 0 and a row with nothing to attend to is all 0")
    return _run("masked_softmax", fn, body)


def shift_matrix(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(k, d_model)`` -> the ``(d_model, d_model)`` matrix ``M_k`` with
    ``E[p + k] = M_k E[p]`` for every position p of the sinusoidal encoding."""
    def body(f: Callable) -> str:
        table = _sinusoidal_encoding(200, 16, dtype=torch.float64)
        for k in (1, 3, 40):
            what = _("k = {k}, d_model = {d_model}").format(k=_num(k), d_model=_num(16))
            got = _as_tensor(_call(f, k, 16, what=what), what=what)
            if got.shape != (16, 16):
                raise _CheckFailedError(
                    _("on {what} expected a {expected} matrix, got shape {got}")
                    .format(what=what, expected=_shape((16, 16)), got=_shape(got.shape)))
            moved = table[:-k] @ got.to(torch.float64).T  # M_k E_p for every p
            _compare(moved, table[k:], what=_("{what} (M_k E_p against E_(p+k) for all p)")
                     .format(what=what), atol=1e-5)
        return _("one rotation per (sin, cos) pair, the same for every position")
    return _run("shift_matrix", fn, body)


def _as_integer(got: object, *, what: str) -> int:
    """A whole number from an int, a float or a one-element tensor; a message otherwise."""
    value = got
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.device.type != "meta":
        value = got.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _CheckFailedError(_("on {what} expected a whole number, got {kind}")
                                .format(what=what, kind=_kind(got)))
    number = float(value)
    if not math.isfinite(number):
        raise _CheckFailedError(_("on {what} expected a whole number, got {value}")
                                .format(what=what, value=_num(number)))
    if abs(number - round(number)) > 1e-3:
        raise _CheckFailedError(_("on {what} got {value}, which is not a whole number: "
                                  "an offset counts positions").format(what=what,
                                                                      value=_num(number)))
    return round(number)


def _slow_angle(e: torch.Tensor, d_model: int) -> float:
    i = d_model // 2 - 1  # the slowest pair
    return math.atan2(float(e[2 * i]), float(e[2 * i + 1]))


def offset(fn: Callable[[torch.Tensor, torch.Tensor, int], int]) -> CheckResult:
    """Check ``fn(e_p, e_q, d_model)`` -> the integer ``q - p`` (negative when q < p) read
    from two sinusoidal encodings. Some cases straddle the point where the angle of the
    slowest pair, as atan2 returns it, wraps around from pi to -pi (near p = 314 for
    d_model = 4): the difference of the two angles must be brought back into (-pi, pi]."""
    def body(f: Callable) -> str:
        cases = ((32, 0, 1), (32, 10, 3), (32, 500, 1100), (32, 7, 7), (32, 1000, 250),
                 (4, 300, 330), (4, 330, 300), (4, 0, 200), (32, 17600, 17750))
        tables = {d: _sinusoidal_encoding(17800 if d == 32 else 400, d, dtype=torch.float64)
                  for d in (4, 32)}
        for d_model, p, q in cases:
            table = tables[d_model]
            what = _("positions p = {p}, q = {q}, d_model = {d_model}").format(
                p=_num(p), q=_num(q), d_model=_num(d_model))
            got = _call(f, table[p].clone(), table[q].clone(), d_model, what=what)
            value = _as_integer(got, what=what)
            if value == q - p:
                continue
            omega = 10000.0 ** (-2 * (d_model // 2 - 1) / d_model)
            raw = (_slow_angle(table[q], d_model) - _slow_angle(table[p], d_model)) / omega
            if value == round(raw) != q - p:
                raise _CheckFailedError(
                    _("on {what} got {got}, expected {expected}: the angle of the slowest pair "
                      "wrapped around between p and q (atan2 gives angles in (-pi, pi]); bring "
                      "the difference of the two angles back into (-pi, pi] before dividing by "
                      "omega").format(what=what, got=_num(value), expected=_num(q - p)))
            raise _CheckFailedError(_("on {what} got {got}, expected {expected}").format(
                what=what, got=_num(value), expected=_num(q - p)))
        return _("the offset q - p is readable from the encodings alone, even where the angle "
                 "wraps around")
    return _run("offset", fn, body)


def layer_norm(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, gamma, beta, eps)`` -> LayerNorm over the last dimension: the biased
    variance, ``eps`` inside the square root, then ``gamma * . + beta``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(15)
        x = torch.randn(2, 3, 8, generator=g) * 4 + 2
        flat = torch.randn(2, 3, 8, generator=g) * 3e-3 + 0.01  # variance close to eps
        cases = ((_("gamma = 1, beta = 0"), x, torch.ones(8), torch.zeros(8)),
                 (_("a learned gamma and beta"), x, torch.randn(8, generator=g),
                  torch.randn(8, generator=g)),
                 (_("nearly constant vectors, where eps matters"), flat, torch.ones(8),
                  torch.zeros(8)))
        for what, inputs, gamma, beta in cases:
            expected = torch.nn.functional.layer_norm(inputs, (8,), gamma, beta, 1e-5)
            _compare(_call(f, inputs.clone(), gamma.clone(), beta.clone(), 1e-5, what=what),
                     expected, what=what, atol=1e-4)
        return _("each vector centred, scaled to unit variance, then gamma * . + beta")
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
        what = _("x {shape} with d_ff = {d_ff}").format(shape=_shape(x.shape), d_ff=_num(24))
        got = _call(f, x.clone(), w1.clone(), b1.clone(), w2.clone(), b2.clone(), what=what)
        _compare(got, expected, what=what, atol=1e-4)
        return _("two linear layers and a ReLU, the same at every position")
    return _run("feed_forward", fn, body)


def encoder_layer(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, attend, ffn, norm1, norm2, norm_first)`` -> one post-norm or pre-norm
    encoder layer assembled from its sub-layers."""
    def body(f: Callable) -> str:
        from ..layers import EncoderLayer

        torch.manual_seed(17)
        x = torch.randn(2, 5, 16)
        for norm_first in (False, True):
            layer = EncoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first).eval()
            with torch.no_grad():
                expected = layer(x)

                def attend(h: torch.Tensor, layer: EncoderLayer = layer) -> torch.Tensor:
                    return layer.self_attn(h, h, h)[0]

                what = _("pre-norm") if norm_first else _("post-norm")
                got = _call(f, x.clone(), attend, layer.ff, layer.norm1, layer.norm2, norm_first,
                            what=what)
            _compare(got, expected, what=what, atol=1e-5)
        return _("Add & Norm around attention and the FFN, in both orders")
    return _run("encoder_layer", fn, body)


def teacher_forcing(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(y, bos_id, eos_id)`` -> ``(decoder_input, expected_output)``:
    ``<bos> y`` and ``y <eos>``, both ``(B, n + 1)``."""
    def body(f: Callable) -> str:
        y = torch.tensor([[5, 6, 7], [8, 9, 10]])
        what = _("y = {y}, bos {bos}, eos {eos}").format(y=_ints(y.tolist()), bos=_num(1),
                                                         eos=_num(2))
        got = _parts(_call(f, y.clone(), 1, 2, what=what), 2,
                     "(decoder_input, expected_output)", what=what)
        _compare(got[0], torch.tensor([[1, 5, 6, 7], [1, 8, 9, 10]]),
                 what=_("{what}, the input").format(what=what), exact=True)
        _compare(got[1], torch.tensor([[5, 6, 7, 2], [8, 9, 10, 2]]),
                 what=_("{what}, the target").format(what=what), exact=True)
        return _("the input starts with <bos>, the target ends with <eos>: a shift by one")
    return _run("teacher_forcing", fn, body)


def cross_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(y, memory, w_q, w_k, w_v)`` -> single-head cross-attention: queries from
    ``y``, keys and values from ``memory``, scale ``1/sqrt(d)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(18)
        y, memory = torch.randn(2, 3, 8, generator=g), torch.randn(2, 6, 8, generator=g)
        w = [torch.randn(8, 8, generator=g) / 8**0.5 for _w in range(3)]
        expected, _weights = _ref.attention(y @ w[0].T, memory @ w[1].T, memory @ w[2].T)
        what = _("y {y} and memory {memory}").format(y=_shape(y.shape),
                                                     memory=_shape(memory.shape))
        got = _call(f, y.clone(), memory.clone(), *(t.clone() for t in w), what=what)
        if isinstance(got, torch.Tensor) and got.shape == (2, 6, 8):
            raise _CheckFailedError(
                _("on {what} the output has one row per memory position: the queries must "
                  "come from the decoder states y").format(what=what))
        _compare(got, expected, what=what)
        return _("one output per decoder position, built from the encoder's values")
    return _run("cross_attention", fn, body)


# --- greedy decoding ----------------------------------------------------------------------------

_BOS, _EOS = 1, 2


def _end_steps(out: torch.Tensor) -> list[int | None]:
    """For each generated row, the number of tokens up to and including <eos> (None if
    it never came)."""
    ends = []
    for row in out.tolist():
        ends.append(row.index(_EOS) + 1 if _EOS in row else None)
    return ends


def _decoding_problem() -> tuple[torch.nn.Module, torch.Tensor]:
    """A small random model and 3 sources whose greedy decodings end with <eos> at three
    different steps, so that stopping, padding and ``max_len`` can all be told apart."""
    from ..models import Transformer

    torch.manual_seed(19)
    model = Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                        dropout=0.0).eval()
    pool = torch.randint(3, 12, (40, 5), generator=torch.Generator().manual_seed(0))
    base = model.lm_head.bias[_EOS].item()
    chosen = pool[:3]
    for bias in (2.0, 2.5, 1.5, 3.0, 1.0, 3.5):
        with torch.no_grad():  # make <eos> likely enough to end sequences at various steps
            model.lm_head.bias[_EOS] = base + bias
            ends = _end_steps(model.greedy_decode(pool, bos_id=_BOS, eos_id=_EOS, max_len=10))
        finite = sorted({e for e in ends if e is not None and e < 10})
        if len(finite) >= 3 and finite[0] <= 3:
            picks = (finite[0], finite[len(finite) // 2], finite[-1])
            chosen = pool[[ends.index(e) for e in picks]]
            break
    return model, chosen


def _explain_decoding(got: torch.Tensor, expected: torch.Tensor, max_len: int,
                      pad_id: int, what: str) -> None:
    """Name the classic greedy-decoding mistakes before the generic comparison."""
    if got.dim() != 2 or got.shape[0] != expected.shape[0]:
        return
    if got.shape[1] > max_len:
        raise _CheckFailedError(
            _("on {what} it generated {count} tokens per sequence, more than max_len = "
              "{max_len}").format(what=what, count=_num(got.shape[1]), max_len=_num(max_len)))
    if got.shape[1] and bool((got[:, 0] == _BOS).all()) and not bool(
            (expected[:, 0] == _BOS).all()):
        raise _CheckFailedError(
            _("on {what} every sequence starts with <bos> = {bos}: return the generated "
              "tokens only").format(what=what, bos=_num(_BOS)))
    ends = _end_steps(expected)
    if got.shape[1] > expected.shape[1] and all(e is not None for e in ends):
        raise _CheckFailedError(
            _("on {what} it goes on for {count} tokens although every sequence had produced "
              "<eos> after {done}: stop when all are done").format(
                what=what, count=_num(got.shape[1]), done=_num(expected.shape[1])))
    if got.shape[1] < expected.shape[1]:
        raise _CheckFailedError(ngettext(
            "on {what} it stops after {count} token, but a sequence without <eos> must go on "
            "until it produces <eos> or reaches max_len = {max_len} (expected {expected})",
            "on {what} it stops after {count} tokens, but a sequence without <eos> must go on "
            "until it produces <eos> or reaches max_len = {max_len} (expected {expected})",
            got.shape[1]).format(what=what, count=_num(got.shape[1]), max_len=_num(max_len),
                                 expected=_num(expected.shape[1])))
    for row, end in enumerate(ends):
        if end is None or got.shape[1] != expected.shape[1]:
            continue
        after = got[row, end:]
        if bool((got[row, :end] == expected[row, :end]).all()) and bool(
                (after != pad_id).any()):
            raise _CheckFailedError(
                _("on {what} sequence {row} goes on after its <eos> at step {step}: every "
                  "position after <eos> must be padding ({pad})").format(
                    what=what, row=_num(row), step=_num(end), pad=_num(pad_id)))


def greedy_decode(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(model, src, bos_id, eos_id, max_len)`` against
    :meth:`transformer_course.Transformer.greedy_decode` on a small random model whose
    sequences end with <eos> at different steps: the tokens must be the argmax ones, a
    sequence that produced <eos> must be padded with ``model.pad_id`` afterwards, decoding
    must stop once every sequence has produced <eos>, and never go beyond ``max_len``."""
    def body(f: Callable) -> str:
        model, src = _decoding_problem()
        with torch.no_grad():
            full = model.greedy_decode(src, bos_id=_BOS, eos_id=_EOS, max_len=10)
        longest = full.shape[1]
        ends = [e for e in _end_steps(full) if e is not None]
        cut = max(1, min(ends) + 1 if ends else longest - 1)
        for max_len in (longest + 2, cut, 1):
            what = _("{count} sources with max_len = {max_len}").format(
                count=_num(src.shape[0]), max_len=_num(max_len))
            with torch.no_grad():
                expected = model.greedy_decode(src, bos_id=_BOS, eos_id=_EOS, max_len=max_len)
                got = _call(f, model, src.clone(), _BOS, _EOS, max_len, what=what)
            got = _as_tensor(got, what=what)
            _explain_decoding(got, expected, max_len, model.pad_id, what)
            _compare(got, expected, what=what, exact=True)
        return _("one token at a time, the most likely one, padding after <eos>, stopping "
                 "when every sequence is done or at max_len")
    return _run("greedy_decode", fn, body)


# --- chapter 9: tokens and BERT ---------------------------------------------------------------

def embedding_lookup(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(ids, table)`` -> ``table[ids]`` (the rows of the embedding matrix), for a
    vector and a batch of ids."""
    def body(f: Callable) -> str:
        table = _scores(20, 10, 4)
        for what, ids in ((_("ids {ids}").format(ids=_ints([3, 0, 9])), torch.tensor([3, 0, 9])),
                          (_("a {shape} batch of ids").format(shape=_shape((2, 3))),
                           torch.tensor([[1, 2, 2], [9, 8, 0]]))):
            _compare(_call(f, ids.clone(), table.clone(), what=what), table[ids], what=what)
        return _("row i of the embedding matrix for id i")
    return _run("embedding_lookup", fn, body)


def pad_batch(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(sequences, cls_id, sep_id, pad_id)`` -> ``(ids, attention_mask)``, both
    ``(B, L)``: ``[CLS] ... [SEP]`` then padding on the right, the mask 1 for real tokens."""
    def body(f: Callable) -> str:
        sequences = [[7, 8, 9], [5], [4, 4, 4, 4]]
        expected_ids = torch.tensor([[101, 7, 8, 9, 102, 0], [101, 5, 102, 0, 0, 0],
                                     [101, 4, 4, 4, 4, 102]])
        what = _("sequences {sequences}").format(sequences=_ints(sequences))
        got = _call(f, [list(s) for s in sequences], 101, 102, 0, what=what)
        got = _parts(got, 2, "(ids, attention_mask)", what=what)
        _compare(got[0], expected_ids, what=_("{what}, the ids").format(what=what), exact=True)
        _compare(got[1], (expected_ids != 0).long(), what=_("{what}, the mask").format(what=what),
                 exact=True)
        return _("[CLS] and [SEP] around every sequence, [PAD] to the longest, a 1/0 mask")
    return _run("pad_batch", fn, body)


def mean_pooling(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(hidden, attention_mask)`` -> the mean of ``hidden`` over the real tokens
    (mask 1) only."""
    def body(f: Callable) -> str:
        hidden = _scores(21, 2, 5, 3)
        mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
        expected = torch.stack([hidden[0, :3].mean(0), hidden[1].mean(0)])
        what = _("two sequences, the first with {count} padding positions").format(count=_num(2))
        _compare(_call(f, hidden.clone(), mask.clone(), what=what), expected, what=what)
        return _("padding does not dilute the average")
    return _run("mean_pooling", fn, body)
