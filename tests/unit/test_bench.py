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
    for name in ("attention", "classifier", "dates", "generate", "all"):
        assert re.search(rf"^  {name} ", out, re.M), name
    assert "takes minutes" in out and "This is the default" in out
    assert "``" not in out and ":func:" not in out  # no reST


def test_generate_benchmark_uses_chapter_10s_model():
    """`bench generate` measures the model that chapter 10 trains, in every language."""
    root = Path(__file__).resolve().parents[2]
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


def _chapter_8_fit_call(lang):
    """The keywords of the dates lab's training.fit call in chapter 8, and its batch size."""
    root = Path(__file__).resolve().parents[2]
    cells = json.loads((root / "book" / lang / "08_decoder.ipynb").read_text())["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    lab = [s for s in sources if "dates_model = tc.Transformer(" in s]
    assert len(lab) == 1, f"{lang}: {len(lab)} lab cells"
    tree = ast.parse(lab[0])
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and ast.unparse(node.func) in ("training.fit", "tc.Transformer")]
    fit = next(c for c in calls if ast.unparse(c.func) == "training.fit")
    model = next(c for c in calls if ast.unparse(c.func) == "tc.Transformer")
    batches = ast.unparse(fit.args[1])
    return ({k.arg: ast.unparse(k.value) for k in fit.keywords},
            {k.arg: ast.literal_eval(k.value) for k in model.keywords}, batches)


def test_bench_dates_measures_chapter_8s_recipe():
    """`bench dates` trains the model and the recipe of chapter 8's lab, in every language."""
    if not (Path(__file__).resolve().parents[2] / "book").is_dir():
        pytest.skip("needs the chapters of a checkout (the sdist ships the package's tests only)")
    for lang in ("en", "fr", "it"):
        keywords, config, batches = _chapter_8_fit_call(lang)
        assert config == bench.DATES_CONFIG, f"{lang}: {config}"
        recipe = bench.DATES_RECIPE
        assert f", {recipe['batch_size']}, seed=epoch)" in batches, f"{lang}: {batches}"
        assert ast.literal_eval(keywords["lr"]) == recipe["lr"], f"{lang}: {keywords}"
        assert ast.literal_eval(keywords["eval_every"]) == recipe["eval_every"]
        assert keywords["evaluate"] == "teacher_forced_exact_match"
        assert ast.literal_eval(keywords["target"]) == 0.99
        schedule = keywords.get("schedule")
        expected = recipe.get("schedule")
        if expected is None:
            assert schedule is None, f"{lang}: {schedule}"
        else:
            assert schedule == f"training.warmup_cosine({expected[0]}, {expected[1]})", schedule
        assert "optimizer" not in keywords and "clip_grad" not in keywords  # fit's Adam, clip 1


def test_both_dates_recipes_run_and_stop_at_their_target(monkeypatch):
    src_tok, tgt_tok = tc.data.date_tokenizers()
    monkeypatch.setitem(bench.DATES_RECIPE, "eval_every", 2)
    monkeypatch.setitem(bench.PLAIN_RECIPE, "eval_every", 3)
    monkeypatch.setattr(bench, "DATES_TRAIN", 300)
    monkeypatch.setattr(bench, "DATES_HELD_OUT", 20)
    small = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0)
    torch.manual_seed(0)
    lab = bench.train_dates_lab(tc.Transformer(len(src_tok), len(tgt_tok), **small),
                                target=0.0, progress=False)
    plain = bench.train_dates_plain(bench.TorchSeq2Seq(len(src_tok), len(tgt_tok), **small),
                                    target=0.0)
    assert lab.reached_target and lab.steps == 2 and lab.evaluations[-1][0] == 2
    assert plain.reached_target and plain.steps == 3 and plain.evaluations[0][0] == 3
    assert lab.seconds > 0 and plain.seconds > 0


def test_reference_classifier_and_ours_agree_weight_for_weight():
    """`bench classifier` compares the same function: ours with the reference's weights."""
    torch.manual_seed(0)
    reference = bench.TorchClassifier(50, 2, **bench.CLASSIFIER_CONFIG).double().eval()
    ours = bench.copy_into_course_classifier(reference).double().eval()
    ids = torch.randint(1, 50, (3, 9))
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = mask[2, 3:] = False  # padded reviews
    ids[~mask] = 0
    expected = reference(ids, attention_mask=mask)
    got = ours(ids, attention_mask=mask)
    assert (expected - got).abs().max() < 1e-9
    expected.square().sum().backward()
    got.square().sum().backward()
    for mine, theirs in ((ours.embed.weight, reference.embed.weight),
                         (ours.positional.embedding.weight, reference.position.weight),
                         (ours.head.weight, reference.head.weight)):
        assert (mine.grad - theirs.grad).abs().max() < 1e-9


def test_bench_classifier_small_runs_and_reports_its_ratio():
    r = bench.bench_classifier(batches=1, repeats=1)
    assert set(r) == {"nn.TransformerEncoder", "ours", "ratio"}
    assert all(v > 0 for v in r.values())


def test_classifier_benchmark_uses_chapter_7s_lab():
    """`bench classifier` measures the model and the batches of chapter 7's sentiment lab
    (the cell that trains to 99%), in every language."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "book").is_dir():
        pytest.skip("needs the chapters of a checkout (the sdist ships the package's tests only)")
    for lang in ("en", "fr", "it"):
        cells = json.loads((root / "book" / lang / "07_encoder.ipynb").read_text())["cells"]
        sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        lab = [s for s in sources if "tc.TransformerClassifier(" in s and "target=0.99" in s]
        assert len(lab) == 1, f"{lang}: {len(lab)} lab cells"
        calls = [node for node in ast.walk(ast.parse(lab[0])) if isinstance(node, ast.Call)]
        model = next(c for c in calls if ast.unparse(c.func) == "tc.TransformerClassifier")
        config = {k.arg: ast.literal_eval(k.value) for k in model.keywords}
        assert config == bench.CLASSIFIER_CONFIG, f"{lang}: {config}"
        assert [ast.unparse(a) for a in model.args] == ["len(tokenizer)", "2"]
        batches = [c for c in calls if ast.unparse(c.func) == "training.classification_batches"]
        assert [ast.unparse(c.args[2]) for c in batches] == ["64"], lang


def test_cli_device(capsys):
    """`--device cuda` runs on the GPU where there is one, and says why not elsewhere."""
    if torch.cuda.is_available():
        with pytest.raises(SystemExit) as stop:
            bench.main(["dates", "--device", "cuda"])
        assert stop.value.code == 2
        assert "dates runs on the CPU only" in capsys.readouterr().err
        r = bench.bench_generate(new_tokens=8, prompt_length=4, repeats=1, device="cuda")
        assert r["cached tokens/s"] > 0 and r["operators per cached token"] > 0
        r = bench.bench_classifier(batches=1, repeats=1, device="cuda")
        assert r["ratio"] > 0
    else:
        with pytest.raises(SystemExit) as stop:
            bench.main(["generate", "--device", "cuda"])
        assert stop.value.code == 2
        assert "sees no CUDA device" in capsys.readouterr().err
