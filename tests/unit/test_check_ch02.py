"""The checkers of chapter 2's transfer exercises: the right answer passes, plausible wrong
answers fail saying why, junk answers fail without crashing."""

import math

import torch

import transformer_course as tc
from transformer_course import check

JUNK = [None, (), [], float("nan"), float("inf"), "a string", True, (i for i in range(3)),
        torch.empty(2, 2, device="meta"), torch.zeros(2, 2, dtype=torch.complex64),
        torch.tensor(float("nan")), torch.zeros(3)]


def assert_junk_fails(checker):
    for junk in JUNK:
        result = checker(lambda *args, junk=junk: junk)
        assert isinstance(result, check.CheckResult) and not result, junk
        assert result.message and "could not be checked" not in result.message, result.message
    raised = checker(lambda *args: 1 / 0)
    assert not raised and "ZeroDivisionError" in raised.message
    todo = checker(lambda *args: (_ for _ in ()).throw(NotImplementedError("your code here")))
    assert not todo and "NotImplementedError" in todo.message
    assert not checker("not a function")


# --- recover_beta ------------------------------------------------------------------------------

def recover_beta(scores, weights):
    keep = weights > 0  # log 0 = -inf says nothing
    s, log_a = scores[keep], weights[keep].log()
    s_c = s - s.mean()
    if not (s_c != 0).any():
        return 0.0
    return float((s_c * (log_a - log_a.mean())).sum() / (s_c**2).sum())  # least squares


def test_recover_beta_right_answers_pass():
    result = check.recover_beta(recover_beta)
    assert result, result

    def as_tensor(scores, weights):  # a one-element tensor is accepted too
        return torch.tensor([recover_beta(scores, weights)])
    assert check.recover_beta(as_tensor)


def test_recover_beta_wrong_answers_say_why():
    def first_pair(scores, weights):  # breaks on ties and on zero weights
        return float((weights[1].log() - weights[2].log()) / (scores[1] - scores[2]))
    result = check.recover_beta(first_pair)
    assert not result and "scores with a tie" in result.message and "0 / 0" in result.message

    def all_weights(scores, weights):  # log 0 = -inf
        s, log_a = scores - scores.mean(), weights.log()
        return float((s * (log_a - log_a.mean())).sum() / (s**2).sum())
    result = check.recover_beta(all_weights)
    assert not result and "weights with exact zeros" in result.message

    def temperature(scores, weights):
        beta = recover_beta(scores, weights)
        return 1 / beta if beta else 0.0
    result = check.recover_beta(temperature)
    assert not result and "temperature T = 1 / beta" in result.message

    def sign(scores, weights):
        return -recover_beta(scores, weights)
    assert "sign is wrong" in check.recover_beta(sign).message

    def ratio(scores, weights):  # ratios of weights instead of their logarithms
        keep = weights > 0
        s, a = scores[keep] - scores[keep].mean(), weights[keep]
        return float((s * (a - a.mean())).sum() / (s**2).sum())
    result = check.recover_beta(ratio)
    assert not result and "expected 1.7" in result.message


def test_recover_beta_junk_fails_without_crashing():
    assert_junk_fails(check.recover_beta)
    assert "expected a number, got str" in check.recover_beta(lambda *a: "1").message
    assert "expected a number, got bool" in check.recover_beta(lambda *a: True).message


# --- additive_scores ---------------------------------------------------------------------------

def additive_scores(x, w_q, w_k, v):
    q, k = x @ w_q.T, x @ w_k.T  # (t, d) each
    return torch.tanh(q[:, None, :] + k[None, :, :]) @ v  # (t, t)


def test_additive_scores_right_answer_passes():
    result = check.additive_scores(additive_scores)
    assert result, result


def test_additive_scores_wrong_answers_say_why():
    def swapped(x, w_q, w_k, v):
        return additive_scores(x, w_q, w_k, v).T
    assert "rows and columns are swapped" in check.additive_scores(swapped).message

    def no_tanh(x, w_q, w_k, v):
        q, k = x @ w_q.T, x @ w_k.T
        return (q[:, None, :] + k[None, :, :]) @ v
    assert "tanh is missing" in check.additive_scores(no_tanh).message

    def dot(x, w_q, w_k, v):
        return (x @ w_q.T) @ (x @ w_k.T).T
    assert "dot products of the projections" in check.additive_scores(dot).message

    def no_v(x, w_q, w_k, v):
        q, k = x @ w_q.T, x @ w_k.T
        return torch.tanh(q[:, None, :] + k[None, :, :]).sum(-1)
    assert "ignores v" in check.additive_scores(no_v).message

    def untransposed(x, w_q, w_k, v):  # x @ w_q: shapes do not fit
        return torch.tanh((x @ w_q)[:, None] + (x @ w_k)[None]) @ v
    result = check.additive_scores(untransposed)
    assert not result and "raised RuntimeError" in result.message


