"""Chapter 6's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing the checker."""

import math
import re

import pytest
import torch

import transformer_course as tc
from transformer_course import check

# --- right answers (as in the chapter's solutions) --------------------------------------------


def distances(length):
    return (torch.arange(length)[:, None] - torch.arange(length)[None, :]).abs()


def alibi_scores(q, k, slopes):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (H, L, L)
    return scores - slopes[:, None, None] * distances(q.shape[-2])


def rope(x, positions, *, sign=1.0, two=2.0):
    d = x.shape[-1]
    omega = 10000 ** (-two * torch.arange(d // 2, dtype=torch.float64) / d)
    angle = sign * positions.double()[:, None] * omega  # (L, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2].double(), x[..., 1::2].double()
    out = torch.empty(x.shape, dtype=torch.float64)
    out[..., 0::2] = even * cos + odd * sin
    out[..., 1::2] = -even * sin + odd * cos
    return out.to(x.dtype)


def rope_halves(x, positions):
    """The right rotation applied to the concatenated layout (pairs j, j + d/2)."""
    d = x.shape[-1]
    order = torch.cat([torch.arange(0, d, 2), torch.arange(1, d, 2)])
    return rope(x[..., torch.argsort(order)], positions)[..., order]


def rope_by_addition(x, positions):
    return x + tc.sinusoidal_encoding(int(positions.max()) + 1, x.shape[-1])[positions]


CASES = {
    "alibi_scores": (alibi_scores, [
        (lambda q, k, s: alibi_scores(q, k, -s), ["wrong sign", "bonus"]),
        (lambda q, k, s: alibi_scores(q, k, s) + q @ k.transpose(-2, -1)
         * (1 - 1 / math.sqrt(q.shape[-1])), ["not divided by sqrt(d) = 2"]),
        (lambda q, k, s: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) - s[:, None, None]
         * (torch.arange(q.shape[-2])[:, None] - torch.arange(q.shape[-2])[None, :]),
         ["-slope * (i - j)", "|i - j|"]),
        (lambda q, k, s: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
         - s[:, None, None] * torch.arange(q.shape[-2]), ["depend on where they start",
                                                          "head 0", "distance"]),
        (lambda q, k, s: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), ["no position bias"]),
        (lambda q, k, s: alibi_scores(q, k, s.flip(0)), ["slopes [0.25", "off by"]),
    ]),
    "rope": (rope, [
        (lambda x, p: rope(x, p, sign=-1.0), ["E_0 on every row", "the other way"]),
        (rope_halves, ["j + d/2", "concatenated layout"]),
        (rope_by_addition, ["shifting every position by 37", "offset"]),
        (lambda x, p: rope(x, torch.arange(len(p))), ["[0, 3, 7, 20, 100]", "ignored"]),
        (lambda x, p: rope(x, p, two=1.0), ["10000^(-2i/d)"]),
        (lambda x, p: x, ["unchanged"]),
        (lambda x, p: rope(x, p)[..., :-1], ["shape"]),
    ]),
}

JUNK = [None, (), [], float("nan"), "a string", (i for i in range(3)),
        torch.empty(2, 2, device="meta"), torch.zeros(2, 2, dtype=torch.complex64),
        torch.tensor(float("nan")), torch.full((6, 16), float("nan"))]


def test_every_checker_is_tested():
    assert set(CASES) == set(check.ch06.__all__)
    assert all(name in check.__all__ for name in check.ch06.__all__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_right_answer_passes(name):
    right, _ = CASES[name]
    result = getattr(check, name)(right)
    assert result, result
    assert repr(result).startswith(f"✓ {name}: ")


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_answers_fail_and_say_why(name):
    _, wrong = CASES[name]
    assert len(wrong) >= 2
    for answer, words in wrong:
        result = getattr(check, name)(answer)
        assert not result, (name, words)
        for word in words:
            assert word in result.message, (name, word, result.message)


@pytest.mark.parametrize("name", sorted(CASES))
def test_junk_answers_fail_without_crashing(name):
    checker = getattr(check, name)
    for junk in JUNK:
        result = checker(lambda *args, junk=junk: junk)
        assert isinstance(result, check.CheckResult) and not result, (name, junk)
        assert result.message and "could not be checked" not in result.message, result.message
    raised = checker(lambda *args: 1 / 0)
    assert not raised and "raised ZeroDivisionError" in raised.message
    todo = checker(lambda *args: (_ for _ in ()).throw(NotImplementedError("your code here")))
    assert not todo and "NotImplementedError" in todo.message
    assert not checker(None) and "expected a function" in checker(None).message


def test_float32_answers_pass():
    assert check.rope(lambda x, p: rope(x.float(), p))
    assert check.alibi_scores(lambda q, k, s: alibi_scores(q.float(), k.float(), s.float()))


def test_the_translation_invariance_verdict_is_localised():
    tc.set_language("fr")
    try:
        result = check.alibi_scores(lambda q, k, s: q @ k.transpose(-2, -1) / 2.0
                                    - s[:, None, None] * torch.arange(q.shape[-2]))
    finally:
        tc.set_language("en")
    assert not result and re.search(r"score -?\d+,\d+, ", result.message), result.message
