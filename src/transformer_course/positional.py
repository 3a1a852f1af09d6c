"""Positional information: the sinusoidal encoding of the paper and learned embeddings (BERT)."""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_device,
    check_float_dtype,
    check_like,
    check_positive_int,
    check_real,
    check_tensor,
    shape_of,
)

__all__ = ["LearnedPositionalEmbedding", "SinusoidalPositionalEncoding", "sinusoidal_encoding"]


def sinusoidal_encoding(
    num_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The sinusoidal positional encoding of Vaswani et al. (2017).

    ``E[p, 2i] = sin(p / base^(2i / d_model))`` and ``E[p, 2i + 1] = cos(p / base^(2i / d_model))``.
    Each pair of columns (2i, 2i + 1) turns at its own frequency, so shifting every position
    by a fixed offset rotates each pair by a fixed angle.

    Args:
        num_positions: number of positions L (rows).
        d_model: width of the encoding (columns); an odd width ends with a sine column.
        base: the wavelength scale (10000 in the paper), a finite number > 1.
        dtype: a floating-point dtype; the table is computed in float64, then cast.
        device: where to create the table.

    Returns:
        ``(L, d_model)`` tensor, sine on even columns and cosine on odd columns.
    """
    num_positions = check_positive_int("num_positions", num_positions)
    d_model = check_positive_int("d_model", d_model)
    base = check_real("base", base, low=1.0, low_open=True)
    dtype = check_float_dtype("dtype", dtype)
    device = check_device("device", device)
    position = torch.arange(num_positions, dtype=torch.float64, device=device)[:, None]  # (L, 1)
    pair = torch.arange(0, d_model, 2, dtype=torch.float64, device=device)  # the 2i values
    angle = position / base ** (pair / d_model)  # (L, ceil(d/2))
    encoding = torch.empty(num_positions, d_model, dtype=torch.float64, device=device)
    encoding[:, 0::2] = torch.sin(angle)
    encoding[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return encoding.to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal encoding to a batch of embeddings.

    Args:
        d_model: embedding width.
        max_len: longest sequence supported before the table is grown on demand.
        base: see :func:`sinusoidal_encoding`.

    Shape:
        ``(B, L, d_model) -> (B, L, d_model)``.

    The table is a buffer: ``.double()`` or ``.to(device)`` convert it, and a table grown
    for a longer input keeps its dtype and device.
    """

    def __init__(self, d_model: int, max_len: int = 512, *, base: float = 10000.0) -> None:
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.base = check_real("base", base, low=1.0, low_open=True)
        table = sinusoidal_encoding(check_positive_int("max_len", max_len), d_model, base=base)
        self.register_buffer("table", table, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, L, d_model) -> (B, L, d_model)``, in the dtype and on the device of ``x``."""
        check_tensor("x", x, ndim=3, floating=True)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must end with d_model={self.d_model}, got shape {shape_of(x)}")
        length = x.shape[1]
        if length > self.table.shape[0]:  # grow the table, in its own dtype (float64 stays exact)
            self.table = sinusoidal_encoding(length, self.d_model, base=self.base,
                                             dtype=self.table.dtype, device=self.table.device)
        return x + self.table[:length].to(device=x.device, dtype=x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position, as BERT does (at most ``max_len`` positions).

    Shape:
        ``(B, L, d_model) -> (B, L, d_model)`` with ``L <= max_len``.
    """

    def __init__(self, d_model: int, max_len: int = 512) -> None:
        super().__init__()
        self.d_model = check_positive_int("d_model", d_model)
        self.max_len = check_positive_int("max_len", max_len)
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, L, d_model) -> (B, L, d_model)``; ``x`` must have the dtype and device of
        the table."""
        check_tensor("x", x, ndim=3, floating=True)
        if x.shape[-1] != self.d_model:
            raise ValueError(f"x must end with d_model={self.d_model}, got shape {shape_of(x)}")
        check_like("x", x, self.embedding.weight, owner="LearnedPositionalEmbedding")
        length = x.shape[1]
        if length > self.max_len:
            raise ValueError(
                f"x has {length} positions (shape {shape_of(x)}) but max_len={self.max_len}"
            )
        positions = torch.arange(length, device=x.device)
        return x + self.embedding(positions)  # (L, d) broadcasts over the batch
