"""Checkers of chapter 9's transfer exercises: a new idea applied somewhere new.

* :func:`wordpiece`: WordPiece's greedy longest-match-first cut of one word.
* :func:`mlm_mask`: BERT's masked-language-model corruption (15% chosen, then 80/10/10).
* :func:`embedding_grad`: the gradient that an embedding lookup sends to its table, the
  one-hot product of section 9.2 run backwards (rows of repeated ids add up).
* :func:`max_pooling`: a sentence vector as the largest value of each feature over the real
  tokens, where padding must lose every comparison.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import torch

from ..i18n import format_percent
from ..i18n import gettext as _
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _ints,
    _kind,
    _num,
    _parts,
    _run,
    _shape,
)

__all__ = ["embedding_grad", "max_pooling", "mlm_mask", "wordpiece"]


# --- WordPiece ------------------------------------------------------------------------------

_UNK = "[UNK]"

# A small vocabulary built so that the classic mistakes give different answers: "s" and "ly"
# exist only as continuations (##s), "hug" + "##ely" spells "hugely" but greedy WordPiece
# takes "huge" first and then finds nothing, "u" + "##n" + ... would be the shortest pieces.
_VOCAB_PIECES = (
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "a", "u", "un", "p", "pl", "play", "hug", "huge", "to", "token",
    "##n", "##b", "##e", "##believ", "##ab", "##able", "##ably", "##lay", "##ing", "##s",
    "##ken", "##iz", "##ation", "##ization", "##ely", "##a",
)

_WORDS = ("play", "playing", "plays", "unbelievably", "tokenization", "a", "hugely", "playx",
          "aaa", "ably")


def _wordpiece(word: str, vocab: Mapping[str, int]) -> list[str]:
    """The reference: greedy longest-match-first, the whole word [UNK] when stuck."""
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return [_UNK]
    return pieces


def _spells(pieces: Sequence[str], word: str, vocab: Mapping[str, int]) -> bool:
    """Whether ``pieces`` are pieces of the vocabulary, ## where they should be, that spell
    ``word``."""
    if not pieces or any(p not in vocab for p in pieces):
        return False
    if pieces[0].startswith("##") or not all(p.startswith("##") for p in pieces[1:]):
        return False
    return pieces[0] + "".join(p[2:] for p in pieces[1:]) == word


def _pieces_text(pieces: Sequence[str]) -> str:
    return "[" + ", ".join(repr(p) for p in pieces) + "]"


def _explain_wordpiece(got: list[str], expected: list[str], word: str,
                       vocab: Mapping[str, int]) -> str:
    """The sentence for a wrong cut, naming the likely mistake."""
    shown = dict(word=repr(word), got=_pieces_text(got), expected=_pieces_text(expected))
    if expected == [_UNK] and _UNK in got:
        return _("on the word {word} it returned {got}, expected {expected}: when part of a "
                 "word matches no piece, WordPiece gives up on the whole word, which becomes "
                 "the single token [UNK]").format(**shown)
    if expected == [_UNK] and _spells(got, word, vocab):
        return _("on the word {word} it returned {got}, expected {expected}: WordPiece is "
                 "greedy and never goes back; it takes the longest first piece, then nothing "
                 "matches the rest, so the whole word becomes [UNK]").format(**shown)
    if got == [_UNK]:
        return _("on the word {word} it returned {got}, expected {expected}: the word can be "
                 "spelled with pieces of the vocabulary, the first piece looked up as it is and "
                 "the pieces after it with ## in front").format(**shown)
    if got and got[0].startswith("##"):
        return _("on the word {word} it returned {got}, expected {expected}: the first piece "
                 "of a word has no ## in front").format(**shown)
    if any(not p.startswith("##") for p in got[1:]) and all(
            p.startswith("##") for p in expected[1:]):
        return _("on the word {word} it returned {got}, expected {expected}: every piece after "
                 "the first continues the word and is looked up with ## in front").format(**shown)
    if _spells(got, word, vocab):
        return _("on the word {word} it returned {got}, expected {expected}: both spell the "
                 "word, but at each step WordPiece takes the longest piece of the vocabulary "
                 "that matches").format(**shown)
    return _("on the word {word} it returned {got}, expected {expected}").format(**shown)


def wordpiece(fn: Callable[[str, Mapping[str, int]], list[str]]) -> CheckResult:
    """Check ``fn(word, vocab)`` -> the WordPiece pieces of ``word``: greedy
    longest-match-first from the left, pieces after the first looked up with ``##`` in
    front, and ``["[UNK]"]`` for the whole word when some part matches no piece.
    ``vocab`` maps pieces to ids, like a Hugging Face tokenizer's ``vocab``."""
    def body(f: Callable) -> str:
        vocab = {piece: i for i, piece in enumerate(_VOCAB_PIECES)}
        for word in _WORDS:
            what = _("the word {word}").format(word=repr(word))
            got = _call(f, word, dict(vocab), what=what)
            if isinstance(got, tuple):
                got = list(got)
            if not isinstance(got, list) or not all(isinstance(p, str) for p in got):
                raise _CheckFailedError(_("on {what} it returned {kind}, expected a list of "
                                          "strings").format(what=what, kind=_kind(got)))
            expected = _wordpiece(word, vocab)
            if got != expected:
                raise _CheckFailedError(_explain_wordpiece(got, expected, word, vocab))
        return _("the longest piece first, ## on the pieces that continue a word, and [UNK] "
                 "for a word that cannot be spelled")
    return _run("wordpiece", fn, body)


