"""Diagrams of the course's modules, drawn from the modules themselves.

:func:`transformer_course.diagram` reads a module's tree (its sub-modules, their order, their
sizes, which weights are shared) and draws it as a self-contained piece of SVG and HTML: the
blocks the chapters teach (attention, Add & Norm in the module's real order, feed-forward,
embeddings and positions, the output head, N× for stacks), the tensor shapes on the arrows,
and on hover or keyboard focus each block's parameters and the class that implements it.
Nothing is drawn by hand, so the picture cannot drift from the code.

    >>> import transformer_course as tc
    >>> d = tc.diagram(tc.EncoderLayer(64, 4, 256, norm_first=True))
    >>> d.model["parameters"] == sum(p.numel() for p in d.module.parameters())
    True
    >>> d.save("encoder_layer.html")  # doctest: +SKIP

The root element carries ``class="tc-diagram"`` and a ``data-model`` JSON::

    {"module": "EncoderLayer", "config": {...}, "parameters": N,
     "blocks": [{"kind", "class", "parameters", "input", "output", "href", ...}, ...]}

``getattr(tc, module)(**config)`` builds a module with the same parameters (checked when the
diagram is drawn), ``parameters`` is ``sum(p.numel() for p in module.parameters())`` and the
blocks' ``parameters`` add up to it: a weight shared by two blocks (tied embeddings) is
counted in the first one, and the second names it in ``shares``. ``input`` and ``output`` are
lists of shapes, one per tensor (cross-attention reads two); a shape is a list of sizes,
``"B"``, ``"L"``, ``"L_s"``, ``"L_t"``, ``"L_q"``, ``"L_k"`` where they depend on the input,
numbers otherwise (numbers everywhere with ``example=``). Each block also has ``section``
(``"7.6"``), ``label`` (its name in the reader's language), and where they apply ``repeat``
(the number of layers of its stack: its ``parameters`` count them all) and ``shares``.

Links: each block names the section that teaches it, ``href`` = ``"<page>.html#<anchor>"``
relative to the book's pages, in the reader's language (the table is :data:`SECTIONS`). In
the book build (``TRANSFORMER_COURSE_STATIC=1``) every block is a link to that section. In
Jupyter, Colab or a saved file the blocks are not links (a relative link would lead nowhere
and the output loads nothing from another host): their details say which section of the
course book teaches them.

Texts come from the package's gettext catalogs in the language of
:func:`transformer_course.set_language`, numbers in that language's format. The JavaScript
and CSS live in ``js/diagram.js`` (after ``js/common.js``) and ``js/diagram.css`` and are
inlined in every output.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..bert import BertEncoder
from ..i18n import format_integer, format_number, get_language, ngettext
from ..i18n import gettext as _
from ..layers import Decoder, DecoderLayer, Encoder, EncoderLayer, FeedForward, MultiHeadAttention
from ..lm import LanguageModel
from ..models import Transformer, TransformerClassifier
from ..positional import LearnedPositionalEmbedding
from ..utils import static_build
from .page import HtmlOutput, asset

__all__ = ["SECTIONS", "SUPPORTED", "Diagram", "DiagramRow", "diagram", "section_href"]

# --- the sections that teach each block ------------------------------------------------------

SECTIONS: dict[str, dict[str, str]] = {
    # section: the chapter page, and the anchor of its heading in each language (the HTML id
    # that docutils derives from the heading text; tests/site/test_diagrams.py checks every one
    # against the notebooks' headings and the built book).
    "3.2": {"page": "03_key_value_store",
            "en": "queries-keys-and-values-from-the-same-input",
            "fr": "requetes-cles-et-valeurs-tirees-de-la-meme-entree",
            "it": "query-chiavi-e-valori-ricavati-dallo-stesso-input"},
    "3.3": {"page": "03_key_value_store",
            "en": "why-divide-by-sqrt-d-a-measurement",
            "fr": "pourquoi-diviser-par-sqrt-d-une-mesure",
            "it": "perche-dividere-per-sqrt-d-misuriamolo"},
    "4.2": {"page": "04_multi_head_attention",
            "en": "h-heads-concatenated-then-mixed-by-boldsymbol-w-h",
            "fr": "h-tetes-concatenees-puis-melangees-par-boldsymbol-w-h",
            "it": "h-teste-concatenate-e-poi-mescolate-da-boldsymbol-w-h"},
    "4.3": {"page": "04_multi_head_attention",
            "en": "split-and-group-heads-reshapes-instead-of-loops",
            "fr": "separer-et-regrouper-les-tetes-des-changements-de-forme-plutot-que-des-boucles",
            "it": "separare-e-riunire-le-teste-reshape-al-posto-dei-cicli"},
    "5.2": {"page": "05_masks",
            "en": "the-causal-mask-no-peeking-at-the-future",
            "fr": "le-masque-causal-interdit-de-regarder-l-avenir",
            "it": "la-maschera-causale-vietato-sbirciare-il-futuro"},
    "6.2": {"page": "06_positional_encoding",
            "en": "the-sinusoidal-encoding",
            "fr": "l-encodage-sinusoidal",
            "it": "la-codifica-sinusoidale"},
    "6.4": {"page": "06_positional_encoding",
            "en": "learned-position-embeddings",
            "fr": "les-plongements-de-position-appris",
            "it": "embedding-di-posizione-appresi"},
    "7.3": {"page": "07_encoder",
            "en": "add-the-residual-connection",
            "fr": "add-la-connexion-residuelle",
            "it": "add-la-connessione-residua"},
    "7.4": {"page": "07_encoder",
            "en": "norm-layer-normalization",
            "fr": "norm-la-normalisation-de-couche",
            "it": "norm-la-normalizzazione-di-strato"},
    "7.5": {"page": "07_encoder",
            "en": "the-position-wise-feed-forward-network",
            "fr": "le-reseau-a-propagation-avant-applique-position-par-position",
            "it": "la-rete-feed-forward-applicata-posizione-per-posizione"},
    "7.6": {"page": "07_encoder",
            "en": "post-norm-or-pre-norm",
            "fr": "post-norm-ou-pre-norm",
            "it": "post-norm-o-pre-norm"},
    "7.8": {"page": "07_encoder",
            "en": "stacking-layers-and-a-classification-head",
            "fr": "empiler-les-couches-puis-ajouter-une-tete-de-classification",
            "it": "impilare-gli-strati-e-aggiungere-una-testa-di-classificazione"},
    "8.1": {"page": "08_decoder",
            "en": "a-decoder-layer-three-sub-layers",
            "fr": "une-couche-de-decodeur-trois-sous-couches",
            "it": "uno-strato-di-decoder-tre-sotto-strati"},
    "8.2": {"page": "08_decoder",
            "en": "cross-attention-between-different-widths",
            "fr": "une-attention-croisee-entre-largeurs-differentes",
            "it": "attenzione-incrociata-tra-larghezze-diverse"},
    "8.3": {"page": "08_decoder",
            "en": "the-whole-encoder-decoder",
            "fr": "l-encodeur-decodeur-au-complet",
            "it": "l-encoder-decoder-completo"},
    "9.2": {"page": "09_tokens_and_bert",
            "en": "the-embedding-lookup-matrix",
            "fr": "la-matrice-de-plongement-une-table-ou-l-on-lit-des-lignes",
            "it": "la-matrice-di-embedding-come-tabella-da-consultare"},
    "9.3": {"page": "09_tokens_and_bert",
            "en": "bert-s-input-words-positions-and-segments",
            "fr": "l-entree-de-bert-mots-positions-et-segments",
            "it": "l-input-di-bert-parole-posizioni-e-segmenti"},
    "9.6": {"page": "09_tokens_and_bert",
            "en": "using-the-model-sentence-embeddings",
            "fr": "se-servir-du-modele-des-plongements-de-phrases",
            "it": "usare-il-modello-embedding-di-frasi"},
    "10.2": {"page": "10_language_models",
             "en": "a-decoder-only-model",
             "fr": "un-modele-a-decodeur-seul",
             "it": "un-modello-solo-decoder"},
    "10.8": {"page": "10_language_models",
             "en": "the-training-recipe",
             "fr": "la-recette-d-entrainement",
             "it": "la-ricetta-di-addestramento"},
}


def section_href(section: str, lang: str | None = None) -> str:
    """The link to a section of the book, relative to a chapter page: ``"<page>.html#<id>"``."""
    entry = SECTIONS[section]
    return f"{entry['page']}.html#{entry[lang or get_language()]}"


# --- what a diagram is made of ------------------------------------------------------------------

Dim = int | str
Shape = tuple[Dim, ...]

ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}

# Colour group of each kind of block (Okabe and Ito's colour-blind-safe palette, js/diagram.css).
GROUPS = {
    "embedding": "emb", "positions": "pos", "segments": "pos",
    "self_attention": "attn", "masked_self_attention": "mask", "cross_attention": "cross",
    "add_norm": "norm", "norm": "norm", "add": "norm",
    "feed_forward": "ff", "linear": "ff", "activation": "ff",
    "projection": "ff", "split_heads": "out", "attention": "attn", "merge_heads": "out",
    "pooling": "out", "pooler": "out", "head": "out",
}


@dataclass
class Block:
    """One block of a diagram: what it is, what implements it, its sizes and parameters."""

    kind: str
    name: str  # in the reader's language
    cls: str  # the package (or torch.nn) class that implements it
    parameters: int  # counted once over the whole module, over every repeat
    inputs: list[Shape]
    outputs: list[Shape]
    section: str
    repeat: int = 1
    shares: int | None = None  # index of the block whose weights it reuses
    notes: list[str] = field(default_factory=list)
    label: str | None = None  # what is drawn, when shorter than the name ("+")


class _Counter:
    """Counts each parameter once, in the order the blocks are made (as module.parameters())."""

    def __init__(self) -> None:
        self.owner: dict[int, int] = {}

    def take(self, modules: Sequence[nn.Module | None], index: int) -> tuple[int, int | None]:
        count, shares = 0, None
        for module in modules:
            if module is None:
                continue
            for p in module.parameters():
                if id(p) in self.owner:
                    shares = self.owner[id(p)] if shares is None else shares
                else:
                    self.owner[id(p)] = index
                    count += p.numel()
        return count, shares


class _Plan:
    """The blocks of a diagram, counted as they are made (the steps that place them are
    kept by the planners, see :func:`_render_lanes`)."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.counter = _Counter()

    def add(self, kind: str, name: str, modules: Sequence[nn.Module | None], cls: str,
            inputs: list[Shape], outputs: list[Shape], section: str, *, repeat: int = 1,
            notes: Sequence[str] = (), label: str | None = None) -> int:
        index = len(self.blocks)
        count, shares = self.counter.take(modules, index)
        self.blocks.append(Block(kind, name, cls, count, inputs, outputs, section, repeat,
                                 shares, list(notes), label))
        return index


