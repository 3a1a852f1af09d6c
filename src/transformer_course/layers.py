"""The building blocks of the Transformer, top-down: attention, feed-forward, layers, stacks.

Every module here takes batch-first tensors, boolean masks with True = may attend, and
returns attention weights only when asked (``return_attention=True``), never as a stored
side effect.

Each module's ``forward`` is a door: it checks its arguments, then computes. A module
inside another (a layer's attention, a stack's layers) is called with ``validate=False``:
arguments are checked once, where they come in, and the inner module's hooks still fire.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import (
    check_beta,
    check_bool_mask,
    check_choice,
    check_flag,
    check_like,
    check_positive_int,
    check_probability,
    check_real,
    check_representable,
    check_tensor,
    check_width,
    shape_of,
)
from .cache import KVCache, LayerCache
from .functional import _attention, _merge_heads, _split_heads, causal_mask

__all__ = [
    "ACTIVATIONS",
    "Decoder",
    "DecoderAttention",
    "DecoderLayer",
    "Encoder",
    "EncoderLayer",
    "FeedForward",
    "MultiHeadAttention",
    "through_layers",
]

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


# --- the checks at the door -------------------------------------------------------------------

def _check_layer_options(activation: str, norm_first: bool, eps: float, bias: bool) -> None:
    """Validate the options shared by the layers and the stacks."""
    check_choice("activation", activation, tuple(ACTIVATIONS))
    check_flag("norm_first", norm_first)
    check_real("eps", eps, low=0.0, low_open=True)
    check_flag("bias", bias)


def _check_heads(d_model: int, num_heads: int) -> tuple[int, int]:
    d_model = check_positive_int("d_model", d_model)
    num_heads = check_positive_int("num_heads", num_heads)
    if d_model % num_heads:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: each head gets "
            "d_model / num_heads features"
        )
    return d_model, num_heads


def _training_forward(module: nn.Module) -> bool:
    """A forward in training mode that autograd records: it reads nothing on the host."""
    return module.training and torch.is_grad_enabled()


def _check_states(name: str, x: object, module: nn.Module, d_model: int) -> torch.Tensor:
    """Check a ``(B, L, d_model)`` input of a layer: rank, kind, width, dtype and device;
    outside a training forward, also that its values are finite and not too large."""
    check_tensor(name, x, ndim=3, floating=True)
    check_width(name, x, d_model, layout="(B, L, {width})")
    check_like(name, x, next(module.parameters(), None), owner=type(module).__name__)
    if not _training_forward(module):
        check_representable(name, x)
    return x


def _check_memory(x: torch.Tensor, memory: object, module: nn.Module, d_model: int) -> None:
    _check_states("memory", memory, module, d_model)
    if memory.shape[0] != x.shape[0]:
        raise ValueError(
            f"x and memory must have the same batch size, got x {shape_of(x)} and memory "
            f"{shape_of(memory)}"
        )


def _check_mask(name: str, mask: object, target: tuple[int, ...]) -> None:
    if mask is not None:
        check_bool_mask(name, mask, target)


def _check_cache(cache: object, attn: MultiHeadAttention, query: torch.Tensor) -> int:
    """Check a layer's cache against the queries; return how many positions it holds."""
    if cache is None:
        return 0
    if not isinstance(cache, LayerCache):
        raise TypeError(f"cache must be a LayerCache, got {type(cache).__name__}")
    if cache.keys is None or cache.values is None:
        return 0
    want = (query.shape[0], attn.num_heads, cache.length, attn.d_head)
    for name, t in (("cache.keys", cache.keys), ("cache.values", cache.values)):
        if tuple(t.shape) != want:
            raise ValueError(
                f"{name} must be (B, H, L_past, d_head) = {want} for this layer and batch, "
                f"got {shape_of(t)}"
            )
        if t.dtype != query.dtype or t.device != query.device:
            raise TypeError(
                f"{name} has dtype {t.dtype} on {t.device}, the queries {query.dtype} on "
                f"{query.device}: a cache belongs to one model, dtype and device"
            )
    return cache.length


