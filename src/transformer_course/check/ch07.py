"""Checkers of chapter 7's transfer exercises: a new idea applied somewhere new.

* :func:`rms_norm`: RMSNorm, LayerNorm without the centring and without the shift.
* :func:`gated_feed_forward`: the SwiGLU variant of the position-wise feed-forward network.
* :func:`encoder_layer_parameters`: how many parameters an encoder layer holds;
* :func:`encoder_layer_flops`: how much work an encoder layer does on a sequence, and where the
  products that grow with the square of its length take over;
* :func:`qk_norm_scores`: LayerNorm applied to each head's queries and keys (QK-norm), which
  bounds the attention scores;
* :func:`fold_layer_norm`: LayerNorm's gamma and beta folded into the linear layers that read
  its output, as in a pre-norm layer (not in post-norm, whose residual stream carries the
  LayerNorm's output too);
* :func:`neighbour_feed_forward`: a feed-forward network whose first layer is a 1-D
  convolution of kernel size 3, written without a convolution;
* :func:`masked_mean_pool`: the mean of an encoder's outputs over the real tokens only.
"""

from __future__ import annotations

import math
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
    _parts,
    _real,
    _run,
    _shape,
)

__all__ = [
    "encoder_layer_flops",
    "encoder_layer_parameters",
    "fold_layer_norm",
    "gated_feed_forward",
    "masked_mean_pool",
    "neighbour_feed_forward",
    "qk_norm_scores",
    "rms_norm",
]


def _matches(got: object, wrong: torch.Tensor, atol: float) -> bool:
    """Whether the reader's answer equals a known wrong answer (quietly False if it cannot
    even be read: the generic comparison will then say why)."""
    if not isinstance(got, torch.Tensor) or got.shape != wrong.shape or got.is_complex():
        return False
    if got.device.type == "meta":
        return False
    got = got.detach().to("cpu", torch.float64)
    return bool(torch.isfinite(got).all()) and bool((got - wrong).abs().max() <= atol)


def _name_mistake(got: object, expected: torch.Tensor,
                  mistakes: list[tuple[torch.Tensor, str]], what: str) -> None:
    """Raise the message of the first known mistake that the answer reproduces (a mistake
    that gives the right result on this input is no mistake here)."""
    for wrong, message in mistakes:
        if not torch.allclose(wrong, expected, atol=1e-4) and _matches(got, wrong, 1e-5):
            raise _CheckFailedError(message.format(what=what))


# --- RMSNorm ------------------------------------------------------------------------------------

def _rms_reference(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.double()
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gamma.double()


def _explain_rms_norm(got: object, x: torch.Tensor, gamma: torch.Tensor, eps: float,
                      what: str) -> None:
    """Name the classic RMSNorm mistakes before the generic comparison."""
    x64, g64 = x.double(), gamma.double()
    other_dims = [x64 / torch.sqrt(x64.pow(2).mean(dim, keepdim=True) + eps) * g64
                  for dim in range(x.dim() - 1)]
    rms = x64.pow(2).mean(-1, keepdim=True)
    centred = x64 - x64.mean(-1, keepdim=True)
    wrong = [
        (centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + eps) * g64,
         _("on {what} the mean was subtracted first: that is LayerNorm; RMSNorm divides by "
           "the root mean square and leaves the mean where it is")),
        (x64 / (torch.sqrt(rms) + eps) * g64,
         _("on {what} eps is added after the square root: RMSNorm divides by "
           "sqrt(mean(x^2) + eps)")),
        (x64 / torch.sqrt(rms + eps),
         _("on {what} the result is not multiplied by gamma")),
        *((wrong, _("on {what} the mean of the squares runs over the wrong dimension: each "
                    "vector is normalised on its own, over its last dimension"))
          for wrong in other_dims),
        (x64 / torch.sqrt(x64.pow(2).sum(-1, keepdim=True) + eps) * g64,
         _("on {what} the squares are summed, not averaged: divide by the root of their "
           "mean")),
    ]
    _name_mistake(got, _rms_reference(x, gamma, eps), wrong, what)


