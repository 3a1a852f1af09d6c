"""A decoder-only language model: chapter 8's decoder without the encoder, as GPT is built.

Token ids are embedded, a learned position vector is added, and ``blocks`` runs: a stack
of :class:`~transformer_course.EncoderLayer` s (masked self-attention and feed-forward,
pre-norm) with a causal mask, so that each position sees itself and the past only. A final
LayerNorm (``norm``) follows, and a linear layer gives the logits of the next token at every
position. The output layer shares its weights with the token embedding (weight tying)
unless asked otherwise.

:meth:`LanguageModel.generate` writes text one token at a time, with or without a
:class:`~transformer_course.KVCache`: both give the same tokens, the cache just skips the
work of recomputing the keys and values of the prefix at every step. It samples with a
temperature, top-k and top-p (:mod:`~transformer_course.generation`), stops a sequence at an
end-of-sequence id, and continues prompts of different lengths in one batch (padded, with
an attention mask or a padding id).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    check_attention_mask,
    check_flag,
    check_id_range,
    check_ids,
    check_int,
    check_positive_int,
    check_same_device,
    check_tensor,
    has_data,
    lookup,
    shape_of,
)
from .cache import KVCache
from .functional import causal_mask
from .generation import _check_generator, _draw, _finish, check_sampling
from .layers import EncoderLayer, _check_stack_cache, _renamed_keys, through_layers

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
        check_positive_int("num_layers", num_layers)
        self.blocks = nn.ModuleList(  # GPT's blocks: masked self-attention, feed-forward
            EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, activation="gelu",
                         norm_first=norm_first)
            for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model) if norm_first else None  # GPT-2's final norm
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        nn.init.normal_(self.embed.weight, std=0.02)
        nn.init.normal_(self.position.weight, std=0.02)
        if tie_embeddings:
            self.head.weight = self.embed.weight
        # Weights saved when the blocks were an Encoder (blocks.layers.i, blocks.norm) load.
        self._register_load_state_dict_pre_hook(
            _renamed_keys({"blocks.layers.": "blocks.", "blocks.norm.": "norm."}))

    @property
    def num_layers(self) -> int:
        return len(self.blocks)

    def new_cache(self) -> KVCache:
        """An empty :class:`~transformer_course.KVCache` for :meth:`forward`."""
        return KVCache(self.num_layers)

    def forward(self, ids: torch.Tensor, *, cache: KVCache | None = None,
                attention_mask: torch.Tensor | None = None, return_attention: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """Next-token logits.

        Args:
            ids: ``(B, L)`` token ids. With a ``cache``, the new positions only: they
                continue the ``cache.length`` positions the cache already holds.
            cache: keys and values of the earlier positions, updated in place.
            attention_mask: ``(B, L_past + L)``, 1 or True for real tokens and 0 or False
                for padding (the Hugging Face convention), over the cached positions and
                the new ones. Padding is never attended to, and a real token's position is
                the number of real tokens before it, so that a padded sequence gives the
                logits it gives alone. Default: every token is real.
            return_attention: also return every layer's attention weights.

        Returns:
            ``(B, L, vocab_size)`` logits; with ``return_attention``, ``(logits, maps)``
            where ``maps`` holds one ``(B, H, L, L_past + L)`` tensor per layer (layer 1
            first): row ``i`` is what position ``L_past + i`` attends to.
        """
        check_flag("return_attention", return_attention)
        ids = check_ids("ids", ids)
        check_same_device("ids", ids, self.embed.weight.device)
        length = ids.shape[1]
        if length == 0:
            raise ValueError(f"ids must hold at least one position, got shape {shape_of(ids)}")
        x = lookup("ids", self.embed, ids)  # (B, L, d_model)
        past = _check_stack_cache(cache, self.blocks, x)  # its layers, batch, heads, d_head
        if past + length > self.max_len:
            raise ValueError(
                f"ids reach position {past + length} (cache {past} + ids {shape_of(ids)}) but "
                f"max_len={self.max_len}"
            )
        keep = None if attention_mask is None else _check_mask(attention_mask, ids, past)
        if keep is not None:
            keep = keep.to(x.device)
        if return_attention:
            x, maps = self._states(x, past, cache, keep, return_attention=True)
            return self.head(x), maps  # (B, L, vocab_size), [(B, H, L, L_past + L)] * layers
        return self.head(self._states(x, past, cache, keep))  # (B, L, vocab_size)

    def _states(self, x: torch.Tensor, past: int, cache: KVCache | None,
                keep: torch.Tensor | None, *, return_attention: bool = False
                ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """The stack's output ``(B, L, d_model)`` for the token embeddings ``x`` of the
        positions after ``past`` cached ones (``keep``: the ``(B, L_past + L)`` bool mask
        of the real tokens, or None), unchecked (its callers check)."""
        length = x.shape[1]
        if keep is None:
            positions = torch.arange(past, past + length, device=x.device)  # (L,)
            # Causal self-attention: without a past the kernel masks with no mask tensor;
            # one new position may see everything before it: no mask at all then.
            mask, causal = None, length > 1
        else:
            # A real token's position counts the real tokens before it (padding skipped).
            positions = (keep.long().cumsum(dim=1) - 1).clamp(min=0)[:, past:]  # (B, L)
            mask, causal = keep[:, None, None, :], False  # (B, 1, 1, L_past + L)
            if length > 1:  # padding is never a key, and the future neither
                mask = mask & causal_mask(length, past=past, device=x.device)  # (B,1,L,L+p)
        x = self.dropout(x + self.position(positions))  # (B, L, d_model)
        outputs, maps = through_layers(self.blocks, x, mask=mask, is_causal=causal,
                                       need_weights=return_attention,
                                       caches=None if cache is None else cache.layers)
        x = outputs[-1] if self.norm is None else self.norm(outputs[-1])  # (B, L, d_model)
        return (x, maps) if return_attention else x

    @torch.no_grad()
    def generate(
        self,
        prompt: torch.Tensor,
        max_new_tokens: int,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        eos_id: int | None = None,
        pad_id: int | None = None,
        attention_mask: torch.Tensor | None = None,
        use_cache: bool = True,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Continue ``prompt`` by up to ``max_new_tokens`` tokens, one at a time.

        Each step turns the last position's logits into a distribution with
        ``soft_argmax(logits, beta=1 / temperature)`` (temperature 0: the argmax, greedy
        decoding), optionally keeps the ``top_k`` most likely tokens (with any tied with the
        ``k``-th) or the nucleus of mass
        ``top_p``, and draws one (:func:`~transformer_course.generation.sample_next`).

        Prompts of different lengths go in one batch padded on the left or on the right:
        say where the padding is with ``attention_mask`` (Hugging Face's convention) or
        with ``pad_id`` (``tokenizer.batch(texts)`` right-pads with ``pad_id = 0``). Each
        prompt is then continued exactly as it would be alone: padding is never attended
        to and positions count real tokens only.

        Args:
            prompt: ``(B, L0)`` ids, at least one real token per row.
            max_new_tokens: how many tokens to add at most; ``L0 + max_new_tokens <= max_len``.
            temperature, top_k, top_p: see
                :func:`~transformer_course.generation.next_token_probabilities`.
            eos_id: the end-of-sequence id: a row that has written it is finished, and
                generation stops once every row is. Default: no end, exactly
                ``max_new_tokens`` tokens.
            pad_id: the padding id: where ``prompt`` holds it, there is no token (unless
                ``attention_mask`` is given), and it fills a finished row after its
                ``eos_id`` (default: ``eos_id`` again).
            attention_mask: ``(B, L0)``, 1 or True for the real tokens of ``prompt``, which
                must be contiguous in each row (left or right padding).
            use_cache: keep the keys and values of the prefix (a KV cache) instead of
                recomputing the whole sequence at each step. Both give the same logits up to
                floating-point rounding, hence the same tokens unless two logits nearly tie.
            generator: the random stream of the draws (seed it to repeat a sample), on
                the model's device.

        Returns:
            ``(B, L0 + T)`` ids, ``T <= max_new_tokens`` new tokens per row (``T`` is
            smaller only when every row has written ``eos_id``). Row ``i`` is row ``i`` of
            ``prompt`` with its new tokens inserted right after its last real token: after
            the prompt for left or no padding, before the padding for right padding.

        Raises:
            ValueError: if ``prompt`` is not on the model's device (after
                :func:`~transformer_course.training.fit`, the model is on
                :func:`~transformer_course.device`): move it with ``prompt.to(device)``.
        """
        prompt = check_ids("prompt", prompt)
        check_id_range("prompt", prompt, self.vocab_size)
        check_same_device("prompt", prompt, self.embed.weight.device)
        steps = check_positive_int("max_new_tokens", max_new_tokens)
        options = check_sampling(temperature, top_k, top_p, self.head.weight.dtype)
        for name, value in (("eos_id", eos_id), ("pad_id", pad_id)):
            if value is not None and not 0 <= check_int(name, value) < self.vocab_size:
                raise ValueError(f"{name} must be an id in [0, {self.vocab_size}), got {value}")
        check_flag("use_cache", use_cache)
        _check_generator(generator, prompt.device, "prompt")
        if prompt.shape[1] + steps > self.max_len:
            raise ValueError(
                f"prompt {shape_of(prompt)} plus max_new_tokens={steps} exceeds "
                f"max_len={self.max_len}"
            )
        real = _prompt_mask(prompt, attention_mask, pad_id)  # (B, L0), or None: no padding
        fill = pad_id if pad_id is not None else eos_id
        was_training = self.training
        self.eval()
        try:
            if real is None:
                new = self._sample(prompt, None, steps, options, eos_id, fill, use_cache,
                                   generator)  # (B, T)
                return torch.cat([prompt, new], dim=1)
            aligned, keep, end = _left_align(prompt, real)
            new = self._sample(aligned, keep, steps, options, eos_id, fill, use_cache,
                               generator)  # (B, T)
            return _insert(prompt, new, end)
        finally:
            self.train(was_training)

    def _sample(self, ids: torch.Tensor, keep: torch.Tensor | None, steps: int,
                options: tuple[float, int | None, float | None], eos_id: int | None,
                fill: int | None, use_cache: bool, generator: torch.Generator | None
                ) -> torch.Tensor:
        """The sampling loop, as nanoGPT's ``generate``: the new tokens ``(B, T)`` after
        left-aligned ``ids`` (``keep``: where their real tokens are, or None).

        :meth:`generate` checked the arguments once: each step runs the modules unchecked.
        With a cache, a step feeds the one new token; without, the whole sequence again.

        The loop runs in inference mode: no autograd bookkeeping at all, which makes each
        step's many small operators cheaper than under ``no_grad`` alone. Its ``(B, T)``
        ids are an inference tensor, which :meth:`generate` copies into the ids it returns."""
        with torch.inference_mode():
            cache = self.new_cache() if use_cache else None
            done = torch.zeros(ids.shape[0], dtype=torch.bool, device=ids.device)
            new, step_ids = [], ids  # what the next forward pass reads
            for _ in range(steps):
                past = 0 if cache is None else cache.length
                x = self._states(self.embed(step_ids), past, cache, keep)  # (B, L, d_model)
                logits = self.head(x[:, -1])  # (B, vocab_size): the last position only
                token = _draw(logits, *options, generator)  # (B,)
                token, done = _finish(token, done, eos_id, fill)  # a finished row only pads
                new.append(token)
                if eos_id is not None and bool(done.all()):
                    break
                ids = torch.cat([ids, token[:, None]], dim=1)  # (B, L + 1)
                step_ids = ids if cache is None else token[:, None]
                if keep is not None:
                    keep = torch.cat([keep, keep.new_ones(keep.shape[0], 1)], dim=1)
            return torch.stack(new, dim=1)


