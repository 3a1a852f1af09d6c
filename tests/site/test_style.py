"""The style sheet (book/style.yml): each language's writing choices, checked where a reader
meets them.

* The sheet is well formed, and every rule it lists has a check here (a rule without one
  fails, and so does a check that finds nothing in an example that breaks its rule).
* The sources: the prose of the notebooks' markdown cells and of the .md pages, the decks'
  texts, the quizzes' texts and the code's comments (read by tests/site/test_glossary.py's
  ``passages``, with the file's line of every character).
* The built pages, _build/html/<lang>/*.html: the cells' outputs, the explorers' and
  quizzes' number formats, the quizzes' texts.
* The numbers and messages that the package formats (transformer_course.i18n).

A failure names the file and line (or the page), the rule and the offending text:

    book/fr/07_encoder.ipynb:1234 (cell 07-014, prose): [fr.thousands] '4000' (write 4 000,
    with U+202F) in: ... chauffe de 4000 pas ...

``python tests/site/test_style.py [LANG ...]`` lists every finding of the sources.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_glossary import (
    PLACEHOLDER,
    ROOT,
    Finding,
    Masked,
    Passage,
    find_words,
    passages,
    report,
    sentence,
)

STYLE_PATH = ROOT / "book" / "style.yml"
STYLE = yaml.safe_load(STYLE_PATH.read_text(encoding="utf-8"))
SHEETS = STYLE["languages"]
LANGS = tuple(SHEETS)
MINUS = "\u2212"
NUMBER_FIELDS = {"decimal", "group", "group_from", "minus_prose", "minus_output",
                 "vector_separator", "percent"}
WHERE = frozenset({"prose", "quiz", "deck", "comment"})
SPACES = " \u00a0\u202f"


def rules(lang: str) -> list[str]:
    return [rule["id"] for rule in SHEETS[lang]["rules"]]


def numbers(lang: str) -> dict:
    return SHEETS[lang]["numbers"]


def shown(text: str) -> str:
    """Invisible characters made visible in a message."""
    return text.replace("\u202f", "[U+202F]").replace("\u00a0", "[U+00A0]")


# --- what the checks read ---------------------------------------------------------------------

def _maths(raw: str, lang: str) -> Iterator[tuple[str, int]]:
    """``(TeX, offset in raw)`` of each formula of a markdown text (code and passages in
    another language left out)."""
    text = Masked(raw)
    text = text.replace(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", "\n\n", re.S | re.M)
    text = text.replace(r"(`+).+?\1", PLACEHOLDER, re.S)
    text = text.replace(rf'<span\b[^>]*\blang="(?!{lang}")[\w-]+"[^>]*>.*?</span>',
                        PLACEHOLDER, re.S)
    for match in re.finditer(r"\$\$(.+?)\$\$|(?<!\\)\$([^$\n]+?)(?<!\\)\$", text.text, re.S):
        group = 1 if match.group(1) is not None else 2
        yield match.group(group), text.origin[match.start(group)]


@cache
def vocabulary(lang: str) -> frozenset[str]:
    """Every word written in lower case somewhere in the language's prose: a capitalised
    word that is also there is a common word, not a proper noun (BERT, Adam, Python)."""
    words: set[str] = set()
    for passage in passages(lang):
        if passage.kind in ("prose", "quiz", "deck"):
            words |= set(re.findall(r"(?<![\w’'-])[a-zà-öø-ÿ]+(?![\w-])",
                                    passage.masked(lang).text))
    return frozenset(words)


def finding(passage: Passage, masked: Masked, start: int, end: int, rule: str,
            advice: str = "") -> Finding:
    return Finding(passage.where(masked.origin[start] if start < len(masked.origin) else 0),
                   rule, shown(masked.text[start:end]), sentence(masked.text, start, end),
                   advice)


# --- the checks of the sources, one per rule --------------------------------------------------

SOURCE_CHECKS: dict[str, Callable[[str, Passage], Iterator[Finding]]] = {}
PAGE_CHECKS: dict[str, Callable[[str, Path, str], Iterator[Finding]]] = {}


def source_check(rule: str):
    def register(check):
        SOURCE_CHECKS[rule] = check
        return check
    return register


def page_check(rule: str):
    def register(check):
        PAGE_CHECKS[rule] = check
        return check
    return register


PROSE_KINDS = ("prose", "quiz", "deck")


@source_check("decimal")
def check_decimal(lang: str, passage: Passage) -> Iterator[Finding]:
    """A decimal point where the language writes a comma: 0.5 (section numbers such as 7.5
    have one digit after the point; software versions are not numbers; an Italian 30.522 is
    a thousand grouping)."""
    if passage.kind not in PROSE_KINDS or numbers(lang)["decimal"] == ".":
        return
    grouped = re.compile(r"[1-9]\d{0,2}(\.\d{3})+")
    masked = passage.masked(lang)
    for match in re.finditer(r"(?<![\w.§/−-])(?:0\.\d+|\d+\.\d{2,})(?!\w|\.\d)", masked.text):
        before = masked.text[max(0, match.start() - 12):match.start()]
        if re.search(r"(?i)(python|torch|version|ipywidgets|v)\s*$", before):
            continue
        if numbers(lang)["group"] == "." and grouped.fullmatch(match.group()):
            continue
        yield finding(passage, masked, match.start(), match.end(), f"{lang}.decimal",
                      f"write {match.group().replace('.', ',')}")
    if passage.markdown:
        for tex, at in _maths(passage.raw, lang):
            for match in re.finditer(r"(?<![\d.{])\d+\.\d+(?![\d.])", tex):
                if numbers(lang)["group"] == "." and grouped.fullmatch(match.group()):
                    continue
                yield Finding(passage.where(at), f"{lang}.decimal", match.group(),
                              f"${tex.strip()}$", "write the decimal comma as {,} in maths")


def _is_exempt_number(lang: str, digits: str, before: str = "") -> bool:
    """A year, or a number that names something (a token id, a pull request: listed in the
    sheet, or written just after one of its ``identifier_words``)."""
    value = int(digits)
    first, last = SHEETS[lang].get("years") or (0, -1)
    if (len(digits) == 4 and first <= value <= last) or value in set(
            SHEETS[lang].get("identifiers") or []):
        return True
    names = SHEETS[lang].get("identifier_words") or []
    return bool(names) and re.search(
        r"(?i)(?<!\w)(" + "|".join(map(re.escape, names)) + r")(?:\s+[\d\s,]*(?:et|e|and)?)?\s*$",
        before) is not None


@source_check("thousands")
def check_thousands(lang: str, passage: Passage) -> Iterator[Finding]:
    """Numbers of ``group_from`` digits or more carry the language's group separator, and no
    other; years and identifiers carry none."""
    sheet = numbers(lang)
    group, least = sheet["group"], sheet["group_from"]
    name = {"\u202f": "U+202F", ".": "'.'", ",": "','"}.get(group, repr(group))
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang)
    text = masked.text
    separators = "".join(c for c in " \u00a0\u202f.'" + ("," if sheet["decimal"] != "," else "")
                         if c != sheet["decimal"])
    grouped = re.compile(rf"(?<![\w.,−-])(?<!\d[{SPACES}])[1-9]\d{{0,2}}"
                         rf"(?:[{re.escape(separators)}]\d{{3}})+(?![\d\w]|[.,]\d)")
    for match in grouped.finditer(text):
        used = {c for c in match.group() if not c.isdigit()}
        if used != {group}:
            right = re.sub(r"\D", group, match.group())
            yield finding(passage, masked, match.start(), match.end(), f"{lang}.thousands",
                          f"write {shown(right)}, grouped with {name}")
    plain = re.compile(rf"(?<![\w.,/−-])(?<!\d[{SPACES}])\d{{{least},}}(?:,\d+)?(?![\w/-]|[.]\d)")
    for match in plain.finditer(text):
        digits = match.group().split(",")[0]
        if _is_exempt_number(lang, digits, text[max(0, match.start() - 60):match.start()]):
            continue
        right = f"{int(digits):,}".replace(",", group)
        yield finding(passage, masked, match.start(), match.start() + len(digits),
                      f"{lang}.thousands", f"write {shown(right)}, grouped with {name}")
    if not passage.markdown:
        return
    tex_group = "\\," if group == "\u202f" else group
    for tex, at in _maths(passage.raw, lang):
        cleaned = re.sub(r"\\(?:text|mathrm|operatorname)\{[^}]*\}", " ", tex)
        for match in re.finditer(rf"(?<![\d.,}}\\])\d{{{least},}}(?![\d.])", cleaned):
            base = cleaned[match.end():].startswith("^")
            if _is_exempt_number(lang, match.group()) and not base:
                continue
            right = f"{int(match.group()):,}".replace(",", tex_group)
            yield Finding(passage.where(at), f"{lang}.thousands", match.group(),
                          f"${tex.strip()}$", f"write {right} in maths")


@source_check("minus")
def check_minus(lang: str, passage: Passage) -> Iterator[Finding]:
    """A hyphen or an en dash used as a minus sign in the prose (maths draws its own)."""
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang)
    for match in re.finditer(r"(?:^|(?<=[\s(\[{=/×≈<>«“\"|]))[-–](?=\d)", masked.text, re.M):
        end = re.match(r"[-–][\d.,\u202f]*\d", masked.text[match.start():])
        stop = match.start() + (end.end() if end else 1)
        yield finding(passage, masked, match.start(), stop, f"{lang}.minus",
                      "write the minus sign − (U+2212)")


# A number and its percent sign, with whatever stands between them.
PERCENT = re.compile(rf"(?<![\w.,])\d+(?:[.,]\d+)?([{SPACES}]*)%")


def _percents(lang: str, text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, advice)`` of each percentage written otherwise than the sheet says."""
    wanted = numbers(lang)["percent"]
    for match in PERCENT.finditer(text):
        if match.group(1) + "%" != wanted:
            number = match.group()[:match.start(1) - match.start()]
            yield match.start(), match.end(), f"write {shown(number + wanted)}"


