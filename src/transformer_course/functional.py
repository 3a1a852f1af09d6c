"""The maths of attention as small pure functions.

Conventions used everywhere in the package:

* tensors are batch first; multi-head tensors are ``(B, H, L, d_head)``;
* boolean masks say **True = may attend** and broadcast to ``(..., L_q, L_k)``;
* ``beta`` (the inverse temperature) multiplies the raw dot products, ``scores = beta * q . k``,
  and defaults to ``1 / sqrt(d_k)``;
* a query whose keys are all masked gets all-zero weights and a zero output, never NaN;
* hard attention is the one-hot argmax of the scores, ties going to the lowest index.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._checks import (
    check_beta,
    check_bool_mask,
    check_device,
    check_dim,
    check_flag,
    check_int,
    check_positive_int,
    check_probability,
    check_scores,
    check_tensor,
    has_data,
    recorded,
    shape_of,
)

__all__ = [
    "attention",
    "causal_mask",
    "hard_argmax",
    "merge_heads",
    "padding_mask",
    "soft_argmax",
    "split_heads",
]


def soft_argmax(scores: torch.Tensor, beta: float = 1.0, dim: int = -1) -> torch.Tensor:
    """The soft argmax (softmax) of ``beta * scores`` along ``dim``.

    ``beta = 0`` gives the uniform distribution; as ``beta`` grows the result tends to the
    one-hot :func:`hard_argmax`. The largest score is subtracted before multiplying by
    ``beta``, so any finite scores and any ``beta`` the dtype can hold (1e30 in float32
    included) give finite probabilities.

    Args:
        scores: real-valued tensor of any shape.
        beta: inverse temperature, finite, >= 0 and representable in the dtype of ``scores``.
        dim: the dimension that sums to one.

    Returns:
        A tensor of the same shape whose slices along ``dim`` are probability vectors.

    Raises:
        ValueError: for a ``beta`` the dtype cannot hold, and, unless autograd records the
            call, for NaN or ``+inf`` scores, which have no probabilities (``-inf``, a score
            masked out, gets probability 0).
    """
    check_tensor("scores", scores, min_dim=1, floating=True)
    if has_data(scores) and not recorded(scores) and bool(
            (torch.isnan(scores) | (scores == float("inf"))).any()):
        raise ValueError(f"scores must hold no NaN nor +inf, got {shape_of(scores)} scores "
                         "with some")
    beta = check_beta(beta, scores.dtype)
    return _soft_argmax(scores, beta, check_dim("dim", dim, scores.dim()))


def _soft_argmax(scores: torch.Tensor, beta: float, dim: int) -> torch.Tensor:
    """:func:`soft_argmax` without the checks."""
    if beta == 0.0:
        return torch.softmax(torch.zeros_like(scores), dim=dim)  # uniform
    if scores.shape[dim] == 0:
        return torch.softmax(scores, dim=dim)  # nothing to normalise
    gap = scores - scores.amax(dim=dim, keepdim=True)  # <= 0, exactly 0 at the maximum
    return torch.softmax(gap * beta, dim=dim)


def hard_argmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """The one-hot argmax of ``scores`` along ``dim`` (ties go to the lowest index).

    Args:
        scores: real-valued tensor of any shape.
        dim: the dimension along which exactly one entry is 1.

    Returns:
        A tensor of the same shape and dtype holding 0s and one 1 per slice.
    """
    check_tensor("scores", scores, min_dim=1, floating=True)
    return _hard_argmax(scores, check_dim("dim", dim, scores.dim()))


def _hard_argmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """:func:`hard_argmax` without the checks."""
    if scores.shape[dim] == 0:
        return torch.zeros_like(scores)  # no entry to pick
    index = scores.argmax(dim=dim, keepdim=True)  # torch returns the first maximum
    return torch.zeros_like(scores).scatter_(dim, index, 1.0)


def causal_mask(length: int, *, past: int = 0,
                device: torch.device | str | None = None) -> torch.Tensor:
    """The mask of masked (causal) self-attention: position i may attend to j <= i.

    Args:
        length: sequence length L (the queries).
        past: positions before them that the keys also hold (the length of a KV cache):
            query ``i`` is position ``past + i`` and may attend to keys ``0..past + i``.
        device: where to create the mask.

    Returns:
        ``(L, past + L)`` boolean tensor, True on and below the ``past``-th diagonal:
        ``(L, L)``, lower triangular, when ``past = 0``.
    """
    length = check_positive_int("length", length)
    past = check_positive_int("past", past, allow_zero=True)
    device = check_device("device", device)
    return torch.ones(length, past + length, dtype=torch.bool, device=device).tril(past)


def padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """The key mask that hides padding tokens.

    Args:
        token_ids: ``(B, L)`` integer tensor (any integer dtype).
        pad_id: the id of the padding token ([PAD]).

    Returns:
        ``(B, 1, 1, L)`` boolean tensor, True where the token is not padding; it broadcasts
        against ``(B, H, L_q, L)`` scores.
    """
    check_tensor("token_ids", token_ids, ndim=2, integer=True)
    pad_id = check_int("pad_id", pad_id)
    return (token_ids != pad_id)[:, None, None, :]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the last dimension into heads: ``(B, L, H * d_head) -> (B, H, L, d_head)``."""
    check_tensor("x", x, ndim=3)
    num_heads = check_positive_int("num_heads", num_heads)
    if x.shape[-1] % num_heads:
        raise ValueError(
            f"the last dimension of x ({x.shape[-1]}, shape {shape_of(x)}) is not divisible by "
            f"num_heads={num_heads}"
        )
    return _split_heads(x, num_heads)