def rms_norm(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, gamma, eps)`` -> ``gamma * x / sqrt(mean(x^2) + eps)`` over the last
    dimension (RMSNorm: no mean subtracted, no shift added)."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(70)
        d = 8
        cases = (
            (_("vectors around zero, gamma = 1"), torch.randn(2, 3, d, generator=g),
             torch.ones(d), 1e-5),
            (_("vectors far from zero (mean about {mean}), gamma = 1").format(mean=_num(5)),
             torch.randn(2, 3, d, generator=g) * 2 + 5, torch.ones(d), 1e-5),
            (_("a learned gamma"), torch.randn(4, d, generator=g) * 3 - 1,
             torch.randn(d, generator=g), 1e-5),
            (_("tiny vectors, where eps = {eps} matters").format(eps=_num(1e-2)),
             torch.randn(3, d, generator=g) * 0.05, torch.ones(d), 1e-2),
        )
        for what, x, gamma, eps in cases:
            got = _call(f, x.clone(), gamma.clone(), eps, what=what)
            _explain_rms_norm(got, x, gamma, eps, what)
            _compare(got, _rms_reference(x, gamma, eps), what=what, atol=1e-4)
        return _("each vector divided by its root mean square, then scaled by gamma: no "
                 "centring, no shift")
    return _run("rms_norm", fn, body)


# --- a gated feed-forward network -------------------------------------------------------------

def gated_feed_forward(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w_gate, w_up, w_down)`` -> ``(silu(x W_gate^T) * (x W_up^T)) W_down^T``:
    the SwiGLU feed-forward network, position by position, without biases."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(71)
        for shape, d_ff in (((2, 5, 6), 16), ((1, 3, 4), 10)):
            d_model = shape[-1]
            x = torch.randn(*shape, generator=g)
            w_gate = torch.randn(d_ff, d_model, generator=g) / math.sqrt(d_model)
            w_up = torch.randn(d_ff, d_model, generator=g) / math.sqrt(d_model)
            w_down = torch.randn(d_model, d_ff, generator=g) / math.sqrt(d_ff)
            x64, wg, wu, wd = (t.double() for t in (x, w_gate, w_up, w_down))
            gate, up = x64 @ wg.T, x64 @ wu.T  # (..., d_ff) each
            expected = (F.silu(gate) * up) @ wd.T
            what = _("x {shape} with d_ff = {d_ff}").format(shape=_shape(shape),
                                                            d_ff=_num(d_ff))
            got = _call(f, x.clone(), w_gate.clone(), w_up.clone(), w_down.clone(), what=what)
            wrong = [
                ((gate * F.silu(up)) @ wd.T,
                 _("on {what} SiLU is applied to x W_up^T: the gate is the branch of w_gate")),
                ((torch.sigmoid(gate) * up) @ wd.T,
                 _("on {what} the gate uses a sigmoid: that is the original GLU; SwiGLU uses "
                   "SiLU(z) = z * sigmoid(z)")),
                ((torch.relu(gate) * up) @ wd.T,
                 _("on {what} the gate uses a ReLU (that variant is called ReGLU); SwiGLU "
                   "uses SiLU(z) = z * sigmoid(z)")),
                (F.silu(gate) @ wd.T,
                 _("on {what} there is no gating: multiply SiLU(x W_gate^T) entry by entry "
                   "with x W_up^T before the last projection")),
                ((F.silu(gate) + up) @ wd.T,
                 _("on {what} the two branches are added: the gate multiplies them, entry by "
                   "entry")),
            ]
            _name_mistake(got, expected, wrong, what)
            _compare(got, expected, what=what, atol=1e-4)
        return _("SiLU of the gate branch times the up branch, then projected back to d_model")
    return _run("gated_feed_forward", fn, body)


# --- counting parameters ------------------------------------------------------------------------

