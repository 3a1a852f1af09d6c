"""Checkers of chapter 9's transfer exercises: a new idea applied somewhere new.

* :func:`wordpiece`: WordPiece's greedy longest-match-first cut of one word.
* :func:`mlm_mask`: BERT's masked-language-model corruption (15% chosen, then 80/10/10).
* :func:`embedding_grad`: the gradient that an embedding lookup sends to its table, the
  one-hot product of section 9.2 run backwards (rows of repeated ids add up).
* :func:`left_pad`: a batch padded on the left, its mask, and positions counted from each
  sequence's first real token.
* :func:`word_vectors`: one vector per word, the mean of the vectors of its WordPiece pieces.
* :func:`bert_parameters`: the parameters of a whole BERT of any size, counted.
* :func:`apply_merges`: a word cut by byte-pair encoding, replaying the learned merges.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import torch

from ..i18n import format_integer, format_percent
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
from .ch07 import _name_mistake, _whole_number

__all__ = ["apply_merges", "bert_parameters", "embedding_grad", "left_pad", "mlm_mask",
           "word_vectors", "wordpiece"]


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


def _strings(got: object, *, what: str) -> list[str]:
    """A list (or tuple) of strings, as a list; a message otherwise."""
    if isinstance(got, tuple):
        got = list(got)
    if not isinstance(got, list) or not all(isinstance(p, str) for p in got):
        raise _CheckFailedError(_("on {what} it returned {kind}, expected a list of "
                                  "strings").format(what=what, kind=_kind(got)))
    return got


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
            got = _strings(got, what=what)
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
                 (torch.tensor([[5]]), 6, 2),
                 (torch.tensor([[1, 2, 2], [0, 1, 0]]), 8, 3)]  # ids 3 to 7 unused
        for ids, vocab_size, d in cases:
            grad_output = torch.randn(*ids.shape, d, generator=g)
            what = _("ids {ids}, a vocabulary of {size}").format(ids=_ints(ids.tolist()),
                                                                size=_num(vocab_size))
            got = _call(f, ids.clone(), grad_output.clone(), vocab_size, what=what)
            expected = _lookup_grad(ids, grad_output, vocab_size)
            if (isinstance(got, torch.Tensor) and got.dim() == 2 and got.shape[1] == d
                    and got.shape[0] != vocab_size):
                raise _CheckFailedError(
                    _("on {what} the gradient has shape {shape}, expected {expected}: the table "
                      "has one row per token of the vocabulary, even for the ids that no "
                      "position looked up (their rows stay at zero)").format(
                        what=what, shape=_shape(tuple(got.shape)),
                        expected=_shape((vocab_size, d))))
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


# --- left padding ------------------------------------------------------------------------------

def _left_padded(sequences: Sequence[Sequence[int]],
                 pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The reference: padding before the tokens, a 1/0 mask, positions from 0 at the first
    real token and 0 on the padding."""
    length = max(len(s) for s in sequences)
    ids = [[pad_id] * (length - len(s)) + list(s) for s in sequences]
    mask = [[0] * (length - len(s)) + [1] * len(s) for s in sequences]
    positions = [[0] * (length - len(s)) + list(range(len(s))) for s in sequences]
    return torch.tensor(ids), torch.tensor(mask), torch.tensor(positions)


def _integers(got: object, expected: torch.Tensor, name: str, what: str) -> torch.Tensor:
    """``got`` as a tensor of integers of the expected shape (a boolean mask reads as 1/0)."""
    got = _as_tensor(got, what=what)
    if got.shape != expected.shape:
        raise _CheckFailedError(_("on {what} {name} has shape {got}, expected {expected}").format(
            what=what, name=name, got=_shape(got.shape), expected=_shape(expected.shape)))
    if got.is_floating_point():
        raise _CheckFailedError(_("on {what} {name} has dtype {dtype}, expected integers "
                                  "(torch.long): ids and positions index embedding tables")
                                .format(what=what, name=name, dtype=got.dtype))
    return got.long()


def _first_difference(got: torch.Tensor, expected: torch.Tensor, name: str, what: str) -> None:
    wrong = (got != expected).nonzero()
    if len(wrong):
        index = tuple(wrong[0].tolist())
        raise _CheckFailedError(_("on {what} {name} at {index} is {got}, expected {expected}")
                                .format(what=what, name=name, index=_shape(index),
                                        got=_num(got[index].item()),
                                        expected=_num(expected[index].item())))


