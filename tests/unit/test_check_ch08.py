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


# --- teacher forcing for a decoder-only model -------------------------------------------------

def _decoder_only(ignored=None, shift=True, ignore_value=-100, eos=True):
    def fn(src, tgt, sep_id, eos_id):
        batch = src.shape[0]
        parts = [src, torch.full((batch, 1), sep_id), tgt]
        if eos:
            parts.append(torch.full((batch, 1), eos_id))
        sequence = torch.cat(parts, dim=1)
        inputs = sequence[:, :-1] if eos else sequence
        targets = (sequence[:, 1:] if shift else sequence[:, :-1]).clone()
        targets[:, :src.shape[1] if ignored is None else ignored(src.shape[1])] = ignore_value
        return inputs, targets
    return fn


def test_decoder_only_batch_accepts_the_right_answer():
    result = ch08.decoder_only_batch(_decoder_only())
    assert result.passed, result.message
    src, tgt = torch.tensor([[5, 6, 7]]), torch.tensor([[8, 9]])
    inputs, targets = _decoder_only()(src, tgt, 1, 2)
    assert inputs.tolist() == [[5, 6, 7, 1, 8, 9]]
    assert targets.tolist() == [[-100, -100, -100, 8, 9, 2]]


@pytest.mark.parametrize(("wrong", "words"), [
    (_decoder_only(ignored=lambda n: 0), "no target is ignored"),
    (_decoder_only(ignored=lambda n: n + 1), "one target too many"),
    (_decoder_only(ignored=lambda n: n - 1), "<sep>, is not ignored"),
    (_decoder_only(shift=False), "shifted by one"),
    (_decoder_only(ignore_value=0), "-100"),
    (_decoder_only(eos=False), "<eos>"),
    (lambda src, tgt, s, e: _decoder_only()(src, tgt, s, e)[1], "(inputs, targets)"),
])
def test_decoder_only_batch_explains_typical_mistakes(wrong, words):
    result = ch08.decoder_only_batch(wrong)
    assert not result.passed
    assert words in result.message, result.message


# --- cross-attention to a padded memory -------------------------------------------------------

def _padded(mode="right", scale=None):
    def fn(y, memory, keep, w_q, w_k, w_v):
        q, k, v = y @ w_q.T, memory @ w_k.T, memory @ w_v.T
        d = {None: q.shape[-1], "y": y.shape[-1], "none": 1}[scale]
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)             # (B, L_out, L_in)
        blocked = ~keep[:, None, :]
        if mode == "right":
            scores = scores.masked_fill(blocked, float("-inf"))
        elif mode == "zero":
            scores = scores.masked_fill(blocked, 0.0)
        elif mode == "inverted":
            scores = scores.masked_fill(~blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mode == "after":
            weights = weights * ~blocked
        return weights @ v
    return fn


def test_padded_cross_attention_accepts_the_right_answer_and_matches_the_package():
    assert ch08.padded_cross_attention(_padded()).passed
    y, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    keep = torch.tensor([[True] * 5, [True, True, False, False, False]])
    w = [torch.randn(8, 8) for _ in range(3)]
    expected, _ = tc.attention(y @ w[0].T, memory @ w[1].T, memory @ w[2].T,
                               mask=keep[:, None, :])
    torch.testing.assert_close(_padded()(y, memory, keep, *w), expected)


@pytest.mark.parametrize(("wrong", "words"), [
    (_padded(mode="none"), "not masked"),
    (_padded(mode="zero"), "-inf"),
    (_padded(mode="after"), "sum to 1"),
    (_padded(mode="inverted"), "reversed"),
    (_padded(scale="y"), "width of y"),
    (_padded(scale="none"), "not scaled"),
])
def test_padded_cross_attention_explains_typical_mistakes(wrong, words):
    result = ch08.padded_cross_attention(wrong)
    assert not result.passed
    assert words in result.message, result.message


# --- constrained greedy decoding --------------------------------------------------------------

def _constrained(fill=float("-inf"), constrain=True, keep_bos=False, as_float=False,
                 shift=0, mask=True):
    def fn(model, src, bos_id, allowed):
        src_mask = model.source_mask(src)
        memory = model.encode(src, src_mask=src_mask)
        out = torch.full((src.shape[0], 1), bos_id)
        for t in range(allowed.shape[0]):
            logits = model.decode(out, memory, src_mask=src_mask if mask else None)[:, -1]
            if constrain:
                row = allowed[(t + shift) % allowed.shape[0]]
                logits = (logits.masked_fill(~row, fill) if fill != 0
                          else logits * row)
            out = torch.cat([out, logits.argmax(-1, keepdim=True)], dim=1)
        result = out if keep_bos else out[:, 1:]
        return result.float() if as_float else result
    return fn


def test_constrained_greedy_accepts_the_right_answer():
    result = ch08.constrained_greedy(_constrained())
    assert result.passed, result.message


def test_constrained_greedy_with_everything_allowed_is_greedy_decoding():
    model, src, _ = ch08._constrained_problem()
    allowed = torch.ones(6, 10, dtype=torch.bool)
    with torch.no_grad():
        got = _constrained()(model, src, 1, allowed)
        # greedy_decode stops at <eos>: compare with no <eos> id that the model ever writes
        plain = model.greedy_decode(src, bos_id=1, eos_id=9, max_len=6)
    if plain.shape == got.shape and not bool((plain == 9).any()):
        assert torch.equal(got, plain)
    assert torch.equal(got, _constrained(constrain=False)(model, src, 1, allowed))


@pytest.mark.parametrize(("wrong", "words"), [
    (_constrained(constrain=False), "plain greedy"),
    (_constrained(fill=0.0), "score of 0"),
    (_constrained(keep_bos=True), "<bos>"),
    (_constrained(as_float=True), "must be integers"),
    (_constrained(fill=-1.0), "score of 0"),
    (_constrained(shift=1), "forbids"),
    (_constrained(mask=False), "reads the padding"),
])
def test_constrained_greedy_explains_typical_mistakes(wrong, words):
    result = ch08.constrained_greedy(wrong)
    assert not result.passed
    assert words in result.message, result.message


# --- every checker survives junk ------------------------------------------------------------

@pytest.mark.parametrize("checker", [ch08.scheduled_sampling, ch08.cross_attention_widths,
                                     ch08.word_alignment, ch08.decoder_only_batch,
                                     ch08.padded_cross_attention, ch08.constrained_greedy])
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
