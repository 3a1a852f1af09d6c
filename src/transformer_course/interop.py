"""Convert PyTorch's own Transformer modules into the course's, weights included."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .layers import Decoder, DecoderLayer, Encoder, EncoderLayer, MultiHeadAttention

__all__ = ["from_torch"]


def _activation_name(act: object) -> str:
    if act is F.relu or isinstance(act, nn.ReLU):
        return "relu"
    if act is F.gelu or (isinstance(act, nn.GELU) and act.approximate == "none"):
        return "gelu"
    raise ValueError(f"only relu and gelu activations can be converted, got {act!r}")


@torch.no_grad()
def _mha(src: nn.MultiheadAttention) -> MultiHeadAttention:
    if src.bias_k is not None or src.add_zero_attn:
        raise ValueError("nn.MultiheadAttention with add_bias_kv or add_zero_attn is not supported")
    bias = src.in_proj_bias is not None
    out = MultiHeadAttention(src.embed_dim, src.num_heads, kdim=src.kdim, vdim=src.vdim,
                             bias=bias, dropout=src.dropout)
    d = src.embed_dim
    if src._qkv_same_embed_dim:
        w_q, w_k, w_v = src.in_proj_weight.split(d)  # the packed (3d, d) weight
    else:
        w_q, w_k, w_v = src.q_proj_weight, src.k_proj_weight, src.v_proj_weight
    for ours, w in ((out.W_q, w_q), (out.W_k, w_k), (out.W_v, w_v)):
        ours.weight = nn.Parameter(w.detach().clone())
    if bias:
        for ours, b in zip((out.W_q, out.W_k, out.W_v), src.in_proj_bias.split(d), strict=True):
            ours.bias = nn.Parameter(b.detach().clone())
    out.W_o.weight = nn.Parameter(src.out_proj.weight.detach().clone())
    if bias:
        out.W_o.bias = nn.Parameter(src.out_proj.bias.detach().clone())
    return out


def _load(dst: nn.Module, src: nn.Module) -> None:
    """Copy ``src``'s parameters into ``dst``, taking their dtype and device (no sharing)."""
    state = {name: t.detach().clone() for name, t in src.state_dict().items()}
    dst.load_state_dict(state, assign=True)


def _norm(src: object, d_model: int, where: str) -> nn.LayerNorm:
    """A copy of a LayerNorm, with its ``eps`` (which the state dict does not hold) and
    with or without a bias as the original."""
    if not isinstance(src, nn.LayerNorm) or not src.elementwise_affine:
        raise ValueError(
            f"only nn.LayerNorm with elementwise_affine=True can be converted, got {where} = "
            f"{src!r}"
        )
    if tuple(src.normalized_shape) != (d_model,):
        raise ValueError(
            f"{where} normalises a shape {tuple(src.normalized_shape)}, expected ({d_model},)"
        )
    out = nn.LayerNorm(d_model, eps=src.eps, bias=src.bias is not None)
    _load(out, src)
    return out


def _layer_options(src: nn.Module) -> dict:
    has_bias = src.linear1.bias is not None
    return dict(
        dropout=src.dropout.p,
        activation=_activation_name(src.activation),
        norm_first=src.norm_first,
        eps=src.norm1.eps,
        bias=has_bias,
    )


@torch.no_grad()
def _encoder_layer(src: nn.TransformerEncoderLayer) -> EncoderLayer:
    d_model = src.self_attn.embed_dim
    out = EncoderLayer(d_model, src.self_attn.num_heads, src.linear1.out_features,
                       **_layer_options(src))
    out.self_attn = _mha(src.self_attn)
    _load(out.ff.linear1, src.linear1)
    _load(out.ff.linear2, src.linear2)
    out.norm1 = _norm(src.norm1, d_model, "norm1")
    out.norm2 = _norm(src.norm2, d_model, "norm2")
    return out


@torch.no_grad()
def _decoder_layer(src: nn.TransformerDecoderLayer) -> DecoderLayer:
    d_model = src.self_attn.embed_dim
    out = DecoderLayer(d_model, src.self_attn.num_heads, src.linear1.out_features,
                       **_layer_options(src))
    out.self_attn = _mha(src.self_attn)
    out.cross_attn = _mha(src.multihead_attn)
    _load(out.ff.linear1, src.linear1)
    _load(out.ff.linear2, src.linear2)
    for name in ("norm1", "norm2", "norm3"):
        setattr(out, name, _norm(getattr(src, name), d_model, name))
    return out


@torch.no_grad()
def _stack(src: nn.TransformerEncoder | nn.TransformerDecoder) -> Encoder | Decoder:
    if len(src.layers) == 0:
        raise ValueError(f"{type(src).__name__} has no layers to convert")
    first = src.layers[0]
    is_encoder = isinstance(src, nn.TransformerEncoder)
    cls, convert = (Encoder, _encoder_layer) if is_encoder else (Decoder, _decoder_layer)
    out = cls(first.self_attn.embed_dim, first.self_attn.num_heads, first.linear1.out_features,
              len(src.layers), final_norm=src.norm is not None, **_layer_options(first))
    out.layers = nn.ModuleList(convert(layer) for layer in src.layers)
    if src.norm is not None:  # its eps may differ from the layers'
        out.norm = _norm(src.norm, first.self_attn.embed_dim, "the final norm")
    return out


def from_torch(module: nn.Module) -> nn.Module:
    """Build the course's module equal to one of PyTorch's, with copied weights.

    Supported: ``nn.MultiheadAttention`` -> :class:`MultiHeadAttention`,
    ``nn.TransformerEncoderLayer`` -> :class:`EncoderLayer`,
    ``nn.TransformerDecoderLayer`` -> :class:`DecoderLayer`,
    ``nn.TransformerEncoder`` / ``nn.TransformerDecoder`` -> :class:`Encoder` / :class:`Decoder`.

    The result is batch first and takes boolean masks with True = may attend, while
    PyTorch's modules take True = blocked (``mask = ~torch_mask``). Given the same inputs
    (batch first, ``batch_first=True`` on PyTorch's side) both give the same outputs, with
    one exception: in eval mode with a padding mask, ``nn.TransformerEncoder``'s fast path
    (``enable_nested_tensor=True``, its default) returns zeros at the padded positions,
    where the course's stack computes their outputs as at any other position.
    The training mode, dtype and device are those of ``module``, and every LayerNorm keeps
    its own ``eps`` (a stack's final norm included).

    Raises:
        TypeError: for any other module.
        ValueError: for options the course's modules do not implement (``add_bias_kv``,
            activations other than relu and gelu, norms other than ``nn.LayerNorm``).
    """
    converters = (
        (nn.MultiheadAttention, _mha),
        (nn.TransformerEncoderLayer, _encoder_layer),
        (nn.TransformerDecoderLayer, _decoder_layer),
        (nn.TransformerEncoder, _stack),
        (nn.TransformerDecoder, _stack),
    )
    for kind, convert in converters:
        if isinstance(module, kind):
            ref = next(module.parameters())
            out = convert(module).to(device=ref.device, dtype=ref.dtype)
            return out.train(module.training)
    names = ", ".join(f"nn.{kind.__name__}" for kind, _ in converters)
    raise TypeError(f"from_torch accepts {names}; got {type(module).__name__}")
