"""Plots return real, non-empty figures; checkers accept right answers and explain wrong ones."""

import math

import pytest
import torch

import transformer_course as tc

plotting = pytest.importorskip("transformer_course.plotting")


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    pixels = torch.frombuffer(bytearray(canvas.buffer_rgba()), dtype=torch.uint8)
    return pixels.unique().numel() > 10  # more than a blank canvas


def test_attention_heatmap_labels_and_values():
    w = torch.softmax(torch.randn(3, 4), -1)
    fig = plotting.attention_heatmap(w, queries=["a", "b", "c"], keys=["w", "x", "y", "z"],
                                     title="demo")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert ax.get_title() == "demo" and len(ax.texts) == 12
    assert torch.allclose(torch.tensor(ax.images[0].get_array().data), w.double())
    assert _drawn(fig)


def test_tokens_label_both_axes_as_the_explorers_take_them():
    words = ["the", "cat", "sat"]
    w = torch.softmax(torch.randn(3, 3), -1)
    ax = plotting.attention_heatmap(w, tokens=words).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == words
    assert [t.get_text() for t in ax.get_yticklabels()] == words
    grid = plotting.attention_heads(torch.softmax(torch.randn(2, 3, 3), -1), tokens=words)
    assert [t.get_text() for t in grid.axes[1].get_yticklabels()] == words
    old = plotting.attention_heatmap(w, queries=words, keys=words).axes[0]  # still there
    assert [t.get_text() for t in old.get_xticklabels()] == words
    with pytest.raises(ValueError, match="give tokens .* or queries and keys, not both"):
        plotting.attention_heatmap(w, tokens=words, keys=words)
    with pytest.raises(ValueError, match="tokens has 2 labels but the weights have 3"):
        plotting.attention_heads(w[None], tokens=words[:2])


def test_attention_heads_grid():
    w = torch.softmax(torch.randn(6, 3, 3), -1)
    fig = plotting.attention_heads(w, columns=4)
    visible = [ax for ax in fig.axes if ax.get_visible() and ax.images]
    assert len(visible) == 6 and visible[5].get_title() == "head 5"
    assert _drawn(fig)


def test_encoding_and_vectors():
    fig = plotting.encoding_heatmap(tc.sinusoidal_encoding(20, 16))
    assert fig.axes[0].images[0].get_array().shape == (20, 16) and _drawn(fig)
    x = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    fig = plotting.vectors_plot(x, labels=["x1", "x2"], highlight=x.mean(0))
    assert {t.get_text().strip() for t in fig.axes[0].texts} - {""} == {"x1", "x2", "output"}


def my_softmax(s):
    z = s - s.max(-1, keepdim=True).values
    return z.exp() / z.exp().sum(-1, keepdim=True)


