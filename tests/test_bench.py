"""The benchmark script runs (tiny sizes here; timings are the script's job, not the tests')."""

import ast
import json
import re
from pathlib import Path

import pytest
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
    """Plain text for a terminal: every benchmark, which one runs by default, and that
    `dates` takes minutes."""
    with pytest.raises(SystemExit) as stop:
        bench.main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for name in ("attention", "dates", "generate", "all"):
        assert re.search(rf"^  {name} ", out, re.M), name
    assert "takes minutes" in out and "This is the default" in out
    assert "``" not in out and ":func:" not in out  # no reST


def test_generate_benchmark_uses_chapter_10s_model():
    """`bench generate` measures the model that chapter 10 trains, in every language."""
    root = Path(__file__).resolve().parent.parent
    if not (root / "book").is_dir():
        pytest.skip("needs the chapters of a checkout (the sdist ships the package's tests only)")
    for lang in ("en", "fr", "it"):
        cells = json.loads((root / "book" / lang / "10_language_models.ipynb").read_text())["cells"]
        sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        lines = [line for source in sources for line in source.splitlines()
                 if line.startswith("LM_CONFIG = ")]
        assert len(lines) == 1, f"{lang}: {lines}"
        call = ast.parse(lines[0].split("#")[0]).body[0].value
        config = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        assert config == bench.LM_CONFIG, f"{lang}: {config} != {bench.LM_CONFIG}"
