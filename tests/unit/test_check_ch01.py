"""The checkers of chapter 1's transfer exercises: the right answer passes, plausible wrong
answers fail saying why, junk answers fail without crashing."""

import torch
import torch.nn.functional as F

import transformer_course as tc
from transformer_course import check

JUNK = [None, (), [], float("nan"), "a string", (i for i in range(3)), (None, None),
        torch.empty(2, device="meta"), torch.zeros(2, dtype=torch.complex64),
        torch.tensor(float("nan"))]


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


# --- linear_rnn_influence: the backward pass of a linear recurrent network by hand ------------

def linear_rnn_influence(w, u, length):
    back = torch.ones(w.shape[0], dtype=w.dtype)  # d(sum of s_L) / d s_L
    norms = []
    for _ in range(length):
        norms.append((u.T @ back).norm())
        back = w.T @ back
    return torch.stack(norms).flip(0)


def test_linear_rnn_influence_right_answers_pass():
    result = check.linear_rnn_influence(linear_rnn_influence)
    assert result, result
    assert "orthogonal" in result.message

    def with_autograd(w, u, length):  # the measurement of section 1.1, on a linear network
        x = torch.zeros(length, u.shape[1], requires_grad=True)
        s = torch.zeros(w.shape[0])
        for k in range(length):
            s = w @ s + u @ x[k]
        s.sum().backward()
        return x.grad.norm(dim=-1)
    assert check.linear_rnn_influence(with_autograd)

    def with_powers(w, u, length):
        ones = torch.ones(w.shape[0])
        return torch.stack([(u.T @ torch.linalg.matrix_power(w.T, length - 1 - k) @ ones).norm()
                            for k in range(length)])
    assert check.linear_rnn_influence(with_powers)


def test_linear_rnn_influence_wrong_answers_say_why():
    def reversed_order(w, u, length):
        return linear_rnn_influence(w, u, length).flip(0)
    assert "reverse order" in check.linear_rnn_influence(reversed_order).message

    def no_transpose(w, u, length):
        return linear_rnn_influence(w.T, u, length)
    assert "transpose W^T" in check.linear_rnn_influence(no_transpose).message

    def one_too_many(w, u, length):
        return linear_rnn_influence(w, u, length + 1)[:-1]
    assert "one too high" in check.linear_rnn_influence(one_too_many).message

    def without_u(w, u, length):
        return linear_rnn_influence(w, torch.eye(w.shape[0]), length)
    assert "U is missing" in check.linear_rnn_influence(without_u).message

    def jacobians(w, u, length):
        return torch.stack([(torch.linalg.matrix_power(w, length - 1 - k) @ u).norm()
                            for k in range(length)])
    assert "whole Jacobians" in check.linear_rnn_influence(jacobians).message

    def squared(w, u, length):
        return linear_rnn_influence(w, u, length) ** 2
    result = check.linear_rnn_influence(squared)
    assert not result and "relative error" in result.message

    def the_states(w, u, length):
        return torch.ones(length, w.shape[0])
    result = check.linear_rnn_influence(the_states)
    assert not result and "shape" in result.message

    def overflowing(w, u, length):
        return torch.full((length,), float("inf"))
    assert "not finite" in check.linear_rnn_influence(overflowing).message


def test_linear_rnn_influence_junk_fails_without_crashing():
    assert_junk_fails(check.linear_rnn_influence)


# --- reachable: which points can soft and hard attention output? ------------------------------

def reachable(x, h):
    system = torch.cat([x.T, torch.ones(1, x.shape[0])])      # (n + 1, t)
    a = torch.linalg.solve(system, torch.cat([h, torch.ones(1)]))
    soft = bool((a >= -1e-6).all())
    hard = soft and bool(((a - 1).abs() < 1e-6).any())
    return a, soft, hard


