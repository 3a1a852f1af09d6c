#!/usr/bin/env python3
"""The package as a student installs it, and the chapters in a local Jupyter kernel.

The Colab simulation (tools/colab_sim.py) runs the chapters with Colab's packages, where
ipywidgets is preinstalled. This is the other runtime of the course: a student's own
machine, with a fresh virtual environment and only what the README tells them to install.

1. ``python -m build`` builds the sdist, then the wheel from the sdist, from the checkout
   (what is committed plus what is not ignored); any warning fails the run. ``twine check
   --strict`` checks both for the package index.
2. A fresh virtual environment (``_build/local/venv``): ``torch==2.13.0`` first (the CPU
   wheel this machine has), then the wheel with its ``course`` and ``test`` extras plus
   ``jupyterlab`` (which brings ipykernel, and no ipywidgets), as the README says.
   ``pip check`` must be clean, and ipywidgets must be absent. ``--base-only`` makes the
   part that needs no wheel (torch, then what the wheel and its extras ask for, as
   pyproject.toml lists it, and JupyterLab) and stops: ``make test`` runs it while the
   toolchain installs, and step 2 then adds the wheel to that environment.
3. The package's own unit tests, as the sdist ships them, run from an unpacked copy of the
   sdist by the environment's Python: they import the installed wheel, never the source
   tree (a test checks where ``transformer_course`` was imported from).
4. With languages (``en fr it``), every chapter of each runs top to bottom in a kernel of
   that environment, from an empty working folder, as "Run all" in JupyterLab would: no
   error, and the explorers' text boxes (``widgets.sentence_box``) say what to install
   instead of stopping the notebook. The kernels run with the clock that lies
   (tools/colab/lying_clock.py; ``--true-clock`` turns it off), so that no hidden check may
   depend on timings: a chapter that shows a "this run differs from the text" note fails.

It writes ``_build/local/report.json`` (times, warnings, packages, test and chapter
results) and the executed chapters under ``_build/local/executed/<lang>/``.

Usage: python tools/local_jupyter.py [LANG ...] [--chapters NAME ...] [--skip-unit-tests]
                                    [--reuse] [--threads N]
       python3 tools/local_jupyter.py --base-only   (the environment without the wheel)
``make test`` runs steps 1 to 3 (``tests/site/test_wheel.py``) and step 4 for its share of the
Italian chapters (the Makefile's TEST_LOCAL_CHAPTERS); ``make local-check`` runs all four for
the three languages. ``--reuse`` keeps an environment made from a wheel with the
same files (and unchanged since) instead of making it again: ``python tools/local_jupyter.py
en --reuse --skip-unit-tests`` after ``make test`` runs the English chapters only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import tomllib

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/runs.py, when imported
import runs

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "_build" / "local"
VENV = WORK / "venv"
DIST = WORK / "dist"
LANGS = ("en", "fr", "it")
TORCH = "torch==2.13.0"  # as pinned in requirements.txt: the CPU wheel this machine has
EXTRAS = "course,test"
KERNEL = "transformer-course-local"
# The environment a student's kernel gets: no book build, no hub access.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
# What the book build (or `make test`) sets and a student's machine does not.
BUILD_ONLY = ("TRANSFORMER_COURSE_STATIC", "TRANSFORMER_COURSE_JS", "TC_PACKAGE_TESTS")
# Lines of this machine's pip configuration (find-links folders that do not exist), not of
# the package: they would appear whatever was built.
PIP_NOISE = re.compile(r"^WARNING: Location '[^']*' is ignored: it is neither a file nor a "
                       r"directory\.$")


def log(message: str) -> None:
    print(f"[local] {message}", flush=True)


def run(*command: str | Path, cwd: Path | None = None, env: dict | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    """Run a command, capturing its output; raise with the output's tail if it fails."""
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                            cwd=cwd, env=env)
    if check and result.returncode:
        output = result.stdout + result.stderr
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{output[-6000:]}")
    return result


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in BUILD_ONLY and k != "VIRTUAL_ENV"}
    env.update(OFFLINE)
    env.update(extra)
    return env


def python() -> Path:
    return VENV / "bin" / "python"


def warnings_in(output: str) -> list[str]:
    """The warning lines of a build's output (setuptools' and build's own)."""
    lines = [line.strip() for line in output.splitlines()]
    return [line for line in lines if re.search(r"warn", line, re.I)
            and not PIP_NOISE.match(line)]


def snapshot() -> Path:
    """The checkout as a fresh clone would have it: committed and not-ignored files only
    (no egg-info or build folder left over by an editable install)."""
    source = WORK / "source"
    shutil.rmtree(source, ignore_errors=True)
    names = run("git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z"
                ).stdout.split("\0")
    for name in filter(None, names):
        path = ROOT / name
        if path.is_file():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    return source


