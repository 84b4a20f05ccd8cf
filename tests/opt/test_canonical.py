"""Canonicalize rules: each fires on its pattern and not on near-misses."""

import numpy as np
import pytest

import symnb as sn
from tests.opt.util import assert_same_values, fired, ops_of

CANONICALIZE = {"include": ["canonicalize"]}


@pytest.fixture
def x():
    return sn.tensor("x", shape=(None, 3))


def test_identities_disappear(x, rng):
    a = rng.uniform(0.5, 2, (2, 3))
    for expr, rule in [
        (x * 1, "mul_by_one"),
        (1.0 * x, "mul_by_one"),
        (x / 1, "div_by_one"),
        (x**1, "pow_one"),
        (x + 0, "add_zero"),
        (0 + x, "add_zero"),
        (x - 0.0, "sub_zero"),
        (sn.neg(sn.neg(x)), "neg_of_neg"),
        (sn.exp(sn.log(x)), "exp_of_log"),
        (sn.log(sn.exp(x)), "log_of_exp"),
    ]:
        f = assert_same_values([x], expr, [a], CANONICALIZE)
        assert f.rewrites.counts() == {rule: 1}, rule
        assert len(f.graph) == 0 and f.graph.outputs[0] is x


def test_identity_near_misses_are_kept(x):
    cases = [
        x * 2,  # not the neutral element
        sn.tensor("r", shape=(1, 3)) * np.ones((4, 3)),  # the constant makes it larger
        sn.tensor("i", shape=(3,), dtype="int8") * np.float32(1),  # the dtype changes
        sn.tensor("i", shape=(3,), dtype="int64") + 0.0,  # int + float -> float64
        sn.exp(sn.log(sn.tensor("i", shape=(3,), dtype="int64"))),  # int -> float
        x + np.array([0.0, 1.0, 0.0]),  # not all zeros
    ]
    for expr in cases:
        ins = [v for v in sn.core.graph.leaves([expr]) if type(v) is sn.Variable]
        counts = fired(ins, expr, CANONICALIZE)
        assert not set(counts) - {"constant_fold", "merge_nodes"}, (expr, counts)


