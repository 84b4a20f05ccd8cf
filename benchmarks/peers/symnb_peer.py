"""symnb through its public API only, on one backend (a name in ``symnb.backends.LINKERS``).

Ops that are still landing are looked up by name; a workload whose op is missing is skipped
with "sn.X not available" rather than failing.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

import symnb as sn
from benchmarks.check import Skip
from benchmarks.peers import BASE_PEER
from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH, CONVNET2, LEARNING_RATE

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
CONVNET = ("kernels", "kbias", "dense", "dbias")


def need(name: str):
    """``sn.<name>``, or Skip naming it when this version of symnb does not have it."""
    op = getattr(sn, name, None)
    if op is None:
        raise Skip(f"sn.{name} not available")
    return op


@contextlib.contextmanager
def _best_loops():
    """While compiling: a scan's loop where it runs best on the device at hand (on a GPU the
    device, on a CPU device such as PoCL the host: ``device_loops="auto"``, docs/benchmarks.md,
    "session 14"); a baseline tree may predate the setting."""
    before = getattr(sn.config, "device_loops", None)
    if before is None:
        yield
        return
    sn.config.device_loops = "auto"
    try:
        yield
    finally:
        sn.config.device_loops = before


class Peer(BasePeer):
    def __init__(self, backend: str, name: str = ""):
        self.backend = backend
        self.name = name or f"symnb-{backend}"

    def version(self) -> str:
        """The version; a device backend whose device cannot start here (no GPU driver, no
        OpenCL device) is absent, as a library that is not installed is."""
        make_runtime = getattr(sn.backends.get_linker(self.backend), "make_runtime", None)
        if make_runtime is not None:
            try:
                runtime = make_runtime()
            except Exception as exc:  # noqa: BLE001 - the reason is the row's note
                raise ImportError(f"backend {self.backend!r} cannot start here: {exc}") from exc
            return f"{sn.__version__} (backend {self.backend}, {runtime.device_name})"
        return f"{sn.__version__} (backend {self.backend}{self._tree()})"

    def _tree(self) -> str:
        """Where the baseline's symnb was imported from (proof that it is the other tree)."""
        if self.name != BASE_PEER:
            return ""
        return f", from {os.path.dirname(os.path.dirname(os.path.abspath(sn.__file__)))}"

    def start_runtime(self) -> None:
        """Import the backend's code (cffi, the code generator): ``import symnb`` defers it to
        the first function, so a user pays it before the first result (W5 counts it)."""
        sn.backends.get_linker(self.backend)

    def configure_cache(self, directory: str) -> None:
        if hasattr(sn.config, "compiledir"):
            sn.config.compiledir = directory

    def cold_note(self) -> str:
        """Whether this process had to compile the C runner (the cold probe's cache is empty):
        so it does when the installed build is not of this runner.c (a checkout changed since
        ``pip install -e``), and the cold time then holds the runner's build (about 1 s)."""
        if self.backend != "c":
            return ""
        from symnb.backends.c import runner  # deferred: W5 times backend code as runtime start

        installed = getattr(runner, "installed_build", None)  # a baseline tree may lack it
        if installed is None or installed() is not None or runner.module() is None:
            return ""
        return "the C runner was built in the probe (no installed build of this runner.c)"

    def function(self, inputs, outputs, updates=None):
        with _best_loops():
            return sn.function(inputs, outputs, updates=updates, backend=self.backend)

    def build_w1(self, v):
        x, y, z = (_like(k, v[k]) for k in "xyz")
        out = sn.exp(-x * x) * sn.sin(y) + need("log1p")(sn.abs(z)) / (1 + x * x)
        return _calling(self.function([x, y, z], out), v, "xyz")

    def build_w1b(self, v):
        x, y, z, w = (_like(k, v[k]) for k in "xyzw")
        return _calling(self.function([x, y, z, w], 2 * x + 3 * y - z * w), v, "xyzw")

    def build_w2(self, v):
        logits, labels = _like("logits", v["logits"]), _like("labels", v["labels"])
        loss = _xent(logits, labels)
        f = self.function([logits, labels], [loss, need("grad")(loss, logits)])

        def run():
            return list(f(v["logits"], v["labels"]))

        return run

    def build_w3(self, v):
        return self._mlp(v, need("relu"))

    def build_w3s(self, v):
        return self._mlp(v, sn.tanh)

    def _mlp(self, v, act):
        """The SGD step of a two-hidden-layer MLP with activation ``act``, updates inside."""
        params = [sn.shared(v[k], name=k) for k in MLP]
        w1, b1, w2, b2, w3, b3 = params
        x, labels = _like("x", v["x"]), _like("labels", v["labels"])
        h2 = act(act(x @ w1 + b1) @ w2 + b2)
        return self._sgd([x, labels], _xent(h2 @ w3 + b3, labels), params, v)

    def build_w4(self, v):
        a, b = _like("a", v["a"]), _like("b", v["b"])
        return _calling(self.function([a, b], a * b + 1), v, "ab")

    build_w4_float = build_w4_npscalar = build_w4

    def build_w6(self, v):
        x = _like("x", v["x"])
        return _calling(self.function([x], need("logsumexp")(x, axis=1)), v, "x")

    def build_w7_tanh(self, v):
        x = _like("x", v["x"])
        out = x
        for _ in range(CHAIN_DEPTH):
            out = sn.tanh(out * 0.9 + 0.1)
        return _calling(self.function([x], out), v, "x")

    def build_w7_abs(self, v):
        x = _like("x", v["x"])
        out = x
        for _ in range(CHAIN_DEPTH):
            out = sn.abs(out * 0.9 - 0.1)
        return _calling(self.function([x], out), v, "x")

    def build_w8(self, v):
        conv2d, relu = need("conv2d"), need("relu")
        params = [sn.shared(v[k], name=k) for k in CONVNET]
        kernels, kbias, dense, dbias = params
        x, labels = _like("x", v["x"]), _like("labels", v["labels"])
        filters = v["kernels"].shape[0]
        act = relu(conv2d(x, kernels) + sn.reshape(kbias, (1, filters, 1, 1)))
        flat = sn.reshape(act, (v["x"].shape[0], v["dense"].shape[0]))
        return self._sgd([x, labels], _xent(flat @ dense + dbias, labels), params, v)

    def build_w9(self, v):
        """``sn.scan`` over the steps; ``sn.grad`` builds the backward loop (BPTT)."""
        scan = need("scan")
        x, h0, w, u = (_like(k, v[k]) for k in ("x", "h0", "w", "u"))
        hs, _ = scan(
            lambda xt, h, w, u: sn.tanh(xt @ u + h @ w),
            sequences=x,
            outputs_info=h0,
            non_sequences=[w, u],
        )
        loss = sn.mean(hs * hs)
        f = self.function([x, h0, w, u], [loss, *need("grad")(loss, [w, u])])
        args = [v[k] for k in ("x", "h0", "w", "u")]

        def run():
            return list(f(*args))

        return run

    def build_w8b(self, v):
        conv2d, relu, max_pool2d = need("conv2d"), need("relu"), need("max_pool2d")
        params = [sn.shared(v[k], name=k) for k in CONVNET2]
        k1, b1, k2, b2, dense, dbias = params
        x, labels = _like("x", v["x"]), _like("labels", v["labels"])
        act1 = relu(conv2d(x, k1) + sn.reshape(b1, (1, -1, 1, 1)))
        act2 = relu(conv2d(act1, k2) + sn.reshape(b2, (1, -1, 1, 1)))
        flat = sn.reshape(max_pool2d(act2, 2), (v["x"].shape[0], v["dense"].shape[0]))
        return self._sgd([x, labels], _xent(flat @ dense + dbias, labels), params, v)

    def _sgd(self, inputs, loss, params, v):
        grads = need("grad")(loss, params)
        updates = {p: p - LEARNING_RATE * g for p, g in zip(params, grads)}
        f = self.function(inputs, loss, updates=updates)

        def run():
            out = f(v["x"], v["labels"])
            return [out, *(p.get_value(borrow=True) for p in params)]

        run.profiled = (f, (v["x"], v["labels"]))
        return run

    # -- W11: building graphs (benchmarks/build_time.py times these) ------------------------
    def graph_mlp(self, arrays):
        """The forward graph of ``tanh(h @ W + b)`` per (W, b): (inputs, output, params).
        The arrays are the model's own, made for it (``borrow=True``: docs/benchmarks.md)."""
        x = sn.tensor("x", shape=("batch", arrays[0][0].shape[0]))
        h, params = x, []
        for W, b in arrays:
            w_var, b_var = sn.shared(W, borrow=True), sn.shared(b, borrow=True)
            params += [w_var, b_var]
            h = sn.tanh(h @ w_var + b_var)
        return [x], [h], params

    def graph_mlp_grad(self, forward):
        inputs, (h,), params = forward
        return inputs, need("grad")(sn.sum(h), params), params

    def graph_compile(self, grads):
        inputs, outputs, _ = grads
        return self.function(inputs, outputs)

    def graph_chain_grad(self, steps: int):
        x = sn.tensor("x", shape=(64,))
        out = x
        for _ in range(steps):
            out = sn.tanh(out * 0.9 + 0.1)
        return [x], [need("grad")(sn.sum(out), x)], []

    def graph_nodes(self, graph) -> int:
        inputs, outputs, _ = graph
        return len(sn.Graph(inputs, outputs))

    def graph_value(self, graph, *values):
        """The graph's outputs for input values (the tests check W11's graphs with it)."""
        inputs, outputs, _ = graph
        return sn.function(inputs, outputs, backend="py")(*values)


def _like(name, value):
    value = np.asarray(value)
    return sn.tensor(name, shape=value.shape, dtype=str(value.dtype))


def _xent(logits, labels):
    """Mean softmax cross-entropy with integer labels, through the documented nnet ops."""
    probs = need("softmax")(logits, axis=-1)
    return sn.mean(need("crossentropy")(probs, labels))


def _calling(f, v, names):
    args = [v[k] for k in names]

    def run():
        return [f(*args)]

    run.profiled = (f, args)
    return run