def _check_stack_cache(cache: object, layers: nn.ModuleList, x: torch.Tensor) -> int:
    """Check a stack's :class:`KVCache`; return how many positions it holds."""
    if cache is None:
        return 0
    if not isinstance(cache, KVCache):
        raise TypeError(f"cache must be a KVCache, got {type(cache).__name__}")
    if len(cache.layers) != len(layers):
        have = len(cache.layers)
        raise ValueError(f"cache has {have} layer{'s' if have != 1 else ''}, the stack "
                         f"{len(layers)}: build it with KVCache({len(layers)})")
    past = _check_cache(cache.layers[0], layers[0].self_attn, x)
    for i, layer in enumerate(layers[1:], start=1):  # the layers run unchecked
        if _check_cache(cache.layers[i], layer.self_attn, x) != past:
            raise ValueError(
                f"cache.layers[{i}] holds {cache.layers[i].length} positions, "
                f"cache.layers[0] {past}: a cache is filled by one stack, all layers "
                "at once"
            )
    return past


def _check_causal(is_causal: object, len_q: int, len_k: int) -> None:
    """``is_causal`` needs self-attention: as many new keys as queries."""
    if check_flag("is_causal", is_causal) and len_q != len_k:
        raise ValueError(
            f"is_causal=True needs as many queries as new keys (self-attention), got "
            f"{len_q} queries and {len_k} keys"
        )


def _check_encoder_inputs(module: nn.Module, layers: nn.ModuleList, x: object, mask: object,
                          return_attention: object, cache: object, is_causal: object,
                          ) -> None:
    """The checks of an encoder layer (``cache`` a LayerCache) or stack (a KVCache)."""
    attn = layers[0].self_attn
    _check_states("x", x, module, attn.d_model)
    past = (_check_cache(cache, attn, x) if isinstance(module, EncoderLayer)
            else _check_stack_cache(cache, layers, x))
    _check_mask("mask", mask, (x.shape[0], attn.num_heads, x.shape[1], past + x.shape[1]))
    check_flag("return_attention", return_attention)
    check_flag("is_causal", is_causal)


def _check_decoder_inputs(module: nn.Module, attn: MultiHeadAttention, x: object,
                          memory: object, self_mask: object, memory_mask: object,
                          return_attention: object) -> None:
    """The checks of a decoder layer or stack, before anything runs."""
    _check_states("x", x, module, attn.d_model)
    _check_memory(x, memory, module, attn.d_model)
    batch, heads, len_t, len_s = x.shape[0], attn.num_heads, x.shape[1], memory.shape[1]
    _check_mask("self_mask", self_mask, (batch, heads, len_t, len_t))
    _check_mask("memory_mask", memory_mask, (batch, heads, len_t, len_s))
    check_flag("return_attention", return_attention)


def _with_causal(mask: torch.Tensor | None, length: int, past: int,
                 device: torch.device) -> torch.Tensor:
    """``mask`` and the causal mask of ``length`` queries after ``past`` cached positions."""
    causal = causal_mask(length, past=past, device=device)  # (L_q, L_past + L_q)
    return causal if mask is None else mask & causal


def _fused(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
           beta: float | None, dropout_p: float, is_causal: bool) -> torch.Tensor:
    """PyTorch's fused kernel with the package's conventions: ``(B, H, L_q, d_head)``."""
    past = k.shape[2] - q.shape[2]  # cached keys come before the new ones
    if mask is None and not (is_causal and past):  # the kernel's own causal mask, or none
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=beta,
                                              is_causal=is_causal)
    if is_causal:
        mask = _with_causal(mask, q.shape[2], past, q.device)
    mask = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))  # 4-D, as it wants
    heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                           scale=beta)  # (B, H, L_q, d_head)
    empty = ~mask.any(dim=-1, keepdim=True)  # (., ., L_q, 1): nothing to attend to
    return heads.masked_fill(empty, 0.0)  # some PyTorch versions give NaN there


# --- attention and feed-forward ---------------------------------------------------------------

