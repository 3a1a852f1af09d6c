"""Whole models: the encoder-decoder Transformer and an encoder-only classifier."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, overload

import torch
from torch import nn

from ._checks import (
    check_attention_mask,
    check_bool_mask,
    check_choice,
    check_flag,
    check_ids,
    check_int,
    check_positive_int,
    check_probability,
    check_same_device,
    lookup,
    shape_of,
)
from .functional import causal_mask, padding_mask
from .generation import beam_search, greedy_decode
from .layers import (
    ACTIVATIONS,
    Decoder,
    DecoderAttention,
    Encoder,
    _check_heads,
    _check_states,
    _renamed_keys,
)
from .positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding

__all__ = ["Transformer", "TransformerAttention", "TransformerClassifier"]


@dataclass
class TransformerAttention:
    """Every layer's attention weights of a :class:`Transformer` forward pass."""

    encoder: list[torch.Tensor]  # one (B, H, L_s, L_s) per encoder layer
    decoder_self: list[torch.Tensor]  # one (B, H, L_t, L_t) per decoder layer
    cross: list[torch.Tensor]  # one (B, H, L_t, L_s) per decoder layer


def _checked_tokens(name: str, tokens: object, table: nn.Embedding) -> torch.Tensor:
    """Check ``(B, L)`` ids of any integer dtype for ``table``; return them as ``long``.

    Their range is checked by the lookup (:func:`~transformer_course._checks.lookup`),
    which reads nothing back on the host in a training forward."""
    tokens = check_ids(name, tokens)
    check_same_device(name, tokens, table.weight.device)
    return tokens


