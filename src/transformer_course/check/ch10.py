"""Checkers of chapter 10's transfer exercises: a new idea applied somewhere new.

* :func:`label_smoothing_loss`: the cross-entropy against smoothed targets, written by hand
  and compared with ``F.cross_entropy(..., label_smoothing=epsilon)``;
* :func:`smoothing_floor`: the lowest loss label smoothing lets any prediction reach;
* :func:`sample_next`: draw the next token with a temperature, top-k and top-p (nucleus)
  sampling, as a language model's ``generate`` does;
* :func:`beam_search`: beam search over a decoder-only model's own continuations;
* :func:`cached_self_attention`: one layer's masked self-attention with its own KV cache;
* :func:`kv_cache_bytes`: the memory of a KV cache, with grouped-query attention;
* :func:`score_endings`: the log-probability of several endings of one prompt, the prompt
  run once with a cache.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch
import torch.nn.functional as F

from .._checks import check_int, check_real
from ..i18n import N_, format_number
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
    _number,
    _real,
    _run,
    _shape,
)

__all__ = ["beam_search", "cached_self_attention", "kv_cache_bytes", "label_smoothing_loss",
           "sample_next", "score_endings", "smoothing_floor"]


def _close(got: torch.Tensor, other: torch.Tensor, atol: float = 1e-5) -> bool:
    """Whether ``got`` equals ``other`` (same shape, finite, within ``atol``)."""
    return (got.shape == other.shape and bool(torch.isfinite(got).all())
            and torch.allclose(got.double(), other.double(), atol=atol, rtol=1e-5))


# --- label smoothing ----------------------------------------------------------------------------

def _smoothed(logits: torch.Tensor, targets: torch.Tensor, epsilon: float, *,
              others_only: bool = False, keep: float | None = None) -> torch.Tensor:
    """Per-example cross-entropy against smoothed targets, in float64.

    ``others_only`` spreads ``epsilon`` over the ``V - 1`` wrong classes (a common variant,
    not PyTorch's); ``keep`` overrides the weight of the true class (``1 - epsilon`` with
    the uniform part forgotten)."""
    logp = torch.log_softmax(logits.double(), dim=-1)  # (N, V)
    vocab = logits.shape[-1]
    one_hot = F.one_hot(targets, vocab).double()  # (N, V)
    if others_only:
        q = (1 - epsilon) * one_hot + epsilon / (vocab - 1) * (1 - one_hot)
    elif keep is not None:
        q = keep * one_hot
    else:
        q = (1 - epsilon) * one_hot + epsilon / vocab
    return -(q * logp).sum(-1)  # (N,)


def _explain_smoothing(got: torch.Tensor, logits: torch.Tensor, targets: torch.Tensor,
                       epsilon: float, what: str) -> None:
    """Name the typical label-smoothing mistakes before the generic comparison."""
    per_example = _smoothed(logits, targets, epsilon)
    count = logits.shape[0]
    if not bool(torch.isfinite(got).all()):
        raise _CheckFailedError(
            _("on {what} the loss is not finite: log(softmax(logits)) underflows to log 0 = "
              "-inf for large logits; use torch.log_softmax, which subtracts the maximum "
              "first").format(what=what))
    if got.shape == per_example.shape and got.numel() > 1:
        raise _CheckFailedError(
            _("on {what} you returned one loss per example, shape {shape}: return their mean, "
              "a single number").format(what=what, shape=_shape(got.shape)))
    if got.numel() != 1:
        return
    value = got.reshape(())
    candidates = [
        (F.cross_entropy(logits.double(), targets).reshape(()),
         _("on {what} you returned the plain cross-entropy: epsilon = {epsilon} was ignored; "
           "the target puts 1 - epsilon on the true class and spreads epsilon over all "
           "classes")),
        (_smoothed(logits, targets, epsilon, others_only=True).mean(),
         _("on {what} epsilon is spread over the V - 1 wrong classes only; PyTorch's "
           "convention (and the exercise's) spreads epsilon / V over all V classes, the true "
           "one included: q = (1 - epsilon) one_hot + epsilon / V")),
        (_smoothed(logits, targets, epsilon, keep=1 - epsilon).mean(),
         _("on {what} only the true class's share 1 - epsilon is counted; add the uniform "
           "part: epsilon times the average of -log p over all V classes")),
        (per_example.sum(),
         _("on {what} you summed the losses of the {count} examples; take their mean")),
    ]
    for wrong, message in candidates:
        right = per_example.mean()
        if abs(float(wrong) - float(right)) > 1e-6 and abs(float(value) - float(wrong)) < 1e-5:
            raise _CheckFailedError(message.format(what=what, epsilon=_num(epsilon),
                                                   count=_num(count)))


def label_smoothing_loss(fn: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
                         ) -> CheckResult:
    """Check ``fn(logits, targets, epsilon)`` -> the mean cross-entropy against smoothed
    targets ``q = (1 - epsilon) one_hot(targets) + epsilon / V``, for ``logits (N, V)`` and
    integer ``targets (N,)``: a scalar tensor equal to
    ``F.cross_entropy(logits, targets, label_smoothing=epsilon)``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(1001)
        cases = [
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.0), n=_num(6), v=_num(5)),
             torch.randn(6, 5, generator=g) * 2, torch.randint(0, 5, (6,), generator=g), 0.0),
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.1), n=_num(6), v=_num(5)),
             torch.randn(6, 5, generator=g) * 2, torch.randint(0, 5, (6,), generator=g), 0.1),
            (_("epsilon = {epsilon}, {n} examples, {v} classes").format(
                epsilon=_num(0.3), n=_num(8), v=_num(11)),
             torch.randn(8, 11, generator=g) * 3, torch.randint(0, 11, (8,), generator=g),
             0.3),
            (_("logits as large as {size} (does log(softmax) underflow?)").format(
                size=_num(200)),
             torch.randn(4, 7, generator=g) * 200, torch.randint(0, 7, (4,), generator=g),
             0.1),
        ]
        for what, logits, targets, epsilon in cases:
            expected = F.cross_entropy(logits.double(), targets, label_smoothing=epsilon)
            got = _as_tensor(_call(f, logits.clone(), targets.clone(), epsilon, what=what),
                             what=what)
            _explain_smoothing(got.double(), logits, targets, epsilon, what)
            if got.numel() == 1:
                got = got.reshape(())
            _compare(got, expected, what=what, atol=1e-4)
        return _("equals F.cross_entropy(..., label_smoothing=epsilon): 1 - epsilon on the "
                 "true class, epsilon / V on every class, averaged over the examples")
    return _run("label_smoothing_loss", fn, body)


