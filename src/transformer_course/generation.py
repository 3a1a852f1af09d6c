"""Choosing the next token: greedy decoding, sampling with a temperature, top-k, beam search.

Sampling with temperature ``T`` is chapter 2's soft argmax again, now over the vocabulary:
``p = softmax(logits / T) = soft_argmax(logits, beta=1 / T)``. ``T -> 0`` (``beta -> inf``) is
greedy decoding, the hard argmax; ``T = 1`` samples from the model's own distribution; a
large ``T`` flattens it towards the uniform distribution.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ._checks import check_positive_int, check_real, check_tensor, shape_of
from .functional import hard_argmax, soft_argmax

if TYPE_CHECKING:
    from .models import Transformer

__all__ = [
    "beam_search",
    "log_probability",
    "next_token_probabilities",
    "sample_next",
    "top_k_logits",
]


def _check_logits(logits: object) -> torch.Tensor:
    check_tensor("logits", logits, min_dim=1, floating=True)
    if not logits.shape[-1]:
        raise ValueError(f"logits must have at least one entry per row, got {shape_of(logits)}")
    return logits


def top_k_logits(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the ``k`` largest logits of each row; the others become ``-inf`` (probability 0).

    Args:
        logits: ``(..., V)`` scores over the vocabulary.
        k: how many candidates stay, ``1 <= k``; a ``k`` of ``V`` or more keeps them all.

    Returns:
        A tensor of the shape of ``logits``. Ties with the k-th largest logit are kept.
    """
    _check_logits(logits)
    k = check_positive_int("k", k)
    if k >= logits.shape[-1]:
        return logits
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def next_token_probabilities(logits: torch.Tensor, *, temperature: float = 1.0,
                             top_k: int | None = None) -> torch.Tensor:
    """The distribution the next token is drawn from.

    Args:
        logits: ``(..., V)`` scores of the next token.
        temperature: ``T >= 0``; the probabilities are ``soft_argmax(logits, beta=1 / T)``,
            and ``T = 0`` is the one-hot argmax (greedy decoding).
        top_k: keep only the ``k`` most likely tokens before normalising.

    Returns:
        ``(..., V)`` probabilities; each row sums to 1.
    """
    _check_logits(logits)
    temperature = check_real("temperature", temperature, low=0.0)
    if top_k is not None:
        logits = top_k_logits(logits, top_k)
    if temperature == 0.0:
        return hard_argmax(logits)
    return soft_argmax(logits, beta=1.0 / temperature)


