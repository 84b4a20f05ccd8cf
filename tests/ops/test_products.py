"""kron, vdot, inner, matrix_power and ``x.trace()`` against NumPy: values, dtypes, NumPy's
spellings (``np.kron(x, y)`` builds ``sn.kron``), errors and gradients."""

import numpy as np
import pytest

import symnb as sn
from tests.helpers import check, random_array, tolerance
from tests.helpers import run as run_on

KRON = [((2, 3), (4, 1, 2)), ((3,), (2,)), ((), (2, 3)), ((2, 2), ()), ((0, 2), (3, 1))]


@pytest.mark.parametrize("sa,sb", KRON)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_kron_matches_numpy(sa, sb, dtype, rng, backend):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
    check(run_on(sn.kron, a, b, backend=backend), np.kron(a, b), rtol=tolerance(dtype))


VDOT = [((2, 3), (6,)), ((3,), (3,)), ((), ()), ((2, 2), (4, 1)), ((0,), (0, 2))]


@pytest.mark.parametrize("sa,sb", VDOT)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_vdot_matches_numpy(sa, sb, dtype, rng, backend):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, "int32")
    check(run_on(sn.vdot, a, b, backend=backend), np.vdot(a, b), rtol=tolerance(dtype, 10))


INNER = [
    ((3,), (3,)),
    ((2, 3), (4, 3)),
    ((2, 4, 3), (3,)),
    ((), (2, 3)),
    ((3,), ()),
    ((2, 0), (0,)),
]


@pytest.mark.parametrize("sa,sb", INNER)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_inner_matches_numpy(sa, sb, dtype, rng, backend):
    a, b = random_array(rng, sa, dtype), random_array(rng, sb, dtype)
    check(run_on(sn.inner, a, b, backend=backend), np.inner(a, b), rtol=tolerance(dtype, 10))


@pytest.mark.parametrize("fn", [sn.inner, sn.dot])
def test_a_0d_operand_multiplies_elementwise_as_documented(fn, backend):
    """A 0-d operand of inner/dot is ``x * s`` on every backend: IEEE's NaN for inf * 0 and
    nan * 0, not the zeros NumPy's BLAS scal writes for a 0-d 0 (its quirk, not copied);
    the docstring (docs/ops.md) says so."""
    a = np.array([-np.inf, np.nan, -0.0, 2.0])
    with np.errstate(invalid="ignore"):
        want = a * 0.0
        for args in ((a, np.float64(0.0)), (np.float64(0.0), a)):
            got = run_on(fn, *args, backend=backend)
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))
    doc = " ".join(fn.__doc__.split())
    assert "a 0-d operand multiplies the other elementwise" in doc
    assert "``nan * 0`` are NaN" in doc


def invertible(rng, shape, dtype):
    """Random square matrices with a dominant diagonal, far from symmetric."""
    a = rng.uniform(-1, 1, size=shape) + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 4, 5, 7, np.int64(6)])
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_matrix_power_matches_numpy(n, shape, dtype, rng, backend):
    a = invertible(rng, shape, "float64")
    a = np.round(a).astype(dtype) if dtype == "int64" else a.astype(dtype)
    want = np.linalg.matrix_power(a, n)
    got = run_on(lambda x: sn.matrix_power(x, n), a, backend=backend)
    check(got, want, rtol=tolerance(want.dtype, 100), atol=tolerance(want.dtype, 100))


