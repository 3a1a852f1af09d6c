"""Generation at the speed of the arithmetic (issue 21, item 1) and the causal kernel of
multi-head attention (issue 17, item 3): counts and exact equalities, never timings."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import transformer_course as tc
from transformer_course import bench
from transformer_course._decoding import WrittenOut

# The operators one cached token of chapter 10's model costs with torch 2.13, sampling
# included (115 before issue 21: argument checks, the overflow guard's check, a linear
# layer on (B, 1, d) inputs dispatching four operators instead of one, three projections
# where one matrix product does, and soft_argmax's own subtraction of the maximum).
OPERATORS_PER_CACHED_TOKEN = 43


@pytest.fixture(scope="module")
def chapter_10_model():
    torch.manual_seed(0)
    return tc.LanguageModel(110, **bench.LM_CONFIG).eval()


def test_operators_per_cached_token(chapter_10_model):
    prompt = torch.randint(0, 110, (1, 16), generator=torch.Generator().manual_seed(0))
    calls = bench.operators_per_token(chapter_10_model, prompt)
    assert sum(calls.values()) <= OPERATORS_PER_CACHED_TOKEN, dict(calls)
    assert not any("local_scalar_dense" in name for name in calls)  # nothing read on the host
    uncached = bench.operators_per_token(chapter_10_model, prompt, use_cache=False)
    assert sum(uncached.values()) > sum(calls.values())


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
        assert torch.get_num_threads() == threads  # the single-thread steps give it back
    finally:
        torch.set_num_threads(before)


def test_generation_runs_without_onednn_and_gives_the_setting_back(chapter_10_model):
    """oneDNN prepares each call for large tensors (its GELU of a (1, 256) row cost five
    times PyTorch's own): generation turns it off on the CPU, for its cached and uncached
    steps alike, and restores the caller's setting."""
    seen = []
    hook = chapter_10_model.head.register_forward_hook(
        lambda *_: seen.append(torch.backends.mkldnn.enabled))
    prompt = torch.randint(0, 110, (1, 8), generator=torch.Generator().manual_seed(0))
    before = torch.backends.mkldnn.enabled
    try:
        for setting in (True, False):
            torch.backends.mkldnn.enabled = setting
            chapter_10_model.generate(prompt, 3, use_cache=False)
            assert torch.backends.mkldnn.enabled is setting
    finally:
        hook.remove()
        torch.backends.mkldnn.enabled = before
    assert seen == [False] * 6


@pytest.mark.parametrize(("norm_first", "onednn", "key_bias"),
                         [(True, True, True), (False, True, True), (True, False, True),
                          (False, False, False)])
def test_the_written_out_step_is_the_model_bit_for_bit(norm_first, onednn, key_bias,
                                                       monkeypatch):
    """Whatever the kernels, and with one projection's bias removed (the three projections
    are one matrix product in the written-out step)."""
    torch.manual_seed(3)
    model = tc.LanguageModel(40, d_model=32, num_heads=4, num_layers=3, d_ff=64,
                             max_len=32, norm_first=norm_first).eval()
    if not key_bias:
        model.blocks.layers[1].self_attn.W_k.bias = None
    step = WrittenOut.of(model)
    assert step is not None
    ids = torch.randint(0, 40, (3, 12))
    modules, written = model.new_cache(), model.new_cache()
    monkeypatch.setattr(torch.backends.mkldnn, "enabled", onednn)
    with torch.no_grad():
        model(ids[:, :5], cache=modules)
        model(ids[:, :5], cache=written)
        for t in range(5, 12):
            expected = model(ids[:, t:t + 1], cache=modules)[:, -1]  # (B, V)
            assert torch.equal(step(ids[:, t], written), expected)
    for ours, theirs in zip(written.layers, modules.layers, strict=True):
        assert torch.equal(ours.keys, theirs.keys) and torch.equal(ours.values, theirs.values)


def test_the_written_out_step_is_the_model_with_padding_too():
    """Prompts of different lengths (left padding, an attention mask): the written-out step
    takes each row's own position and never attends to padding, as forward does."""
    torch.manual_seed(9)
    model = tc.LanguageModel(40, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                             max_len=32).eval()
    step = WrittenOut.of(model)
    ids = torch.randint(1, 40, (3, 9))
    keep = torch.ones(3, 9, dtype=torch.bool)
    keep[0, :3] = False  # row 1: three padding positions on the left
    keep[2, :1] = False
    modules, written = model.new_cache(), model.new_cache()
    with torch.no_grad():
        model(ids[:, :5], cache=modules, attention_mask=keep[:, :5])
        model(ids[:, :5], cache=written, attention_mask=keep[:, :5])
        for t in range(5, 9):
            expected = model(ids[:, t:t + 1], cache=modules,
                             attention_mask=keep[:, :t + 1])[:, -1]  # (B, V)
            assert torch.equal(step(ids[:, t], written, keep[:, :t + 1]), expected)
    prompt = torch.tensor([[0, 0, 5, 6, 7], [9, 10, 11, 12, 13]])
    out = {use_cache: model.generate(prompt, 10, pad_id=0, use_cache=use_cache,
                                     generator=torch.Generator().manual_seed(10))
           for use_cache in (True, False)}
    assert torch.equal(out[True], out[False])


def test_hooks_and_replaced_modules_keep_generation_on_the_modules(chapter_10_model):
    model = chapter_10_model
    prompt = torch.randint(0, 110, (1, 5), generator=torch.Generator().manual_seed(4))
    expected = model.generate(prompt, 6, generator=torch.Generator().manual_seed(5))
    calls = []
    handle = model.blocks.layers[1].ff.register_forward_hook(lambda *_: calls.append(1))
    try:
        assert WrittenOut.of(model) is None
        out = model.generate(prompt, 6, generator=torch.Generator().manual_seed(5))
    finally:
        handle.remove()
    assert len(calls) == 6 and torch.equal(out, expected)  # the prompt and 5 cached steps
    assert WrittenOut.of(model) is not None

    class Doubled(tc.FeedForward):
        def forward(self, x):
            return 2 * super().forward(x)

    other = tc.LanguageModel(20, d_model=16, num_heads=2, num_layers=1, d_ff=32).eval()
    ff = other.blocks.layers[0].ff
    other.blocks.layers[0].ff = Doubled(16, 32, activation="gelu")
    other.blocks.layers[0].ff.load_state_dict(ff.state_dict())
    assert WrittenOut.of(other) is None
    assert WrittenOut.of(other.train()) is None  # training mode: dropout is on


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
    q, k, v = mha._project(x, x, x)
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
        before = model.head(model.blocks(x, mask=tc.causal_mask(9)))  # the boolean mask
    kernels = attention_kernels(recorded.calls)
    assert len(kernels) == 2 and all(causal and not mask for _, causal, mask in kernels)
    assert torch.equal(logits, before)
    _, maps = model(ids, return_attention=True)  # the explicit path: weights of the mask
    assert all(torch.equal(m[..., ~tc.causal_mask(9)], torch.zeros_like(m[..., ~tc.causal_mask(9)]))
               for m in maps)


def test_bench_generate_prints_both_thread_counts_and_the_operators(monkeypatch, capsys):
    """`python -m transformer_course.bench generate`: the 1-thread figures on the line before
    the last, whose form the 2-thread figures keep (tiny sizes here: timings are the
    script's job, not the tests')."""
    full = bench.bench_generate
    monkeypatch.setattr(bench, "bench_generate",
                        lambda **kw: full(new_tokens=8, prompt_length=4, repeats=1, **kw))
    assert bench.main(["generate"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    figures = r"\d+ tokens/s with the cache, \d+ without, \d+\.\dx, identical tokens$"
    assert re.match(r"generate, 1 thread: " + figures, lines[-2]), lines[-2]
    assert re.match(r"generate: " + figures, lines[-1]), lines[-1]
    assert re.search(r"with the cache: \d+ PyTorch operators per token", lines[-3])
    assert "load average" in lines[-4]
