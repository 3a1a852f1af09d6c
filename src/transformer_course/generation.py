"""Choosing the next token: greedy decoding, sampling with a temperature, top-k, top-p, beam search.

Sampling with temperature ``T`` is chapter 2's soft argmax again, now over the vocabulary:
``p = softmax(logits / T) = soft_argmax(logits, beta=1 / T)``. ``T -> 0`` (``beta -> inf``) is
greedy decoding, the hard argmax; ``T = 1`` samples from the model's own distribution; a
large ``T`` flattens it towards the uniform distribution. Top-k keeps the ``k`` most likely
tokens, top-p (nucleus sampling) the fewest most likely tokens whose probabilities add up
to at least ``p``.

Greedy decoding and beam search work with any encoder-decoder that has the methods of
:class:`EncoderDecoder` (:class:`~transformer_course.Transformer` has them): this module
imports no model, and the models import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from ._checks import check_ids, check_int, check_positive_int, check_real, check_tensor, shape_of
from .functional import _hard_argmax, _soft_argmax

__all__ = [
    "EncoderDecoder",
    "beam_search",
    "check_sampling",
    "greedy_decode",
    "log_probability",
    "next_token_probabilities",
    "sample_next",
    "top_k_logits",
    "top_p_logits",
]


class EncoderDecoder(Protocol):
    """What :func:`greedy_decode`, :func:`beam_search` and :func:`log_probability` need from
    a model: :class:`~transformer_course.Transformer` has it, and so can a model of your own.

    Attributes:
        pad_id: the id written after a sequence's end.

    A model that also has ``tgt_vocab_size`` (how many target ids the decoder scores) gets
    ``bos_id`` and ``eos_id`` checked against it before anything runs.
    """

    pad_id: int

    def source_mask(self, src: torch.Tensor) -> torch.Tensor:
        """``(B, L_s)`` ids -> a boolean mask of the source keys, True = may attend."""
        ...

    def encode(self, src: torch.Tensor, *, src_mask: torch.Tensor | None = None
               ) -> torch.Tensor:
        """``(B, L_s)`` ids -> memory ``(B, L_s, d_model)``."""
        ...

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, *,
               src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, L_t)`` ids and the memory -> logits ``(B, L_t, tgt_vocab_size)``."""
        ...


def _check_model(model: object) -> EncoderDecoder:
    missing = [name for name in ("source_mask", "encode", "decode")
               if not callable(getattr(model, name, None))]
    if not hasattr(model, "pad_id"):
        missing.append("pad_id")
    if missing:
        raise TypeError(
            f"model must be an encoder-decoder such as tc.Transformer, with source_mask, "
            f"encode, decode and pad_id; {type(model).__name__} lacks {', '.join(missing)}"
        )
    return model  # type: ignore[return-value]


def _check_target_ids(model: EncoderDecoder, bos_id: object, eos_id: object) -> None:
    """``bos_id`` (and ``eos_id`` unless None) must be ids of the target vocabulary."""
    size = getattr(model, "tgt_vocab_size", None)
    for name, value in (("bos_id", bos_id), ("eos_id", eos_id)):
        if value is None and name == "eos_id":
            continue
        value = check_int(name, value)
        if value < 0 or (size is not None and value >= size):
            shown = f"[0, {size})" if size is not None else ">= 0"
            raise ValueError(f"{name} must be an id in {shown}, got {value}")


def _check_logits(logits: object) -> torch.Tensor:
    check_tensor("logits", logits, min_dim=1, floating=True)
    if not logits.shape[-1]:
        raise ValueError(f"logits must have at least one entry per row, got {shape_of(logits)}")
    return logits


def _check_logit_values(logits: torch.Tensor) -> None:
    """No NaN nor +inf, and in every row a logit above -inf (one read on the host)."""
    if bool((torch.isnan(logits) | (logits == float("inf"))).any()):
        raise ValueError(f"logits must hold no NaN nor +inf, got {shape_of(logits)} logits "
                         "with some")
    if bool((logits == float("-inf")).all(dim=-1).any()):
        raise ValueError("every row of logits needs a finite logit: a row of -inf leaves no "
                         "token to draw")


# --- sampling --------------------------------------------------------------------------------

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
    return _top_k(logits, k)


def _top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    if k >= logits.shape[-1]:
        return logits
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def _nucleus(probs: torch.Tensor, p: float) -> torch.Tensor:
    """``(..., V)`` True for the tokens of the nucleus: the fewest most likely tokens whose
    probabilities add up to at least ``p`` (and every token tied with the least likely one)."""
    ranked = probs.sort(dim=-1, descending=True).values  # (..., V)
    before = ranked.cumsum(dim=-1) - ranked  # the mass of the tokens ranked above each one
    count = (before < p).sum(dim=-1, keepdim=True).clamp(min=1)  # (..., 1): tokens kept
    smallest = ranked.gather(-1, count - 1)  # (..., 1): the least likely token kept
    return probs >= smallest


