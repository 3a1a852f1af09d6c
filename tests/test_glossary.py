"""The glossary is the single source of the course's terms (book/glossary.yml).

* The data file is well formed: every term has an id, chapters that exist, and in each
  language a term and a one-sentence meaning; the lecture notes' terms carry a source and a
  flag; no variant to avoid is also a preferred term or a synonym.
* The built glossary page of each language shows every term in the three languages.
* Terminology: no variant that the glossary marks ``avoid`` for a language appears in that
  language's chapters (the prose of the notebooks' markdown cells and of the .md pages,
  outside code, maths and links; the glossary page itself quotes the notes and is skipped).
"""

import html
import json
import re
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY_PATH = ROOT / "book" / "glossary.yml"
DATA = yaml.safe_load(GLOSSARY_PATH.read_text(encoding="utf-8"))
LANGS = ("en", "fr", "it")
FIELDS = {"term", "meaning", "synonyms", "notes", "avoid"}
NOTE_FIELDS = {"term", "source", "kind", "flag"}

# Chapters that someone else is editing right now: the replacements they need are reported
# (see the report of the glossary issue). Strict: once a file is clean, drop it from here.
def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around text[start:end], on one line."""
    stops = r"[.!?](?=\s)|\n\s*\n|\n\s*(?:[-*]|\d+\.)\s"
    before = [m.end() for m in re.finditer(stops, text[:start])]
    after = re.search(r"[.!?](?=\s|$)|\n\s*\n", text[end:])
    sentence = text[before[-1] if before else 0: end + after.end() if after else len(text)]
    return " ".join(sentence.split())


def prose(markdown: str, *, titles_are_quotations: bool = False) -> str:
    """The prose of a markdown text: no code, no maths, no HTML tags, no link targets and no
    emphasis markers. With ``titles_are_quotations`` (the bibliography), italic spans, the
    titles of the works cited, are dropped too."""
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1\s*$", " ", markdown, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", " ", text, flags=re.S)
    text = re.sub(r"(?<!\\)\$[^$\n]+?(?<!\\)\$", " ", text)
    text = re.sub(r"(`+).+?\1", " ", text, flags=re.S)
    text = re.sub(r"<(?:https?|mailto):[^>]*>", " ", text)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    if titles_are_quotations:
        text = re.sub(r"(?<![\w*])\*[^*\n][^*]*?\*(?![\w*])", " ", text)
    return re.sub(r"[*_]+", "", text)


def variant_pattern(variant: str) -> re.Pattern:
    """A case-insensitive, whole-word pattern for a variant; any run of spaces matches any
    whitespace, and an apostrophe matches both ' and ’."""
    parts = []
    for char in variant.strip():
        if char.isspace():
            if parts and parts[-1] != r"\s+":
                parts.append(r"\s+")
        elif char in "'’":
            parts.append("['’]")
        else:
            parts.append(re.escape(char))
    return re.compile(r"(?<!\w)" + "".join(parts) + r"(?!\w)", re.IGNORECASE)


def find_avoided(text: str, variants: list[str]) -> list[tuple[str, str]]:
    """``(variant, sentence)`` for every occurrence of an avoided variant in the prose."""
    found = []
    for variant in variants:
        for match in variant_pattern(variant).finditer(text):
            found.append((variant, _sentence(text, match.start(), match.end())))
    return found


def chapter_texts(lang: str) -> dict[str, str]:
    """File name -> prose of that file, for the chapters and pages of one language."""
    texts = {}
    for path in sorted((ROOT / "book" / lang).iterdir()):
        if path.suffix == ".ipynb":
            notebook = json.loads(path.read_text(encoding="utf-8"))
            cells = ["".join(cell["source"]) for cell in notebook["cells"]
                     if cell["cell_type"] == "markdown"]
            texts[path.name] = "\n\n".join(prose(cell) for cell in cells)
        elif path.suffix == ".md" and path.stem != "glossary":
            texts[path.name] = prose(path.read_text(encoding="utf-8"),
                                     titles_are_quotations=path.stem == "references")
    return texts


def avoided(lang: str) -> list[str]:
    return [v for item in DATA["terms"] for v in item[lang].get("avoid") or []]


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
                 "Une pré-normalisation ? Non : pré-normaliser est un verbe.")
    found = find_avoided(text, ["pré-norm", "pré-normalisation"])
    assert [variant for variant, _ in found] == ["pré-norm", "pré-normalisation"]
    assert found[0][1] == ("Dans un empilement pré-norm, la LayerNorm vient avant "
                           "( en code, en maths).")
    assert find_avoided("l’encodeur de position", ["encodeur de position"])  # typography
    assert find_avoided("A Self\nAttention layer", ["self attention"])  # case, line break
    assert not find_avoided("self-attention", ["self attention"])
    assert not find_avoided("information", ["formation"])
    bibliography = prose("- Ba et al., *Layer Normalization*, 2016; layer normalization.",
                         titles_are_quotations=True)
    assert len(find_avoided(bibliography, ["layer normalization"])) == 1


@pytest.mark.parametrize("lang", LANGS)
def test_chapters_use_the_preferred_terms(lang):
    variants = avoided(lang)
    assert variants, f"the glossary avoids nothing in {lang}"
    problems = []
    for name, text in chapter_texts(lang).items():
        problems += [f"book/{lang}/{name}: {variant!r} in: {sentence}"
                     for variant, sentence in find_avoided(text, variants)]
    assert not problems, "terms the glossary avoids:\n" + "\n".join(problems)


if __name__ == "__main__":  # list the drift: python tests/test_glossary.py [LANG ...]
    for code in sys.argv[1:] or LANGS:
        for name, text in chapter_texts(code).items():
            for variant, sentence in find_avoided(text, avoided(code)):
                print(f"book/{code}/{name}: {variant!r}: {sentence}")
