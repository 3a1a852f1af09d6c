"""Chapter 7's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing."""

import pytest
import torch
import torch.nn.functional as F

import transformer_course as tc
from transformer_course import check

# --- right answers (as in the chapter's solutions) --------------------------------------------


def rms_norm(x, gamma, eps):
    return gamma * x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def gated_feed_forward(x, w_gate, w_up, w_down):
    return (F.silu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def encoder_layer_parameters(d_model, num_heads, d_ff):
    attention = 4 * (d_model * d_model + d_model)  # W_q, W_k, W_v, W_o with their biases
    ffn = d_model * d_ff + d_ff + d_ff * d_model + d_model
    return attention + ffn + 4 * d_model  # two LayerNorms: gamma and beta each


def fold_layer_norm(gamma, beta, weight, bias):
    return weight * gamma, weight @ beta + bias


def neighbour_feed_forward(x, w1, b1, w2, b2):
    padded = F.pad(x, (0, 0, 1, 1))                       # a zero before and after, (B, L + 2, d)
    hidden = (padded[:, :-2] @ w1[:, :, 0].T + padded[:, 1:-1] @ w1[:, :, 1].T
              + padded[:, 2:] @ w1[:, :, 2].T + b1)
    return F.relu(hidden) @ w2.T + b2


def encoder_layer_flops(d_model, num_heads, d_ff, length):
    projections = 4 * 2 * length * d_model * d_model        # W_q, W_k, W_v, W_o
    attention = 2 * 2 * length * length * d_model           # Q K^T and weights @ V, all heads
    ffn = 2 * 2 * length * d_model * d_ff
    return projections + attention + ffn


def qk_norm_scores(q, k):
    d_k = q.shape[-1]
    q_hat, k_hat = F.layer_norm(q, (d_k,)), F.layer_norm(k, (d_k,))
    return q_hat @ k_hat.transpose(-2, -1) / d_k ** 0.5


def over_positions(t):  # a classic mistake: LayerNorm over the L positions, not the d_k entries
    return F.layer_norm(t.transpose(-2, -1), t.shape[-2:-1]).transpose(-2, -1)


def masked_mean_pool(hidden, keep):
    weights = keep[..., None].to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)


