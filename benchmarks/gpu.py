"""``python -m benchmarks.gpu``: the check to run when a machine with a CUDA GPU is lent.

It runs the op suite on backend="cuda" against NumPy (pytest, the ``cuda`` parameter of the
``backend`` fixture), then times on the GPU, against PyTorch on the same GPU:
W1 (the fused elementwise expression on 10^8 float32, with bytes moved over the measured
device bandwidth), W3 (the SGD step of a 784-512-256-10 ReLU MLP at batch 4096) and an
8192x8192 float32 matrix product (through cuBLAS where installed, and through the tiled kernel
of the kernel description). It stays under four minutes (each part has a deadline) and,
on a machine without a GPU, says so and exits 0. ``--quick`` runs ``python -m symnb.gpucheck``
instead (six cases against backend "py" and timed against "c", transfers counted).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

import symnb as sn
from symnb.backends.cuda.runtime import cuda_problem

BUDGET_S = 230  # the whole script
SUITE_S = 110  # the op suite's share
W1_N = 10**8
W3_SIZES = (4096, 784, 512, 256, 10)
MATMUL_N = 8192


def timed(run, repeat: int, sync=None) -> float:
    """The median seconds of ``run()`` after one warm-up call (``sync()`` after each)."""
    run()
    if sync:
        sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        if sync:
            sync()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def op_suite() -> str:
    """The op suite's cuda tests: pytest's summary line."""
    env = dict(
        os.environ, SYMNB_REQUIRE_CUDA="1", SYMNB_SUITE_DEVICES="cuda", PYTHONPATH=os.getcwd()
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "tests/ops",
        "-q",
        "-k",
        "cuda",
        "-p",
        "no:cacheprovider",
    ]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=SUITE_S)
    except subprocess.TimeoutExpired:
        return f"op suite on cuda: stopped after {SUITE_S} s"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith("FAILED")][:10]
    return "\n".join(
        ["op suite on cuda: " + (lines[-1] if lines else done.stderr[-500:]), *failures]
    )


def w1(torch) -> list[str]:
    """The fused expression over shared (device-resident) vectors into a shared output."""
    rng = np.random.default_rng(0)
    host = [rng.uniform(-3, 3, W1_N).astype("float32") for _ in range(3)]
    x, y, z = (sn.shared(v, name=k) for v, k in zip(host, "xyz"))
    out = sn.shared(np.zeros(W1_N, "float32"), name="out")
    expr = sn.exp(-x * x) * sn.sin(y) + sn.log1p(sn.abs(z)) / (1 + x * x)
    f = sn.function([], [], updates={out: expr}, backend="cuda")
    f()
    want = np.exp(-(host[0] ** 2)) * np.sin(host[1]) + np.log1p(np.abs(host[2])) / (
        1 + host[0] ** 2
    )
    ok = np.allclose(out.get_value()[: 10**6], want[: 10**6], rtol=1e-4, atol=1e-5)
    ours = timed(f, 5, f.linker.runtime.synchronize)
    tx, ty, tz = (torch.from_numpy(v).cuda() for v in host)
    theirs = timed(
        lambda: torch.exp(-tx * tx) * torch.sin(ty) + torch.log1p(torch.abs(tz)) / (1 + tx * tx),
        5,
        torch.cuda.synchronize,
    )
    copy_to = torch.empty_like(tx)
    copy = timed(lambda: copy_to.copy_(tx), 5, torch.cuda.synchronize)
    bandwidth = 2 * tx.nbytes / copy
    moved = 4 * tx.nbytes
    return [
        f"W1 (10^8 float32): symnb-cuda {ours * 1e3:.2f} ms, torch {theirs * 1e3:.2f} ms, "
        f"ratio {ours / theirs:.2f}; matches NumPy: {ok}",
        f"W1 bytes moved {moved / 1e9:.2f} GB / device bandwidth {bandwidth / 1e9:.0f} GB/s "
        f"= {moved / bandwidth * 1e3:.2f} ms floor (symnb at {moved / ours / 1e9:.0f} GB/s)",
    ]


def w3(torch) -> list[str]:
    """One SGD step of the ReLU MLP; weights stay on the device between steps."""
    batch, *widths = W3_SIZES
    rng = np.random.default_rng(1)
    xv = rng.random((batch, widths[0])).astype("float32")
    labels = rng.integers(0, widths[-1], batch)
    shapes = list(zip(widths, widths[1:]))
    init = [rng.normal(scale=np.sqrt(2 / a), size=(a, b)).astype("float32") for a, b in shapes]
    params = []
    for i, w in enumerate(init):
        params += [sn.shared(w, name=f"w{i}"), sn.shared(np.zeros(w.shape[1], "float32"))]
    x = sn.tensor("x", shape=(batch, widths[0]), dtype="float32")
    y = sn.tensor("y", shape=(batch,), dtype="int64")
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        h = sn.relu(h) if i + 2 < len(params) else h
    loss = sn.mean(sn.crossentropy(sn.softmax(h, axis=-1), y))
    grads = sn.grad(loss, params)
    step = sn.function(
        [x, y], loss, backend="cuda", updates={p: p - 0.01 * g for p, g in zip(params, grads)}
    )
    ours = timed(lambda: step(xv, labels), 5)
    tp = [torch.from_numpy(p.get_value()).cuda().requires_grad_() for p in params]
    tx, ty = torch.from_numpy(xv).cuda(), torch.from_numpy(labels).cuda()

    def torch_step():
        out = tx
        for i in range(0, len(tp), 2):
            out = out @ tp[i] + tp[i + 1]
            out = torch.relu(out) if i + 2 < len(tp) else out
        loss = torch.nn.functional.cross_entropy(out, ty)
        grads = torch.autograd.grad(loss, tp)
        with torch.no_grad():
            for p, g in zip(tp, grads):
                p -= 0.01 * g
        return loss.item()

    theirs = timed(torch_step, 5, torch.cuda.synchronize)
    return [
        f"W3 (MLP step, batch {batch}): symnb-cuda {ours * 1e3:.2f} ms, torch "
        f"{theirs * 1e3:.2f} ms, ratio {ours / theirs:.2f}"
    ]


def matmul(torch) -> list[str]:
    """The 8192^2 product on the device: cuBLAS where its wheel is installed, then (or else)
    the tiled kernel of the kernel description, each checked on a corner against float64."""
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((MATMUL_N, MATMUL_N)).astype("float32") for _ in range(2))
    sa, sb = sn.shared(a, name="a"), sn.shared(b, name="b")
    c = sn.shared(np.zeros((MATMUL_N, MATMUL_N), "float32"), name="c")
    f = sn.function([], [], updates={c: sa @ sb}, backend="cuda")
    runtime = f.linker.runtime
    want = a[:64].astype("float64") @ b[:, :64].astype("float64")
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    theirs = timed(lambda: ta @ tb, 5, torch.cuda.synchronize)
    flops = 2 * MATMUL_N**3
    lines = [
        f"matmul {MATMUL_N}^2 float32: torch {theirs * 1e3:.1f} ms "
        f"({flops / theirs / 1e12:.1f} TFLOP/s)"
    ]
    paths = [("cuBLAS", runtime.cublas_path)] if runtime.cublas_path else []
    for name, path in [*paths, ("tiled kernel", None)]:
        runtime.cublas_path = path
        ours = timed(f, 2, runtime.synchronize)
        ok = np.allclose(c.get_value()[:64, :64], want, rtol=1e-3, atol=1e-2)
        lines.append(
            f"  symnb-cuda ({name}): {ours * 1e3:.1f} ms "
            f"({flops / ours / 1e12:.1f} TFLOP/s), ratio {ours / theirs:.1f}; "
            f"matches float64 on a corner: {ok}"
        )
    runtime.cublas_path = paths[0][1] if paths else None
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--quick" in argv:
        from symnb import gpucheck

        return gpucheck.main([a for a in argv if a != "--quick"])
    problem = cuda_problem()
    if problem is not None:
        print(f"benchmarks.gpu: no CUDA GPU to run on, nothing timed ({problem})")
        return 0
    start = time.monotonic()
    print(op_suite(), flush=True)
    try:
        import torch
    except ImportError:
        torch = None
    parts = (w1, w3, matmul) if torch is not None and torch.cuda.is_available() else ()
    if not parts:
        print("benchmarks.gpu: torch with CUDA is not installed: no timings against it")
    for part in parts:
        if time.monotonic() - start > BUDGET_S - 40:
            print(f"{part.__name__}: skipped (the {BUDGET_S} s budget is nearly spent)")
            continue
        try:
            print("\n".join(part(torch)), flush=True)
        except Exception as exc:  # one part failing must not hide the others' numbers
            print(f"{part.__name__}: failed: {type(exc).__name__}: {str(exc)[:500]}", flush=True)
    print(f"benchmarks.gpu: done in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
