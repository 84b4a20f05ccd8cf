"""Workloads written into caller-owned buffers (``out=``), for libraries whose ops take one.

``ops`` names a library's functions (``mul``, ``add``, ``sub``, ``div``, ``neg``, ``exp``,
``sin``, ``log1p``, ``abs``, ``tanh``, ``empty_like``), so NumPy and torch share one version
of each workload. Buffers are allocated at build time; every call overwrites the same output,
as a loop that writes its result into a preallocated array does.
"""

from __future__ import annotations

from benchmarks.check import Skip
from benchmarks.workloads import CHAIN_DEPTH


def fused(ops, x, y, z):
    """W1 with two temporaries: ``exp(-x*x)*sin(y) + log1p(abs(z))/(1 + x*x)``."""
    out, t, s = ops.empty_like(x), ops.empty_like(x), ops.empty_like(x)

    def run():
        ops.mul(x, x, out=t)
        ops.exp(ops.neg(t, out=out), out=out)
        ops.mul(out, ops.sin(y, out=s), out=out)
        ops.add(t, 1, out=t)
        ops.log1p(ops.abs(z, out=s), out=s)
        ops.add(out, ops.div(s, t, out=s), out=out)
        return [out]

    return run


def axpy_chain(ops, x, y, z, w):
    """W1b with one temporary: ``2*x + 3*y - z*w``."""
    out, t = ops.empty_like(x), ops.empty_like(x)

    def run():
        ops.mul(x, 2, out=out)
        ops.add(out, ops.mul(y, 3, out=t), out=out)
        ops.sub(out, ops.mul(z, w, out=t), out=out)
        return [out]

    return run


def chain(ops, x, activation: str, shift: float):
    """W7: ``CHAIN_DEPTH`` times ``act(x*0.9 + shift)``, in place in the output."""
    out, act = ops.empty_like(x), getattr(ops, activation)

    def run():
        ops.mul(x, 0.9, out=out)
        for index in range(CHAIN_DEPTH):
            if index:
                ops.mul(out, 0.9, out=out)
            act(ops.add(out, shift, out=out), out=out)
        return [out]

    return run


def build(ops, builder: str, v: dict, convert):
    """The ``out=`` version of a workload, its inputs turned into the library's arrays by
    ``convert``; Skip for a workload that has none."""
    x = [convert(v[k]) for k in "xyzw" if k in v]
    if builder == "W1":
        return fused(ops, *x)
    if builder == "W1b":
        return axpy_chain(ops, *x)
    if builder in ("W7-tanh", "W7-abs"):
        act, shift = ("tanh", 0.1) if builder == "W7-tanh" else ("abs", -0.1)
        return chain(ops, x[0], act, shift)
    raise Skip(f"no out= version of {builder}")
