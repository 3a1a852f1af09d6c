"""Chapter 3's transfer checkers: the right answer passes, plausible wrong answers fail
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


JUNK = [None, 42, lambda *a: None, lambda *a: 1 / 0, lambda *a: "text",
        lambda *a: torch.full((2,), float("nan")), lambda *a: torch.zeros(0)]


# --- cosine_lookup ------------------------------------------------------------------------------

def cosine_lookup(query, keys, values, beta):
    cosines = (keys @ query) / (keys.norm(dim=-1) * query.norm())
    return torch.softmax(beta * cosines, dim=-1) @ values


def test_cosine_lookup_accepts_the_right_answer_and_torch_cosine_similarity():
    assert check.cosine_lookup(cosine_lookup)
    assert check.cosine_lookup(
        lambda q, k, v, b: torch.softmax(b * F.cosine_similarity(k, q[None], dim=-1), -1) @ v)


def test_cosine_lookup_names_the_plain_dot_product():
    failed(check.cosine_lookup(lambda q, k, v, b: torch.softmax(b * (k @ q), -1) @ v),
           "plain dot product", "angle")


def test_cosine_lookup_names_the_side_left_unnormalised():
    failed(check.cosine_lookup(lambda q, k, v, b: torch.softmax(b * (k @ q) / q.norm(), -1) @ v),
           "keys are not normalised")
    unit_keys = lambda k: k / k.norm(dim=-1, keepdim=True)  # noqa: E731
    failed(check.cosine_lookup(lambda q, k, v, b: torch.softmax(b * unit_keys(k) @ q, -1) @ v),
           "query is not normalised")


def test_cosine_lookup_names_a_missing_beta():
    failed(check.cosine_lookup(lambda q, k, v, b: cosine_lookup(q, k, v, 1.0)),
           "not multiplied by beta")


def test_cosine_lookup_reports_the_weights_instead_of_the_value():
    result = check.cosine_lookup(
        lambda q, k, v, b: torch.softmax(b * F.cosine_similarity(k, q[None], dim=-1), -1))
    failed(result, "shape")


@pytest.mark.parametrize("junk", JUNK)
def test_cosine_lookup_survives_junk(junk):
    assert not check.cosine_lookup(junk)


# --- beta_for_weight ----------------------------------------------------------------------------

def beta_for_weight(scores, target):
    def best(beta):
        return torch.softmax(beta * scores, dim=-1).max().item()

    low, high = 0.0, 1.0
    while best(high) < target:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if best(middle) < target else (low, middle)
    return (low + high) / 2


def test_beta_for_weight_accepts_a_float_or_a_one_element_tensor():
    assert check.beta_for_weight(beta_for_weight)
    assert check.beta_for_weight(lambda s, t: torch.tensor(beta_for_weight(s, t)))


def test_beta_for_weight_names_the_two_key_formula():
    def two_keys(scores, target):
        first, second = scores.topk(2).values.tolist()
        return math.log(target / (1 - target)) / (first - second)

    failed(check.beta_for_weight(two_keys), "two keys only", "share the rest")


def test_beta_for_weight_names_the_temperature():
    failed(check.beta_for_weight(lambda s, t: 1 / beta_for_weight(s, t)),
           "temperature T = 1 / beta")


def test_beta_for_weight_rejects_a_negative_beta_and_a_wrong_weight():
    failed(check.beta_for_weight(lambda s, t: -beta_for_weight(s, t)), "negative beta")
    failed(check.beta_for_weight(lambda s, t: 2 * beta_for_weight(s, t)), "gives the best key")


@pytest.mark.parametrize("junk", [*JUNK, lambda s, t: float("inf"), lambda s, t: True,
                                  lambda s, t: torch.ones(2)])
def test_beta_for_weight_survives_junk(junk):
    assert not check.beta_for_weight(junk)


# --- score_variance -----------------------------------------------------------------------------

def score_variance(d, mean_q, var_q, mean_k, var_k):
    return d * ((var_q + mean_q**2) * (var_k + mean_k**2) - (mean_q * mean_k) ** 2)


def test_score_variance_accepts_the_formula_and_matches_sampling():
    assert check.score_variance(score_variance)
    g = torch.Generator().manual_seed(0)
    q = 0.5 + math.sqrt(2.0) * torch.randn(50_000, 8, generator=g)
    k = -1.0 + math.sqrt(3.0) * torch.randn(50_000, 8, generator=g)
    measured = (q * k).sum(-1).var().item()
    assert abs(measured / score_variance(8, 0.5, 2.0, -1.0, 3.0) - 1) < 0.05


def test_score_variance_names_the_forgotten_means():
    failed(check.score_variance(lambda d, mq, vq, mk, vk: d * vq * vk), "the means count too")


def test_score_variance_names_the_uncentred_second_moment():
    failed(check.score_variance(lambda d, mq, vq, mk, vk: d * (vq + mq**2) * (vk + mk**2)),
           "subtract the square of the mean")


def test_score_variance_names_one_product_the_sum_and_the_standard_deviation():
    failed(check.score_variance(lambda d, mq, vq, mk, vk: score_variance(1, mq, vq, mk, vk)),
           "one product")
    failed(check.score_variance(lambda d, mq, vq, mk, vk: d * (vq + vk)),
           "not the sum of the variances")
    failed(check.score_variance(lambda *a: math.sqrt(score_variance(*a))), "standard deviation")


@pytest.mark.parametrize("junk", [*JUNK, lambda *a: float("nan")])
def test_score_variance_survives_junk(junk):
    assert not check.score_variance(junk)


def test_messages_use_the_readers_number_format():
    tc.set_language("fr")
    result = check.beta_for_weight(lambda s, t: 2 * beta_for_weight(s, t))
    assert "0,9" in result.message and "(0,00\u202f; 1,00)" in result.message



def test_every_checker_of_the_chapter_is_exported_and_tested_here():
    assert set(check.ch03.__all__) == {"beta_for_weight", "chunked_attention", "cosine_lookup",
                                       "lookup_spread", "mha_projections", "score_variance"}
    assert all(name in check.__all__ for name in check.ch03.__all__)


# --- mha_projections ----------------------------------------------------------------------------

def mha_projections(mha, query, key, value):
    e = mha.embed_dim
    if mha.in_proj_weight is not None:
        w_q, w_k, w_v = mha.in_proj_weight.split(e)
    else:
        w_q, w_k, w_v = mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight
    b_q, b_k, b_v = (None,) * 3 if mha.in_proj_bias is None else mha.in_proj_bias.split(e)
    return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)


def split(t, heads):
    return t.unflatten(-1, (heads, t.shape[-1] // heads)).transpose(1, 2)


@pytest.mark.parametrize("kdim, vdim, bias", [(None, None, True), (5, 3, True), (4, 7, False),
                                              (8, 8, False)])
def test_the_reference_projections_give_pytorchs_own_output(kdim, vdim, bias):
    """What the checker expects is what nn.MultiheadAttention computes: its forward pass,
    rebuilt from these projections, gives the module's output."""
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True, kdim=kdim, vdim=vdim, bias=bias)
    if bias:
        with torch.no_grad():
            mha.in_proj_bias.normal_()
    query = torch.randn(2, 4, 8)
    key, value = torch.randn(2, 6, kdim or 8), torch.randn(2, 6, vdim or 8)
    q, k, v = mha_projections(mha, query, key, value)
    mixed = F.scaled_dot_product_attention(split(q, 2), split(k, 2), split(v, 2))
    ours = mha.out_proj(mixed.transpose(1, 2).flatten(-2))
    assert torch.allclose(ours, mha(query, key, value)[0], atol=1e-6)