def test_reachable_right_answers_pass():
    result = check.reachable(reachable)
    assert result, result
    assert "boundary" in result.message

    def as_tensors(x, h):  # one-element boolean tensors are answers too
        a, soft, hard = reachable(x, h)
        return a, torch.tensor(soft), torch.tensor(hard)
    assert check.reachable(as_tensors)


def test_reachable_wrong_answers_say_why():
    def without_the_sum(x, h):
        a = torch.linalg.lstsq(x.T, h[:, None]).solution[:, 0]
        return a, bool((a >= 0).all()), False
    assert "row of ones" in check.reachable(without_the_sum).message

    def strictly_positive(x, h):
        a, _, hard = reachable(x, h)
        return a, bool((a > 0).all()), hard
    result = check.reachable(strictly_positive)
    assert not result and "on an edge" in result.message and "boundary" in result.message

    def no_tolerance(x, h):
        a, _, _ = reachable(x, h)
        soft = bool((a >= 0).all())
        return a, soft, soft and bool((a == 1).any())
    result = check.reachable(no_tolerance)
    assert not result and "compare with a tolerance" in result.message

    def exact_hard(x, h):
        a, soft, _ = reachable(x, h)
        return a, soft, soft and bool((a == 1).any())
    result = check.reachable(exact_hard)
    assert not result and "one-hot only up to rounding" in result.message

    def swapped(x, h):
        a, soft, hard = reachable(x, h)
        return a, hard, soft
    assert "swapped" in check.reachable(swapped).message

    def always_soft(x, h):
        a, _, hard = reachable(x, h)
        return a, True, hard
    result = check.reachable(always_soft)
    assert not result and "outside the convex hull" in result.message

    def one_big_weight(x, h):  # "hard" as soon as one weight dominates
        a, soft, _ = reachable(x, h)
        return a, soft, bool((a > 0.8).any())
    result = check.reachable(one_big_weight)
    assert not result and "near the vertex" in result.message and "never a point" in result.message

    def any_coefficient_of_one(x, h):  # forgets that the others must then be 0
        a, soft, _ = reachable(x, h)
        return a, soft, bool(((a - 1).abs() < 1e-6).any())
    result = check.reachable(any_coefficient_of_one)
    assert not result and "a coefficient of 1" in result.message
    assert "every other coefficient is 0" in result.message

    def always_hard(x, h):
        a, soft, _ = reachable(x, h)
        return a, soft, True
    assert "not one of the inputs" in check.reachable(always_hard).message

    def numbers(x, h):
        a, soft, hard = reachable(x, h)
        return a, int(soft), int(hard)
    assert "expected True or False" in check.reachable(numbers).message

    def uniform(x, h):
        return torch.full((x.shape[0],), 1 / x.shape[0]), True, False
    result = check.reachable(uniform)
    assert not result and "expected" in result.message


def test_reachable_junk_fails_without_crashing():
    assert_junk_fails(check.reachable)


# --- streaming_attention: soft attention over a stream of chunks ------------------------------

def streaming_attention(chunks):
    running_max = None
    for scores, values in chunks:
        new_max = scores.max() if running_max is None else torch.maximum(running_max,
                                                                          scores.max())
        e = (scores - new_max).exp()
        if running_max is None:
            total, weighted = e.sum(), e @ values
        else:
            shrink = (running_max - new_max).exp()  # what was summed, in the new units
            total, weighted = total * shrink + e.sum(), weighted * shrink + e @ values
        running_max = new_max
    return weighted / total


def test_streaming_attention_right_answers_pass():
    result = check.streaming_attention(streaming_attention)
    assert result, result
    assert "running maximum" in result.message

    def one_chunk_at_a_time(chunks):  # the chunks as a generator expression reads them
        return streaming_attention((s.double(), v.double()) for s, v in chunks)
    assert check.streaming_attention(one_chunk_at_a_time)


