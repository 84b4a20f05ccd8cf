"""Compile a graph with and without rewrites and compare (always on the py backend)."""

from __future__ import annotations

import numpy as np

import symnb as sn


def compile_pair(inputs, outputs, optimize="fast", **kwargs):
    """(unoptimised, optimised) functions of the same graph."""
    plain = sn.function(inputs, outputs, optimize="none", backend="py", **kwargs)
    fast = sn.function(inputs, outputs, optimize=optimize, backend="py", **kwargs)
    return plain, fast


def fired(inputs, outputs, optimize="fast") -> dict:
    """Rule name -> firings when compiling ``outputs``."""
    return sn.function(inputs, outputs, optimize=optimize, backend="py").rewrites.counts()


def ops_of(f) -> list[str]:
    """The op names of a compiled function's graph, in order."""
    return [type(node.op).op_name() for node in f.graph.toposort()]


def assert_same_values(inputs, outputs, values, optimize="fast", rtol=1e-7):
    """The optimised graph computes what the unoptimised one does; returns that function."""
    plain, fast = compile_pair(inputs, outputs, optimize)
    with np.errstate(all="ignore"):
        want, got = _as_list(plain(*values)), _as_list(fast(*values))
    for w, g in zip(want, got, strict=True):
        w, g = np.asarray(w), np.asarray(g)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, equal_nan=True)
    return fast


def _as_list(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]