def left_pad(fn: Callable[[list[list[int]], int], tuple]) -> CheckResult:
    """Check ``fn(sequences, pad_id)`` -> ``(ids, attention_mask, position_ids)``, all
    ``(B, L)`` with ``L`` the longest sequence: the padding goes *before* the tokens, the
    mask is 1 on real tokens and 0 on padding, and the positions count 0, 1, 2, ... from each
    sequence's first real token (0 on the padding), so that a padded sequence gets the
    positions it has alone."""
    def body(f: Callable) -> str:
        cases = (([[101, 7, 8, 9, 102], [101, 5, 102], [101, 4, 4, 4, 4, 102]], 0),
                 ([[2, 11, 3], [2, 12, 13, 14, 3]], 1),
                 ([[101, 6, 102], [101, 7, 102]], 0),
                 ([[101, 6, 102]], 0))
        for sequences, pad_id in cases:
            what = _("the sequences {sequences} with pad_id = {pad}").format(
                sequences=_ints(sequences), pad=_num(pad_id))
            got = _parts(_call(f, [list(s) for s in sequences], pad_id, what=what), 3,
                         "(ids, attention_mask, position_ids)", what=what)
            ids, mask, positions = _left_padded(sequences, pad_id)
            right = torch.tensor([[*s, *[pad_id] * (ids.shape[1] - len(s))]
                                  for s in sequences])  # right padding, for the message
            got_ids = _integers(got[0], ids, "ids", what)
            if not torch.equal(got_ids, ids) and torch.equal(got_ids, right):
                raise _CheckFailedError(_("on {what} the ids are padded on the right: with left "
                                          "padding the [PAD] go before the tokens, so that "
                                          "every sequence ends in the last column").format(
                                              what=what))
            _first_difference(got_ids, ids, "ids", what)
            got_mask = _integers(got[1], mask, "attention_mask", what)
            if not torch.equal(got_mask, mask) and torch.equal(got_mask, 1 - mask):
                raise _CheckFailedError(_("on {what} the attention mask is inverted: 1 marks a "
                                          "real token, 0 the padding").format(what=what))
            _first_difference(got_mask, mask, "attention_mask", what)
            got_positions = _integers(got[2], positions, "position_ids", what)
            count = torch.arange(ids.shape[1]).expand_as(ids)
            if not torch.equal(got_positions, positions):
                if torch.equal(got_positions, count):
                    raise _CheckFailedError(_(
                        "on {what} the positions are 0, 1, 2, ... along the padded row, so the "
                        "first real token of a padded sequence is not at position 0 as it is "
                        "alone: count the positions from each sequence's first real token")
                        .format(what=what))
                if torch.equal(got_positions, mask.cumsum(1)):
                    raise _CheckFailedError(_("on {what} the positions start at 1: the first "
                                              "real token is at position 0").format(what=what))
                if torch.equal(got_positions[mask == 1], positions[mask == 1]):
                    raise _CheckFailedError(_("on {what} the real tokens have the right "
                                              "positions, but the padding should get 0")
                                            .format(what=what))
                _first_difference(got_positions, positions, "position_ids", what)
        return _("padding on the left, a 1/0 mask, and positions counted from each sequence's "
                 "first real token")
    return _run("left_pad", fn, body)


# --- one vector per word from its pieces -------------------------------------------------------

_NOT_WORDS = ("[CLS]", "[SEP]", "[PAD]")

_WORD_CASES = (
    ("[CLS]", "token", "##ization", "of", "transformers", "is", "un", "##bel", "##ie", "##va",
     "##bly", "simple", "[SEP]"),
    ("[CLS]", "i", "love", "[UNK]", "!", "[SEP]", "[PAD]", "[PAD]"),
    ("[CLS]", "play", "##ing", "[SEP]", "hug", "##e", "##ly", "[SEP]", "[PAD]"),
)


