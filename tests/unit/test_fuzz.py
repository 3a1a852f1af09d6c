"""Hypothesis fuzzing of every public entry point of the package.

The contract: a correct result, or a ``ValueError`` / ``TypeError`` raised by the package
itself whose message names the argument; never an error from inside torch (or Python, or
matplotlib), never NaN from finite input.

The examples are derandomized so that ``make test`` is reproducible; set ``TC_FUZZ=10`` (a
multiplier of the number of examples) to explore further with fresh random examples.
"""

import math
import os
import traceback
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

import transformer_course as tc
from transformer_course import check, data, training

PACKAGE = Path(tc.__file__).resolve().parent
SCALE = int(os.environ.get("TC_FUZZ", "1"))


def fuzz(examples):
    """Settings for one fuzz test: 5 * ``examples`` examples (times TC_FUZZ); about 30 s on
    one core for the whole file."""
    return settings(max_examples=5 * examples * SCALE, deadline=None, derandomize=SCALE == 1,
                    suppress_health_check=list(HealthCheck), database=None)


REJECTED = object()


def raised_by_package(err):
    """Whether the innermost frame of the error's traceback is in transformer_course."""
    frames = traceback.extract_tb(err.__traceback__)
    return bool(frames) and Path(frames[-1].filename).resolve().is_relative_to(PACKAGE)


def honest(call, *names):
    """Run ``call()``: its result, or REJECTED if the package raised a ValueError or a
    TypeError naming one of ``names``. Any other exception fails the test."""
    try:
        return call()
    except (ValueError, TypeError) as err:
        assert raised_by_package(err), (
            f"{type(err).__name__} from inside a library: {err}\n"
            + "".join(traceback.format_tb(err.__traceback__)[-3:]))
        assert any(name in str(err) for name in names), f"{err!r} names none of {names}"
        return REJECTED


def floats_in(*objects):
    for obj in objects:
        if isinstance(obj, torch.Tensor):
            yield obj
        elif isinstance(obj, (tuple, list)):
            yield from floats_in(*obj)
        elif hasattr(obj, "__dataclass_fields__"):
            yield from floats_in(*vars(obj).values())


def finite(*objects):
    """True when every floating tensor with values among ``objects`` is finite."""
    return all(bool(t.isfinite().all()) for t in floats_in(*objects)
               if t.is_floating_point() and t.device.type != "meta")


def no_nan(*objects):
    return all(not bool(t.isnan().any()) for t in floats_in(*objects)
               if t.is_floating_point() and t.device.type != "meta")


def module_finite(module):
    return finite(*module.parameters())


# --- strategies ----------------------------------------------------------------------------------

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTEGERS = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
DTYPES = FLOATS + INTEGERS + [torch.bool, torch.complex64]
SCALES = [0.0, 1e-30, 1e-3, 1.0, 10.0, 1e4, 1e19, 1e30]
DEVICES = ["cpu"] * 8 + ["meta"]

sizes = st.integers(0, 4)
shapes = st.lists(sizes, max_size=4).map(tuple)
junk = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10), st.floats(), st.text(max_size=3),
    st.lists(st.floats(-2, 2), max_size=3), st.just(object()), st.just(torch.tensor(1.0)))


@st.composite
def tensors(draw, shape=None, dtype=None, device=None, low=0, high=8):
    """A tensor of a random (or given) shape, dtype, device and scale."""
    shape = draw(shapes) if shape is None else shape
    dtype = draw(st.sampled_from(DTYPES)) if dtype is None else dtype
    device = draw(st.sampled_from(DEVICES)) if device is None else device
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    if dtype.is_floating_point or dtype.is_complex:
        scale = draw(st.sampled_from(SCALES))
        t = (torch.randn(shape, generator=g, dtype=torch.float64) * scale).to(dtype)
    elif dtype == torch.bool:
        t = torch.rand(shape, generator=g) < 0.7
    else:
        t = torch.randint(low, high, shape, generator=g).to(dtype)
    return t.to(device)


def maybe(strategy, other=None):
    """Mostly ``strategy``, sometimes junk (or ``other``)."""
    return st.one_of(strategy, strategy, strategy, other if other is not None else junk)


def like(shape, dtype=torch.float32):
    """A tensor of about this shape and dtype, sometimes off in shape, dtype or device."""
    return st.one_of(tensors(shape=shape, dtype=dtype, device="cpu"),
                     tensors(shape=shape, dtype=dtype, device="cpu"),
                     tensors(shape=shape, dtype=dtype, device="cpu"),
                     tensors(shape=shape), tensors(), junk)