@source_check("percent")
def check_percent(lang: str, passage: Passage) -> Iterator[Finding]:
    """The space, or none, between a number and its percent sign: 99,9 % (U+00A0) in
    French, 99,9% in Italian, 99.9% in English."""
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang)
    for start, end, advice in _percents(lang, masked.text):
        yield finding(passage, masked, start, end, f"{lang}.percent", advice)


NUM = r"[−-]?\d+(?:[.,]\d+)?"
MATH_NUM = r"-?\d+(?:\{,\}\d+|\.\d+)?"


@source_check("vector")
def check_vector(lang: str, passage: Passage) -> Iterator[Finding]:
    """A vector's coordinates separated by the language's separator: (2 ; 0) in French,
    (2; 0) in Italian; a tensor's shape (after a shape word) is written as PyTorch prints
    it."""
    if passage.kind not in PROSE_KINDS:
        return
    wanted = numbers(lang)["vector_separator"]
    shape_words = SHEETS[lang].get("shape_words") or []
    masked = passage.masked(lang)
    text = masked.text
    tuple_ = re.compile(rf"\(\s*{NUM}(?:(?:,\s+|\s*;\s*){NUM})+\s*\)")
    for match in tuple_.finditer(text):
        separators = re.findall(r",\s+|\s*;\s*", match.group())
        spaced = any(s.startswith((" ", "\u00a0", "\u202f")) for s in separators)
        wrong = any(s.startswith(",") for s in separators) or (
            ";" in wanted and wanted.startswith(";") and spaced)
        if not wrong:
            continue
        before = text[max(0, match.start() - 40):match.start()]
        if shape_words and re.search(
                r"(?i)(?<!\w)(" + "|".join(map(re.escape, shape_words)) + r")(?!\w)", before):
            continue
        right = re.sub(r",\s+|\s*;\s*", wanted.replace("\u202f", " "), match.group())
        yield finding(passage, masked, match.start(), match.end(), f"{lang}.vector",
                      f"write {right}")
    if not passage.markdown:
        return
    math_tuple = re.compile(rf"(?:\\left)?\(\s*{MATH_NUM}(?:\s*(?:,|;|\\,;)(?:\s|\\[,;:!]|\\ |~)*"
                            rf"{MATH_NUM})+\s*(?:\\right)?\)")
    spaced = wanted.startswith("\u202f")  # French: a space before the semicolon
    for tex, at in _maths(passage.raw, lang):
        for match in math_tuple.finditer(tex):
            if re.search(r"\d\s*,(?!\})", match.group().replace("{,}", "")):
                yield Finding(passage.where(at), f"{lang}.vector", match.group(),
                              f"${tex.strip()}$", "separate the coordinates with ;")
        # maths drops the spaces it is given: (2 ; 0) is drawn (2; 0) unless written (2\ ;\ 0)
        for match in re.finditer(r"(?<=[\d}])[ ]*;", tex) if spaced else ():
            yield Finding(passage.where(at), f"{lang}.vector", match.group(),
                          f"${tex.strip()}$", r"write \ ;\  in maths, which drops spaces")


