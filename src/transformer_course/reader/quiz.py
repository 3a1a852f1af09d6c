"""Quizzes that grade themselves in the page, with numeric keys computed by the package.

A chapter ends with a quiz. Its questions, options and explanations are written by the
notebook in its own language; everything else (buttons, verdicts, the score, number
formats) comes from the package's catalogs in the language of
:func:`transformer_course.set_language`.

    >>> import transformer_course as tc
    >>> quiz = tc.quiz.Quiz()
    >>> quiz.single("Which β gives uniform attention?", ["β → 0", "β → ∞"], answer=0,
    ...             explanation="exp(β s) → 1 for every score.", href="#the-two-limits-of-beta")
    ... # doctest: +ELLIPSIS
    <Quiz: 1 question...>
    >>> quiz.numeric("Weight of the third score for $s = (1, 2, 3)$ and $\\beta = 2$?",
    ...              key="tc.soft_argmax(torch.tensor([1.0, 2.0, 3.0]), beta=2.0)[2]",
    ...              tolerance=0.005, decimals=3, explanation="It is {answer}.",
    ...              href="#from-scores-to-coefficients")  # doctest: +ELLIPSIS
    <Quiz: 2 questions...>
    >>> quiz.questions[1].value  # computed by the package, now  # doctest: +ELLIPSIS
    0.8668...

Four kinds of question:

* ``single``: one right option among several; a click (or Enter or Space) answers.
* ``multiple``: every right option must be selected, then *Check* pressed.
* ``numeric``: a number (or a shape such as ``(2, 8, 10, 64)``) typed, then Enter or
  *Check*. The key is a Python **expression** over ``tc``, ``torch`` and ``math``
  (``key="tc.soft_argmax(...)[2]"``), evaluated when the question is added: the answer is
  the package's own result, and the page records the expression with its value so that a
  test can evaluate it again with the installed package and compare. A reader's number is
  read in the page's format (``0,25`` on a French or Italian page, ``0.25`` on an English
  one, and either wherever it is unambiguous) and accepted within ``tolerance``.
* ``picture``: pick the right one of several small attention maps, drawn as inline SVG
  from tensors (``tc.causal_mask(5)``, a weight matrix...).

Every answer, right or wrong, shows a short explanation (for a wrong option, its own
``feedback`` when given) and a link to the section of the chapter that teaches it. A reader
can answer again at will, and the page keeps a score. On a chapter page of the book, the
reader's answers also stay in their own browser (``localStorage``, ``js/progress.js``): a
reload gives them back, *Start again* forgets them, and :func:`progress_table` (the book's
home page) shows each chapter as done or not, with its score, and a button that clears it.

Texts may hold inline maths between ``$...$`` (typeset by the page's MathJax 3 when there
is one; elsewhere written with Unicode, ``\\beta`` as β) and code between backticks.

The output is self-contained HTML, inline style and script (``js/quiz.js`` and
``js/quiz.css`` next to this module), with no other file and no request to any host: the
static book, Colab, JupyterLab, Notebook 7 and VS Code show the same quiz. Its markup is
the contract the tests use: a root ``.tc-quiz``; each question ``.tc-question`` with
``data-kind`` = ``single``, ``multiple``, ``numeric`` or ``picture``; focusable options
``.tc-option``; ``input.tc-answer`` and ``.tc-check`` for numbers; after an answer the
question's ``data-verdict`` is ``right`` or ``wrong`` and its ``.tc-explanation`` is
visible. The grading data (right options, keys, values, tolerances) is in the root's
``<script type="application/json" class="tc-quiz-data">``; :func:`read_quizzes` reads it
back from a page.
"""

from __future__ import annotations

import html as _html
import json
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..i18n import (
    LANGUAGES,
    format_integer,
    format_number,
    format_percent,
    get_language,
    ngettext,
    speaking,
)
from ..i18n import gettext as _
from .page import HtmlOutput, asset, inline_json, number_format

__all__ = [
    "KINDS",
    "MAX_CELLS",
    "Question",
    "Quiz",
    "evaluate_key",
    "picture_svg",
    "progress_table",
    "read_quizzes",
]

KINDS = ("single", "multiple", "numeric", "picture")
"""The kinds of question, as written in each question's ``data-kind``."""

MAX_CELLS = 16
"""Largest number of rows or columns of a picture (a small map stays readable)."""

MAX_OPTIONS = 8
"""Most options a question may offer."""

VERSION = 1

_ANCHOR = re.compile(r"#[A-Za-z][A-Za-z0-9_.:-]*")


# --- checks at the boundary -----------------------------------------------------------------

def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} must not be empty, got {value!r}")
    dollars = len(re.findall(r"(?<!\\)\$", value))
    if dollars % 2:
        raise ValueError(f"{name} has an unclosed $...$ (an odd number of unescaped $): "
                         f"{value!r}")
    if value.count("`") % 2:
        raise ValueError(f"{name} has an unclosed `code` (an odd number of backticks): "
                         f"{value!r}")
    return value.strip()


def _check_href(href: object) -> str:
    if not isinstance(href, str):
        raise TypeError(f"href must be a str, got {type(href).__name__}")
    if not _ANCHOR.fullmatch(href):
        raise ValueError(f"href must be a section anchor of the chapter's page, such as "
                         f"'#the-inverse-temperature', got {href!r}")
    return href


