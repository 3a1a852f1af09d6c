"""A decoder-only language model: chapter 8's decoder without the encoder, as GPT is built.

Token ids are embedded, a learned position vector is added, a pre-norm stack of masked
self-attention and feed-forward layers runs (an :class:`~transformer_course.Encoder` with a
causal mask: each position sees itself and the past only), a final LayerNorm, and a linear
layer gives the logits of the next token at every position. The output layer shares its
weights with the token embedding (weight tying) unless asked otherwise.

:meth:`LanguageModel.generate` writes text one token at a time, with or without a
:class:`~transformer_course.KVCache`: both give the same tokens, the cache just skips the
work of recomputing the keys and values of the prefix at every step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ._checks import (
    check_flag,
    check_id_range,
    check_ids,
    check_positive_int,
    lookup,
    shape_of,
)
from ._decoding import WrittenOut, single_thread
from ._numerics import nested
from .cache import KVCache
from .generation import sample_next
from .layers import Encoder

__all__ = ["LanguageModel"]


class LanguageModel(nn.Module):
    """A decoder-only Transformer that predicts the next token (a small GPT).

    Args:
        vocab_size: number of token ids.
        d_model, num_heads, num_layers, d_ff, dropout: the usual sizes.
        max_len: the longest sequence (prompt and generated tokens): the size of the learned
            position table.
        tie_embeddings: the output layer reuses the token embedding matrix (its transpose
            maps a final state to one score per token), as GPT-2 does.
        norm_first: pre-norm layers with a final LayerNorm (GPT-2); False gives post-norm.

    Shape:
        ``(B, L)`` ids -> ``(B, L, vocab_size)`` logits: position ``t`` scores the token
        at ``t + 1``.
    """

    def __init__(
        self,
        vocab_size: int,
        *,
        d_model: int = 128,
        num_heads: int = 4,
        num_layers: int = 4,
        d_ff: int = 512,
        dropout: float = 0.1,
        max_len: int = 256,
        tie_embeddings: bool = True,
        norm_first: bool = True,
    ) -> None:
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.max_len = check_positive_int("max_len", max_len)
        check_flag("tie_embeddings", tie_embeddings)
        check_flag("norm_first", norm_first)
        self.embed = nn.Embedding(vocab_size, check_positive_int("d_model", d_model))
        self.position = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = Encoder(d_model, num_heads, d_ff, num_layers, dropout=dropout,
                              activation="gelu", norm_first=norm_first,
                              final_norm=norm_first)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.position.weight, std=0.02)
        if tie_embeddings:
            self.head.weight = self.embed.weight

    @property
    def num_layers(self) -> int:
        return len(self.blocks.layers)

    def new_cache(self) -> KVCache:
        """An empty :class:`~transformer_course.KVCache` for :meth:`forward`."""
        return KVCache(self.num_layers)

    def forward(self, ids: torch.Tensor, *, cache: KVCache | None = None,
                return_attention: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """Next-token logits.

        Args:
            ids: ``(B, L)`` token ids. With a ``cache``, the new positions only: they
                continue the ``cache.length`` positions the cache already holds.
            cache: keys and values of the earlier positions, updated in place.
            return_attention: also return every layer's attention weights.

        Returns:
            ``(B, L, vocab_size)`` logits; with ``return_attention``, ``(logits, maps)``
            where ``maps`` holds one ``(B, H, L, L_past + L)`` tensor per layer (layer 1
            first): row ``i`` is what position ``L_past + i`` attends to.
        """
        check_flag("return_attention", return_attention)
        ids = check_ids("ids", ids)
        past = 0
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
            past = cache.length
        length = ids.shape[1]
        if length == 0:
            raise ValueError(f"ids must hold at least one position, got shape {shape_of(ids)}")
        if past + length > self.max_len:
            raise ValueError(
                f"ids reach position {past + length} (cache {past} + ids {shape_of(ids)}) but "
                f"max_len={self.max_len}"
            )
        x = lookup("ids", self.embed, ids)  # (B, L, d_model)
        if return_attention:
            x, maps = self._states(x, past, cache, return_attention=True)
            return self.head(x), maps  # (B, L, vocab_size), [(B, H, L, L_past + L)] * layers
        return self.head(self._states(x, past, cache))  # (B, L, vocab_size)

    def _states(self, x: torch.Tensor, past: int, cache: KVCache | None, *,
                return_attention: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """The stack's output ``(B, L, d_model)`` for the token embeddings ``x`` of
        positions ``past..past + L - 1``, unchecked (its callers check)."""
        length = x.shape[1]
        positions = torch.arange(past, past + length, device=x.device)  # (L,)
        x = self.dropout(x + self.position(positions))  # (B, L, d_model)
        # Causal self-attention. The kernel masks without a mask tensor when there is no
        # past; one new position may see everything before it: no mask at all then.
        return self.blocks(x, cache=cache, is_causal=length > 1,
                           return_attention=return_attention)

    def _step(self, ids: torch.Tensor, cache: KVCache | None) -> torch.Tensor:
        """The next-token logits ``(B, vocab_size)`` after ``ids`` ``(B, L)``, which
        continue the ``cache`` (or start from nothing without one), through the modules.

        :meth:`generate`'s forward pass: it checked its arguments once, so each step runs
        unchecked and unguarded (its inputs are rows of the model's own embedding table)."""
        past = 0 if cache is None else cache.length
        with nested():  # the layers skip their checks and the overflow guard
            x = self._states(self.embed(ids), past, cache)  # (B, L, d_model)
            return self.head(x[:, -1])  # (B, vocab_size): the last position only

    def _stepper(self) -> Callable[[torch.Tensor, KVCache | None], torch.Tensor]:
        """:meth:`_step`, with one new position after a cache written out
        (:class:`~transformer_course._decoding.WrittenOut`) where that is exactly the
        model. Chosen once per :meth:`generate` call, in eval mode."""
        written_out = WrittenOut.of(self)

        def step(ids: torch.Tensor, cache: KVCache | None) -> torch.Tensor:
            if written_out is not None and cache is not None and ids.shape[1] == 1:
                return written_out(ids[:, 0], cache)  # (B, vocab_size)
            return self._step(ids, cache)  # (B, vocab_size)
        return step

    @torch.no_grad()
    def generate(
        self,
        prompt: torch.Tensor,
        max_new_tokens: int,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Continue ``prompt`` by ``max_new_tokens`` tokens, one at a time.

        Each step turns the last position's logits into a distribution with
        ``soft_argmax(logits, beta=1 / temperature)`` (temperature 0: the argmax, greedy
        decoding), optionally keeps the ``top_k`` most likely tokens, and draws one.

        Args:
            prompt: ``(B, L0)`` ids, ``L0 >= 1``.
            max_new_tokens: how many tokens to add; ``L0 + max_new_tokens <= max_len``.
            temperature, top_k: see :func:`~transformer_course.generation.sample_next`.
            use_cache: keep the keys and values of the prefix (a KV cache) instead of
                recomputing the whole sequence at each step. Both give the same tokens.
            generator: the random stream of the draws (seed it to repeat a sample).

        Returns:
            ``(B, L0 + max_new_tokens)`` ids: the prompt followed by the new tokens.
        """
        prompt = check_ids("prompt", prompt)
        check_id_range("prompt", prompt, self.vocab_size)
        steps = check_positive_int("max_new_tokens", max_new_tokens)
        check_flag("use_cache", use_cache)
        if prompt.shape[1] == 0:
            raise ValueError(f"prompt must hold at least one token, got shape {shape_of(prompt)}")
        if prompt.shape[1] + steps > self.max_len:
            raise ValueError(
                f"prompt {shape_of(prompt)} plus max_new_tokens={steps} exceeds "
                f"max_len={self.max_len}"
            )
        was_training = self.training
        self.eval()
        try:
            ids = prompt
            cache = self.new_cache() if use_cache else None
            logits_after = self._stepper()  # unchecked: the arguments were checked above
            logits = logits_after(ids, cache)  # (B, V): the prompt, all at once
            with single_thread(use_cache and ids.device.type == "cpu"):  # tiny steps
                for step in range(steps):
                    token = sample_next(logits, temperature=temperature, top_k=top_k,
                                        generator=generator)  # (B,)
                    ids = torch.cat([ids, token[:, None]], dim=1)  # (B, L0 + step + 1)
                    if step == steps - 1:
                        break
                    if use_cache:
                        logits = logits_after(token[:, None], cache)  # one new position
                    else:
                        logits = logits_after(ids, None)  # the whole sequence again
            return ids
        finally:
            self.train(was_training)
