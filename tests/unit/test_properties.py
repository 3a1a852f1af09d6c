"""Property-based tests (hypothesis) of the attention conventions."""

import torch
from hypothesis import given
from hypothesis import strategies as st

import transformer_course as tc

dims = st.integers(min_value=1, max_value=6)
betas = st.floats(min_value=0.0, max_value=20.0, allow_nan=False)


@st.composite
def problems(draw, with_mask=True):
    """A random attention problem in float64: Q, K, V and a boolean mask."""
    seed = draw(st.integers(0, 2**31 - 1))
    g = torch.Generator().manual_seed(seed)
    batch, lq, lk, dk, dv = (draw(dims) for _ in range(5))
    q = torch.randn(batch, lq, dk, generator=g, dtype=torch.float64)
    k = torch.randn(batch, lk, dk, generator=g, dtype=torch.float64)
    v = torch.randn(batch, lk, dv, generator=g, dtype=torch.float64)
    mask = None
    if with_mask and draw(st.booleans()):
        mask = torch.rand(batch, lq, lk, generator=g) < draw(st.floats(0.0, 1.0))
    return q, k, v, mask


@given(problems(), betas, st.booleans())
def test_rows_sum_to_one_or_are_all_zero(problem, beta, hard):
    q, k, v, mask = problem
    out, w = tc.attention(q, k, v, mask=mask, beta=beta, hard=hard)
    sums = w.sum(-1)
    assert torch.all((sums - 1).abs() < 1e-9) if mask is None else torch.all(
        ((sums - 1).abs() < 1e-9) | (sums == 0))
    assert torch.all(w >= 0) and torch.isfinite(out).all()
    if mask is not None:
        assert torch.all(w[~mask] == 0), "masked positions must get exactly 0"
        empty = ~mask.any(-1)
        assert torch.all(sums[empty] == 0) and torch.all(out[empty] == 0)


@given(problems(with_mask=False))
def test_beta_zero_is_uniform(problem):
    q, k, v, _ = problem
    _, w = tc.attention(q, k, v, beta=0.0)
    torch.testing.assert_close(w, torch.full_like(w, 1.0 / k.shape[-2]))


@given(problems(with_mask=False))
def test_large_beta_tends_to_hard_attention(problem):
    q, k, v, _ = problem
    scores = q @ k.transpose(-2, -1)
    top2 = scores.topk(min(2, scores.shape[-1]), dim=-1).values
    gap = (top2[..., 0] - top2[..., -1]).min() if scores.shape[-1] > 1 else torch.tensor(1.0)
    if gap < 1e-3:  # a (near) tie has no unique limit
        return
    beta = 60.0 / gap.item()  # exp(-60) of mass left on the runner-up
    soft_out, soft_w = tc.attention(q, k, v, beta=beta)
    hard_out, hard_w = tc.attention(q, k, v, hard=True)
    assert (soft_w - hard_w).abs().max() < 1e-6
    assert (soft_out - hard_out).abs().max() < 1e-5 * (1 + v.abs().max())


@given(problems(), betas, st.data())
def test_permuting_keys_and_values_together_changes_nothing(problem, beta, data):
    q, k, v, mask = problem
    perm = torch.tensor(data.draw(st.permutations(range(k.shape[-2]))))
    out, w = tc.attention(q, k, v, mask=mask, beta=beta)
    p_mask = None if mask is None else mask[..., perm]
    out_p, w_p = tc.attention(q, k[:, perm], v[:, perm], mask=p_mask, beta=beta)
    torch.testing.assert_close(out_p, out)
    torch.testing.assert_close(w_p, w[..., perm])


@given(problems(), betas, st.data())
def test_permuting_queries_permutes_outputs(problem, beta, data):
    q, k, v, mask = problem
    perm = torch.tensor(data.draw(st.permutations(range(q.shape[-2]))))
    out, w = tc.attention(q, k, v, mask=mask, beta=beta)
    p_mask = None if mask is None else mask[:, perm]
    out_p, w_p = tc.attention(q[:, perm], k, v, mask=p_mask, beta=beta)
    torch.testing.assert_close(out_p, out[:, perm])
    torch.testing.assert_close(w_p, w[:, perm])


@given(problems(with_mask=False), st.data())
def test_self_attention_is_permutation_equivariant(problem, data):
    x = problem[0]
    perm = torch.tensor(data.draw(st.permutations(range(x.shape[-2]))))
    mha = tc.MultiHeadAttention(x.shape[-1], 1).double()
    out, _ = mha(x, x, x)
    out_p, _ = mha(x[:, perm], x[:, perm], x[:, perm])
    torch.testing.assert_close(out_p, out[:, perm])


@given(st.lists(st.floats(-50, 50), min_size=1, max_size=8), betas)
def test_soft_argmax_is_a_distribution(values, beta):
    p = tc.soft_argmax(torch.tensor(values, dtype=torch.float64), beta)
    assert abs(p.sum().item() - 1) < 1e-9 and torch.all(p >= 0)
