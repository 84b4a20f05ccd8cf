"""PyTorch on the CPU: eager, eager writing into ``out=`` buffers, or ``torch.compile``.

Nothing requires grad outside the training steps, so eager calls run without ``no_grad``.
Training steps: eager computes the loss on leaf tensors, ``torch.autograd.grad`` and an
in-place SGD update; ``torch.compile`` traces the whole step (``torch.func.grad_and_value``
and the in-place update) with ``fullgraph=True``, so a graph break fails the build, and the
setup reports dynamo's graph and graph-break counts.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling

from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH, CONVNET2, LEARNING_RATE

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
CONVNET = ("kernels", "kbias", "dense", "dbias")
INTO_OPS = SimpleNamespace(
    mul=torch.mul,
    add=torch.add,
    sub=torch.sub,
    div=torch.div,
    neg=torch.neg,
    exp=torch.exp,
    sin=torch.sin,
    log1p=torch.log1p,
    abs=torch.abs,
    tanh=torch.tanh,
    empty_like=torch.empty_like,
)


class Peer(BasePeer):
    def __init__(self, compiled: bool, out: bool = False, backend: str = "inductor"):
        self.compiled, self.backend = compiled, backend
        self.into_ops = INTO_OPS if out else None
        self.name = "torch.compile" if compiled else ("torch (out=)" if out else "torch")

    def version(self) -> str:
        how = f", backend {self.backend}, fullgraph" if self.compiled else ""
        return f"{torch.__version__} ({torch.get_num_threads()} threads{how})"

    def to_lib(self, value):
        return torch.from_numpy(value)

    def to_numpy(self, outputs) -> list:
        return [o.detach().numpy().copy() if torch.is_tensor(o) else np.asarray(o) for o in outputs]

    def setup_note(self) -> str:
        """Dynamo's counts for the last build; any graph break is an error."""
        if not self.compiled:
            return ""
        from torch._dynamo.utils import counters

        breaks = sum(counters["graph_break"].values())
        graphs = counters["stats"]["unique_graphs"]
        if breaks or not graphs:
            reasons = "; ".join(list(counters["graph_break"])[:3])
            raise RuntimeError(f"torch.compile: {graphs} graphs, {breaks} graph breaks: {reasons}")
        return f"{graphs} graph{'s' * (graphs != 1)}, 0 graph breaks"

    def _wrap(self, fn):
        if not self.compiled:
            return fn
        from torch._dynamo.utils import counters

        torch._dynamo.reset()  # each workload compiles afresh (W4's variants share a function)
        counters.clear()
        return torch.compile(fn, fullgraph=True, backend=self.backend)

    def _elementwise(self, fn, v, names):
        fn = self._wrap(fn)
        args = [torch.from_numpy(v[k]) for k in names]

        def run():
            return [fn(*args)]

        return run

    def build_w1(self, v):
        return self._elementwise(_fused, v, "xyz")

    def build_w1b(self, v):
        return self._elementwise(_axpy_chain, v, "xyzw")

    def build_w4(self, v):
        return self._elementwise(_a_times_b_plus_one, v, "ab")

    def build_w4_float(self, v):
        """Scalars from Python become 0-d float64 tensors in each call, as a user must."""
        fn, a, b = self._wrap(_a_times_b_plus_one), v["a"], v["b"]

        def run():
            return [fn(torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64))]

        return run

    build_w4_npscalar = build_w4_float

    def build_w6(self, v):
        return self._elementwise(_logsumexp_rows, v, "x")

    def build_w7_tanh(self, v):
        return self._elementwise(_tanh_chain, v, "x")

    def build_w7_abs(self, v):
        return self._elementwise(_abs_chain, v, "x")

    def build_w2(self, v):
        labels = torch.from_numpy(v["labels"])
        if self.compiled:
            fn = self._wrap(torch.func.grad_and_value(F.cross_entropy))
            logits = torch.from_numpy(v["logits"])

            def run():
                grad, loss = fn(logits, labels)
                return [loss, grad]

            return run
        logits = torch.from_numpy(v["logits"]).requires_grad_()

        def run():
            loss = F.cross_entropy(logits, labels)
            (grad,) = torch.autograd.grad(loss, logits)
            return [loss.detach(), grad]

        return run

    def build_w3(self, v):
        return self._training(_mlp_loss(torch.relu), v, MLP)

    def build_w3s(self, v):
        return self._training(_mlp_loss(torch.tanh), v, MLP)

    def build_w8(self, v):
        return self._training(_convnet_loss, v, CONVNET)

    def build_w9(self, v):
        """A Python loop over the steps, ``autograd.grad`` back through it; compiled: dynamo
        unrolls the loop inside ``grad_and_value``."""
        x, h0 = torch.from_numpy(v["x"]), torch.from_numpy(v["h0"])
        if self.compiled:
            fn = self._wrap(torch.func.grad_and_value(_rnn_loss, argnums=(0, 1)))
            w, u = torch.from_numpy(v["w"]), torch.from_numpy(v["u"])

            def run():
                (gw, gu), loss = fn(w, u, x, h0)
                return [loss, gw, gu]

            return run
        w, u = (torch.from_numpy(v[k].copy()).requires_grad_() for k in ("w", "u"))

        def run():
            loss = _rnn_loss(w, u, x, h0)
            gw, gu = torch.autograd.grad(loss, [w, u])
            return [loss.detach(), gw, gu]

        return run

    def build_w8b(self, v):
        return self._training(_convnet2_loss, v, CONVNET2)

    def _training(self, loss_fn, v, keys):
        x, labels = torch.from_numpy(v["x"]), torch.from_numpy(v["labels"])
        if self.compiled:
            params = [torch.from_numpy(v[k].copy()) for k in keys]
            step = self._wrap(_traced_step(loss_fn))
        else:
            params = [torch.from_numpy(v[k].copy()).requires_grad_() for k in keys]
            step = _eager_step(loss_fn)

        def run():
            return [step(params, x, labels), *params]

        return run


