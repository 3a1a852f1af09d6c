"""A small, reproducible trainer for any device, with tqdm progress bars.

The loop is generic (:func:`fit`); the helpers below it prepare batches and losses for the
two kinds of models of the course: sequence to sequence (:class:`~transformer_course.Transformer`)
and classification (:class:`~transformer_course.TransformerClassifier`).
"""

from __future__ import annotations

import math
import numbers
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ._checks import (
    check_device,
    check_flag,
    check_int,
    check_positive_int,
    check_real,
    check_tensor,
)
from .data import CharTokenizer, WordTokenizer
from .i18n import format_number, ngettext
from .i18n import gettext as _
from .utils import device as best_device
from .utils import seed_everything, static_build

__all__ = [
    "History",
    "accuracy",
    "classification_batches",
    "classification_loss",
    "exact_match",
    "fit",
    "lm_batches",
    "lm_loss",
    "seq2seq_batches",
    "seq2seq_loss",
    "warmup_cosine",
]

Batch = tuple[torch.Tensor, ...]
"""A batch: a tuple (or list) of tensors, or a dict of them, as a DataLoader yields them."""


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
    batches: Iterable[Batch] | Callable[[int], Iterable[Batch]],
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
    desc: str | None = None,
) -> History:
    """Train ``model`` on ``batches`` for ``epochs`` passes and return its :class:`History`.

    Args:
        model: any ``nn.Module``; it is moved to ``device``.
        batches: what one epoch trains on, any of:

            * a list (or any re-iterable collection) of batches, read again every epoch:
              a ``torch.utils.data.DataLoader`` included, which then shuffles each epoch
              if it was built with ``shuffle=True``;
            * a function ``epoch -> iterable of batches`` (a fresh shuffle or fresh data
              each epoch, as :func:`seq2seq_batches` with ``seed=epoch`` gives);
            * a generator or another one-shot iterator, for ``epochs=1`` only.

            A batch is a tuple (or list) of tensors, or a dict whose tensors are moved
            (what a ``DataLoader`` yields from tuples or dicts).
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
        progress: show a tqdm progress bar in Jupyter, Colab or a terminal. In the book
            build (a static page, :func:`~transformer_course.utils.static_build`), no bar is
            drawn: one line sums the run up at the end (steps, time, device, last loss and
            metric), as a live bar's redraws would otherwise each leave a line on the page.
        desc: the progress bar's label (default: "training" in the reader's language).

    Returns:
        The :class:`History` of the run: ``losses`` (one per step), ``evaluations``
        (``(step, metric)`` pairs), ``seconds``, ``reached_target``, and the properties
        ``steps`` and ``final_metric``.

    The model is trained in place and left **in eval mode** (``model.eval()``) on
    ``device``, ready to evaluate or generate: call ``model.train()`` before training it
    further with a loop of your own (``fit`` itself switches to training mode).
    """
    from tqdm.std import tqdm  # text, not a widget: the same in Colab, Jupyter and the book

    _check_fit_args(model, batches, loss_fn, epochs, lr, optimizer, evaluate, eval_every,
                    target, clip_grad, schedule, seed, progress, desc)
    dev = _training_device(device)
    if seed is not None:
        seed_everything(seed)
    model.to(dev)
    opt = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, schedule) if schedule else None
    size = None if callable(batches) else _epoch_size(batches)
    if size == 0:
        raise ValueError(f"batches must hold at least one batch, got an empty "
                         f"{type(batches).__name__}")
    summary = progress and static_build()  # a static page: one line at the end, no bar
    bar = _progress_bar(tqdm, None if size is None else size * epochs, desc,
                        disable=not progress or summary)
    history = History()
    start = time.perf_counter()
    model.train()
    try:
        for epoch in range(epochs):
            first = history.steps
            for batch in batches(epoch) if callable(batches) else batches:
                batch = _batch_to(batch, dev, history.steps)
                history.losses.append(
                    _train_step(model, batch, loss_fn, opt, scheduler, clip_grad, history.steps))
                bar.update(1)
                if evaluate is not None and history.steps % eval_every == 0:
                    _evaluate(model, evaluate, target, history)
                    bar.set_postfix(_postfix(history.losses[-1], history.final_metric))
                    if history.reached_target:
                        return history
                elif history.steps % 10 == 0:
                    bar.set_postfix(_postfix(history.losses[-1]))
            if history.steps == first:
                raise ValueError(f"batches gave no batch in epoch {epoch + 1} of {epochs}: "
                                 "an iterator read up by an earlier epoch? Pass a list, a "
                                 "DataLoader or a function epoch -> batches")
        if evaluate is not None and (not history.evaluations
                                     or history.evaluations[-1][0] != history.steps):
            _evaluate(model, evaluate, target, history)
        return history
    finally:
        history.seconds = time.perf_counter() - start
        bar.close()
        model.eval()
        if summary:
            sys.stdout.write(_summary(history, desc, dev) + "\n")
            sys.stdout.flush()


