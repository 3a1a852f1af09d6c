"""A clock that lies, for the Colab simulation's kernels (an IPython start-up file).

``time.perf_counter``, ``time.monotonic`` and ``time.time`` (and their ``_ns`` variants)
become a seeded random walk: each call moves the clock forward by a random step that has
nothing to do with the time that passed. A chapter whose hidden checks compare timings
then fails at random; the course's chapters must not. The walk only moves forward, so that
the kernel's own event loop and timeouts keep working. The seed comes from
``TC_LYING_CLOCK_SEED`` (an integer; the simulation sets it per chapter).
"""

import os
import random
import time as _time

_random = random.Random(int(os.environ.get("TC_LYING_CLOCK_SEED", "0")))
_state = {"perf": 1000.0, "mono": 5000.0, "wall": _time.time()}


def _walker(key):
    def now():
        # Mostly tiny steps, now and then a jump of up to a few seconds: ratios of
        # durations measured with this clock mean nothing.
        step = _random.expovariate(1e4) if _random.random() < 0.9 else _random.uniform(0, 3)
        _state[key] += step
        return _state[key]
    return now


_time.perf_counter = _walker("perf")
_time.monotonic = _walker("mono")
_time.time = _walker("wall")
_time.perf_counter_ns = lambda: int(_time.perf_counter() * 1e9)
_time.monotonic_ns = lambda: int(_time.monotonic() * 1e9)
_time.time_ns = lambda: int(_time.time() * 1e9)