@pytest.mark.parametrize("n", [-2, -1, 0, 1, 2, 3, 5])
def test_matrix_power_refuses_a_non_square_matrix_when_it_runs(n, rng, backend):
    """np.linalg.matrix_power refuses a non-square matrix whatever n is: so does symnb when
    the dims are known only when the function runs (n 0 gave a (2, 3) "identity", n 1 the
    input itself, n 2 a raw matmul error), for every n, naming a, its shape and the line."""
    cases = [
        ((None, None), (2, 3), "(?, ?)", "2 and 3 (shape (2, 3)"),
        ((None, 3, None), (2, 3, 4), "(?, 3, ?)", "3 and 4 (shape (2, 3, 4)"),
        (("k", None), (2, 3), "(k, ?)", "2 and 3 (shape (2, 3)"),
    ]
    for dims, shape, declared, said in cases:
        a = sn.tensor("a", shape=dims)
        f = sn.function([a], sn.matrix_power(a, n), backend=backend)  # the line named
        with pytest.raises(sn.ShapeError) as info:
            f(np.ones(shape))
        message = str(info.value)
        assert f"matrix_power: 'a' (float64{declared}) is not square" in message, message
        assert f"its last two dims are {said}, when the function ran)" in message, message
        assert info.value.location.filename == __file__
        assert "sn.matrix_power(a, n), backend=backend)" in message
        square = invertible(rng, shape[:-2] + (3, 3), "float64")  # square values still run
        want = np.linalg.matrix_power(square, n)
        check(f(square), want, rtol=tolerance(want.dtype, 100), atol=tolerance(want.dtype, 100))
    m = sn.tensor("m", shape=("k", "k"))  # proven square by its type: no check is built
    assert sn.matrix_power(m, 1) is m


def test_numpys_spellings_build_the_products(rng):
    a, b = random_array(rng, (2, 3), "float64"), random_array(rng, (4, 3), "float64")
    m = invertible(rng, (3, 3), "float64")
    cases = [
        (np.kron, (a, b)),
        (np.vdot, (a, b[:2])),
        (np.inner, (a, b)),
        (lambda x: np.linalg.matrix_power(x, 3), (m,)),
        (lambda x: np.linalg.matrix_power(x, n=-2), (m,)),
        (lambda x: np.trace(x, 1, dtype="float32"), (a,)),
    ]
    for fn, arrays in cases:
        check(run_on(fn, *arrays), fn(*arrays))


def test_a_python_number_is_an_array_to_the_products(rng):
    """np.kron and np.inner make 2.5 a float64 array (no weak scalar): so do theirs."""
    a = random_array(rng, (2, 3), "float32")
    for fn in (sn.kron, sn.inner):
        check(run_on(lambda x, fn=fn: fn(x, 2.5), a), np.asarray(getattr(np, fn.__name__)(a, 2.5)))


@pytest.mark.parametrize(
    "build,ref",
    [
        (lambda x: sn.dot(x, 2), lambda a: np.dot(a, 2)),
        (lambda x: np.dot(x, 2), lambda a: np.dot(a, 2)),
        (lambda x: x.dot(2), lambda a: a.dot(2)),
        (lambda x: sn.dot(2.0, x), lambda a: np.dot(2.0, a)),
        (lambda x: sn.inner(2, x), lambda a: np.inner(2, a)),
    ],
)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_dot_makes_a_python_number_an_array_as_numpy_does(build, ref, dtype, backend):
    """np.dot(a8, 2) is int64 [200, 100] (no weak scalar, no int8 wrap-around) and
    np.dot(2.0, a32) float64: dot, np.dot on a variable and x.dot follow NumPy."""
    a = np.array([100, 50], dtype=dtype)
    want = ref(a)
    assert want.dtype in (np.int64, np.float64)
    check(run_on(build, a, backend=backend), want)


@pytest.mark.parametrize(
    "offset,axis1,axis2,dtype",
    [(0, 0, 1, None), (1, 0, 1, None), (-1, 1, 2, None), (0, 2, 0, "float32")],
)
def test_the_trace_method_is_numpys(offset, axis1, axis2, dtype, rng):
    a = random_array(rng, (3, 4, 3), "int32")
    got = run_on(lambda x: x.trace(offset, axis1, axis2, dtype), a)
    check(got, a.trace(offset, axis1, axis2, dtype))
    check(run_on(lambda x: x.trace(), a[0]), a[0].trace())


