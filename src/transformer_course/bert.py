"""A BERT encoder built from the course's own layers, and a loader for Hugging Face weights."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from ._checks import (
    check_attention_mask,
    check_flag,
    check_ids,
    check_positive_int,
    check_probability,
    check_real,
    check_same_device,
    lookup,
    shape_of,
)
from .layers import Encoder, _check_heads, through_layers

__all__ = ["BertEncoder", "BertEncoderOutput", "from_huggingface"]


@dataclass
class BertEncoderOutput:
    """What :class:`BertEncoder` returns (the field names follow Hugging Face)."""

    last_hidden_state: torch.Tensor  # (B, L, d_model)
    attentions: tuple[torch.Tensor, ...]  # one (B, H, L, L) per layer
    pooler_output: torch.Tensor | None = None  # (B, d_model): tanh(W h_[CLS])
    # the embeddings and every layer's output, when asked for
    hidden_states: tuple[torch.Tensor, ...] = field(default_factory=tuple)


class BertEmbeddings(nn.Module):
    """Token + learned position + segment (token type) embeddings, then LayerNorm."""

    def __init__(self, vocab_size: int, d_model: int, max_len: int, type_vocab_size: int,
                 *, eps: float = 1e-12, dropout: float = 0.1, pad_id: int = 0) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.position = nn.Embedding(max_len, d_model)
        self.token_type = nn.Embedding(type_vocab_size, d_model)
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)  # (L,)
        x = (lookup("input_ids", self.word, input_ids) + self.position(positions)
             + lookup("token_type_ids", self.token_type, token_type_ids, what="segment table"))
        return self.dropout(self.norm(x))  # (B, L, d_model)


class BertEncoder(nn.Module):
    """BERT: embeddings, a post-norm GELU :class:`~transformer_course.Encoder`, a pooler.

    Build it empty with the sizes, or from a pretrained Hugging Face ``BertModel`` with
    :func:`from_huggingface`. Ids of any integer dtype are accepted (cast to ``long``).
    """

    def __init__(
        self,
        vocab_size: int = 30522,
        d_model: int = 768,
        num_heads: int = 12,
        num_layers: int = 12,
        d_ff: int = 3072,
        *,
        max_len: int = 512,
        type_vocab_size: int = 2,
        eps: float = 1e-12,
        dropout: float = 0.1,
        pad_id: int = 0,
        pooler: bool = True,
    ) -> None:
        super().__init__()
        _check_heads(d_model, num_heads)
        for name, value in (("vocab_size", vocab_size), ("num_layers", num_layers),
                            ("d_ff", d_ff), ("max_len", max_len),
                            ("type_vocab_size", type_vocab_size)):
            check_positive_int(name, value)
        check_real("eps", eps, low=0.0, low_open=True)
        check_probability("dropout", dropout)
        if not 0 <= check_positive_int("pad_id", pad_id, allow_zero=True) < vocab_size:
            raise ValueError(f"pad_id must be an id in [0, {vocab_size}), got {pad_id}")
        check_flag("pooler", pooler)
        self.embeddings = BertEmbeddings(vocab_size, d_model, max_len, type_vocab_size,
                                         eps=eps, dropout=dropout, pad_id=pad_id)
        self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, dropout=dropout,
                               activation="gelu", norm_first=False, eps=eps)
        self.pooler = nn.Linear(d_model, d_model) if pooler else None

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        *,
        output_hidden_states: bool = False,
    ) -> BertEncoderOutput:
        """Encode token ids.

        Args:
            input_ids: ``(B, L)`` WordPiece ids.
            attention_mask: ``(B, L)``, 1/True for real tokens, 0/False for [PAD].
            token_type_ids: ``(B, L)`` segment ids (0 for the first sentence).
            output_hidden_states: also return the input of every layer.

        Returns:
            A :class:`BertEncoderOutput` with ``last_hidden_state`` and ``attentions``.
        """
        emb = self.embeddings
        input_ids = check_ids("input_ids", input_ids)
        if input_ids.shape[1] > emb.position.num_embeddings:
            raise ValueError(
                f"input_ids has {input_ids.shape[1]} positions (shape {shape_of(input_ids)}) "
                f"but the model has {emb.position.num_embeddings} position embeddings"
            )
        check_same_device("input_ids", input_ids, emb.word.weight.device)
        check_flag("output_hidden_states", output_hidden_states)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        else:
            token_type_ids = check_ids("token_type_ids", token_type_ids).to(input_ids.device)
            if token_type_ids.shape != input_ids.shape:
                raise ValueError(
                    f"token_type_ids must have the shape of input_ids {shape_of(input_ids)}, "
                    f"got {shape_of(token_type_ids)}"
                )
        x = self.embeddings(input_ids, token_type_ids)
        mask = None
        if attention_mask is not None:
            keep = check_attention_mask("attention_mask", attention_mask, input_ids,
                                        "input_ids")
            mask = keep[:, None, None, :].to(x.device)  # (B, 1, 1, L)
        states, maps = through_layers(self.encoder.layers, x, mask=mask, need_weights=True)
        states, x = [x, *states], states[-1]
        pooled = None if self.pooler is None else torch.tanh(self.pooler(x[:, 0]))
        return BertEncoderOutput(
            last_hidden_state=x,
            attentions=tuple(maps),
            pooler_output=pooled,
            hidden_states=tuple(states) if output_hidden_states else (),
        )


def _copy_linear(ours: nn.Linear, theirs: nn.Module) -> None:
    ours.weight.copy_(theirs.weight)
    if ours.bias is not None:
        ours.bias.copy_(theirs.bias)


@torch.no_grad()
def from_huggingface(model: nn.Module) -> BertEncoder:
    """Load a Hugging Face ``transformers`` ``BertModel`` into a :class:`BertEncoder`.

    The result holds copies of the same weights (same dtype and device) and gives the same
    hidden states and per-layer attentions. A model with a task head (``BertFor...``) is
    accepted through its ``.bert`` attribute.

    Raises:
        TypeError: if ``model`` is not a BERT-architecture model.
        ValueError: for configurations the course's encoder does not implement.
    """
    bert = getattr(model, "bert", model)
    config = getattr(bert, "config", None)
    if (config is None or getattr(config, "model_type", None) != "bert"
            or not hasattr(bert, "embeddings") or not hasattr(bert, "encoder")):
        raise TypeError(
            f"model must be a transformers BertModel (or BertFor... with .bert), got "
            f"{type(model).__name__}"
        )
    if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        raise ValueError("only encoder BERT models are supported, got is_decoder=True or "
                         "add_cross_attention=True")
    if getattr(config, "hidden_act", "gelu") != "gelu":
        raise ValueError(f"only hidden_act='gelu' is supported, got {config.hidden_act!r}")
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        raise ValueError(
            "only absolute position embeddings are supported, got "
            f"{config.position_embedding_type!r}"
        )
    emb = bert.embeddings
    ours = BertEncoder(
        config.vocab_size,
        config.hidden_size,
        config.num_attention_heads,
        config.num_hidden_layers,
        config.intermediate_size,
        max_len=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        eps=config.layer_norm_eps,
        dropout=config.hidden_dropout_prob,
        pad_id=config.pad_token_id if config.pad_token_id is not None else 0,
        pooler=getattr(bert, "pooler", None) is not None,
    )
    ref = emb.word_embeddings.weight
    ours.to(device=ref.device, dtype=ref.dtype)
    ours.embeddings.word.weight.copy_(emb.word_embeddings.weight)
    ours.embeddings.position.weight.copy_(emb.position_embeddings.weight)
    ours.embeddings.token_type.weight.copy_(emb.token_type_embeddings.weight)
    ours.embeddings.norm.load_state_dict(emb.LayerNorm.state_dict())
    for mine, theirs in zip(ours.encoder.layers, bert.encoder.layer, strict=True):
        _copy_linear(mine.self_attn.W_q, theirs.attention.self.query)
        _copy_linear(mine.self_attn.W_k, theirs.attention.self.key)
        _copy_linear(mine.self_attn.W_v, theirs.attention.self.value)
        _copy_linear(mine.self_attn.W_o, theirs.attention.output.dense)
        mine.norm1.load_state_dict(theirs.attention.output.LayerNorm.state_dict())
        _copy_linear(mine.ff.linear1, theirs.intermediate.dense)
        _copy_linear(mine.ff.linear2, theirs.output.dense)
        mine.norm2.load_state_dict(theirs.output.LayerNorm.state_dict())
    if ours.pooler is not None:
        _copy_linear(ours.pooler, bert.pooler.dense)
    return ours.train(bert.training)
