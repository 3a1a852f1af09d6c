"""The glossary is the single source of the course's terms (book/glossary.yml).

* The data file is well formed: every term has an id, chapters that exist, and in each
  language a term and a one-sentence meaning; the lecture notes' terms carry a source and a
  flag; no variant to avoid is also a preferred term or a synonym.
* The built glossary page of each language shows every term in the three languages.
* Terminology, "one notion, one name": no variant that the glossary marks ``avoid`` for a
  language appears in that language's book, in the prose of the notebooks' markdown cells
  and of the .md pages, in the quizzes' texts and in the decks' texts (the cells' ``deck``
  metadata); code, comments, maths, links and outputs are left alone, and so is the glossary
  page, which quotes the lecture notes. A failure names the file and line, the term and the
  sentence.

The reading of the book's sources (``passages``, ``Masked``) is shared with
tests/site/test_style.py, which checks the style sheet (book/style.yml) on the same passages.
"""

from __future__ import annotations

import ast
import html
import io
import json
import re
import sys
import tokenize
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY_PATH = ROOT / "book" / "glossary.yml"
DATA = yaml.safe_load(GLOSSARY_PATH.read_text(encoding="utf-8"))
LANGS = ("en", "fr", "it")
FIELDS = {"term", "meaning", "synonyms", "notes", "avoid"}
NOTE_FIELDS = {"term", "source", "kind", "flag"}


# --- reading the book's sources, with their lines --------------------------------------------

# What stands for a piece that is not prose (inline code, maths, a passage in another language):
# a character that is neither a letter, a space nor a sentence's end.
PLACEHOLDER = "\u2026"


class Masked:
    """A text rewritten for reading, that remembers where each of its characters came from:
    ``origin[i]`` is the offset, in the original text, of ``text[i]``."""

    def __init__(self, text: str, origin: list[int] | None = None):
        self.text = text
        self.origin = list(range(len(text))) if origin is None else origin

    def _edit(self, pattern: str, flags: int,
              pieces: Callable[[re.Match], list[tuple[int, int] | str]]) -> Masked:
        """Each match replaced by ``pieces(match)``: spans ``(start, end)`` of the current
        text kept with their origins, and strings inserted at the match's origin."""
        text, origin, at = [], [], 0
        for match in re.finditer(pattern, self.text, flags):
            text.append(self.text[at:match.start()])
            origin += self.origin[at:match.start()]
            here = self.origin[match.start()] if match.start() < len(self.origin) else (
                self.origin[-1] if self.origin else 0)
            for piece in pieces(match):
                if isinstance(piece, str):
                    text.append(piece)
                    origin += [here] * len(piece)
                else:
                    text.append(self.text[piece[0]:piece[1]])
                    origin += self.origin[piece[0]:piece[1]]
            at = match.end()
        text.append(self.text[at:])
        origin += self.origin[at:]
        return Masked("".join(text), origin)

    def replace(self, pattern: str, by: str, flags: int = 0) -> Masked:
        """Every match replaced by ``by``."""
        return self._edit(pattern, flags, lambda m: [by])

    def drop(self, pattern: str, flags: int = 0, groups: tuple[int, ...] = ()) -> Masked:
        """Every match deleted, or only its ``groups`` (the rest kept)."""
        def pieces(match: re.Match) -> list[tuple[int, int] | str]:
            if not groups:
                return []
            kept, at = [], match.start()
            for group in groups:
                if match.start(group) >= 0:
                    kept.append((at, match.start(group)))
                    at = match.end(group)
            kept.append((at, match.end()))
            return kept
        return self._edit(pattern, flags, pieces)


