"""The Colab simulation's results (tools/colab_sim.py, run by `make test` for the English
chapters and by `make colab-check` for all three languages): every chapter ran top to
bottom from its own first cell with Colab's packages, and left Colab's widget and kernel
stack as it was."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "_build" / "colab"
CHAPTERS = sorted(p.stem for p in (ROOT / "book" / "en").glob("*.ipynb"))
# Colab's versions (googlecolab/backend-info, 2026-08) that the simulation must reproduce.
COLAB = {"ipywidgets": "7.7.1", "widgetsnbextension": "3.6.10", "ipykernel": "6.17.1",
         "ipython": "7.34.0", "traitlets": "5.7.1", "jupyter-client": "7.4.9"}


@pytest.fixture(scope="module")
def report():
    path = WORK / "report.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run the Colab simulation first "
                    "(`make test` runs it for English, `make colab-check` for every language)")
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_simulation_has_colab_s_widget_and_kernel_stack(report):
    assert report["baseline"] == {**report["baseline"], **COLAB}, report["baseline"]


def test_every_english_chapter_ran_from_its_own_first_cell(report):
    runs = report["chapters"].get("en", {})
    assert sorted(runs) == CHAPTERS, "the simulation did not run every English chapter"
    for chapter, result in runs.items():
        assert result["ok"], f"en/{chapter} failed in the Colab simulation:\n{result['error']}"
        assert result["installed_by_first_cell"], f"en/{chapter}: the first cell did not install"


def test_every_language_that_ran_succeeded(report):
    for lang, runs in report["chapters"].items():
        for chapter, result in runs.items():
            assert result["ok"], f"{lang}/{chapter} failed:\n{result['error']}"
            assert result["installed_by_first_cell"], f"{lang}/{chapter}"


def test_colab_s_packages_kept_their_versions(report):
    assert report["changed"] == {}, f"the chapters changed Colab's packages: {report['changed']}"
    assert "transformer-course" in report["added"]
    for name in ("ipywidgets", "widgetsnbextension", "ipykernel", "ipython"):
        assert name not in report["added"], name
