"""Kernels that cannot collide: IPC transport, one private socket path per kernel.

The three languages of the book and the Colab simulation start notebook kernels at the same
moment. With jupyter_client's default TCP transport each client picks "free" ports by
binding and releasing them, and the kernel binds them later: two kernels started together
can pick the same port, and one dies (``zmq.error.ZMQError: Address already in use``,
``Kernel died before replying to kernel_info``). With IPC transport the kernel's sockets are
files: this module gives every kernel manager its own file prefix in the temporary folder
(jupyter_client's default, ``kernel-ipc`` in the working folder, would be shared by every
kernel of a build), so no two kernels can ever meet. The kernel reads the transport and the
paths from its connection file; ipykernel supports IPC on Linux and macOS.

``use_private_ipc_kernels()`` patches ``jupyter_client.KernelManager`` in this process (the
process that starts kernels: Sphinx with myst-nb, nbclient); it is idempotent.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid


def use_private_ipc_kernels() -> bool:
    """Make every kernel manager created from now on use IPC with its own socket path.

    Returns False (and changes nothing) on Windows, which has no IPC transport.
    """
    if sys.platform.startswith("win"):
        return False
    from jupyter_client.manager import KernelManager

    if getattr(KernelManager.__init__, "_tc_private_ipc", False):
        return True
    original = KernelManager.__init__

    def __init__(self, *args, **kwargs):  # noqa: N807
        if kwargs.setdefault("transport", "ipc") == "ipc":
            prefix = f"tc-kernel-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            kwargs.setdefault("ip", os.path.join(tempfile.gettempdir(), prefix))
        original(self, *args, **kwargs)

    __init__._tc_private_ipc = True  # type: ignore[attr-defined]
    KernelManager.__init__ = __init__
    return True
