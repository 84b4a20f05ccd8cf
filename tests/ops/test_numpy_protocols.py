"""NumPy functions on symbolic variables build symnb ops (``__array_ufunc__``,
``__array_function__``); those without an equivalent are errors naming what to use; NumPy never
makes an object array of variables."""

import numpy as np
import pytest
from scipy import special

import symnb as sn
from symnb.ops import numpy_api
from tests.helpers import check


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


A = np.linspace(-2.0, 3.0, 12).reshape(3, 4)
B = np.linspace(0.5, 1.5, 20).reshape(4, 5)

# id -> a function applied both to NumPy arrays and to symbolic variables of their shapes
CALLS = {
    "dot": lambda a, b: np.dot(a, b),
    "matmul operator from an array": lambda a, b: np.ones((5, 4)) @ a.T,
    "exp": lambda a, b: np.exp(a),
    "sum": lambda a, b: np.sum(a),
    "sum axis": lambda a, b: np.sum(a, axis=1, keepdims=True),
    "mean": lambda a, b: np.mean(a, axis=0),
    "tanh": lambda a, b: np.tanh(a),
    "maximum": lambda a, b: np.maximum(a, 0.5),
    "where": lambda a, b: np.where(a > 0, a, -a),
    "concatenate": lambda a, b: np.concatenate([a, a * 2], axis=1),
    "add from an array": lambda a, b: np.arange(4.0) + a,
    "negative": lambda a, b: np.negative(a),
    "power": lambda a, b: np.power(a, 2),
    "absolute": lambda a, b: np.abs(a),
    "add.reduce (axis 0)": lambda a, b: np.add.reduce(a),
    "multiply.accumulate": lambda a, b: np.multiply.accumulate(a, axis=1),
    "transpose": lambda a, b: np.transpose(a),
    "amax": lambda a, b: np.amax(a, axis=1),
    "clip": lambda a, b: np.clip(a, -1, 1),
    "linalg.norm": lambda a, b: np.linalg.norm(a),
    "einsum": lambda a, b: np.einsum("ij,jk->ik", a, b),
    "scipy expit": lambda a, b: special.expit(a),
    "scipy erf": lambda a, b: special.erf(a),
    "std": lambda a, b: np.std(a, axis=1, ddof=1),
}


@pytest.mark.parametrize("case", list(CALLS))
def test_numpy_functions_build_the_symnb_op(case):
    x, W = sn.tensor("x", shape=("batch", 4)), sn.shared(B, name="W")
    out = CALLS[case](x, W)
    assert isinstance(out, sn.Variable), type(out)
    values = sn.function([x], out, backend="py")(A)
    np.testing.assert_allclose(values, CALLS[case](A, B), rtol=1e-12)


def test_np_dot_never_returns_an_object_array():
    x = sn.tensor("x", shape=("batch", 784))
    W = sn.shared(np.zeros((784, 10)), name="W")
    h = np.dot(x, W)
    assert isinstance(h, sn.Variable) and sn.infer_shape(h) == ("batch", 10)
    assert h.owner is not None and (x @ W).owner.op == h.owner.op
    with pytest.raises(TypeError, match="is symbolic and has no value until the function runs"):
        np.asarray(x)


def test_numpy_logical_functions_build_the_logical_ops(backend):
    """np.logical_and/or/xor/not read each operand as a truth value (NaN is true), bool out,
    whatever the dtypes: ``&`` would be a bitwise and of ints, and refuses floats."""
    x = sn.vector("x", dtype="float64")
    k = sn.vector("k", dtype="int16")
    built = [
        np.logical_and(x, k),
        np.logical_or(x > 1, k),
        np.logical_xor(k, 2),
        np.logical_not(x),
        sn.logical_and(k, 0.5),
    ]
    assert [out.owner.op.op_name() for out in built] == [
        "logical_and",
        "logical_or",
        "logical_xor",
        "logical_not",
        "logical_and",
    ]
    xv = np.array([0.0, np.nan, -0.0, 2.5, 0.25, -1.0])
    kv = np.array([0, 1, 2, -3, 0, 4], "int16")
    want = [
        np.logical_and(xv, kv),
        np.logical_or(xv > 1, kv),
        np.logical_xor(kv, 2),
        np.logical_not(xv),
        np.logical_and(kv, 0.5),
    ]
    for got, ref in zip(sn.function([x, k], built, backend=backend)(xv, kv), want):
        check(got, ref)


