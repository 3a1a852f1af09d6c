"""The ``course-diagram`` directive: a module of the package, drawn by ``tc.diagram`` at build time.

In a MyST page (the home pages, which are not executed notebooks)::

    ```{course-diagram} Transformer
    :config: {"src_vocab_size": 37000, "tgt_vocab_size": 37000, "tie_embeddings": true}
    ```

builds ``transformer_course.Transformer(**config)`` (``config`` is JSON, the constructor's
keyword arguments) on PyTorch's ``meta`` device, where parameters have shapes but no values,
so that even the paper's base model costs nothing to build; draws it with
:class:`transformer_course.reader.diagrams.Diagram` in the page's language (the ``language`` of the
build), its blocks linked to the sections of the same book; and embeds the diagram's HTML in
the page. The picture is made from the package's module at every build, so it cannot drift
from the code.
"""

from __future__ import annotations

import json
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class CourseDiagram(SphinxDirective):
    """``{course-diagram} ClassName`` with an optional ``:config:`` JSON object."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict] = {"config": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        import torch

        import transformer_course as tc
        from transformer_course import i18n
        from transformer_course.reader import diagrams

        name = self.arguments[0]
        cls = getattr(tc, name, None)
        if not isinstance(cls, type) or cls not in diagrams.SUPPORTED:
            known = ", ".join(c.__name__ for c in diagrams.SUPPORTED)
            raise self.error(f"course-diagram: {name!r} is not one of {known}")
        try:
            config = json.loads(self.options.get("config") or "{}")
        except json.JSONDecodeError as error:
            raise self.error(f"course-diagram: :config: is not JSON ({error})") from error
        if not isinstance(config, dict):
            raise self.error(f"course-diagram: :config: must be a JSON object, got {config!r}")
        language = self.env.config.language or "en"
        previous = i18n.get_language()
        i18n.set_language(language)
        try:
            with torch.random.fork_rng(devices=[]), torch.device("meta"):
                module = cls(**config)
            html = diagrams.Diagram(module, links=True).html()
        except (TypeError, ValueError) as error:
            raise self.error(f"course-diagram: {name}(**{config}) failed: {error}") from error
        finally:
            i18n.set_language(previous)
        return [nodes.raw("", html, format="html")]


def setup(app: Sphinx) -> dict:
    app.add_directive("course-diagram", CourseDiagram)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
