"""Reading the course's diagrams (``tc.diagram``) in tests: their ``data-model``, their visible
text, the words of their messages that must not reach a French or Italian reader, and the
places of the book that must show one (shared by test_diagrams*.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "src" / "transformer_course" / "locale"
SOURCE = ROOT / "src" / "transformer_course" / "reader" / "diagrams.py"
LIMIT = 40_000  # bytes of one diagram's HTML (style, drawing, texts and script)

_ROOT = re.compile(r'<div class="tc-diagram[ "][^>]*?\bdata-model="([^"]*)"')
_FRAGMENT = re.compile(r'<div class="tc-diagram[ "].*?</script></div>', re.S)
_PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


def models(text: str) -> list[dict]:
    """The ``data-model`` of every diagram in an HTML text, in page order."""
    return [json.loads(html.unescape(m)) for m in _ROOT.findall(text)]


def fragments(text: str) -> list[str]:
    """Every diagram's own HTML (from its root ``div`` to the end of its script)."""
    return _FRAGMENT.findall(text)


def visible(fragment: str) -> str:
    """What a reader reads in a diagram: no style, script, code (class names) or markup."""
    text = re.sub(r"<(script|style|code)\b.*?</\1>", " ", fragment, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"[ \t\r\n]+", " ", html.unescape(text)).strip()  # no-break spaces stay


def english_words(lang: str) -> set[str]:
    """Words of the diagrams' English messages that the language's catalog never uses: one of
    them in a French or Italian diagram is an untranslated message."""
    with (LOCALE / lang / "LC_MESSAGES" / "transformer_course.po").open("rb") as handle:
        catalog = read_po(handle)
    used: set[str] = set()
    for message in catalog:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for string in strings:
            used |= set(re.findall(r"[^\W\d_]+", _PLACEHOLDER.sub(" ", string or "").lower()))
    words: set[str] = set()
    keywords = {"_": None, "N_": None, "ngettext": (1, 2)}
    for _line, message, _comments, _context in extract_from_file("python", str(SOURCE),
                                                                   keywords=keywords):
        for source in (message if isinstance(message, tuple) else (message,)):
            words |= set(re.findall(r"[^\W\d_]{4,}", _PLACEHOLDER.sub(" ", source).lower()))
    return words - used


def english_in(text: str, words: set[str]) -> list[str]:
    return sorted({w for w in re.findall(r"[^\W\d_]+", text.lower()) if w in words})


def _lab_dates(config: dict) -> bool:
    from transformer_course import data

    src, tgt = data.date_tokenizers()
    return (config["src_vocab_size"], config["tgt_vocab_size"]) == (len(src), len(tgt))


# page -> the diagrams it must show: (module, what else identifies it, said in words)
REQUIRED: dict[str, list[tuple[str, object, str]]] = {
    "index": [("Transformer", lambda c: (c["d_model"], c["num_layers"]) == (512, 6),
               "the whole Transformer at the paper's base sizes")],
    "04_multi_head_attention": [("MultiHeadAttention", None, "multi-head attention")],
    "07_encoder": [
        ("EncoderLayer", lambda c: not c["norm_first"], "a post-norm encoder layer"),
        ("EncoderLayer", lambda c: c["norm_first"], "a pre-norm encoder layer"),
        ("TransformerClassifier", lambda c: c["num_classes"] == 2,
         "the sentiment classifier of the lab"),
    ],
    "08_decoder": [
        ("DecoderLayer", None, "the decoder layer"),
        ("Transformer", _lab_dates, "the dates model"),
    ],
    "09_tokens_and_bert": [
        ("BertEncoder", lambda c: (c["vocab_size"], c["d_model"], c["num_heads"],
                                   c["num_layers"], c["d_ff"]) == (30522, 384, 12, 6, 1536),
         "MiniLM in BertEncoder at its real sizes"),
    ],
    "10_language_models": [("LanguageModel", None, "the decoder-only language model")],
}


def missing_places(page: str, found: list[dict]) -> list[str]:
    """The required diagrams of ``page`` that ``found`` (its data-models) lacks."""
    left = list(found)
    missing = []
    for module, condition, words in REQUIRED.get(page, []):
        match = next((m for m in left if m["module"] == module
                      and (condition is None or condition(m["config"]))), None)
        if match is None:
            missing.append(words)
        else:
            left.remove(match)
    return missing
