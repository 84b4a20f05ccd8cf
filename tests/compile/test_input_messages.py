"""Every refusal of symnb/compile/inputs.py, word for word: which input (by position, and by
name when it has one), what it expects, what it got and why. A user reads these at the
moment a call fails, so a message that names the wrong axis, size or dtype is a bug. Also the
values the checks must accept: lists, NumPy scalars and exact integer conversions."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.compile.inputs import InputSpec
from symnb.errors import InputError, InputShapeError
from tests.helpers import named_backends


def call(shapes_dtypes, *values, names=None):
    """A py-backend identity-like function of inputs declared as given, called on values."""
    names = names or [f"x{k}" for k in range(len(shapes_dtypes))]
    xs = [sn.tensor(n, shape=s, dtype=d) for n, (s, d) in zip(names, shapes_dtypes)]
    out = xs[0] * 1
    for x in xs[1:]:
        out = sn.sum(sn.cast(out, "float64")) + sn.sum(sn.cast(x, "float64"))
    return sn.function(xs, out, backend="py")(*values)


def refusal(shapes_dtypes, *values, names=None, error=InputError) -> str:
    with pytest.raises(error) as info:
        call(shapes_dtypes, *values, names=names)
    return str(info.value)


SHAPE_CASES = [
    (
        [((3,), "float64")],
        [np.ones((3, 1))],
        "input 0 'x0' expects shape (3,) (float64), got an array of shape (3, 1): it has 2 dims, "
        "expected 1",
    ),
    (
        [((2, 3), "float32")],
        [np.ones((2, 4), "float32")],
        "input 0 'x0' expects shape (2, 3) (float32), got an array of shape (2, 4): axis 1 has "
        "length 4, expected 3",
    ),
    (
        [(("n",), "float64"), ((2, "n"), "float64")],
        [np.ones(3), np.ones((2, 4))],
        "input 1 'x1' expects shape (2, n) (float64), got an array of shape (2, 4): dim 'n' "
        "(axis 1) is 4 here but 3 in input 0 'x0'; a named dim has one size across a call",
    ),
    (
        [(("m",), "float64"), (("n",), "float64"), (("m+n",), "float64")],
        [np.ones(2), np.ones(3), np.ones(4)],
        "input 2 'x2' expects shape (m+n,) (float64), got an array of shape (4,): axis 0 (m+n) "
        "should be 5 with m=2 in input 0 'x0', n=3 in input 1 'x1'",
    ),
]


@pytest.mark.parametrize("decls,values,message", SHAPE_CASES)
def test_shape_refusals_word_for_word(decls, values, message):
    assert refusal(decls, *values, error=InputShapeError) == message


def test_an_unnamed_input_is_named_by_its_position():
    x = sn.tensor(shape=(3,))
    f = sn.function([x], x * 2, backend="py")
    with pytest.raises(InputShapeError) as info:
        f(np.ones(2))
    assert str(info.value) == (
        "input 0 expects shape (3,) (float64), got an array of shape (2,): axis 0 has length "
        "2, expected 3"
    )


DTYPE_CASES = [
    (
        "int64",
        np.array([1.0, 2.0]),
        "input 0 'x0' expects int64, got a float64 array; integer inputs take integer values "
        "such as class labels (yours are floats; they are whole numbers)\n"
        "  hint: convert them with value.astype('int64')",
    ),
    (
        "int32",
        np.array([0.5, np.nan]),
        "input 0 'x0' expects int32, got a float64 array; integer inputs take integer values "
        "such as class labels (yours are floats; some are missing (NaN, NA) or infinite: "
        "fill or drop them first)\n"
        "  hint: convert them with np.nan_to_num(value, nan=fill_value).astype('int32')",
    ),
    (
        "int8",
        np.array([1.0, np.inf], "float32"),
        "input 0 'x0' expects int8, got a float32 array; integer inputs take integer values "
        "such as class labels (yours are floats; some are missing (NaN, NA) or infinite: "
        "fill or drop them first)\n"
        "  hint: convert them with np.nan_to_num(value, nan=fill_value).astype('int8')",
    ),
    (
        "float32",
        np.array([0.1]),
        "input 0 'x0' expects float32, got a float64 array, which would lose precision; pass "
        "value.astype('float32') or declare the input with dtype='float64'",
    ),
    (
        "int16",
        np.array([7], "int64"),
        "input 0 'x0' expects int16, got a int64 array, which would lose precision; pass "
        "value.astype('int16') or declare the input with dtype='int64'",
    ),
    (
        "float64",
        np.array([1, 2**53 + 1], "int64"),
        "input 0 'x0' expects float64; the int64 array holds integers that float64 cannot "
        "represent exactly (beyond 2**53); convert it yourself if rounding is fine, or declare "
        "the input with dtype='int64'",
    ),
    (
        "float32",
        np.array([1, 2**24 + 1], "int32"),
        None,
    ),  # int32 -> float32 is not a safe cast: the precision message
    (
        "float64",
        np.array([1, 2**64 - 1], "uint64"),
        "input 0 'x0' expects float64; the uint64 array holds integers that float64 cannot "
        "represent exactly (beyond 2**53); convert it yourself if rounding is fine, or declare "
        "the input with dtype='uint64'",
    ),
    ("float64", [1.5, "a"], "input 0 'x0' expects float64, got list [1.5, 'a']: <U32 values"),
    (
        "float64",
        [2**64, 1],
        "input 0 'x0' expects float64, got list [18446744073709551616, 1]: values NumPy holds "
        "only as Python objects: an int wider than 64 bits, None, a Decimal, or values of "
        "mixed kinds",
    ),
    (
        "float64",
        np.array(["1.5"]),
        "input 0 'x0' expects float64, got an array of <U3 values",
    ),
    (
        "float64",
        np.zeros(2, [("a", "f8")]),
        "input 0 'x0' expects float64, got an array of [('a', '<f8')] values",
    ),
    (
        "int64",
        [1, 2.5],
        "input 0 'x0' expects int64; the value [1, 2.5] does not convert without loss",
    ),
    (
        "int64",
        [1, np.nan],
        "input 0 'x0' expects int64; the value [1, nan] does not convert without loss",
    ),
    ("uint8", [300], "input 0 'x0' expects uint8; the value [300] does not convert without loss"),
    (
        "float64",
        [2**53 + 1],
        "input 0 'x0' expects float64; the value [9007199254740993] does not convert without loss",
    ),
    (
        "float64",
        [1 + 2j, 3],
        "input 0 'x0' expects float64; the value [(1+2j), 3] has complex "
        "numbers with an imaginary part, which the cast would drop; declare the input with "
        "dtype='complex128' or pass the real part",
    ),
    (
        "int64",
        [2 + 1j],
        "input 0 'x0' expects int64; the value [(2+1j)] has complex numbers "
        "with an imaginary part, which the cast would drop; declare the input with "
        "dtype='complex128' or pass the real part",
    ),
    # a list that mixes ints and floats: NumPy reads it as float64, rounding the ints beyond
    # 2**53 before any check; each int is checked as the Python int it is
    (
        "float64",
        [2**53 + 1, 0.5],
        "input 0 'x0' expects float64; the value [9007199254740993, 0.5] does not convert "
        "without loss (float64 holds the int 9007199254740993 as 9007199254740992.0: integers "
        "beyond 2**53 round); pass np.asarray(value, 'float64') if rounding is fine",
    ),
    (  # (ints of both signs beyond int64: float64 too)
        "float64",
        [2**63 + 1, -1],
        "input 0 'x0' expects float64; the value [9223372036854775809, -1] does not convert "
        "without loss (float64 holds the int 9223372036854775809 as 9.223372036854776e+18: "
        "integers beyond 2**53 round); pass np.asarray(value, 'float64') if rounding is fine",
    ),
    (
        "float32",
        [np.int64(2**62 + 1), 0.5],
        "input 0 'x0' expects float32; the value [np.int64(4611686018427387905), 0.5] does not "
        "convert without loss (float32 holds the int 4611686018427387905 as "
        "4.611686018427388e+18: integers beyond 2**24 round); pass np.asarray(value, 'float32') "
        "if rounding is fine",
    ),
    (
        "int32",
        [2**62 + 1, 2.0],
        "input 0 'x0' expects int32; the value [4611686018427387905, 2.0] does not convert "
        "without loss (int32 holds -2147483648 to 2147483647, not 4611686018427387905)",
    ),
    (
        "int64",
        [2**62 + 1, 2.5],
        "input 0 'x0' expects int64; the value [4611686018427387905, 2.5] does not convert "
        "without loss",
    ),
    (
        "uint64",
        [2**64 - 1, -1],
        "input 0 'x0' expects uint64; the value [18446744073709551615, -1] does not convert "
        "without loss",
    ),
    # a list's floats follow the rule of an array's values: none is rounded silently
    (
        "float32",
        [0.5, 0.1, np.nan],
        "input 0 'x0' expects float32; the value [0.5, 0.1, nan] "
        "does not convert without loss (float32 holds 0.1 as 0.10000000149011612); pass "
        "np.asarray(value, 'float32') if rounding is fine",
    ),
    (
        "float32",
        [[1.0], [1e300]],
        "input 0 'x0' expects float32; the value [[1.0], [1e+300]] "
        "does not convert without loss (float32 holds 1e+300 as inf); pass "
        "np.asarray(value, 'float32') if rounding is fine",
    ),
]


@pytest.mark.filterwarnings("error")  # a refusal is one clear error, not a cast warning too
@pytest.mark.parametrize("dtype,value,message", DTYPE_CASES)
def test_dtype_refusals_word_for_word(dtype, value, message):
    got = refusal([((None,), dtype)], value)
    if message is None:
        assert got == (
            "input 0 'x0' expects float32, got a int32 array, which would lose precision; pass "
            "value.astype('float32') or declare the input with dtype='int32'"
        )
    else:
        assert got == message


def test_a_ragged_list_is_refused_with_numpys_reason():
    got = refusal([((None,), "float64")], [[1.0], [1.0, 2.0]])
    assert got.startswith("input 0 'x0': cannot make an array of [[1.0], [1.0, 2.0]]: "), got
    assert "inhomogeneous" in got


ACCEPTED = [
    ("float64", [1, 2], np.array([1.0, 2.0])),
    ("float64", [2**53], np.array([2.0**53])),
    ("float32", [0.5, np.nan, -2.0], np.array([0.5, np.nan, -2.0], "float32")),  # exact
    ("int64", [True, 3], np.array([1, 3])),
    ("uint8", [0, 255], np.array([0, 255], "uint8")),
    ("float64", np.array([3, 2**53], "int64"), np.array([3.0, 2.0**53])),
    ("float64", np.array([-2, 7], "int32"), np.array([-2.0, 7.0])),
    ("int64", np.array([1, 2], "uint8"), np.array([1, 2])),
    ("float64", np.array([0.5, np.nan], "float32"), np.array([0.5, np.nan])),
    ("float32", np.array([3, -7], "int16"), np.array([3.0, -7.0], "float32")),
    ("float64", [1 + 0j, 0.5], np.array([1.0, 0.5])),  # no imaginary part: nothing is lost
    ("complex128", [1 + 2j, 3], np.array([1 + 2j, 3])),
    # ints NumPy reads as float64 (mixed with floats, or of both signs beyond int64) are taken
    # as the Python ints they are, as np.asarray(value, dtype) converts them
    ("int64", [2**62 + 1, 2.0], np.array([2**62 + 1, 2])),
    ("int64", [np.int64(2**62 + 1), -2.0], np.array([2**62 + 1, -2])),
    ("uint64", [2**64 - 1, 0], np.array([2**64 - 1, 0], "uint64")),
    ("uint64", (2**63 + 1, 7.0), np.array([2**63 + 1, 7], "uint64")),
    ("float64", [2**60, 0.5], np.array([2.0**60, 0.5])),
]


@pytest.mark.parametrize("dtype,value,want", ACCEPTED)
def test_values_that_convert_exactly_are_accepted(dtype, value, want):
    got = call([((None,), dtype)], value)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend_name", named_backends("py", "c"))
def test_a_lists_large_ints_are_not_rounded_by_numpys_float64_reading(backend_name):
    """``np.asarray([2**62 + 1, 2.0])`` is float64 [2**62, 2.0]: the check compared the
    rounded int with itself, so an int64 input computed with 2**62 and a float64 input took
    2**63 + 1 rounded; a uint64 input refused [2**64 - 1, 0], read as float64 2**64."""
    i = sn.tensor("i", shape=(None,), dtype="int64")
    assert sn.function([i], i * 1, backend=backend_name)([2**62 + 1, 2.0]).tolist() == [
        2**62 + 1,
        2,
    ]
    m = sn.tensor("m", shape=(None, None), dtype="int64")
    nested = [[2.0, 2**62 + 1], (-(2**62) - 3, 4.0)]
    assert sn.function([m], m * 1, backend=backend_name)(nested).tolist() == [
        [2, 2**62 + 1],
        [-(2**62) - 3, 4],
    ]
    u = sn.tensor("u", shape=(None,), dtype="uint64")
    got = sn.function([u], u * 1, backend=backend_name)([2**64 - 1, 0])
    assert got.dtype == np.uint64 and got.tolist() == [2**64 - 1, 0]
    x = sn.tensor("x", shape=(None,), dtype="float64")
    f = sn.function([x], x * 1, backend=backend_name)
    for value in ([2**63 + 1, -1], [2**53 + 1, 0.5], [2**53 + 1, -1]):
        with pytest.raises(InputError, match=r"the value \[\d+, (-1|0\.5)\] does not convert"):
            f(value)
    assert f([2**53, 0.5]).tolist() == [2.0**53, 0.5]
    b = sn.tensor("b", shape=(None,), dtype="bool")
    g = sn.function([b], b, backend=backend_name)
    for value in ([2**53 + 1, 0.5], [2**63, 1.0], [np.int64(2**60 + 1), 0.0]):
        with pytest.raises(InputError, match=r"'b' expects bool; .*\(bool holds the int \d+ as"):
            g(value)


def test_a_complex_array_for_an_integer_input_is_refused_naming_it():
    """A complex128 array for an int64 input: the message's whole-number test ran np.mod on
    complex values, a bare TypeError "ufunc 'remainder' not supported"."""
    xi = sn.tensor("xi", shape=(None,), dtype="int64")
    with pytest.raises(InputError, match=r"'xi' expects int64, got a complex128 array; .* complex"):
        sn.function([xi], xi)(np.array([1 + 1j, 2]))


@pytest.mark.parametrize("backend_name", named_backends("py", "c"))
def test_numpy_scalars_of_another_dtype_convert_for_a_0d_input(backend_name):
    s = sn.tensor("s", shape=(), dtype="float64")
    f = sn.function([s], s * 3, backend=backend_name)
    for value in (np.float32(0.5), np.int32(2), np.float64(1.25), 4, 2.5):
        got = f(value)
        assert got.dtype == np.float64 and got == float(value) * 3, (value, got)
    i = sn.tensor("i", shape=(), dtype="int32")
    g = sn.function([i], i + 1, backend=backend_name)
    assert g(np.int64(3)) == 4 and g(np.int64(3)).dtype == np.int32
    with pytest.raises(InputError, match=r"int32; the value np.float64\(3.5\) does not convert"):
        g(np.float64(3.5))


def test_the_fast_path_takes_only_arrays_that_already_fit():
    """``quick`` hands back the caller's array itself (no copy, no check) only when its dtype
    and every dim are what a fully fixed input declares; anything else takes the full check."""
    fixed = InputSpec(sn.tensor("w", shape=(2, 3)), 0)
    a = np.ones((2, 3))
    assert fixed.quick(a) is a
    for other in (
        np.ones((3, 2)),
        np.ones((2, 3), "float32"),
        np.ones(6),
        a.tolist(),
        np.ma.masked_array(a),
    ):
        assert fixed.quick(other) is None
    named = InputSpec(sn.tensor("v", shape=("n", 3)), 1)
    assert named.quick(a) is None and named.label == "input 1 'v'"
    scalar = InputSpec(sn.tensor("s", shape=()), 2)
    assert scalar.quick(np.float64(2.5)) == 2.5 and scalar.quick(np.float64(2.5)).shape == ()
    assert scalar.quick(np.float32(2.5)) is None and scalar.quick(2.5) is None
    assert InputSpec(sn.tensor("t", shape=(1,)), 3).quick(np.float64(2.5)) is None


def test_a_linear_dim_whose_name_no_input_binds_binds_it(backend, monkeypatch):
    """``n+1`` of length 1 makes n 0 (a plain ``n`` of length 0 is accepted too); a length no
    n gives is refused, and so is a second input of the same or another dim of n that disagrees
    (they broadcast silently). The C runner leaves such inputs to the Python checks: with it
    on and off alike."""
    x = sn.tensor("x", shape=("n+1",))
    f = sn.function([x], x * 2, backend=backend)
    for length in (1, 4):
        np.testing.assert_array_equal(f(np.ones(length)), np.full(length, 2.0))
    with pytest.raises(InputShapeError, match=r"axis 0 \(n\+1\) is 0, which no size of 'n' gives"):
        f(np.ones(0))
    a, c, d = (sn.tensor(v, shape=(s,)) for v, s in (("a", "2*n"), ("c", "2*n"), ("d", "n+1")))
    sq = sn.tensor("sq", shape=("n*n",))
    for runner in (True, False):
        monkeypatch.setattr(sn.config, "c_runner", runner)
        g = sn.function([a, c], a + c, backend=backend)
        h = sn.function([a, d], a.reshape((2, -1)).sum(axis=0) + d[1:], backend=backend)
        k = sn.function([sq, a], sq.sum() + a.sum(), backend=backend)
        np.testing.assert_array_equal(g(np.ones(6), np.arange(6.0)), np.arange(6.0) + 1)
        np.testing.assert_array_equal(h(np.ones(6), np.arange(4.0)), [3.0, 4.0, 5.0])
        with pytest.raises(InputShapeError) as info:
            g(np.ones(6), np.ones(1))
        assert str(info.value) == (
            "input 1 'c' expects shape (n*2,) (float64), got an array of shape (1,): axis 0 "
            "(n*2) should be 6 with n=3 in input 0 'a' (n*2 = 6)"
        )
        with pytest.raises(InputShapeError, match=r"axis 0 \(n\+1\) should be 4 with n=3"):
            h(np.ones(6), np.ones(2))
        assert k(np.ones(9), np.ones(6)) == 15.0
        with pytest.raises(InputShapeError, match=r"input 0 'sq'.*axis 0 \(n\*n\) should be 9 "):
            k(np.ones(4), np.ones(6))  # the name bound by a later input checks an earlier one
        with pytest.raises(InputShapeError, match=r"axis 0 \(n\*2\) is 7, which no size of 'n'"):
            g(np.ones(7), np.ones(7))


def test_a_dim_no_call_can_solve_has_one_size_across_the_inputs():
    """``n*m`` (two names without sizes) cannot be solved: two inputs of it must agree."""
    a, b = sn.tensor("a", shape=("n*m",)), sn.tensor("b", shape=("m*n",))
    f = sn.function([a, b], a - b, backend="py")
    np.testing.assert_array_equal(f(np.ones(6), np.ones(6)), np.zeros(6))
    with pytest.raises(InputShapeError, match=r"axis 0 \(m\*n\) is 1 here but 6 in input 0 'a'"):
        f(np.ones(6), np.ones(1))


def test_a_shared_values_expression_dims_give_the_calls_names(backend):
    """docs/shapes.md: a named dim has one size across the inputs and the shared values a call
    reads, expression dims included. ``S`` of ``("n", "n+1")`` gives n by its plain dim: the C
    runner checks it with the inputs (it ran such a call silently, S.shape[0] 3 beside
    x.shape[0] 5). ``T`` of ``("2*n",)`` gives n only through its expression dim, on every
    backend (nothing checked it); another shared value must agree with it too."""
    S = sn.shared(np.arange(12.0).reshape(3, 4), name="S", shape=("n", "n+1"))
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], [S.shape[0], x.sum() + S.sum()], backend=backend)
    assert f(np.ones(3))[1] == 69.0
    if backend == "c":
        assert f.runner is not None and f.runner.runs == 1
    with pytest.raises(InputShapeError) as info:
        f(np.ones(5))
    assert str(info.value) == (
        "input 0 'x' expects shape (n,) (float64), got an array of shape (5,): dim 'n' (axis 0) "
        "is 5 here but 3 in shared 'S' (float64(n, n+1)); a named dim has one size across a call"
    )
    T = sn.shared(np.ones(6), name="T", shape=("2*n",))
    g = sn.function([x], [T.shape[0], T.sum() + x.sum()], backend=backend)
    assert g(np.ones(3))[1] == 9.0
    with pytest.raises(InputShapeError) as info:
        g(np.ones(5))
    assert str(info.value) == (
        "input 0 'x' expects shape (n,) (float64), got an array of shape (5,): dim 'n' (axis 0) "
        "is 5 here but 3 in shared 'T' (float64(n*2,)) (n*2 = 6); a named dim has one size "
        "across a call"
    )
    B = sn.shared(np.ones(4), name="B", shape=("n",))
    h = sn.function([], T.sum() + B.sum(), backend=backend)
    with pytest.raises(InputShapeError) as info:
        h()
    assert str(info.value) == (
        "shared 'T' (float64(n*2,)) has shape (6,): axis 0 (n*2) should be 8 with n=4 in "
        "shared 'B' (float64(n,))"
    )
    B.set_value(np.ones(3))
    assert h() == 9.0


def test_a_product_dim_is_0_where_one_of_its_names_is(backend):
    """``n*m`` with n 0 is 0 whatever m is: a value that says otherwise is refused, in the
    value that binds n and beside another input alike (both were accepted: the dim was only
    compared across values, as where no name has a size), and in a shared value."""
    p = sn.tensor("p", shape=("n", "n*m"))
    f = sn.function([p], p.sum(), backend=backend)
    assert f(np.ones((0, 0))) == 0.0 and f(np.ones((2, 6))) == 12.0
    with pytest.raises(InputShapeError) as info:
        f(np.ones((0, 5)))
    assert str(info.value) == (
        "input 0 'p' expects shape (n, m*n) (float64), got an array of shape (0, 5): axis 1 "
        "(m*n) should be 0 with n=0 in input 0 'p'"
    )
    a, b = sn.tensor("a", shape=("n*m",)), sn.tensor("b", shape=("n",))
    g = sn.function([a, b], a.sum() + b.sum(), backend=backend)
    with pytest.raises(InputShapeError, match=r"input 0 'a'.*axis 0 \(m\*n\) should be 0 with n=0"):
        g(np.ones(3), np.ones(0))
    with pytest.raises(sn.InputError, match=r"axis 1 \(m\*n\) should be 0 with n=0 in axis 0"):
        sn.shared(np.ones((0, 5)), shape=("n", "n*m"))


def test_a_shared_values_named_dims_are_checked_against_the_inputs(backend):
    """docs/shapes.md: a named dim has one size across a call, shared values included. The C
    runner checks them with the inputs (a call that fits runs there, not declined); one that
    does not is declined and the input checks name the input and the shared variable."""
    A = sn.shared(np.array([1.0, 2.0, 3.0]), shape=("n",), name="A")
    B = sn.shared(np.ones((3, 2)), name="B")  # fixed dims only: not checked by name
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], [x + A, sn.sum(B)], backend=backend)
    np.testing.assert_array_equal(f(np.full(3, 10.0))[0], [11.0, 12.0, 13.0])
    if f.runner is not None:
        assert (f.runner.runs, f.runner.declined) == (1, 0)
    for length in (1, 5):  # 1 broadcast silently; 5 failed in NumPy's broadcast
        with pytest.raises(InputShapeError) as info:
            f(np.full(length, 10.0))
        assert str(info.value) == (
            f"input 0 'x' expects shape (n,) (float64), got an array of shape ({length},): dim "
            f"'n' (axis 0) is {length} here but 3 in shared 'A' (float64(n,)); a named dim has "
            "one size across a call"
        )
    A.set_value(np.ones(5))  # the check reads the value of the call
    np.testing.assert_array_equal(f(np.full(5, 10.0))[0], np.full(5, 11.0))
    C = sn.shared(np.ones(4), shape=("n",), name="C")
    g = sn.function([], A + C, backend=backend)
    with pytest.raises(
        InputShapeError,
        match=r"shared 'C' \(float64\(n,\)\) has dim 'n' \(axis 0\) "
        r"of size 4 but 5 in shared 'A'",
    ):
        g()