def masks(*target):
    """A boolean mask broadcastable to ``target`` (1-D and 0-d included), or a bad one."""
    good = st.lists(st.booleans(), min_size=len(target), max_size=len(target)).map(
        lambda keep: tuple(s if k else 1 for s, k in zip(target, keep, strict=True)))
    cut = st.integers(0, len(target)).map(lambda n: target[n:])
    shape = st.one_of(good.flatmap(lambda s: cut.map(lambda c: s[len(s) - len(c):])), shapes)
    return st.one_of(st.none(), shape.flatmap(lambda s: tensors(shape=s, dtype=torch.bool,
                                                                device="cpu")),
                     tensors(), junk)


betas = st.one_of(st.none(), st.floats(0, 1e30), st.sampled_from([0.0, 1e30, 1e300]), junk,
                  st.floats(-1e30, 1e30))
flags = st.one_of(st.booleans(), st.booleans(), junk)
devices = st.sampled_from([None, "cpu", "meta", "cuda", "cuda:3", "mps", "gpu", "", 3,
                           torch.device("cpu"), "cpu:0"])


def check_attention_result(result, inputs, mask):
    out, weights = result
    if finite(*inputs) and weights.device.type != "meta":
        assert no_nan(out, weights), "NaN from finite input"
        sums = weights.double().sum(-1)
        ok = ((sums - 1).abs() < 1e-2) | (sums == 0)
        assert bool(ok.all()), "rows must sum to 1, or to 0 when every key is masked"


# --- functional --------------------------------------------------------------------------------

@st.composite
def qkv(draw):
    b, lq, lk, dk, dv = (draw(sizes) for _ in range(5))
    dtype = draw(st.sampled_from(FLOATS))
    return (draw(like((b, lq, dk), dtype)), draw(like((b, lk, dk), dtype)),
            draw(like((b, lk, dv), dtype)), draw(masks(b, lq, lk)))


@fuzz(120)
@given(qkv(), betas, flags, st.one_of(st.just(0.0), st.floats(-1, 2), junk))
def test_attention(problem, beta, hard, dropout_p):
    q, k, v, mask = problem
    result = honest(lambda: tc.attention(q, k, v, mask=mask, beta=beta, hard=hard,
                                         dropout_p=dropout_p),
                    "query", "key", "value", "mask", "beta", "hard", "dropout_p", "d_k")
    if result is not REJECTED:
        check_attention_result(result, (q, k, v), mask)


@fuzz(60)
@given(tensors(), betas, st.one_of(st.integers(-5, 5), junk))
def test_soft_and_hard_argmax(scores, beta, dim):
    soft = honest(lambda: tc.soft_argmax(scores, beta, dim), "scores", "beta", "dim")
    if soft is not REJECTED and finite(scores) and scores.device.type != "meta":
        assert no_nan(soft)
        assert torch.allclose(soft.double().sum(dim), torch.ones(()).double(), atol=1e-2) or \
            scores.shape[dim] == 0
    hard = honest(lambda: tc.hard_argmax(scores, dim), "scores", "dim")
    if hard is not REJECTED and scores.device.type != "meta" and scores.numel():
        assert bool(((hard == 0) | (hard == 1)).all())


@fuzz(40)
@given(maybe(st.integers(-3, 30)), devices, maybe(tensors(dtype=torch.int64)),
       maybe(st.integers(-3, 10)))
def test_masks(length, device, ids, pad_id):
    mask = honest(lambda: tc.causal_mask(length, device=device), "length", "device")
    if mask is not REJECTED:
        assert mask.shape == (length, length) and mask.dtype == torch.bool
    padding = honest(lambda: tc.padding_mask(ids, pad_id), "token_ids", "pad_id")
    if padding is not REJECTED:
        assert padding.shape == (ids.shape[0], 1, 1, ids.shape[1])


@fuzz(40)
@given(tensors(), maybe(st.integers(-2, 6)))
def test_split_and_merge_heads(x, heads):
    split = honest(lambda: tc.split_heads(x, heads), "x", "num_heads")
    if split is not REJECTED and x.device.type != "meta":
        assert torch.equal(tc.merge_heads(split), x)
    honest(lambda: tc.merge_heads(x), "x")


@fuzz(40)
@given(maybe(st.integers(-2, 40)), maybe(st.integers(-2, 40)),
       st.one_of(st.floats(), st.just(10000.0), junk),
       st.one_of(st.sampled_from(DTYPES), junk), devices)
def test_sinusoidal_encoding(n, d, base, dtype, device):
    table = honest(lambda: tc.sinusoidal_encoding(n, d, base=base, dtype=dtype, device=device),
                   "num_positions", "d_model", "base", "dtype", "device")
    if table is not REJECTED:
        assert table.shape == (n, d) and table.dtype == dtype and no_nan(table)


