"""The workloads: their inputs (seeded), sizes per mode and float64 NumPy references.

Every peer builds the same workload from the same inputs; ``builder`` names the builder a peer
module registers for it (the dtype comes from the inputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from benchmarks import numpy_impl

MODES = ("full", "quick", "tiny")
LEARNING_RATE = 0.1
CHAIN_DEPTH = 50


@dataclass(frozen=True)
class Workload:
    """One benchmark. ``kind``: "timed" (through the workers), "compile", "rewrite",
    "build" (W11: graph building, benchmarks/build_time.py)."""

    key: str
    title: str
    kind: str = "timed"
    builder: str = ""
    dtype: str = "float64"
    sizes: dict = field(default_factory=dict)
    params: tuple = ()  # inputs a training step updates; compared as deltas
    seed: str = ""  # the key whose inputs it shares (W4's variants: W4's values), else its own
    profiled: bool = False  # symnb's best backend is profiled even where it is the fastest

    def size(self, mode: str):
        return self.sizes[mode]


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng(sum(map(ord, key)))


def _normal(rng, shape, dtype, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def elementwise_inputs(names, n, dtype, rng) -> dict:
    return {name: _normal(rng, n, dtype) for name in names}


def xent_inputs(shape, dtype, rng) -> dict:
    rows, classes = shape
    labels = rng.integers(0, classes, rows)
    return {"logits": _normal(rng, shape, dtype, 3.0), "labels": labels}


def mlp_inputs(size, dtype, rng) -> dict:
    batch, *widths = size
    values = {"x": rng.random((batch, widths[0])).astype(dtype)}
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:]), start=1):
        values[f"w{i}"] = _normal(rng, (fan_in, fan_out), dtype, np.sqrt(2 / fan_in))
        values[f"b{i}"] = _normal(rng, fan_out, dtype, 0.1)
    values["labels"] = rng.integers(0, widths[-1], batch)
    return values


def digits_inputs(size, dtype, rng) -> dict:
    """An MLP's inputs with ``x`` shaped like scikit-learn's digits: 8x8 pixel intensities
    0..16, scaled to [0, 1] as courses do (seeded synthetic data, not the real images)."""
    values = mlp_inputs(size, dtype, rng)
    values["x"] = (rng.integers(0, 17, values["x"].shape) / 16).astype(dtype)
    return values


def convnet_inputs(size, dtype, rng) -> dict:
    batch, side, filters, classes = size
    flat = filters * (side - 2) ** 2
    return {
        "x": rng.random((batch, 1, side, side)).astype(dtype),
        "kernels": _normal(rng, (filters, 1, 3, 3), dtype, 1 / 3),
        "kbias": _normal(rng, filters, dtype, 0.1),
        "dense": _normal(rng, (flat, classes), dtype, np.sqrt(2 / flat)),
        "dbias": _normal(rng, classes, dtype, 0.1),
        "labels": rng.integers(0, classes, batch),
    }


def convnet2_inputs(size, dtype, rng) -> dict:
    """W8b: two 3x3 conv layers of ``c1`` and ``c2`` filters, a 2x2 max-pool, one dense."""
    batch, side, c1, c2, classes = size
    flat = c2 * ((side - 4) // 2) ** 2
    return {
        "x": rng.random((batch, 1, side, side)).astype(dtype),
        "k1": _normal(rng, (c1, 1, 3, 3), dtype, 1 / 3),
        "b1": _normal(rng, c1, dtype, 0.1),
        "k2": _normal(rng, (c2, c1, 3, 3), dtype, np.sqrt(2 / (9 * c1))),
        "b2": _normal(rng, c2, dtype, 0.1),
        "dense": _normal(rng, (flat, classes), dtype, np.sqrt(2 / flat)),
        "dbias": _normal(rng, classes, dtype, 0.1),
        "labels": rng.integers(0, classes, batch),
    }


def scalar_inputs(size, dtype, rng, kind=np.asarray) -> dict:
    """W4's two scalars as 0-d arrays, or as ``kind`` of them (``float``, ``np.float64``)."""
    return {"a": kind(np.asarray(rng.standard_normal(), dtype)), "b": kind(np.asarray(1.5, dtype))}