def test_mha_projections_accepts_the_right_answer_and_tc_from_torch():
    result = check.mha_projections(mha_projections)
    assert result, result
    assert "in_proj_weight only when" in result.message

    def through_the_package(mha, query, key, value):  # tc.from_torch copies the same slices
        ours = tc.from_torch(mha)
        return ours.W_q(query), ours.W_k(key), ours.W_v(value)
    assert check.mha_projections(through_the_package)


def test_mha_projections_names_the_packed_weight_that_is_none():
    def packed_only(mha, query, key, value):
        e = mha.embed_dim
        w_q, w_k, w_v = mha.in_proj_weight.split(e)
        b_q, b_k, b_v = (None,) * 3 if mha.in_proj_bias is None else mha.in_proj_bias.split(e)
        return F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    failed(check.mha_projections(packed_only), "kdim = 5", "AttributeError",
           "in_proj_weight is None", "q_proj_weight")


def test_mha_projections_names_a_missing_bias_and_a_wrong_order():
    def no_bias(mha, query, key, value):
        e = mha.embed_dim
        if mha.in_proj_weight is not None:
            w_q, w_k, w_v = mha.in_proj_weight.split(e)
        else:
            w_q, w_k, w_v = mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight
        return query @ w_q.T, key @ w_k.T, value @ w_v.T
    failed(check.mha_projections(no_bias), "the bias is missing", "q of self-attention")

    def swapped(mha, query, key, value):
        v = mha_projections(mha, query, key, value)[2]
        e = mha.embed_dim
        w_q, w_k, _ = mha.in_proj_weight.split(e)
        b_q, b_k, _ = mha.in_proj_bias.split(e)
        return F.linear(query, w_k, b_k), F.linear(key, w_q, b_q), v
    failed(check.mha_projections(swapped), "slice of another projection", "in this order")


