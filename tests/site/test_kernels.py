"""Kernels started at the same moment never collide (the three languages of the book and the
Colab simulation start theirs together): IPC transport, one private socket path each."""

import asyncio
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sphinxext"))
from coursebook_kernels import use_private_ipc_kernels

pytestmark = pytest.mark.skipif(sys.platform.startswith("win"), reason="no IPC on Windows")


def test_each_kernel_manager_gets_its_own_ipc_path():
    from jupyter_client.manager import AsyncKernelManager, KernelManager

    assert use_private_ipc_kernels() and use_private_ipc_kernels()  # idempotent
    managers = [KernelManager(), AsyncKernelManager(), KernelManager()]
    assert {m.transport for m in managers} == {"ipc"}
    assert len({m.ip for m in managers}) == 3
    assert all(Path(m.ip).is_absolute() for m in managers)
    assert KernelManager(transport="tcp").transport == "tcp"  # an explicit choice stays


def test_eight_kernels_started_at_once_all_answer():
    from nbclient import NotebookClient

    use_private_ipc_kernels()

    async def run(i):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"print({i} * {i})")])
        await NotebookClient(nb, kernel_name="python3", timeout=120).async_execute()
        # the text may come in several stream messages on a busy machine
        return "".join(o["text"] for o in nb.cells[0].outputs
                       if o["output_type"] == "stream").strip()

    async def all_at_once():
        return await asyncio.gather(*(run(i) for i in range(8)))

    assert asyncio.run(all_at_once()) == [str(i * i) for i in range(8)]


def test_the_lying_clock_breaks_a_claim_on_timings(tmp_path, monkeypatch):
    """The Colab simulation's lying clock (tools/colab/lying_clock.py) has teeth: a hidden
    check that compares timings of the same work does not hold under it, while a check that
    counts still does. (With a real clock the timing check holds on a quiet machine and may
    fail on a busy one: the very reason no hidden check may compare timings.) 200 runs: one
    in ten of the clock's steps is a jump, and other threads' calls (the kernel's event loop)
    take steps too, so that with 40 runs no jump fell on a timing once in about 70."""
    import shutil

    from nbclient import NotebookClient

    use_private_ipc_kernels()
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    root = Path(__file__).resolve().parents[2]
    shutil.copy2(root / "tools" / "colab" / "lying_clock.py", startup / "01-lying-clock.py")
    code = (
        "import time, transformer_course as tc\n"
        "def timed():\n"
        "    start = time.perf_counter(); sum(i * i for i in range(20_000))\n"
        "    return time.perf_counter() - start\n"
        "times = [timed() for _ in range(200)]\n"
        "same = max(times) < 8 * sorted(times)[len(times) // 2]\n"
        "tc.claim('the same work takes about the same time', same)\n"
        "tc.claim('200 runs were timed', len(times) == 200)\n")

    def notes(env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
        NotebookClient(nb, kernel_name="python3", timeout=120,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        return [o["data"]["text/plain"] for o in nb.cells[0].outputs
                if "tc-claim-differs" in o.get("data", {}).get("text/html", "")]

    monkeypatch.delenv("TRANSFORMER_COURSE_STATIC", raising=False)
    lied = notes({"IPYTHONDIR": str(tmp_path / "ipython"), "TC_LYING_CLOCK_SEED": "7"})
    assert len(lied) == 1 and "the same work takes about the same time" in lied[0], lied
