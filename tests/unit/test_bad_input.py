"""Every public entry point rejects bad input with a message naming the argument and shapes."""

import pytest
import torch
from torch import nn

import transformer_course as tc


def test_attention_bad_inputs():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match=r"d_k.*\(2, 3, 4\).*\(2, 5, 8\)"):
        tc.attention(q, torch.randn(2, 5, 8), v)
    with pytest.raises(ValueError, match=r"key and value.*length.*\(2, 5, 4\).*\(2, 6, 6\)"):
        tc.attention(q, k, torch.randn(2, 6, 6))
    with pytest.raises(ValueError, match="mask of shape \\(4, 5\\).*\\(2, 3, 5\\)"):
        tc.attention(q, k, v, mask=torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(TypeError, match="mask must have dtype torch.bool"):
        tc.attention(q, k, v, mask=torch.ones(3, 5))
    with pytest.raises(ValueError, match="beta must be finite and >= 0, got -1"):
        tc.attention(q, k, v, beta=-1.0)
    with pytest.raises(ValueError, match="beta"):
        tc.attention(q, k, v, beta=float("inf"))
    with pytest.raises(TypeError, match="beta must be a real number"):
        tc.attention(q, k, v, beta="big")
    with pytest.raises(TypeError, match="query must be a torch.Tensor, got list"):
        tc.attention([[1.0]], k, v)
    with pytest.raises(TypeError, match="query must be a floating-point tensor"):
        tc.attention(torch.ones(2, 3, 4, dtype=torch.long), k, v)
    with pytest.raises(TypeError, match="share a dtype"):
        tc.attention(q.double(), k, v)
    with pytest.raises(ValueError, match="query must have at least 2 dimensions"):
        tc.attention(torch.randn(4), k, v)
    with pytest.raises(ValueError, match="do not broadcast"):
        tc.attention(torch.randn(3, 3, 4), k, v)
    with pytest.raises(ValueError, match="dropout_p"):
        tc.attention(q, k, v, dropout_p=1.5)


def test_small_functions_bad_inputs():
    with pytest.raises(ValueError, match="beta"):
        tc.soft_argmax(torch.randn(3), -0.5)
    with pytest.raises(TypeError, match="scores must be a floating-point tensor"):
        tc.hard_argmax(torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="length must be >= 1, got 0"):
        tc.causal_mask(0)
    with pytest.raises(TypeError, match="length must be an int"):
        tc.causal_mask(2.5)
    with pytest.raises(ValueError, match=r"token_ids must have 2 dimensions, got shape \(5,\)"):
        tc.padding_mask(torch.arange(5))
    with pytest.raises(TypeError, match="token_ids must be an integer tensor"):
        tc.padding_mask(torch.rand(2, 5))
    with pytest.raises(ValueError, match=r"not divisible by num_heads=5"):
        tc.split_heads(torch.randn(2, 3, 12), 5)
    with pytest.raises(ValueError, match="x must have 4 dimensions"):
        tc.merge_heads(torch.randn(2, 3, 12))
    with pytest.raises(ValueError, match="d_model must be >= 1"):
        tc.sinusoidal_encoding(4, 0)
    with pytest.raises(ValueError, match="base"):
        tc.sinusoidal_encoding(4, 4, base=1.0)
    with pytest.raises(TypeError, match="seed must be an int"):
        tc.seed_everything("7")


def test_multi_head_attention_bad_inputs():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        tc.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="dropout"):
        tc.MultiHeadAttention(8, 2, dropout=1.0)
    mha = tc.MultiHeadAttention(8, 2)
    x = torch.randn(2, 4, 8)
    with pytest.raises(ValueError, match=r"key must be \(B, L, 8\).*\(2, 4, 6\)"):
        mha(x, torch.randn(2, 4, 6), x)
    with pytest.raises(ValueError, match="same batch size"):
        mha(x, torch.randn(3, 4, 8), torch.randn(3, 4, 8))
    with pytest.raises(ValueError, match="query must have 3 dimensions"):
        mha(torch.randn(4, 8), x, x)
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\).*\(2, 2, 4, 4\)"):
        mha(x, x, x, mask=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask of shape \(3, 3\)"):
        mha(x, x, x, mask=torch.ones(3, 3, dtype=torch.bool), need_weights=False)
    with pytest.raises(ValueError, match="beta"):
        mha(x, x, x, beta=-2, need_weights=False)


def test_layer_and_model_bad_inputs():
    with pytest.raises(ValueError, match="activation must be one of"):
        tc.EncoderLayer(8, 2, 16, activation="swish")
    with pytest.raises(ValueError, match="num_layers must be >= 1"):
        tc.Encoder(8, 2, 16, 0)
    with pytest.raises(ValueError, match="tie_embeddings needs one shared vocabulary"):
        tc.Transformer(10, 12, tie_embeddings=True)
    model = tc.Transformer(10, 10, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    with pytest.raises(ValueError, match=r"src holds the id 12, outside \[0, 10\)"):
        model(torch.tensor([[1, 12]]), torch.tensor([[1]]))
    with pytest.raises(TypeError, match="tgt must be an integer tensor"):
        model(torch.tensor([[1, 2]]), torch.tensor([[1.0]]))
    with pytest.raises(ValueError, match="pooling"):
        tc.TransformerClassifier(10, 2, pooling="sum")
    clf = tc.TransformerClassifier(10, 2, d_model=8, num_heads=2, max_len=4)
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of token_ids"):
        clf(torch.tensor([[1, 2, 3]]), attention_mask=torch.ones(1, 2))
    with pytest.raises(ValueError, match=r"x has 6 positions .* max_len=4"):
        clf(torch.tensor([[1, 2, 3, 4, 5, 6]]))
    with pytest.raises(ValueError, match="x must end with d_model=8"):
        tc.SinusoidalPositionalEncoding(8)(torch.randn(1, 3, 6))


def test_interop_bad_inputs():
    with pytest.raises(TypeError, match="from_torch accepts nn.MultiheadAttention"):
        tc.from_torch(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="add_bias_kv"):
        tc.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))
    layer = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.SiLU(), batch_first=True)
    with pytest.raises(ValueError, match="only relu and gelu"):
        tc.from_torch(layer)
    with pytest.raises(TypeError, match="BertModel"):
        tc.from_huggingface(object())


