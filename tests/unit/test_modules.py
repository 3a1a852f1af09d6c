"""Our modules against PyTorch's, weight for weight, in float64 to 1e-9."""

import os
import subprocess
import sys

import pytest
import torch
from torch import nn

import transformer_course as tc

F64 = torch.float64
TOL = 1e-9


def maxdiff(a, b):
    return (a - b).abs().max().item()


def pad_mask(lengths, total):
    """PyTorch's key_padding_mask (True = padding) for sequences of the given lengths."""
    return torch.arange(total)[None, :] >= torch.tensor(lengths)[:, None]


@pytest.fixture
def x():
    return torch.randn(3, 6, 16, dtype=F64)


@pytest.fixture
def memory():
    return torch.randn(3, 8, 16, dtype=F64)


def test_mha_parity_per_head_weights_causal_and_padding(x):
    ref = nn.MultiheadAttention(16, 4, batch_first=True, dtype=F64).eval()
    ours = tc.from_torch(ref)
    assert isinstance(ours, tc.MultiHeadAttention)
    blocked = torch.ones(6, 6, dtype=torch.bool).triu(1)
    padded = pad_mask([6, 4, 5], 6)
    ref_out, ref_w = ref(x, x, x, attn_mask=blocked, key_padding_mask=padded,
                         average_attn_weights=False)
    mask = ~blocked & ~padded[:, None, None, :]  # True = may attend
    out, w = ours(x, x, x, mask=mask)
    assert w.shape == (3, 4, 6, 6)
    assert maxdiff(out, ref_out) < TOL and maxdiff(w, ref_w) < TOL
    fused, none = ours(x, x, x, mask=mask, need_weights=False)
    assert none is None and maxdiff(fused, ref_out) < TOL


def test_mha_parity_cross_attention_with_kdim_vdim(x):
    ref = nn.MultiheadAttention(16, 2, kdim=10, vdim=12, batch_first=True, dtype=F64).eval()
    ours = tc.from_torch(ref)
    k, v = torch.randn(3, 9, 10, dtype=F64), torch.randn(3, 9, 12, dtype=F64)
    padded = pad_mask([9, 3, 7], 9)
    ref_out, ref_w = ref(x, k, v, key_padding_mask=padded, average_attn_weights=False)
    out, w = ours(x, k, v, mask=~padded[:, None, None, :])
    assert maxdiff(out, ref_out) < TOL and maxdiff(w, ref_w) < TOL


def test_mha_without_bias_and_gradients_match(x):
    ref = nn.MultiheadAttention(16, 4, bias=False, batch_first=True, dtype=F64)
    ours = tc.from_torch(ref)
    assert ours.W_q.bias is None
    xr, xo = x.clone().requires_grad_(), x.clone().requires_grad_()
    ref(xr, xr, xr)[0].sum().backward()
    ours(xo, xo, xo)[0].sum().backward()
    assert maxdiff(xr.grad, xo.grad) < TOL
    assert maxdiff(ref.out_proj.weight.grad, ours.W_o.weight.grad) < TOL


def test_from_torch_copies_rather_than_shares(x):
    ref = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, dtype=F64)
    ours = tc.from_torch(ref)
    with torch.no_grad():
        ours.ff.linear1.weight.zero_()
        ours.self_attn.W_q.weight.zero_()
    assert ref.linear1.weight.abs().sum() > 0 and ref.self_attn.in_proj_weight.abs().sum() > 0
    assert ours.ff.linear1.weight.dtype == F64 and ours.training


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_parity(x, norm_first, activation):
    ref = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=activation,
                                     norm_first=norm_first, batch_first=True, dtype=F64).eval()
    ours = tc.from_torch(ref)
    assert isinstance(ours, tc.EncoderLayer) and ours.norm_first == norm_first
    padded = pad_mask([6, 2, 4], 6)
    expected = ref(x, src_key_padding_mask=padded)
    got = ours(x, mask=~padded[:, None, None, :])
    keep = ~padded  # PyTorch's fast path may zero the padded rows; compare the real tokens
    assert maxdiff(got[keep], expected[keep]) < TOL
    causal = tc.causal_mask(6)
    assert maxdiff(ours(x, mask=causal), ref(x, src_mask=~causal)) < TOL


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_decoder_layer_parity(x, memory, norm_first, activation):
    ref = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, activation=activation,
                                     norm_first=norm_first, batch_first=True, dtype=F64).eval()
    ours = tc.from_torch(ref)
    assert isinstance(ours, tc.DecoderLayer)
    causal = tc.causal_mask(6)
    mem_pad = pad_mask([8, 5, 3], 8)
    expected = ref(x, memory, tgt_mask=~causal, memory_key_padding_mask=mem_pad)
    got = ours(x, memory, self_mask=causal, memory_mask=~mem_pad[:, None, None, :])
    assert maxdiff(got, expected) < TOL


