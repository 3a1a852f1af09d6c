"""The package's metadata, its page on the package index, and what its sdist ships (the
build itself, a fresh environment and the tests against the installed wheel are in
tests/test_wheel.py)."""

import re
from pathlib import Path

import tomllib
import yaml

import transformer_course as tc

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The test modules that need a full checkout (the book, the built site, a browser, the
# repository's files): they stay out of the sdist, whose tests must run without them.
CHECKOUT_ONLY = {
    "test_browser.py", "test_colab.py", "test_explorers_browser.py", "test_glossary.py",
    "test_i18n.py", "test_packaging.py", "test_repository.py", "test_site.py",
    "test_typography.py", "test_wheel.py",
    # the built site, the book's notebooks, tools/ or the browser helpers
    "test_diagrams.py", "test_diagrams_browser.py", "test_diagrams_site.py", "test_kernels.py",
    "test_lean_pages.py", "test_links.py", "test_lm_explorer.py", "test_lm_explorer_site.py",
    "test_page_language.py", "test_quiz.py", "test_quiz_browser.py", "test_streams_build.py",
    "test_style.py", "test_audits_browser.py",
    # the decks, the PDFs and the quizzes' progress, built by tools/ (make book)
    "test_book_pdf.py", "test_decks.py", "test_progress_browser.py", "test_maths_build.py",
}


def index_page() -> str:
    readme = PROJECT["project"]["readme"]
    return (ROOT / readme["file"]).read_text(encoding="utf-8")


def test_licence_build_system_and_version():
    project = PROJECT["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "The Attention & Transformers course" in licence
    assert "setuptools>=77" in PROJECT["build-system"]["requires"]
    assert project["dynamic"] == ["version"] and tc.__version__ == "0.2.0"
    assert PROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "transformer_course.__version__"}
    assert "## 0.2.0" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "py.typed" in PROJECT["tool"]["setuptools"]["package-data"]["transformer_course"]
    assert (ROOT / "src" / "transformer_course" / "py.typed").exists()


def test_urls_classifiers_and_extras():
    project = PROJECT["project"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repository = config["repository"]["url"]
    owner, name = repository.removeprefix("https://github.com/").split("/")
    assert project["urls"] == {
        "Homepage": f"https://{owner}.github.io/{name}/",  # the book, on the repository's Pages
        "Repository": repository,
        "Issues": f"{repository}/issues",
        "Changelog": f"{repository}/blob/main/CHANGELOG.md",
    }
    classifiers = set(project["classifiers"])
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert {"Operating System :: OS Independent", "Typing :: Typed",
            "Topic :: Scientific/Engineering :: Artificial Intelligence",
            "Topic :: Education"} <= classifiers
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    # PEP 639: the licence is the `license` expression; setuptools refuses a licence classifier
    assert not any(c.startswith("License ::") for c in classifiers)
    extras = project["optional-dependencies"]
    assert set(extras) == {"plot", "course", "jupyter", "test"}  # no duplicate `viz`
    assert extras["jupyter"] == ["ipywidgets>=7.7"]  # Colab's 7.7.1 satisfies it
    assert not any("ipywidgets" in spec for spec in extras["course"])


def test_the_index_page_is_for_users_in_three_languages():
    page = index_page()
    assert 'pip install "transformer-course[course]"' in page and "make " not in page
    for lang in ("en", "fr", "it"):
        assert f"https://attention-transformers-course.github.io/attention-transformers/{lang}/" \
            in page
    assert "MIT" in page and "File → Trust Notebook" in page
    assert "'99,9\\xa0%'" in page and "no-break space" in page
    readme = (ROOT / "README.md").read_text(encoding="utf-8")  # the contributors' guide
    assert "make book" in readme and "'99,9\\xa0%'" in readme and "no-break space" in readme


def test_the_ten_line_tour_runs_and_says_true_things(capsys):
    tour = re.search(r"## A ten-line tour\n\n```python\n(.*?)```", index_page(), re.S).group(1)
    lines = [line for line in tour.splitlines() if line.strip()]
    assert len(lines) == 10, lines
    namespace: dict = {}
    exec(compile(tour, "README.package.md", "exec"), namespace)
    assert namespace["weights"].shape == (2, 5, 5)
    assert namespace["per_head"].shape == (2, 4, 5, 5)
    assert namespace["ids"].shape == (1, 23)
    assert isinstance(namespace["layer"], tc.EncoderLayer)
    shown = capsys.readouterr().out
    assert shown.startswith("✓ softmax: matches torch.softmax")
    tc.set_language("en")


def test_every_test_module_is_in_the_sdist_or_needs_the_checkout():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    patterns = [p.removeprefix("tests/") for line in manifest.splitlines()
                if line.startswith("include ") for p in line.split()[1:]
                if p.startswith("tests/")]
    shipped = {p.name for p in (ROOT / "tests").glob("*.py")
               if any(Path(p.name).match(pattern) for pattern in patterns)}
    modules = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert "conftest.py" in shipped and not shipped & CHECKOUT_ONLY
    missing = modules - shipped - CHECKOUT_ONLY
    assert not missing, (f"{sorted(missing)}: add them to MANIFEST.in (package tests) or to "
                         "CHECKOUT_ONLY here (they need the book, the site or the repository)")
    assert not re.search(r"^\s*(exclude|global-exclude)\b", manifest, re.M)


def test_fit_documents_what_it_returns_and_the_mode_it_leaves():
    doc = tc.training.fit.__doc__
    returns = doc[doc.index("Returns:"):]
    assert "History" in returns and "eval mode" in returns and "DataLoader" in doc


def test_the_contributors_tour_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## A short tour of the API"):]
    tour = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    try:
        exec(compile(tour, "README.md", "exec"), {})
    finally:
        tc.set_language("en")