@fuzz(20)
@given(maybe(st.integers(-5, 2**70)))
def test_seed_everything(seed):
    honest(lambda: tc.seed_everything(seed), "seed")
    assert tc.device().type in ("cpu", "cuda", "mps")


@fuzz(30)
@given(st.one_of(st.floats(-1e15, 1e15), st.integers(-10**15, 10**15), st.none(),
                 st.text(max_size=3), st.just(object()), st.just(torch.tensor([0.5]))),
       st.one_of(st.none(), st.integers(-2, 6), junk))
def test_number_formats(value, decimals):
    for lang in ("en", "fr", "it"):
        tc.set_language(lang)
        try:
            text = honest(lambda: tc.format_number(value, decimals), "value", "decimals")
            assert text is REJECTED or isinstance(text, str)
            honest(lambda: tc.format_percent(value), "fraction")
        finally:
            tc.set_language("en")
    try:
        outcome = honest(lambda: tc.set_language(value), "lang")
        assert outcome is REJECTED or tc.get_language() == value
    finally:
        tc.set_language("en")


@pytest.mark.parametrize("call", [
    lambda: tc.format_percent(1e25), lambda: tc.format_integer(1e300),
    lambda: tc.format_number(torch.empty(1, device="meta")),
    lambda: "NaN.0" not in tc.format_percent(float("nan")) or 1 / 0],
    ids=["percent_1e25", "integer_1e300", "meta_tensor", "percent_nan"])
def test_number_formats_of_extreme_values(call):
    honest(call, "value", "fraction")


# --- modules: constructors ----------------------------------------------------------------------

widths = maybe(st.integers(-1, 12))


@fuzz(60)
@given(widths, widths, widths, maybe(st.floats(-1, 2)), maybe(st.sampled_from(["relu", "gelu"]),
                                                               st.text(max_size=5)),
       flags, st.one_of(st.floats(-1, 1), st.just(1e-5), junk), flags, widths)
def test_constructors(d_model, heads, d_ff, dropout, activation, norm_first, eps, bias, layers):
    names = ("d_model", "num_heads", "d_ff", "dropout", "activation", "norm_first", "eps",
             "bias", "num_layers", "kdim", "vdim")
    honest(lambda: tc.MultiHeadAttention(d_model, heads, kdim=d_ff, dropout=dropout, bias=bias),
           *names)
    honest(lambda: tc.FeedForward(d_model, d_ff, dropout=dropout, activation=activation,
                                  bias=bias), *names)
    options = dict(dropout=dropout, activation=activation, norm_first=norm_first, eps=eps,
                   bias=bias)
    for cls in (tc.EncoderLayer, tc.DecoderLayer):
        honest(lambda cls=cls: cls(d_model, heads, d_ff, **options), *names)
    for cls in (tc.Encoder, tc.Decoder):
        honest(lambda cls=cls: cls(d_model, heads, d_ff, layers, **options), *names)


@fuzz(40)
@given(widths, widths, widths, widths, maybe(st.floats(-1, 2)), flags, flags, widths,
       maybe(st.integers(-3, 5)), maybe(st.sampled_from(["cls", "mean", "max"])),
       maybe(st.sampled_from(["learned", "sinusoidal"])))
def test_model_constructors(vocab, d_model, heads, d_ff, dropout, norm_first, tie, max_len,
                            pad_id, pooling, positional):
    names = ("vocab_size", "d_model", "num_heads", "d_ff", "dropout", "norm_first",
             "tie_embeddings", "max_len", "pad_id", "pooling", "positional", "num_classes",
             "num_layers")
    size = dict(d_model=d_model, num_heads=heads, d_ff=d_ff, dropout=dropout, num_layers=1)
    honest(lambda: tc.Transformer(vocab, vocab, norm_first=norm_first, tie_embeddings=tie,
                                  max_len=max_len, pad_id=pad_id, **size), *names)
    honest(lambda: tc.TransformerClassifier(vocab, 3, norm_first=norm_first, max_len=max_len,
                                            pad_id=pad_id, pooling=pooling,
                                            positional=positional, **size), *names)
    honest(lambda: tc.BertEncoder(vocab, d_model, heads, 1, d_ff, max_len=max_len,
                                  dropout=dropout, pad_id=pad_id), *names,
           "type_vocab_size", "eps", "pooler")
    honest(lambda: tc.SinusoidalPositionalEncoding(d_model, max_len), "d_model", "max_len")
    honest(lambda: tc.LearnedPositionalEmbedding(d_model, max_len), "d_model", "max_len")


# --- modules: forward ---------------------------------------------------------------------------

D, H = 8, 2
module_dtypes = st.sampled_from([torch.float32, torch.float32, torch.float64])


