"""What the package shows a reader, in the reader's language: messages and numbers.

Every sentence the package shows (checker verdicts, figure texts, explorer captions and
controls, progress bars, summaries) is an English message id looked up in a standard
gettext catalog, ``locale/<lang>/LC_MESSAGES/transformer_course.po``, managed with Babel
(``make catalogs`` extracts, updates and compiles them). Numbers go through Babel's locale
formatting: ``0.5`` is ``0,5`` in French and Italian, and the count ``11720448`` is
``11 720 448`` in French (:func:`format_integer`; the group separator is U+202F). French and
Italian numbers take the minus sign of their typography, ``−`` (U+2212), as the book's prose
writes it (``−0,5``); English keeps the ASCII ``-`` of Python's own prints (``-0.5``), which
a reader can paste back into code. The choices of each language are written
down in the book's style sheet, ``book/style.yml``.

    >>> import transformer_course as tc
    >>> tc.set_language("fr")
    >>> tc.format_percent(0.999)  # doctest: +SKIP
    '99,9\xa0%'

Error messages (``ValueError``, ``TypeError``) stay in English, like Python's and PyTorch's.

Babel is imported on first use, so ``import transformer_course`` stays light.
"""

from __future__ import annotations

import functools
import gettext as _gettext
import io
import math
import numbers
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "N_",
    "format_integer",
    "format_number",
    "format_percent",
    "format_tensor",
    "get_language",
    "gettext",
    "localise_matplotlib",
    "ngettext",
    "set_language",
    "speaking",
    "yes_no",
]

LANGUAGES = ("en", "fr", "it")
DOMAIN = "transformer_course"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_current = {"language": "en"}


def set_language(lang: str) -> None:
    """Choose the language of everything the package shows: ``"en"``, ``"fr"`` or ``"it"``.

    Also the decimal separator of matplotlib's tick labels, once matplotlib is loaded
    (``0,5`` on a French or Italian axis).

    Raises:
        ValueError: for any other value.
    """
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    _current["language"] = lang
    localise_matplotlib()


_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")


def localise_matplotlib() -> None:
    """Make matplotlib's default tick labels follow :func:`get_language`: ``0.5`` is drawn
    ``0,5`` in French and Italian. Does nothing until matplotlib is imported; installed once,
    it reads the language at every label."""
    ticker = sys.modules.get("matplotlib.ticker")
    if ticker is None or getattr(ticker.ScalarFormatter.__call__, "_tc_localised", False):
        return
    original = ticker.ScalarFormatter.__call__

    def __call__(self: object, x: float, pos: int | None = None) -> str:  # noqa: N807
        text = original(self, x, pos)
        return _DECIMAL_POINT.sub(",", text) if get_language() in ("fr", "it") else text

    __call__._tc_localised = True  # type: ignore[attr-defined]
    ticker.ScalarFormatter.__call__ = __call__


@contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Speak ``lang`` for a while, then the language set before: an explorer, a quiz or a
    diagram speaks the language it was built in, whatever was set since.

    Raises:
        ValueError: if ``lang`` is not one of :data:`LANGUAGES`.
    """
    before = get_language()
    set_language(lang)
    try:
        yield
    finally:
        set_language(before)


def get_language() -> str:
    """The language chosen with :func:`set_language` (``"en"`` by default)."""
    return _current["language"]


@functools.cache
def _translations(lang: str) -> _gettext.NullTranslations:
    """The catalog of ``lang``: the compiled ``.mo`` when it is current, else the ``.po``
    compiled in memory with Babel."""
    if lang == "en":
        return _gettext.NullTranslations()
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    po, mo = folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"
    if not po.exists() and not mo.exists():  # a broken install: say it in English
        return _gettext.NullTranslations()
    if mo.exists() and (not po.exists() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as handle:
            return _gettext.GNUTranslations(handle)
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as handle:
        catalog = read_po(handle, locale=lang, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return _gettext.GNUTranslations(buffer)


def gettext(message: str) -> str:
    """``message`` (an English message id) in the current language."""
    return _translations(get_language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message for the count ``n``, in the current
    language."""
    return _translations(get_language()).ngettext(singular, plural, n)


def N_(message: str) -> str:  # noqa: N802 (the gettext convention)
    """Mark ``message`` for the catalogs without translating it now (translate it later
    with :func:`gettext`)."""
    return message