def vector_inputs(size, dtype, rng) -> dict:
    return {"x": rng.uniform(-1, 1, size).astype(dtype)}


def square_inputs(size, dtype, rng) -> dict:
    return {"x": _normal(rng, (size, size), dtype, 10.0)}


def rnn_inputs(size, dtype, rng) -> dict:
    """W9: a sequence ``x`` (steps, batch, hidden), a start state and two weight matrices
    scaled so the tanh units neither saturate nor fade over the steps."""
    steps, batch, hidden = size
    scale = 0.9 / np.sqrt(hidden)
    return {
        "x": _normal(rng, (steps, batch, hidden), dtype),
        "h0": _normal(rng, (batch, hidden), dtype, 0.1),
        "w": _normal(rng, (hidden, hidden), dtype, scale),
        "u": _normal(rng, (hidden, hidden), dtype, scale),
    }


def make_inputs(workload: Workload, mode: str) -> dict:
    """The workload's inputs for a mode, the same in every process."""
    maker, args = _INPUTS[workload.builder]
    return maker(*args, workload.size(mode), workload.dtype, _rng(workload.seed or workload.key))


_INPUTS = {
    "W1": (elementwise_inputs, ("xyz",)),
    "W1b": (elementwise_inputs, ("xyzw",)),
    "W2": (xent_inputs, ()),
    "W3": (mlp_inputs, ()),
    "W3s": (digits_inputs, ()),
    "W4": (scalar_inputs, ()),
    "W4-float": (partial(scalar_inputs, kind=float), ()),
    "W4-npscalar": (partial(scalar_inputs, kind=np.float64), ()),
    "W6": (square_inputs, ()),
    "W7-tanh": (vector_inputs, ()),
    "W7-abs": (vector_inputs, ()),
    "W8": (convnet_inputs, ()),
    "W8b": (convnet2_inputs, ()),
    "W9": (rnn_inputs, ()),
}


def as_float64(inputs: dict) -> dict:
    """Copies of the inputs with floats widened to float64 (integers and Python floats kept)."""
    return {k: _widened(v) for k, v in inputs.items()}


def _widened(value):
    if isinstance(value, float):
        return value
    return value.astype(np.float64) if value.dtype.kind == "f" else value.copy()


def copy_inputs(inputs: dict) -> dict:
    """Copies a peer may modify (training steps update their parameters in place)."""
    return {k: v if isinstance(v, float) else v.copy() for k, v in inputs.items()}


def reference(workload: Workload, inputs: dict) -> list:
    """The float64 NumPy results the peers are checked against (inputs are not modified)."""
    wide = as_float64(inputs)
    return [np.asarray(r, np.float64) for r in _REFERENCES[workload.builder](wide)]


def _ref_w1(v):
    return [numpy_impl.fused(v["x"], v["y"], v["z"])]


def _ref_w1b(v):
    return [numpy_impl.axpy_chain(v["x"], v["y"], v["z"], v["w"])]


def _ref_w2(v):
    return list(numpy_impl.softmax_xent(v["logits"], v["labels"]))


