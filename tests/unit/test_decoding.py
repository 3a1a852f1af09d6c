"""Generation through the one module path (issues 21 and 29) and the causal kernel of
multi-head attention (issue 17, item 3): counts and exact equalities, never timings."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import transformer_course as tc
from transformer_course import bench

# The operators one cached token of chapter 10's model costs with torch 2.13, sampling
# included, through the modules (issue 29 removed the written-out step of 43): per layer
# three projections and W_o (a linear layer on (B, 1, d) rows dispatches a view, a
# transpose and addmm), two LayerNorms, the fused kernel, the cache's two concatenations
# and the feed-forward network.
OPERATORS_PER_CACHED_TOKEN = 78


@pytest.fixture(scope="module")
def chapter_10_model():
    torch.manual_seed(0)
    return tc.LanguageModel(110, **bench.LM_CONFIG).eval()


def test_operators_per_cached_token(chapter_10_model):
    prompt = torch.randint(0, 110, (1, 16), generator=torch.Generator().manual_seed(0))
    calls = bench.operators_per_token(chapter_10_model, prompt)
    assert sum(calls.values()) <= OPERATORS_PER_CACHED_TOKEN, dict(calls)
    assert not any("local_scalar_dense" in name for name in calls)  # nothing read on the host
    # the cache writes each layer's new key and value into its buffers, in place (two copies
    # per layer, and the past once more when a buffer grows); without it, the same operators
    # run on the whole sequence at every step (the FLOPs grow, not the count)
    uncached = bench.operators_per_token(chapter_10_model, prompt, use_cache=False)
    assert 2 * 2 <= calls["aten.copy_.default"] - uncached.get("aten.copy_.default", 0) < 2 * 2 + 1
    assert calls.get("aten.cat.default", 0) == uncached.get("aten.cat.default", 0)


@pytest.mark.parametrize("threads", [1, 2])
def test_cached_and_uncached_generation_write_the_same_tokens(chapter_10_model, threads):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        prompt = torch.randint(0, 110, (2, 16), generator=torch.Generator().manual_seed(1))
        out = {use_cache: chapter_10_model.generate(
            prompt, 96, use_cache=use_cache, generator=torch.Generator().manual_seed(2))
            for use_cache in (True, False)}
        assert torch.equal(out[True], out[False])
        assert torch.get_num_threads() == threads  # generation leaves the settings alone
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_cached_step_gives_the_logits_of_the_whole_sequence(norm_first):
    """One new position after a cache: the logits the whole sequence gives at that
    position (the same modules, the same maths, only fewer rows)."""
    torch.manual_seed(3)
    model = tc.LanguageModel(40, d_model=32, num_heads=4, num_layers=3, d_ff=64,
                             max_len=32, norm_first=norm_first).eval()
    ids = torch.randint(0, 40, (3, 12))
    cache = model.new_cache()
    with torch.no_grad():
        whole = model(ids)  # (B, 12, V)
        model(ids[:, :5], cache=cache)
        for t in range(5, 12):
            step = model(ids[:, t:t + 1], cache=cache)[:, -1]  # (B, V)
            torch.testing.assert_close(step, whole[:, t], rtol=1e-5, atol=1e-5)
    assert cache.length == 12


def test_padded_prompts_generate_the_same_tokens_with_and_without_the_cache():
    torch.manual_seed(9)
    model = tc.LanguageModel(40, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                             max_len=32).eval()
    prompt = torch.tensor([[0, 0, 5, 6, 7], [9, 10, 11, 12, 13]])
    out = {use_cache: model.generate(prompt, 10, pad_id=0, use_cache=use_cache,
                                     generator=torch.Generator().manual_seed(10))
           for use_cache in (True, False)}
    assert torch.equal(out[True], out[False])


def test_generation_goes_through_the_modules(chapter_10_model):
    """No second path: a hook on the output layer sees the prompt's pass and every cached
    step, and a replaced module is used."""
    model = chapter_10_model
    prompt = torch.randint(0, 110, (1, 5), generator=torch.Generator().manual_seed(4))
    calls = []
    handle = model.head.register_forward_hook(lambda m, args, out: calls.append(args[0].shape))
    try:
        model.generate(prompt, 6, generator=torch.Generator().manual_seed(5))
    finally:
        handle.remove()
    assert calls == [torch.Size([1, 64])] * 6  # the last position only, one pass per token

    class Doubled(tc.FeedForward):
        def forward(self, x, *, validate=True):
            return 2 * super().forward(x, validate=validate)

    other = tc.LanguageModel(20, d_model=16, num_heads=2, num_layers=1, d_ff=32).eval()
    prompt = torch.randint(0, 20, (1, 3))
    before = other.generate(prompt, 4, temperature=0.0)
    ff = other.blocks[0].ff
    other.blocks[0].ff = Doubled(16, 32, activation="gelu")
    other.blocks[0].ff.load_state_dict(ff.state_dict())
    with torch.no_grad():
        doubled = other(prompt)
        other.blocks[0].ff = ff
        assert not torch.equal(doubled, other(prompt))
    assert before.shape == (1, 7)


# --- is_causal: the causal kernel, exactly the causal mask --------------------------------------

class Calls(TorchDispatchMode):
    """Records every operator call with its arguments."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args, kwargs or {}))
        return func(*args, **(kwargs or {}))