def test_additive_scores_junk_fails_without_crashing():
    assert_junk_fails(check.additive_scores)


# --- stacked_self_attention --------------------------------------------------------------------

def stacked_self_attention(x, beta, layers):
    for _ in range(layers):
        x = torch.softmax(beta * x @ x.T, dim=-1) @ x
    return x


def test_stacked_self_attention_right_answers_pass():
    result = check.stacked_self_attention(stacked_self_attention)
    assert result, result

    def float32(x, beta, layers):  # the reader's own precision is fine
        return stacked_self_attention(x.float(), beta, layers)
    assert check.stacked_self_attention(float32)

    def with_package(x, beta, layers):
        for _ in range(layers):
            x, _ = tc.attention(x, x, x, beta=beta)
        return x
    assert check.stacked_self_attention(with_package)


def test_stacked_self_attention_wrong_answers_say_why():
    def fixed(x, beta, layers):
        weights = torch.softmax(beta * x @ x.T, dim=-1)
        for _ in range(layers):
            x = weights @ x
        return x
    assert "computed once, from x" in check.stacked_self_attention(fixed).message

    def one(x, beta, layers):
        return stacked_self_attention(x, beta, 1)
    assert "applies one layer, expected 3" in check.stacked_self_attention(one).message

    def too_many(x, beta, layers):
        return stacked_self_attention(x, beta, layers + 1)
    assert "one layer too many" in check.stacked_self_attention(too_many).message

    def too_few(x, beta, layers):
        return stacked_self_attention(x, beta, max(layers - 1, 0))
    assert "one layer too few" in check.stacked_self_attention(too_few).message

    def columns(x, beta, layers):
        for _ in range(layers):
            x = torch.softmax(beta * x @ x.T, dim=0) @ x
        return x
    assert "runs down the columns" in check.stacked_self_attention(columns).message

    def scaled(x, beta, layers):
        for _ in range(layers):
            x = torch.softmax(beta * x @ x.T / math.sqrt(x.shape[-1]), dim=-1) @ x
        return x
    assert "square root of the size" in check.stacked_self_attention(scaled).message

    def first_only(x, beta, layers):
        for layer in range(layers):
            x = torch.softmax((beta if layer == 0 else 1.0) * x @ x.T, dim=-1) @ x
        return x
    assert "first layer only" in check.stacked_self_attention(first_only).message

    def weights_only(x, beta, layers):
        return torch.softmax(beta * x @ x.T, dim=-1)
    result = check.stacked_self_attention(weights_only)
    assert not result and "the shape is (4, 4), expected (4, 2)" in result.message

    def hard(x, beta, layers):
        for _ in range(layers):
            x, _ = tc.attention(x, x, x, hard=True)
        return x
    result = check.stacked_self_attention(hard)
    assert not result and "expected" in result.message


def test_stacked_self_attention_junk_fails_without_crashing():
    assert_junk_fails(check.stacked_self_attention)


def test_stacked_self_attention_counts_layers_in_the_readers_language():
    tc.set_language("fr")
    try:
        result = check.stacked_self_attention(lambda x, b, n: stacked_self_attention(x, b, 1))
        assert not result and "couches" in result.message
    finally:
        tc.set_language("en")


# --- soft_maximum ------------------------------------------------------------------------------

def soft_maximum(scores, beta):
    top = scores.max(dim=-1, keepdim=True).values
    return top.squeeze(-1) + torch.exp(beta * (scores - top)).sum(dim=-1).log() / beta


def test_soft_maximum_right_answers_pass():
    result = check.soft_maximum(soft_maximum)
    assert result, result
    assert check.soft_maximum(lambda s, b: torch.logsumexp(b * s, dim=-1) / b)


def test_soft_maximum_gradient_is_the_soft_argmax():
    s = torch.tensor([6.0, 5.0, 2.0, -3.0], dtype=torch.float64, requires_grad=True)
    for beta in (0.1, 1.0, 5.0):
        (gradient,) = torch.autograd.grad(soft_maximum(s, beta), s)
        assert torch.allclose(gradient, tc.soft_argmax(s.detach(), beta))
        assert 6 < soft_maximum(s.detach(), beta) < 6 + math.log(4) / beta


