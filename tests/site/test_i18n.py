"""The package speaks the reader's language: gettext catalogs managed with Babel, complete and
current, numbers in the locale's format, and no English reaching a French or Italian reader."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

import transformer_course as tc
from pages import visible_text
from transformer_course import i18n

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "src" / "transformer_course" / "locale"
TRANSLATED = ("fr", "it")
PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    tc.set_language("en")


def read(path):
    with path.open("rb") as handle:
        return read_po(handle)


def ids(catalog):
    return {m.id for m in catalog if m.id}


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """The messages of the source as `make catalogs` extracts them now."""
    pot = tmp_path_factory.mktemp("catalogs") / "now.pot"
    pybabel = Path(sys.executable).parent / "pybabel"
    subprocess.run([str(pybabel), "extract", "--no-location", "-F", str(ROOT / "babel.cfg"),
                    "-k", "N_", "-k", "ngettext:1,2", "-o", str(pot),
                    str(ROOT / "src" / "transformer_course")],
                   check=True, capture_output=True)
    return read(pot)


@pytest.fixture(scope="module", params=TRANSLATED)
def catalog(request):
    return request.param, read(LOCALE / request.param / "LC_MESSAGES" / "transformer_course.po")


def test_the_template_and_catalogs_are_current_with_the_source(extracted, catalog):
    lang, po = catalog
    now = ids(extracted)
    assert now, "no message found in the source"
    template = ids(read(LOCALE / "transformer_course.pot"))
    assert template == now, ("run `make catalogs`: the template differs from the source",
                             sorted(map(str, now ^ template))[:20])
    assert ids(po) == now, (f"run `make catalogs`: the {lang} catalog differs from the source",
                            sorted(map(str, ids(po) ^ now))[:20])


def test_catalogs_are_complete_and_not_fuzzy(catalog):
    lang, po = catalog
    missing, fuzzy = [], []
    for message in po:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if not all(strings):
            missing.append(message.id)
        if message.fuzzy:
            fuzzy.append(message.id)
    assert missing == [], f"{lang}: untranslated {missing[:10]}"
    assert fuzzy == [], f"{lang}: fuzzy {fuzzy[:10]}"


def test_translations_keep_their_placeholders(catalog):
    lang, po = catalog
    for message in po:
        if not message.id:
            continue
        sources = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set(PLACEHOLDER.findall(sources[-1]))
        for string in strings:
            assert set(PLACEHOLDER.findall(string)) <= wanted | set(
                PLACEHOLDER.findall(sources[0])), (lang, message.id, string)
            assert wanted <= set(PLACEHOLDER.findall(string)) or len(strings) > 1, (
                lang, message.id, string)


def test_catalogs_compile_with_babel(catalog, tmp_path):
    lang, po = catalog
    errors = [(m.id, e) for m, e in po.check()]
    assert errors == [], (lang, errors)
    with (tmp_path / "out.mo").open("wb") as handle:
        write_mo(handle, po)
    assert po.plural_forms and po.num_plurals == 2


def test_set_language_and_get_language():
    assert tc.get_language() == "en"
    for lang in ("fr", "it", "en"):
        tc.set_language(lang)
        assert tc.get_language() == lang
    for bad in ("de", "FR", "", None, 3):
        with pytest.raises(ValueError, match=r"lang must be one of \('en', 'fr', 'it'\)"):
            tc.set_language(bad)
    assert tc.get_language() == "en"


def test_numbers_follow_the_language():
    expected = {
        "en": ("0.5", "11,720,448", "99.9%", "0.25"),
        "fr": ("0,5", "11\u202f720\u202f448", "99,9\u00a0%", "0,25"),
        "it": ("0,5", "11.720.448", "99,9%", "0,25"),
    }
    for lang, (half, big, percent, quarter) in expected.items():
        tc.set_language(lang)
        assert tc.format_number(0.5) == half
        assert tc.format_integer(11_720_448) == big
        assert tc.format_percent(0.999) == percent
        assert tc.format_number(torch.tensor(0.25), 2) == quarter
    tc.set_language("en")
    assert tc.format_number(1.5e-7) == "1.5\u00a0×\u00a010⁻⁷"
    assert tc.format_number(2 / 3) == "0.666667"
    with pytest.raises(TypeError, match="value must be a real number, got str"):
        tc.format_number("1")
    with pytest.raises(ValueError, match="decimals must be an int >= 0"):
        tc.format_number(1.0, -1)


MINUS = "\u2212"


def test_negative_numbers_take_the_minus_sign_of_the_language():
    """French and Italian write the minus sign U+2212, as their prose does; English keeps the
    ASCII hyphen-minus of Python's prints (book/style.yml records both choices)."""
    expected = {
        "en": ("-0.5", "-1,024", "-25.0%", "-1.5\u00a0×\u00a010⁻⁷", "-∞",
               "[[-1.00  0.50]\n [ 0.00  2.00]]", "[-3  4]"),
        "fr": (f"{MINUS}0,5", f"{MINUS}1\u202f024", f"{MINUS}25,0\u00a0%",
               f"{MINUS}1,5\u00a0·\u00a010⁻⁷", f"{MINUS}∞",
               f"[[{MINUS}1,00  0,50]\n [ 0,00  2,00]]", f"[{MINUS}3  4]"),
        "it": (f"{MINUS}0,5", f"{MINUS}1.024", f"{MINUS}25,0%", f"{MINUS}1,5\u00a0·\u00a010⁻⁷",
               f"{MINUS}∞", f"[[{MINUS}1,00  0,50]\n [ 0,00  2,00]]", f"[{MINUS}3  4]"),
    }
    for lang, (half, integer, percent, tiny, infinite, tensor, integers) in expected.items():
        tc.set_language(lang)
        assert tc.format_number(-0.5) == half
        assert tc.format_integer(-1024) == integer
        assert tc.format_percent(-0.25) == percent
        assert tc.format_number(-1.5e-7) == tiny
        assert tc.format_number(float("-inf")) == infinite
        assert tc.format_tensor(torch.tensor([[-1.0, 0.5], [-0.001, 2.0]])) == tensor
        assert tc.format_tensor(torch.tensor([-3, 4])) == integers
        assert tc.format_number(0.0) == "0" and tc.format_number(-0.0001, 2) in ("0.00", "0,00")
        # The explorers and quizzes write and read numbers with the same sign.
        from transformer_course.reader.page import number_format

        assert number_format()["minus"] == ("-" if lang == "en" else MINUS)
    tc.set_language("fr")
    # A claim compares a sentence's number whatever minus sign the sentence uses.
    tc.claim("a negative number", value=-0.5, shown=f"{MINUS}0,5")
    tc.claim("a negative number", value=-0.5, shown="-0,5")


