"""Checkers of chapter 8's transfer exercises: a new idea applied somewhere new.

* :func:`scheduled_sampling`: mix the model's own guesses into the decoder input, the
  classic remedy for exposure bias;
* :func:`cross_attention_widths`: multi-head cross-attention from a memory whose width is
  not the decoder's (``kdim = vdim != d_model``), written from its weights;
* :func:`word_alignment`: read a character-level cross-attention map word by word;
* :func:`decoder_only_batch`: teacher forcing for a decoder-only model that reads the
  source and writes the target in one sequence, the loss on the target only;
* :func:`padded_cross_attention`: cross-attention to a padded memory (chapter 5's padding
  mask, on the keys of another sequence);
* :func:`constrained_greedy`: greedy decoding restricted, step by step, to allowed tokens.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .. import functional as _ref
from ..i18n import gettext as _
from ..i18n import ngettext
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _ints,
    _num,
    _parts,
    _run,
    _shape,
)

__all__ = [
    "constrained_greedy",
    "cross_attention_widths",
    "decoder_only_batch",
    "padded_cross_attention",
    "scheduled_sampling",
    "word_alignment",
]


def _integer_ids(got: object, expected: torch.Tensor, *, what: str) -> torch.Tensor:
    """``got`` as a tensor of token ids with the shape of ``expected``."""
    got = _as_tensor(got, what=what)
    if got.is_floating_point() or got.dtype == torch.bool:
        raise _CheckFailedError(
            _("on {what} the dtype is {dtype}: token ids must be integers (torch.long)")
            .format(what=what, dtype=got.dtype))
    if got.shape != expected.shape:
        raise _CheckFailedError(
            _("on {what} the shape is {got}, expected {expected}")
            .format(what=what, got=_shape(got.shape), expected=_shape(expected.shape)))
    return got.to(torch.long)


def _first_difference(got: torch.Tensor, expected: torch.Tensor) -> tuple[int, ...] | None:
    wrong = (got != expected).nonzero()
    return tuple(wrong[0].tolist()) if len(wrong) else None


# --- scheduled sampling ---------------------------------------------------------------------

_BOS, _PAD = 1, 0


class _ToyModel(torch.nn.Module):
    """A stand-in for a trained Transformer, called like one: ``model(src, tgt_in)`` ->
    logits ``(B, T, V)``. Its guess after position t depends on the token there and on t,
    so that a guess put one position too early or too late is always visible."""

    pad_id = _PAD

    def __init__(self, vocab_size: int = 11) -> None:
        super().__init__()
        self.vocab_size = vocab_size

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tgt.shape[1], device=tgt.device)
        guess = (3 * tgt + positions + src.shape[1]) % (self.vocab_size - 3) + 3
        return F.one_hot(guess, self.vocab_size).float() * 4.0  # (B, T, V)


def _sampling_problem() -> tuple[torch.Tensor, torch.Tensor]:
    """Three sources and their teacher-forced decoder inputs, two of them padded."""
    g = torch.Generator().manual_seed(81)
    src = torch.randint(3, 11, (3, 6), generator=g)
    tgt_in = torch.randint(3, 11, (3, 7), generator=g)
    tgt_in[:, 0] = _BOS
    tgt_in[1, 5:] = _PAD
    tgt_in[2, 3:] = _PAD
    return src, tgt_in


def _mixed(tgt_in: torch.Tensor, guesses: torch.Tensor, coins: torch.Tensor, p: float, *,
           shift: bool = True) -> torch.Tensor:
    """The reference: position t >= 1 takes the guess made at t - 1 where coins < p,
    except on padding; ``shift=False`` gives the typical mistake (the guess made at t)."""
    replace = (coins < p) & (tgt_in != _PAD)
    replace[:, 0] = False
    source = torch.cat([tgt_in[:, :1], guesses[:, :-1]], dim=1) if shift else guesses
    return torch.where(replace, source, tgt_in)


def _explain_sampling(got: torch.Tensor, tgt_in: torch.Tensor, guesses: torch.Tensor,
                      coins: torch.Tensor, p: float, what: str) -> None:
    """Name the typical scheduled-sampling mistakes before the generic comparison."""
    if bool((got[:, 0] != _BOS).any()):
        row = int((got[:, 0] != _BOS).nonzero()[0])
        raise _CheckFailedError(
            _("on {what} sequence {row} starts with {got} instead of <bos> = {bos}: position 0 "
              "is never replaced, the decoder always starts from <bos>")
            .format(what=what, row=_num(row), got=_num(int(got[row, 0])), bos=_num(_BOS)))
    padding = (tgt_in == _PAD) & (got != _PAD)
    if bool(padding.any()):
        index = tuple(padding.nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} padding position {index} holds {got}: padding stays padding, only "
              "real tokens may be replaced").format(what=what, index=_shape(index),
                                                    got=_num(int(got[index]))))
    if p == 0.0 and not torch.equal(got, tgt_in):
        index = _first_difference(got, tgt_in)
        raise _CheckFailedError(
            _("on {what} position {index} holds {got} instead of the true token {expected}: "
              "with p = 0 nothing is replaced (pure teacher forcing); replace a token only "
              "where its coin is below p").format(what=what, index=_shape(index),
                                                  got=_num(int(got[index])),
                                                  expected=_num(int(tgt_in[index]))))
    expected = _mixed(tgt_in, guesses, coins, p)
    if p == 1.0 and torch.equal(got, tgt_in) and not torch.equal(expected, tgt_in):
        raise _CheckFailedError(
            _("on {what} nothing was replaced, but with p = 1 every real token after <bos> "
              "must be the model's guess: is the comparison with p reversed?")
            .format(what=what))
    unshifted = _mixed(tgt_in, guesses, coins, p, shift=False)
    if torch.equal(got, unshifted) and not torch.equal(unshifted, expected):
        index = _first_difference(got, expected)
        raise _CheckFailedError(
            _("on {what} position {index} holds the guess made at that same position; the "
              "token at position t is guessed at position t - 1 (the logits of position t - 1 "
              "predict what comes next)").format(what=what, index=_shape(index)))


def scheduled_sampling(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(model, src, tgt_in, p, generator)`` -> the decoder input of scheduled
    sampling, ``(B, T)``: the model's greedy guesses from a teacher-forced pass
    (``model(src, tgt_in).argmax(-1)``, the guess at position t being for position t + 1)
    replace each real token after ``<bos>`` where ``coins < p``, with
    ``coins = torch.rand(tgt_in.shape, generator=generator)`` drawn once; ``<bos>`` and
    padding (``model.pad_id``) never change."""
    def body(f: Callable) -> str:
        from ..models import Transformer

        src, tgt_in = _sampling_problem()
        toy = _ToyModel().eval()
        torch.manual_seed(82)
        small = Transformer(11, 11, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                            dropout=0.0).eval()
        cases = [(toy, 0.0, 0), (toy, 1.0, 1), (toy, 0.5, 2), (toy, 0.25, 3), (small, 0.5, 4)]
        for model, p, seed in cases:
            what = (_("a small Transformer with p = {p}") if model is small
                    else _("a toy model with p = {p}")).format(p=_num(p))
            with torch.no_grad():
                guesses = model(src, tgt_in).argmax(-1)  # (B, T): guess for position t + 1
            coins = torch.rand(tgt_in.shape, generator=torch.Generator().manual_seed(seed))
            expected = _mixed(tgt_in, guesses, coins, p)
            got = _call(f, model, src.clone(), tgt_in.clone(), p,
                        torch.Generator().manual_seed(seed), what=what)
            got = _integer_ids(got, expected, what=what)
            _explain_sampling(got, tgt_in, guesses, coins, p, what)
            if not torch.equal(got, expected):
                index = _first_difference(got, expected)
                raise _CheckFailedError(
                    _("on {what} position {index} holds {got}, expected {expected}: draw "
                      "coins = torch.rand(tgt_in.shape, generator=generator) once and take the "
                      "model's guess where coins < p").format(
                        what=what, index=_shape(index), got=_num(int(got[index])),
                        expected=_num(int(expected[index]))))
        return _("the model's own guesses, shifted by one, replace a fraction p of the true "
                 "tokens; <bos> and padding stay")
    return _run("scheduled_sampling", fn, body)


