"""The packed product kernel (symnb/backends/render/contract.h) against NumPy's BLAS, per shape
class of the products a convolution makes: does the hand-written kernel earn its place?

    python -m benchmarks.contract_vs_blas [--rounds 30]

For each convolution layer of the course workloads (W8b's two 3x3 layers, LeNet's two 5x5
layers) and each of its three products (forward, filter gradient, input gradient), three
timings of the same result, interleaved call by call in one process (medians and minimums):

- ``symnb packed``: backend "c"'s function of that one op planned as the product kernel
  reading the windows in place (strided views, no copy);
- ``symnb gemm``: the same function planned as im2col's copy (a copy kernel) and a BLAS gemm
  (the input gradient: the output gradient on a grid, one gemm, a sum of shifted reads);
- ``symnb``: the function as the planner chooses (``cpu.packed_product``'s rule: the column
  ``rule`` says which form it picked, ``best`` which of the two forced forms was faster by
  their minimums, the least disturbed by other processes, ``packed / gemm`` their ratio);
- ``numpy blas``: ``np.matmul`` of operands already laid out as the BLAS wants them (the im2col
  matrix made beforehand, untimed): the best a BLAS call can do, the copy left out;
- ``numpy im2col+blas``: the copy into that layout, then ``np.matmul``: what a library that
  calls a BLAS for a convolution pays.

Results go in docs/benchmarks.md ("The packed product against BLAS").
"""

from __future__ import annotations

import argparse
import contextlib
import time

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import symnb as sn
from symnb.backends.schedule import cpu
from symnb.ops.conv import Conv2dGradFilters, Conv2dGradInput

#: (label, batch, channels, size, filters, kernel)
LAYERS = [
    ("W8b conv1", 64, 1, 28, 32, 3),
    ("W8b conv2", 64, 32, 26, 64, 3),
    ("LeNet conv1", 64, 1, 28, 20, 5),
    ("LeNet conv2", 64, 20, 12, 50, 5),
]


def _windows(x, k):
    """(N, C, oh, ow, k, k) windows of x, as a (C*k*k, N*oh*ow) matrix (a copy)."""
    n, c = x.shape[:2]
    w = sliding_window_view(x, (k, k), axis=(2, 3))
    return np.ascontiguousarray(w.transpose(1, 4, 5, 0, 2, 3)).reshape(c * k * k, -1)


@contextlib.contextmanager
def forced(form):
    """Plan every convolution product as ``form`` ("packed", "gemm"; None: the rule)."""
    rule = cpu.packed_product
    if form is not None:
        cpu.packed_product = lambda *sizes: form == "packed"
    try:
        yield
    finally:
        cpu.packed_product = rule


def functions(xs, ws, gs, form) -> list:
    """The forward, filter gradient and input gradient functions, planned as ``form``: each
    one op (the gradients built from their ops, so that no forward is computed with them)."""
    y = sn.conv2d(xs, ws)
    params = y.owner.op.params()
    with forced(form):
        return [
            sn.function([xs, ws], y, backend="c"),
            sn.function([xs, gs, ws], Conv2dGradFilters(*params)(xs, gs, ws), backend="c"),
            sn.function([xs, gs, ws], Conv2dGradInput(*params)(ws, gs, xs), backend="c"),
        ]


def chose_packed(f) -> bool:
    """Whether f's plan has a packed product kernel (else its product is a gemm)."""
    return any("packed" in k.reason for k in f.kernels)


def cases(batch, channels, size, filters, k, rng):
    """(name, symnb functions (packed, gemm, chosen), their args, BLAS operands, im2col+BLAS
    callable) per product."""
    out = size - k + 1
    x = rng.standard_normal((batch, channels, size, size)).astype("float32")
    w = rng.standard_normal((filters, channels, k, k)).astype("float32")
    g = rng.standard_normal((batch, filters, out, out)).astype("float32")
    xs = sn.tensor("x", x.shape, "float32")
    ws = sn.tensor("w", w.shape, "float32")
    gs = sn.tensor("g", g.shape, "float32")
    planned = zip(*(functions(xs, ws, gs, form) for form in ("packed", "gemm", None)))
    forward, dw, dx = planned

    cols = _windows(x, k)
    w2 = w.reshape(filters, -1)
    g2 = np.ascontiguousarray(g.transpose(0, 2, 3, 1)).reshape(-1, filters)
    gpad = np.pad(g, ((0, 0), (0, 0), (k - 1, k - 1), (k - 1, k - 1)))
    gcols = _windows(gpad, k)
    wflip = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)).reshape(channels, -1)

    return [
        ("forward", forward, (x, w), (w2, cols), lambda: w2 @ _windows(x, k)),
        ("filter gradient", dw, (x, g, w), (cols, g2), lambda: _windows(x, k) @ g2),
        ("input gradient", dx, (x, g, w), (wflip, gcols), lambda: wflip @ _windows(gpad, k)),
    ]


def timed(calls: list, rounds: int) -> list[np.ndarray]:
    """Each call's times over ``rounds``, the calls interleaved, each round starting one call
    later (a call right after NumPy's threaded BLAS pays for its spinning threads: rotating
    spreads that over every column)."""
    for call in calls:
        call()
    times = [[] for _ in calls]
    for r in range(rounds):
        for j in range(len(calls)):
            i = (r + j) % len(calls)
            start = time.perf_counter()
            calls[i]()
            times[i].append(time.perf_counter() - start)
    return [np.array(t) for t in times]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(
        "| layer | product | M x K x N | symnb packed | symnb gemm | symnb | rule | best | "
        "packed / gemm (min) | numpy blas | im2col+blas | symnb / im2col+blas |"
    )
    print("|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for label, *shape in LAYERS:
        for name, fs, f_args, (a, b), with_copy in cases(*shape, rng):
            want = np.ravel(_as_result(with_copy(), name, shape))
            for f in fs:
                got = np.ravel(f(*f_args))
                assert np.allclose(got, want, rtol=1e-3, atol=1e-2), (label, name)
            calls = [lambda f=f, f_args=f_args: f(*f_args) for f in fs]
            ts = timed([*calls, lambda a=a, b=b: a @ b, with_copy], args.rounds)
            med = [np.median(t) * 1e3 for t in ts]
            rule = "packed" if chose_packed(fs[2]) else "gemm"
            low = [t.min() for t in ts]
            best = "packed" if low[0] <= low[1] else "gemm"
            mk = f"{a.shape[0]} x {a.shape[1]} x {b.shape[1]}"
            cells = " | ".join(f"{m:.3f} ms" for m in med[:3])
            print(
                f"| {label} | {name} | {mk} | {cells} | {rule} | {best} | {low[0] / low[1]:.2f} | "
                f"{med[3]:.3f} ms | "
                f"{med[4]:.3f} ms | {med[2] / med[4]:.2f} |",
                flush=True,
            )


def _as_result(product, name, shape):
    """The NumPy product laid out as symnb's result (NCHW, OIHW)."""
    batch, channels, size, filters, k = shape
    out = size - k + 1
    if name == "forward":
        return product.reshape(filters, batch, out, out).transpose(1, 0, 2, 3)
    if name == "filter gradient":
        return product.reshape(channels, k, k, filters).transpose(3, 0, 1, 2)
    return product.reshape(channels, batch, size, size).transpose(1, 0, 2, 3)


if __name__ == "__main__":
    main()
