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
    assert "reversal or a rotation" in result.message

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
    assert set(check.ch01.__all__) == {"kernel_regression", "score_gradients", "symmetries"}
    assert all(name in check.__all__ for name in check.ch01.__all__)
