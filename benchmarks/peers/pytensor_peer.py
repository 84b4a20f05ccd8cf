"""PyTensor (Theano's heir) in one named mode, with its default input checks.

``NUMBA`` (the default linker of PyTensor 3.x) and ``CVM`` (the C virtual machine over C
thunks, the linker closest to symnb's backend "c") are two peers, labelled by mode.
"""

from __future__ import annotations

import sys

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import get_mode
from pytensor.tensor.special import log_softmax

from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH, CONVNET2, LEARNING_RATE

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")


class Peer(BasePeer):
    def __init__(self, mode: str):
        self.mode = mode
        self.name = f"pytensor ({mode.lower()})"

    def version(self) -> str:
        linker = type(get_mode(self.mode).linker).__name__
        return f"{pytensor.__version__} (mode {self.mode}, {linker})"

    def function(self, inputs, outputs, updates=None):
        return pytensor.function(inputs, outputs, updates=updates, mode=self.mode)

    def build_w1(self, v):
        x, y, z = (_like(v[k]) for k in "xyz")
        out = pt.exp(-x * x) * pt.sin(y) + pt.log1p(pt.abs(z)) / (1 + x * x)
        return _calling(self.function([x, y, z], out), v["x"], v["y"], v["z"])

    def build_w1b(self, v):
        x, y, z, w = (_like(v[k]) for k in "xyzw")
        out = 2 * x + 3 * y - z * w
        return _calling(self.function([x, y, z, w], out), *(v[k] for k in "xyzw"))

    def build_w2(self, v):
        logits, labels = _like(v["logits"]), _like(v["labels"])
        loss = _xent(logits, labels)
        f = self.function([logits, labels], [loss, pytensor.grad(loss, logits)])
        return _calling_many(f, v["logits"], v["labels"])

    def build_w3(self, v):
        return self._mlp(v, _relu)

    def build_w3s(self, v):
        return self._mlp(v, pt.tanh)

    def build_w4(self, v):
        a, b = pt.dscalar("a"), pt.dscalar("b")
        return _calling(self.function([a, b], a * b + 1), v["a"], v["b"])

    build_w4_float = build_w4_npscalar = build_w4

    def build_w6(self, v):
        x = _like(v["x"])
        return _calling(self.function([x], pt.logsumexp(x, axis=1)), v["x"])

    def build_w7_tanh(self, v):
        x = _like(v["x"])
        out = x
        for _ in range(CHAIN_DEPTH):
            out = pt.tanh(out * 0.9 + 0.1)
        return _calling(self.function([x], out), v["x"])

    def build_w7_abs(self, v):
        x = _like(v["x"])
        out = x
        for _ in range(CHAIN_DEPTH):
            out = pt.abs(out * 0.9 - 0.1)
        return _calling(self.function([x], out), v["x"])

    def build_w8(self, v):
        from pytensor.tensor.signal import convolve2d

        keys = ("kernels", "kbias", "dense", "dbias")
        params = [pytensor.shared(v[k], name=k) for k in keys]
        kernels, kbias, dense, dbias = params
        x, labels = _like(v["x"]), _like(v["labels"])
        # One input channel: batch dims (batch, 1) of x broadcast against (1, filters) of the
        # flipped kernels (convolve2d convolves; the workload cross-correlates).
        flipped = kernels[:, 0, ::-1, ::-1].dimshuffle("x", 0, 1, 2)
        conv = convolve2d(x, flipped, mode="valid")
        act = pt.maximum(conv + kbias.dimshuffle("x", 0, "x", "x"), 0)
        loss = _xent(act.flatten(2) @ dense + dbias, labels)
        return self._sgd([x, labels], loss, params, v)

    def build_w9(self, v):
        """``pytensor.scan`` over the steps; ``pytensor.grad`` differentiates through it."""
        x, h0, w, u = (_like(v[k]) for k in ("x", "h0", "w", "u"))
        hs = pytensor.scan(
            lambda xt, h, w, u: pt.tanh(xt @ u + h @ w),
            sequences=x,
            outputs_info=h0,
            non_sequences=[w, u],
            return_updates=False,
        )
        loss = pt.mean(hs * hs)
        f = self.function([x, h0, w, u], [loss, *pytensor.grad(loss, [w, u])])
        return _calling_many(f, *(v[k] for k in ("x", "h0", "w", "u")))

    def build_w8b(self, v):
        """PyTensor has no multi-channel conv2d or pooling op: the second layer convolves
        each (input, output) channel pair with convolve2d and sums over input channels; the
        pool is a reshape and a max."""
        from pytensor.tensor.signal import convolve2d

        params = [pytensor.shared(v[k], name=k) for k in CONVNET2]
        k1, b1, k2, b2, dense, dbias = params
        x, labels = _like(v["x"]), _like(v["labels"])
        conv1 = convolve2d(x, k1[:, 0, ::-1, ::-1].dimshuffle("x", 0, 1, 2), mode="valid")
        act1 = pt.maximum(conv1 + b1.dimshuffle("x", 0, "x", "x"), 0)
        pairs = convolve2d(
            act1.dimshuffle(0, "x", 1, 2, 3),
            k2[:, :, ::-1, ::-1].dimshuffle("x", 0, 1, 2, 3),
            mode="valid",
        )
        act2 = pt.maximum(pairs.sum(axis=2) + b2.dimshuffle("x", 0, "x", "x"), 0)
        n, c, h, w = act2.shape
        pooled = act2.reshape((n, c, h // 2, 2, w // 2, 2)).max(axis=(3, 5))
        loss = _xent(pooled.flatten(2) @ dense + dbias, labels)
        return self._sgd([x, labels], loss, params, v)

    def _mlp(self, v, act):
        """The SGD step of a two-hidden-layer MLP with activation ``act``."""
        params = [pytensor.shared(v[k], name=k) for k in MLP]
        x, labels = _like(v["x"]), _like(v["labels"])
        w1, b1, w2, b2, w3, b3 = params
        h2 = act(act(x @ w1 + b1) @ w2 + b2)
        return self._sgd([x, labels], _xent(h2 @ w3 + b3, labels), params, v)

    def _sgd(self, inputs, loss, params, v):
        lr = np.asarray(LEARNING_RATE, dtype=v["x"].dtype)
        updates = [(p, p - lr * g) for p, g in zip(params, pytensor.grad(loss, params))]
        f = self.function(inputs, loss, updates=updates)

        def run():
            out = f(v["x"], v["labels"])
            return [out, *(p.get_value(borrow=True) for p in params)]

        return run

    # -- W11: building graphs (benchmarks/build_time.py times these) ------------------------
    def graph_mlp(self, arrays):
        """The forward graph of ``tanh(h @ W + b)`` per (W, b): (inputs, outputs, params).
        The arrays are the model's own, made for it (``borrow=True``: docs/benchmarks.md)."""
        x = pt.matrix("x", dtype="float64")
        h, params = x, []
        for w, b in arrays:
            w_var, b_var = pytensor.shared(w, borrow=True), pytensor.shared(b, borrow=True)
            params += [w_var, b_var]
            h = pt.tanh(h @ w_var + b_var)
        return [x], [h], params

    def graph_mlp_grad(self, forward):
        inputs, (h,), params = forward
        return inputs, pytensor.grad(h.sum(), params), params

    def graph_chain_grad(self, steps: int):
        # pytensor.grad recurses once per node behind the cost (gradient.py, account_for)
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 30 * steps + 1000))
        x = pt.vector("x", dtype="float64", shape=(64,))
        out = x
        for _ in range(steps):
            out = pt.tanh(out * 0.9 + 0.1)
        return [x], [pytensor.grad(out.sum(), x)], []

    def graph_nodes(self, graph) -> int:
        _, outputs, _ = graph
        return len(_apply_nodes(outputs))

    def graph_value(self, graph, *values):
        """The graph's outputs for input values (the tests check W11's graphs with it)."""
        inputs, outputs, _ = graph
        return pytensor.function(inputs, outputs, mode="FAST_COMPILE")(*values)


def _apply_nodes(outputs) -> set:
    """Every apply node the outputs are computed by."""
    seen, stack = set(), [v.owner for v in outputs if v.owner is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(v.owner for v in node.inputs if v.owner is not None)
    return seen


def _relu(x):
    return pt.maximum(x, 0)


def _like(value: np.ndarray):
    return pt.tensor(dtype=str(value.dtype), shape=value.shape)


def _xent(logits, labels):
    rows = pt.arange(logits.shape[0])
    return -log_softmax(logits, axis=1)[rows, labels].mean()


def _calling(f, *args):
    def run():
        return [f(*args)]

    return run


def _calling_many(f, *args):
    def run():
        return list(f(*args))

    return run