def test_bert_encoder_bad_inputs():
    bert = tc.BertEncoder(vocab_size=50, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    ids = torch.tensor([[2, 5, 7]])
    with pytest.raises(ValueError, match=r"attention_mask must have the shape of input_ids"):
        bert(ids, attention_mask=torch.ones(1, 4))
    with pytest.raises(TypeError, match="input_ids must be an integer tensor"):
        bert(ids.float())


def test_data_and_training_bad_inputs():
    with pytest.raises(ValueError, match="languages must be among"):
        tc.data.date_pairs(3, languages=("de",))
    with pytest.raises(ValueError, match="languages must be a non-empty sequence"):
        tc.data.date_pairs(3, languages="fr")
    with pytest.raises(ValueError, match="n must be >= 0"):
        tc.data.sentiment_examples(-1)
    with pytest.raises(ValueError, match="task must be"):
        tc.data.sequence_pairs(3, task="shuffle")
    with pytest.raises(ValueError, match="max_len .* must be >= min_len"):
        tc.data.sequence_pairs(3, min_len=5, max_len=2)
    with pytest.raises(TypeError, match="text must be a str"):
        tc.data.CharTokenizer("ab").encode(3)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        tc.training.seq2seq_batches([("a", "b")], tc.data.CharTokenizer("ab"),
                                    tc.data.CharTokenizer("ab"), 0)
    with pytest.raises(ValueError, match="pairs must not be empty"):
        tc.training.exact_match(tc.Transformer(5, 5, d_model=8, num_heads=2, num_layers=1),
                                [], tc.data.CharTokenizer("a"), tc.data.CharTokenizer("a"))


def test_plotting_bad_inputs():
    plotting = pytest.importorskip("transformer_course.plotting")
    with pytest.raises(ValueError, match="weights must have 2 dimensions"):
        plotting.attention_heatmap(torch.rand(2, 3, 3))
    with pytest.raises(ValueError, match="keys has 2 labels but the weights have 3"):
        plotting.attention_heatmap(torch.rand(3, 3), keys=["a", "b"])
    with pytest.raises(ValueError, match="NaN"):
        plotting.attention_heatmap(torch.full((2, 2), float("nan")))
    with pytest.raises(ValueError, match=r"vectors must be \(n, 2\)"):
        plotting.vectors_plot(torch.rand(3, 3))


def test_decoder_and_feed_forward_bad_inputs():
    with pytest.raises(ValueError, match="d_ff must be >= 1"):
        tc.FeedForward(8, 0)
    with pytest.raises(ValueError, match="activation must be one of"):
        tc.FeedForward(8, 16, activation="tanh")
    layer = tc.DecoderLayer(8, 2, 16)
    x = torch.randn(2, 3, 8)
    with pytest.raises(ValueError, match=r"memory must be \(B, L, 8\).*\(2, 5, 6\)"):
        layer(x, torch.randn(2, 5, 6))
    with pytest.raises(ValueError, match="same batch size"):
        tc.Decoder(8, 2, 16, 1)(x, torch.randn(4, 5, 8))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        tc.Decoder(8, 2, 16, 1)(x, x, self_mask=tc.causal_mask(4))


# --- issue 9: the defects of the independent review ---------------------------------------------

@pytest.mark.parametrize("shape", [(5,), (1,), ()])
@pytest.mark.parametrize("need_weights", [False, True])
def test_key_masks_of_any_rank_on_both_paths(shape, need_weights):
    mha = tc.MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 5, 8)
    keys = torch.tensor([True, False, True, True, False])
    mask = keys if shape == (5,) else torch.ones(shape, dtype=torch.bool)
    out, _ = mha(x, x, x, mask=mask, need_weights=need_weights)
    full, _ = mha(x, x, x, mask=mask.expand(2, 2, 5, 5), need_weights=True)
    torch.testing.assert_close(out, full)
    layer = tc.EncoderLayer(8, 2, 16, dropout=0.0).eval()
    torch.testing.assert_close(layer(x, mask=mask), layer(x, mask=mask.expand(2, 1, 5, 5)))


