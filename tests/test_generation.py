"""Generation: the KV cache gives exactly what recomputing gives, the language model samples
with a temperature and top-k, beam search generalises greedy decoding."""

import pytest
import torch

import transformer_course as tc
from transformer_course import bench, data, generation, training


def test_causal_mask_with_a_past():
    assert torch.equal(tc.causal_mask(3), torch.ones(3, 3, dtype=torch.bool).tril())
    mask = tc.causal_mask(2, past=3)
    assert mask.shape == (2, 5)
    assert mask.tolist() == [[True] * 4 + [False], [True] * 5]
    with pytest.raises(ValueError, match="past must be >= 0"):
        tc.causal_mask(2, past=-1)


def test_a_cached_attention_layer_equals_the_full_computation():
    torch.manual_seed(0)
    mha = tc.MultiHeadAttention(16, 4).double()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    full, _ = mha(x, x, x, mask=tc.causal_mask(6))
    cache = tc.LayerCache()
    first, _ = mha(x[:, :4], x[:, :4], x[:, :4], mask=tc.causal_mask(4), cache=cache)
    steps = [mha(x[:, t:t + 1], x[:, t:t + 1], x[:, t:t + 1], cache=cache)[0] for t in (4, 5)]
    assert cache.length == 6 and cache.keys.shape == (2, 4, 6, 4)
    assert (torch.cat([first, *steps], dim=1) - full).abs().max() < 1e-12
    # the explicit path returns the weights of the new queries over every key
    _, weights = mha(x[:, :1], x[:, :1], x[:, :1], cache=tc.LayerCache(), need_weights=True)
    assert weights.shape == (2, 4, 1, 1)


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_cached_stack_equals_the_full_computation(norm_first):
    torch.manual_seed(1)
    enc = tc.Encoder(16, 4, 32, 3, norm_first=norm_first, dropout=0.0).double().eval()
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    full = enc(x, mask=tc.causal_mask(7))
    cache = tc.KVCache(3)
    parts = [enc(x[:, :3], mask=tc.causal_mask(3), cache=cache),
             enc(x[:, 3:4], cache=cache),
             enc(x[:, 4:7], mask=tc.causal_mask(3, past=4), cache=cache)]
    assert cache.length == 7 and cache.nbytes == 2 * 3 * (2 * 4 * 7 * 4) * 8
    assert (torch.cat(parts, dim=1) - full).abs().max() < 1e-12


def test_cache_errors_name_what_they_saw():
    mha = tc.MultiHeadAttention(16, 4)
    x = torch.randn(2, 3, 16)
    with pytest.raises(TypeError, match="cache must be a LayerCache, got dict"):
        mha(x, x, x, cache={})
    cache = tc.LayerCache()
    mha(x, x, x, cache=cache)
    with pytest.raises(ValueError, match=r"cache.keys must be \(B, H, L_past, d_head\)"):
        y = torch.randn(1, 1, 16)
        mha(y, y, y, cache=cache)  # another batch size
    with pytest.raises(ValueError, match=r"does not broadcast.*\(2, 4, 2, 5\)"):
        z = torch.randn(2, 2, 16)
        mha(z, z, z, mask=tc.causal_mask(2), cache=cache)  # the mask forgot the past
    enc = tc.Encoder(16, 4, 32, 2)
    with pytest.raises(ValueError, match=r"cache has 3 layers, the stack 2"):
        enc(x, cache=tc.KVCache(3))
    with pytest.raises(TypeError, match="cache must be a KVCache"):
        enc(x, cache=tc.LayerCache())


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(2)
    return tc.LanguageModel(30, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.0,
                            max_len=64).eval()


def test_language_model_shapes_and_tied_weights(model):
    ids = torch.randint(0, 30, (3, 10))
    assert model(ids).shape == (3, 10, 30)
    assert model.head.weight.data_ptr() == model.embed.weight.data_ptr()
    untied = tc.LanguageModel(30, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.0,
                              max_len=64, tie_embeddings=False)
    count = sum(p.numel() for p in model.parameters())
    assert sum(p.numel() for p in untied.parameters()) == count + 30 * 32  # one more table
    with pytest.raises(ValueError, match="max_len=64"):
        model(torch.zeros(1, 65, dtype=torch.long))
    with pytest.raises(ValueError, match=r"id 30, outside \[0, 30\)"):
        model(torch.full((1, 2), 30))
    with pytest.raises(ValueError, match="exceeds max_len=64"):
        model.generate(torch.zeros(1, 60, dtype=torch.long), 10)


def test_the_future_does_not_leak(model):
    ids = torch.randint(0, 30, (1, 12))
    changed = ids.clone()
    changed[0, 8:] = (changed[0, 8:] + 1) % 30
    torch.testing.assert_close(model(ids)[:, :8], model(changed)[:, :8])


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, None), (0.7, 5), (2.0, 1)])
def test_generation_with_and_without_the_cache_writes_the_same_tokens(model, temperature, top_k):
    prompt = torch.randint(0, 30, (2, 5), generator=torch.Generator().manual_seed(3))
    out = {}
    for use_cache in (True, False):
        generator = torch.Generator().manual_seed(4)
        out[use_cache] = model.generate(prompt, 40, temperature=temperature, top_k=top_k,
                                        use_cache=use_cache, generator=generator)
    assert out[True].shape == (2, 45) and torch.equal(out[True][:, :5], prompt)
    assert torch.equal(out[True], out[False])