def _train_step(model: nn.Module, batch: Batch | dict,
                loss_fn: Callable[[nn.Module, Batch], torch.Tensor],
                opt: torch.optim.Optimizer, scheduler: Any, clip_grad: float | None,
                step: int) -> float:
    """One step of gradient descent on ``batch``; returns its loss."""
    loss = _checked_loss(loss_fn(model, batch), step)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if clip_grad is not None:
        nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
    opt.step()
    if scheduler is not None:
        scheduler.step()
    return loss.item()


def _evaluate(model: nn.Module, evaluate: Callable[[nn.Module], float],
              target: float | None, history: History) -> None:
    """Measure ``evaluate(model)`` in eval mode, without gradients, into ``history``."""
    model.eval()
    with torch.no_grad():
        metric = _metric(evaluate(model))
    model.train()
    history.evaluations.append((history.steps, metric))
    history.reached_target = target is not None and metric >= target


def _training_device(device: object) -> torch.device:
    """The device to train on: ``device`` checked, or the best one here."""
    checked = check_device("device", device)
    if checked is None:
        return best_device()
    if checked.type == "meta":
        raise ValueError("device='meta' holds no values: training needs 'cpu', 'cuda' or 'mps'")
    return torch.device(checked)


def _progress_bar(tqdm: type, total: int | None, desc: str | None, *, disable: bool) -> Any:
    """A text progress bar whose words and layout follow the reader's language."""
    if total is None:
        layout = _("{desc}: {n_fmt} steps [{elapsed}{postfix}]")
    else:
        layout = _("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} steps "
                   "[{elapsed}<{remaining}{postfix}]")
    return tqdm(total=total, desc=_("training") if desc is None else desc, disable=disable,
                leave=True, bar_format=layout, file=sys.stdout, mininterval=0.5)


def _summary(history: History, desc: str | None, dev: torch.device) -> str:
    """The one line a training run leaves on a static page, in the reader's language."""
    line = ngettext("{desc}: {steps} step in {seconds} s on {device}",
                    "{desc}: {steps} steps in {seconds} s on {device}", history.steps).format(
        desc=_("training") if desc is None else desc, steps=format_number(history.steps),
        seconds=format_number(history.seconds, 1), device=dev.type)
    shown = _postfix(history.losses[-1], history.final_metric) if history.losses else {}
    return line + "".join(f", {name} {value}" for name, value in shown.items())


def _postfix(loss: float, metric: float | None = None) -> dict[str, str]:
    """The numbers after the bar, named and written in the reader's language."""
    shown = {_("loss"): format_number(loss, 3)}
    if metric is not None:
        shown[_("metric")] = format_number(metric, 3)
    return shown


