"""Finite input, finite output: the overflow guard of the package's modules.

In float32 the squares of numbers above about 1e19 overflow. LayerNorm's variance and the
dot products of attention square their inputs, so an input of 1e30 turns into ``inf`` and
then ``NaN`` although the true result is a perfectly ordinary number. The guard checks the
output of the outermost module call once (one device synchronisation) and, only when a
finite input gave a non-finite output, recomputes that call in float64, whose range
(about 1e308) holds the squares of every float32. The result is cast back to the input's
dtype: it is exact, or ``±inf`` where the true result itself does not fit that dtype.
It is never NaN. Inputs too large even for float64 raise a ``ValueError``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

__all__ = ["all_finite", "guard_active", "guarded", "nested"]

_state = threading.local()


def guard_active() -> bool:
    """True inside a guarded call: the outermost call checks, the inner ones do not."""
    return getattr(_state, "depth", 0) > 0


@contextmanager
def nested() -> Iterator[None]:
    """Mark the calls made inside as inner calls of a guarded one."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1


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
    if all_finite(out) or not all_finite(*inputs):
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
