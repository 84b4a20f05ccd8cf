"""``python -m symnb.gpucheck [cuda] [opencl] [--small] [--budget SECONDS]``: the check to run
on a machine with a GPU, in under four minutes.

For each device backend named ("cuda" when none is), six cases run: a fused elementwise map,
reductions, a matrix product with resident weights, an MLP training step with updates, a
convolution + pooling training step, and a scan (an RNN and its gradients). Each is compared
with backend "py" (NumPy), timed against backend "c" on the same machine, and its transfers
per call are counted (uploads, downloads and allocations of the device runtime during one
call after the first). Every line is printed as soon as it is known. A backend that cannot
start here prints ``SKIP`` with the reason; the exit status is 0 then, and when every case
agreed; 1 when one differed or failed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

import symnb as sn

BUDGET_S = 220  # the whole check, compiling included
BACKENDS = ("cuda", "opencl")


@dataclass
class Sizes:
    n: int  # fused map: elements
    rows: int  # reductions: (rows, cols)
    cols: int
    matmul: int  # (batch, k) @ (k, k)
    mlp: tuple  # batch, then the widths
    conv: tuple  # batch, channels, size, filters, classes
    rnn: tuple  # steps, batch, inputs, hidden


FULL = Sizes(
    1 << 22, 2048, 2048, 1024, (256, 784, 512, 256, 10), (32, 3, 32, 16, 10), (32, 32, 64, 128)
)
SMALL = Sizes(5000, 33, 70, 48, (8, 20, 16, 12, 4), (2, 3, 8, 4, 3), (5, 3, 4, 6))


@dataclass
class Built:
    """One case compiled for one backend: ``run()`` returns the values to compare (it may
    train: call it once), ``call()`` is one timed call, ``function`` the compiled function."""

    run: object
    call: object
    function: object


def fused_map(backend: str, s: Sizes) -> Built:
    rng = np.random.default_rng(0)
    vals = [rng.uniform(-3, 3, s.n).astype("float32") for _ in range(3)]
    x, y, z = (sn.vector(k, dtype="float32") for k in "xyz")
    out = sn.exp(-x * x) * sn.sin(y) + sn.log1p(sn.abs(z)) / (1 + x * x)
    f = sn.function([x, y, z], out, backend=backend)
    return Built(lambda: [f(*vals)], lambda: f(*vals), f)


def reductions(backend: str, s: Sizes) -> Built:
    xv = np.random.default_rng(1).standard_normal((s.rows, s.cols)).astype("float32")
    x = sn.matrix("x", dtype="float32")
    outs = [sn.sum(x), sn.max(x, axis=0), sn.mean(x * x, axis=1), sn.softmax(x, axis=1)]
    f = sn.function([x], outs, backend=backend)
    return Built(lambda: f(xv), lambda: f(xv), f)


def matmul(backend: str, s: Sizes) -> Built:
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((s.matmul, s.matmul)).astype("float32")
    W = sn.shared(rng.standard_normal((s.matmul, s.matmul)).astype("float32"), name="W")
    x = sn.matrix("x", dtype="float32")
    f = sn.function([x], sn.relu(x @ W), backend=backend)
    return Built(lambda: [f(xv)], lambda: f(xv), f)


def _train(f, args, params) -> Built:
    def run():
        losses = [f(*args), f(*args)]  # two steps: the second reads the first's updates
        return [*np.ravel(losses), *(p.get_value() for p in params)]

    return Built(run, lambda: f(*args), f)


def mlp_step(backend: str, s: Sizes) -> Built:
    batch, *widths = s.mlp
    rng = np.random.default_rng(3)
    xv = rng.random((batch, widths[0])).astype("float32")
    labels = rng.integers(0, widths[-1], batch)
    params = []
    for a, b in zip(widths, widths[1:]):
        w = rng.normal(scale=np.sqrt(2 / a), size=(a, b)).astype("float32")
        params += [sn.shared(w), sn.shared(np.zeros(b, "float32"))]
    x = sn.matrix("x", dtype="float32")
    y = sn.vector("y", dtype="int64")
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        h = sn.relu(h) if i + 2 < len(params) else h
    loss = sn.mean(sn.crossentropy(sn.softmax(h, axis=-1), y))
    grads = sn.grad(loss, params)
    f = sn.function(
        [x, y], loss, backend=backend, updates={p: p - 0.05 * g for p, g in zip(params, grads)}
    )
    return _train(f, (xv, labels), params)


def conv_pool_step(backend: str, s: Sizes) -> Built:
    batch, channels, size, filters, classes = s.conv
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((batch, channels, size, size)).astype("float32")
    labels = rng.integers(0, classes, batch)
    w = sn.shared((0.3 * rng.standard_normal((filters, channels, 3, 3))).astype("float32"))
    features = filters * (size // 2) ** 2
    V = sn.shared((rng.standard_normal((features, classes)) / features**0.5).astype("float32"))
    x = sn.tensor("x", shape=(batch, channels, size, size), dtype="float32")
    y = sn.vector("y", dtype="int64")
    pooled = sn.max_pool2d(sn.relu(sn.conv2d(x, w, padding=1)), (2, 2))
    logits = sn.reshape(pooled, (batch, features)) @ V
    loss = sn.mean(sn.crossentropy(sn.softmax(logits, axis=-1), y))
    gw, gV = sn.grad(loss, [w, V])
    f = sn.function([x, y], loss, backend=backend, updates={w: w - 0.05 * gw, V: V - 0.05 * gV})
    return _train(f, (xv, labels), [w, V])


def scan_rnn(backend: str, s: Sizes) -> Built:
    steps, batch, inputs, hidden = s.rnn
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((steps, batch, inputs)).astype("float32")
    W = sn.shared((rng.standard_normal((inputs, hidden)) / inputs**0.5).astype("float32"))
    U = sn.shared((rng.standard_normal((hidden, hidden)) / hidden**0.5).astype("float32"))
    x = sn.tensor("x", shape=(steps, batch, inputs), dtype="float32")
    h0 = sn.zeros((batch, hidden), dtype="float32")
    hs, _ = sn.scan(lambda xt, h: sn.tanh(xt @ W + h @ U), sequences=x, outputs_info=h0)
    loss = sn.mean(hs[-1] ** 2)
    gW, gU = sn.grad(loss, [W, U])
    f = sn.function([x], [loss, gW, gU], backend=backend)
    return Built(lambda: f(xv), lambda: f(xv), f)


CASES = {
    "fused map": fused_map,
    "reductions": reductions,
    "matmul": matmul,
    "MLP step": mlp_step,
    "conv+pool step": conv_pool_step,
    "scan": scan_rnn,
}


def compare(got: list, want: list) -> tuple[bool, float]:
    """(whether every value agrees with the reference at float32's tolerance, the largest
    difference relative to the reference's scale)."""
    worst = 0.0
    ok = len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g, "float64"), np.asarray(w, "float64")
        if g.shape != w.shape:
            return False, float("inf")
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        error = float(np.max(np.abs(g - w), initial=0.0)) / scale
        worst = max(worst, error if np.isfinite(error) else float("inf"))
        ok = ok and bool(np.allclose(g, w, rtol=2e-3, atol=2e-3 * scale, equal_nan=True))
    return ok, worst


