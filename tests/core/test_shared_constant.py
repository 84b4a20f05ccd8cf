import copy
import pickle
import re
import warnings

import numpy as np
import pytest

import symnb as sn
from tests.helpers import named_backends


def test_shared_copies_by_default_and_borrow_shares():
    value = np.zeros(3)
    w = sn.shared(value, name="w")
    value[0] = 5
    assert w.get_value()[0] == 0
    got = w.get_value()
    got[1] = 7
    assert w.get_value()[1] == 0
    b = sn.shared(value, name="b", borrow=True)
    assert b.get_value(borrow=True) is value


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_a_clone_of_a_shared_variable_shares_its_value(backend):
    """``W.clone()`` was core ``Variable.clone``: an independent shared variable holding the
    same array at first, so writes through it silently stopped reaching W (and back). As
    Theano's ``SharedVariable.clone()`` shared its container, both hold one value."""
    w = sn.shared(np.ones(3), name="w")
    wc = w.clone()
    assert wc is not w and wc.uid != w.uid and wc.name == "w" and wc.type == w.type
    assert isinstance(wc, sn.SharedVariable)
    wc.set_value(np.zeros(3))
    assert w.get_value().tolist() == [0.0, 0.0, 0.0]
    f = sn.function([], wc * 2, updates={wc: wc + 5}, backend=backend)
    assert f().tolist() == [0.0, 0.0, 0.0]
    assert w.get_value().tolist() == [5.0, 5.0, 5.0]
    w.set_value(np.full(3, 9.0))
    assert wc.get_value().tolist() == [9.0, 9.0, 9.0] and f().tolist() == [18.0] * 3
    g = sn.function([], w, updates={w: w - 1}, backend=backend)  # the original's function
    assert g().tolist() == [14.0] * 3 and wc.get_value().tolist() == [13.0] * 3
    assert wc.clone().clone()._origin is w
    wc2, w2 = pickle.loads(pickle.dumps((wc, w)))  # pickled (and copied) together: still one
    w2.set_value(np.zeros(3))
    assert wc2.get_value().tolist() == [0.0, 0.0, 0.0] and w.get_value().tolist() == [13.0] * 3
    deep = copy.deepcopy([w, wc])
    deep[1].set_value(np.ones(3))
    assert deep[0].get_value().tolist() == [1.0] * 3 and w.get_value().tolist() == [13.0] * 3
    alone = pickle.loads(pickle.dumps(wc))  # with a copy of its original
    assert alone.get_value().tolist() == [13.0] * 3 and alone._origin is not w


def test_shared_set_value_checks_dtype_and_shape():
    w = sn.shared(np.zeros((2, 3), "float32"), name="W")
    w.set_value(np.ones((2, 3)))  # float64 -> float32 is same-kind: accepted, cast
    assert w.get_value().dtype == np.float32 and w.get_value().sum() == 6
    with pytest.raises(sn.InputError, match=r"'W'.*shape \(3, 3\)"):
        w.set_value(np.ones((3, 3)))
    with pytest.raises(sn.DTypeError, match="'W'"):
        w.set_value(np.ones((2, 3), complex))
    for dtype, bad in [("int8", [300, -1]), ("int32", [2**40, 5]), ("uint8", [-1, 2])]:
        small = sn.shared(np.zeros(2, dtype), name="small")
        with pytest.raises(sn.DTypeError, match=rf"'small'.*value {bad[0]}: {dtype} holds"):
            small.set_value(np.array(bad))
        with pytest.raises(sn.DTypeError, match=rf"value {bad[0]}"):
            small.set_value(bad)
        small.set_value([7, 1])  # values that fit are cast
        assert small.get_value().tolist() == [7, 1] and small.get_value().dtype == dtype
    narrow = sn.shared(np.zeros(2, "float32"), name="narrow")
    with pytest.raises(sn.DTypeError, match=r"value 1e\+300: float32 overflows to inf"):
        narrow.set_value(np.array([1e300, 0.1]))
    narrow.set_value(np.array([np.inf, 0.1]))  # an infinity is kept, 0.1 rounds
    assert narrow.get_value()[0] == np.inf
    relaxed = sn.shared(np.zeros((2, 3)), name="R", shape=(None, 3))
    relaxed.set_value(np.ones((5, 3)))
    assert relaxed.get_value().shape == (5, 3)


def test_constants_are_read_only_and_weak_scalars_keep_float32():
    c = sn.constant([1.0, 2.0], dtype="float32")
    assert c.type == sn.TensorType("float32", (2,))
    with pytest.raises(ValueError):
        c.value[0] = 3
    x = sn.vector("x", dtype="float32")
    assert (x * 2.0).dtype == np.float32
    assert (x * np.float64(2.0)).dtype == np.float64  # a NumPy scalar is not weak


