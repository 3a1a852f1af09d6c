"""Each language's typography on the built pages (French and Italian; English is left alone).

Two doctree transforms, around Sphinx's own smart quotes (priority 750):

* ``Apostrophes`` (before): in French and Italian an ASCII ``'`` written after a letter is an
  apostrophe, ``’``. Smart quotes alone cannot tell: in ``l'**encodeur**`` the text node ends
  at the quote, which they take for a closing quote and print as ``l”encodeur``.
* ``FrenchSpacing`` (after): the no-break spaces of French typography: a narrow no-break
  space (U+202F) before ``; ! ?``, a no-break space (U+00A0) before ``:`` and inside « »,
  and ``“…”`` quotations turned into « … », the one quotation style of the French pages.

Code, maths, raw HTML and cell outputs are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

NARROW_NBSP = "\u202f"
NBSP = "\u00a0"
# Nodes whose text is code, maths or markup, not prose.
SKIPPED = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.raw,
           nodes.comment, nodes.doctest_block, nodes.target, nodes.substitution_definition)


def _skipped(node: nodes.Node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, SKIPPED):
            return True
        classes = parent.get("classes", []) if isinstance(parent, nodes.Element) else []
        if any(c.startswith(("cell_output", "output")) for c in classes):
            return True
        if type(parent).__name__ in ("CellOutputNode", "CellOutputBundleNode"):
            return True
        parent = parent.parent
    return False


# Raw HTML that opens a passage in another language: <span lang="en">The dog ate ...</span>.
_OTHER_LANGUAGE = re.compile(r'<span\b[^>]*\blang="([\w-]+)"')


def prose_text(document: nodes.document, language: str | None = None) -> Iterator[nodes.Text]:
    """The document's prose text nodes, in reading order; with ``language``, without the
    passages marked as another language (an English title keeps its English typography)."""
    other = 0
    for text in document.findall(nodes.Text):
        if language and isinstance(text.parent, nodes.raw):
            opened = _OTHER_LANGUAGE.search(text.astext())
            if opened and opened.group(1) != language:
                other += 1
            elif other and "</span>" in text.astext():
                other -= 1
            continue
        if not other and not _skipped(text):
            yield text


def _replace(text: nodes.Text, new: str) -> nodes.Text:
    """Put ``new`` in place of ``text``; return the node now in the tree."""
    if new == text.astext():
        return text
    node = nodes.Text(new)
    parent = text.parent
    # By identity: docutils' replace() finds the child with list.index, and Text nodes
    # compare as strings, so it would replace the paragraph's first "\n", not this one.
    index = next(i for i, child in enumerate(parent.children) if child is text)
    parent.children[index] = node
    node.parent = parent
    return node


# An ASCII apostrophe after a letter (l'encodeur, dell'encoder, po').
_APOSTROPHE = re.compile(r"(?<=[^\W\d_])'")


class Apostrophes(SphinxTransform):
    """``'`` after a letter -> ``’`` in French and Italian, before smart quotes run."""

    default_priority = 740

    def apply(self, **kwargs: object) -> None:
        if self.config.language not in ("fr", "it"):
            return
        for text in list(prose_text(self.document, self.config.language)):
            _replace(text, _APOSTROPHE.sub("\u2019", text.astext()))


def french_spacing(text: str, before: str = "") -> str:
    """French no-break spaces in one piece of prose; ``before`` is the text just before it
    (the end of the previous text node), so that ``**Note**: x`` gets its space too."""
    # A space before ; ! ? becomes narrow and unbreakable; a glued one is added.
    text = re.sub(r"[ \t\n\u00a0\u202f]+([;!?])", NARROW_NBSP + r"\1", text)
    text = re.sub(r"(?<=[\w»)\]*])([;!?]+)(?=\s|$)", NARROW_NBSP + r"\1", text)
    # Before a colon that ends a clause (not 10:30, not https://): a no-break space.
    text = re.sub(r"[ \t\n\u00a0\u202f]+:(?=\s|$)", NBSP + ":", text)
    text = re.sub(r"(?<=[\w»)\]*]):(?=\s|$)", NBSP + ":", text)
    if text[:1] and text[:1] in ";!?:" and before[-1:] and not before[-1:].isspace():
        text = (NARROW_NBSP if text[0] != ":" else NBSP) + text
    # Inside guillemets.
    text = re.sub(r"«[ \t\n\u00a0\u202f]*", "«" + NBSP, text)
    text = re.sub(r"[ \t\n\u00a0\u202f]*»", NBSP + "»", text)
    # One quotation style: “…” becomes « … ».
    text = re.sub(r"“\s*([^“”]*?)\s*”", "«" + NBSP + r"\1" + NBSP + "»", text)
    return text


# A text that starts with a mark needing a space before it (a colon only when it ends a clause).
_MARK_FIRST = re.compile(r"[;!?]|:(?=\s|$)")


class FrenchSpacing(SphinxTransform):
    """French no-break spaces and guillemets, after smart quotes ran."""

    default_priority = 760

    def apply(self, **kwargs: object) -> None:
        if self.config.language != "fr":
            return
        before = ""
        previous: nodes.Text | None = None
        for text in list(prose_text(self.document, self.config.language)):
            original = text.astext()
            if previous is not None and _MARK_FIRST.match(original) \
                    and previous.astext()[-1:].isspace():
                # A soft line break is a Text node of its own ("question", "\n", ": la
                # suite"): the break before the mark becomes the no-break space.
                kept = previous.astext().rstrip()
                previous = _replace(previous, kept)
                before = kept or before.rstrip() or "x"
            previous = _replace(text, french_spacing(original, before))
            before = original or before


def setup(app: Sphinx) -> dict:
    app.add_transform(Apostrophes)
    app.add_transform(FrenchSpacing)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