def test_streaming_attention_that_keeps_the_chunks_fails():
    def all_at_once(chunks):  # the right output, but the whole stream is kept in memory
        pairs = list(chunks)
        scores, values = torch.cat([s for s, _ in pairs]), torch.cat([v for _, v in pairs])
        return torch.softmax(scores, -1) @ values
    result = check.streaming_attention(all_at_once)
    assert not result and "keeps the chunks" in result.message
    assert "chunk 1 was still held when chunk 3 was asked for" in result.message

    def keeps_the_values(chunks):  # running sums, but every values tensor stays in a list
        seen = []

        def remembered():
            for scores, values in chunks:
                seen.append(values)
                yield scores, values
        return streaming_attention(remembered())
    assert "keeps the chunks" in check.streaming_attention(keeps_the_values).message


def test_streaming_attention_wrong_answers_say_why():
    def naive(chunks):
        total = weighted = 0
        for scores, values in chunks:
            total, weighted = total + scores.exp().sum(), weighted + scores.exp() @ values
        return weighted / total
    result = check.streaming_attention(naive)
    assert not result and "overflows" in result.message and "up to" in result.message

    def first_maximum_only(chunks):
        total = weighted = first = 0
        for i, (scores, values) in enumerate(chunks):
            first = scores.max() if i == 0 else first
            e = (scores - first).exp()
            total, weighted = total + e.sum(), weighted + e @ values
        return weighted / total
    result = check.streaming_attention(first_maximum_only)
    assert not result and "exp(old maximum - new maximum)" in result.message

    def chunk_by_chunk(chunks):
        return torch.stack([torch.softmax(s, -1) @ v for s, v in chunks]).mean(0)
    assert "normalised on its own" in check.streaming_attention(chunk_by_chunk).message

    def unweighted(chunks):
        return torch.cat([v for _, v in chunks]).mean(0)
    result = check.streaming_attention(unweighted)
    assert not result and "expected" in result.message

    def needs_a_list(chunks):
        return streaming_attention(chunks[::-1])  # an iterator has no slicing
    assert "TypeError" in check.streaming_attention(needs_a_list).message


def test_streaming_attention_junk_fails_without_crashing():
    assert_junk_fails(check.streaming_attention)


def test_the_new_checkers_speak_the_readers_language():
    tc.set_language("fr")
    try:
        result = check.reachable(lambda x, h: (reachable(x, h)[0], True, reachable(x, h)[2]))
        assert not result and "enveloppe convexe" in result.message
    finally:
        tc.set_language("en")

# --- score_gradients: predict, then run ---------------------------------------------------------

def hard_h(scores, values):
    return F.one_hot(scores.argmax(), len(scores)).to(values.dtype) @ values


def score_gradients(scores, values):
    s = scores.detach().clone().requires_grad_()
    (grad_soft,) = torch.autograd.grad(torch.softmax(s, -1) @ values, s)
    eps = 1e-3
    grad_hard = torch.stack([(hard_h(scores + eps * e, values) - hard_h(scores, values)) / eps
                             for e in torch.eye(len(scores))])
    return grad_hard, grad_soft


def soft_formula(scores, values):
    a = torch.softmax(scores, -1)
    return a * (values - a @ values)


def test_score_gradients_right_answers_pass():
    assert check.score_gradients(score_gradients)
    formula = check.score_gradients(lambda s, v: (torch.zeros_like(s), soft_formula(s, v)))
    assert formula, formula
    assert "zero gradient" in formula.message


