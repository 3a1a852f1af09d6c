"""The package as an index would publish it and a student would install it (issue 20's
"Done when"): ``python -m build`` warning-free, ``twine check`` passing, the wheel in a fresh
virtual environment (torch 2.13.0 first, then the wheel with its `course` and `test` extras
and JupyterLab) with a clean ``pip check`` and no ipywidgets, and the package's own unit
tests, as the sdist ships them, passing against the installed wheel.

The work is tools/local_jupyter.py's (``make local-check`` adds every chapter in that
environment's kernel). The build is kept when the checkout's files are those it was made
from (``make local`` builds them just before, in ``make test``), and the environment is
made once per wheel: a later run with a wheel of the same files reuses it while its
packages are unchanged (set TC_FRESH_VENV=1 to make it again). Measured here (2 cores
shared with other jobs, load 10 to 13): 18 minutes of wall time for a fresh environment, of
which 4.8 minutes of CPU (pip and the unit tests); with TC_PACKAGE_TESTS=wheel (make test)
the unit tests run here instead of on the checkout, so the build and the environment are
what this adds.
"""

import importlib.util
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("local_jupyter", ROOT / "tools" / "local_jupyter.py")
local = importlib.util.module_from_spec(spec)
spec.loader.exec_module(local)


@pytest.fixture(scope="module")
def report():
    made = local.prepare(reuse=os.environ.get("TC_FRESH_VENV", "") in ("", "0"))
    made["unit_tests"] = local.unit_tests(made)
    return made


def test_python_m_build_is_warning_free_and_twine_check_passes(report):
    build = report["build"]
    assert build["warnings"] == [], build["warnings"]
    assert build["twine_ok"], build["twine"]
    assert build["wheel"] == "transformer_course-0.2.0-py3-none-any.whl"


def test_the_wheel_holds_the_licence_the_types_and_the_data(report):
    with zipfile.ZipFile(local.DIST / report["build"]["wheel"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read("transformer_course-0.2.0.dist-info/METADATA").decode()
    assert "transformer_course-0.2.0.dist-info/licenses/LICENSE" in names
    for name in ("py.typed", "reader/js/explorer.js", "reader/js/explorer.css", "corpus/en.txt",
                 "locale/fr/LC_MESSAGES/transformer_course.po",
                 "locale/it/LC_MESSAGES/transformer_course.po"):
        assert f"transformer_course/{name}" in names, name
    assert not any(n.startswith(("tests/", "book/")) for n in names)
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in headers
    assert "Project-URL: Issues, https://github.com/attention-transformers-course/" \
           "attention-transformers/issues" in headers
    assert "Classifier: Programming Language :: Python :: 3.13" in headers
    assert "Provides-Extra: jupyter" in headers and "Provides-Extra: viz" not in headers
    description = metadata.split("\n\n", 1)[1]  # the index page: README.package.md
    assert description.startswith("# transformer-course") and "make book" not in description


def test_the_sdist_ships_the_package_s_tests_and_not_the_book_s(report):
    with tarfile.open(local.DIST / report["build"]["sdist"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert {"LICENSE", "README.package.md", "CHANGELOG.md", "tests/conftest.py",
            "tests/unit/test_generation.py", "tests/unit/test_widgets.py"} <= names
    for checkout_only in ("tests/site/test_site.py", "tests/site/test_browser.py",
                          "tests/site/browsing.py", "tests/site/test_wheel.py"):
        assert checkout_only not in names
    assert not any(n.startswith(("book/", "tools/", "_build/")) for n in names)


def test_a_fresh_environment_has_a_clean_pip_check_and_no_ipywidgets(report):
    venv = report["venv"]
    assert venv["pip_check_ok"], venv["pip_check"]
    packages = venv["packages"]
    assert packages["transformer-course"] == "0.2.0"
    assert packages["torch"].split("+")[0] == "2.13.0"
    assert {"jupyterlab", "ipykernel", "matplotlib", "bertviz", "pytest"} <= set(packages)
    assert "ipywidgets" not in packages  # `course` and JupyterLab do not bring it


def test_the_package_s_unit_tests_pass_against_the_installed_wheel(report):
    tests = report["unit_tests"]
    site = Path(report["venv"]["site_packages"])
    assert Path(tests["imported_from"]).is_relative_to(site), tests["imported_from"]
    assert tests["ok"], tests["output"]
    assert " passed" in tests["summary"] and "failed" not in tests["summary"], tests["summary"]


def test_a_student_s_local_jupyter_runs_the_chapters():
    """`make test` runs its share of the Italian chapters (`make local-check`: every chapter
    in three languages; tests/site/test_colab.py checks that the Colab run took the others)
    in a kernel of the fresh environment, as "Run all" in JupyterLab would, with a clock that
    lies: no error, no claim that differs from the text, and each sentence box says what to
    install (ipywidgets is not there) instead of stopping the notebook."""
    import json

    path = local.WORK / "report.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make local` (make test does) or `make local-check`")
    report = json.loads(path.read_text(encoding="utf-8"))
    chapters = sorted(p.stem for p in (ROOT / "book" / "en").glob("*.ipynb"))
    assert report["chapters"], "no language ran"
    assert report.get("lying_clock") is True
    for lang, results in report["chapters"].items():
        assert results, f"{lang}: no chapter ran"
        assert set(results) <= set(chapters), sorted(set(results) - set(chapters))
        for chapter, result in results.items():
            assert result["ok"], f"{lang}/{chapter}: {result['error']}"
            assert result["claims_differ"] == [], (lang, chapter, result["claims_differ"])
            assert result["install_notes"] >= result["sentence_boxes"], (lang, chapter)
