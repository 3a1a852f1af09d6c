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

    They live in two buffers with room to spare, as a Python list does: a step writes its
    new keys and values after the cached ones, in place, and only a full buffer is copied
    (into one twice as long). Appending one position then costs the same at position 1,000
    as at position 10, where ``torch.cat`` would copy the whole past at every step.

    Attributes:
        keys: ``(B, H, L_past, d_head)``, or None before the first step (a view of the
            buffer).
        values: ``(B, H, L_past, d_head)``, or None before the first step.
    """

    def __init__(self) -> None:
        self._keys: torch.Tensor | None = None  # (B, H, capacity, d_head)
        self._values: torch.Tensor | None = None
        self._length = 0

    @property
    def length(self) -> int:
        """``L_past``: how many positions are cached."""
        return self._length

    @property
    def keys(self) -> torch.Tensor | None:
        return None if self._keys is None else self._keys[:, :, :self._length]

    @property
    def values(self) -> torch.Tensor | None:
        return None if self._values is None else self._values[:, :, :self._length]

    def update(self, keys: torch.Tensor, values: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Add the new keys and values after the cached ones; return all of them.

        Shape:
            ``(B, H, L_new, d_head)`` each in, ``(B, H, L_past + L_new, d_head)`` each out.

        Raises:
            ValueError: if ``keys`` has another batch size, head count or ``d_head`` than
                the keys already cached.
        """
        if self._keys is not None and (keys.shape[:2], keys.shape[3]) != (
                self._keys.shape[:2], self._keys.shape[3]):
            raise ValueError(
                f"keys must be (B, H, L_new, d_head) with the cache's B, H and d_head "
                f"{tuple(self._keys.shape[:2])} and {self._keys.shape[3]}, got "
                f"{tuple(keys.shape)}: a cache holds one batch of one layer")
        start, end = self._length, self._length + keys.shape[2]
        if self._keys is None or self._values is None or end > self._keys.shape[2]:
            self._keys, self._values = self._grown(keys, values, end)
        self._keys[:, :, start:end] = keys
        self._values[:, :, start:end] = values
        self._length = end
        return self._keys[:, :, :end], self._values[:, :, :end]

    def _grown(self, keys: torch.Tensor, values: torch.Tensor, needed: int
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """New buffers for at least ``needed`` positions (twice what they held), the past
        copied in."""
        capacity = max(needed, 2 * (0 if self._keys is None else self._keys.shape[2]), 16)
        new_keys = keys.new_empty(*keys.shape[:2], capacity, keys.shape[3])
        new_values = values.new_empty(*values.shape[:2], capacity, values.shape[3])
        if self._keys is not None and self._values is not None:
            new_keys[:, :, :self._length] = self.keys
            new_values[:, :, :self._length] = self.values
        return new_keys, new_values

    @property
    def nbytes(self) -> int:
        """Memory that the cached positions take, in bytes (the spare room not counted)."""
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
