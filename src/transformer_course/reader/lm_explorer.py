"""The language-model explorer: a trained :class:`~transformer_course.LanguageModel` writing
in the reader's browser, with no kernel.

Python packs the model: its configuration, its characters and every entry of its
``state_dict`` (8-bit integers with one scale per row for the matrices, 16-bit floats for the
vectors, by default). The page (``js/lm_explorer.js``) unpacks them and runs the forward
pass itself, for one new position at a time::

    x      = embed[id] + position[t]                          (d_model,)
    per layer:  h = LN1(x);  q, k, v = W_q h, W_k h, W_v h     (keys and values cached)
                a_head = softmax(q_head · K_head^T / sqrt(d_head))   over positions 0..t
                x = x + W_o concat(a_head V_head);  x = x + W_2 gelu(W_1 LN2(x))
    logits = embed @ LN_final(x)                              (V,), the tied output layer

and samples the next character: ``softmax(logits / T)`` (``T = 1/β``; ``T = 0`` is the
argmax), top-k, then top-p, with a seeded random stream. Special tokens are never written.

    >>> from transformer_course import widgets
    >>> explorer = widgets.lm_explorer(model, tokenizer, prompt="The a")  # doctest: +SKIP
    >>> explorer                        # in a notebook: the explorer   # doctest: +SKIP

The page's root, ``<div class="tc-explorer" data-kind="lm">``, holds in ``data-state`` the
JSON ``{prompt, text, temperature, top_k, top_p, seed, steps, logits, attention,
cache_positions}`` after every change (``logits``: the V next-character logits given
``text``; ``attention[layer][head]``: the attention row of the last position of ``text``),
and the weights in ``<script type="application/json" class="tc-weights">`` (``config``,
``chars``, ``tensors``), from which :func:`model_from_weights` rebuilds the model the page
runs.
"""

from __future__ import annotations

import base64
import copy
import math
import sys
from typing import Any

import torch

from .._checks import check_int, check_real
from ..data import CharTokenizer
from ..i18n import format_integer, get_language, ngettext
from ..i18n import gettext as _
from ..lm import LanguageModel
from .page import HtmlOutput, asset, inline_json, number_format, trust_note

__all__ = [
    "FORMATS",
    "TEMPERATURE_MAX",
    "WRITE_LENGTH",
    "LMExplorer",
    "lm_explorer",
    "lm_weights",
    "model_from_weights",
]

FORMATS = ("int8", "float16", "float32")
"""How the weights can be stored in the page: ``int8`` (a scale per row for matrices, 16-bit
floats for vectors; the default), ``float16``, or ``float32`` (exact, twice the size)."""

TEMPERATURE_MAX = 2.0
"""The right end of the temperature slider."""

WRITE_LENGTH = 80
"""The most characters one press of "write a line" adds (it also stops after a line break)."""

SEED_MAX = 2**32 - 1

# Example prompts in the reader's language: course content, as the explorers' sentences.
PROMPTS = {"en": "The attention we", "fr": "L’attention", "it": "L’attenzione"}


# --- the weights, packed for the page -----------------------------------------------------------

def _config(model: LanguageModel) -> dict[str, Any]:
    """The keyword arguments that rebuild ``model`` with :class:`LanguageModel`."""
    layer = model.blocks[0]
    return {
        "vocab_size": model.vocab_size,
        "d_model": model.embed.embedding_dim,
        "num_heads": layer.self_attn.num_heads,
        "num_layers": model.num_layers,
        "d_ff": layer.ff.linear1.out_features,
        "dropout": float(model.dropout.p),
        "max_len": model.max_len,
        "tie_embeddings": model.head.weight is model.embed.weight,
        "norm_first": bool(layer.norm_first),
    }


def _bytes(t: torch.Tensor) -> bytes:
    """The little-endian bytes of a contiguous CPU tensor (no NumPy needed)."""
    raw = t.contiguous().view(torch.uint8)
    if sys.byteorder != "little" and t.element_size() > 1:  # pragma: no cover (big-endian)
        raw = raw.view(-1, t.element_size()).flip(-1)
    return bytes(raw.reshape(-1).tolist())


def _b64(t: torch.Tensor) -> str:
    return base64.b64encode(_bytes(t)).decode("ascii")