def digest_of(folder: Path) -> str:
    """The files of a folder, names and contents (not their timestamps)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:24]


def build() -> dict:
    """``python -m build``: the sdist, then the wheel built from it.

    A build of the very same files (``make local`` just made it, and ``tests/site/test_wheel.py``
    asks again) is kept with its record: the same sources make the same sdist and wheel."""
    start = time.perf_counter()
    source = snapshot()
    record = DIST / "build.json"
    files = digest_of(source)
    if record.exists():
        made = json.loads(record.read_text(encoding="utf-8"))
        if (made.get("source") == files and (DIST / made["sdist"]).exists()
                and (DIST / made["wheel"]).exists()):
            return {**made, "seconds": round(time.perf_counter() - start, 1), "reused": True}
    shutil.rmtree(DIST, ignore_errors=True)
    # PYTHONDONTWRITEBYTECODE (set on some machines) makes setuptools warn that it skips
    # byte-compiling: a setting of the machine, not of the package, so it is unset here.
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    result = run(sys.executable, "-m", "build", "--outdir", DIST, source, cwd=source, env=env)
    output = result.stdout + result.stderr
    sdist = next(DIST.glob("*.tar.gz"))
    wheel = next(DIST.glob("*.whl"))
    twine = run(sys.executable, "-m", "twine", "check", "--strict", sdist, wheel, check=False)
    made = {"seconds": round(time.perf_counter() - start, 1), "sdist": sdist.name,
            "wheel": wheel.name, "warnings": warnings_in(output),
            "twine_ok": twine.returncode == 0, "twine": (twine.stdout + twine.stderr).strip(),
            "source": files, "reused": False}
    record.write_text(json.dumps(made, indent=1), encoding="utf-8")
    return made


def installed() -> dict[str, str]:
    rows = json.loads(run(python(), "-m", "pip", "list", "--format=json",
                          env=clean_env()).stdout)
    return {re.sub(r"[-_.]+", "-", r["name"]).lower(): r["version"] for r in rows}


def fingerprint(wheel: Path) -> str:
    """What the environment is made of: the wheel's files (not its timestamps), the pins
    and this Python. Equal fingerprints: an environment made earlier is the same one."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            digest.update(name.encode() + b"\0" + archive.read(name))
    digest.update(f"{TORCH} {EXTRAS} jupyterlab {sys.version}".encode())
    return digest.hexdigest()[:24]


def reusable(wheel: Path) -> dict | None:
    """The record of an environment made from this very wheel and left as it was made."""
    record = VENV / "record.json"
    if not record.exists() or not python().exists():
        return None
    made = json.loads(record.read_text(encoding="utf-8"))
    if made.get("fingerprint") != fingerprint(wheel):
        return None
    try:
        if installed() != made["packages"]:
            return None
    except RuntimeError:
        return None
    return {**made, "seconds": 0.0, "reused": True}


# --no-compile: the bytecode of what a kernel imports is written at its first import;
# compiling every file at install time took 147 s against 80 s here, for no other change
def pip_install(*requirements: str) -> None:
    run(python(), "-m", "pip", "install", "--quiet", "--no-compile", *requirements,
        env=clean_env())