@source_check("singular-below-two")
def check_singular(lang: str, passage: Passage) -> Iterator[Finding]:
    """French: a number below 2 takes the singular (0 réponse, 1,5 point)."""
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang)
    yield from _plurals_below_two(lang, masked.text, lambda s, e, advice: finding(
        passage, masked, s, e, f"{lang}.singular-below-two", advice))


def _plurals_below_two(lang: str, text: str, make) -> Iterator[Finding]:
    invariable = set(SHEETS[lang].get("invariable") or [])
    words = vocabulary(lang)
    pattern = re.compile(rf"(?<![\d\w,.−-])(?<!\d[{SPACES}])(?<![±+×=/<>≤≥≈~−-][{SPACES}])"
                         rf"([01](?:,\d+)?)[{SPACES}]+"
                         r"([^\W\d_]+?)([sx])(?![\w’'-])")
    for match in pattern.finditer(text):
        word = match.group(2) + match.group(3)
        if word.lower() in invariable:
            continue
        singular = match.group(2).lower()
        if singular in words:
            yield make(match.start(), match.end(),
                       f"below 2, the singular: {match.group(1)} {match.group(2)}")


@source_check("title-comma")
def check_title_comma(lang: str, passage: Passage) -> Iterator[Finding]:
    """French: no comma before « et » in a title (headings and decks' titles)."""
    if passage.kind not in ("prose", "deck"):
        return
    masked = passage.masked(lang)
    text = masked.text
    if passage.heading:
        spans = [(0, len(text))]
    elif passage.kind == "prose":
        spans = [m.span() for m in re.finditer(r"(?m)^[ \t]*#{1,6}[ \t].*$", text)]
    else:
        return
    for start, end in spans:
        for match in re.finditer(r",\s+et\s", text[start:end]):
            yield finding(passage, masked, start + match.start(), start + match.end() - 1,
                          f"{lang}.title-comma", "no comma before « et » in a title")


CODE_COMMENT = re.compile(r"^\s*(noqa|type|pylint|fmt|pragma)\b")


@source_check("comment-colon")
def check_comment_colon(lang: str, passage: Passage) -> Iterator[Finding]:
    """French: a space before the colon in the code's comments too."""
    if passage.kind not in ("comment", "solution") or CODE_COMMENT.match(passage.raw):
        return
    masked = passage.masked(lang)
    for match in re.finditer(r"(?<=[^\W\d_)\]»\"'’*])(?<!https)(?<!http):(?=\s|$)",
                             masked.text, re.M):
        start = max(0, match.start() - 12)
        yield finding(passage, masked, start, match.end(), f"{lang}.comment-colon",
                      "a space before the colon: « mot : »")