def test_fully_masked_rows_are_zero_on_the_fused_path():
    mha = tc.MultiHeadAttention(8, 2, bias=False).eval()
    x = torch.randn(1, 3, 8)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, False]])
    fused, _ = mha(x, x, x, mask=mask, need_weights=False)
    explicit, weights = mha(x, x, x, mask=mask)
    assert torch.all(fused[0, 1] == 0) and torch.all(weights[0, :, 1] == 0)
    torch.testing.assert_close(fused, explicit)


def test_dtype_mismatch_names_the_argument_and_both_dtypes():
    x64 = torch.randn(2, 3, 8, dtype=torch.float64)
    message = r"{} has dtype torch.float64 but {}'s parameters have dtype torch.float32"
    with pytest.raises(TypeError, match=message.format("query", "MultiHeadAttention")):
        tc.MultiHeadAttention(8, 2)(x64, x64, x64)
    with pytest.raises(TypeError, match=message.format("key", "MultiHeadAttention")):
        tc.MultiHeadAttention(8, 2)(x64.float(), x64, x64)
    for norm_first in (False, True):
        with pytest.raises(TypeError, match=message.format("x", "EncoderLayer")):
            tc.EncoderLayer(8, 2, 16, norm_first=norm_first)(x64)
    with pytest.raises(TypeError, match=message.format("memory", "DecoderLayer")):
        tc.DecoderLayer(8, 2, 16)(x64.float(), x64)
    with pytest.raises(TypeError, match=message.format("x", "FeedForward")):
        tc.FeedForward(8, 16)(x64)
    with pytest.raises(TypeError, match=message.format("x", "LearnedPositionalEmbedding")):
        tc.LearnedPositionalEmbedding(8)(x64)
    with pytest.raises(TypeError, match=r"convert the input with x.to\(torch.float32\)"):
        tc.Encoder(8, 2, 16, 1)(x64)
    # a float64 module takes float64 input, and the sinusoidal table follows the input
    assert tc.EncoderLayer(8, 2, 16).double()(x64).dtype == torch.float64
    assert tc.SinusoidalPositionalEncoding(8)(x64).dtype == torch.float64


