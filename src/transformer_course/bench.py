"""Benchmarks: ``python -m transformer_course.bench [attention|classifier|dates|generate|all]``.

Timings are taken here, by a script, never inside the tests. Each benchmark interleaves
the implementations it compares in one process so that they see the same machine load.

* ``attention``: forward + backward of multi-head self-attention, B=2, L=1024, d_model=512,
  8 heads, on 2 CPU threads. Ours with ``need_weights=False`` against ``nn.MultiheadAttention``
  (target: within 1.10x), and our weights-returning path against a plain
  matmul-softmax-matmul module with the same projections (target: within 1.20x).
* ``classifier``: forward + backward of chapter 7's sentiment classifier (training mode,
  batches of 64 of its reviews) against the same model around ``nn.TransformerEncoder``,
  with the same weights.
* ``dates``: chapter 8's dates lab, its model trained with its recipe until 99% exact match
  on 500 held-out pairs, against an independent plain recipe: the same-size model built from
  ``nn.Transformer``, AdamW at a constant 3e-3, batches of 64, greedy decoding of the 500
  pairs every 100 steps; both in one run, over three seeds (target: the lab no slower).
* ``generate``: chapter 10's language model writes 256 and 1,024 tokens after a prompt,
  with and without its KV cache, on 1 and on 2 CPU threads: tokens per second of each,
  their ratio (target: the cache at least 10x faster at 1,024 tokens on 1 thread),
  whether they wrote the same tokens, the cached time per token, and the PyTorch operators
  that one cached token costs (counted with a dispatch mode: the same on every machine).

With ``--device cuda``, ``attention``, ``classifier`` and ``generate`` run on the GPU (each
timing waits for the GPU to finish); ``dates`` stays on the CPU, as chapter 8 measures it.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from .data import WordTokenizer, date_pairs, date_tokenizers, sentiment_examples
from .functional import merge_heads, split_heads
from .interop import from_torch
from .layers import MultiHeadAttention
from .lm import LanguageModel
from .models import Transformer, TransformerClassifier
from .positional import SinusoidalPositionalEncoding
from .training import (
    History,
    classification_batches,
    classification_loss,
    exact_match,
    fit,
    seq2seq_batches,
    seq2seq_loss,
    warmup_cosine,
)

__all__ = [
    "CLASSIFIER_CONFIG",
    "DATES_CONFIG",
    "DATES_RECIPE",
    "LM_CONFIG",
    "PLAIN_RECIPE",
    "OperatorCount",
    "TorchClassifier",
    "TorchSeq2Seq",
    "bench_attention",
    "bench_classifier",
    "bench_dates",
    "bench_generate",
    "copy_into_course_classifier",
    "main",
    "operators_per_token",
]


# --- attention ----------------------------------------------------------------------------

class _PlainAttention(nn.Module):
    """The textbook reference: the same projections, then ``softmax(QK^T / sqrt(d)) V``."""

    def __init__(self, mha: MultiHeadAttention) -> None:
        super().__init__()
        self.mha = mha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.mha
        q = split_heads(m.W_q(x), m.num_heads)  # (B, H, L, d_head)
        k = split_heads(m.W_k(x), m.num_heads)
        v = split_heads(m.W_v(x), m.num_heads)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(m.d_head), dim=-1)
        return m.W_o(merge_heads(weights @ v))  # (B, L, d_model)


def _interleaved(fns: dict[str, Callable[[], None]], repeats: int,
                 device: torch.device | str = "cpu") -> dict[str, float]:
    """Median seconds of each function, run in turn ``repeats`` times after a warm-up. On a
    GPU, each timing waits until the GPU has finished the function's work."""
    finish = (torch.cuda.synchronize if torch.device(device).type == "cuda"
              else (lambda: None))
    for fn in fns.values():
        fn()
    finish()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            finish()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def bench_attention(*, batch: int = 2, length: int = 1024, d_model: int = 512,
                    num_heads: int = 8, repeats: int = 15, device: torch.device | str = "cpu"
                    ) -> dict[str, float]:
    """Time forward + backward of the four attention implementations; return medians and
    the two ratios."""
    torch.manual_seed(0)
    reference = nn.MultiheadAttention(d_model, num_heads, batch_first=True).to(device)
    ours = from_torch(reference)
    plain = _PlainAttention(ours)
    x = torch.randn(batch, length, d_model, device=device, requires_grad=True)

    def step(run: Callable[[], torch.Tensor]) -> Callable[[], None]:
        def go() -> None:
            run().sum().backward()
        return go

    medians = _interleaved({
        "nn.MultiheadAttention": step(lambda: reference(x, x, x, need_weights=False)[0]),
        "ours need_weights=False": step(lambda: ours(x, x, x, need_weights=False)[0]),
        "plain matmul-softmax-matmul": step(lambda: plain(x)),
        "ours need_weights=True": step(lambda: ours(x, x, x, need_weights=True)[0]),
    }, repeats, device)
    medians["fused ratio"] = medians["ours need_weights=False"] / medians["nn.MultiheadAttention"]
    medians["explicit ratio"] = (medians["ours need_weights=True"]
                                 / medians["plain matmul-softmax-matmul"])
    return medians


