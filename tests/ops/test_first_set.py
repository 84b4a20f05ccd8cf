"""The foundation's op set against NumPy: values, dtypes, broadcasting, 0-d and empty dims."""

import operator

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends, check, random_array
from tests.helpers import run as run_on

BINARY = {
    "add": (operator.add, np.add),
    "sub": (operator.sub, np.subtract),
    "mul": (operator.mul, np.multiply),
    "truediv": (operator.truediv, np.true_divide),
    "floordiv": (operator.floordiv, np.floor_divide),
    "mod": (operator.mod, np.mod),
    "pow": (operator.pow, np.power),
    "lt": (operator.lt, np.less),
    "le": (operator.le, np.less_equal),
    "gt": (operator.gt, np.greater),
    "ge": (operator.ge, np.greater_equal),
    "eq": (operator.eq, np.equal),
    "ne": (operator.ne, np.not_equal),
}
BITWISE = {"and": (operator.and_, np.bitwise_and), "or": (operator.or_, np.bitwise_or)}
UNARY = {
    "neg": (operator.neg, np.negative),
    "abs": (abs, np.abs),
    "exp": (sn.exp, np.exp),
    "log": (sn.log, np.log),
    "sqrt": (sn.sqrt, np.sqrt),
    "tanh": (sn.tanh, np.tanh),
    "sin": (sn.sin, np.sin),
    "cos": (sn.cos, np.cos),
    "sigmoid": (sn.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
}
SHAPES = [
    ((3, 4), (3, 4)),
    ((3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((), (5,)),
    ((0, 3), (3,)),
    ((), ()),
]
DTYPES = [
    ("float64", "float64"),
    ("float32", "float64"),
    ("float32", "int64"),
    ("int32", "int8"),
    ("int64", "int64"),
    ("uint8", "float32"),
]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtypes", DTYPES)
def test_binary_ops_match_numpy(name, shapes, dtypes, rng, backend):
    sym, ref = BINARY[name]
    a, b = (random_array(rng, s, d) for s, d in zip(shapes, dtypes))
    with np.errstate(all="ignore"):
        check(run_on(sym, a, b, backend=backend), ref(a, b))


@pytest.mark.parametrize("name", sorted(BITWISE))
@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int32", "int64"), ("uint8", "bool")])
def test_bitwise_ops_match_numpy(name, dtypes, rng, backend):
    sym, ref = BITWISE[name]
    a, b = random_array(rng, (3, 4), dtypes[0]), random_array(rng, (4,), dtypes[1])
    check(run_on(sym, a, b, backend=backend), ref(a, b))
    check(run_on(operator.invert, a, backend=backend), np.invert(a))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(3, 4), (), (0,)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8"])
def test_unary_ops_match_numpy(name, shape, dtype, rng, backend):
    sym, ref = UNARY[name]
    a = random_array(rng, shape, dtype)
    want = ref(a) if name != "sigmoid" else ref(a).astype(np.exp(a).dtype)
    check(run_on(sym, a, backend=backend), want)


def test_sigmoid_is_finite_at_the_tails(backend):
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    out = run_on(sn.sigmoid, x, backend=backend)
    assert np.all(np.isfinite(out)) and out[0] == 0 and out[-1] == 1 and out[2] == 0.5


def test_weak_python_scalars_follow_numpy(backend):
    a = np.arange(4, dtype="float32")
    check(run_on(lambda x: x * 2.5 + 1, a, backend=backend), a * 2.5 + 1)
    i8 = np.arange(4, dtype="int8")
    check(run_on(lambda x: x + 3, i8, backend=backend), i8 + 3)
    check(run_on(lambda x: 2**x, i8, backend=backend), 2**i8)
    with pytest.raises(sn.DTypeError, match="int8"):
        sn.vector("v", dtype="int8") + 1000


@pytest.mark.parametrize(
    "fn,ref", [(sn.sum, np.sum), (sn.mean, np.mean), (sn.max, np.max), (sn.min, np.min)]
)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_reductions_match_numpy(fn, ref, axis, keepdims, dtype, rng, backend):
    a = random_array(rng, (2, 3, 4), dtype)
    check(
        run_on(lambda x: fn(x, axis=axis, keepdims=keepdims), a, backend=backend),
        ref(a, axis=axis, keepdims=keepdims),
    )


def test_reduction_of_empty_and_0d(backend):
    check(run_on(sn.sum, np.zeros((0, 3)), backend=backend), np.zeros(()))
    check(run_on(lambda x: sn.sum(x, axis=0), np.zeros((0, 3)), backend=backend), np.zeros(3))
    check(run_on(sn.mean, np.array(2.0), backend=backend), np.array(2.0))


def test_method_sugar(rng, backend):
    a = random_array(rng, (3, 4), "float64")
    check(run_on(lambda x: x.sum(axis=1), a, backend=backend), a.sum(axis=1))
    check(
        run_on(lambda x: x.mean(axis=0, keepdims=True), a, backend=backend),
        a.mean(axis=0, keepdims=True),
    )
    check(run_on(lambda x: x.max(), a, backend=backend), a.max())
    check(run_on(lambda x: x.min(axis=-1), a, backend=backend), a.min(axis=-1))
    check(run_on(lambda x: x.T, a, backend=backend), a.T)
    check(run_on(lambda x: x.reshape(2, 6), a, backend=backend), a.reshape(2, 6))
    check(run_on(lambda x: x.reshape((-1,)), a, backend=backend), a.reshape(-1))
    check(run_on(lambda x: x.astype("int32"), a, backend=backend), a.astype("int32"))
    check(run_on(lambda x: x.shape, a, backend=backend), np.array(a.shape))
    check(run_on(lambda x: -(+x), a, backend=backend), -a)
    assert sn.vector("v").ndim == 1 and sn.vector("v", dtype="int8").dtype == np.int8


@pytest.mark.parametrize(
    "sa,sb",
    [
        ((3, 4), (4, 5)),
        ((4,), (4, 5)),
        ((3, 4), (4,)),
        ((4,), (4,)),
        ((2, 3, 4), (4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((0, 4), (4, 2)),
    ],
)
@pytest.mark.parametrize(
    "dtypes",
    [("float64", "float64"), ("float32", "float64"), ("int32", "int64"), ("float32", "float32")],
)
def test_matmul_and_dot_match_numpy(sa, sb, dtypes, rng, backend):
    a, b = random_array(rng, sa, dtypes[0]), random_array(rng, sb, dtypes[1])
    check(run_on(operator.matmul, a, b, backend=backend), np.matmul(a, b))
    if len(sa) <= 2 and len(sb) <= 2:
        check(run_on(sn.dot, a, b, backend=backend), np.dot(a, b))


@pytest.mark.parametrize(
    "build, reference",
    [
        (lambda a, b: a * b, np.multiply),
        (lambda a, b: sn.where(a > 0, b, 0.0), lambda a, b: np.where(a > 0, b, 0.0)),
        (lambda a, b: sn.clip(a, b, 10.0), lambda a, b: np.clip(a, b, 10.0)),
        (
            lambda a, b: sn.concatenate([a + b, a]),
            lambda a, b: np.concatenate([a + b, a]),
        ),
        (lambda a, b: sn.zeros_like(a + b) + a, lambda a, b: np.zeros_like(a + b) + a),
    ],
    ids=["mul", "where", "clip", "concatenate", "zeros_like"],
)
def test_a_named_dim_against_an_unknown_one_broadcasts_to_the_runtime_size(
    build, reference, backend
):
    """a of ("n",) with b of (None,): n may be 1 where b is longer, so the result's dim is
    unknown (it was n, which said 1 for 3 values, and sizes built on it were wrong)."""
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=(None,))
    out = build(a, b)
    assert None in out.type.shape and "n" not in out.type.shape
    av, bv = np.array([1.0]), np.array([0.0, 2.0, 3.0])
    got = sn.function([a, b], out, backend=backend)(av, bv)
    check(got, reference(av, bv))


def test_transpose_reshape_cast_with_named_dims(rng):
    x = sn.tensor("x", shape=("batch", 28, 28))
    flat = x.reshape(("batch", 784))
    assert flat.type.shape == ("batch", 784)
    a = random_array(rng, (5, 28, 28), "float64")
    np.testing.assert_array_equal(sn.function([x], flat)(a), a.reshape(5, 784))
    t = sn.transpose(x, (1, 2, 0))
    assert t.type.shape == (28, 28, "batch")
    assert sn.cast(x, "float32").dtype == np.float32
    assert sn.cast(x, "float64") is x


def test_reshape_refuses_wrong_element_counts():
    x = sn.tensor("x", shape=(4, 6))
    with pytest.raises(sn.ShapeError, match=r"24 elements.*\(5, 5\)"):
        x.reshape(5, 5)
    with pytest.raises(sn.ShapeError, match="does not split"):
        x.reshape(-1, 5)
    with pytest.raises(sn.ShapeError, match="'seq' is not a named dim"):
        sn.tensor("y", shape=("batch", 3)).reshape(("seq", 3))


@pytest.mark.parametrize("backend", available_backends())
def test_print_value_prints_each_time_it_is_computed(backend, capsys):
    x = sn.vector("x")
    y = sn.print_value(x * 2, "doubled", attrs=("shape", "__str__")) + 1
    f = sn.function(
        [x], [y, sn.print_value(x * 2, "doubled", attrs=("shape", "__str__"))], backend=backend
    )
    got, twin = f(np.arange(3.0))
    np.testing.assert_array_equal(got, [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(twin, [0.0, 2.0, 4.0])
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["doubled shape = (3,)", "doubled __str__ = [0. 2. 4.]"] * 2  # not merged
    g = sn.grad(sn.sum(sn.print_value(x * x, "sq")), x)
    np.testing.assert_array_equal(g.eval({x: np.array([1.0, -2.0])}), [2.0, -4.0])