def _capital_after_colon(lang: str, passage: Passage, rule: str) -> Iterator[Finding]:
    """A common word (one the language's prose also writes in lower case) with a capital
    right after a colon, in the same paragraph; a word in italics or quotes (a token, an
    example) and a menu's name (Runtime > ...) are left alone."""
    masked = passage.masked(lang, emphasis=True)
    words = vocabulary(lang)
    for match in re.finditer(r":(?:[ \t\u00a0\u202f]+|[ \t]*\n[ \t]*(?:#+[ \t]*)?)"
                             r"([A-ZÀ-ÖØ-Ý][a-zà-öø-ÿ]*)(?![\w-])(?![ \t]*[>→])", masked.text):
        word = match.group(1)
        if word.lower() in words:
            yield finding(passage, masked, match.start(), match.end(), rule,
                          f"after a colon, a lower-case letter: {word.lower()}")


@source_check("solution-colon-lowercase")
def check_solution_colon(lang: str, passage: Passage) -> Iterator[Finding]:
    """French: no capital after the colon of a solution's comment (a proper noun aside)."""
    if passage.kind == "solution":
        yield from _capital_after_colon(lang, passage, f"{lang}.solution-colon-lowercase")


@source_check("colon-lowercase")
def check_colon(lang: str, passage: Passage) -> Iterator[Finding]:
    """Italian: no capital after a colon, in the prose, quizzes, decks and comments."""
    if passage.kind in ("prose", "quiz", "deck", "comment", "solution"):
        yield from _capital_after_colon(lang, passage, f"{lang}.colon-lowercase")


@source_check("guillemets")
def check_guillemets(lang: str, passage: Passage) -> Iterator[Finding]:
    """Italian: «…» without inner spaces, never »…«, and no other quotation marks (“…” only
    inside «…»)."""
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang)
    text = masked.text
    rule = f"{lang}.guillemets"
    for match in re.finditer(rf"«[{SPACES}]+|[{SPACES}]+»", text):
        yield finding(passage, masked, match.start(), match.end(), rule,
                      "no space inside «…»")
    depth, straight, curly = 0, False, False
    for match in re.finditer(r"[«»“”\"]", text):
        mark, at = match.group(), match.start()
        if mark == "«":
            depth += 1
        elif mark == "»":
            if depth == 0:
                yield finding(passage, masked, at, at + 20, rule,
                              "the quotation opens with « and closes with »")
            depth = max(0, depth - 1)
        elif mark == '"':
            if not straight and depth == 0:
                yield finding(passage, masked, at, at + 20, rule, "quote with «…»")
            straight = not straight
        elif mark == "“":
            curly = True
            if depth == 0:
                yield finding(passage, masked, at, at + 20, rule,
                              "quote with «…» (“…” only inside «…»)")
        elif not curly and depth == 0:  # a closing ” that nothing opened
            yield finding(passage, masked, at, at + 20, rule, "quote with «…»")
        else:
            curly = False


@source_check("apostrophe")
def check_apostrophe(lang: str, passage: Passage) -> Iterator[Finding]:
    """The typographic apostrophe ’ in the quizzes and the pictures' descriptions (the pages'
    prose gets it when the book is built: tools/sphinxext/coursebook_typography.py)."""
    if passage.kind not in ("quiz", "alt"):
        return
    masked = passage.masked(lang)
    for match in re.finditer(r"[^\W\d_]'", masked.text):
        yield finding(passage, masked, match.start(), match.end() + 1, f"{lang}.apostrophe",
                      "write ’")


# Words that are English and neither French nor Italian: one of them in a quotation makes it
# an English quotation ("a", "an", "as", "in", "no", "do", "so", "me", "film" are not here).
ENGLISH_WORDS = frozenset("""
the of and was were not like this that these those with you your they their them my his her
our have has had been will would should could does did didn't don't isn't wasn't it's i'm
is are be am it to from for by all which what where when who why how because very good bad
movie movies great food delicious hungry tired hate love loved flies time arrow dog cat sat
mat ate street animal cross didn doesn just only every need learn power
""".split())


@source_check("english-quotation")
def check_english_quotation(lang: str, passage: Passage) -> Iterator[Finding]:
    """An English quotation (two words or more, in «…», “…”, "…" or italics) in French or
    Italian prose is marked ``<span lang="en">``; a single English word cited as a token
    (*it*, *dog*) is left alone, like a term."""
    if passage.kind not in PROSE_KINDS:
        return
    masked = passage.masked(lang, emphasis=True)
    text = masked.text
    candidates = re.finditer(r"«([^«»]+)»|“([^“”]+)”|\"([^\"\n]+)\"|"
                             r"(?<![\w*])\*((?:[^*\n]|\n(?!\n))+?)\*(?![\w*])", text)
    for match in candidates:
        quoted = next(g for g in match.groups() if g is not None)
        words = re.findall(r"[^\W\d_]+(?:['’][a-z]+)?", quoted.lower())
        english = [w for w in words if w.replace("’", "'") in ENGLISH_WORDS]
        if len(words) >= 2 and english and 3 * len(english) >= len(words):
            yield finding(passage, masked, match.start(), match.end(),
                          f"{lang}.english-quotation",
                          'mark it <span lang="en">…</span>' if passage.kind != "quiz"
                          else "an English quotation in a quiz, which cannot mark it yet")


def _word_rules(lang: str, kind: str) -> list[tuple[str, str, str, bool]]:
    found = []
    for entry in SHEETS[lang].get("words") or []:
        where = set(entry.get("where") or ("prose", "quiz", "deck"))
        if kind in where or (kind == "solution" and "comment" in where):
            found += [(f"{lang}.words", variant, f"say {entry['use']!r}",
                       entry.get("case") == "sensitive") for variant in entry["avoid"]]
    return found


