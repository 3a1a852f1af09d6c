"""The machinery of the exercise checkers: the verdict, and the helpers that call a
student's function and compare what it returns, turning any failure into a sentence."""


from __future__ import annotations

import html
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..i18n import format_integer, format_number, ngettext
from ..i18n import gettext as _

__all__ = ["CheckResult"]


@dataclass(frozen=True)
class CheckResult:
    """The verdict of a checker: ``passed`` and a sentence saying why."""

    name: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        mark = "✓" if self.passed else "✗"
        return _("{mark} {name}: {message}").format(mark=mark, name=self.name,
                                                    message=self.message)

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        mark = "✓" if self.passed else "✗"
        head = f"<b>{mark} {html.escape(self.name)}</b>"
        # The verdict's layout in the reader's language ("nom : message" in French).
        layout = html.escape(_("{mark} {name}: {message}"))
        # `names` in a message are code (the names of the reader's variables): <code> here
        message = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(self.message))
        body = layout.replace("{mark} {name}", head, 1).replace("{message}", message, 1)
        return f'<p style="color:{colour}">{body}</p>'


    def raise_if_failed(self) -> CheckResult:
        """Raise ``AssertionError`` with the message when the check failed."""
        if not self.passed:
            raise AssertionError(repr(self))
        return self


class _CheckFailedError(Exception):
    """Raised inside a checker to stop at the first problem."""


# --- formatting for the reader ---------------------------------------------------------------

def _num(x: float) -> str:
    """A number as the reader writes it (0,5 in French); an int whole, every digit kept
    (format_number keeps 6 significant digits: 7,087,872 would read 7,087,870)."""
    if isinstance(x, int) and not isinstance(x, bool):
        return format_integer(x)
    return format_number(x)