def _class_name(module: nn.Module | type) -> str:
    """``transformer_course.MultiHeadAttention``, ``torch.nn.LayerNorm``."""
    cls = module if isinstance(module, type) else type(module)
    if issubclass(cls, nn.LayerNorm) and cls.__module__.startswith("transformer_course"):
        cls = nn.LayerNorm  # the package's own is nn.LayerNorm, made overflow-safe
    if cls.__module__.startswith("torch.nn"):
        return f"torch.nn.{cls.__name__}"
    if cls.__module__.startswith("transformer_course"):
        base = next((c for c in cls.__mro__ if c in SUPPORTED), cls)
        return f"transformer_course.{base.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


# --- the blocks of each module ---------------------------------------------------------------

def _attention_notes(attn: MultiHeadAttention) -> list[str]:
    return [ngettext("{h} head of {d} dimensions", "{h} heads of {d} dimensions",
                     attn.num_heads).format(h=attn.num_heads, d=attn.d_head)]


def _layer_blocks(plan: _Plan, steps: list, layers: Sequence[nn.Module], seq: str,
                  *, masked: bool = False, memory: str | None = None) -> None:
    """The blocks of one encoder or decoder layer, in the order its forward runs them, with
    the parameters of every layer of the stack (``layers``)."""
    first = layers[0]
    d = first.self_attn.d_model
    x: Shape = ("B", seq, d)
    n = len(layers)
    pre = first.norm_first
    decoder = isinstance(first, DecoderLayer)
    ln = _class_name(nn.LayerNorm)
    mha = _class_name(MultiHeadAttention)
    norms = ("norm1", "norm2", "norm3")

    def sublayer(k: int, attach: Callable[[], int], side: str | None = None) -> None:
        norm = [getattr(layer, norms[k]) for layer in layers]
        if pre:
            steps.append(("fork",))
            steps.append(("block", plan.add("norm", _("LayerNorm"), norm, ln, [x], [x], "7.6",
                                            repeat=n)))
            steps.append(("block", attach(), side))
            steps.append(("join", plan.add(
                "add", _("Add"), [], _class_name(first), [x, x], [x], "7.3", repeat=n,
                notes=[_("the residual connection: x + sublayer(LayerNorm(x))")], label="+")))
        else:
            steps.append(("fork",))
            steps.append(("block", attach(), side))
            steps.append(("join", plan.add(
                "add_norm", _("Add & Norm"), norm, ln, [x, x], [x], "7.4", repeat=n,
                notes=[_("LayerNorm(x + sublayer(x))")])))

    def self_attention() -> int:
        kind = "masked_self_attention" if masked or decoder else "self_attention"
        name = (_("Masked multi-head self-attention") if kind == "masked_self_attention"
                else _("Multi-head self-attention"))
        notes = _attention_notes(first.self_attn)
        if kind == "masked_self_attention":
            notes.append(_("causal mask: position i sees the positions up to i only"))
        return plan.add(kind, name, [layer.self_attn for layer in layers], mha, [x], [x],
                        "5.2" if kind == "masked_self_attention" else "4.2", repeat=n,
                        notes=notes)

    def cross_attention() -> int:
        notes = [_("queries from the decoder, keys and values from the encoder's output"),
                 *_attention_notes(first.cross_attn)]
        return plan.add("cross_attention", _("Multi-head cross-attention"),
                        [layer.cross_attn for layer in layers], mha,
                        [x, ("B", memory or "L_s", d)], [x], "8.1", repeat=n, notes=notes)

    def feed_forward() -> int:
        ff = first.ff
        return plan.add("feed_forward", _("Feed-forward"), [layer.ff for layer in layers],
                        _class_name(FeedForward), [x], [x], "7.5", repeat=n,
                        notes=[_("{d_ff} hidden units, {activation}").format(
                            d_ff=format_integer(ff.linear1.out_features),
                            activation=ACTIVATION_NAMES[ff.activation])])

    sublayer(0, self_attention)
    if decoder:
        sublayer(1, cross_attention, "memory")
        sublayer(2, feed_forward)
    else:
        sublayer(1, feed_forward)


def _stack_blocks(plan: _Plan, steps: list, layers: Sequence[nn.Module],
                  norm: nn.LayerNorm | None, seq: str, *, masked: bool = False,
                  memory: str | None = None, side: str = "left",
                  final_section: str = "7.6") -> None:
    """A stack's frame of N identical ``layers``, then its final ``norm`` if any."""
    layers = list(layers)
    steps.append(("frame", len(layers), side))
    _layer_blocks(plan, steps, layers, seq, masked=masked, memory=memory)
    steps.append(("end_frame",))
    if norm is not None:
        d = layers[0].self_attn.d_model
        steps.append(("block", plan.add("norm", _("Final LayerNorm"), [norm],
                                        _class_name(norm), [("B", seq, d)],
                                        [("B", seq, d)], final_section)))


