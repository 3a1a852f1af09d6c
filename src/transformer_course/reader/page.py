"""What every explorer's HTML shares: its JavaScript and CSS, the reader's number format, the
data inlined as JSON, the note shown where scripts do not run, and the standalone page.

The explorers (:mod:`.widgets`, :mod:`.lm_explorer`) are self-contained HTML: the files of
``js/`` are inlined in every output, so that the same HTML works in the static book, Colab,
JupyterLab, Notebook 7 and VS Code with no other file and no host.
"""

from __future__ import annotations

import html
import json
import os
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..i18n import format_number, speaking
from ..i18n import gettext as _

__all__ = ["HtmlOutput", "asset", "inline_json", "number_format", "standalone_page",
           "trust_note"]


@cache
def asset(*names: str) -> str:
    """Files of ``js/`` joined and compacted (each file's header comment, indentation and
    comment lines dropped), ready to be inlined in HTML.

    Raises:
        RuntimeError: if a file holds ``</``, which would end the inline element early.
    """
    folder = resources.files(__package__) / "js"
    out = []
    for name in names:
        text = (folder / name).read_text(encoding="utf-8")
        text = re.sub(r"^/\*.*?\*/\s*", "", text, flags=re.S)  # the file's header comment
        lines = [line.strip() for line in text.splitlines()]
        text = "\n".join(line for line in lines if line and not line.startswith("//"))
        if "</" in text:
            raise RuntimeError(f"{name} must not contain '</' (it is inlined in HTML)")
        out.append(text)
    return "\n".join(out)


def number_format() -> dict[str, str]:
    """The decimal separator, group separator and minus sign of the reader's language."""
    half, thousand, minus = format_number(0.5), format_number(1000), format_number(-1)
    return {"decimal": half[1:-1], "group": thousand[1:-3], "minus": minus[:-1]}


def inline_json(data: Any) -> str:
    """``data`` as compact JSON that is safe inside a ``<script>`` element (no ``<``, ``>``
    or ``&``; NaN and infinities refused)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def trust_note() -> str:
    """The note an explorer shows until its script runs (an untrusted notebook strips it)."""
    # Shown only where the script has not run: a notebook opened untrusted (Jupyter strips
    # the scripts of its outputs), or a viewer that runs no JavaScript.
    return html.escape(_("This explorer's JavaScript has not run. In Jupyter, re-run this cell "
                         "or choose File → Trust Notebook (classic Notebook), the “Trust "
                         "Notebook” command (JupyterLab’s command palette, Ctrl+Shift+C) or "
                         "the “Not Trusted” button (Notebook 7); elsewhere, open the notebook "
                         "in Jupyter, Colab "
                         "or the course book."))


def standalone_page(title: str, language: str, body: str) -> str:
    """A whole HTML page around ``body``: what :meth:`save` writes."""
    return (f'<!DOCTYPE html>\n<html lang="{language}">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n")


class HtmlOutput:
    """What the explorers, quizzes and diagrams share: a notebook displays :meth:`html`, and
    :meth:`save` writes it as a standalone page (what Colab and Jupyter get)."""

    language: str

    def html(self) -> str:
        """The self-contained HTML fragment."""
        raise NotImplementedError

    def page_title(self) -> str:
        """The title of the standalone page, in the reader's language."""
        raise NotImplementedError

    def details(self) -> str:
        """What it holds, in a few words of the current language (for :meth:`__repr__`)."""
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        """One line in its own language, where no HTML is shown (a console, a text view)."""
        with speaking(self.language):
            return "<" + _("{title}: {details}; display it in a notebook, or write it to a "
                           "page with .save('page.html')").format(
                title=self.page_title(), details=self.details()) + ">"

    def save(self, path: str | os.PathLike) -> Path:
        """Write it to a standalone HTML page; returns the path."""
        path = Path(path)
        path.write_text(standalone_page(self.page_title(), self.language, self.html()),
                        encoding="utf-8")
        return path
