"""The Colab simulation's results (tools/colab_sim.py, run by `make test` for its share of
the English chapters and by `make colab-check` for every chapter in three languages): each
chapter ran top to bottom from its first cell with Colab's packages, and left Colab's
widget and kernel stack as it was. Between them, the Colab run and the local one
(tools/local_jupyter.py) ran every chapter."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_english_chapters_ran_from_their_own_first_cell(report):
    """The run's first chapter started from Colab's packages alone and its first cell
    installed the package; the next ones found it there (their first cells are the same
    code: tests/site/test_site.py), as the simulation keeps it between chapters."""
    runs = report["chapters"].get("en", {})
    assert runs, "the simulation ran no English chapter"
    assert set(runs) <= set(CHAPTERS), sorted(set(runs) - set(CHAPTERS))
    for chapter, result in runs.items():
        assert result["ok"], f"en/{chapter} failed in the Colab simulation:\n{result['error']}"
    results = [result for lang_runs in report["chapters"].values()
               for result in lang_runs.values()]
    first, *rest = results
    assert not first["package_present_before"] and first["installed_by_first_cell"], first
    assert all(result["package_present_before"] for result in rest)


def test_every_chapter_ran_in_colab_or_in_a_local_install(report):
    """`make test` shares the chapters between the two student environments (the Makefile
    says which and why): none may fall between them."""
    ran = {chapter for runs in report["chapters"].values() for chapter in runs}
    if sorted(ran) != CHAPTERS:  # `make colab-check` runs them all
        path = ROOT / "_build" / "local" / "report.json"
        if not path.exists():
            pytest.fail(f"{path} is missing: run `make local` (make test does) "
                        "or `make local-check`")
        local = json.loads(path.read_text(encoding="utf-8"))
        ran |= {chapter for runs in local["chapters"].values() for chapter in runs}
    assert sorted(ran) == CHAPTERS, f"run in neither environment: {sorted(set(CHAPTERS) - ran)}"


def test_every_language_that_ran_succeeded(report):
    for lang, runs in report["chapters"].items():
        for chapter, result in runs.items():
            assert result["ok"], f"{lang}/{chapter} failed:\n{result['error']}"


def test_colab_s_packages_kept_their_versions(report):
    assert report["changed"] == {}, f"the chapters changed Colab's packages: {report['changed']}"
    assert "transformer-course" in report["added"]
    for name in ("ipywidgets", "widgetsnbextension", "ipykernel", "ipython"):
        assert name not in report["added"], name


def test_the_explorers_of_the_colab_run_agree_with_pytorch(report, browser, plain_texts):
    """The HTML the chapters displayed in the Colab simulation (ipywidgets 7.7.1 there)
    computes in Chromium what PyTorch computes, control by control."""
    import transformer_course as tc
    from browsing import Visit, serve
    from test_explorers_browser import CHAPTERS, Driver, drive

    pages = [page for runs in report["chapters"].values() for result in runs.values()
             for page in result["explorers"]]
    ran = {f"{lang}-{name}" for lang, runs in report["chapters"].items() for name in runs}
    expected = {f"{key}-0.html" for key in ran if key.split("-", 1)[1] in CHAPTERS}
    assert {Path(p).name for p in pages} >= expected, "an explorer did not display"
    with serve(WORK / "explorers") as url:
        for page in sorted(pages):
            lang, chapter = Path(page).stem.split("-")[:2]
            visit = Visit(browser, url, Path(page).name)
            if chapter not in CHAPTERS:  # chapter 10's language-model explorer
                try:
                    drive_language_model(visit, lang)
                finally:
                    visit.close()
                continue
            kind, _, make = CHAPTERS[chapter]
            try:
                root = visit.page.locator(".tc-explorer").first
                root.wait_for(state="attached", timeout=20000)
                assert root.get_attribute("data-kind") == kind and root.get_attribute(
                    "lang") == lang
                tc.set_language(lang)
                drive(Driver(visit, make(), root, lang=lang), kind)
                assert visit.blocked == [] and visit.real_errors == [], (visit.blocked,
                                                                         visit.real_errors)
            finally:
                visit.close()


def drive_language_model(visit, lang: str) -> None:
    """The language-model explorer the Colab run displayed: its logits equal the model
    rebuilt in PyTorch from the page's weights, while it writes (see test_lm_explorer)."""
    from lm_pages import LMDriver
    from transformer_course.reader import lm_explorer as lm_module

    root = visit.page.locator(".tc-explorer[data-kind='lm']").first
    root.wait_for(state="attached", timeout=20000)
    assert root.get_attribute("lang") == lang
    driver = LMDriver(visit, root)
    driver.check(steps=0)
    driver.start(lm_module.PROMPTS[lang])
    driver.step(3)
    driver.write()
    assert driver.checked >= 4
    assert visit.blocked == [] and visit.real_errors == [], (visit.blocked, visit.real_errors)


def test_no_hidden_check_depends_on_the_clock(report):
    """The simulation's kernels run with a clock that lies (a seeded random walk of
    time.perf_counter, time.monotonic and time.time): every sentence still holds, so no
    hidden check compared timings, and a student on a slow or busy machine sees no note."""
    assert report.get("lying_clock") is True, "run the simulation with its lying clock"
    for lang, runs in report["chapters"].items():
        for chapter, result in runs.items():
            assert result["claims_differ"] == [], (lang, chapter, result["claims_differ"])
