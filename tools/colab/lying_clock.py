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


def _walker(key, rng=_random, state=_state):
    # The walk holds its own references: IPython empties the namespace of this file when
    # the kernel exits, and the clock is still read after that (logging at exit).
    def now():
        # Mostly tiny steps, now and then a jump of up to a few seconds: ratios of
        # durations measured with this clock mean nothing.
        step = rng.expovariate(1e4) if rng.random() < 0.9 else rng.uniform(0, 3)
        state[key] += step
        return state[key]
    return now


def _nanoseconds(clock):
    return lambda: int(clock() * 1e9)


_time.perf_counter = _walker("perf")
_time.monotonic = _walker("mono")
_time.time = _walker("wall")
_time.perf_counter_ns = _nanoseconds(_time.perf_counter)
_time.monotonic_ns = _nanoseconds(_time.monotonic)
_time.time_ns = _nanoseconds(_time.time)
