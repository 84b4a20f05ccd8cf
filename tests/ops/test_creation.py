"""Creation ops against NumPy: zeros/ones/full (and *_like), alloc/broadcast_to, arange, eye,
one_hot; shapes from ints, scalar variables and ``x.shape``; dtypes as NumPy's."""

import re

import numpy as np
import pytest

import symnb as sn
from symnb.core.dims import parse_dim
from tests.helpers import check, random_array, reference_backend
from tests.helpers import run as run_on


def _constant_output(build, backend):
    """Compile a graph with no inputs and run it."""
    return sn.function([], build(), backend=backend)()


# id -> (symbolic builder with no inputs, NumPy result)
CONSTANT_ROWS = {
    "zeros": (lambda: sn.zeros((2, 3)), np.zeros((2, 3))),
    "zeros_int": (lambda: sn.zeros(4, dtype="int32"), np.zeros(4, "int32")),
    "ones_0d": (lambda: sn.ones(()), np.ones(())),
    "ones_empty": (lambda: sn.ones((0, 2), dtype="bool"), np.ones((0, 2), "bool")),
    "full_int": (lambda: sn.full((2, 2), 7), np.full((2, 2), 7)),
    "full_float": (lambda: sn.full(3, 2.5), np.full(3, 2.5)),
    "full_dtype": (lambda: sn.full((2,), 3, dtype="float32"), np.full((2,), 3, "float32")),
    "arange": (lambda: sn.arange(5), np.arange(5)),
    "arange_float": (lambda: sn.arange(0.5, 3.0, 0.5), np.arange(0.5, 3.0, 0.5)),
    "arange_negative": (lambda: sn.arange(5, -3, -2), np.arange(5, -3, -2)),
    "arange_empty": (lambda: sn.arange(3, 1), np.arange(3, 1)),
    "arange_dtype": (lambda: sn.arange(1, 7, 2, dtype="int8"), np.arange(1, 7, 2, dtype="int8")),
    "eye": (lambda: sn.eye(3), np.eye(3)),
    "eye_rect_k": (lambda: sn.eye(2, 4, k=1), np.eye(2, 4, k=1)),
    "eye_k_neg_int": (lambda: sn.eye(3, k=-1, dtype="int64"), np.eye(3, k=-1, dtype="int64")),
    "alloc": (lambda: sn.alloc(1.5, 2, 3), np.full((2, 3), 1.5)),
    "broadcast_to": (lambda: sn.broadcast_to(np.arange(3), (2, 3)), np.tile(np.arange(3), (2, 1))),
}


@pytest.mark.parametrize("name", sorted(CONSTANT_ROWS))
def test_creation_matches_numpy(name, backend):
    build, want = CONSTANT_ROWS[name]
    check(_constant_output(build, backend), want)


def test_static_shapes_of_constant_arguments():
    assert sn.arange(5).type.shape == (5,) and sn.arange(5).dtype == np.int64
    assert sn.arange(0.0, 1.0, 0.3).type.shape == (4,)
    assert sn.arange(2, 2).type.shape == (0,)
    assert sn.eye(3, 4).type.shape == (3, 4) and sn.eye(3).dtype == np.float64
    assert sn.zeros((2, 0)).type.shape == (2, 0)