CASES = {
    "fold_layer_norm": (fold_layer_norm, [
        (lambda g, b, w, c: (w, w @ b + c), ["columns"]),
        (lambda g, b, w, c: (w * g, c), ["W beta"]),
        (lambda g, b, w, c: (w * g, w @ b), ["own bias"]),
        (lambda g, b, w, c: (w * g, (w * g) @ b + c), ["not scaled"]),
        (lambda g, b, w, c: (w * g, b + c) if b.shape == c.shape else (w * g, w @ b + c),
         ["through the weight"]),
        (lambda g, b, w, c: (g[:, None] * w, w @ b + c) if w.shape[0] == w.shape[1]
         else (w * g, w @ b + c), ["rows"]),
        # the LayerNorm's gamma and beta applied after the linear layer, as if it came after
        (lambda g, b, w, c: (g[:, None] * w, g * c + b) if w.shape[0] == w.shape[1]
         else (w * g, w @ b + c), ["as if the LayerNorm came after it"]),
        # right on the lone linear layers, wrong on the feed-forward network of the pre-norm
        # layer (its first linear layer is the only one with 16 outputs)
        (lambda g, b, w, c: (w * g, w @ b + c + (1e-3 if w.shape[0] == 16 else 0.0)),
         ["a pre-norm encoder layer, its two LayerNorms folded"]),
        (lambda g, b, w, c: (w * g,), ["(new_weight, new_bias)"]),
        (lambda g, b, w, c: (w * g * 1.01, w @ b + c), ["off by"]),
    ]),
    "neighbour_feed_forward": (neighbour_feed_forward, [
        (lambda x, w1, b1, w2, b2: neighbour_feed_forward(x, w1.flip(-1), b1, w2, b2),
         ["flipped"]),
        (lambda x, w1, b1, w2, b2: F.relu(
            x.roll(1, 1) @ w1[:, :, 0].T + x @ w1[:, :, 1].T + x.roll(-1, 1) @ w1[:, :, 2].T
            + b1) @ w2.T + b2, ["wraps around"]),
        (lambda x, w1, b1, w2, b2: F.relu(x @ w1[:, :, 1].T + b1) @ w2.T + b2,
         ["kernel-size-1"]),
        (lambda x, w1, b1, w2, b2: neighbour_feed_forward(x, w1, b1, w2, b2) - b2,
         ["off by"]),
        (lambda x, w1, b1, w2, b2: neighbour_feed_forward(x, w1, b1, w2, b2)[:, 1:],
         ["shape"]),
    ]),
    "masked_mean_pool": (masked_mean_pool, [
        (lambda h, k: h.mean(1), ["averaged in"]),
        (lambda h, k: (h * k[..., None]).sum(1) / h.shape[1], ["divided by the length"]),
        (lambda h, k: h.sum(1) / k.sum(1, keepdim=True).clamp(min=1), ["summed in"]),
        (lambda h, k: (h * k[..., None]).sum(1) / k.sum(1, keepdim=True), ["0 / 0"]),
        (lambda h, k: masked_mean_pool(h, k)[:, None], ["shape"]),
    ]),

    "rms_norm": (rms_norm, [
        (lambda x, g, eps: F.layer_norm(x, x.shape[-1:], g, None, eps), ["LayerNorm", "mean"]),
        (lambda x, g, eps: g * x / (x.pow(2).mean(-1, keepdim=True).sqrt() + eps),
         ["eps", "after the square root"]),
        (lambda x, g, eps: x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps),
         ["not multiplied by gamma"]),
        (lambda x, g, eps: g * x / torch.sqrt(x.pow(2).mean(0, keepdim=True) + eps),
         ["wrong dimension"]),
        (lambda x, g, eps: g * x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) + eps),
         ["summed, not averaged"]),
        (lambda x, g, eps: g * x / x.std(-1, keepdim=True), ["off by"]),
    ]),
    "gated_feed_forward": (gated_feed_forward, [
        (lambda x, wg, wu, wd: (F.silu(x @ wu.T) * (x @ wg.T)) @ wd.T, ["W_up", "gate"]),
        (lambda x, wg, wu, wd: (torch.sigmoid(x @ wg.T) * (x @ wu.T)) @ wd.T,
         ["sigmoid", "GLU"]),
        (lambda x, wg, wu, wd: (F.relu(x @ wg.T) * (x @ wu.T)) @ wd.T, ["ReLU", "ReGLU"]),
        (lambda x, wg, wu, wd: F.silu(x @ wg.T) @ wd.T, ["no gating"]),
        (lambda x, wg, wu, wd: (F.silu(x @ wg.T) + x @ wu.T) @ wd.T, ["added"]),
        (lambda x, wg, wu, wd: (F.gelu(x @ wg.T) * (x @ wu.T)) @ wd.T, ["off by"]),
        (lambda x, wg, wu, wd: (F.silu(x @ wg.T) * (x @ wu.T)) @ wd, ["shape"]),
    ]),
    "encoder_layer_parameters": (encoder_layer_parameters, [
        (lambda d, h, f: encoder_layer_parameters(d, h, f) - 4 * d, ["LayerNorms are missing"]),
        (lambda d, h, f: 4 * d * d + 2 * d * f + 4 * d, ["biases", "missing"]),
        (lambda d, h, f: 4 * d * d + 2 * d * f, ["biases and the two LayerNorms"]),
        (lambda d, h, f: encoder_layer_parameters(d, h, f) + (h - 1) * 4 * (d * d + d),
         ["once per head", "share"]),
        (lambda d, h, f: encoder_layer_parameters(d, h, f) - d * d - d, ["W_o"]),
        (lambda d, h, f: 4 * (d * d + d) + 4 * d, ["feed-forward network is missing"]),
        (lambda d, h, f: encoder_layer_parameters(d, h, f) + 1, ["off by 1"]),
        (lambda d, h, f: encoder_layer_parameters(d, h, f) + 0.5, ["not a whole number"]),
    ]),
    "encoder_layer_flops": (encoder_layer_flops, [
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) // 2, ["multiply-adds"]),
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) + (h - 1) * 4 * n * n * d,
         ["each head works in d_model / h"]),
        (lambda d, h, f, n: 8 * n * d * d + 4 * n * d * f, ["square of the length"]),
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) - 2 * n * n * d,
         ["one of the two products"]),
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) - 2 * n * d * d, ["W_o"]),
        (lambda d, h, f, n: 8 * n * d * d + 4 * n * n * d, ["feed-forward network is missing"]),
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) + 1, ["off by 1"]),
        (lambda d, h, f, n: encoder_layer_flops(d, h, f, n) + 0.5,
         ["not a whole number", "operations"]),
    ]),
    "qk_norm_scores": (qk_norm_scores, [
        (lambda q, k: qk_norm_scores(q, k) * q.shape[-1] ** 0.5, ["sqrt(d_k)"]),
        (lambda q, k: F.layer_norm(q, q.shape[-1:]) @ k.transpose(-2, -1) / q.shape[-1] ** 0.5,
         ["only the queries"]),
        (lambda q, k: (q / q.pow(2).mean(-1, keepdim=True).add(1e-5).sqrt())
         @ (k / k.pow(2).mean(-1, keepdim=True).add(1e-5).sqrt()).transpose(-2, -1)
         / q.shape[-1] ** 0.5, ["RMSNorm"]),
        (lambda q, k: F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
         / q.shape[-1] ** 0.5, ["length 1"]),
        (lambda q, k: over_positions(q) @ over_positions(k).transpose(-2, -1)
         / q.shape[-1] ** 0.5, ["over the positions"]),
        (lambda q, k: q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, ["off by"]),
        (lambda q, k: qk_norm_scores(q, k)[..., 0], ["shape"]),
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
    assert set(CASES) == set(check.ch07.__all__)
    assert all(name in check.__all__ for name in CASES)


def test_the_counting_formula_matches_the_package():
    for d, h, f in ((8, 2, 16), (64, 4, 128), (512, 8, 2048)):
        layer = tc.EncoderLayer(d, h, f)
        assert encoder_layer_parameters(d, h, f) == sum(p.numel() for p in layer.parameters())
    assert encoder_layer_parameters(512, 8, 2048) == 3_152_384  # the paper's base layer


@pytest.mark.parametrize("name", sorted(CASES))
def test_right_answer_passes(name):
    right, _ = CASES[name]
    result = getattr(check, name)(right)
    assert result, result
    assert repr(result).startswith(f"✓ {name}: ")
    result.raise_if_failed()


def test_integral_answers_of_any_kind_pass_the_count():
    for convert in (int, float, torch.tensor, lambda v: torch.tensor([v])):
        assert check.encoder_layer_parameters(
            lambda d, h, f, c=convert: c(encoder_layer_parameters(d, h, f)))


def test_float64_answers_pass():
    assert check.fold_layer_norm(lambda g, b, w, c: fold_layer_norm(g.double(), b.double(),
                                                                     w.double(), c.double()))
    assert check.masked_mean_pool(lambda h, k: masked_mean_pool(h.double(), k))
    assert check.rms_norm(lambda x, g, eps: rms_norm(x.double(), g.double(), eps))
    assert check.gated_feed_forward(
        lambda x, wg, wu, wd: gated_feed_forward(x.double(), wg.double(), wu.double(),
                                                 wd.double()))


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
    assert not todo and "NotImplementedError" in todo.message
    assert not checker("not a function") and "expected a function" in checker(3).message


def test_nan_inside_an_answer_is_reported():
    result = check.rms_norm(lambda x, g, eps: rms_norm(x, g, eps) * float("nan"))
    assert not result and "not finite" in result.message
    result = check.gated_feed_forward(lambda x, *w: torch.full_like(x, float("inf")))
    assert not result and "not finite" in result.message


def test_messages_are_localised():
    tc.set_language("fr")
    try:
        result = check.encoder_layer_parameters(lambda d, h, f: encoder_layer_parameters(d, h, f)
                                                + 1)
    finally:
        tc.set_language("en")
    assert not result and "33 472" in result.message.replace("\u202f", " ").replace("\xa0", " ")


def test_checkers_leave_the_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    for name, (right, _) in CASES.items():
        getattr(check, name)(right)
    assert torch.equal(torch.rand(3), expected)


def test_the_chapter_7_solutions_agree_with_pytorch():
    """The folding is exact, the neighbour network is a Conv1d, the pool is the package's."""
    torch.manual_seed(0)
    norm, linear = torch.nn.LayerNorm(6), torch.nn.Linear(6, 4)
    torch.nn.init.normal_(norm.weight)
    torch.nn.init.normal_(norm.bias)
    x = torch.randn(3, 6)
    w, b = fold_layer_norm(norm.weight, norm.bias, linear.weight, linear.bias)
    torch.testing.assert_close(F.layer_norm(x, (6,)) @ w.T + b, linear(norm(x)))
    # The folding is exact in a pre-norm layer, whose LayerNorms feed linear layers only; in
    # post-norm a LayerNorm's output is also the residual stream, and folding it into the next
    # layer's projections changes the output (the answer to the exercise's question).
    for norm_first in (True, False):
        torch.manual_seed(1)
        stack = tc.Encoder(8, 2, 16, 2, dropout=0.0, norm_first=norm_first).eval()
        first, second = stack.layers
        with torch.no_grad():
            for layer in stack.layers:
                for ln in (layer.norm1, layer.norm2):
                    torch.nn.init.normal_(ln.weight)
                    torch.nn.init.normal_(ln.bias)
            h = torch.randn(2, 5, 8)
            before = stack(h)
            # pre-norm: second.norm1 feeds W_q, W_k, W_v only; post-norm: first.norm2 feeds
            # them and the residual stream of the second layer
            norm = second.norm1 if norm_first else first.norm2
            for linear in (second.self_attn.W_q, second.self_attn.W_k, second.self_attn.W_v):
                w, b = fold_layer_norm(norm.weight, norm.bias, linear.weight, linear.bias)
                linear.weight.copy_(w)
                linear.bias.copy_(b)
            norm.weight.fill_(1.0)
            norm.bias.zero_()
            after = stack(h)
        assert torch.allclose(after, before, atol=1e-5) == norm_first, norm_first
    conv = torch.nn.Conv1d(4, 8, 3, padding=1)
    out = torch.nn.Linear(8, 4)
    x = torch.randn(2, 5, 4)
    expected = out(F.relu(conv(x.transpose(1, 2))).transpose(1, 2))
    torch.testing.assert_close(neighbour_feed_forward(x, conv.weight, conv.bias, out.weight,
                                                      out.bias), expected)
    model = tc.TransformerClassifier(20, 2, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                                     pooling="mean").eval()
    model.head = torch.nn.Identity()
    ids = torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0]])
    keep = ids != 0
    hidden = model.encoder(model.positional(model.embed(ids)), mask=keep[:, None, None, :])
    torch.testing.assert_close(masked_mean_pool(hidden, keep), model(ids))