def built(cls, *args, dtype=torch.float32, train=False, **kwargs):
    torch.manual_seed(0)
    return cls(*args, **kwargs).to(dtype).train(train)


@st.composite
def states(draw, dtype, b=None, n=None):
    b = draw(sizes) if b is None else b
    n = draw(st.integers(0, 4)) if n is None else n
    return draw(like((b, n, D), dtype))


@fuzz(80)
@given(module_dtypes, st.data(), betas, flags, flags, st.booleans())
def test_multi_head_attention_forward(dtype, data_, beta, hard, need_weights, train):
    mha = built(tc.MultiHeadAttention, D, H, dtype=dtype, train=train)
    b, lq, lk = (data_.draw(st.integers(0, 3)) for _ in range(3))
    q = data_.draw(like((b, lq, D), dtype))
    k = data_.draw(like((b, lk, D), dtype))
    mask = data_.draw(masks(b, H, lq, lk))
    result = honest(lambda: mha(q, k, k, mask=mask, beta=beta, hard=hard,
                                need_weights=need_weights),
                    "query", "key", "value", "mask", "beta", "hard", "need_weights")
    if result is not REJECTED and finite(q, k) and module_finite(mha):
        assert no_nan(result), "NaN from finite input"
        assert result[0].shape == q.shape and result[0].dtype == q.dtype


@fuzz(80)
@given(module_dtypes, st.sampled_from([tc.EncoderLayer, tc.Encoder]), st.booleans(),
       st.booleans(), st.data(), flags)
def test_encoder_forward(dtype, cls, norm_first, train, data_, return_attention):
    args = (D, H, 16) if cls is tc.EncoderLayer else (D, H, 16, 2)
    module = built(cls, *args, norm_first=norm_first, dtype=dtype, train=train, dropout=0.0)
    b, n = data_.draw(st.integers(0, 3)), data_.draw(st.integers(0, 4))
    x = data_.draw(states(dtype, b, n))
    mask = data_.draw(masks(b, H, n, n))
    result = honest(lambda: module(x, mask=mask, return_attention=return_attention),
                    "x", "mask", "return_attention")
    if result is not REJECTED and finite(x):
        assert no_nan(result), "NaN from finite input"
        out = result[0] if return_attention else result
        assert out.shape == x.shape and out.dtype == x.dtype


@fuzz(60)
@given(module_dtypes, st.sampled_from([tc.DecoderLayer, tc.Decoder]), st.booleans(),
       st.data(), flags)
def test_decoder_forward(dtype, cls, norm_first, data_, return_attention):
    args = (D, H, 16) if cls is tc.DecoderLayer else (D, H, 16, 2)
    module = built(cls, *args, norm_first=norm_first, dtype=dtype, dropout=0.0)
    b, lt, ls = (data_.draw(st.integers(0, 3)) for _ in range(3))
    x, memory = data_.draw(states(dtype, b, lt)), data_.draw(states(dtype, b, ls))
    self_mask, memory_mask = data_.draw(masks(b, H, lt, lt)), data_.draw(masks(b, H, lt, ls))
    result = honest(lambda: module(x, memory, self_mask=self_mask, memory_mask=memory_mask,
                                   return_attention=return_attention),
                    "x", "memory", "self_mask", "memory_mask", "return_attention")
    if result is not REJECTED and finite(x, memory):
        assert no_nan(result), "NaN from finite input"


@fuzz(40)
@given(module_dtypes, st.data())
def test_feed_forward_and_positions(dtype, data_):
    ff = built(tc.FeedForward, D, 16, dtype=dtype)
    x = data_.draw(st.one_of(like((2, D), dtype), states(dtype)))
    out = honest(lambda: ff(x), "x")
    if out is not REJECTED and finite(x):
        assert no_nan(out) and out.shape == x.shape
    sinusoidal = tc.SinusoidalPositionalEncoding(D, 3)
    out = honest(lambda: sinusoidal(x), "x")
    if out is not REJECTED and finite(x):
        assert no_nan(out)
    learned = built(tc.LearnedPositionalEmbedding, D, 3, dtype=dtype)
    honest(lambda: learned(x), "x")


ids_dtypes = st.sampled_from([*INTEGERS, torch.bool, torch.float32])


@st.composite
def token_ids(draw, high=12):
    shape = draw(st.one_of(st.tuples(st.integers(0, 3), st.integers(0, 5)), shapes))
    dtype = draw(st.one_of(st.sampled_from(INTEGERS), ids_dtypes))
    return draw(st.one_of(tensors(shape=shape, dtype=dtype, device="cpu", high=high),
                          tensors(shape=shape, dtype=dtype, device="cpu", low=-2, high=high + 3),
                          tensors(), junk))


