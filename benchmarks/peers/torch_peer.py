"""PyTorch on the CPU: eager, or each workload's function wrapped in ``torch.compile``."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling

from benchmarks.peers.base import BasePeer
from benchmarks.workloads import CHAIN_DEPTH, LEARNING_RATE

MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
CONVNET = ("kernels", "kbias", "dense", "dbias")


class Peer(BasePeer):
    def __init__(self, compiled: bool):
        self.compiled = compiled
        self.name = "torch.compile" if compiled else "torch"

    def version(self) -> str:
        return f"{torch.__version__} ({torch.get_num_threads()} threads)"

    def to_numpy(self, outputs) -> list:
        return [o.detach().numpy().copy() if torch.is_tensor(o) else np.asarray(o) for o in outputs]

    def _wrap(self, fn):
        return torch.compile(fn) if self.compiled else fn

    def _elementwise(self, fn, v, names):
        fn = self._wrap(fn)
        args = [torch.from_numpy(v[k]) for k in names]

        def run():
            with torch.no_grad():
                return [fn(*args)]

        return run

    def build_w1(self, v):
        return self._elementwise(_fused, v, "xyz")

    def build_w1b(self, v):
        return self._elementwise(_axpy_chain, v, "xyzw")

    def build_w4(self, v):
        return self._elementwise(_a_times_b_plus_one, v, "ab")

    def build_w6(self, v):
        return self._elementwise(_logsumexp_rows, v, "x")

    def build_w7_tanh(self, v):
        return self._elementwise(_tanh_chain, v, "x")

    def build_w7_abs(self, v):
        return self._elementwise(_abs_chain, v, "x")

    def build_w2(self, v):
        fn = self._wrap(_xent_and_grad)
        logits, labels = torch.from_numpy(v["logits"]), torch.from_numpy(v["labels"])

        def run():
            return list(fn(logits, labels))

        return run

    def build_w3(self, v):
        return self._training(_mlp_loss(torch.relu), v, MLP)

    def build_w3s(self, v):
        return self._training(_mlp_loss(torch.tanh), v, MLP)

    def build_w8(self, v):
        return self._training(_convnet_loss, v, CONVNET)

    def _training(self, loss_fn, v, keys):
        params = [torch.from_numpy(v[k].copy()).requires_grad_() for k in keys]
        x, labels = torch.from_numpy(v["x"]), torch.from_numpy(v["labels"])

        def step():
            loss = loss_fn(params, x, labels)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p.sub_(g, alpha=LEARNING_RATE)
            return loss.detach()

        step = self._wrap(step)

        def run():
            return [step(), *params]

        return run


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


def _xent_and_grad(logits, labels):
    logits = logits.detach().requires_grad_()
    loss = F.cross_entropy(logits, labels)
    (grad,) = torch.autograd.grad(loss, logits)
    return loss.detach(), grad


def _mlp_loss(act):
    """The loss of a two-hidden-layer MLP with activation ``act``."""

    def loss(params, x, labels):
        w1, b1, w2, b2, w3, b3 = params
        h2 = act(act(x @ w1 + b1) @ w2 + b2)
        return F.cross_entropy(h2 @ w3 + b3, labels)

    return loss


def _convnet_loss(params, x, labels):
    kernels, kbias, dense, dbias = params
    act = torch.relu(F.conv2d(x, kernels, kbias))
    return F.cross_entropy(act.flatten(1) @ dense + dbias, labels)