ERRORS = [
    (
        lambda: sn.vdot(sn.tensor("a", (2, 3)), sn.tensor("b", (4,))),
        sn.ShapeError,
        r"vdot: 'a' \(float64\(2, 3\)\) has 6 elements but 'b' \(float64\(4,\)\) has 4",
    ),
    (
        lambda: sn.vdot(sn.tensor("a", (2,), "bool"), sn.tensor("b", (2,))),
        sn.DTypeError,
        r"vdot: 'a' \(bool\(2,\)\) is boolean",
    ),
    (
        lambda: sn.inner(sn.tensor("a", (2, 3)), sn.tensor("b", (3, 2))),
        sn.ShapeError,
        r"inner: the last axis of 'a' .* has size 3 but the last axis of 'b' .* has size 2",
    ),
    (
        lambda: sn.matrix_power(sn.tensor("a", (3, 3)), 1.5),
        sn.ArgumentError,
        "the exponent n is an int known when the graph is built, not 1.5",
    ),
    (lambda: sn.matrix_power(sn.tensor("a", (3, 3)), True), sn.ArgumentError, "not True"),
    (
        lambda: sn.matrix_power(sn.tensor("a", (3, 3)), sn.scalar("k", "int64")),
        sn.ArgumentError,
        "not 'k'",
    ),
    (
        lambda: sn.matrix_power(sn.tensor("a", (2, 3)), 2),
        sn.ShapeError,
        r"'a' \(float64\(2, 3\)\) is not square: its last two dims are 2 and 3",
    ),
    (lambda: sn.matrix_power(sn.tensor("a", (3,)), 2), sn.ShapeError, "1 dims; a matrix is needed"),
    (lambda: sn.matrix_power(sn.tensor("a", (2, 2), "bool"), 2), sn.DTypeError, "is boolean"),
]


@pytest.mark.parametrize("build,error,message", ERRORS)
def test_product_errors_name_the_operands_at_the_users_line(build, error, message):
    with pytest.raises(error, match=message) as info:
        build()
    assert info.value.location.filename == __file__


GRADS = {
    "kron": (sn.kron, [(2, 3), (3, 1, 2)]),
    "kron 0-d": (sn.kron, [(), (2, 2)]),
    "vdot": (sn.vdot, [(2, 3), (6,)]),
    "inner": (sn.inner, [(2, 3), (4, 3)]),
    "matrix_power 3": (lambda a: sn.matrix_power(a, 3), [(3, 3)]),
    "matrix_power 5": (lambda a: sn.matrix_power(a, 5), [(2, 3, 3)]),
    "matrix_power -2": (lambda a: sn.matrix_power(a, -2), [(3, 3)]),
    "trace method": (lambda a: a.trace(1, 1, 0), [(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_product_gradients(case, rng):
    fn, shapes = GRADS[case]
    arrays = [
        invertible(rng, s, "float64") if s[-2:] == (3, 3) else rng.uniform(-1, 1, s) for s in shapes
    ]
    sn.check_grad(fn, arrays)


def test_vdot_conjugates_a_complex_first_operand_as_numpy():
    """np.vdot conjugates a; symnb refused a complex a while it had no conjugate op."""
    a = sn.tensor("a", shape=(2, 2), dtype="complex128")
    b = sn.tensor("b", shape=(4,), dtype="complex64")
    va = np.array([[1 + 2j, 3 - 1j], [-2j, 0.5]])
    vb = np.array([2 - 1j, 1j, 4, -1 + 1j], dtype=np.complex64)
    got = sn.function([a, b], [sn.vdot(a, b), np.vdot(a, b)], backend="py")(va, vb)
    for g in got:
        assert g.dtype == np.vdot(va, vb).dtype
        np.testing.assert_allclose(g, np.vdot(va, vb), rtol=1e-6)
    assert sn.vdot(sn.vector("r"), b).type.dtype == "complex128"  # a real a needs none


def test_a_list_holding_a_symbolic_scalar_says_so():
    """``sn.constant([n, 0])``: the variable's own words (build it with sn.stack), not
    "cannot be None". (As an index, ``x[[n, 0]]`` is ``x[sn.stack([n, 0])]``: test_index.py.)"""
    n = sn.scalar("n", dtype="int64")
    with pytest.raises(sn.InputError, match=r"(?s)'n'.*is symbolic.*sn\.stack"):
        sn.constant([n, 0])