def _eager_step(loss_fn):
    """Loss on leaf tensors, ``autograd.grad``, in-place SGD outside the graph."""

    def step(params, x, labels):
        loss = loss_fn(params, x, labels)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            torch._foreach_add_(params, grads, alpha=-LEARNING_RATE)
        return loss.detach()

    return step


def _traced_step(loss_fn):
    """The whole step as one function for dynamo: gradients by ``torch.func``, then the
    in-place update of the (non-leaf-grad) parameter tensors."""
    grad_and_loss = torch.func.grad_and_value(loss_fn)

    def step(params, x, labels):
        grads, loss = grad_and_loss(params, x, labels)
        torch._foreach_add_(params, grads, alpha=-LEARNING_RATE)
        return loss

    return step


def _fused(x, y, z):
    return torch.exp(-x * x) * torch.sin(y) + torch.log1p(torch.abs(z)) / (1 + x * x)


def _axpy_chain(x, y, z, w):
    return 2 * x + 3 * y - z * w


def _a_times_b_plus_one(a, b):
    return a * b + 1


def _logsumexp_rows(x):
    return torch.logsumexp(x, dim=1)


def _tanh_chain(x):
    for _ in range(CHAIN_DEPTH):
        x = torch.tanh(x * 0.9 + 0.1)
    return x


def _abs_chain(x):
    for _ in range(CHAIN_DEPTH):
        x = torch.abs(x * 0.9 - 0.1)
    return x


def _mlp_loss(act):
    """The loss of a two-hidden-layer MLP with activation ``act``."""

    def loss(params, x, labels):
        w1, b1, w2, b2, w3, b3 = params
        h2 = act(act(x @ w1 + b1) @ w2 + b2)
        return F.cross_entropy(h2 @ w3 + b3, labels)

    return loss


def _rnn_loss(w, u, x, h0):
    h, states = h0, []
    for xt in x:
        h = torch.tanh(xt @ u + h @ w)
        states.append(h)
    hs = torch.stack(states)
    return torch.mean(hs * hs)


def _convnet_loss(params, x, labels):
    kernels, kbias, dense, dbias = params
    act = torch.relu(F.conv2d(x, kernels, kbias))
    return F.cross_entropy(act.flatten(1) @ dense + dbias, labels)


def _convnet2_loss(params, x, labels):
    k1, b1, k2, b2, dense, dbias = params
    act = torch.relu(F.conv2d(torch.relu(F.conv2d(x, k1, b1)), k2, b2))
    return F.cross_entropy(F.max_pool2d(act, 2).flatten(1) @ dense + dbias, labels)