def _locale() -> str:
    return {"en": "en_US", "fr": "fr_FR", "it": "it_IT"}[get_language()]


# The minus sign of each language's numbers: Babel (CLDR) writes the ASCII hyphen-minus in
# all three; French and Italian typography, and the book's prose, use the true minus sign.
MINUS = {"en": "-", "fr": "\u2212", "it": "\u2212"}


def _signed(text: str) -> str:
    """``text`` as Babel wrote it, with the minus sign of the current language, and none on
    a number that rounds to zero (``-0.0001`` at two decimals is ``0.00``, not ``-0.00``)."""
    if text.startswith("-") and re.search(r"\d", text) and not re.search(r"[1-9]", text):
        text = text[1:]
    minus = MINUS[get_language()]
    return text if minus == "-" else text.replace("-", minus)


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        import torch

        if not isinstance(value, torch.Tensor) or value.numel() != 1:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        if value.device.type == "meta" or value.is_complex() or value.dtype == torch.bool:
            raise ValueError(f"{name} must hold one real number, got a tensor of dtype "
                             f"{value.dtype} on {value.device}")
        value = value.item()
    return float(value)


# Babel quantizes with Python's decimal module, whose precision ends near 1e15 digits of
# integer part: larger numbers are written in scientific notation.
_HUGE = 1e15


def format_number(value: float, decimals: int | None = None, *,
                  significant: int = 6) -> str:
    """A number as a reader of the current language writes it.

    Args:
        value: a real number (a one-element tensor is accepted).
        decimals: exactly this many digits after the decimal separator; by default,
            ``significant`` significant digits without trailing zeros.
        significant: the significant digits kept when ``decimals`` is None.

    Returns:
        ``"0.5"`` / ``"0,5"``, ``"1,234.5"`` / ``"1 234,5"`` (U+202F); beyond
        ``significant`` digits a number is rounded, an integer too (``11720448`` gives
        ``"11,720,400"``: a count goes through :func:`format_integer`); tiny and huge numbers
        as a power of ten, ``"1.5 × 10⁻⁷"`` / ``"1,5 · 10⁻⁷"`` (never E-notation);
        ``"∞"`` and ``"NaN"`` as Babel writes them. A negative number starts with ``-`` in
        English and with the minus sign ``−`` (U+2212) in French and Italian.
    """
    from babel import numbers as babel_numbers

    number = _check_real("value", value)
    if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int)
                                 or decimals < 0):
        raise ValueError(f"decimals must be an int >= 0, got {decimals!r}")
    if math.isnan(number) or math.isinf(number):
        return _signed(babel_numbers.format_decimal(number, locale=_locale()))
    if abs(number) >= _HUGE:
        return _scientific(number, significant)
    if decimals is not None:
        pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
        return _signed(babel_numbers.format_decimal(number, format=pattern, locale=_locale(),
                                                    decimal_quantization=True))
    magnitude = abs(number)
    if magnitude and (magnitude < 1e-4 or magnitude >= 10.0 ** (significant + 3)):
        return _scientific(number, significant)
    rounded = float(f"{number:.{significant}g}")
    return _signed(babel_numbers.format_decimal(rounded, format="#,##0.##########",
                                                locale=_locale()))


_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _scientific(number: float, significant: int) -> str:
    """``mantissa × 10ⁿ`` as a reader writes it: ``4.54 × 10⁻¹⁹`` in English, ``4,54 · 10⁻¹⁹``
    in French and Italian (no-break spaces around the sign), never ``4.54E-19``."""
    from babel import numbers as babel_numbers

    mantissa_text, exponent_text = f"{number:.{max(significant - 1, 0)}e}".split("e")
    mantissa, exponent = float(mantissa_text), int(exponent_text)
    digits = _signed(babel_numbers.format_decimal(mantissa, format="0.##########",
                                                  locale=_locale()))
    sign = "×" if get_language() == "en" else "·"
    return f"{digits}\u00a0{sign}\u00a010{str(exponent).translate(_SUPERSCRIPTS)}"


def yes_no(flag: object) -> str:
    """"yes" or "no" in the current language, for a printed check:
    ``print("same output:", tc.yes_no(torch.allclose(a, b)))``."""
    return gettext("yes") if bool(flag) else gettext("no")


