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


def shift_concatenated(k, d_model, *, sign=1.0):
    """M'_k for the concatenated layout: pair i in columns i and i + d_model / 2."""
    half = d_model // 2
    angle = sign * k * 10000.0 ** (-2 * torch.arange(half, dtype=torch.float64) / d_model)
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    i = torch.arange(half)
    M[i, i], M[i, i + half] = angle.cos(), angle.sin()
    M[i + half, i], M[i + half, i + half] = -angle.sin(), angle.cos()
    return M


def shift_interleaved(k, d_model):
    blocks = []
    for i in range(d_model // 2):
        a = torch.tensor(k / 10000 ** (2 * i / d_model), dtype=torch.float64)
        blocks.append(torch.stack([torch.stack([a.cos(), a.sin()]),
                                   torch.stack([-a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def grid_encoding(height, width, d_model, *, rows_first=True):
    half = d_model // 2
    rows = tc.sinusoidal_encoding(height, half)[torch.arange(height).repeat_interleave(width)]
    cols = tc.sinusoidal_encoding(width, half)[torch.arange(width).repeat(height)]
    return torch.cat([rows, cols] if rows_first else [cols, rows], dim=1)  # (H * W, d)


def layout_order(d_model):
    return torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])


CASES = {
    "grid_encoding": (grid_encoding, [
        (lambda h, w, d: grid_encoding(h, w, d, rows_first=False),
         ["height = 2, width = 3, d_model = 8", "swapped"]),
        (lambda h, w, d: tc.sinusoidal_encoding(h * w, d), ["1-D encoding", "r * width + c"]),
        (lambda h, w, d: torch.cat([
            tc.sinusoidal_encoding(h, d)[:, : d // 2][torch.arange(h).repeat_interleave(w)],
            tc.sinusoidal_encoding(w, d)[:, : d // 2][torch.arange(w).repeat(h)]], dim=1),
         ["width d_model", "10000^(-2i/(d_model/2))"]),
        (lambda h, w, d: torch.cat([  # patch (r, c) put in row c * height + r
            tc.sinusoidal_encoding(h, d // 2)[torch.arange(h).repeat(w)],
            tc.sinusoidal_encoding(w, d // 2)[torch.arange(w).repeat_interleave(h)]], dim=1),
         ["column by column"]),
        (lambda h, w, d: grid_encoding(h, w, d).reshape(h, w, d), ["shape", "(2, 3, 8)", "(6, 8)"]),
        (lambda h, w, d: tc.sinusoidal_encoding(h, d)[torch.arange(h).repeat_interleave(w)]
         + tc.sinusoidal_encoding(w, d)[torch.arange(w).repeat(h)], ["off by"]),
    ]),
    "shift_matrix_concatenated": (shift_concatenated, [
        (shift_interleaved, ["k = 1, d_model = 8", "interleaved layout"]),
        (lambda k, d: shift_concatenated(k, d, sign=-1.0), ["the other way"]),
        (lambda k, d: shift_interleaved(k, d)[layout_order(d)], ["E'_(p+k)", "off by"]),
        (lambda k, d: shift_concatenated(k, d)[: d // 2], ["shape", "(4, 8)"]),
        (lambda k, d: torch.eye(d), ["k = 1", "off by"]),
    ]),
    "alibi_scores": (alibi_scores, [
        (lambda q, k, s: alibi_scores(q, k, -s), ["wrong sign", "bonus"]),
        (lambda q, k, s: alibi_scores(q, k, s) + q @ k.transpose(-2, -1)
         * (1 - 1 / math.sqrt(q.shape[-1])), ["not divided by sqrt(d) = 2"]),
        (lambda q, k, s: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) - s[:, None, None]
         * (torch.arange(q.shape[-2])[:, None] - torch.arange(q.shape[-2])[None, :]),
         ["-slope * (i - j)", "|i - j|"]),
        (lambda q, k, s: q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
         - s[:, None, None] * torch.arange(q.shape[-2]), ["depend on where they start",
                                                          "head 1", "distance"]),
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
    assert check.shift_matrix_concatenated(lambda k, d: shift_concatenated(k, d).float())
    assert check.alibi_scores(lambda q, k, s: alibi_scores(q.float(), k.float(), s.float()))


def test_the_translation_invariance_verdict_is_localised():
    tc.set_language("fr")
    try:
        result = check.alibi_scores(lambda q, k, s: q @ k.transpose(-2, -1) / 2.0
                                    - s[:, None, None] * torch.arange(q.shape[-2]))
    finally:
        tc.set_language("en")
    assert not result and re.search(r"score [-\u2212]?\d+,\d+, ", result.message), result.message


def test_the_concatenated_shift_is_the_interleaved_one_reordered():
    order = layout_order(16)
    result = check.shift_matrix_concatenated(
        lambda k, d: shift_interleaved(k, d)[layout_order(d)][:, layout_order(d)])
    assert result, result
    assert torch.allclose(shift_interleaved(5, 16)[order][:, order], shift_concatenated(5, 16))