def _check_mask(attention_mask: object, ids: torch.Tensor, past: int) -> torch.Tensor:
    """A ``(B, L_past + L)`` 0/1 or bool mask for ``ids`` after ``past`` cached positions."""
    check_tensor("attention_mask", attention_mask, ndim=2)
    want = (ids.shape[0], past + ids.shape[1])
    if tuple(attention_mask.shape) != want:
        raise ValueError(
            f"attention_mask must be (B, L_past + L) = {want} for ids {shape_of(ids)} after "
            f"{past} cached positions, got {shape_of(attention_mask)}"
        )
    return check_attention_mask("attention_mask", attention_mask,
                                ids.new_empty(want), "ids (with the cached positions)")


def _prompt_mask(prompt: torch.Tensor, attention_mask: object, pad_id: int | None
                 ) -> torch.Tensor | None:
    """Where the real tokens of ``prompt`` are, ``(B, L0)`` bool; None when all are real.

    Checks that each row holds one contiguous run of real tokens (left or right padding)."""
    if attention_mask is not None:
        real = check_attention_mask("attention_mask", attention_mask, prompt, "prompt")
        name = "attention_mask"
    elif pad_id is not None:
        real = prompt != pad_id
        name = f"pad_id={pad_id}"
    else:
        return None
    if not has_data(real):
        return real
    runs = real[:, :1].long().sum(1) + (real[:, 1:] & ~real[:, :-1]).long().sum(1)  # (B,)
    if bool((runs != 1).any()):
        row = int((runs != 1).nonzero()[0, 0])
        what = ("holds only padding" if int(runs[row]) == 0
                else "has padding between real tokens (pad on the left or on the right only)")
        raise ValueError(f"row {row} of prompt {shape_of(prompt)} {what}, according to {name}")
    return None if bool(real.all()) else real