def test_mha_projections_names_the_wrong_input_and_the_untransposed_weight():
    def from_query(mha, query, key, value):
        return mha_projections(mha, query, query, query)
    failed(check.mha_projections(from_query), "k of cross-attention", "projects another input")

    def untransposed(mha, query, key, value):
        e = mha.embed_dim
        w_q, w_k, w_v = mha.in_proj_weight.split(e)
        b_q, b_k, b_v = mha.in_proj_bias.split(e)
        return query @ w_q + b_q, key @ w_k + b_k, value @ w_v + b_v
    failed(check.mha_projections(untransposed), "not transposed", "x @ W.T")


def test_mha_projections_names_heads_split_too_early_and_a_wrong_shape():
    def heads(mha, query, key, value):
        q, k, v = mha_projections(mha, query, key, value)
        return split(q, mha.num_heads), k, v
    failed(check.mha_projections(heads), "already split", "(B, L, embed_dim)")

    def two(mha, query, key, value):
        return mha_projections(mha, query, key, value)[:2]
    failed(check.mha_projections(two), "expected a tuple `(q, k, v)`")


@pytest.mark.parametrize("junk", [*JUNK, lambda *a: (None, None, None),
                                  lambda *a: (torch.zeros(2), torch.zeros(2), torch.zeros(2))])
def test_mha_projections_survives_junk(junk):
    assert not check.mha_projections(junk)


def test_mha_projections_speaks_the_readers_language():
    tc.set_language("fr")
    result = check.mha_projections(lambda m, q, k, v: mha_projections(m, q, q, q))
    assert not result and "attention croisée" in result.message


# --- lookup_spread ------------------------------------------------------------------------------

def lookup_spread(query, keys, values, beta):
    weights = torch.softmax(beta * (keys @ query), dim=-1)
    mean = weights @ values
    return mean, (weights @ (values - mean) ** 2).sqrt()