def _check_section(section: object) -> str | None:
    if section is None:
        return None
    if not isinstance(section, str) or not section.strip():
        raise TypeError(f"section must be a non-empty str such as '2.4', got {section!r}")
    return section.strip()


def _check_options(options: object, *, lowest: int = 2) -> list[str]:
    if isinstance(options, (str, bytes)) or not isinstance(options, Sequence):
        raise TypeError(f"options must be a list of str, got {type(options).__name__}")
    texts = [_check_text(f"options[{i}]", option) for i, option in enumerate(options)]
    if not lowest <= len(texts) <= MAX_OPTIONS:
        raise ValueError(f"options must hold {lowest} to {MAX_OPTIONS} entries, got "
                         f"{len(texts)}")
    repeated = {t for t in texts if texts.count(t) > 1}
    if repeated:
        raise ValueError(f"options must differ from each other; repeated: "
                         f"{sorted(repeated)[0]!r}")
    return texts


def _check_index(name: str, value: object, count: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be the index (an int from 0) of an option, got "
                        f"{type(value).__name__}")
    if not 0 <= int(value) < count:
        raise ValueError(f"{name}={value} is not the index of one of the {count} options "
                         f"(0 to {count - 1})")
    return int(value)


def _check_feedback(feedback: object, count: int) -> dict[int, str]:
    if feedback is None:
        return {}
    if not isinstance(feedback, Mapping):
        raise TypeError(f"feedback must be a dict {{option index: text}}, got "
                        f"{type(feedback).__name__}")
    return {_check_index("feedback key", key, count): _check_text(f"feedback[{key}]", text)
            for key, text in feedback.items()}


def _check_tolerance(tolerance: object) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise TypeError(f"tolerance must be a number >= 0, got {type(tolerance).__name__}")
    value = float(tolerance)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    return value


# --- numeric keys ---------------------------------------------------------------------------

def evaluate_key(key: str) -> float | list[int]:
    """The value of a numeric question's key: a Python expression over ``tc``, ``torch`` and
    ``math``, evaluated now with the installed package.

    The expression is evaluated with PyTorch's global random generator seeded with 0 (and
    restored afterwards), so that a key that draws random numbers gives the same value every
    time.

    Args:
        key: for instance ``"tc.soft_argmax(torch.tensor([1.0, 2.0]), beta=2.0)[1]"``.

    Returns:
        A finite float (from a Python number or a one-element tensor), or a shape as a list
        of ints (from a ``torch.Size``, a tuple or a list of ints).

    Raises:
        TypeError: if ``key`` is not a str, or gives neither a number nor a shape.
        ValueError: if ``key`` is empty, fails to evaluate, or gives NaN or an infinity.
    """
    import transformer_course

    if not isinstance(key, str):
        raise TypeError(f"key must be a str holding a Python expression over tc, torch and "
                        f"math, got {type(key).__name__}")
    if not key.strip():
        raise ValueError("key must not be empty")
    namespace = {"tc": transformer_course, "torch": torch, "math": math}
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            result = eval(compile(key.strip(), "<quiz key>", "eval"), namespace)
    except SyntaxError as error:
        raise ValueError(f"key {key!r} is not a Python expression: {error.msg}") from error
    except Exception as error:
        raise ValueError(f"key {key!r} failed: {type(error).__name__}: {error}") from error
    return _key_value(key, result)


def _key_value(key: str, result: object) -> float | list[int]:
    if isinstance(result, (torch.Size, tuple, list)):
        items = list(result)
        if not items or any(isinstance(i, bool) or not isinstance(i, numbers.Integral)
                            for i in items):
            raise TypeError(f"key {key!r} gives {result!r}: a shape must be a non-empty "
                            f"sequence of ints")
        return [int(i) for i in items]
    if isinstance(result, torch.Tensor):
        if result.numel() != 1 or result.is_complex() or result.dtype == torch.bool:
            raise TypeError(f"key {key!r} gives a tensor of shape {tuple(result.shape)} and "
                            f"dtype {result.dtype}; it must give one real number")
        result = result.detach().cpu().item()
    if isinstance(result, bool) or not isinstance(result, numbers.Real):
        raise TypeError(f"key {key!r} gives a {type(result).__name__}; it must give a "
                        f"number or a shape")
    value = float(result)
    if not math.isfinite(value):
        raise ValueError(f"key {key!r} gives {value}, not a finite number")
    return value


# --- texts: $maths$ and `code` ----------------------------------------------------------------

_GREEK = {name: chr(code) for name, code in (
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4),
    ("epsilon", 0x3B5), ("varepsilon", 0x3B5), ("zeta", 0x3B6), ("eta", 0x3B7),
    ("theta", 0x3B8), ("iota", 0x3B9), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC),
    ("nu", 0x3BD), ("xi", 0x3BE), ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3),
    ("tau", 0x3C4), ("phi", 0x3C6), ("varphi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8),
    ("omega", 0x3C9), ("Gamma", 0x393), ("Delta", 0x394), ("Theta", 0x398),
    ("Lambda", 0x39B), ("Pi", 0x3A0), ("Sigma", 0x3A3), ("Phi", 0x3A6), ("Psi", 0x3A8),
    ("Omega", 0x3A9))}