class Transformer(nn.Module):
    """The encoder-decoder Transformer of Vaswani et al. (2017), for token ids in and out.

    Embeddings are scaled by ``sqrt(d_model)`` and summed with the sinusoidal encoding.
    Masks are built from ``pad_id`` unless given: padding for the source, causal and
    padding for the target.

    Args:
        src_vocab_size: size of the source vocabulary.
        tgt_vocab_size: size of the target vocabulary.
        d_model, num_heads, num_layers, d_ff, dropout, norm_first: the usual sizes
            (``num_layers`` for both the encoder and the decoder).
        tie_embeddings: share the source embedding, the target embedding and the
            pre-softmax projection (needs one shared vocabulary), as in the paper.
        activation: ``"relu"`` or ``"gelu"``.
        max_len: size of the positional table (it grows on demand).
        pad_id: the padding id used to build default masks.

    Token ids may have any integer dtype (uint8 to int64); they are cast to ``long``.
    Ids outside the vocabulary raise a ``ValueError``.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        *,
        d_model: int = 512,
        num_heads: int = 8,
        num_layers: int = 6,
        d_ff: int = 2048,
        dropout: float = 0.1,
        norm_first: bool = False,
        tie_embeddings: bool = False,
        activation: str = "relu",
        max_len: int = 512,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        check_positive_int("src_vocab_size", src_vocab_size)
        check_positive_int("tgt_vocab_size", tgt_vocab_size)
        _check_model_sizes(d_model, num_heads, num_layers, d_ff, dropout, norm_first,
                           activation, max_len, pad_id)
        if check_flag("tie_embeddings", tie_embeddings) and src_vocab_size != tgt_vocab_size:
            raise ValueError(
                "tie_embeddings needs one shared vocabulary, got src_vocab_size="
                f"{src_vocab_size} and tgt_vocab_size={tgt_vocab_size}"
            )
        self.d_model = check_positive_int("d_model", d_model)
        self.pad_id = pad_id
        self.tie_embeddings = tie_embeddings
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = self.src_embed if tie_embeddings else nn.Embedding(tgt_vocab_size, d_model)
        self.positional = SinusoidalPositionalEncoding(d_model, max_len)
        self.dropout = nn.Dropout(dropout)
        stack = dict(dropout=dropout, activation=activation, norm_first=norm_first)
        self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, **stack)
        self.decoder = Decoder(d_model, num_heads, d_ff, num_layers, **stack)
        self.lm_head = nn.Linear(d_model, tgt_vocab_size, bias=not tie_embeddings)
        self._reset_parameters()
        if tie_embeddings:
            self.lm_head.weight = self.src_embed.weight
        self._register_load_state_dict_pre_hook(_renamed_keys({"generator.": "lm_head."}))

    @property
    def generator(self) -> nn.Linear:
        """The output layer's name before it was :attr:`lm_head` (kept for old code)."""
        return self.lm_head

    @property
    def src_vocab_size(self) -> int:
        """How many source ids the model embeds."""
        return self.src_embed.num_embeddings

    @property
    def tgt_vocab_size(self) -> int:
        """How many target ids the model embeds and scores."""
        return self.tgt_embed.num_embeddings

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def _embed(self, name: str, tokens: torch.Tensor, table: nn.Embedding) -> torch.Tensor:
        x = lookup(name, table, tokens) * math.sqrt(self.d_model)  # (B, L, d_model)
        return self.dropout(self.positional(x))

    def _check_masks(self, src: torch.Tensor, tgt: torch.Tensor | None,
                     src_mask: object, tgt_mask: object) -> None:
        heads = self.encoder.layers[0].self_attn.num_heads
        batch, len_s = src.shape
        if src_mask is not None:
            check_bool_mask("src_mask", src_mask, (batch, heads, len_s, len_s))
            if tgt is not None:
                check_bool_mask("src_mask", src_mask, (batch, heads, tgt.shape[1], len_s))
        if tgt_mask is not None and tgt is not None:
            check_bool_mask("tgt_mask", tgt_mask, (batch, heads, tgt.shape[1], tgt.shape[1]))

    def source_mask(self, src: torch.Tensor) -> torch.Tensor:
        """``(B, 1, 1, L_s)``: True where the source token is not padding."""
        return padding_mask(src, self.pad_id)

    def target_mask(self, tgt: torch.Tensor) -> torch.Tensor:
        """``(B, 1, L_t, L_t)``: causal and not padding."""
        return causal_mask(tgt.shape[1], device=tgt.device) & padding_mask(tgt, self.pad_id)

    @overload
    def encode(self, src: torch.Tensor, *, src_mask: torch.Tensor | None = None,
               return_attention: Literal[False] = False) -> torch.Tensor: ...

    @overload
    def encode(self, src: torch.Tensor, *, src_mask: torch.Tensor | None = None,
               return_attention: Literal[True]) -> tuple[torch.Tensor, list[torch.Tensor]]: ...

    def encode(
        self, src: torch.Tensor, *, src_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """Source ids ``(B, L_s)`` -> memory ``(B, L_s, d_model)``."""
        src = _checked_tokens("src", src, self.src_embed)
        self._check_masks(src, None, src_mask, None)
        check_flag("return_attention", return_attention)
        memory, maps = self._encode(src, src_mask, return_attention)
        return (memory, maps) if return_attention else memory

    def _encode(self, src: torch.Tensor, src_mask: torch.Tensor | None, need_weights: bool
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """:meth:`encode` without the checks: ``(memory, maps)``."""
        mask = self.source_mask(src) if src_mask is None else src_mask.to(src.device)
        out = self.encoder(self._embed("src", src, self.src_embed), mask=mask,
                           return_attention=need_weights, validate=False)
        return out if need_weights else (out, [])

    @overload
    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, *,
               src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
               return_attention: Literal[False] = False) -> torch.Tensor: ...

    @overload
    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, *,
               src_mask: torch.Tensor | None = None, tgt_mask: torch.Tensor | None = None,
               return_attention: Literal[True]) -> tuple[torch.Tensor, DecoderAttention]: ...

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        *,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, DecoderAttention]:
        """Target ids ``(B, L_t)`` and memory -> logits ``(B, L_t, tgt_vocab_size)``.

        ``src_mask`` should be the padding mask of the source (``source_mask(src)``).
        """
        tgt = _checked_tokens("tgt", tgt, self.tgt_embed)
        if tgt_mask is not None:
            heads = self.decoder.layers[0].self_attn.num_heads
            check_bool_mask("tgt_mask", tgt_mask, (tgt.shape[0], heads, tgt.shape[1],
                                                   tgt.shape[1]))
        _check_states("memory", memory, self.decoder, self.d_model)
        if memory.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"tgt and memory must have the same batch size, got tgt {shape_of(tgt)} and "
                f"memory {shape_of(memory)}"
            )
        if src_mask is not None:
            heads = self.decoder.layers[0].cross_attn.num_heads
            check_bool_mask("src_mask", src_mask, (tgt.shape[0], heads, tgt.shape[1],
                                                   memory.shape[1]))
        check_flag("return_attention", return_attention)
        logits, maps = self._decode(tgt, memory, src_mask, tgt_mask, return_attention)
        return (logits, maps) if return_attention else logits

    def _decode(self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None,
                tgt_mask: torch.Tensor | None, need_weights: bool
                ) -> tuple[torch.Tensor, DecoderAttention | None]:
        """:meth:`decode` without the checks: ``(logits, maps or None)``."""
        mask = self.target_mask(tgt) if tgt_mask is None else tgt_mask.to(tgt.device)
        memory_mask = None if src_mask is None else src_mask.to(tgt.device)
        out = self.decoder(self._embed("tgt", tgt, self.tgt_embed), memory, self_mask=mask,
                           memory_mask=memory_mask, return_attention=need_weights,
                           validate=False)
        hidden, maps = out if need_weights else (out, None)
        return self.lm_head(hidden), maps  # (B, L_t, tgt_vocab_size)

    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        *,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, TransformerAttention]:
        """Teacher-forced pass: ``src (B, L_s)``, ``tgt (B, L_t)`` -> logits ``(B, L_t, V)``.

        With ``return_attention`` also a :class:`TransformerAttention` of every layer's
        weights.
        """
        src = _checked_tokens("src", src, self.src_embed)
        tgt = _checked_tokens("tgt", tgt, self.tgt_embed)
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"src and tgt must have the same batch size, got {tuple(src.shape)} and "
                f"{tuple(tgt.shape)}"
            )
        self._check_masks(src, tgt, src_mask, tgt_mask)
        check_flag("return_attention", return_attention)
        if src_mask is None:
            src_mask = self.source_mask(src)
        memory, enc_maps = self._encode(src, src_mask, return_attention)
        logits, dec = self._decode(tgt, memory, src_mask, tgt_mask, return_attention)
        if dec is not None:  # return_attention
            return logits, TransformerAttention(enc_maps, dec.self_attention,
                                                dec.cross_attention)
        return logits

    def greedy_decode(
        self, src: torch.Tensor, *, bos_id: int, eos_id: int | None = None, max_len: int = 32
    ) -> torch.Tensor:
        """Generate one token at a time, always taking the most likely next token.

        The source is encoded once; at step t the decoder reads everything produced so
        far and its last position predicts token t + 1. A sequence that has produced
        ``eos_id`` is padded with ``pad_id`` afterwards; decoding stops when all have.

        Args:
            src: ``(B, L_s)`` source ids.
            bos_id: the id that starts every target.
            eos_id: the id that ends a target; ``None`` for a task without an end symbol
                (copying, say): then exactly ``max_len`` tokens.
            max_len: the most tokens generated after ``bos_id``.

        Returns:
            ``(B, T)`` generated ids without the leading ``bos_id``, ``T <= max_len``.
            See :func:`transformer_course.generation.greedy_decode`. The model decodes in
            eval mode (no dropout), then returns to the mode it was in.
        """
        was_training = self.training
        self.eval()
        try:
            return greedy_decode(self, src, bos_id=bos_id, eos_id=eos_id, max_len=max_len)
        finally:
            self.train(was_training)

    def beam_search(
        self, src: torch.Tensor, *, bos_id: int, eos_id: int | None = None,
        beam_size: int = 4, max_len: int = 32, length_penalty: float = 0.0,
    ) -> torch.Tensor:
        """Decode with beam search: keep the ``beam_size`` most likely prefixes at each step.

        See :func:`transformer_course.generation.beam_search`; ``beam_size=1`` is
        :meth:`greedy_decode`, and ``eos_id=None`` generates exactly ``max_len`` tokens.
        Returns ``(B, T)`` ids in the same format. The model decodes in eval mode (no
        dropout), then returns to the mode it was in.
        """
        was_training = self.training
        self.eval()
        try:
            return beam_search(self, src, bos_id=bos_id, eos_id=eos_id, beam_size=beam_size,
                               max_len=max_len, length_penalty=length_penalty)
        finally:
            self.train(was_training)


