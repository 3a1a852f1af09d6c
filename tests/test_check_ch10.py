"""The checkers of chapter 10's transfer exercises: the right answers pass, plausible wrong
answers fail saying why, junk answers fail without crashing."""

import pytest
import torch
import torch.nn.functional as F

import transformer_course as tc
from transformer_course import check
from transformer_course.check import ch10


@pytest.fixture(autouse=True)
def english():
    tc.set_language("en")
    yield
    tc.set_language("en")


JUNK = [None, (), [], float("nan"), float("inf"), "a string", True, (i for i in range(3)),
        torch.empty(2, 2, device="meta"), torch.zeros(2, 2, dtype=torch.complex64),
        torch.tensor(float("nan")), torch.zeros(3), torch.full((2, 2), float("nan"))]


@pytest.mark.parametrize("checker", [check.label_smoothing_loss, check.top_p_probabilities,
                                     check.kv_cache_bytes])
def test_junk_fails_without_crashing(checker):
    for junk in JUNK:
        result = checker(lambda *args, junk=junk: junk)
        assert isinstance(result, check.CheckResult) and not result, junk
        assert result.message and "could not be checked" not in result.message, result.message
    raised = checker(lambda *args: 1 / 0)
    assert not raised and "ZeroDivisionError" in raised.message
    todo = checker(lambda *args: (_ for _ in ()).throw(NotImplementedError("your code here")))
    assert not todo and "NotImplementedError" in todo.message
    assert not checker("not a function")


def test_the_checkers_are_exported():
    assert set(ch10.__all__) == {"label_smoothing_loss", "top_p_probabilities", "kv_cache_bytes"}
    for name in ch10.__all__:
        assert getattr(check, name) is getattr(ch10, name)


# --- label smoothing ----------------------------------------------------------------------------

def label_smoothing_loss(logits, targets, epsilon):
    logp = torch.log_softmax(logits, dim=-1)                       # (N, V)
    true = -logp.gather(-1, targets[:, None]).squeeze(-1)          # (N,)
    uniform = -logp.mean(dim=-1)                                   # (N,)
    return ((1 - epsilon) * true + epsilon * uniform).mean()


def test_label_smoothing_right_answers_pass():
    result = check.label_smoothing_loss(label_smoothing_loss)
    assert result, result
    assert "label_smoothing" in result.message
    assert check.label_smoothing_loss(
        lambda logits, targets, eps: F.cross_entropy(logits, targets, label_smoothing=eps))
    assert check.label_smoothing_loss(  # a one-element tensor is accepted
        lambda logits, targets, eps: label_smoothing_loss(logits, targets, eps).reshape(1))


def _others_only(logits, targets, epsilon):
    vocab = logits.shape[-1]
    one_hot = F.one_hot(targets, vocab).float()
    q = (1 - epsilon) * one_hot + epsilon / (vocab - 1) * (1 - one_hot)
    return -(q * torch.log_softmax(logits, -1)).sum(-1).mean()


def _naive_log(logits, targets, epsilon):
    vocab = logits.shape[-1]
    q = (1 - epsilon) * F.one_hot(targets, vocab).float() + epsilon / vocab
    return -(q * torch.softmax(logits, -1).log()).sum(-1).mean()


@pytest.mark.parametrize(("wrong", "words"), [
    (lambda logits, targets, eps: F.cross_entropy(logits, targets), "was ignored"),
    (_others_only, "V - 1 wrong classes"),
    (lambda logits, targets, eps: (1 - eps) * F.cross_entropy(logits, targets),
     "uniform part"),
    (lambda logits, targets, eps: F.cross_entropy(logits, targets, label_smoothing=eps,
                                                  reduction="sum"), "take their mean"),
    (lambda logits, targets, eps: F.cross_entropy(logits, targets, label_smoothing=eps,
                                                  reduction="none"), "one loss per example"),
    (_naive_log, "torch.log_softmax"),
])
def test_label_smoothing_wrong_answers_say_why(wrong, words):
    result = check.label_smoothing_loss(wrong)
    assert not result
    assert words in result.message, result.message


def test_label_smoothing_speaks_french():
    tc.set_language("fr")
    result = check.label_smoothing_loss(label_smoothing_loss)
    assert result and result.message


# --- nucleus sampling ---------------------------------------------------------------------------

