"""Exercise checkers: pass your function, get back what is right or what is wrong.

    >>> import transformer_course as tc
    >>> def my_softmax(s):
    ...     e = s.exp()
    ...     return e / e.sum(-1, keepdim=True)
    >>> tc.check.softmax(my_softmax)  # doctest: +SKIP
    ✗ softmax: on scores as large as 1000 (does it overflow?) entry (0, 1) is NaN (not finite)

Each checker calls your function on several inputs, compares it with the package, and
returns a :class:`CheckResult` that is truthy when everything passed and that explains
the first failure in words (shape, dtype, which entry, by how much). Whatever your
function does (raise, return ``None``, a tuple, NaN, a tensor without values...), the
checker answers with a verdict, never with a traceback. Verdicts are shown in the language
chosen with :func:`transformer_course.set_language`.
"""

from __future__ import annotations

from . import basics, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10
from ._core import CheckResult
from .basics import *  # noqa: F403
from .ch01 import *  # noqa: F403
from .ch02 import *  # noqa: F403
from .ch03 import *  # noqa: F403
from .ch04 import *  # noqa: F403
from .ch05 import *  # noqa: F403
from .ch06 import *  # noqa: F403
from .ch07 import *  # noqa: F403
from .ch08 import *  # noqa: F403
from .ch09 import *  # noqa: F403
from .ch10 import *  # noqa: F403

# basics: the chapters' exercises that rebuild a piece of the package; chNN: the transfer
# exercises of chapter NN, which apply an idea somewhere new.
_MODULES = (basics, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10)

__all__ = ["CheckResult", *(name for module in _MODULES for name in module.__all__)]
