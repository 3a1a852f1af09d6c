"""Every checker: a right answer passes, plausible wrong answers fail saying why, junk
answers fail without crashing the checker."""

import math

import pytest
import torch
import torch.nn.functional as F

import transformer_course as tc
from transformer_course import check

# --- right answers (as in the chapters' solutions) --------------------------------------------

def softmax(s):
    z = s - s.max(-1, keepdim=True).values
    return z.exp() / z.exp().sum(-1, keepdim=True)


def soft_argmax(s, beta):
    return softmax(beta * s)


def hard_argmax(s):
    return F.one_hot(s.argmax(-1), s.shape[-1]).to(s.dtype)


def attention(q, k, v):
    return softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])) @ v


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril()


def padding_mask(ids, pad):
    return (ids != pad)[:, None, None, :]


def sinusoidal_encoding(n, d):
    p = torch.arange(n, dtype=torch.float64)[:, None]
    omega = 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    e = torch.zeros(n, d, dtype=torch.float64)
    e[:, 0::2], e[:, 1::2] = torch.sin(p * omega), torch.cos(p * omega)
    return e.float()


def split_heads(x, h):
    b, n, d = x.shape
    return x.view(b, n, h, d // h).transpose(1, 2)


def merge_heads(x):
    b, h, n, d = x.shape
    return x.transpose(1, 2).reshape(b, n, h * d)


def weighted_sum(x, a):
    return (a[:, None] * x).sum(0)


def self_attention(x, beta):
    return torch.softmax(beta * x @ x.T, -1) @ x


def entropy(w):
    return -(w * torch.where(w > 0, w.log(), torch.zeros_like(w))).sum(-1)


def lookup(q, keys, values, beta, hard):
    scores = keys @ q
    weights = (F.one_hot(scores.argmax(), len(keys)).to(values.dtype) if hard
               else torch.softmax(beta * scores, -1))
    return weights @ values


def project_qkv(x, w, d):
    return (x @ w.T).split([d, d, w.shape[0] - 2 * d], -1)


def mha(x, wq, wk, wv, wo, h, scale_by_head=True):
    q, k, v = (split_heads(x @ w.T, h) for w in (wq, wk, wv))
    d = q.shape[-1] if scale_by_head else x.shape[-1]
    return merge_heads(torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1) @ v) @ wo.T


def masked_softmax(s, m):
    empty = ~m.any(-1, keepdim=True)
    s = s.masked_fill(~m, float("-inf")).masked_fill(empty, 0.0)
    return torch.softmax(s, -1).masked_fill(empty, 0.0)


