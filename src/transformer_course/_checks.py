"""Argument checks shared by the package: every failure names the argument and what it saw."""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn

__all__ = [
    "check_attention_mask",
    "check_beta",
    "check_bool_mask",
    "check_choice",
    "check_device",
    "check_dim",
    "check_flag",
    "check_float_dtype",
    "check_id_range",
    "check_ids",
    "check_int",
    "check_like",
    "check_positive_int",
    "check_probability",
    "check_real",
    "check_representable",
    "check_same_device",
    "check_scores",
    "check_tensor",
    "check_width",
    "has_data",
    "lookup",
    "recorded",
    "shape_of",
]


def shape_of(x: torch.Tensor) -> str:
    """Format a tensor's shape as ``(2, 3, 4)`` for error messages."""
    return str(tuple(x.shape))


def has_data(x: torch.Tensor) -> bool:
    """False for ``meta`` tensors, which have a shape but no values to check."""
    return x.device.type != "meta"


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


def check_ids(name: str, x: object, *, ndim: int | tuple[int, ...] = 2) -> torch.Tensor:
    """Check ``(B, L)`` token ids, ``L >= 1``, of any integer dtype; return them as ``long``.

    ``nn.Embedding`` only takes int32 and int64, so uint8, int16 and int32 ids are cast;
    bool, floating and complex ids are rejected.
    """
    check_tensor(name, x, ndim=ndim, integer=True)
    if x.dim() >= 2 and x.shape[-1] == 0:
        raise ValueError(
            f"{name} must hold at least one token per sequence, got shape {shape_of(x)}"
        )
    return x.long()


def check_id_range(name: str, ids: torch.Tensor, size: int, *, what: str = "vocabulary"
                   ) -> None:
    """Check that every id is in ``[0, size)`` (``size`` rows of an embedding table)."""
    if not has_data(ids) or not ids.numel():
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise ValueError(
            f"{name} holds the id {bad}, outside [0, {size}) (the {what} has {size} entries; "
            f"shape {shape_of(ids)})"
        )


def lookup(name: str, table: nn.Embedding, ids: torch.Tensor, *, what: str = "vocabulary"
           ) -> torch.Tensor:
    """``table(ids)``: an id outside the table raises a ``ValueError`` naming ``name``.

    Nothing is read back on the host unless the lookup fails, so that a training forward
    on a GPU never waits for the CPU: on the CPU the lookup's own ``IndexError`` is turned
    into the package's message. On an accelerator, where that error is a device-side
    assertion, the range is checked first (one synchronisation) when autograd is off; in
    a forward that autograd records, an id outside the table trips PyTorch's own
    assertion (``CUDA error: device-side assert triggered``): check that the tokenizer
    and the model agree on the vocabulary size.
    """
    if ids.device.type not in ("cpu", "meta") and not torch.is_grad_enabled():
        check_id_range(name, ids, table.num_embeddings, what=what)
    try:
        return table(ids)
    except IndexError as err:
        error = err
    check_id_range(name, ids, table.num_embeddings, what=what)  # names the id outside
    raise error


def check_attention_mask(name: str, mask: object, ids: torch.Tensor, ids_name: str
                         ) -> torch.Tensor:
    """Check a Hugging Face style ``(B, L)`` mask (1/True for real tokens, 0/False for
    padding) against the ids it goes with; return it as bool."""
    check_tensor(name, mask, ndim=2)
    if mask.shape != ids.shape:
        raise ValueError(
            f"{name} must have the shape of {ids_name} {shape_of(ids)}, got {shape_of(mask)}"
        )
    if mask.is_complex():
        raise TypeError(f"{name} must hold 0/1 or True/False, got dtype {mask.dtype}")
    if mask.dtype != torch.bool and has_data(mask) and mask.numel():
        bad = (mask != 0) & (mask != 1)
        if bool(bad.any()):
            value = mask[bad][0].item()
            raise ValueError(
                f"{name} must hold 0/1 or True/False (1 = real token), got the value {value!r}"
            )
    return mask.to(device=ids.device, dtype=torch.bool)


def check_like(name: str, x: torch.Tensor, reference: torch.Tensor | None, *,
               owner: str = "the module") -> None:
    """Check that ``x`` has the dtype and device of a module's parameter ``reference``.

    A float64 tensor (from NumPy, say) fed to a float32 module is refused with a message
    that says how to convert, rather than cast silently.
    """
    if reference is None:
        return
    if x.dtype != reference.dtype:
        raise TypeError(
            f"{name} has dtype {x.dtype} but {owner}'s parameters have dtype "
            f"{reference.dtype}: convert the input with {name}.to({reference.dtype}) or "
            f"the module with .to({x.dtype})"
        )
    if x.device != reference.device:
        raise ValueError(
            f"{name} is on device {x.device} but {owner}'s parameters are on "
            f"{reference.device}: move one of them with .to(device)"
        )


def check_same_device(name: str, x: torch.Tensor, device: torch.device, *,
                      owner: str = "the model") -> None:
    """Check that ``x`` is on ``device``, where ``owner``'s parameters are.

    ``training.fit`` moves a model to :func:`transformer_course.device` (a GPU in Colab), so a
    prompt built on the CPU afterwards lands here: the message says where each one is.
    """
    if x.device != device:
        raise ValueError(
            f"{name} is on device {x.device} but {owner} is on {device}: move one of them "
            f"with .to(device), for example {name}.to({str(device)!r})"
        )