def test_lookup_spread_accepts_the_right_answer_and_matches_the_recipe_book():
    assert check.lookup_spread(lookup_spread)
    keys = torch.tensor([[1.0, 1.0, 0.2], [1.0, 0.0, 0.0], [0.0, 0.2, 1.0], [0.1, 1.0, 1.0],
                         [0.3, 1.0, 0.3]])
    values = torch.tensor([[90.0, 650.0], [20.0, 700.0], [60.0, 250.0], [50.0, 350.0],
                           [30.0, 800.0]])
    query = torch.tensor([0.9, 0.9, 0.0])
    mean, spread = lookup_spread(query, keys, values, 0.0)
    assert torch.allclose(spread, values.std(dim=0, correction=0))  # beta = 0: all equal
    mean, spread = lookup_spread(query, keys, values, 1.0)
    assert torch.allclose(mean, tc.attention(query[None], keys, values, beta=1.0)[0][0])
    assert lookup_spread(query, keys, values, 40.0)[1].max() < 1e-3  # hard retrieval: no spread


def test_lookup_spread_names_the_classic_mistakes():
    def variance(q, k, v, b):
        mean, spread = lookup_spread(q, k, v, b)
        return mean, spread**2
    failed(check.lookup_spread(variance), "the variance", "square root")

    def unweighted(q, k, v, b):
        return lookup_spread(q, k, v, b)[0], v.std(dim=0)
    failed(check.lookup_spread(unweighted), "every value counts the same")

    def plain_mean(q, k, v, b):
        weights = torch.softmax(b * (k @ q), dim=-1)
        return weights @ v, (weights @ (v - v.mean(dim=0)) ** 2).sqrt()
    failed(check.lookup_spread(plain_mean), "plain mean of the values")

    def absolute(q, k, v, b):
        weights = torch.softmax(b * (k @ q), dim=-1)
        mean = weights @ v
        return mean, weights @ (v - mean).abs()
    failed(check.lookup_spread(absolute), "absolute deviations")

    def mean_only(q, k, v, b):
        return lookup_spread(q, k, v, b)[0]
    failed(check.lookup_spread(mean_only), "expected a tuple (mean, spread)")

    def default_scale(q, k, v, b):  # tc.attention's 1 / sqrt(d) instead of beta
        mean = tc.attention(q[None], k, v)[0][0]
        return mean, lookup_spread(q, k, v, b)[1]
    failed(check.lookup_spread(default_scale), "(the mean)")


@pytest.mark.parametrize("junk", [*JUNK, lambda *a: (None, None), lambda *a: (torch.zeros(2),)])
def test_lookup_spread_survives_junk(junk):
    assert not check.lookup_spread(junk)


# --- chunked_attention ----------------------------------------------------------------------------

def chunked_attention(q, k, v, chunk):
    scale = 1 / math.sqrt(k.shape[-1])
    top = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)
    total = torch.zeros_like(top)
    mixed = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)
    for start in range(0, k.shape[-2], chunk):
        block = q @ k[..., start:start + chunk, :].transpose(-2, -1) * scale
        new_top = torch.maximum(top, block.amax(dim=-1, keepdim=True))
        rescale = torch.exp(top - new_top)
        e = torch.exp(block - new_top)
        total = total * rescale + e.sum(dim=-1, keepdim=True)
        mixed = mixed * rescale + e @ v[..., start:start + chunk, :]
        top = new_top
    return mixed / total


def _no_maximum(q, k, v, chunk):  # blocks without the running maximum: exp overflows
    total, mixed = 0, 0
    for s in range(0, k.shape[-2], chunk):
        e = torch.exp(q @ k[..., s:s + chunk, :].transpose(-2, -1) / math.sqrt(q.shape[-1]))
        total, mixed = total + e.sum(-1, keepdim=True), mixed + e @ v[..., s:s + chunk, :]
    return mixed / total


def test_chunked_attention_accepts_the_right_answer_on_any_block_size():
    assert check.chunked_attention(chunked_attention)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, n, 8, generator=g) for n in (5, 13, 13))
    for chunk in (1, 4, 13, 20):
        expected = F.scaled_dot_product_attention(q, k, v)
        assert torch.allclose(chunked_attention(q, k, v, chunk), expected, atol=1e-5)