def _embedding(plan: _Plan, steps: list, table: nn.Embedding, name: str, seq: str, *,
               notes: Sequence[str] = ()) -> None:
    d = table.embedding_dim
    steps.append(("block", plan.add("embedding", name, [table], _class_name(table),
                                    [("B", seq)], [("B", seq, d)], "9.2", notes=notes)))


def _positions(plan: _Plan, steps: list, module: nn.Module, d: int, seq: str) -> None:
    x = ("B", seq, d)
    if isinstance(module, (LearnedPositionalEmbedding, nn.Embedding)):
        table = module.embedding if isinstance(module, LearnedPositionalEmbedding) else module
        notes = [_("one learned vector for each of the {count} positions").format(
            count=format_integer(table.num_embeddings))]
        steps.append(("block", plan.add("positions", _("+ position embedding"), [module],
                                        _class_name(module), [x], [x], "6.4", notes=notes)))
    else:
        steps.append(("block", plan.add("positions", _("+ positional encoding"), [module],
                                        _class_name(module), [x], [x], "6.2",
                                        notes=[_("fixed sines and cosines, no parameters")])))


def _plan_attention(m: MultiHeadAttention) -> tuple[_Plan, dict]:
    plan = _Plan()
    d, h, dh = m.d_model, m.num_heads, m.d_head
    proj = _class_name(nn.Linear)
    mha = _class_name(m)
    q_in, k_in, v_in = ("B", "L_q", d), ("B", "L_k", m.kdim), ("B", "L_k", m.vdim)
    q, k, v = ("B", "L_q", d), ("B", "L_k", d), ("B", "L_k", d)
    heads_q, heads_k = ("B", h, "L_q", dh), ("B", h, "L_k", dh)
    wide = "8.2" if (m.kdim, m.vdim) != (d, d) else "3.2"
    lanes = [
        plan.add("projection", _("Queries W_q"), [m.W_q], proj, [q_in], [q], "3.2"),
        plan.add("projection", _("Keys W_k"), [m.W_k], proj, [k_in], [k], wide),
        plan.add("projection", _("Values W_v"), [m.W_v], proj, [v_in], [v], wide),
    ]
    split = plan.add("split_heads", ngettext("Split into {h} head", "Split into {h} heads", h)
                     .format(h=h), [], mha, [q, k, v], [heads_q, heads_k, heads_k], "4.3",
                     notes=[_("split_heads: {d} = {h} × {dh}").format(d=d, h=h, dh=dh)])
    beta = format_number(1.0 / math.sqrt(dh), significant=4)
    core = plan.add("attention", _("Scaled dot-product attention, per head"), [], mha,
                    [heads_q, heads_k, heads_k], [heads_q, ("B", h, "L_q", "L_k")], "3.3",
                    notes=[_("softmax(β Q Kᵀ) V in each head, β = 1/√d_head = {beta}")
                           .format(beta=beta)])
    merge = plan.add("merge_heads", _("Concatenate the heads"), [], mha, [heads_q], [q], "4.3",
                     notes=[_("merge_heads: {h} × {dh} = {d}").format(d=d, h=h, dh=dh)])
    out = plan.add("projection", _("Output projection W_o"), [m.W_o], proj, [q], [q], "4.2",
                   notes=[_("the notes' W_h")])
    layout = {"kind": "attention", "lanes": lanes, "split": split, "core": core,
              "merge": merge, "out": out,
              "terminals": [_("query"), _("key"), _("value")],
              "inputs": [q_in, k_in, v_in], "output": q, "weights": ("B", h, "L_q", "L_k")}
    return plan, layout


def _plan_feed_forward(m: FeedForward) -> tuple[_Plan, dict]:
    plan = _Plan()
    d, d_ff = m.d_model, m.linear1.out_features
    lin = _class_name(nn.Linear)
    x, hidden = ("B", "L", d), ("B", "L", d_ff)
    steps: list = [("in", _("input x"))]
    for module, shapes in ((m.linear1, (x, hidden)), (None, (hidden, hidden)),
                           (m.linear2, (hidden, x))):
        if module is None:
            steps.append(("block", plan.add("activation", ACTIVATION_NAMES[m.activation], [],
                                            _class_name(m), [hidden], [hidden], "7.5",
                                            notes=[_("applied to every number on its own")])))
            continue
        steps.append(("block", plan.add(
            "linear", _("Linear {d_in} → {d_out}").format(d_in=format_integer(shapes[0][2]),
                                                         d_out=format_integer(shapes[1][2])),
            [module], lin, [shapes[0]], [shapes[1]], "7.5")))
    steps.append(("out", _("output"), x))
    return plan, {"kind": "lanes", "lanes": [steps]}


def _plan_layer(m: EncoderLayer | DecoderLayer) -> tuple[_Plan, dict]:
    plan = _Plan()
    d = m.self_attn.d_model
    decoder = isinstance(m, DecoderLayer)
    seq = "L_t" if decoder else "L"
    steps: list = [("in", _("input x"))]
    _layer_blocks(plan, steps, [m], seq, memory="L_s" if decoder else None)
    steps.append(("out", _("output"), ("B", seq, d)))
    layout = {"kind": "lanes", "lanes": [steps]}
    if decoder:
        layout["memory"] = ("B", "L_s", d)
    return plan, layout


def _plan_stack(m: Encoder | Decoder) -> tuple[_Plan, dict]:
    plan = _Plan()
    d = m.layers[0].self_attn.d_model
    decoder = isinstance(m, Decoder)
    seq = "L_t" if decoder else "L"
    steps: list = [("in", _("input x"))]
    _stack_blocks(plan, steps, m.layers, m.norm, seq, memory="L_s" if decoder else None,
                  side="right" if decoder else "left")
    steps.append(("out", _("output"), ("B", seq, d)))
    layout = {"kind": "lanes", "lanes": [steps]}
    if decoder:
        layout["memory"] = ("B", "L_s", d)
    return plan, layout


def _plan_transformer(m: Transformer) -> tuple[_Plan, dict]:
    plan = _Plan()
    d = m.d_model
    scale = [_("multiplied by √d_model = {value}").format(
        value=format_number(math.sqrt(d), significant=4))]
    enc: list = [("in", _("source ids"))]
    _embedding(plan, enc, m.src_embed, _("Source embedding"), "L_s", notes=scale)
    _positions(plan, enc, m.positional, d, "L_s")
    _stack_blocks(plan, enc, m.encoder.layers, m.encoder.norm, "L_s")
    enc.append(("port", _("memory"), ("B", "L_s", d)))
    dec: list = [("in", _("target ids"))]
    _embedding(plan, dec, m.tgt_embed, _("Target embedding"), "L_t", notes=scale)
    _positions(plan, dec, m.positional, d, "L_t")
    _stack_blocks(plan, dec, m.decoder.layers, m.decoder.norm, "L_t", memory="L_s",
                  side="right")
    vocab = m.lm_head.out_features
    dec.append(("block", plan.add("head", _("Output layer"), [m.lm_head],
                                  _class_name(m.lm_head), [("B", "L_t", d)],
                                  [("B", "L_t", vocab)], "8.3",
                                  notes=[_("one score for each of the {count} tokens of the "
                                           "vocabulary").format(count=format_integer(vocab))])))
    dec.append(("out", _("logits"), ("B", "L_t", vocab)))
    return plan, {"kind": "lanes", "lanes": [enc, dec]}


