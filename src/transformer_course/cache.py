"""The KV cache: the keys and values a decoder has already computed, kept between steps.

When a language model writes token ``t + 1``, the keys and values of positions ``1..t``
are the same as at the previous step: only the new position's query, key and value are new.
A :class:`KVCache` keeps them, one :class:`LayerCache` per attention layer, so that each
generation step computes one position instead of the whole prefix.

    >>> import torch, transformer_course as tc
    >>> layer = tc.MultiHeadAttention(16, 4)
    >>> cache = tc.LayerCache()
    >>> x = torch.randn(1, 3, 16)
    >>> out, _ = layer(x, x, x, mask=tc.causal_mask(3), cache=cache)  # the prompt
    >>> cache.length
    3
    >>> step = torch.randn(1, 1, 16)
    >>> out, _ = layer(step, step, step, cache=cache)  # one new position sees all four
    >>> cache.length
    4
"""

from __future__ import annotations

import torch

from ._checks import check_positive_int

__all__ = ["KVCache", "LayerCache"]


class LayerCache:
    """The keys and values one attention layer has seen so far.

    Attributes:
        keys: ``(B, H, L_past, d_head)``, or None before the first step.
        values: ``(B, H, L_past, d_head)``, or None before the first step.
    """

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    @property
    def length(self) -> int:
        """``L_past``: how many positions are cached."""
        return 0 if self.keys is None else self.keys.shape[2]

    def append(self, keys: torch.Tensor, values: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """The cached keys and values followed by the new ones (nothing is stored yet).

        Shape:
            ``(B, H, L_new, d_head)`` each in, ``(B, H, L_past + L_new, d_head)`` each out.
        """
        if self.keys is None or self.values is None:
            return keys, values
        return torch.cat([self.keys, keys], dim=2), torch.cat([self.values, values], dim=2)

    def update(self, keys: torch.Tensor, values: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Add the new keys and values; return all of them (:meth:`append`, then :meth:`store`).

        Shape:
            ``(B, H, L_new, d_head)`` each in, ``(B, H, L_past + L_new, d_head)`` each out.
        """
        keys, values = self.append(keys, values)
        self.store(keys, values)
        return keys, values

    def store(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Keep ``keys`` and ``values`` (as :meth:`append` returned them) for the next step."""
        self.keys, self.values = keys, values

    @property
    def nbytes(self) -> int:
        """Memory held, in bytes."""
        if self.keys is None or self.values is None:
            return 0
        return (self.keys.numel() * self.keys.element_size()
                + self.values.numel() * self.values.element_size())

    def __repr__(self) -> str:
        shape = None if self.keys is None else tuple(self.keys.shape)
        return f"LayerCache(length={self.length}, keys={shape})"


class KVCache:
    """One :class:`LayerCache` per layer of a stack (``cache.layers[i]`` for layer ``i``).

    Args:
        num_layers: the number of attention layers of the stack that uses it.
    """

    def __init__(self, num_layers: int) -> None:
        self.layers = [LayerCache() for _ in range(check_positive_int("num_layers", num_layers))]

    @property
    def length(self) -> int:
        """How many positions are cached (the same in every layer)."""
        return self.layers[0].length

    @property
    def nbytes(self) -> int:
        """Memory held by every layer's keys and values, in bytes."""
        return sum(layer.nbytes for layer in self.layers)

    def __repr__(self) -> str:
        return f"KVCache(layers={len(self.layers)}, length={self.length})"