def test_messages_are_translated():
    tc.set_language("fr")
    assert i18n.gettext("keys") != "keys"
    tc.set_language("it")
    assert i18n.gettext("keys") != "keys"
    tc.set_language("en")
    assert i18n.gettext("keys") == "keys"


# --- no English for a French or Italian reader ------------------------------------------

def english_words(extracted, lang):
    """Words of the English messages that the language's catalog never uses: seeing one in a
    French or Italian output means an untranslated message."""
    po = read(LOCALE / lang / "LC_MESSAGES" / "transformer_course.po")
    used = set()
    for message in po:
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for string in strings:
            used |= set(re.findall(r"[^\W\d_]+", PLACEHOLDER.sub(" ", string or "").lower()))
    words = set()
    for message in extracted:
        for source in (message.id if isinstance(message.id, tuple) else (message.id,)):
            words |= set(re.findall(r"[^\W\d_]{4,}", PLACEHOLDER.sub(" ", source).lower()))
    return words - used


# Code names that reach a verdict through its placeholders: Python types and the names of
# what an exercise returns, e.g. "(output, weights)". They stay as they are in every language.
CODE_NAMES = frozenset({"tuple", "list", "dict", "none", "output", "weights"})


def english_in(text, words):
    return sorted({w for w in re.findall(r"[^\W\d_]+", text.lower())
                   if w in words and w not in CODE_NAMES})