def test_greedy_generation_takes_the_argmax(model):
    prompt = torch.tensor([[1, 2, 3]])
    out = model.generate(prompt, 6, temperature=0.0)
    ids = prompt
    for _ in range(6):
        ids = torch.cat([ids, model(ids)[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(out, ids)


def test_temperature_is_the_inverse_of_beta():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    for t in (0.5, 1.0, 4.0):
        torch.testing.assert_close(generation.next_token_probabilities(logits, temperature=t),
                                   tc.soft_argmax(logits, beta=1 / t))
    assert torch.equal(generation.next_token_probabilities(logits, temperature=0.0),
                       tc.hard_argmax(logits))
    top2 = generation.next_token_probabilities(logits, top_k=2)
    assert torch.all(top2[0, 2:] == 0) and torch.allclose(top2.sum(), torch.tensor(1.0))


def test_sampling_follows_the_distribution():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.2]])).expand(20000, 3)
    ids = generation.sample_next(logits, generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(ids, minlength=3) / 20000
    assert torch.allclose(freq, torch.tensor([0.5, 0.3, 0.2]), atol=0.015), freq
    top1 = generation.sample_next(logits[:5], top_k=1, generator=torch.Generator())
    assert torch.all(top1 == 0)
    with pytest.raises(ValueError, match="temperature"):
        generation.sample_next(logits, temperature=-1.0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        generation.top_k_logits(logits, 0)


def test_beam_search_of_width_one_is_greedy_decoding_and_wider_beams_do_better():
    torch.manual_seed(5)
    model = tc.Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                           dropout=0.0).eval()
    src = torch.randint(3, 12, (8, 5), generator=torch.Generator().manual_seed(6))
    greedy = model.greedy_decode(src, bos_id=1, eos_id=2, max_len=6)
    assert torch.equal(model.beam_search(src, bos_id=1, eos_id=2, beam_size=1, max_len=6), greedy)
    wide = model.beam_search(src, bos_id=1, eos_id=2, beam_size=4, max_len=6)
    after_eos = (wide == 2).long().cumsum(-1) - (wide == 2).long() > 0
    assert torch.all(wide[after_eos] == model.pad_id)  # padding after <eos>, as greedy does
    with torch.no_grad():
        gain = (generation.log_probability(model, src, wide, bos_id=1, eos_id=2)
                - generation.log_probability(model, src, greedy, bos_id=1, eos_id=2))
    assert gain.mean() > 0 and gain.max() > 0.1, gain


def test_language_model_batches_shift_by_one():
    ids = torch.arange(100)
    batches = training.lm_batches(ids, 8, 4, 3, seed=1)
    assert len(batches) == 3
    for inputs, targets in batches:
        assert inputs.shape == targets.shape == (4, 8)
        assert torch.equal(targets, inputs + 1)
    assert all(torch.equal(a[0], b[0]) for a, b in
               zip(batches, training.lm_batches(ids, 8, 4, 3, seed=1), strict=True))
    with pytest.raises(ValueError, match="longer than block_size=200"):
        training.lm_batches(ids, 200, 4, 1)


def test_a_small_language_model_learns_a_repeated_text(deterministic):
    text = "le chat dort. " * 40
    tok = data.CharTokenizer.from_texts([text])
    ids = torch.tensor(tok.encode(text))
    tc.seed_everything(0)
    lm = tc.LanguageModel(len(tok), d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0,
                          max_len=32)
    history = training.fit(lm, lambda e: training.lm_batches(ids, 16, 8, 20, seed=e),
                           training.lm_loss, epochs=6, lr=1e-2, device="cpu", progress=False)
    assert history.losses[-1] < 0.5 * history.losses[0], history.losses[::20]
    out = lm.generate(torch.tensor([tok.encode("le ch")]), 9, temperature=0.0)
    assert tok.decode(out[0].tolist()).startswith("le chat dort.")


def test_the_course_corpus_is_the_book_s_prose():
    for lang, word in (("en", " the "), ("fr", " les "), ("it", " di ")):
        text = data.course_corpus((lang,))
        assert len(text) > 20_000 and text.count(word) > 100, lang
        assert "attention" in text.lower() or "attenzione" in text.lower()
        assert "<a " not in text and "$" not in text and "`" not in text  # prose only
    assert data.course_corpus() == "".join(data.course_corpus((x,)) for x in ("en", "fr", "it"))


def test_bench_generate_runs_small():
    r = bench.bench_generate(new_tokens=8, prompt_length=4, repeats=1)
    assert r["identical"] == 1.0 and r["cached tokens/s"] > 0 and r["speed-up"] > 0