@source_check("words")
def check_words(lang: str, passage: Passage) -> Iterator[Finding]:
    """One accepted form for each phrase of the sheet's ``words`` (not on the glossary page,
    which shows the forms to avoid)."""
    if passage.path.endswith("glossary.md"):
        return
    yield from find_words(passage, lang, _word_rules(lang, passage.kind))


# Checks on the package alone (test_the_package_writes_as_the_sheet_says) or on built pages.
PACKAGE_RULES = frozenset({"package-numbers"})


def source_findings(lang: str, rule: str) -> list[Finding]:
    check = SOURCE_CHECKS[rule]
    return [f for passage in passages(lang) for f in check(lang, passage)]


# --- the sheet itself -------------------------------------------------------------------------

def test_the_style_sheet_is_well_formed():
    assert set(LANGS) == {"en", "fr", "it"}, LANGS
    for lang, sheet in SHEETS.items():
        assert set(sheet["numbers"]) == NUMBER_FIELDS, f"{lang}: numbers {sheet['numbers']}"
        assert sheet["numbers"]["decimal"] != sheet["numbers"]["group"], lang
        ids = rules(lang)
        assert len(ids) == len(set(ids)), f"{lang}: a rule listed twice"
        for rule in sheet["rules"]:
            assert set(rule) == {"id", "rule"} and rule["rule"].strip(), f"{lang}: {rule}"
        for entry in sheet.get("words") or []:
            assert set(entry) <= {"use", "avoid", "where", "case"}, f"{lang}: {entry}"
            assert entry["use"].strip() and entry["avoid"], f"{lang}: {entry}"
            assert set(entry.get("where") or WHERE) <= WHERE, f"{lang}: {entry}"
            assert entry.get("case", "sensitive") == "sensitive", f"{lang}: {entry}"
            for variant in entry["avoid"]:  # the accepted form is never one to avoid
                same = (variant == entry["use"] if entry.get("case") == "sensitive"
                        else variant.casefold() == entry["use"].casefold())
                assert not same, f"{lang}: {entry}"
        assert ("words" in ids) == bool(sheet.get("words")), f"{lang}: words without rule"


def test_every_rule_has_a_check():
    known = set(SOURCE_CHECKS) | set(PAGE_CHECKS) | PACKAGE_RULES
    for lang in LANGS:
        unknown = [rule for rule in rules(lang) if rule not in known]
        assert not unknown, f"{lang}: rules of book/style.yml that nothing checks: {unknown}"
    tried = {rule for _, rule in [*EXAMPLES, *PASSAGE_EXAMPLES]}
    assert tried == set(SOURCE_CHECKS), f"checks without an example: {set(SOURCE_CHECKS) - tried}"


def test_each_glossary_page_shows_its_language_style_sheet():
    """The sheet is written down once and shown where the terms are: each glossary page holds
    the ``style-sheet`` directive, which renders every rule and every form to avoid."""
    sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
    from coursebook_glossary import style_markdown

    for lang in LANGS:
        page = (ROOT / "book" / lang / "glossary.md").read_text(encoding="utf-8")
        assert "```{style-sheet}" in page, f"book/{lang}/glossary.md: no style-sheet directive"
        lines = "\n".join(style_markdown(STYLE, lang))
        for rule in SHEETS[lang]["rules"]:
            assert " ".join(rule["rule"].split()) in lines, (lang, rule["id"])
        for entry in SHEETS[lang].get("words") or []:
            assert all(variant in lines for variant in entry["avoid"]), (lang, entry)


@pytest.mark.parametrize("lang", LANGS)
def test_the_built_glossary_shows_the_style_sheet(site, lang):
    html = (site / lang / "glossary.html").read_text(encoding="utf-8")
    assert "tc-style-sheet" in html, f"{lang}/glossary.html: no style sheet (rebuild the book)"