def requirements() -> list[str]:
    """What the wheel asks for with its extras: pyproject.toml's dependencies and those of
    ``EXTRAS``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in EXTRAS.split(","):
        wanted += project["optional-dependencies"][extra]
    return sorted(set(wanted))


def base_key() -> str:
    """What a base environment is made of: torch as pinned, what the wheel asks for,
    JupyterLab, this Python."""
    return f"{TORCH} {' '.join(requirements())} jupyterlab {sys.version}"


def create_base() -> float:
    """The first half of step 2, which needs no wheel: a fresh environment with torch, then
    what the wheel will ask for and JupyterLab. ``make test`` makes it while the toolchain
    installs (the standard library is enough), and :func:`create_venv` adds the wheel to it;
    return its seconds."""
    start = time.perf_counter()
    shutil.rmtree(VENV, ignore_errors=True)
    run(sys.executable, "-m", "venv", VENV)
    pip_install(TORCH)
    pip_install(*requirements(), "jupyterlab")
    seconds = round(time.perf_counter() - start, 1)
    (VENV / "base.json").write_text(json.dumps({"key": base_key(), "seconds": seconds}),
                                    encoding="utf-8")
    return seconds


def fresh_base() -> float | None:
    """The seconds of a base environment that no wheel was installed into yet, if there is
    one made with this torch and this Python."""
    base = VENV / "base.json"
    if not base.exists() or (VENV / "record.json").exists() or not python().exists():
        return None
    made = json.loads(base.read_text(encoding="utf-8"))
    return made["seconds"] if made.get("key") == base_key() else None


def create_venv(wheel: Path, *, reuse: bool = False) -> dict:
    """A fresh environment: torch first, then the wheel with its extras and JupyterLab.

    With ``reuse``, an environment made from a wheel with the same files (and still holding
    the same packages) is kept: it is the one this wheel would make. A base made by
    :func:`create_base` and not used yet is completed instead of made again."""
    if reuse and (made := reusable(wheel)) is not None:
        log(f"reusing {VENV.relative_to(ROOT)}: made from the same wheel, unchanged since")
        return made
    start = time.perf_counter()
    if (base := fresh_base()) is not None:
        log(f"adding the wheel to {VENV.relative_to(ROOT)} (torch, its requirements and "
            f"JupyterLab: made in {base:.0f} s beside the toolchain)")
    else:
        base = 0.0
        log(f"creating a fresh environment in {VENV.relative_to(ROOT)}")
        shutil.rmtree(VENV, ignore_errors=True)
        run(sys.executable, "-m", "venv", VENV)
        pip_install(TORCH)
    pip_install(f"transformer-course[{EXTRAS}] @ {wheel.resolve().as_uri()}", "jupyterlab")
    check = run(python(), "-m", "pip", "check", env=clean_env(), check=False)
    packages = installed()
    site = run(python(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
               ).stdout.strip()
    made = {"seconds": round(base + time.perf_counter() - start, 1), "site_packages": site,
            "pip_check_ok": check.returncode == 0, "reused": False,
            "pip_check": (check.stdout + check.stderr).strip(), "packages": packages,
            "fingerprint": fingerprint(wheel)}
    (VENV / "record.json").write_text(json.dumps(made, indent=1), encoding="utf-8")
    return made


def prepare(*, reuse: bool = False) -> dict:
    """Steps 1 and 2: the build and its checks, and the environment (``report`` keys
    ``build`` and ``venv``)."""
    WORK.mkdir(parents=True, exist_ok=True)
    report: dict = {"python": sys.version.split()[0], "torch": TORCH.split("==")[1]}
    report["build"] = build()
    made = report["build"]
    how = ("kept: built from the same files before" if made["reused"]
           else f"built in {made['seconds']:.0f} s")
    log(f"{made['sdist']} and {made['wheel']} {how}, {len(made['warnings'])} warning(s)")
    report["venv"] = create_venv(DIST / report["build"]["wheel"], reuse=reuse)
    if not report["venv"]["reused"]:
        log(f"environment ready in {report['venv']['seconds']:.0f} s, pip check "
            f"{'clean' if report['venv']['pip_check_ok'] else 'NOT clean'}")
    return report


def unit_tests(report: dict) -> dict:
    """The sdist's own tests, run by the environment's Python against the installed wheel."""
    sdist, site = DIST / report["build"]["sdist"], report["venv"]["site_packages"]
    start = time.perf_counter()
    unpacked = WORK / "sdist"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpacked.mkdir(parents=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (root,) = unpacked.iterdir()
    # one torch thread: they run beside the browser tests (tests/conftest.py)
    env = clean_env(TRANSFORMER_COURSE_EXPECT_INSTALLED=site, MPLBACKEND="Agg",
                    TC_TEST_THREADS="1", IPYTHONDIR=str(WORK / "ipython"),
                    JUPYTER_PLATFORM_DIRS="1")
    where = run(python(), "-c", "import transformer_course as tc; print(tc.__file__)",
                cwd=root, env=env).stdout.strip()
    result = run(python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests",
                 cwd=root, env=env, check=False)
    output = result.stdout + result.stderr
    summary = next((line for line in reversed(output.splitlines()) if " in " in line
                    and ("passed" in line or "failed" in line or "error" in line)), "")
    return {"seconds": round(time.perf_counter() - start, 1), "ok": result.returncode == 0,
            "imported_from": where, "summary": summary.strip("= "),
            "output": output[-6000:] if result.returncode else ""}


# --- the chapters, in a kernel of the environment -------------------------------------------

def kernel_environment(threads: int | None = None, *, lying_clock: bool = True
                       ) -> dict[str, str]:
    """A kernel spec that starts the environment's Python (and nothing of the toolchain);
    ``threads`` caps torch's threads (as the book build does beside other jobs)."""
    spec = WORK / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    # the claims are checked: the book's arithmetic (runs.ARITHMETIC), not the CPU's
    env = {**OFFLINE, **runs.ARITHMETIC, "IPYTHONDIR": str(WORK / "ipython")}
    runs.lying_clock(WORK / "ipython", on=lying_clock)
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python()), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (a student's environment)",
        "language": "python",
        "env": env,
    }, indent=1))
    return {"JUPYTER_PATH": str(WORK / "jupyter")}