def _shape(dims: Sequence[int]) -> str:
    """A shape or an index: ``(2, 3, 4)``, ``(5,)``."""
    parts = [_num(int(d)) for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _ints(values: object) -> str:
    """A nested list of integers: ``[[5, 8], [7, 1]]``."""
    if isinstance(values, (list, tuple)):
        return "[" + ", ".join(_ints(v) for v in values) + "]"
    return _num(values)


def _kind(obj: object) -> str:
    """What an unexpected object is, for a message: its type and, for a few, its size."""
    if obj is None:
        return "None"
    if isinstance(obj, (tuple, list)):
        return _("{kind} of length {length}").format(kind=type(obj).__name__,
                                                     length=_num(len(obj)))
    return type(obj).__name__


# --- calling the reader's function and comparing ------------------------------------------


def _real(got: object) -> numbers.Real | None:
    """The real number that an int, a float or a one-element real tensor holds; None for
    anything else (a bool, a string, a longer or complex tensor). Callers word the message."""
    value = got
    if isinstance(got, torch.Tensor) and got.numel() == 1 and got.device.type != "meta" \
            and not got.is_complex():
        value = got.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return value


def _number(got: object, *, what: str) -> float:
    """A number from an int, a float or a one-element tensor; a message otherwise."""
    value = _real(got)
    if value is None:
        raise _CheckFailedError(_("on {what} expected a number, got {kind}")
                                .format(what=what, kind=_kind(got)))
    return float(value)

def _call(fn: Callable, *args: object, what: str) -> object:
    try:
        return fn(*args)
    except NotImplementedError:
        raise _CheckFailedError(
            _("on {what} it raised NotImplementedError: replace the raise with your code")
            .format(what=what)) from None
    except (Exception, SystemExit) as err:  # the reader's code may raise anything
        raise _CheckFailedError(
            _("calling it on {what} raised {error}: {detail}")
            .format(what=what, error=type(err).__name__, detail=err)) from None


def _as_tensor(got: object, *, what: str) -> torch.Tensor:
    """A tensor the checker can read: on the CPU, dense, with values."""
    if not isinstance(got, torch.Tensor):
        raise _CheckFailedError(
            _("on {what} it returned {kind}, expected a tensor").format(what=what,
                                                                       kind=_kind(got)))
    if got.device.type == "meta":
        raise _CheckFailedError(
            _("on {what} it returned a tensor on the meta device, which holds no values")
            .format(what=what))
    if got.is_complex():
        raise _CheckFailedError(
            _("on {what} the dtype is {dtype}, expected real numbers").format(what=what,
                                                                             dtype=got.dtype))
    try:
        got = got.detach().to("cpu")
        return got.to_dense() if got.layout != torch.strided else got
    except Exception as err:
        raise _CheckFailedError(
            _("on {what} it returned a tensor that cannot be read: {error}: {detail}")
            .format(what=what, error=type(err).__name__, detail=err)) from None


def _compare(got: object, expected: torch.Tensor, *, what: str, atol: float = 1e-5,
             exact: bool = False) -> None:
    got = _as_tensor(got, what=what)
    if got.shape != expected.shape:
        raise _CheckFailedError(
            # TRANSLATORS: {what} is a test case, such as "a vector of 5 scores" or "beta = 0".
            _("on {what} the shape is {got}, expected {expected}")
            .format(what=what, got=_shape(got.shape), expected=_shape(expected.shape)))
    if expected.dtype == torch.bool:
        if got.dtype != torch.bool:
            raise _CheckFailedError(
                _("on {what} the dtype is {got}, expected torch.bool")
                .format(what=what, got=got.dtype))
        wrong = (got != expected).nonzero()
        if len(wrong):
            index = tuple(wrong[0].tolist())
            raise _CheckFailedError(ngettext(
                "on {what} entry {index} is {got}, expected {expected} ({count} entry differs)",
                "on {what} entry {index} is {got}, expected {expected} "
                "({count} entries differ)", len(wrong))
                .format(what=what, index=_shape(index), got=bool(got[index]),
                        expected=bool(expected[index]), count=_num(len(wrong))))
        return
    if not expected.numel():
        return
    got = got.to(torch.float64)
    expected = expected.detach().to(torch.float64)
    if not torch.isfinite(got).all():
        index = tuple((~torch.isfinite(got)).nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} entry {index} is {value} (not finite)")
            .format(what=what, index=_shape(index), value=_num(got[index].item())))
    error = (got - expected).abs()
    if exact:
        atol = 0.0
    if error.max() > atol:
        index = tuple(int(i) for i in torch.unravel_index(error.argmax(), error.shape))
        raise _CheckFailedError(
            _("on {what} entry {index} is {got}, expected {expected} (off by {error})")
            .format(what=what, index=_shape(index), got=_num(got[index].item()),
                    expected=_num(expected[index].item()), error=_num(error.max().item())))


def _parts(got: object, count: int, names: str, *, what: str) -> Sequence[object]:
    """Check that ``got`` is a tuple (or list) of ``count`` items."""
    if not isinstance(got, (tuple, list)) or len(got) != count:
        raise _CheckFailedError(
            _("on {what} expected a tuple {names}, got {kind}")
            .format(what=what, names=f"`{names}`", kind=_kind(got)))  # the names are code
    return got


def _run(name: str, fn: object, body: Callable[[Callable], str]) -> CheckResult:
    if not callable(fn):
        return CheckResult(name, False, _("expected a function, got {kind}").format(
            kind=_kind(fn)))
    try:
        with torch.random.fork_rng(devices=[]):  # leave the reader's random state alone
            return CheckResult(name, True, body(fn))
    except _CheckFailedError as failure:
        return CheckResult(name, False, str(failure))
    except Exception as err:  # something returned could not even be inspected
        return CheckResult(name, False, _(
            "the answer could not be checked: {error}: {detail}").format(
            error=type(err).__name__, detail=err))


def _scores(seed: int, *shape: int, scale: float = 3.0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale


# --- chapter 1 and 2: softmax and friends ------------------------------------------------------
