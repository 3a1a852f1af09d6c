"""TransformerClassifier(pooling="max"): the NYU notes' classifier, the encoder's outputs
max-pooled over the real tokens of each sequence. Padding must never win the maximum."""

import pytest
import torch
from torch import nn

import transformer_course as tc


class FixedEncoder(nn.Module):
    """Stands in for the encoder: returns given hidden states, whatever its input."""

    def __init__(self, hidden: torch.Tensor) -> None:
        super().__init__()
        self.hidden = nn.Parameter(hidden.clone())

    def forward(self, x, *, mask=None, return_attention=False, validate=True):
        return (self.hidden, []) if return_attention else self.hidden


def pooled_by(model: tc.TransformerClassifier, ids, mask=None) -> torch.Tensor:
    """What the head receives: the model with its head replaced by the identity."""
    head, model.head = model.head, nn.Identity()
    try:
        return model(ids, attention_mask=mask)
    finally:
        model.head = head


def small(pooling="max", **sizes):
    torch.manual_seed(0)
    options = dict(d_model=8, num_heads=2, num_layers=1, d_ff=16, dropout=0.0)
    options.update(sizes)
    return tc.TransformerClassifier(20, 3, pooling=pooling, **options).eval()


def test_max_pooling_takes_the_featurewise_maximum_over_real_tokens():
    model = small()
    ids = torch.tensor([[2, 5, 6, 3, 0, 0], [2, 7, 8, 9, 10, 3]])
    keep = ids != 0
    with torch.no_grad():
        hidden = model.encoder(model.positional(model.embed(ids)), mask=keep[:, None, None, :])
        expected = torch.stack([hidden[0, :4].max(0).values, hidden[1].max(0).values])
        torch.testing.assert_close(pooled_by(model, ids), expected)
        torch.testing.assert_close(model(ids), model.head(expected))


def test_padding_never_wins_the_maximum():
    hidden = torch.tensor([[[1.0, -2.0], [0.5, -1.0], [50.0, 60.0], [70.0, 80.0]],
                           [[-3.0, 4.0], [-1.0, 2.0], [-5.0, 9.0], [100.0, -100.0]]])
    model = small(d_model=2, num_heads=1)
    model.encoder = FixedEncoder(hidden)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0]])
    with torch.no_grad():
        pooled = pooled_by(model, torch.ones(2, 4, dtype=torch.long), mask)
    # the padded positions hold the largest values of every feature, and are ignored
    assert pooled.tolist() == [[1.0, -1.0], [-1.0, 9.0]]


def test_padding_with_negative_real_values():
    """Zeros at padded positions would beat all-negative real features: -inf must be used."""
    hidden = -torch.arange(1.0, 9.0).reshape(1, 4, 2)  # every real value is negative
    model = small(d_model=2, num_heads=1)
    model.encoder = FixedEncoder(hidden)
    with torch.no_grad():
        pooled = pooled_by(model, torch.ones(1, 4, dtype=torch.long),
                           torch.tensor([[1, 1, 0, 0]]))
    assert pooled.tolist() == [[-1.0, -2.0]]


@pytest.mark.parametrize("filler", [0, 4, 19])
def test_padded_and_unpadded_inputs_score_the_same(filler):
    model = small()
    alone = torch.tensor([[2, 5, 6, 3]])
    padded = torch.tensor([[2, 5, 6, 3, filler, filler], [2, 7, 8, 9, 10, 3]])
    mask = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]])
    with torch.no_grad():
        torch.testing.assert_close(model(padded, attention_mask=mask)[:1], model(alone),
                                   atol=1e-5, rtol=1e-5)


def test_a_sequence_with_no_real_token_pools_to_zeros_without_nan():
    model = small()
    model.train()
    ids = torch.tensor([[2, 5, 6, 3], [2, 7, 3, 0]])
    mask = torch.tensor([[0, 0, 0, 0], [1, 1, 1, 0]])
    assert torch.equal(pooled_by(model, ids, mask)[0], torch.zeros(8))
    logits = model(ids, attention_mask=mask)
    assert torch.isfinite(logits).all()
    logits.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_the_gradient_reaches_only_the_winning_real_positions():
    hidden = torch.tensor([[[1.0, 5.0], [3.0, 0.0], [9.0, 9.0]]])
    model = small(d_model=2, num_heads=1)
    model.encoder = FixedEncoder(hidden)
    pooled_by(model, torch.ones(1, 3, dtype=torch.long), torch.tensor([[1, 1, 0]])).sum().backward()
    # feature 0 is won by position 1, feature 1 by position 0; position 2 is padding
    assert model.encoder.hidden.grad.tolist() == [[[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]]


def test_one_logit_and_binary_cross_entropy():
    """The notes train the max-pooled encoder with one logit and binary cross-entropy."""
    torch.manual_seed(0)
    model = tc.TransformerClassifier(20, 1, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                                     pooling="max")
    ids = torch.tensor([[2, 5, 6, 3, 0], [2, 7, 8, 9, 3]])
    logit = model(ids)  # (B, 1)
    assert logit.shape == (2, 1)
    loss = nn.functional.binary_cross_entropy_with_logits(logit[:, 0], torch.tensor([1.0, 0.0]))
    loss.backward()
    assert model.embed.weight.grad is not None and torch.isfinite(loss)


def test_return_attention_and_every_pooling_name():
    for pooling in ("cls", "mean", "max"):
        logits, maps = small(pooling)(torch.tensor([[2, 5, 3, 0]]), return_attention=True)
        assert logits.shape == (1, 3) and len(maps) == 1
    with pytest.raises(ValueError, match="pooling"):
        tc.TransformerClassifier(10, 2, pooling="sum")