# --- cross-attention between different widths -----------------------------------------------

def _cross_reference(y: torch.Tensor, memory: torch.Tensor, weights: list[torch.Tensor],
                     heads: int, *, beta: float | None = None, mix: bool = True
                     ) -> torch.Tensor:
    """Multi-head cross-attention without biases, weights used as ``x @ w.T``."""
    w_q, w_k, w_v, w_o = weights
    q = _ref.split_heads(y @ w_q.T, heads)  # (B, H, L_out, d_head)
    k = _ref.split_heads(memory @ w_k.T, heads)  # (B, H, L_in, d_head)
    v = _ref.split_heads(memory @ w_v.T, heads)  # (B, H, L_in, d_head)
    out, _weights = _ref.attention(q, k, v, beta=beta)
    out = _ref.merge_heads(out)  # (B, L_out, d_model)
    return out @ w_o.T if mix else out


def _explain_widths(got: torch.Tensor, y: torch.Tensor, memory: torch.Tensor,
                    weights: list[torch.Tensor], heads: int, what: str) -> None:
    """Name the typical mistakes: the wrong scale, a forgotten W_o, swapped roles."""
    d_model, d_memory = y.shape[-1], memory.shape[-1]
    if got.shape[:2] == memory.shape[:2] and got.shape[1] != y.shape[1]:
        raise _CheckFailedError(
            _("on {what} the output has one row per memory position: the queries come from "
              "the decoder states y, the keys and values from the memory").format(what=what))
    d_head = d_model // heads
    scales = ((d_model, _("on {what} the scores are divided by sqrt(d_model) = {wrong}; each "
                          "head divides by sqrt(d_head) = {right}")),
              (d_memory, _("on {what} the scores are divided by sqrt(d_memory) = {wrong}, the "
                           "width of the memory; each head divides by sqrt(d_head) = {right}")))
    for width, message in scales:
        if width == d_head:
            continue
        wrong = _cross_reference(y, memory, weights, heads, beta=1.0 / math.sqrt(width))
        if got.shape == wrong.shape and torch.allclose(got.double(), wrong.double(), atol=1e-4):
            raise _CheckFailedError(message.format(what=what, wrong=_num(math.sqrt(width)),
                                                   right=_num(math.sqrt(d_head))))
    unmixed = _cross_reference(y, memory, weights, heads, mix=False)
    if got.shape == unmixed.shape and torch.allclose(got.double(), unmixed.double(), atol=1e-4):
        raise _CheckFailedError(
            _("on {what} the heads are concatenated but not mixed: finish with the output "
              "projection w_o").format(what=what))