def rotation(k, d):
    blocks = []
    for i in range(d // 2):
        a = torch.tensor(k / 10000 ** (2 * i / d), dtype=torch.float64)
        blocks.append(torch.stack([torch.stack([a.cos(), a.sin()]),
                                   torch.stack([-a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def reference_encoder_layer(x, attend, ffn, norm1, norm2, norm_first):
    if norm_first:
        x = x + attend(norm1(x))
        return x + ffn(norm2(x))
    x = norm1(x + attend(x))
    return norm2(x + ffn(x))


def reference_pad_batch(sequences, cls_id, sep_id, pad_id):
    framed = [[cls_id, *s, sep_id] for s in sequences]
    width = max(map(len, framed))
    ids = torch.tensor([f + [pad_id] * (width - len(f)) for f in framed])
    return ids, (ids != pad_id).long()


def reference_mha(x, w_q, w_k, w_v, w_o, heads):
    q, k, v = (tc.split_heads(x @ w.T, heads) for w in (w_q, w_k, w_v))
    out, _ = tc.attention(q, k, v)
    return tc.merge_heads(out) @ w_o.T


def test_checkers_accept_right_answers():
    results = [
        tc.check.softmax(my_softmax),
        tc.check.soft_argmax(lambda s, beta: my_softmax(beta * s)),
        tc.check.hard_argmax(lambda s: torch.nn.functional.one_hot(
            s.argmax(-1), s.shape[-1]).to(s.dtype)),
        tc.check.attention(lambda q, k, v: my_softmax(q @ k.transpose(-2, -1)
                                                      / math.sqrt(q.shape[-1])) @ v),
        tc.check.causal_mask(lambda n: torch.ones(n, n).tril().bool()),
        tc.check.padding_mask(lambda ids, pad: (ids != pad)[:, None, None, :]),
        tc.check.sinusoidal_encoding(tc.sinusoidal_encoding),
        tc.check.split_heads(lambda x, h: x.view(*x.shape[:2], h, -1).transpose(1, 2)),
        tc.check.merge_heads(lambda x: x.transpose(1, 2).flatten(2)),
        tc.check.weighted_sum(lambda x, a: (a[:, None] * x).sum(0)),
        tc.check.self_attention(lambda x, b: torch.softmax(b * x @ x.T, -1) @ x),
        tc.check.entropy(lambda w: -(w * w.clamp_min(1e-30).log()).sum(-1)),
        tc.check.lookup(lambda q, k, v, b, hard: (
            torch.nn.functional.one_hot((k @ q).argmax(), len(k)).float() if hard
            else torch.softmax(b * (k @ q), -1)) @ v),
        tc.check.project_qkv(lambda x, w, d: (x @ w.T).split([d, d, w.shape[0] - 2 * d], -1)),
        tc.check.multi_head_attention(reference_mha),
        tc.check.masked_softmax(lambda s, m: torch.softmax(
            s.masked_fill(~m, float("-inf")), -1).nan_to_num(0.0)),
        tc.check.shift_matrix(rotation),
        tc.check.layer_norm(lambda x, g, b, eps: torch.nn.functional.layer_norm(
            x, x.shape[-1:], g, b, eps)),
        tc.check.feed_forward(lambda x, w1, b1, w2, b2: torch.relu(x @ w1.T + b1) @ w2.T + b2),
        tc.check.encoder_layer(reference_encoder_layer),
        tc.check.teacher_forcing(lambda y, b, e: (torch.nn.functional.pad(y, (1, 0), value=b),
                                                  torch.nn.functional.pad(y, (0, 1), value=e))),
        tc.check.cross_attention(lambda y, m, wq, wk, wv: tc.attention(y @ wq.T, m @ wk.T,
                                                                        m @ wv.T)[0]),
        tc.check.greedy_decode(lambda model, src, b, e, n: model.greedy_decode(
            src, bos_id=b, eos_id=e, max_len=n)),
        tc.check.embedding_lookup(lambda ids, table: torch.nn.functional.embedding(ids, table)),
        tc.check.pad_batch(reference_pad_batch),
        tc.check.mean_pooling(lambda h, m: (h * m[..., None]).sum(1) / m.sum(1, keepdim=True)),
        tc.check.offset(lambda a, b, d: round(
            math.remainder(math.atan2(b[d - 2], b[d - 1]) - math.atan2(a[d - 2], a[d - 1]),
                           2 * math.pi)  # the angle difference back into [-pi, pi]
            / 10000 ** (-(d - 2) / d))),
    ]
    for r in results:
        assert r, r
        assert repr(r).startswith("✓") and "✓" in r._repr_html_()
        r.raise_if_failed()


def test_checkers_explain_wrong_answers():
    naive = tc.check.softmax(lambda s: s.exp() / s.exp().sum(-1, keepdim=True))
    assert not naive and "overflow" in naive.message and "not finite" in naive.message
    unscaled = tc.check.attention(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), -1) @ v)
    assert not unscaled and "sqrt(d_k)" in unscaled.message
    wrong_dim = tc.check.softmax(lambda s: torch.softmax(s, 0))
    assert not wrong_dim and "entry" in wrong_dim.message and "off by" in wrong_dim.message
    upper = tc.check.causal_mask(lambda n: torch.ones(n, n).triu().bool())
    assert not upper and "expected" in upper.message
    shape = tc.check.split_heads(lambda x, h: x.view(x.shape[0], h, x.shape[1], -1))
    assert not shape and "expected" in shape.message
    crash = tc.check.merge_heads(lambda x: 1 / 0)
    assert not crash and "ZeroDivisionError" in crash.message
    assert not tc.check.softmax("not a function")
    with pytest.raises(AssertionError, match="✗ softmax"):
        naive.raise_if_failed()
    columns = tc.check.self_attention(lambda x, b: x.T @ torch.softmax(b * x @ x.T, 0))
    assert not columns and "shape" in columns.message
    nan_entropy = tc.check.entropy(lambda w: -(w * w.log()).sum(-1))
    assert not nan_entropy and "not finite" in nan_entropy.message
    unscaled_heads = tc.check.multi_head_attention(
        lambda x, wq, wk, wv, wo, h: reference_mha(x, wq, wk, wv, wo, 1))
    assert not unscaled_heads and "with 3 heads" in unscaled_heads.message
    naive_mask = tc.check.masked_softmax(
        lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), -1))
    assert not naive_mask and "every key masked" in naive_mask.message
    two = tc.check.project_qkv(lambda x, w, d: (x @ w.T)[..., :d])
    assert not two and "tuple `(q, k, v)`" in two.message
    soft_always = tc.check.lookup(lambda q, k, v, b, hard: torch.softmax(b * (k @ q), -1) @ v)
    assert not soft_always and "hard retrieval" in soft_always.message
    transposed = tc.check.shift_matrix(lambda k, d: rotation(k, d).T)
    assert not transposed and "M_k E_p" in transposed.message
    fast_pair = tc.check.offset(lambda a, b, d: round(math.atan2(b[0], b[1])
                                                      - math.atan2(a[0], a[1])))
    assert not fast_pair and "expected" in fast_pair.message
    swapped = tc.check.encoder_layer(lambda x, a, f, n1, n2, nf: reference_encoder_layer(
        x, a, f, n1, n2, not nf))
    assert not swapped and "post-norm" in swapped.message
    no_eos = tc.check.teacher_forcing(lambda y, b, e: (
        torch.nn.functional.pad(y, (1, 0), value=b), y))
    assert not no_eos and "the target" in no_eos.message
    no_stop = tc.check.greedy_decode(
        lambda model, src, b, e, n: torch.zeros(3, n, dtype=torch.long))
    assert not no_stop and "max_len" in no_stop.message
    no_mask = tc.check.mean_pooling(lambda h, m: h.mean(1))
    assert not no_mask and "padding" in no_mask.message
    left_pad = tc.check.pad_batch(lambda seqs, c, s, p: reference_pad_batch(
        [q[::-1] for q in seqs], c, s, p))
    assert not left_pad and "the ids" in left_pad.message
    floats = tc.check.causal_mask(lambda n: torch.ones(n, n).tril())
    assert not floats and "torch.bool" in floats.message