def outputs_text(nb: dict, mime: str) -> list[str]:
    texts = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            value = output.get("data", {}).get(mime)
            if value is not None:
                texts.append("".join(value) if isinstance(value, list) else value)
    return texts


def execute(lang: str, chapter: str) -> dict:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "book" / lang / f"{chapter}.ipynb", as_version=4)
    cwd = WORK / "content" / lang / chapter  # a student's own, empty folder
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    runs.seed_clock(lang, chapter)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=1800,
                            resources={"metadata": {"path": str(cwd)}})
    seconds, error = runs.execute(client, nb)
    out = WORK / "executed" / lang / f"{chapter}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    html = outputs_text(nb, "text/html")
    boxes = sum(c["source"].count("sentence_box(") for c in nb["cells"]
                if c["cell_type"] == "code")
    notes = sum("transformer-course[jupyter]" in h for h in html)
    if error is None and notes < boxes:  # without ipywidgets each box says what to install
        error = f"{boxes} sentence_box cell(s) but {notes} note(s) naming the jupyter extra"
    return {"seconds": round(seconds, 1), "ok": error is None, "error": error,
            "explorers": sum("tc-explorer" in h for h in html), "sentence_boxes": boxes,
            "install_notes": notes, "claims_differ": runs.claims_that_differ(nb)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("langs", nargs="*", help="run the chapters of these languages too")
    parser.add_argument("--chapters", nargs="*", help="notebook names (default: all)")
    parser.add_argument("--skip-unit-tests", action="store_true",
                        help="do not run the sdist's unit tests in the environment")
    parser.add_argument("--reuse", action="store_true",
                        help="keep an environment made from a wheel with the same files")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads of the chapters' kernels (default: torch's own; "
                             "1 beside other jobs, as the book build does)")
    parser.add_argument("--true-clock", action="store_true",
                        help="leave the kernels' clock alone (default: a clock that lies)")
    parser.add_argument("--base-only", action="store_true",
                        help="make the environment's torch, the wheel's requirements and "
                             "JupyterLab, and stop (the standard library is enough)")
    args = parser.parse_args(argv)
    if args.base_only:  # nothing of .venv is imported before this point
        log(f"torch, the wheel's requirements and JupyterLab installed in {create_base():.0f} s")
        return 0
    sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
    from coursebook_kernels import use_private_ipc_kernels

    use_private_ipc_kernels()  # beside the book build: no kernel port collisions
    if unknown := [lang for lang in args.langs if lang not in LANGS]:
        parser.error(f"unknown language(s) {unknown}")
    chapters = args.chapters or sorted(p.stem for p in (ROOT / "book" / "en").glob("*.ipynb"))
    WORK.mkdir(parents=True, exist_ok=True)
    report_path = WORK / "report.json"
    report_path.unlink(missing_ok=True)
    for stale in ("executed", "content"):
        shutil.rmtree(WORK / stale, ignore_errors=True)

    report = prepare(reuse=args.reuse)
    if not args.skip_unit_tests:
        report["unit_tests"] = unit_tests(report)
        log(f"unit tests of the sdist against the wheel: {report['unit_tests']['summary']} "
            f"({report['unit_tests']['seconds']:.0f} s)")
    report["chapters"] = {}
    if args.langs:
        os.environ.update(kernel_environment(args.threads, lying_clock=not args.true_clock))
        report["lying_clock"] = not args.true_clock
        for lang in args.langs:
            report["chapters"][lang] = {}
            for chapter in chapters:
                result = execute(lang, chapter)
                report["chapters"][lang][chapter] = result
                log(f"{lang}/{chapter}: {'ok' if result['ok'] else 'FAILED'} in "
                    f"{result['seconds']:.0f} s")
    report_path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")

    problems = []
    if report["build"]["warnings"]:
        problems.append("python -m build warned:\n  " + "\n  ".join(report["build"]["warnings"]))
    if not report["build"]["twine_ok"]:
        problems.append(f"twine check failed:\n{report['build']['twine']}")
    if not report["venv"]["pip_check_ok"]:
        problems.append(f"pip check is not clean:\n{report['venv']['pip_check']}")
    if "ipywidgets" in report["venv"]["packages"]:
        problems.append("ipywidgets came with the install: a student's environment lacks it")
    if "unit_tests" in report and not report["unit_tests"]["ok"]:
        problems.append(f"unit tests failed:\n{report['unit_tests']['output']}")
    for lang, results in report["chapters"].items():
        for chapter, result in results.items():
            if not result["ok"]:
                problems.append(f"{lang}/{chapter} failed:\n{result['error']}")
            if result["claims_differ"]:
                problems.append(f"{lang}/{chapter}: claims differ from the text:\n"
                                + "\n".join(result["claims_differ"]))
    for problem in problems:
        log(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
