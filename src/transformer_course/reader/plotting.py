"""Pictures of attention: heatmaps with token labels, per-head grids, encodings, vectors.

Every function returns a matplotlib ``Figure`` (closed from pyplot's registry, so notebooks
show it once and scripts leak nothing); pass ``ax=`` to draw into an existing axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .._checks import check_flag, check_positive_int, check_real, check_tensor, has_data, shape_of
from .._optional import missing

try:
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
except ModuleNotFoundError as error:  # a core install: say which extra brings matplotlib
    raised = missing(error, "transformer_course.plotting", "plot", ("matplotlib", "numpy"))
    if raised is error:
        raise
    raise raised from error

from ..i18n import format_number, localise_matplotlib
from ..i18n import gettext as _

__all__ = ["attention_heads", "attention_heatmap", "encoding_heatmap", "vectors_plot"]

localise_matplotlib()  # tick labels in the reader's language (0,5 in French)


def _as_matrix(name: str, x: torch.Tensor, ndim: int) -> torch.Tensor:
    check_tensor(name, x, ndim=ndim)
    if x.is_complex():
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    if not has_data(x):
        raise ValueError(f"{name} is a meta tensor: it has a shape but no values to draw")
    if not x.numel():
        raise ValueError(f"{name} is empty (shape {shape_of(x)}): there is nothing to draw")
    x = x.detach().to("cpu", torch.float64)
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} holds NaN or infinite values (shape {shape_of(x)})")
    return x


def _check_labels(name: str, labels: Sequence[str] | None, size: int) -> list[str] | None:
    """Check one label per row (or column, or head); return them as strings."""
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise TypeError(f"{name} must be a list of labels, got {type(labels).__name__}")
    if len(labels) != size:
        raise ValueError(f"{name} has {len(labels)} labels but the weights have {size} entries")
    return [str(label) for label in labels]


def _axis_labels(tokens: Sequence[str] | None, queries: Sequence[str] | None,
                 keys: Sequence[str] | None) -> tuple[Sequence[str] | None, Sequence[str] | None]:
    """``tokens=`` labels both axes (self-attention, as the explorers take it); ``queries=``
    and ``keys=`` label each axis on its own (cross-attention)."""
    if tokens is None:
        return queries, keys
    if queries is not None or keys is not None:
        raise ValueError("give tokens (the labels of both axes) or queries and keys, not both")
    return tokens, tokens


def _check_text(name: str, text: object) -> None:
    if text is not None and not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")


def _check_cmap(cmap: object) -> None:
    import matplotlib
    from matplotlib.colors import Colormap

    if isinstance(cmap, Colormap):
        return
    if not isinstance(cmap, str) or cmap not in matplotlib.colormaps:
        raise ValueError(f"cmap must be the name of a matplotlib colour map such as 'Blues', "
                         f"got {cmap!r}")


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        if not isinstance(ax, Axes):
            raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize)
    plt.close(fig)
    return fig, ax


def attention_heatmap(
    weights: torch.Tensor,
    *,
    tokens: Sequence[str] | None = None,
    queries: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "Blues",
    vmax: float | None = 1.0,
) -> Figure:
    """One attention matrix: a row per query, a column per key.

    Args:
        weights: ``(L_q, L_k)`` attention weights.
        tokens: the labels of both the rows and the columns (self-attention: the queries
            and the keys are the same tokens), as the explorers take them.
        queries, keys: labels for the rows and the columns, when they differ
            (cross-attention); not together with ``tokens``.
        ax: draw here instead of in a new figure.
        title: axes title.
        annotate: write each weight in its cell (default: when the matrix is small).
        cmap: colour map.
        vmax: value of the darkest colour (1 for weights; ``None`` to use the maximum).
    """
    w = _as_matrix("weights", weights, 2)
    n_q, n_k = w.shape
    queries, keys = _axis_labels(tokens, queries, keys)
    queries = _check_labels("tokens" if tokens is not None else "queries", queries, n_q)
    keys = _check_labels("tokens" if tokens is not None else "keys", keys, n_k)
    _check_text("title", title)
    if annotate is not None:
        check_flag("annotate", annotate)
    _check_cmap(cmap)
    if vmax is not None:
        vmax = check_real("vmax", vmax, low=0.0, low_open=True)
    fig, ax = _new_axes(ax, (1.0 + 0.55 * n_k, 0.8 + 0.45 * n_q))
    image = ax.imshow(w.numpy(), cmap=cmap, vmin=0.0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(n_k), keys if keys is not None else range(n_k),
                  rotation=90 if keys is not None and max(map(len, keys), default=0) > 3 else 0)
    ax.set_yticks(range(n_q), queries if queries is not None else range(n_q))
    ax.set_xlabel(_("keys"))
    ax.set_ylabel(_("queries"))
    if title:
        ax.set_title(title)
    if annotate is None:
        annotate = n_q * n_k <= 100
    if annotate:
        top = vmax if vmax is not None else float(w.max())
        for i in range(n_q):
            for j in range(n_k):
                value = float(w[i, j])
                ax.text(j, i, format_number(value, 2), ha="center", va="center", fontsize=8,
                        color="white" if value > 0.6 * top else "black")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return fig


def attention_heads(
    weights: torch.Tensor,
    *,
    tokens: Sequence[str] | None = None,
    queries: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
    titles: Sequence[str] | None = None,
    columns: int = 4,
    cmap: str = "Blues",
) -> Figure:
    """A grid with one heatmap per head.

    Args:
        weights: ``(H, L_q, L_k)`` (one example's heads) weights.
        tokens: the labels of both axes (self-attention).
        queries, keys: labels of the rows and the columns, when they differ.
        titles: one title per head (default "head 0", "head 1", ...).
        columns: heads per row of the grid.
    """
    w = _as_matrix("weights", weights, 3)
    heads, n_q, n_k = w.shape
    queries, keys = _axis_labels(tokens, queries, keys)
    queries = _check_labels("tokens" if tokens is not None else "queries", queries, n_q)
    keys = _check_labels("tokens" if tokens is not None else "keys", keys, n_k)
    titles = _check_labels("titles", titles, heads)
    _check_cmap(cmap)
    cols = max(1, min(check_positive_int("columns", columns), heads))
    rows = -(-heads // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(0.4 * n_k * cols + 1.5, 0.4 * n_q * rows + 1.2),
                             squeeze=False, constrained_layout=True)
    plt.close(fig)
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.axis("off")
            continue
        ax.imshow(w[h].numpy(), cmap=cmap, vmin=0.0, vmax=1.0)
        name = titles[h] if titles is not None else _("head {number}").format(number=h)
        ax.set_title(name, fontsize=9)
        ax.set_xticks(range(n_k), keys if keys is not None else range(n_k), rotation=90,
                      fontsize=7)
        ax.set_yticks(range(n_q), queries if queries is not None else range(n_q), fontsize=7)
    return fig


def encoding_heatmap(
    encoding: torch.Tensor,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    cmap: str = "RdBu_r",
) -> Figure:
    """A positional encoding table: positions down, dimensions across, colours scaled to the
    largest absolute value (1 for the sinusoidal encoding).

    Args:
        encoding: ``(L, d_model)``, for example :func:`transformer_course.sinusoidal_encoding`.
        ax: draw here instead of in a new figure.
        title: axes title; by default "positional encoding" in the reader's language, and
            ``""`` for none.
        cmap: a diverging colour map.
    """
    e = _as_matrix("encoding", encoding, 2)
    _check_text("title", title)
    _check_cmap(cmap)
    fig, ax = _new_axes(ax, (7.0, 4.0))
    limit = float(e.abs().max()) or 1.0  # a learned table has small values: use its own scale
    image = ax.imshow(e.numpy(), cmap=cmap, vmin=-limit, vmax=limit, aspect="auto",
                      interpolation="nearest")
    ax.set_xlabel(_("dimension"))
    ax.set_ylabel(_("position"))
    if title is None:
        title = _("positional encoding")
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return fig


def vectors_plot(
    vectors: torch.Tensor,
    *,
    labels: Sequence[str] | None = None,
    highlight: torch.Tensor | None = None,
    highlight_label: str | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """2-D vectors as arrows from the origin, for small worked examples of ``h = X a``.

    Args:
        vectors: ``(n, 2)`` points, one arrow each (the columns x_i of X).
        labels: a name per vector.
        highlight: an optional ``(2,)`` vector drawn in red (the output h).
        highlight_label: its name (default: "output" in the reader's language).
    """
    v = _as_matrix("vectors", vectors, 2)
    if v.shape[1] != 2:
        raise ValueError(f"vectors must be (n, 2) to be drawn in the plane, got {shape_of(v)}")
    labels = _check_labels("labels", labels, v.shape[0])
    _check_text("title", title)
    _check_text("highlight_label", highlight_label)
    h = None
    if highlight is not None:
        check_tensor("highlight", highlight)
        if highlight.numel() != 2:
            raise ValueError(f"highlight must hold 2 numbers, got shape {shape_of(highlight)}")
        h = _as_matrix("highlight", highlight.reshape(1, 2), 2)
    largest = max(float(v.abs().max()), 0.0 if h is None else float(h.abs().max()))
    if largest > 1e300:
        raise ValueError(f"vectors hold values as large as {largest:.3g}, too large to draw")
    fig, ax = _new_axes(ax, (4.5, 4.5))
    points = [v]
    for i, (x, y) in enumerate(v.tolist()):
        ax.annotate("", xy=(x, y), xytext=(0, 0),
                    arrowprops=dict(arrowstyle="->", color="tab:blue", lw=1.5))
        ax.text(x, y, f" {labels[i] if labels is not None else f'x{i + 1}'}", color="tab:blue")
    if h is not None:
        points.append(h)
        ax.annotate("", xy=tuple(h[0].tolist()), xytext=(0, 0),
                    arrowprops=dict(arrowstyle="->", color="tab:red", lw=2.5))
        name = _("output") if highlight_label is None else highlight_label
        ax.text(*h[0].tolist(), f" {name}", color="tab:red", fontweight="bold")
    every = torch.cat(points)
    span = float(every.abs().max()) * 1.25 or 1.0
    ax.set_xlim(-span, span)
    ax.set_ylim(-span, span)
    ax.axhline(0, color="0.8", lw=0.8)
    ax.axvline(0, color="0.8", lw=0.8)
    ax.set_aspect("equal")
    if title:
        ax.set_title(title)
    return fig