def _whole_number(got: object, *, what: str, count: str | None = None) -> int:
    """A whole number from an int, a float or a one-element tensor; a message otherwise."""
    value = _real(got)
    if value is None:
        raise _CheckFailedError(_("on {what} expected a whole number, got {kind}")
                                .format(what=what, kind=_kind(got)))
    number = float(value)
    if not math.isfinite(number):
        raise _CheckFailedError(_("on {what} expected a whole number, got {value}")
                                .format(what=what, value=_num(number)))
    if abs(number - round(number)) > 1e-6:
        if count is not None:
            raise _CheckFailedError(_("on {what} got {value}, which is not a whole number: "
                                      "{count} is an integer")
                                    .format(what=what, value=_num(number), count=count))
        raise _CheckFailedError(_("on {what} got {value}, which is not a whole number: a "
                                  "count of parameters is an integer")
                                .format(what=what, value=_num(number)))
    return round(number)


def _layer_count(d_model: int, num_heads: int, d_ff: int) -> int:
    """The parameters of the package's encoder layer, counted without allocating them."""
    from ..layers import EncoderLayer

    with torch.device("meta"):
        layer = EncoderLayer(d_model, num_heads, d_ff)
    return sum(p.numel() for p in layer.parameters())


def _explain_count(got: int, d: int, h: int, d_ff: int, what: str) -> None:
    """Name the classic counting mistakes."""
    right = _layer_count(d, h, d_ff)
    attention_biases, ffn_biases, norms = 4 * d, d_ff + d, 4 * d
    mistakes = [
        (right - norms, _("on {what} got {got}, expected {expected}: the two LayerNorms "
                          "are missing (a gamma and a beta of {d} entries each)")),
        (right - attention_biases - ffn_biases,
         _("on {what} got {got}, expected {expected}: the biases of the linear layers are "
           "missing")),
        (right - attention_biases - ffn_biases - norms,
         _("on {what} got {got}, expected {expected}: the biases and the two LayerNorms are "
           "missing")),
        (right - (d * d + d), _("on {what} got {got}, expected {expected}: the output "
                                "projection W_o of the attention is missing")),
        (right + (h - 1) * 4 * (d * d + d),
         _("on {what} got {got}, expected {expected}: the attention is counted once per "
           "head, but the {h} heads share the d_model x d_model projections, each head "
           "using a slice of d_model / h columns")),
        (right - (d * d_ff + d_ff) - (d_ff * d + d),
         _("on {what} got {got}, expected {expected}: the feed-forward network is missing")),
    ]
    for value, message in mistakes:
        if value != right and got == value:
            raise _CheckFailedError(message.format(what=what, got=_num(got),
                                                   expected=_num(right), d=_num(d), h=_num(h)))


def _exact_count(got: int, expected: int, what: str) -> None:
    """A count (of parameters, of operations) is right or off by a number it names."""
    if got != expected:
        raise _CheckFailedError(_("on {what} got {got}, expected {expected} (off by "
                                  "{error})").format(what=what, got=_num(got),
                                                     expected=_num(expected),
                                                     error=_num(got - expected)))


def encoder_layer_parameters(fn: Callable[[int, int, int], int]) -> CheckResult:
    """Check ``fn(d_model, num_heads, d_ff)`` -> the number of trainable parameters of one
    encoder layer: the four attention projections and the two linear layers of the
    feed-forward network (weights and biases), and the two LayerNorms (gamma and beta)."""
    def body(f: Callable) -> str:
        cases = ((64, 4, 128), (512, 8, 2048), (512, 1, 2048), (768, 12, 3072), (6, 3, 10))
        for d, h, d_ff in cases:
            what = _("d_model = {d}, {h} heads, d_ff = {d_ff}").format(
                d=_num(d), h=_num(h), d_ff=_num(d_ff))
            got = _whole_number(_call(f, d, h, d_ff, what=what), what=what)
            _explain_count(got, d, h, d_ff, what)
            _exact_count(got, _layer_count(d, h, d_ff), what)
        return _("4 (d^2 + d) for attention, 2 d d_ff + d_ff + d for the feed-forward "
                 "network, 4 d for the LayerNorms; the number of heads changes nothing")
    return _run("encoder_layer_parameters", fn, body)