def _plan_classifier(m: TransformerClassifier) -> tuple[_Plan, dict]:
    plan = _Plan()
    d = m.embed.embedding_dim
    steps: list = [("in", _("token ids"))]
    _embedding(plan, steps, m.embed, _("Token embedding"), "L")
    _positions(plan, steps, m.positional, d, "L")
    _stack_blocks(plan, steps, m.encoder.layers, m.encoder.norm, "L")
    names = {"cls": (_("Pooling: [CLS]"), _("the vector of the first position, [CLS]")),
             "mean": (_("Pooling: mean"), _("the mean over the real tokens")),
             "max": (_("Pooling: max"), _("the feature-wise maximum over the real tokens"))}
    name, note = names[m.pooling]
    steps.append(("block", plan.add("pooling", name, [], _class_name(m), [("B", "L", d)],
                                     [("B", d)], "7.8", notes=[note])))
    classes = m.head.out_features
    steps.append(("block", plan.add("head", _("Classification head"), [m.head],
                                    _class_name(m.head), [("B", d)], [("B", classes)], "7.8",
                                    notes=[ngettext("{count} class", "{count} classes", classes)
                                           .format(count=format_integer(classes))])))
    steps.append(("out", _("logits"), ("B", classes)))
    return plan, {"kind": "lanes", "lanes": [steps]}


def _plan_language_model(m: LanguageModel) -> tuple[_Plan, dict]:
    plan = _Plan()
    d = m.embed.embedding_dim
    steps: list = [("in", _("token ids"))]
    _embedding(plan, steps, m.embed, _("Token embedding"), "L")
    _positions(plan, steps, m.position, d, "L")
    _stack_blocks(plan, steps, m.blocks, m.norm, "L", masked=True)
    vocab = m.head.out_features
    tied = m.head.weight is m.embed.weight
    notes = [_("one score for each of the {count} tokens of the vocabulary").format(
        count=format_integer(vocab))]
    if tied:
        notes.append(_("weight tying: the token embedding matrix, transposed"))
    steps.append(("block", plan.add("head", _("Output layer"), [m.head], _class_name(m.head),
                                    [("B", "L", d)], [("B", "L", vocab)],
                                    "10.8" if tied else "10.2", notes=notes)))
    steps.append(("out", _("logits"), ("B", "L", vocab)))
    return plan, {"kind": "lanes", "lanes": [steps]}


def _plan_bert(m: BertEncoder) -> tuple[_Plan, dict]:
    plan = _Plan()
    emb = m.embeddings
    d = emb.word.embedding_dim
    x = ("B", "L", d)
    steps: list = [("in", _("token ids"))]
    _embedding(plan, steps, emb.word, _("Token embedding"), "L")
    _positions(plan, steps, emb.position, d, "L")
    steps.append(("block", plan.add(
        "segments", _("+ segment embedding"), [emb.token_type], _class_name(emb.token_type),
        [x, ("B", "L")], [x], "9.3",
        notes=[ngettext("{count} segment", "{count} segments", emb.token_type.num_embeddings)
               .format(count=format_integer(emb.token_type.num_embeddings))])))
    steps.append(("block", plan.add("norm", _("LayerNorm"), [emb.norm], _class_name(emb.norm),
                                    [x], [x], "9.3")))
    _stack_blocks(plan, steps, m.encoder.layers, m.encoder.norm, "L")
    if m.pooler is None:
        steps.append(("out", _("last hidden state"), x))
    else:
        steps.append(("aside", _("last hidden state"), x))
        steps.append(("block", plan.add("pooler", _("Pooler"), [m.pooler],
                                        _class_name(m.pooler), [x], [("B", d)], "9.6",
                                        notes=[_("tanh of a linear map of the [CLS] vector")])))
        steps.append(("out", _("pooler output"), ("B", d)))
    return plan, {"kind": "lanes", "lanes": [steps]}


# --- the constructor arguments of each module ----------------------------------------------------

def _config_attention(m: MultiHeadAttention) -> dict[str, Any]:
    return {"d_model": m.d_model, "num_heads": m.num_heads, "kdim": m.kdim, "vdim": m.vdim,
            "bias": m.W_q.bias is not None, "dropout": m.dropout}


def _config_feed_forward(m: FeedForward) -> dict[str, Any]:
    return {"d_model": m.d_model, "d_ff": m.linear1.out_features, "dropout": m.dropout.p,
            "activation": m.activation, "bias": m.linear1.bias is not None}


def _config_layer(m: EncoderLayer | DecoderLayer) -> dict[str, Any]:
    return {"d_model": m.self_attn.d_model, "num_heads": m.self_attn.num_heads,
            "d_ff": m.ff.linear1.out_features, "dropout": m.dropout1.p,
            "activation": m.ff.activation, "norm_first": m.norm_first, "eps": m.norm1.eps,
            "bias": m.norm1.bias is not None}


def _stacks(module: nn.Module) -> list[nn.ModuleList]:
    """The layer lists of a module: a stack's own, an encoder's and a decoder's (in that
    order), or a language model's blocks."""
    if isinstance(module, (Encoder, Decoder)):
        return [module.layers]
    found = [getattr(module, name).layers for name in ("encoder", "decoder")
             if isinstance(getattr(module, name, None), (Encoder, Decoder))]
    blocks = getattr(module, "blocks", None)
    return found + ([blocks] if isinstance(blocks, nn.ModuleList) else [])


def _sizes(layers: Sequence[nn.Module]) -> dict[str, Any]:
    layer = layers[0]
    return {"d_model": layer.self_attn.d_model, "num_heads": layer.self_attn.num_heads,
            "num_layers": len(layers), "d_ff": layer.ff.linear1.out_features}


def _config_stack(m: Encoder | Decoder) -> dict[str, Any]:
    layer = _config_layer(m.layers[0])
    return {**_sizes(m.layers),
            **{k: layer[k] for k in ("dropout", "activation", "norm_first", "eps", "bias")},
            "final_norm": m.norm is not None}


def _config_transformer(m: Transformer) -> dict[str, Any]:
    first = m.encoder.layers[0]
    return {"src_vocab_size": m.src_embed.num_embeddings,
            "tgt_vocab_size": m.lm_head.out_features, **_sizes(m.encoder.layers),
            "dropout": m.dropout.p, "norm_first": first.norm_first,
            "tie_embeddings": m.tie_embeddings, "activation": first.ff.activation,
            "max_len": int(m.positional.table.shape[0]), "pad_id": m.pad_id}


def _config_classifier(m: TransformerClassifier) -> dict[str, Any]:
    first = m.encoder.layers[0]
    learned = isinstance(m.positional, LearnedPositionalEmbedding)
    return {"vocab_size": m.embed.num_embeddings, "num_classes": m.head.out_features,
            **_sizes(m.encoder.layers), "dropout": m.dropout.p, "norm_first": first.norm_first,
            "activation": first.ff.activation,
            "max_len": m.positional.max_len if learned else int(m.positional.table.shape[0]),
            "pad_id": m.pad_id, "pooling": m.pooling,
            "positional": "learned" if learned else "sinusoidal"}


def _config_language_model(m: LanguageModel) -> dict[str, Any]:
    return {"vocab_size": m.vocab_size, **_sizes(m.blocks), "dropout": m.dropout.p,
            "max_len": m.max_len, "tie_embeddings": m.head.weight is m.embed.weight,
            "norm_first": m.blocks[0].norm_first}


def _config_bert(m: BertEncoder) -> dict[str, Any]:
    emb = m.embeddings
    return {"vocab_size": emb.word.num_embeddings, **_sizes(m.encoder.layers),
            "max_len": emb.position.num_embeddings,
            "type_vocab_size": emb.token_type.num_embeddings, "eps": emb.norm.eps,
            "dropout": emb.dropout.p,
            "pad_id": 0 if emb.word.padding_idx is None else emb.word.padding_idx,
            "pooler": m.pooler is not None}


