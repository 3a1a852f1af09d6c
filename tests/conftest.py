import os
from pathlib import Path

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

# One torch thread per test process when several run side by side (pytest-xdist workers, or
# the wheel's tests beside the browser tests: TC_TEST_THREADS): tiny operators on a thread
# pool that has fewer cores than threads wait for each other, and a checker's 0.2 s became
# 45 s that way.
if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("TC_TEST_THREADS"):
    torch.set_num_threads(int(os.environ.get("TC_TEST_THREADS") or 1))

TESTS = Path(__file__).resolve().parent
# `make test` sets it: the package's own tests (tests/unit/, those the sdist ships, MANIFEST.in)
# then run once, against the installed wheel, inside tests/site/test_wheel.py, not again on the
# checkout.
WHEEL_ONLY = "TC_PACKAGE_TESTS"


def pytest_ignore_collect(collection_path, config):
    # the files, not the folder: testpaths names tests/unit, and pytest collects a named path
    if os.environ.get(WHEEL_ONLY) == "wheel" and TESTS / "unit" in (collection_path,
                                                                     collection_path.parent):
        return True
    return None


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


@pytest.fixture
def plain_texts(monkeypatch):
    """Explorers with their English message ids whatever the catalogs hold: for tests that
    compare numbers."""
    from transformer_course import i18n, widgets

    monkeypatch.setattr(widgets, "_", lambda message: message)
    monkeypatch.setattr(widgets, "ngettext", lambda one, many, n: one if n == 1 else many)
    yield
    i18n.set_language("en")
