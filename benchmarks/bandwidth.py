"""The memory-bandwidth floor of W1b, measured in the same run as the peers.

Preferred: ``stream.c`` compiled with the system C compiler and OpenMP, run with one and two
threads; its floor is the faster of normal stores and (x86) non-temporal stores, which symnb's
kernels use for large outputs, so the floor is what the hardware allows, not what one store
instruction allows. Without a C compiler, a NumPy estimate: ``np.add(x, y, out=o)``
(single-threaded, three streams) timed and scaled to W1b's five streams.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("stream.c")
FLAGS = ["-O3", "-march=native", "-fopenmp"]
W1B_STREAMS = 5  # 4 inputs read, 1 output written


def measure(n: int, threads=(1, 2), reps: int = 11) -> list[dict]:
    """One floor per thread count: ``{"label", "seconds", "method"}``."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler:
        try:
            return _measure_c(compiler, n, threads, reps)
        except (OSError, subprocess.SubprocessError) as exc:
            note = f"C floor failed ({exc}); NumPy estimate instead"
            return [_measure_numpy(n, reps) | {"note": note}]
    return [_measure_numpy(n, reps)]


def _measure_c(compiler: str, n: int, threads, reps: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "stream")
        subprocess.run(
            [compiler, *FLAGS, str(SOURCE), "-o", binary],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return [_run_c(binary, n, count, reps) for count in threads]


def _run_c(binary: str, n: int, threads: int, reps: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    done = subprocess.run(
        [binary, str(n), str(reps)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    label = f"floor, {threads} thread" + ("s" if threads > 1 else "")
    floor, _, normal, streaming = (float(v) for v in done.stdout.split())
    method = (
        f"stream.c ({' '.join(FLAGS)}): read 4 x {n} doubles, write 1; the faster of normal"
        f" stores ({normal * 1e3:.2f} ms) and streaming stores ({streaming * 1e3:.2f} ms)"
    )
    return {"label": label, "seconds": floor, "method": method}


def _measure_numpy(n: int, reps: int) -> dict:
    x, y, out = np.ones(n), np.ones(n), np.zeros(n)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        np.add(x, y, out=out)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times) * W1B_STREAMS / 3
    method = "NumPy np.add(x, y, out=o), 3 streams scaled to 5 (no C compiler found)"
    return {"label": "floor, 1 thread (NumPy estimate)", "seconds": seconds, "method": method}
