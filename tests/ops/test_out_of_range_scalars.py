"""Python scalars beyond an integer dtype's range, and non-finite constants, against NumPy 2.

A weak Python int is never cast into a dtype that cannot hold it (the cast would wrap): NumPy
either gives the exact answer (``np.clip`` drops a bound beyond the range) or refuses, and
symnb does the same on every backend."""

import numpy as np
import pytest

import symnb as sn
from symnb.errors import DTypeError

CLIP_DTYPES = ["int8", "uint8", "int32", "uint64"]


def clip_bounds(dtype) -> list:
    """(lo, hi) pairs: Python ints in and beyond the range, on either side, lo > hi, one bound
    None, and NumPy scalars (strong: they promote)."""
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    return [
        (-1, 300),
        (0, 300),
        (-1, 100),
        (-200, 200),
        (-1, 10),
        (0, 2**40),
        (lo - 1, hi + 1),
        (lo, hi),
        (lo - 1, 3),
        (2, hi + 1),
        (100, 3),  # lo > hi: hi everywhere
        (100, hi + 1),
        (lo - 5, -1),
        (None, 300),
        (None, hi + 1),
        (-1, None),
        (lo - 1, None),
        (-(2**70), 2**70),
        (hi + 1, hi + 5),  # beyond, on the side they do not limit: refused
        (lo - 5, lo - 1),
        (None, lo - 1),
        (hi + 1, None),
        (np.int64(-1), np.int64(300)),
        (np.int16(-1), 300),
        (np.uint8(3), np.uint8(200)),
        (-1, np.int32(7)),
    ]


def numpy_clip(a, lo, hi):
    try:
        return np.clip(a, lo, hi)
    except (OverflowError, TypeError, ValueError):
        return None


@pytest.mark.parametrize("dtype", CLIP_DTYPES)
def test_clip_with_bounds_beyond_the_integer_range_matches_numpy(dtype, backend):
    info = np.iinfo(dtype)
    a = np.array([info.min, 0, 3, 5, 100, 127, info.max], dtype=dtype)
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    outputs, wants = [], []
    for lo, hi in clip_bounds(dtype):
        want = numpy_clip(a, lo, hi)
        if want is None:
            # a Python int no NumPy integer dtype holds (2**64) is not a constant symnb can
            # make at all (a TypeError from as_variable, before any dtype rule)
            huge = any(type(b) is int and not -(2**63) <= b < 2**64 for b in (lo, hi))
            with pytest.raises((DTypeError, TypeError) if huge else DTypeError):
                sn.clip(x, lo, hi)
            continue
        outputs.append(sn.clip(x, lo, hi))
        wants.append((lo, hi, want))
    got = sn.function([x], outputs, backend=backend)(a)
    for value, (lo, hi, want) in zip(got, wants):
        assert value.dtype == want.dtype, (lo, hi, value.dtype, want.dtype)
        np.testing.assert_array_equal(value, want, err_msg=f"clip(x, {lo!r}, {hi!r})")


@pytest.mark.parametrize("dtype", CLIP_DTYPES)
def test_clip_with_symbolic_bounds_of_a_wider_dtype_promotes_as_numpy(dtype, backend):
    info = np.iinfo(dtype)
    a = np.array([info.min, 0, 5, info.max], dtype=dtype)
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    lo, hi = sn.scalar("lo", dtype="int64"), sn.scalar("hi", dtype="float64")
    f = sn.function([x, lo, hi], sn.clip(x, lo, hi), backend=backend)
    for low, high in [(-1, 300.0), (-(2**40), 2.0**70), (3, 2.5)]:
        want = np.clip(a, np.int64(low), np.float64(high))
        got = f(a, np.int64(low), np.float64(high))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


