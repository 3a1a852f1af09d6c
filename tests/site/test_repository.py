"""The repository keeps its promises: three parallel books, pinned toolchain, lower-bounded
package, the README's two commands, no registry host names."""

import io
import itertools
import json
import re
import subprocess
import tokenize
import warnings
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "fr", "it")


def book_files(lang):
    folder = ROOT / "book" / lang
    return {p.relative_to(folder) for p in folder.rglob("*")
            if p.suffix in (".md", ".ipynb") and "_build" not in p.parts}


def code_shape(source):
    """Tokens of a code cell without comments, blank lines and string contents."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    kept = []
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENDMARKER}
    fstring = [getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
               if hasattr(tokenize, n)]
    for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
        if tok.type in skip:
            continue
        if tok.type == tokenize.STRING or tok.type in fstring:
            if not kept or kept[-1] != "S":
                kept.append("S")
            continue
        kept.append(tok.string)
    return kept


def test_the_three_books_have_the_same_files():
    files = {lang: book_files(lang) for lang in LANGS}
    assert files["en"], "book/en is empty"
    assert files["en"] == files["fr"] == files["it"], files


def test_every_page_is_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    listed = {"index"} | set(re.findall(r"file:\s*([\w/.-]+)", toc))
    for path in book_files("en"):
        assert str(path.with_suffix("")) in listed, f"{path} is not in _toc.yml"


def test_notebooks_share_code_cells_and_store_no_outputs():
    for name in sorted(str(p) for p in book_files("en") if p.suffix == ".ipynb"):
        check_parallel_notebook(name)


def check_parallel_notebook(name):
    shapes = {}
    for lang in LANGS:
        nb = json.loads((ROOT / "book" / lang / name).read_text(encoding="utf-8"))
        cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        for i, cell in enumerate(cells):
            assert not cell.get("outputs"), f"{lang}/{name} cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"{lang}/{name} cell {i} was executed"
        shapes[lang] = [code_shape("".join(c["source"])) for c in cells]
    assert len(shapes["en"]) == len(shapes["fr"]) == len(shapes["it"])
    for i, (en, fr, it) in enumerate(zip(shapes["en"], shapes["fr"], shapes["it"], strict=True)):
        assert en == fr == it, f"{name}: code cell {i + 1} differs between languages"


@pytest.mark.parametrize("lang", LANGS)
def test_code_cells_compile_without_a_warning(lang):
    # "\\," in a plain string (a thin space in a quiz's LaTeX): Python 3.12, Colab's, prints
    # "SyntaxWarning: invalid escape sequence" above the cell's output
    for name in sorted(str(p) for p in book_files(lang) if p.suffix == ".ipynb"):
        nb = json.loads((ROOT / "book" / lang / name).read_text(encoding="utf-8"))
        for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
            lines = ["" if line.lstrip().startswith(("%", "!")) else line
                     for line in "".join(cell["source"]).splitlines()]
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    compile("\n".join(lines), f"{lang}/{name} code cell {i + 1}", "exec")
                except (SyntaxError, DeprecationWarning) as error:
                    pytest.fail(f"{lang}/{name} code cell {i + 1}: {error}")


def test_code_shape_ignores_comments_and_strings_only():
    assert code_shape("x = f('a')  # hello") == code_shape("x = f('b')  # bonjour")
    assert code_shape("x = f('a')") != code_shape("x = g('a')")


def test_requirements_are_pinned_and_the_package_only_bounded():
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.+]+", line), f"not pinned: {line}"
    assert "torch==2.13.0" in (ROOT / "requirements.txt").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.10"
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs += extra
    for spec in specs:
        assert "==" not in spec and ">=" in spec, f"{spec}: give lower bounds only"


def test_readme_gives_the_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make book" in readme and "make test" in readme
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^book:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_no_package_registry_host_is_committed():
    hosts = ["pypi" + ".org", "pythonhosted" + ".org", "registry." + "npmjs", "npmjs" + ".com",
             "yarnpkg" + ".com"]
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    for name in tracked:
        path = ROOT / name
        if path.is_file() and path.stat().st_size < 5_000_000:
            text = path.read_text(encoding="utf-8", errors="ignore")
            for host in hosts:
                assert host not in text, f"{name} names {host}"


def test_chapters_have_exercises_with_checkers_and_hidden_solutions():
    for path in sorted((ROOT / "book" / "en").glob("0*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = [c for c in cells if c["cell_type"] == "code"]
        checked = set()
        for i, cell in enumerate(code):
            source = "".join(cell["source"])
            hidden = "hide-input" in cell.get("metadata", {}).get("tags", [])
            for name in re.findall(r"tc\.check\.(\w+)\(", source):
                if not hidden and "NotImplementedError" in source:
                    following = code[i + 1] if i + 1 < len(code) else {}
                    assert "hide-input" in following.get("metadata", {}).get("tags", []), (
                        f"{path.name}: exercise {name} has no hidden solution after it")
                    assert f"tc.check.{name}(" in "".join(following["source"])
                    checked.add(name)
        assert len(checked) >= 3, f"{path.name}: only {len(checked)} checked exercises"


def test_every_chapter_has_transfer_exercises_with_their_own_checkers():
    """Each chapter NN has at least two exercises checked by check/chNN.py: exercises that
    apply an idea somewhere new, with a hidden solution that the build runs."""
    from transformer_course import check

    for path in sorted((ROOT / "book" / "en").glob("[0-9][0-9]_*.ipynb")):
        module = getattr(check, f"ch{path.name[:2]}")
        cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                 if c["cell_type"] == "code"]
        solved = set()
        for cell, following in itertools.pairwise(cells):
            source, after = "".join(cell["source"]), "".join(following["source"])
            hidden = "hide-input" in following.get("metadata", {}).get("tags", [])
            for name in re.findall(r"tc\.check\.(\w+)\(", source):
                if (name in module.__all__ and "NotImplementedError" in source and hidden
                        and f"tc.check.{name}(" in after):
                    solved.add(name)
        assert len(solved) >= 2, f"{path.name}: transfer exercises checked by {module.__name__}: "\
                                 f"{sorted(solved)}"
