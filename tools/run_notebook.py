#!/usr/bin/env python3
"""Execute chapters the way the book build does, without building the site: quick checks
while writing a chapter.

Each notebook runs top to bottom in a fresh kernel, in its own folder, with the book build's
environment (bertviz's JavaScript served by the site, static outputs, no hub access, the
same arithmetic on every machine: ``runs.ARITHMETIC``). It prints every cell's text output
(``--quiet``: only failures and times) and writes the executed notebook to
``_build/executed/<lang>/<name>.ipynb`` for a closer look.

Kernels run on one torch thread unless ``--threads`` says otherwise, as in the book build.

Usage: python tools/run_notebook.py book/fr/07_encoder.ipynb [more notebooks] [--quiet]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import runs

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "executed"
ENV = {"TRANSFORMER_COURSE_JS": "_static/vendor", "TRANSFORMER_COURSE_STATIC": "1",
       "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
       **runs.ARITHMETIC}


def show(cell: dict, index: int) -> None:
    tags = cell.get("metadata", {}).get("tags", [])
    print(f"--- cell {index} {'[' + ', '.join(tags) + ']' if tags else ''}")
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            print(output["text"], end="")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            if "text/plain" in data:
                print("".join(data["text/plain"]))
            extra = [k for k in data if k != "text/plain"]
            if extra:
                print(f"[{', '.join(extra)}]")
        elif kind == "error":
            print(f"ERROR {output['ename']}: {output['evalue']}")


def run(path: Path, quiet: bool) -> bool:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=1800, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    ok = True
    try:
        client.execute()
    except CellExecutionError as error:
        ok = False
        print(str(error)[-3000:])
    seconds = time.perf_counter() - start
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        ok = ok and not errors
        if not quiet or errors:
            show(cell, index)
    lang = path.parent.name
    target = OUT / lang / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    print(f"{'ok' if ok else 'FAILED'}: {path} in {seconds:.1f} s (executed copy: "
          f"{target.relative_to(ROOT)})")
    return ok


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools" / "sphinxext"))
    from coursebook_kernels import use_private_ipc_kernels

    use_private_ipc_kernels()  # no port collision with a book build running beside it
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of the kernel (default: 1, as the book build)")
    args = parser.parse_args(argv)
    os.environ.update(ENV, OMP_NUM_THREADS=str(args.threads),
                      MKL_NUM_THREADS=str(args.threads))
    results = [run(p.resolve(), args.quiet) for p in args.notebooks]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