def format_integer(value: int) -> str:
    """An integer with the thousands separator of the current language."""
    return format_number(value, 0)


def format_percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage: ``0.999`` -> ``"99.9%"``, ``"99,9\u00a0%"`` in French (a
    no-break space, as CLDR writes it), ``"99,9%"`` in Italian (``"−25,0\u00a0%"`` for
    ``-0.25``: the minus sign of :func:`format_number`)."""
    from babel import Locale
    from babel import numbers as babel_numbers

    number = _check_real("fraction", fraction)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be an int >= 0, got {decimals!r}")
    locale = _locale()
    if not math.isfinite(number) or abs(number) * 100 >= _HUGE:
        sign = babel_numbers.format_percent(0, locale=locale).replace("0", "", 1)  # "%", " %"
        return format_number(number * 100) + sign
    pattern = Locale.parse(locale).percent_formats[None].pattern  # "#,##0%" or "#,##0 %"
    digits = "0" + ("." + "0" * decimals if decimals else "")
    pattern = pattern.replace("0", digits, 1) if "#,##0" not in pattern else pattern.replace(
        "#,##0", "#,##" + digits, 1)
    return _signed(babel_numbers.format_percent(number, format=pattern, locale=locale,
                                                decimal_quantization=True))


def format_tensor(values: object, decimals: int = 2) -> str:
    """A tensor as a reader of the current language reads it, for the chapters' prints.

    Nested brackets as NumPy prints them, columns aligned, every number with exactly
    ``decimals`` digits after the decimal separator of the language (``0,79`` in French and
    Italian), the minus sign of :func:`format_number` (``−1,00`` in French and Italian) and
    no thousands separator, so that a row never reads ambiguously. Integer tensors are
    written without decimals; booleans as ``True`` and ``False``, as Python writes them.

        >>> import torch, transformer_course as tc
        >>> tc.set_language("fr")
        >>> print(tc.format_tensor(torch.tensor([[0.785, 0.0], [0.1, -1.0]])))
        [[ 0,79  0,00]
         [ 0,10 −1,00]]

    Args:
        values: a tensor (or anything ``torch.as_tensor`` takes), on any device.
        decimals: digits after the decimal separator of floating-point entries, >= 0.

    Returns:
        The text, without a trailing newline.
    """
    import torch

    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be an int >= 0, got {decimals!r}")
    if not isinstance(values, torch.Tensor):
        try:
            values = torch.as_tensor(values)
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(f"values must be a tensor or a nested list of numbers, got "
                            f"{type(values).__name__}") from err
    if values.device.type == "meta":
        raise ValueError("values is a tensor on the meta device, which holds no values")
    if values.is_complex():
        raise TypeError(f"values must hold real numbers, got dtype {values.dtype}")
    flat = values.detach().to("cpu").reshape(-1).tolist()
    if values.dtype == torch.bool:
        cells = [str(bool(v)) for v in flat]
    elif values.is_floating_point():
        from babel import numbers as babel_numbers

        pattern = "0" + ("." + "0" * decimals if decimals else "")
        locale = _locale()
        cells = [_signed(babel_numbers.format_decimal(v, format=pattern, locale=locale,
                                                      decimal_quantization=True))
                 if math.isfinite(v) else format_number(v) for v in flat]
        zero = babel_numbers.format_decimal(0.0, format=pattern, locale=locale)
        cells = [zero if c.lstrip("-−") == zero else c for c in cells]  # no "-0,00"
    else:
        cells = [_signed(str(int(v))) for v in flat]
    if values.dim() == 0:
        return cells[0]
    width = max((len(c) for c in cells), default=0)
    cells = [c.rjust(width) for c in cells]
    return _nest(cells, list(values.shape), 1)


def _nest(cells: list[str], shape: list[int], depth: int) -> str:
    """NumPy's layout: ``[a b]`` for a row, rows under each other, blank lines between
    blocks of three dimensions and more."""
    if len(shape) == 1:
        return "[" + " ".join(cells) + "]"
    size = len(cells) // shape[0] if shape[0] else 0
    parts = [_nest(cells[i * size:(i + 1) * size], shape[1:], depth + 1)
             for i in range(shape[0])]
    separator = "\n" * (len(shape) - 1) + " " * depth
    return "[" + separator.join(parts) + "]"