class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate projections ``W_q``, ``W_k``, ``W_v`` and ``W_o``.

    Each of the ``num_heads`` heads attends in its own ``d_head = d_model / num_heads``
    dimensional subspace; the heads are concatenated and mixed by ``W_o`` (the notes' W_h).

    Args:
        d_model: width of the queries and of the output.
        num_heads: number of heads h; must divide ``d_model``.
        kdim: width of the ``key`` input, the vectors the keys are computed from (default
            ``d_model``), for cross-attention.
        vdim: width of the ``value`` input (default ``d_model``).
        bias: whether the four projections have a bias.
        dropout: dropout on the attention weights during training.

    Inputs must have the dtype and device of the parameters (``TypeError`` otherwise: convert
    one side with ``.to``). Outside a training forward, inputs that are not finite or too
    large for their dtype to hold their squares raise a ``ValueError`` (a training forward
    reads nothing back on the host, so it does not look).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        kdim: int | None = None,
        vdim: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.d_model, self.num_heads = _check_heads(d_model, num_heads)
        self.d_head = d_model // num_heads
        self.kdim = d_model if kdim is None else check_positive_int("kdim", kdim)
        self.vdim = d_model if vdim is None else check_positive_int("vdim", vdim)
        self.dropout = check_probability("dropout", dropout)
        check_flag("bias", bias)
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(self.kdim, d_model, bias=bias)
        self.W_v = nn.Linear(self.vdim, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        beta: float | None = None,
        hard: bool = False,
        need_weights: bool = True,
        cache: LayerCache | None = None,
        is_causal: bool = False,
        validate: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: ``(B, L_q, d_model)``.
            key: ``(B, L_k, kdim)``.
            value: ``(B, L_k, vdim)``.
            mask: boolean, True = may attend, broadcastable to ``(B, H, L_q, L_k)``
                (a key mask of shape ``(L_k,)`` included).
            beta: inverse temperature; ``None`` means ``1 / sqrt(d_head)``.
            hard: use one-hot argmax weights (always takes the explicit path).
            need_weights: return the per-head weights; ``False`` takes PyTorch's fused
                ``scaled_dot_product_attention`` kernel and returns ``None`` for them.
            cache: the keys and values of earlier positions (a :class:`LayerCache`, for
                self-attention that generates one position at a time): the new keys and
                values are appended to it, and the queries attend to all of them. ``mask``
                then broadcasts to ``(B, H, L_q, L_past + L_k)``.
            is_causal: causal self-attention: query ``i`` (position ``L_past + i``) attends
                to keys ``0..L_past + i`` only, as with ``mask=causal_mask(L_q,
                past=L_past)`` (combined with ``mask`` if both are given). Without a mask
                and a past, the fused path lets PyTorch's kernel skip the masked half
                (``is_causal=True``), which also lets a GPU choose its flash kernel.
            validate: check the arguments first (the default). The layers pass ``False``:
                they checked their own inputs, and ``mask`` is then on the queries' device.

        Returns:
            ``(output, weights)``: ``(B, L_q, d_model)`` and ``(B, H, L_q, L_k)`` or None.
            A query whose keys are all masked gets zero heads (on both paths), so its
            output is the bias of ``W_o`` (zero with ``bias=False``).
        """
        if check_flag("validate", validate):
            mask, beta = self._check(query, key, value, mask, beta, hard, need_weights,
                                     cache, is_causal)
        q = _split_heads(self.W_q(query), self.num_heads)  # (B, H, L_q, d_head)
        k = _split_heads(self.W_k(key), self.num_heads)  # (B, H, L_k, d_head)
        v = _split_heads(self.W_v(value), self.num_heads)  # (B, H, L_k, d_head)
        if cache is not None:  # the earlier positions' keys and values come first
            k, v = cache.update(k, v)  # (B, H, L_past + L_k, d_head)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights or hard:  # the explicit path, which also returns the weights
            beta = 1.0 / math.sqrt(self.d_head) if beta is None else beta
            if is_causal:
                mask = _with_causal(mask, q.shape[2], k.shape[2] - q.shape[2], q.device)
            # scores = beta q.k^T, masked, softmax (zero rows where nothing may be
            # attended), dropout, then @ v: (B, H, L_q, d_head), weights (B, H, L_q, L_k)
            heads, weights = _attention(q, k, v, mask, beta, hard, dropout_p)
        else:  # PyTorch's fused kernel: the same maths, without the weights
            heads, weights = _fused(q, k, v, mask, beta, dropout_p, is_causal), None
        output = self.W_o(_merge_heads(heads))  # (B, L_q, d_model)
        return output, (weights if need_weights else None)  # weights (B, H, L_q, L_k)

    def _check(self, query: object, key: object, value: object, mask: object, beta: object,
               hard: object, need_weights: object, cache: object, is_causal: object
               ) -> tuple[torch.Tensor | None, float | None]:
        """The checks of :meth:`forward`; return the mask on the queries' device and beta."""
        for name, t, width, layer in (("query", query, self.d_model, self.W_q),
                                      ("key", key, self.kdim, self.W_k),
                                      ("value", value, self.vdim, self.W_v)):
            check_tensor(name, t, ndim=3, floating=True)
            check_width(name, t, width)
            check_like(name, t, layer.weight, owner="MultiHeadAttention")
        if not query.shape[0] == key.shape[0] == value.shape[0]:
            raise ValueError(
                "query, key and value must have the same batch size, got "
                f"{shape_of(query)}, {shape_of(key)}, {shape_of(value)}"
            )
        if key.shape[1] != value.shape[1]:
            raise ValueError(
                "key and value must have the same length, got "
                f"{shape_of(key)} and {shape_of(value)}"
            )
        batch, len_q, len_k = query.shape[0], query.shape[1], key.shape[1]
        past = _check_cache(cache, self, query)
        _check_mask("mask", mask, (batch, self.num_heads, len_q, past + len_k))
        if beta is not None:
            beta = check_beta(beta, query.dtype)
        check_flag("hard", hard)
        check_flag("need_weights", need_weights)
        _check_causal(is_causal, len_q, len_k)
        if not _training_forward(self):
            for name, t in (("query", query), ("key", key), ("value", value)):
                check_representable(name, t)
        return (None if mask is None else mask.to(query.device)), beta

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_head={self.d_head}"


class FeedForward(nn.Module):
    """The position-wise feed-forward network: ``linear2(dropout(act(linear1(x))))``.

    The same two-layer network is applied to every position independently, which is a
    1-D convolution with kernel size 1.

    Shape:
        ``(..., d_model) -> (..., d_model)``, with ``d_ff`` hidden units.

    The input must have the dtype and device of the parameters.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        *,
        dropout: float = 0.0,
        activation: str = "relu",
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.activation = check_choice("activation", activation, tuple(ACTIVATIONS))
        self.d_model = check_positive_int("d_model", d_model)
        self.linear1 = nn.Linear(d_model, check_positive_int("d_ff", d_ff),
                                 bias=check_flag("bias", bias))
        self.dropout = nn.Dropout(check_probability("dropout", dropout))
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor, *, validate: bool = True) -> torch.Tensor:
        """``(..., d_model) -> (..., d_model)``; ``validate=False`` skips the checks of
        ``x`` (the layers, which checked their own input)."""
        if check_flag("validate", validate):
            check_tensor("x", x, min_dim=1, floating=True)
            check_width("x", x, self.d_model, layout="(..., {width})")
            check_like("x", x, self.linear1.weight, owner="FeedForward")
            if not _training_forward(self):
                check_representable("x", x, squared=False)  # no square: finite is enough
        hidden = ACTIVATIONS[self.activation](self.linear1(x))  # (..., d_ff)
        return self.linear2(self.dropout(hidden))  # (..., d_model)


# --- layers -----------------------------------------------------------------------------------

class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in a residual connection and LayerNorm.

    Post-norm (the paper, BERT): ``x = norm(x + sublayer(x))``.
    Pre-norm (``norm_first=True``, GPT-2 and most recent models): ``x = x + sublayer(norm(x))``.

    Args:
        d_model: model width.
        num_heads: number of attention heads.
        d_ff: hidden width of the feed-forward network.
        dropout: dropout on attention weights, inside the feed-forward net and on each
            sub-layer's output.
        activation: ``"relu"`` or ``"gelu"``.
        norm_first: pre-norm instead of post-norm.
        eps: LayerNorm epsilon, > 0.
        bias: biases in the linear layers and the LayerNorms.

    ``x`` is checked (shape, dtype, device; outside a training forward, also finite and
    not too large for its dtype) before anything runs.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _check_layer_options(activation, norm_first, eps, bias)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout=dropout, activation=activation, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        return_attention: bool = False,
        cache: LayerCache | None = None,
        is_causal: bool = False,
        validate: bool = True,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``(B, L, d_model) -> (B, L, d_model)``, plus ``(B, H, L, L)`` weights on request.

        ``mask`` broadcasts to ``(B, H, L, L)``: a key mask ``(L,)``, a causal ``(L, L)``
        mask or a padding mask ``(B, 1, 1, L)``. With a ``cache`` (the self-attention's
        :class:`LayerCache`), ``x`` holds the new positions only and ``mask`` broadcasts to
        ``(B, H, L, L_past + L)``. ``is_causal=True`` applies the causal mask (combined
        with ``mask``) without building it where the fused kernel can. ``validate=False``
        skips the checks (the stacks, which checked their input; ``mask`` is then on the
        device of ``x``).
        """
        if check_flag("validate", validate):
            _check_encoder_inputs(self, (self,), x, mask, return_attention, cache, is_causal)
            mask = _on(mask, x)
        need_weights = return_attention
        if self.norm_first:
            attended, weights = self._sa_block(self.norm1(x), mask, need_weights, cache,
                                               is_causal)
            x = x + attended
            x = x + self._ff_block(self.norm2(x))
        else:
            attended, weights = self._sa_block(x, mask, need_weights, cache, is_causal)
            x = self.norm1(x + attended)
            x = self.norm2(x + self._ff_block(x))
        return (x, weights) if return_attention else x

    def _sa_block(self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool,
                  cache: LayerCache | None, is_causal: bool
                  ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.self_attn(x, x, x, mask=mask, need_weights=need_weights,
                                           cache=cache, is_causal=is_causal, validate=False)
        return self.dropout1(attended), weights

    def _ff_block(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout2(self.ff(x, validate=False))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder's output, then feed-forward.

    In cross-attention the queries come from the decoder and the keys and values from the
    encoder's output (``memory``). Arguments as for :class:`EncoderLayer`.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        bias: bool = True,
    ) -> None:
        super().__init__()
        _check_layer_options(activation, norm_first, eps, bias)
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, bias=bias, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout=dropout, activation=activation, bias=bias)
        self.norm1 = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.norm2 = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.norm3 = nn.LayerNorm(d_model, eps=eps, bias=bias)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        *,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        return_attention: bool = False,
        validate: bool = True,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Decode one layer.

        Args:
            x: ``(B, L_t, d_model)`` decoder states.
            memory: ``(B, L_s, d_model)`` encoder output.
            self_mask: broadcastable to ``(B, H, L_t, L_t)``, usually causal.
            memory_mask: broadcastable to ``(B, H, L_t, L_s)``, usually source padding.
            return_attention: also return the self- and cross-attention weights.
            validate: check the arguments first (the default); the stacks pass ``False``
                (the masks are then on the device of ``x``).

        Returns:
            ``x`` of shape ``(B, L_t, d_model)``, or ``(x, self_weights, cross_weights)``.
        """
        if check_flag("validate", validate):
            _check_decoder_inputs(self, self.self_attn, x, memory, self_mask, memory_mask,
                                  return_attention)
            self_mask, memory_mask = _on(self_mask, x), _on(memory_mask, x)
        need_weights = return_attention
        if self.norm_first:
            attended, self_w = self._sa_block(self.norm1(x), self_mask, need_weights)
            x = x + attended
            attended, cross_w = self._mha_block(self.norm2(x), memory, memory_mask,
                                                need_weights)
            x = x + attended
            x = x + self._ff_block(self.norm3(x))
        else:
            attended, self_w = self._sa_block(x, self_mask, need_weights)
            x = self.norm1(x + attended)
            attended, cross_w = self._mha_block(x, memory, memory_mask, need_weights)
            x = self.norm2(x + attended)
            x = self.norm3(x + self._ff_block(x))
        return (x, self_w, cross_w) if return_attention else x

    def _sa_block(self, x: torch.Tensor, mask: torch.Tensor | None, need_weights: bool
                  ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.self_attn(x, x, x, mask=mask, need_weights=need_weights,
                                           validate=False)
        return self.dropout1(attended), weights

    def _mha_block(self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None,
                   need_weights: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.cross_attn(x, memory, memory, mask=mask,
                                            need_weights=need_weights, validate=False)
        return self.dropout2(attended), weights

    def _ff_block(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout3(self.ff(x, validate=False))


def _on(mask: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor | None:
    """A checked mask on the device of ``x``."""
    return None if mask is None else mask.to(x.device)


# --- stacks -----------------------------------------------------------------------------------

def through_layers(layers: Any, x: torch.Tensor, *args: Any, caches: Any = None,
                   need_weights: bool = False, **kwargs: Any
                   ) -> tuple[list[torch.Tensor], list[Any]]:
    """``x`` through each layer in turn: the stacks, the language model and BERT share this
    loop. The caller checked ``x`` and the masks (on the device of ``x``), so each layer is
    called with ``validate=False``; its hooks fire as usual.

    Args:
        layers: the layers (an ``nn.ModuleList``).
        x: the first layer's input; ``*args`` and ``**kwargs`` go to every layer.
        caches: one :class:`LayerCache` per layer (passed as ``cache``), or None.
        need_weights: collect each layer's attention weights.

    Returns:
        ``(outputs, maps)``: each layer's output (the last is the stack's), and each
        layer's attention weights (a tensor, or a decoder layer's ``(self, cross)`` pair),
        or an empty list without ``need_weights``.
    """
    outputs, maps = [], []
    for i, layer in enumerate(layers):
        if caches is not None:
            kwargs["cache"] = caches[i]
        out = layer(x, *args, return_attention=need_weights, validate=False, **kwargs)
        if need_weights:
            x, *weights = out  # (x, weights) or (x, self_weights, cross_weights)
            maps.append(weights[0] if len(weights) == 1 else tuple(weights))
        else:
            x = out
        outputs.append(x)
    return outputs, maps


class _Stack(nn.Module):
    """``num_layers`` copies of one kind of layer, with an optional final LayerNorm."""

    layer_class: type[nn.Module]

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        num_layers: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        bias: bool = True,
        final_norm: bool | None = None,
    ) -> None:
        super().__init__()
        check_positive_int("num_layers", num_layers)
        _check_layer_options(activation, norm_first, eps, bias)
        if final_norm is not None:
            check_flag("final_norm", final_norm)
        self.layers = nn.ModuleList(
            self.layer_class(d_model, num_heads, d_ff, dropout=dropout, activation=activation,
                             norm_first=norm_first, eps=eps, bias=bias)
            for _ in range(num_layers)
        )
        final_norm = norm_first if final_norm is None else final_norm
        self.norm = nn.LayerNorm(d_model, eps=eps, bias=bias) if final_norm else None

    def _end(self, outputs: list[torch.Tensor]) -> torch.Tensor:
        """The last layer's output, through the final LayerNorm if there is one."""
        return outputs[-1] if self.norm is None else self.norm(outputs[-1])


