"""Generation's cached step, written out: one new position through a language model.

With a KV cache, each step of :meth:`LanguageModel.generate` pushes one position through
the model: a few dozen small operations, about 0.25 MFLOP for chapter 10's model, which
is microseconds of arithmetic. Through the modules, it costs far more than that: every
call checks its arguments, every ``nn.Module`` call runs its hook machinery, and a linear
layer on ``(B, 1, d)`` inputs dispatches four operations. :class:`WrittenOut` runs the same
computation on ``(B, d_model)`` rows with the modules' own tensors, and each layer's query,
key and value projections in one matrix product: 43 PyTorch operations per token of chapter
10's model instead of 115, sampling included, and the same numbers, bit for bit
(``tests/test_decoding.py``).

It is used only where it is exactly the model: no forward hook or pre-hook anywhere (a
hook would not be called), and the stock layers (a replaced sub-module is not seen
here). Otherwise :meth:`WrittenOut.of` returns None and generation goes through the
modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from ._numerics import LayerNorm
from .cache import KVCache
from .layers import ACTIVATIONS, Encoder, EncoderLayer, FeedForward, MultiHeadAttention

__all__ = ["WrittenOut", "single_thread", "without_onednn"]


class _Affine(NamedTuple):
    """A linear layer for ``(B, in)`` rows: ``bias + x @ weight.T`` in one operation."""

    weight_t: torch.Tensor  # (in, out): nn.Linear's (out, in) weight, transposed
    bias: torch.Tensor | None

    @classmethod
    def of(cls, *linears: nn.Linear) -> _Affine:
        """One ``nn.Linear`` (a view of its parameters), or several side by side, their
        outputs concatenated (one matrix product instead of several: the query, key and
        value projections; their weights are copied once per
        :meth:`~transformer_course.LanguageModel.generate` call)."""
        if len(linears) == 1:
            return cls(linears[0].weight.t(), linears[0].bias)
        weight = torch.cat([linear.weight for linear in linears])  # (sum of outs, in)
        if all(linear.bias is None for linear in linears):
            return cls(weight.t(), None)
        bias = torch.cat([linear.weight.new_zeros(linear.out_features)  # + 0 changes nothing
                          if linear.bias is None else linear.bias for linear in linears])
        return cls(weight.t(), bias)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.bias is None:
            return x @ self.weight_t  # (B, out)
        return torch.addmm(self.bias, x, self.weight_t)  # (B, out), as F.linear computes it


class _Norm(NamedTuple):
    """A LayerNorm as a function of ``(B, d)`` rows (its tensors, not the module: reading
    a module's attributes costs a Python lookup each)."""

    shape: tuple[int, ...]
    weight: torch.Tensor | None
    bias: torch.Tensor | None
    eps: float

    @classmethod
    def of(cls, norm: nn.LayerNorm) -> _Norm:
        return cls(tuple(norm.normalized_shape), norm.weight, norm.bias, norm.eps)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.layer_norm(x, self.shape, self.weight, self.bias, self.eps)


class _Block(NamedTuple):
    """The tensors of one :class:`EncoderLayer`, ready for ``(B, d_model)`` rows."""

    norm_first: bool
    heads: tuple[int, int, int, int]  # the view of the projections: (3, H, 1, d_head)
    norm1: _Norm
    qkv: _Affine  # the query, key and value projections side by side
    o: _Affine
    norm2: _Norm
    ff1: _Affine
    activation: Callable[[torch.Tensor], torch.Tensor]
    ff2: _Affine

    @classmethod
    def of(cls, layer: EncoderLayer) -> _Block:
        attention = layer.self_attn
        return cls(
            norm_first=layer.norm_first,
            heads=(3, attention.num_heads, 1, attention.d_head),
            norm1=_Norm.of(layer.norm1),
            qkv=_Affine.of(attention.W_q, attention.W_k, attention.W_v),
            o=_Affine.of(attention.W_o),
            norm2=_Norm.of(layer.norm2),
            ff1=_Affine.of(layer.ff.linear1),
            activation=ACTIVATIONS[layer.ff.activation],
            ff2=_Affine.of(layer.ff.linear2),
        )


def _stock(layer: nn.Module) -> bool:
    """Whether ``layer`` is an :class:`EncoderLayer` built of the package's own parts."""
    return (type(layer) is EncoderLayer and type(layer.self_attn) is MultiHeadAttention
            and type(layer.ff) is FeedForward
            and all(type(n) in (nn.LayerNorm, LayerNorm) for n in (layer.norm1, layer.norm2)))


def _hooked(model: nn.Module) -> bool:
    """Whether a forward hook or pre-hook would see the modules' calls."""
    from torch.nn.modules import module as torch_module

    if any(getattr(torch_module, name, None) for name in (
            "_global_forward_hooks", "_global_forward_pre_hooks")):
        return True
    return any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


class WrittenOut(NamedTuple):
    """One new position through a :class:`~transformer_course.LanguageModel`, written out.

    Build it with :meth:`of` once per :meth:`~transformer_course.LanguageModel.generate`
    call (it holds the parameters, and one copy of each layer's query, key and value
    weights side by side), then call it once per token.
    """

    token_table: torch.Tensor  # (V, d_model)
    position_table: torch.Tensor  # (max_len, d_model)
    blocks: tuple[_Block, ...]
    final_norm: _Norm | None
    head: _Affine

    @classmethod
    def of(cls, model: nn.Module) -> WrittenOut | None:
        """The written-out step of ``model`` (a ``LanguageModel``) in eval mode, or None
        where it would not be exactly the model (hooks, replaced modules, training mode)."""
        blocks = model.blocks
        if (model.training or _hooked(model) or type(blocks) is not Encoder
                or type(model.embed) is not nn.Embedding
                or type(model.position) is not nn.Embedding
                or type(model.head) is not nn.Linear
                or not all(_stock(layer) for layer in blocks.layers)):
            return None
        return cls(
            token_table=model.embed.weight,
            position_table=model.position.weight,
            blocks=tuple(_Block.of(layer) for layer in blocks.layers),
            final_norm=None if blocks.norm is None else _Norm.of(blocks.norm),
            head=_Affine.of(model.head),
        )

    def __call__(self, token: torch.Tensor, cache: KVCache, keep: torch.Tensor | None = None
                 ) -> torch.Tensor:
        """The logits ``(B, V)`` that follow ``token`` ``(B,)``, the position after the
        ``cache.length`` cached ones; its keys and values are added to ``cache``.

        ``keep`` ``(B, L_past + 1)``: where the real tokens are (padding is never a key,
        and a position counts the real tokens before it), as ``forward``'s
        ``attention_mask``; None when every token is real."""
        batch = token.shape[0]
        if keep is None:
            position = self.position_table[cache.length]  # (d_model,)
            mask = None  # the new position sees every key
        else:
            position = self.position_table[keep.sum(dim=1) - 1]  # (B, d_model)
            mask = keep[:, None, None, :]  # (B, 1, 1, L_past + 1): never a padding key
        x = self.token_table[token] + position  # (B, d_model)
        for block, layer_cache in zip(self.blocks, cache.layers, strict=True):
            h = block.norm1(x) if block.norm_first else x  # (B, d_model)
            # (B, 3 d_model) -> 3 x (B, H, 1, d_head): one query, key and value per head
            q, k, v = block.qkv(h).view(batch, *block.heads).unbind(1)
            k, v = layer_cache.append(k, v)  # (B, H, L_past + 1, d_head) each
            layer_cache.store(k, v)
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, 1, d_head)
            attended = block.o(heads.reshape(batch, -1))  # (B, d_model): heads concatenated
            if block.norm_first:
                x = x + attended
                x = x + block.ff2(block.activation(block.ff1(block.norm2(x))))
            else:
                x = block.norm1(x + attended)
                x = block.norm2(x + block.ff2(block.activation(block.ff1(x))))
        if self.final_norm is not None:  # pre-norm stacks end with a LayerNorm
            x = self.final_norm(x)
        return self.head(x)  # (B, V)


@contextmanager
def single_thread(wanted: bool = True) -> Iterator[None]:
    """One torch thread inside (the caller's count back afterwards) when ``wanted``.

    A step of one new position is a few dozen operations on a few thousand numbers: waking
    a second thread for each of them costs more than it saves (256 cached steps of chapter
    10's model took 534 ms on 2 threads against 295 ms on 1, on 2 CPU cores).
    """
    threads = torch.get_num_threads()
    if not wanted or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextmanager
def without_onednn(wanted: bool = True) -> Iterator[None]:
    """PyTorch's own CPU kernels inside, not oneDNN's (the caller's setting back
    afterwards), when ``wanted``.

    PyTorch hands some float32 CPU operations to oneDNN, which prepares each call for large
    tensors. On generation's rows that preparation is most of the cost: the exact GELU of a
    ``(1, 256)`` row took 10.8 µs through oneDNN and 2.2 µs through PyTorch's own kernel (the
    same function, which may round differently in the last bit). :meth:`generate` runs its
    cached and its uncached steps alike inside, so that both write the same tokens.
    """
    enabled = torch.backends.mkldnn.enabled
    if not wanted or not enabled:
        yield
        return
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = enabled