def attention_kernels(calls):
    """The fused kernels called: (name, is_causal, whether a mask was passed)."""
    found = []
    for func, args, kwargs in calls:
        if "_scaled_dot_product" in str(func):
            names = [a.name for a in func._schema.arguments]
            values = dict(zip(names, args, strict=False)) | kwargs
            found.append((str(func), bool(values.get("is_causal")),
                          values.get("attn_mask") is not None))
    return found


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_is_causal_equals_the_causal_mask(dtype):
    torch.manual_seed(6)
    mha = tc.MultiHeadAttention(16, 4).to(dtype).eval()
    x = torch.randn(2, 7, 16, dtype=dtype)
    causal = tc.causal_mask(7)
    with torch.no_grad():
        with Calls() as recorded:
            fused, none = mha(x, x, x, is_causal=True, need_weights=False)
        masked, _ = mha(x, x, x, mask=causal, need_weights=False)
        explicit, weights = mha(x, x, x, is_causal=True)
        explicit_masked, weights_masked = mha(x, x, x, mask=causal)
    assert none is None
    assert attention_kernels(recorded.calls) == [
        ("aten._scaled_dot_product_flash_attention_for_cpu.default", True, False)]
    assert torch.equal(fused, masked)  # the same numbers, bit for bit, on the CPU
    assert torch.equal(explicit, explicit_masked) and torch.equal(weights, weights_masked)
    torch.testing.assert_close(fused, explicit)
    # against PyTorch's kernel with the boolean mask, on the same projections
    q, k, v = (tc.split_heads(w(x), 4) for w in (mha.W_q, mha.W_k, mha.W_v))
    reference = mha.W_o(tc.functional.merge_heads(
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal)))
    torch.testing.assert_close(fused, reference, rtol=0, atol=1e-12 if dtype == torch.float64
                               else 1e-6)


def test_is_causal_with_a_past_or_a_padding_mask_is_exact():
    torch.manual_seed(7)
    mha = tc.MultiHeadAttention(16, 4, bias=False).double().eval()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    padding = torch.tensor([[True] * 6, [False] * 6])[:, None, None, :]  # row 2: all padding
    with torch.no_grad():
        for need_weights in (False, True):
            both, _ = mha(x, x, x, mask=padding, is_causal=True, need_weights=need_weights)
            expected, _ = mha(x, x, x, mask=padding & tc.causal_mask(6),
                              need_weights=need_weights)
            assert torch.equal(both, expected)
            assert torch.equal(both[1], torch.zeros(6, 16, dtype=torch.float64))  # no key: 0
        # after 4 cached positions, 2 new queries: the mask is offset, never top-left aligned
        cache, full_cache = tc.LayerCache(), tc.LayerCache()
        mha(x[:, :4], x[:, :4], x[:, :4], is_causal=True, cache=cache, need_weights=False)
        with Calls() as recorded:
            new, _ = mha(x[:, 4:], x[:, 4:], x[:, 4:], is_causal=True, cache=cache,
                         need_weights=False)
        assert attention_kernels(recorded.calls)[0][1:] == (False, True)  # an explicit mask
        full, _ = mha(x, x, x, mask=tc.causal_mask(6), cache=full_cache, need_weights=False)
    torch.testing.assert_close(new, full[:, 4:], rtol=0, atol=1e-12)


def test_is_causal_needs_self_attention():
    mha = tc.MultiHeadAttention(8, 2)
    q, kv = torch.randn(1, 3, 8), torch.randn(1, 5, 8)
    with pytest.raises(ValueError, match="is_causal=True needs as many queries as new keys"):
        mha(q, kv, kv, is_causal=True)
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        mha(q, q, q, is_causal="yes")
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        tc.Encoder(8, 2, 16, 1)(q, is_causal=1)


def test_the_language_model_uses_the_causal_kernel_and_gives_what_it_gave():
    """`tc.LanguageModel` used to pass a boolean causal mask, so that a GPU never chose its
    flash kernel (issue 17, item 3): it now passes is_causal=True, with the same logits."""
    torch.manual_seed(8)
    model = tc.LanguageModel(30, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                             dropout=0.0, max_len=16).eval()
    ids = torch.randint(0, 30, (2, 9))
    with torch.no_grad():
        with Calls() as recorded:
            logits = model(ids)
        x = model.embed(ids) + model.position(torch.arange(9))
        for block in model.blocks:
            x = block(x, mask=tc.causal_mask(9))  # the boolean mask
        before = model.head(model.norm(x))
    kernels = attention_kernels(recorded.calls)
    assert len(kernels) == 2 and all(causal and not mask for _, causal, mask in kernels)
    assert torch.equal(logits, before)
    _, maps = model(ids, return_attention=True)  # the explicit path: weights of the mask
    assert all(torch.equal(m[..., ~tc.causal_mask(9)], torch.zeros_like(m[..., ~tc.causal_mask(9)]))
               for m in maps)


def test_bench_generate_prints_both_lengths_thread_counts_and_the_operators(monkeypatch,
                                                                            capsys):
    """`python -m transformer_course.bench generate`: one line per length and thread count,
    after the operators per cached token (tiny sizes here: timings are the script's job,
    not the tests')."""
    full = bench.bench_generate
    monkeypatch.setattr(bench, "bench_generate",
                        lambda **kw: full(new_tokens=(4, 8), prompt_length=4, repeats=1, **kw))
    assert bench.main(["generate"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    figures = (r"\d+ tokens/s with the cache \(\d+ µs/token\), \d+ without, \d+\.\dx, "
               r"identical tokens$")
    for line, head in zip(lines[-4:], ("4 tokens, 1 thread", "4 tokens, 2 threads",
                                       "8 tokens, 1 thread", "8 tokens, 2 threads"),
                          strict=True):
        assert re.match(rf"generate {head}: " + figures, line), line
    assert re.search(r"with the cache: \d+ PyTorch operators per token", lines[-5])
    assert "load average" in lines[-6]