def cross_attention_widths(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(y, memory, w_q, w_k, w_v, w_o, num_heads)`` -> multi-head cross-attention
    from decoder states ``y (B, L_out, d_model)`` to a memory of another width
    ``(B, L_in, d_memory)``: ``w_q``, ``w_o`` are ``(d_model, d_model)``, ``w_k``, ``w_v``
    are ``(d_model, d_memory)``, all used as ``x @ w.T`` without bias, each head scaled by
    ``1 / sqrt(d_model / num_heads)``. The reference is
    ``MultiHeadAttention(d_model, num_heads, kdim=d_memory, vdim=d_memory, bias=False)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(83)
        for d_model, d_memory, heads in ((12, 20, 3), (8, 5, 2), (6, 10, 1)):
            y = torch.randn(2, 4, d_model, generator=g)
            memory = torch.randn(2, 7, d_memory, generator=g)
            weights = [torch.randn(d_model, width, generator=g) / math.sqrt(width)
                       for width in (d_model, d_memory, d_memory, d_model)]
            what = ngettext("y {y}, memory {memory}, {heads} head",
                            "y {y}, memory {memory}, {heads} heads", heads).format(
                y=_shape(y.shape), memory=_shape(memory.shape), heads=_num(heads))
            expected = _cross_reference(y, memory, weights, heads)
            got = _call(f, y.clone(), memory.clone(), *(w.clone() for w in weights), heads,
                        what=what)
            got_tensor = _as_tensor(got, what=what)
            try:
                _compare(got_tensor, expected, what=what, atol=1e-4)
            except _CheckFailedError:
                _explain_widths(got_tensor, y, memory, weights, heads, what)
                raise
        return _("W_k brings the memory into the queries' space and W_v into the values'; the "
                 "output has the decoder's width, one row per decoder position")
    return _run("cross_attention_widths", fn, body)


# --- reading an alignment -------------------------------------------------------------------

def _word_totals(weights: torch.Tensor, word_ids: torch.Tensor) -> torch.Tensor:
    """``(L_out, n_words)``: the weight each output row gives to each word."""
    n_words = int(word_ids.max()) + 1
    keep = word_ids >= 0
    totals = torch.zeros(weights.shape[0], n_words, dtype=torch.float64)
    return totals.index_add_(1, word_ids[keep], weights[:, keep].double())


def _alignment_cases() -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    # Four rows, each built to catch one mistake: a word of one heavy character against a
    # larger word that weighs more in all (averaging picks the former), one heavy character
    # against a heavier word, a space with the most weight, and a three-way tie.
    ids = torch.tensor([0, 0, -1, 1, 1, 1, -1, 2])
    handmade = torch.tensor([
        [0.1, 0.1, 0.0, 0.4, 0.05, 0.05, 0.0, 0.3],
        [0.45, 0.0, 0.0, 0.2, 0.15, 0.2, 0.0, 0.0],
        [0.1, 0.05, 0.6, 0.1, 0.05, 0.05, 0.0, 0.05],
        [0.125, 0.125, 0.25, 0.125, 0.125, 0.0, 0.0, 0.25],
    ])
    # "le 14 juillet 1989": four words, spaces outside every word.
    text_ids = torch.tensor([0, 0, -1, 1, 1, -1, 2, 2, 2, 2, 2, 2, 2, -1, 3, 3, 3, 3])
    scores = torch.randn(10, 18, generator=torch.Generator().manual_seed(84)) * 2.0
    return [(_("a {rows} x {cols} map with word ids {ids}").format(
                rows=_num(4), cols=_num(8), ids=_ints(ids.tolist())), handmade, ids),
            (_("a {rows} x {cols} map of a date in four words").format(rows=_num(10),
                                                                     cols=_num(18)),
             torch.softmax(scores, dim=-1), text_ids)]


def _explain_alignment(got: torch.Tensor, weights: torch.Tensor, word_ids: torch.Tensor,
                       what: str) -> None:
    totals = _word_totals(weights, word_ids)
    expected = totals.argmax(-1)
    n_words = totals.shape[1]
    heaviest = word_ids[weights.argmax(-1)]
    counts = torch.bincount(word_ids[word_ids >= 0], minlength=n_words).clamp(min=1)
    mean_choice = (totals / counts).argmax(-1)
    for row in range(len(expected)):
        g, e = int(got[row]), int(expected[row])
        if g == e:
            continue
        if not 0 <= g < n_words:
            raise _CheckFailedError(
                _("on {what} row {row} got {got}, which is no word: the words are numbered 0 "
                  "to {last}, and characters with word id -1 (spaces, punctuation) belong to "
                  "none").format(what=what, row=_num(row), got=_num(g), last=_num(n_words - 1)))
        facts = dict(what=what, row=_num(row), got=_num(g), expected=_num(e),
                     total=_num(round(float(totals[row, e]), 4)),
                     other=_num(round(float(totals[row, g]), 4)))
        if abs(float(totals[row, g]) - float(totals[row, e])) < 1e-9:
            raise _CheckFailedError(
                _("on {what} row {row} ties between words {expected} and {got} (total weight "
                  "{total} each): a tie goes to the lowest index").format(**facts))
        if g == int(heaviest[row]):
            raise _CheckFailedError(
                _("on {what} row {row} you chose word {got}, which holds the heaviest single "
                  "character, but word {expected} gets more weight in all ({total} against "
                  "{other}): add up the weights of each word's characters").format(**facts))
        if g == int(mean_choice[row]):
            raise _CheckFailedError(
                _("on {what} row {row} you chose word {got}, which has the highest weight per "
                  "character, but word {expected} gets more weight in all ({total} against "
                  "{other}): add the weights up, do not average them").format(**facts))
        raise _CheckFailedError(
            _("on {what} row {row} got word {got} (total weight {other}), expected word "
              "{expected} (total weight {total})").format(**facts))


def word_alignment(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(weights, word_ids)`` -> ``(L_out,)`` integer tensor: for each row of a
    cross-attention map ``weights (L_out, L_in)``, the word that receives the most weight
    in total, summing over its characters. ``word_ids (L_in,)`` gives each source character
    its word index (0, 1, ...), or -1 for a character outside every word; a tie goes to the
    lowest word index."""
    def body(f: Callable) -> str:
        for what, weights, word_ids in _alignment_cases():
            expected = _word_totals(weights, word_ids).argmax(-1)
            got = _call(f, weights.clone(), word_ids.clone(), what=what)
            got = _integer_ids(got, expected, what=what)
            _explain_alignment(got, weights, word_ids, what)
            _compare(got, expected, what=what, exact=True)
        return _("each output row goes to the word with the most weight in total, characters "
                 "outside words ignored, ties to the first word")
    return _run("word_alignment", fn, body)


# --- teacher forcing for a decoder-only model --------------------------------------------------

IGNORE = -100  # F.cross_entropy's default ignore_index


def _decoder_only_reference(src: torch.Tensor, tgt: torch.Tensor, sep_id: int, eos_id: int,
                            *, ignored: int | None = None, shift: bool = True
                            ) -> tuple[torch.Tensor, torch.Tensor]:
    """The right answer, and (``ignored``, ``shift``) the typical mistakes: how many leading
    targets are ignored, and whether the targets are the next tokens."""
    batch, n_src = src.shape
    sep = torch.full((batch, 1), sep_id, dtype=torch.long)
    eos = torch.full((batch, 1), eos_id, dtype=torch.long)
    sequence = torch.cat([src, sep, tgt, eos], dim=1)  # (B, n_s + n_t + 2)
    inputs = sequence[:, :-1]
    targets = (sequence[:, 1:] if shift else sequence[:, :-1]).clone()
    targets[:, :n_src if ignored is None else ignored] = IGNORE
    return inputs, targets


def decoder_only_batch(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(src, tgt, sep_id, eos_id)`` -> ``(inputs, targets)``, both ``(B, n_s + n_t
    + 1)``, for a decoder-only model trained to write ``tgt (B, n_t)`` after ``src (B,
    n_s)``: the sequence ``src <sep> tgt <eos>`` without its last token as input, the same
    sequence without its first token as targets, and ``-100`` (ignored by
    ``F.cross_entropy``) at every target that is part of the source or the separator."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(85)
        sep_id, eos_id = 1, 2
        for n_src, n_tgt, batch in ((4, 3, 2), (2, 5, 3), (1, 1, 1)):
            src = torch.randint(3, 20, (batch, n_src), generator=g)
            tgt = torch.randint(3, 20, (batch, n_tgt), generator=g)
            what = _("a source {src} and a target {tgt}").format(src=_shape(src.shape),
                                                                tgt=_shape(tgt.shape))
            got = _parts(_call(f, src.clone(), tgt.clone(), sep_id, eos_id, what=what), 2,
                         "(inputs, targets)", what=what)
            inputs, targets = _decoder_only_reference(src, tgt, sep_id, eos_id)
            got_inputs = _integer_ids(got[0], inputs, what=what)
            if not torch.equal(got_inputs, inputs):
                index = _first_difference(got_inputs, inputs)
                raise _CheckFailedError(_(
                    "on {what} input position {index} holds {got}, expected {expected}: the "
                    "input is src, <sep>, tgt, without the final <eos>").format(
                    what=what, index=_shape(index), got=_num(int(got_inputs[index])),
                    expected=_num(int(inputs[index]))))
            short = got[1]
            if (isinstance(short, torch.Tensor) and short.dim() == 2
                    and tuple(short.shape) == (batch, targets.shape[1] - 1)):
                raise _CheckFailedError(_(
                    "on {what} the targets are one token short: after the last target token "
                    "the model must learn to write <eos>").format(what=what))
            got_targets = _integer_ids(got[1], targets, what=what)
            mistakes = [
                (_decoder_only_reference(src, tgt, sep_id, eos_id, ignored=0)[1],
                 _("on {what} no target is ignored: the model would also be trained to write "
                   "the source; put -100 wherever the next token is part of the source or "
                   "<sep>")),
                (_decoder_only_reference(src, tgt, sep_id, eos_id, ignored=n_src + 1)[1],
                 _("on {what} one target too many is ignored: the position of <sep> must "
                   "predict the first target token")),
                (_decoder_only_reference(src, tgt, sep_id, eos_id, ignored=n_src - 1)[1],
                 _("on {what} the target of the last source position, <sep>, is not "
                   "ignored: it is part of the prompt, not of the answer")),
                (_decoder_only_reference(src, tgt, sep_id, eos_id, shift=False)[1],
                 _("on {what} the targets are the inputs themselves: each position predicts "
                   "the next token, so the targets are shifted by one")),
                (torch.where(targets == IGNORE, torch.zeros_like(targets), targets),
                 _("on {what} the ignored targets are 0: F.cross_entropy ignores -100, and 0 "
                   "may be a real token")),
            ]
            for wrong, message in mistakes:
                if not torch.equal(wrong, targets) and torch.equal(got_targets, wrong):
                    raise _CheckFailedError(message.format(what=what))
            if not torch.equal(got_targets, targets):
                index = _first_difference(got_targets, targets)
                raise _CheckFailedError(_(
                    "on {what} target position {index} holds {got}, expected {expected}")
                    .format(what=what, index=_shape(index), got=_num(int(got_targets[index])),
                            expected=_num(int(targets[index]))))
        return _("one sequence src <sep> tgt <eos>, shifted by one, the loss on the target "
                 "and <eos> only: n_t + 1 trained positions, as in the encoder-decoder")
    return _run("decoder_only_batch", fn, body)


# --- cross-attention to a padded memory -------------------------------------------------------

def _padded_reference(y: torch.Tensor, memory: torch.Tensor, keep: torch.Tensor,
                      weights: list[torch.Tensor], *, mode: str = "right",
                      scale: float | None = None) -> torch.Tensor:
    """Single-head cross-attention with a padding mask on the memory; ``mode`` gives the
    typical mistakes."""
    w_q, w_k, w_v = (w.double() for w in weights)
    q, k, v = y.double() @ w_q.T, memory.double() @ w_k.T, memory.double() @ w_v.T
    scores = q @ k.transpose(-2, -1) * (scale or 1 / math.sqrt(w_q.shape[0]))  # (B, Lo, Li)
    blocked = ~keep[:, None, :]  # (B, 1, L_in)
    if mode == "right":
        scores = scores.masked_fill(blocked, float("-inf"))
    elif mode == "zero":
        scores = scores.masked_fill(blocked, 0.0)
    elif mode == "inverted":
        scores = scores.masked_fill(~blocked, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    if mode == "after":
        attn = attn.masked_fill(blocked, 0.0)
    return attn @ v


def _padded_problem() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    g = torch.Generator().manual_seed(86)
    d_y, d_memory, d_k = 6, 5, 4
    y = torch.randn(2, 3, d_y, generator=g)
    memory = torch.randn(2, 5, d_memory, generator=g) * 2
    keep = torch.tensor([[True, True, True, True, False], [True, True, False, False, False]])
    weights = [torch.randn(d_k, d_y, generator=g), torch.randn(d_k, d_memory, generator=g),
               torch.randn(3, d_memory, generator=g)]
    return y, memory, keep, weights


def padded_cross_attention(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(y, memory, memory_keep, w_q, w_k, w_v)`` -> single-head cross-attention
    ``(B, L_out, d_v)`` from decoder states ``y (B, L_out, d_y)`` to a padded memory
    ``(B, L_in, d_memory)``: queries ``y @ w_q.T``, keys and values from the memory, scores
    scaled by ``1 / sqrt(d_k)`` (``d_k = w_q.shape[0]``), and no weight on the positions
    where ``memory_keep (B, L_in)`` is False."""
    def body(f: Callable) -> str:
        y, memory, keep, weights = _padded_problem()
        what = _("y {y} and a memory {memory} padded by 1 and 3 positions").format(
            y=_shape(y.shape), memory=_shape(memory.shape))
        expected = _padded_reference(y, memory, keep, weights)
        got = _call(f, y.clone(), memory.clone(), keep.clone(), *(w.clone() for w in weights),
                    what=what)
        d_k = weights[0].shape[0]
        _name_mistake(got, expected, [
            (_padded_reference(y, memory, torch.ones_like(keep), weights),
             _("on {what} the padding is not masked: the decoder reads the padded positions "
               "of the memory as if they were words")),
            (_padded_reference(y, memory, keep, weights, mode="zero"),
             _("on {what} the padded scores are set to 0 before the softmax, which still "
               "gives them weight: use -inf")),
            (_padded_reference(y, memory, keep, weights, mode="after"),
             _("on {what} the padded weights are zeroed after the softmax, so the rows no "
               "longer sum to 1: mask the scores before the softmax")),
            (_padded_reference(y, memory, keep, weights, mode="inverted"),
             _("on {what} the mask is reversed: memory_keep is True on real tokens, which "
               "may be attended")),
            (_padded_reference(y, memory, keep, weights, scale=1 / math.sqrt(y.shape[-1])),
             _("on {what} the scores are divided by sqrt({wrong}), the width of y; divide by "
               "sqrt(d_k) = sqrt({right}), the size of the queries and keys")
             .replace("{wrong}", _num(y.shape[-1])).replace("{right}", _num(d_k))),
            (_padded_reference(y, memory, keep, weights, scale=1.0),
             _("on {what} the scores are not scaled: divide them by sqrt(d_k)")),
        ], what)
        _compare(got, expected, what=what, atol=1e-4)
        return _("queries from the decoder, keys and values from the memory, and no weight "
                 "on its padding: each row still sums to 1 over the real tokens")
    return _run("padded_cross_attention", fn, body)


def _name_mistake(got: object, expected: torch.Tensor,
                       mistakes: list[tuple[torch.Tensor, str]], what: str) -> None:
    """Raise the message of the first known mistake that the answer reproduces."""
    if not isinstance(got, torch.Tensor) or got.device.type == "meta" or got.is_complex():
        return
    got = got.detach().to("cpu", torch.float64)
    for wrong, message in mistakes:
        if (got.shape == wrong.shape and not torch.allclose(wrong, expected, atol=1e-4)
                and bool(torch.isfinite(got).all())
                and bool((got - wrong).abs().max() <= 1e-5)):
            raise _CheckFailedError(message.format(what=what))


# --- constrained greedy decoding ---------------------------------------------------------------

def _constrained_reference(model: torch.nn.Module, src: torch.Tensor, bos_id: int,
                           allowed: torch.Tensor, *, fill: float = float("-inf"),
                           constrain: bool = True, mask_decoder: bool = True) -> torch.Tensor:
    """Greedy decoding where step t may only write a token with ``allowed[t]`` True (and,
    for a mistake, a decoder that is not given the padding mask; ``encode`` makes its own
    when given none)."""
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)
    out = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for t in range(allowed.shape[0]):
        logits = model.decode(out, memory,
                              src_mask=src_mask if mask_decoder else None)[:, -1]  # (B, V)
        if constrain:
            logits = (logits.masked_fill(~allowed[t], fill) if fill != 0.0
                      else logits * allowed[t])
        out = torch.cat([out, logits.argmax(-1, keepdim=True)], dim=1)
    return out[:, 1:]


def _constrained_problem() -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """A small random model whose scores are all negative, 3 sources (two of them padded),
    and a pattern of allowed tokens that forbids the model's own greedy choice at most
    steps."""
    from ..models import Transformer

    torch.manual_seed(87)
    model = Transformer(10, 10, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                        dropout=0.0).eval()
    with torch.no_grad():
        model.lm_head.bias -= 20.0  # every score negative: a 0 for "forbidden" would win
    src = torch.randint(3, 10, (3, 5), generator=torch.Generator().manual_seed(88))
    src[1, 2:] = 0  # padding (id 0) after two sources: the masks must keep it out
    src[2, 4:] = 0
    allowed = torch.zeros(6, 10, dtype=torch.bool)
    allowed[0, 3:6] = True
    allowed[1, 6:] = True
    allowed[2, [4, 7]] = True
    allowed[3, 2] = True
    allowed[4, 3:] = True
    allowed[5, [0, 2]] = True
    return model, src, allowed


def constrained_greedy(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(model, src, bos_id, allowed)`` -> ``(B, T)`` ids: greedy decoding of
    ``T = allowed.shape[0]`` tokens with the model's ``source_mask``, ``encode`` and
    ``decode``, where step ``t`` writes the most likely token among those with
    ``allowed[t]`` True (``allowed`` is ``(T, V)`` bool), without the leading ``bos_id``."""
    def body(f: Callable) -> str:
        model, src, allowed = _constrained_problem()
        bos = 1
        with torch.no_grad():
            expected = _constrained_reference(model, src, bos, allowed)
            free = _constrained_reference(model, src, bos, allowed, constrain=False)
            zeroed = _constrained_reference(model, src, bos, allowed, fill=0.0)
            unmasked = _constrained_reference(model, src, bos, allowed, mask_decoder=False)
        what = _("3 sources (two of them padded), 6 steps, and a model whose scores are all "
                 "negative")
        with torch.no_grad():
            got = _call(f, model, src.clone(), bos, allowed.clone(), what=what)
        got_tensor = _as_tensor(got, what=what)
        if (got_tensor.shape == (expected.shape[0], expected.shape[1] + 1)
                and bool((got_tensor[:, 0] == bos).all())):
            raise _CheckFailedError(
                _("on {what} every sequence starts with <bos> = {bos}: return the generated "
                  "tokens only").format(what=what, bos=_num(bos)))
        got_ids = _integer_ids(got_tensor, expected, what=what)
        for wrong, message in (
                (free, _("on {what} the allowed tokens are ignored: this is plain greedy "
                         "decoding; at step t, choose among the tokens with allowed[t] True")),
                (zeroed, _("on {what} forbidden tokens get a score of 0, which beats negative "
                           "scores: give them -inf before the argmax")),
                (unmasked, _("on {what} cross-attention reads the padding of the sources: "
                             "pass src_mask=model.source_mask(src) to decode"))):
            if not torch.equal(wrong, expected) and torch.equal(got_ids, wrong):
                raise _CheckFailedError(message.format(what=what))
        forbidden = ~allowed[torch.arange(allowed.shape[0]), got_ids.clamp(0, 9)]  # (B, T)
        if bool((got_ids < 0).any() or (got_ids > 9).any()) or bool(forbidden.any()):
            index = tuple(forbidden.nonzero()[0].tolist()) if bool(forbidden.any()) else (0, 0)
            raise _CheckFailedError(
                _("on {what} position {index} holds {got}, a token that allowed forbids at "
                  "that step").format(what=what, index=_shape(index),
                                      got=_num(int(got_ids[index]))))
        _compare(got_ids, expected, what=what, exact=True)
        return _("at each step the most likely allowed token, fed back as the next input: "
                 "the output always fits the pattern")
    return _run("constrained_greedy", fn, body)