# --- the floor of label smoothing -------------------------------------------------------------

def _floor(epsilon: float, vocab: int, *, others_only: bool = False) -> float:
    """The smallest cross-entropy against the smoothed target ``q`` over ``vocab`` classes:
    the entropy of ``q``, reached at ``p = q`` (``others_only``: epsilon spread over the
    ``vocab - 1`` wrong classes, a common variant, not PyTorch's)."""
    rest = epsilon / (vocab - 1) if others_only else epsilon / vocab
    top = 1 - epsilon if others_only else 1 - epsilon + rest
    spread = (vocab - 1) * rest * math.log(rest) if rest > 0 else 0.0
    return -top * math.log(top) - spread


# (epsilon, num_classes): no smoothing, the original Transformer's 0.1, two classes, a large
# vocabulary (every typical mistake gives a different number on the 0.1 cases)
_FLOOR_CASES = [(0.0, 5), (0.1, 10), (0.1, 96), (0.25, 2), (0.2, 32000)]


def _as_real(got: object, *, what: str) -> float:
    """A real number from a float, an int or a one-element real tensor."""
    value = _number(got, what=what)
    if not math.isfinite(float(value)):
        raise _CheckFailedError(_("on {what} got {value}, which is not a finite number")
                                .format(what=what, value=_num(float(value))))
    return float(value)


def smoothing_floor(fn: Callable[[float, int], float], *, epsilon: object = None,
                    num_classes: object = None) -> CheckResult:
    """Check ``fn(epsilon, num_classes)`` -> the smallest cross-entropy that any prediction
    ``p`` can reach against the smoothed target ``q = (1 - epsilon) one_hot + epsilon / V``
    (PyTorch's ``label_smoothing``) over ``V = num_classes`` classes: the entropy of ``q``,
    reached at ``p = q``.

    Args:
        fn: the reader's function.
        epsilon, num_classes: one more case to check, besides the checker's own (give both):
            ``0 <= epsilon < 1`` and an int ``num_classes >= 2``.

    Raises:
        TypeError, ValueError: naming ``epsilon`` or ``num_classes`` when they are not a
            smoothing and a number of classes.
    """
    cases = list(_FLOOR_CASES)
    if epsilon is not None or num_classes is not None:
        if epsilon is None or num_classes is None:
            raise TypeError("epsilon and num_classes go together: give both or neither")
        smoothing = check_real("epsilon", epsilon, low=0.0, high=1.0, high_open=True)
        classes = check_int("num_classes", num_classes)
        if classes < 2:
            raise ValueError(f"num_classes must be an int >= 2, got {num_classes!r}")
        cases.append((smoothing, classes))

    def body(f: Callable) -> str:
        for eps, vocab in cases:
            what = _("epsilon = {epsilon}, {v} classes").format(epsilon=_num(eps), v=_num(vocab))
            got = _as_real(_call(f, eps, vocab, what=what), what=what)
            expected = _floor(eps, vocab)
            if abs(got - expected) <= 1e-5 * max(1.0, abs(expected)):
                continue
            facts = dict(what=what, got=_num(got), expected=_num(expected))
            top = 1 - eps + eps / vocab
            mistakes = [
                (0.0, _("on {what} got 0: with label smoothing no prediction reaches a loss of "
                        "0; the best one predicts the smoothed target q itself")),
                (-math.log(1 - eps), _("on {what} got {got} = -log(1 - epsilon): the target "
                                       "is not 1 - epsilon on the true class alone; the loss "
                                       "-sum_j q_j log p_j counts every class, and is lowest "
                                       "at p = q")),
                (-math.log(top), _("on {what} got {got} = -log q_y, the true class's term "
                                   "only: the loss -sum_j q_j log p_j also counts the V - 1 "
                                   "other classes, each with q_j = epsilon / V")),
                (_floor(eps, vocab, others_only=True),
                 _("on {what} got {got}: epsilon is spread over the V - 1 wrong classes; "
                   "PyTorch's label smoothing gives epsilon / V to every class, the true one "
                   "included")),
            ]
            for wrong, message in mistakes:
                if abs(wrong - expected) > 1e-6 and abs(got - wrong) <= 1e-5 * max(1.0, wrong):
                    raise _CheckFailedError(message.format(**facts))
            raise _CheckFailedError(_("on {what} got {got}, expected {expected}").format(**facts))
        return _("the entropy of the smoothed target: the loss is lowest when the prediction "
                 "is the target q itself, 1 - epsilon + epsilon / V on the true class and "
                 "epsilon / V on each other one")
    return _run("smoothing_floor", fn, body)


# --- nucleus (top-p) sampling: the reference --------------------------------------------------

def _top_p(logits: torch.Tensor, p: float, *, include_crossing: bool = True,
           renormalise: bool = True, sort: bool = True) -> torch.Tensor:
    """The probabilities that nucleus (top-p) sampling keeps, in float64: the smallest set of
    most likely tokens whose total reaches ``p``, the token that crosses ``p`` included.

    With a flag off, a typical mistake. The checkers keep this float64 reference of their
    own; ``tests/unit/test_check_ch10.py`` compares it with
    :func:`transformer_course.generation.next_token_probabilities`."""
    probs = torch.softmax(logits.double(), dim=-1)  # (..., V)
    if sort:
        ordered, order = probs.sort(dim=-1, descending=True)
    else:
        ordered, order = probs, torch.arange(probs.shape[-1]).expand_as(probs)
    total = ordered.cumsum(dim=-1)
    before = total - ordered  # the mass of the tokens ranked before each one
    keep_sorted = before < p if include_crossing else total < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True) if renormalise else kept


# --- sampling the next token: temperature, top-k, top-p ------------------------------------