def sample_next(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw the next token of every row.

    The draw inverts the cumulative distribution with one uniform number per row, so that
    two runs with equally seeded generators and (nearly) equal logits draw the same tokens.

    Args:
        logits: ``(B, V)`` scores of the next token.
        temperature, top_k: see :func:`next_token_probabilities`.
        generator: the random stream (on the device of ``logits``); None uses torch's.

    Returns:
        ``(B,)`` token ids (``long``).
    """
    check_tensor("logits", logits, ndim=2, floating=True)
    probs = next_token_probabilities(logits, temperature=temperature, top_k=top_k)
    if temperature == 0.0:
        return probs.argmax(dim=-1)
    uniform = torch.rand(probs.shape[0], 1, generator=generator, device=probs.device,
                         dtype=probs.dtype)  # (B, 1)
    cumulative = probs.cumsum(dim=-1)  # (B, V)
    cumulative[:, -1] = 1.0  # rounding may leave the total a hair below 1
    ids = torch.searchsorted(cumulative, uniform).squeeze(-1)  # first index with cdf > u
    return ids.clamp(max=probs.shape[-1] - 1)


@torch.no_grad()
def beam_search(model: Transformer, src: torch.Tensor, *, bos_id: int, eos_id: int,
                beam_size: int = 4, max_len: int = 32, length_penalty: float = 0.0
                ) -> torch.Tensor:
    """Beam search with an encoder-decoder :class:`~transformer_course.Transformer`.

    Greedy decoding keeps the single most likely prefix; beam search keeps the
    ``beam_size`` prefixes with the highest total log-probability at every step, and
    returns the best finished one. ``beam_size = 1`` is greedy decoding.

    Args:
        model: the trained model, in eval mode.
        src: ``(B, L_s)`` source ids.
        bos_id, eos_id: the ids that start and end a target.
        beam_size: ``K``, the prefixes kept per source.
        max_len: the most tokens generated after ``bos_id``.
        length_penalty: ``alpha``; a finished sequence of ``n`` tokens is ranked by
            ``log p / ((5 + n) / 6) ** alpha`` (Wu et al., 2016); 0 ranks by ``log p``.

    Returns:
        ``(B, T)`` ids without the leading ``bos_id``, padded with the model's ``pad_id``
        after ``eos_id``, as :meth:`Transformer.greedy_decode` returns them.
    """
    beam = check_positive_int("beam_size", beam_size)
    max_len = check_positive_int("max_len", max_len)
    alpha = check_real("length_penalty", length_penalty, low=0.0)
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)  # (B, L_s, d)
    batch, vocab, pad = src.shape[0], model.generator.out_features, model.pad_id
    memory = memory.repeat_interleave(beam, dim=0)  # (B*K, L_s, d): K copies per source
    src_mask = src_mask.repeat_interleave(beam, dim=0)
    seqs = torch.full((batch * beam, 1), bos_id, dtype=torch.long, device=src.device)
    scores = torch.full((batch, beam), float("-inf"), device=src.device)
    scores[:, 0] = 0.0  # one live prefix at first, so the K beams do not start equal
    done = torch.zeros(batch * beam, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(seqs, memory, src_mask=src_mask)[:, -1]  # (B*K, V)
        logp = torch.log_softmax(logits.float(), dim=-1)
        # A finished prefix only grows by padding, at no cost.
        logp[done] = float("-inf")
        logp[done, pad] = 0.0
        total = (scores.reshape(-1, 1) + logp).view(batch, beam * vocab)  # (B, K*V)
        scores, flat = total.topk(beam, dim=-1)  # (B, K)
        parent = flat // vocab + torch.arange(batch, device=src.device)[:, None] * beam
        token = flat % vocab  # (B, K)
        seqs = torch.cat([seqs[parent.reshape(-1)], token.reshape(-1, 1)], dim=1)
        done = done[parent.reshape(-1)] | (token.reshape(-1) == eos_id)
        if bool(done.all()):
            break
    out = seqs[:, 1:].view(batch, beam, -1)  # (B, K, T)
    length = ((out != pad).sum(-1)).clamp(min=1).to(scores.dtype)  # tokens up to <eos>
    ranked = scores / ((5.0 + length) / 6.0) ** alpha if alpha else scores
    best = out[torch.arange(batch, device=src.device), ranked.argmax(dim=-1)]  # (B, T)
    width = int((best != pad).sum(-1).max().clamp(min=1))  # drop columns of padding only
    return best[:, :width]


def log_probability(model: Transformer, src: torch.Tensor, out: torch.Tensor, *,
                    bos_id: int, eos_id: int) -> torch.Tensor:
    """The total log-probability the model gives each decoded sequence (up to its
    ``eos_id``): what greedy decoding and beam search try to maximise.

    Args:
        model: the model.
        src: ``(B, L_s)`` source ids.
        out: ``(B, T)`` decoded ids without ``bos_id`` (as the decoders return them).

    Returns:
        ``(B,)`` log-probabilities (natural log).
    """
    tgt = torch.cat([torch.full_like(out[:, :1], bos_id), out], dim=1)  # (B, T + 1)
    logits = model(src, tgt[:, :-1])  # (B, T, V)
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, out[..., None]).squeeze(-1)
    ended = (out == eos_id).long().cumsum(-1)  # 1 from the first <eos> on
    keep = (ended == 0) | ((ended == 1) & (out == eos_id))  # up to and with the first <eos>
    return (logp * keep).sum(-1)