@fuzz(60)
@given(token_ids(), token_ids(), st.booleans(), flags, st.data())
def test_transformer(src, tgt, norm_first, return_attention, data_):
    model = built(tc.Transformer, 12, 12, d_model=D, num_heads=H, num_layers=1, d_ff=16,
                  norm_first=norm_first, dropout=0.0)
    names = ("src", "tgt", "memory", "src_mask", "tgt_mask", "return_attention", "bos_id",
             "eos_id", "max_len")
    src_mask = data_.draw(st.one_of(st.none(), st.none(), masks(2, H, 1, 4)))
    out = honest(lambda: model(src, tgt, src_mask=src_mask, return_attention=return_attention),
                 *names)
    if out is not REJECTED:
        assert no_nan(out)
    honest(lambda: model.encode(src), *names)
    memory = data_.draw(st.one_of(states(torch.float32), junk))
    honest(lambda: model.decode(tgt, memory), *names)
    bos, eos, max_len = (data_.draw(maybe(st.integers(-1, 13))) for _ in range(3))
    generated = honest(lambda: model.greedy_decode(src, bos_id=bos, eos_id=eos, max_len=max_len),
                       *names)
    if generated is not REJECTED:
        assert generated.shape[0] == src.shape[0] and generated.shape[1] <= max_len


@fuzz(50)
@given(token_ids(), st.sampled_from(["cls", "mean", "max"]), st.data(), flags)
def test_classifier_and_bert(ids, pooling, data_, flag):
    clf = built(tc.TransformerClassifier, 12, 3, d_model=D, num_heads=H, num_layers=1, d_ff=16,
                max_len=5, pooling=pooling, dropout=0.0)
    shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else (2, 3)
    mask = data_.draw(st.one_of(st.none(), tensors(shape=shape, device="cpu",
                                                   dtype=data_.draw(st.sampled_from(DTYPES)),
                                                   high=2), tensors(), junk))
    out = honest(lambda: clf(ids, attention_mask=mask, return_attention=flag),
                 "token_ids", "attention_mask", "return_attention", "x has")
    if out is not REJECTED:
        assert no_nan(out)
    bert = built(tc.BertEncoder, 12, D, H, 1, 16, max_len=5, dropout=0.0)
    segments = data_.draw(st.one_of(st.none(), token_ids(high=2)))
    out = honest(lambda: bert(ids, attention_mask=mask, token_type_ids=segments,
                              output_hidden_states=flag),
                 "input_ids", "attention_mask", "token_type_ids", "output_hidden_states")
    if out is not REJECTED:
        assert no_nan(out.last_hidden_state, out.attentions)


# --- conversions ----------------------------------------------------------------------------------

@fuzz(25)
@given(st.sampled_from(["mha", "encoder_layer", "decoder_layer", "encoder", "decoder"]),
       st.booleans(), st.sampled_from(["relu", "gelu"]), st.sampled_from([1e-5, 1e-3, 0.1]),
       st.sampled_from([None, 1e-6, 0.5]), st.booleans(), st.integers(0, 2**16))
def test_from_torch_is_exact(kind, norm_first, activation, eps, final_eps, bias, seed):
    torch.manual_seed(seed)
    f64 = torch.float64
    options = dict(dropout=0.0, activation=activation, norm_first=norm_first,
                   layer_norm_eps=eps, bias=bias, batch_first=True, dtype=f64)
    x, memory = torch.randn(2, 4, 8, dtype=f64), torch.randn(2, 3, 8, dtype=f64)
    blocked = torch.ones(4, 4, dtype=torch.bool).triu(1)
    final = None if final_eps is None else nn.LayerNorm(8, eps=final_eps, dtype=f64)
    if kind == "mha":
        ref = nn.MultiheadAttention(8, 2, bias=bias, kdim=6, vdim=5, batch_first=True,
                                    dtype=f64).eval()
        k, v = torch.randn(2, 3, 6, dtype=f64), torch.randn(2, 3, 5, dtype=f64)
        expected, got = ref(x, k, v)[0], tc.from_torch(ref)(x, k, v)[0]
    elif kind == "encoder_layer":
        ref = nn.TransformerEncoderLayer(8, 2, 16, **options).eval()
        expected, got = ref(x, src_mask=blocked), tc.from_torch(ref)(x, mask=~blocked)
    elif kind == "decoder_layer":
        ref = nn.TransformerDecoderLayer(8, 2, 16, **options).eval()
        expected = ref(x, memory, tgt_mask=blocked)
        got = tc.from_torch(ref)(x, memory, self_mask=~blocked)
    elif kind == "encoder":
        ref = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, **options), 2,
                                    norm=final, enable_nested_tensor=False).eval()
        expected, got = ref(x), tc.from_torch(ref)(x)
    else:
        ref = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, **options), 2,
                                    norm=final).eval()
        expected, got = ref(x, memory), tc.from_torch(ref)(x, memory)
    assert (expected - got).abs().max() < 1e-9