def _split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """:func:`split_heads` without the checks."""
    batch, length, width = x.shape
    x = x.view(batch, length, num_heads, width // num_heads)  # (B, L, H, d_head)
    return x.transpose(1, 2)  # (B, H, L, d_head)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads back: ``(B, H, L, d_head) -> (B, L, H * d_head)``."""
    check_tensor("x", x, ndim=4)
    return _merge_heads(x)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:
    """:func:`merge_heads` without the checks."""
    batch, num_heads, length, d_head = x.shape
    x = x.transpose(1, 2)  # (B, L, H, d_head)
    return x.reshape(batch, length, num_heads * d_head)  # (B, L, H * d_head)


def _check_qkv(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
) -> tuple[int, ...]:
    """Validate query/key/value; return the shape of the scores ``(..., L_q, L_k)``."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(name, t, min_dim=2, floating=True)
    if not (query.device == key.device == value.device):
        raise ValueError(
            f"query, key and value must be on one device, got {query.device}, {key.device}, "
            f"{value.device}"
        )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must share their last dimension d_k, got query "
            f"{shape_of(query)} and key {shape_of(key)}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "key and value must have the same length L_k (dimension -2), got key "
            f"{shape_of(key)} and value {shape_of(value)}"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise TypeError(
            f"query, key and value must share a dtype, got {query.dtype}, {key.dtype}, "
            f"{value.dtype}"
        )
    try:
        batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch, head) dimensions of query, key and value do not "
            f"broadcast: {shape_of(query)}, {shape_of(key)}, {shape_of(value)}"
        ) from None
    return (*batch, query.shape[-2], key.shape[-2])


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    beta: float | None = None,
    hard: bool = False,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dot-product attention that returns its weights.

    ``weights = [soft]argmax(beta * query @ key^T)`` row by row, ``output = weights @ value``.

    Args:
        query: ``(..., L_q, d_k)``.
        key: ``(..., L_k, d_k)``.
        value: ``(..., L_k, d_v)``.
        mask: boolean, True = may attend, broadcastable to ``(..., L_q, L_k)``.
        beta: inverse temperature >= 0; ``None`` means ``1 / sqrt(d_k)``.
        hard: one-hot argmax weights instead of softmax weights.
        dropout_p: dropout on the weights used for the output (the returned weights are
            those before dropout).

    Shape:
        The leading dimensions of the three inputs broadcast together.

    Returns:
        ``(output, weights)``: ``(..., L_q, d_v)`` and ``(..., L_q, L_k)``. Each row of
        ``weights`` sums to one, or is all zero when every key of that row is masked.

    Raises:
        ValueError: for a ``beta`` the dtype cannot hold, and, unless autograd records the
            call (nothing is read back on the host then), for non-finite inputs or scores
            ``beta * query . key`` that could overflow the dtype (``query`` and ``key`` of
            1e19 in float32, say): scale them down or compute in float64.
    """
    target = _check_qkv(query, key, value)
    if beta is None and query.shape[-1] == 0:
        raise ValueError(
            f"query and key have d_k = 0 (query {shape_of(query)}): the default "
            "beta = 1 / sqrt(d_k) is undefined; pass beta"
        )
    beta = 1.0 / math.sqrt(query.shape[-1]) if beta is None else check_beta(beta, query.dtype)
    hard = check_flag("hard", hard)
    dropout_p = check_probability("dropout_p", dropout_p)
    if mask is not None:
        mask = check_bool_mask("mask", mask, target).to(query.device)
    if not recorded(query, key, value):  # a forward autograd records reads nothing on the host
        check_scores(query, key, value, beta)
    return _attention(query, key, value, mask, beta, hard, dropout_p)


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               mask: torch.Tensor | None, beta: float, hard: bool, dropout_p: float
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`attention` without its checks (``mask`` on the device of ``query``): the one
    implementation of the weights, shared by the function, the modules and the cached step."""
    scores = beta * query @ key.transpose(-2, -1)  # (..., L_q, L_k)
    if mask is not None:
        empty = ~mask.any(dim=-1, keepdim=True)  # (..., L_q, 1): a query with no key
        scores = scores.masked_fill(~mask, float("-inf")).masked_fill(empty, 0.0)
    weights = _hard_argmax(scores) if hard else torch.softmax(scores, dim=-1)  # max subtracted
    if mask is not None:
        weights = weights.masked_fill(empty, 0.0)  # nothing to attend to: zero weights
    if dropout_p > 0:
        return F.dropout(weights, p=dropout_p) @ value, weights  # returned before dropout
    return weights @ value, weights  # (..., L_q, d_v), (..., L_q, L_k)