@pytest.mark.parametrize(
    "call, fragments",
    [
        (
            lambda x: np.nonzero(x),  # <- no equivalent
            ["np.nonzero has no symnb equivalent for 'x' (float64(batch, 4))", "sn.where"],
        ),
        (lambda x: np.fft.fft(x), ["np.fft.fft has no symnb equivalent", "docs/ops.md"]),
        (lambda x: np.left_shift(x.astype("int64"), 2), ["np.left_shift", "a * 2**b"]),
        (
            lambda x: np.sum(x, initial=1.0),
            ["np.sum on symbolic variables builds sn.sum(x, ", "has no initial= (initial=1.0)"],
        ),
        (lambda x: np.exp(x, out=np.zeros((2, 4))), ["np.exp(..., out=...) cannot write"]),
        (lambda x: np.logaddexp.outer(x, x), ["np.logaddexp.outer has no symnb equivalent"]),
    ],
)
def test_numpy_functions_without_an_equivalent_say_what_to_use(call, fragments):
    x = sn.tensor("x", shape=("batch", 4))
    with pytest.raises(TypeError) as info:
        call(x)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert "test_numpy_protocols.py, line" in message


# NumPy's positional order differs from symnb's (np.mean(a, axis, dtype, out, keepdims));
# each call is bound by the NumPy function's signature
BOUND = {
    "mean dtype": lambda a: np.mean(a, 0, np.float32),
    "mean keepdims": lambda a: np.mean(a, 1, None, None, True),
    "sum dtype": lambda a: np.sum(a, 1, "float32"),
    "sum keywords": lambda a: np.sum(a, axis=0, dtype=np.float32, keepdims=True, out=None),
    "sum int dtype": lambda a: np.sum(a, None, int),
    "var dtype": lambda a: np.var(a, 0, np.float32),
    "var ddof": lambda a: np.var(a, 0, None, None, 1, True),
    "var correction": lambda a: np.var(a, axis=1, correction=1),
    "std dtype": lambda a: np.std(a, 1, "float32"),
    "std ddof keepdims": lambda a: np.std(a, 1, None, None, 1, True),
    "prod int": lambda a: np.prod(a, 1, int),
    "prod keepdims": lambda a: np.prod(a, 0, None, None, True),
    "cumsum dtype": lambda a: np.cumsum(a, 1, np.float32),
    "all": lambda a: np.all(a > 0, 1, None, True),
    "any": lambda a: np.any(a > 0, axis=0, keepdims=True),
    "max": lambda a: np.max(a, 1, None, True),
    "min": lambda a: np.min(a, 0, None, True),
    "amax": lambda a: np.amax(a, 0, None, True),
    "amin": lambda a: np.amin(a, axis=1, out=None, keepdims=True),
    "argmax": lambda a: np.argmax(a, 1, None, keepdims=True),
    "argmin": lambda a: np.argmin(a, 0, None),
    "ravel": lambda a: np.ravel(a, "C"),
    "ravel K": lambda a: np.ravel(a, order="K"),
    "reshape": lambda a: np.reshape(a, (4, 3), "C"),
    "reshape shape=": lambda a: np.reshape(a, shape=(2, 6)),
    "reshape order=": lambda a: np.reshape(a, (6, 2), order="C"),
    "transpose axes": lambda a: np.transpose(a, (1, 0)),
    "concatenate": lambda a: np.concatenate([a, a], 1, None),
    "clip min max": lambda a: np.clip(a, min=-1, max=1),
    "clip min alone": lambda a: np.clip(a, min=-1),
    "concatenate dtype": lambda a: np.concatenate([a, a], 1, dtype="float32"),
    "stack dtype": lambda a: np.stack([a, a], axis=1, dtype=np.float32),
    "take wrap": lambda a: np.take(a, [5, -7], 1, None, "wrap"),
    "take clip": lambda a: np.take(a, [[5], [-7]], mode="clip"),
}