SPECIALS = [float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 2.5, -1e300]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floor_div_and_mod_with_a_non_finite_constant_match_numpy(dtype, backend):
    """``inf // x`` with inf a constant gave x on opencl (PoCL folded fmod(INFINITY, b))."""
    a = np.array([2.0, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -7.5], dtype=dtype)
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    cases = []
    for c in SPECIALS:
        cases += [
            (f"{c} // x", c // x, lambda a, c=c: c // a),
            (f"x // {c}", x // c, lambda a, c=c: a // c),
            (f"{c} % x", c % x, lambda a, c=c: c % a),
            (f"x % {c}", x % c, lambda a, c=c: a % c),
        ]
    with np.errstate(all="ignore"):
        got = sn.function([x], [out for _, out, _ in cases], backend=backend)(a)
    for value, (text, _, ref) in zip(got, cases):
        with np.errstate(all="ignore"):
            want = ref(a)
        assert value.dtype == want.dtype, text
        np.testing.assert_array_equal(value, want, err_msg=text)
        finite = ~np.isnan(want)
        assert (np.signbit(value[finite]) == np.signbit(want[finite])).all(), text


UPDATES = [
    ("uint8", "set", 0, 300),
    ("uint8", "set", 0, -1),
    ("uint8", "set", slice(1, None), 300),
    ("uint8", "add", slice(1, None), -1),
    ("uint8", "add", 0, 300),
    ("uint8", "add", 0, 2.5),  # a float added into integers: NumPy's same_kind refuses it
    ("int8", "set", 0, -129),
    ("int32", "set", 0, float("nan")),
    ("int32", "set", 0, float("inf")),
    ("int32", "set", 0, 2**40),
    ("uint64", "set", 0, -1),
    # accepted, as NumPy accepts them
    ("uint8", "set", 0, 255),
    ("uint8", "add", slice(1, None), 7),
    ("int8", "set", slice(None), -128),
    ("uint8", "set", 0, True),
    ("float32", "set", 0, 0.1),  # rounded, as a literal in the graph is
    ("float32", "add", 0, 1e300),  # inf, as x + 1e300 is
]


def numpy_update(a, how, index, value):
    out = a.copy()
    try:
        with np.errstate(all="ignore"):
            if how == "set":
                out[index] = value
            else:  # as an array (``a[0] += 2.5`` would add to a NumPy scalar, then cast)
                out[index if isinstance(index, slice) else slice(index, index + 1)] += value
    except (OverflowError, TypeError, ValueError):
        return None
    return out


@pytest.mark.parametrize(("dtype", "how", "index", "value"), UPDATES)
def test_storing_a_python_scalar_the_dtype_cannot_hold_is_refused(
    dtype, how, index, value, backend
):
    a = np.array([0, 5, 9], dtype=dtype)
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    want = numpy_update(a, how, index, value)
    if want is None:
        with pytest.raises(DTypeError, match=r"cannot (store|add) .*'x'") as info:
            getattr(x.at[index], how)(value)
        assert __file__ in str(info.value)  # the user's line
        with pytest.raises(DTypeError):
            (sn.set_subtensor if how == "set" else sn.inc_subtensor)(x, index, value)
        return
    with np.errstate(all="ignore"):
        got = sn.function([x], getattr(x.at[index], how)(value), backend=backend)(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


#: Python scalars NumPy stores by a cast that changes them (``a[0] = 0.5`` stores 0): symnb
#: refuses them, as it refuses a float variable or array stored into integers (docs/ops.md)
CHANGED_BY_NUMPY = [
    ("int32", 0, 2.5, "without a change of kind"),
    ("int64", 0, 0.5, "without a change of kind"),
    ("int64", [0, 1], 0.5, "without a change of kind"),
    ("int64", slice(None), 2.0, "without a change of kind"),  # (kept, but a float)
    ("bool", 0, 2, "without a change of kind"),
    ("float64", 0, 1 + 1j, "without a change of kind"),
    ("float32", 0, 1e300, "float32 overflows to inf"),
    ("float64", 0, 2**53 + 1, r"float64 holds integers exactly only up to 2\*\*53"),
]


@pytest.mark.parametrize(("dtype", "index", "value", "why"), CHANGED_BY_NUMPY)
def test_storing_a_python_scalar_a_cast_would_change_is_refused(dtype, index, value, why):
    a = np.array([0, 5, 9], dtype=dtype)
    if not isinstance(value, complex) and value != 2.0:  # (NumPy refuses a complex itself)
        changed = numpy_update(a, "set", index, value)
        assert changed is not None and changed[0].item() != value  # what NumPy does silently
    x = sn.tensor("x", shape=(None,), dtype=dtype)
    with pytest.raises(DTypeError, match=rf"cannot store .* into 'x' .*{why}") as info:
        x.at[index].set(value)
    assert __file__ in str(info.value)  # the user's line
    with pytest.raises(DTypeError, match=why):
        sn.set_subtensor(x[index], value)
    with pytest.raises(DTypeError, match=why):
        sn.set_subtensor(x, index, value)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
def test_where_with_a_python_int_beyond_the_dtype(dtype, backend):
    """np.where wraps such an int (``np.where(False, int8, 300)`` gives 44); symnb refuses it,
    as NumPy 2 refuses ``x + 300``. Within the range, where matches np.where."""
    info = np.iinfo(dtype)
    c = sn.tensor("c", shape=(3,), dtype="bool")
    x = sn.tensor("x", shape=(3,), dtype=dtype)
    for value in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(
            DTypeError, match=rf"integer {value} is out of bounds for {dtype}.*'x'"
        ) as info_:
            sn.where(c, x, value)
        assert __file__ in str(info_.value)  # the user's line
        with pytest.raises(DTypeError):
            sn.switch(c, value, x)
    cv, xv = np.array([True, False, True]), np.array([1, 2, 3], dtype=dtype)
    for value in (int(info.max), int(info.min), 2.5):
        want = np.where(cv, xv, value)
        got = sn.function([c, x], sn.where(c, x, value), backend=backend)(cv, xv)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_python_int_beyond_2_53_becomes_a_float_as_numpy_makes_it(dtype, backend):
    """NumPy converts the int through a Python float (two roundings for float32), not in one
    conversion of the int64."""
    v = 2**60 + 2**36 + 1
    a = np.array([0.0, 2.0**60 + 2.0**37, -1.0], dtype)
    x = sn.tensor("x", shape=(3,), dtype=dtype)
    outputs = [x + v, sn.equal(x, v), x * 2 - v, sn.maximum(x, v)]
    got = sn.function([x], outputs, backend=backend)(a)
    want = [a + v, a == v, a * 2 - v, np.maximum(a, v)]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
