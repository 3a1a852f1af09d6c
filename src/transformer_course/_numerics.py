"""Finite input, finite output: the overflow guard of the package's modules.

In float32 the squares of numbers above about 1e19 overflow. LayerNorm's variance and the
dot products of attention square their inputs, so an input of 1e30 turns into ``inf`` and
then ``NaN`` although the true result is a perfectly ordinary number. Two mechanisms keep a
finite input from giving NaN, chosen by whether autograd records the call:

* **A forward that autograd records** (training) never reads a tensor back on the host,
  so that a GPU never waits for the CPU: the rows too large to square are scaled down on
  the device, before the squares. LayerNorm does not change when a row is divided by a
  number (:func:`rescale_rows`, :class:`LayerNorm`). Attention divides a query row whose
  scores could exceed the dtype's range until they cannot (:func:`rescale_queries`); the
  scores of such a row are so large that the change is far below their own rounding
  error. Rows of ordinary size are multiplied by exactly 1: their results do not change
  by a bit. Only inputs so large that a linear layer's output itself overflows (about
  1e37 in float32) can then give ``±inf``, and NaN after it.
* **Without autograd** (evaluation, the explorers), the outermost module call checks its
  output once (one device synchronisation) and, only when a finite input gave a
  non-finite output, recomputes that call in float64, whose range (about 1e308) holds the
  squares of every float32. The result is cast back to the input's dtype: it is exact, or
  ``±inf`` where the true result itself does not fit that dtype. Inputs too large even for
  float64 raise a ``ValueError``.

Inner calls (a layer inside a stack, the attention inside a layer) run unchecked and
unguarded: their arguments were checked once at the outermost call, and the outermost
call guards the whole computation.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

__all__ = ["LayerNorm", "all_finite", "guard_active", "guarded", "nested", "reduced_max",
           "rescale_queries", "rescale_rows", "sync_free"]

_state = threading.local()


def guard_active() -> bool:
    """True inside a module call of the package: inner calls skip their checks and guard."""
    return getattr(_state, "depth", 0) > 0


class nested:  # noqa: N801  (used as ``with nested():``, like a function)
    """Mark the calls made inside as inner calls of a checked, guarded one."""

    def __enter__(self) -> None:
        _state.depth = getattr(_state, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _state.depth -= 1


def sync_free() -> bool:
    """Whether the current forward must not read tensors back on the host: autograd
    records it (a training forward), so the overflow is handled on the device."""
    return torch.is_grad_enabled()


def all_finite(*tensors: object) -> bool:
    """Whether every floating tensor among ``tensors`` (nested in tuples and lists too)
    is finite; tensors without data (``meta``) count as finite."""
    for t in _tensors(tensors):
        if t.is_floating_point() and t.device.type != "meta" and not bool(t.isfinite().all()):
            return False
    return True


def _tensors(tree: object) -> Iterator[torch.Tensor]:
    if isinstance(tree, torch.Tensor):
        yield tree
    elif isinstance(tree, (tuple, list)):
        for item in tree:
            yield from _tensors(item)


def _map(tree: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """Apply ``fn`` to every floating tensor of a (named) tuple or list, keeping the type."""
    if isinstance(tree, torch.Tensor):
        return fn(tree) if tree.is_floating_point() else tree
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a NamedTuple
        return type(tree)(*(_map(item, fn) for item in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(_map(item, fn) for item in tree)
    if isinstance(tree, dict):
        return {key: _map(value, fn) for key, value in tree.items()}
    return tree


def guarded(module: nn.Module, run: Callable[..., Any], inputs: tuple[torch.Tensor, ...],
            *args: Any, **kwargs: Any) -> Any:
    """``run(*args, **kwargs)``, recomputed in float64 when a finite input overflowed.

    Only the outermost call without autograd checks; inside a training forward the layers
    rescale on the device instead (see the module's docstring).

    Args:
        module: the module whose parameters ``run`` uses.
        run: the computation, usually the module's unguarded forward.
        inputs: the floating inputs that must be finite for the guard to apply.

    Raises:
        ValueError: when even float64 overflows.
    """
    if guard_active():
        return run(*args, **kwargs)
    with nested():
        out = run(*args, **kwargs)
    if sync_free() or all_finite(out) or not all_finite(*inputs):
        return out
    dtype = next(t.dtype for t in _tensors(out) if t.is_floating_point())
    if dtype == torch.float64 or any(t.device.type == "mps" for t in inputs):
        raise ValueError(_overflow_message(module, inputs, dtype))  # MPS has no float64
    originals = {name: t for name, t in module.named_parameters()}
    originals.update(module.named_buffers())
    wide = {name: t.double() if t.is_floating_point() else t for name, t in originals.items()}
    with nested():
        out64 = torch.func.functional_call(module, wide, _map(args, torch.Tensor.double),
                                           _map(kwargs, torch.Tensor.double))
    if not all_finite(out64):
        raise ValueError(_overflow_message(module, inputs, torch.float64))
    return _map(out64, lambda t: t.to(dtype))


def _overflow_message(module: nn.Module, inputs: tuple[torch.Tensor, ...],
                      dtype: torch.dtype) -> str:
    largest = max((float(t.detach().abs().max()) for t in inputs if t.numel()), default=0.0)
    return (
        f"{type(module).__name__} overflowed {dtype} on inputs as large as {largest:.3g} "
        "in absolute value (LayerNorm and attention square their inputs); scale the "
        "inputs down"
    )


# --- on the device: rows too large to square are scaled down first ----------------------------

def reduced_max(dtype: torch.dtype) -> float:
    """The largest number of the dtype that LayerNorm and the fused attention kernels
    reduce ``dtype`` in: float32 for float16 and bfloat16, ``dtype`` itself otherwise."""
    return torch.finfo(torch.promote_types(dtype, torch.float32)).max


def rescale_rows(x: torch.Tensor) -> torch.Tensor:
    """``x`` with each row (last dimension) whose squares could overflow divided by a
    factor that keeps them in range; every other row is divided by exactly 1.

    LayerNorm gives the same output for a row and for that row divided by a positive
    number (the ``eps`` under the root then counts for less, a change far below the
    dtype's precision for rows this large). Computed on the device: no synchronisation.

    Shape:
        ``(..., d) -> (..., d)``.
    """
    if x.device.type == "meta" or not x.numel():
        return x
    limit = math.sqrt(reduced_max(x.dtype) / (4 * x.shape[-1]))  # d * limit^2 stays in range
    with torch.no_grad():  # LayerNorm is scale-invariant: the divisor needs no gradient
        largest = x.abs().amax(dim=-1, keepdim=True)  # (..., 1)
        divisor = (largest / limit).clamp(min=1.0)  # exactly 1 for ordinary rows
    return x / divisor


def rescale_queries(q: torch.Tensor, k: torch.Tensor, beta: float, largest: float, *,
                    heads: bool = False) -> torch.Tensor:
    """Queries whose scores ``beta * q . k`` stay below ``largest / 4``: a query row that
    could go beyond is divided until it cannot; every other row is multiplied by exactly 1.

    The scores of row ``i`` are at most ``beta * d * max|q_i| * max|k|``. When that bound
    is beyond the range, the row's scores are so large that the float computation of them
    already has rounding errors far beyond what the softmax can tell apart, and dividing
    the row changes nothing larger than those errors. Computed on the device: no
    synchronisation.

    Args:
        q: ``(..., L_q, d)`` queries.
        k: ``(..., L_k, d)`` keys; ``max|k|`` is taken per index of the first dimension
            (the batch) when there are three dimensions or more.
        beta: the inverse temperature, at most ``sqrt(largest)``.
        largest: the largest number of the dtype the scores are computed in.
        heads: ``q`` is ``(B, H, L_q, d_head)`` as ``split_heads`` gives it: one bound per
            position over all its heads (a cheap reduction over contiguous memory).
    """
    if beta == 0.0 or q.device.type == "meta" or not q.numel() or not k.numel():
        return q
    room = largest / 4 / (beta * q.shape[-1])  # the largest allowed max|q_i| * max|k|
    with torch.no_grad():  # the factor of such a row needs no gradient
        big_q = q.abs().amax(dim=(1, 3) if heads else -1, keepdim=True)  # (..., L_q, 1)
        batch = tuple(range(1, k.dim())) if k.dim() >= 3 else tuple(range(k.dim()))
        big_k = k.abs().amax(dim=batch, keepdim=True)  # (B, 1, ..., 1)
        # room / |k| / |q_i| in two divisions: the product |k| |q_i| may overflow
        factor = (room / big_k / big_q).clamp(max=1.0)  # (..., L_q, 1), exactly 1 mostly
    return q * factor


class LayerNorm(nn.LayerNorm):
    """``nn.LayerNorm`` that never squares a number too large for its dtype.

    The same parameters, state dict and outputs as ``nn.LayerNorm``; in a forward that
    autograd records, rows too large to square are divided first (:func:`rescale_rows`),
    which leaves the output unchanged. Without autograd the package's guard handles them.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if sync_free():
            x = rescale_rows(x)
        return super().forward(x)
