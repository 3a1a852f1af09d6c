"""Explorers: interactive pictures of attention for β, heads and masks.

Each explorer shows a picture driven by two controls. It works in two settings:

* **with a kernel** (Jupyter, Colab): moving a control recomputes the attention with PyTorch
  on :func:`transformer_course.device` (``explorer.result`` holds the tensors) and redraws;
* **on the static page of the book**: every combination of the controls is rendered in
  advance into a stack of images, and the controls are tied to the stacks with ``jslink``,
  a link that runs in the browser, so the picture still follows the slider with no kernel.

No setting produces NaN or an empty picture: β = 0 is uniform attention, a huge β is
finite (and tends to hard attention), and a query whose keys are all masked gets zero
weights and a zero output, drawn as such.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from ._checks import check_tensor, shape_of
from .functional import attention, causal_mask
from .layers import MultiHeadAttention
from .plotting import attention_heatmap
from .utils import device as best_device

__all__ = ["BETAS", "Explorer", "beta_explorer", "heads_explorer", "masks_explorer"]

BETAS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 50.0, 1000.0)
_DPI = 72


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


class Explorer:
    """A picture driven by an outer and an inner control, live or precomputed.

    Args:
        outer: a selection widget (``ToggleButtons``, ``SelectionSlider``, ...).
        inner: a selection widget whose meaning may depend on the outer choice.
        compute: ``(outer value, inner value) -> dict of tensors`` (the maths, on a device).
        draw: ``(outer value, inner value, computed dict) -> Figure``.
        uses_inner: ``outer value -> bool``; when False the inner control has no effect
            for that outer choice, and a single frame is stored for it.
        frame_key: ``(outer value, inner value) -> key``; settings with equal keys show
            the same picture, which is then drawn once.
        caption: text shown above the controls.

    Attributes:
        widget: the ipywidgets ``VBox`` to display.
        result: the tensors computed for the current setting (moved to the CPU).
    """

    def __init__(
        self,
        outer: W.widgets.widget_selection._Selection,
        inner: W.widgets.widget_selection._Selection,
        compute: Callable[[Any, Any], dict[str, torch.Tensor]],
        draw: Callable[[Any, Any, dict[str, torch.Tensor]], Figure],
        *,
        uses_inner: Callable[[Any], bool] = lambda _: True,
        frame_key: Callable[[Any, Any], Any] | None = None,
        caption: str = "",
    ) -> None:
        self.outer, self.inner = outer, inner
        self._compute, self._draw, self._uses_inner = compute, draw, uses_inner
        self._frame_key = frame_key or (lambda o, i: (o, i))
        self._rendered: dict[Any, bytes] = {}  # frames that look alike are drawn once
        self.frames: list[W.Widget] = []
        self.links: list[W.Link] = []
        for outer_value in self._values(outer):
            if uses_inner(outer_value):
                images = [self._image(outer_value, v) for v in self._values(inner)]
                frame: W.Widget = W.Stack(images, selected_index=inner.index)
                self.links.append(W.jslink((inner, "index"), (frame, "selected_index")))
            else:
                frame = self._image(outer_value, inner.value)
            self.frames.append(frame)
        self.stack = W.Stack(self.frames, selected_index=outer.index)
        self.links.append(W.jslink((outer, "index"), (self.stack, "selected_index")))
        parts = [W.HTML(caption)] if caption else []
        self.widget = W.VBox([*parts, W.HBox([outer]), W.HBox([inner]), self.stack],
                             layout=W.Layout(width="100%"))
        self.widget.add_class("tc-explorer")
        self.result = self.compute()
        outer.observe(self._on_change, names="index")
        inner.observe(self._on_change, names="index")

    @staticmethod
    def _values(control: W.Widget) -> list[Any]:
        return [value for _, value in control._options_full]

    def _image(self, outer_value: Any, inner_value: Any) -> W.Image:
        key = self._frame_key(outer_value, inner_value)
        if key not in self._rendered:
            computed = self._cpu(self._compute(outer_value, inner_value))
            self._rendered[key] = _png(self._draw(outer_value, inner_value, computed))
        return W.Image(value=self._rendered[key], format="png")

    @staticmethod
    def _cpu(computed: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v
                for k, v in computed.items()}

    def compute(self) -> dict[str, torch.Tensor]:
        """Recompute the current setting with PyTorch (on the explorer's device)."""
        return self._cpu(self._compute(self.outer.value, self.inner.value))

    def current_image(self) -> W.Image:
        """The image widget shown for the current setting."""
        frame = self.frames[self.outer.index]
        return frame.children[self.inner.index] if isinstance(frame, W.Stack) else frame

    def figure(self) -> Figure:
        """The current picture as a matplotlib Figure."""
        return self._draw(self.outer.value, self.inner.value, self.result)

    def _on_change(self, _change: dict) -> None:
        # Live path: recompute on the device and redraw the frame now on screen.
        self.result = self.compute()
        self.current_image().value = _png(self.figure())

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


# --- β explorer ------------------------------------------------------------------------

def _default_points() -> tuple[torch.Tensor, list[str]]:
    """Five 2-D vectors: two close pairs and a loner, so that β visibly matters."""
    x = torch.tensor([[2.0, 0.3], [1.7, 0.9], [-0.4, 1.9], [-1.0, 1.6], [-1.2, -1.5]])
    return x, [f"x{i + 1}" for i in range(len(x))]


def beta_explorer(
    x: torch.Tensor | None = None,
    labels: Sequence[str] | None = None,
    *,
    betas: Sequence[float] = BETAS,
    beta: float = 1.0,
    device: torch.device | str | None = None,
) -> Explorer:
    """Self-attention of a set of vectors, ``a_i = [soft](arg)max_β(X^T x_i)``, ``h_i = X a_i``.

    Controls: soft or hard attention, and β (ignored by hard attention).
    The picture: the weight matrix (a row per query x_i) and, when the vectors are 2-D,
    the inputs x_i with the outputs h_i.

    Args:
        x: ``(t, n)`` input vectors, one per row (default: five 2-D vectors).
        labels: a name per vector.
        betas: the values offered by the β slider (all finite, >= 0).
        beta: the initial β (must be one of ``betas``).
        device: where to compute (default :func:`transformer_course.device`).
    """
    if x is None:
        x, default_labels = _default_points()
        labels = labels or default_labels
    check_tensor("x", x, ndim=2, floating=True)
    labels = list(labels) if labels is not None else [f"x{i + 1}" for i in range(len(x))]
    if len(labels) != len(x):
        raise ValueError(f"labels has {len(labels)} names but x {shape_of(x)} has {len(x)} rows")
    betas = [float(b) for b in betas]
    if beta not in betas:
        raise ValueError(f"beta={beta} must be one of betas {betas}")
    dev = torch.device(device) if device is not None else best_device()
    x_dev = x.to(dev, torch.float32)

    def compute(mode: str, b: float) -> dict[str, torch.Tensor]:
        outputs, weights = attention(x_dev, x_dev, x_dev, beta=b, hard=(mode == "hard"))
        return {"weights": weights, "outputs": outputs, "scores": x_dev @ x_dev.T}

    def draw(mode: str, b: float, r: dict[str, torch.Tensor]) -> Figure:
        two_d = x.shape[1] == 2
        fig, axes = plt.subplots(1, 2 if two_d else 1, figsize=(9.5 if two_d else 5, 4.2),
                                 squeeze=False)
        ax = axes[0, 0]
        title = "hard attention (argmax)" if mode == "hard" else f"soft attention, β = {b:g}"
        attention_heatmap(r["weights"], queries=[f"a for {name}" for name in labels],
                          keys=labels, ax=ax, title=title, annotate=True)
        ax.set_xlabel("weight given to x_j")
        ax.set_ylabel("")
        if two_d:
            ax = axes[0, 1]
            pts, outs = x.numpy(), r["outputs"].numpy()
            ax.scatter(pts[:, 0], pts[:, 1], c="tab:blue", s=40, label="inputs x_i")
            ax.scatter(outs[:, 0], outs[:, 1], c="tab:red", marker="x", s=60,
                       label="outputs h_i = X a_i")
            for i, name in enumerate(labels):
                ax.annotate(name, pts[i], textcoords="offset points", xytext=(4, 4),
                            color="tab:blue")
                ax.annotate("", xy=outs[i], xytext=pts[i],
                            arrowprops=dict(arrowstyle="->", color="0.6", lw=0.8))
            span = float(abs(pts).max()) * 1.3
            ax.set_xlim(-span, span)
            ax.set_ylim(-span, span)
            ax.set_aspect("equal")
            ax.axhline(0, color="0.85", lw=0.8)
            ax.axvline(0, color="0.85", lw=0.8)
            ax.legend(loc="lower right", fontsize=8)
            ax.set_title("each x_i moves to h_i")
        fig.tight_layout()
        return fig

    mode = W.ToggleButtons(options=[("soft", "soft"), ("hard", "hard")], value="soft",
                           description="attention")
    slider = W.SelectionSlider(options=[(f"{b:g}", b) for b in betas], value=float(beta),
                               description="β", continuous_update=True,
                               layout=W.Layout(width="420px"))
    return Explorer(mode, slider, compute, draw, uses_inner=lambda m: m == "soft",
                    caption="<b>β explorer</b>: soft attention becomes uniform as β → 0 and "
                            "hard as β grows.")


# --- heads explorer -----------------------------------------------------------------------

def heads_explorer(
    x: torch.Tensor | None = None,
    tokens: Sequence[str] | None = None,
    *,
    head_counts: Sequence[int] = (1, 2, 4, 8),
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Explorer:
    """Multi-head self-attention of one sequence, one head at a time.

    Controls: the number of heads h, and which head to show (a head number past h - 1
    shows the last head). A :class:`~transformer_course.MultiHeadAttention` with seeded
    weights is built for every h; ``result["weights"]`` holds all its heads.

    Args:
        x: ``(L, d_model)`` token vectors (default: 6 random vectors of width 32).
        tokens: a label per position.
        head_counts: the values of h offered; each must divide ``d_model``.
        seed: seed of the projection weights.
        device: where to compute.
    """
    if x is None:
        x = torch.randn(6, 32, generator=torch.Generator().manual_seed(seed))
    check_tensor("x", x, ndim=2, floating=True)
    tokens = list(tokens) if tokens is not None else [f"t{i}" for i in range(len(x))]
    if len(tokens) != len(x):
        raise ValueError(f"tokens has {len(tokens)} labels but x {shape_of(x)} has {len(x)} rows")
    d_model = x.shape[1]
    bad = [h for h in head_counts if d_model % h]
    if bad:
        raise ValueError(f"head_counts {bad} do not divide d_model={d_model} (x {shape_of(x)})")
    dev = torch.device(device) if device is not None else best_device()
    modules = {}
    for h in head_counts:
        torch.manual_seed(seed)
        module = MultiHeadAttention(d_model, h)
        # Larger query/key weights than the default init give distinct, readable patterns.
        for proj in (module.W_q, module.W_k):
            torch.nn.init.normal_(proj.weight, std=1.5 / d_model**0.5)
        modules[h] = module.to(dev).eval()
    x_dev = x.to(dev, torch.float32)[None]  # (1, L, d_model)
    most = max(head_counts)

    def compute(h: int, head: int) -> dict[str, torch.Tensor]:
        with torch.no_grad():
            out, weights = modules[h](x_dev, x_dev, x_dev)
        return {"weights": weights[0], "output": out[0], "head": torch.tensor(min(head, h - 1))}

    def draw(h: int, head: int, r: dict[str, torch.Tensor]) -> Figure:
        shown = int(r["head"])
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2),
                                 gridspec_kw={"width_ratios": [1.2, 1]})
        attention_heatmap(r["weights"][shown], queries=tokens, keys=tokens, ax=axes[0],
                          annotate=False,
                          title=f"head {shown + 1} of {h} (d_head = {d_model // h})")
        grid = axes[1]
        grid.axis("off")
        cols = min(4, math.ceil(math.sqrt(h))) if h <= 4 else 4
        rows = -(-h // cols)
        for k in range(h):
            inset = grid.inset_axes(((k % cols) / cols, 1 - (k // cols + 1) / rows,
                                     0.9 / cols, 0.9 / rows))
            inset.imshow(r["weights"][k].numpy(), cmap="Blues", vmin=0, vmax=1)
            inset.set_xticks([])
            inset.set_yticks([])
            for spine in inset.spines.values():
                spine.set_color("tab:red" if k == shown else "0.7")
                spine.set_linewidth(2.5 if k == shown else 0.8)
        grid.set_title(f"all {h} heads")
        fig.tight_layout()
        return fig

    count = W.ToggleButtons(options=[(str(h), h) for h in head_counts], value=head_counts[0],
                            description="heads h")
    which = W.SelectionSlider(options=[(str(i + 1), i) for i in range(most)], value=0,
                              description="head", layout=W.Layout(width="420px"))
    return Explorer(count, which, compute, draw, frame_key=lambda h, i: (h, min(i, h - 1)),
                    caption="<b>Heads explorer</b>: each head has its own W_q, W_k, W_v slice "
                            "and its own attention pattern.")


# --- masks explorer ---------------------------------------------------------------------------

MASK_KINDS = ("none", "causal", "padding", "causal + padding")


def masks_explorer(
    tokens: Sequence[str] | None = None,
    *,
    d_model: int = 16,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> Explorer:
    """Self-attention weights under no mask, a causal mask, a padding mask, or both.

    Controls: the kind of mask, and how many positions at the end are padding ([PAD]),
    from none up to all of them (then every key is masked and every query gets zero
    weights and a zero output).

    Args:
        tokens: the sequence shown (default six words); padding replaces its tail.
        d_model: width of the seeded random token vectors.
        seed: seed of the vectors.
        device: where to compute.
    """
    tokens = list(tokens) if tokens is not None else ["the", "cat", "sat", "on", "the", "mat"]
    if not tokens:
        raise ValueError("tokens must not be empty")
    length = len(tokens)
    dev = torch.device(device) if device is not None else best_device()
    x = torch.randn(length, d_model, generator=torch.Generator().manual_seed(seed)).to(dev)

    def compute(kind: str, pads: int) -> dict[str, torch.Tensor]:
        keep = torch.ones(length, length, dtype=torch.bool, device=dev)
        if "causal" in kind:
            keep &= causal_mask(length, device=dev)
        if "padding" in kind:
            real = torch.arange(length, device=dev) < length - pads  # (L,) True = real token
            keep &= real[None, :]
        out, weights = attention(x, x, x, mask=keep)
        return {"weights": weights, "output": out, "mask": keep}

    def draw(kind: str, pads: int, r: dict[str, torch.Tensor]) -> Figure:
        shown = tokens[: length - pads] + ["[PAD]"] * pads if "padding" in kind else tokens
        fig, ax = plt.subplots(figsize=(6, 4.6))
        w = r["weights"].numpy()
        ax.imshow(w, cmap="Blues", vmin=0, vmax=1)
        blocked = ~r["mask"]
        for i in range(length):
            for j in range(length):
                if blocked[i, j]:
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                               hatch="///", edgecolor="0.65", lw=0))
                else:
                    ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=8,
                            color="white" if w[i, j] > 0.6 else "black")
            if not (~blocked[i]).any():
                ax.text(length - 0.5, i, "  no key: zero output", va="center", fontsize=8,
                        color="tab:red")
        ax.set_xticks(range(length), shown, rotation=90)
        ax.set_yticks(range(length), shown)
        ax.set_xlabel("keys")
        ax.set_ylabel("queries")
        ax.set_xlim(-0.5, length - 0.5)
        ax.set_title(f"mask: {kind}" + (f", {pads} × [PAD]" if "padding" in kind else ""))
        fig.tight_layout()
        return fig

    kind = W.ToggleButtons(options=[(k, k) for k in MASK_KINDS], value="none",
                           description="mask")
    pads = W.SelectionSlider(options=[(str(p), p) for p in range(length + 1)], value=0,
                             description="[PAD]s", layout=W.Layout(width="420px"))
    return Explorer(kind, pads, compute, draw, uses_inner=lambda k: "padding" in k,
                    caption="<b>Masks explorer</b>: hatched cells are masked (weight exactly 0).")
