"""bertviz's head and model views for the course's models and for Hugging Face ones.

bertviz draws attention with d3 and jQuery loaded through require.js from a CDN, which
leaves a blank cell offline, and in Colab when require.js is not yet there. These wrappers
load the three libraries themselves, from a base URL that is, in order:

1. the ``base_url`` argument;
2. the environment variable ``TRANSFORMER_COURSE_JS`` (the book build points it at the
   copies that ``npm`` installed and the site serves, so the book works offline);
3. the public CDN (for Colab and Jupyter with internet).
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
from collections.abc import Sequence

import torch

from .._checks import check_int, has_data, shape_of
from .._optional import require
from ..i18n import format_integer, get_language, ngettext, speaking
from ..i18n import gettext as _
from .page import asset

__all__ = ["ENV_VAR", "AttentionView", "attention_of", "head_view", "model_view"]

ENV_VAR = "TRANSFORMER_COURSE_JS"
_CDN = {
    "require": "https://cdnjs.cloudflare.com/ajax/libs/require.js/2.3.6/require.min",
    "d3": "https://cdnjs.cloudflare.com/ajax/libs/d3/5.7.0/d3.min",
    "jquery": "https://cdnjs.cloudflare.com/ajax/libs/jquery/2.0.0/jquery.min",
}
_LOCAL = {"require": "require", "d3": "d3.min", "jquery": "jquery.min"}  # file stems


def _urls(base_url: str | None) -> dict[str, str]:
    """Where to load require.js, d3 and jQuery from (without the ``.js`` suffix)."""
    base = base_url if base_url is not None else os.environ.get(ENV_VAR)
    if not base:
        return dict(_CDN)
    base = base.rstrip("/")
    return {name: f"{base}/{stem}" for name, stem in _LOCAL.items()}


class AttentionView:
    """The HTML of a bertviz view; displays itself in Jupyter, Colab and the book.

    Attributes:
        html: the complete HTML fragment (markup and script).
        title: what it shows, in the reader's language (``bertviz head view: 6 layers × 12
            heads``).
    """

    def __init__(self, html: str, kind: str, num_layers: int, num_heads: int,
                 tokens: Sequence[str], title: str = "") -> None:
        self.html = html
        self.kind, self.num_layers, self.num_heads = kind, num_layers, num_heads
        self.tokens = list(tokens)
        self.title = title or f"bertviz {kind}"
        self.language = get_language()

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        count = len(self.tokens)
        with speaking(self.language):
            tokens = ngettext("{count} token", "{count} tokens", count)
        return f"<{self.title}, {tokens.format(count=format_integer(count))}>"


def _as_layers(attention: object) -> list[torch.Tensor]:
    """Accept a list of per-layer ``(1, H, L, L)`` or ``(H, L, L)`` tensors, or a model output
    with ``.attentions``; return ``(1, H, L, L)`` CPU float64 tensors rounded to three
    decimals."""
    layers = getattr(attention, "attentions", attention)
    if isinstance(layers, torch.Tensor):
        if layers.dim() < 3:
            raise ValueError(f"attention must be per-layer (1, H, L, L) weights, got a tensor "
                             f"of shape {shape_of(layers)}")
        layers = [layers] if layers.dim() in (3, 4) else list(layers)
    if not isinstance(layers, (list, tuple)) or not layers:
        raise TypeError(
            "attention must be a non-empty list of per-layer tensors or an output with "
            f".attentions, got {type(attention).__name__}"
        )
    out = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, torch.Tensor):
            raise TypeError(f"attention[{i}] must be a tensor, got {type(layer).__name__}")
        if layer.dim() == 3:
            layer = layer[None]
        if layer.dim() != 4 or layer.shape[0] != 1 or layer.shape[-1] != layer.shape[-2]:
            raise ValueError(
                f"attention[{i}] must be (1, H, L, L) or (H, L, L) for one sequence, got "
                f"{shape_of(layer)}"
            )
        if not layer.is_floating_point() or not has_data(layer) or not layer.numel():
            raise ValueError(f"attention[{i}] must hold floating-point weights, got dtype "
                             f"{layer.dtype} on {layer.device} with shape {shape_of(layer)}")
        layer = layer.detach().to("cpu", torch.float64)
        if not bool(layer.isfinite().all()):
            raise ValueError(f"attention[{i}] holds NaN or infinite weights")
        # Three decimals are more than a line's opacity can show, and bertviz writes every
        # weight into the page: 0.273 instead of 0.2730903625488281 keeps the page light.
        out.append(layer.round(decimals=3))
    shapes = {tuple(t.shape) for t in out}
    if len(shapes) != 1:
        raise ValueError(f"all layers must have the same shape, got {sorted(shapes)}")
    return out


def _wrap(bertviz_html: str, urls: dict[str, str]) -> str:
    """Make bertviz's HTML load its libraries from ``urls``, whether or not require.js is
    already on the page, once the view comes near the screen."""
    # bertviz returns: a <script src=require.js> tag, the markup, then one inline script.
    match = re.search(r'<script type="text/javascript">\n(.*)\n</script>\s*$', bertviz_html,
                      flags=re.S)
    if match is None:
        raise RuntimeError("unexpected bertviz output: no inline script found")
    markup = re.sub(r"<script src=[^>]*require[^>]*></script>", "", bertviz_html[:match.start()])
    script = _compact_params(match.group(1))
    script = re.sub(r"d3: '[^']*'", f"d3: {json.dumps(urls['d3'])}", script, count=1)
    script = re.sub(r"jquery: '[^']*'", f"jquery: {json.dumps(urls['jquery'])}", script, count=1)
    # require.js gives up on a library that has not arrived 7 s after it asked (its
    # waitSeconds), and the view then never draws: a slow phone, or a busy machine printing
    # a deck, takes longer. No limit: the view draws when d3 and jQuery arrive.
    script, found = re.subn(r"require\.config\(\{", "require.config({\n  waitSeconds: 0,",
                            script, count=1)
    if not found:
        raise RuntimeError("unexpected bertviz output: no require.config to extend")
    if "requirejs([" not in script:
        raise RuntimeError("unexpected bertviz output: no requirejs([...]) call to wrap")
    markup, script = _translate(markup, script)
    # A view holds thousands of SVG elements, which cost a phone seconds: it is drawn when
    # it comes near the screen (common.js's whenNear), at once where there is no
    # .tc-bertviz around the script to watch. bertviz draws into the element it finds by id
    # when d3 arrives; a deck's print view takes its slides out of the page for a frame while
    # it lays them out as pages, and a view whose d3 arrived then found nothing, drew nothing
    # and never tried again (the deck's PDF waited for it). So bertviz's requirejs call is
    # wrapped: its drawing waits until the view is back in the page.
    loader = f"""<script type="text/javascript">
{asset("common.js")}
(function () {{
  var view = document.currentScript && document.currentScript.closest(".tc-bertviz");
  function whenInPage(callback) {{
    if (!view || view.isConnected) callback();
    else setTimeout(function () {{ whenInPage(callback); }}, 50);
  }}
  function draw() {{
    var requirejs = function (modules, callback) {{
      return window.requirejs(modules, function () {{
        var loaded = arguments;
        whenInPage(function () {{ callback.apply(null, loaded); }});
      }});
    }};
{script}
  }}
  function load() {{
    if (window.requirejs) {{ draw(); return; }}
    var tag = document.createElement("script");
    tag.src = {json.dumps(urls["require"] + ".js")};
    tag.onload = draw;
    document.head.appendChild(tag);
  }}
  if (view) window.TcCommon.whenNear(view, load); else load();
}})();
</script>"""
    return markup + loader


def _compact_params(script: str) -> str:
    """bertviz's data as compact JSON, once: its template writes the parameters on the line
    ``const params = PYTHON_PARAMS; // HACK: PYTHON_PARAMS is a template marker ...`` and
    fills in both markers, so the page carried every weight twice (73 KB more per view of a
    6-layer model)."""
    start = script.find("const params = ")
    if start < 0:
        raise RuntimeError("unexpected bertviz output: no `const params =` line found")
    begin = start + len("const params = ")
    params, end = json.JSONDecoder().raw_decode(script, begin)
    line_end = script.find("\n", end)
    line_end = len(script) if line_end < 0 else line_end
    compact = json.dumps(params, separators=(",", ":"), allow_nan=False)
    return f"{script[:begin]}{compact};{script[line_end:]}"


def _translate(markup: str, script: str) -> tuple[str, str]:
    """bertviz's few English words ("Layer:", "Layers", "Heads", "Layer 2, Head 5") in the
    reader's language, and a name for its layer menu (the word before it names nothing for
    a screen reader): the same word, so that what is seen is what is heard. A later bertviz
    that words them otherwise stays English."""
    detail = json.dumps(_("Layer {layer}, head {head}"))
    layer_menu = html_lib.escape(_("Layer:"))
    menu_name = layer_menu.rstrip(": \u00a0\u202f")
    layers, heads = json.dumps(_("Layers")), json.dumps(_("Heads"))
    markup = markup.replace("Layer: <select", f'{layer_menu} <select aria-label="{menu_name}"', 1)
    script = script.replace('.text("Layers")', f".text({layers})", 1)
    script = script.replace('.text("Heads")', f".text({heads})", 1)
    script = script.replace(
        """.text('Layer ' + config.layers[layerIndex] + ", Head " + config.heads[headIndex])""",
        f'.text({detail}.replace("{{layer}}", config.layers[layerIndex])'
        f'.replace("{{head}}", config.heads[headIndex]))', 1)
    return markup, script


def _view(kind: str, attention: object, tokens: Sequence[str], base_url: str | None,
          **options: object) -> AttentionView:
    # imported here: bertviz is an optional dependency (the `course` extra)
    bertviz = require("bertviz", feature="transformer_course.viz", extra="course")

    layers = _as_layers(attention)
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a list of strings, got {type(tokens).__name__}")
    if base_url is not None and not isinstance(base_url, str):
        raise TypeError(f"base_url must be a str, got {type(base_url).__name__}")
    _check_selection(options, len(layers), layers[0].shape[1])
    tokens = [str(t) for t in tokens]
    length = layers[0].shape[-1]
    if len(tokens) != length:
        raise ValueError(f"tokens has {len(tokens)} entries but the attention covers {length} "
                         f"positions ({shape_of(layers[0])})")
    draw = bertviz.head_view if kind == "head view" else bertviz.model_view
    raw = draw(attention=layers, tokens=tokens, html_action="return", **options).data
    html = _wrap(raw, _urls(base_url))
    title = _("bertviz {view}: {layers} layers × {heads} heads").format(
        view=_("head view") if kind == "head view" else _("model view"), layers=len(layers),
        heads=layers[0].shape[1])
    html = f'<div class="tc-bertviz" title="{html_lib.escape(title)}">{html}</div>'
    return AttentionView(html, kind, len(layers), layers[0].shape[1], tokens, title)


def _check_selection(options: dict, num_layers: int, num_heads: int) -> None:
    """Check the ``layer`` and ``heads`` chosen at first against the attention's sizes."""
    layer = options.get("layer")
    if layer is not None and not 0 <= check_int("layer", layer) < num_layers:
        raise ValueError(f"layer must be in [0, {num_layers}), got {layer}")
    heads = options.get("heads")
    if heads is not None:
        for head in heads:
            if not 0 <= check_int("heads[...]", head) < num_heads:
                raise ValueError(f"heads must hold head numbers in [0, {num_heads}), got {head}")