class Encoder(_Stack):
    """A stack of ``num_layers`` :class:`EncoderLayer` s.

    Args:
        d_model, num_heads, d_ff: as for :class:`EncoderLayer`.
        num_layers: N, the number of layers.
        final_norm: a LayerNorm after the last layer; defaults to ``norm_first``, since a
            pre-norm stack otherwise leaves its output unnormalised.
        **layer options: ``dropout``, ``activation``, ``norm_first``, ``eps``, ``bias``.
    """

    layer_class = EncoderLayer

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        num_layers: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        bias: bool = True,
        final_norm: bool | None = None,
    ) -> None:
        # Its own signature, so that a missing size is reported as Encoder's, by name.
        super().__init__(d_model, num_heads, d_ff, num_layers, dropout=dropout,
                         activation=activation, norm_first=norm_first, eps=eps, bias=bias,
                         final_norm=final_norm)

    def forward(
        self,
        x: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        return_attention: bool = False,
        cache: KVCache | None = None,
        is_causal: bool = False,
        validate: bool = True,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        """``(B, L, d_model) -> (B, L, d_model)``; with ``return_attention`` also a list of
        one ``(B, H, L, L)`` weight tensor per layer.

        With a ``cache`` (a :class:`KVCache` with one entry per layer), ``x`` holds the new
        positions only, their keys and values are added to the cache, and ``mask``
        broadcasts to ``(B, H, L, L_past + L)``: a decoder-only language model generates
        this way, one position at a time. ``is_causal=True`` applies the causal mask
        (combined with ``mask``) without building it where the fused kernel can.
        ``validate=False`` skips the checks (the models, which checked their own inputs;
        ``mask`` is then on the device of ``x``).
        """
        if check_flag("validate", validate):
            _check_encoder_inputs(self, self.layers, x, mask, return_attention, cache,
                                  is_causal)
            mask = _on(mask, x)
        outputs, maps = through_layers(self.layers, x, mask=mask, need_weights=return_attention,
                                       is_causal=is_causal,
                                       caches=None if cache is None else cache.layers)
        x = self._end(outputs)
        return (x, maps) if return_attention else x


class DecoderAttention(NamedTuple):
    """Per-layer weights of a decoder stack: ``(B, H, L_t, L_t)`` and ``(B, H, L_t, L_s)``."""

    self_attention: list[torch.Tensor]
    cross_attention: list[torch.Tensor]


class Decoder(_Stack):
    """A stack of ``num_layers`` :class:`DecoderLayer` s; arguments as for :class:`Encoder`."""

    layer_class = DecoderLayer

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        num_layers: int,
        *,
        dropout: float = 0.1,
        activation: str = "relu",
        norm_first: bool = False,
        eps: float = 1e-5,
        bias: bool = True,
        final_norm: bool | None = None,
    ) -> None:
        # Its own signature, so that a missing size is reported as Decoder's, by name.
        super().__init__(d_model, num_heads, d_ff, num_layers, dropout=dropout,
                         activation=activation, norm_first=norm_first, eps=eps, bias=bias,
                         final_norm=final_norm)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        *,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        return_attention: bool = False,
        validate: bool = True,
    ) -> torch.Tensor | tuple[torch.Tensor, DecoderAttention]:
        """``(B, L_t, d_model), (B, L_s, d_model) -> (B, L_t, d_model)``; with
        ``return_attention`` also a :class:`DecoderAttention`. ``validate=False`` skips the
        checks (the Transformer's decode; the masks are then on the device of ``x``)."""
        if check_flag("validate", validate):
            _check_decoder_inputs(self, self.layers[0].self_attn, x, memory, self_mask,
                                  memory_mask, return_attention)
            self_mask, memory_mask = _on(self_mask, x), _on(memory_mask, x)
        outputs, maps = through_layers(self.layers, x, memory, self_mask=self_mask,
                                       memory_mask=memory_mask, need_weights=return_attention)
        x = self._end(outputs)
        if not return_attention:
            return x
        return x, DecoderAttention([m[0] for m in maps], [m[1] for m in maps])


# --- saved weights ------------------------------------------------------------------------------

def _renamed_keys(renames: dict[str, str]) -> Callable[..., None]:
    """A ``load_state_dict`` pre-hook that reads weights saved under older names: each
    key starting with ``prefix + old`` is moved to ``prefix + new`` (a converter for saved
    weights, applied by ``load_state_dict`` itself)."""

    def hook(state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        for key in list(state_dict):
            for old, new in renames.items():
                if key.startswith(prefix + old):
                    state_dict[prefix + new + key[len(prefix + old):]] = state_dict.pop(key)
                    break

    return hook