def top_p_probabilities(logits, p):
    probs = torch.softmax(logits, dim=-1)
    ordered, order = probs.sort(dim=-1, descending=True)
    before = ordered.cumsum(dim=-1) - ordered          # mass of the more likely tokens
    keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < p)
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def test_top_p_right_answer_passes():
    result = check.top_p_probabilities(top_p_probabilities)
    assert result, result


def test_top_p_extremes_match_the_package():
    logits = torch.randn(4, 9)
    torch.testing.assert_close(top_p_probabilities(logits, 1.0), torch.softmax(logits, -1))
    torch.testing.assert_close(top_p_probabilities(logits, 1e-6),
                               tc.generation.next_token_probabilities(logits, temperature=0.0))


def test_top_p_cases_stay_clear_of_the_boundary():
    """No case puts a cumulative probability within rounding of p: a right answer in
    float32 cannot fall on the wrong side."""
    for _what, logits, p in ch10._top_p_cases():
        ordered = torch.softmax(logits.double(), -1).sort(-1, descending=True).values
        totals = ordered.cumsum(-1)[..., :-1]
        assert ((totals - p).abs() > 1e-4).all(), p


def _top_p_variant(include_crossing=True, renormalise=True, sort=True, logits_out=False):
    def fn(logits, p):
        probs = torch.softmax(logits, dim=-1)
        if sort:
            ordered, order = probs.sort(dim=-1, descending=True)
        else:
            ordered, order = probs, torch.arange(probs.shape[-1]).expand_as(probs)
        total = ordered.cumsum(dim=-1)
        keep_sorted = (total - ordered < p) if include_crossing else (total < p)
        keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        if logits_out:
            return logits.masked_fill(~keep, float("-inf"))
        kept = probs * keep
        return kept / kept.sum(-1, keepdim=True) if renormalise else kept
    return fn


@pytest.mark.parametrize(("wrong", "words"), [
    (_top_p_variant(renormalise=False), "divide them by their total"),
    (_top_p_variant(include_crossing=False), "that token included"),
    (_top_p_variant(sort=False), "sort the tokens"),
    (_top_p_variant(logits_out=True), "not masked logits"),
    (lambda logits, p: torch.softmax(logits, -1), "whole softmax"),
    (lambda logits, p: top_p_probabilities(logits, p)[..., :-1], "shape"),
])
def test_top_p_wrong_answers_say_why(wrong, words):
    result = check.top_p_probabilities(wrong)
    assert not result
    assert words in result.message, result.message


# --- the size of a KV cache -----------------------------------------------------------------

def kv_cache_bytes(num_layers, d_model, num_heads, num_kv_heads, length, batch_size,
                   bytes_per_value):
    d_head = d_model // num_heads
    return 2 * num_layers * num_kv_heads * d_head * length * batch_size * bytes_per_value


def test_kv_cache_bytes_right_answer_passes():
    result = check.kv_cache_bytes(kv_cache_bytes)
    assert result, result
    assert check.kv_cache_bytes(lambda *args: torch.tensor(kv_cache_bytes(*args)))
    assert check.kv_cache_bytes(lambda *args: float(kv_cache_bytes(*args)))


def test_kv_cache_bytes_matches_the_package_cache():
    model = tc.LanguageModel(30, d_model=32, num_heads=4, num_layers=3, d_ff=64, max_len=40)
    cache = model.new_cache()
    with torch.no_grad():
        model(torch.randint(0, 30, (2, 17)), cache=cache)
    assert cache.nbytes == kv_cache_bytes(3, 32, 4, 4, 17, 2, 4)


@pytest.mark.parametrize(("wrong", "words"), [
    (lambda n, d, h, kv, length, b, s: n * kv * (d // h) * length * b * s, "as well as the keys"),
    (lambda n, d, h, kv, length, b, s: 2 * n * d * length * b * s, "grouped-query"),
    (lambda n, d, h, kv, length, b, s: 2 * kv * (d // h) * length * b * s, "every layer"),
    (lambda n, d, h, kv, length, b, s: 2 * n * kv * (d // h) * length * s, "each sequence"),
    (lambda n, d, h, kv, length, b, s: 2 * n * kv * (d // h) * length * b, "bytes_per_value"),
    (lambda n, d, h, kv, length, b, s: 3 * n * kv * (d // h) * length * b * s, "expected"),
    (lambda *args: kv_cache_bytes(*args) + 0.5, "whole number"),
])
def test_kv_cache_bytes_wrong_answers_say_why(wrong, words):
    result = check.kv_cache_bytes(wrong)
    assert not result
    assert words in result.message, result.message
