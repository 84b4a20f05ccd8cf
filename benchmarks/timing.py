"""Timing one prepared workload: warm-up, calibration of calls per sample, samples.

Every call's results stay alive until the next call has returned, as in a user's loop
(``out = f(x)``): a library cannot reuse the buffers of results the caller still holds.
"""

from __future__ import annotations

import gc
import math
import time

WARMUP_S = 0.2  # at least this long (and two calls) of warm-up after the checked call


class Kept:
    """The last call's results, held across samples (and released with the workload)."""

    def __init__(self):
        self.results = None


def warm_up(run, kept: Kept) -> float:
    """Call ``run`` until warm (one call more after the checked one is enough for a call slower
    than ``WARMUP_S``); returns the last observed seconds per call."""
    calls, start, per_call = 0, time.perf_counter(), 0.0
    while calls < 1 or time.perf_counter() - start < WARMUP_S:
        per_call = batch_seconds(run, 1, kept)
        calls += 1
    return per_call


def calls_per_sample(per_call: float, target_s: float) -> int:
    """How many calls make one sample last about ``target_s``."""
    return max(1, math.ceil(target_s / max(per_call, 1e-9)))


def batch_seconds(run, calls: int, kept: Kept) -> float:
    """Seconds per call over ``calls`` back-to-back calls, with the garbage collector off;
    each call's results replace the previous ones in ``kept`` only once it has returned."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(calls):
            kept.results = run()
        return (time.perf_counter() - start) / calls
    finally:
        if enabled:
            gc.enable()
