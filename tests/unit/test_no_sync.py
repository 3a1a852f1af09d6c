"""A training forward never reads a tensor back on the host (issue 21, item 2).

On a GPU, turning a tensor into a Python bool or number (``bool(t)``, ``t.item()``,
``int(t)``, ``t.tolist()``, ``t.nonzero()``...) makes the CPU wait until the GPU has
finished everything queued before it: a synchronisation that stalls training. The models'
forward and backward passes in training mode must do none. Outside training, the doors
read an input's largest value once (a ValueError for one too large to square): never inside
a stack's loop.

Counted twice: by patching the Python methods that convert, and with a dispatch mode that
records the operators that read a tensor's data on the host (``_local_scalar_dense`` is
what ``item``, ``bool``, ``int`` and ``float`` call; ``nonzero`` and friends have a
data-dependent shape). With CUDA present the same passes also run under
``torch.cuda.set_sync_debug_mode("error")``.
"""

from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import transformer_course as tc

CONVERSIONS = ("__bool__", "__float__", "__int__", "__index__", "__complex__", "item",
               "tolist", "numpy", "nonzero")
HOST_READS = {"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique2",
              "unique_consecutive", "unique_dim", "repeat_interleave", "equal"}


class HostReads(TorchDispatchMode):
    """Counts the operators that read tensor data on the host."""

    def __init__(self):
        super().__init__()
        self.seen = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in HOST_READS:
            self.seen[name] += 1
        return func(*args, **(kwargs or {}))


@pytest.fixture
def conversions(monkeypatch):
    """Counts the calls of the Tensor methods that convert to Python values."""
    seen = Counter()
    for name in CONVERSIONS:
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _name=name, _original=original, **kwargs):
            seen[_name] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return seen


def models(device="cpu"):
    """The three models of the issue (and BERT), in training mode, with a batch each and
    the loss of a forward pass."""
    torch.manual_seed(0)
    size = dict(d_model=16, num_heads=2, num_layers=2, d_ff=32, dropout=0.1)
    ids = torch.tensor([[5, 3, 7, 2, 0, 0], [4, 4, 9, 1, 8, 6]], device=device)  # 0 = padding
    classifier = tc.TransformerClassifier(12, 3, pooling="mean", **size).to(device)
    transformer = tc.Transformer(12, 12, **size).to(device)
    lm = tc.LanguageModel(12, max_len=16, **size).to(device)
    bert = tc.BertEncoder(12, 16, 2, 2, 32, max_len=16).to(device)
    labels = torch.tensor([0, 2], device=device)

    def next_token(logits, targets):  # (B, L, V), (B, L)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=0)

    return {
        "TransformerClassifier": (classifier, lambda: F.cross_entropy(classifier(ids), labels)),
        "TransformerClassifier, mask": (classifier, lambda: F.cross_entropy(
            classifier(ids, attention_mask=ids != 0), labels)),
        "Transformer": (transformer, lambda: next_token(transformer(ids, ids[:, :-1]),
                                                        ids[:, 1:])),
        "LanguageModel": (lm, lambda: next_token(lm(ids[:, :-1]), ids[:, 1:])),
        "BertEncoder": (bert, lambda: bert(ids, attention_mask=ids != 0)
                        .last_hidden_state.pow(2).mean()),
    }


@pytest.mark.parametrize("name", list(models()))
def test_a_training_forward_and_backward_reads_nothing_on_the_host(name, conversions):
    model, loss_of = models()[name]
    model.train()
    with HostReads() as reads:
        loss = loss_of()
        loss.backward()
    assert dict(conversions) == {}, f"{name}: {dict(conversions)}"
    assert dict(reads.seen) == {}, f"{name}: {dict(reads.seen)}"
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(g.isfinite().all() for g in grads)


def test_the_counters_see_a_conversion(conversions):
    """Outside training, a layer's door reads its input's largest value once on the host:
    both counters must see it, or the test above proves nothing."""
    encoder = tc.Encoder(8, 2, 16, 3).eval()
    with torch.no_grad(), HostReads() as reads:
        encoder(torch.randn(2, 5, 8))
    assert conversions["__float__"] == 1  # once at the door, not once per layer
    assert reads.seen["_local_scalar_dense"] == 1


@pytest.mark.parametrize("cls, args, options", [
    (tc.MultiHeadAttention, (8, 2), {}),
    (tc.EncoderLayer, (8, 2, 16), dict(dropout=0.0)),
    (tc.EncoderLayer, (8, 2, 16), dict(dropout=0.0, norm_first=True)),
    (tc.Encoder, (8, 2, 16, 2), dict(dropout=0.0)),
    (tc.Encoder, (8, 2, 16, 2), dict(dropout=0.0, norm_first=True)),
], ids=["attention", "post-norm layer", "pre-norm layer", "post-norm stack", "pre-norm stack"])
def test_modules_in_training_read_nothing_on_the_host(cls, args, options, conversions):
    torch.manual_seed(1)
    module = cls(*args, **options).train()
    x = torch.randn(2, 5, 8, requires_grad=True)
    mask = tc.causal_mask(5)
    with HostReads() as reads:
        if cls is tc.MultiHeadAttention:
            out = module(x, x, x, mask=mask, need_weights=False)[0]
        else:
            out = module(x, mask=mask)
        out.sum().backward()
    assert dict(conversions) == {} and dict(reads.seen) == {}
    assert out.isfinite().all()


def test_training_and_inference_agree_bit_for_bit():
    """The door's checks change no number: the same layer in training mode (no dropout)
    and in inference gives the same output, and its LayerNorm is nn.LayerNorm."""
    torch.manual_seed(2)
    layer = tc.EncoderLayer(16, 4, 32, dropout=0.0).eval()
    x = torch.randn(3, 7, 16) * 100
    with torch.no_grad():
        inference = layer(x, mask=tc.causal_mask(7))
    assert torch.equal(layer.train()(x, mask=tc.causal_mask(7)), inference)
    assert type(layer.norm1) is torch.nn.LayerNorm


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", list(models("cpu")))
def test_no_synchronisation_on_cuda(name):
    model, loss_of = models("cuda")[name]
    model.train()
    loss_of().backward()  # a first pass: lazy initialisations may synchronise
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss = loss_of()
        loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    assert loss.isfinite()
