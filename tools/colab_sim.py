#!/usr/bin/env python3
"""Colab as it really is, on this machine: every chapter run from its first cell.

What it does, as a student who presses "Open in Colab" would see it:

1. A virtual environment with Colab's packages (``tools/colab/runtime.txt``: ipywidgets 7.7.1,
   ipykernel 6.17.1, IPython 7.34.0, transformers 5.15.0, ...). Python and torch stay at this
   machine's 3.11 and the pinned CPU torch 2.13.0 (Colab: 3.13 and 2.11.0+cu128).
2. ``google.colab`` importable, and imported by the kernel before the first cell (an IPython
   startup file), so that each chapter's first cell takes its Colab branch.
3. The repository snapshot as a local git repository (what is committed plus what is not
   ignored): the first cell's ``REPOSITORY = "..."`` line, and nothing else, points at it.
4. Each chapter executed top to bottom in a fresh kernel, from an empty working folder.
   The first chapter of a run starts from Colab's packages alone, and its own first cell
   installs the package (``pip install "transformer-course[course] @ git+..."``). The
   package then stays installed, with what it brought along (bertviz, the pretrained
   model), and the next chapters' first cells find it: every chapter's first cell is the
   same code (tests/site/test_site.py checks it), so one install stands for all. Installing
   it again for each chapter (its first cell took 6 s on a quiet 2-core machine, up to
   12 s beside the book build of `make test`) cost a quarter of the run.
5. Afterwards, no package that Colab ships may have changed version: the widget and kernel
   stack above all (ipywidgets, widgetsnbextension, ipykernel, IPython, traitlets, ...).
6. A clock that lies (``tools/colab/lying_clock.py``, an IPython start-up file of the
   kernel; ``--true-clock`` turns it off): ``time.perf_counter``, ``time.monotonic`` and
   ``time.time`` are a seeded random walk, so a hidden check that compared timings would
   fail. No hidden check may depend on the clock: each chapter must show no "this run
   differs from the text" note (``claims_differ`` in the report, checked by the tests).

It writes ``_build/colab/report.json`` (install and chapter times, what changed), the executed
notebooks under ``_build/colab/executed/<lang>/`` and every explorer output as a standalone
page under ``_build/colab/explorers/`` (tests/site/test_colab.py opens them in Chromium).

Usage: python tools/colab_sim.py [LANG ...] [--chapters NAME ...]   (default: every language)
       python3 tools/colab_sim.py --runtime-only   (the runtime alone: the standard library will do)
``make test`` runs its share of the English chapters (the Makefile's TEST_COLAB_CHAPTERS);
``make colab-check`` runs every chapter in three languages.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/runs.py, when imported
import runs

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "_build" / "colab"
VENV = WORK / "venv"
RUNTIME = ROOT / "tools" / "colab" / "runtime.txt"
STUB = ROOT / "tools" / "colab" / "google_colab.py"
LANGS = ("en", "fr", "it")
# Installed next to runtime.txt: torch as pinned in requirements.txt, pip as Colab has it,
# setuptools at the lowest release torch 2.13 accepts (Colab: 75.2.0), wheel as Colab.
BASE = ("pip==24.1.2", "setuptools==77.0.3", "wheel==0.48.0")
TORCH = "torch==2.13.0"
# The stack Colab's front end depends on: any change here fails the run.
WIDGET_AND_KERNEL = ("ipywidgets", "widgetsnbextension", "jupyterlab-widgets", "ipykernel",
                     "ipython", "traitlets", "jupyter-client", "jupyter-core", "pyzmq",
                     "tornado", "comm", "matplotlib-inline")


def log(message: str) -> None:
    print(f"[colab] {message}", flush=True)


def run(*command: str | Path, env: dict | None = None, quiet: bool = True) -> str:
    result = subprocess.run([str(c) for c in command], capture_output=quiet, text=True,
                            env=env)
    if result.returncode:
        output = (result.stdout or "") + (result.stderr or "")
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{output[-4000:]}")
    return result.stdout or ""


def python() -> Path:
    return VENV / "bin" / "python"


def installed() -> dict[str, str]:
    """``{normalised name: version}`` of every package in the simulated runtime."""
    rows = json.loads(run(python(), "-m", "pip", "list", "--format=json",
                          "--disable-pip-version-check"))
    return {re.sub(r"[-_.]+", "-", r["name"]).lower(): r["version"] for r in rows}


def package_present() -> bool:
    """Whether the course package is installed in the simulated runtime (its metadata)."""
    return any(VENV.glob("lib/python*/site-packages/transformer_course-*.dist-info"))


def fingerprint() -> str:
    text = RUNTIME.read_text() + "\n".join((*BASE, TORCH)) + STUB.read_text() + sys.version
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def create_runtime() -> float:
    """A new virtual environment with Colab's packages; returns the seconds it took."""
    start = time.perf_counter()
    if VENV.exists():
        shutil.rmtree(VENV)
    log(f"creating Colab's runtime in {VENV.relative_to(ROOT)}")
    run(sys.executable, "-m", "venv", VENV)
    run(python(), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", BASE[0])
    # (--no-compile: the modules a kernel imports compile then, not every file now)
    run(python(), "-m", "pip", "install", "--quiet", "--no-compile", "--no-deps", *BASE[1:],
        TORCH, "-r", RUNTIME)
    site = Path(run(python(), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
                    ).strip())
    # google is a namespace package (protobuf lives in it too): no google/__init__.py.
    (site / "google" / "colab").mkdir(parents=True, exist_ok=True)
    shutil.copy2(STUB, site / "google" / "colab" / "__init__.py")
    baseline = installed()
    (WORK / "baseline.json").write_text(json.dumps(baseline, indent=1, sort_keys=True))
    (VENV / ".fingerprint").write_text(fingerprint())
    return time.perf_counter() - start


def reset_runtime() -> float | None:
    """Back to Colab's packages alone: reuse the environment when only additions must go,
    otherwise create it again. Returns the seconds a creation took, or None."""
    stamp = VENV / ".fingerprint"
    if not stamp.exists() or stamp.read_text() != fingerprint():
        return create_runtime()
    baseline = json.loads((WORK / "baseline.json").read_text())
    now = installed()
    if any(now.get(name) != version for name, version in baseline.items()):
        return create_runtime()
    added = sorted(set(now) - set(baseline))
    if added:
        run(python(), "-m", "pip", "uninstall", "--quiet", "--yes", *added)
    return None


def snapshot() -> Path:
    """The working tree (tracked and not-ignored files) as a local git repository."""
    repo = WORK / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    names = run("git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z").split("\0")
    for name in filter(None, names):
        source = ROOT / name
        if source.is_file():
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git = ("git", "-C", repo, "-c", "user.name=colab-sim", "-c", "user.email=sim@localhost")
    run(*git, "init", "--quiet", "--initial-branch=main")
    run(*git, "add", "--all")
    run(*git, "commit", "--quiet", "--message", "snapshot for the Colab simulation")
    return repo


def kernel_environment(*, lying_clock: bool = True, threads: int | None = None
                       ) -> dict[str, str]:
    """Where the simulated kernel's spec and IPython start-up files live."""
    spec = WORK / "jupyter" / "kernels" / "colab-sim"
    spec.mkdir(parents=True, exist_ok=True)
    startup = WORK / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-google-colab.py").write_text(
        "# Colab's kernel has google.colab loaded before a notebook's first cell runs.\n"
        "import google.colab  # noqa: F401\n")
    runs.lying_clock(WORK / "ipython", on=lying_clock)
    env = {
        "IPYTHONDIR": str(WORK / "ipython"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **runs.ARITHMETIC,  # the claims are checked: the book's arithmetic, not the CPU's
    }
    if threads is not None:  # beside the book build, one thread each (no spinning)
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python()), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Colab simulation)",
        "language": "python",
        "env": env,
    }, indent=1))
    return {"JUPYTER_PATH": str(WORK / "jupyter")}