# Each check finds what breaks its rule, and nothing in what follows it.
EXAMPLES = {
    ("fr", "decimal"): ("Le poids vaut 0.72 ici.", "Le poids vaut 0,72 (section 7.5)."),
    ("it", "decimal"): ("Il peso vale 0.72.", "Il vocabolario ha 30.522 token, peso 0,72."),
    ("fr", "thousands"): ("Une phase de chauffe de 4000 pas, puis 30 522 jetons.",
                          "Une phase de 4\u202f000 pas en 2017, les id 2051 et 30\u202f522."),
    ("it", "thousands"): ("Su 20 000 coppie e 4096 token.",
                          "Su 20.000 coppie e 4.096 token, nel 2017."),
    ("fr", "percent"): ("Il en garde 15 %, puis 80\u202f% et 10%.",
                        "Il en garde 15\u00a0%, puis 80,5\u00a0%."),
    ("it", "percent"): ("Ne tiene il 15 %, poi l'80\u00a0%.", "Ne tiene il 15%, poi l'80,5%."),
    ("en", "percent"): ("It keeps 15 % of them.", "It keeps 15% of them, then 80.5%."),
    ("fr", "minus"): ("Les scores valent 6, 5, 2 et -3.", "Les scores valent 6, 5, 2 et −3."),
    ("en", "minus"): ("The scores are 6, 5, 2 and -3.", "The scores are 6, 5, 2 and −3."),
    ("fr", "vector"): ("Le vecteur (2, 0) et $\\boldsymbol{x} = (3, 0)$, puis $(1 ; 2)$.",
                       "Le vecteur (2 ; 0), de forme (2, 8), et $(0{,}2\\ ;\\ 0{,}5)$."),
    ("it", "vector"): ("Il vettore (2, 0) e (1 ; 2).", "Il vettore (2; 0), di forma (2, 8)."),
    ("fr", "singular-below-two"): ("On garde 0 réponses et 1 jetons sur les réponses.",
                                   "On garde 0 réponse, 1 jeton, 2 jetons, 1 000 jetons, "
                                   "90 ± 0 minutes, à β = 0 toutes les réponses."),
    ("it", "guillemets"): ("Si dice « ciao » o “ciao” o \"ciao\" o »ciao«.",
                           "Si dice «ciao» o «dice “ciao”»."),
    ("it", "colon-lowercase"): ("Nota: Il punteggio cresce; il punteggio.",
                                "Nota: il punteggio cresce, come in BERT: Devlin. Ecco:\n\n"
                                "Il punteggio. Il token: *Il*. (Colab: Runtime > Cambia)"),
    ("fr", "english-quotation"): ("Il lit « the film was not good » et *the cat*.",
                                  'Il lit <span lang="en">« the film was not good »</span>, '
                                  "un *masque*, *it* et le *teacher forcing*."),
}
PASSAGE_EXAMPLES = {
    ("fr", "title-comma"): (Passage("book/fr/x.ipynb", "prose", "# Masques, et têtes\n", 1),
                            Passage("book/fr/x.ipynb", "prose", "# Masques et têtes\n"
                                    "Les masques, et les têtes.", 1)),
    ("fr", "comment-colon"): (Passage("book/fr/x.ipynb", "comment", "forme: (B, L)", 1),
                              Passage("book/fr/x.ipynb", "comment",
                                      "forme : (B, L), voir https://x.org à 10:30", 1)),
    ("fr", "solution-colon-lowercase"): (
        Passage("book/fr/x.ipynb", "solution", "Solution : Le masque\nest causal", 1),
        Passage("book/fr/x.ipynb", "solution", "Solution : le masque de BERT : BERT", 1)),
    ("it", "apostrophe"): (Passage("book/it/x.ipynb", "quiz", "Un po' dell'attenzione", 1),
                           Passage("book/it/x.ipynb", "quiz", "Un po’ dell’attenzione", 1)),
    ("it", "words"): (Passage("book/it/x.ipynb", "comment", "Solo per Colab: installa", 1),
                      Passage("book/it/x.ipynb", "comment", "Solo su Colab: installa", 1)),
    ("fr", "words"): (Passage("book/fr/x.ipynb", "prose", "Un écart-type, le ReLU, internet",
                              1),
                      Passage("book/fr/x.ipynb", "prose", "Un écart type, la ReLU, Internet", 1)),
}


@pytest.mark.parametrize("key", sorted(EXAMPLES) + sorted(PASSAGE_EXAMPLES),
                         ids=lambda key: f"{key[0]}-{key[1]}")
def test_each_check_finds_what_breaks_its_rule(key):
    lang, rule = key
    assert rule in rules(lang), f"{lang} has no rule {rule}"
    if key in EXAMPLES:
        bad, good = (Passage(f"book/{lang}/x.ipynb", "prose", text, 1) for text in EXAMPLES[key])
    else:
        bad, good = PASSAGE_EXAMPLES[key]
    found = list(SOURCE_CHECKS[rule](lang, bad))
    assert found, f"{lang}.{rule} finds nothing in {bad.raw!r}"
    assert all(f.rule == f"{lang}.{rule}" and f.where.startswith(bad.path) for f in found)
    clean = list(SOURCE_CHECKS[rule](lang, good))
    assert not clean, f"{lang}.{rule} finds {[str(f) for f in clean]} in {good.raw!r}"


def test_the_checks_see_maths_in_braces_and_quotations_across_lines():
    """Two places the checks once missed: a number right after a brace in maths
    (\\frac{p}{10000^{2i/d}}) and an English quotation in italics wrapped over two lines."""
    maths = Passage("book/fr/x.ipynb", "prose", "L'angle $\\frac{p}{10000^{2i/d}}$.", 1)
    assert [f.found for f in check_thousands("fr", maths)] == ["10000"]
    fixed = Passage("book/fr/x.ipynb", "prose", "L'angle $\\frac{p}{10\\,000^{2i/d}}$.", 1)
    assert not list(check_thousands("fr", fixed))
    vector = Passage("book/fr/x.ipynb", "quiz", "Les scores $(6 ; 5; -3)$.", 1)
    assert [f.found for f in check_vector("fr", vector)] == [" ;", ";"]
    assert not list(check_vector("it", Passage("book/it/x.ipynb", "quiz", "$(6; 5)$.", 1)))
    wrapped = Passage("book/fr/x.ipynb", "prose", "Il lit *the cat ate\nthe soup* ici.", 1)
    assert len(list(check_english_quotation("fr", wrapped))) == 1
    paragraphs = Passage("book/fr/x.ipynb", "prose", "Un *masque\n\nthe cat* ici.", 1)
    assert not list(check_english_quotation("fr", paragraphs))


