"""Reading the built pages as a reader sees them (shared by the site's language tests)."""

from html.parser import HTMLParser
from pathlib import Path

VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "source", "wbr", "col", "area"})


class _Visible(HTMLParser):
    def __init__(self, outputs: bool):
        super().__init__()
        self.outputs = outputs
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool]] = []
        self.lang: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        lang = dict(attrs).get("lang")
        if tag == "html":
            self.lang = lang
        classes = (dict(attrs).get("class") or "").split()
        hidden = (tag in ("script", "style", "code") or "cell_input" in classes
                  or (not self.outputs and ("cell_output" in classes or tag == "pre"
                                            or "tc-diagram" in classes))
                  or "math" in classes or (self.stack and self.stack[-1][1])
                  # a passage in another language (an English title) keeps its typography
                  or (tag != "html" and lang is not None and lang != self.lang))
        self.stack.append((tag, bool(hidden)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not (self.stack and self.stack[-1][1]):
            self.parts.append(data)


def visible_text(page: Path, *, outputs: bool = True) -> str:
    """The text of a built page that a reader sees: with or without the cells' outputs;
    never scripts, styles, the code of the cells, inline code or maths."""
    parser = _Visible(outputs)
    parser.feed(page.read_text(encoding="utf-8"))
    return " ".join(parser.parts)


def prose(page: Path) -> str:
    """The article's prose only (no outputs, code, maths or diagrams: the home page's
    diagram is drawn by the package, like a cell's output), whitespace kept."""
    html = page.read_text(encoding="utf-8")
    start = html.find('<article class="bd-article"')
    end = html.find("</article>", start)
    parser = _Visible(outputs=False)
    parser.feed(html[start:end] if start >= 0 and end > start else html)
    return "".join(parser.parts)