def _ref_w3(v):
    params = [v[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    return [numpy_impl.mlp_step(params, v["x"], v["labels"], LEARNING_RATE), *params]


def _ref_w3s(v):
    params = [v[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    return [numpy_impl.tanh_mlp_step(params, v["x"], v["labels"], LEARNING_RATE), *params]


def _ref_w4(v):
    return [v["a"] * v["b"] + 1]


def _ref_w6(v):
    return [numpy_impl.logsumexp_rows(v["x"])]


def _ref_w7_tanh(v):
    return [numpy_impl.tanh_chain(v["x"], CHAIN_DEPTH)]


def _ref_w7_abs(v):
    return [numpy_impl.abs_chain(v["x"], CHAIN_DEPTH)]


def _ref_w8(v):
    params = [v[k] for k in ("kernels", "kbias", "dense", "dbias")]
    return [numpy_impl.convnet_step(params, v["x"], v["labels"], LEARNING_RATE), *params]


def _ref_w8b(v):
    params = [v[k] for k in CONVNET2]
    return [numpy_impl.convnet2_step(params, v["x"], v["labels"], LEARNING_RATE), *params]


def _ref_w9(v):
    return list(numpy_impl.rnn_loss_and_grads(v["x"], v["h0"], v["w"], v["u"]))


_REFERENCES = {
    "W1": _ref_w1,
    "W1b": _ref_w1b,
    "W2": _ref_w2,
    "W3": _ref_w3,
    "W3s": _ref_w3s,
    "W4": _ref_w4,
    "W4-float": _ref_w4,
    "W4-npscalar": _ref_w4,
    "W6": _ref_w6,
    "W7-tanh": _ref_w7_tanh,
    "W7-abs": _ref_w7_abs,
    "W8": _ref_w8,
    "W8b": _ref_w8b,
    "W9": _ref_w9,
}


def comparable(workload: Workload, inputs: dict, outputs: list) -> list:
    """Outputs in the form they are compared: a training step's parameters as their change.

    A parameter moves by ``lr * grad``, far less than its size, so comparing the new values
    would hide a wrong gradient; comparing the change does not.
    """
    if not workload.params:
        return list(outputs)
    start = [inputs[k].astype(np.float64) for k in workload.params]
    moved = [np.asarray(o, np.float64) - s for o, s in zip(outputs[1:], start)]
    return [outputs[0], *moved]


_ELEMENTWISE_SIZES = {"full": 10_000_000, "quick": 1_000_000, "tiny": 1000}
_MLP = ("w1", "b1", "w2", "b2", "w3", "b3")
_CONVNET = ("kernels", "kbias", "dense", "dbias")
CONVNET2 = ("k1", "b1", "k2", "b2", "dense", "dbias")

WORKLOADS = [
    Workload(
        "W1-f64",
        "exp(-x*x)*sin(y) + log1p(abs(z))/(1 + x*x), 10^7 float64",
        builder="W1",
        sizes=_ELEMENTWISE_SIZES,
    ),
    Workload(
        "W1-f32", "the same, 10^7 float32", builder="W1", dtype="float32", sizes=_ELEMENTWISE_SIZES
    ),
    Workload(
        "W1b",
        "2*x + 3*y - z*w, 10^7 float64 (memory-bound)",
        builder="W1b",
        sizes=_ELEMENTWISE_SIZES,
    ),
    Workload(
        "W2",
        "softmax cross-entropy loss + gradient, 512x1000 float32",
        builder="W2",
        dtype="float32",
        sizes={"full": (512, 1000), "quick": (512, 1000), "tiny": (8, 10)},
    ),
    Workload(
        "W3",
        "MLP 784-512-256-10 SGD step, batch 256, float32",
        builder="W3",
        dtype="float32",
        params=_MLP,
        sizes={
            "full": (256, 784, 512, 256, 10),
            "quick": (256, 784, 512, 256, 10),
            "tiny": (8, 12, 16, 8, 4),
        },
    ),
    Workload(
        "W3s",
        "course MLP 64-128-64-10 tanh SGD step, batch 32, float32 (digits-shaped)",
        builder="W3s",
        dtype="float32",
        params=_MLP,
        profiled=True,
        sizes={
            "full": (32, 64, 128, 64, 10),
            "quick": (32, 64, 128, 64, 10),
            "tiny": (8, 16, 12, 8, 4),
        },
    ),
    Workload(
        "W4",
        "call overhead: a*b + 1 on 0-d float64",
        builder="W4",
        sizes={"full": (), "quick": (), "tiny": ()},
    ),
    Workload(
        "W4-float",
        "the same with Python floats as arguments",
        builder="W4-float",
        seed="W4",
        sizes={"full": (), "quick": (), "tiny": ()},
    ),
    Workload(
        "W4-npscalar",
        "the same with NumPy float64 scalars as arguments",
        builder="W4-npscalar",
        seed="W4",
        sizes={"full": (), "quick": (), "tiny": ()},
    ),
    Workload(
        "W5",
        "compile time of the W3 step, cold and warm cache, new process",
        kind="compile",
        builder="W3",
        dtype="float32",
        sizes={
            "full": (256, 784, 512, 256, 10),
            "quick": (256, 784, 512, 256, 10),
            "tiny": (8, 12, 16, 8, 4),
        },
    ),
    Workload(
        "W6",
        "row-wise logsumexp, 4096x4096 float64",
        builder="W6",
        sizes={"full": 4096, "quick": 1024, "tiny": 16},
    ),
    Workload(
        "W7-tanh",
        "50 chained tanh(x*0.9 + 0.1), (64,) float64",
        builder="W7-tanh",
        sizes={"full": 64, "quick": 64, "tiny": 64},
    ),
    Workload(
        "W7-abs",
        "50 chained abs(x*0.9 - 0.1), (64,) float64",
        builder="W7-abs",
        sizes={"full": 64, "quick": 64, "tiny": 64},
    ),
    Workload(
        "W8",
        "convnet SGD step: conv3x3(8) -> relu -> dense(10), batch 32 of 28x28, float32",
        builder="W8",
        dtype="float32",
        params=_CONVNET,
        profiled=True,
        sizes={"full": (32, 28, 8, 10), "quick": (16, 28, 8, 10), "tiny": (2, 6, 2, 3)},
    ),
    Workload(
        "W8b",
        "convnet SGD step at course scale: conv3x3(32) -> relu -> conv3x3(64) -> "
        "relu -> max-pool 2x2 -> dense(10), batch 64 of 1x28x28, float32",
        builder="W8b",
        dtype="float32",
        params=CONVNET2,
        profiled=True,
        sizes={
            "full": (64, 28, 32, 64, 10),
            "quick": (16, 28, 32, 64, 10),
            "tiny": (2, 8, 3, 4, 3),
        },
    ),
    Workload(
        "W9",
        "100-step tanh RNN forward + backward (loss, dW, dU), batch 32, hidden 256, float32",
        builder="W9",
        dtype="float32",
        sizes={"full": (100, 32, 256), "quick": (100, 32, 256), "tiny": (5, 2, 3)},
    ),
    Workload("W10", "rewrite time of 50/100/200-layer MLP training graphs", kind="rewrite"),
    Workload(
        "W11",
        "graph building: a 200-layer tanh MLP of width 64 (build, grad, compile) "
        "and the gradient of a 3000-step tanh(x*0.9 + 0.1) chain, per node",
        kind="build",
        sizes={"full": (200, 64, 3000), "quick": (200, 64, 3000), "tiny": (3, 4, 5)},
    ),
]

BY_KEY = {w.key: w for w in WORKLOADS}


def select(only: str | None) -> list[Workload]:
    """Workloads named in ``--only`` (keys or prefixes such as ``W1`` or ``W7``), in order."""
    if not only:
        return list(WORKLOADS)
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    unknown = [n for n in wanted if not any(_matches(w.key, n) for w in WORKLOADS)]
    if unknown:
        raise SystemExit(f"unknown workload(s) {unknown}; choose from {list(BY_KEY)}")
    return [w for w in WORKLOADS if any(_matches(w.key, n) for n in wanted)]


def _matches(key: str, name: str) -> bool:
    return key == name or key.startswith(name + "-")