def test_a_finding_names_the_file_line_rule_and_text():
    passage = Passage("book/fr/07_encoder.ipynb", "prose", "Titre\n\nUne chauffe de 4000 pas.",
                      120, "07-014")
    (found,) = check_thousands("fr", passage)
    assert str(found).startswith(
        "book/fr/07_encoder.ipynb:122 (cell 07-014, prose): [fr.thousands] '4000'"), str(found)
    assert "Une chauffe de 4000 pas." in str(found)


# --- the sources -------------------------------------------------------------------------------

SOURCE_CASES = [(lang, rule) for lang in LANGS for rule in rules(lang) if rule in SOURCE_CHECKS]


@pytest.mark.parametrize(("lang", "rule"), SOURCE_CASES)
def test_the_sources_follow_the_style_sheet(lang, rule):
    findings = source_findings(lang, rule)
    assert not findings, report(f"{lang}: sources that break {lang}.{rule}", findings)


# --- the built pages ---------------------------------------------------------------------------

class _PageReader(HTMLParser):
    """A built page's visible texts: the cells' outputs, the quizzes and the prose (scripts,
    styles, code, typeset maths and passages in another language left out)."""

    VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "source", "wbr", "col",
                      "area"})

    def __init__(self, lang: str):
        super().__init__(convert_charrefs=True)
        self.lang = lang
        self.stack: list[tuple[str, bool, str]] = []  # (tag, hidden, part)
        self.parts: dict[str, list[str]] = {"output": [], "quiz": [], "prose": []}

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        hidden, part = self.stack[-1][1:] if self.stack else (False, "prose")
        if "tc-quiz" in classes:
            part = "quiz"
        elif "cell_output" in classes and part != "quiz":
            part = "output"
        hidden = hidden or tag in ("script", "style", "code", "kbd", "samp", "mjx-container",
                                   "svg", "math") or "cell_input" in classes or (
            a.get("lang") not in (None, self.lang) and tag != "html")
        self.stack.append((tag, hidden, part))

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self.stack and not self.stack[-1][1]:
            self.parts[self.stack[-1][2]].append(data)


@cache
def page_parts(path: Path, lang: str) -> dict[str, str]:
    reader = _PageReader(lang)
    reader.feed(path.read_text(encoding="utf-8"))
    # an output's lines are lines (a word that ends one does not belong with the next
    # line's number); elsewhere a line break is a space
    return {part: re.sub(r"[ \t\r]+" if part == "output" else r"[ \t\r\n]+", " ",
                         "".join(texts))
            for part, texts in reader.parts.items()}


def built_pages(site: Path, lang: str) -> list[Path]:
    """The language's pages that a reader reads (not the glossary, which shows the forms to
    avoid, nor Sphinx's index and search pages)."""
    skipped = {"glossary.html", "genindex.html", "search.html"}
    return [p for p in sorted((site / lang).glob("*.html")) if p.name not in skipped]


def _page_finding(page: Path, part: str, text: str, start: int, end: int, rule: str,
                  advice: str = "") -> Finding:
    return Finding(f"{page.parent.name}/{page.name} ({part})", rule, shown(text[start:end]),
                   sentence(text, start, end), advice)


NUMBER_SPEC = re.compile(r'(?:"|&quot;)numbers(?:"|&quot;):\{(.*?)\}')


@page_check("minus")
def page_minus(lang: str, page: Path, html: str) -> Iterator[Finding]:
    """The outputs' localised numbers, and the explorers' and quizzes' number formats, take
    the language's minus sign."""
    sheet = numbers(lang)
    minus = sheet["minus_output"]
    for match in NUMBER_SPEC.finditer(html):
        spec = match.group(1).replace("&quot;", '"')
        got = re.search(r'"minus":"([^"]*)"', spec)
        if got and json.loads(f'"{got.group(1)}"') != minus:
            yield Finding(f"{page.parent.name}/{page.name} (explorer or quiz)", f"{lang}.minus",
                          spec, "the number format of an explorer or a quiz",
                          f"minus must be {minus!r}")
    if minus == "-":
        return
    text = page_parts(page, lang)["output"]
    decimal = re.escape(sheet["decimal"])
    for match in re.finditer(rf"(?<![\w{MINUS}-])-(?=\d+{decimal}\d)", text):
        end = re.match(rf"-\d+{decimal}\d+", text[match.start():]).end()
        yield _page_finding(page, "output", text, match.start(), match.start() + end,
                            f"{lang}.minus", "the package writes −; is it printed with str()?")


@page_check("percent")
def page_percent(lang: str, page: Path, html: str) -> Iterator[Finding]:
    """The outputs, the quizzes and the prose write a percentage as the sheet says (the
    package's outputs follow CLDR, as Babel does)."""
    for part, text in page_parts(page, lang).items():
        for start, end, advice in _percents(lang, text):
            yield _page_finding(page, part, text, start, end, f"{lang}.percent", advice)


@page_check("apostrophe")
def page_apostrophe(lang: str, page: Path, html: str) -> Iterator[Finding]:
    text = page_parts(page, lang)["quiz"]
    for match in re.finditer(r"[^\W\d_]'[^\W\d_]", text):
        yield _page_finding(page, "quiz", text, match.start(), match.end(),
                            f"{lang}.apostrophe", "write ’")