def _encode(t: torch.Tensor, fmt: str) -> dict[str, Any]:
    """One tensor as the page stores it (``data``: base64 of little-endian numbers)."""
    t = t.detach().to("cpu", torch.float32).contiguous()
    entry: dict[str, Any] = {"shape": list(t.shape)}
    if fmt == "int8" and t.dim() == 2:
        scale = t.abs().amax(dim=1) / 127.0  # (rows,): the largest weight of a row is ±127
        safe = torch.where(scale > 0, scale, torch.ones_like(scale))
        q = (t / safe[:, None]).round().clamp(-127, 127).to(torch.int8)  # (rows, cols)
        entry.update(dtype="int8", data=_b64(q), scale=_b64(scale))
    elif fmt == "float32":
        entry.update(dtype="float32", data=_b64(t))
    else:
        entry.update(dtype="float16", data=_b64(t.to(torch.float16)))
    return entry


def _decode(entry: dict[str, Any]) -> torch.Tensor:
    """The float32 tensor the page computes with (int8 times its row's scale)."""
    shape = [int(n) for n in entry["shape"]]
    dtypes = {"int8": torch.int8, "float16": torch.float16, "float32": torch.float32}
    if entry.get("dtype") not in dtypes:
        raise ValueError(f"a tensor's dtype must be one of {sorted(dtypes)}, got "
                         f"{entry.get('dtype')!r}")
    raw = bytearray(base64.b64decode(entry["data"]))
    values = torch.frombuffer(raw, dtype=dtypes[entry["dtype"]]) if raw else torch.zeros(0)
    values = values.to(torch.float32).reshape(shape)
    if entry["dtype"] == "int8":
        scale = torch.frombuffer(bytearray(base64.b64decode(entry["scale"])),
                                 dtype=torch.float32)
        values = values * scale[:, None]
    return values


def _check_model(model: object) -> LanguageModel:
    if not isinstance(model, LanguageModel):
        raise TypeError(f"model must be a transformer_course.LanguageModel, got "
                        f"{type(model).__name__}")
    for key, t in model.state_dict().items():
        if not t.is_floating_point():
            raise ValueError(f"model.state_dict()[{key!r}] has dtype {t.dtype}; the page needs "
                             f"floating-point weights")
        if t.device.type == "meta":
            raise ValueError(f"model.state_dict()[{key!r}] is on the meta device: load the "
                             f"trained weights first")
        if not torch.isfinite(t).all():
            raise ValueError(f"model.state_dict()[{key!r}] of shape {tuple(t.shape)} holds NaN "
                             f"or infinite values")
    return model


def _check_tokenizer(tokenizer: object, model: LanguageModel) -> CharTokenizer:
    if not isinstance(tokenizer, CharTokenizer):
        raise TypeError(f"tokenizer must be a data.CharTokenizer (one id per character), got "
                        f"{type(tokenizer).__name__}")
    if len(tokenizer) != model.vocab_size:
        raise ValueError(f"tokenizer has {len(tokenizer)} tokens but model.vocab_size="
                         f"{model.vocab_size}: they must be the model's own tokenizer")
    if len(tokenizer) <= len(tokenizer.specials):
        raise ValueError(f"tokenizer has only its {len(tokenizer.specials)} special tokens: "
                         f"no character to write")
    return tokenizer


def lm_weights(model: LanguageModel, tokenizer: CharTokenizer, *,
               weights: str = "int8") -> dict[str, Any]:
    """The model and its characters as the page receives them (the ``tc-weights`` JSON).

    Args:
        model: a :class:`~transformer_course.LanguageModel` (on any device).
        tokenizer: its :class:`~transformer_course.data.CharTokenizer`.
        weights: how to store the weights, one of :data:`FORMATS`.

    Returns:
        ``{"format", "config", "chars", "specials", "unk_id", "layer_norm_eps",
        "tensors"}``: ``config`` the keyword arguments of :class:`LanguageModel` (with
        ``vocab_size``); ``chars`` the tokenizer's symbols in id order (special tokens by
        their names, ``"<pad>"``, ...); ``specials`` their ids by name; ``tensors`` every
        entry of ``model.state_dict()`` by its key, ``{"dtype", "shape", "data"}`` (base64
        of little-endian numbers; an ``int8`` matrix adds ``scale``, one float32 per row,
        and stands for ``data * scale[row]``).
    """
    model = _check_model(model)
    tokenizer = _check_tokenizer(tokenizer, model)
    if weights not in FORMATS:
        raise ValueError(f"weights must be one of {FORMATS}, got {weights!r}")
    return {
        "format": 1,
        "config": _config(model),
        "chars": list(tokenizer.itos),
        "specials": {name: tokenizer.stoi[name] for name in tokenizer.specials},
        "unk_id": tokenizer.unk_id,
        "layer_norm_eps": float(model.blocks[0].norm1.eps),
        "tensors": {key: _encode(t, weights) for key, t in model.state_dict().items()},
    }


