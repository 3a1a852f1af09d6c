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
    with pytest.raises(ValueError, match=r"keys must be \(B, H, L_new, d_head\) with the "
                                         r"cache's B, H and d_head \(2, 4\) and 4"):
        cache.update(torch.randn(1, 4, 1, 4), torch.randn(1, 4, 1, 4))  # would broadcast


def test_a_language_model_checks_its_cache_as_a_stack_does():
    """A cache filled by two sequences cannot continue one (it once broadcast the new key
    into both rows and returned two rows of logits), and a cache of another depth or
    another model is refused by name."""
    lm = tc.LanguageModel(50, d_model=32, num_heads=4, num_layers=2, d_ff=64, max_len=40).eval()
    ids = torch.randint(1, 50, (2, 5), generator=torch.Generator().manual_seed(3))
    cache = lm.new_cache()
    lm(ids, cache=cache)
    with pytest.raises(ValueError, match=r"cache.keys must be \(B, H, L_past, d_head\) = "
                                         r"\(1, 4, 5, 8\)"):
        lm(ids[:1, :1], cache=cache)
    for layers in (1, 3):
        with pytest.raises(ValueError, match=rf"cache has {layers} layers?, the stack 2"):
            lm(ids, cache=tc.KVCache(layers))
    other = tc.LanguageModel(50, d_model=16, num_heads=4, num_layers=2, d_ff=64).eval()
    foreign = other.new_cache()
    other(ids, cache=foreign)
    with pytest.raises(ValueError, match=r"cache.keys must be .* got \(2, 4, 5, 4\)"):
        lm(ids[:, :1], cache=foreign)
    with pytest.raises(TypeError, match="cache must be a KVCache, got dict"):
        lm(ids, cache={})


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


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_at_temperature_one_the_distribution_is_soft_argmax_bit_for_bit(dtype):
    """Generation's one-operation softmax at T = 1 gives soft_argmax's numbers exactly
    (softmax takes the largest logit off itself, as soft_argmax does first)."""
    generator = torch.Generator().manual_seed(0)
    for scale in (1e-3, 1.0, 30.0, 1e4):
        logits = torch.randn(64, 110, generator=generator, dtype=dtype) * scale
        logits[0, 5] = 1e30 if dtype == torch.float32 else 1e300  # one far above the rest
        assert torch.equal(generation.next_token_probabilities(logits),
                           tc.soft_argmax(logits, beta=1.0))


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


# --- issue 20: end of sequence, top-p, prompts of different lengths, no end symbol ---------------

@pytest.fixture(scope="module")
def exact():
    """A float64 model: padded and unpadded runs agree to the last bit that matters."""
    torch.manual_seed(7)
    return tc.LanguageModel(30, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.0,
                            max_len=64).double().eval()


def test_generate_stops_at_the_end_of_sequence_id(exact):
    prompt = torch.tensor([[5, 6, 7], [9, 10, 11]])
    free = exact.generate(prompt, 12, temperature=0.0)
    eos = int(free[0, 5])  # the third token the first row writes
    out = exact.generate(prompt, 12, temperature=0.0, eos_id=eos, pad_id=0)
    for row, alone in zip(out, free, strict=True):
        new, written = row[3:], alone[3:]
        hits = (written == eos).nonzero()
        end = int(hits[0]) + 1 if len(hits) else len(written)
        assert torch.equal(new[:end], written[:end])  # the same tokens up to <eos>
        assert torch.all(new[end:] == 0)  # then padding
    stops = [(row[3:] == eos).nonzero() for row in free]
    if all(len(s) for s in stops):  # every row finished: generation stopped early
        assert out.shape[1] == 3 + max(int(s[0]) + 1 for s in stops) < 15
    filled = exact.generate(prompt, 12, temperature=0.0, eos_id=eos)  # no pad_id: <eos> again
    assert torch.all(filled[0, 6:] == eos)


