"""Argument checks shared by the package: every failure names the argument and what it saw."""

from __future__ import annotations

import math
import numbers

import torch

__all__ = [
    "check_beta",
    "check_bool_mask",
    "check_positive_int",
    "check_tensor",
    "shape_of",
]


def shape_of(x: torch.Tensor) -> str:
    """Format a tensor's shape as ``(2, 3, 4)`` for error messages."""
    return str(tuple(x.shape))


def check_tensor(
    name: str,
    x: object,
    *,
    min_dim: int | None = None,
    ndim: int | tuple[int, ...] | None = None,
    floating: bool = False,
    integer: bool = False,
) -> torch.Tensor:
    """Check that ``x`` is a tensor of an allowed rank and kind; return it unchanged."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if min_dim is not None and x.dim() < min_dim:
        raise ValueError(
            f"{name} must have at least {min_dim} dimensions, got shape {shape_of(x)}"
        )
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if x.dim() not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise ValueError(f"{name} must have {want} dimensions, got shape {shape_of(x)}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if integer and (x.is_floating_point() or x.is_complex() or x.dtype == torch.bool):
        raise TypeError(f"{name} must be an integer tensor of token ids, got dtype {x.dtype}")
    return x


def check_positive_int(name: str, value: object, *, allow_zero: bool = False) -> int:
    """Check that ``value`` is an int >= 1 (or >= 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    low = 0 if allow_zero else 1
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def check_beta(beta: object) -> float:
    """Check the inverse temperature: a finite real number >= 0."""
    if isinstance(beta, torch.Tensor):
        if beta.numel() != 1:
            raise ValueError(f"beta must be a scalar, got a tensor of shape {shape_of(beta)}")
        beta = beta.item()
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number, got {type(beta).__name__}")
    value = float(beta)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"beta must be finite and >= 0, got {value}")
    return value


def check_bool_mask(name: str, mask: object, target: tuple[int, ...]) -> torch.Tensor:
    """Check that ``mask`` is boolean and broadcasts to the ``target`` shape."""
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a boolean torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "convert a 0/1 mask with mask.bool() and a PyTorch-style mask "
            "(True = blocked) with ~mask"
        )
    try:
        shape = torch.broadcast_shapes(mask.shape, target)
    except RuntimeError:
        shape = None
    if shape != torch.Size(target):
        shown = "(" + ", ".join(str(s) for s in target) + ")"
        raise ValueError(
            f"{name} of shape {shape_of(mask)} does not broadcast to the scores' shape {shown}"
        )
    return mask
