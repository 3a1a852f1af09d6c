"""The checkers of chapter 8's transfer exercises: right answers pass, typical wrong answers
fail with a message that says why, junk fails without crashing."""

import math

import pytest
import torch

import transformer_course as tc
from transformer_course.check import ch08


@pytest.fixture(autouse=True)
def english():
    tc.set_language("en")
    yield
    tc.set_language("en")


JUNK = [None, 3, "text", (1, 2), lambda *args: None, lambda *args: 1 / 0,
        lambda *args: torch.full((2, 2), float("nan"))]


# --- scheduled sampling ---------------------------------------------------------------------

def _sampling(shift=True, keep_bos=True, keep_padding=True, reverse=False, coins_shape=None,
              as_float=False):
    def fn(model, src, tgt_in, p, generator):
        with torch.no_grad():
            guesses = model(src, tgt_in).argmax(-1)  # (B, T)
        coins = torch.rand(coins_shape or tgt_in.shape, generator=generator)
        if coins_shape is not None:
            coins = torch.cat([torch.ones(tgt_in.shape[0], 1), coins], dim=1)
        replace = (coins > p) if reverse else (coins < p)
        if keep_padding:
            replace &= tgt_in != model.pad_id
        if keep_bos:
            replace[:, 0] = False
        source = guesses
        if shift:  # keep_bos=False also forgets that position 0 has no guess before it
            source = (torch.cat([tgt_in[:, :1], guesses[:, :-1]], dim=1) if keep_bos
                      else guesses.roll(1, dims=1))
        out = torch.where(replace, source, tgt_in)
        return out.float() if as_float else out
    return fn


def test_scheduled_sampling_accepts_the_right_answer():
    result = ch08.scheduled_sampling(_sampling())
    assert result.passed, result.message


@pytest.mark.parametrize(("wrong", "words"), [
    (_sampling(shift=False), "position t - 1"),
    (_sampling(keep_bos=False), "<bos>"),
    (_sampling(keep_padding=False), "padding stays padding"),
    (_sampling(reverse=True), "p = 0"),
    (lambda model, src, tgt_in, p, generator: tgt_in, "reversed"),
    (_sampling(coins_shape=(3, 6)), "torch.rand(tgt_in.shape"),
    (_sampling(as_float=True), "must be integers"),
])
def test_scheduled_sampling_explains_typical_mistakes(wrong, words):
    result = ch08.scheduled_sampling(wrong)
    assert not result.passed
    assert words in result.message, result.message


# --- cross-attention between widths ---------------------------------------------------------

def _widths(scale=None, mix=True, swap=False):
    def fn(y, memory, w_q, w_k, w_v, w_o, num_heads):
        if swap:
            y, memory = memory, y
            w_q, w_k, w_v = w_k, w_q, w_q
        batch, length, d_model = y.shape[0], y.shape[1], w_q.shape[0]
        d_head = d_model // num_heads

        def split(x):
            return x.view(batch, -1, num_heads, d_head).transpose(1, 2)

        q, k, v = split(y @ w_q.T), split(memory @ w_k.T), split(memory @ w_v.T)
        d = {None: d_head, "model": d_model, "memory": memory.shape[-1]}[scale]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
        heads = (weights @ v).transpose(1, 2).reshape(batch, length, d_model)
        return heads @ w_o.T if mix else heads
    return fn


def test_cross_attention_widths_accepts_the_right_answer_and_matches_the_package():
    result = ch08.cross_attention_widths(_widths())
    assert result.passed, result.message
    module = tc.MultiHeadAttention(12, 3, kdim=20, vdim=20, bias=False)
    y, memory = torch.randn(2, 4, 12), torch.randn(2, 7, 20)
    weights = [module.W_q.weight, module.W_k.weight, module.W_v.weight, module.W_o.weight]
    with torch.no_grad():
        expected, _ = module(y, memory, memory)
        got = _widths()(y, memory, *weights, 3)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_cross_attention_widths_also_accepts_the_package_module():
    def fn(y, memory, w_q, w_k, w_v, w_o, num_heads):
        module = tc.MultiHeadAttention(y.shape[-1], num_heads, kdim=memory.shape[-1],
                                       vdim=memory.shape[-1], bias=False)
        with torch.no_grad():
            for layer, w in zip((module.W_q, module.W_k, module.W_v, module.W_o),
                                (w_q, w_k, w_v, w_o), strict=True):
                layer.weight.copy_(w)
            return module(y, memory, memory)[0]
    assert ch08.cross_attention_widths(fn).passed


@pytest.mark.parametrize(("wrong", "words"), [
    (_widths(scale="model"), "sqrt(d_model)"),
    (_widths(scale="memory"), "width of the memory"),
    (_widths(mix=False), "w_o"),
])
def test_cross_attention_widths_explains_typical_mistakes(wrong, words):
    result = ch08.cross_attention_widths(wrong)
    assert not result.passed
    assert words in result.message, result.message


def test_cross_attention_widths_fails_when_the_roles_are_swapped():
    result = ch08.cross_attention_widths(_widths(swap=True))
    assert not result.passed
    assert "raised" in result.message or "queries come from" in result.message


# --- word alignment -------------------------------------------------------------------------

def _alignment(weights, word_ids):
    n_words = int(word_ids.max()) + 1
    keep = word_ids >= 0
    totals = torch.zeros(weights.shape[0], n_words).index_add_(1, word_ids[keep],
                                                                weights[:, keep])
    return totals.argmax(-1)


def _heaviest_character(weights, word_ids):
    return word_ids[weights.argmax(-1)]


def _average(weights, word_ids):
    n_words = int(word_ids.max()) + 1
    return torch.stack([weights[:, word_ids == w].mean(-1) for w in range(n_words)],
                       -1).argmax(-1)


def _with_spaces(weights, word_ids):
    n_words = int(word_ids.max()) + 2  # -1 counted as one more "word"
    totals = torch.zeros(weights.shape[0], n_words).index_add_(1, word_ids + 1, weights)
    return totals.argmax(-1) - 1


def _last_tie(weights, word_ids):
    n_words = int(word_ids.max()) + 1
    keep = word_ids >= 0
    totals = torch.zeros(weights.shape[0], n_words).index_add_(1, word_ids[keep],
                                                                weights[:, keep])
    return n_words - 1 - totals.flip(-1).argmax(-1)


def test_word_alignment_accepts_the_right_answer():
    result = ch08.word_alignment(_alignment)
    assert result.passed, result.message


@pytest.mark.parametrize(("wrong", "words"), [
    (_heaviest_character, "heaviest single character"),
    (_average, "do not average"),
    (_with_spaces, "belong to none"),
    (_last_tie, "lowest index"),
    (lambda w, ids: _alignment(w, ids).float(), "must be integers"),
])
def test_word_alignment_explains_typical_mistakes(wrong, words):
    result = ch08.word_alignment(wrong)
    assert not result.passed
    assert words in result.message, result.message


# --- every checker survives junk ------------------------------------------------------------

@pytest.mark.parametrize("checker", [ch08.scheduled_sampling, ch08.cross_attention_widths,
                                     ch08.word_alignment])
@pytest.mark.parametrize("junk", JUNK)
def test_checkers_fail_on_junk_without_crashing(checker, junk):
    result = checker(junk)
    assert not result.passed
    assert result.message


def test_verdicts_follow_the_language():
    tc.set_language("fr")
    result = ch08.word_alignment(None)
    assert not result.passed
    tc.set_language("en")