def test_chunked_attention_has_scores_above_1000_that_overflow_float64():
    # Exercise 3.3 tells the reader that one case has scores above 1,000, where exp overflows
    # even in float64 (beyond about 709.8): the inputs the checker sends must say the same.
    seen = []

    def spy(q, k, v, chunk):  # keeps the inputs (no new tensor) and answers right
        seen.append((q, k))
        return chunked_attention(q, k, v, chunk)
    assert check.chunked_attention(spy)
    top = max(float((q @ k.transpose(-2, -1)).max()) / math.sqrt(q.shape[-1]) for q, k in seen)
    assert 1000 < top < 1250
    with pytest.raises(OverflowError):
        math.exp(top)
    failed(check.chunked_attention(_no_maximum), "scores up to about 1,200", "not finite")


def test_chunked_attention_refuses_the_whole_score_matrix():
    for whole in (lambda q, k, v, c: F.scaled_dot_product_attention(q, k, v),
                  lambda q, k, v, c: tc.attention(q, k, v)[0]):
        failed(check.chunked_attention(whole), "the whole score matrix", "(2, 3, 11)")

    def concatenated(q, k, v, chunk):  # the blocks' scores put back together
        parts = [q @ k[..., s:s + chunk, :].transpose(-2, -1) for s in range(0, k.shape[-2], chunk)]
        return torch.softmax(torch.cat(parts, dim=-1) / math.sqrt(q.shape[-1]), dim=-1) @ v
    failed(check.chunked_attention(concatenated), "the whole score matrix")

    def broadcast(q, k, v, chunk):  # every product q_i * k_j at once, a dimension further on
        s = (q.unsqueeze(-2) * k.unsqueeze(-3) / math.sqrt(k.shape[-1])).sum(-1, keepdim=True)
        return (torch.softmax(s, dim=-2) * v.unsqueeze(-3)).sum(-2)
    failed(check.chunked_attention(broadcast), "the whole score matrix", "(2, 3, 11, 5)")

    def query_by_query(q, k, v, chunk):  # one query at a time, but all its keys at once
        rows = [torch.softmax(q[..., i:i + 1, :] @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]),
                              dim=-1) @ v for i in range(q.shape[-2])]
        return torch.cat(rows, dim=-2)
    failed(check.chunked_attention(query_by_query), "the scores of every key", "(2, 1, 11)")


def test_chunked_attention_names_the_classic_mistakes():
    from transformer_course.check.ch03 import _blocks

    failed(check.chunked_attention(_no_maximum), "not finite", "running maximum")
    failed(check.chunked_attention(lambda q, k, v, c: _blocks(q, k, v, c, rescale=False)),
           "not rescaled")
    failed(check.chunked_attention(lambda q, k, v, c: _blocks(q, k, v, c, normalise=False)),
           "not divided by the sum of the exponentials")
    failed(check.chunked_attention(lambda q, k, v, c: _blocks(q, k, v, c, average=True)),
           "normalised on its own")

    def unscaled(q, k, v, chunk):
        return chunked_attention(q * math.sqrt(q.shape[-1]), k, v, chunk)
    failed(check.chunked_attention(unscaled), "not divided by sqrt(d_k) = 2.24")


@pytest.mark.parametrize("junk", JUNK)
def test_chunked_attention_survives_junk(junk):
    assert not check.chunked_attention(junk)


def test_the_new_checkers_speak_the_readers_language():
    tc.set_language("fr")
    assert "toute la matrice des scores" in check.chunked_attention(
        lambda q, k, v, c: F.scaled_dot_product_attention(q, k, v)).message
    tc.set_language("it")
    def variance(q, k, v, b):
        mean, spread = lookup_spread(q, k, v, b)
        return mean, spread**2
    assert "radice quadrata" in check.lookup_spread(variance).message