@pytest.mark.parametrize(
    ("value", "dtype", "why"),
    [
        (np.array([-1, 3]), "uint8", r"the int64 value -1 \(uint8 holds 0 to 255\)"),
        (np.array([0.5]), "int64", r"the float64 value 0\.5 \(int64 holds whole numbers alone"),
        (0.5, "int64", r"the float64 value 0\.5 \(int64 holds whole numbers alone"),
        (np.array([np.nan]), "int32", r"the float64 value nan \(int32 holds whole numbers"),
        (np.array([1e300, 0.1]), "float32", r"the float64 value 1e\+300 \(float32 overflows"),
        (np.array([2**53 + 1]), "float64", r"the int64 value 9007199254740993 \(float64 holds int"),
        ([2**53 + 1, 0.5], "float64", r"the int value 9007199254740993 \(float64 holds int"),
        (2**70 + 1, "float64", r"the int value 1180591620717411303425 \(float64 holds int"),
        (2, "bool", r"the int64 value 2 \(bool holds 0 and 1 alone\)"),
        (np.array([0.5]), "bool", r"the float64 value 0\.5 \(bool holds 0 and 1 alone\)"),
        (
            1 + 1j,
            "float64",
            r"the complex128 value \(1\+1j\) \(float64 is real: the imaginary part would",
        ),
        (np.array([2 - 1j]), "int64", r"the complex128 value \(2-1j\) \(int64 is real"),
    ],
)
def test_a_constant_refuses_a_dtype_that_changes_its_values(value, dtype, why):
    """sn.constant(value, dtype) converted by NumPy's unsafe cast: -1 into uint8 was 255,
    0.5 into int64 was 0, 1e300 into float32 inf, and a complex for a real dtype NumPy's own
    TypeError; the values are read by set_value's rule, each named at the user's line."""
    with pytest.raises(sn.DTypeError, match=rf"^constant 'c': {dtype} cannot hold {why}") as info:
        sn.constant(value, dtype=dtype, name="c")
    assert __file__ in str(info.value)  # the user's line


def test_a_constant_keeps_a_dtype_that_keeps_its_values():
    """What survives the cast is taken: a float rounds to a narrower float (as set_value and
    an assignment round it), whole floats, 0 and 1 into bool, a complex with no imaginary
    part into a real dtype, a list's ints read exactly; sn.full keeps np.full's cast."""
    for value, dtype, want in [
        (np.array([0.1, np.inf, np.nan]), "float32", np.array([0.1, np.inf, np.nan], "float32")),
        (np.array([1.0, -2.0]), "int8", np.array([1, -2], "int8")),
        ([1, 0], "bool", np.array([True, False])),
        (1 + 0j, "float64", np.array(1.0)),
        ([2**64 - 1, 0], "uint64", np.array([2**64 - 1, 0], "uint64")),
        ([2**62 + 1, 2.0], "int64", np.array([2**62 + 1, 2], "int64")),
        (np.array([2**53]), "float64", np.array([2.0**53])),
    ]:
        c = sn.constant(value, dtype=dtype)
        assert c.value.dtype == want.dtype
        np.testing.assert_array_equal(c.value, want)
    full = sn.full((2,), 2.7, dtype="int32").eval()  # as np.full((2,), 2.7, dtype="int32")
    assert full.dtype == np.int32 and full.tolist() == [2, 2]