def test_soft_maximum_wrong_answers_say_why():
    def naive(s, b):  # exp(1000) overflows
        return (b * s).exp().sum(-1).log() / b
    result = check.soft_maximum(naive)
    assert not result and "overflows" in result.message and "as large as 1,000" in result.message

    def times_beta(s, b):
        return torch.logsumexp(b * s, dim=-1)
    assert "beta times the soft maximum" in check.soft_maximum(times_beta).message

    def keepdim(s, b):
        return torch.logsumexp(b * s, dim=-1, keepdim=True) / b
    assert "keepdim=False" in check.soft_maximum(keepdim).message

    def weights(s, b):
        return torch.softmax(b * s, dim=-1)
    assert "it returned the weights" in check.soft_maximum(weights).message

    def no_beta(s, b):
        return torch.logsumexp(s, dim=-1)
    assert "beta is left out" in check.soft_maximum(no_beta).message

    def plain(s, b):
        return s.max(dim=-1).values
    assert "plain maximum" in check.soft_maximum(plain).message

    def not_added_back(s, b):
        return torch.exp(b * (s - s.max(dim=-1, keepdim=True).values)).sum(-1).log() / b
    assert "was not added back" in check.soft_maximum(not_added_back).message

    def log_mean(s, b):
        return (torch.logsumexp(b * s, dim=-1) - math.log(s.shape[-1])) / b
    assert "mean of the exponentials" in check.soft_maximum(log_mean).message


def test_soft_maximum_junk_fails_without_crashing():
    assert_junk_fails(check.soft_maximum)


# --- peak_beta ---------------------------------------------------------------------------------

def peak_beta(scores, j):
    if scores[j] >= scores.max():
        return math.inf
    if scores[j] <= scores.mean():
        return 0.0

    def above(beta):
        return bool(scores[j] > torch.softmax(beta * scores, dim=-1) @ scores)

    low, high = 0.0, 1.0
    while above(high):
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if above(middle) else (low, middle)
    return (low + high) / 2


def test_peak_beta_right_answers_pass():
    result = check.peak_beta(peak_beta)
    assert result, result
    assert check.peak_beta(lambda s, j: torch.tensor(peak_beta(s, j)))  # a one-element tensor


def test_peak_beta_finds_the_peak_of_the_chapter():
    scores = torch.tensor([6.0, 5.0, 2.0, -3.0], dtype=torch.float64)
    top = peak_beta(scores, 1)
    assert round(top, 4) == 0.3643 and round(float(tc.soft_argmax(scores, top)[1]), 4) == 0.3535
    grid = torch.linspace(0, 2, 20001, dtype=torch.float64)
    weights = torch.stack([tc.soft_argmax(scores, float(b))[1] for b in grid])
    assert abs(float(grid[weights.argmax()]) - top) < 2e-4
    from transformer_course.check.ch02 import _peak
    drawn = torch.randn(7, generator=torch.Generator().manual_seed(205), dtype=torch.float64) * 2
    assert 0 < _peak(drawn, int(drawn.argsort()[-3])) < math.inf  # the checker's random case


def test_peak_beta_wrong_answers_say_why():
    def temperature(s, j):
        b = peak_beta(s, j)
        return 1 / b if 0 < b < math.inf else b
    assert "temperature T = 1 / beta" in check.peak_beta(temperature).message

    def capped(s, j):  # a bisection's upper bound instead of infinity
        return min(peak_beta(s, j), 1e6)
    assert "return math.inf" in check.peak_beta(capped).message

    def always_inf(s, j):
        return math.inf
    assert "does not have the best score" in check.peak_beta(always_inf).message

    def next_one(s, j):
        return peak_beta(s, j + 1) if j + 1 < len(s) else 0.0
    result = check.peak_beta(next_one)
    assert not result and "expected" in result.message

    def previous_one(s, j):
        return peak_beta(s, j - 1) if j > 0 else peak_beta(s, j)
    assert "counts from 0" in check.peak_beta(previous_one).message

    def weight(s, j):
        b = peak_beta(s, j)
        return float(torch.softmax(b * s, -1)[j]) if 0 < b < math.inf else b
    assert "the largest weight itself" in check.peak_beta(weight).message

    def never_zero(s, j):
        return math.inf if s[j] >= s.max() else max(peak_beta(s, j), 0.3)
    assert "expected 0" in check.peak_beta(never_zero).message


def test_peak_beta_junk_fails_without_crashing():
    assert_junk_fails(check.peak_beta)
    assert "got NaN" in check.peak_beta(lambda s, j: float("nan")).message


def test_every_checker_of_the_chapter_is_exported_and_tested_here():
    assert set(check.ch02.__all__) == {"additive_scores", "peak_beta", "recover_beta",
                                       "soft_maximum", "stacked_self_attention"}
    assert all(name in check.__all__ for name in check.ch02.__all__)
