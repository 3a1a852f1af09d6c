"""Small synthetic tasks the course trains on, in English, French and Italian, and tokenizers.

* :func:`date_pairs`: a date written out in words -> the same date in ISO 8601;
* :func:`sentiment_examples`: short reviews with negation -> 1 (positive) or 0 (negative);
* :func:`sequence_pairs`: copy, reverse or sort a string of letters;
* :class:`CharTokenizer` and :class:`WordTokenizer`: text <-> ids with [PAD] = 0.

Everything is generated from a seed, offline, in a fraction of a second.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import random
import re
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import torch

from ._checks import check_device, check_flag, check_int, check_positive_int, check_real

__all__ = [
    "LANGUAGES",
    "CharTokenizer",
    "WordTokenizer",
    "course_corpus",
    "date_pairs",
    "date_tokenizers",
    "load_labelled_sentences",
    "sentiment_examples",
    "sequence_pairs",
]

LANGUAGES = ("en", "fr", "it")

_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
           "septembre", "octobre", "novembre", "décembre"),
    "it": ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
           "settembre", "ottobre", "novembre", "dicembre"),
}
_WEEKDAYS = {  # Monday first, as datetime.weekday() counts
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
    "it": ("lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"),
}
_FIRST_DAY = dt.date(1950, 1, 1)
_NUM_DAYS = (dt.date(2049, 12, 31) - _FIRST_DAY).days + 1


def _check_languages(languages: Sequence[str]) -> tuple[str, ...]:
    if isinstance(languages, str) or not isinstance(languages, Iterable):
        raise ValueError(f"languages must be a non-empty sequence of codes, got {languages!r}")
    languages = tuple(languages)
    if not languages:
        raise ValueError(f"languages must be a non-empty sequence of codes, got {languages!r}")
    unknown = [lang for lang in languages if not isinstance(lang, str) or lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"languages must be among {LANGUAGES}, got {unknown}")
    return tuple(languages)


def _english_ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _write_date(date: dt.date, lang: str, rng: random.Random) -> str:
    """One of several everyday ways of writing ``date`` in ``lang``."""
    day, year = date.day, date.year
    month = _MONTHS[lang][date.month - 1]
    weekday = _WEEKDAYS[lang][date.weekday()]
    if lang == "en":
        if rng.random() < 0.3:
            month, weekday = month.lower(), weekday.lower()
        forms = (
            f"{day} {month} {year}",
            f"{month} {day}, {year}",
            f"the {_english_ordinal(day)} of {month} {year}",
            f"{month[:3]} {day} {year}",
            f"{weekday}, {month} {day}, {year}",
        )
    else:
        if day == 1:
            number = "1er" if lang == "fr" else "1º"
        else:
            number = f"{day:02d}" if rng.random() < 0.2 else str(day)
        article = {"fr": "le", "it": "il"}[lang]
        forms = (
            f"{number} {month} {year}",
            f"{article} {number} {month} {year}",
            f"{weekday} {number} {month} {year}",
        )
    return rng.choice(forms)


def date_pairs(
    n: int, *, seed: int = 0, languages: Sequence[str] = LANGUAGES
) -> list[tuple[str, str]]:
    """``n`` pairs (date written in words, ISO date), dates between 1950 and 2049.

    >>> date_pairs(2, seed=3, languages=("fr",))  # doctest: +SKIP
    [('mardi 14 juillet 1998', '1998-07-14'), ...]

    Args:
        n: number of pairs.
        seed: the same seed gives the same pairs.
        languages: codes among ``"en"``, ``"fr"``, ``"it"``, drawn uniformly.
    """
    n = check_positive_int("n", n, allow_zero=True)
    langs = _check_languages(languages)
    rng = random.Random(check_int("seed", seed))
    pairs = []
    for _ in range(n):
        date = _FIRST_DAY + dt.timedelta(days=rng.randrange(_NUM_DAYS))
        pairs.append((_write_date(date, rng.choice(langs), rng), date.isoformat()))
    return pairs


# --- sentiment -------------------------------------------------------------------------

# (subject, grammatical gender) and adjectives as (masculine, feminine) forms.
_SUBJECTS = {
    "en": [("the film", ""), ("this movie", ""), ("the pizza", ""), ("the hotel", ""),
           ("the book", ""), ("the service", ""), ("this song", ""), ("the show", "")],
    "fr": [("le film", "m"), ("ce livre", "m"), ("le service", "m"), ("l'hôtel", "m"),
           ("le repas", "m"), ("la pizza", "f"), ("cette série", "f"), ("la chanson", "f")],
    "it": [("il film", "m"), ("questo libro", "m"), ("il servizio", "m"), ("l'albergo", "m"),
           ("il pranzo", "m"), ("la pizza", "f"), ("questa serie", "f"), ("la canzone", "f")],
}
_ADJECTIVES = {
    ("en", 1): [("good", "good"), ("great", "great"), ("excellent", "excellent"),
                ("wonderful", "wonderful"), ("brilliant", "brilliant")],
    ("en", 0): [("bad", "bad"), ("awful", "awful"), ("boring", "boring"),
                ("terrible", "terrible"), ("disappointing", "disappointing")],
    ("fr", 1): [("bon", "bonne"), ("excellent", "excellente"), ("génial", "géniale"),
                ("magnifique", "magnifique"), ("réussi", "réussie")],
    ("fr", 0): [("mauvais", "mauvaise"), ("ennuyeux", "ennuyeuse"), ("décevant", "décevante"),
                ("horrible", "horrible"), ("raté", "ratée")],
    ("it", 1): [("buono", "buona"), ("ottimo", "ottima"), ("bellissimo", "bellissima"),
                ("eccellente", "eccellente"), ("divertente", "divertente")],
    ("it", 0): [("cattivo", "cattiva"), ("noioso", "noiosa"), ("deludente", "deludente"),
                ("orribile", "orribile"), ("pessimo", "pessima")],
}
_INTENSIFIERS = {"en": ("really", "very", "truly"), "fr": ("vraiment", "très", "assez"),
                 "it": ("davvero", "molto", "proprio")}
# (verb phrase, polarity it expresses) and its negated form
_VERBS = {
    "en": [("I loved {s}", "I did not love {s}", 1), ("I liked {s}", "I did not like {s}", 1),
           ("I hated {s}", "I did not hate {s}", 0)],
    "fr": [("j'ai adoré {s}", "je n'ai pas adoré {s}", 1),
           ("j'ai aimé {s}", "je n'ai pas aimé {s}", 1),
           ("j'ai détesté {s}", "je n'ai pas détesté {s}", 0)],
    "it": [("ho adorato {s}", "non ho adorato {s}", 1),
           ("mi è piaciuto {s}", "non mi è piaciuto {s}", 1),
           ("ho odiato {s}", "non ho odiato {s}", 0)],
}


def _copula(lang: str, negated: bool, rng: random.Random) -> str:
    past = rng.random() < 0.5
    if lang == "en":
        verb = "was" if past else "is"
        return f"{verb} not" if negated else verb
    if lang == "fr":
        verb = "était" if past else "est"
        return f"n'{verb} pas" if negated else verb
    verb = "era" if past else "è"
    return f"non {verb}" if negated else verb


def _review(lang: str, rng: random.Random, negation_rate: float) -> tuple[str, int]:
    subject, gender = rng.choice(_SUBJECTS[lang])
    negated = rng.random() < negation_rate
    if rng.random() < 0.7:  # "<subject> <is / is not> [very] <adjective>"
        polarity = rng.randrange(2)
        masc, fem = rng.choice(_ADJECTIVES[(lang, polarity)])
        adjective = fem if gender == "f" else masc
        if rng.random() < 0.3:
            adjective = f"{rng.choice(_INTENSIFIERS[lang])} {adjective}"
        text = f"{subject} {_copula(lang, negated, rng)} {adjective}"
    else:  # "I [did not] like <subject>"
        plain, negative, polarity = rng.choice(_VERBS[lang])
        text = (negative if negated else plain).format(s=subject)
        if lang == "it" and gender == "f":
            text = text.replace("piaciuto", "piaciuta")
    label = polarity ^ int(negated)  # negation flips the meaning: "not bad" is positive
    return text, label


def sentiment_examples(
    n: int, *, seed: int = 0, languages: Sequence[str] = LANGUAGES, negation_rate: float = 0.4
) -> list[tuple[str, int]]:
    """``n`` short reviews with their label: 1 positive, 0 negative.

    About ``negation_rate`` of them are negated ("was not good", "n'était pas bon",
    "non era buono", "I did not hate it"), so that a bag of words cannot solve the task:
    a model must relate the negation to the word it negates.
    """
    n = check_positive_int("n", n, allow_zero=True)
    langs = _check_languages(languages)
    check_real("negation_rate", negation_rate, low=0.0, high=1.0)
    rng = random.Random(check_int("seed", seed))
    return [_review(rng.choice(langs), rng, negation_rate) for _ in range(n)]


def load_labelled_sentences(source: str | Path, *, seed: int | None = None,
                            timeout: float = 60.0) -> list[tuple[str, int]]:
    """Real reviews: the UCI *Sentiment Labelled Sentences* collection (needs the file).

    The collection (Kotzias et al., 2015) holds 3000 English sentences from IMDb, Amazon and
    Yelp, each labelled 1 (positive) or 0 (negative), as ``sentence<TAB>label`` lines in
    ``*_labelled.txt`` files inside a zip archive.

    Args:
        source: a URL of the zip archive (downloaded, so this needs internet), or a local
            path to the zip or to one ``*_labelled.txt`` file.
        seed: shuffle the pairs with this seed (``None`` keeps the order of the files,
            sorted by name, so that a split by position would separate the sources).
        timeout: seconds allowed for the download.

    Returns:
        ``(sentence, label)`` pairs.
    """
    if not isinstance(source, (str, Path)):
        raise TypeError(
            f"source must be a URL or a path (str or Path), got {type(source).__name__}"
        )
    if seed is not None:
        check_int("seed", seed)
    check_real("timeout", timeout, low=0.0, low_open=True)
    text_files: list[tuple[str, bytes]] = []
    if isinstance(source, str) and source.startswith(("http://", "https://")):
        from urllib.request import urlopen

        with urlopen(source, timeout=timeout) as response:
            payload = response.read()
    else:
        path = Path(source)
        if not path.exists():
            raise ValueError(f"source {str(path)!r} does not exist")
        if not path.is_file():
            raise ValueError(f"source {str(path)!r} is a directory, not a file")
        payload = path.read_bytes()
        if path.suffix == ".txt":
            text_files.append((path.name, payload))
    if not text_files:
        try:
            archive = zipfile.ZipFile(io.BytesIO(payload))
        except zipfile.BadZipFile:
            raise ValueError(f"source {str(source)!r} is neither a zip archive nor a .txt file"
                             ) from None
        text_files = sorted((name, archive.read(name)) for name in archive.namelist()
                            if name.endswith("_labelled.txt") and "__MACOSX" not in name)
    pairs = []
    for name, raw in text_files:
        for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            sentence, tab, label = line.rstrip().rpartition("\t")
            if not tab or label not in ("0", "1"):
                raise ValueError(f"{name} line {number}: expected 'sentence<TAB>0 or 1', "
                                 f"got {line[:60]!r}")
            pairs.append((sentence.strip(), int(label)))
    if not pairs:
        raise ValueError(f"source {str(source)!r} holds no labelled sentences "
                         "(no 'sentence<TAB>label' line in a *_labelled.txt file)")
    if seed is not None:
        random.Random(seed).shuffle(pairs)
    return pairs


# --- copy / reverse / sort ----------------------------------------------------------------

def sequence_pairs(
    n: int,
    *,
    task: str = "copy",
    min_len: int = 3,
    max_len: int = 10,
    alphabet: str = "abcdefghij",
    seed: int = 0,
) -> list[tuple[str, str]]:
    """``n`` (input, target) strings for the classic toy tasks ``"copy"``, ``"reverse"``
    and ``"sort"``, each input drawn from ``alphabet`` with a length in
    ``[min_len, max_len]``."""
    n = check_positive_int("n", n, allow_zero=True)
    if not isinstance(task, str) or task not in ("copy", "reverse", "sort"):
        raise ValueError(f"task must be 'copy', 'reverse' or 'sort', got {task!r}")
    check_positive_int("min_len", min_len)
    if check_positive_int("max_len", max_len) < min_len:
        raise ValueError(f"max_len ({max_len}) must be >= min_len ({min_len})")
    if not isinstance(alphabet, str):
        raise TypeError(f"alphabet must be a str of characters, got {type(alphabet).__name__}")
    if not alphabet:
        raise ValueError("alphabet must not be empty")
    rng = random.Random(check_int("seed", seed))
    out = []
    for _ in range(n):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(min_len, max_len)))
        target = {"copy": text, "reverse": text[::-1], "sort": "".join(sorted(text))}[task]
        out.append((text, target))
    return out


# --- the course's own prose -------------------------------------------------------------

def course_corpus(languages: Sequence[str] = LANGUAGES) -> str:
    """The prose of this course's book, one paragraph per line: a corpus the project owns.

    Chapter 10 trains a character-level language model on it. The text ships with the
    package (``corpus/<lang>.txt``, written from the book by ``tools/make_corpus.py``), so
    it needs no download.

    Args:
        languages: codes among ``"en"``, ``"fr"``, ``"it"``; their texts are joined in
            this order.

    Returns:
        The text, paragraphs separated by newlines.
    """
    from importlib import resources

    langs = _check_languages(languages)
    folder = resources.files("transformer_course") / "corpus"
    return "".join(folder.joinpath(f"{lang}.txt").read_text(encoding="utf-8") for lang in langs)


# --- tokenizers ----------------------------------------------------------------------------

def _strings(name: str, items: object, *, text_ok: bool = False) -> list[str]:
    """Check a collection of strings (one str is accepted as its characters if ``text_ok``)."""
    if isinstance(items, str) and not text_ok:
        raise TypeError(f"{name} must be a list of strings, got one str (wrap it in a list)")
    if not isinstance(items, Iterable) or isinstance(items, torch.Tensor):
        raise TypeError(f"{name} must be a list of strings, got {type(items).__name__}")
    items = list(items)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"{name}[{i}] must be a str, got {type(item).__name__}")
    return items


_V = TypeVar("_V", bound="_Vocabulary")


class _Vocabulary:
    """Shared id bookkeeping: specials first, [PAD] always 0."""

    specials: tuple[str, ...] = ()
    single_characters = False  # every other symbol is one character

    def __init__(self, symbols: Iterable[str]) -> None:
        self.itos: list[str] = list(self.specials)
        for symbol in _strings("symbols", symbols):
            if symbol not in self.itos:
                self.itos.append(symbol)
        self.stoi = {s: i for i, s in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def _ids(self, ids: Iterable[int]) -> list[int]:
        """Check ids to decode: a 1-D tensor or a sequence of ints within the vocabulary."""
        if isinstance(ids, torch.Tensor):
            if (ids.dim() != 1 or ids.is_floating_point() or ids.is_complex()
                    or ids.device.type == "meta"):
                raise ValueError(f"ids must be a 1-D integer tensor or a list of ints, got a "
                                 f"tensor of shape {tuple(ids.shape)} and dtype {ids.dtype} "
                                 f"on {ids.device}")
            ids = ids.tolist()
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        out = [check_int("ids[...]", i) for i in ids]
        bad = [i for i in out if not 0 <= i < len(self.itos)]
        if bad:
            raise ValueError(f"ids holds {bad[0]}, outside the vocabulary [0, {len(self.itos)})")
        return out

    def save(self, path: str | os.PathLike) -> Path:
        """Write the vocabulary to a JSON file (UTF-8); :meth:`load` reads it back.

        Save it next to the model's weights: the ids mean nothing without it.

        Returns:
            The path written.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
        path = Path(path)
        state = {"format": "transformer_course tokenizer", "version": 1,
                 "class": type(self).__name__, "itos": self.itos}
        path.write_text(json.dumps(state, ensure_ascii=False, indent=1) + "\n",
                        encoding="utf-8")
        return path

    @classmethod
    def load(cls: type[_V], path: str | os.PathLike) -> _V:
        """Read a tokenizer written by :meth:`save`: the same ids for the same text.

        Raises:
            ValueError: if the file holds another kind of tokenizer or no tokenizer.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or a path, got {type(path).__name__}")
        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"path {str(path)!r} is not a saved tokenizer (not JSON: "
                             f"{error})") from None
        if not isinstance(state, dict) or state.get("format") != "transformer_course tokenizer":
            raise ValueError(f"path {str(path)!r} is not a tokenizer saved by "
                             f"{cls.__name__}.save")
        if state.get("class") != cls.__name__:
            raise ValueError(f"path {str(path)!r} holds a {state.get('class')}, not a "
                             f"{cls.__name__}: load it with {state.get('class')}.load")
        itos = _strings("itos", state.get("itos", ()))
        long = cls.single_characters and any(len(t) != 1 for t in itos[len(cls.specials):])
        if tuple(itos[:len(cls.specials)]) != cls.specials or len(set(itos)) != len(itos) or long:
            raise ValueError(f"path {str(path)!r} holds a damaged vocabulary: it must start "
                             f"with {cls.specials} and hold each token once"
                             + (", one character each" if cls.single_characters else ""))
        tokenizer = cls.__new__(cls)
        _Vocabulary.__init__(tokenizer, itos[len(cls.specials):])
        return tokenizer

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size})"

    def _pad(self, rows: list[list[int]], device: torch.device | str | None) -> torch.Tensor:
        device = check_device("device", device)
        if not rows:
            raise ValueError("texts must not be empty")
        width = max(len(r) for r in rows)
        out = torch.zeros(len(rows), width, dtype=torch.long)  # 0 is [PAD]
        for i, row in enumerate(rows):
            out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return out.to(device)


class CharTokenizer(_Vocabulary):
    """One id per character, with ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3.

    Build it from an alphabet (``CharTokenizer("0123456789-")``) or from texts
    (:meth:`from_texts`); :meth:`save` and :meth:`load` keep it next to a model's weights.
    """

    specials = ("<pad>", "<bos>", "<eos>", "<unk>")
    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3
    single_characters = True

    def __init__(self, alphabet: Iterable[str]) -> None:
        symbols = _strings("alphabet", alphabet, text_ok=True)
        long = [s for s in symbols if len(s) != 1]
        if long:
            raise ValueError(f"alphabet must hold single characters, got {long[0]!r}")
        super().__init__(sorted(set(symbols)))

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> CharTokenizer:
        """The tokenizer whose alphabet is every character of ``texts``."""
        return cls(set().union(*map(set, _strings("texts", texts))))

    def encode(self, text: str, *, bos: bool = False, eos: bool = False) -> list[int]:
        """Characters -> ids, unknown characters -> ``<unk>``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ids = [self.stoi.get(ch, self.unk_id) for ch in text]
        return [self.bos_id] * check_flag("bos", bos) + ids + [self.eos_id] * check_flag("eos", eos)

    def decode(self, ids: Iterable[int]) -> str:
        """Ids -> text, stopping at ``<eos>`` and dropping the other special tokens."""
        chars = []
        for i in self._ids(ids):
            if i == self.eos_id:
                break
            if i >= len(self.specials):
                chars.append(self.itos[i] if i < len(self.itos) else "")
        return "".join(chars)

    def batch(
        self, texts: Sequence[str], *, bos: bool = False, eos: bool = False,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """Encode and right-pad with ``<pad>``: a ``(B, L)`` LongTensor."""
        texts = _strings("texts", texts)
        return self._pad([self.encode(t, bos=bos, eos=eos) for t in texts], device)


def date_tokenizers() -> tuple[CharTokenizer, CharTokenizer]:
    """The (source, target) character tokenizers of :func:`date_pairs`.

    The source alphabet covers every character the three languages' formats can produce,
    so it does not depend on which dates were sampled.
    """
    words = [*_MONTHS.values(), *_WEEKDAYS.values()]
    alphabet = set("0123456789 ,º") | set("the of le il er st nd rd th")
    for names in words:
        for name in names:
            alphabet |= set(name) | set(name.lower())
    return CharTokenizer(alphabet), CharTokenizer("0123456789-")


class WordTokenizer(_Vocabulary):
    """A word-level tokenizer in the style of BERT's special tokens.

    Lower-cases, splits words and punctuation, keeps an elided article with its
    apostrophe ("l'hôtel" -> "l'", "hôtel"). Ids: ``[PAD]`` = 0, ``[UNK]`` = 1,
    ``[CLS]`` = 2, ``[SEP]`` = 3, then the words seen by :meth:`from_texts`.
    :meth:`save` and :meth:`load` keep it next to a model's weights.
    """

    specials = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
    pad_id, unk_id, cls_id, sep_id = 0, 1, 2, 3
    _pattern = re.compile(r"\w+'|\w+|[^\w\s]")

    @classmethod
    def tokenize(cls, text: str) -> list[str]:
        """Split ``text`` into lower-case word tokens."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return cls._pattern.findall(text.lower())

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, min_count: int = 1) -> WordTokenizer:
        """The vocabulary of every token seen at least ``min_count`` times, most frequent
        first."""
        check_positive_int("min_count", min_count)
        counts = Counter(tok for text in _strings("texts", texts) for tok in cls.tokenize(text))
        return cls(w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                   if c >= min_count)

    def encode(self, text: str, *, special_tokens: bool = True) -> list[int]:
        """Text -> ids, framed by ``[CLS] ... [SEP]`` unless ``special_tokens=False``."""
        ids = [self.stoi.get(tok, self.unk_id) for tok in self.tokenize(text)]
        return ([self.cls_id, *ids, self.sep_id] if check_flag("special_tokens", special_tokens)
                else ids)

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids -> tokens (padding dropped)."""
        return [self.itos[i] for i in self._ids(ids) if i != self.pad_id]

    def batch(
        self, texts: Sequence[str], *, special_tokens: bool = True,
        device: torch.device | str | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode and pad: ``(input_ids, attention_mask)``, both ``(B, L)``, the mask True
        for real tokens (the Hugging Face convention)."""
        texts = _strings("texts", texts)
        ids = self._pad([self.encode(t, special_tokens=special_tokens) for t in texts], device)
        return ids, ids != self.pad_id