def test_a_constant_holds_its_own_copy_and_leaves_the_callers_array_alone(backend):
    """A constant made of an array (``sn.constant(a)``, or ``x * w`` of an array ``w``) is
    its own read-only copy: the caller's array stays writable, and a write to it or to the
    array it views changes no compiled result (on "py" and "c" it did, on "opencl", which
    holds an upload, it did not)."""
    w = np.ones(3)
    x = sn.vector("x")
    f = sn.function([x], x * w, backend=backend)
    assert w.flags.writeable
    w[0] = 2.0  # was NumPy's "assignment destination is read-only"
    base = np.arange(6.0)
    g = sn.function([x], x + sn.constant(base[:3]), backend=backend)
    base[0] = 100.0
    zeros = np.zeros(3)
    np.testing.assert_array_equal(f(np.ones(3)), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(g(zeros), [0.0, 1.0, 2.0])
    assert base.flags.writeable


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_values_and_types_of_another_byte_order_compute_in_native_order(backend):
    big = np.arange(4, dtype=">f8")
    w = sn.shared(big, name="w")
    c = sn.constant(big.astype(">i8"))
    x = sn.tensor("x", shape=(4,), dtype=">f8")
    assert w.type.dtype.isnative and c.type.dtype.isnative and x.type.dtype.isnative
    assert w.get_value().dtype == np.float64
    f = sn.function([x], [w * 2 + 1, c * 2 + 1, x * 2 + 1], backend=backend)
    for got in f(big):
        np.testing.assert_array_equal(got, [1, 3, 5, 7])
        assert got.dtype.isnative
    w.set_value(np.array([4.0, 3, 2, 1], ">f8"))
    np.testing.assert_array_equal(f(big)[0], [9, 7, 5, 3])


MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
MASK_HINT = re.escape(
    "got a masked array; symnb computes on plain arrays and would drop the mask: pass "
    "value.filled(fill_value)"
)


def test_a_masked_array_is_refused_as_a_shared_or_constant_value_as_inputs_refuse_it():
    with pytest.raises(sn.InputError, match=rf"^shared 'w' {MASK_HINT}") as info:
        sn.shared(MASKED, name="w")
    assert info.value.location.filename == __file__
    with pytest.raises(sn.InputError, match=rf"^constant {MASK_HINT}"):
        sn.constant(MASKED)
    w = sn.shared(np.zeros(3), name="w")
    with pytest.raises(sn.InputError, match=rf"^shared 'w' \(float64\(3,\)\) {MASK_HINT}"):
        w.set_value(MASKED)
    assert w.get_value().tolist() == [0, 0, 0]
    w.set_value(MASKED.filled(0.0))
    assert w.get_value().tolist() == [1, 0, 3]


def test_a_torch_tensor_that_requires_grad_is_detached_for_a_shared_value_with_a_note():
    torch = pytest.importorskip("torch")
    t = torch.arange(3, dtype=torch.float64).requires_grad_()
    with pytest.warns(sn.errors.InputWarning, match=r"^shared 'w' got a torch tensor that re"):
        w = sn.shared(t, name="w")
    assert w.get_value().tolist() == [0, 1, 2]
    with pytest.warns(sn.errors.InputWarning, match=r"^shared 'w' \(float64\(3,\)\) got a t"):
        w.set_value(t * 2)
    assert w.get_value().tolist() == [0, 2, 4]
    assert t.grad is None and t.requires_grad


def test_a_borrowed_value_is_lent_whenever_it_is_the_callers_memory():
    """``borrow=True`` lends (no device copy is kept) every value read without a copy: an
    ndarray, a torch CPU tensor (one that requires grad too), a memoryview, a DataArray; a
    value that had to be copied (a list, a cast, a torch view with its conjugate bit) is
    the variable's own. Only an ndarray was lent: a device kept a stale copy of the rest."""
    torch = pytest.importorskip("torch")
    xr = pytest.importorskip("xarray")
    base = np.arange(3.0)
    lent = {
        "ndarray": base,
        "memoryview": memoryview(base),
        "torch": torch.from_numpy(base),
        "requires grad": torch.from_numpy(base).requires_grad_(),
        "DataArray": xr.DataArray(base, dims=("n",)),
    }
    copied = {"list": [0.0, 1.0, 2.0], "conj": torch.tensor([1 + 2j, 3 - 1j, 0j]).conj()}
    for kind, value in {**lent, **copied}.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sn.errors.InputWarning)
            made = sn.shared(value, name="w", borrow=True)
            set_ = sn.shared(np.zeros(3, made.dtype), name="s")
            set_.set_value(value, borrow=True)
        assert made.lent == set_.lent == (kind in lent), kind
    cast = sn.shared(np.zeros(3), name="c")  # int32 values cast to float64: a copy
    cast.set_value(memoryview(np.arange(3, dtype="int32")), borrow=True)
    assert not cast.lent
    base[0] = 7.0  # what each lent variable reads
    assert sn.shared(memoryview(base), borrow=True).get_value().tolist() == [7.0, 1.0, 2.0]


def test_a_dataarray_is_matched_to_a_shared_variables_named_dims_by_name():
    xr = pytest.importorskip("xarray")
    a = np.arange(9.0).reshape(3, 3)
    da = xr.DataArray(a, dims=("time", "batch"))
    x = sn.tensor("x", shape=("batch", "time"))
    as_input = sn.function([x], x + 0, backend="py")(da)
    np.testing.assert_array_equal(as_input, a.T)
    w = sn.shared(np.zeros((3, 3)), name="w", shape=("batch", "time"))
    w.set_value(da)
    np.testing.assert_array_equal(w.get_value(), a.T)
    made = sn.shared(da, name="m", shape=("batch", "time"))
    np.testing.assert_array_equal(made.get_value(), a.T)
    with pytest.raises(sn.InputError, match=r"with no 'batch'"):
        w.set_value(xr.DataArray(a, dims=("time", "row")))


