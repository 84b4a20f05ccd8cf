"""Hand-written NumPy: the workloads' reference code run in the workload's dtype.

With ``out=True`` (the "numpy (out=)" rows) the elementwise workloads write through ufunc
``out=`` arguments into buffers allocated once (benchmarks/peers/into.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from benchmarks import numpy_impl
from benchmarks.peers.base import BasePeer, returning_list
from benchmarks.workloads import CHAIN_DEPTH, CONVNET2, LEARNING_RATE

INTO_OPS = SimpleNamespace(
    mul=np.multiply,
    add=np.add,
    sub=np.subtract,
    div=np.divide,
    neg=np.negative,
    exp=np.exp,
    sin=np.sin,
    log1p=np.log1p,
    abs=np.abs,
    tanh=np.tanh,
    empty_like=np.empty_like,
)


class Peer(BasePeer):
    def __init__(self, out: bool = False):
        self.into_ops = INTO_OPS if out else None
        self.name = "numpy (out=)" if out else "numpy"

    def version(self) -> str:
        return np.__version__

    def build_w1(self, v):
        return returning_list(numpy_impl.fused, v["x"], v["y"], v["z"])

    def build_w1b(self, v):
        return returning_list(numpy_impl.axpy_chain, v["x"], v["y"], v["z"], v["w"])

    def build_w2(self, v):
        def run():
            return list(numpy_impl.softmax_xent(v["logits"], v["labels"]))

        return run

    def build_w3(self, v):
        return _training(numpy_impl.mlp_step, v, ("w1", "b1", "w2", "b2", "w3", "b3"))

    def build_w3s(self, v):
        return _training(numpy_impl.tanh_mlp_step, v, ("w1", "b1", "w2", "b2", "w3", "b3"))

    def build_w4(self, v):
        a, b = v["a"], v["b"]

        def run():
            return [a * b + 1]

        return run

    build_w4_float = build_w4_npscalar = build_w4

    def build_w6(self, v):
        return returning_list(numpy_impl.logsumexp_rows, v["x"])

    def build_w7_tanh(self, v):
        return returning_list(numpy_impl.tanh_chain, v["x"], CHAIN_DEPTH)

    def build_w7_abs(self, v):
        return returning_list(numpy_impl.abs_chain, v["x"], CHAIN_DEPTH)

    def build_w8(self, v):
        return _training(numpy_impl.convnet_step, v, ("kernels", "kbias", "dense", "dbias"))

    def build_w9(self, v):
        """The loop forward, then BPTT by hand (benchmarks/numpy_impl.py)."""
        args = [v[k] for k in ("x", "h0", "w", "u")]

        def run():
            return list(numpy_impl.rnn_loss_and_grads(*args))

        return run

    def build_w8b(self, v):
        return _training(numpy_impl.convnet2_step, v, CONVNET2)


def _training(step, v, keys):
    params = [v[k] for k in keys]

    def run():
        loss = step(params, v["x"], v["labels"], LEARNING_RATE)
        return [loss, *params]

    return run
