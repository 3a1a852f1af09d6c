"""The reader's interface: what a chapter shows rather than computes.

* :mod:`.widgets`: the beta / heads / masks explorers, ``sentence_box`` and, from
  :mod:`.lm_explorer`, chapter 10's language-model explorer;
* :mod:`.diagrams`: a module drawn from its own tree (``tc.diagram``);
* :mod:`.quiz`: self-grading quizzes and the reader's progress;
* :mod:`.plotting`: attention heatmaps and friends, returning matplotlib Figures;
* :mod:`.viz`: bertviz wrappers that also work offline;
* :mod:`.page`: what every explorer's HTML shares; ``js/``: their JavaScript and CSS.

Everything here may import the model (``transformer_course.functional``, ``.layers``...);
the model never imports this package. The submodules load on first use, and their old
names stay: ``tc.widgets`` and ``import transformer_course.widgets`` give
``transformer_course.reader.widgets`` itself.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("diagrams", "lm_explorer", "page", "plotting", "quiz", "viz", "widgets")

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    """Load a submodule (``reader.widgets``, ``reader.plotting``, ...) on first access."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_SUBMODULES})