@pytest.mark.parametrize("norm_first", [False, True])
def test_layers_check_x_before_anything_runs(norm_first):
    layer = tc.EncoderLayer(8, 2, 16, norm_first=norm_first)
    with pytest.raises(ValueError, match=r"x must be \(B, L, 8\) for this module, got shape "
                                         r"\(2, 3, 6\)"):
        layer(torch.randn(2, 3, 6))
    with pytest.raises(TypeError, match="x must be a floating-point tensor, got dtype torch.int64"):
        layer(torch.ones(2, 3, 8, dtype=torch.long))
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got list"):
        layer([[0.0] * 8])
    decoder = tc.DecoderLayer(8, 2, 16, norm_first=norm_first)
    with pytest.raises(ValueError, match=r"x must be \(B, L, 8\)"):
        decoder(torch.randn(2, 3, 6), torch.randn(2, 4, 8))
    with pytest.raises(TypeError, match="memory must be a torch.Tensor, got list"):
        decoder(torch.randn(2, 3, 8), [1.0])
    with pytest.raises(ValueError, match=r"x must be \(B, L, 8\)"):
        tc.Encoder(8, 2, 16, 2, norm_first=norm_first)(torch.randn(2, 3, 4))


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_integer_ids_of_any_dtype_are_accepted(dtype):
    src = torch.tensor([[3, 4, 5, 0], [6, 7, 8, 9]])
    tgt = torch.tensor([[1, 2, 3], [1, 4, 0]])
    model = tc.Transformer(11, 13, d_model=8, num_heads=2, num_layers=1, d_ff=16).eval()
    torch.testing.assert_close(model(src.to(dtype), tgt.to(dtype)), model(src, tgt))
    assert torch.equal(model.greedy_decode(src.to(dtype), bos_id=1, eos_id=2, max_len=3),
                       model.greedy_decode(src, bos_id=1, eos_id=2, max_len=3))
    clf = tc.TransformerClassifier(11, 2, d_model=8, num_heads=2).eval()
    torch.testing.assert_close(clf(src.to(dtype)), clf(src))
    bert = tc.BertEncoder(11, 8, 2, 1, 16).eval()
    segments = torch.zeros_like(src, dtype=dtype)
    torch.testing.assert_close(bert(src.to(dtype), token_type_ids=segments,
                                    attention_mask=(src != 0).to(dtype)).last_hidden_state,
                               bert(src, attention_mask=src != 0).last_hidden_state)


