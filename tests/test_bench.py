"""The benchmark script runs (tiny sizes here; timings are the script's job, not the tests')."""

import torch

import transformer_course as tc
from transformer_course import bench


def test_bench_attention_small_runs_and_reports_ratios():
    r = bench.bench_attention(batch=1, length=16, d_model=32, num_heads=4, repeats=1)
    assert {"fused ratio", "explicit ratio", "nn.MultiheadAttention"} <= set(r)
    assert all(v > 0 for v in r.values())


def test_plain_reference_equals_ours():
    mha = tc.MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    torch.testing.assert_close(bench._PlainAttention(mha)(x), mha(x, x, x)[0])


def test_reference_seq2seq_and_ours_agree_weight_for_weight():
    src_tok, tgt_tok = tc.data.date_tokenizers()
    torch.manual_seed(0)
    reference = bench.TorchSeq2Seq(len(src_tok), len(tgt_tok), **bench.DATES_CONFIG).double()
    ours = bench.copy_into_course_model(reference).double()
    pairs = tc.data.date_pairs(8)
    (src, tgt_in, _), = tc.training.seq2seq_batches(pairs, src_tok, tgt_tok, 8)
    reference.train()
    ours.train()  # dropout is 0: training mode must agree as well
    assert (reference(src, tgt_in) - ours(src, tgt_in)).abs().max() < 1e-9
    reference.eval()
    ours.eval()
    a = reference.greedy_decode(src, bos_id=1, eos_id=2, max_len=11)
    b = ours.greedy_decode(src, bos_id=1, eos_id=2, max_len=11)
    assert torch.equal(a, b)


def test_cli_help(capsys):
    try:
        bench.main(["--help"])
    except SystemExit as stop:
        assert stop.code == 0
    assert "attention" in capsys.readouterr().out