@contextlib.contextmanager
def counting(runtime):
    """Counts of the runtime's uploads, downloads and other allocations (and their bytes)
    while the block runs: its methods are wrapped on the instance, then restored. A copy into
    a pooled buffer (``write``) counts as an upload, a queued read (``read``) as a download,
    and ``alloc`` is a buffer the pool had to ask the driver for."""
    counts: Counter = Counter()
    kinds = {
        "upload": "upload",
        "write": "upload",
        "download": "download",
        "read": "download",
        "alloc": "alloc",
    }
    inside = []  # an upload that allocates through ``alloc`` counts once, as an upload
    for name, kind in kinds.items():
        original = getattr(runtime, name)

        def counted(*args, _original=original, _kind=kind):
            if not inside:
                counts[_kind] += 1
                size = args[-1].nbytes if isinstance(args[-1], np.ndarray) else args[-1]
                counts[_kind + " bytes"] += int(size)
            inside.append(_kind)
            try:
                return _original(*args)
            finally:
                inside.pop()

        setattr(runtime, name, counted)
    try:
        yield counts
    finally:
        for name in kinds:
            vars(runtime).pop(name, None)


def timed(call, sync, seconds: float = 1.0, most: int = 20) -> float:
    """The median seconds of ``call()`` (after ``sync()``), repeated for about ``seconds``."""
    times = []
    stop = time.perf_counter() + seconds
    while len(times) < most and (len(times) < 3 or time.perf_counter() < stop):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def problem(backend: str) -> str | None:
    """Why ``backend`` cannot run kernels here, or None."""
    x = sn.vector("x", dtype="float32")
    try:
        sn.function([x], x + 1, backend=backend)(np.ones(2, "float32"))
    except Exception as exc:  # no driver, no device, a package missing: all a SKIP
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    return None