@pytest.mark.parametrize("mode", ["fast", "stable"])
def test_complex_log_of_exp_and_plus_zero_keep_numpys_values(mode):
    """log(exp(z)) wraps the imaginary part into (-pi, pi] (log(exp(4j)) is (4 - 2*pi)j, was
    4j), and z + 0 makes an imaginary part of -0.0 +0.0, which picks the side of sqrt's and
    log's branch cut (sqrt((-4-0j) + 0) is 2j, was -2j): docs/rewrites.md."""
    z = sn.tensor("z", shape=(4,), dtype="complex128")
    values = np.array([4j, 2 + 3.5j, complex(-4.0, -0.0), complex(-1.0, -0.0)])
    outs = [sn.log(sn.exp(z)), sn.sqrt(z + 0), sn.log(0.0 + z)]
    f = sn.function([z], outs, backend="py", optimize=mode)
    got = f(values)
    want = [np.log(np.exp(values)), np.sqrt(values + 0), np.log(0.0 + values)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
    assert not {"log_of_exp", "add_zero"} & set(f.rewrites.counts())
    x = sn.vector("x")  # (real floats: both fire)
    assert fired([x], sn.log(sn.exp(x)) + 0) == {"log_of_exp": 1, "add_zero": 1}


def test_x_minus_x_is_zero_of_its_shape(rng):
    x = sn.tensor("x", shape=(None, 3))
    f = assert_same_values([x], x - x, [rng.uniform(size=(4, 3))], CANONICALIZE)
    assert f.rewrites.counts() == {"sub_self": 1}
    assert f(np.ones((5, 3))).shape == (5, 3)
    known = sn.tensor("k", shape=(2, 3), dtype="int32")
    g = sn.function([known], known - known, optimize=CANONICALIZE, backend="py")
    assert len(g.graph) == 0 and isinstance(g.graph.outputs[0], sn.Constant)
    assert fired([x], x - sn.exp(x), CANONICALIZE) == {}


def test_collect_terms(rng):
    x, a, b = sn.matrix("x"), sn.scalar("a"), sn.scalar("b")
    values = [rng.uniform(size=(2, 3)), 2.0, 3.0]
    f = assert_same_values([x, a, b], a * x + x * b, values, CANONICALIZE)
    assert f.rewrites.counts() == {"collect_add": 1} and sorted(ops_of(f)) == ["add", "mul"]
    f = assert_same_values([x, a, b], a * x - b * x, values, CANONICALIZE)
    assert f.rewrites.counts() == {"collect_sub": 1}
    # constants collect and fold: 2x + 3x -> 5x
    f = assert_same_values([x], 2.0 * x + x * 3.0, values[:1], CANONICALIZE)
    assert ops_of(f) == ["mul"] and f.rewrites.counts()["constant_fold"] == 1


def test_collect_terms_near_misses(rng):
    x, y, a, b = sn.matrix("x"), sn.matrix("y"), sn.scalar("a"), sn.scalar("b")
    assert fired([x, y, a, b], a * x + b * y, CANONICALIZE) == {}  # no common factor
    shared = a * x  # used elsewhere: collecting would compute a*x twice
    assert fired([x, a, b], [shared + b * x, shared], CANONICALIZE) == {}


@pytest.mark.parametrize(
    "dtypes, values",
    [
        (("int8", "int16", "int8"), (100, 1, 2)),  # int8 a*x wraps, the int16 sum does not
        (("int8", "int8", "int16"), (100, 100, 1)),  # int16 products, a + b wraps in int8
        (("float16", "float16", "float32"), (60000.0, 60000.0, 2.0)),  # a + b is inf
    ],
)
def test_collect_terms_only_in_one_dtype(dtypes, values):
    """(a + b) * x is a*x + b*x only where both products, a + b and the sum share a dtype."""
    a, b, x = (sn.tensor(n, shape=(1,), dtype=d) for n, d in zip("abx", dtypes))
    arrays = [np.array([v], d) for v, d in zip(values, dtypes)]
    va, vb, vx = arrays
    for out, want in ((a * x + b * x, va * vx + vb * vx), (a * x - b * x, va * vx - vb * vx)):
        f = sn.function([a, b, x], out, backend="py", optimize=CANONICALIZE)
        got = f(*arrays)
        assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
        assert not {"collect_add", "collect_sub"} & set(f.rewrites.counts())


def test_collect_terms_in_one_integer_dtype_wraps_as_written():
    a, b, x = (sn.tensor(n, shape=(1,), dtype="int8") for n in "abx")
    arrays = [np.array([v], "int8") for v in (100, 100, 2)]
    f = assert_same_values([a, b, x], a * x + b * x, arrays, CANONICALIZE)
    assert f.rewrites.counts() == {"collect_add": 1}
    np.testing.assert_array_equal(f(*arrays), [-112])  # NumPy: -56 + -56 wraps the same


def test_dimshuffle_and_reshape_chains(rng):
    t = sn.tensor("t", shape=(2, 3, 4))
    value = rng.uniform(size=(2, 3, 4))
    f = assert_same_values([t], sn.transpose(sn.transpose(t, (1, 0, 2)), (2, 1, 0)), [value])
    assert ops_of(f) == ["dim_shuffle"] and f.rewrites.counts()["dimshuffle_chain"] == 1
    f = assert_same_values([t], t.T.T, [value], CANONICALIZE)
    assert len(f.graph) == 0
    f = assert_same_values([t], t.reshape(6, 4).reshape(4, 6), [value], CANONICALIZE)
    assert ops_of(f) == ["reshape"] and f.rewrites.counts() == {"reshape_chain": 1}
    f = assert_same_values([t], t.reshape(2, 3, 4), [value], CANONICALIZE)
    assert f.rewrites.counts() == {"reshape_noop": 1}


@pytest.mark.parametrize("mode", ["fast", "stable"])
def test_reshape_chain_keeps_a_reshape_that_can_fail(mode):
    """reshape(x, (4, -1)) of 6 elements raises as written: dropping it would hide that."""
    x = sn.vector("x")
    f = sn.function([x], sn.reshape(sn.reshape(x, (4, -1)), (-1,)), backend="py", optimize=mode)
    assert "reshape_chain" not in f.rewrites.counts()
    with pytest.raises(Exception, match="cannot reshape array of size 6"):
        f(np.arange(6.0))
    np.testing.assert_array_equal(f(np.arange(8.0)), np.arange(8.0))
    f = sn.function([x], sn.reshape(sn.reshape(x, (2, 3)), (-1,)), backend="py", optimize=mode)
    assert "reshape_chain" not in f.rewrites.counts()


@pytest.mark.parametrize(
    "shape, inner, outer",
    [(("n", 6), (-1, 3), (-1,)), ((None, 6), (-1, 2), (-1,)), ((None,), (-1,), (-1, 1))],
)
def test_reshape_chain_drops_a_reshape_that_cannot_fail(shape, inner, outer, rng):
    """Every input the outer reshape accepts fits the inner one: the chain is one reshape."""
    t = sn.tensor("t", shape=shape)
    value = rng.uniform(size=tuple(12 if d in ("n", None) else d for d in shape))
    f = assert_same_values([t], sn.reshape(sn.reshape(t, inner), outer), [value])
    assert f.rewrites.counts().get("reshape_chain") == 1, f.rewrites.counts()


def test_dimshuffle_chain_near_miss_keeps_other_axes(rng):
    t = sn.tensor("t", shape=(2, 3, 4))
    f = assert_same_values([t], sn.expand_dims(t.T, 0), [rng.uniform(size=(2, 3, 4))])
    assert ops_of(f) == ["dim_shuffle"] and f.graph.outputs[0].type.shape == (1, 4, 3, 2)
    assert fired([t], t.reshape(2, 3, 4) * 2, CANONICALIZE) == {"reshape_noop": 1}
    free = sn.tensor("u", shape=(None, 4))
    assert fired([free], free.reshape(-1, 4), CANONICALIZE) == {}  # shape not known


def test_shape_of_known_dims_is_a_constant():
    t = sn.tensor("t", shape=(2, 3))
    f = sn.function([t], t.shape, optimize=CANONICALIZE, backend="py")
    assert f.rewrites.counts() == {"shape_of_known": 1}
    np.testing.assert_array_equal(f(np.zeros((2, 3))), [2, 3])
    u = sn.tensor("u", shape=("batch", 3))
    assert fired([u], u.shape, CANONICALIZE) == {}


def test_a_slice_of_an_elementwise_op_of_one_input_slices_the_input(rng):
    """``cast(labels)[i * n:(i + 1) * n]`` casts the slice alone; a value read elsewhere
    too, or an op of two inputs, keeps its order."""
    labels = sn.shared(rng.uniform(0, 9, 50), name="labels")
    i = sn.scalar("i", dtype="int64")
    batch = sn.cast(labels, "int32")[i * 10 : (i + 1) * 10]
    f = assert_same_values([i], [batch], [np.int64(2)])
    assert f.rewrites.counts().get("subtensor_of_elemwise") == 1
    (cast,) = [n for n in f.graph.toposort() if type(n.op).op_name() == "cast"]
    assert type(cast.inputs[0].owner.op).op_name() == "subtensor"  # it reads the slice
    x = sn.tensor("x", shape=(None, None))
    k = sn.scalar("k", dtype="int64")
    for expr in [sn.exp(x)[k, ::-1], sn.tanh(x)[None, 1:k]]:
        f = assert_same_values([x, k], [expr], [rng.normal(size=(4, 5)), np.int64(-2)])
        assert f.rewrites.counts().get("subtensor_of_elemwise") == 1
    shared = sn.exp(x)
    for expr in [[shared[k], shared], [(x + x.T)[k]]]:
        assert "subtensor_of_elemwise" not in fired([x, k], expr)