@fuzz(20)
@given(st.one_of(junk, st.sampled_from([nn.Linear(2, 2), nn.LayerNorm(3), nn.Identity()])),
       st.sampled_from(["identity_norm", "silu", "bias_kv", "none"]))
def test_from_torch_refuses_clearly(module, variant):
    honest(lambda: tc.from_torch(module), "from_torch accepts")
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    if variant == "identity_norm":
        stack = nn.TransformerEncoder(layer, 1, norm=nn.Identity(), enable_nested_tensor=False)
        assert honest(lambda: tc.from_torch(stack), "LayerNorm") is REJECTED
    elif variant == "silu":
        layer.activation = nn.SiLU()
        assert honest(lambda: tc.from_torch(layer), "relu and gelu") is REJECTED
    elif variant == "bias_kv":
        mha = nn.MultiheadAttention(8, 2, add_bias_kv=True)
        assert honest(lambda: tc.from_torch(mha), "add_bias_kv") is REJECTED


@fuzz(12)
@given(st.integers(1, 2), st.sampled_from([1, 2, 4]), st.sampled_from([1e-12, 1e-5, 0.1]),
       st.sampled_from(["gelu", "relu", "gelu_new"]), st.booleans(), st.integers(0, 2**16))
def test_from_huggingface(layers, heads, eps, act, pooler, seed):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=30, hidden_size=8, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=16, max_position_embeddings=12, layer_norm_eps=eps, hidden_act=act,
        attn_implementation="eager")
    model = transformers.BertModel(config, add_pooling_layer=pooler).eval()
    ours = honest(lambda: tc.from_huggingface(model), "hidden_act")
    if ours is REJECTED:
        return
    ids = torch.randint(0, 30, (2, 6))
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    with torch.no_grad():
        ref = model(ids, attention_mask=mask, output_attentions=True)
        got = ours(ids.to(torch.int16), attention_mask=mask.bool())
    assert (ref.last_hidden_state - got.last_hidden_state).abs().max() < 1e-4
    for theirs, mine in zip(ref.attentions, got.attentions, strict=True):
        assert (theirs - mine).abs().max() < 1e-5


@fuzz(10)
@given(junk)
def test_from_huggingface_refuses_clearly(model):
    assert honest(lambda: tc.from_huggingface(model), "model") is REJECTED


# --- data ---------------------------------------------------------------------------------------

languages = st.one_of(st.lists(st.sampled_from(["en", "fr", "it", "de", 3]), max_size=3),
                      st.sampled_from([("fr",), "en", None, 5]))


@fuzz(40)
@given(maybe(st.integers(-2, 20)), maybe(st.integers(0, 10)), languages,
       maybe(st.floats(-1, 2)), maybe(st.sampled_from(["copy", "reverse", "sort"])),
       maybe(st.integers(-1, 6)), maybe(st.integers(-1, 8)),
       maybe(st.text(max_size=4), st.lists(st.text(max_size=1), max_size=3)))
def test_data(n, seed, langs, rate, task, min_len, max_len, alphabet):
    names = ("n", "seed", "languages", "negation_rate", "task", "min_len", "max_len",
             "alphabet")
    pairs = honest(lambda: data.date_pairs(n, seed=seed, languages=langs), *names)
    if pairs is not REJECTED:
        assert len(pairs) == n
    honest(lambda: data.sentiment_examples(n, seed=seed, languages=langs, negation_rate=rate),
           *names)
    pairs = honest(lambda: data.sequence_pairs(n, task=task, min_len=min_len, max_len=max_len,
                                               alphabet=alphabet, seed=seed), *names)
    if pairs is not REJECTED:
        assert all(min_len <= len(s) <= max_len for s, _ in pairs)


texts = st.one_of(st.lists(st.text(max_size=6), max_size=3), st.text(max_size=4),
                  st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3), junk)
ids_lists = st.one_of(st.lists(st.integers(-3, 40), max_size=5), tensors(), junk)