@pytest.mark.parametrize("case", list(BOUND))
@pytest.mark.parametrize("backend", ["py", "c"])
def test_numpy_arguments_are_bound_by_numpy_signature(case, backend):
    x = sn.tensor("x", shape=(3, 4))
    want = BOUND[case](A)
    got = sn.function([x], BOUND[case](x), backend=backend)(A)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), case
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda x: np.ravel(x, "F"), "np.ravel(..., order='F') on 'x' (float64(3, 4))"),
        (lambda x: np.reshape(x, (4, 3), order="F"), "np.reshape(..., order='F')"),
        (lambda x: np.sum(x, 0, None, np.zeros(4)), "np.sum(..., out=...) cannot write"),
        (lambda x: np.mean(x, where=x > 0), "np.mean on symbolic variables builds sn.mean("),
        (lambda x: np.mean(x, where=x > 0), "which has no where= (where="),
        (lambda x: np.argmax(x, 0, np.zeros(4, int)), "np.argmax(..., out=...) cannot write"),
    ],
)
def test_numpy_arguments_symnb_cannot_take_are_errors_at_the_users_line(call, fragment):
    x = sn.tensor("x", shape=(3, 4))
    with pytest.raises(sn.InputError) as info:
        call(x)
    assert fragment in str(info.value), str(info.value)
    assert f"test_numpy_protocols.py, line {call.__code__.co_firstlineno}" in str(info.value)


def test_the_table_is_the_catalogue():
    """Every NumPy function whose name is in the catalogue dispatches to it; aliases only
    cover NumPy's other spellings, and each points at a real op."""
    dispatch = sn.core.hooks.hook("numpy")
    shared = [n for n in dir(np) if callable(getattr(np, n)) and dispatch.symnb_name(n) == n]
    assert {"exp", "dot", "sum", "mean", "tanh", "maximum", "where", "concatenate"} <= set(shared)
    assert len(shared) > 60
    for numpy_name, name in numpy_api.ALIASES.items():
        assert dispatch.symnb_name(numpy_name) == name, numpy_name
    assert dispatch.symnb_name("nonzero") is None and dispatch.symnb_name("_private") is None


ROUNDS = {
    "np.round": lambda x, d: np.round(x, d),
    "np.around": lambda x, d: np.around(x, decimals=d),
    "sn.round": lambda x, d: sn.round(x, d),
    "method": lambda x, d: x.round(d),
}


@pytest.mark.parametrize("spelling", list(ROUNDS))
def test_round_with_decimals_is_one_clear_error_at_the_users_line(spelling):
    """``np.round(x, 2)`` once passed the 2 as a second graph input ("round takes 1 inputs,
    got 2", no line); every spelling now says what is missing, where it was written."""
    x = sn.tensor("x", shape=("batch", 4))
    with pytest.raises(NotImplementedError) as info:
        ROUNDS[spelling](x, 2)
    message = str(info.value)
    assert message.startswith(
        "round: only decimals=0 is implemented, not decimals=2 (rounding 'x' (float64(batch, 4)))"
    ), message
    written = _line_of(f'"{spelling}": lambda')  # the line that calls round
    assert f"test_numpy_protocols.py, line {written}:" in message, message
    values = sn.function([x], ROUNDS[spelling](x, 0), backend="py")(A * 1.7)
    np.testing.assert_array_equal(values, np.round(A * 1.7))


def test_shift_operators_say_what_to_write_instead():
    x = sn.tensor("x", shape=(3,), dtype="int64")
    with pytest.raises(TypeError, match=r"(?s)np.left_shift has no symnb.*a \* 2\*\*b for a << b"):
        x << 1
    with pytest.raises(TypeError, match=r"(?s)np.right_shift has no symnb.*a // 2\*\*b for a >> b"):
        1 >> x


def test_a_python_int_beyond_64_bits_is_refused_at_the_users_line():
    """NumPy makes an object array of it (a raw "symnb does not support dtype object")."""
    x = sn.tensor("x", shape=(3,), dtype="float64")
    with pytest.raises(sn.DTypeError, match=r"2\*\*70|1180591620717411303424.*64 bits") as info:
        x + 2**70
    assert "test_numpy_protocols.py" in str(info.value)
    assert (x + (2**64 - 1)).dtype == np.float64 and (x + -(2**63)).dtype == np.float64


