"""Device choice and reproducibility."""

from __future__ import annotations

import os
import random

import torch

from ._checks import check_positive_int

__all__ = ["STATIC_ENV", "device", "seed_everything", "static_build"]

# Set to 1 by the book build (make book): the outputs become a static page, no kernel follows.
STATIC_ENV = "TRANSFORMER_COURSE_STATIC"


def static_build() -> bool:
    """Whether this run is the book build, whose outputs become a static page: no live
    progress bar, no text box waiting for a kernel, and a false claim fails the build."""
    return os.environ.get(STATIC_ENV, "") not in ("", "0")


def device() -> torch.device:
    """The best available device: CUDA (a Colab GPU), else Apple's MPS, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy (when installed) and PyTorch on every device, and set
    ``PYTHONHASHSEED`` (to ``seed % 2**32``) for the Python processes started afterwards.

    Returns:
        A ``torch.Generator`` seeded with ``seed``, for code that wants its own stream.
    """
    seed = check_positive_int("seed", seed, allow_zero=True)
    if seed >= 2**64:
        raise ValueError(f"seed must be < 2**64 (PyTorch's generators hold 64 bits), got {seed}")
    random.seed(seed)
    # Only the Python processes started from here on read it (this one's hashes are fixed
    # at start-up), and they refuse to start unless it is below 2**32.
    os.environ["PYTHONHASHSEED"] = str(seed % 2**32)
    try:
        import numpy as np
    except ImportError:  # numpy is optional for the package itself
        pass
    else:
        np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds CUDA and MPS
    return torch.Generator().manual_seed(seed)
