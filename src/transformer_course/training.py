"""A small, reproducible trainer for any device, with tqdm progress bars.

The loop is generic (:func:`fit`); the helpers below it prepare batches and losses for the
two kinds of models of the course: sequence to sequence (:class:`~transformer_course.Transformer`)
and classification (:class:`~transformer_course.TransformerClassifier`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import check_positive_int
from .data import CharTokenizer, WordTokenizer
from .utils import device as best_device
from .utils import seed_everything

__all__ = [
    "History",
    "accuracy",
    "classification_batches",
    "classification_loss",
    "exact_match",
    "fit",
    "seq2seq_batches",
    "seq2seq_loss",
    "warmup_cosine",
]

Batch = tuple[torch.Tensor, ...]


@dataclass
class History:
    """What :func:`fit` measured: the loss of every step and each evaluation."""

    losses: list[float] = field(default_factory=list)
    evaluations: list[tuple[int, float]] = field(default_factory=list)  # (step, metric)
    seconds: float = 0.0
    reached_target: bool = False

    @property
    def steps(self) -> int:
        return len(self.losses)

    @property
    def final_metric(self) -> float | None:
        return self.evaluations[-1][1] if self.evaluations else None


def fit(
    model: nn.Module,
    batches: Sequence[Batch] | Callable[[int], Iterable[Batch]],
    loss_fn: Callable[[nn.Module, Batch], torch.Tensor],
    *,
    epochs: int = 1,
    lr: float = 1e-3,
    optimizer: torch.optim.Optimizer | None = None,
    device: torch.device | str | None = None,
    evaluate: Callable[[nn.Module], float] | None = None,
    eval_every: int = 100,
    target: float | None = None,
    clip_grad: float | None = 1.0,
    schedule: Callable[[int], float] | None = None,
    seed: int | None = 0,
    progress: bool = True,
    desc: str = "training",
) -> History:
    """Train ``model`` and return its :class:`History`.

    Args:
        model: any ``nn.Module``; it is moved to ``device``.
        batches: a list of tensor tuples reused every epoch, or a function
            ``epoch -> iterable of tuples`` (for a fresh shuffle or fresh data each epoch).
        loss_fn: ``(model, batch) -> scalar loss``; the batch is already on the device.
        epochs: passes over ``batches``.
        lr: learning rate of the default Adam optimiser.
        optimizer: use this optimiser instead.
        device: where to train; by default :func:`transformer_course.device`.
        evaluate: ``model -> metric`` called in eval mode every ``eval_every`` steps
            and at the end.
        target: stop as soon as the metric reaches ``target``.
        clip_grad: clip the gradient norm (``None`` to disable).
        schedule: ``step -> factor`` multiplying the learning rate at each step, for
            example :func:`warmup_cosine`.
        seed: seed everything before training (``None`` to leave the RNGs alone).
        progress: show a tqdm progress bar.
        desc: the progress bar's label.
    """
    from tqdm.auto import tqdm

    check_positive_int("epochs", epochs)
    check_positive_int("eval_every", eval_every)
    if seed is not None:
        seed_everything(seed)
    dev = torch.device(device) if device is not None else best_device()
    model.to(dev)
    opt = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, schedule) if schedule else None
    history = History()
    start = time.perf_counter()

    def run_evaluation() -> None:
        model.eval()
        with torch.no_grad():
            metric = float(evaluate(model))
        model.train()
        history.evaluations.append((history.steps, metric))
        if target is not None and metric >= target:
            history.reached_target = True

    total = len(batches) * epochs if isinstance(batches, Sequence) else None
    bar = tqdm(total=total, desc=desc, disable=not progress, leave=True)
    model.train()
    try:
        for epoch in range(epochs):
            epoch_batches = batches if isinstance(batches, Sequence) else batches(epoch)
            for batch in epoch_batches:
                batch = tuple(t.to(dev, non_blocking=True) for t in batch)
                loss = loss_fn(model, batch)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if clip_grad is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
                opt.step()
                if scheduler is not None:
                    scheduler.step()
                history.losses.append(loss.item())
                bar.update(1)
                if evaluate is not None and history.steps % eval_every == 0:
                    run_evaluation()
                    bar.set_postfix(loss=f"{history.losses[-1]:.3f}",
                                    metric=f"{history.evaluations[-1][1]:.3f}")
                    if history.reached_target:
                        return history
                elif history.steps % 10 == 0:
                    bar.set_postfix(loss=f"{history.losses[-1]:.3f}")
        if evaluate is not None and (not history.evaluations
                                     or history.evaluations[-1][0] != history.steps):
            run_evaluation()
        return history
    finally:
        history.seconds = time.perf_counter() - start
        bar.close()
        model.eval()


def warmup_cosine(warmup_steps: int, total_steps: int, *, floor: float = 0.05
                  ) -> Callable[[int], float]:
    """A learning-rate factor that rises linearly for ``warmup_steps``, then follows a
    cosine down to ``floor`` at ``total_steps`` (and stays there)."""
    check_positive_int("warmup_steps", warmup_steps)
    if check_positive_int("total_steps", total_steps) <= warmup_steps:
        raise ValueError(f"total_steps ({total_steps}) must exceed warmup_steps ({warmup_steps})")

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))

    return factor


# --- sequence to sequence -------------------------------------------------------------------

def _chunks(items: Sequence, batch_size: int, shuffle: bool, seed: int) -> Iterator[list]:
    """Consecutive groups of ``batch_size`` items, in a seeded random order if ``shuffle``."""
    check_positive_int("batch_size", batch_size)
    order = list(range(len(items)))
    if shuffle:
        random.Random(seed).shuffle(order)
    for start in range(0, len(order), batch_size):
        yield [items[i] for i in order[start:start + batch_size]]


def seq2seq_batches(
    pairs: Sequence[tuple[str, str]],
    src_tokenizer: CharTokenizer,
    tgt_tokenizer: CharTokenizer,
    batch_size: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
) -> list[Batch]:
    """Cut (source, target) string pairs into padded batches ``(src, tgt_in, tgt_out)``.

    ``tgt_in`` is ``<bos> y1 ... yn`` and ``tgt_out`` is ``y1 ... yn <eos>``: teacher
    forcing feeds the true previous tokens and asks for the next one at every position.
    """
    out = []
    for chunk in _chunks(pairs, batch_size, shuffle, seed):
        src = src_tokenizer.batch([s for s, _ in chunk])
        tgt = tgt_tokenizer.batch([t for _, t in chunk], bos=True, eos=True)
        out.append((src, tgt[:, :-1], tgt[:, 1:]))
    return out


def seq2seq_loss(model: nn.Module, batch: Batch, *, pad_id: int = 0) -> torch.Tensor:
    """Cross-entropy of the next target token, padding ignored."""
    src, tgt_in, tgt_out = batch
    logits = model(src, tgt_in)  # (B, L_t, V)
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id)


@torch.no_grad()
def exact_match(
    model: nn.Module,
    pairs: Sequence[tuple[str, str]],
    src_tokenizer: CharTokenizer,
    tgt_tokenizer: CharTokenizer,
    *,
    batch_size: int = 500,
    max_len: int | None = None,
) -> float:
    """The fraction of ``pairs`` whose greedy decoding equals the target exactly.

    ``model`` needs a ``greedy_decode(src, bos_id=, eos_id=, max_len=)`` method, as
    :class:`~transformer_course.Transformer` has.
    """
    if not pairs:
        raise ValueError("pairs must not be empty")
    dev = next(model.parameters()).device
    limit = max_len or max(len(t) for _, t in pairs) + 1
    hits = 0
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        src = src_tokenizer.batch([s for s, _ in chunk], device=dev)
        out = model.greedy_decode(src, bos_id=tgt_tokenizer.bos_id,
                                  eos_id=tgt_tokenizer.eos_id, max_len=limit)
        decoded = [tgt_tokenizer.decode(row.tolist()) for row in out]
        hits += sum(guess == target for guess, (_, target) in zip(decoded, chunk, strict=True))
    return hits / len(pairs)


# --- classification -------------------------------------------------------------------------

def classification_batches(
    examples: Sequence[tuple[str, int]],
    tokenizer: WordTokenizer,
    batch_size: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
) -> list[Batch]:
    """Cut (text, label) examples into padded batches ``(input_ids, attention_mask, labels)``."""
    out = []
    for chunk in _chunks(examples, batch_size, shuffle, seed):
        ids, mask = tokenizer.batch([text for text, _ in chunk])
        out.append((ids, mask, torch.tensor([label for _, label in chunk])))
    return out


def classification_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the labels."""
    ids, mask, labels = batch
    return F.cross_entropy(model(ids, attention_mask=mask), labels)


@torch.no_grad()
def accuracy(model: nn.Module, batches: Iterable[Batch]) -> float:
    """The fraction of correctly classified examples over ``batches``."""
    dev = next(model.parameters()).device
    right = total = 0
    for ids, mask, labels in batches:
        logits = model(ids.to(dev), attention_mask=mask.to(dev))
        right += int((logits.argmax(-1).cpu() == labels).sum())
        total += labels.numel()
    if total == 0:
        raise ValueError("batches must hold at least one example")
    return right / total