# --- classifier ---------------------------------------------------------------------------

# Chapter 7's sentiment lab: its model (tests/unit/test_bench.py checks that the chapter trains
# exactly this, in every language) and its batches of 64 reviews.
CLASSIFIER_CONFIG = dict(d_model=64, num_heads=4, num_layers=2, d_ff=128, dropout=0.1)


class TorchClassifier(nn.Module):
    """The reference: the embeddings, positions and head of
    :class:`~transformer_course.TransformerClassifier` (``pooling="cls"``, learned
    positions) around PyTorch's ``nn.TransformerEncoder`` (post-norm, ReLU, no final
    LayerNorm, exactly like ours with ``norm_first=False``)."""

    def __init__(self, vocab_size: int, num_classes: int, *, d_model: int, num_heads: int,
                 num_layers: int, d_ff: int, dropout: float, max_len: int = 512) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, batch_first=True),
            num_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, token_ids: torch.Tensor, *, attention_mask: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` ids and mask (True or 1 for real tokens) -> ``(B, num_classes)``."""
        positions = torch.arange(token_ids.shape[1], device=token_ids.device)
        x = self.dropout(self.embed(token_ids) + self.position(positions))  # (B, L, d_model)
        hidden = self.encoder(x, src_key_padding_mask=~attention_mask.bool())  # True = pad
        return self.head(hidden[:, 0])  # the first position, [CLS]


@torch.no_grad()
def copy_into_course_classifier(reference: TorchClassifier) -> TransformerClassifier:
    """Our :class:`~transformer_course.TransformerClassifier` with the reference's weights."""
    ours = TransformerClassifier(reference.embed.num_embeddings, reference.head.out_features,
                                 **CLASSIFIER_CONFIG, max_len=reference.position.num_embeddings)
    ours.embed.weight.copy_(reference.embed.weight)
    ours.positional.embedding.weight.copy_(reference.position.weight)
    ours.head.load_state_dict(reference.head.state_dict())
    ours.encoder = from_torch(reference.encoder)
    return ours.to(reference.head.weight.device)


def bench_classifier(*, batches: int = 10, repeats: int = 15, seed: int = 0,
                     device: torch.device | str = "cpu") -> dict[str, float]:
    """Time forward + backward of chapter 7's classifier, ours against the reference
    around ``nn.TransformerEncoder`` with the same weights, both in training mode (dropout
    on), over the lab's first ``batches`` batches of 64 reviews. Returns the medians per
    batch and their ratio (ours / reference)."""
    examples = sentiment_examples(6000, seed=0)
    tokenizer = WordTokenizer.from_texts(text for text, _ in examples)
    data = [tuple(t.to(device) for t in batch) for batch in
            classification_batches(examples[:5000], tokenizer, 64, seed=0)[:batches]]
    torch.manual_seed(seed)
    reference = TorchClassifier(len(tokenizer), 2, **CLASSIFIER_CONFIG).to(device).train()
    ours = copy_into_course_classifier(reference).train()

    def step(model: nn.Module) -> Callable[[], None]:
        def go() -> None:
            for batch in data:
                classification_loss(model, batch).backward()
        return go

    medians = _interleaved({"nn.TransformerEncoder": step(reference),
                            "ours": step(ours)}, repeats, device)
    results = {name: seconds / len(data) for name, seconds in medians.items()}
    results["ratio"] = medians["ours"] / medians["nn.TransformerEncoder"]
    return results


# --- dates --------------------------------------------------------------------------------

# The dates lab of chapter 8: its model and its recipe (tests/unit/test_bench.py checks that the
# chapter trains exactly this, in every language).
DATES_CONFIG = dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0)
DATES_RECIPE = dict(batch_size=64, lr=3e-3, eval_every=50, schedule=(50, 600))
# The independent plain recipe the lab must not be slower than (issue 21).
PLAIN_RECIPE = dict(batch_size=64, lr=3e-3, eval_every=100)
DATES_TRAIN, DATES_HELD_OUT = 20000, 500


class TorchSeq2Seq(nn.Module):
    """The reference: embeddings and positions as in :class:`~transformer_course.Transformer`
    around PyTorch's ``nn.Transformer``, with the same ``encode`` / ``decode`` /
    ``greedy_decode`` interface (masks in, True = may attend, converted at the boundary)."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, *, d_model: int,
                 num_heads: int, num_layers: int, d_ff: int, dropout: float,
                 pad_id: int = 0) -> None:
        super().__init__()
        self.d_model, self.pad_id = d_model, pad_id
        self.src_embed = nn.Embedding(src_vocab_size, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
        self.positional = SinusoidalPositionalEncoding(d_model)
        self.dropout = nn.Dropout(dropout)
        layer = dict(d_model=d_model, nhead=num_heads, dim_feedforward=d_ff, dropout=dropout,
                     batch_first=True)
        # Post-norm stacks without a final LayerNorm, exactly like ours with norm_first=False.
        self.transformer = nn.Transformer(
            d_model, num_heads, batch_first=True,
            custom_encoder=nn.TransformerEncoder(nn.TransformerEncoderLayer(**layer), num_layers,
                                                 enable_nested_tensor=False),
            custom_decoder=nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), num_layers),
        )
        self.generator = nn.Linear(d_model, tgt_vocab_size)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def _embed(self, tokens: torch.Tensor, table: nn.Embedding) -> torch.Tensor:
        return self.dropout(self.positional(table(tokens) * math.sqrt(self.d_model)))

    def source_mask(self, src: torch.Tensor) -> torch.Tensor:
        return (src != self.pad_id)[:, None, None, :]

    def encode(self, src: torch.Tensor, *, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        keep = self.source_mask(src) if src_mask is None else src_mask
        return self.transformer.encoder(self._embed(src, self.src_embed),
                                        src_key_padding_mask=~keep[:, 0, 0, :])

    def decode(self, tgt: torch.Tensor, memory: torch.Tensor, *,
               src_mask: torch.Tensor) -> torch.Tensor:
        length = tgt.shape[1]
        blocked = torch.ones(length, length, dtype=torch.bool, device=tgt.device).triu(1)
        hidden = self.transformer.decoder(
            self._embed(tgt, self.tgt_embed), memory, tgt_mask=blocked,
            tgt_key_padding_mask=tgt == self.pad_id, memory_key_padding_mask=~src_mask[:, 0, 0, :],
        )
        return self.generator(hidden)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_mask = self.source_mask(src)
        return self.decode(tgt, self.encode(src, src_mask=src_mask), src_mask=src_mask)

    greedy_decode = Transformer.greedy_decode  # the very same decoding loop as ours


@torch.no_grad()
def copy_into_course_model(reference: TorchSeq2Seq) -> Transformer:
    """Our :class:`~transformer_course.Transformer` with the reference's weights."""
    ours = Transformer(reference.src_embed.num_embeddings, reference.tgt_embed.num_embeddings,
                       **{k: v for k, v in DATES_CONFIG.items()}, pad_id=reference.pad_id)
    ours.src_embed.weight.copy_(reference.src_embed.weight)
    ours.tgt_embed.weight.copy_(reference.tgt_embed.weight)
    ours.lm_head.load_state_dict(reference.generator.state_dict())
    ours.encoder = from_torch(reference.transformer.encoder)
    ours.decoder = from_torch(reference.transformer.decoder)
    return ours


def _date_data(seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The lab's 20 000 training pairs and 500 held-out pairs (seed 0 is the chapter's)."""
    return date_pairs(DATES_TRAIN, seed=seed), date_pairs(DATES_HELD_OUT, seed=seed + 10_000)


def train_dates_lab(model: nn.Module, *, seed: int = 0, target: float = 0.99,
                    progress: bool = True, desc: str = "lab") -> History:
    """Chapter 8's recipe, as the chapter runs it: :data:`DATES_RECIPE` with ``fit``'s
    Adam (and its default gradient clipping), a short warm-up and a cosine decay of the
    learning rate (``schedule``: warm-up and total steps), the exact match measured every
    ``eval_every`` steps in one teacher-forced pass over the held-out pairs, which gives
    the greedy decoding's score (chapter 8, section 8.5)."""
    src_tok, tgt_tok = date_tokenizers()
    train, held_out = _date_data(seed)
    held_src, held_in, held_target = seq2seq_batches(held_out, src_tok, tgt_tok, len(held_out),
                                                     shuffle=False)[0]
    batch_size = DATES_RECIPE["batch_size"]

    @torch.no_grad()
    def teacher_forced_exact_match(m: nn.Module) -> float:
        guesses = m(held_src, held_in).argmax(-1)  # (500, 11)
        right = (guesses == held_target) | (held_target == tgt_tok.pad_id)
        return right.all(dim=-1).float().mean().item()

    def batches(epoch: int) -> list[tuple[torch.Tensor, ...]]:
        return seq2seq_batches(train, src_tok, tgt_tok, batch_size, seed=seed + epoch)

    schedule = DATES_RECIPE.get("schedule")
    return fit(model, batches, seq2seq_loss, epochs=10, lr=DATES_RECIPE["lr"], device="cpu",
               schedule=warmup_cosine(*schedule) if schedule else None,
               evaluate=teacher_forced_exact_match, eval_every=DATES_RECIPE["eval_every"],
               target=target, seed=seed, progress=progress, desc=desc)


def train_dates_plain(model: nn.Module, *, seed: int = 0, target: float = 0.99,
                      max_epochs: int = 10) -> History:
    """The independent plain recipe: a bare PyTorch loop with AdamW at a constant learning
    rate, no clipping, no schedule, and greedy decoding of the held-out pairs every
    ``eval_every`` steps (:data:`PLAIN_RECIPE`)."""
    src_tok, tgt_tok = date_tokenizers()
    train, held_out = _date_data(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=PLAIN_RECIPE["lr"])
    history = History()
    start = time.perf_counter()
    model.train()
    for epoch in range(max_epochs):
        for src, tgt_in, tgt_out in seq2seq_batches(train, src_tok, tgt_tok,
                                                    PLAIN_RECIPE["batch_size"], seed=seed + epoch):
            logits = model(src, tgt_in)  # (B, L_t, V)
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(),
                                               ignore_index=tgt_tok.pad_id)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            history.losses.append(loss.item())
            if history.steps % PLAIN_RECIPE["eval_every"] == 0:
                model.eval()
                score = exact_match(model, held_out, src_tok, tgt_tok)  # greedy, 500 pairs
                model.train()
                history.evaluations.append((history.steps, score))
                if score >= target:
                    history.reached_target = True
                    history.seconds = time.perf_counter() - start
                    return history
    history.seconds = time.perf_counter() - start
    return history


def bench_dates(*, seeds: tuple[int, ...] = (0, 1, 2), progress: bool = True
                ) -> dict[str, float]:
    """Train the lab (our model, the lab's recipe) and the plain reference, once per seed.

    The two alternate within each seed (and swap their order from one seed to the next)
    so that they see the same machine load; summing over seeds keeps the luck of one run
    out of the ratio. Returns per-recipe totals (wall-clock seconds, the process's CPU
    seconds, which a busy machine disturbs less, and steps), the lowest final accuracy,
    and the ratios of the lab's totals to the reference's.
    """
    src_tok, tgt_tok = date_tokenizers()
    results = dict.fromkeys(("plain seconds", "lab seconds", "plain steps", "lab steps",
                             "plain cpu seconds", "lab cpu seconds"), 0.0)
    results["plain accuracy"] = results["lab accuracy"] = 1.0
    for seed in seeds:
        torch.manual_seed(seed)
        reference = TorchSeq2Seq(len(src_tok), len(tgt_tok), **DATES_CONFIG)
        torch.manual_seed(seed)
        ours = Transformer(len(src_tok), len(tgt_tok), **DATES_CONFIG)
        order = ("plain", "lab") if seed % 2 == 0 else ("lab", "plain")
        for name in order:
            cpu = time.process_time()
            history = (train_dates_plain(reference, seed=seed) if name == "plain" else
                       train_dates_lab(ours, seed=seed, progress=progress,
                                       desc=f"lab seed {seed}"))
            results[f"{name} cpu seconds"] += time.process_time() - cpu
            results[f"{name} seconds"] += history.seconds
            results[f"{name} steps"] += history.steps
            results[f"{name} accuracy"] = min(results[f"{name} accuracy"],
                                              history.final_metric or 0.0)
    results["runs"] = len(seeds)
    results["ratio"] = results["lab seconds"] / results["plain seconds"]
    results["cpu ratio"] = results["lab cpu seconds"] / results["plain cpu seconds"]
    return results


# --- generate -------------------------------------------------------------------------------

# Chapter 10's language model (tests/unit/test_bench.py checks that the chapter trains this one).
LM_CONFIG = dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0, max_len=320)


class OperatorCount(TorchDispatchMode):
    """Counts the PyTorch operators dispatched inside it (a measure of per-call overhead
    that does not depend on the machine)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        self.calls[str(func)] += 1
        return func(*args, **(kwargs or {}))


@torch.no_grad()
def operators_per_token(model: LanguageModel, prompt: torch.Tensor, *, use_cache: bool = True,
                        tokens: int = 16) -> Counter[str]:
    """The operators that one more generated token costs (sampling included): those of
    ``tokens`` more tokens, divided by ``tokens``, so that the prompt's pass cancels out."""
    counts = []
    for steps in (4, 4 + tokens):
        with OperatorCount() as counter:
            model.generate(prompt, steps, use_cache=use_cache,
                           generator=torch.Generator(device=prompt.device).manual_seed(0))
        counts.append(counter.calls)
    return Counter({name: (counts[1][name] - counts[0][name]) / tokens
                    for name in counts[1] if counts[1][name] != counts[0][name]})


@torch.no_grad()
def bench_generate(*, new_tokens: int | tuple[int, ...] = (256, 1024), prompt_length: int = 16,
                   vocab_size: int = 110, repeats: int = 3, seed: int = 0,
                   threads: tuple[int, ...] = (1, 2), device: torch.device | str = "cpu"
                   ) -> dict[str, float]:
    """Tokens per second of :meth:`LanguageModel.generate` with and without the KV cache.

    Chapter 10's model, with a position table long enough for the longest run. For each
    length of ``new_tokens`` and each thread count, the two are interleaved ``repeats``
    times (medians kept), and both sample with equally seeded generators at temperature
    1, so that they must write the same tokens. The caller's thread count is restored
    afterwards. Also counts the operators of one cached token. Keys end with
    ``, {n} tokens, {t} threads``; the first length's figures on the last thread count
    also go by the plain names (``"speed-up"``, ``"identical"``...). On a GPU the thread
    count does not matter: the figures are measured once per length.
    """
    device = torch.device(device)
    lengths = (new_tokens,) if isinstance(new_tokens, int) else tuple(new_tokens)
    torch.manual_seed(seed)
    config = dict(LM_CONFIG, max_len=max(LM_CONFIG["max_len"], prompt_length + max(lengths)))
    model = LanguageModel(vocab_size, **config).to(device).eval()
    prompt = torch.randint(0, vocab_size, (1, prompt_length),
                           generator=torch.Generator().manual_seed(seed)).to(device)
    outputs: dict[bool, torch.Tensor] = {}

    def run(use_cache: bool, n: int) -> Callable[[], None]:
        def go() -> None:
            generator = torch.Generator(device=device).manual_seed(seed)
            outputs[use_cache] = model.generate(prompt, n, use_cache=use_cache,
                                                generator=generator)
        return go

    def measure(n: int, suffix: str) -> None:
        medians = _interleaved({"with": run(True, n), "without": run(False, n)}, repeats,
                               device)
        results[f"cached tokens/s{suffix}"] = n / medians["with"]
        results[f"uncached tokens/s{suffix}"] = n / medians["without"]
        results[f"speed-up{suffix}"] = medians["without"] / medians["with"]
        results[f"cached us/token{suffix}"] = medians["with"] / n * 1e6
        results[f"identical{suffix}"] = float(torch.equal(outputs[True], outputs[False]))

    results = {"operators per cached token": sum(operators_per_token(model, prompt).values())}
    counts = threads if device.type == "cpu" else (0,)
    caller = torch.get_num_threads()
    try:
        for n in lengths:
            for count in counts:
                if count:
                    torch.set_num_threads(count)
                measure(n, f", {n} tokens" + (f", {count} threads" if count else ""))
    finally:
        torch.set_num_threads(caller)
    plain = f", {lengths[0]} tokens" + (f", {counts[-1]} threads" if counts[-1] else "")
    for name in ("cached tokens/s", "uncached tokens/s", "speed-up", "cached us/token",
                 "identical"):
        results[name] = results[f"{name}{plain}"]
    results["lengths"] = lengths  # type: ignore[assignment]
    return results


def _load_average() -> str:
    """The machine's load (1-minute average, as ``uptime`` shows it) and CPU count."""
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except OSError:  # not on this system
        load = "unknown"
    return f"load average {load} on {os.cpu_count()} CPUs"


_HELP = """\
Benchmarks of the transformer_course package. Timings are taken by this script, never
inside the tests; each benchmark interleaves the implementations it compares in one
process, so that they see the same machine load.

benchmarks:
  attention   forward + backward of multi-head self-attention (B=2, L=1024,
              d_model=512, 8 heads): ours with need_weights=False against
              nn.MultiheadAttention, and our weights-returning path against a plain
              matmul-softmax-matmul module.
  classifier  forward + backward of chapter 7's sentiment classifier (training mode,
              batches of 64 reviews) against the same model around
              nn.TransformerEncoder, with the same weights.
  dates       chapter 8's dates lab (its model and its recipe) trained until 99%
              exact match on 500 held-out dates, against an independent plain recipe
              (nn.Transformer, AdamW at a constant 3e-3, batches of 64, greedy
              decoding every 100 steps), interleaved, over three seeds. It trains
              six models: it takes minutes (several on 2 CPU cores). CPU only.
  generate    chapter 10's language model writing 256 and 1,024 tokens with and
              without its KV cache, on 1 and 2 threads: tokens per second, µs and
              operators per cached token, and whether both wrote the same tokens.
  all         the four, one after the other. This is the default: without a name,
              the benchmark runs all four, dates included (with --device cuda, the
              three others: dates runs on the CPU only).
"""


def _print_generate(r: dict[str, Any], device: torch.device) -> None:
    lengths = r["lengths"]
    print(f"  chapter 10's model ({LM_CONFIG}, max_len for the longest run), "
          f"{' and '.join(map(str, lengths))} tokens after a 16-token prompt, "
          f"{_load_average()} (target: the cache >= 10x at 1,024 tokens on 1 thread, "
          "identical tokens)")
    print(f"  with the cache: {r['operators per cached token']:.0f} PyTorch operators per "
          "token (counted)")
    counts = ((", 1 threads", "1 thread"), (", 2 threads", "2 threads")) if (
        device.type == "cpu") else (("", str(device)),)
    for n in lengths:
        for suffix, where in counts:
            key = f", {n} tokens{suffix}"
            same = "identical tokens" if r[f"identical{key}"] else "different tokens"
            print(f"generate {n} tokens, {where}: {r[f'cached tokens/s{key}']:.0f} tokens/s "
                  f"with the cache ({r[f'cached us/token{key}']:.0f} µs/token), "
                  f"{r[f'uncached tokens/s{key}']:.0f} without, {r[f'speed-up{key}']:.1f}x, "
                  f"{same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.bench", description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example: python -m transformer_course.bench generate --threads 1")
    names = ("attention", "classifier", "dates", "generate", "all")
    parser.add_argument("which", choices=names, nargs="?", default="all", metavar="benchmark",
                        help="attention, classifier, dates, generate or all (default: all, "
                             "which includes the minutes-long dates)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where attention, classifier and generate run (default cpu; "
                             "dates always runs on the CPU)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: this machine's PyTorch sees no CUDA device")
    if args.device == "cuda" and args.which == "dates":
        parser.error("dates runs on the CPU only (use --device cpu, or another benchmark)")
    device = torch.device(args.device)
    torch.set_num_threads(args.threads)
    where = (f"{args.threads} threads" if device.type == "cpu"
             else f"{torch.cuda.get_device_name(device)}, {args.threads} CPU threads")
    print(f"torch {torch.__version__}, {where}")
    if args.which in ("attention", "all"):
        r = bench_attention(device=device)
        for name, value in r.items():
            if not name.endswith("ratio"):
                print(f"  {name:30s} {value * 1e3:8.2f} ms")
        print(f"attention: fused {r['fused ratio']:.2f}x nn.MultiheadAttention (target <= 1.10), "
              f"explicit {r['explicit ratio']:.2f}x plain reference (target <= 1.20)")
    if args.which in ("classifier", "all"):
        r = bench_classifier(device=device)
        print(f"  chapter 7's classifier ({CLASSIFIER_CONFIG}), training mode, on {device}")
        for name in ("nn.TransformerEncoder", "ours"):
            print(f"  {name:30s} {r[name] * 1e3:8.2f} ms per batch of 64")
        print(f"classifier: forward + backward {r['ratio']:.2f}x nn.TransformerEncoder")
    if args.which in ("dates", "all") and device.type == "cpu":
        r = bench_dates(progress=not args.quiet)
        runs = int(r["runs"])
        print(f"  chapter 8's dates lab against the plain recipe, {_load_average()}")
        for name, label in (("plain", "plain nn.Transformer recipe"), ("lab", "the lab's recipe")):
            print(f"  {label:27s} >= {r[name + ' accuracy']:.1%} exact match, on average "
                  f"{r[name + ' steps'] / runs:.0f} steps in {r[name + ' seconds'] / runs:.1f} s "
                  f"(CPU {r[name + ' cpu seconds'] / runs:.1f} s, {runs} seeds)")
        print(f"  reference {r['plain seconds'] / runs:.1f} s, ratio {r['ratio']:.2f}x "
              f"(CPU time {r['cpu ratio']:.2f}x; target <= 1.00)")
        print(f"dates: {r['lab accuracy'] * 100:.1f}% exact match in "
              f"{r['lab seconds'] / runs:.1f} s")
    elif args.which == "all":
        print("  dates: not run with --device cuda (it runs on the CPU only)")
    if args.which in ("generate", "all"):
        _print_generate(bench_generate(device=device), device)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