def _check_fit_args(model: object, batches: object, loss_fn: object, epochs: int, lr: object,
                    optimizer: object, evaluate: object, eval_every: int, target: object,
                    clip_grad: object, schedule: object, seed: object, progress: object,
                    desc: object) -> None:
    """The argument checks of :func:`fit`, before anything is moved or trained."""
    check_positive_int("epochs", epochs)
    check_positive_int("eval_every", eval_every)
    if epochs > 1 and isinstance(batches, Iterator) and not callable(batches):
        raise ValueError(_one_shot(batches, epochs))
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if optimizer is None and not any(p.requires_grad for p in model.parameters()):
        raise ValueError(f"model ({type(model).__name__}) has no trainable parameters")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got "
                        f"{type(optimizer).__name__}")
    if isinstance(batches, torch.Tensor):
        raise TypeError(f"batches must be a list of batches, got one tensor of shape "
                        f"{tuple(batches.shape)}: wrap a single batch as [(inputs, targets)]")
    if isinstance(batches, (str, bytes, Mapping)) or not (isinstance(batches, Iterable)
                                                          or callable(batches)):
        raise TypeError("batches must be a list of tensor tuples, a DataLoader (any iterable "
                        "of batches) or a function epoch -> batches, got "
                        f"{type(batches).__name__}")
    for name, fn in (("loss_fn", loss_fn), ("evaluate", evaluate), ("schedule", schedule)):
        if fn is not None and not callable(fn):
            raise TypeError(f"{name} must be a function, got {type(fn).__name__}")
    if loss_fn is None:
        raise TypeError("loss_fn must be a function (model, batch) -> loss, got None")
    check_real("lr", lr, low=0.0, high=1e3, low_open=True)
    if target is not None:
        check_real("target", target)
    if clip_grad is not None:
        check_real("clip_grad", clip_grad, low=0.0, low_open=True)
    if seed is not None:
        check_int("seed", seed)
    check_flag("progress", progress)
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f"desc must be a str, got {type(desc).__name__}")


def _epoch_size(batches: Iterable) -> int | None:
    """How many batches one epoch holds, when the collection knows (a list, a DataLoader
    over a map-style dataset); None otherwise (a generator, an iterable dataset)."""
    if not isinstance(batches, Sized):
        return None
    try:
        return len(batches)
    except TypeError:  # a DataLoader over an IterableDataset has no length
        return None


def _one_shot(batches: object, epochs: int) -> str:
    return (f"batches is a one-shot iterator ({type(batches).__name__}), empty after the first "
            f"epoch, but epochs={epochs}: pass a list (list(batches)), a DataLoader, or a "
            "function epoch -> batches")


def _batch_to(batch: object, dev: torch.device, step: int) -> Batch | dict:
    """Move one batch (a tuple of tensors, or a dict of them) to the training device."""
    if isinstance(batch, Mapping):
        return {k: v.to(dev, non_blocking=True) if isinstance(v, torch.Tensor) else v
                for k, v in batch.items()}
    if not isinstance(batch, (tuple, list)) or not all(
            isinstance(t, torch.Tensor) for t in batch):
        raise TypeError(f"batches must yield tuples of tensors; batch {step} is "
                        f"{type(batch).__name__}"
                        + (f" of {[type(t).__name__ for t in batch]}"
                           if isinstance(batch, (tuple, list)) else ""))
    return tuple(t.to(dev, non_blocking=True) for t in batch)


def _checked_loss(loss: object, step: int) -> torch.Tensor:
    """The loss of step ``step``: a finite scalar tensor with a gradient."""
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        got = (f"a tensor of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor)
               else type(loss).__name__)
        raise TypeError(f"loss_fn must return a scalar tensor, got {got} at step {step}")
    if not loss.requires_grad:
        raise ValueError(f"loss_fn returned a loss without gradient at step {step}: compute it "
                         "from the model's output, outside torch.no_grad()")
    if not bool(torch.isfinite(loss.detach()).all()):
        raise ValueError(f"loss_fn returned {loss.item()} at step {step}: training diverged; "
                         "try a smaller lr or keep clip_grad")
    return loss.reshape(())


