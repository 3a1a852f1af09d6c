"""The checkers of chapter 10's transfer exercises: the right answers pass, plausible wrong
answers fail saying why, junk answers fail without crashing."""

import copy
import math

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


@pytest.mark.parametrize("checker", [check.label_smoothing_loss, check.sample_next,
                                     check.beam_search, check.cached_self_attention,
                                     check.kv_cache_bytes, check.smoothing_floor,
                                     check.score_endings])
def test_junk_fails_without_crashing(checker):
    for junk in JUNK:
        result = checker(lambda *args, junk=junk, **kwargs: junk)
        assert isinstance(result, check.CheckResult) and not result, junk
        assert result.message and "could not be checked" not in result.message, result.message
    raised = checker(lambda *args, **kwargs: 1 / 0)
    assert not raised and "ZeroDivisionError" in raised.message
    todo = checker(
        lambda *args, **kwargs: (_ for _ in ()).throw(NotImplementedError("your code here")))
    assert not todo and "NotImplementedError" in todo.message
    assert not checker("not a function")


def test_the_checkers_are_exported():
    assert set(ch10.__all__) == {"label_smoothing_loss", "sample_next", "beam_search",
                                 "cached_self_attention", "kv_cache_bytes", "smoothing_floor",
                                 "score_endings"}
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


# --- sampling the next token -----------------------------------------------------------------