_SYMBOLS = {
    **_GREEK, "times": "×", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "ne": "≠", "neq": "≠", "approx": "≈", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "mapsto": "↦", "infty": "∞", "in": "∈", "notin": "∉", "sum": "∑", "prod": "∏",
    "ldots": "…", "dots": "…", "cdots": "⋯", "top": "⊤", "pm": "±", "lVert": "‖",
    "rVert": "‖", "Vert": "‖", "mid": "|", "sim": "∼", "propto": "∝", "odot": "⊙",
    "circ": "∘", "partial": "∂", "nabla": "∇", "quad": "\u2003", "qquad": "\u2003\u2003",
    ",": "\u2009", ";": "\u2005", "!": "", " ": " ", "left": "", "right": "", "{": "{",
    "}": "}", "%": "%", "_": "_", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈",
    "rceil": "⌉", "langle": "⟨", "rangle": "⟩", "neg": "¬", "land": "∧", "lor": "∨",
    "log": "log", "exp": "exp", "sin": "sin", "cos": "cos", "max": "max", "min": "min",
    "arg": "arg", "det": "det", "dim": "dim",
}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼"}


def _tex_tokens(tex: str) -> list[str]:
    return re.findall(r"\\[A-Za-z]+|\\.|[{}_^]|[^\\{}_^]", tex)


