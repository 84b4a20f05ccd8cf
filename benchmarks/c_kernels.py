"""Timings of backend "c" on the issue-7 workloads, as ratios to NumPy (and numexpr).

``python -m benchmarks.c_kernels [--quick] [--cpu]``. Each symnb result is checked against NumPy
before it is timed; times are medians. The full suite with every peer is ``python -m
benchmarks``; this file is the C backend's own quick check.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import symnb as sn

try:
    import numexpr
except ImportError:  # optional peer
    numexpr = None


#: wall-clock by default; ``--cpu`` times CPU seconds of all this process's threads instead,
#: which is steadier on a machine others are loading (a 2-thread kernel counts twice)
CLOCK = {"clock": time.perf_counter}


def median_time(fn, *args, reps: int = 7, inner: int = 1) -> float:
    clock = CLOCK["clock"]
    fn(*args)
    times = []
    for _ in range(reps):
        start = clock()
        for _ in range(inner):
            fn(*args)
        times.append((clock() - start) / inner)
    return statistics.median(times)


def report(name: str, symnb_s: float, peers: dict[str, float]) -> None:
    ratios = ", ".join(f"{peer} {t * 1e3:.3f} ms ({symnb_s / t:.2f}x)" for peer, t in peers.items())
    print(f"{name:<34} symnb {symnb_s * 1e3:9.3f} ms | {ratios}")


def w1_numpy(x, y, z):
    return np.exp(-x * x) * np.sin(y) + np.log1p(np.abs(z)) / (1 + x * x)


def w1(n: int, dtype: str) -> None:
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    xs, ys, zs = (sn.vector(name, dtype=dtype) for name in "xyz")
    out = sn.exp(-xs * xs) * sn.sin(ys) + sn.log1p(abs(zs)) / (1 + xs * xs)
    f = sn.function([xs, ys, zs], out)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-14}
    np.testing.assert_allclose(f(x, y, z), w1_numpy(x, y, z), **tol)
    peers = {"numpy": median_time(w1_numpy, x, y, z)}
    if numexpr is not None:
        expr = "exp(-x*x)*sin(y) + log1p(abs(z))/(1 + x*x)"
        peers["numexpr"] = median_time(numexpr.evaluate, expr, {"x": x, "y": y, "z": z})
    report(f"W1 {dtype} n={n:.0e}", median_time(f, x, y, z), peers)


def w1b(n: int) -> None:
    from benchmarks import bandwidth

    rng = np.random.default_rng(0)
    x, y, z, w = (rng.standard_normal(n) for _ in range(4))
    xs, ys, zs, ws = (sn.vector(name) for name in "xyzw")
    f = sn.function([xs, ys, zs, ws], 2 * xs + 3 * ys - zs * ws)
    want = 2 * x + 3 * y - z * w
    np.testing.assert_allclose(f(x, y, z, w), want, rtol=1e-12)
    peers = {"numpy": median_time(lambda: 2 * x + 3 * y - z * w)}
    if numexpr is not None:
        env = {"x": x, "y": y, "z": z, "w": w}
        peers["numexpr"] = median_time(numexpr.evaluate, "2*x + 3*y - z*w", env)
    for floor in bandwidth.measure(n, reps=5):
        peers[floor["label"]] = floor["seconds"]
    report(f"W1b float64 n={n:.0e}", median_time(f, x, y, z, w), peers)


def w4() -> None:
    a, b = sn.scalar("a"), sn.scalar("b")
    f = sn.function([a, b], a * b + 1)
    av, bv = np.float64(1.5), np.array(2.0)
    assert f(av, bv) == 4.0
    fn = f.__call__
    t = median_time(fn, av, bv, reps=7, inner=20000)
    tn = median_time(lambda: av * bv + 1, reps=7, inner=20000)
    print(f"{'W4 a*b + 1 on 0-d (per call)':<34} symnb {t * 1e6:9.3f} us | numpy {tn * 1e6:.3f} us")


def w6(n: int) -> None:
    import scipy.special

    x = np.random.default_rng(0).standard_normal((n, n))
    xs = sn.matrix("x")
    f = sn.function([xs], sn.logsumexp(xs, axis=1))
    np.testing.assert_allclose(f(x), scipy.special.logsumexp(x, axis=1), rtol=1e-12)

    def numpy_lse(x):
        m = x.max(axis=1, keepdims=True)
        return np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]

    report(f"W6 logsumexp {n}x{n} float64", median_time(f, x), {"numpy": median_time(numpy_lse, x)})
    print("   steps:", "; ".join(k.line() for k in f.kernels))


def w7() -> None:
    x = np.random.default_rng(0).standard_normal(64)
    xs = sn.vector("x")
    for label, step, ref in (
        ("tanh", lambda v: sn.tanh(v * 0.9 + 0.1), lambda v: np.tanh(v * 0.9 + 0.1)),
        ("cheap", lambda v: abs(v * 0.9 - 0.1), lambda v: np.abs(v * 0.9 - 0.1)),
    ):
        out, want = xs, x
        for _ in range(50):
            out, want = step(out), ref(want)
        f = sn.function([xs], out)
        np.testing.assert_allclose(f(x), want, rtol=1e-12)
        tn = median_time(_chain, ref, x, reps=7, inner=200)
        t = median_time(f, x, reps=7, inner=2000)
        kernels = sum(k.kind == "kernel" for k in f.kernels)
        print(
            f"{'W7 50x ' + label + ' on (64,)':<34} symnb {t * 1e6:9.3f} us "
            f"({kernels} kernel(s), {len(f.kernels)} steps) | numpy {tn * 1e6:.1f} us "
            f"({t / tn:.2f}x)"
        )


def _chain(ref, x):
    for _ in range(50):
        x = ref(x)
    return x


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    if "--cpu" in argv:
        CLOCK["clock"] = time.process_time
    n = 10**6 if quick else 10**7
    w1(n, "float64")
    w1(n, "float32")
    w1b(n)
    w4()
    w6(1024 if quick else 4096)
    w7()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