@fuzz(60)
@given(texts, texts, ids_lists, flags, devices, st.one_of(st.integers(-1, 3), junk))
def test_tokenizers(alphabet, batch, ids, flag, device, min_count):
    names = ("alphabet", "texts", "text", "ids", "bos", "eos", "special_tokens", "device",
             "min_count", "symbols")
    char = honest(lambda: data.CharTokenizer(alphabet), *names)
    if char is REJECTED:
        char = data.CharTokenizer.from_texts(["hello world"])
    honest(lambda: data.CharTokenizer.from_texts(batch), *names)
    honest(lambda: char.batch(batch, bos=flag, eos=flag, device=device), *names)
    decoded = honest(lambda: char.decode(ids), *names)
    assert decoded is REJECTED or isinstance(decoded, str)
    word = honest(lambda: data.WordTokenizer.from_texts(batch, min_count=min_count), *names)
    if word is REJECTED:
        word = data.WordTokenizer.from_texts(["hello world"])
    honest(lambda: word.batch(batch, special_tokens=flag, device=device), *names)
    honest(lambda: word.decode(ids), *names)
    for text in batch if isinstance(batch, list) else [batch]:
        honest(lambda text=text: word.encode(text), *names)
        honest(lambda text=text: char.encode(text), *names)


@fuzz(15)
@given(st.one_of(st.sampled_from(["missing.zip", "dir", "empty.txt", "bad.bin"]), junk),
       maybe(st.none()), st.one_of(st.just(60.0), st.floats(-1, 1), junk))
def test_load_labelled_sentences(tmp_path_factory, source, seed, timeout):
    folder = tmp_path_factory.mktemp("sentences")
    (folder / "dir").mkdir()
    (folder / "empty.txt").write_text("")
    (folder / "bad.bin").write_bytes(b"\x00\x01")
    if isinstance(source, str):
        source = folder / source
    honest(lambda: data.load_labelled_sentences(source, seed=seed, timeout=timeout),
           "source", "seed", "timeout")


# --- training -------------------------------------------------------------------------------------

SRC_TOK, TGT_TOK = data.CharTokenizer("abc"), data.CharTokenizer("abc")
WORDS = data.WordTokenizer.from_texts(["good", "bad"])


def tiny_seq2seq():
    torch.manual_seed(0)
    return tc.Transformer(len(SRC_TOK), len(TGT_TOK), d_model=8, num_heads=2, num_layers=1,
                          d_ff=16, dropout=0.0)


def tiny_classifier():
    torch.manual_seed(0)
    return tc.TransformerClassifier(len(WORDS), 2, d_model=8, num_heads=2, num_layers=1,
                                    d_ff=16, max_len=8, dropout=0.0)


pairs_strategy = st.one_of(
    st.lists(st.tuples(st.text("abc", min_size=1, max_size=3),
                       st.text("abc", min_size=1, max_size=3)), min_size=1, max_size=4),
    st.lists(st.tuples(st.text(max_size=2), st.integers(-1, 3)), max_size=3), junk)


@fuzz(40)
@given(pairs_strategy, maybe(st.integers(-1, 5)), flags, maybe(st.integers(0, 5)),
       maybe(st.sampled_from([SRC_TOK, WORDS])))
def test_batches_losses_and_metrics(pairs, batch_size, shuffle, seed, tokenizer):
    names = ("pairs", "examples", "batch_size", "shuffle", "seed", "tokenizer", "batch",
             "labels", "max_len", "model", "texts")
    batches = honest(lambda: training.seq2seq_batches(pairs, tokenizer, TGT_TOK, batch_size,
                                                      shuffle=shuffle, seed=seed), *names)
    model = tiny_seq2seq()
    if batches is not REJECTED and batches:
        loss = honest(lambda: training.seq2seq_loss(model, batches[0]), *names)
        assert loss is REJECTED or bool(loss.isfinite())
    honest(lambda: training.seq2seq_loss(model, pairs), *names)
    score = honest(lambda: training.exact_match(model, pairs, tokenizer, TGT_TOK,
                                                batch_size=batch_size, max_len=seed), *names)
    assert score is REJECTED or 0.0 <= score <= 1.0
    batches = honest(lambda: training.classification_batches(pairs, tokenizer, batch_size,
                                                             shuffle=shuffle, seed=seed), *names)
    clf = tiny_classifier()
    if batches is not REJECTED and batches:
        honest(lambda: training.classification_loss(clf, batches[0]), *names)
        accuracy = honest(lambda: training.accuracy(clf, batches), *names)
        assert accuracy is REJECTED or 0.0 <= accuracy <= 1.0
    honest(lambda: training.accuracy(clf, pairs), *names)


@fuzz(30)
@given(maybe(st.integers(-1, 5)), maybe(st.integers(-1, 8)), maybe(st.floats(-1, 2)),
       maybe(st.integers(0, 12)))
def test_warmup_cosine(warmup, total, floor, step):
    factor = honest(lambda: training.warmup_cosine(warmup, total, floor=floor),
                    "warmup_steps", "total_steps", "floor")
    if factor is not REJECTED and isinstance(step, int) and not isinstance(step, bool):
        value = factor(step)
        assert 0.0 < value <= 1.0 and (step < warmup or value >= floor - 1e-12)