@pytest.mark.parametrize("use_cache", [True, False])
def test_prompts_of_different_lengths_are_continued_as_each_alone(exact, use_cache):
    a, b = [5, 6, 7, 8], [9, 10]
    alone = [exact.generate(torch.tensor([p]), 6, temperature=0.0)[0] for p in (a, b)]
    right = torch.tensor([a, [*b, 0, 0]])  # as tokenizer.batch pads: on the right, with 0
    out = exact.generate(right, 6, temperature=0.0, pad_id=0, use_cache=use_cache)
    assert torch.equal(out[0], alone[0])
    assert torch.equal(out[1], torch.cat([alone[1], torch.tensor([0, 0])]))  # padding last
    left = torch.tensor([a, [3, 3, *b]])  # left padding with a mask: pad values are ignored
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1]])
    out = exact.generate(left, 6, temperature=0.0, attention_mask=mask, use_cache=use_cache)
    assert torch.equal(out[0], alone[0])
    assert torch.equal(out[1], torch.cat([torch.tensor([3, 3]), alone[1]]))  # padding first


def test_padded_logits_equal_the_unpadded_ones(exact):
    ids = torch.tensor([[0, 0, 4, 5, 6]])
    mask = torch.tensor([[False, False, True, True, True]])
    torch.testing.assert_close(exact(ids, attention_mask=mask)[:, 2:], exact(ids[:, 2:]))
    cache = exact.new_cache()  # and one position at a time through the cache
    exact(ids[:, :4], cache=cache, attention_mask=mask[:, :4])
    step = exact(ids[:, 4:], cache=cache, attention_mask=mask)
    torch.testing.assert_close(step[:, -1], exact(ids[:, 2:])[:, -1])


@pytest.mark.parametrize("temperature, top_k, top_p", [(1.0, None, 0.9), (0.8, 5, 0.5)])
def test_padded_sampling_is_the_same_with_and_without_the_cache(model, temperature, top_k,
                                                                top_p):
    prompt = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0], [7, 0, 0, 0]])
    out = {}
    for use_cache in (True, False):
        out[use_cache] = model.generate(prompt, 20, temperature=temperature, top_k=top_k,
                                        top_p=top_p, pad_id=0, use_cache=use_cache,
                                        generator=torch.Generator().manual_seed(11))
    assert out[True].shape == (3, 24) and torch.equal(out[True], out[False])


def test_top_p_keeps_the_smallest_nucleus():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    for p, kept in ((0.4, 1), (0.6, 2), (0.79, 2), (0.81, 3), (1.0, 4)):
        filtered = generation.top_p_logits(logits, p)
        assert int(torch.isfinite(filtered).sum()) == kept, (p, filtered)
    probs = generation.next_token_probabilities(logits, top_p=0.7)
    torch.testing.assert_close(probs, torch.tensor([[0.625, 0.375, 0.0, 0.0]]))
    ties = torch.zeros(1, 4)  # four equal tokens: a tie is kept whole
    assert torch.isfinite(generation.top_p_logits(ties, 0.3)).all()
    # the nucleus is taken at the temperature: hotter, more tokens reach the mass
    cold = generation.next_token_probabilities(logits, temperature=0.5, top_p=0.8)
    hot = generation.next_token_probabilities(logits, temperature=2.0, top_p=0.8)
    assert int((cold > 0).sum()) < int((hot > 0).sum())
    assert torch.equal(generation.next_token_probabilities(logits, temperature=0.0, top_p=0.1),
                       tc.hard_argmax(logits))


def test_top_p_of_one_keeps_every_token_even_those_float32_rounds_away():
    logits = torch.tensor([[0.0, -18.5, -19.0]])  # probabilities 1 - 1.5e-8, 9e-9, 6e-9
    assert torch.softmax(logits, -1).cumsum(-1)[0, 0] == 1.0  # a cut at 1 would drop two
    assert torch.equal(generation.top_p_logits(logits, 1.0), logits)
    assert int((generation.next_token_probabilities(logits, top_p=1.0) > 0).sum()) == 3


def test_logits_that_leave_nothing_to_draw_are_refused():
    for logits, message in ((torch.tensor([[0.0, float("nan")]]), "no NaN nor \\+inf"),
                            (torch.tensor([[0.0, float("inf")]]), "no NaN nor \\+inf"),
                            (torch.tensor([[0.0, 1.0], [float("-inf")] * 2]),
                             "a row of -inf leaves no token")):
        with pytest.raises(ValueError, match=message):
            generation.sample_next(logits)
        with pytest.raises(ValueError, match=message):
            generation.next_token_probabilities(logits)
    masked = torch.tensor([[0.0, float("-inf")]])  # -inf for some tokens: a masked token
    assert generation.sample_next(masked).tolist() == [0]
    with pytest.raises(ValueError, match=r"temperature=1e-40 .* overflows torch.float32"):
        generation.sample_next(torch.zeros(1, 3), temperature=1e-40)
    with pytest.raises(ValueError, match=r"overflows torch.float16: use temperature=0"):
        generation.next_token_probabilities(torch.zeros(1, 3, dtype=torch.float16),
                                            temperature=1e-5)
    assert generation.next_token_probabilities(torch.zeros(1, 3), temperature=1e-5).sum() == 1