def describe(linker) -> str:
    """The device, and for CUDA the versions and whether cuBLAS runs the products."""
    runtime = linker.runtime
    parts = [linker.device]
    for label, attribute in (("driver CUDA", "driver_version"), ("NVRTC", "nvrtc_version")):
        version = getattr(runtime, attribute, None)
        if version:
            parts.append(f"{label} {'.'.join(map(str, version))}")
    if getattr(runtime, "arch", None):
        parts.append(runtime.arch)
    parts.append(f"products: {runtime.product_library() or 'the tiled kernel'}")
    return ", ".join(parts)


def check_case(name: str, backend: str, sizes: Sizes, out) -> bool:
    make = CASES[name]
    start = time.perf_counter()
    want = make("py", sizes).run()
    built = make(backend, sizes)
    got = built.run()
    ok, error = compare(got, want)
    runtime = built.function.linker.runtime
    sync = runtime.synchronize
    with counting(runtime) as counts:
        built.call()
        sync()
    ours = timed(built.call, sync)
    host = make("c", sizes)
    host.call()
    theirs = timed(host.call, lambda: None)
    kib = {k: counts[k + " bytes"] / 1024 for k in ("upload", "download")}
    out(
        f"  {name:15s} {'ok' if ok else 'DIFFERS'} (largest difference {error:.1e} of the "
        f"scale) | {backend} {ours * 1e3:8.2f} ms, c {theirs * 1e3:8.2f} ms "
        f"(c time / {backend} time {theirs / ours:5.2f}) | a call: {counts['upload']} uploads "
        f"({kib['upload']:.0f} KiB), {counts['download']} downloads "
        f"({kib['download']:.0f} KiB), {counts['alloc']} other allocations "
        f"[{time.perf_counter() - start:.1f} s]"
    )
    return ok


def run_check(backends, sizes: Sizes = FULL, budget: float = BUDGET_S, out=None) -> int:
    """Print each backend's rows with ``out`` (flushed print by default); the exit status."""
    out = out or (lambda line: print(line, flush=True))
    start = time.monotonic()
    status = 0
    for backend in backends:
        why = problem(backend)
        if why is not None:
            out(f"SKIP {backend}: no device to run on here ({why})")
            continue
        out(f"{backend}: {describe(sn.function([], sn.constant(1.0), backend=backend).linker)}")
        for name in CASES:
            if time.monotonic() - start > budget:
                out(f"  {name:15s} not run: the {budget:.0f} s budget is spent")
                continue
            try:
                status |= not check_case(name, backend, sizes, out)
            except Exception as exc:  # one case failing must not hide the others
                status = 1
                message = " ".join(str(exc).split())[:400]
                out(f"  {name:15s} FAILED: {type(exc).__name__}: {message}")
    out(f"gpucheck: done in {time.monotonic() - start:.0f} s")
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symnb.gpucheck", description=__doc__)
    parser.add_argument("backends", nargs="*", help="cuda, opencl or both (default: cuda)")
    parser.add_argument("--small", action="store_true", help="small sizes (a CPU device)")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds in all")
    args = parser.parse_args(argv)
    unknown = [b for b in args.backends if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backend {unknown[0]!r}: the device backends are cuda, opencl")
    return run_check(args.backends or ["cuda"], SMALL if args.small else FULL, args.budget)


if __name__ == "__main__":
    sys.exit(main())