def test_score_gradients_wrong_answers_say_why():
    def weights_only(s, v):
        return torch.zeros_like(s), torch.softmax(s, -1)
    assert "weights a themselves" in check.score_gradients(weights_only).message

    def fixed_others(s, v):
        return torch.zeros_like(s), torch.softmax(s, -1) * v
    assert "stayed fixed" in check.score_gradients(fixed_others).message

    def sign(s, v):
        return torch.zeros_like(s), -soft_formula(s, v)
    assert "sign of grad_soft is wrong" in check.score_gradients(sign).message

    def one_hot(s, v):
        return F.one_hot(s.argmax(), len(s)).float(), soft_formula(s, v)
    result = check.score_gradients(one_hot)
    assert not result and "hard weights, not their gradient" in result.message
    assert "grad_hard" in result.message

    def same(s, v):
        return soft_formula(s, v), soft_formula(s, v)
    assert "gradient of soft attention" in check.score_gradients(same).message

    def autograd_none(s, v):
        return None, soft_formula(s, v)
    assert "autograd finds no path" in check.score_gradients(autograd_none).message

    def saturated_only(s, v):  # a zero soft gradient is right only when one score dominates
        return torch.zeros_like(s), torch.zeros_like(s)
    result = check.score_gradients(saturated_only)
    assert not result and "grad_soft" in result.message and "expected" in result.message


def test_score_gradients_junk_fails_without_crashing():
    assert_junk_fails(check.score_gradients)


# --- kernel_regression -------------------------------------------------------------------------

def kernel_regression(x_train, y_train, x_query, bandwidth):
    scores = -(x_query[:, None] - x_train[None, :]) ** 2 / (2 * bandwidth**2)  # (m, t)
    return torch.softmax(scores, dim=-1) @ y_train


def test_kernel_regression_right_answer_passes():
    result = check.kernel_regression(kernel_regression)
    assert result, result
    assert "nearest target" in result.message


def test_kernel_regression_wrong_answers_say_why():
    def naive(x, y, q, s):  # right where nothing underflows, NaN far from the data
        k = torch.exp(-(q[:, None] - x) ** 2 / (2 * s**2))
        return (k @ y) / k.sum(-1)
    result = check.kernel_regression(naive)
    assert not result and "underflows to 0" in result.message and "x = 30" in result.message

    def unnormalised(x, y, q, s):
        return torch.exp(-(q[:, None] - x) ** 2 / (2 * s**2)) @ y
    assert "do not sum to 1" in check.kernel_regression(unnormalised).message

    def over_queries(x, y, q, s):
        return torch.softmax(-(q[:, None] - x) ** 2 / (2 * s**2), dim=0) @ y
    assert "normalised over the queries" in check.kernel_regression(over_queries).message

    def variance(x, y, q, s):
        return torch.softmax(-(q[:, None] - x) ** 2 / (2 * s), dim=-1) @ y
    assert "2 sigma instead of 2 sigma^2" in check.kernel_regression(variance).message

    def no_two(x, y, q, s):
        return torch.softmax(-(q[:, None] - x) ** 2 / s**2, dim=-1) @ y
    assert "factor 2 is missing" in check.kernel_regression(no_two).message

    def plus(x, y, q, s):
        return torch.softmax((q[:, None] - x) ** 2 / (2 * s**2), dim=-1) @ y
    assert "far points get the largest weights" in check.kernel_regression(plus).message

    def mean(x, y, q, s):
        return y.mean().expand(len(q))
    result = check.kernel_regression(mean)
    assert not result and "expected" in result.message


def test_kernel_regression_junk_fails_without_crashing():
    assert_junk_fails(check.kernel_regression)


def test_verdicts_follow_the_language():
    tc.set_language("fr")
    try:
        result = check.kernel_regression(lambda *args: None)
        assert not result and "None" in result.message
    finally:
        tc.set_language("en")


# --- symmetries: equivariant, invariant or neither ----------------------------------------------

def symmetries(f, t, n):
    equivariant = invariant = True
    for _ in range(10):
        x = torch.randn(t, n)
        p = torch.randperm(t)
        y, y_p = f(x), f(x[p])
        equivariant = equivariant and torch.allclose(y_p, y[p], atol=1e-5)
        invariant = invariant and torch.allclose(y_p, y, atol=1e-5)
    return equivariant, invariant


def shuffled_by(p_of):
    """A test that tries one kind of shuffle only, given as a function of t."""
    def test(f, t, n):
        x, p = torch.randn(t, n), p_of(t)
        y, y_p = f(x), f(x[p])
        return torch.allclose(y_p, y[p], atol=1e-5), torch.allclose(y_p, y, atol=1e-5)
    return test