def sample_next(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    z = logits / temperature                                       # (B, V)
    if top_k is not None:
        kth = z.topk(min(top_k, z.shape[-1]), dim=-1).values[:, -1:]
        z = z.masked_fill(z < kth, float("-inf"))
    probs = torch.softmax(z, dim=-1)
    if top_p is not None:
        ordered, order = probs.sort(dim=-1, descending=True)
        before = ordered.cumsum(dim=-1) - ordered                  # mass of the more likely tokens
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, before < top_p)
        probs = probs * keep
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _inverse_cdf(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    """Another right answer: the package's way of drawing (one uniform number per row)."""
    if temperature == 0:
        return logits.argmax(dim=-1)
    probs = ch10._sampling_probs(logits, temperature, top_k, top_p).float()
    u = torch.rand(probs.shape[0], 1, generator=generator)
    cdf = probs.cumsum(-1)
    cdf[:, -1] = 1.0
    return torch.searchsorted(cdf, u).squeeze(-1)


def test_sample_next_right_answers_pass():
    for answer in (sample_next, _inverse_cdf):
        result = check.sample_next(answer)
        assert result, result


def test_sample_next_agrees_with_the_package():
    """The reference is the package's own next-token distribution, top-p included, and the
    package's own sampler passes the checker."""
    for _what, logits, options in ch10._sampling_cases():
        torch.testing.assert_close(
            ch10._sampling_probs(logits, options["temperature"], options.get("top_k"),
                                 options.get("top_p")).float(),
            tc.generation.next_token_probabilities(logits, **options))
    logits = torch.randn(5, 9)
    for temperature, top_k in ((0.0, None), (0.5, None), (1.5, 3), (1.0, 9)):
        torch.testing.assert_close(
            ch10._sampling_probs(logits, temperature, top_k).float(),
            tc.generation.next_token_probabilities(logits, temperature=temperature, top_k=top_k))
    result = check.sample_next(tc.generation.sample_next)
    assert result, result


def test_sampling_cases_stay_clear_of_the_top_p_boundary():
    """No case puts a cumulative probability within rounding of p: a right answer in
    float32 cannot fall on the wrong side."""
    for _what, logits, options in ch10._sampling_cases():
        if options["temperature"] == 0 or options.get("top_p") in (None, 1.0):
            continue
        z = logits.double() / options["temperature"]
        if "top_k" in options:
            z = z.masked_fill(~ch10._top_k_mask(z, options["top_k"]), float("-inf"))
        ordered = torch.softmax(z, -1).sort(-1, descending=True).values
        totals = ordered.cumsum(-1)[..., :-1]
        assert ((totals - options["top_p"]).abs() > 1e-2).all(), options


def _sampler(mistake=None):
    """A sampler that makes one typical mistake."""
    def fn(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
        if temperature == 0:
            return logits.argmax(dim=-1)
        probs = ch10._sampling_probs(logits, temperature, top_k, top_p, mistake=mistake)
        return torch.multinomial(probs.float(), 1, generator=generator).squeeze(-1)
    return fn


def _in_place(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(dim=-1)
    logits /= temperature
    return sample_next(logits, top_k=top_k, top_p=top_p, generator=generator)


def _no_generator(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    return sample_next(logits, temperature=temperature, top_k=top_k, top_p=top_p)


def _no_greedy_case(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = torch.softmax(logits / temperature, dim=-1)            # T = 0: inf / inf = NaN
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _sampled(change):
    """A right sampler whose draws (not the greedy ones) are then spoiled by ``change``."""
    def fn(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
        ids = sample_next(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                          generator=generator)
        return ids if temperature == 0 else change(ids, logits)
    return fn


def _greedy_cuts_first(logits, *, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0 and top_k:                                # argmax of the last kept one
        return logits.topk(top_k, dim=-1).indices[:, -1]
    return sample_next(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                       generator=generator)


@pytest.mark.parametrize(("wrong", "words"), [
    (_sampler("multiplied"), "multiplied by the temperature"),
    (_sampler("no temperature"), "temperature is ignored"),
    (_sampler("no top-k"), "top_k is ignored"),
    (_sampler("k + 1"), "k + 1"),
    (_sampler("no top-p"), "top_p is ignored"),
    (_sampler("crossing left out"), "reach p is left out"),
    (_sampler("unsorted"), "vocabulary order"),
    (_sampler("p before temperature"), "apply the temperature first"),
    (_sampler("p before top-k"), "top-p is computed before top-k"),
    (lambda logits, **kw: sample_next(logits, **kw)[:, None], "squeeze"),
    (lambda logits, **kw: torch.softmax(logits, -1), "not probabilities"),
    (lambda logits, **kw: sample_next(logits, **kw)[:-1], "one id per row"),
    (_sampled(lambda ids, logits: ids + logits.shape[-1]), "outside the vocabulary"),
    (_sampled(lambda ids, logits: logits.argmax(-1)), "never drew"),
    (_sampled(lambda ids, logits: ids.sort().values), "should be 0"),        # rows mixed
    (_sampled(lambda ids, logits: torch.where(ids == 2, 5, torch.where(ids == 5, 2, ids))),
     "do not follow the distribution"),
    (_in_place, "changed the logits"),
    (_no_generator, "generator argument"),
    (_no_greedy_case, "raised"),
    (_greedy_cuts_first, "argmax"),
])
def test_sample_next_wrong_answers_say_why(wrong, words):
    result = check.sample_next(wrong)
    assert not result
    assert words in result.message, result.message


def test_sample_next_speaks_italian():
    tc.set_language("it")
    result = check.sample_next(_sampler("crossing left out"))
    assert not result and "p" in result.message and "the token" not in result.message


# --- beam search over a language model's continuations ----------------------------------------

def beam_search(model, prompt, beam_size, max_new_tokens):
    seqs, scores = prompt, torch.zeros(1)                          # one live prefix at first
    for _ in range(max_new_tokens):
        logp = torch.log_softmax(model(seqs)[:, -1], dim=-1)       # (k, V)
        vocab = logp.shape[-1]
        total = (scores[:, None] + logp).flatten()                 # (k * V,)
        scores, flat = total.topk(min(beam_size, total.numel()))
        seqs = torch.cat([seqs[flat // vocab], (flat % vocab)[:, None]], dim=1)
    return seqs[:1]


def test_beam_search_right_answers_pass():
    result = check.beam_search(beam_search)
    assert result, result
    assert check.beam_search(lambda *args: beam_search(*args)[0])  # (L,) is read as (1, L)


def test_beam_search_works_on_the_package_model():
    """The exercise's model is a tc.LanguageModel: a right answer runs on it as well."""
    torch.manual_seed(0)
    model = tc.LanguageModel(7, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                             max_len=12).eval()
    prompt = torch.tensor([[1, 2]])
    with torch.no_grad():
        assert torch.equal(beam_search(model, prompt, 1, 6),
                           model.generate(prompt, 6, temperature=0.0))
        assert torch.equal(beam_search(model, prompt, 3, 6),
                           ch10._beam_reference(model, prompt, 3, 6))


def test_beam_cases_stay_clear_of_ties():
    """At every step the K-th and (K+1)-th candidates differ by more than float32 rounding."""
    for seed, prompt, beam, steps in ch10._BEAM_CASES:
        model = ch10._MarkovModel(seed)
        seqs, scores = torch.tensor([prompt]), torch.zeros(1, dtype=torch.float64)
        for _ in range(steps):
            logp = torch.log_softmax(model(seqs)[:, -1].double(), -1)
            total = (scores[:, None] + logp).flatten()
            ranked = total.sort(descending=True).values
            if total.numel() > beam:
                assert ranked[beam - 1] - ranked[beam] > 1e-2
            scores, flat = total.topk(beam)
            seqs = torch.cat([seqs[flat // 6], (flat % 6)[:, None]], 1)


def _copies(model, prompt, beam_size, max_new_tokens):
    """K copies of the prompt with equal scores: the beam keeps K copies of one prefix."""
    seqs, scores = prompt.repeat(beam_size, 1), torch.zeros(beam_size)
    for _ in range(max_new_tokens):
        logp = torch.log_softmax(model(seqs)[:, -1], dim=-1)
        vocab = logp.shape[-1]
        scores, flat = (scores[:, None] + logp).flatten().topk(beam_size)
        seqs = torch.cat([seqs[flat // vocab], (flat % vocab)[:, None]], dim=1)
    return seqs[:1]


def _one_token(model, prompt, beam_size, max_new_tokens):
    return torch.cat([prompt, torch.zeros(1, max_new_tokens, dtype=torch.long)], dim=1)


@pytest.mark.parametrize(("wrong", "words"), [
    (lambda m, p, k, n: ch10._greedy(m, p, n), "greedy continuation"),
    (_copies, "greedy continuation"),
    (lambda m, p, k, n: ch10._beam_reference(m, p, k, n, mistake="per prefix"),
     "its own best extension"),
    (lambda m, p, k, n: ch10._beam_reference(m, p, k, n, mistake="last token only"),
     "last token"),
    (lambda m, p, k, n: beam_search(m, p, k, n)[:, p.shape[1]:], "prompt followed by"),
    (lambda m, p, k, n: beam_search(m, p, k, n - 1), "shape"),
    (lambda m, p, k, n: beam_search(m, p, k, n).float(), "integers"),
    (lambda m, p, k, n: beam_search(m, p, k, n).flip(1), "start with the prompt"),
    (_one_token, "log-probability"),
])
def test_beam_search_wrong_answers_say_why(wrong, words):
    result = check.beam_search(wrong)
    assert not result
    assert words in result.message, result.message


# --- a KV cache, one per layer -----------------------------------------------------------------

def cached_self_attention(attn, x, cache):
    new = x.shape[1]
    q, k, v = (tc.split_heads(w(x), attn.num_heads) for w in (attn.W_q, attn.W_k, attn.W_v))
    if cache:                                                      # earlier positions first
        k = torch.cat([cache["keys"], k], dim=2)
        v = torch.cat([cache["values"], v], dim=2)
    cache["keys"], cache["values"] = k, v                          # (B, H, L_past + L_new, d_head)
    past = k.shape[2] - new
    heads, _ = tc.attention(q, k, v, mask=tc.causal_mask(new, past=past))
    return attn.W_o(tc.merge_heads(heads))


def test_cached_self_attention_right_answer_passes():
    result = check.cached_self_attention(cached_self_attention)
    assert result, result


def test_the_skeleton_matches_the_package_cache():
    """The exercise's per-layer loop gives the package's cached logits."""
    torch.manual_seed(0)
    model = tc.LanguageModel(9, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0,
                             max_len=12).eval()
    ids = torch.randint(0, 9, (1, 7))
    caches, theirs = [{}, {}], model.new_cache()
    with torch.no_grad():
        for chunk in (ids[:, :4], ids[:, 4:5], ids[:, 5:]):
            mine = ch10._forward_cached(model, chunk, caches, cached_self_attention)
            torch.testing.assert_close(mine, model(chunk, cache=theirs), atol=1e-5, rtol=1e-5)


def _attention_variant(mistake):
    def fn(attn, x, cache):
        x_all = x if not cache else torch.cat([cache["x"], x], dim=1)
        cache["x"] = x_all
        cache["keys"] = tc.split_heads(attn.W_k(x_all), attn.num_heads)
        cache["values"] = tc.split_heads(attn.W_v(x_all), attn.num_heads)
        return ch10._cached_reference(attn, x_all, x.shape[1], mistake=mistake).float()
    return fn


def _stores_new_only(attn, x, cache):
    out = cached_self_attention(attn, x, cache)
    new = x.shape[1]
    cache["keys"], cache["values"] = cache["keys"][:, :, -new:], cache["values"][:, :, -new:]
    return out


def _stores_inputs(attn, x, cache):
    """Keeps the inputs and recomputes their keys and values: not a KV cache."""
    x_all = x if "keys" not in cache else torch.cat([cache["keys"], x], dim=1)
    cache["keys"] = cache["values"] = x_all                        # (B, L, d_model)
    return ch10._cached_reference(attn, x_all, x.shape[1]).float()


def _swapped(attn, x, cache):
    if cache:
        cache["keys"], cache["values"] = cache["values"], cache["keys"]
    out = cached_self_attention(attn, x, cache)
    cache["keys"], cache["values"] = cache["values"], cache["keys"]
    return out


_SHARED = {}


def _shared_cache(attn, x, cache):
    """Keeps the keys and values in one variable shared by every layer (and copies them into
    the cache dict, where the checker looks)."""
    key = id(attn)
    if not cache:
        _SHARED.clear()
    own = _SHARED.setdefault("all", {})
    out = cached_self_attention(attn, x, own)
    cache["keys"], cache["values"] = own["keys"], own["values"]
    _SHARED[key] = True
    return out


@pytest.mark.parametrize(("wrong", "words"), [
    (_attention_variant("no mask"), "causal mask"),
    (_attention_variant("no offset"), "L_past + i"),
    (_attention_variant("new keys only"), "their own keys only"),
    (_attention_variant("d_model"), "sqrt(d_head)"),
    (_attention_variant("no W_o"), "W_o"),
    (_stores_new_only, "store the cached ones followed by the new ones"),
    (lambda attn, x, cache: cached_self_attention(attn, x, {}), "cache['keys']"),
    (_swapped, "swapped"),
    (_stores_inputs, "split into heads"),
    (_shared_cache, "one cache per layer"),
    (lambda attn, x, cache: cached_self_attention(attn, x, cache)[:, :1], "shape"),
])
def test_cached_self_attention_wrong_answers_say_why(wrong, words):
    result = check.cached_self_attention(wrong)
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


# --- the floor of label smoothing ---------------------------------------------------------------

def smoothing_floor(epsilon, num_classes):
    top, rest = 1 - epsilon + epsilon / num_classes, epsilon / num_classes
    spread = (num_classes - 1) * rest * math.log(rest) if rest > 0 else 0.0
    return -top * math.log(top) - spread


def test_smoothing_floor_right_answers_pass():
    assert check.smoothing_floor(smoothing_floor)
    assert check.smoothing_floor(lambda e, v: torch.tensor(smoothing_floor(e, v)))  # a tensor too
    assert check.smoothing_floor(smoothing_floor, epsilon=0.3, num_classes=7)


@pytest.mark.parametrize(("epsilon", "classes"), [(0.1, 10), (0.1, 96), (0.25, 2), (0.3, 7)])
def test_the_floor_is_what_pytorch_reaches_and_nothing_goes_below(epsilon, classes):
    """The floor is F.cross_entropy(..., label_smoothing=epsilon) at p = q, and no other
    prediction goes below it."""
    q = torch.full((1, classes), epsilon / classes, dtype=torch.float64)
    q[0, 0] += 1 - epsilon
    at_q = F.cross_entropy(q.log(), torch.tensor([0]), label_smoothing=epsilon).item()
    assert at_q == pytest.approx(ch10._floor(epsilon, classes), abs=1e-12)
    logits = torch.randn(500, classes, generator=torch.Generator().manual_seed(0),
                         dtype=torch.float64) * 4
    losses = F.cross_entropy(logits, torch.zeros(500, dtype=torch.long), label_smoothing=epsilon,
                             reduction="none")
    assert losses.min().item() >= ch10._floor(epsilon, classes) - 1e-12


@pytest.mark.parametrize(("wrong", "words"), [
    (lambda e, v: 0.0, ["got 0", "q itself"]),
    (lambda e, v: -math.log(1 - e), ["-log(1 - epsilon)", "every class"]),
    (lambda e, v: -math.log(1 - e + e / v), ["-log q_y", "V - 1 other classes"]),
    (lambda e, v: ch10._floor(e, v, others_only=True), ["V - 1 wrong classes"]),
    (lambda e, v: 1.0, ["expected 0"]),
])
def test_smoothing_floor_wrong_answers_say_why(wrong, words):
    result = check.smoothing_floor(wrong)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize(("kwargs", "error", "name"), [
    (dict(epsilon=1.0, num_classes=3), ValueError, "epsilon"),
    (dict(epsilon=-0.1, num_classes=3), ValueError, "epsilon"),
    (dict(epsilon="0.1", num_classes=3), TypeError, "epsilon"),
    (dict(epsilon=0.1, num_classes=1), ValueError, "num_classes"),
    (dict(epsilon=0.1, num_classes=2.5), TypeError, "num_classes"),
    (dict(epsilon=0.1), TypeError, "num_classes"),
])
def test_smoothing_floor_bad_input_names_the_argument(kwargs, error, name):
    with pytest.raises(error, match=name):
        check.smoothing_floor(smoothing_floor, **kwargs)


def test_smoothing_floor_speaks_french_and_italian():
    for lang, words in (("fr", ["epsilon = 0,1", "10 classes", "q"]),
                        ("it", ["epsilon = 0,1", "10 classi", "q"])):
        tc.set_language(lang)
        result = check.smoothing_floor(lambda e, v: 0.0)
        assert not result
        for word in words:
            assert word in result.message, (lang, word, result.message)
        assert "no prediction" not in result.message


# --- one prompt, several endings --------------------------------------------------------------

def score_endings(model, prompt, endings):
    cache = model.new_cache()
    first = torch.log_softmax(model(prompt, cache=cache)[0, -1], dim=-1)      # (V,)
    scores = []
    for ending in endings:
        total = first[ending[0]]
        if len(ending) > 1:
            logits = model(ending[None, :-1], cache=copy.deepcopy(cache))   # (1, n - 1, V)
            total = total + torch.log_softmax(logits, -1)[0].gather(-1, ending[1:, None]).sum()
        scores.append(total)
    return torch.stack(scores)


def full_passes(model, prompt, endings):  # right numbers, but the prompt runs once per ending
    scores = []
    for ending in endings:
        ids = torch.cat([prompt, ending[None]], dim=1)
        logp = torch.log_softmax(model(ids[:, :-1]), dim=-1)[0, prompt.shape[1] - 1:]
        scores.append(logp.gather(-1, ending[:, None]).sum())
    return torch.stack(scores)


def shared_cache(model, prompt, endings):
    cache = model.new_cache()
    first = torch.log_softmax(model(prompt, cache=cache)[0, -1], dim=-1)
    scores = []
    for ending in endings:
        total = first[ending[0]]
        if len(ending) > 1:
            logits = model(ending[None, :-1], cache=cache)                    # no copy
            total = total + torch.log_softmax(logits, -1)[0].gather(-1, ending[1:, None]).sum()
        scores.append(total)
    return torch.stack(scores)


def test_score_endings_right_answers_pass():
    with torch.no_grad():
        result = check.score_endings(score_endings)
        assert result, result.message
        assert check.score_endings(lambda m, p, e: score_endings(m, p, e).double())


def test_score_endings_agrees_with_the_chapter_s_model_shape():
    torch.manual_seed(0)
    model = tc.LanguageModel(20, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                             dropout=0.0).eval()
    prompt, endings = torch.tensor([[4, 2, 7]]), [torch.tensor([1, 5]), torch.tensor([9])]
    with torch.no_grad():
        assert torch.allclose(score_endings(model, prompt, endings),
                              full_passes(model, prompt, endings), atol=1e-5)


@pytest.mark.parametrize(("wrong", "words"), [
    (shared_cache, ["each ending after the first read the endings before it", "copy"]),
    (lambda m, p, e: full_passes(m, p, e) - torch.stack(
        [torch.log_softmax(m(p)[0, -1], -1)[x[0]] for x in e]), ["first token", "last logits"]),
    (full_passes, ["computed 26 positions", "at most 15", "run the prompt once"]),
    (lambda m, p, e: score_endings(m, p, e).exp(), ["entry"]),
])
def test_score_endings_wrong_answers_say_why(wrong, words):
    with torch.no_grad():
        result = check.score_endings(wrong)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)
