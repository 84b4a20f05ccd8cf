"""Every cache keyed on inputs, probed by a case that differs from one already seen only in
strides, dtype or Python type. The per-step layout cache of the Python executor (a kernel's
arguments per input layout), the kernels' own compile cache (per dtype) and the dtype rule's
cache of NumPy's answers (per weak scalar) each answered a seen key here once; a key that
leaves out what differs gives a wrong value or dtype, which these tests see."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends, needs_c

RNG = np.random.default_rng(35)
BASE = RNG.standard_normal((4, 4))


def _layouts():
    """The same (4, 4) shape in several layouts: C order, transposed, reversed rows and
    columns, a strided slice, a broadcast row (strides (0, 8)) and a broadcast column."""
    wide = RNG.standard_normal((4, 8))
    return {
        "c": np.ascontiguousarray(BASE),
        "transposed": BASE.T,
        "reversed": BASE[::-1, ::-1],
        "sliced": wide[:, ::2],
        "broadcast_row": np.broadcast_to(BASE[0], (4, 4)),
        "broadcast_column": np.broadcast_to(BASE[:, :1], (4, 4)),
    }


#: graphs over one (4, 4) matrix and their NumPy values: elementwise, reductions along each
#: axis, a row kernel (softmax) and a product
GRAPHS = {
    "elementwise": (lambda x: sn.tanh(x * 2.0) + x[0], lambda a: np.tanh(a * 2) + a[0]),
    "sum_axis0": (lambda x: sn.sum(x, axis=0), lambda a: a.sum(0)),
    "sum_axis1": (lambda x: sn.sum(x, axis=1), lambda a: a.sum(1)),
    "softmax": (
        lambda x: sn.softmax(x, axis=-1),
        lambda a: (
            np.exp(a - a.max(-1, keepdims=True))
            / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)
        ),
    ),
    "matmul": (lambda x: x @ x, lambda a: a @ a),
}


def _compiled(graph, backend, runner=True):
    x = sn.matrix("x", shape=(4, 4), dtype="float64")
    before = sn.config.c_runner
    sn.config.c_runner = runner
    try:
        return sn.function([x], GRAPHS[graph][0](x), backend=backend)
    finally:
        sn.config.c_runner = before


def _check_every_layout_in_turn(f, reference):
    layouts = _layouts()
    for order in (list(layouts), list(layouts)[::-1]):  # each layout after each other one
        for name in order:
            np.testing.assert_allclose(
                f(layouts[name]), reference(layouts[name]), rtol=1e-12, atol=1e-12, err_msg=name
            )


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_one_function_called_with_each_layout_of_one_shape(graph, backend):
    _check_every_layout_in_turn(_compiled(graph, backend), GRAPHS[graph][1])


@needs_c
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_the_python_executor_keys_layouts_by_strides(graph):
    """``c_runner=False``: the C kernels launched by the Python executor, whose per-step cache
    of kernel arguments is keyed by the inputs' layouts."""
    f = _compiled(graph, "c", runner=False)
    assert f._runner is None
    _check_every_layout_in_turn(f, GRAPHS[graph][1])


@pytest.mark.parametrize("backend", available_backends())
def test_kernels_of_one_graph_in_two_dtypes(backend):
    """The same graph built for float32 and float64 (and int32 and int64): each function has
    its own kernel and its own dtype, whichever was compiled first."""
    for pair in (("float64", "float32"), ("int64", "int32"), ("int8", "uint8")):
        for dtype in pair:
            x = sn.vector("x", shape=(5,), dtype=dtype)
            f = sn.function([x], x * 3 + 1, backend=backend)
            value = np.array([-2, -1, 0, 1, 120]).astype(dtype)
            got = f(value)
            want = value * np.array(3, dtype) + np.array(1, dtype)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, want)


#: Python scalars that compare (and hash) equal but promote differently under NEP 50
EQUAL_SCALARS = [(True, 1, 1.0, 1 + 0j), (False, 0, 0.0, 0j), (2, 2.0, 2 + 0j)]
DTYPES = ["bool", "int8", "uint8", "int32", "float16", "float32"]
BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (sn.maximum, np.maximum),
    # the operator against ndarray's: ``bool_array ** 2`` is np.square's int8, np.power's int64
    "pow": (lambda a, b: a**b, lambda a, b: a**b),
}


def _numpy_dtype(fn, dtype, scalar):
    try:
        return fn(np.ones(1, dtype), scalar).dtype
    except (TypeError, ValueError):
        return None


def _symnb_dtype(fn, dtype, scalar):
    try:
        return fn(sn.vector("x", shape=(3,), dtype=dtype), scalar).type.dtype
    except (sn.DTypeError, TypeError):
        return None


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_weak_scalars_of_equal_value_and_other_type_get_their_own_dtype(op, dtype):
    """``x_int8 * 2`` then ``x_int8 * 2.0`` (float64, not int8), in every order: the cache of
    the dtype rule holds the scalar's Python type with its value."""
    ours, numpys = BINARY[op]
    for scalars in EQUAL_SCALARS:
        for order in itertools.permutations(scalars):
            for scalar in order:
                want = _numpy_dtype(numpys, dtype, scalar)
                got = _symnb_dtype(ours, dtype, scalar)
                assert got == want, (op, dtype, order, scalar)