def model_from_weights(weights: dict[str, Any]) -> LanguageModel:
    """The model the page runs, rebuilt from its weights JSON (dequantised, in eval mode).

    Args:
        weights: what :func:`lm_weights` returns, or the parsed ``tc-weights`` JSON of a page.
    """
    if not isinstance(weights, dict) or not {"config", "tensors"} <= set(weights):
        raise TypeError("weights must be the dict of lm_weights() (with 'config' and "
                        "'tensors')")
    model = LanguageModel(**weights["config"])
    state = {key: _decode(entry) for key, entry in weights["tensors"].items()}
    model.load_state_dict(state)
    return model.eval()


# --- the page's sampling rule, in Python ------------------------------------------------------

_UNSET: Any = object()
_GOLDEN = 0x6D2B79F5
_MASK = 0xFFFFFFFF


def _uniform(seed: int, draw: int) -> float:
    """The page's random number for step ``draw`` (from 0) after seeding with ``seed``:
    mulberry32 of the state ``seed + (draw + 1) * 0x6D2B79F5 mod 2**32``."""
    a = (seed + (draw + 1) * _GOLDEN) & _MASK
    t = ((a ^ (a >> 15)) * (a | 1)) & _MASK
    t = ((t + (((t ^ (t >> 7)) * (t | 61)) & _MASK)) & _MASK) ^ t
    return ((t ^ (t >> 14)) & _MASK) / 2**32


def _distribution(logits: torch.Tensor, allowed: torch.Tensor, temperature: float,
                  top_k: int | None, top_p: float) -> torch.Tensor:
    """The page's distribution of the next character, in float64 (see lm_explorer)."""
    z = logits.double().masked_fill(~allowed, -math.inf)  # (V,): special tokens out
    count = int(allowed.sum())
    if top_k is not None and top_k < count:
        kth = z.topk(top_k).values[-1]
        z = z.masked_fill(z < kth, -math.inf)  # ties with the k-th stay
    if temperature == 0.0:
        probs = torch.zeros_like(z)
        probs[int(z.argmax())] = 1.0  # the first maximum: the lowest id on ties
        return probs
    probs = torch.softmax(z / temperature, dim=-1)
    if top_p < 1.0:
        ids = sorted(range(len(probs)), key=lambda i: (-float(probs[i]), i))
        before, last = 0.0, 0.0
        for i in ids:  # the fewest likeliest whose mass reaches p
            if before >= top_p:
                break
            last = float(probs[i])
            before += last
        probs = torch.where(probs >= last, probs, torch.zeros_like(probs))  # ties stay
        probs = probs / probs.sum()
    return probs


def _pick(probs: torch.Tensor, u: float) -> int:
    """The first id, in id order, whose cumulative probability exceeds ``u``."""
    total, last = 0.0, -1
    for i, p in enumerate(probs.tolist()):
        if p > 0:
            total += p
            last = i
            if total > u:
                return i
    return last


# --- the explorer ----------------------------------------------------------------------------