def test_top_p_sampling_draws_only_from_the_nucleus():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]])).expand(20000, 4)
    ids = generation.sample_next(logits, top_p=0.8, generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(ids, minlength=4) / 20000
    assert freq[2:].sum() == 0
    assert torch.allclose(freq[:2], torch.tensor([0.625, 0.375]), atol=0.015), freq


def test_sampling_errors_name_the_argument(model):
    prompt = torch.tensor([[1, 2]])
    for options, error, message in (
            ({"top_k": 0}, ValueError, "top_k must be >= 1, got 0"),
            ({"top_k": 2.5}, TypeError, "top_k must be an int, got float"),
            ({"top_p": 0.0}, ValueError, r"top_p must be a finite number in \(0, 1\], got 0.0"),
            ({"top_p": 1.5}, ValueError, r"top_p must be a finite number in \(0, 1\]"),
            ({"temperature": -1}, ValueError, r"temperature must be a finite number in \[0"),
            ({"eos_id": 30}, ValueError, r"eos_id must be an id in \[0, 30\), got 30"),
            ({"pad_id": -1}, ValueError, r"pad_id must be an id in \[0, 30\), got -1"),
            ({"eos_id": "2"}, TypeError, "eos_id must be an int, got str"),
            ({"generator": 3}, TypeError, "generator must be a torch.Generator or None"),
            ({"attention_mask": torch.ones(1, 3)}, ValueError,
             r"attention_mask must have the shape of prompt \(1, 2\), got \(1, 3\)"),
            ({"attention_mask": torch.tensor([[1, 0, 1]]).bool(), "max_new_tokens": 2},
             ValueError, "must have the shape of prompt")):
        options = {"max_new_tokens": 3, **options}
        with pytest.raises(error, match=message):
            model.generate(prompt, **options)
    with pytest.raises(ValueError, match=r"row 1 of prompt \(2, 3\) has padding between real"):
        model.generate(torch.tensor([[1, 2, 3], [4, 0, 5]]), 2, pad_id=0)
    with pytest.raises(ValueError, match=r"row 0 of prompt \(2, 2\) holds only padding"):
        model.generate(torch.tensor([[0, 0], [4, 5]]), 2, pad_id=0)
    with pytest.raises(ValueError, match=r"top_k must be >= 1, got 0"):
        generation.sample_next(torch.randn(2, 5), top_k=0)
    with pytest.raises(ValueError, match=r"p must be a finite number in \(0, 1\]"):
        generation.top_p_logits(torch.randn(2, 5), 0)


@pytest.fixture(scope="module")
def seq2seq():
    torch.manual_seed(5)
    return tc.Transformer(12, 12, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                          dropout=0.0).eval()


def test_decoding_without_an_end_symbol_writes_exactly_max_len_tokens(seq2seq):
    src = torch.randint(3, 12, (4, 5), generator=torch.Generator().manual_seed(6))
    greedy = seq2seq.greedy_decode(src, bos_id=1, eos_id=None, max_len=7)
    assert greedy.shape == (4, 7)
    stepwise = torch.ones(4, 1, dtype=torch.long)  # the argmax at every step, never stopping
    for _ in range(7):
        nxt = seq2seq(src, stepwise)[:, -1].argmax(-1, keepdim=True)
        stepwise = torch.cat([stepwise, nxt], dim=1)
    assert torch.equal(greedy, stepwise[:, 1:])
    assert torch.equal(seq2seq.beam_search(src, bos_id=1, eos_id=None, beam_size=1, max_len=7),
                       greedy)
    wide = seq2seq.beam_search(src, bos_id=1, beam_size=3, max_len=7)
    assert wide.shape == (4, 7)
    with torch.no_grad():
        gain = (generation.log_probability(seq2seq, src, wide, bos_id=1)
                - generation.log_probability(seq2seq, src, greedy, bos_id=1))
    assert torch.all(gain > -1e-5), gain  # a wider beam never finds a less likely sequence


def test_a_transformer_decodes_in_eval_mode_and_keeps_its_own_mode():
    """A freshly built Transformer is in training mode, with dropout: its decoding methods
    switch dropout off while they decode, as LanguageModel.generate does."""
    torch.manual_seed(7)
    t = tc.Transformer(12, 12, d_model=32, num_heads=4, num_layers=2, d_ff=64)
    src = torch.randint(3, 12, (8, 6), generator=torch.Generator().manual_seed(8))
    for decode in (lambda: t.greedy_decode(src, bos_id=1, eos_id=2, max_len=10),
                   lambda: t.beam_search(src, bos_id=1, eos_id=2, beam_size=4, max_len=10)):
        runs = [decode() for _ in range(3)]
        assert all(torch.equal(run, runs[0]) for run in runs), "dropout changed the decoding"
        assert t.training
        t.eval()
        assert torch.equal(decode(), runs[0]) and not t.training
        t.train()


def test_decoding_errors_name_the_argument(seq2seq):
    src = torch.tensor([[3, 4, 5]])
    for call in (generation.beam_search, generation.greedy_decode):
        with pytest.raises(TypeError, match="bos_id must be an int, got str"):
            call(seq2seq, src, bos_id="a")
        with pytest.raises(ValueError, match=r"bos_id must be an id in \[0, 12\), got 99"):
            call(seq2seq, src, bos_id=99, eos_id=2)
        with pytest.raises(ValueError, match=r"eos_id must be an id in \[0, 12\), got -2"):
            call(seq2seq, src, bos_id=1, eos_id=-2)
        with pytest.raises(TypeError, match="model must be an encoder-decoder.*lacks"):
            call(object(), src, bos_id=1)
    with pytest.raises(ValueError, match=r"bos_id must be an id in \[0, 12\), got 99"):
        seq2seq.beam_search(src, bos_id=99, eos_id=2)


def test_the_package_s_imports_run_one_way():
    """No circle between the package's modules (models -> generation, never back), lazy
    imports inside functions included."""
    import ast
    from pathlib import Path

    root = Path(tc.__file__).resolve().parent
    graph = {}
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
                names = [f"{target}.{a.name}" for a in node.names]
                targets.update(n for n in names if (root.parent / n.replace(".", "/")).with_suffix(
                    ".py").exists())
                targets.add(target)
        graph[module] = {t for t in targets if t != module and t != "transformer_course"}

    done = set()

    def visit(node, trail):
        assert node not in trail, "import circle: " + " -> ".join([*trail, node])
        if node not in done:
            for nxt in sorted(graph.get(node, ())):
                visit(nxt, [*trail, node])
            done.add(node)

    assert graph["transformer_course.models"] >= {"transformer_course.generation"}
    # The model never imports the reader's interface or the book's plumbing (they import it);
    # the old names of the moved modules are one-line shims to their new homes.
    shims = {"widgets", "quiz", "diagrams", "plotting", "viz", "claims"}
    for module, targets in graph.items():
        parts = module.split(".")
        if len(parts) == 2 and parts[1] not in shims | {"reader", "book", "check", "bench"}:
            upward = {t for t in targets if t.split(".")[1:2] in (["reader"], ["book"])}
            assert not upward, f"{module} imports {sorted(upward)}"
    assert not any(t.endswith((".models", ".lm")) for t in graph["transformer_course.generation"])
    for start in graph:
        if start != "transformer_course":
            visit(start, [])


def test_generated_ids_are_ordinary_tensors(model):
    # the sampling loop runs in inference mode; what generate returns must not be an
    # inference tensor, or training on generated text would fail (an embedding saves its ids)
    out = model.generate(torch.zeros(1, 3, dtype=torch.long), 4,
                         generator=torch.Generator().manual_seed(0))
    assert not out.is_inference()
    model.train()
    try:
        model(out).sum().backward()  # the ids are saved for the embedding's backward
        assert model.embed.weight.grad is not None
    finally:
        model.eval()
        model.zero_grad(set_to_none=True)