# --- counting the work of a layer -------------------------------------------------------------

def _layer_flops(d: int, d_ff: int, length: int) -> int:
    """The FLOPs of the matrix products of one encoder layer on one sequence, product by
    product (an (n x m) by (m x p) product: n m p multiply-adds, 2 n m p FLOPs)."""
    projections = 4 * 2 * length * d * d  # W_q, W_k, W_v and W_o: (L x d) by (d x d)
    scores = 2 * length * length * d      # Q K^T, all heads: h (L x d/h) by (d/h x L)
    mix = 2 * length * length * d         # weights V, all heads: h (L x L) by (L x d/h)
    ffn = 2 * 2 * length * d * d_ff       # (L x d) by (d x d_ff), then (L x d_ff) by (d_ff x d)
    return projections + scores + mix + ffn


def _explain_flops(got: int, d: int, h: int, d_ff: int, length: int, what: str) -> None:
    """Name the classic counting mistakes."""
    right = _layer_flops(d, d_ff, length)
    square = 4 * length * length * d
    mistakes = [
        (right // 2, _("on {what} got {got}, expected {expected}: that is the number of "
                       "multiply-adds; each one is two floating-point operations")),
        (right + (h - 1) * square,
         _("on {what} got {got}, expected {expected}: the scores and the weighted sum are "
           "counted with all d_model dimensions in each of the {h} heads; each head works in "
           "d_model / h of them")),
        (right - square, _("on {what} got {got}, expected {expected}: the scores Q K^T and "
                           "the weighted sum of the values are missing, the two products that "
                           "grow like the square of the length")),
        (right - square // 2, _("on {what} got {got}, expected {expected}: one of the two "
                                "products of the attention weights is missing (the scores Q "
                                "K^T, or the weights times V)")),
        (right - 2 * length * d * d, _("on {what} got {got}, expected {expected}: the output "
                                       "projection W_o is missing")),
        (right - 4 * length * d * d_ff, _("on {what} got {got}, expected {expected}: the "
                                          "feed-forward network is missing")),
    ]
    for value, message in mistakes:
        if value != right and got == value:
            raise _CheckFailedError(message.format(what=what, got=_num(got),
                                                   expected=_num(right), h=_num(h)))


def encoder_layer_flops(fn: Callable[[int, int, int, int], int]) -> CheckResult:
    """Check ``fn(d_model, num_heads, d_ff, length)`` -> the floating-point operations of the
    matrix products of one encoder layer on one sequence of ``length`` positions:
    ``8 L d^2`` for the four projections, ``4 L^2 d`` for the scores and the weighted sum of
    the values (all heads together), ``4 L d d_ff`` for the feed-forward network."""
    def body(f: Callable) -> str:
        cases = ((64, 4, 128, 10), (512, 8, 2048, 512), (512, 1, 2048, 512),
                 (768, 12, 3072, 128), (6, 3, 10, 1))
        for d, h, d_ff, length in cases:
            what = _("d_model = {d}, {h} heads, d_ff = {d_ff}, a sequence of {length} "
                     "positions").format(d=_num(d), h=_num(h), d_ff=_num(d_ff),
                                         length=_num(length))
            got = _whole_number(_call(f, d, h, d_ff, length, what=what), what=what,
                                count=_("a count of operations"))
            _explain_flops(got, d, h, d_ff, length, what)
            _exact_count(got, _layer_flops(d, d_ff, length), what)
        return _("8 L d^2 for the projections, 4 L^2 d for the scores and the weighted sum, "
                 "4 L d d_ff for the feed-forward network; the number of heads changes "
                 "nothing")
    return _run("encoder_layer_flops", fn, body)


# --- normalising queries and keys ------------------------------------------------------------