@page_check("singular-below-two")
def page_singular(lang: str, page: Path, html: str) -> Iterator[Finding]:
    for part, text in page_parts(page, lang).items():
        yield from _plurals_below_two(lang, text, lambda s, e, advice, part=part, text=text:
                                      _page_finding(page, part, text, s, e,
                                                    f"{lang}.singular-below-two", advice))


PAGE_CASES = [(lang, rule) for lang in LANGS for rule in rules(lang) if rule in PAGE_CHECKS]


@pytest.mark.parametrize(("lang", "rule"), PAGE_CASES)
def test_the_built_pages_follow_the_style_sheet(site, lang, rule):
    findings = []
    for page in built_pages(site, lang):
        findings += PAGE_CHECKS[rule](lang, page, page.read_text(encoding="utf-8"))
    assert not findings, report(f"{lang}: built pages that break {lang}.{rule}", findings)


def test_the_page_reader_keeps_outputs_quizzes_and_prose_apart(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        '<html lang="fr"><body><p>Le texte vaut −0,5.</p>'
        '<div class="cell_output"><pre>score -0,50</pre></div>'
        '<div class="tc-quiz"><p>Qu\'est-ce ?</p><script>var x = "-0,5";</script></div>'
        '<p><span lang="en">the film</span> <code>-0,5</code></p></body></html>',
        encoding="utf-8")
    parts = page_parts(page, "fr")
    assert "−0,5" in parts["prose"] and "the film" not in parts["prose"]
    assert "-0,50" in parts["output"] and "Qu'est-ce" in parts["quiz"]
    html = page.read_text(encoding="utf-8") + '<script>{"numbers":{"minus":"-"}}</script>'
    found = [str(f) for f in page_minus("fr", page, html)]
    assert len(found) == 2 and "explorer" in found[0] and "'-0,50'" in found[1], found
    assert [str(f) for f in page_apostrophe("fr", page, html)]
    # an output line that ends in a word is not the plural of the next line's number
    lines = tmp_path / "lines.html"
    lines.write_text('<html lang="fr"><body><div class="cell_output"><pre>sur lui-même : 0,35\n'
                     'mêmes poids : oui\nDropout 0 paramètres</pre></div></body></html>',
                     encoding="utf-8")
    found = [f.found for f in page_singular("fr", lines, lines.read_text(encoding="utf-8"))]
    assert found == ["0 paramètres"], found


# --- the package -------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_the_package_writes_numbers_as_the_sheet_says(lang):
    """format_number and friends, and the number format the explorers and quizzes receive,
    follow the sheet: decimal and group separators, the minus sign, no sign on a zero."""
    import torch

    import transformer_course as tc
    from transformer_course.reader.page import number_format

    sheet = numbers(lang)
    group, minus, decimal = sheet["group"], sheet["minus_output"], sheet["decimal"]
    try:
        tc.set_language(lang)
        assert number_format() == {"decimal": decimal, "group": group, "minus": minus}
        assert tc.format_number(0.5) == f"0{decimal}5"
        assert sheet["group_from"] == 4, "Babel groups from four digits in the three languages"
        assert tc.format_integer(1024) == f"1{group}024"
        assert tc.format_integer(30522) == f"30{group}522"
        assert tc.format_number(-0.5) == f"{minus}0{decimal}5"
        assert tc.format_number(-1.5, 2) == f"{minus}1{decimal}50"
        assert tc.format_percent(-0.25) == f"{minus}25{decimal}0{sheet['percent']}"
        assert tc.format_percent(0.5, 0) == f"50{sheet['percent']}"
        assert tc.format_tensor(torch.tensor([-1.0, 0.0])).startswith(f"[{minus}1{decimal}00")
        for zero in (tc.format_number(-1e-4, 2), tc.format_number(-0.0), tc.format_percent(-1e-5),
                     tc.format_tensor(torch.tensor([-1e-4]))):
            assert not zero.lstrip("[").startswith(("-", MINUS)), f"a signed zero: {zero!r}"
    finally:
        tc.set_language("en")


def test_the_package_messages_agree_with_their_numbers():
    """French takes the singular below 2: the messages the package fills with a count (the
    progress table's "{answered} of {total} questions answered", plural forms) do too."""
    from transformer_course import i18n, quiz

    findings = []
    try:
        for lang in LANGS:
            if "singular-below-two" not in rules(lang):
                continue
            i18n.set_language(lang)
            table = quiz.progress_table([("01_attention", "1")], language=lang)
            partial = re.search(r'data-partial="([^"]*)"', table).group(1)
            for answered in (0, 1):
                text = partial.replace("&#x27;", "'").format(answered=answered, total=8)
                findings += _plurals_below_two(
                    lang, text, lambda s, e, advice, text=text, rule=f"{lang}.singular-below-two":
                    Finding("transformer_course: the progress table's message", rule, text[s:e],
                            text, advice))
            header = (Path(i18n.__file__).parent / "locale" / lang / "LC_MESSAGES"
                      / "transformer_course.po").read_text(encoding="utf-8")
            assert "plural=(n > 1)" in header, f"{lang}: the catalog's plural rule"
    finally:
        i18n.set_language("en")
    assert not findings, report("package messages that break the singular below 2", findings)


# python tests/site/test_style.py [LANG ...]: every finding of the sources
if __name__ == "__main__":
    for code in sys.argv[1:] or LANGS:
        for case in rules(code):
            if case in SOURCE_CHECKS:
                for item in source_findings(code, case):
                    print(item)