def head_view(attention: object, tokens: Sequence[str], *, layer: int | None = None,
              heads: Sequence[int] | None = None, base_url: str | None = None) -> AttentionView:
    """bertviz's head view: lines from each token to the tokens it attends to, per layer.

    Args:
        attention: per-layer weights, one ``(1, H, L, L)`` (or ``(H, L, L)``) tensor per
            layer, or a model output with ``.attentions`` (ours or Hugging Face's).
        tokens: the ``L`` token strings.
        layer: the layer selected at first.
        heads: the heads shown at first.
        base_url: where require.js, d3 and jQuery are served (see the module docstring).
    """
    if heads is not None and (isinstance(heads, (str, bytes))
                              or not isinstance(heads, Sequence)):
        raise TypeError(f"heads must be a list of head numbers, got {type(heads).__name__}")
    return _view("head view", attention, tokens, base_url, layer=layer,
                 heads=list(heads) if heads is not None else None)


def model_view(attention: object, tokens: Sequence[str], *,
               base_url: str | None = None) -> AttentionView:
    """bertviz's model view: a thumbnail of every head of every layer (click to zoom)."""
    return _view("model view", attention, tokens, base_url)


def attention_of(model: torch.nn.Module, tokenizer: object, text: str
                 ) -> tuple[list[torch.Tensor], list[str]]:
    """Run a BERT-style model on ``text``; return its per-layer attentions and the tokens.

    Works with a Hugging Face ``BertModel`` (loaded with ``attn_implementation="eager"``)
    and with the course's :class:`~transformer_course.BertEncoder`; ``tokenizer`` is a
    Hugging Face tokenizer.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not callable(model):
        raise TypeError(f"model must be a BERT model, got {type(model).__name__}")
    if not callable(tokenizer) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise TypeError(f"tokenizer must be a Hugging Face tokenizer, got "
                        f"{type(tokenizer).__name__}")
    batch = tokenizer(text, return_tensors="pt")
    where = next(model.parameters()).device  # a model on a GPU gets its inputs there
    ids, mask = batch["input_ids"].to(where), batch["attention_mask"].to(where)
    with torch.no_grad():
        try:
            out = model(ids, attention_mask=mask, output_attentions=True)
        except TypeError:  # the course's BertEncoder always returns its attentions
            out = model(ids, attention_mask=mask)
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
    return list(out.attentions), tokens
