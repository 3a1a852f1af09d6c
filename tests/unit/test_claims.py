"""The claim helper of the hidden cells: the build fails on a false sentence, a student's
"Run all" is told gently and goes on. And the formats the chapters print numbers with."""

import math

import nbformat
import pytest
import torch
from nbclient import NotebookClient

import transformer_course as tc
from transformer_course import claims


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    tc.set_language("en")


@pytest.fixture
def student(monkeypatch):
    """Outside the book build: Colab, Jupyter, a student's own run."""
    monkeypatch.delenv(claims.STATIC_ENV, raising=False)


@pytest.fixture
def build(monkeypatch):
    monkeypatch.setenv(claims.STATIC_ENV, "1")


def test_a_true_claim_is_silent_everywhere(student, capsys):
    assert tc.claim("every row sums to 1", True) is None  # nothing to display
    with tc.claim("two and two") as block:
        assert 2 + 2 == 4
    assert bool(block) is True
    assert tc.claim("log V", value=math.log(110), shown="4.70") is None
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_a_false_claim_fails_the_build(build):
    with pytest.raises(tc.ClaimError, match="This run differs from the text: the loss falls"):
        tc.claim("the loss falls", False)
    with pytest.raises(tc.ClaimError, match="the text says 4.60, this run gives 4.70"):
        tc.claim("log V", value=math.log(110), shown="4.60")
    with pytest.raises(tc.ClaimError), tc.claim("a block"):
        assert 1 > 2
    assert issubclass(tc.ClaimError, AssertionError)


def test_a_false_claim_tells_a_student_and_goes_on(student, capsys):
    tc.set_language("fr")
    assert tc.claim("la perte diminue", False) is None
    with tc.claim("un bloc") as block:
        assert 1 > 2
        raise AssertionError("never reached")
    assert bool(block) is False
    tc.claim("log V", value=math.log(110), shown="4,60")
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert "Cette exécution diffère du texte\u00a0: la perte diminue." in text
    assert "Cette exécution diffère du texte\u00a0: un bloc." in text
    assert "(le texte dit 4,60, cette exécution donne 4,70)" in text


def test_other_errors_are_not_swallowed(student):
    with pytest.raises(ZeroDivisionError), tc.claim("a block"):
        _ = 1 / 0


@pytest.mark.parametrize(("lang", "value", "shown", "holds"), [
    ("en", math.log(110), "4.70", True),
    ("en", math.log(110), "4.7", True),
    ("en", math.log(110), "4.6", False),
    ("fr", math.log(110), "4,70", True),
    ("fr", math.log(110), "4.70", False),      # a decimal point on a French page
    ("it", math.log(96), "4,56", True),
    ("fr", 11_720_448, "11 720 448", True),
    ("fr", 11_720_448, "11\u202f720\u202f448", True),
    ("it", 11_720_448, "11.720.448", True),
    ("en", 11_720_448, "11,720,448", True),
    ("fr", 0.627, "62,7 %", True),
    ("it", 0.627, "62,7%", True),
    ("en", 0.627, "63%", True),
    ("en", 0.627, "62%", False),
    ("en", 96, "96", True),
    ("en", 96, "91", False),
])
def test_a_number_is_pinned_at_the_precision_the_text_gives(build, lang, value, shown, holds):
    tc.set_language(lang)
    if holds:
        tc.claim("n", value=value, shown=shown)
    else:
        with pytest.raises(tc.ClaimError):
            tc.claim("n", value=value, shown=shown)


def test_bad_claims_are_refused(student):
    with pytest.raises(TypeError, match="text must be a non-empty string"):
        tc.claim("", True)
    with pytest.raises(TypeError, match="text must be a non-empty string"):
        tc.claim(None, True)
    with pytest.raises(ValueError, match="shown must be a number written as the text"):
        tc.claim("n", value=1.0, shown="about one")
    with pytest.raises(ValueError, match="shown must be a number"):
        tc.claim("n", value=1.0, shown=1.0)
    with pytest.raises(TypeError, match="either condition or value"):
        tc.claim("n", True, value=1.0, shown="1")
    with pytest.raises(TypeError, match="shown= goes with value="):
        tc.claim("n", True, shown="1")


def test_run_all_goes_on_past_a_false_claim_in_a_kernel(tmp_path, monkeypatch):
    """What a Colab or Jupyter student meets: the hidden cell says so, in their language,
    and the cells after it still run."""
    monkeypatch.delenv(claims.STATIC_ENV, raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('import transformer_course as tc\ntc.set_language("it")'),
        nbformat.v4.new_code_cell('tc.claim("la perdita scende a ogni controllo", False)',
                                  metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_code_cell('print("ancora qui")'),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    note = nb.cells[1].outputs[0]["data"]
    assert "tc-claim-differs" in note["text/html"]
    assert "Questa esecuzione differisce dal testo: la perdita scende a ogni controllo." in (
        note["text/plain"])
    # the text may come in several stream messages (the kernel flushes on its clock, and
    # the clock may lie: the local run gives the package's tests its IPython profile)
    assert "".join(o["text"] for o in nb.cells[2].outputs if o["output_type"] == "stream"
                   ) == "ancora qui\n"


# --- the formats of what the chapters print --------------------------------------------------

def test_scientific_numbers_are_powers_of_ten_never_e_notation():
    expected = {"en": "4.54\u00a0×\u00a010⁻¹⁹", "fr": "4,54\u00a0·\u00a010⁻¹⁹",
                "it": "4,54\u00a0·\u00a010⁻¹⁹"}
    for lang, text in expected.items():
        tc.set_language(lang)
        assert tc.format_number(4.54e-19) == text
        assert "E" not in tc.format_number(3.32e-5) + tc.format_number(-2.5e21)
    tc.set_language("fr")
    assert tc.format_number(-2.5e21) == "\u22122,5\u00a0·\u00a010²¹"  # the minus sign U+2212


def test_tensors_print_in_the_readers_format():
    t = torch.tensor([[0.785, 0.0, 0.18, 0.04], [-0.001, 1.5, -2.25, 12.5]])
    tc.set_language("en")
    assert tc.format_tensor(t) == ("[[ 0.79  0.00  0.18  0.04]\n"
                                   " [ 0.00  1.50 -2.25 12.50]]")
    tc.set_language("fr")
    assert tc.format_tensor(t[0]) == "[0,79 0,00 0,18 0,04]"
    assert tc.format_tensor(t[0], 1) == "[0,8 0,0 0,2 0,0]"
    assert tc.format_tensor(torch.tensor(3.14159)) == "3,14"
    assert tc.format_tensor(torch.arange(4).reshape(2, 1, 2)) == "[[[0 1]]\n\n [[2 3]]]"
    assert tc.format_tensor(torch.tensor([True, False])) == "[ True False]"
    assert tc.format_tensor([[1.0, 2.0]], 0) == "[[1 2]]"
    assert tc.format_tensor(torch.tensor([1234.5])) == "[1234,50]"  # no thousands separator
    assert tc.format_tensor(torch.tensor([float("inf")])) == "[∞]"
    with pytest.raises(ValueError, match="decimals must be an int >= 0"):
        tc.format_tensor(t, -1)
    with pytest.raises(TypeError, match="values must be a tensor or a nested list"):
        tc.format_tensor("abc")
    with pytest.raises(ValueError, match="meta device"):
        tc.format_tensor(torch.empty(2, device="meta"))
