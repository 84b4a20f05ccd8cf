"""Random fused elementwise graphs on backend c against the NumPy reference backend.

Graphs mix dtypes, broadcast, and read non-contiguous and negative-stride views; they are
compiled with the fuse rewrite on, so most become one Composite kernel.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symnb as sn

DTYPES = ["float64", "float32", "int32", "int64", "int8", "bool"]
UNARY = [sn.exp, sn.tanh, sn.sin, abs, sn.sigmoid, sn.neg]
BINARY = [sn.add, sn.sub, sn.mul, sn.true_div, sn.maximum, sn.less, sn.floor_div]
SHAPES = [(3, 4), (4,), (1, 4), (3, 1), ()]


def _views(draw, shape, dtype):
    """An array of ``shape``: contiguous, a strided slice, or a reversed view."""
    kind = draw(st.sampled_from(["plain", "strided", "reversed", "transposed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    big = (2 * max(shape, default=1),) * len(shape)
    base = rng.uniform(-3, 3, size=big)
    base = base > 0 if dtype == "bool" else base.astype(dtype)
    first = tuple(slice(0, d) for d in shape)
    if kind == "strided":
        return base[tuple(slice(None, None, 2) for _ in shape)][first]
    if kind == "reversed":
        return base[tuple(slice(None, None, -1) for _ in shape)][first]
    if kind == "transposed" and len(shape) == 2:
        return base[: shape[1], : shape[0]].T
    return np.ascontiguousarray(base[first])


@st.composite
def graphs(draw):
    n_inputs = draw(st.integers(1, 3))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n_inputs)]
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in range(n_inputs)]
    arrays = [_views(draw, s, d) for s, d in zip(shapes, dtypes)]
    steps = draw(
        st.lists(
            st.tuples(st.booleans(), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
            min_size=1,
            max_size=6,
        )
    )
    return arrays, steps


def build(inputs, steps):
    values = list(inputs)
    for unary, op_i, a, b in steps:
        x, y = values[a % len(values)], values[b % len(values)]
        if unary:
            op = UNARY[op_i % len(UNARY)]
            if x.type.dtype.kind == "b" and op in (sn.neg, sn.sigmoid):
                continue  # NumPy refuses negating booleans
            values.append(op(x))
        else:
            op = BINARY[op_i % len(BINARY)]
            if (
                x.type.dtype.kind == "b"
                and y.type.dtype.kind == "b"
                and op in (sn.sub, sn.floor_div)
            ):
                continue
            values.append(op(x, y))
    return values[-1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_random_fused_graphs_match_numpy_backend(case):
    arrays, steps = case
    inputs = [sn.tensor(f"x{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]
    out = build(inputs, steps)
    with np.errstate(all="ignore"):
        want = sn.function(inputs, out, backend="py")(*arrays)
        got = sn.function(inputs, out, backend="c")(*arrays)
    assert got.dtype == want.dtype and got.shape == want.shape
    # a float32 intermediate (exp of a float32 input added to a float64 one) carries vector
    # math's few float32 ulp into a float64 result (docs/c_backend.md: accuracy)
    single = [a.dtype for a in (want, *arrays) if a.dtype in (np.float32, np.float16)]
    rtol = 1e-5 if single else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