def test_bool_and_out_of_range_ids_are_refused():
    model = tc.Transformer(11, 13, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    with pytest.raises(TypeError, match="src must be an integer tensor of token ids, got dtype "
                                        "torch.bool"):
        model(torch.ones(1, 2, dtype=torch.bool), torch.ones(1, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tgt holds the id -1, outside \[0, 13\)"):
        model(torch.ones(1, 2, dtype=torch.long), torch.tensor([[1, -1]]))
    with pytest.raises(ValueError, match=r"input_ids holds the id 11, outside \[0, 11\)"):
        tc.BertEncoder(11, 8, 2, 1, 16)(torch.tensor([[11]]))
    with pytest.raises(ValueError, match="attention_mask must hold 0/1 or True/False"):
        tc.TransformerClassifier(11, 2, d_model=8, num_heads=2)(
            torch.tensor([[1, 2]]), attention_mask=torch.tensor([[1.0, 0.5]]))
    with pytest.raises(ValueError, match=r"bos_id must be an id in \[0, 13\), got 13"):
        model.greedy_decode(torch.tensor([[1, 2]]), bos_id=13, eos_id=2)


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_from_torch_keeps_the_final_norm_eps(kind):
    f64 = torch.float64
    options = dict(dropout=0.0, norm_first=True, batch_first=True, dtype=f64)
    norm = nn.LayerNorm(16, eps=0.5, dtype=f64)
    x, memory = torch.randn(2, 5, 16, dtype=f64), torch.randn(2, 4, 16, dtype=f64)
    if kind == "encoder":
        ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, **options), 2,
                                    norm=norm, enable_nested_tensor=False).eval()
        expected, got = ref(x), tc.from_torch(ref)(x)
    else:
        ref = nn.TransformerDecoder(nn.TransformerDecoderLayer(16, 4, 32, **options), 2,
                                    norm=norm).eval()
        expected, got = ref(x, memory), tc.from_torch(ref)(x, memory)
    assert tc.from_torch(ref).norm.eps == 0.5
    assert (expected - got).abs().max() < 1e-9


def test_from_torch_keeps_each_norm_and_its_bias():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, bias=False,
                                       dtype=torch.float64).eval()
    layer.norm2.eps = 0.25
    stack = nn.TransformerEncoder(layer, 1, norm=nn.LayerNorm(8, dtype=torch.float64),
                                  enable_nested_tensor=False).eval()
    ours = tc.from_torch(stack)
    assert ours.layers[0].norm2.eps == 0.25 and ours.norm.bias is not None
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    assert (ours(x) - stack(x)).abs().max() < 1e-9
    with pytest.raises(ValueError, match="only nn.LayerNorm"):
        tc.from_torch(nn.TransformerEncoder(layer, 1, norm=nn.Identity(),
                                            enable_nested_tensor=False))


def test_inputs_too_large_to_square_are_refused_at_the_door():
    """No overflow guard (issue 29): an input whose squares the dtype cannot hold raises a
    ValueError naming it, before anything runs, instead of a silent NaN."""
    q, k = torch.randn(2, 3, 4) * 1e30, torch.randn(2, 5, 4) * 1e30
    with pytest.raises(ValueError, match=r"the scores beta \* query \. key overflow "
                                         r"torch.float32: query and key hold values as large"):
        tc.attention(q, k, torch.randn(2, 5, 6))
    exact = torch.softmax((q.double() @ k.double().transpose(-2, -1)) / 2, -1)
    _, weights = tc.attention(q.double(), k.double(), torch.randn(2, 5, 6, dtype=torch.float64))
    torch.testing.assert_close(weights, exact)  # float64 holds them
    x = torch.randn(2, 4, 8) * 1e30
    for module, name in ((tc.MultiHeadAttention(8, 2), "query"), (tc.EncoderLayer(8, 2, 16), "x"),
                         (tc.EncoderLayer(8, 2, 16, norm_first=True), "x"),
                         (tc.Encoder(8, 2, 16, 2), "x"), (tc.DecoderLayer(8, 2, 16), "x")):
        module.eval()
        with pytest.raises(ValueError, match=rf"^{name} holds values as large as [\d.]+e\+30: "
                                             "LayerNorm and attention square them"):
            if isinstance(module, tc.MultiHeadAttention):
                module(x, x, x)
            elif isinstance(module, tc.DecoderLayer):
                module(x, x)
            else:
                module(x)
    assert tc.FeedForward(8, 16).eval()(x).isfinite().all()  # no square: 1e30 is fine
    with pytest.raises(ValueError, match="x holds values that are not finite"):
        tc.FeedForward(8, 16).eval()(torch.full((1, 8), float("nan")))