# class -> (constructor arguments, blocks and layout, how to describe it)
SUPPORTED: dict[type, tuple[Callable, Callable]] = {
    MultiHeadAttention: (_config_attention, _plan_attention),
    FeedForward: (_config_feed_forward, _plan_feed_forward),
    EncoderLayer: (_config_layer, _plan_layer),
    DecoderLayer: (_config_layer, _plan_layer),
    Encoder: (_config_stack, _plan_stack),
    Decoder: (_config_stack, _plan_stack),
    Transformer: (_config_transformer, _plan_transformer),
    TransformerClassifier: (_config_classifier, _plan_classifier),
    LanguageModel: (_config_language_model, _plan_language_model),
    BertEncoder: (_config_bert, _plan_bert),
}


def _known_class(module: object) -> type:
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module of the course (one of "
                        f"{_supported_names()}), got {type(module).__name__}")
    for cls in type(module).__mro__:
        if cls in SUPPORTED:
            return cls
    raise TypeError(
        f"tc.diagram draws the course's own modules ({_supported_names()}), got "
        f"{_class_name(module)}; PyTorch's nn.MultiheadAttention and Transformer layers "
        "convert with tc.from_torch, a Hugging Face BertModel with tc.from_huggingface"
    )


def _supported_names() -> str:
    return ", ".join(cls.__name__ for cls in SUPPORTED)


def _check_rebuilds(module: nn.Module, cls: type, config: dict[str, Any]) -> None:
    """``cls(**config)`` must have the module's parameters (names and shapes): the diagram
    draws the module as its class builds it."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        rebuilt = cls(**config)
    mine = [(n, tuple(p.shape)) for n, p in module.named_parameters()]
    theirs = [(n, tuple(p.shape)) for n, p in rebuilt.named_parameters()]
    if mine != theirs:
        diff = sorted(set(mine) ^ set(theirs))[:3]
        raise ValueError(
            f"this {type(module).__name__} has parameters that {cls.__name__}(**config) does "
            f"not build (first differences: {diff}); tc.diagram draws the course's modules as "
            "their classes build them"
        )
    for stack in _stacks(module):
        kinds = {(type(layer), layer.norm_first, layer.ff.activation) for layer in stack}
        if len(kinds) > 1:
            raise ValueError(f"the layers of this {type(module).__name__} differ in kind, "
                             "norm_first or activation: a diagram draws N identical layers")


# --- example inputs ------------------------------------------------------------------------------

def _example_sizes(module: nn.Module, cls: type, example: object) -> dict[str, int]:
    """Run the module on ``example`` (eval mode, no gradient, the random state untouched) and
    read the sizes B, L, ... from it; the module's own checks reject a wrong example."""
    tensors = tuple(example) if isinstance(example, (tuple, list)) else (example,)
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"example must be a tensor or a tuple of tensors, got "
                            f"{type(t).__name__} in it")
    wanted = {MultiHeadAttention: (1, 3), DecoderLayer: (2,), Decoder: (2,), Transformer: (2,)}
    counts = wanted.get(cls, (1,))
    if len(tensors) not in counts:
        raise ValueError(f"example for {cls.__name__} must hold {' or '.join(map(str, counts))} "
                         f"tensor(s), got {len(tensors)}")
    ids = cls in (Transformer, TransformerClassifier, LanguageModel, BertEncoder)
    for t in tensors:
        if t.dim() != (2 if ids else 3):
            raise ValueError(f"example for {cls.__name__} must be "
                             f"{'(B, L) token ids' if ids else '(B, L, d) tensors'}, got shape "
                             f"{tuple(t.shape)}")
    if cls is MultiHeadAttention and len(tensors) == 1:
        tensors = tensors * 3
    was_training = module.training
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            module.eval()
            module(*tensors)
    finally:
        module.train(was_training)
    b, first = tensors[0].shape[0], tensors[0].shape[1]
    if cls is MultiHeadAttention:
        return {"B": b, "L_q": first, "L_k": tensors[1].shape[1]}
    if cls in (DecoderLayer, Decoder):
        return {"B": b, "L_t": first, "L_s": tensors[1].shape[1]}
    if cls is Transformer:
        return {"B": b, "L_s": first, "L_t": tensors[1].shape[1]}
    return {"B": b, "L": first}


# --- drawing -------------------------------------------------------------------------------------

BW, BH, GAP = 224, 34, 34  # block width and height, gap between blocks (an arrow)
FRAME_LEFT, FRAME_RIGHT = 14, 32  # how far a stack's frame reaches beyond its blocks
RESIDUAL = 16  # the residual path runs this far right of the blocks


def _dim_svg(dim: Dim) -> str:
    if isinstance(dim, int):
        return html.escape(format_integer(dim))
    base, _sep, sub = dim.partition("_")
    return base if not sub else f'{base}<tspan class="tc-d-sub" dy="3">{sub}</tspan>'


def _shape_svg(shape: Shape) -> str:
    """``B × L<sub>s</sub> × 64`` as SVG text content (a subscript moves the baseline, the
    next part moves it back)."""
    out, low = [], False
    for i, dim in enumerate(shape):
        text = " × " if i else ""
        piece = _dim_svg(dim)
        if low:
            out.append(f'<tspan dy="-3">{text}</tspan>')
            low = False
        else:
            out.append(text)
        out.append(piece)
        low = isinstance(dim, str) and "_" in dim
    return "".join(out)


def shape_text(shape: Shape, *, markup: bool = False) -> str:
    """A shape as a reader reads it: ``B × L_s × 512`` (``markup``: subscripts in HTML)."""
    parts = []
    for dim in shape:
        if isinstance(dim, int):
            parts.append(html.escape(format_integer(dim)) if markup else format_integer(dim))
        elif markup and "_" in dim:
            base, _sep, sub = dim.partition("_")
            parts.append(f"{base}<sub>{sub}</sub>")
        else:
            parts.append(dim)
    return " × ".join(parts)


def shapes_text(shapes: Sequence[Shape]) -> str:
    """One shape, or several in parentheses: ``(B × L_t × 64), (B × L_s × 64)`` (HTML)."""
    if len(shapes) == 1:
        return shape_text(shapes[0], markup=True)
    return ", ".join(f"({shape_text(s, markup=True)})" for s in shapes)


def _text_width(text: str, size: float) -> float:
    return 0.56 * size * len(text)


