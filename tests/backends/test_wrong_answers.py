"""Regressions for wrong answers found by fuzzing (issue #17), on every backend.

Each case is a class of graphs, not one sample: every dtype pair where a kernel might convert
an operand that must keep its own dtype, every unsigned and narrow integer dtype an op's
reference might negate in, every elementwise op with no C form under every reduction kind.
"""

import warnings

import numpy as np
import pytest

import symnb as sn
from tests.helpers import check, tolerance

UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTEGERS = ["int8", "int16", "int32", "int64", *UNSIGNED, "bool"]


def compiled(inputs, output, backend, optimize="fast"):
    return sn.function(inputs, output, backend=backend, optimize=optimize)


def reference(fn, *arrays):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*arrays)


# -- where's condition is tested in its own dtype ---------------------------------------------
CONDITIONS = [
    ("float64", [0.5, -0.25, 0.0, 1e-300]),
    ("float32", [1e-40, -0.5, 0.0, 2.0]),
    ("int64", [256, -512, 0, 2**40]),
    ("uint64", [2**63, 256, 0, 1]),
    ("int16", [256, 0, -256, 1]),
]


@pytest.mark.parametrize("cond_dtype,values", CONDITIONS)
@pytest.mark.parametrize("branch", ["int8", "int32", "float32", "bool", "uint8"])
def test_where_condition_keeps_its_dtype(backend, cond_dtype, values, branch):
    c = sn.tensor("c", shape=(4,), dtype=cond_dtype)
    a = sn.tensor("a", shape=(4,), dtype=branch)
    b = sn.tensor("b", shape=(4,), dtype=branch)
    cv = np.array(values, cond_dtype)
    av, bv = np.ones(4, branch), np.zeros(4, branch)
    for optimize in ("fast", "none"):
        got = compiled([c, a, b], sn.where(c, a, b), backend, optimize)(cv, av, bv)
        check(got, np.where(cv, av, bv))
    fused = compiled([c, a, b], sn.where(c * 1, a, b) + a, backend)(cv, av, bv)
    check(fused, np.where(cv * 1, av, bv) + av)


# -- formulas that negate or subtract run in a float dtype, not a wrapping integer one -------
@pytest.mark.parametrize("dtype", INTEGERS)
def test_sigmoid_of_integers(backend, dtype):
    values = np.array([0, 1, 2, 5, 100], dtype if dtype != "bool" else "int64")
    values = values.astype(dtype)
    x = sn.tensor("x", shape=(5,), dtype=dtype)
    got = compiled([x], sn.sigmoid(x), backend)(values)
    f = np.exp(np.zeros((), dtype)).dtype
    want = (1 / (1 + np.exp(-values.astype(np.float64)))).astype(f)
    check(got, want, rtol=tolerance(f))
    assert np.all(got >= 0.5)  # sigmoid of a non-negative value: never the wrapped 0


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "int8", "int16"])
def test_sigmoid_binary_crossentropy_of_integers(backend, dtype):
    x = sn.tensor("x", shape=(3,), dtype=dtype)
    t = sn.tensor("t", shape=(3,), dtype=dtype)
    xv, tv = np.array([100, 2, 0], dtype), np.array([100, 1, 0], dtype)
    got = compiled([x, t], sn.sigmoid_binary_crossentropy(x, t), backend)(xv, tv)
    xf, tf = xv.astype(np.float64), tv.astype(np.float64)
    want = np.maximum(xf, 0) - xf * tf + np.log1p(np.exp(-np.abs(xf)))
    np.testing.assert_allclose(got, want, rtol=2e-3)


# -- a reduction over an elementwise op with no C form ----------------------------------------
NO_C_FORM = [sn.digamma, sn.erfinv, sn.trigamma, sn.gamma, sn.gammaln]
REDUCTIONS = [sn.sum, sn.max, sn.min, sn.prod, sn.mean, sn.any, sn.all]