def test_layers_match_in_training_mode_without_dropout(x):
    ref = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, dtype=F64)
    ours = tc.from_torch(ref)
    assert maxdiff(ours(x), ref(x)) < TOL


@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_parity(x, memory, norm_first):
    enc_layer = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first,
                                           batch_first=True, dtype=F64)
    dec_layer = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first,
                                           batch_first=True, dtype=F64)
    norm = nn.LayerNorm(16, dtype=F64) if norm_first else None
    ref_enc = nn.TransformerEncoder(enc_layer, 3, norm=norm, enable_nested_tensor=False).eval()
    ref_dec = nn.TransformerDecoder(dec_layer, 2, norm=norm).eval()
    enc, dec = tc.from_torch(ref_enc), tc.from_torch(ref_dec)
    assert isinstance(enc, tc.Encoder) and len(enc.layers) == 3
    assert (enc.norm is not None) == norm_first
    causal = tc.causal_mask(6)
    assert maxdiff(enc(memory), ref_enc(memory)) < TOL
    assert maxdiff(dec(x, memory, self_mask=causal), ref_dec(x, memory, tgt_mask=~causal)) < TOL


def test_stacks_return_every_layers_attention(x, memory):
    enc = tc.Encoder(16, 4, 32, 3).double().eval()
    out, maps = enc(x, return_attention=True)
    assert len(maps) == 3 and all(m.shape == (3, 4, 6, 6) for m in maps)
    torch.testing.assert_close(out, enc(x))
    dec = tc.Decoder(16, 4, 32, 2).double().eval()
    out, att = dec(x, memory, self_mask=tc.causal_mask(6), return_attention=True)
    assert len(att.self_attention) == 2 and att.cross_attention[0].shape == (3, 4, 6, 8)
    assert torch.all(att.self_attention[0].triu(1) == 0)  # nobody looks ahead


def test_pre_norm_stack_ends_with_a_norm():
    assert tc.Encoder(8, 2, 16, 2, norm_first=True).norm is not None
    assert tc.Encoder(8, 2, 16, 2).norm is None
    assert tc.Decoder(8, 2, 16, 2, norm_first=True, final_norm=False).norm is None


def test_feed_forward_is_position_wise():
    ff = tc.FeedForward(8, 32).double()
    x = torch.randn(2, 5, 8, dtype=F64)
    whole = ff(x)
    for i in range(5):
        torch.testing.assert_close(whole[:, i], ff(x[:, i]))
    conv = nn.Sequential(nn.Conv1d(8, 32, 1), nn.ReLU(), nn.Conv1d(32, 8, 1)).double()
    with torch.no_grad():
        conv[0].weight.copy_(ff.linear1.weight[..., None])
        conv[0].bias.copy_(ff.linear1.bias)
        conv[2].weight.copy_(ff.linear2.weight[..., None])
        conv[2].bias.copy_(ff.linear2.bias)
    torch.testing.assert_close(conv(x.transpose(1, 2)).transpose(1, 2), whole)


def test_hard_and_beta_through_mha(x):
    mha = tc.MultiHeadAttention(16, 4).double()
    _, w = mha(x, x, x, hard=True)
    assert torch.all((w == 0) | (w == 1)) and torch.all(w.sum(-1) == 1)
    _, w0 = mha(x, x, x, beta=0.0)
    torch.testing.assert_close(w0, torch.full_like(w0, 1 / 6))
    out_hard_fused, none = mha(x, x, x, hard=True, need_weights=False)
    assert none is None and torch.isfinite(out_hard_fused).all()


def test_sinusoidal_encoding_values():
    e = tc.sinusoidal_encoding(3, 4)
    p = torch.arange(3.0)[:, None]
    expected = torch.cat([torch.sin(p), torch.cos(p), torch.sin(p / 100), torch.cos(p / 100)],
                         1)[:, [0, 1, 2, 3]]
    torch.testing.assert_close(e, expected)
    assert tc.sinusoidal_encoding(5, 7).shape == (5, 7)
    torch.testing.assert_close(tc.sinusoidal_encoding(5, 7)[:, 6],
                               torch.sin(torch.arange(5.0) / 10000 ** (6 / 7)))