def _check_model_sizes(d_model: object, num_heads: object, num_layers: object, d_ff: object,
                       dropout: object, norm_first: object, activation: object,
                       max_len: object, pad_id: object) -> None:
    """Validate a model's sizes before any table is built with them."""
    _check_heads(d_model, num_heads)
    check_positive_int("num_layers", num_layers)
    check_positive_int("d_ff", d_ff)
    check_probability("dropout", dropout)
    check_flag("norm_first", norm_first)
    check_choice("activation", activation, tuple(ACTIVATIONS))
    check_positive_int("max_len", max_len)
    check_int("pad_id", pad_id)


class TransformerClassifier(nn.Module):
    """An encoder with a classification head, as BERT does for sentence labels.

    Token ids are embedded, positions added (``"learned"`` as in BERT or ``"sinusoidal"``),
    an :class:`Encoder` runs, then one vector per sequence feeds a linear head: the first
    position (``pooling="cls"``, the [CLS] token), the mean over real tokens
    (``pooling="mean"``) or the feature-wise maximum over real tokens (``pooling="max"``,
    the NYU notes' classifier; padding never wins the maximum, and a sequence with no real
    token pools to zeros).

    Args:
        vocab_size: number of token ids.
        num_classes: number of labels.
        d_model, num_heads, num_layers, d_ff, dropout, norm_first, activation: sizes.
        max_len: longest input.
        pad_id: padding id, used when no ``attention_mask`` is given.
        pooling: ``"cls"``, ``"mean"`` or ``"max"``.
        positional: ``"learned"`` or ``"sinusoidal"``.

    Token ids may have any integer dtype; they are cast to ``long``.
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        *,
        d_model: int = 128,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 256,
        dropout: float = 0.1,
        norm_first: bool = False,
        activation: str = "relu",
        max_len: int = 512,
        pad_id: int = 0,
        pooling: str = "cls",
        positional: str = "learned",
    ) -> None:
        super().__init__()
        check_choice("pooling", pooling, ("cls", "mean", "max"))
        check_choice("positional", positional, ("learned", "sinusoidal"))
        check_positive_int("vocab_size", vocab_size)
        check_positive_int("num_classes", num_classes)
        _check_model_sizes(d_model, num_heads, num_layers, d_ff, dropout, norm_first,
                           activation, max_len, pad_id)
        self.pad_id = pad_id
        self.pooling = pooling
        self.embed = nn.Embedding(vocab_size, d_model)
        self.positional = (LearnedPositionalEmbedding(d_model, max_len) if positional == "learned"
                           else SinusoidalPositionalEncoding(d_model, max_len))
        self.dropout = nn.Dropout(dropout)
        self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, dropout=dropout,
                               activation=activation, norm_first=norm_first)
        self.head = nn.Linear(d_model, num_classes)

    def forward(
        self,
        token_ids: torch.Tensor,
        *,
        attention_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """``(B, L)`` ids -> ``(B, num_classes)`` logits (and per-layer weights on request).

        ``attention_mask`` is ``(B, L)``, True or 1 for real tokens (the Hugging Face
        convention); by default every id other than ``pad_id``.
        """
        token_ids = check_ids("token_ids", token_ids)
        check_same_device("token_ids", token_ids, self.embed.weight.device)
        check_flag("return_attention", return_attention)
        if attention_mask is None:
            keep = token_ids != self.pad_id  # (B, L)
        else:
            keep = check_attention_mask("attention_mask", attention_mask, token_ids,
                                        "token_ids")
        x = self.dropout(self.positional(lookup("token_ids", self.embed, token_ids)))  # (B, L, d)
        out = self.encoder(x, mask=keep[:, None, None, :], return_attention=return_attention,
                           validate=False)
        hidden, maps = out if return_attention else (out, [])
        if self.pooling == "cls":
            pooled = hidden[:, 0]  # (B, d_model)
        elif self.pooling == "mean":
            weights = keep.to(hidden.dtype)[..., None]  # (B, L, 1)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        else:  # max over real tokens only: padding is set to -inf so that it never wins
            real = keep[..., None]  # (B, L, 1)
            pooled = hidden.masked_fill(~real, float("-inf")).amax(dim=1)  # (B, d_model)
            pooled = torch.where(real.any(dim=1), pooled, torch.zeros_like(pooled))
        logits = self.head(pooled)  # (B, num_classes)
        return (logits, maps) if return_attention else logits
