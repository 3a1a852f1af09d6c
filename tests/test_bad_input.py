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
    with pytest.raises(ValueError, match=r"src holds ids outside \[0, 10\)"):
        model(torch.tensor([[1, 12]]), torch.tensor([[1]]))
    with pytest.raises(TypeError, match="tgt must be an integer tensor"):
        model(torch.tensor([[1, 2]]), torch.tensor([[1.0]]))
    with pytest.raises(ValueError, match="pooling"):
        tc.TransformerClassifier(10, 2, pooling="max")
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
    with pytest.raises(ValueError, match=r"key must be \(B, L, 8\).*\(2, 5, 6\)"):
        layer(x, torch.randn(2, 5, 6))
    with pytest.raises(ValueError, match="same batch size"):
        tc.Decoder(8, 2, 16, 1)(x, torch.randn(4, 5, 8))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        tc.Decoder(8, 2, 16, 1)(x, x, self_mask=tc.causal_mask(4))