def _lines(text: str, width: float, size: float) -> list[str]:
    """One line, or two cut at the space nearest the middle when one is too wide."""
    if _text_width(text, size) <= width or " " not in text:
        return [text]
    spaces = [i for i, c in enumerate(text) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return [text[:cut], text[cut + 1:]]


class _Canvas:
    """SVG parts in painting order: frames, edges, blocks, then texts on top."""

    def __init__(self, blocks: list[Block], links: bool) -> None:
        self.blocks, self.links = blocks, links
        self.frames: list[str] = []
        self.edges: list[str] = []
        self.shapes: list[str] = []
        self.items: list[str] = []
        self.right = 0.0
        self.bottom = 0.0

    def _extent(self, x: float, y: float) -> None:
        self.right, self.bottom = max(self.right, x), max(self.bottom, y)

    def line(self, points: Sequence[tuple[float, float]], *, head: str | None = "down") -> None:
        d = "M" + " L".join(f"{x:g} {y:g}" for x, y in points)
        self.edges.append(f'<path class="tc-d-edge" d="{d}"/>')
        x, y = points[-1]
        if head == "down":
            self.edges.append(f'<path class="tc-d-head" d="M{x - 4:g} {y - 7:g} L{x:g} {y:g} '
                              f'L{x + 4:g} {y - 7:g}Z"/>')
        elif head == "left":
            self.edges.append(f'<path class="tc-d-head" d="M{x + 7:g} {y - 4:g} L{x:g} {y:g} '
                              f'L{x + 7:g} {y + 4:g}Z"/>')
        elif head == "right":
            self.edges.append(f'<path class="tc-d-head" d="M{x - 7:g} {y - 4:g} L{x:g} {y:g} '
                              f'L{x - 7:g} {y + 4:g}Z"/>')
        for px, py in points:
            self._extent(px, py)

    def shape_label(self, x: float, y: float, shape: Shape, anchor: str = "end") -> None:
        self.shapes.append(f'<text class="tc-d-shape" x="{x:g}" y="{y:g}" '
                           f'text-anchor="{anchor}">{_shape_svg(shape)}</text>')

    def text(self, x: float, y: float, text: str, cls: str, anchor: str = "middle") -> None:
        self.shapes.append(f'<text class="{cls}" x="{x:g}" y="{y:g}" text-anchor="{anchor}">'
                           f"{html.escape(text)}</text>")
        self._extent(x + (_text_width(text, 13) if anchor == "start" else 0), y + 4)

    def frame(self, x0: float, y0: float, x1: float, y1: float, n: int, side: str) -> None:
        self.frames.append(f'<rect class="tc-d-frame" x="{x0:g}" y="{y0:g}" width="{x1 - x0:g}" '
                           f'height="{y1 - y0:g}" rx="10"/>')
        label = f"{n}\u2009×"
        if side == "left":
            self.shapes.append(f'<text class="tc-d-n" x="{x0 - 6:g}" y="{(y0 + y1) / 2 + 6:g}" '
                               f'text-anchor="end">{label}</text>')
        else:
            self.shapes.append(f'<text class="tc-d-n" x="{x1 + 6:g}" y="{(y0 + y1) / 2 + 6:g}" '
                               f'text-anchor="start">{label}</text>')
            self._extent(x1 + 40, y1)
        self._extent(x1, y1)

    def block(self, i: int, x: float, y: float, w: float) -> float:
        """Draw block ``i`` with its top-left corner at (x, y); return its height."""
        b = self.blocks[i]
        group = GROUPS[b.kind]
        label = b.label or b.name
        if b.kind == "add":
            h = 26
            shape = (f'<circle cx="{x + w / 2:g}" cy="{y + h / 2:g}" r="{h / 2:g}"/>'
                     f'<text x="{x + w / 2:g}" y="{y + h / 2 + 5:g}" text-anchor="middle" '
                     f'class="tc-d-plus">+</text>')
        else:
            lines = _lines(label, w - 14, 13)
            h = BH if len(lines) == 1 else BH + 12
            # a space between the lines: the block's visible text reads as words, which its
            # name holds (WCAG 2.5.3; "multi-headself-attention" did not)
            texts = " ".join(
                f'<text x="{x + w / 2:g}" y="{y + h / 2 + 4.5 + 14 * (k - (len(lines) - 1) / 2):g}"'
                f' text-anchor="middle">{html.escape(line)}</text>'
                for k, line in enumerate(lines))
            shape = (f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="6"/>{texts}')
        aria = html.escape(_aria(b), quote=True)
        common = f'class="tc-d-block tc-c-{group}" data-i="{i}" aria-label="{aria}"'
        if self.links:
            href = html.escape(section_href(b.section), quote=True)
            self.items.append(f'<a {common} href="{href}">{shape}</a>')
        else:
            self.items.append(f'<g {common} tabindex="0" role="img">{shape}</g>')
        self._extent(x + w, y + h)
        return h

    def svg(self, width: float, height: float, label: str, root_class: str = "") -> str:
        """The ``<svg>`` element; a standalone file (``root_class``) also names the SVG
        namespace, which HTML does not need."""
        klass = (f' class="{root_class}" xmlns="http://www.w3.org/2000/svg"' if root_class
                 else "")
        return (f'<svg{klass} viewBox="0 0 {width:g} '
                f'{height:g}" width="{width:g}" height="{height:g}" role="group" '
                f'aria-label="{html.escape(label, quote=True)}">'
                + "".join(self.frames) + "".join(self.edges) + "".join(self.items)
                + "".join(self.shapes) + "</svg>")


def _aria(b: Block) -> str:
    count = format_integer(b.parameters)
    return ngettext("{name}: {count} parameter", "{name}: {count} parameters",
                    b.parameters).format(name=b.name, count=count)


class _Lane:
    """One column of blocks, drawn from the top down."""

    def __init__(self, canvas: _Canvas, cx: float, y: float) -> None:
        self.c, self.cx, self.y = canvas, cx, y
        self.fork: float | None = None
        self.frame_top: float | None = None
        self.placed: dict[int, tuple[float, float, float]] = {}  # block -> (left, top, height)
        self.last: Shape | None = None

    def arrow(self, to: float, shape: Shape | None) -> None:
        self.c.line([(self.cx, self.y), (self.cx, to)])
        if shape is not None:
            self.c.shape_label(self.cx - 7, (self.y + to) / 2 + 4, shape)

    def run(self, steps: list, memory: Shape | None = None) -> None:
        pending_fork = False
        for step in steps:
            kind = step[0]
            if kind == "in":
                self.c.text(self.cx, self.y + 12, step[1], "tc-d-io")
                self.y += 18
            elif kind == "fork":
                pending_fork = True
            elif kind in ("block", "join"):
                i = step[1]
                b = self.c.blocks[i]
                top = self.y + GAP
                if pending_fork:
                    self.fork = self.y + GAP / 2 - 2
                    pending_fork = False
                self.arrow(top, b.inputs[0])
                h = self.c.block(i, self.cx - BW / 2, top, BW)
                self.placed[i] = (self.cx - BW / 2, top, h)
                if kind == "join" and self.fork is not None:
                    right = self.cx + (13 if b.kind == "add" else BW / 2)
                    xr = self.cx + BW / 2 + RESIDUAL
                    self.c.edges.append(f'<circle class="tc-d-dot" cx="{self.cx:g}" '
                                        f'cy="{self.fork:g}" r="3"/>')
                    self.c.line([(self.cx, self.fork), (xr, self.fork), (xr, top + h / 2),
                                 (right, top + h / 2)], head="left")
                    self.fork = None
                if len(step) > 2 and step[2] == "memory" and memory is not None:
                    self._memory(top + h / 2, memory)
                self.y = top + h
                self.last = b.outputs[0]
            elif kind == "frame":
                self.frame_top = self.y + 7
                self.frame_n, self.frame_side = step[1], step[2]
            elif kind == "end_frame":
                x0 = self.cx - BW / 2 - FRAME_LEFT
                x1 = self.cx + BW / 2 + FRAME_RIGHT
                self.c.frame(x0, self.frame_top, x1, self.y + 10, self.frame_n, self.frame_side)
                self.y += 4
            elif kind == "aside":
                y = self.y + GAP / 2 + 2
                x1 = self.cx + BW / 2 + RESIDUAL + 26
                self.c.edges.append(f'<circle class="tc-d-dot" cx="{self.cx:g}" cy="{y:g}" r="3"/>')
                self.c.line([(self.cx, y), (x1, y)], head="right")
                self.c.text(x1 + 5, y + 4, step[1], "tc-d-io", anchor="start")
            elif kind == "out":
                end = self.y + GAP
                self.arrow(end, step[2])
                self.c.text(self.cx, end + 13, step[1], "tc-d-io")
                self.y = end + 18
            elif kind == "port":
                self.port = (self.cx, self.y, step[1], step[2])

    def _memory(self, y: float, shape: Shape) -> None:
        """The encoder's output entering a cross-attention block from the left."""
        left = self.cx - BW / 2
        self.c.line([(left - 74, y), (left, y)], head="right")
        self.c.text(left - 80, y - 2, _("memory"), "tc-d-io", anchor="end")
        self.c.shape_label(left - 80, y + 12, shape)


def _render_lanes(canvas: _Canvas, layout: dict) -> tuple[float, float]:
    lanes = layout["lanes"]
    if len(lanes) == 1:
        frames = [step[2] for step in lanes[0] if step[0] == "frame"]
        left = 10 + (170 if "memory" in layout else 0)  # room for the memory's label
        if frames:
            left += FRAME_LEFT + (46 if frames[0] == "left" else 0)  # and for "N ×"
        lane = _Lane(canvas, left + BW / 2, 6)
        lane.run(lanes[0], layout.get("memory"))
        return canvas.right + 10, lane.y + 8
    # the encoder-decoder: encoder on the left, decoder on the right, the memory between
    left_cx = 56 + BW / 2 + FRAME_LEFT
    channel = left_cx + BW / 2 + FRAME_RIGHT + 22
    right_cx = channel + 22 + FRAME_LEFT + BW / 2
    encoder, decoder = _Lane(canvas, left_cx, 6), _Lane(canvas, right_cx, 6)
    encoder.run(lanes[0])
    decoder.run(lanes[1])
    cross = next(i for i, b in enumerate(canvas.blocks) if b.kind == "cross_attention")
    left, top, h = decoder.placed[cross]
    x, y, name, shape = encoder.port
    turn = y + GAP / 2 + 6
    canvas.shape_label(x - 7, (y + turn) / 2 + 6, shape)
    canvas.line([(x, y), (x, turn), (channel, turn), (channel, top + h / 2),
                 (left, top + h / 2)], head="right")
    canvas.text(x, turn + 16, name, "tc-d-io")
    return canvas.right + 12, max(decoder.y, turn + 22) + 8


def _render_attention(canvas: _Canvas, layout: dict) -> tuple[float, float]:
    """Multi-head attention: three projections side by side, the heads, one output."""
    narrow, spacing = 168, 196
    xs = [24 + narrow / 2 + 60 + k * spacing for k in range(3)]
    left, right = xs[0] - narrow / 2, xs[2] + narrow / 2
    y = 6.0
    for x, name in zip(xs, layout["terminals"], strict=True):
        canvas.text(x, y + 12, name, "tc-d-io")
    y += 18
    top = y + GAP
    for x, i, shape in zip(xs, layout["lanes"], layout["inputs"], strict=True):
        canvas.line([(x, y), (x, top)])
        canvas.shape_label(x - 7, (y + top) / 2 + 4, shape)
        h = canvas.block(i, x - narrow / 2, top, narrow)
    y = top + h
    for step in ("split", "core"):
        i = layout[step]
        b = canvas.blocks[i]
        top = y + GAP
        for x, shape in zip(xs, b.inputs, strict=True):
            canvas.line([(x, y), (x, top)])
            canvas.shape_label(x - 7, (y + top) / 2 + 4, shape)
        h = canvas.block(i, left, top, right - left)
        y = top + h
    core = canvas.blocks[layout["core"]]
    weights_end = y + GAP + 6
    canvas.line([(xs[2], y), (xs[2], weights_end)])
    canvas.shape_label(xs[2] - 7, (y + weights_end) / 2 + 4, core.outputs[1])
    canvas.text(xs[2], weights_end + 13, _("attention weights"), "tc-d-io")
    cx = xs[1]
    for step in ("merge", "out"):
        i = layout[step]
        top = y + GAP
        canvas.line([(cx, y), (cx, top)])
        canvas.shape_label(cx - 7, (y + top) / 2 + 4, canvas.blocks[i].inputs[0])
        y = top + canvas.block(i, cx - BW / 2, top, BW)
    end = y + GAP
    canvas.line([(cx, y), (cx, end)])
    canvas.shape_label(cx - 7, (y + end) / 2 + 4, layout["output"])
    canvas.text(cx, end + 13, _("output"), "tc-d-io")
    return right + 20, end + 26


# --- the page ------------------------------------------------------------------------------------

def _assets() -> tuple[str, str]:
    """The diagram's JavaScript and CSS, compacted."""
    return asset("common.js", "diagram.js"), asset("diagram.css")


def _json_attribute(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return html.escape(text, quote=True)


def _subtitle(module: nn.Module, cls: type) -> str:
    """What sets this module apart, in the reader's language: norm order, heads, layers."""
    parts: list[str] = []
    layer = None
    if cls in (EncoderLayer, DecoderLayer):
        layer = module
    stacks = _stacks(module)
    if stacks:
        layer = stacks[0][0]
    if layer is not None:
        parts.append(_("pre-norm (LayerNorm before each sub-layer)") if layer.norm_first
                     else _("post-norm (LayerNorm after each sum)"))
        if stacks:
            count = len(stacks[0])
            parts.append(ngettext("{count} layer", "{count} layers", count).format(count=count))
        attn = layer.self_attn
    else:
        attn = module if isinstance(module, MultiHeadAttention) else None
    if attn is not None:
        parts.append(ngettext("{count} head", "{count} heads", attn.num_heads)
                     .format(count=attn.num_heads))
        parts.append(f"d_model\u00a0=\u00a0{format_integer(attn.d_model)}")
    elif isinstance(module, FeedForward):
        parts.append(f"d_model\u00a0=\u00a0{format_integer(module.d_model)}")
        parts.append(f"d_ff\u00a0=\u00a0{format_integer(module.linear1.out_features)}")
    return ", ".join(parts)


class Diagram(HtmlOutput):
    """A module drawn from its own tree: display it in a notebook, or :meth:`save` it.

    Attributes:
        module: the module drawn.
        model: the ``data-model`` dict (``module``, ``config``, ``parameters``, ``blocks``).
        blocks: the :class:`Block` s, in the order the data flows through them.
        language: the language of its texts.
        links: whether its blocks are links to the book's sections (the book build).
    """

    def __init__(self, module: nn.Module, *, example: object = None,
                 links: bool | None = None) -> None:
        cls = _known_class(module)
        config_of, plan_of = SUPPORTED[cls]
        self.module, self.cls = module, cls
        self.config = config_of(module)
        _check_rebuilds(module, cls, self.config)
        self.language = get_language()
        self.links = static_build() if links is None else bool(links)
        plan, self.layout = plan_of(module)
        self.blocks = plan.blocks
        total = sum(p.numel() for p in module.parameters())
        counted = sum(b.parameters for b in self.blocks)
        missing = [n for n, p in module.named_parameters() if id(p) not in plan.counter.owner]
        if missing or counted != total:
            raise RuntimeError(f"the diagram of {cls.__name__} leaves out parameters {missing[:3]}"
                               f" ({counted} counted of {total}): please report this bug")
        self.parameters = total
        self.sizes = {} if example is None else _example_sizes(module, cls, example)
        if self.sizes:
            self._substitute()
        self.subtitle = _subtitle(module, cls)
        self.model = {
            "module": cls.__name__,
            "config": self.config,
            "parameters": total,
            "blocks": [self._block_model(b) for b in self.blocks],
        }

    def _substitute(self) -> None:
        def sub(shape: Shape) -> Shape:
            return tuple(self.sizes.get(d, d) if isinstance(d, str) else d for d in shape)

        for b in self.blocks:
            b.inputs = [sub(s) for s in b.inputs]
            b.outputs = [sub(s) for s in b.outputs]
        for key in ("output", "weights", "memory"):
            if key in self.layout:
                self.layout[key] = sub(self.layout[key])
        self.layout["inputs"] = [sub(s) for s in self.layout.get("inputs", [])]
        for lane in self.layout.get("lanes", []):
            if isinstance(lane, list):
                for k, step in enumerate(lane):
                    if step[0] in ("out", "aside", "port"):
                        lane[k] = (*step[:2], sub(step[2]))

    def _block_model(self, b: Block) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": b.kind, "class": b.cls, "parameters": b.parameters,
            "input": [list(s) for s in b.inputs], "output": [list(s) for s in b.outputs],
            "href": section_href(b.section, self.language), "section": b.section,
            "label": b.name,
        }
        if b.repeat > 1:
            out["repeat"] = b.repeat
        if b.shares is not None:
            out["shares"] = b.shares
        return out

    # -- texts ------------------------------------------------------------------------------------

    def title(self, *, markup: bool = False) -> str:
        """``EncoderLayer · post-norm (...), 4 heads, d_model = 32 · 12,704 parameters``
        (``markup``: HTML, the class name as code)."""
        count = ngettext("{count} parameter", "{count} parameters", self.parameters).format(
            count=format_integer(self.parameters))
        name = f"<code>{self.cls.__name__}</code>" if markup else self.cls.__name__
        rest = (html.escape(p) if markup else p for p in (self.subtitle, count) if p)
        return " · ".join((name, *rest))

    def summary(self, *, markup: bool = False) -> str:
        """The diagram in one or two sentences: its accessible name and the text
        description's opening (``markup``: HTML, the class name as code)."""
        count = format_integer(self.parameters)
        text = ngettext(
            "{module} with {count} parameter; the data flows from the top down.",
            "{module} with {count} parameters; the data flows from the top down.",
            self.parameters)
        repeats = sorted({b.repeat for b in self.blocks if b.repeat > 1})
        for n in repeats:
            text += " " + ngettext(
                "The blocks in the frame marked {n} × form one layer, which is repeated {n} "
                "time with its own weights.",
                "The blocks in the frame marked {n} × form one layer, which is repeated {n} "
                "times, each with its own weights.", n).replace("{n}", str(n))
        if not markup:
            return text.format(module=self.cls.__name__, count=count)
        return html.escape(text).format(module=f"<code>{self.cls.__name__}</code>",
                                        count=html.escape(count))

    def _details(self, i: int, b: Block) -> str:
        """One block's details as HTML: the text description's item and the hover panel."""
        count = format_integer(b.parameters)
        params = ngettext("{count} parameter", "{count} parameters", b.parameters).format(
            count=count)
        if b.repeat > 1:
            each = format_integer(b.parameters // b.repeat)
            params += ", " + ngettext("{each} in the only layer", "{each} in each of the {n} "
                                      "layers", b.repeat).format(each=each, n=b.repeat)
        if b.shares is not None:
            params += ", " + _("shares its weights with “{name}”").format(
                name=self.blocks[b.shares].name)
        shapes = _("shape: {input} → {output}").format(input=shapes_text(b.inputs),
                                                       output=shapes_text(b.outputs))
        number = html.escape(b.section)
        if self.links:
            href = html.escape(section_href(b.section, self.language), quote=True)
            where = _("taught in section {section}").format(
                section=f'<a href="{href}">{number}</a>')
        else:
            where = _("taught in section {section} of the course book").format(section=number)
        notes = "".join(f"<br>{html.escape(n)}" for n in b.notes)
        cls = _("class: {name}").format(name=f"<code>{html.escape(b.cls)}</code>")
        return (f'<li data-i="{i}"><b>{html.escape(b.name)}</b>{notes}<br>{shapes}'
                f"<br>{html.escape(params)}<br>{cls}<br>{where}</li>")

    def hint(self) -> str:
        text = _("Hover over a block, or reach it with the Tab key, to see its shapes, its "
                 "parameters and the class that implements it.")
        if self.links:
            text += " " + _("Click a block to open the section that teaches it.")
        return text

    # -- output -----------------------------------------------------------------------------------

    def _canvas(self) -> tuple[_Canvas, float, float]:
        canvas = _Canvas(self.blocks, self.links)
        render = _render_attention if self.layout["kind"] == "attention" else _render_lanes
        width, height = render(canvas, self.layout)
        return canvas, math.ceil(width), math.ceil(height)

    @property
    def svg(self) -> str:
        """The drawing alone, as a standalone SVG document with its style (no script)."""
        canvas, width, height = self._canvas()
        _script, style = _assets()
        text = canvas.svg(width, height, self.summary(), root_class="tc-diagram tc-d-svg")
        return text.replace(">", f"><style>{style}</style>", 1)

    def html(self) -> str:
        """The self-contained HTML fragment: inline style, drawing, text and script."""
        script, style = _assets()
        canvas, width, height = self._canvas()
        items = "".join(self._details(i, b) for i, b in enumerate(self.blocks))
        described = html.escape(_("Text description"))
        without_script = _("Every block's shapes, parameters and class are in the text "
                           "description below.")
        return (
            f'<div class="tc-diagram tex2jax_ignore mathjax_ignore" lang="{self.language}" '
            f'data-model="{_json_attribute(self.model)}">'
            f"<style>{style}</style>"
            f'<p class="tc-d-title">{self.title(markup=True)}</p>'
            f'<div class="tc-d-figure">{canvas.svg(width, height, self.summary())}</div>'
            f'<div class="tc-d-panel"><p class="tc-d-nojs">{html.escape(without_script)}</p>'
            f'<p class="tc-d-hint" hidden>{html.escape(self.hint())}</p></div>'
            f'<details class="tc-d-text"><summary>{described}</summary>'
            f"<p>{self.summary(markup=True)}</p><ol>{items}</ol></details>"
            f"<script>{script}</script>"
            f"</div>"
        )

    def page_title(self) -> str:
        return self.title()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the diagram to a standalone HTML page (or, for a ``.svg`` path, the drawing
        alone)."""
        path = Path(path)
        if path.suffix.lower() == ".svg":
            path.write_text(self.svg, encoding="utf-8")
            return path
        return super().save(path)

    def beside(self, *others: Diagram) -> DiagramRow:
        """This diagram and others side by side (they wrap on a narrow page)."""
        return DiagramRow(self, *others)

    def details(self) -> str:
        count = len(self.blocks)
        return ngettext("{count} block", "{count} blocks", count).format(
            count=format_integer(count))


class DiagramRow(HtmlOutput):
    """Several diagrams side by side (chapter 7's post-norm and pre-norm layers)."""

    def __init__(self, *diagrams: Diagram) -> None:
        if not diagrams or not all(isinstance(d, Diagram) for d in diagrams):
            raise TypeError("DiagramRow takes Diagram objects (from tc.diagram)")
        self.diagrams = diagrams
        self.language = diagrams[0].language

    def html(self) -> str:
        return ('<div class="tc-diagram-row" style="display:flex;flex-wrap:wrap;gap:1em;'
                'align-items:flex-start">'
                + "".join(f'<div style="flex:1 1 18em;min-width:0">{d.html()}</div>'
                          for d in self.diagrams)
                + "</div>")

    def page_title(self) -> str:
        return self.diagrams[0].title()

    def details(self) -> str:
        count = len(self.diagrams)
        return ngettext("{count} diagram side by side", "{count} diagrams side by side",
                        count).format(count=format_integer(count))


def diagram(module: nn.Module, *, example: object = None) -> Diagram:
    """Draw one of the course's modules from its own tree.

    Args:
        module: a ``MultiHeadAttention``, ``FeedForward``, ``EncoderLayer``,
            ``DecoderLayer``, ``Encoder``, ``Decoder``, ``Transformer``,
            ``TransformerClassifier``, ``BertEncoder`` or ``LanguageModel`` (on any device,
            the ``meta`` device included).
        example: an input, to show its sizes instead of B and L: a ``(B, L, d)`` tensor for
            layers and stacks (``(x, memory)`` for a decoder; ``query`` or ``(query, key,
            value)`` for attention), ``(B, L)`` ids for models (``(src, tgt)`` for the
            Transformer). The module runs on it once, in eval mode and without changing the
            random state.

    Returns:
        A :class:`Diagram`: it displays itself in a notebook, ``.html()`` is the fragment,
        ``.svg`` the drawing alone, ``.save(path)`` a standalone page.

    Raises:
        TypeError: for a module the package does not know (or not a module).
        ValueError: for a module whose parameters its class would not build, or a wrong
            example.
    """
    return Diagram(module, example=example)
