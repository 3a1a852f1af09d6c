"""Claims: the hidden checks that keep a chapter's sentences true to its outputs.

A sentence of the book that states a fact of the run ("the loss falls at every checkpoint",
"the vocabulary has 96 symbols") is followed by a hidden cell that checks it with
:func:`claim`. What a failed claim does depends on where the notebook runs:

* **In the book build** (``TRANSFORMER_COURSE_STATIC=1``, set by ``make book``), a false
  claim raises :class:`ClaimError`, which fails the build: the book never shows a sentence
  that its own outputs contradict.
* **Anywhere else** (Colab, Jupyter, VS Code, another device, another PyTorch), the hidden
  cells are ordinary cells. A claim that does not hold for this run prints one line in the
  reader's language, "this run differs from the text: ...", and "Run all" goes on.

Three forms, one helper:

    >>> import transformer_course as tc
    >>> tc.claim("every row sums to 1", True)             # a condition
    >>> with tc.claim("the weights are those of beta times 4"):
    ...     assert 2 + 2 == 4                               # assertions in a block
    >>> tc.claim("log V", value=4.7005, shown="4.70")      # a number as the text prints it

A claim is a statement, not a value: it returns None, so that a claim on the last line of a
cell displays nothing in Jupyter or Colab.

The third form pins a number of a sentence at the precision the sentence gives: ``shown``
is the number exactly as the text writes it in the current language (``"4,70"`` in French,
``"11 720 448"``, ``"62,7 %"``), and the claim holds when :func:`format_number` (or
:func:`format_percent` for a percentage) writes ``value`` the same way.
"""

from __future__ import annotations

import html
import re
from types import TracebackType

from ..i18n import format_number, format_percent, get_language
from ..i18n import gettext as _
from ..utils import STATIC_ENV, static_build

__all__ = ["STATIC_ENV", "ClaimError", "claim", "strict"]
_MISSING = object()


class ClaimError(AssertionError):
    """A sentence of the book that this run contradicts (raised in the book build only)."""


def strict() -> bool:
    """Whether a false claim raises (the book build) instead of printing a note."""
    return static_build()


class _Note:
    """What a student sees when a claim does not hold for their run: one line."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return (f'<p class="tc-claim-differs" role="note" style="color:#9a6700">'
                f"⚠ {html.escape(self.text)}</p>")

    def __repr__(self) -> str:
        return f"⚠ {self.text}"


def _differs(text: str, detail: tuple[str, str] | None = None) -> bool:
    """Report a claim that does not hold: raise in the build, else show a note; False."""
    if detail is None:
        message = _("This run differs from the text: {claim}.").format(claim=text)
    else:
        message = _("This run differs from the text: {claim} (the text says {shown}, this "
                    "run gives {value}).").format(claim=text, shown=detail[0], value=detail[1])
    if strict():
        raise ClaimError(message)
    try:
        from IPython.display import display
    except ImportError:  # plain Python: the note goes to the standard error
        import sys

        sys.stderr.write(f"⚠ {message}\n")
    else:
        display(_Note(message))
    return False


class _Block:
    """``with claim(text):``: the assertions inside check the sentence ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.held: bool | None = None

    def __enter__(self) -> _Block:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> bool:
        if kind is None:
            self.held = True
            return False
        if issubclass(kind, ClaimError) or not issubclass(kind, AssertionError):
            return False  # a claim inside a claim already spoke; other errors are bugs
        self.held = _differs(self.text)
        return True  # swallowed: "Run all" goes on

    def __bool__(self) -> bool:
        return bool(self.held)


_NUMBER = re.compile(r"^[+\-−]?[\d\s\u00a0\u202f.,']*\d(?:[.,]\d+)?\s*%?$")


def _decimals(shown: str) -> int:
    """How many digits follow the decimal separator of ``shown`` in the current language."""
    separator = "." if get_language() == "en" else ","
    body = shown.rstrip("% \u00a0\u202f")
    return len(body) - body.rfind(separator) - 1 if separator in body else 0


def _pin(text: str, value: object, shown: object) -> None:
    if not isinstance(shown, str) or not _NUMBER.match(shown.strip()):
        raise ValueError(
            f"shown must be a number written as the text writes it (for example '4.70', "
            f"'4,70', '11 720 448' or '62,7 %'), got {shown!r}"
        )
    shown = shown.strip()
    digits = _decimals(shown)
    if shown.endswith("%"):
        got = format_percent(value, digits)  # type: ignore[arg-type]
    else:
        got = format_number(value, digits)  # type: ignore[arg-type]

    def canonical(s: str) -> str:  # spaces of any kind and minus signs compare equal
        return re.sub(r"[\s\u00a0\u202f]", " ", s).replace("−", "-")

    if canonical(got) != canonical(shown):
        _differs(text, (shown, got))


def claim(text: str, condition: object = _MISSING, *, value: object = _MISSING,
          shown: object = None) -> _Block | None:
    """Check a sentence of the book against this run.

    Args:
        text: the claim, in the reader's language, as the sentence makes it.
        condition: whether it holds. Leave it out to use ``with claim(text):`` around
            ``assert`` statements.
        value: a number of the run that the sentence states (with ``shown``).
        shown: that number exactly as the sentence writes it, in the current language:
            the claim holds when the run's ``value`` is written the same way at the
            precision ``shown`` gives.

    Returns:
        None (a claim that does not hold shows a note outside the book build); a context
        manager, truthy when its assertions held, when ``condition`` and ``value`` are left
        out.

    Raises:
        ClaimError: in the book build, when the claim does not hold.
    """
    if not isinstance(text, str) or not text.strip():
        raise TypeError(f"text must be a non-empty string (the claim), got {text!r}")
    if value is not _MISSING:
        if condition is not _MISSING:
            raise TypeError("give either condition or value= with shown=, not both")
        _pin(text, value, shown)
        return None
    if shown is not None:
        raise TypeError("shown= goes with value=: the number the text states")
    if condition is _MISSING:
        return _Block(text)
    if not bool(condition):
        _differs(text)
    return None