def test_sinusoidal_offset_is_a_rotation():
    e = tc.sinusoidal_encoding(40, 8, dtype=F64)
    k = 3
    for i in range(4):
        omega = 1 / 10000 ** (2 * i / 8)
        c, s = torch.cos(torch.tensor(k * omega)), torch.sin(torch.tensor(k * omega))
        rot = torch.tensor([[c, -s], [s, c]], dtype=F64)  # row vectors: [sin, cos] @ rot
        torch.testing.assert_close(e[:-k, 2 * i:2 * i + 2] @ rot, e[k:, 2 * i:2 * i + 2])


def test_positional_modules():
    x = torch.zeros(2, 5, 8)
    sin = tc.SinusoidalPositionalEncoding(8, max_len=3)
    torch.testing.assert_close(sin(x)[0], tc.sinusoidal_encoding(5, 8))  # grew on demand
    learned = tc.LearnedPositionalEmbedding(8, max_len=5)
    torch.testing.assert_close(learned(x)[1], learned.embedding.weight)


def test_transformer_forward_attention_and_masks():
    model = tc.Transformer(11, 13, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                           dropout=0.0).eval()
    src = torch.tensor([[3, 4, 5, 0], [6, 7, 8, 9]])
    tgt = torch.tensor([[1, 2, 3], [1, 4, 0]])
    logits, att = model(src, tgt, return_attention=True)
    assert logits.shape == (2, 3, 13)
    torch.testing.assert_close(logits, model(src, tgt))
    assert len(att.encoder) == 2 and att.cross[1].shape == (2, 2, 3, 4)
    assert torch.all(att.cross[0][0, :, :, 3] == 0)  # padded source key never attended
    assert torch.all(att.encoder[0][0, :, :, 3] == 0)
    # changing a padded source token does not change anything
    src2 = src.clone()
    src2[0, 3] = 0
    torch.testing.assert_close(model(src2, tgt), logits)
    # the decoder is causal: changing the last target token leaves earlier logits alone
    tgt2 = tgt.clone()
    tgt2[:, -1] = 7
    torch.testing.assert_close(model(src, tgt2)[:, :-1], logits[:, :-1])


def test_transformer_tied_embeddings():
    model = tc.Transformer(20, 20, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                           tie_embeddings=True)
    assert model.src_embed is model.tgt_embed
    assert model.lm_head.weight is model.src_embed.weight
    n_untied = sum(p.numel() for p in tc.Transformer(20, 20, d_model=8, num_heads=2,
                                                     num_layers=1, d_ff=16).parameters())
    n_tied = sum(p.numel() for p in model.parameters())
    assert n_untied - n_tied == 2 * 20 * 8 + 20  # two tables and lm_head's bias


def test_greedy_decode_matches_step_by_step_argmax():
    torch.manual_seed(3)
    model = tc.Transformer(10, 10, d_model=16, num_heads=2, num_layers=1, d_ff=32).eval()
    src = torch.tensor([[4, 5, 6, 7]])
    out = model.greedy_decode(src, bos_id=1, eos_id=2, max_len=5)
    seq = torch.tensor([[1]])
    for _ in range(out.shape[1]):
        nxt = model(src, seq)[:, -1].argmax(-1, keepdim=True)
        seq = torch.cat([seq, nxt], 1)
        if nxt.item() == 2:
            break
    assert torch.equal(out[:, : seq.shape[1] - 1], seq[:, 1:])


def test_greedy_decode_pads_after_eos():
    model = tc.Transformer(6, 6, d_model=8, num_heads=2, num_layers=1, d_ff=16).eval()
    with torch.no_grad():  # make the model always predict <eos> = 2 ...
        model.lm_head.weight.zero_()
        model.lm_head.bias.copy_(torch.tensor([0.0, 0, 5, 0, 0, 0]))
    out = model.greedy_decode(torch.tensor([[3, 4], [5, 3]]), bos_id=1, eos_id=2, max_len=4)
    assert out.tolist() == [[2], [2]]


@pytest.mark.parametrize("pooling", ["cls", "mean", "max"])
@pytest.mark.parametrize("positional", ["learned", "sinusoidal"])
def test_classifier(pooling, positional):
    model = tc.TransformerClassifier(30, 3, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                                     pooling=pooling, positional=positional).eval()
    ids = torch.tensor([[2, 5, 6, 3, 0, 0], [2, 7, 8, 9, 10, 3]])
    logits, maps = model(ids, return_attention=True)
    assert logits.shape == (2, 3) and len(maps) == 2
    torch.testing.assert_close(model(ids, attention_mask=ids != 0), logits)
    # the padding really is ignored: the first example alone, unpadded, scores the same
    torch.testing.assert_close(model(ids[:1, :4]), logits[:1], atol=1e-5, rtol=1e-5)