def _top_k_mask(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Where the ``k`` largest logits of each row are (ties with the k-th kept)."""
    if k >= logits.shape[-1]:
        return torch.ones_like(logits, dtype=torch.bool)
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits >= kth


def _sampling_probs(logits: torch.Tensor, temperature: float, top_k: int | None = None,
                    top_p: float | None = None, *, mistake: str | None = None
                    ) -> torch.Tensor:
    """The distribution the next token is drawn from, in float64 (the reference).

    Temperature first, then top-k, then top-p on the renormalised top-k distribution,
    the order of Hugging Face's ``generate``; temperature 0 is the argmax. ``mistake``
    names a typical wrong variant, used to say what went wrong. The same distribution as
    :func:`transformer_course.generation.next_token_probabilities`, in float64.
    """
    z = logits.double()
    if temperature == 0.0:
        return F.one_hot(z.argmax(-1), z.shape[-1]).double()
    if mistake == "multiplied":
        z = z * temperature
    elif mistake != "no temperature":
        z = z / temperature
    if top_k is not None and mistake != "no top-k":
        z = z.masked_fill(~_top_k_mask(z, top_k + (1 if mistake == "k + 1" else 0)),
                          float("-inf"))
    probs = torch.softmax(z, dim=-1)
    if top_p is not None and mistake != "no top-p":
        if mistake == "p before temperature":
            base = torch.softmax(logits.double(), dim=-1)
        elif mistake == "p before top-k":
            base = torch.softmax(logits.double() / temperature, dim=-1)
        else:
            base = probs
        keep = _top_p(base.log(), top_p, renormalise=False,
                      include_crossing=mistake != "crossing left out",
                      sort=mistake != "unsorted") > 0
        probs = probs * keep
        probs = probs / probs.sum(-1, keepdim=True)
    return probs


_SAMPLING_MISTAKES = {  # each case names the first of these that the draws fit
    "p before top-k": N_("top-p is computed before top-k: cut to the k most likely tokens "
                         "first, renormalise, then keep the nucleus of that distribution"),
    "p before temperature": N_("top-p is computed on the softmax of the raw logits: apply "
                               "the temperature first, then cut the tempered distribution"),
    "multiplied": N_("the logits are multiplied by the temperature: divide them, z / T, so "
                     "that a low temperature sharpens the distribution"),
    "no temperature": N_("the temperature is ignored: divide the logits by T before the "
                         "softmax"),
    "no top-k": N_("top_k is ignored: keep only the k largest logits, the others get "
                   "probability 0"),
    "k + 1": N_("top-k keeps k + 1 tokens: keep exactly the k largest logits"),
    "no top-p": N_("top_p is ignored: keep the smallest set of most likely tokens whose "
                   "probability reaches p"),
    "crossing left out": N_("the token that makes the total reach p is left out: the "
                            "nucleus includes it (keep a token while the probability of the "
                            "tokens before it is below p)"),
    "unsorted": N_("the cumulative sum of top-p runs in vocabulary order: sort the "
                   "probabilities, most likely first, before adding up"),
}

_DRAWS = 4000  # draws per distribution: a frequency is then within about 0.8 % of its p


def _sampling_cases() -> list[tuple[str, torch.Tensor, dict]]:
    # Logits with clear gaps: every cumulative probability stays at least 0.01 away from p,
    # and each typical mistake first shows in a case where it draws other tokens.
    base = torch.tensor([[2.0, 0.3, 3.1, -1.0, 1.2, 2.6, -0.4, 0.8]])
    # At T = 2 the nucleus of p = 0.8 holds 5 tokens, 4 without the crossing one, 2 when
    # cut before the temperature and 1 when the temperature multiplies.
    tempered = torch.tensor([[0.1, 2.5, -0.5, 0.5, 3.5, 0.0, 0.3, -0.2]])
    # Top-4 then p = 0.9 keeps 2 tokens; p = 0.9 before top-4 keeps 3.
    cut = torch.tensor([[-0.7, 2.6, -0.7, 3.0, -0.2, 0.9, -0.7, -0.7]])
    rows = torch.tensor([[-2.5, -1.0, -0.9, -2.3, -0.2, 0.1, 0.9, 1.9, 3.1, -1.1],
                         [-0.7, 2.3, 0.7, -0.4, 0.4, 1.0, 0.5, 1.4, -1.5, 1.3],
                         [1.3, 0.1, 2.4, -0.6, 0.2, 0.8, -2.1, 0.8, -1.5, -0.1]])
    cases = [
        ({"temperature": 0.0}, base),
        ({"temperature": 0.0, "top_k": 3, "top_p": 0.5}, rows),
        ({"temperature": 1.0}, base),
        ({"temperature": 0.5}, base),
        ({"temperature": 2.0}, base),
        ({"temperature": 1.0, "top_k": 3}, base),
        ({"temperature": 1.0, "top_p": 0.8}, base),
        ({"temperature": 2.0, "top_p": 0.8}, tempered),
        ({"temperature": 1.0, "top_k": 4, "top_p": 0.9}, cut),
        ({"temperature": 0.7, "top_k": 4, "top_p": 0.7}, base),
        ({"temperature": 1.3, "top_k": 6, "top_p": 0.75}, rows),
        ({"temperature": 1.0, "top_k": 20, "top_p": 1.0}, rows),
    ]
    named = []
    for options, logits in cases:
        parts = [_("T = {t}").format(t=_num(options["temperature"]))]
        if "top_k" in options:
            parts.append(_("top-k = {k}").format(k=_num(options["top_k"])))
        if "top_p" in options:
            parts.append(_("top-p = {p}").format(p=_num(options["top_p"])))
        what = _("{settings}, {rows} × {v} logits").format(
            settings=", ".join(parts), rows=_num(logits.shape[0]), v=_num(logits.shape[1]))
        named.append((what, logits, options))
    return named


def _draw_ids(got: object, rows: int, *, what: str) -> torch.Tensor:
    """``got`` as ``(rows,)`` token ids."""
    got = _as_tensor(got, what=what)
    if got.is_floating_point() or got.dtype == torch.bool:
        raise _CheckFailedError(
            _("on {what} the dtype is {dtype}: return token ids (integers, torch.long), one "
              "per row, not probabilities").format(what=what, dtype=got.dtype))
    if got.shape == (rows, 1):
        raise _CheckFailedError(
            _("on {what} the shape is {got}: return one id per row, shape {expected} "
              "(squeeze the last dimension)").format(what=what, got=_shape(got.shape),
                                                     expected=_shape((rows,))))
    if got.shape != (rows,):
        raise _CheckFailedError(
            _("on {what} the shape is {got}, expected {expected}: one id per row of logits")
            .format(what=what, got=_shape(got.shape), expected=_shape((rows,))))
    return got.to(torch.long)


def _frequencies(ids: torch.Tensor, rows: int, vocab: int, *, what: str) -> torch.Tensor:
    """``(rows, V)`` frequencies of the ids drawn for each row (``_DRAWS`` draws a row)."""
    if bool(((ids < 0) | (ids >= vocab)).any()):
        bad = int(ids[(ids < 0) | (ids >= vocab)][0])
        raise _CheckFailedError(
            _("on {what} it drew id {id}, outside the vocabulary 0..{last}")
            .format(what=what, id=_num(bad), last=_num(vocab - 1)))
    per_row = ids.view(rows, _DRAWS)
    counts = torch.stack([torch.bincount(r, minlength=vocab) for r in per_row])
    return counts.double() / _DRAWS


def _agrees(freq: torch.Tensor, probs: torch.Tensor) -> bool:
    """Whether observed frequencies fit ``probs``: no draw where ``p = 0``, every token
    with ``p >= 1 %`` drawn, every frequency within five standard deviations."""
    if bool(((probs == 0) & (freq > 0)).any()) or bool(((probs >= 0.01) & (freq == 0)).any()):
        return False
    spread = 5 * (probs * (1 - probs) / _DRAWS).sqrt() + 2 / _DRAWS
    return bool(((freq - probs).abs() <= spread).all())


def _explain_sampling(freq: torch.Tensor, logits: torch.Tensor, options: dict,
                      expected: torch.Tensor, what: str) -> None:
    """Name the typical sampling mistake that the frequencies fit, or say what differs."""
    args = (options["temperature"], options.get("top_k"), options.get("top_p"))
    for mistake, message in _SAMPLING_MISTAKES.items():
        variant = _sampling_probs(logits, *args, mistake=mistake)
        if not torch.allclose(variant, expected, atol=0.02) and _agrees(freq, variant):
            raise _CheckFailedError(_("on {what} {mistake}").format(what=what,
                                                                  mistake=_(message)))
    drawn = (expected == 0) & (freq > 0)
    if bool(drawn.any()):
        row, token = (int(i) for i in drawn.nonzero()[0])
        raise _CheckFailedError(
            _("on {what} row {row} drew token {token}, whose probability should be 0 after "
              "the temperature, top-k and top-p cuts").format(
                what=what, row=_num(row), token=_num(token)))
    missed = (expected >= 0.01) & (freq == 0)
    if bool(missed.any()):
        row, token = (int(i) for i in missed.nonzero()[0])
        raise _CheckFailedError(
            _("on {what} row {row} never drew token {token} in {draws} draws, though its "
              "probability is {p}").format(what=what, row=_num(row), token=_num(token),
                                           draws=_num(_DRAWS),
                                           p=format_number(float(expected[row, token]), 3)))
    row, token = (int(i) for i in torch.unravel_index((freq - expected).abs().argmax(),
                                                      freq.shape))
    raise _CheckFailedError(
        _("on {what} row {row} drew token {token} with frequency {f}, expected about {p}: "
          "the draws do not follow the distribution").format(
            what=what, row=_num(row), token=_num(token),
            f=format_number(float(freq[row, token]), 3),
            p=format_number(float(expected[row, token]), 3)))


def sample_next(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None)`` ->
    ``(B,)`` token ids drawn from ``(B, V)`` logits: the softmax of ``logits / temperature``
    (temperature 0: the argmax, greedy decoding), cut to the ``top_k`` largest logits, then
    to the nucleus (the smallest set of most likely tokens whose probability reaches
    ``top_p``, the crossing token included) of that renormalised distribution, drawn with
    ``generator``.

    The checker draws 4000 times from each distribution: no token outside the cuts may
    come out, every token of probability 1 % or more must, and every frequency must be
    within five standard deviations of its probability."""
    def body(f: Callable) -> str:
        for what, logits, options in _sampling_cases():
            rows, vocab = logits.shape
            expected = _sampling_probs(logits, **options)  # (rows, V)
            many = logits.repeat_interleave(_DRAWS, dim=0)  # (rows * draws, V)
            given = many.clone()
            generator = torch.Generator().manual_seed(7)
            got = _call(lambda x, o=options, g=generator: f(x, generator=g, **o), many,
                        what=what)
            if not torch.equal(many, given):
                raise _CheckFailedError(
                    _("on {what} your function changed the logits it was given (an in-place "
                      "operation such as /=): work on a copy").format(what=what))
            ids = _draw_ids(got, rows * _DRAWS, what=what)
            if options["temperature"] == 0.0:
                greedy = logits.argmax(-1).repeat_interleave(_DRAWS)
                if not torch.equal(ids, greedy):
                    raise _CheckFailedError(
                        _("on {what} the ids are not the argmax of each row: temperature 0 "
                          "is greedy decoding, whatever top_k and top_p say")
                        .format(what=what))
                continue
            freq = _frequencies(ids, rows, vocab, what=what)
            if not _agrees(freq, expected):
                _explain_sampling(freq, logits, options, expected, what)
        what = _("two calls with generators seeded alike")
        logits = torch.randn(64, 12, generator=torch.Generator().manual_seed(1004))
        first, second = (
            _draw_ids(_call(lambda x: f(x, temperature=1.0, generator=torch.Generator()
                                        .manual_seed(11)), logits.clone(), what=what),
                      64, what=what) for _ in range(2))
        if not torch.equal(first, second):
            raise _CheckFailedError(
                _("two calls with generators seeded alike drew different tokens: draw with "
                  "the generator argument (torch.multinomial(probs, 1, generator=generator))"))
        what = _("no generator given (generator=None)")
        _draw_ids(_call(lambda x: f(x, temperature=1.0), logits.clone(), what=what), 64,
                  what=what)
        return _("temperature, then top-k, then top-p: 4,000 draws per case follow the "
                 "distribution, nothing outside the cuts, and a seeded generator repeats "
                 "its draws")
    return _run("sample_next", fn, body)


# --- beam search over a language model's own continuations ----------------------------------

def _beam_reference(model: torch.nn.Module, prompt: torch.Tensor, beam_size: int, steps: int,
                    *, mistake: str | None = None) -> torch.Tensor:
    """Beam search for a decoder-only model: ``(1, L0 + steps)``, the prompt followed by the
    continuation of highest total log-probability among the ``beam_size`` kept at each step.
    ``mistake`` names a typical wrong variant."""
    if mistake == "per prefix":  # K greedy paths from the K best first tokens
        first = torch.log_softmax(model(prompt)[:, -1].double(), dim=-1)[0].topk(beam_size)
        seqs = torch.cat([prompt.expand(beam_size, -1), first.indices[:, None]], dim=1)
        scores = first.values
        for _step in range(steps - 1):
            best = torch.log_softmax(model(seqs)[:, -1].double(), dim=-1).max(dim=-1)
            scores = scores + best.values
            seqs = torch.cat([seqs, best.indices[:, None]], dim=1)
        return seqs[scores.argmax()][None]
    seqs, scores = prompt, torch.zeros(1, dtype=torch.float64)  # one live prefix at first
    for _step in range(steps):
        logp = torch.log_softmax(model(seqs)[:, -1].double(), dim=-1)  # (k, V)
        vocab = logp.shape[-1]
        total = logp if mistake == "last token only" else scores[:, None] + logp  # (k, V)
        scores, flat = total.flatten().topk(min(beam_size, total.numel()))  # sorted
        seqs = torch.cat([seqs[flat // vocab], (flat % vocab)[:, None]], dim=1)
    return seqs[:1]  # the best (topk sorts): the prompt and its continuation


def _continuation_logp(model: torch.nn.Module, ids: torch.Tensor, start: int) -> float:
    """The total log-probability the model gives the tokens of ``ids`` from ``start`` on."""
    logp = torch.log_softmax(model(ids[:, :-1]).double(), dim=-1)  # (1, L - 1, V)
    tokens = ids[:, 1:, None]
    return float(logp.gather(-1, tokens)[0, start - 1:].sum())


class _MarkovModel(torch.nn.Module):
    """A stand-in for a trained language model, called like one: ``model(ids)`` -> logits
    ``(B, L, V)``. The next token's logits depend on the last token and on its position
    (a random table), so that the most likely first steps do not always start the most
    likely continuation."""

    def __init__(self, seed: int, vocab_size: int = 6, max_len: int = 16,
                 scale: float = 1.5) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.table = torch.randn(max_len, vocab_size, vocab_size, generator=g) * scale

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1])
        return self.table[positions, ids]  # (B, L, V): row [t, token] scores the next one


def _greedy(model: torch.nn.Module, prompt: torch.Tensor, steps: int) -> torch.Tensor:
    ids = prompt
    for _step in range(steps):
        ids = torch.cat([ids, model(ids)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return ids


_BEAM_CASES = [
    # (model seed, prompt, beam_size, max_new_tokens). In the first three, greedy decoding,
    # "each prefix keeps its own best" and "ranked by the last token" each give another
    # continuation than beam search, and than one another.
    # No two candidates at the cut differ by less than 0.01 in log-probability.
    (10, [3, 1], 3, 6),
    (28, [1], 3, 8),
    (23, [2, 4, 0], 4, 5),
    (0, [5, 1], 1, 5),  # beam_size 1 is greedy decoding
]


def beam_search(fn: Callable[[torch.nn.Module, torch.Tensor, int, int], torch.Tensor]
                ) -> CheckResult:
    """Check ``fn(model, prompt, beam_size, max_new_tokens)`` -> ``(1, L0 + max_new_tokens)``
    ids: beam search over a decoder-only language model's own continuations of the
    ``(1, L0)`` ``prompt``, as nanoGPT's ``generate`` loop writes them, but keeping the
    ``beam_size`` prefixes of highest total log-probability at every step (all ``K x V``
    candidates ranked together), and returning the prompt followed by the best one."""
    def body(f: Callable) -> str:
        with torch.no_grad():
            for seed, prompt, beam, steps in _BEAM_CASES:
                model = _MarkovModel(seed)
                prompt_ids = torch.tensor([prompt])
                what = _("a prompt of {length} tokens, beam_size = {k}, {n} new tokens").format(
                    length=_num(len(prompt)), k=_num(beam), n=_num(steps))
                expected = _beam_reference(model, prompt_ids, beam, steps)
                got = _as_tensor(_call(f, model, prompt_ids.clone(), beam, steps, what=what),
                                 what=what)
                if got.is_floating_point() or got.dtype == torch.bool:
                    raise _CheckFailedError(
                        _("on {what} the dtype is {dtype}: return token ids (integers)")
                        .format(what=what, dtype=got.dtype))
                if got.shape == (expected.shape[1],):
                    got = got[None]
                if got.shape == (1, steps):
                    raise _CheckFailedError(
                        _("on {what} the shape is {got}: return the prompt followed by the new "
                          "tokens, shape {expected}, as generate does").format(
                            what=what, got=_shape(got.shape), expected=_shape(expected.shape)))
                if got.shape != expected.shape:
                    raise _CheckFailedError(
                        _("on {what} the shape is {got}, expected {expected}").format(
                            what=what, got=_shape(got.shape), expected=_shape(expected.shape)))
                got = got.long()
                if torch.equal(got, expected):
                    continue
                if not torch.equal(got[:, :len(prompt)], prompt_ids):
                    raise _CheckFailedError(
                        _("on {what} the result does not start with the prompt").format(
                            what=what))
                mistakes = [
                    (_greedy(model, prompt_ids, steps),
                     _("on {what} you returned the greedy continuation: keep the beam_size "
                       "best prefixes at each step, starting from the prompt alone (K copies "
                       "of it with equal scores would keep K copies of the same prefix)")),
                    (_beam_reference(model, prompt_ids, beam, steps, mistake="per prefix"),
                     _("on {what} each prefix kept only its own best extension: rank all "
                       "K × V candidates together and keep the K best")),
                    (_beam_reference(model, prompt_ids, beam, steps, mistake="last token only"),
                     _("on {what} the candidates are ranked by the log-probability of their "
                       "last token: rank them by the total log-probability of the "
                       "continuation, the prefix's score plus the new token's")),
                ]
                for wrong, message in mistakes:
                    if not torch.equal(wrong, expected) and torch.equal(got, wrong):
                        raise _CheckFailedError(message.format(what=what))
                mine = _continuation_logp(model, got, len(prompt))
                best = _continuation_logp(model, expected, len(prompt))
                raise _CheckFailedError(
                    _("on {what} got the continuation {got} (log-probability {mine}), beam "
                      "search keeps {expected} (log-probability {best})").format(
                        what=what, got=_ints(got[0, len(prompt):].tolist()),
                        expected=_ints(expected[0, len(prompt):].tolist()),
                        mine=format_number(mine, 3), best=format_number(best, 3)))
        return _("the beam_size most probable prefixes at every step, all K × V candidates "
                 "ranked by their total log-probability: beam_size = 1 is greedy decoding")
    return _run("beam_search", fn, body)


# --- a KV cache, one per layer ----------------------------------------------------------------

def _split(x: torch.Tensor, heads: int) -> torch.Tensor:
    batch, length, width = x.shape
    return x.view(batch, length, heads, width // heads).transpose(1, 2)  # (B, H, L, d_head)


def _cached_reference(attn: torch.nn.Module, x_all: torch.Tensor, new: int, *,
                      mistake: str | None = None) -> torch.Tensor:
    """The output of the last ``new`` positions of ``x_all`` (B, L, d_model), each attending
    causally to every position up to itself, in float64; ``mistake`` names a typical wrong
    variant."""
    heads = attn.num_heads
    weights = {name: getattr(attn, name) for name in ("W_q", "W_k", "W_v", "W_o")}
    x_all = x_all.double()
    past, total = x_all.shape[1] - new, x_all.shape[1]

    def linear(name: str, x: torch.Tensor) -> torch.Tensor:
        layer = weights[name]
        bias = None if layer.bias is None else layer.bias.double()
        return F.linear(x, layer.weight.double(), bias)

    q = _split(linear("W_q", x_all[:, past:]), heads)  # (B, H, new, d_head)
    k = _split(linear("W_k", x_all), heads)  # (B, H, total, d_head)
    v = _split(linear("W_v", x_all), heads)
    mask = torch.ones(new, total, dtype=torch.bool).tril(past)  # query i is position past + i
    if mistake == "no mask":
        mask = torch.ones(new, total, dtype=torch.bool)
    elif mistake == "no offset":
        mask = torch.ones(new, total, dtype=torch.bool).tril(0)
    elif mistake == "new keys only":
        k, v = k[:, :, past:], v[:, :, past:]
        mask = torch.ones(new, new, dtype=torch.bool).tril(0)
    scale = attn.d_model if mistake == "d_model" else attn.d_head
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(scale)  # (B, H, new, keys)
    heads_out = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v
    merged = heads_out.transpose(1, 2).reshape(x_all.shape[0], new, -1)  # (B, new, d_model)
    return merged if mistake == "no W_o" else linear("W_o", merged)


_CACHE_MISTAKES = {
    "no mask": N_("the new positions also attend to the ones after them: when several "
                  "positions arrive at once (a prompt), apply a causal mask"),
    "no offset": N_("the causal mask ignores the cached positions: new position i is "
                    "position L_past + i and may attend to every key up to it, so the mask is "
                    "(L_new, L_past + L_new), True where j <= L_past + i"),
    "new keys only": N_("the new positions attend to their own keys only: append the new keys "
                        "and values to the cached ones and attend to all of them"),
    "d_model": N_("the scores are divided by sqrt(d_model): divide by sqrt(d_head), the "
                  "width of one head"),
    "no W_o": N_("the heads are merged but W_o is not applied"),
}


def _check_layer_cache(cache: object, attn: torch.nn.Module, x_all: torch.Tensor, *,
                       what: str) -> None:
    """The cache holds the keys and values of every position so far, split into heads."""
    if not isinstance(cache, dict) or "keys" not in cache or "values" not in cache:
        raise _CheckFailedError(
            _("on {what}, after the call, cache['keys'] and cache['values'] must hold the "
              "keys and values of every position so far").format(what=what))
    with torch.no_grad():
        expected = {"keys": _split(attn.W_k(x_all), attn.num_heads),
                    "values": _split(attn.W_v(x_all), attn.num_heads)}
    for name in ("keys", "values"):
        got = _as_tensor(cache[name], what=what)
        want = expected[name]
        if got.dim() == 4 and got.shape[:2] == want.shape[:2] and got.shape[3] == want.shape[3] \
                and got.shape[2] != want.shape[2]:
            raise _CheckFailedError(
                _("on {what} cache['{name}'] holds {got} positions instead of {expected}: "
                  "store the cached ones followed by the new ones").format(
                    what=what, name=name, got=_num(got.shape[2]), expected=_num(want.shape[2])))
        if got.shape != want.shape:
            raise _CheckFailedError(
                _("on {what} cache['{name}'] has shape {got}, expected {expected}: the "
                  "projected {name}, split into heads, (B, H, L, d_head)").format(
                    what=what, name=name, got=_shape(got.shape), expected=_shape(want.shape)))
        other = expected["values" if name == "keys" else "keys"]
        if _close(got, other, atol=1e-4) and not _close(want, other, atol=1e-4):
            raise _CheckFailedError(
                _("on {what} cache['keys'] and cache['values'] are swapped").format(what=what))
        _compare(got, want, what=_("{what}, cache['{name}']").format(what=what, name=name),
                 atol=1e-4)


def _forward_cached(model: torch.nn.Module, ids: torch.Tensor, caches: list[dict],
                    attend: Callable) -> torch.Tensor:
    """A :class:`~transformer_course.LanguageModel` run on new positions, ``attend`` doing
    each layer's self-attention with that layer's own cache (the exercise's skeleton)."""
    past = caches[0]["keys"].shape[2] if caches[0] else 0
    positions = torch.arange(past, past + ids.shape[1])
    x = model.embed(ids) + model.position(positions)  # (B, L_new, d_model)
    for layer, cache in zip(model.blocks, caches, strict=True):
        h = layer.norm1(x)
        x = x + attend(layer.self_attn, h, cache)
        x = x + layer.ff(layer.norm2(x))
    return model.head(model.norm(x))  # (B, L_new, V)


def _in_stack(f: Callable, model: torch.nn.Module, ids: torch.Tensor, caches: list[dict], *,
              what: str) -> torch.Tensor:
    """The logits of :func:`_forward_cached` with the reader's function in every layer."""
    try:
        got = _forward_cached(model, ids, caches, lambda *args: _call(f, *args, what=what))
    except _CheckFailedError:
        raise
    except Exception as err:  # the skeleton could not use what the function returned
        raise _CheckFailedError(
            _("on {what} the model could not use what your function returned: {error}: "
              "{detail}").format(what=what, error=type(err).__name__, detail=err)) from None
    return _as_tensor(got, what=what)


def cached_self_attention(fn: Callable[[torch.nn.Module, torch.Tensor, dict], torch.Tensor]
                          ) -> CheckResult:
    """Check ``fn(attn, x, cache)``: one layer's masked self-attention with a KV cache.

    ``attn`` is a :class:`~transformer_course.MultiHeadAttention` (its ``W_q``, ``W_k``,
    ``W_v``, ``W_o`` and ``num_heads``), ``x`` the ``(B, L_new, d_model)`` new positions,
    and ``cache`` a dict, empty at first, that ``fn`` fills: ``cache['keys']`` and
    ``cache['values']`` hold the ``(B, H, L_past + L_new, d_head)`` keys and values of every
    position so far. ``fn`` returns the ``(B, L_new, d_model)`` outputs of the new positions,
    each attending to every earlier position and itself. The checker feeds positions in
    chunks of 5, 1, 3 and 2, then runs a 3-layer :class:`~transformer_course.LanguageModel`
    with one cache per layer, against the full recomputation."""
    def body(f: Callable) -> str:
        torch.manual_seed(1005)
        from ..layers import MultiHeadAttention
        from ..lm import LanguageModel

        attn = MultiHeadAttention(16, 4).eval()
        x_all = torch.randn(2, 11, 16)
        cache: dict = {}
        done = 0
        with torch.no_grad():
            for new in (5, 1, 3, 2):
                what = _("{new} new positions after {past} cached").format(new=_num(new),
                                                                           past=_num(done))
                upto = x_all[:, :done + new]
                got = _as_tensor(_call(f, attn, upto[:, done:].clone(), cache, what=what),
                                 what=what)
                expected = _cached_reference(attn, upto, new)
                if got.shape == expected.shape and not _close(got, expected, atol=1e-4):
                    for mistake, message in _CACHE_MISTAKES.items():
                        wrong = _cached_reference(attn, upto, new, mistake=mistake)
                        if not _close(wrong, expected, atol=1e-4) and _close(got, wrong,
                                                                               atol=1e-4):
                            raise _CheckFailedError(_("on {what} {mistake}").format(
                                what=what, mistake=_(message)))
                _compare(got, expected, what=what, atol=1e-4)
                done += new
                _check_layer_cache(cache, attn, upto, what=what)
            model = LanguageModel(13, d_model=16, num_heads=4, num_layers=3, d_ff=32,
                                  dropout=0.0, max_len=16).eval()
            ids = torch.randint(0, 13, (2, 10))
            full = model(ids)  # (2, 10, 13)
            caches: list[dict] = [{} for _ in model.blocks]
            done = 0
            for new in (4, 1, 1, 3, 1):
                what = _("a 3-layer language model with one cache per layer, {new} new "
                         "positions after {past}").format(new=_num(new), past=_num(done))
                got = _in_stack(f, model, ids[:, done:done + new], caches, what=what)
                if got.shape == full[:, done:done + new].shape and not _close(
                        got, full[:, done:done + new], atol=1e-4):
                    raise _CheckFailedError(
                        _("on {what} the logits differ from the full recomputation, though "
                          "one layer alone passed: does your function change its input in "
                          "place, or keep state outside the cache dict it is given?")
                        .format(what=what))
                _compare(got, full[:, done:done + new], what=what, atol=1e-4)
                done += new
        return _("the new positions attend to the cached keys and values and to each other "
                 "causally, and each layer keeps its own cache: the same logits as "
                 "recomputing everything")
    return _run("cached_self_attention", fn, body)


# --- the size of a KV cache -----------------------------------------------------------------

_CACHE_CASES = [
    # (num_layers, d_model, num_heads, num_kv_heads, length, batch_size, bytes_per_value)
    (6, 64, 4, 2, 10, 3, 4),  # every typical mistake gives a different number here
    (2, 64, 4, 4, 256, 1, 4),  # the chapter's model, 256 positions, float32
    (12, 768, 12, 12, 1024, 8, 2),  # GPT-2 small, 8 sequences of 1024 tokens, float16
    (80, 8192, 64, 8, 4096, 1, 2),  # a 70-billion-parameter model with 8 key-value heads
    (24, 2048, 16, 1, 2048, 4, 2),  # multi-query attention: one key-value head
]


def _cache_bytes(layers: int, d_model: int, heads: int, kv_heads: int, length: int,
                 batch: int, size: int) -> int:
    return 2 * layers * kv_heads * (d_model // heads) * length * batch * size


def _as_count(got: object, *, what: str) -> int:
    """A whole number from an int, an integral float or a one-element tensor."""
    value = _real(got)
    if value is None:
        raise _CheckFailedError(_("on {what} expected a number of bytes, got {kind}")
                                .format(what=what, kind=_kind(got)))
    number = float(value)
    if not math.isfinite(number) or number != round(number):
        raise _CheckFailedError(
            _("on {what} got {value}: a number of bytes is a whole number")
            .format(what=what, value=_num(number)))
    return int(value) if isinstance(value, numbers.Integral) else round(number)


def kv_cache_bytes(fn: Callable[..., int]) -> CheckResult:
    """Check ``fn(num_layers, d_model, num_heads, num_kv_heads, length, batch_size,
    bytes_per_value)`` -> the bytes of a KV cache: every layer keeps the keys and the values
    of ``num_kv_heads`` heads of size ``d_model / num_heads`` for ``length`` positions of
    ``batch_size`` sequences (``num_kv_heads = num_heads`` without grouped-query
    attention)."""
    def body(f: Callable) -> str:
        for case in _CACHE_CASES:
            layers, d_model, heads, kv_heads, length, batch, size = case
            what = _("{layers} layers, d_model = {d_model}, {heads} heads of which {kv} for "
                     "keys and values, {length} positions, batch {batch}, {size} bytes per "
                     "number").format(layers=_num(layers), d_model=_num(d_model),
                                      heads=_num(heads), kv=_num(kv_heads),
                                      length=_num(length), batch=_num(batch), size=_num(size))
            expected = _cache_bytes(*case)
            got = _as_count(_call(f, *case, what=what), what=what)
            if got == expected:
                continue
            facts = dict(what=what, got=_num(got), expected=_num(expected))
            mistakes = [
                (expected // 2, _("on {what} got {got} bytes, half of {expected}: the cache "
                                  "keeps the values as well as the keys")),
                (_cache_bytes(layers, d_model, heads, heads, length, batch, size),
                 _("on {what} got {got} bytes instead of {expected}: with grouped-query "
                   "attention only the num_kv_heads key-value heads are cached, each of size "
                   "d_model / num_heads")),
                (expected // layers, _("on {what} got {got} bytes instead of {expected}: "
                                       "every layer keeps its own keys and values")),
                (expected // batch, _("on {what} got {got} bytes instead of {expected}: each "
                                      "sequence of the batch has its own cache")),
                (expected // size, _("on {what} got {got} instead of {expected}: multiply the "
                                     "number of values by bytes_per_value to get bytes")),
            ]
            for wrong, message in mistakes:
                if wrong != expected and got == wrong:
                    raise _CheckFailedError(message.format(**facts))
            raise _CheckFailedError(_("on {what} got {got} bytes, expected {expected}")
                                    .format(**facts))
        return _("2 × layers × key-value heads × d_head × positions × batch × bytes: "
                 "grouped-query attention divides the cache by num_heads / num_kv_heads")
    return _run("kv_cache_bytes", fn, body)


# --- one prompt, several endings ------------------------------------------------------------

def _endings_reference(model: torch.nn.Module, prompt: torch.Tensor,
                       endings: list[torch.Tensor], *, mistake: str | None = None
                       ) -> torch.Tensor:
    """The total log-probability of each ending after ``prompt`` (float64): one full pass
    per ending; ``mistake`` names a typical wrong variant of the cached version."""
    if mistake == "shared cache":  # every ending appended to the one cache of the prompt
        cache = model.new_cache()
        first = torch.log_softmax(model(prompt, cache=cache)[0, -1].double(), dim=-1)  # (V,)
        scores = []
        for ending in endings:
            total = first[ending[0]]
            if len(ending) > 1:
                logp = torch.log_softmax(model(ending[None, :-1], cache=cache).double(), dim=-1)
                total = total + logp[0].gather(-1, ending[1:, None]).sum()
            scores.append(total)
        return torch.stack(scores)
    start = prompt.shape[1] + (1 if mistake == "first token left out" else 0)
    return torch.tensor([_continuation_logp(model, torch.cat([prompt, ending[None]], dim=1), start)
                         for ending in endings], dtype=torch.float64)


def score_endings(fn: Callable[[torch.nn.Module, torch.Tensor, list], torch.Tensor]
                  ) -> CheckResult:
    """Check ``fn(model, prompt, endings)`` -> ``(len(endings),)``: the total log-probability
    a :class:`~transformer_course.LanguageModel` gives each ending (a 1-D tensor of ids)
    after the ``(1, L0)`` ``prompt``, the prompt run once with a cache. The checker counts
    the positions the model embeds: the prompt's once and each ending's, no more."""
    def body(f: Callable) -> str:
        from ..lm import LanguageModel

        torch.manual_seed(110)
        model = LanguageModel(11, d_model=16, num_heads=2, num_layers=2, d_ff=32, dropout=0.0,
                              max_len=32).eval()
        prompt = torch.tensor([[3, 1, 4, 1, 5]])
        endings = [torch.tensor([9, 2, 6]), torch.tensor([5]), torch.tensor([3, 5, 8, 9]),
                   torch.tensor([7, 9])]
        what = _("a prompt of {length} tokens and endings of {sizes} tokens").format(
            length=_num(prompt.shape[1]), sizes=_ints([len(e) for e in endings]))
        with torch.no_grad():
            expected = _endings_reference(model, prompt, endings)
            mistakes = [
                (_endings_reference(model, prompt, endings, mistake="shared cache"),
                 _("on {what} each ending after the first read the endings before it: "
                   "model(..., cache=cache) appends to the cache it is given, so give each "
                   "ending its own copy of the prompt's cache (copy.deepcopy)")),
                (_endings_reference(model, prompt, endings, mistake="first token left out"),
                 _("on {what} the first token of each ending is not counted: its probability "
                   "comes from the prompt's last logits")),
            ]
        embedded: list[int] = []
        hook = model.embed.register_forward_pre_hook(
            lambda module, args: embedded.append(args[0].shape[-1]))
        try:
            got = _as_tensor(_call(f, model, prompt.clone(), [e.clone() for e in endings],
                                   what=what), what=what)
        finally:
            hook.remove()
        if got.is_floating_point():
            for wrong, message in mistakes:
                if _close(got.reshape(-1), wrong, atol=1e-4) and not _close(wrong, expected,
                                                                           atol=1e-4):
                    raise _CheckFailedError(message.format(what=what))
        _compare(got, expected, what=what, atol=1e-4)
        most = prompt.shape[1] + sum(len(e) for e in endings)
        if sum(embedded) > most:
            raise _CheckFailedError(
                _("on {what} the model computed {count} positions, where the prompt once and "
                  "each ending once take at most {most}: run the prompt once, with a cache, "
                  "and each ending on a copy of it").format(
                    what=what, count=_num(sum(embedded)), most=_num(most)))
        return _("the prompt run once, each ending on a copy of its cache, and the first token "
                 "scored by the prompt's last logits: the log-probabilities of full passes")
    return _run("score_endings", fn, body)
