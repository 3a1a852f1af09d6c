"""Chapter 5's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing the checker."""

import pytest
import torch

import transformer_course as tc
from transformer_course import check

# --- right answers (as in the chapter's solutions) --------------------------------------------


def prefix_lm_mask(length, prefix):
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    return (j <= i) | (j < prefix)


def left_padded_causal_mask(attention_mask):
    keys = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, L)
    return tc.causal_mask(attention_mask.shape[-1]) & keys


def torch_mha(mha, x, mask):
    batch, length, _ = x.shape
    allowed = mask.expand(batch, mha.num_heads, length, length)  # (B, H, L, L)
    blocked = ~allowed.reshape(batch * mha.num_heads, length, length)
    return mha(x, x, x, attn_mask=blocked)[0]


def sliding_window_mask(length, window):
    i, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    return (j <= i) & (i - j < window)


def packed_causal_mask(lengths):
    segment = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
    return (segment[:, None] == segment[None, :]) & tc.causal_mask(len(segment))


# --- plausible wrong answers -----------------------------------------------------------------


def not_inverted(mha, x, mask):
    batch, length, _ = x.shape
    allowed = mask.expand(batch, mha.num_heads, length, length)
    return mha(x, x, x, attn_mask=allowed.reshape(batch * mha.num_heads, length, length))[0]


def heads_repeated(mha, x, mask):
    batch, length, _ = x.shape
    per_sequence = ~mask.expand(batch, 1, length, length)[:, 0]  # (B, L, L)
    return mha(x, x, x, attn_mask=per_sequence.repeat(mha.num_heads, 1, 1))[0]


def causal_only(mha, x, mask):
    return mha(x, x, x, attn_mask=~tc.causal_mask(x.shape[1]))[0]


CASES = {
    "prefix_lm_mask": (prefix_lm_mask, [
        (lambda n, p: tc.causal_mask(n), ["L = 6, prefix = 3", "query 0 may not attend to key 1",
                                         "in the prefix (positions 0 to 2)"]),
        (lambda n, p: prefix_lm_mask(n, p + 1), ["one position too many", "0 to 2"]),
        (lambda n, p: prefix_lm_mask(n, max(p - 1, 0)), ["one position too few"]),
        (lambda n, p: prefix_lm_mask(n, p) & ~torch.eye(n, dtype=torch.bool) | (
            torch.arange(n)[None, :] < p), ["query 3 may not attend to key 3", "causal"]),
        (lambda n, p: prefix_lm_mask(n, p) | (torch.arange(n)[:, None] < p),
         ["query 0 may attend to key 3", "only the prefix"]),
        (lambda n, p: prefix_lm_mask(n, p).int(), ["dtype", "torch.bool"]),
    ]),
    "left_padded_causal_mask": (left_padded_causal_mask, [
        (lambda m: tc.causal_mask(m.shape[-1]).expand(m.shape[0], 1, -1, -1),
         ["[[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]]", "sequence 0", "a [PAD]"]),
        (lambda m: m.bool()[:, None, None, :].expand(-1, 1, m.shape[1], -1),
         ["query 0 may attend to key 2", "causal"]),
        (lambda m: ~left_padded_causal_mask(m), ["swapped"]),
        (lambda m: left_padded_causal_mask(m)[:, 0], ["shape", "(3, 5, 5)", "(3, 1, 5, 5)"]),
        (lambda m: tc.causal_mask(m.shape[-1]) & m.bool()[:, None, :, None],
         ["query 2 may attend to key 0", "[PAD]"]),
        (lambda m: left_padded_causal_mask(m).long(), ["dtype", "torch.bool"]),
        (lambda m: left_padded_causal_mask(m) & ~torch.eye(m.shape[-1], dtype=torch.bool),
         ["query 2 may not attend to key 2", "a real token"]),
    ]),
    "torch_mha": (torch_mha, [
        (not_inverted, ["causal mask", "without being inverted", "~mask"]),
        (heads_repeated, ["padding mask", "mask of another sequence", "b * H + h"]),
        (lambda mha, x, mask: mha(x, x, x)[0], ["causal mask", "without any mask"]),
        (causal_only, ["padding mask", "off by"]),
        (lambda mha, x, mask: mha(x, x, x, attn_mask=~mask)[0],
         ["padding mask", "raised RuntimeError"]),
    ]),
    "sliding_window_mask": (sliding_window_mask, [
        (lambda n, w: sliding_window_mask(n, w + 1), ["window = 3", "one position too many"]),
        (lambda n, w: sliding_window_mask(n, max(w - 1, 1)), ["one position too few"]),
        (lambda n, w: (torch.arange(n)[:, None] - torch.arange(n)).abs() < w,
         ["comes after it", "only at the past"]),
        (lambda n, w: tc.causal_mask(n), ["query 3 may attend to key 0", "outside the window"]),
        (lambda n, w: sliding_window_mask(n, w).T, ["comes after it"]),
        (lambda n, w: sliding_window_mask(n, w).long(), ["dtype", "torch.bool"]),
    ]),
    "packed_causal_mask": (packed_causal_mask, [
        (lambda lengths: tc.causal_mask(sum(lengths)),
         ["lengths [3, 2]", "(sequence 1)", "(sequence 0)", "must not see each other"]),
        (lambda lengths: torch.block_diag(*[torch.ones(n, n) for n in lengths]).bool(),
         ["later in its own sequence", "causal"]),
        (lambda lengths: packed_causal_mask(lengths) & ~torch.eye(sum(lengths), dtype=bool),
         ["may not attend to position 0", "itself"]),
        (lambda lengths: packed_causal_mask(lengths[::-1]), ["lengths [3, 2]"]),
    ]),
}

JUNK = [None, (), [], float("nan"), "a string", (i for i in range(3)),
        torch.empty(2, 2, device="meta"), torch.zeros(2, 2, dtype=torch.complex64),
        torch.tensor(float("nan")), torch.full((2, 5, 16), float("nan"))]


def test_every_checker_is_tested():
    assert set(CASES) == set(check.ch05.__all__)
    assert all(name in check.__all__ for name in check.ch05.__all__)


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


def test_a_nan_output_is_explained():
    nan = check.torch_mha(lambda mha, x, mask: torch.full((2, 5, 16), float("nan")))
    assert not nan and "NaN" in nan.message and "nothing to attend to" in nan.message


def test_checkers_leave_the_random_state_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    check.torch_mha(torch_mha)
    assert torch.equal(torch.rand(3), expected)
