"""numexpr: elementwise expressions (and sums) compiled to its virtual machine, multithreaded.

An expression is compiled once by ``ne.validate``; every call is an
``ne.re_evaluate``, which skips parsing and the cache lookup, as numexpr's documentation
suggests for loops. With ``out=True`` (the "numexpr (out=)" rows) every call writes into one
output buffer allocated at build time.
"""

from __future__ import annotations

import numexpr as ne
import numpy as np

from benchmarks.check import Skip
from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH

W1 = "exp(-x*x)*sin(y) + log1p(abs(z))/(1 + x*x)"
W1B = "2*x + 3*y - z*w"


class Peer(BasePeer):
    def __init__(self, out: bool = False):
        self.out = out
        self.name = "numexpr (out=)" if out else "numexpr"

    def version(self) -> str:
        return f"{ne.__version__} ({ne.get_num_threads()} threads)"

    def build_w1(self, v):
        return self._evaluating(W1, v)

    def build_w1b(self, v):
        return self._evaluating(W1B, v)

    def build_w4(self, v):
        return self._evaluating("a*b + 1", v)

    build_w4_float = build_w4_npscalar = build_w4

    def build_w6(self, v):
        if self.out:
            raise Skip("no out= version (two expressions, so no re_evaluate either)")
        x = v["x"]

        def run():
            top = x.max(axis=1, keepdims=True)
            sums = ne.evaluate("sum(exp(x - top), axis=1)")
            return [ne.evaluate("log(sums) + peak", {"sums": sums, "peak": top[:, 0]})]

        return run

    def build_w7_tanh(self, v):
        return self._evaluating(_nested("tanh({}*0.9 + 0.1)"), v)

    def build_w7_abs(self, v):
        return self._evaluating(_nested("abs({}*0.9 - 0.1)"), v)

    def _evaluating(self, expr: str, names: dict):
        """Compiled once by ``ne.validate`` (into a kept buffer with ``out``); each call is a
        ``re_evaluate``."""
        if self.out and np.ndim(next(iter(names.values()))) == 0:
            raise Skip("no out= version of a 0-d expression")
        out = np.empty_like(names["x"]) if self.out else None
        problem = ne.validate(expr, local_dict=names, out=out)
        if problem is not None:
            raise problem

        def run():
            return [ne.re_evaluate(local_dict=names)]

        run.buffer = out  # numexpr holds the out= buffer through a weak reference only
        return run


def _nested(template: str) -> str:
    expr = "x"
    for _ in range(CHAIN_DEPTH):
        expr = template.format(expr)
    return expr