def _word_groups(tokens: Sequence[str], *, specials: bool = False,
                 pieces_are_words: bool = False, unk: bool = True) -> list[list[int]]:
    """The positions of each word's pieces; the flags give the classic mistakes."""
    groups: list[list[int]] = []
    for i, token in enumerate(tokens):
        if (token in _NOT_WORDS and not specials) or (token == "[UNK]" and not unk):
            continue
        if token.startswith("##") and groups and not pieces_are_words:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _pool(hidden: torch.Tensor, groups: list[list[int]], how: str = "mean") -> torch.Tensor:
    rows = [hidden[group] for group in groups]
    pooled = {"mean": [r.mean(0) for r in rows], "sum": [r.sum(0) for r in rows],
              "first": [r[0] for r in rows], "last": [r[-1] for r in rows],
              "max": [r.amax(0) for r in rows]}[how]
    return torch.stack(pooled) if pooled else hidden.new_zeros(0, hidden.shape[-1])


def word_vectors(fn: Callable[[torch.Tensor, list[str]], torch.Tensor]) -> CheckResult:
    """Check ``fn(hidden, tokens)`` -> ``(W, d)``: one vector per word of a WordPiece
    sequence, the mean of the vectors of its pieces. ``hidden`` is ``(L, d)`` and ``tokens``
    the ``L`` tokens; a token that starts with ``##`` continues the word before it, any other
    token (punctuation and ``[UNK]`` included) starts a word, and ``[CLS]``, ``[SEP]``,
    ``[PAD]`` are not words."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(93)
        for tokens in _WORD_CASES:
            hidden = torch.randn(len(tokens), 4, generator=g, dtype=torch.float64)
            groups = _word_groups(tokens)
            expected = _pool(hidden, groups)
            what = _("the tokens {tokens}").format(tokens=_pieces_text(tokens))
            got = _call(f, hidden.clone().float(), list(tokens), what=what)
            if isinstance(got, torch.Tensor) and got.ndim == 2 and got.shape[0] != len(groups):
                for wrong, message in (
                        (_word_groups(tokens, specials=True),
                         _("on {what} it returned {got} vectors, expected {expected}: [CLS], "
                           "[SEP] and [PAD] are not words, leave them out")),
                        (_word_groups(tokens, pieces_are_words=True),
                         _("on {what} it returned {got} vectors, expected {expected}: a piece "
                           "that starts with ## continues the word before it, it is not a "
                           "word of its own")),
                        (_word_groups(tokens, unk=False),
                         _("on {what} it returned {got} vectors, expected {expected}: [UNK] "
                           "stands for a whole word that could not be spelled, so it is a "
                           "word"))):
                    if len(wrong) != len(groups) and got.shape[0] == len(wrong):
                        raise _CheckFailedError(message.format(what=what,
                                                               got=_num(got.shape[0]),
                                                               expected=_num(len(groups))))
            _name_mistake(got, expected, [
                (_pool(hidden, groups, "first"),
                 _("on {what} each word gets the vector of its first piece: average all its "
                   "pieces")),
                (_pool(hidden, groups, "last"),
                 _("on {what} each word gets the vector of its last piece: average all its "
                   "pieces")),
                (_pool(hidden, groups, "sum"),
                 _("on {what} the pieces of a word are summed: divide by their number, so "
                   "that a word's vector does not grow with the number of its pieces")),
                (_pool(hidden, groups, "max"),
                 _("on {what} each feature takes the largest value over the pieces: the "
                   "exercise asks for their mean")),
            ], what)
            _compare(got, expected, what=what, atol=1e-5)
        return _("one vector per word, the mean of its pieces; [CLS], [SEP] and [PAD] left "
                 "out")
    return _run("word_vectors", fn, body)


# --- the parameters of a whole BERT -------------------------------------------------------------

def _bert_count(vocab_size: int, d_model: int, num_heads: int, num_layers: int, d_ff: int,
                max_len: int, type_vocab_size: int) -> int:
    """The parameters of the package's BertEncoder (pooler included), counted on the meta
    device, without allocating them."""
    from ..bert import BertEncoder

    with torch.device("meta"):
        model = BertEncoder(vocab_size, d_model, num_heads, num_layers, d_ff, max_len=max_len,
                            type_vocab_size=type_vocab_size)
    return sum(p.numel() for p in model.parameters())


def _explain_bert_count(got: int, right: int, vocab_size: int, d: int, h: int, n: int,
                        d_ff: int, max_len: int, types: int, what: str) -> None:
    """Name the classic mistakes of a whole-model count."""
    layer = 4 * (d * d + d) + 2 * d * d_ff + d_ff + d + 4 * d
    biases = n * (4 * d + d_ff + d) + d
    mistakes = [
        (right - (d * d + d), _("on {what} got {got}, expected {expected}: the pooler is "
                                "missing (a d_model x d_model linear layer on the [CLS] "
                                "vector, with its bias)")),
        (right - max_len * d, _("on {what} got {got}, expected {expected}: the table of "
                                "learned positions is missing (max_len rows of d_model)")),
        (right - types * d, _("on {what} got {got}, expected {expected}: the table of "
                              "segments is missing (type_vocab_size rows of d_model)")),
        (right - (max_len + types) * d,
         _("on {what} got {got}, expected {expected}: the tables of positions and segments "
           "are missing")),
        (right - 2 * d, _("on {what} got {got}, expected {expected}: the LayerNorm after the "
                          "three embeddings is missing")),
        (right - 2 * d - n * 4 * d, _("on {what} got {got}, expected {expected}: the "
                                      "LayerNorms are missing (a gamma and a beta of d_model "
                                      "entries each, two per layer and one after the "
                                      "embeddings)")),
        (right - biases, _("on {what} got {got}, expected {expected}: the biases of the "
                           "linear layers are missing")),
        (right - (n - 1) * layer, _("on {what} got {got}, expected {expected}: the encoder "
                                    "layers are counted once; there are num_layers of them, "
                                    "each with its own weights")),
        (right + n * (h - 1) * 4 * (d * d + d),
         _("on {what} got {got}, expected {expected}: the attention is counted once per head, "
           "but the heads share the d_model x d_model projections")),
        (vocab_size * d, _("on {what} got {got}, expected {expected}: that is the word "
                           "embedding table alone; count the whole model")),
    ]
    values = [value for value, _message in mistakes]
    for value, message in mistakes:
        if value != right and got == value and values.count(value) == 1:  # not ambiguous
            raise _CheckFailedError(message.format(what=what, got=format_integer(got),
                                                   expected=format_integer(right)))


def bert_parameters(fn: Callable[..., int]) -> CheckResult:
    """Check ``fn(vocab_size, d_model, num_heads, num_layers, d_ff, max_len,
    type_vocab_size)`` -> the number of parameters of ``tc.BertEncoder`` with those sizes,
    pooler included: three embedding tables and their LayerNorm, ``num_layers`` post-norm
    encoder layers, and the pooler. The number of heads changes nothing."""
    def body(f: Callable) -> str:
        cases = ((30522, 384, 12, 6, 1536, 512, 2), (30522, 768, 12, 12, 3072, 512, 2),
                 (100, 8, 2, 2, 16, 32, 2), (100, 8, 4, 2, 16, 32, 2), (50, 6, 3, 3, 10, 20, 1))
        first_wrong = None
        for v, d, h, n, d_ff, max_len, types in cases:
            what = _("V = {v}, d_model = {d}, {h} heads, {n} layers, d_ff = {d_ff}, max_len = "
                     "{max_len}, type_vocab_size = {types}").format(
                v=_num(v), d=_num(d), h=_num(h), n=_num(n), d_ff=_num(d_ff),
                max_len=_num(max_len), types=_num(types))
            got = _whole_number(_call(f, v, d, h, n, d_ff, max_len, types, what=what),
                                what=what)
            right = _bert_count(v, d, h, n, d_ff, max_len, types)
            # A mistake may be ambiguous on one shape (2 d is the segments' table and the
            # LayerNorm when type_vocab_size = 2): name it on the first shape that tells.
            _explain_bert_count(got, right, v, d, h, n, d_ff, max_len, types, what)
            if got != right and first_wrong is None:
                first_wrong = _("on {what} got {got}, expected {expected} (off by {error})").format(
                    what=what, got=format_integer(got), expected=format_integer(right),
                    error=format_integer(got - right))
        if first_wrong is not None:
            raise _CheckFailedError(first_wrong)
        return _("(V + max_len + type_vocab_size) d + 2 d for the embeddings, num_layers "
                 "encoder layers, d^2 + d for the pooler; the heads change nothing")
    return _run("bert_parameters", fn, body)


# --- byte-pair encoding: applying the merges --------------------------------------------------

_END = "</w>"

# Merges in the order they were learned: ("e", "r") before ("r", "</w>") makes the order
# matter for "lower", ("a", "a") makes it matter whether a pair is merged from the left,
# "banana" holds the same pair twice, and "newer" cuts differently from a greedy longest-match
# over the symbols the merges make.
_MERGES = (("e", "r"), ("a", "a"), ("a", "n"), ("l", "o"), ("r", _END), ("lo", "w"),
           ("er", _END), ("n", "a"), ("an", "a"), ("w", "er" + _END), ("low", "er" + _END),
           ("a", _END), ("e", "w"), ("n", "ew"), ("s", _END))
_BPE_WORDS = ("lower", "low", "newer", "banana", "news", "aaa", "owl", "q")


def _merge_pair(symbols: list[str], a: str, b: str) -> list[str]:
    merged, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            merged.append(a + b)
            i += 2
        else:
            merged.append(symbols[i])
            i += 1
    return merged


def _apply_merges(word: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """The reference: the characters and </w>, then every merge in the order learned."""
    symbols = [*word, _END]
    for a, b in merges:
        symbols = _merge_pair(symbols, a, b)
    return symbols


def _first_occurrences(word: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """A classic mistake: each merge applied to the first occurrence of its pair only."""
    symbols = [*word, _END]
    for a, b in merges:
        at = next((i for i in range(len(symbols) - 1)
                   if symbols[i] == a and symbols[i + 1] == b), None)
        if at is not None:
            symbols = [*symbols[:at], a + b, *symbols[at + 2:]]
    return symbols


def _longest_symbols(word: str, merges: Sequence[tuple[str, str]]) -> list[str]:
    """A classic mistake: the longest known symbol first, from the left, as WordPiece cuts."""
    known = {a + b for a, b in merges} | set(word) | {_END}
    text, symbols, start = word + _END, [], 0
    while start < len(text):
        end = next((e for e in range(len(text), start, -1) if text[start:e] in known),
                   start + 1)
        symbols.append(text[start:end])
        start = end
    return symbols


def _explain_merges(got: list[str], expected: list[str], word: str,
                    merges: Sequence[tuple[str, str]]) -> str:
    shown = dict(word=repr(word), got=_pieces_text(got), expected=_pieces_text(expected))
    if "".join(got) == word:
        return _("on the word {word} it returned {got}, expected {expected}: the word "
                 "starts as its characters followed by the end-of-word symbol </w>, which the "
                 "merges use").format(**shown)
    if got == _apply_merges(word, tuple(reversed(merges))):
        return _("on the word {word} it returned {got}, expected {expected}: the merges are "
                 "applied from the last to the first; replay them in the order they were "
                 "learned").format(**shown)
    if got == _first_occurrences(word, merges):
        return _("on the word {word} it returned {got}, expected {expected}: each merge "
                 "replaces every occurrence of its pair in the word, not only the first")\
            .format(**shown)
    if got == _longest_symbols(word, merges):
        return _("on the word {word} it returned {got}, expected {expected}: byte-pair "
                 "encoding does not look for the longest symbol it knows, as WordPiece "
                 "does; it replays the merges, in the order they were learned").format(**shown)
    if "".join(got) == word + _END:
        return _("on the word {word} it returned {got}, expected {expected}: replay every "
                 "merge, in the order learned, and merge every occurrence of its pair, from "
                 "left to right").format(**shown)
    return _("on the word {word} it returned {got}, expected {expected}").format(**shown)


def apply_merges(fn: Callable[[str, list[tuple[str, str]]], list[str]]) -> CheckResult:
    """Check ``fn(word, merges)`` -> the byte-pair-encoding symbols of ``word``: its
    characters followed by ``"</w>"``, then each merge ``(a, b)`` of ``merges``, in the order
    they were learned, replacing every adjacent ``a, b`` (from the left) by ``a + b``."""
    def body(f: Callable) -> str:
        for word in _BPE_WORDS:
            what = _("the word {word}").format(word=repr(word))
            got = _call(f, word, [tuple(m) for m in _MERGES], what=what)
            got = _strings(got, what=what)
            expected = _apply_merges(word, _MERGES)
            if got != expected:
                raise _CheckFailedError(_explain_merges(got, expected, word, _MERGES))
        return _("the characters and </w>, then every merge in the order learned")
    return _run("apply_merges", fn, body)