class _TexReader:
    """A small reader of inline TeX that writes it as HTML with Unicode symbols: the
    fallback shown where the page has no MathJax (and the text MathJax replaces)."""

    def __init__(self, tex: str) -> None:
        self.tokens = _tex_tokens(tex)
        self.at = 0

    def read(self, stop: str | None = None) -> str:
        out = []
        while self.at < len(self.tokens):
            token = self.tokens[self.at]
            if token == stop:
                self.at += 1
                return "".join(out)
            out.append(self.atom())
        return "".join(out)

    def argument(self) -> str:
        """The next group ``{...}`` or single token, as HTML."""
        while self.at < len(self.tokens) and self.tokens[self.at] == " ":
            self.at += 1
        if self.at >= len(self.tokens):
            return ""
        if self.tokens[self.at] == "{":
            self.at += 1
            return self.read("}")
        return self.atom()

    def raw_argument(self) -> str:
        """The next group as plain text (for ``\\text{...}``)."""
        if self.at < len(self.tokens) and self.tokens[self.at] == "{":
            depth, start = 0, self.at
            while self.at < len(self.tokens):
                token = self.tokens[self.at]
                depth += (token == "{") - (token == "}")
                self.at += 1
                if depth == 0:
                    break
            inner = self.tokens[start + 1:self.at - 1]
            return _html.escape("".join(t[1:] if len(t) == 2 and t[0] == "\\" else t
                                        for t in inner))
        return self.atom()

    def atom(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        if token == "{":
            return self.read("}")
        if token in ("_", "^"):
            tag = "sub" if token == "_" else "sup"
            return f"<{tag}>{self.argument()}</{tag}>"
        if token.startswith("\\"):
            name = token[1:]
            if name in ("text", "mathrm", "operatorname", "textrm", "mbox"):
                return self.raw_argument()
            if name in ("boldsymbol", "mathbf", "bm"):
                return f"<b>{self.argument()}</b>"
            if name in ("mathit", "textit", "emph"):
                return f"<i>{self.argument()}</i>"
            if name == "mathbb":
                inner = self.argument()
                return _BLACKBOARD.get(inner, inner)
            if name == "sqrt":
                inner = self.argument()
                return f"√{_grouped(inner)}"
            if name in ("frac", "dfrac", "tfrac"):
                top, bottom = self.argument(), self.argument()
                return f"{_grouped(top)}/{_grouped(bottom)}"
            return _html.escape(_SYMBOLS.get(name, name))
        if token == "}" or token.isspace():
            return ""  # spaces in TeX maths are not typeset
        return _html.escape(token)


def _grouped(fragment: str) -> str:
    """A fragment in parentheses when it is more than one symbol (``√(d + 1)``, ``1/2``)."""
    plain = re.sub(r"<[^>]+>", "", fragment)
    return f"({fragment})" if re.search(r"[\s+\-−·×/]", plain) else fragment


def _tex_html(tex: str) -> str:
    return _TexReader(tex).read()


_MARKUP = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$|`([^`]+)`", re.S)


def _markup(text: str, *, named: bool = False) -> str:
    """A text as HTML: ``$maths$`` in a ``span.tc-math`` (its TeX in ``data-tex``, its
    content readable without MathJax), ```code``` in ``<code>``, ``**strong**`` and
    ``*emphasis*``, the rest escaped. ``named``: each formula is also an image named by its
    Unicode reading, for a text that names a button (see ``_reading``)."""
    out, at = [], 0
    for match in _MARKUP.finditer(text):
        out.append(_emphasis(text[at:match.start()]))
        if match.group(1) is not None:
            tex = match.group(1).strip()
            name = (f' role="img" aria-label="{_html.escape(_reading(tex))}"' if named
                    else "")
            out.append(f'<span class="tc-math" data-tex="{_html.escape(tex)}"{name}>'
                       f"{_tex_html(tex)}</span>")
        else:
            out.append(f"<code>{_html.escape(match.group(2))}</code>")
        at = match.end()
    out.append(_emphasis(text[at:]))
    return "".join(out)


def _reading(tex: str) -> str:
    """A formula's Unicode reading (``x3``, ``β→0``), the name of its image in a button: the
    book draws formulas at build time and MathJax draws them in Jupyter, and a drawn formula
    gives a button no name (the MathML that MathJax adds for screen readers does not count).
    The button is then named by its content, text and formulas read, which holds its
    visible text (WCAG 2.5.3, label in name), as an aria-label on the button would not."""
    return _html.unescape(re.sub(r"<[^>]+>", "", _tex_html(tex)))


def _with_answer(text: str, written: str) -> str:
    """``{answer}`` replaced by the value as the reader writes it; inside ``$maths$`` its
    decimal comma becomes ``{,}`` and a thin space ``\\,`` (TeX would space them out), so
    that the text reads the same with or without MathJax."""
    if "{answer}" not in text:
        return text
    tex = written.replace(",", "{,}").replace("\u202f", "\\,").replace("\u00a0", "\\,")

    def fill(match: re.Match) -> str:
        if match.group(1) is None:
            return match.group(0)
        return match.group(0).replace("{answer}", tex)

    return _MARKUP.sub(fill, text).replace("{answer}", written)


def _emphasis(text: str) -> str:
    """Plain text as HTML, with ``**strong**`` and ``*emphasis*`` as in Markdown."""
    escaped = _html.escape(text.replace("\\$", "$"))
    escaped = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"<em>\1</em>", escaped)


# --- pictures -----------------------------------------------------------------------------------

def _check_picture(name: str, picture: object) -> torch.Tensor:
    if not isinstance(picture, torch.Tensor):
        try:
            picture = torch.as_tensor(picture)
        except (TypeError, ValueError, RuntimeError) as error:
            raise TypeError(f"{name} must be a 2-D tensor, got "
                            f"{type(picture).__name__}") from error
    if picture.dim() != 2:
        raise ValueError(f"{name} must be a 2-D tensor (rows: queries, columns: keys), got "
                         f"shape {tuple(picture.shape)}")
    rows, cols = picture.shape
    if not (1 <= rows <= MAX_CELLS and 1 <= cols <= MAX_CELLS):
        raise ValueError(f"{name} of shape {tuple(picture.shape)} must have 1 to "
                         f"{MAX_CELLS} rows and columns")
    if picture.is_complex():
        raise TypeError(f"{name} must hold real numbers, got dtype {picture.dtype}")
    values = picture.detach().to("cpu", torch.float64)
    if not torch.isfinite(values).all():
        raise ValueError(f"{name} of shape {tuple(picture.shape)} holds NaN or infinite values")
    if (values < 0).any():
        raise ValueError(f"{name} must hold weights >= 0 (attention weights, a mask), got "
                         f"{float(values.min())}")
    return values


def _colour(value: float) -> str:
    """White for 0 to dark blue for 1."""
    low, high = (255, 255, 255), (8, 69, 148)
    r, g, b = (round(lo + (hi - lo) * value) for lo, hi in zip(low, high, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def picture_svg(weights: torch.Tensor, tokens: Sequence[str] | None = None, *,
                cell: int = 16, label: str = "") -> str:
    """A small attention map as inline SVG: a square per (query, key) pair, white for 0 and
    dark blue for the largest value (at least 1, so that weights keep their scale), a row
    per query, a column per key, and the tokens along both sides when given.

    Args:
        weights: ``(L_q, L_k)`` non-negative values (weights, or a mask of 0 and 1), at most
            :data:`MAX_CELLS` on each side.
        tokens: a label per key (and per query, when the map is square).
        cell: the side of a square, in pixels.
        label: the accessible name of the picture.
    """
    values = _check_picture("weights", weights)
    rows, cols = values.shape
    labels = _check_tokens(tokens, cols) if tokens is not None else None
    top = left = 0
    if labels is not None:
        longest = max(len(t) for t in labels)
        left = 6 + 6 * longest
        top = left
    top_margin = top
    width, height = left + cols * cell + 1, top_margin + rows * cell + 1
    scale = max(1.0, float(values.max()))
    parts = [f'<svg class="tc-picture" xmlns="http://www.w3.org/2000/svg" role="img" '
             f'width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
             + (f' aria-label="{_html.escape(label)}"' if label else "") + ">"]
    if label:
        parts.append(f"<title>{_html.escape(label)}</title>")
    for i in range(rows):
        for j in range(cols):
            value = float(values[i, j]) / scale
            parts.append(f'<rect x="{left + j * cell + 0.5}" y="{top_margin + i * cell + 0.5}" '
                         f'width="{cell}" height="{cell}" fill="{_colour(value)}"/>')
    parts.append(f'<rect x="{left + 0.5}" y="{top_margin + 0.5}" width="{cols * cell}" '
                 f'height="{rows * cell}" fill="none" stroke="#8c959f"/>')
    if labels is not None:
        for j, token in enumerate(labels):
            x, y = left + j * cell + cell / 2 + 4, top_margin - 3
            parts.append(f'<text x="{x}" y="{y}" transform="rotate(-60 {x} {y})" '
                         f'font-size="10">{_html.escape(token)}</text>')
        if rows == cols:
            for i, token in enumerate(labels):
                parts.append(f'<text x="{left - 3}" y="{top_margin + i * cell + cell / 2 + 3.5}" '
                             f'text-anchor="end" font-size="10">{_html.escape(token)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _describe_map(values: torch.Tensor, tokens: Sequence[str] | None) -> str:
    """What a picture shows, in words, for a reader who cannot see it: each row's keys with
    their values (percentages for weights, numbers above 1), zeros left out, or the keys
    alone for a mask of 0 and 1. Tokens are quoted: they are data, in any language."""
    rows, cols = values.shape
    keys = [_("“{token}”").format(token=token) for token in _check_tokens(tokens, cols)
            ] if tokens is not None else [
        _("key {index}").format(index=j + 1) for j in range(cols)]
    queries = keys if tokens is not None and rows == cols else [str(i + 1) for i in range(rows)]
    mask = bool(((values == 0) | (values == 1)).all())
    weights = bool((values <= 1).all())
    sentences = []
    for i in range(rows):
        cells = [(keys[j], float(values[i, j])) for j in range(cols) if values[i, j] != 0]
        if not cells:
            text = _("nothing")
        elif mask:
            text = ", ".join(key for key, _value in cells)
        else:
            text = ", ".join(f"{key} {format_percent(v, 0) if weights else format_number(v)}"
                             for key, v in cells)
        sentences.append(_("Row {query}: {keys}.").format(query=queries[i], keys=text))
    return " ".join(sentences)


def _check_tokens(tokens: object, count: int) -> list[str]:
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a list of str, got {type(tokens).__name__}")
    labels = list(tokens)
    if any(not isinstance(t, str) or not t.strip() for t in labels):
        raise TypeError(f"tokens must hold non-empty str labels, got {labels!r}")
    if len(labels) != count:
        raise ValueError(f"tokens has {len(labels)} labels for pictures of {count} columns")
    return labels


# --- the quiz -------------------------------------------------------------------------------------

@dataclass
class Question:
    """One question of a :class:`Quiz`, as given (texts in the notebook's language) and as
    computed (``value`` of a numeric key, the SVG of pictures).

    Attributes:
        kind: one of :data:`KINDS`.
        text: the question.
        options: the options' texts (``single``, ``multiple``); for ``picture``, their
            letters A, B, C...
        answers: the indices of the right options (one, except for ``multiple``).
        explanation: why the answer is right; shown after any answer without a more
            specific text.
        href, section: the anchor of the section that teaches it, and its number as shown.
        feedback: ``{option index: text}`` shown when that option is chosen wrongly (or,
            for ``multiple``, when a right option is left out).
        hint: shown after a wrong numeric answer, instead of the explanation.
        key, value, tolerance, decimals: a numeric question's expression, its value (a
            float, or a shape as a list of ints), the accepted distance, and the decimals
            with which ``{answer}`` is written in its texts.
        pictures: the SVG of each picture option.
    """

    kind: str
    text: str
    explanation: str
    href: str
    section: str | None = None
    options: list[str] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    feedback: dict[int, str] = field(default_factory=dict)
    hint: str | None = None
    key: str | None = None
    value: float | list[int] | None = None
    tolerance: float = 0.0
    decimals: int | None = None
    pictures: list[str] = field(default_factory=list)


def _shown_value(value: float, decimals: int | None) -> float:
    """The number that ``{answer}`` writes: ``decimals`` after the separator, or a whole
    number in full, or 6 significant digits."""
    if decimals is not None:
        return round(value, decimals)
    if value.is_integer():
        return value
    return float(f"{value:.6g}")


def _letter(index: int) -> str:
    return "ABCDEFGH"[index]


class Quiz(HtmlOutput):
    """A quiz: questions added one by one, shown as a self-contained HTML component.

    Add questions with :meth:`single`, :meth:`multiple`, :meth:`numeric` and
    :meth:`picture` (each returns the quiz, so calls can be chained); display the quiz in a
    notebook (its ``_repr_html_``) or write it to a page with :meth:`save`.

    Args:
        language: the language of the buttons, verdicts and numbers (default: the one of
            :func:`transformer_course.set_language`, read now).

    Attributes:
        questions: the :class:`Question` list, in order.
        language: ``"en"``, ``"fr"`` or ``"it"``.
    """

    def __init__(self, *, language: str | None = None) -> None:
        if language is None:
            language = get_language()
        if not isinstance(language, str) or language not in LANGUAGES:
            raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
        self.language = language
        self.questions: list[Question] = []

    # --- adding questions ---------------------------------------------------------------------

    def _common(self, kind: str, text: object, explanation: object, href: object,
                section: object) -> Question:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        return Question(kind=kind, text=_check_text("text", text),
                        explanation=_check_text("explanation", explanation),
                        href=_check_href(href), section=_check_section(section))

    def _add(self, question: Question) -> Quiz:
        self.questions.append(question)
        return self

    def single(self, text: str, options: Sequence[str], answer: int, *, explanation: str,
               href: str, section: str | None = None,
               feedback: Mapping[int, str] | None = None) -> Quiz:
        """A question with one right option.

        Args:
            text: the question.
            options: 2 to 8 different option texts.
            answer: the index of the right option, from 0.
            explanation: why it is right (shown after a right answer, and after a wrong one
                whose option has no ``feedback``).
            href: the anchor of the section that teaches it, e.g. ``"#the-causal-mask"``.
            section: the section's number as the link shows it, e.g. ``"5.2"``.
            feedback: ``{index: text}`` for wrong options: why that option is wrong.

        Raises:
            TypeError, ValueError: for an argument of the wrong type or value, naming it.
        """
        question = self._common("single", text, explanation, href, section)
        question.options = _check_options(options)
        question.answers = [_check_index("answer", answer, len(question.options))]
        question.feedback = _check_feedback(feedback, len(question.options))
        return self._add(question)

    def multiple(self, text: str, options: Sequence[str], answers: Sequence[int], *,
                 explanation: str, href: str, section: str | None = None,
                 feedback: Mapping[int, str] | None = None) -> Quiz:
        """A question with one or more right options, all of which must be selected.

        Args:
            answers: the indices of the right options (at least one, not all of them).
            feedback: ``{index: text}``, shown when that option is selected although it is
                wrong, or left out although it is right.

        The other arguments are those of :meth:`single`.
        """
        question = self._common("multiple", text, explanation, href, section)
        question.options = _check_options(options)
        if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
            raise TypeError(f"answers must be a list of option indices, got "
                            f"{type(answers).__name__}")
        right = sorted({_check_index("answers", a, len(question.options)) for a in answers})
        if not right:
            raise ValueError("answers must name at least one right option, got []")
        if len(right) != len(list(answers)):
            raise ValueError(f"answers has repeated indices: {list(answers)}")
        if len(right) == len(question.options):
            raise ValueError(f"answers names every option ({right}): a question needs at "
                             f"least one wrong option")
        question.answers = right
        question.feedback = _check_feedback(feedback, len(question.options))
        return self._add(question)

    def numeric(self, text: str, key: str, *, explanation: str, href: str,
                tolerance: float = 0.0, decimals: int | None = None,
                section: str | None = None, hint: str | None = None) -> Quiz:
        """A question answered by a number, or by a shape such as ``(2, 8, 10, 64)``.

        The key is evaluated now by :func:`evaluate_key`: its value is the package's own
        result, and the page keeps both the expression and the value.

        Args:
            key: a Python expression over ``tc``, ``torch`` and ``math`` that gives a number
                (a Python number or a one-element tensor) or a shape (a ``torch.Size``, or a
                tuple or list of ints).
            tolerance: the largest accepted distance from the value (>= 0; > 0 when the
                value is not a whole number; 0 for a shape).
            decimals: the digits after the decimal separator with which ``{answer}`` is
                written in ``explanation`` and ``hint`` (default: up to 6 significant
                digits); the number written must itself lie within the tolerance.
            hint: shown after a wrong answer instead of the explanation (which may give the
                answer away).

        The other arguments are those of :meth:`single`; ``explanation`` and ``hint`` may
        hold ``{answer}``, replaced by the value in the reader's number format.
        """
        question = self._common("numeric", text, explanation, href, section)
        value = evaluate_key(key)
        tolerance = _check_tolerance(tolerance)
        if decimals is not None and (isinstance(decimals, bool)
                                     or not isinstance(decimals, int) or decimals < 0):
            raise ValueError(f"decimals must be an int >= 0, got {decimals!r}")
        if isinstance(value, list):
            if tolerance != 0:
                raise ValueError(f"tolerance must be 0 for a shape, got {tolerance}")
        else:
            if tolerance == 0 and not value.is_integer():
                raise ValueError(f"key {key!r} gives {value!r}, not a whole number: "
                                 f"give a tolerance > 0 so that a typed number can match it")
            written = _shown_value(value, decimals)
            if abs(written - value) > tolerance + 1e-12 * max(1.0, abs(value)):
                raise ValueError(f"decimals={decimals} writes the key {value!r} as {written!r}, "
                                 f"which is outside the tolerance {tolerance}")
        question.key, question.value = key.strip(), value
        question.tolerance, question.decimals = tolerance, decimals
        question.hint = None if hint is None else _check_text("hint", hint)
        return self._add(question)

    def picture(self, text: str, pictures: Sequence[object], answer: int, *,
                explanation: str, href: str, section: str | None = None,
                feedback: Mapping[int, str] | None = None,
                tokens: Sequence[str] | None = None) -> Quiz:
        """A question whose options are small attention maps, drawn from tensors.

        Args:
            pictures: 2 to 8 two-dimensional tensors of values >= 0 (attention weights, or a
                mask of 0 and 1), at most :data:`MAX_CELLS` rows and columns each, drawn as
                maps with a row per query and a column per key.
            answer: the index of the right picture (they are labelled A, B, C...).
            tokens: labels of the keys (and of the queries, for square maps), shared by
                every picture.

        The other arguments are those of :meth:`single`.
        """
        question = self._common("picture", text, explanation, href, section)
        if isinstance(pictures, (str, bytes)) or not isinstance(pictures, Sequence):
            raise TypeError(f"pictures must be a list of 2-D tensors, got "
                            f"{type(pictures).__name__}")
        if not 2 <= len(pictures) <= MAX_OPTIONS:
            raise ValueError(f"pictures must hold 2 to {MAX_OPTIONS} entries, got "
                             f"{len(pictures)}")
        maps = [_check_picture(f"pictures[{i}]", p) for i, p in enumerate(pictures)]
        columns = {m.shape[1] for m in maps}
        if tokens is not None and len(columns) != 1:
            raise ValueError(f"tokens are shared by every picture, but the pictures have "
                             f"{sorted(columns)} columns")
        same = [(i, j) for i in range(len(maps)) for j in range(i)
                if maps[i].shape == maps[j].shape and torch.equal(maps[i], maps[j])]
        if same:
            raise ValueError(f"pictures[{same[0][0]}] and pictures[{same[0][1]}] are the same "
                             f"map: a reader could not tell them apart")
        question.answers = [_check_index("answer", answer, len(maps))]
        question.feedback = _check_feedback(feedback, len(maps))
        question.options = [_letter(i) for i in range(len(maps))]
        with speaking(self.language):
            question.pictures = [
                picture_svg(m, tokens, label=_("picture {letter}").format(letter=_letter(i))
                            + ". " + _describe_map(m, tokens))
                for i, m in enumerate(maps)]
        return self._add(question)

    # --- the page -------------------------------------------------------------------------------

    def _strings(self) -> dict[str, str]:
        return {
            "right": _("Right!"),
            "wrong": _("Not quite. Try again."),
            "score": _("Score: {right} / {total}"),
            "not_number": _("This is not a number I can read. Example: {example}"),
            "not_shape": _("This is not a shape I can read. Example: {example}"),
            "you_typed": _("Read as {value}."),
        }

    def payload(self) -> dict[str, Any]:
        """The grading data the page gets: each question's kind, right options, numeric key,
        value and tolerance, plus the texts of verdicts and the number format."""
        questions = []
        for q in self.questions:
            entry: dict[str, Any] = {"kind": q.kind, "href": q.href}
            if q.kind == "numeric":
                entry.update({"key": q.key, "value": q.value, "tolerance": q.tolerance,
                              "shape": isinstance(q.value, list)})
            else:
                entry.update({"options": len(q.options), "answers": q.answers,
                              "feedback": sorted(q.feedback)})
            questions.append(entry)
        with speaking(self.language):
            return {"version": VERSION, "language": self.language, "questions": questions,
                    "strings": self._strings(), "numbers": number_format()}

    def _written(self, q: Question) -> str:
        if isinstance(q.value, list):
            return "(" + ", ".join(str(v) for v in q.value) + ")"
        decimals = 0 if q.decimals is None and q.value.is_integer() else q.decimals
        return format_number(_shown_value(q.value, q.decimals), decimals)

    def _question_html(self, index: int, q: Question) -> str:
        how = {
            "single": _("Pick one answer."),
            "multiple": _("Select every right answer, then press Check."),
            "numeric": _("Type your answer, then press Enter or Check."),
            "picture": _("Pick the right picture."),
        }[q.kind]
        parts = [f'<div class="tc-question" data-kind="{q.kind}" data-index="{index}" '
                 f'role="group">',
                 f'<p class="tc-q-text"><span class="tc-q-number">{index + 1}.</span> '
                 f"{_markup(q.text)}</p>",
                 f'<p class="tc-q-how">{_html.escape(how)}</p>']
        check = _html.escape(_("Check"))  # (not inside f-strings: pybabel would miss them)
        if q.kind == "numeric":
            shape = isinstance(q.value, list)
            placeholder = _("a shape, such as (2, 3)") if shape else _("a number")
            answer_label = _html.escape(_("Your answer"))
            parts.append('<div class="tc-numeric">'
                         f'<input class="tc-answer" type="text" '
                         f'inputmode="{"text" if shape else "decimal"}" autocomplete="off" '
                         f'spellcheck="false" aria-label="{answer_label}" '
                         f'placeholder="{_html.escape(placeholder)}">'
                         f'<button type="button" class="tc-check">{check}</button>')
            if q.tolerance > 0:
                tolerance = _("Accepted within ± {tolerance}").format(
                    tolerance=format_number(q.tolerance))
                parts.append(f'<span class="tc-tolerance">{_html.escape(tolerance)}</span>')
            parts.append("</div>")
        else:
            parts.append('<div class="tc-options">')
            for i, option in enumerate(q.options):
                if q.kind == "picture":
                    content = (f'<span class="tc-letter">{option}</span>{q.pictures[i]}')
                else:
                    content = _markup(option, named=True)  # its formulas read (_reading)
                parts.append(f'<button type="button" class="tc-option" data-option="{i}" '
                             f'aria-pressed="false">{content}</button>')
            parts.append("</div>")
            if q.kind == "multiple":
                parts.append(f'<button type="button" class="tc-check">{check}</button>')
        whys = [("explanation", q.explanation)]
        if q.hint is not None:
            whys.append(("hint", q.hint))
        whys += [(f"option-{i}", text) for i, text in sorted(q.feedback.items())]
        if q.kind == "multiple":
            whys.append(("missing", _("At least one right answer is not selected.")))
        written = self._written(q) if q.kind == "numeric" else ""
        parts.append('<div class="tc-feedback" aria-live="polite">'
                     '<p class="tc-verdict"></p><div class="tc-explanation" hidden>')
        for name, text in whys:
            parts.append(f'<p class="tc-why" data-why="{name}" hidden>'
                         f"{_markup(_with_answer(text, written))}</p>")
        link = (_("Read section {section} again").format(section=q.section)
                if q.section else _("Read the section that teaches it again"))
        parts.append(f'<p class="tc-link"><a href="{_html.escape(q.href)}">'
                     f"{_html.escape(link)}</a></p></div></div></div>")
        return "".join(parts)

    def html(self) -> str:
        """The self-contained HTML fragment: inline style, data and script, nothing else."""
        if not self.questions:
            raise ValueError("this quiz has no question: add some with .single(), "
                             ".multiple(), .numeric() or .picture()")
        script, style = asset("common.js", "progress.js", "quiz.js"), asset("quiz.css")
        with speaking(self.language):
            data = inline_json(self.payload())
            note = _("This quiz's JavaScript has not run. In Jupyter, re-run this cell or "
                     "choose File → Trust Notebook (classic Notebook), the “Trust Notebook” "
                     "command (JupyterLab’s command palette, Ctrl+Shift+C) or the “Not "
                     "Trusted” button (Notebook 7); elsewhere, open the notebook in Jupyter, "
                     "Colab or the "
                     "course book.")
            questions = "".join(self._question_html(i, q) for i, q in enumerate(self.questions))
            score = _("Score: {right} / {total}").format(right=0, total=len(self.questions))
            reset = _("Start again")
        return (
            f'<div class="tc-quiz" lang="{self.language}" data-questions="{len(self.questions)}">'
            f"<style>{style}</style>"
            f'<script type="application/json" class="tc-quiz-data">{data}</script>'
            f'<p class="tc-quiz-note">{_html.escape(note)}</p>'
            f"{questions}"
            f'<div class="tc-quiz-footer"><p class="tc-score" aria-live="polite">'
            f"{_html.escape(score)}</p>"
            f'<button type="button" class="tc-reset">{_html.escape(reset)}</button></div>'
            f"<script>{script}</script>"
            f"</div>"
        )

    def page_title(self) -> str:
        with speaking(self.language):
            return _("Quiz")

    def details(self) -> str:
        count = len(self.questions)
        return ngettext("{count} question", "{count} questions", count).format(
            count=format_integer(count))


# --- reading quizzes back from a page ------------------------------------------------------------

_PAYLOAD = re.compile(
    r'<script type="application/json" class="tc-quiz-data">(.*?)</script>', re.S)


def read_quizzes(page: str) -> list[dict[str, Any]]:
    """The grading data of every quiz in an HTML page, in order (see :meth:`Quiz.payload`).

    Args:
        page: the HTML text of a page (a built chapter, a saved quiz, a notebook output).
    """
    if not isinstance(page, str):
        raise TypeError(f"page must be the HTML text of a page (a str), got "
                        f"{type(page).__name__}")
    return [json.loads(match) for match in _PAYLOAD.findall(page)]


def progress_table(chapters: Sequence[tuple[str, str]], *, language: str | None = None) -> str:
    """The reader's quiz progress, chapter by chapter, as self-contained HTML (the home page).

    The table is filled in the reader's browser from what their chapters' quizzes remembered
    (``js/progress.js``); without JavaScript it says that nothing is stored.

    Args:
        chapters: ``(file name, title)`` of each chapter, in order, e.g.
            ``[("01_attention", "1. Attention: the idea"), ...]``; the file name is the page's
            (``01_attention.html``) and the key under which its quiz remembers answers.
        language: the language of the texts (default: :func:`get_language`).

    Returns:
        The HTML fragment: root ``div.tc-progress``, one row ``[data-chapter]`` per chapter.
    """
    if isinstance(chapters, (str, bytes)) or not isinstance(chapters, Sequence) or not chapters:
        raise ValueError(f"chapters must be a non-empty list of (file name, title) pairs, "
                         f"got {chapters!r}")
    for entry in chapters:
        if (not isinstance(entry, tuple) or len(entry) != 2
                or not re.fullmatch(r"\d\d_[a-z0-9_]+", str(entry[0]))
                or not isinstance(entry[1], str) or not entry[1].strip()):
            raise ValueError(f"each chapter must be a (file name such as '01_attention', "
                             f"title) pair, got {entry!r}")
    language = language or get_language()
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {list(LANGUAGES)}, got {language!r}")
    with speaking(language):
        words = {"none": _("Not started"), "done": _("Done"),
                 "partial": _("{answered} of {total} questions answered"),
                 "score": _("Score: {right} / {total}"), "cleared": _("Progress cleared.")}
        heads = (_("Chapter"), _("Your quiz"))
        caption = _("Your progress, kept in this browser only")
        reset = _("Clear my progress")
    attributes = "".join(f' data-{k}="{_html.escape(v)}"' for k, v in words.items())
    rows = "".join(
        f'<tr data-chapter="{name}" data-state="none"><th scope="row">'
        f'<a href="{name}.html">{_html.escape(title)}</a></th>'
        f'<td class="tc-progress-status">{_html.escape(words["none"])}</td></tr>'
        for name, title in chapters)
    return (f'<div class="tc-progress" lang="{language}"{attributes}>'
            f"<style>{asset('progress.css')}</style>"
            f"<table><caption>{_html.escape(caption)}</caption><thead><tr>"
            f'<th scope="col">{_html.escape(heads[0])}</th>'
            f'<th scope="col">{_html.escape(heads[1])}</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            f'<button type="button" class="tc-progress-reset" hidden>{_html.escape(reset)}'
            f'</button><p class="tc-progress-said" aria-live="polite"></p>'
            f'<script>{asset("common.js", "progress.js")}</script></div>')
