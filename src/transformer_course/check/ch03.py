"""Checkers of chapter 3's transfer exercises: a new idea applied somewhere new.

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

import torch

from .. import functional as _ref
from ..i18n import format_number
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

__all__ = ["beta_for_weight", "cosine_lookup", "mha_projections", "score_variance"]


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
    separator = "; " if "," in format_number(0.5) else ", "
    return "(" + separator.join(format_number(v, decimals) for v in values) + ")"


def _close(a: float, b: float, *, rel: float = 1e-4) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


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