def rotation(k, d):
    blocks = []
    for i in range(d // 2):
        a = torch.tensor(k / 10000 ** (2 * i / d), dtype=torch.float64)
        blocks.append(torch.stack([torch.stack([a.cos(), a.sin()]),
                                   torch.stack([-a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def offset(e_p, e_q, d, *, reduce=True):
    i = d // 2 - 1
    omega = 10000 ** (-2 * i / d)
    a_p = math.atan2(float(e_p[2 * i]), float(e_p[2 * i + 1]))
    a_q = math.atan2(float(e_q[2 * i]), float(e_q[2 * i + 1]))
    turn = a_q - a_p
    if reduce:  # back into (-pi, pi]: the angle may wrap around between p and q
        turn = math.atan2(math.sin(turn), math.cos(turn))
    return round(turn / omega)


def layer_norm(x, g, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return g * (x - mean) / torch.sqrt(var + eps) + b


def feed_forward(x, w1, b1, w2, b2):
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def encoder_layer(x, attend, ffn, norm1, norm2, norm_first):
    if norm_first:
        x = x + attend(norm1(x))
        return x + ffn(norm2(x))
    x = norm1(x + attend(x))
    return norm2(x + ffn(x))


def teacher_forcing(y, bos, eos):
    return F.pad(y, (1, 0), value=bos), F.pad(y, (0, 1), value=eos)


def cross_attention(y, m, wq, wk, wv):
    return tc.attention(y @ wq.T, m @ wk.T, m @ wv.T)[0]


def greedy(model, src, bos, eos, max_len, *, pad=True, stop="all", keep_bos=False):
    """The chapter's greedy decoding, with switches for the classic mistakes."""
    src_mask = model.source_mask(src)
    memory = model.encode(src, src_mask=src_mask)
    out = torch.full((src.shape[0], 1), bos, dtype=torch.long)
    done = torch.zeros(src.shape[0], dtype=torch.bool)
    for _ in range(max_len):
        nxt = model.decode(out, memory, src_mask=src_mask)[:, -1].argmax(-1)
        if pad:
            nxt = nxt.masked_fill(done, model.pad_id)
        out = torch.cat([out, nxt[:, None]], 1)
        done |= nxt == eos
        if (stop == "all" and done.all()) or (stop == "any" and done.any()):
            break
    return out if keep_bos else out[:, 1:]


def embedding_lookup(ids, table):
    return F.one_hot(ids, table.shape[0]).to(table.dtype) @ table


def pad_batch(seqs, cls, sep, pad):
    framed = [[cls, *s, sep] for s in seqs]
    width = max(map(len, framed))
    ids = torch.tensor([f + [pad] * (width - len(f)) for f in framed])
    return ids, (ids != pad).long()


def mean_pooling(h, m):
    m = m[..., None].to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp(min=1)


# --- each checker: (right answer, [(wrong answer, words its message must contain)]) ----------

CASES = {
    "softmax": (softmax, [
        (lambda s: s.exp() / s.exp().sum(-1, keepdim=True), ["overflow", "not finite"]),
        (lambda s: torch.softmax(s, 0), ["off by"]),
        (lambda s: (s - s.min(-1, keepdim=True).values).exp()
         / (s - s.min(-1, keepdim=True).values).exp().sum(-1, keepdim=True), ["not finite"]),
    ]),
    "soft_argmax": (soft_argmax, [
        (lambda s, beta: softmax(s), ["beta = 0", "off by"]),
        (lambda s, beta: (beta * s).exp() / (beta * s).exp().sum(-1, keepdim=True),
         ["beta = 200", "not finite"]),
        (lambda s, beta: softmax(s / beta), ["beta = 0", "not finite"]),
    ]),
    "hard_argmax": (hard_argmax, [
        (lambda s: s.argmax(-1), ["shape", "expected (4, 6)"]),
        (lambda s: (s == s.max(-1, keepdim=True).values).float(), ["tie", "expected 0"]),
        (lambda s: hard_argmax(s.flip(-1)).flip(-1), ["tie"]),
    ]),
    "attention": (attention, [
        (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1), -1) @ v,
         ["forgot to divide", "sqrt(d_k) = 2.82843"]),
        (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), -1) @ v,
         ["sqrt(d_v)", "instead of sqrt(d_k)"]),
        (lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), -2) @ v,
         ["entry", "off by"]),
    ]),
    "causal_mask": (causal_mask, [
        (lambda n: torch.ones(n, n, dtype=torch.bool).triu(), ["L = 4", "expected False"]),
        (lambda n: torch.ones(n, n, dtype=torch.bool).tril(-1), ["L = 1", "expected True"]),
        (lambda n: torch.ones(n, n).tril(), ["torch.bool"]),
    ]),
    "padding_mask": (padding_mask, [
        (lambda ids, pad: ids != pad, ["shape", "expected (2, 1, 1, 5)"]),
        (lambda ids, pad: (ids != 0)[:, None, None, :], ["pad_id = 9"]),
        (lambda ids, pad: (ids == pad)[:, None, None, :], ["expected True"]),
    ]),
    "sinusoidal_encoding": (sinusoidal_encoding, [
        (lambda n, d: sinusoidal_encoding(n, d)[:, [i ^ 1 for i in range(d)]], ["entry"]),
        (lambda n, d: torch.cat([sinusoidal_encoding(n, d)[:, 0::2],
                                 sinusoidal_encoding(n, d)[:, 1::2]], 1), ["off by"]),
        (lambda n, d: sinusoidal_encoding(n + 1, d), ["shape", "expected (4, 4)"]),
    ]),
    "split_heads": (split_heads, [
        (lambda x, h: x.view(x.shape[0], h, x.shape[1], -1), ["with 3 heads", "entry"]),
        (lambda x, h: x.view(*x.shape[:2], h, -1), ["shape", "expected (2, 1, 5, 12)"]),
    ]),
    "merge_heads": (merge_heads, [
        (lambda x: x.reshape(x.shape[0], x.shape[2], -1), ["entry", "expected"]),
        (lambda x: x.transpose(1, 2).view(x.shape[0], x.shape[2], -1), ["raised RuntimeError"]),
    ]),
    "weighted_sum": (weighted_sum, [
        (lambda x, a: x.sum(0), ["one-hot", "off by"]),
        (lambda x, a: x.mean(0), ["off by"]),
        (lambda x, a: a @ x.T, ["raised RuntimeError"]),
    ]),
    "self_attention": (self_attention, [
        (lambda x, b: torch.softmax(x @ x.T, -1) @ x, ["beta = 0", "off by"]),
        (lambda x, b: x.T @ torch.softmax(b * x @ x.T, 0), ["shape", "expected (5, 2)"]),
        (lambda x, b: torch.softmax(b * x @ x.T, 0) @ x, ["beta = 1", "off by"]),
    ]),
    "entropy": (entropy, [
        (lambda w: -(w * w.log()).sum(-1), ["one-hot", "not finite"]),
        (lambda w: -(w * torch.where(w > 0, w.log2(), 0.0)).sum(-1), ["uniform", "off by"]),
        (lambda w: (w * torch.where(w > 0, w.log(), 0.0)).sum(-1), ["off by"]),
    ]),
    "lookup": (lookup, [
        (lambda q, k, v, b, hard: torch.softmax(b * (k @ q), -1) @ v, ["hard retrieval"]),
        (lambda q, k, v, b, hard: lookup(q, k, v, 1.0, hard), ["beta = 0"]),
        (lambda q, k, v, b, hard: torch.softmax(b * (k @ q), -1) @ k, ["shape"]),
    ]),
    "project_qkv": (project_qkv, [
        (lambda x, w, d: (x @ w.T)[..., :d], ["tuple `(q, k, v)`", "Tensor"]),
        (lambda x, w, d: ((x @ w.T)[:, :d], (x @ w.T)[:, d:2 * d], (x @ w.T)[:, 2 * d:3 * d]),
         ["d_v = 5", "v the shape is (4, 2), expected (4, 5)"]),
        (lambda x, w, d: (x @ w[[*range(d, 2 * d), *range(d), *range(2 * d, len(w))]].T)
         .split([d, d, w.shape[0] - 2 * d], -1), ["q", "off by"]),
    ]),
    "multi_head_attention": (lambda *a: mha(*a), [
        (lambda x, wq, wk, wv, wo, h: mha(x, wq, wk, wv, wo, 1), ["with 3 heads"]),
        (lambda x, wq, wk, wv, wo, h: mha(x, wq, wk, wv, wo, h, scale_by_head=False),
         ["with 3 heads", "off by"]),
        (lambda x, wq, wk, wv, wo, h: merge_heads(torch.softmax(
            split_heads(x @ wq.T, h) @ split_heads(x @ wk.T, h).transpose(-2, -1)
            / math.sqrt(12 // h), -1) @ split_heads(x @ wv.T, h)), ["off by"]),
    ]),
    "masked_softmax": (masked_softmax, [
        (lambda s, m: torch.softmax(s.masked_fill(~m, float("-inf")), -1),
         ["every key masked", "not finite"]),
        (lambda s, m: torch.softmax(s, -1) * m, ["causal mask", "off by"]),
        (lambda s, m: torch.softmax(s.masked_fill(m, float("-inf")), -1).nan_to_num(0.0),
         ["causal mask"]),
        (lambda s, m: torch.softmax(s.masked_fill(~m, -16.0), -1) * m.any(-1, keepdim=True),
         ["causal mask", "not exactly 0", "-inf"]),  # a finite fill leaks a little weight
    ]),
    "shift_matrix": (rotation, [
        (lambda k, d: rotation(k, d).T, ["M_k E_p", "off by"]),
        (lambda k, d: rotation(1, d), ["k = 3"]),
        (lambda k, d: rotation(k, d)[:8], ["expected a (16, 16) matrix", "(8, 16)"]),
    ]),
    "offset": (offset, [
        (lambda a, b, d: round(math.atan2(b[0], b[1]) - math.atan2(a[0], a[1])),
         ["p = 10", "expected -7"]),
        (lambda a, b, d: abs(offset(a, b, d)), ["q = 3", "expected -7"]),
        (lambda a, b, d: offset(a, b, d) + 0.4, ["not a whole number"]),
        (lambda a, b, d: offset(a, b, d, reduce=False), ["p = 300, q = 330", "wrapped around",
                                                          "(-pi, pi]"]),
    ]),
    "layer_norm": (layer_norm, [
        (lambda x, g, b, eps: g * (x - x.mean(-1, keepdim=True))
         / torch.sqrt(x.var(-1, keepdim=True) + eps) + b, ["gamma = 1", "off by"]),
        (lambda x, g, b, eps: g * (x - x.mean(-1, keepdim=True))
         / (x.std(-1, unbiased=False, keepdim=True) + eps) + b, ["eps matters"]),
        (lambda x, g, b, eps: layer_norm(x, torch.ones_like(g), torch.zeros_like(b), eps),
         ["learned gamma and beta"]),
    ]),
    "feed_forward": (feed_forward, [
        (lambda x, w1, b1, w2, b2: (x @ w1.T + b1) @ w2.T + b2, ["d_ff = 24", "off by"]),
        (lambda x, w1, b1, w2, b2: torch.relu(x @ w1.T + b1) @ w2.T, ["off by"]),
        (lambda x, w1, b1, w2, b2: torch.relu(x @ w1 + b1) @ w2 + b2, ["raised RuntimeError"]),
    ]),
    "encoder_layer": (encoder_layer, [
        (lambda x, a, f, n1, n2, nf: encoder_layer(x, a, f, n1, n2, not nf), ["post-norm"]),
        (lambda x, a, f, n1, n2, nf: n2(n1(x + a(x)) + f(n1(x + a(x)))) if not nf
         else x + f(n2(x + a(x))), ["pre-norm"]),
        (lambda x, a, f, n1, n2, nf: n2(f(n1(a(x)))), ["post-norm", "off by"]),
    ]),
    "teacher_forcing": (teacher_forcing, [
        (lambda y, b, e: (F.pad(y, (1, 0), value=b), y), ["the target", "shape"]),
        (lambda y, b, e: (F.pad(y, (1, 0), value=e), F.pad(y, (0, 1), value=b)), ["the input"]),
        (lambda y, b, e: F.pad(y, (1, 0), value=b), ["expected a tuple"]),
    ]),
    "cross_attention": (cross_attention, [
        (lambda y, m, wq, wk, wv: tc.attention(m @ wq.T, y @ wk.T, y @ wv.T)[0],
         ["one row per memory position"]),
        (lambda y, m, wq, wk, wv: tc.attention(y @ wq.T, m @ wk.T, m @ wv.T, beta=1.0)[0],
         ["off by"]),
        (lambda y, m, wq, wk, wv: tc.attention(y @ wq.T, y @ wk.T, y @ wv.T)[0], ["off by"]),
    ]),
    "greedy_decode": (greedy, [
        (lambda model, src, b, e, n: greedy(model, src, b, e, n, stop="never"),
         ["goes on for", "stop when all are done"]),
        (lambda model, src, b, e, n: greedy(model, src, b, e, n, pad=False),
         ["goes on after its <eos>", "padding"]),
        (lambda model, src, b, e, n: greedy(model, src, b, e, n, stop="any"),
         ["stops after", "max_len"]),
        (lambda model, src, b, e, n: greedy(model, src, b, e, n, keep_bos=True), ["<bos>"]),
        (lambda model, src, b, e, n: greedy(model, src, b, e, n + 1), ["more than max_len"]),
        (lambda model, src, b, e, n: torch.zeros(3, n, dtype=torch.long), ["max_len"]),
    ]),
    "embedding_lookup": (embedding_lookup, [
        (lambda ids, table: table[ids - 1], ["ids [3, 0, 9]", "off by"]),
        (lambda ids, table: table.T[:, ids].T if ids.dim() == 1 else table.T[:, ids],
         ["batch of ids", "shape"]),
        (lambda ids, table: F.one_hot(ids, table.shape[0]) @ table, ["raised RuntimeError"]),
    ]),
    "pad_batch": (pad_batch, [
        (lambda seqs, c, s, p: pad_batch([q[::-1] for q in seqs], c, s, p), ["the ids"]),
        (lambda seqs, c, s, p: (pad_batch(seqs, c, s, p)[0], pad_batch(seqs, c, s, p)[0] == p),
         ["the mask", "expected 1"]),
        (lambda seqs, c, s, p: pad_batch(seqs, s, c, p), ["the ids", "expected 101"]),
    ]),
    "mean_pooling": (mean_pooling, [
        (lambda h, m: h.mean(1), ["padding", "off by"]),
        (lambda h, m: (h * m[..., None]).sum(1) / h.shape[1], ["padding", "off by"]),
        (lambda h, m: (h * m[..., None]).sum(1), ["off by"]),
    ]),
}

JUNK = [
    None,
    (),
    [],
    float("inf"),
    float("nan"),
    "a string",
    (i for i in range(3)),
    torch.empty(2, 2, device="meta"),
    torch.zeros(2, 2, dtype=torch.complex64),
    torch.tensor(float("nan")),
]


def test_every_checker_is_tested():
    assert set(CASES) == set(check.basics.__all__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_right_answer_passes(name):
    right, _ = CASES[name]
    result = getattr(check, name)(right)
    assert result, result
    assert repr(result).startswith(f"✓ {name}: ") and "✓" in result._repr_html_()
    result.raise_if_failed()


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_answers_fail_and_say_why(name):
    _, wrong = CASES[name]
    assert len(wrong) >= 2
    for answer, words in wrong:
        result = getattr(check, name)(answer)
        assert not result, (name, words)
        for word in words:
            assert word in result.message, (name, word, result.message)
        with pytest.raises(AssertionError, match=f"✗ {name}"):
            result.raise_if_failed()


@pytest.mark.parametrize("name", sorted(CASES))
def test_junk_answers_fail_without_crashing(name):
    checker = getattr(check, name)
    for junk in JUNK:
        result = checker(lambda *args, junk=junk: junk)
        assert isinstance(result, check.CheckResult) and not result, (name, junk)
        assert result.message and "could not be checked" not in result.message, result.message
    raised = checker(lambda *args: 1 / 0)
    assert not raised and "raised ZeroDivisionError: division by zero" in raised.message
    todo = checker(lambda *args: (_ for _ in ()).throw(NotImplementedError("your code here")))
    assert not todo and "NotImplementedError" in todo.message and "your code" in todo.message
    assert not checker("not a function") and "expected a function" in checker(3).message


def test_junk_messages_say_what_was_returned():
    assert "returned None, expected a tensor" in check.softmax(lambda s: None).message
    assert "returned generator" in check.softmax(lambda s: (x for x in s)).message
    assert "meta device" in check.softmax(lambda s: s.to("meta")).message
    assert "expected real numbers" in check.softmax(lambda s: s.to(torch.complex64)).message
    empty = check.attention(lambda q, k, v: ())
    assert "expected a tuple `(output, weights)`, got tuple of length 0" in empty.message
    # the names are the reader's variables: code, in every language, on the page too
    assert "<code>(output, weights)</code>" in empty._repr_html_()
    tc.set_language("fr")
    try:
        french = check.attention(lambda q, k, v: ())
    finally:
        tc.set_language("en")
    assert "tuple `(output, weights)`" in french.message
    assert "<code>(output, weights)</code>" in french._repr_html_()
    assert "expected a whole number, got ∞" in check.offset(lambda *a: float("inf")).message
    assert "expected a whole number, got NaN" in check.offset(lambda *a: float("nan")).message
    assert "got str" in check.offset(lambda *a: "1").message
    assert "got bool" in check.offset(lambda *a: True).message


def test_integral_answers_of_any_kind_pass_offset():
    for convert in (int, float, torch.tensor, lambda v: torch.tensor([v])):
        assert check.offset(lambda a, b, d, c=convert: c(offset(a, b, d)))


def test_checkers_leave_the_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check.greedy_decode(greedy)
    check.encoder_layer(encoder_layer)
    assert torch.equal(torch.rand(3), expected)


def test_greedy_decode_problem_tells_the_properties_apart():
    model, src = check.basics._decoding_problem()
    out = model.greedy_decode(src, bos_id=1, eos_id=2, max_len=10)
    ends = check.basics._end_steps(out)
    assert None not in ends and len(set(ends)) == 3, ends  # <eos> at three different steps
    assert out.shape[1] == max(ends) < 10  # decoding stopped when every sequence was done


def test_messages_are_translated_and_numbers_localised(monkeypatch):
    seen = []

    def fake_gettext(message):
        seen.append(message)
        return message.replace("on {what}", "sur {what}")

    monkeypatch.setattr(check._core, "_", fake_gettext)
    monkeypatch.setattr(check.basics, "_", fake_gettext)
    tc.set_language("fr")
    try:
        result = check.soft_argmax(lambda s, beta: softmax(s))
    finally:
        tc.set_language("en")
    assert result.message.startswith("sur beta = 0 "), result.message
    assert "beta = {beta}" in seen and "on {what} entry {index} is {got}, expected {expected} " \
        "(off by {error})" in seen
    assert "0,2" in result.message  # 1/5 written the French way