def _qk_reference(q: torch.Tensor, k: torch.Tensor, *, centre: bool = True,
                  scale: bool = True, keys: bool = True, unit: bool = False,
                  dim: int = -1) -> torch.Tensor:
    """The right scores and the classic mistakes, in float64."""
    q, k = q.double(), k.double()
    d_k = q.shape[-1]

    def norm(t: torch.Tensor) -> torch.Tensor:
        if unit:
            return F.normalize(t, dim=-1)
        if dim != -1:
            centred = t - t.mean(dim, keepdim=True)
            return centred / torch.sqrt(centred.pow(2).mean(dim, keepdim=True) + 1e-5)
        if not centre:
            return t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + 1e-5)
        return F.layer_norm(t, (d_k,), eps=1e-5)

    q_hat = norm(q)
    k_hat = norm(k) if keys else k
    scores = q_hat @ k_hat.transpose(-2, -1)  # (B, H, L, L)
    return scores / math.sqrt(d_k) if scale else scores


def qk_norm_scores(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(q, k)`` -> ``(B, H, L, L)`` scores ``q_hat k_hat^T / sqrt(d_k)``, where each
    query and each key ``(B, H, L, d_k)`` is normalised over its ``d_k`` entries as LayerNorm
    does, without gamma and beta (eps = 1e-5): QK-norm."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(77)
        cases = (
            (_("queries and keys of a few units, away from zero"), (2, 2, 5, 8), 3.0, 2.0),
            (_("queries and keys a hundred times larger"), (1, 3, 4, 16), 100.0, -50.0),
        )
        for what, shape, spread, shift in cases:
            q = torch.randn(*shape, generator=g) * spread + shift
            k = torch.randn(*shape, generator=g) * spread - shift / 2
            got = _call(f, q.clone(), k.clone(), what=what)
            expected = _qk_reference(q, k)
            _name_mistake(got, expected, [
                (_qk_reference(q, k, scale=False),
                 _("on {what} the scores are not divided by sqrt(d_k)")),
                (_qk_reference(q, k, keys=False),
                 _("on {what} only the queries are normalised: the keys are too")),
                (_qk_reference(q, k, centre=False),
                 _("on {what} the mean is not subtracted (that is RMSNorm): LayerNorm "
                   "centres each vector first")),
                (_qk_reference(q, k, unit=True),
                 _("on {what} the vectors are scaled to length 1 (F.normalize): LayerNorm "
                   "centres them and leaves a length of sqrt(d_k)")),
                (_qk_reference(q, k, dim=-2),
                 _("on {what} the normalisation runs over the positions: each query and each "
                   "key is normalised on its own, over its d_k entries")),
            ], what)
            _compare(got, expected, what=what, atol=1e-4)
        return _("each query and key centred and scaled over its d_k entries, then the "
                 "scaled dot product: no score can exceed sqrt(d_k)")
    return _run("qk_norm_scores", fn, body)


# --- folding LayerNorm into the next linear layer -------------------------------------------

def _fold_cases() -> list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(72)
    cases = []
    for d, k in ((6, 4), (5, 5), (8, 12)):
        gamma = torch.randn(d, generator=g) * 0.5 + 1
        beta = torch.randn(d, generator=g)
        weight = torch.randn(k, d, generator=g) / math.sqrt(d)
        bias = torch.randn(k, generator=g)
        what = _("a LayerNorm of width {d} followed by a linear layer {d} -> {k}").format(
            d=_num(d), k=_num(k))
        cases.append((what, gamma, beta, weight, bias))
    return cases


def _explain_fold(got_w: torch.Tensor, got_b: torch.Tensor, gamma: torch.Tensor,
                  beta: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                  what: str) -> None:
    """Name the classic folding mistakes before the generic comparison."""
    g, b, w, c = (t.double() for t in (gamma, beta, weight, bias))
    right_w, right_b = w * g, w @ b + c

    def same(got: torch.Tensor, wrong: torch.Tensor, right: torch.Tensor) -> bool:
        return (not torch.allclose(wrong, right, atol=1e-6)
                and _matches(got, wrong, 1e-5))

    if same(got_w, w, right_w):
        raise _CheckFailedError(_("on {what} the weight is the linear layer's own: gamma "
                                  "scales each input feature, so it multiplies the columns "
                                  "of the weight").format(what=what))
    if got_w.shape == w.T.shape == w.shape and same(got_w, g[:, None] * w, right_w):
        if same(got_b, g * c + b, right_b):
            raise _CheckFailedError(_("on {what} gamma and beta are applied to the output of "
                                      "the linear layer, as if the LayerNorm came after it: "
                                      "here the LayerNorm comes first and the linear layer "
                                      "reads its output, so gamma scales the columns of the "
                                      "weight and beta goes through it, W beta + b")
                                    .format(what=what))
        raise _CheckFailedError(_("on {what} gamma multiplies the rows of the weight; it "
                                  "scales the input features, which are its columns")
                                .format(what=what))
    if not _matches(got_w, right_w, 1e-5):
        return
    wrongs = [
        (c, _("on {what} the bias misses W beta: the shift beta also goes through the "
              "linear layer")),
        (w @ b, _("on {what} the bias misses the linear layer's own bias")),
        ((w * g) @ b + c, _("on {what} the bias is W (gamma * beta) + b: beta is added after "
                            "gamma, so it is not scaled by it; the bias is W beta + b")),
    ]
    if b.shape == c.shape:
        wrongs.append((b + c, _("on {what} beta is added to the bias as it is: it must first "
                                "go through the weight, W beta + b")))
    for wrong, message in wrongs:
        if same(got_b, wrong, right_b):
            raise _CheckFailedError(message.format(what=what))


def _fold_pre_norm_layer(f: Callable) -> None:
    """Fold both LayerNorms of a pre-norm encoder layer into the linear layers that read them
    (``norm1`` into W_q, W_k and W_v, ``norm2`` into the feed-forward network's first layer),
    with the reader's function, and compare the layer's output with the original's. This is
    where the folding is exact: in pre-norm each LayerNorm's output feeds those linear layers
    and nothing else (in post-norm it is also the residual stream, which has no weight to
    absorb gamma and beta)."""
    from ..layers import EncoderLayer

    what = _("a pre-norm encoder layer, its two LayerNorms folded into the linear layers "
             "that read them")
    g = torch.Generator().manual_seed(76)
    torch.manual_seed(76)  # the layer's initial weights (the caller's random state is restored)
    layer = EncoderLayer(8, 2, 16, dropout=0.0, norm_first=True).double().eval()
    x = torch.randn(2, 5, 8, generator=g, dtype=torch.float64)
    with torch.no_grad():
        for norm in (layer.norm1, layer.norm2):
            norm.weight.copy_(torch.randn(8, generator=g, dtype=torch.float64) * 0.5 + 1)
            norm.bias.copy_(torch.randn(8, generator=g, dtype=torch.float64))
        expected = layer(x)
        readers = ((layer.norm1, (layer.self_attn.W_q, layer.self_attn.W_k,
                                  layer.self_attn.W_v)),
                   (layer.norm2, (layer.ff.linear1,)))
        for norm, linears in readers:
            for linear in linears:
                got = _parts(_call(f, norm.weight.clone(), norm.bias.clone(),
                                   linear.weight.clone(), linear.bias.clone(), what=what),
                             2, "(new_weight, new_bias)", what=what)
                new_weight, new_bias = (_as_tensor(t, what=what) for t in got)
                _compare(new_weight, linear.weight * norm.weight, what=what, atol=1e-5)
                _compare(new_bias, linear.weight @ norm.bias + linear.bias, what=what,
                         atol=1e-5)
                linear.weight.copy_(new_weight.double())
                linear.bias.copy_(new_bias.double())
            norm.weight.fill_(1.0)  # what is left of the LayerNorm: (x - mean) / std
            norm.bias.zero_()
        _compare(layer(x), expected, what=what, atol=1e-5)


def fold_layer_norm(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(gamma, beta, weight, bias)`` -> ``(new_weight, new_bias)`` such that
    ``normalised @ new_weight.T + new_bias == linear(gamma * normalised + beta)`` for every
    normalised vector: ``new_weight = weight * gamma`` (each column scaled) and
    ``new_bias = weight @ beta + bias``; then, with it, fold the two LayerNorms of a pre-norm
    encoder layer into the linear layers that read them, and compare the layer's outputs."""
    def body(f: Callable) -> str:
        probe = torch.randn(7, 12, generator=torch.Generator().manual_seed(73))
        for what, gamma, beta, weight, bias in _fold_cases():
            got = _parts(_call(f, gamma.clone(), beta.clone(), weight.clone(), bias.clone(),
                               what=what), 2, "(new_weight, new_bias)", what=what)
            got_w = _as_tensor(got[0], what=what)
            got_b = _as_tensor(got[1], what=what)
            _explain_fold(got_w, got_b, gamma, beta, weight, bias, what)
            _compare(got_w, weight.double() * gamma.double(), what=what, atol=1e-5)
            _compare(got_b, weight.double() @ beta.double() + bias.double(), what=what,
                     atol=1e-5)
            normalised = F.layer_norm(probe[:, :gamma.shape[0]].double(), gamma.shape)
            expected = F.linear(normalised * gamma.double() + beta.double(), weight.double(),
                                bias.double())
            _compare(normalised @ got_w.double().T + got_b.double(), expected, what=what,
                     atol=1e-5)
        _fold_pre_norm_layer(f)
        return _("gamma scales the columns of the weight, and beta goes through it into the "
                 "bias: W diag(gamma), W beta + b; a pre-norm layer folded so gives the same "
                 "outputs")
    return _run("fold_layer_norm", fn, body)


# --- a feed-forward network that sees its neighbours -----------------------------------------

def _neighbour_reference(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
                         w2: torch.Tensor, b2: torch.Tensor, *, flip: bool = False,
                         wrap: bool = False, centre_only: bool = False) -> torch.Tensor:
    """The right answer (``conv1d`` with zero padding) and the classic mistakes."""
    x, w1, b1, w2, b2 = (t.double() for t in (x, w1, b1, w2, b2))
    kernel = w1.flip(-1) if flip else w1
    if centre_only:
        kernel = torch.zeros_like(kernel)
        kernel[..., 1] = w1[..., 1]
    inputs = x.transpose(1, 2)  # (B, d_model, L)
    if wrap:
        inputs = torch.cat([inputs[..., -1:], inputs, inputs[..., :1]], dim=-1)
        hidden = F.conv1d(inputs, kernel, b1)
    else:
        hidden = F.conv1d(inputs, kernel, b1, padding=1)
    return F.relu(hidden).transpose(1, 2) @ w2.T + b2  # (B, L, d_model)


def neighbour_feed_forward(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(x, w1, b1, w2, b2)`` -> ``relu(conv(x) + b1) W2^T + b2`` for ``x (B, L,
    d_model)``, where the first layer is a 1-D convolution of kernel size 3 with zero
    padding, in PyTorch's layout: ``w1 (d_ff, d_model, 3)``, ``w1[:, :, 0]`` reading
    position ``i - 1``, ``w1[:, :, 1]`` position ``i`` and ``w1[:, :, 2]`` position
    ``i + 1``; ``w2 (d_model, d_ff)`` is a position-wise linear layer."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(74)
        for shape, d_ff in (((2, 5, 4), 8), ((1, 1, 3), 6), ((3, 6, 2), 5)):
            d_model = shape[-1]
            x = torch.randn(*shape, generator=g)
            w1 = torch.randn(d_ff, d_model, 3, generator=g) / math.sqrt(3 * d_model)
            b1 = torch.randn(d_ff, generator=g) * 0.1
            w2 = torch.randn(d_model, d_ff, generator=g) / math.sqrt(d_ff)
            b2 = torch.randn(d_model, generator=g) * 0.1
            what = _("x {shape} with d_ff = {d_ff}").format(shape=_shape(shape),
                                                            d_ff=_num(d_ff))
            args = (x, w1, b1, w2, b2)
            got = _call(f, *(t.clone() for t in args), what=what)
            expected = _neighbour_reference(*args)
            _name_mistake(got, expected, [
                (_neighbour_reference(*args, flip=True),
                 _("on {what} the kernel is flipped: w1[:, :, 0] reads the previous position "
                   "i - 1 and w1[:, :, 2] the next one, as nn.Conv1d does")),
                (_neighbour_reference(*args, wrap=True),
                 _("on {what} the sequence wraps around (torch.roll?): the first position "
                   "has no previous one and the last no next one, they see zeros")),
                (_neighbour_reference(*args, centre_only=True),
                 _("on {what} only w1[:, :, 1] is used: that is the kernel-size-1 network of "
                   "section 7.5; the outer taps read the neighbours")),
            ], what)
            _compare(got, expected, what=what, atol=1e-4)
        return _("each position reads itself and its two neighbours (zeros beyond the ends), "
                 "then the same two-layer network as before")
    return _run("neighbour_feed_forward", fn, body)


# --- mean pooling over real tokens -----------------------------------------------------------

def _pool_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(75)
    hidden = torch.randn(3, 5, 4, generator=g) + 2.0  # padding positions hold numbers too
    keep = torch.tensor([[True] * 5, [True, True, True, False, False],
                         [True, False, False, False, False]])
    empty = torch.randn(2, 3, 4, generator=g) - 1.0
    none = torch.tensor([[True, True, False], [False, False, False]])
    return [(_("a batch of 3 sequences, two of them padded"), hidden, keep),
            (_("a batch whose second sequence is all padding"), empty, none)]


def _pool_reference(hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    weights = keep.double()[..., None]  # (B, L, 1)
    return (hidden.double() * weights).sum(1) / weights.sum(1).clamp(min=1.0)


def masked_mean_pool(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(hidden, keep)`` -> ``(B, d_model)``: the mean of ``hidden (B, L, d_model)``
    over the positions where ``keep (B, L)`` is True; a sequence with no real token pools
    to zeros (``TransformerClassifier(pooling="mean")``)."""
    def body(f: Callable) -> str:
        for what, hidden, keep in _pool_cases():
            h = hidden.double()
            count = keep.double().sum(1, keepdim=True)  # (B, 1)
            expected = _pool_reference(hidden, keep)
            got = _call(f, hidden.clone(), keep.clone(), what=what)
            got_tensor = _as_tensor(got, what=what)
            if got_tensor.shape == expected.shape and not bool(
                    torch.isfinite(got_tensor.double()).all()):
                row = int((~torch.isfinite(got_tensor.double())).any(-1).nonzero()[0])
                if not bool(keep[row].any()):
                    raise _CheckFailedError(_(
                        "on {what} the sequence {row} has no real token and pools to "
                        "{value}: 0 / 0; give it zeros (clamp the count to at least 1)")
                        .format(what=what, row=_num(row), value=_num(float("nan"))))
            _name_mistake(got, expected, [
                (h.mean(1), _("on {what} the padding positions are averaged in: take the "
                              "mean over the real tokens only")),
                ((h * keep.double()[..., None]).sum(1) / h.shape[1],
                 _("on {what} the sum over the real tokens is divided by the length L, "
                   "padding included: divide by the number of real tokens")),
                (h.sum(1) / count.clamp(min=1.0),
                 _("on {what} the padding positions are summed in: mask them before the "
                   "sum")),
            ], what)
            _compare(got_tensor, expected, what=what, atol=1e-5)
        return _("the mean over the real tokens only: the padding takes no part in it")
    return _run("masked_mean_pool", fn, body)