def mask_markdown(markdown: str, lang: str, *, emphasis: bool = False,
                  titles_are_quotations: bool = False) -> Masked:
    """The prose of a markdown text, as a reader of ``lang`` reads it: code blocks, comments,
    maths, inline code, link targets, HTML tags and passages marked as another language
    (``<span lang="en">...</span>``) are left out; inline pieces become one placeholder
    character, so that the words around them stay apart. Emphasis markers are dropped unless
    ``emphasis``; with ``titles_are_quotations`` (the bibliography), italic spans, the titles
    of the works cited, are left out too."""
    text = Masked(markdown)
    text = text.replace(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", "\n\n", re.S | re.M)
    text = text.replace(r"<!--.*?-->", " ", re.S)
    text = text.replace(r"^%.*$", " ", re.M)  # MyST comments
    text = text.replace(rf'<span\b[^>]*\blang="(?!{lang}")[\w-]+"[^>]*>.*?</span>',
                        PLACEHOLDER, re.S)
    text = text.replace(r"\$\$.*?\$\$", "\n\n", re.S)
    text = text.replace(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", PLACEHOLDER, re.S)
    text = text.replace(r"(?<!\\)\$[^$\n]+?(?<!\\)\$", PLACEHOLDER)
    text = text.replace(r"(`+).+?\1", PLACEHOLDER, re.S)
    text = text.replace(r"<(?:https?|mailto):[^>]*>", PLACEHOLDER)
    text = text.drop(r"(\[)[^\]\n]*(\]\([^)\n]*\))", groups=(1, 2))  # a link keeps its text
    text = text.drop(r"</?[A-Za-z][^>\n]*>")
    if titles_are_quotations:
        text = text.replace(r"(?<![\w*])\*[^*\s][^*]*?\*(?![\w*])", PLACEHOLDER)
    if not emphasis:
        text = text.drop(r"\*+|(?<![^\W_])_+|_+(?![^\W_])")
    return text


def prose(markdown: str, *, titles_are_quotations: bool = False, lang: str = "en") -> str:
    """The prose of a markdown text (see :func:`mask_markdown`)."""
    return mask_markdown(markdown, lang, titles_are_quotations=titles_are_quotations).text


@dataclass(frozen=True)
class Passage:
    """A piece of a language's book that a reader reads: the prose of a markdown cell or page
    (``prose``), a deck's title, text or notes (``deck``), a text of a quiz (``quiz``), or the
    comments of a code cell (``comment``, ``solution`` for a hidden solution's), or a picture's
    description (``alt``)."""

    path: str            # relative to the repository: book/fr/07_encoder.ipynb
    kind: str
    raw: str             # the text as written (markdown, a string's value, comment lines)
    line: int            # the file's line of the raw text's first character
    cell: str | None = None
    one_line: bool = False   # a JSON string: all its characters are on one line of the file
    heading: bool = False    # a deck's title

    def line_at(self, offset: int) -> int:
        """The line of the file that holds the raw text's character at ``offset``."""
        return self.line if self.one_line else self.line + self.raw.count("\n", 0, offset)

    def where(self, offset: int) -> str:
        """``book/fr/07_encoder.ipynb:1234 (cell 07-014, prose)``."""
        cell = f"cell {self.cell}, " if self.cell else ""
        return f"{self.path}:{self.line_at(offset)} ({cell}{self.kind})"

    @property
    def markdown(self) -> bool:
        return self.kind in ("prose", "deck", "quiz")

    def masked(self, lang: str, *, emphasis: bool = False) -> Masked:
        """The text as a reader of ``lang`` reads it (markdown: see :func:`mask_markdown`;
        comments: their inline code left out)."""
        if self.markdown:
            return mask_markdown(self.raw, lang, emphasis=emphasis,
                                 titles_are_quotations=self.path.endswith("references.md"))
        return Masked(self.raw).replace(r"(`+).+?\1", PLACEHOLDER)


def _cell_lines(raw_json: str, cells: list[dict]) -> dict[str, dict[str, int]]:
    """For each cell id, the file lines (1-based) of its ``source``, deck keys and picture
    description, read from the notebook as stored (``json.dump(..., indent=1)``)."""
    lines = raw_json.split("\n")
    found: dict[str, dict[str, int]] = {}
    at = 0
    for cell in cells:
        marker = f'"id": {json.dumps(cell.get("id"), ensure_ascii=False)}'
        start = next((i for i in range(at, len(lines)) if lines[i].strip().startswith(marker)),
                     None)
        if start is None:
            continue
        places: dict[str, int] = {}
        for i in range(start, len(lines)):
            stripped = lines[i].strip()
            for key in ("title", "text", "notes", "alt"):
                if stripped.startswith(f'"{key}": ') and key not in places:
                    places[key] = i + 1
            if stripped.startswith('"source": '):
                places["source"] = i + 1 + (1 if stripped.endswith("[") else 0)
                at = i + 1
                break
        found[cell.get("id")] = places
    return found


QUIZ_METHODS = frozenset({"single", "multiple", "numeric", "picture"})
QUIZ_TEXTS = frozenset({"text", "options", "explanation", "feedback", "hint"})


def _quiz_strings(source: str) -> Iterator[tuple[str, int]]:
    """``(text, line in the cell)`` for each text of the questions a code cell asks
    (``quiz.single(text=..., options=[...], explanation=..., feedback={...}, hint=...)``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in QUIZ_METHODS):
            continue
        values = list(node.args[:2])
        values += [k.value for k in node.keywords if k.arg in QUIZ_TEXTS]
        for value in values:
            parts = (value.values if isinstance(value, ast.Dict)
                     else value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
            for part in parts:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield part.value, part.lineno


SOLUTION = re.compile(r"#\s*(Solution|Soluzione)\b")


def _comments(source: str) -> Iterator[tuple[str, int]]:
    """``(text, first line in the cell)`` of a code cell's comments: consecutive full-line
    comments make one passage (a sentence may go on to the next line); a comment after code
    is a passage of its own."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return
    block: list[str] = []
    first = last = 0
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        text = re.sub(r"^#+ ?", "", token.string)
        row = token.start[0]
        alone = not token.line[:token.start[1]].strip()
        if alone and block and row == last + 1:
            block.append(text)
            last = row
            continue
        if block:
            yield "\n".join(block), first
        block, first, last = [text], row, row
        if not alone:
            yield text, row
            block = []
    if block:
        yield "\n".join(block), first


def _notebook_passages(path: Path) -> Iterator[Passage]:
    raw_json = path.read_text(encoding="utf-8")
    cells = json.loads(raw_json)["cells"]
    places = _cell_lines(raw_json, cells)
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    for cell in cells:
        cell_id = cell.get("id")
        where = places.get(cell_id, {})
        source = "".join(cell["source"])
        first = where.get("source", 1)
        deck = (cell.get("metadata") or {}).get("deck") or {}
        for key in ("title", "text", "notes"):
            if isinstance(deck.get(key), str):
                yield Passage(name, "deck", deck[key], where.get(key, first), cell_id,
                              one_line=True, heading=key == "title")
        alt = (((cell.get("metadata") or {}).get("mystnb") or {}).get("image") or {}).get("alt")
        if isinstance(alt, str):  # a picture's description, read aloud
            yield Passage(name, "alt", alt, where.get("alt", first), cell_id, one_line=True)
        if cell["cell_type"] == "markdown":
            yield Passage(name, "prose", source, first, cell_id)
        elif cell["cell_type"] == "code":
            for text, row in _quiz_strings(source):
                yield Passage(name, "quiz", text, first + row - 1, cell_id)
            tags = (cell.get("metadata") or {}).get("tags") or []
            solution = "hide-input" in tags and bool(SOLUTION.match(source.lstrip()))
            for text, row in _comments(source):
                yield Passage(name, "solution" if solution else "comment", text,
                              first + row - 1, cell_id)


@cache
def passages(lang: str) -> tuple[Passage, ...]:
    """Everything a reader of ``lang`` reads in the book's sources, chapter by chapter, then
    the .md pages (index, references, teachers, glossary)."""
    found: list[Passage] = []
    folder = ROOT / "book" / lang
    for path in sorted(folder.glob("*.ipynb")):
        found += _notebook_passages(path)
    for path in sorted(folder.glob("*.md")):
        found.append(Passage(path.relative_to(ROOT).as_posix(), "prose",
                             path.read_text(encoding="utf-8"), 1))
    return tuple(found)


def sentence(text: str, start: int, end: int, *, limit: int = 220) -> str:
    """The sentence around text[start:end], on one line (shortened around the match)."""
    stops = r"[.!?](?=\s)|\n\s*\n|\n\s*(?:[-*]|\d+\.)\s|\n#"
    before = [m.end() for m in re.finditer(stops, text[:start])]
    after = re.search(r"[.!?](?=\s|$)|\n\s*\n|\n#", text[end:])
    begin = before[-1] if before else 0
    finish = end + after.end() if after else len(text)
    if finish - begin > limit:  # keep the match in view
        begin = max(begin, start - limit // 2)
        finish = min(finish, end + limit // 2)
    return " ".join(text[begin:finish].split())


def _sentence(text: str, start: int, end: int) -> str:
    return sentence(text, start, end, limit=10_000)


@dataclass(frozen=True)
class Finding:
    """A place that breaks a rule: where, which rule, the offending text, its sentence."""

    where: str
    rule: str
    found: str
    context: str
    advice: str = ""

    def __str__(self) -> str:
        advice = f" ({self.advice})" if self.advice else ""
        return f"{self.where}: [{self.rule}] {self.found!r}{advice} in: {self.context}"


def report(title: str, findings: list[Finding], *, limit: int = 400) -> str:
    """A failure message: one line per finding, the first ``limit`` of them."""
    lines = [str(f) for f in findings[:limit]]
    if len(findings) > limit:
        lines.append(f"... and {len(findings) - limit} more")
    return f"{title}: {len(findings)}\n" + "\n".join(lines)


# --- matching words ---------------------------------------------------------------------------

def variant_pattern(variant: str, *, case_sensitive: bool = False) -> re.Pattern:
    """A whole-word pattern for a variant, case-insensitive unless told; any run of spaces
    matches any whitespace, and an apostrophe matches both ' and ’."""
    parts = []
    for char in variant.strip():
        if char.isspace():
            if parts and parts[-1] != r"\s+":
                parts.append(r"\s+")
        elif char in "'’":
            parts.append("['’]")
        else:
            parts.append(re.escape(char))
    return re.compile(r"(?<!\w)" + "".join(parts) + r"(?!\w)",
                      0 if case_sensitive else re.IGNORECASE)


def find_avoided(text: str, variants: list[str]) -> list[tuple[str, str]]:
    """``(variant, sentence)`` for every occurrence of an avoided variant in the prose."""
    found = []
    for variant in variants:
        for match in variant_pattern(variant).finditer(text):
            found.append((variant, _sentence(text, match.start(), match.end())))
    return found


def find_words(passage: Passage, lang: str, rules: list[tuple[str, str, str, bool]]
               ) -> Iterator[Finding]:
    """``rules``: ``(rule, variant, advice, case_sensitive)``: every variant in the passage."""
    masked = passage.masked(lang)
    for rule, variant, advice, case_sensitive in rules:
        for match in variant_pattern(variant, case_sensitive=case_sensitive).finditer(
                masked.text):
            yield Finding(passage.where(masked.origin[match.start()]), rule, match.group(),
                          sentence(masked.text, match.start(), match.end()), advice)


def avoided(lang: str) -> list[str]:
    return [v for item in DATA["terms"] for v in item[lang].get("avoid") or []]


def terminology_rules(lang: str) -> list[tuple[str, str, str, bool]]:
    """``(rule, variant, advice, case_sensitive)`` for each variant the glossary avoids."""
    return [(f"glossary {item['id']}", variant, f"say {item[lang]['term']!r}", False)
            for item in DATA["terms"] for variant in item[lang].get("avoid") or []]


def terminology_findings(lang: str) -> list[Finding]:
    """The avoided variants in the prose, quizzes, decks and pictures' descriptions of
    ``lang`` (not the glossary page, which quotes the notes' own words)."""
    rules = terminology_rules(lang)
    return [finding for passage in passages(lang)
            if passage.kind in ("prose", "quiz", "deck", "alt")
            and not passage.path.endswith("glossary.md")
            for finding in find_words(passage, lang, rules)]


# --- the data file ---------------------------------------------------------------------------

def test_every_entry_is_complete_in_the_three_languages():
    ids = [item.get("id") for item in DATA["terms"]]
    assert all(isinstance(i, str) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), ids
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"duplicate ids: {duplicates}"
    for item in DATA["terms"]:
        assert set(item) <= {"id", "chapters", *LANGS}, item["id"]
        for lang in LANGS:
            entry = item.get(lang)
            assert isinstance(entry, dict), f"{item['id']}: no {lang}"
            assert set(entry) <= FIELDS, f"{item['id']}/{lang}: unknown {set(entry) - FIELDS}"
            for field in ("term", "meaning"):
                value = entry.get(field)
                assert isinstance(value, str) and value.strip(), f"{item['id']}/{lang}: {field}"
                assert "|" not in value and "\n" not in value.strip(), f"{item['id']}/{lang}"
            for field in ("synonyms", "avoid"):
                values = entry.get(field) or []
                assert all(isinstance(v, str) and v.strip() and "|" not in v for v in values)
            for note in entry.get("notes") or []:
                assert set(note) == NOTE_FIELDS, f"{item['id']}/{lang}: note {note}"
                assert note["source"] in DATA["sources"], note
                assert lang in DATA["sources"][note["source"]], f"{note}: no {lang} source"
                assert note["kind"] in DATA["kinds"], note
                assert note["flag"].strip() and "|" not in note["flag"], note


def test_meanings_are_one_sentence_with_balanced_maths():
    for item in DATA["terms"]:
        for lang in LANGS:
            meaning = item[lang]["meaning"].strip()
            assert meaning.count("$") % 2 == 0, f"{item['id']}/{lang}: unbalanced $"
            without_maths = re.sub(r"\$[^$]*\$", "x", meaning)
            assert not re.search(r"[.!?]\s+[A-ZÀ-Ý]", without_maths), \
                f"{item['id']}/{lang}: more than one sentence: {meaning}"


def test_chapters_exist():
    chapters = DATA["chapters"]
    planned = set(DATA.get("planned") or [])
    for number, stem in chapters.items():
        for lang in LANGS:
            exists = (ROOT / "book" / lang / f"{stem}.ipynb").exists()
            assert exists or number in planned, f"chapter {number}: book/{lang}/{stem}.ipynb"
    for item in DATA["terms"]:
        numbers = item.get("chapters")
        assert numbers, f"{item['id']}: which chapters introduce it?"
        assert numbers == sorted(set(numbers)), f"{item['id']}: {numbers}"
        for number in numbers:
            assert number in chapters, f"{item['id']}: no chapter {number}"


def test_preferred_terms_and_synonyms_are_never_avoided():
    for lang in LANGS:
        accepted = {}
        for item in DATA["terms"]:
            entry = item[lang]
            for word in [entry["term"], *(entry.get("synonyms") or [])]:
                accepted[word] = item["id"]
        for item in DATA["terms"]:
            for variant in item[lang].get("avoid") or []:
                pattern = variant_pattern(variant)
                clashes = [w for w in accepted if pattern.search(w)]
                assert not clashes, f"{lang}: {item['id']} avoids {variant!r}, used by {clashes}"


def test_the_notes_mistranslations_are_flagged():
    """ERRATA.md: the French translation's mistranslations are flagged as such."""
    flagged = {note["term"].casefold(): item["id"] for item in DATA["terms"]
               for note in item["fr"].get("notes") or [] if note["kind"] == "mistranslation"}
    for term, entry in [("attention soutenue", "hard-attention"),
                        ("beaucoup d'attention", "hard-attention"),
                        ("réseau de transmission de position", "position-wise-ffn")]:
        assert flagged.get(term) == entry, f"{term!r} is not flagged as a mistranslation"
    italian = {note["term"].casefold() for item in DATA["terms"]
               for note in item["it"].get("notes") or []}
    assert {"codificatore", "decodificatore", "memorizzazione chiave-valore",
            "rete in avanti posizionale"} <= italian


# --- the built pages -------------------------------------------------------------------------

def _page_text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    return normalise(text)


def normalise(text: str) -> str:
    """Typography undone: curly apostrophes and no-break spaces, as the page's source has them."""
    text = unicodedata.normalize("NFC", text).replace("’", "'")
    return " ".join(text.replace("\u00a0", " ").replace("\u202f", " ").split())


@pytest.mark.parametrize("lang", LANGS)
def test_the_built_glossary_shows_every_term(site, lang):
    path = site / lang / "glossary.html"
    assert path.exists(), f"{path} was not built"
    text = _page_text(path)
    missing = [(item["id"], code, item[code]["term"]) for item in DATA["terms"] for code in LANGS
               if normalise(item[code]["term"]) not in text]
    assert not missing, f"{lang}/glossary.html lacks {missing}"
    notes = [note["term"] for item in DATA["terms"] for note in item[lang].get("notes") or []]
    assert notes, f"{lang}: the glossary lists none of the notes' own terms"
    missing = [term for term in notes if normalise(term) not in text]
    assert not missing, f"{lang}/glossary.html lacks the notes' terms {missing}"
    html_source = path.read_text(encoding="utf-8")
    for stem in {DATA["chapters"][n] for item in DATA["terms"] for n in item["chapters"]}:
        if (ROOT / "book" / lang / f"{stem}.ipynb").exists():
            assert f'href="{stem}.html"' in html_source, f"{lang}: no link to {stem}"


# --- terminology -----------------------------------------------------------------------------

def test_the_matcher_finds_a_forbidden_variant_and_only_in_prose():
    text = prose("Dans un empilement *pré-norm*, la LayerNorm vient avant "
                 "(`pré-norm` en code, $\\text{pré-norm}$ en maths). Fin.\n\n"
                 "Une pré-normalisation ? Non : pré-normaliser est un verbe.", lang="fr")
    found = find_avoided(text, ["pré-norm", "pré-normalisation"])
    assert [variant for variant, _ in found] == ["pré-norm", "pré-normalisation"]
    assert found[0][1] == ("Dans un empilement pré-norm, la LayerNorm vient avant "
                           f"({PLACEHOLDER} en code, {PLACEHOLDER} en maths).")
    assert find_avoided("l’encodeur de position", ["encodeur de position"])  # typography
    assert find_avoided("A Self\nAttention layer", ["self attention"])  # case, line break
    assert not find_avoided("self-attention", ["self attention"])
    assert not find_avoided("information", ["formation"])
    bibliography = prose("- Ba et al., *Layer Normalisation*, 2016; layer normalisation.",
                         titles_are_quotations=True)
    assert len(find_avoided(bibliography, ["layer normalisation"])) == 1
    # A passage marked as another language is not prose of the page's language.
    marked = prose('le <span lang="en">*layer normalization*</span> et la formation', lang="fr")
    assert not find_avoided(marked, ["layer normalization"])
    assert find_avoided(marked, ["formation"])
    # A link keeps its text, not its target.
    assert prose("le [glossaire](glossary.md#formation)", lang="fr") == "le glossaire"


def test_a_passage_knows_its_file_line(tmp_path):
    """The lines that a failure names are those of the notebook as stored."""
    notebook = {"cells": [
        {"cell_type": "markdown", "id": "a", "metadata": {"deck": {"title": "Un titre"}},
         "source": ["# Un titre\n", "\n", "Une ligne.\n", "La formation commence."]},
        {"cell_type": "code", "execution_count": None, "id": "b",
         "metadata": {"tags": ["hide-input"], "mystnb": {"image": {"alt": "Une carte."}}},
         "outputs": [],
         "source": ["# Solution : Le masque\n", "# tient en une ligne.\n", "x = 1  # Fin\n",
                    "quiz.single(\n", "    text=\"Qu'est-ce ?\",\n",
                    "    options=['un', 'deux'], answer=0, explanation='La formation.',\n",
                    "    href='#a')"]},
    ]}
    text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    path = tmp_path / "lines.ipynb"
    path.write_text(text, encoding="utf-8")
    found = {(p.kind, p.raw.split("\n")[0]): p for p in _notebook_passages(path)}
    lines = text.split("\n")

    def line_of(fragment: str) -> int:
        return next(i + 1 for i, line in enumerate(lines) if fragment in line)

    prose_passage = found[("prose", "# Un titre")]
    offset = prose_passage.raw.index("La formation")
    assert prose_passage.line_at(offset) == line_of('"La formation commence."')
    assert found[("deck", "Un titre")].line == line_of('"title": "Un titre"')
    solution = found[("solution", "Solution : Le masque")]
    assert solution.line == line_of("# Solution : Le masque")
    assert solution.line_at(solution.raw.index("tient")) == line_of("# tient en une ligne.")
    assert found[("solution", "Fin")].line == line_of("x = 1  # Fin")
    assert found[("quiz", "Qu'est-ce ?")].line == line_of("text=")
    assert found[("quiz", "La formation.")].line == line_of("explanation=")
    assert found[("alt", "Une carte.")].line == line_of('"alt": "Une carte."')
    assert {p.kind for p in found.values()} == {"prose", "deck", "solution", "quiz", "alt"}
    assert ("quiz", "#a") not in found  # a link target is not a text


@pytest.mark.parametrize("lang", LANGS)
def test_chapters_use_the_preferred_terms(lang):
    """One notion, one name: the variants the glossary avoids in ``lang`` appear nowhere in
    its prose, quizzes and decks."""
    assert avoided(lang), f"the glossary avoids nothing in {lang}"
    findings = terminology_findings(lang)
    assert not findings, report(f"{lang}: terms the glossary avoids", findings)


if __name__ == "__main__":  # list the drift: python tests/site/test_glossary.py [LANG ...]
    for code in sys.argv[1:] or LANGS:
        for finding in terminology_findings(code):
            print(finding)
