"""The functional core against PyTorch's own kernels and the conventions of DESIGN.md."""

import math

import pytest
import torch
import torch.nn.functional as F

import transformer_course as tc

F64 = torch.float64


def qkv(*lead, lq=5, lk=7, dk=8, dv=6, dtype=F64):
    return (torch.randn(*lead, lq, dk, dtype=dtype), torch.randn(*lead, lk, dk, dtype=dtype),
            torch.randn(*lead, lk, dv, dtype=dtype))


def test_soft_argmax_is_softmax_of_beta_times_scores():
    s = torch.randn(3, 4, dtype=F64)
    for beta in (0.0, 0.3, 1.0, 7.5):
        torch.testing.assert_close(tc.soft_argmax(s, beta), torch.softmax(beta * s, -1))
    torch.testing.assert_close(tc.soft_argmax(s, 2.0, dim=0), torch.softmax(2 * s, 0))


def test_soft_argmax_beta_zero_is_uniform():
    out = tc.soft_argmax(torch.randn(2, 5), 0.0)
    torch.testing.assert_close(out, torch.full((2, 5), 0.2))


def test_soft_argmax_refuses_scores_without_probabilities():
    """NaN and +inf scores once came back as rows of NaN; -inf is a masked score."""
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"scores must hold no NaN nor \+inf, got \(1, 3\)"):
            tc.soft_argmax(torch.tensor([[0.0, bad, 1.0]]))
    masked = tc.soft_argmax(torch.tensor([[0.0, float("-inf"), 0.0]]))
    torch.testing.assert_close(masked, torch.tensor([[0.5, 0.0, 0.5]]))
    recorded = torch.tensor([[0.0, float("inf")]], requires_grad=True)
    assert torch.isnan(tc.soft_argmax(recorded)).all()  # training reads nothing back on the host


def test_hard_argmax_one_hot_and_ties_to_lowest_index():
    s = torch.tensor([[0.1, 2.0, -1.0], [3.0, 3.0, 1.0], [1.0, 1.0, 1.0]])
    expected = torch.tensor([[0.0, 1, 0], [1, 0, 0], [1, 0, 0]])
    assert torch.equal(tc.hard_argmax(s), expected)
    assert torch.equal(tc.hard_argmax(s.T, dim=0), expected.T)


def test_causal_mask():
    m = tc.causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    assert torch.equal(m, torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0],
                                        [1, 1, 1, 1]]).bool())


def test_padding_mask():
    ids = torch.tensor([[4, 5, 0, 0], [7, 0, 3, 9]])
    m = tc.padding_mask(ids)
    assert m.shape == (2, 1, 1, 4) and m.dtype == torch.bool
    assert m[:, 0, 0].tolist() == [[True, True, False, False], [True, False, True, True]]
    assert tc.padding_mask(ids, pad_id=9)[1, 0, 0].tolist() == [True, True, True, False]


def test_split_and_merge_heads_round_trip():
    x = torch.randn(2, 5, 12)
    heads = tc.split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    # head h holds the features h * d_head ... (h + 1) * d_head - 1
    torch.testing.assert_close(heads[:, 1], x[..., 4:8])
    torch.testing.assert_close(tc.merge_heads(heads), x)


def test_attention_default_beta_is_one_over_sqrt_dk():
    q, k, v = qkv(2)
    out, w = tc.attention(q, k, v)
    ref_w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), -1)
    torch.testing.assert_close(w, ref_w, rtol=0, atol=1e-12)
    torch.testing.assert_close(out, ref_w @ v, rtol=0, atol=1e-12)


@pytest.mark.parametrize("beta", [None, 0.0, 0.25, 1.0, 3.0])
@pytest.mark.parametrize("masking", ["none", "causal", "padding", "both"])
def test_attention_matches_scaled_dot_product_attention(beta, masking):
    q, k, v = qkv(2, 3, lq=6, lk=6)
    mask = None
    if masking in ("causal", "both"):
        mask = tc.causal_mask(6)
    if masking in ("padding", "both"):
        pad = tc.padding_mask(torch.tensor([[1, 2, 3, 4, 0, 0], [1, 2, 3, 4, 5, 6]]))
        mask = pad if mask is None else mask & pad
    out, _ = tc.attention(q, k, v, mask=mask, beta=beta)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=beta)
    assert (out - ref).abs().max() < 1e-9


def test_attention_gradients_match_sdpa():
    q, k, v = (t.requires_grad_() for t in qkv(2, lq=4, lk=5))
    mask = torch.tensor([True, True, False, True, False])
    tc.attention(q, k, v, mask=mask, beta=0.7)[0].square().sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.7).square().sum().backward()
    for ours, ref in zip(grads, (q.grad, k.grad, v.grad), strict=True):
        assert (ours - ref).abs().max() < 1e-9


def test_fully_masked_row_gives_zero_weights_output_and_gradients():
    q, k, v = (t.requires_grad_() for t in qkv(lq=3, lk=4))
    mask = torch.ones(3, 4, dtype=torch.bool)
    mask[1] = False
    out, w = tc.attention(q, k, v, mask=mask)
    assert torch.equal(w[1], torch.zeros(4, dtype=F64))
    assert torch.equal(out[1], torch.zeros(6, dtype=F64))
    torch.testing.assert_close(w.sum(-1), torch.tensor([1.0, 0.0, 1.0], dtype=F64))
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(q.grad[1], torch.zeros(8, dtype=F64))


def test_everything_masked_hard_attention_is_zero_too():
    q, k, v = qkv(lq=2, lk=3)
    out, w = tc.attention(q, k, v, mask=torch.zeros(2, 3, dtype=torch.bool), hard=True)
    assert not w.any() and not out.any()


def test_hard_attention_picks_the_best_allowed_key():
    q = torch.tensor([[1.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    v = torch.tensor([[10.0], [20.0], [30.0]])
    out, w = tc.attention(q, k, v, hard=True)
    assert w.tolist() == [[0.0, 1.0, 0.0]] and out.item() == 20.0
    out, w = tc.attention(q, k, v, hard=True, mask=torch.tensor([True, False, True]))
    assert w.tolist() == [[1.0, 0.0, 0.0]] and out.item() == 10.0


def test_beta_zero_averages_the_allowed_values():
    q, k, v = qkv(lq=2, lk=4)
    mask = torch.tensor([True, False, True, True])
    out, _ = tc.attention(q, k, v, beta=0.0, mask=mask)
    torch.testing.assert_close(out, v[mask].mean(0).expand(2, -1))


def test_huge_beta_stays_finite_and_tends_to_hard():
    q, k, v = qkv(2, lq=4, lk=6, dtype=torch.float32)
    out, w = tc.attention(q, k, v, beta=1e6)
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    _, hard = tc.attention(q, k, v, hard=True)
    torch.testing.assert_close(w, hard)


def test_attention_broadcasts_leading_dimensions():
    q = torch.randn(2, 3, 4, 8)
    k = torch.randn(1, 3, 5, 8)  # shared across the batch
    v = torch.randn(5, 6)  # shared across batch and heads
    out, w = tc.attention(q, k, v)
    assert out.shape == (2, 3, 4, 6) and w.shape == (2, 3, 4, 5)


def test_dropout_on_attention_weights_only_in_output():
    q, k, v = qkv(lq=3, lk=5)
    torch.manual_seed(1)
    out, w = tc.attention(q, k, v, dropout_p=0.5)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, dtype=F64))  # returned before dropout
    assert not torch.allclose(out, tc.attention(q, k, v)[0])