@pytest.mark.parametrize("like", ["zeros_like", "ones_like"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_like_ops_keep_type_and_named_dims(like, dtype, rng, backend):
    a = random_array(rng, (3, 2), dtype)
    check(run_on(getattr(sn, like), a, backend=backend), getattr(np, like)(a))
    x = sn.tensor("x", shape=("batch", None, 4), dtype=dtype)
    assert getattr(sn, like)(x).type == x.type
    assert getattr(sn, like)(x, dtype="float64").type.shape == ("batch", None, 4)


def test_full_like_casts_the_value_to_the_dtype(rng, backend):
    a = random_array(rng, (2, 3), "int32")
    check(run_on(lambda x: sn.full_like(x, 2.7), a, backend=backend), np.full_like(a, 2.7))
    f = random_array(rng, (4,), "float32")
    check(run_on(lambda x: sn.full_like(x, 2.7), f, backend=backend), np.full_like(f, 2.7))
    check(run_on(lambda x: sn.full_like(x, 1, dtype="int8"), f, backend=backend), np.ones(4, "i1"))


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_full_of_a_symbolic_fill_casts_it_to_the_dtype(rng, dtype, backend):
    """A symbolic fill with a dtype raised a TypeError saying to use sn.stack."""
    a = random_array(rng, (2, 3), "float64")
    got = run_on(lambda v: sn.full((3, 4), v.sum(), dtype=dtype), a, backend=backend)
    check(got, np.full((3, 4), a.sum(), dtype=dtype))
    v = sn.tensor("v", shape=(2, 3))
    assert sn.full((3, 4), v.sum(), dtype=dtype).type == sn.TensorType(dtype, (3, 4))


def test_shapes_from_symbolic_sizes(rng, backend):
    a = random_array(rng, (3, 5), "float64")
    check(run_on(lambda x: sn.zeros(x.shape), a, backend=backend), np.zeros((3, 5)))
    check(run_on(lambda x: sn.ones((x.shape[1], 2)), a, backend=backend), np.ones((5, 2)))
    check(run_on(lambda x: sn.arange(x.shape[0]), a, backend=backend), np.arange(3))
    check(run_on(lambda x: sn.arange(0, x.shape[1], 2), a, backend=backend), np.arange(0, 5, 2))
    check(run_on(lambda x: sn.eye(x.shape[0], x.shape[1]), a, backend=backend), np.eye(3, 5))
    check(run_on(lambda x: sn.alloc(x[0], 2, 5), a, backend=backend), np.tile(a[0], (2, 1)))
    x = sn.tensor("x", shape=("n", 5))
    assert sn.zeros(x.shape).type.shape == ("n", 5)
    assert sn.ones((x.shape[0], x.shape[-1], 2)).type.shape == ("n", 5, 2)
    assert sn.arange(x.shape[0]).type.shape == ("n",)
    assert sn.arange(0, x.shape[0], 2).type.shape == (parse_dim("(n+1)//2"),)
    assert sn.arange(1, x.shape[0]).type.shape == (None,)
    assert sn.eye(x.shape[0]).type.shape == ("n", "n")
    with pytest.raises(sn.ShapeError, match="'n' is not; use an int or a size such as x.shape"):
        sn.zeros(("n", 2))


def test_sizes_from_a_shape_entry_at_a_symbolic_axis(backend):
    """``x.shape[k]`` with k an int variable: a size known only when called (it used to
    crash building the node); a 0-d size variable alone is a one-dim shape, as in NumPy."""
    x = sn.tensor("x", shape=(3, None), dtype="float64")
    k = sn.tensor("k", shape=(), dtype="int64")
    a = np.ones((3, 5))
    rows = [
        (sn.zeros((x.shape[k], 2)), np.zeros((5, 2))),
        (sn.full((x.shape[k],), 2.5), np.full(5, 2.5)),
        (sn.ones(x.shape[k]), np.ones(5)),
        (sn.arange(x.shape[k]), np.arange(5)),
        (sn.eye(x.shape[k], x.shape[0]), np.eye(5, 3)),
        (sn.alloc(1.5, x.shape[k]), np.full(5, 1.5)),
    ]
    for y, want in rows:
        assert y.type.shape[0] is None
        check(sn.function([x, k], [y, k], backend=backend)(a, np.int64(1))[0], want)
    assert sn.ones(x.shape[0]).type.shape == (3,)


def test_an_integer_scalar_is_a_one_dim_shape(rng, backend):
    """``zeros(x.shape[0])`` is ``zeros((x.shape[0],))``, as ``np.zeros(n)`` is; a float or a
    matrix is still refused, naming it."""
    a = random_array(rng, (3, 5), "float64")
    check(run_on(lambda x: sn.zeros(x.shape[0]), a, backend=backend), np.zeros(3))
    check(run_on(lambda x: sn.ones(x.shape[1] * 2), a, backend=backend), np.ones(10))
    check(run_on(lambda x: sn.full(x.shape[1], 2, "int8"), a, backend=backend), np.full(5, 2, "i1"))
    x = sn.tensor("x", shape=("n", 5))
    assert sn.zeros(x.shape[0]).type.shape == ("n",)
    assert sn.zeros(np.array(4)).type.shape == (4,)
    with pytest.raises(sn.DTypeError, match=r"integer scalar variable, not 's' \(float64\(\)\)"):
        sn.zeros(sn.scalar("s"))
    with pytest.raises(sn.DTypeError, match=r"a shape is an integer vector, not 'x'"):
        sn.zeros(x)


def test_broadcast_to_matches_numpy_and_checks_shapes(rng, backend):
    a = random_array(rng, (3, 1), "float32")
    check(
        run_on(lambda x: sn.broadcast_to(x, (2, 3, 4)), a, backend=backend),
        np.broadcast_to(a, (2, 3, 4)),
    )
    check(
        run_on(lambda x: sn.broadcast_to(x, (3, 0)), a, backend=backend), np.broadcast_to(a, (3, 0))
    )
    v = sn.tensor("v", shape=("n", 1))
    assert sn.broadcast_to(v, (2, v.shape[0], 4)).type.shape == (2, "n", 4)
    with pytest.raises(sn.ShapeError, match=r"cannot broadcast 'w' .* axis 0 is 2, not 1 or 5"):
        sn.broadcast_to(sn.tensor("w", shape=(2, 3)), (5, 3))
    with pytest.raises(sn.ShapeError, match="more dims than the target shape"):
        sn.broadcast_to(sn.matrix("m"), (3,))
    with pytest.raises(sn.ShapeError, match="negative dimensions"):
        sn.zeros((2, -1))
    with pytest.raises(sn.DTypeError, match="a size in a shape is an int or an integer scalar"):
        sn.zeros((2, sn.scalar("s")))


def test_broadcast_to_takes_a_name_or_none_for_the_values_own_dims(backend):
    """``broadcast_to(x, (3, "batch"))`` of a ``("batch",)`` x was refused ("a size in a shape
    must be known at run time"): a name of x's own dim (or one lined up with x's unknown dim)
    and a None lined up with an axis of x take their size from x when the function runs, and
    broadcasting is checked by name."""
    x = sn.tensor("x", shape=("batch",))
    c = sn.tensor("c", shape=("n", 1))
    u = sn.tensor("u", shape=(None,))
    a, col = np.arange(4.0), np.arange(3.0)[:, None]
    cases = [
        (x, (3, "batch"), a, (3, 4), (3, "batch")),
        (x, ["batch", None], a, (4, 4), ("batch", "batch")),
        (c, ("n", "n"), col, (3, 3), ("n", "n")),
        (c, (2, None, None), col, (2, 3, 1), (2, "n", 1)),
        (u, (2, "batch"), a, (2, 4), (2, "batch")),
    ]
    for var, shape, value, concrete, static in cases:
        out = sn.broadcast_to(var, shape)
        assert out.type.shape == static, shape
        got = sn.function([var], out, backend=backend)(value)
        np.testing.assert_array_equal(got, np.broadcast_to(value, concrete))
    with pytest.raises(sn.ShapeError) as info:
        sn.broadcast_to(x, (3, "n"))
    assert "broadcast_to: 'n' in the target shape (3, n) is not a dim of 'x' (float64(batch,))" in (
        str(info.value)
    )
    assert "test_creation.py" in str(info.value)
    with pytest.raises(sn.ShapeError, match=r"None at position 0 of the target shape \(\?, 3\)"):
        sn.broadcast_to(x, (None, 3))
    with pytest.raises(sn.ShapeError, match=r"cannot broadcast 'c' .* axis 0 is n, not 1 or m"):
        sn.broadcast_to(c, (sn.tensor("y", shape=("m",)).shape[0], "n"))


@pytest.mark.parametrize("dtype", [None, "int32", "float32"])
def test_one_hot(dtype, backend):
    labels = np.array([[0, 2], [1, 3]], dtype="int64")
    want = np.eye(4, dtype=dtype or "float64")[labels]
    check(run_on(lambda y: sn.one_hot(y, 4, dtype=dtype), labels, backend=backend), want)
    assert sn.one_hot(sn.tensor("y", shape=("batch",), dtype="int8"), 10).type.shape == (
        "batch",
        10,
    )
    with pytest.raises(sn.DTypeError, match="one_hot: indices must be integers"):
        sn.one_hot(sn.vector("f"), 3)


def test_one_hot_refuses_out_of_range_labels():
    y = sn.vector("y", dtype="int64")
    with pytest.raises(Exception, match=r"one_hot: index 5 is outside \[0, 4\)"):
        sn.function([y], sn.one_hot(y, 4), backend="py")(np.array([1, 5]))


def test_creation_ops_are_not_differentiable_but_alloc_is(rng):
    assert sn.arange(3).owner.op.differentiable is False
    assert sn.eye(2).owner.op.differentiable is False
    with reference_backend():
        sn.check_grad(lambda x: sn.broadcast_to(x, (2, 3, 4)), [rng.normal(size=(3, 1))])
        sn.check_grad(lambda x: sn.alloc(x, 3, 2), [rng.normal(size=())])
        sn.check_grad(lambda x: x * sn.ones_like(x) + sn.zeros(x.shape), [rng.normal(size=(2,))])


@pytest.mark.parametrize("dtype", [None, "int16", "float32"])
def test_arange_of_symbolic_integer_bounds_has_numpys_values_and_dtype(dtype, backend):
    """Integer bounds of every width (Theano's ``arange(y.shape[0])``, an int8 count): the
    values and the dtype NumPy's arange gives those 0-d arrays."""
    kinds = ["int8", "uint8", "int32", "uint32", "int64", "uint64"]
    for i, (a, b, c) in enumerate(zip(kinds, kinds[2:] + kinds[:2], kinds[::-1])):
        start, stop, step = (sn.scalar(n, dtype=d) for n, d in zip("abc", (a, b, c)))
        f = sn.function(
            [start, stop, step], sn.arange(start, stop, step, dtype=dtype), backend=backend
        )
        for bounds in [(0, 5, 1), (2, 2, 1), (1, 100, 7 + i)]:
            values = [np.array(v, d) for v, d in zip(bounds, (a, b, c))]
            want = np.arange(*values, dtype=dtype)
            got = f(*values)
            assert got.dtype == want.dtype and np.array_equal(got, want), (a, b, c, bounds)


INFINITE_STEPS = [(0, 10, np.inf), (10, 0, -np.inf), (0, 10, -np.inf), (5, 0, np.inf)]


@pytest.mark.parametrize("bounds", INFINITE_STEPS)
def test_arange_by_an_infinite_step_has_numpys_length(bounds, backend):
    """NumPy's ``arange(0, 10, inf)`` is ``[0.]``: the static length was ceil(10/inf) = 0,
    the reference's result had 1 element, and constant folding failed (RewriteError)."""
    want = np.arange(*bounds)
    assert sn.arange(*bounds).type.shape == want.shape
    check(_constant_output(lambda: sn.arange(*bounds), backend), want)


@pytest.mark.parametrize(
    "bounds, numpys",
    [
        ((0, np.inf), "Maximum allowed size"),
        ((0, -np.inf), "Maximum allowed size"),
        ((np.nan,), "cannot compute length"),
        ((0, 10, np.nan), "cannot compute length"),
        ((np.inf, np.inf), "cannot compute length"),
        ((0, 1e300, 1e-300), "Maximum allowed size"),
        ((0, 2**64 - 1), "Maximum allowed size"),
    ],
)
def test_arange_refuses_a_length_numpy_cannot_compute(bounds, numpys):
    """A bare OverflowError or ValueError ("cannot convert float infinity to integer") that
    named neither arange nor its bounds."""
    with pytest.raises(ValueError, match=numpys):
        np.arange(*bounds)
    with pytest.raises(sn.ShapeError, match=rf"^arange\(.*{numpys}") as caught:
        sn.arange(*bounds)
    assert caught.value.location.filename == __file__


# id -> (a builder taking the dtype argument, the name its error gives)
DTYPE_ARGUMENTS = {
    "tensor": (lambda d: sn.tensor("t", shape=(2,), dtype=d), "tensor 't'"),
    "matrix": (lambda d: sn.matrix("m", dtype=d), "matrix 'm'"),
    "zeros": (lambda d: sn.zeros((2,), dtype=d), "zeros"),
    "ones": (lambda d: sn.ones(2, d), "ones"),
    "full": (lambda d: sn.full(2, 1.0, d), "full"),
    "arange": (lambda d: sn.arange(3, dtype=d), "arange"),
    "eye": (lambda d: sn.eye(2, dtype=d), "eye"),
    "one_hot": (lambda d: sn.one_hot(sn.vector("i", dtype="int64"), 3, dtype=d), "one_hot of 'i'"),
    "zeros_like": (lambda d: sn.zeros_like(sn.matrix("x"), dtype=d), "zeros_like of 'x'"),
    "full_like": (lambda d: sn.full_like(sn.matrix("x"), 2, dtype=d), "full_like of 'x'"),
    "uniform": (lambda d: sn.RandomStream(0).uniform((2,), dtype=d), "uniform"),
}


@pytest.mark.parametrize("bad", [False, "", 0, ()], ids=["False", "empty str", "0", "()"])
@pytest.mark.parametrize("case", list(DTYPE_ARGUMENTS))
def test_a_dtype_numpy_refuses_is_refused_not_taken_for_the_default(case, bad):
    """``dtype or config.floatX`` read every falsy value as no dtype: ``sn.zeros(shape, 0)``,
    an argument out of place, built float64 zeros. NumPy refuses them; only None is the
    default."""
    build, named = DTYPE_ARGUMENTS[case]
    message = f"^{re.escape(named)}.*: {re.escape(repr(bad))} is not a dtype"
    with pytest.raises(sn.DTypeError, match=message) as caught:
        build(bad)
    assert caught.value.location.filename == __file__
    assert build(None).dtype in (np.dtype(sn.config.floatX), np.dtype("int64"))


def test_broadcast_to_an_unknown_size_of_a_named_dim_is_typed_unknown(backend):
    """a of ("n",) broadcast to k elements is k long, not n: n may be 1 (it was typed n)."""
    a, k = sn.tensor("a", shape=("n",)), sn.scalar("k", dtype="int64")
    b = sn.tensor("b", shape=(None,))
    for wide in (sn.broadcast_to(a, (k,)), sn.broadcast_to(a, b.shape)):
        assert wide.type.shape == (None,)
    assert sn.broadcast_to(a, (None,)).type.shape == ("n",)  # None keeps a's own size
    f = sn.function([a, k], sn.broadcast_to(a, (k,)) + 0, backend=backend)
    check(f(np.array([2.0]), 3), np.full(3, 2.0))
