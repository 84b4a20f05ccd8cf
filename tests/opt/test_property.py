"""Random expression graphs from the op catalogue compute the same values optimised or not."""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symnb as sn

UNARY = [sn.exp, sn.tanh, sn.sin, sn.cos, sn.sigmoid, sn.neg, sn.abs, sn.square, sn.softplus]
SAFE_DOMAIN = [sn.log, sn.sqrt, sn.log1p]  # applied to abs(value) + 1: always in the domain
BINARY = [sn.add, sn.sub, sn.mul, sn.maximum]
REDUCE = [sn.sum, sn.mean, sn.max]
LEAVES = ["x", "y", "b", 0.0, 1.0, 2.0]


@st.composite
def expressions(draw, depth=4):
    """A nested tuple describing an expression over x, y (3x4 matrices) and b (a row of 4)."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(LEAVES))
    kind = draw(
        st.sampled_from(
            [
                "unary",
                "domain",
                "binary",
                "binary",
                "reduce",
                "transpose",
                "log_of_one_plus",
                "pow2",
                "self_sub",
            ]
        )
    )
    if kind in ("binary",):
        return (
            kind,
            draw(st.integers(0, len(BINARY) - 1)),
            draw(expressions(depth=depth - 1)),
            draw(expressions(depth=depth - 1)),
        )
    index = draw(st.integers(0, 8))
    return (kind, index, draw(expressions(depth=depth - 1)))


def build(tree, leaves):
    if not isinstance(tree, tuple):
        return leaves[tree] if isinstance(tree, str) else sn.constant(np.float64(tree))
    kind, index, *args = tree
    parts = [build(a, leaves) for a in args]
    if kind == "binary":
        return BINARY[index](*parts)
    (a,) = parts
    if kind == "unary":
        return UNARY[index % len(UNARY)](a)
    if kind == "domain":
        return SAFE_DOMAIN[index % len(SAFE_DOMAIN)](sn.abs(a) + 1.0)
    if kind == "reduce":
        return REDUCE[index % len(REDUCE)](a, axis=-1, keepdims=True) if a.ndim else a
    if kind == "transpose":
        return a.T.T * 1.0
    if kind == "log_of_one_plus":
        return sn.log(1.0 + sn.abs(a))
    if kind == "pow2":
        return sn.tanh(a) ** 2 + 0.0
    return a - a


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(), expressions(), st.integers(0, 2**32 - 1))
def test_optimised_graphs_compute_the_same_values(tree, other, seed):
    x, y, b = sn.matrix("x"), sn.matrix("y"), sn.vector("b")
    leaves = {"x": x, "y": y, "b": b}
    with warnings.catch_warnings():  # random graphs broadcast b against columns on purpose
        warnings.simplefilter("ignore", sn.ShapeWarning)
        outputs = [build(tree, leaves) + 0.0 * x, build(other, leaves) * 1.0]
    rng = np.random.default_rng(seed)
    values = [rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=4)]
    plain = sn.function([x, y, b], outputs, optimize="none", backend="py")
    fast = sn.function([x, y, b], outputs, optimize="fast", backend="py")
    with np.errstate(all="ignore"):
        want, got = plain(*values), fast(*values)
    for w, g in zip(want, got):
        assert (w.dtype, w.shape) == (g.dtype, g.shape)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)