@pytest.mark.parametrize("dtype", ["int32", "float32", "uint8"])
def test_reduction_over_op_without_c_form(backend, dtype):
    x = sn.tensor("x", shape=(2, 3), dtype=dtype)
    xv = np.array([[1, 2, 3], [2, 3, 1]], dtype)
    graphs = [sn.any(x**x), sn.sum(x**x, axis=0)]
    for op, reduction in zip(NO_C_FORM * 2, REDUCTIONS + REDUCTIONS[:3]):
        ins = op(x / 4) if op is sn.erfinv else op(x)
        graphs += [reduction(ins), reduction(ins * 2 + 1, axis=1)]
    got = compiled([x], graphs, backend)(xv)
    want = compiled([x], graphs, "py", "none")(xv)
    for g, w in zip(got, want):
        check(g, w, rtol=1e-5)


# -- out-of-range float -> integer casts do not depend on fusion -------------------------------
@pytest.mark.parametrize("target", ["uint8", "uint16", "uint32", "uint64", "int8", "int32"])
def test_out_of_range_casts_follow_numpy_fused_or_not(backend, target):
    y = sn.tensor("y", shape=(5,), dtype="float64")
    yv = np.array([-3.0, -1.0, 1.0, 2.5, 300.0])
    alone = compiled([y], y.astype(target), backend)(yv)
    check(alone, reference(yv.astype, target))
    fused = compiled([y], (y * 1.5 - 0.5).astype(target) + 1, backend)(yv)
    want = reference(lambda v: (v * 1.5 - 0.5).astype(target) + np.array(1, target), yv)
    check(fused, want)


# -- clip with lo > hi gives hi, and NaN bounds give NaN, as np.clip (found by tests/fuzz) ------
def test_clip_with_crossed_or_nan_bounds(backend):
    x, lo, hi = (sn.tensor(n, shape=(5,), dtype="float64") for n in "x lo hi".split())
    xv = np.array([-1.0, 0.5, 2.0, np.nan, 3.0])
    lov = np.array([1.0, 1.0, 0.0, 0.0, np.nan])
    hiv = np.array([0.0, 0.25, 1.0, 1.0, 5.0])
    got = compiled([x, lo, hi], sn.clip(x, lo, hi), backend)(xv, lov, hiv)
    check(got, np.clip(xv, lov, hiv))
    s = sn.tensor("s", shape=(3, 4), dtype="int8")
    m = sn.tensor("m", shape=(1, 4), dtype="float64")
    sv, mv = np.arange(-6, 6, dtype="int8").reshape(3, 4) * 9, np.array([[-20.0, 0, 5, 60]])
    got = compiled([s, m], sn.clip(m, s, m), backend)(sv, mv)
    check(got, np.clip(mv, sv, mv))


# -- comparisons with a Python int the dtype cannot hold are exact, as NumPy's (tests/fuzz) ----
OUT_OF_RANGE = [
    ("uint64", [-1, -300]),
    ("uint8", [-1, 300]),
    ("int8", [-129, 1000]),
    ("int64", [2**63, 2**64 - 1]),
    ("uint32", [2**32, -7]),
]


@pytest.mark.parametrize("dtype,scalars", OUT_OF_RANGE)
def test_comparison_with_out_of_range_python_int(backend, dtype, scalars):
    x = sn.tensor("x", shape=(3,), dtype=dtype)
    info = np.iinfo(dtype)
    xv = np.array([info.min, 0, info.max], dtype)
    ops = [sn.less, sn.less_equal, sn.greater, sn.greater_equal, sn.equal, sn.not_equal]
    outs = [op(x, n) for op in ops for n in scalars] + [op(n, x) for op in ops for n in scalars]
    got = compiled([x], outs, backend)(xv)
    numpy_ops = [np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal]
    want = [op(xv, n) for op in numpy_ops for n in scalars]
    want += [op(n, xv) for op in numpy_ops for n in scalars]
    for g, w in zip(got, want):
        check(g, w)