def _strings(parameters: int, fmt: str) -> dict[str, str]:
    """Every text the page shows, in the reader's language ({name}: filled in by the page)."""
    storage = {"int8": _("matrices in 8 bits with a scale per row, vectors in 16 bits"),
               "float16": _("weights in 16 bits"), "float32": _("weights in 32 bits")}[fmt]
    return {
        "title": _("Language-model explorer"),
        "weights_missing": _("The model's weights did not load from {file}: this page needs "
                             "the folder it came with."),
        "caption": _("Chapter 10's model writes in your browser, one character at a time: "
                     "{parameters} parameters, {storage}.").format(
                         parameters=format_integer(parameters), storage=storage),
        "prompt_label": _("prompt"),
        "prompt_tip": _("Type the beginning of a text, then press Enter: the model starts "
                        "over from it"),
        "restart": _("start over"),
        "restart_tip": _("Back to the prompt, with the seed's random numbers from the start"),
        "step": _("step"),
        "step_tip": _("Write one character"),
        "write": _("write a line"),
        "write_tip": _("Write up to {count} characters, stopping after a line break"),
        "temperature_label": _("temperature T"),
        "temperature_tip": _("T = 1/β: low T sharpens the distribution, high T flattens it"),
        "temperature_readout": _("T = {t}, β = 1/T = {beta}"),
        "temperature_zero": _("T = 0: β = ∞, the argmax (greedy decoding)"),
        "top_k_label": _("top-k"),
        "top_k_placeholder": _("all"),
        "top_k_tip": _("Keep only the k most likely characters (empty: keep them all)"),
        "top_k_invalid": _("top-k must be a whole number ≥ 1, or empty"),
        "top_p_label": _("top-p"),
        "top_p_tip": _("Keep the fewest most likely characters whose probabilities add up to "
                       "p"),
        "top_p_readout": _("p = {p}"),
        "top_p_off": _("p = 1: no cut"),
        "seed_label": _("seed"),
        "seed_tip": _("The same seed and settings write the same text; a new seed starts over"),
        "seed_invalid": _("The seed must be a whole number from 0 to {max}"),
        "text_title": _("the prompt, then what the model wrote"),
        "written": _("characters written: {steps}"),
        "bars_title": _("next character after “{context}”"),
        "bars_model": _("the model's probabilities (T = 1)"),
        "bars_sample": _("what the next step draws from, after T, top-k and top-p"),
        "bars_next": _("the next step writes this one"),
        "bars_draw": _("Random number u = {u}: the next step writes the first character "
                       "whose cumulative probability exceeds u."),
        "bars_greedy": _("T = 0: the next step writes the most likely character."),
        "bars_kept": _("characters that can be drawn: {kept} of {count}"),
        "cut_top_k": _("cut by top-k"),
        "cut_top_p": _("cut by top-p"),
        "rank": _("rank {rank}"),
        "quoted": _("“{char}”"),
        "space": _("space"),
        "line_break": _("line break"),
        "attention_title": _("what the last character, “{char}”, attends to: one row per "
                             "layer and head"),
        "layer_head": _("layer {layer}, head {head}"),
        "earlier": _("the {count} earlier characters together: {weight}"),
        "attention_tip": _("layer {layer}, head {head}: “{char}” (position {position}) "
                           "gets {weight}"),
        "cache_title": _("KV cache"),
        "cache_on": _("{positions} of {max_len} positions cached: {layers} layers × (keys + "
                      "values) × {positions} positions × {d_model} numbers × 4 bytes = "
                      "{bytes} bytes"),
        "cache_off": _("cache off: each step recomputes the keys and values of all "
                       "{positions} positions"),
        "limit": _("The text has reached {max_len} characters, the end of the model's table "
                   "of learned positions: it cannot read further. Start over to write more."),
        "prompt_cut": _("The prompt is cut to its first {max_len} characters: the model "
                        "cannot read more."),
        "unknown": _("Not among the model's characters: {chars}. The model reads each as "
                     "<unk>, a token it never met in training."),
        "empty": _("The prompt is empty: the model starts from a line break, as at the "
                   "beginning of a paragraph."),
        "specials": _("Special tokens ({names}) are never written: the page gives them "
                      "probability 0."),
    }


def _check_prompt(prompt: object, max_len: int) -> str:
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if len(prompt) > max_len:
        raise ValueError(f"prompt has {len(prompt)} characters but the model reads at most "
                         f"max_len={max_len}")
    return prompt