def test_linalg_functions_are_looked_up_with_their_module():
    """np.linalg.trace sums the diagonal of the LAST two axes (np.trace: the first two), and
    np.linalg.outer takes vectors only: the lookup keys on the module, not the name alone."""
    stack = np.arange(24.0).reshape(2, 3, 4)
    x = sn.tensor("x", shape=(2, 3, 4))
    for backend in ("py", "c"):
        got = sn.function([x], np.linalg.trace(x), backend=backend)(stack)
        np.testing.assert_array_equal(got, np.linalg.trace(stack))  # [15, 51]
    got = sn.function([x], np.linalg.trace(x, offset=1, dtype=np.float32), backend="py")(stack)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.linalg.trace(stack, offset=1, dtype=np.float32))
    np.testing.assert_array_equal(
        sn.function([x], np.trace(x), backend="py")(stack), np.trace(stack)
    )
    got = sn.function([x], np.linalg.matrix_transpose(x), backend="py")(stack)
    np.testing.assert_array_equal(got, np.linalg.matrix_transpose(stack))
    m, v = sn.tensor("m", shape=(3, 4)), sn.tensor("v", shape=(3,))
    with pytest.raises(sn.ShapeError, match=r"one-dimensional.*'m' \(float64\(3, 4\)\)"):
        np.linalg.outer(m, v)
    with pytest.raises(sn.ShapeError, match=r"np.linalg.trace: 'v' \(float64\(3,\)\) has 1 dim;"):
        np.linalg.trace(v)
    with pytest.raises(sn.InputError, match="np.linalg.diagonal has no symnb equivalent"):
        np.linalg.diagonal(x)
    outer = sn.function([v], np.linalg.outer(v, v), backend="py")(np.arange(3.0))
    np.testing.assert_array_equal(outer, np.outer(np.arange(3.0), np.arange(3.0)))


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "int64", "float32"])
def test_fabs_is_numpy_float_ufunc(dtype):
    """np.fabs has float loops only: fabs(int8) is float16 and fabs(-128) is 128.0, where
    abs keeps the integer dtype (and wraps -128)."""
    values = np.array([1, 0, 1, 0] if dtype == "bool" else [-128, -3, 0, 5], dtype=dtype)
    v = sn.tensor("v", shape=(4,), dtype=dtype)
    want = np.fabs(values)
    for backend in ("py", "c"):
        got = sn.function([v], np.fabs(v), backend=backend)(values)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "float16", "int32"])
@pytest.mark.parametrize("name", ["expm1", "log1p", "expit", "round", "erf"])
def test_scipy_ufuncs_follow_their_own_loops(name, dtype):
    """scipy.special.expm1(int8) is float64 (SciPy's loops are f->f and d->d), not NumPy's
    float16; scipy.special.round(int8) is float32, not int8."""
    ufunc = getattr(special, name)
    values = np.array([-3, 0, 2, 5], dtype=dtype)
    v = sn.tensor("v", shape=(4,), dtype=dtype)
    with np.errstate(all="ignore"):
        want = ufunc(values)
        got = sn.function([v], ufunc(v), backend="py")(values)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-7, equal_nan=True)


NO_LOOP = {
    "np.fabs": lambda a: np.fabs(a),
    "scipy.special.expit": lambda a: special.expit(a),
    "scipy.special.round": lambda a: special.round(a),
    "np.floor": lambda a: np.floor(a),
}


@pytest.mark.parametrize("spelling", list(NO_LOOP))
def test_a_ufunc_with_no_loop_for_the_dtypes_is_refused_at_the_users_line(spelling):
    """np.fabs(z) of a complex z built sn.abs(z), the modulus, where NumPy refuses it (fabs
    has float loops only); SciPy's expit and round likewise built complex ops. Every
    dispatched ufunc with no loop for its operands' dtypes is NumPy's refusal."""
    values = np.array([3 + 4j, -1 + 0.5j])
    with pytest.raises(TypeError):
        NO_LOOP[spelling](values)
    z = sn.tensor("z", shape=(2,), dtype="complex128")
    with pytest.raises(sn.DTypeError) as info:
        NO_LOOP[spelling](z)
    message = str(info.value)
    refused = f"{spelling} has no loop for 'z' (complex128(2,)); NumPy refuses it: "
    assert refused in message, message
    written = _line_of(f'"{spelling}": lambda')
    assert f"test_numpy_protocols.py, line {written}:" in message, message


def test_a_ufunc_with_no_loop_names_each_operand():
    """A Python number is weak, as in NumPy 2: np.arctan2(x, 2) has a float32 loop,
    np.arctan2(x, 2j) none."""
    x = sn.tensor("x", shape=(3,), dtype="float32")
    assert np.arctan2(x, 2).dtype == np.arctan2(np.ones(3, np.float32), 2).dtype == np.float32
    with pytest.raises(sn.DTypeError) as info:
        np.arctan2(x, 2j)
    assert str(info.value).startswith(
        "np.arctan2 has no loop for 'x' (float32(3,)), the Python complex 2j; NumPy refuses it: "
    ), str(info.value)