def test_huge_beta_raises_at_the_door_or_tends_to_hard_attention():
    """A beta the dtype cannot hold is refused; one it can hold gives finite weights."""
    q, k, v = torch.randn(1, 3, 4), torch.randn(1, 5, 4), torch.randn(1, 5, 2)
    _, weights = tc.attention(q, k, v, beta=1e30)
    assert torch.all((weights == 0) | (weights == 1))
    for call in (lambda: tc.attention(q, k, v, beta=1e300),
                 lambda: tc.soft_argmax(q, 1e300),
                 lambda: tc.MultiHeadAttention(4, 2)(q, k, k, beta=1e300)):
        with pytest.raises(ValueError, match=r"beta=1e\+300 cannot be represented in "
                                             r"torch.float32"):
            call()
    assert torch.isfinite(tc.soft_argmax(torch.tensor([1.0, 3e38, -3e38]), 1e30)).all()
    assert tc.soft_argmax(q.double(), 1e300).isfinite().all()  # float64 holds it


def test_a_training_forward_does_not_look_at_the_values():
    """A training forward reads nothing on the host (tests/unit/test_no_sync.py), so the size
    check is made outside training only: the same input passes the door there."""
    layer = tc.EncoderLayer(8, 2, 16, dropout=0.0).double()
    x = torch.full((1, 2, 8), 1e200, dtype=torch.float64)
    with torch.no_grad(), pytest.raises(ValueError, match=r"x holds values as large as "
                                                          r"1e\+200"):
        layer(x)
    layer.train()(x)  # no check, whatever comes out


def test_bad_devices_and_sizes_are_named():
    with pytest.raises(ValueError, match="device must name a device such as 'cpu'"):
        tc.causal_mask(3, device="gpu")
    with pytest.raises(TypeError, match="device must be a torch.device or a string"):
        tc.sinusoidal_encoding(3, 4, device=3)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device='cuda' is not available on this machine"):
            tc.data.CharTokenizer("ab").batch(["a"], device="cuda")
    with pytest.raises(TypeError, match="dtype must be a floating-point torch.dtype"):
        tc.sinusoidal_encoding(3, 4, dtype=torch.int64)
    with pytest.raises(ValueError, match="dim=2 is out of range for a tensor of 2 dimensions"):
        tc.soft_argmax(torch.randn(2, 3), 1.0, dim=2)
    with pytest.raises(ValueError, match=r"eps must be a finite number in \(0, inf\]"):
        tc.EncoderLayer(8, 2, 16, eps=0.0)
    with pytest.raises(TypeError, match="need_weights must be True or False, got None"):
        tc.MultiHeadAttention(8, 2)(*[torch.randn(1, 2, 8)] * 3, need_weights=None)


def test_checkers_never_crash_on_junk_answers():
    offset = tc.check.offset(lambda *args: float("inf"))
    assert not offset and "expected a whole number, got ∞" in offset.message
    empty = tc.check.attention(lambda q, k, v: ())
    assert not empty
    assert "expected a tuple `(output, weights)`, got tuple of length 0" in empty.message


def test_greedy_decode_checker_fails_an_answer_that_never_stops_or_never_pads():
    def decode(model, src, bos, eos, max_len, pad=True, stop=True):
        memory, src_mask = model.encode(src), model.source_mask(src)
        out = torch.full((src.shape[0], 1), bos)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            nxt = model.decode(out, memory, src_mask=src_mask)[:, -1].argmax(-1)
            nxt = nxt.masked_fill(done & pad, model.pad_id)
            out, done = torch.cat([out, nxt[:, None]], 1), done | (nxt == eos)
            if stop and done.all():
                break
        return out[:, 1:]

    assert tc.check.greedy_decode(decode)
    never_stops = tc.check.greedy_decode(lambda *a: decode(*a, stop=False))
    assert not never_stops and "stop when all are done" in never_stops.message
    never_pads = tc.check.greedy_decode(lambda *a: decode(*a, pad=False))
    assert not never_pads and "after <eos> must be padding" in never_pads.message