def point_at(nb: dict, url: str, local: str) -> None:
    """Rewrite the repository URL of the first code cell, and only that."""
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    line = f'REPOSITORY = "{url}"'
    if cell["source"].count(line) != 1:
        raise RuntimeError(f"the first code cell does not hold {line!r}")
    cell["source"] = cell["source"].replace(line, f'REPOSITORY = "{local}"')


def explorer_pages(nb: dict) -> list[str]:
    """Every explorer output of an executed notebook, as a standalone page."""
    pages = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            markup = output.get("data", {}).get("text/html")
            if markup is None:
                continue
            markup = "".join(markup) if isinstance(markup, list) else markup
            if "tc-explorer" in markup:
                pages.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                             f"<title>{html.escape(cell.get('id', 'explorer'))}</title></head>"
                             f"<body>\n{markup}\n</body></html>\n")
    return pages


def execute(lang: str, chapter: str, url: str, local: str) -> dict:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "book" / lang / f"{chapter}.ipynb", as_version=4)
    point_at(nb, url, local)
    present_before = package_present()
    cwd = WORK / "content" / lang / chapter  # Colab starts in an empty /content
    if cwd.exists():
        shutil.rmtree(cwd)
    cwd.mkdir(parents=True)
    runs.seed_clock(lang, chapter)
    times: list[float] = []
    started: list[float] = []
    client = NotebookClient(
        nb, kernel_name="colab-sim", timeout=1800, resources={"metadata": {"path": str(cwd)}},
        on_cell_start=lambda cell, cell_index: started.append(time.perf_counter()),
        on_cell_executed=lambda cell, cell_index, execute_reply: times.append(
            time.perf_counter() - started[-1]),
    )
    seconds, error = runs.execute(client, nb)
    out = WORK / "executed" / lang / f"{chapter}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    explorers = []
    for i, page in enumerate(explorer_pages(nb)):
        path = WORK / "explorers" / f"{lang}-{chapter}-{i}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")
        explorers.append(str(path.relative_to(WORK)))
    return {"seconds": round(seconds, 1), "install_cell_seconds": round(times[0], 1)
            if times else None, "ok": error is None, "error": error,
            "installed_by_first_cell": not present_before and package_present(),
            "package_present_before": present_before, "explorers": explorers,
            "claims_differ": runs.claims_that_differ(nb)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("langs", nargs="*", default=list(LANGS))
    parser.add_argument("--chapters", nargs="*", help="notebook names (default: all)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads of the kernels (default: torch's own)")
    parser.add_argument("--true-clock", action="store_true",
                        help="leave the kernel's clock alone (default: a clock that lies)")
    parser.add_argument("--runtime-only", action="store_true",
                        help="make the runtime and stop (the standard library is enough)")
    args = parser.parse_args(argv)
    if args.runtime_only:  # nothing of .venv is imported before this point
        created = reset_runtime()
        log("Colab's runtime is ready" if created is None
            else f"Colab's runtime installed in {created:.0f} s")
        return 0
    sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
    from coursebook_kernels import use_private_ipc_kernels

    use_private_ipc_kernels()  # runs beside the book build: no kernel port collisions
    if unknown := [lang for lang in args.langs if lang not in LANGS]:
        parser.error(f"unknown language(s) {unknown}")
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    chapters = args.chapters or sorted(p.stem for p in (ROOT / "book" / "en").glob("*.ipynb"))

    WORK.mkdir(parents=True, exist_ok=True)
    for stale in ("executed", "explorers", "content"):
        shutil.rmtree(WORK / stale, ignore_errors=True)
    report_path = WORK / "report.json"
    report_path.unlink(missing_ok=True)
    created = reset_runtime()
    baseline = json.loads((WORK / "baseline.json").read_text())
    local = f"file://{snapshot()}"
    os.environ.update(kernel_environment(lying_clock=not args.true_clock,
                                         threads=args.threads))
    report: dict = {
        "lying_clock": not args.true_clock,
        "python": sys.version.split()[0], "torch": TORCH.split("==")[1],
        "runtime_seconds": None if created is None else round(created, 1),
        "baseline": {name: baseline[name] for name in WIDGET_AND_KERNEL if name in baseline},
        "chapters": {},
    }
    for lang in args.langs:
        report["chapters"][lang] = {}
        for chapter in chapters:
            result = execute(lang, chapter, url, local)
            report["chapters"][lang][chapter] = result
            state = "ok" if result["ok"] else "FAILED"
            if result["claims_differ"]:
                state += f", {len(result['claims_differ'])} claim(s) differ"
            log(f"{lang}/{chapter}: {state} in {result['seconds']:.0f} s "
                f"(first cell {result['install_cell_seconds']} s)")
    now = installed()
    report["changed"] = {name: [version, now.get(name)] for name, version in baseline.items()
                         if now.get(name) != version}
    report["added"] = {name: now[name] for name in sorted(set(now) - set(baseline))}
    report_path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")

    failed = [f"{lang}/{name}" for lang, results in report["chapters"].items()
              for name, result in results.items() if not result["ok"] or result["claims_differ"]]
    if report["runtime_seconds"] is not None:
        log(f"Colab's runtime installed in {report['runtime_seconds']:.0f} s")
    log(f"added by the chapters: {', '.join(f'{k} {v}' for k, v in report['added'].items())}")
    for name in failed:
        lang, chapter = name.split("/")
        result = report["chapters"][lang][chapter]
        log(f"{name} failed:\n{result['error'] or ''}\n" + "\n".join(result["claims_differ"]))
    if report["changed"]:
        log(f"Colab's own packages changed version: {report['changed']}")
    return 1 if failed or report["changed"] else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
