"""numexpr: elementwise expressions (and sums) compiled to its virtual machine, multithreaded."""

from __future__ import annotations

import numexpr as ne
import numpy as np

from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH

W1 = "exp(-x*x)*sin(y) + log1p(abs(z))/(1 + x*x)"
W1B = "2*x + 3*y - z*w"


class Peer(BasePeer):
    name = "numexpr"

    def version(self) -> str:
        return f"{ne.__version__} ({ne.get_num_threads()} threads)"

    def build_w1(self, v):
        return _evaluating(W1, v)

    def build_w1b(self, v):
        return _evaluating(W1B, v)

    def build_w4(self, v):
        return _evaluating("a*b + 1", v)

    def build_w6(self, v):
        x = v["x"]

        def run():
            top = x.max(axis=1, keepdims=True)
            sums = ne.evaluate("sum(exp(x - top), axis=1)")
            return [ne.evaluate("log(sums) + peak", {"sums": sums, "peak": top[:, 0]})]

        return run

    def build_w7_tanh(self, v):
        return _evaluating(_nested("tanh({}*0.9 + 0.1)"), v)

    def build_w7_abs(self, v):
        return _evaluating(_nested("abs({}*0.9 - 0.1)"), v)


def _nested(template: str) -> str:
    expr = "x"
    for _ in range(CHAIN_DEPTH):
        expr = template.format(expr)
    return expr


def _evaluating(expr: str, values: dict):
    names = {k: v for k, v in values.items() if isinstance(v, np.ndarray)}

    def run():
        return [ne.evaluate(expr, local_dict=names)]

    return run
