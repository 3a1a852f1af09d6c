"""Kernels started at the same moment never collide (the three languages of the book and the
Colab simulation start theirs together): IPC transport, one private socket path each."""

import asyncio
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools" / "sphinxext"))
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
        return nb.cells[0].outputs[0]["text"].strip()

    async def all_at_once():
        return await asyncio.gather(*(run(i) for i in range(8)))

    assert asyncio.run(all_at_once()) == [str(i * i) for i in range(8)]