def _metric(value: object) -> float:
    """What ``evaluate`` returned, as a float."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"evaluate must return a number, got {type(value).__name__}")
    return float(value)


def warmup_cosine(warmup_steps: int, total_steps: int, *, floor: float = 0.05
                  ) -> Callable[[int], float]:
    """A learning-rate factor that rises linearly for ``warmup_steps``, then follows a
    cosine down to ``floor`` (in ``[0, 1]``) at ``total_steps`` (and stays there)."""
    check_real("floor", floor, low=0.0, high=1.0)
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
    check_flag("shuffle", shuffle)
    check_int("seed", seed)
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
    _check_pairs("pairs", pairs, (str, str))
    _check_tokenizer("src_tokenizer", src_tokenizer)
    _check_tokenizer("tgt_tokenizer", tgt_tokenizer)
    out = []
    for chunk in _chunks(pairs, batch_size, shuffle, seed):
        src = src_tokenizer.batch([s for s, _ in chunk])
        tgt = tgt_tokenizer.batch([t for _, t in chunk], bos=True, eos=True)
        out.append((src, tgt[:, :-1], tgt[:, 1:]))
    return out


def seq2seq_loss(model: nn.Module, batch: Batch, *, pad_id: int = 0) -> torch.Tensor:
    """Cross-entropy of the next target token, padding ignored."""
    src, tgt_in, tgt_out = _unpack("batch", batch, ("src", "tgt_in", "tgt_out"))
    check_int("pad_id", pad_id)
    logits = model(src, tgt_in)  # (B, L_t, V)
    _check_logits("model(src, tgt_in)", logits, tgt_out, ignore=pad_id)
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
    _check_pairs("pairs", pairs, (str, str))
    if not pairs:
        raise ValueError("pairs must not be empty")
    if not callable(getattr(model, "greedy_decode", None)):
        raise TypeError(f"model must have a greedy_decode method, got {type(model).__name__}")
    _check_tokenizer("src_tokenizer", src_tokenizer)
    _check_tokenizer("tgt_tokenizer", tgt_tokenizer)
    check_positive_int("batch_size", batch_size)
    if max_len is not None:
        check_positive_int("max_len", max_len)
    dev = _device_of(model)
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


# --- language models ------------------------------------------------------------------------

def lm_batches(
    ids: torch.Tensor,
    block_size: int,
    batch_size: int,
    num_batches: int,
    *,
    seed: int = 0,
) -> list[Batch]:
    """Random windows of a long text for next-token prediction: ``(inputs, targets)``.

    Each window of ``block_size + 1`` consecutive ids gives the inputs (all but the last)
    and the targets (all but the first): position ``t`` of the inputs must predict
    position ``t`` of the targets, the next token.

    Args:
        ids: ``(N,)`` the whole text as ids, ``N > block_size``.
        block_size: the context length the model trains on.
        batch_size: windows per batch.
        num_batches: batches returned.
        seed: the same seed gives the same windows.

    Returns:
        ``num_batches`` pairs of ``(batch_size, block_size)`` long tensors.
    """
    check_tensor("ids", ids, ndim=1, integer=True)
    block = check_positive_int("block_size", block_size)
    rows = check_positive_int("batch_size", batch_size)
    count = check_positive_int("num_batches", num_batches)
    seed = check_int("seed", seed)
    if ids.shape[0] <= block:
        raise ValueError(f"ids must be longer than block_size={block}, got shape "
                         f"{tuple(ids.shape)}")
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, ids.shape[0] - block, (count, rows), generator=generator)
    windows = ids.long().cpu()[starts[..., None] + torch.arange(block + 1)]  # (n, B, block+1)
    return [(w[:, :-1], w[:, 1:]) for w in windows]


def lm_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the next token at every position of ``(inputs, targets)``."""
    inputs, targets = batch
    logits = model(inputs)  # (B, L, V)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


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
    _check_pairs("examples", examples, (str, numbers.Integral))
    _check_tokenizer("tokenizer", tokenizer, WordTokenizer)
    out = []
    for chunk in _chunks(examples, batch_size, shuffle, seed):
        ids, mask = tokenizer.batch([text for text, _ in chunk])
        out.append((ids, mask, torch.tensor([label for _, label in chunk])))
    return out