class LMExplorer(HtmlOutput):
    """A trained language model packed for the page, and the page that runs it.

    Display it in a notebook (its ``_repr_html_`` is self-contained HTML), or write it to a
    standalone page with :meth:`save`. Built by :func:`lm_explorer`.

    Attributes:
        config: the keyword arguments of :class:`LanguageModel` (with ``vocab_size``).
        chars: the tokenizer's symbols in id order.
        weights: the ``tc-weights`` JSON (see :func:`lm_weights`).
        page_model: the model the page runs, rebuilt from ``weights`` (dequantised), on the
            CPU in eval mode.
        prompt, temperature, top_k, top_p, seed: the initial setting (``top_k`` None: no
            cut; ``top_p`` 1: no cut).
        language: the language of its texts.
    """

    def __init__(self, model: LanguageModel, tokenizer: CharTokenizer, *, prompt: str,
                 temperature: float, top_k: int | None, top_p: float, seed: int,
                 weights: str) -> None:
        self.weights = lm_weights(model, tokenizer, weights=weights)
        self.config = self.weights["config"]
        self.chars = self.weights["chars"]
        self.format = weights
        self.page_model = model_from_weights(self.weights)
        self._model64: LanguageModel | None = None
        self.parameters = sum(p.numel() for p in model.parameters())
        self.prompt, self.temperature, self.top_k = prompt, temperature, top_k
        self.top_p, self.seed = top_p, seed
        self.language = get_language()
        self.strings = _strings(self.parameters, weights)
        self.numbers = number_format()

    @property
    def nbytes(self) -> int:
        """Bytes of the whole HTML output: weights (as base64), code, style and texts."""
        return len(self.html().encode("utf-8"))

    @property
    def weight_bytes(self) -> int:
        """Bytes of the stored numbers (before base64, which adds a third)."""
        total = 0
        for entry in self.weights["tensors"].values():
            total += len(base64.b64decode(entry["data"]))
            if "scale" in entry:
                total += len(base64.b64decode(entry["scale"]))
        return total

    def reference(self, text: str) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """What the page computes for ``text``, with PyTorch: the ``(V,)`` next-character
        logits and, per layer, the ``(H, L)`` attention rows of the last position.

        Characters outside the vocabulary are read as ``<unk>``; an empty text starts from a
        line break, as on the page.
        """
        ids = self._ids(text)
        with torch.no_grad():
            logits, maps = self.page_model(torch.tensor([ids]), return_attention=True)
        return logits[0, -1], [m[0, :, -1] for m in maps]

    def write(self, prompt: str | None = None, steps: int = WRITE_LENGTH, *,
              temperature: float | None = None, top_k: Any = _UNSET,
              top_p: float | None = None, seed: int | None = None) -> str:
        """The text the page writes: ``prompt`` and ``steps`` more characters (fewer at
        ``max_len``), drawn by the page's rule and random stream, with PyTorch (in float64,
        as the page computes) on :attr:`page_model`.

        Args:
            prompt: the prompt (default: the explorer's).
            steps: how many characters to write.
            temperature, top_k, top_p, seed: the settings (default: the explorer's;
                ``top_k=None`` is no cut).

        Up to rounding (a draw that falls within about 1e-12 of a boundary of the
        cumulative distribution), this is the page's text.

        Returns:
            The prompt followed by what the page would write (an empty prompt: a line break
            first).
        """
        prompt = self.prompt if prompt is None else _check_prompt(prompt, self.config["max_len"])
        steps = check_int("steps", steps)
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        temperature = self.temperature if temperature is None else check_real(
            "temperature", temperature, low=0.0)
        top_k = self.top_k if top_k is _UNSET else top_k
        if top_k is not None and check_int("top_k", top_k) < 1:
            raise ValueError(f"top_k must be >= 1 or None, got {top_k}")
        top_p = self.top_p if top_p is None else check_real("top_p", top_p, low=0.0, high=1.0,
                                                            low_open=True)
        seed = self.seed if seed is None else check_int("seed", seed)
        if not 0 <= seed <= SEED_MAX:
            raise ValueError(f"seed must be in [0, 2**32), got {seed}")
        specials = set(self.weights["specials"].values())
        allowed = torch.tensor([i not in specials for i in range(len(self.chars))])
        if self._model64 is None:  # the page computes in float64
            self._model64 = copy.deepcopy(self.page_model).double()
        model = self._model64
        ids = self._ids(prompt)
        text = prompt or "\n"
        cache = model.new_cache()
        with torch.no_grad():
            logits = model(torch.tensor([ids]), cache=cache)[0, -1]  # (V,)
            for step in range(steps):
                if len(ids) >= self.config["max_len"]:
                    break
                probs = _distribution(logits, allowed, temperature, top_k, top_p)
                token = _pick(probs, _uniform(seed, step))
                ids.append(token)
                text += self.chars[token]
                if len(ids) < self.config["max_len"]:
                    logits = model(torch.tensor([[token]]), cache=cache)[0, -1]
        return text

    def _ids(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        stoi = {c: i for i, c in enumerate(self.chars)}
        ids = [stoi.get(c, self.weights["unk_id"]) for c in (text or "\n")]
        if len(ids) > self.config["max_len"]:
            raise ValueError(f"text has {len(ids)} characters but max_len="
                             f"{self.config['max_len']}")
        return ids

    def payload(self) -> dict[str, Any]:
        """The page's settings, texts and number format (the weights travel apart)."""
        return {
            "version": 1,
            "prompt": self.prompt,
            "temperature": self.temperature,
            "temperature_max": TEMPERATURE_MAX,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "seed": self.seed,
            "seed_max": SEED_MAX,
            "write_length": WRITE_LENGTH,
            "strings": self.strings,
            "numbers": self.numbers,
        }

    def html(self) -> str:
        """The self-contained HTML fragment: inline style, weights, data and script."""
        script = asset("common.js", "lm_explorer.js")
        style = asset("explorer.css", "lm_explorer.css")
        return (
            f'<div class="tc-explorer tex2jax_ignore mathjax_ignore" data-kind="lm" '
            f'lang="{self.language}">'
            f"<style>{style}</style>"
            f'<script type="application/json" class="tc-weights">{inline_json(self.weights)}'
            f"</script>"
            f'<script type="application/json" class="tc-lm-payload">'
            f"{inline_json(self.payload())}</script>"
            f'<div class="tc-x-mount"><p>{trust_note()}</p></div>'
            f"<script>{script}</script>"
            f"</div>"
        )

    def page_title(self) -> str:
        return self.strings["title"]

    def details(self) -> str:
        parameters = ngettext("{count} parameter", "{count} parameters", self.parameters)
        tokens = ngettext("{count} token", "{count} tokens", len(self.chars))
        return _("{parameters}, {tokens}, weights in {format}").format(
            parameters=parameters.format(count=format_integer(self.parameters)),
            tokens=tokens.format(count=format_integer(len(self.chars))), format=self.format)


def lm_explorer(
    model: LanguageModel,
    tokenizer: CharTokenizer,
    *,
    prompt: str | None = None,
    temperature: float = 0.8,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
    weights: str = "int8",
) -> LMExplorer:
    """A trained character-level language model that writes in the reader's browser.

    The page embeds the model's weights and runs its forward pass in JavaScript, with a KV
    cache: the reader types a prompt, sets the temperature ``T = 1/β``, top-k, top-p and a
    seed, and writes one character ("step") or a line ("write a line"). At each step it
    shows the next-character distribution (the ten most likely characters, the model's own
    probabilities and what the next step draws from, with the character it will write
    marked), what the last character attends to in every layer and head, and the KV cache.

    Sampling: ``softmax(logits / T)`` over the characters (special tokens never written;
    ``T = 0`` is the argmax, lowest id on ties), then top-k (ties with the k-th kept), then
    top-p (the fewest most likely characters whose probabilities reach p, ties kept),
    renormalised; the draw inverts the cumulative distribution, in id order, with one
    number of a seeded random stream (mulberry32) per step. The same prompt, seed and
    settings write the same text.

    Characters of the prompt that the tokenizer does not know are read as ``<unk>``, as
    :meth:`~transformer_course.data.CharTokenizer.encode` does; an empty prompt starts from a
    line break. The text stops at the model's ``max_len``.

    Args:
        model: a trained :class:`~transformer_course.LanguageModel` (any device; copied to
            the page).
        tokenizer: its :class:`~transformer_course.data.CharTokenizer`.
        prompt: the initial prompt (default: a short one in the current language); at most
            ``max_len`` characters.
        temperature: the initial T, in ``[0, TEMPERATURE_MAX]``, rounded to 0.01 (the step
            of the page's slider).
        top_k: the initial top-k (``None``: no cut; larger than the vocabulary: no cut).
        top_p: the initial top-p, in ``[0.01, 1]``, rounded to 0.01 (``None`` or 1: no
            cut).
        seed: the seed of the random stream, in ``[0, 2**32)``.
        weights: how the weights are stored, one of :data:`FORMATS` (``int8``: about 190 kB
            for chapter 10's model).

    Raises:
        TypeError: ``model`` is not a LanguageModel, ``tokenizer`` not a CharTokenizer, or a
            setting has the wrong type.
        ValueError: the tokenizer's size differs from ``model.vocab_size``, the weights are
            not finite, or a setting is out of range.
    """
    model = _check_model(model)
    tokenizer = _check_tokenizer(tokenizer, model)
    prompt = _check_prompt(PROMPTS[get_language()] if prompt is None else prompt,
                           model.max_len)
    temperature = round(check_real("temperature", temperature, low=0.0,
                                   high=TEMPERATURE_MAX), 2)  # the slider's step
    if top_k is not None:
        top_k = check_int("top_k", top_k)
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1 or None, got {top_k}")
    top_p = 1.0 if top_p is None else round(check_real("top_p", top_p, low=0.01, high=1.0), 2)
    seed = check_int("seed", seed)
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    if not isinstance(weights, str) or weights not in FORMATS:
        raise ValueError(f"weights must be one of {FORMATS}, got {weights!r}")
    return LMExplorer(model, tokenizer, prompt=prompt, temperature=temperature, top_k=top_k,
                      top_p=top_p, seed=seed, weights=weights)
