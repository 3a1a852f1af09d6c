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
    check_positive_int,
    check_tensor,
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
    one-hot :func:`hard_argmax`.

    Args:
        scores: real-valued tensor of any shape.
        beta: inverse temperature, finite and >= 0.
        dim: the dimension that sums to one.

    Returns:
        A tensor of the same shape whose slices along ``dim`` are probability vectors.
    """
    check_tensor("scores", scores, min_dim=1, floating=True)
    beta = check_beta(beta)
    return torch.softmax(scores * beta, dim=dim)


def hard_argmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """The one-hot argmax of ``scores`` along ``dim`` (ties go to the lowest index).

    Args:
        scores: real-valued tensor of any shape.
        dim: the dimension along which exactly one entry is 1.

    Returns:
        A tensor of the same shape and dtype holding 0s and one 1 per slice.
    """
    check_tensor("scores", scores, min_dim=1, floating=True)
    index = scores.argmax(dim=dim, keepdim=True)  # torch returns the first maximum
    return torch.zeros_like(scores).scatter_(dim, index, 1.0)


def causal_mask(length: int, *, device: torch.device | str | None = None) -> torch.Tensor:
    """The mask of masked (causal) self-attention: position i may attend to j <= i.

    Args:
        length: sequence length L.
        device: where to create the mask.

    Returns:
        ``(L, L)`` boolean tensor, True on and below the diagonal.
    """
    length = check_positive_int("length", length)
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()


def padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """The key mask that hides padding tokens.

    Args:
        token_ids: ``(B, L)`` integer tensor.
        pad_id: the id of the padding token ([PAD]).

    Returns:
        ``(B, 1, 1, L)`` boolean tensor, True where the token is not padding; it broadcasts
        against ``(B, H, L_q, L)`` scores.
    """
    check_tensor("token_ids", token_ids, ndim=2, integer=True)
    return (token_ids != pad_id)[:, None, None, :]


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the last dimension into heads: ``(B, L, H * d_head) -> (B, H, L, d_head)``."""
    check_tensor("x", x, ndim=3)
    num_heads = check_positive_int("num_heads", num_heads)
    batch, length, width = x.shape
    if width % num_heads:
        raise ValueError(
            f"the last dimension of x ({width}, shape {shape_of(x)}) is not divisible by "
            f"num_heads={num_heads}"
        )
    x = x.view(batch, length, num_heads, width // num_heads)  # (B, L, H, d_head)
    return x.transpose(1, 2)  # (B, H, L, d_head)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads back: ``(B, H, L, d_head) -> (B, L, H * d_head)``."""
    check_tensor("x", x, ndim=4)
    batch, num_heads, length, d_head = x.shape
    x = x.transpose(1, 2)  # (B, L, H, d_head)
    return x.reshape(batch, length, num_heads * d_head)  # (B, L, H * d_head)


def _check_qkv(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
) -> tuple[int, ...]:
    """Validate query/key/value; return the shape of the scores ``(..., L_q, L_k)``."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(name, t, min_dim=2, floating=True)
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
    """
    target = _check_qkv(query, key, value)
    beta = 1.0 / math.sqrt(query.shape[-1]) if beta is None else check_beta(beta)
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")

    # Scaling the queries (L_q * d_k numbers) is cheaper than scaling the scores (L_q * L_k).
    scores = (query * beta) @ key.transpose(-2, -1)  # (..., L_q, L_k)

    empty = None
    if mask is not None:
        mask = check_bool_mask("mask", mask, target).to(scores.device)
        scores = scores.masked_fill(~mask, float("-inf"))
        # A query with nothing to attend to: give it finite scores, zero its weights below.
        empty = ~mask.any(dim=-1, keepdim=True)  # (..., L_q, 1)
        scores = scores.masked_fill(empty, 0.0)

    weights = hard_argmax(scores) if hard else torch.softmax(scores, dim=-1)
    if empty is not None:
        weights = weights.masked_fill(empty, 0.0)

    used = F.dropout(weights, p=dropout_p) if dropout_p > 0 else weights
    return used @ value, weights  # (..., L_q, d_v), (..., L_q, L_k)