ACCUMULATE_AXES = [(None, (3,)), (0, (3, 4)), (-1, (3, 4)), ((1,), (3, 4)), (None, (4,))]


@pytest.mark.parametrize("ufunc", [np.add, np.multiply])
@pytest.mark.parametrize(("axis", "shape"), ACCUMULATE_AXES)
def test_accumulate_takes_one_axis_as_numpy(ufunc, axis, shape):
    """np.add.accumulate(x, axis=None) of a vector runs along its one axis; a one-axis tuple
    is that axis (sn.cumsum's None would flatten, and it takes no tuple)."""
    values = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) / 4
    x = sn.tensor("x", shape=shape)
    got = sn.function([x], ufunc.accumulate(x, axis=axis), backend="py")(values)
    want = ufunc.accumulate(values, axis=axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("ufunc", [np.add, np.multiply])
def test_accumulate_of_several_axes_or_a_scalar_is_refused_as_numpy_refuses_it(ufunc):
    """np.add.accumulate(x, axis=None) of a matrix gave the (12,) running sum of all the
    elements; NumPy says "accumulate does not allow multiple axes"."""
    x, s = sn.tensor("x", shape=(3, 4)), sn.scalar("s")
    spelled = f"np.{ufunc.__name__}.accumulate"
    for axis in (None, (0, 1), ()):
        with pytest.raises(ValueError, match="accumulate does not allow multiple axes"):
            ufunc.accumulate(np.ones((3, 4)), axis=axis)
        with pytest.raises(sn.ShapeError) as info:
            ufunc.accumulate(x, axis=axis)  # accumulate of several axes
        message = str(info.value)
        assert message.startswith(
            f"{spelled} of 'x' (float64(3, 4)): accumulate does not allow multiple axes "
            f"(axis={axis!r})"
        ), message
        assert f"line {_line_of('# accumulate of several axes')}:" in message, message
    with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
        ufunc.accumulate(s)


def test_reduce_of_a_scalar_over_axis_0_is_the_scalar():
    """NumPy's reduce of a 0-d array over its default axis 0 (or -1) reduces nothing."""
    s = sn.scalar("s")
    for ufunc in (np.add, np.multiply, np.maximum, np.minimum):
        for kwargs in ({}, {"axis": -1}, {"axis": 0, "keepdims": True}):
            got = sn.function([s], ufunc.reduce(s, **kwargs), backend="py")(2.5)
            want = ufunc.reduce(np.array(2.5), **kwargs)
            assert got.shape == np.shape(want) and got == want


def test_numpy_defaults_fill_what_symnb_requires():
    """np.take_along_axis(x, i) takes NumPy >= 2.3's default axis=-1 (sn.take_along_axis has
    no default): the call means NumPy's."""
    import inspect

    if inspect.signature(np.take_along_axis).parameters["axis"].default != -1:
        pytest.skip("this NumPy has no default axis for take_along_axis")
    values = np.random.default_rng(0).standard_normal((3, 4))
    order = np.argsort(values, axis=0)
    x = sn.tensor("x", shape=(3, 4))
    i = sn.tensor("i", shape=(3, 4), dtype="int64")
    got = sn.function([x, i], np.take_along_axis(x, i), backend="py")(values, order)
    np.testing.assert_array_equal(got, np.take_along_axis(values, order))
    np.testing.assert_array_equal(got, np.take_along_axis(values, order, axis=-1))


def test_linalg_results_have_numpy_2_field_names():
    """np.linalg.slogdet(x).logabsdet and np.linalg.svd(x).S, as NumPy 2's named results; a
    compiled function returns the same named tuple of arrays."""
    matrix = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    x = sn.tensor("x", shape=(3, 3))
    result = np.linalg.slogdet(x)
    assert type(result).__name__ == "SlogdetResult"
    f = sn.function([x], [result.sign, result.logabsdet], backend="py")
    np.testing.assert_allclose(f(matrix), np.linalg.slogdet(matrix))
    named = sn.function([x], sn.slogdet(x), backend="py")(matrix)
    assert named.logabsdet == pytest.approx(np.linalg.slogdet(matrix).logabsdet)
    svd = np.linalg.svd(x, full_matrices=False)
    assert svd._fields == ("U", "S", "Vh")
    got = sn.function([x], svd, backend="py")(matrix)
    np.testing.assert_allclose(got.S, np.linalg.svd(matrix).S)
    np.testing.assert_allclose(got.U * got.S @ got.Vh, matrix, atol=1e-12)


# NumPy 2's keyword spellings on symnb's own functions (numpy_api.RENAMED, the table NumPy's
# dispatch reads): (symbolic call, NumPy's call)
KEYWORDS = {
    "clip min max": (lambda x: sn.clip(x, min=-1, max=1), lambda a: np.clip(a, min=-1, max=1)),
    "clip max": (lambda x: sn.clip(x, max=0.5), lambda a: np.clip(a, max=0.5)),
    "reshape shape": (lambda x: sn.reshape(x, shape=(2, -1)), lambda a: np.reshape(a, (2, -1))),
    "reshape newshape": (lambda x: sn.reshape(x, newshape=(6, 2)), lambda a: a.reshape(6, 2)),
    "var correction": (
        lambda x: sn.var(x, axis=1, correction=1),
        lambda a: np.var(a, axis=1, correction=1),
    ),
    "std ddof 0 and correction": (
        lambda x: sn.std(x, 0, None, None, 0, correction=1.5),
        lambda a: np.std(a, 0, None, None, 0, correction=1.5),
    ),
    "eye M": (lambda x: sn.eye(3, M=2), lambda a: np.eye(3, M=2)),
    "eye N M k": (
        lambda x: sn.eye(N=2, M=3, k=1),
        lambda a: np.eye(N=2, M=3, k=1),
    ),
    "arange stop": (lambda x: sn.arange(stop=4), lambda a: np.arange(stop=4)),
    "arange stop step": (lambda x: sn.arange(stop=5, step=2), lambda a: np.arange(stop=5, step=2)),
    "arange step None": (lambda x: sn.arange(1, 4, None), lambda a: np.arange(1, 4, None)),
    "concatenate dtype": (
        lambda x: sn.concatenate([x, x], dtype="float32"),
        lambda a: np.concatenate([a, a], dtype="float32"),
    ),
    "stack dtype": (
        lambda x: sn.stack([x, x], 2, dtype="float32"),
        lambda a: np.stack([a, a], 2, dtype="float32"),
    ),
}


@pytest.mark.parametrize("case", list(KEYWORDS))
def test_symnb_functions_take_numpy_2_keyword_spellings(case, backend):
    """sn.clip(x, min=, max=), sn.reshape(x, shape=), sn.eye(3, M=2), sn.arange(stop=4),
    sn.var(x, correction=1), sn.concatenate/sn.stack(..., dtype=) were TypeErrors
    (an unexpected keyword, or a missing argument)."""
    build, reference = KEYWORDS[case]
    x = sn.tensor("x", shape=(3, 4))
    want = reference(A)
    got = sn.function([x], build(x), backend=backend)(A)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), case
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda x: sn.clip(x, 0, 1, min=-1), "clip of 'x' (float64(3, 4)): a_min and min can't"),
        (lambda x: sn.reshape(x, (4, 3), shape=(2, 6)), "newshape=(4, 3), shape=(2, 6)"),
        (lambda x: sn.var(x, ddof=1, correction=0), "var of 'x' (float64(3, 4)): ddof and"),
        (lambda x: sn.std(x, None, None, None, 2, correction=1), "(ddof=2, correction=1)"),
    ],
)
def test_a_parameter_under_both_its_numpy_names_is_refused(call, fragment):
    x = sn.tensor("x", shape=(3, 4))
    with pytest.raises(sn.ArgumentError) as info:
        call(x)
    assert fragment in str(info.value), str(info.value)
    assert f"test_numpy_protocols.py, line {call.__code__.co_firstlineno}" in str(info.value)


def test_arange_without_a_stop_is_refused_naming_it():
    with pytest.raises(sn.ArgumentError, match=r"arange: give the stop \(arange\(4\)"):
        sn.arange()


def test_ddof_and_correction_together_are_refused_as_numpy_does():
    """np.var(y, ddof=1, correction=0): correction is symnb's ddof, and the later one won
    silently (the population variance)."""
    y = sn.tensor("y", shape=(3, 4))
    for fn in (np.var, np.std):
        with pytest.raises(sn.InputError) as info:
            fn(y, ddof=1, correction=0)
        message = str(info.value)
        assert "ddof and correction can't be provided simultaneously" in message
        assert "'y' (float64(3, 4))" in message and "(ddof=1, correction=0)" in message
    got = sn.function([y], np.var(y, ddof=0, correction=1), backend="py")(A)  # NumPy's too
    assert got == pytest.approx(np.var(A, ddof=0, correction=1))