def check_width(name: str, x: torch.Tensor, width: int, *, layout: str = "(B, L, {width})"
                ) -> None:
    """Check the size of the last dimension of ``x``."""
    if x.shape[-1] != width:
        shown = layout.format(width=width)
        raise ValueError(f"{name} must be {shown} for this module, got shape {shape_of(x)}")


def check_dim(name: str, dim: object, ndim: int) -> int:
    """Check a dimension index ``dim`` for a tensor of ``ndim`` dimensions."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise ValueError(
            f"{name}={dim} is out of range for a tensor of {ndim} dimensions "
            f"(expected {-ndim} to {ndim - 1})"
        )
    return int(dim)


def check_int(name: str, value: object) -> int:
    """Check that ``value`` is an int (any sign; bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return int(value)


def check_real(name: str, value: object, *, low: float | None = None,
               high: float | None = None, low_open: bool = False,
               high_open: bool = False) -> float:
    """Check that ``value`` is a finite real number in the given interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    number = float(value)
    too_low = low is not None and (number <= low if low_open else number < low)
    too_high = high is not None and (number >= high if high_open else number > high)
    if not math.isfinite(number) or too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        shown = f"{left}{lo}, {hi}{right}"
        raise ValueError(f"{name} must be a finite number in {shown}, got {value!r}")
    return number


def check_probability(name: str, value: object) -> float:
    """A dropout probability: a real number in ``[0, 1)``."""
    return check_real(name, value, low=0.0, high=1.0, high_open=True)


def check_flag(name: str, value: object) -> bool:
    """Check a yes/no option: a ``bool`` (NumPy's bool is accepted too)."""
    if isinstance(value, bool):
        return value
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Check that ``value`` is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        shown = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {shown}, got {value!r}")
    return value


def check_float_dtype(name: str, dtype: object) -> torch.dtype:
    """Check a floating-point ``torch.dtype``."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype, got {dtype!r}")
    return dtype


def check_device(name: str, device: object) -> torch.device | None:
    """Check a device argument (``None``, a string such as ``"cpu"``, or a torch.device)
    and that the machine has it."""
    if device is None:
        return None
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"{name} must be a torch.device or a string such as 'cpu' or 'cuda', got "
            f"{type(device).__name__}"
        )
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"{name} must name a device such as 'cpu', 'cuda', 'cuda:0' or 'mps', got "
            f"{device!r}"
        ) from None
    try:
        torch.empty(0, device=parsed)
    except (RuntimeError, AssertionError, ValueError) as err:
        raise ValueError(
            f"{name}={device!r} is not available on this machine ({err}); "
            "transformer_course.device() picks the best available one"
        ) from None
    return parsed


def check_positive_int(name: str, value: object, *, allow_zero: bool = False) -> int:
    """Check that ``value`` is an int >= 1 (or >= 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    low = 0 if allow_zero else 1
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def check_beta(beta: object, dtype: torch.dtype | None = None) -> float:
    """Check the inverse temperature: a finite real number >= 0 (that ``dtype`` can hold)."""
    if isinstance(beta, torch.Tensor):
        if beta.numel() != 1:
            raise ValueError(f"beta must be a scalar, got a tensor of shape {shape_of(beta)}")
        beta = beta.item()
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real):
        raise TypeError(f"beta must be a real number, got {type(beta).__name__}")
    value = float(beta)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"beta must be finite and >= 0, got {value}")
    if dtype is not None and value > torch.finfo(dtype).max:
        raise ValueError(
            f"beta={value:g} cannot be represented in {dtype} (its largest number is "
            f"{torch.finfo(dtype).max:.3g}): compute in float64 or use a smaller beta"
        )
    return value


def recorded(*tensors: torch.Tensor) -> bool:
    """Whether autograd records a computation on ``tensors``: a training forward, which
    reads nothing back on the host (a GPU never waits for the CPU)."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _largest(name: str, x: torch.Tensor) -> float:
    """``max |x|`` read on the host; a ``ValueError`` naming ``x`` if it is not finite."""
    largest = float(x.detach().abs().amax()) if has_data(x) and x.numel() else 0.0
    if not math.isfinite(largest):
        raise ValueError(f"{name} holds values that are not finite (inf or NaN), shape "
                         f"{shape_of(x)}")
    return largest


def check_scores(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 beta: float) -> None:
    """Check that ``query``, ``key`` and ``value`` are finite and that the scores
    ``beta * query . key`` cannot overflow their dtype (one read on the host each)."""
    a, b = _largest("query", query), _largest("key", key)
    _largest("value", value)
    top = torch.finfo(query.dtype).max
    if beta * a * b * query.shape[-1] > top:  # a Python float: inf at worst
        raise ValueError(
            f"the scores beta * query . key overflow {query.dtype}: query and key hold "
            f"values as large as {a:.3g} and {b:.3g} (beta={beta:g}, d_k={query.shape[-1]}), "
            f"beyond its largest number {top:.3g}; scale them down or compute in float64"
        )


def check_representable(name: str, x: torch.Tensor, *, squared: bool = True) -> None:
    """Check a layer's input outside training (one read on the host): finite, and, when
    the layer squares it (``squared``), small enough that the squares LayerNorm and
    attention sum over its last dimension fit its dtype (about 1e18 in float32 for 64
    features)."""
    largest = _largest(name, x)
    limit = math.sqrt(torch.finfo(x.dtype).max / max(4 * x.shape[-1], 1))
    if squared and largest > limit:
        raise ValueError(
            f"{name} holds values as large as {largest:.3g}: LayerNorm and attention square "
            f"them, which overflows {x.dtype} beyond {limit:.3g} for {x.shape[-1]} features; "
            "scale the input down or compute in float64"
        )


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
