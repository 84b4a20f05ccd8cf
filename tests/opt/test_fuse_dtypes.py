"""Fusion keeps the graph's dtype: a float32 chain becomes a float32 composite (found by
mutation testing: every fusion test was float64, the default a lost dtype falls back to)."""

import numpy as np

import symnb as sn
from symnb.ops.composite import Composite
from tests.opt.util import assert_same_values


def test_a_float32_chain_fuses_into_a_float32_composite(rng):
    x, b = sn.tensor("x", (3, 4), "float32"), sn.tensor("b", (4,), "float32")
    values = [rng.normal(size=(3, 4)).astype("float32"), rng.normal(size=4).astype("float32")]
    f = assert_same_values([x, b], sn.tanh(x * 2 + b) * sn.exp(-x), values, {"include": ["fuse"]})
    (node,) = f.graph.toposort()
    assert isinstance(node.op, Composite) and node.op.dtype == "float32"
    assert node.outputs[0].type.dtype == np.float32 and f(*values).dtype == np.float32
