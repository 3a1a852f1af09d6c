"""What a reader of the built site sees, language by language: no English interface text or
prose on a French or Italian page (code aside, English quotations marked `lang="en"`), a
figure's alt text that says what it shows, and at most one line per training run."""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sphinxext"))
from coursebook import CHROME, ITALIAN_VOI

TRANSLATED = ("fr", "it")
# Words that are English and neither French nor Italian: two of them in one piece of text
# make it an English sentence (a single one may be a term or a token, such as "it").
ENGLISH = frozenset("""
the and with this that these those from which would should could their there where when
what was were been has have had not of is are its into your you for show hide toggle
launch heading settings sidebar hidden interactive previous download copied search
results searching skip fullscreen system
""".split())
# Interface strings of the themes, myst-nb and the course's own extension that a French or
# Italian page must never show, as text or as an attribute.
CHROME_STRINGS = sorted({en for table in CHROME.values() for en in table if en != "footer"}
                        - {"Page", "Main", "Language"})
ATTRIBUTES = ("aria-label", "title", "alt", "placeholder", "data-bs-title", "aria-description")
VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "source", "wbr", "col", "area"})
FILE_NAME = re.compile(r"(^|/)_images/|^[0-9a-f]{16,}\.(png|jpe?g|svg)$")


class _Reader(HTMLParser):
    """The texts and attribute values a reader meets, code and other languages aside."""

    def __init__(self, lang):
        super().__init__()
        self.lang = lang
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, hidden, inside an output)
        self.texts: list[tuple[str, bool]] = []  # (text, inside a cell's output)
        self.attributes: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.images: list[str | None] = []

    def hidden(self):
        return bool(self.stack) and self.stack[-1][1]

    def in_output(self):
        return bool(self.stack) and self.stack[-1][2]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        output = self.in_output() or "cell_output" in classes
        other_language = a.get("lang") not in (None, self.lang)
        code = (tag in ("script", "style", "code", "kbd", "samp") or "cell_input" in classes
                or (tag == "pre" and not output) or "math" in classes)
        if tag == "img" and not self.hidden():
            self.images.append(a.get("alt"))
        if not self.hidden() and not other_language:
            self.attributes += [(tag, name, a[name]) for name in ATTRIBUTES if a.get(name)]
        if tag not in VOID:
            self.stack.append((tag, self.hidden() or code or other_language, output))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not self.hidden() and data.strip():
            self.texts.append((" ".join(data.split()), self.in_output()))


def read(page, lang):
    reader = _Reader(lang)
    reader.feed(page.read_text(encoding="utf-8"))
    return reader


# In a cell's output, quoted text is data (a Python repr of tokens, an example sentence of
# the data set): "['the', 'cat']", « the film was not good ».
QUOTED = re.compile(r"""'[^']*'|"[^"]*"|«[^»]*»|“[^”]*”""")


def english(text, *, output=False):
    """The English words of ``text`` (identifiers such as beta_for_weight are code)."""
    if output:
        text = QUOTED.sub(" ", text)
    return {w for w in re.findall(r"[^\W\d_]+", text.lower())
            if w in ENGLISH and not re.search(rf"\w_{w}|{w}_\w", text.lower())}


def pages(site, lang):
    """The language's pages and its chapters' decks."""
    return sorted((site / lang).glob("*.html")) + sorted((site / lang / "slides").glob("*.html"))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_no_english_interface_text(site, lang):
    for page in pages(site, lang):
        reader = read(page, lang)
        found = sorted({s for s in CHROME_STRINGS for t, _ in reader.texts if s in t})
        found += sorted({f"{tag}@{name}={value!r}" for tag, name, value in reader.attributes
                         if value in CHROME_STRINGS or value in ("Main", "Language")
                         or english(value, output=True)})  # quoted tokens are data
        assert found == [], f"{lang}/{page.name} shows English interface text: {found[:8]}"


def test_the_italian_interface_says_voi_as_the_book_does(site):
    """The themes' Italian addresses one reader (tu: «Torna in alto», «Copiare»); the
    book, its buttons and its page chrome address the readers with voi."""
    for page in pages(site, "it"):
        reader = read(page, "it")
        found = sorted({t.strip() for t, _ in reader.texts if t.strip() in ITALIAN_VOI})
        found += sorted({f"{tag}@{name}={value!r}" for tag, name, value in reader.attributes
                         if value in ITALIAN_VOI})
        found += [hint for hint in ("Clicca per mostrare", "Clicca per nascondere")
                  if hint in page.read_text(encoding="utf-8")]
        assert found == [], f"it/{page.name} speaks to one reader (tu): {found[:8]}"
    script = (site / "it" / "_static" / "copybutton.js").read_text(encoding="utf-8")
    assert "'copy': 'Copiate'" in script and "'Copiare'" not in script


@pytest.mark.parametrize("lang", TRANSLATED)
def test_no_english_prose_or_output(site, lang):
    """Every visible string but code: an English quotation in the prose is marked
    `lang="en"`; in an output, quoted data (tokens, example sentences) is data."""
    for page in pages(site, lang):
        found = [t for t, output in read(page, lang).texts if len(english(t, output=output)) >= 2]
        assert found == [], f"{lang}/{page.name} shows English: {found[:6]}"


@pytest.mark.parametrize("lang", ("en", *TRANSLATED))
def test_every_figure_says_what_it_shows(site, lang):
    for page in pages(site, lang):
        for alt in read(page, lang).images:
            assert alt and alt.strip(), f"{lang}/{page.name}: an image without alt text"
            assert not FILE_NAME.search(alt), f"{lang}/{page.name}: alt text is a file: {alt}"
            if lang in TRANSLATED:
                assert len(english(alt)) < 2, f"{lang}/{page.name}: English alt text: {alt}"


BAR = re.compile(r"\d+%\|[█▉▊▋▌▍▎▏ #]*\|")  # a tqdm bar: " 42%|████▏     |"


@pytest.mark.parametrize("lang", ("en", *TRANSLATED))
def test_a_training_run_leaves_one_line(site, lang):
    """No progress bar reaches a static page: each redraw would leave a line of its own."""
    for page in pages(site, lang):
        html = page.read_text(encoding="utf-8")
        bars = [line for line in html.splitlines() if BAR.search(line)]
        assert bars == [], f"{lang}/{page.name} shows progress bars: {bars[:3]}"
