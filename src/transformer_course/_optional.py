"""Optional dependencies: a failed import says which extra of the package installs them.

``import transformer_course`` needs torch, tqdm and Babel only. The submodules that need
more (``plotting``: matplotlib; ``viz``: bertviz; ``widgets.sentence_box``: ipywidgets) raise
a ``ModuleNotFoundError`` that names the missing module and the ``pip install`` command, as
PyTorch and pandas do.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["install_hint", "missing", "require"]

PACKAGE = "transformer-course"


def install_hint(extra: str) -> str:
    """The command that installs an extra: ``pip install "transformer-course[plot]"``."""
    return f'pip install "{PACKAGE}[{extra}]"'


def missing(error: ModuleNotFoundError, feature: str, extra: str,
            modules: tuple[str, ...]) -> ModuleNotFoundError:
    """The error to raise when ``feature`` failed to import one of ``modules``; any other
    missing module (a broken installation) comes back unchanged."""
    name = (error.name or "").split(".")[0]
    if name not in modules:
        return error
    return ModuleNotFoundError(
        f"{feature} needs {name}, which is not installed: {install_hint(extra)} "
        f"(or install {name} itself)", name=error.name)


def require(module: str, *, feature: str, extra: str) -> ModuleType:
    """Import ``module`` (``"bertviz"``), or raise :func:`missing`'s error for ``feature``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raised = missing(error, feature, extra, (module.split(".")[0],))
        if raised is error:
            raise
        raise raised from error