# --- the masked-language-model corruption ---------------------------------------------------

# A vocabulary of 64 ids laid out like BERT's (0 = [PAD], 100 to 103 = [UNK] [CLS] [SEP]
# [MASK]), in miniature, so that a random token drawn from the whole vocabulary is often a
# special one and a draw in [number of specials, V) still hits one.
_V = 64
_PAD, _UNK_ID, _CLS, _SEP, _MASK = 0, 17, 18, 19, 20
_SPECIALS = [_PAD, _UNK_ID, _CLS, _SEP, _MASK]
_IGNORE = -100
# Tolerances, about six standard deviations on the checker's batch (some 24 000 ordinary
# tokens, some 3 600 chosen at p = 0.15): a right answer always passes, the typical
# mistakes (all [MASK], 80/10/10 over the wrong tokens) are far outside.
_RATE_TOL = 0.02
_SPLIT = (0.8, 0.1, 0.1)
_SPLIT_TOL = (0.045, 0.035, 0.035)


def _mlm_batch() -> torch.Tensor:
    """(128, 256) ids: [CLS] text [SEP] then [PAD], texts of various lengths with a few
    [UNK] inside them."""
    g = torch.Generator().manual_seed(2018)
    ordinary = torch.tensor([i for i in range(_V) if i not in _SPECIALS])
    batch = torch.full((128, 256), _PAD, dtype=torch.long)
    for row in range(batch.shape[0]):
        length = int(torch.randint(128, 257, (1,), generator=g))
        text = ordinary[torch.randint(len(ordinary), (length - 2,), generator=g)]
        text[torch.rand(length - 2, generator=g) < 0.01] = _UNK_ID
        batch[row, 0], batch[row, 1:length - 1], batch[row, length - 1] = _CLS, text, _SEP
    return batch


def _ids_like(got: object, ids: torch.Tensor, name: str, what: str) -> torch.Tensor:
    got = _as_tensor(got, what=what)
    if got.shape != ids.shape:
        raise _CheckFailedError(_("on {what} {name} has shape {got}, expected {expected}").format(
            what=what, name=name, got=_shape(got.shape), expected=_shape(ids.shape)))
    if got.is_floating_point() or got.dtype == torch.bool:
        raise _CheckFailedError(_("on {what} {name} has dtype {dtype}, expected integer token "
                                  "ids (torch.long)").format(what=what, name=name,
                                                             dtype=got.dtype))
    return got.long()


def _first(where: torch.Tensor) -> str:
    return _shape(where.nonzero()[0].tolist())