@fuzz(20)
@given(st.data(), maybe(st.floats(1e-4, 1e-2), st.floats()), maybe(st.integers(1, 2)),
       st.one_of(st.none(), st.floats(0.1, 2), junk), devices, flags,
       st.sampled_from(["ok", "none", "vector", "nan", "no_grad", "junk_batches", "junk_model"]))
def test_fit(data_, lr, epochs, clip_grad, device, progress, variant):
    model = tiny_classifier()
    batches = training.classification_batches([("good", 1), ("bad", 0)], WORDS, 2)
    losses = {
        "ok": training.classification_loss,
        "none": lambda m, b: None,
        "vector": lambda m, b: m(b[0], attention_mask=b[1]).sum(-1),
        "nan": lambda m, b: training.classification_loss(m, b) * float("nan"),
        "no_grad": lambda m, b: torch.tensor(1.0),
    }
    loss_fn = losses.get(variant, training.classification_loss)
    if variant == "junk_batches":
        batches = data_.draw(st.one_of(junk, st.lists(junk, min_size=1, max_size=2)))
    if variant == "junk_model":
        model = data_.draw(junk)
    evaluate = data_.draw(st.one_of(st.none(), st.just(lambda m: 0.5),
                                    st.just(lambda m: "high"), junk))
    history = honest(lambda: training.fit(model, batches, loss_fn, epochs=epochs, lr=lr,
                                          device=device, clip_grad=clip_grad, progress=progress,
                                          evaluate=evaluate),
                     "model", "batches", "loss_fn", "epochs", "lr", "device", "clip_grad",
                     "progress", "evaluate")
    if history is not REJECTED:
        assert all(math.isfinite(loss) for loss in history.losses)


# --- plotting and viz ---------------------------------------------------------------------------

labels = st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=3), st.integers()),
                                       max_size=4), junk)


@fuzz(15)
@given(tensors(), labels, labels, st.data())
def test_plotting(weights, queries, keys, data_):
    plotting = pytest.importorskip("transformer_course.plotting")
    names = ("weights", "queries", "keys", "titles", "columns", "cmap", "vmax", "title",
             "annotate", "ax", "encoding", "vectors", "labels", "highlight")
    options = data_.draw(st.fixed_dictionaries({}, optional={
        "cmap": st.sampled_from(["Blues", "nope", 3]), "vmax": st.one_of(st.none(), st.floats()),
        "title": st.one_of(st.text(max_size=3), junk), "annotate": flags,
        "ax": junk}))
    honest(lambda: plotting.attention_heatmap(weights, queries=queries, keys=keys, **options),
           *names)
    honest(lambda: plotting.attention_heads(weights, queries=queries, keys=keys,
                                            columns=data_.draw(maybe(st.integers(-1, 3)))),
           *names)
    honest(lambda: plotting.encoding_heatmap(weights, title=options.get("title")), *names)
    highlight = data_.draw(st.one_of(st.none(), tensors(shape=(2,)), tensors(), junk))
    honest(lambda: plotting.vectors_plot(weights, labels=queries, highlight=highlight), *names)


@fuzz(15)
@given(st.one_of(st.lists(tensors(), max_size=2), tensors(), junk), labels,
       maybe(st.integers(-1, 3)), st.one_of(st.none(), st.lists(st.integers(-1, 4), max_size=2),
                                            junk),
       st.one_of(st.none(), st.just("_static"), junk))
def test_viz(attention, tokens, layer, heads, base_url):
    viz = pytest.importorskip("transformer_course.viz")
    pytest.importorskip("bertviz")
    names = ("attention", "tokens", "layer", "heads", "base_url")
    honest(lambda: viz.head_view(attention, tokens, layer=layer, heads=heads, base_url=base_url),
           *names)
    honest(lambda: viz.model_view(attention, tokens, base_url=base_url), *names)
    honest(lambda: viz.attention_of(attention, tokens, layer), "model", "tokenizer", "text")


# --- checkers -----------------------------------------------------------------------------------

answers = st.one_of(
    junk, tensors(), st.tuples(tensors(), tensors()), st.tuples(),
    st.just(float("inf")), st.just(float("nan")), st.just(2**80),
    st.sampled_from([ValueError, RuntimeError, IndexError, KeyError, ZeroDivisionError,
                     NotImplementedError, SystemExit, RecursionError]))


@fuzz(40)
@given(st.sampled_from(sorted(set(check.__all__) - {"CheckResult"})), answers)
def test_checkers_turn_any_answer_into_a_verdict(name, answer):
    def student(*args):
        if isinstance(answer, type):
            raise answer("boom")
        return answer

    result = getattr(check, name)(student)
    assert isinstance(result, check.CheckResult) and not result.passed
    assert result.message and "could not be checked" not in result.message