def top_p_logits(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus (top-p) filtering: keep the fewest most likely tokens whose probabilities
    (``softmax(logits)``) add up to at least ``p``; the others become ``-inf``.

    Args:
        logits: ``(..., V)`` scores over the vocabulary.
        p: the mass to keep, ``0 < p <= 1``; the most likely token always stays, and
            ``p = 1`` keeps every token (the sum of float32 probabilities reaches 1 before
            the least likely ones, which a cut at 1 would drop).

    Returns:
        A tensor of the shape of ``logits``. Ties with the least likely token kept are kept.
    """
    _check_logits(logits)
    p = check_real("p", p, low=0.0, high=1.0, low_open=True)
    if p == 1.0:
        return logits.clone()  # the whole distribution: nothing to cut
    keep = _nucleus(torch.softmax(logits.float(), dim=-1), p)
    return logits.masked_fill(~keep, float("-inf"))


def check_sampling(temperature: object = 1.0, top_k: object = None, top_p: object = None,
                   dtype: torch.dtype = torch.float32
                   ) -> tuple[float, int | None, float | None]:
    """Check the sampling options once (a generator then samples many times without
    checking them again); return them as ``(float, int or None, float or None)``.

    Args:
        dtype: the dtype of the logits, which must hold ``1 / temperature``.

    Raises:
        TypeError, ValueError: naming ``temperature`` (0, or a number whose inverse
            ``dtype`` holds), ``top_k`` (an int >= 1) or ``top_p`` (a number in (0, 1]).
    """
    temperature = check_real("temperature", temperature, low=0.0)
    if 0.0 < temperature and 1.0 / temperature > torch.finfo(dtype).max:
        raise ValueError(
            f"temperature={temperature:g} is so small that 1 / temperature overflows {dtype}: "
            "use temperature=0 for greedy decoding"
        )
    if top_k is not None:
        top_k = check_positive_int("top_k", top_k)
    if top_p is not None:
        top_p = check_real("top_p", top_p, low=0.0, high=1.0, low_open=True)
    return temperature, top_k, top_p


def _probabilities(logits: torch.Tensor, temperature: float, top_k: int | None,
                   top_p: float | None) -> torch.Tensor:
    """:func:`next_token_probabilities` without the checks."""
    if top_k is not None:
        logits = _top_k(logits, top_k)
    if temperature == 0.0:
        return _hard_argmax(logits)  # the argmax is in every top-k and every nucleus
    if temperature == 1.0:  # soft_argmax(logits): softmax takes the largest logit off
        probs = torch.softmax(logits, dim=-1)  # itself, the same numbers in one operation
    else:
        probs = _soft_argmax(logits, 1.0 / temperature, -1)
    if top_p is not None and top_p < 1.0:
        probs = probs * _nucleus(probs, top_p)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


def next_token_probabilities(logits: torch.Tensor, *, temperature: float = 1.0,
                             top_k: int | None = None, top_p: float | None = None
                             ) -> torch.Tensor:
    """The distribution the next token is drawn from.

    The steps, in this order: keep the ``top_k`` largest logits, turn the logits into
    probabilities with ``soft_argmax(logits, beta=1 / temperature)``, keep the nucleus of
    mass ``top_p`` of that distribution and normalise again.

    Args:
        logits: ``(..., V)`` scores of the next token.
        temperature: ``T >= 0``; ``T = 0`` is the one-hot argmax (greedy decoding).
        top_k: keep only the ``k`` most likely tokens (and any tied with the ``k``-th).
        top_p: keep only the fewest most likely tokens whose probabilities add up to at
            least ``top_p`` (``0 < top_p <= 1``), at this temperature.

    Returns:
        ``(..., V)`` probabilities; each row sums to 1.

    Raises:
        ValueError: for NaN or ``+inf`` logits, a row of ``-inf``, or a ``temperature``
            so small that the logits' dtype cannot hold ``1 / temperature``.
    """
    _check_logit_values(_check_logits(logits))
    return _probabilities(logits, *check_sampling(temperature, top_k, top_p, logits.dtype))


def _draw(logits: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None,
          generator: torch.Generator | None) -> torch.Tensor:
    """:func:`sample_next` without the checks: ``(B, V)`` logits -> ``(B,)`` ids."""
    probs = _probabilities(logits, temperature, top_k, top_p)
    if temperature == 0.0:
        return probs.argmax(dim=-1)
    uniform = torch.rand(probs.shape[0], 1, generator=generator, device=probs.device,
                         dtype=probs.dtype)  # (B, 1)
    cumulative = probs.cumsum(dim=-1)  # (B, V)
    cumulative[:, -1].fill_(1.0)  # rounding may leave the total a hair below 1
    ids = torch.searchsorted(cumulative, uniform).squeeze(-1)  # first index with cdf > u
    return ids.clamp(max=probs.shape[-1] - 1)


def sample_next(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None, generator: torch.Generator | None = None
                ) -> torch.Tensor:
    """Draw the next token of every row.

    The draw inverts the cumulative distribution with one uniform number per row, so that
    two runs with equally seeded generators and (nearly) equal logits draw the same tokens:
    a language model writes the same text with and without its KV cache.

    Args:
        logits: ``(B, V)`` scores of the next token.
        temperature, top_k, top_p: see :func:`next_token_probabilities`.
        generator: the random stream (on the device of ``logits``); None uses torch's.

    Returns:
        ``(B,)`` token ids (``long``).

    Raises:
        ValueError: as :func:`next_token_probabilities`.
    """
    check_tensor("logits", logits, ndim=2, floating=True)
    _check_logit_values(_check_logits(logits))
    options = check_sampling(temperature, top_k, top_p, logits.dtype)
    _check_generator(generator, logits.device, "logits")
    return _draw(logits, *options, generator)


def _finish(token: torch.Tensor, done: torch.Tensor, eos_id: int | None, fill: int | None
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """The end of sequence, shared by every decoding loop: a row that has written
    ``eos_id`` is done, and a done row writes ``fill`` from then on. ``(B,)`` each."""
    if eos_id is None:
        return token, done
    token = token.masked_fill(done, fill)
    return token, done | (token == eos_id)


def _decoder(model: EncoderDecoder) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor],
                                                torch.Tensor]:
    """``(tgt, memory, src_mask) -> logits``: the model's ``decode``, or, for the course's
    :class:`~transformer_course.Transformer`, the same without its checks (a decoding
    loop checks its arguments once, before the loop)."""
    unchecked = getattr(model, "_decode", None)
    if unchecked is not None and hasattr(model, "lm_head"):
        return lambda tgt, memory, src_mask: unchecked(tgt, memory, src_mask, None, False)[0]
    return lambda tgt, memory, src_mask: model.decode(tgt, memory, src_mask=src_mask)


def _check_generator(generator: object, device: torch.device, where: str) -> None:
    """Check a ``torch.Generator`` (or None) against the device of ``where``."""
    if generator is None:
        return
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator or None, got "
                        f"{type(generator).__name__}")
    if generator.device.type != device.type:
        raise ValueError(
            f"generator is on device {generator.device} but {where} is on {device}: create "
            f"it with torch.Generator(device={str(device)!r})"
        )


# --- encoder-decoder decoding -----------------------------------------------------------------

@torch.no_grad()
def greedy_decode(model: EncoderDecoder, src: torch.Tensor, *, bos_id: int,
                  eos_id: int | None = None, max_len: int = 32) -> torch.Tensor:
    """Generate one token at a time, always taking the most likely next token.

    The source is encoded once; at step t the decoder reads everything produced so far and
    its last position predicts token t + 1.

    Args:
        model: an encoder-decoder (:class:`EncoderDecoder`), in eval mode.
        src: ``(B, L_s)`` source ids.
        bos_id: the id that starts every target.
        eos_id: the id that ends a target: a sequence that has produced it is padded with
            ``model.pad_id`` afterwards, and decoding stops when all have. ``None``: no end
            symbol (a copy task, say), exactly ``max_len`` tokens.
        max_len: the most tokens generated after ``bos_id``.

    Returns:
        ``(B, T)`` generated ids without the leading ``bos_id``, ``T <= max_len``
        (``T = max_len`` when ``eos_id`` is None).
    """
    model = _check_model(model)
    max_len = check_positive_int("max_len", max_len)
    _check_target_ids(model, bos_id, eos_id)
    src = check_ids("src", src)
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)  # (B, L_s, d_model)
    decode = _decoder(model)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = decode(out, memory, src_mask)  # (B, t, V)
        nxt, done = _finish(logits[:, -1].argmax(dim=-1), done, eos_id, model.pad_id)  # (B,)
        out = torch.cat([out, nxt[:, None]], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return out[:, 1:]


@torch.no_grad()
def beam_search(model: EncoderDecoder, src: torch.Tensor, *, bos_id: int,
                eos_id: int | None = None, beam_size: int = 4, max_len: int = 32,
                length_penalty: float = 0.0) -> torch.Tensor:
    """Beam search with an encoder-decoder such as :class:`~transformer_course.Transformer`.

    Greedy decoding keeps the single most likely prefix; beam search keeps the
    ``beam_size`` prefixes with the highest total log-probability at every step, and
    returns the best finished one. ``beam_size = 1`` is greedy decoding.

    Args:
        model: an encoder-decoder (:class:`EncoderDecoder`), in eval mode.
        src: ``(B, L_s)`` source ids.
        bos_id: the id that starts a target.
        eos_id: the id that ends a target; ``None``: no end symbol, every prefix grows to
            exactly ``max_len`` tokens.
        beam_size: ``K``, the prefixes kept per source.
        max_len: the most tokens generated after ``bos_id``.
        length_penalty: ``alpha``; a finished sequence of ``n`` tokens is ranked by
            ``log p / ((5 + n) / 6) ** alpha`` (Wu et al., 2016); 0 ranks by ``log p``.

    Returns:
        ``(B, T)`` ids without the leading ``bos_id``, padded with the model's ``pad_id``
        after ``eos_id``, as :func:`greedy_decode` returns them.
    """
    model = _check_model(model)
    beam = check_positive_int("beam_size", beam_size)
    max_len = check_positive_int("max_len", max_len)
    alpha = check_real("length_penalty", length_penalty, low=0.0)
    _check_target_ids(model, bos_id, eos_id)
    src = check_ids("src", src)
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)  # (B, L_s, d)
    batch, pad, dev = src.shape[0], model.pad_id, src.device
    memory = memory.repeat_interleave(beam, dim=0)  # (B*K, L_s, d): K copies per source
    src_mask = src_mask.repeat_interleave(beam, dim=0)
    seqs = torch.full((batch * beam, 1), bos_id, dtype=torch.long, device=dev)
    scores = torch.full((batch, beam), float("-inf"), device=dev)
    scores[:, 0] = 0.0  # one live prefix at first, so the K beams do not start equal
    done = torch.zeros(batch * beam, dtype=torch.bool, device=dev)
    length = torch.zeros(batch * beam, dtype=torch.long, device=dev)  # tokens up to <eos>
    offset = torch.arange(batch, device=dev)[:, None] * beam  # (B, 1): first beam of a source
    decode = _decoder(model)
    for _ in range(max_len):
        logits = decode(seqs, memory, src_mask)[:, -1]  # (B*K, V)
        vocab = logits.shape[-1]
        logp = torch.log_softmax(logits.float(), dim=-1)
        if eos_id is not None:  # a finished prefix only grows by padding, at no cost
            logp[done] = float("-inf")
            logp[done, pad] = 0.0
        total = (scores.reshape(-1, 1) + logp).view(batch, beam * vocab)  # (B, K*V)
        scores, flat = total.topk(beam, dim=-1)  # (B, K)
        parent = (flat // vocab + offset).reshape(-1)  # (B*K,): the prefix each one extends
        token = (flat % vocab).reshape(-1)  # (B*K,)
        seqs = torch.cat([seqs[parent], token[:, None]], dim=1)
        finished = done[parent]
        length = length[parent] + (~finished).long()
        if eos_id is not None:
            done = finished | (token == eos_id)
            if bool(done.all()):
                break
    out = seqs[:, 1:].view(batch, beam, -1)  # (B, K, T)
    lengths = length.view(batch, beam)
    ranked = (scores / ((5.0 + lengths.clamp(min=1).to(scores.dtype)) / 6.0) ** alpha
              if alpha else scores)
    rows = torch.arange(batch, device=dev)
    choice = ranked.argmax(dim=-1)  # (B,)
    width = int(lengths[rows, choice].max())  # drop the columns that are padding everywhere
    return out[rows, choice][:, :max(width, 1)]


def log_probability(model: EncoderDecoder, src: torch.Tensor, out: torch.Tensor, *,
                    bos_id: int, eos_id: int | None = None) -> torch.Tensor:
    """The total log-probability the model gives each decoded sequence (up to its
    ``eos_id``): what greedy decoding and beam search try to maximise.

    Args:
        model: an encoder-decoder (:class:`EncoderDecoder`).
        src: ``(B, L_s)`` source ids.
        out: ``(B, T)`` decoded ids without ``bos_id`` (as the decoders return them).
        bos_id, eos_id: as given to the decoder; with ``eos_id`` None every token counts.

    Returns:
        ``(B,)`` log-probabilities (natural log).
    """
    model = _check_model(model)
    _check_target_ids(model, bos_id, eos_id)
    src, out = check_ids("src", src), check_ids("out", out)
    tgt = torch.cat([torch.full_like(out[:, :1], bos_id), out], dim=1)  # (B, T + 1)
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)
    logits = model.decode(tgt[:, :-1], memory, src_mask=src_mask)  # (B, T, V)
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, out[..., None]).squeeze(-1)
    if eos_id is None:
        return logp.sum(-1)
    ended = (out == eos_id).long().cumsum(-1)  # 1 from the first <eos> on
    keep = (ended == 0) | ((ended == 1) & (out == eos_id))  # up to and with the first <eos>
    return (logp * keep).sum(-1)
