import os

import pytest
import torch
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile(
    "course", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("course")


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)
    yield


@pytest.fixture
def deterministic():
    """For tests of a training result: one thread and deterministic kernels, so that a seeded
    run repeats exactly on a machine. Other CPUs still round differently: such tests also
    keep a margin."""
    threads = torch.get_num_threads()
    was_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(was_deterministic)
    torch.set_num_threads(threads)


SITE = __import__("pathlib").Path(__file__).resolve().parent.parent / "_build" / "html"


@pytest.fixture(scope="session")
def site():
    """The built book (``make book``; ``make test`` builds it before running the tests)."""
    if not (SITE / "index.html").exists():
        pytest.fail(f"{SITE} is missing: build the book first with `make book`")
    return SITE