# --- issue 20: devices, argument names, precision ------------------------------------------------

def test_every_public_model_checks_the_device_of_its_inputs():
    """The meta device stands in for a GPU: a model moved there (as `fit` moves it to
    tc.device()) and ids left on the CPU get an error naming the argument and both devices."""
    ids = torch.tensor([[1, 2, 3]])
    lm = tc.LanguageModel(10, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=8).to("meta")
    for call, name in ((lambda: lm.generate(ids, 2), "prompt"), (lambda: lm(ids), "ids")):
        with pytest.raises(ValueError, match=rf"{name} is on device cpu but the model is on "
                                             r"meta: move one of them with .to\(device\)"):
            call()
    clf = tc.TransformerClassifier(10, 2, d_model=8, num_heads=2).to("meta")
    with pytest.raises(ValueError, match="token_ids is on device cpu but the model is on meta"):
        clf(ids)
    model = tc.Transformer(10, 10, d_model=8, num_heads=2, num_layers=1, d_ff=16).to("meta")
    for call in (lambda: model(ids, ids), lambda: model.greedy_decode(ids, bos_id=1, max_len=3),
                 lambda: model.beam_search(ids, bos_id=1, eos_id=2, max_len=3)):
        with pytest.raises(ValueError, match="src is on device cpu but the model is on meta"):
            call()
    bert = tc.BertEncoder(vocab_size=10, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    with pytest.raises(ValueError, match="input_ids is on device cpu but the model is on meta"):
        bert.to("meta")(ids)
    x = torch.randn(1, 3, 8)
    for module in (tc.MultiHeadAttention(8, 2), tc.EncoderLayer(8, 2, 16), tc.Encoder(8, 2, 16, 1),
                   tc.FeedForward(8, 16)):
        module.to("meta")
        with pytest.raises(ValueError, match="is on device cpu but .* on meta"):
            module(x, x, x) if isinstance(module, tc.MultiHeadAttention) else module(x)


def test_listed_errors_name_their_argument():
    lm = tc.LanguageModel(10, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=8)
    with pytest.raises(ValueError, match="top_k must be >= 1, got 0"):
        lm.generate(torch.tensor([[1, 2]]), 2, top_k=0)
    model = tc.Transformer(12, 12, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    src = torch.tensor([[3, 4, 5]])
    with pytest.raises(TypeError, match="bos_id must be an int, got str"):
        tc.generation.beam_search(model, src, bos_id="a", eos_id=2)
    with pytest.raises(ValueError, match=r"bos_id must be an id in \[0, 12\), got 99"):
        tc.generation.beam_search(model, src, bos_id=99, eos_id=2)
    with pytest.raises(TypeError, match=r"Encoder.__init__\(\) missing 2 required positional "
                                        r"arguments: 'd_ff' and 'num_layers'"):
        tc.Encoder(d_model=16, num_heads=4)
    with pytest.raises(TypeError, match=r"Decoder.__init__\(\) missing 1 required positional "
                                        r"argument: 'num_layers'"):
        tc.Decoder(16, 4, 32)
    enc = tc.Encoder(8, 2, 16, 2)
    with pytest.raises(ValueError, match=r"cache has 1 layer, the stack 2: build it with "
                                         r"KVCache\(2\)"):
        enc(torch.randn(1, 3, 8), cache=tc.KVCache(1))


def test_a_float64_sinusoidal_table_stays_float64_when_it_grows():
    pe = tc.SinusoidalPositionalEncoding(8, max_len=4).double()
    out = pe(torch.zeros(1, 10, 8, dtype=torch.float64))  # longer than the table: it grows
    assert pe.table.dtype == torch.float64 and pe.table.shape == (10, 8)
    assert torch.equal(out[0], tc.sinusoidal_encoding(10, 8, dtype=torch.float64))