def classification_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the labels."""
    ids, mask, labels = _unpack("batch", batch, ("input_ids", "attention_mask", "labels"))
    logits = model(ids, attention_mask=mask)  # (B, C)
    _check_logits("model(input_ids, attention_mask=...)", logits, labels)
    return F.cross_entropy(logits, labels)


@torch.no_grad()
def accuracy(model: nn.Module, batches: Iterable[Batch]) -> float:
    """The fraction of correctly classified examples over ``batches``."""
    dev = _device_of(model)
    if isinstance(batches, (str, bytes, torch.Tensor)) or not isinstance(batches, Iterable):
        raise TypeError(f"batches must be a list of (input_ids, attention_mask, labels), got "
                        f"{type(batches).__name__}")
    right = total = 0
    for batch in batches:
        ids, mask, labels = _unpack("batches[...]", batch,
                                    ("input_ids", "attention_mask", "labels"))
        logits = model(ids.to(dev), attention_mask=mask.to(dev))
        _check_logits("model(input_ids, attention_mask=...)", logits, labels)
        right += int((logits.argmax(-1).cpu() == labels).sum())
        total += labels.numel()
    if total == 0:
        raise ValueError("batches must hold at least one example")
    return right / total


# --- argument checks -------------------------------------------------------------------------

def _check_pairs(name: str, pairs: object, kinds: tuple[type, type]) -> None:
    """Check a sequence of 2-tuples whose items have the given types."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise TypeError(f"{name} must be a list of pairs, got {type(pairs).__name__}")
    for i, pair in enumerate(pairs):
        ok = (isinstance(pair, (tuple, list)) and len(pair) == 2
              and all(isinstance(item, kind) and not isinstance(item, bool)
                      for item, kind in zip(pair, kinds, strict=True)))
        if not ok:
            want = ", ".join(kind.__name__.replace("Integral", "int") for kind in kinds)
            raise TypeError(f"{name}[{i}] must be a pair ({want}), got {pair!r}")


def _check_tokenizer(name: str, tokenizer: object, kind: type = CharTokenizer) -> None:
    if not isinstance(tokenizer, kind):
        raise TypeError(f"{name} must be a {kind.__name__}, got {type(tokenizer).__name__}")


def _device_of(model: object) -> torch.device:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    first = next(model.parameters(), None)
    if first is None:
        raise ValueError(f"model ({type(model).__name__}) has no parameters")
    return first.device


def _unpack(name: str, batch: object, fields: tuple[str, ...]) -> tuple[torch.Tensor, ...]:
    """Check a batch: a tuple of as many tensors as ``fields``."""
    if (not isinstance(batch, (tuple, list)) or len(batch) != len(fields)
            or not all(isinstance(t, torch.Tensor) for t in batch)):
        raise TypeError(f"{name} must be a tuple of {len(fields)} tensors "
                        f"({', '.join(fields)}), got {type(batch).__name__}")
    return tuple(batch)


def _check_logits(name: str, logits: object, labels: torch.Tensor, *,
                  ignore: int | None = None) -> None:
    """Check that ``logits`` ``(..., V)`` go with integer ``labels`` ``(...)`` in ``[0, V)``
    (or equal to ``ignore``)."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError(f"{name} must return floating logits, got {type(logits).__name__}")
    if logits.shape[:-1] != labels.shape:
        raise ValueError(f"{name} returned logits of shape {tuple(logits.shape)}, which do not "
                         f"match the labels of shape {tuple(labels.shape)}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise TypeError(f"the labels must be integer class ids, got dtype {labels.dtype}")
    if labels.device.type != "meta" and labels.numel():
        used = labels if ignore is None else labels[labels != ignore]
        size = logits.shape[-1]
        if used.numel() and (int(used.min()) < 0 or int(used.max()) >= size):
            bad = int(used.min()) if int(used.min()) < 0 else int(used.max())
            raise ValueError(f"the labels hold the class {bad}, outside the {size} classes of "
                             f"{name}")
