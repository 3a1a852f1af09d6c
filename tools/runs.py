"""What the notebook runners share (tools/colab_sim.py, tools/local_jupyter.py): the lying
clock of the kernels, running a notebook to its first error, and the claims a run found to
differ from the text."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLOCK = ROOT / "tools" / "colab" / "lying_clock.py"

# The same arithmetic on every x86-64 machine, for the runs that check the chapters' claims
# (the book build, tools/run_notebook.py, the Colab and local runs). The chapters state the
# numbers their runs print, and training magnifies the last bit of every sum: left to pick
# the widest vector instructions of the CPU, PyTorch and MKL made chapter 8's training stop
# after 500 steps at 99.4% on a machine with AVX-512, where another stopped after 450 steps
# at 99.6%. Pinned, the kernels are the same code everywhere: PyTorch's AVX2 kernels (every
# x86-64 server of the last decade has AVX2), MKL's AVX2 matrix products and oneDNN's AVX2
# kernels. MKL's AVX2 branch, not its COMPATIBLE one: on an AMD EPYC (Zen 5) the COMPATIBLE
# branch changed chapters 7, 8 and 10's trainings (chapter 8 ended at 99.4%, where it had
# ended at 100.0% on the machine that chose COMPATIBLE), while the AVX2 products (MKL's
# default there, as MKL_CBWR=AVX2 falls back to it on a processor that is not Intel's) gave,
# to the last printed digit, what the AVX2 machines of earlier runs gave. One torch thread
# per kernel (the runners' default) keeps the order of the sums too.
ARITHMETIC = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2",
              "ONEDNN_MAX_CPU_ISA": "AVX2"}


def lying_clock(ipython_dir: Path, *, on: bool) -> None:
    """Install (or remove) the lying clock as an IPython start-up file of the kernels that
    use ``ipython_dir`` (their ``IPYTHONDIR``)."""
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    clock = startup / "01-lying-clock.py"
    if on:
        shutil.copy2(CLOCK, clock)
    else:
        clock.unlink(missing_ok=True)


def seed_clock(lang: str, chapter: str) -> None:
    """A seed of the lying clock per chapter, inherited by the kernel started next."""
    os.environ["TC_LYING_CLOCK_SEED"] = str(int(hashlib.sha256(
        f"{lang}/{chapter}".encode()).hexdigest()[:8], 16))


def claims_that_differ(nb: dict) -> list[str]:
    """The "this run differs from the text" notes that hidden checks displayed."""
    notes = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            markup = output.get("data", {}).get("text/html", "")
            markup = "".join(markup) if isinstance(markup, list) else markup
            if "tc-claim-differs" in markup:
                text = output["data"].get("text/plain", "")
                notes.append("".join(text) if isinstance(text, list) else text)
    return notes


def execute(client: Any, nb: dict) -> tuple[float, str | None]:
    """Run ``nb`` with an nbclient ``client``; returns the seconds it took and the first
    error (None when every cell ran), the way a student's "Run all" stops."""
    from nbclient.exceptions import CellExecutionError

    start = time.perf_counter()
    error = None
    try:
        client.execute()
    except CellExecutionError as failure:
        error = str(failure)[-3000:]
    except Exception as failure:  # a dead kernel, a timeout: report it, go on
        error = f"{type(failure).__name__}: {failure}"[-3000:]
    seconds = time.perf_counter() - start
    if error is None:  # an exception inside a display formatter does not stop the kernel
        for index, cell in enumerate(nb["cells"]):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and error is None:
                    error = (f"cell {index} shows {output.get('ename')}: "
                             f"{output.get('evalue')}")
    return seconds, error