def test_set_value_refuses_integers_a_float_variable_cannot_hold_exactly():
    w = sn.shared(np.zeros(2), name="w")
    with pytest.raises(
        sn.DTypeError,
        match=r"^shared 'w' \(float64\(2,\)\) cannot take the int64 value 9007199254740993: "
        r"float64 holds integers exactly only up to 2\*\*53",
    ):
        w.set_value(np.array([2**53 + 1, 3]))
    with pytest.raises(sn.DTypeError, match=r"int64 value 16777217: float32 holds integers "):
        sn.shared(np.zeros(1, "float32"), name="n").set_value([2**24 + 1])
    w.set_value(np.array([2**53, 3]))
    assert w.get_value().tolist() == [2.0**53, 3.0]


def test_set_value_reads_a_lists_ints_as_the_python_ints_they_are():
    """NumPy reads ``[2**63 + 1, -1]`` (ints of both signs beyond int64) and ``[2**53 + 1,
    0.5]`` as float64, rounding the int: a float64 variable kept it rounded (where
    ``[2**53 + 1, -1]``, read as int64, is refused), and a uint64 variable refused
    ``[2**64 - 1, 0]`` as "a float64 value"."""
    w = sn.shared(np.zeros(2), name="w")
    with pytest.raises(
        sn.DTypeError,
        match=r"^shared 'w' \(float64\(2,\)\) cannot take the int value 9223372036854775809: "
        r"float64 holds integers exactly only up to 2\*\*53",
    ):
        w.set_value([2**63 + 1, -1])
    with pytest.raises(sn.DTypeError, match=r"int value 9007199254740993: float64 holds"):
        w.set_value([2**53 + 1, 0.5])
    with pytest.raises(sn.DTypeError, match=r"int value 16777217: float32 holds integers "):
        sn.shared(np.zeros(2, "float32"), name="n").set_value([2**24 + 1, 0.5])
    assert w.get_value().tolist() == [0.0, 0.0]
    w.set_value([2**60, 0.5])
    assert w.get_value().tolist() == [2.0**60, 0.5]
    u = sn.shared(np.zeros(2, "uint64"), name="u")
    u.set_value([2**64 - 1, 0])
    assert u.get_value().dtype == np.uint64 and u.get_value().tolist() == [2**64 - 1, 0]
    with pytest.raises(sn.DTypeError, match=r"cannot take the int value -1: uint64 holds 0 to"):
        u.set_value([2**64 - 1, -1])
    with pytest.raises(sn.DTypeError, match=r"\(uint64\(2,\)\) cannot take a float64 value\n"):
        u.set_value([2**64 - 1, 0.5])  # a float into an integer variable, as [1.0, 2.0]
    assert u.get_value().tolist() == [2**64 - 1, 0]


def test_a_shared_values_named_dims_agree_within_the_value():
    """A name is one size: ``shape=("n", "n")`` takes no (2, 3) value, nor ``("n", "2*n")`` a
    (3, 5) one, at the sn.shared or set_value line, as an input of that shape refuses it at a
    call; each dim was matched alone, and the error came at some later call far from it."""
    with pytest.raises(sn.InputError) as info:
        sn.shared(np.ones((2, 3)), shape=("n", "n"), name="A")  # <- made
    assert str(info.value) == (
        "shared 'A' (float64(n, n)): the initial value has shape (2, 3), which does not fit "
        "(n, n): dim 'n' (axis 1) is 3 here but 2 in axis 0; a named dim has one size"
    )
    assert "<- made" in info.value.location.code
    S = sn.shared(np.ones((3, 3)), shape=("n", "n"), name="S")
    with pytest.raises(sn.InputError, match=r"dim 'n' \(axis 1\) is 5 here but 2 in axis 0"):
        S.set_value(np.ones((2, 5)))  # <- set
    E = sn.shared(np.ones((3, 6)), shape=("n", "2*n"), name="E")
    with pytest.raises(sn.InputError, match=r"axis 1 \(n\*2\) should be 6 with n=3 in axis 0"):
        E.set_value(np.ones((3, 5)))
    with pytest.raises(sn.InputError, match=r"axis 0 \(n\*2\) is 5, which no size of 'n' gives"):
        sn.shared(np.ones(5), shape=("2*n",))
    assert S.get_value().shape == (3, 3) and E.get_value().shape == (3, 6)
    S.set_value(np.ones((4, 4)))
    E.set_value(np.ones((2, 4)))
    assert sn.function([], E * 2, backend="py")().shape == (2, 4)