def test_symmetries_right_answers_pass():
    result = check.symmetries(symmetries)
    assert result, result
    assert "a reversal, a rotation or one swap" in result.message

    def as_tensors(f, t, n):  # one-element boolean tensors and NumPy booleans are answers too
        e, i = symmetries(f, t, n)
        return torch.tensor(e), torch.tensor(i).numpy()
    assert check.symmetries(as_tensors)


def test_symmetries_the_answers_are_what_a_brute_force_test_finds():
    from transformer_course.check.ch01 import _symmetry_cases

    g = torch.Generator().manual_seed(0)
    for what, f, equivariant, invariant, _, _ in _symmetry_cases(7, 16):
        x = torch.randn(7, 16, generator=g)
        perms = [torch.randperm(7, generator=g) for _ in range(50)]
        assert all(torch.allclose(f(x[p]), f(x)[p], atol=1e-5) for p in perms) == equivariant, what
        assert all(torch.allclose(f(x[p]), f(x), atol=1e-5) for p in perms) == invariant, what


def test_symmetries_wrong_answers_say_why():
    reversal = check.symmetries(shuffled_by(lambda t: torch.arange(t - 1, -1, -1)))
    assert not reversal and "not only the reversal" in reversal.message

    rotation = check.symmetries(shuffled_by(lambda t: torch.arange(t).roll(1)))
    assert not rotation and "not only a rotation" in rotation.message

    one_swap = check.symmetries(shuffled_by(lambda t: torch.tensor([1, 0, *range(2, t)])))
    assert not one_swap and "each row plus the third row" in one_swap.message

    def reversal_and_rotation(f, t, n):  # two kinds of shuffle are not random ones either
        x = torch.randn(t, n)
        e = i = True
        for p in (torch.arange(t - 1, -1, -1), torch.arange(t).roll(1)):
            e = e and torch.allclose(f(x[p]), f(x)[p], atol=1e-5)
            i = i and torch.allclose(f(x[p]), f(x), atol=1e-5)
        return e, i
    result = check.symmetries(reversal_and_rotation)
    assert not result and "its two neighbours" in result.message

    def exact(f, t, n):
        e = i = True
        for _ in range(10):
            x, p = torch.randn(t, n), torch.randperm(t)
            e = e and torch.equal(f(x[p]), f(x)[p])
            i = i and torch.equal(f(x[p]), f(x))
        return e, i
    result = check.symmetries(exact)
    assert not result and "compare with a tolerance" in result.message

    def swapped(f, t, n):
        e, i = symmetries(f, t, n)
        return i, e
    assert "answers are swapped" in check.symmetries(swapped).message

    def equivariance_only(f, t, n):
        return symmetries(f, t, n)[0], False
    result = check.symmetries(equivariance_only)
    assert not result and "invariant: no, expected yes" in result.message

    def always(f, t, n):
        return True, True
    result = check.symmetries(always)
    assert not result and "invariant: yes, expected no" in result.message

    def numbers(f, t, n):
        e, i = symmetries(f, t, n)
        return int(e), int(i)
    result = check.symmetries(numbers)
    assert not result and "expected True or False" in result.message


def test_symmetries_junk_fails_without_crashing():
    assert_junk_fails(check.symmetries)


def test_symmetries_speaks_the_readers_language():
    tc.set_language("it")
    try:
        result = check.symmetries(shuffled_by(lambda t: torch.arange(t - 1, -1, -1)))
        assert not result and "inversione" in result.message
        assert "equivariante: sì" in result.message
    finally:
        tc.set_language("en")


def test_every_checker_of_the_chapter_is_exported_and_tested_here():
    assert set(check.ch01.__all__) == {"kernel_regression", "linear_rnn_influence", "reachable",
                                       "score_gradients", "streaming_attention", "symmetries"}
    assert all(name in check.__all__ for name in check.ch01.__all__)