def figure_texts(fig):
    from matplotlib.text import Text

    return " ".join(t.get_text() for t in fig.findobj(Text))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_checker_verdicts_have_no_english(extracted, lang):
    words = english_words(extracted, lang)
    tc.set_language(lang)

    def wrong_softmax(s):
        return s.exp() / s.exp().sum(-1, keepdim=True)  # overflows at large scores

    def crashing(*args):
        raise NotImplementedError

    verdicts = [tc.check.softmax(wrong_softmax), tc.check.softmax(lambda s: torch.softmax(s, -1)),
                tc.check.causal_mask(crashing), tc.check.attention(lambda q, k, v: ()),
                tc.check.entropy(lambda w: w.sum(-1))]
    for verdict in verdicts:
        # code (`names` in the text, <code> on the page) and HTML tags are not prose
        page = re.sub(r"<[^>]+>", " ", re.sub(r"<code>.*?</code>", " ", verdict._repr_html_()))
        text = re.sub(r"`[^`]*`", " ", repr(verdict)) + page
        assert english_in(text.replace(verdict.name, ""), words) == [], text


@pytest.mark.parametrize("lang", TRANSLATED)
def test_figures_have_no_english(extracted, lang):
    words = english_words(extracted, lang)
    tc.set_language(lang)
    w = torch.softmax(torch.randn(3, 4), -1)
    figures = [tc.plotting.attention_heatmap(w), tc.plotting.attention_heads(w[None]),
               tc.plotting.encoding_heatmap(tc.sinusoidal_encoding(8, 4)),
               tc.plotting.vectors_plot(torch.randn(3, 2), highlight=torch.randn(2))]
    for fig in figures:
        text = figure_texts(fig)
        assert english_in(text, words) == [], text
    assert "0,25" in figure_texts(tc.plotting.attention_heatmap(torch.full((2, 4), 0.25)))


def fragments(extracted):
    """Pieces of English messages long enough to be sentences, placeholders cut out."""
    out = set()
    for message in extracted:
        for source in (message.id if isinstance(message.id, tuple) else (message.id,)):
            for piece in PLACEHOLDER.split(source)[::2]:
                piece = piece.strip(" .,:;()")
                if len(piece.split()) >= 3:
                    out.add(piece)
    return out


@pytest.mark.parametrize("lang", TRANSLATED)
def test_no_english_message_reaches_the_built_pages(site, extracted, lang):
    po = read(LOCALE / lang / "LC_MESSAGES" / "transformer_course.po")
    same = {m.id for m in po if m.id and m.string == m.id}  # words equal in both languages
    translations = [" ".join(m.string if isinstance(m.string, tuple) else (m.string,))
                    for m in po if m.id]
    # A piece that the translation itself contains ("positions p =" in "les positions p = 0")
    # is the translator's choice, not English leaking through.
    pieces = {p for p in fragments(extracted)
              if p not in same and not any(p in t for t in translations)}
    for page in sorted((site / lang).glob("*.html")):
        text = " ".join(visible_text(page).split())
        found = sorted(p for p in pieces if p in text)
        assert found == [], f"{lang}/{page.name} shows English from the package: {found[:5]}"


def test_tick_labels_follow_the_language():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0.0, 0.5, 1.0], [0.1, 0.2, 0.3])
    labels = {}
    for lang in ("en", "fr", "it"):
        tc.set_language(lang)
        fig.canvas.draw()
        labels[lang] = [t.get_text() for t in ax.get_xticklabels()]
    plt.close(fig)
    assert "0.4" in labels["en"] and "0,4" in labels["fr"] and "0,4" in labels["it"], labels