def test_device_and_seed():
    assert tc.device().type in ("cpu", "cuda", "mps")
    tc.seed_everything(7)
    a = torch.rand(3)
    g = tc.seed_everything(7)
    assert torch.equal(a, torch.rand(3))
    assert isinstance(g, torch.Generator)


def test_a_large_seed_still_lets_python_start_a_process():
    """PYTHONHASHSEED must be below 2**32, or every Python started afterwards fails (a seed
    of 2**64 - 1 from the fuzz tests once broke a later test's subprocess)."""
    before = os.environ.get("PYTHONHASHSEED")
    try:
        tc.seed_everything(2**64 - 1)
        assert os.environ["PYTHONHASHSEED"] == str(2**32 - 1)
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    finally:
        if before is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = before


def test_transformer_output_layer_is_lm_head_and_old_weights_still_load():
    """Issue 29 renamed Transformer.generator (a Linear layer, not a torch.Generator) to
    lm_head: weights saved under the old keys load, and the old name still reads."""
    torch.manual_seed(0)
    old = tc.Transformer(7, 9, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    saved = {key.replace("lm_head.", "generator."): t for key, t in old.state_dict().items()}
    assert "generator.weight" in saved and "lm_head.weight" not in saved
    new = tc.Transformer(7, 9, d_model=8, num_heads=2, num_layers=1, d_ff=16)
    new.load_state_dict(saved)
    assert torch.equal(new.lm_head.weight, old.lm_head.weight)
    assert torch.equal(new.lm_head.bias, old.lm_head.bias)
    assert new.generator is new.lm_head
    src, tgt = torch.tensor([[1, 2, 3]]), torch.tensor([[1, 4]])
    assert torch.equal(new.eval()(src, tgt), old.eval()(src, tgt))


def test_language_model_holds_its_blocks_and_final_norm_and_old_weights_still_load():
    """Issue 29: LanguageModel.blocks was an Encoder (keys blocks.layers.i, blocks.norm); it
    is the list of layers now, with the final LayerNorm beside it as `norm`, as GPT-2 keeps
    them. Weights saved under the old keys load and give the same logits."""
    torch.manual_seed(0)
    old = tc.LanguageModel(11, d_model=8, num_heads=2, num_layers=2, d_ff=16, max_len=8).eval()
    assert isinstance(old.blocks, torch.nn.ModuleList) and len(old.blocks) == 2
    assert all(isinstance(block, tc.EncoderLayer) for block in old.blocks)
    assert isinstance(old.norm, torch.nn.LayerNorm)
    saved = {}
    for key, t in old.state_dict().items():
        if key.startswith("blocks."):
            key = "blocks.layers." + key[len("blocks."):]
        elif key.startswith("norm."):
            key = "blocks." + key
        saved[key] = t
    assert "blocks.layers.1.ff.linear1.weight" in saved and "blocks.norm.weight" in saved
    torch.manual_seed(1)
    new = tc.LanguageModel(11, d_model=8, num_heads=2, num_layers=2, d_ff=16, max_len=8).eval()
    new.load_state_dict(saved)
    ids = torch.tensor([[1, 5, 7, 2]])
    assert torch.equal(new(ids), old(ids))
    post = tc.LanguageModel(11, d_model=8, num_heads=2, num_layers=1, d_ff=16, max_len=8,
                            norm_first=False)
    assert post.norm is None and "norm.weight" not in post.state_dict()


def test_a_stack_calls_its_layers_and_their_attention_as_modules():
    """The checks run once, at the stack's door, and the layers inside are called as
    modules (``validate=False``): a hook on one layer's attention sees every pass."""
    torch.manual_seed(0)
    encoder = tc.Encoder(8, 2, 16, 2, dropout=0.0).eval()
    seen = []
    handle = encoder.layers[1].self_attn.register_forward_hook(
        lambda module, args, out: seen.append((tuple(args[0].shape), out[1] is None)))
    try:
        out, maps = encoder(torch.randn(3, 5, 8), return_attention=True)
        encoder(torch.randn(1, 4, 8))
    finally:
        handle.remove()
    assert seen == [((3, 5, 8), False), ((1, 4, 8), True)]
    assert out.shape == (3, 5, 8) and [m.shape for m in maps] == [(3, 2, 5, 5)] * 2


def test_validate_is_a_flag_and_false_skips_the_checks():
    attn = tc.MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(TypeError, match="validate"):
        attn(x, x, x, validate="no")
    with pytest.raises(ValueError, match="beta"):
        attn(x, x, x, beta=float("nan"))
    out, _ = attn(x, x, x, beta=float("nan"), validate=False)  # unchecked: NaN goes through
    assert out.isnan().all()