def _masked(f: Callable, ids: torch.Tensor, p: float, seed: int,
            what: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the reader's function with a fresh generator; check the types and shapes and that
    ``ids`` was left alone."""
    given = ids.clone()
    call = functools.partial(f, mask_id=_MASK, vocab_size=_V, special_ids=list(_SPECIALS), p=p,
                             generator=torch.Generator().manual_seed(seed))
    got = _parts(_call(call, given, what=what), 2, "(inputs, labels)", what=what)
    inputs = _ids_like(got[0], ids, "inputs", what)
    labels = _ids_like(got[1], ids, "labels", what)
    if not torch.equal(given, ids):
        raise _CheckFailedError(_("on {what} it changed the ids it was given: build the inputs "
                                  "on a copy (ids.clone())").format(what=what))
    return inputs, labels


def _check_masking(inputs: torch.Tensor, labels: torch.Tensor, ids: torch.Tensor, p: float,
                   what: str) -> None:
    special = torch.isin(ids, torch.tensor(_SPECIALS))
    chosen = labels != _IGNORE
    share = chosen.float().mean().item()
    if share > 0.9:
        raise _CheckFailedError(
            _("on {what} the labels are not -100 at {share} of the positions: only the chosen "
              "positions get a label (their original id); all the others get -100, which the "
              "cross-entropy ignores").format(what=what, share=format_percent(share)))
    picked = special & (chosen | (inputs != ids))
    if picked.any():
        index = tuple(picked.nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} the special token {token} at position {index} was chosen: special "
              "tokens ({specials}) are never chosen").format(
                what=what, token=_num(ids[index].item()), index=_shape(index),
                specials=", ".join(_num(s) for s in _SPECIALS)))
    wrong = chosen & (labels != ids)
    if wrong.any():
        index = tuple(wrong.nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} the label at position {index} is {got}, expected the original id "
              "{expected}: the model must predict the token that was there").format(
                what=what, index=_shape(index), got=_num(labels[index].item()),
                expected=_num(ids[index].item())))
    changed = ~chosen & (inputs != ids)
    if changed.any():
        index = tuple(changed.nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} the input at position {index} changed from {before} to {after} but its "
              "label is -100: only chosen positions may change, and each of them gets its "
              "original id as label").format(what=what, index=_shape(index),
                                             before=_num(ids[index].item()),
                                             after=_num(inputs[index].item())))
    rate = chosen.sum().item() / max(1, (~special).sum().item())
    if abs(rate - p) > _RATE_TOL:
        raise _CheckFailedError(
            _("on {what}, {share} of the ordinary tokens were chosen, expected about {expected}")
            .format(what=what, share=format_percent(rate), expected=format_percent(p, 0)))
    masked = chosen & (inputs == _MASK)
    kept = chosen & (inputs == ids)
    swapped = chosen & ~masked & ~kept
    outside = swapped & ((inputs < 0) | (inputs >= _V))
    if outside.any():
        raise _CheckFailedError(
            _("on {what} the random token at position {index} is {token}, outside the "
              "vocabulary of {size} ids").format(what=what, index=_first(outside),
                                                 token=_num(inputs[outside][0].item()),
                                                 size=_num(_V)))
    bad = swapped & torch.isin(inputs, torch.tensor(_SPECIALS))
    if bad.any():
        raise _CheckFailedError(
            _("on {what} the random token at position {index} is {token}, a special token: draw "
              "the random tokens among the ordinary tokens of the vocabulary only").format(
                what=what, index=_first(bad), token=_num(inputs[bad][0].item())))
    total = max(1, chosen.sum().item())
    shares = [m.sum().item() / total for m in (masked, swapped, kept)]
    split = dict(what=what, mask=format_percent(shares[0]), random=format_percent(shares[1]),
                 kept=format_percent(shares[2]), mask_share=format_percent(_SPLIT[0], 0),
                 random_share=format_percent(_SPLIT[1], 0),
                 kept_share=format_percent(_SPLIT[2], 0))
    if shares[0] > 0.97:
        raise _CheckFailedError(
            _("on {what}, {mask} of the chosen tokens became [MASK]: only {mask_share} of them "
              "do; {random_share} get a random token and {kept_share} stay unchanged")
            .format(**split))
    if any(abs(s - e) > t for s, e, t in zip(shares, _SPLIT, _SPLIT_TOL, strict=True)):
        raise _CheckFailedError(
            _("on {what}, of the chosen tokens, {mask} became [MASK], {random} a random token and "
              "{kept} stayed unchanged: expected about {mask_share}, {random_share} and "
              "{kept_share}").format(**split))
    distinct = inputs[swapped].unique().numel()
    if distinct < (_V - len(_SPECIALS)) // 2:
        raise _CheckFailedError(
            _("on {what} the random tokens take only {count} different values: draw each one "
              "uniformly among the ordinary tokens of the vocabulary").format(
                what=what, count=_num(distinct)))


def mlm_mask(fn: Callable[..., tuple]) -> CheckResult:
    """Check ``fn(ids, *, mask_id, vocab_size, special_ids, p, generator) -> (inputs,
    labels)``, BERT's masked-language-model corruption, statistically on a batch of about
    30 000 tokens: about ``p`` of the ordinary tokens are chosen (special tokens never); of
    those, about 80% become ``mask_id``, 10% a random ordinary token, 10% stay unchanged;
    ``labels`` holds the original id at the chosen positions and -100 elsewhere; the other
    positions are unchanged; every random draw comes from ``generator``."""
    def body(f: Callable) -> str:
        ids = _mlm_batch()
        for p, seed in ((0.15, 0), (0.4, 1)):
            what = _("a batch of {shape} ids with p = {p}").format(shape=_shape(ids.shape),
                                                                   p=_num(p))
            inputs, labels = _masked(f, ids, p, seed, what)
            _check_masking(inputs, labels, ids, p, what)
        what = _("two generators seeded alike")
        first = _masked(f, ids, 0.15, 7, what)
        second = _masked(f, ids, 0.15, 7, what)
        if not all(torch.equal(a, b) for a, b in zip(first, second, strict=True)):
            raise _CheckFailedError(
                _("with two generators seeded alike it returned different results: draw every "
                  "random number from the generator it is given (generator=generator)"))
        other = _masked(f, ids, 0.15, 8, _("a generator seeded differently"))
        if all(torch.equal(a, b) for a, b in zip(first, other, strict=True)):
            raise _CheckFailedError(
                _("with generators seeded differently it returned the same result: draw every "
                  "random number from the generator it is given, without reseeding"))
        return _("about {rate} of the ordinary tokens chosen, {mask_share} of them [MASK], "
                 "{random_share} random, {kept_share} unchanged, labels -100 elsewhere, and "
                 "reproducible with a seeded generator").format(
            rate=format_percent(0.15, 0), mask_share=format_percent(_SPLIT[0], 0),
            random_share=format_percent(_SPLIT[1], 0), kept_share=format_percent(_SPLIT[2], 0))
    return _run("mlm_mask", fn, body)


# --- the gradient of an embedding lookup --------------------------------------------------------

def _lookup_grad(ids: torch.Tensor, grad_output: torch.Tensor, vocab_size: int, *,
                 reduce: str = "sum") -> torch.Tensor:
    """d loss / d table for ``table[ids]``, in float64; ``reduce`` gives the classic mistakes:
    ``"assign"`` keeps one gradient per repeated id, ``"mean"`` averages them."""
    flat_ids = ids.reshape(-1)
    flat = grad_output.reshape(-1, grad_output.shape[-1]).double()  # (N, d)
    grad = torch.zeros(vocab_size, flat.shape[-1], dtype=torch.float64)
    if reduce == "assign":
        grad[flat_ids] = flat
        return grad
    grad.index_add_(0, flat_ids, flat)
    if reduce == "mean":
        counts = torch.bincount(flat_ids, minlength=vocab_size).clamp(min=1)
        grad = grad / counts[:, None]
    return grad


def embedding_grad(fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(ids, grad_output, vocab_size)`` -> the gradient of a loss with respect to an
    embedding table of ``vocab_size`` rows, given the ids looked up (any shape) and the
    gradient with respect to the looked-up vectors, ``(*ids.shape, d)``: row i is the sum of
    the gradients of every position where id i was looked up, zero for the ids not used."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(90)
        cases = [(torch.tensor([3, 0, 3, 9, 3]), 10, 4),
                 (torch.tensor([[1, 2, 2], [7, 1, 0]]), 8, 3),
                 (torch.tensor([[5]]), 6, 2)]
        for ids, vocab_size, d in cases:
            grad_output = torch.randn(*ids.shape, d, generator=g)
            what = _("ids {ids}, a vocabulary of {size}").format(ids=_ints(ids.tolist()),
                                                                size=_num(vocab_size))
            got = _call(f, ids.clone(), grad_output.clone(), vocab_size, what=what)
            expected = _lookup_grad(ids, grad_output, vocab_size)
            try:
                _compare(got, expected, what=what, atol=1e-5)
            except _CheckFailedError:
                if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(expected.shape):
                    got = _as_tensor(got, what=what).double()
                    counts = torch.bincount(ids.reshape(-1), minlength=vocab_size)
                    repeated = int(counts.argmax())
                    for reduce, message in (
                            ("assign", _("on {what} the row of id {id}, looked up {count} times, "
                                         "holds only one of its gradients: the gradients of "
                                         "every position that looked it up add up "
                                         "(index_add_, or the transposed one-hot product)")),
                            ("mean", _("on {what} the row of id {id}, looked up {count} times, "
                                       "holds the mean of its gradients: they add up, as in "
                                       "the product of the transposed one-hot matrix with "
                                       "grad_output"))):
                        if torch.allclose(got, _lookup_grad(ids, grad_output, vocab_size,
                                                            reduce=reduce), atol=1e-5):
                            raise _CheckFailedError(message.format(
                                what=what, id=_num(repeated),
                                count=_num(int(counts[repeated])))) from None
                raise
        return _("each row sums the gradients of the positions that looked it up; unused rows "
                 "stay at zero")
    return _run("embedding_grad", fn, body)


# --- max pooling over the real tokens -----------------------------------------------------------

def max_pooling(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(hidden, attention_mask)`` -> ``(B, d)``: for each sequence and feature, the
    largest value of ``hidden`` ``(B, L, d)`` over the real tokens (``attention_mask``
    ``(B, L)``, 1 for real tokens), padding excluded, including for features whose real
    values are all negative."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(91)
        mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]])
        hidden = torch.randn(3, 5, 4, generator=g)
        hidden[0, :3, :2] = -1.0 - hidden[0, :3, :2].abs()  # features whose real values are < 0
        hidden[0, 3:] = 5.0 + hidden[0, 3:].abs()  # padding that would win every comparison
        hidden[2, 1:] = 4.0
        expected = hidden.masked_fill(mask[..., None] == 0, float("-inf")).amax(dim=1)
        what = _("three sequences padded with {first}, {second} and {third} positions").format(
            first=_num(2), second=_num(0), third=_num(4))
        got = _call(f, hidden.clone(), mask.clone(), what=what)
        if (isinstance(got, tuple) and len(got) == 2
                and all(isinstance(part, torch.Tensor) for part in got)):
            raise _CheckFailedError(
                _("on {what} it returned two tensors, (values, indices), as torch.max(..., "
                  "dim=...) does: return the values only").format(what=what))
        try:
            _compare(got, expected, what=what)
        except _CheckFailedError:
            if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(expected.shape):
                got = _as_tensor(got, what=what).double()
                if torch.allclose(got, hidden.amax(dim=1).double()):
                    raise _CheckFailedError(
                        _("on {what} the padding positions took part: the maximum of the first "
                          "sequence comes from its [PAD] positions").format(what=what)) from None
                if torch.allclose(got, (hidden * mask[..., None]).amax(dim=1).double()):
                    raise _CheckFailedError(
                        _("on {what} multiplying by the mask puts zeros at the padding positions, "
                          "and a zero beats the negative values of the real tokens: give the "
                          "padding -inf instead (masked_fill)").format(what=what)) from None
            raise
        return _("the largest value of each feature over the real tokens; padding never wins")
    return _run("max_pooling", fn, body)