def _left_align(prompt: torch.Tensor, real: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Move each row's real tokens to the right end: ``(aligned ids, their mask, end)``,
    where ``end`` ``(B,)`` is the column after each row's last real token in ``prompt``."""
    width = prompt.shape[1]
    count = real.sum(dim=1)  # (B,) real tokens per row
    start = real.long().argmax(dim=1)  # (B,) the first real token
    column = torch.arange(width, device=prompt.device)  # (L0,)
    shift = (width - count)[:, None]  # (B, 1): padding on the left once aligned
    source = (start[:, None] + column - shift).clamp(0, width - 1)  # (B, L0)
    aligned = prompt.gather(1, source)  # the padding cells repeat a real token (masked)
    return aligned, column >= shift, start + count


def _insert(prompt: torch.Tensor, new: torch.Tensor, end: torch.Tensor) -> torch.Tensor:
    """Row ``i`` of ``prompt`` with ``new[i]`` inserted at column ``end[i]``."""
    width, steps = prompt.shape[1], new.shape[1]
    column = torch.arange(width + steps, device=prompt.device)[None]  # (1, L0 + T)
    after = column - end[:, None]  # (B, L0 + T): how far past the last real token
    from_new = (after >= 0) & (after < steps)
    old = prompt.gather(1, torch.where(after < 0, column, column - steps).clamp(0, width - 1))
    return torch.where(from_new, new.gather(1, after.clamp(0, steps - 1)), old)
