"""Chapter 4's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing the checker."""

import math

import pytest
import torch
import torch.nn.functional as F

import transformer_course as tc
from transformer_course import check


@pytest.fixture(autouse=True)
def english():
    tc.set_language("en")
    yield
    tc.set_language("en")


def failed(result, *words):
    assert not result, result
    for word in words:
        assert word in result.message, (word, result.message)


JUNK = [None, 42, lambda *a: None, lambda *a: 1 / 0, lambda *a: "text", lambda *a: (1, 2),
        lambda *a: torch.full((2, 5, 12), float("nan")), lambda *a: torch.zeros(0)]


def heads(x, w, count):
    """(B, L, count * d_head) -> (B, count, L, d_head)."""
    b, n, width = (x @ w.T).shape
    return (x @ w.T).view(b, n, count, width // count).transpose(1, 2)


def merge(x):
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


# --- heads_of_any_width -------------------------------------------------------------------------

def mha_any_width(x, w_q, w_k, w_v, w_o, num_heads, scale=None):
    q, k, v = (heads(x, w, num_heads) for w in (w_q, w_k, w_v))
    d = q.shape[-1] if scale is None else scale
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return merge(weights @ v) @ w_o.T


def test_heads_of_any_width_accepts_the_right_answer_and_torch_sdpa():
    assert check.heads_of_any_width(mha_any_width)

    def fused(x, w_q, w_k, w_v, w_o, num_heads):
        q, k, v = (heads(x, w, num_heads) for w in (w_q, w_k, w_v))
        return merge(F.scaled_dot_product_attention(q, k, v)) @ w_o.T

    assert check.heads_of_any_width(fused)


def test_heads_of_any_width_names_the_scale_of_d_model_over_h():
    def wrong(x, w_q, w_k, w_v, w_o, num_heads):
        return mha_any_width(x, w_q, w_k, w_v, w_o, num_heads, scale=x.shape[-1] // num_heads)

    failed(check.heads_of_any_width(wrong), "sqrt(d_model / h)", "not d_model / h wide")


def test_heads_of_any_width_names_a_missing_scale_and_the_scale_of_all_heads():
    failed(check.heads_of_any_width(
        lambda x, q, k, v, o, h: mha_any_width(x, q, k, v, o, h, scale=1)), "not divided")
    failed(check.heads_of_any_width(
        lambda x, q, k, v, o, h: mha_any_width(x, q, k, v, o, h, scale=q.shape[0])),
        "sqrt(h d_head)")


def test_heads_of_any_width_reports_a_split_by_d_model_over_h():
    def split_by_d_model(x, w_q, w_k, w_v, w_o, num_heads):
        return heads(x, w_q, num_heads)  # forgot W_o: (B, h, L, d_head) comes out

    failed(check.heads_of_any_width(split_by_d_model), "shape")


@pytest.mark.parametrize("junk", JUNK)
def test_heads_of_any_width_survives_junk(junk):
    assert not check.heads_of_any_width(junk)


# --- grouped_query_attention --------------------------------------------------------------------

def gqa(x, w_q, w_k, w_v, w_o, num_heads, num_kv_heads, *, interleave=True):
    q = heads(x, w_q, num_heads)
    k, v = heads(x, w_k, num_kv_heads), heads(x, w_v, num_kv_heads)
    group = num_heads // num_kv_heads
    if interleave:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    else:
        k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return merge(weights @ v) @ w_o.T


def test_grouped_query_attention_accepts_the_right_answer_and_torch_enable_gqa():
    assert check.grouped_query_attention(gqa)

    def fused(x, w_q, w_k, w_v, w_o, num_heads, num_kv_heads):
        q, k, v = heads(x, w_q, num_heads), heads(x, w_k, num_kv_heads), heads(x, w_v,
                                                                                num_kv_heads)
        return merge(F.scaled_dot_product_attention(q, k, v, enable_gqa=True)) @ w_o.T

    assert check.grouped_query_attention(fused)


def test_grouped_query_attention_names_round_robin_groups():
    failed(check.grouped_query_attention(lambda *a: gqa(*a, interleave=False)),
           "repeat_interleave", "consecutive query heads")


def test_grouped_query_attention_names_a_missing_scale():
    def unscaled(x, w_q, w_k, w_v, w_o, num_heads, num_kv_heads):
        return gqa(x, w_q * math.sqrt(12 // num_heads), w_k, w_v, w_o, num_heads, num_kv_heads)

    failed(check.grouped_query_attention(unscaled), "not divided by sqrt(d_head)")


def test_grouped_query_attention_fails_when_keys_are_not_shared():
    def first_group_only(x, w_q, w_k, w_v, w_o, num_heads, num_kv_heads):
        return gqa(x, w_q, w_k[: w_k.shape[0] // num_kv_heads], w_v[: w_v.shape[0] // num_kv_heads],
                   w_o, num_heads, 1)

    failed(check.grouped_query_attention(first_group_only), "entry")


@pytest.mark.parametrize("junk", JUNK)
def test_grouped_query_attention_survives_junk(junk):
    assert not check.grouped_query_attention(junk)


# --- attention_parameter_count ------------------------------------------------------------------

def count(d_model, num_heads, d_head, kdim, vdim, bias):
    width = num_heads * d_head
    return width * (d_model + kdim + vdim) + d_model * width + (3 * width + d_model if bias else 0)


def test_attention_parameter_count_accepts_ints_whole_floats_and_tensors():
    assert check.attention_parameter_count(count)
    assert check.attention_parameter_count(lambda *a: float(count(*a)))
    assert check.attention_parameter_count(lambda *a: torch.tensor(count(*a)))


def test_attention_parameter_count_agrees_with_the_package():
    for h in (1, 8):
        module = tc.MultiHeadAttention(512, h, kdim=256, vdim=128)
        assert count(512, h, 512 // h, 256, 128, True) == sum(p.numel() for p in
                                                               module.parameters())


def test_attention_parameter_count_names_missing_or_extra_biases():
    failed(check.attention_parameter_count(lambda d, h, w, k, v, b: count(d, h, w, k, v, False)),
           "biases are missing")
    failed(check.attention_parameter_count(lambda d, h, w, k, v, b: count(d, h, w, k, v, True)),
           "bias = False")


def test_attention_parameter_count_names_w_o_kdim_and_the_head_width():
    failed(check.attention_parameter_count(
        lambda d, h, w, k, v, b: count(d, h, w, k, v, b) - (d * h * w + (d if b else 0))),
        "W_o")
    failed(check.attention_parameter_count(lambda d, h, w, k, v, b: count(d, h, w, d, d, b)),
           "kdim")
    failed(check.attention_parameter_count(lambda d, h, w, k, v, b: count(d, 1, d, k, v, b)),
           "h × d_head")


@pytest.mark.parametrize("junk", [*JUNK, lambda *a: 2.5, lambda *a: float("inf"),
                                  lambda *a: True, lambda *a: torch.ones(3)])
def test_attention_parameter_count_survives_junk(junk):
    assert not check.attention_parameter_count(junk)


def test_counts_use_the_readers_thousands_separator():
    tc.set_language("fr")
    result = check.attention_parameter_count(lambda d, h, w, k, v, b: count(d, h, w, k, v, False))
    assert tc.format_integer(1050624) in result.message
    assert "1,050,624" not in result.message

# --- without_heads ------------------------------------------------------------------------------

def without_heads(mha, x, removed, *, where="heads", bias=True):
    q, k, v = (tc.split_heads(layer(x), mha.num_heads) for layer in (mha.W_q, mha.W_k, mha.W_v))
    keep = torch.ones(mha.num_heads, 1, 1)
    keep[list(removed)] = 0.0
    if where == "scores":
        q = q * keep
    out, _ = tc.attention(q, k, v)
    if where == "heads":
        out = out * keep
    out = tc.merge_heads(out) @ mha.W_o.weight.T + (mha.W_o.bias if bias else 0.0)
    if where == "features":
        out = tc.merge_heads(tc.split_heads(out, mha.num_heads) * keep)
    return out


def test_without_heads_accepts_the_right_answer_and_other_right_ways():
    assert check.without_heads(without_heads)

    def pruned_columns(mha, x, removed):  # the same thing: zero the columns of W_o
        d_head = mha.d_head
        with torch.no_grad():
            for r in removed:
                mha.W_o.weight[:, r * d_head:(r + 1) * d_head] = 0.0
        return mha(x, x, x)[0]

    assert check.without_heads(pruned_columns)

    def zero_weights(mha, x, removed):  # weights of 0 give the head an output of 0 too
        q, k, v = (tc.split_heads(layer(x), mha.num_heads) for layer in (mha.W_q, mha.W_k,
                                                                         mha.W_v))
        _, weights = tc.attention(q, k, v)
        weights = weights.clone()
        weights[:, list(removed)] = 0.0
        return mha.W_o(tc.merge_heads(weights @ v))

    assert check.without_heads(zero_weights)


def test_without_heads_names_heads_counted_from_one():
    failed(check.without_heads(lambda m, x, r: without_heads(m, x, [i - 1 for i in r])),
           "instead of 1", "head 1 of the text is index 0")


def test_without_heads_names_nothing_switched_off_and_zeroing_after_w_o():
    failed(check.without_heads(lambda m, x, r: m(x, x, x)[0]), "nothing was switched off")
    failed(check.without_heads(lambda m, x, r: without_heads(m, x, r, where="features")),
           "after W_o")


def test_without_heads_names_zeroed_scores_and_a_missing_bias():
    failed(check.without_heads(lambda m, x, r: without_heads(m, x, r, where="scores")),
           "uniform weights")
    failed(check.without_heads(lambda m, x, r: without_heads(m, x, r, bias=False)),
           "bias of W_o is missing")


def test_without_heads_gives_each_call_its_own_module():
    seen = []

    def spoils_its_module(mha, x, removed):
        seen.append(mha)
        result = without_heads(mha, x, removed)
        with torch.no_grad():
            mha.W_o.weight.zero_()
        return result

    assert check.without_heads(spoils_its_module)
    assert len({id(m) for m in seen}) == len(seen) == 5


@pytest.mark.parametrize("junk", JUNK)
def test_without_heads_survives_junk(junk):
    assert not check.without_heads(junk)


def test_without_heads_speaks_french():
    tc.set_language("fr")
    result = check.without_heads(lambda m, x, r: m(x, x, x)[0])
    assert not result and "têtes" in result.message


# --- attention_at_offset ------------------------------------------------------------------------

def at_offset(weights, offset):
    return torch.diagonal(weights, offset=offset, dim1=-2, dim2=-1).mean(dim=(0, -1))


def test_attention_at_offset_accepts_the_right_answer_and_a_loop():
    assert check.attention_at_offset(at_offset)

    def loop(weights, offset):  # token by token, the tokens without a neighbour skipped
        n, heads, length, _ = weights.shape
        total = torch.zeros(heads)
        for i in range(length):
            if 0 <= i + offset < length:
                total += weights[:, :, i, i + offset].sum(0)
        return total / (n * (length - abs(offset)))

    assert check.attention_at_offset(loop)


def test_attention_at_offset_names_rows_read_as_columns():
    failed(check.attention_at_offset(lambda w, o: at_offset(w, -o)), "offset 1, not -1",
           "row i holds what token i looks at")


def test_attention_at_offset_names_zeros_for_missing_neighbours_and_a_sum():
    failed(check.attention_at_offset(lambda w, o: at_offset(w, o) * (w.shape[-1] - abs(o))
                                     / w.shape[-1]), "counts a zero", "the 5 tokens")
    failed(check.attention_at_offset(
        lambda w, o: torch.diagonal(w, offset=o, dim1=-2, dim2=-1).sum(-1).mean(0)),
        "added up")


def test_attention_at_offset_asks_for_one_number_per_head():
    failed(check.attention_at_offset(
        lambda w, o: torch.diagonal(w, offset=o, dim1=-2, dim2=-1).mean(-1)),
        "one number per head")
    failed(check.attention_at_offset(lambda w, o: at_offset(w, o).mean()), "shape")


@pytest.mark.parametrize("junk", JUNK)
def test_attention_at_offset_survives_junk(junk):
    assert not check.attention_at_offset(junk)


def test_attention_at_offset_speaks_italian():
    tc.set_language("it")
    result = check.attention_at_offset(lambda w, o: at_offset(w, -o))
    assert not result and "riga i" in result.message and "non −1" in result.message


# --- split_heads_strided --------------------------------------------------------------------------

def strided(x, num_heads):
    b, n, d = x.shape
    return x.view(b, n, d // num_heads, num_heads).permute(0, 3, 1, 2)


def test_split_heads_strided_accepts_the_right_answer_and_slices():
    assert check.split_heads_strided(strided)
    assert check.split_heads_strided(lambda x, h: torch.stack([x[..., j::h] for j in range(h)], 1))


def test_split_heads_strided_names_the_contiguous_split():
    failed(check.split_heads_strided(tc.split_heads), "contiguous slice", "1, 4, 7, 10")


def test_split_heads_strided_names_positions_and_features_swapped():
    failed(check.split_heads_strided(lambda x, h: strided(x, h).transpose(-2, -1)), "swapped",
           "(2, 3, 5, 4)")


def test_split_heads_strided_is_the_usual_split_after_a_reordering():
    x = torch.randn(2, 5, 12)
    order = torch.arange(12).view(4, 3).T.reshape(-1)  # head by head: 0, 3, 6, 9, 1, 4, ...
    assert torch.equal(strided(x, 3), tc.split_heads(x[..., order], 3))


@pytest.mark.parametrize("junk", JUNK)
def test_split_heads_strided_survives_junk(junk):
    assert not check.split_heads_strided(junk)


def test_split_heads_strided_speaks_french():
    tc.set_language("fr")
    result = check.split_heads_strided(tc.split_heads)
    assert not result and "têtes" in result.message and "contiguë" in result.message


def test_every_checker_of_the_chapter_is_exported_and_tested_here():
    assert set(check.ch04.__all__) == {"attention_at_offset", "attention_parameter_count",
                                       "grouped_query_attention", "heads_of_any_width",
                                       "split_heads_strided", "without_heads"}
    assert all(name in check.__all__ for name in check.ch04.__all__)
