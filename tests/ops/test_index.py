"""Indexing against NumPy: basic, advanced, masks, updates, take, and their gradients."""

import re

import numpy as np
import pytest

import symnb as sn
from symnb.core.dims import format_shape
from tests.helpers import check, random_array, reference_backend

E = Ellipsis
I2 = np.array([2, 0, -1])
J2 = np.array([[1, 1], [0, 3]])

BASIC = {
    "int": ((3, 4, 5), (1,)),
    "negative int": ((3, 4, 5), (-1, -2)),
    "slice": ((3, 4, 5), (slice(1, None),)),
    "negative step": ((3, 4, 5), (slice(None, None, -2), slice(-3, -1))),
    "new axis": ((3, 4, 5), (None, 1, None)),
    "ellipsis": ((3, 4, 5), (E, 2)),
    "ellipsis middle": ((3, 4, 5), (0, E, slice(0, 2))),
    "empty slice": ((3, 4, 5), (slice(2, 1),)),
    "out-of-range slice": ((3, 4), (slice(1, 10),)),
    "0-d empty tuple": ((), ()),
    "0-d ellipsis": ((), (E,)),
    "0-d new axis": ((), (None,)),
    "empty array": ((0, 3), (slice(None), 1)),
    "bool slice bounds": ((3, 4, 5), (slice(True, None), slice(False, True, True))),
}
ADVANCED = {
    "int array": ((5, 4), (I2,)),
    "2-d int array": ((5, 4), (slice(None), J2)),
    "adjacent arrays": ((5, 4, 3), (I2, np.array([0, 1, 3]))),
    "separated arrays go first": ((5, 4, 3), (I2, slice(None), np.array([1]))),
    "int with array separated": ((5, 4, 3), (0, slice(None), np.array([2, 1]))),
    "int with array adjacent": ((5, 4, 3), (slice(None), 1, np.array([2, 1]))),
    "new axis separates": ((5, 4, 3), (I2, None, np.array([1, 2, 0]))),
    "ellipsis between arrays": ((5, 4), (I2, E, np.array([0, 1, 3]))),
    # an Ellipsis standing for no axes still separates: the index dims go first
    "empty ellipsis separates int and array": ((3, 4, 5), (slice(None), 0, E, [0, 1])),
    "empty ellipsis separates arrays": ((3, 4, 5), (slice(None), [1, 2], E, [0, 1])),
    "empty ellipsis separates a mask": (
        (3, 4, 5),
        (slice(None), np.array([True, False, True, False]), E, [0, 1]),
    ),
    "list index": ((5, 4), ([0, 0, 4],)),
    "empty index array": ((5, 4), (np.array([], dtype="int64"),)),
    "empty list": ((5, 4), ([],)),
    "nested empty list": ((5, 4), ([[]],)),
    "int and empty list": ((5, 4), (1, [])),
    "constant mask": ((3, 4), (np.array([True, False, True]),)),
}
DTYPES = ["float64", "float32", "int64", "bool"]


def typed_run(build, *arrays, backend="py"):
    """The built variable's static shape, and its value computed on ``arrays``."""
    xs = [sn.tensor(f"x{i}", np.shape(a), np.asarray(a).dtype) for i, a in enumerate(arrays)]
    out = build(*xs)
    return out.type.shape, sn.function(xs, out, backend=backend)(*arrays)


def check_static_shape(static, value):
    assert len(static) == np.ndim(value), (static, np.shape(value))
    for d, n in zip(static, np.shape(value)):
        assert d is None or d == n, (static, np.shape(value))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted({**BASIC, **ADVANCED}))
def test_static_index_matches_numpy(case, dtype, rng, backend):
    shape, index = {**BASIC, **ADVANCED}[case]
    a = random_array(rng, shape, dtype)
    static, got = typed_run(lambda x: x[index], a, backend=backend)
    check(got, a[index])
    check_static_shape(static, got)
    assert None not in static  # every index here is a constant: the shape is known


@pytest.mark.parametrize(
    "index",
    [
        lambda x, i, j: x[i:j],
        lambda x, i, j: x[i:, ::j],
        lambda x, i, j: x[i, j],
        lambda x, i, j: x[-i, 1:j:1],
        lambda x, i, j: x[: x.shape[0] - i],
        lambda x, i, j: x[:, x.shape[1] - 1],
    ],
)
def test_symbolic_ints_and_slice_bounds(index, rng, backend):
    a = random_array(rng, (4, 5), "float32")
    i, j = np.int64(1), np.int64(3)
    static, got = typed_run(index, a, i, j, backend=backend)
    check(got, index(a, int(i), int(j)))
    check_static_shape(static, got)


@pytest.mark.parametrize(
    "index",
    [
        (slice(None), slice(2**63, None)),
        (slice(None, None, 10**20),),
        (slice(None, -(10**20)),),
        (slice(10**20, None, -1), slice(-(2**64), None)),
        (slice(None, -(10**20), -1), slice(None, None, -(10**20))),
        (slice(-(2**63) - 1, 2**63, 2**63),),
    ],
)
def test_slice_bounds_beyond_int64_select_what_numpy_selects(index, backend):
    """Python and NumPy take any int as a bound; the kernels' int64 fields must too."""
    a = np.arange(12.0).reshape(3, 4)
    static, got = typed_run(lambda x: x[index] * 2, a, backend=backend)
    check(got, a[index] * 2)
    check_static_shape(static, got)


def test_arange_rows_with_label_vector(rng, backend):
    """``x[arange(n), y]``: the per-row pick a crossentropy makes."""
    a, y = random_array(rng, (4, 3), "float64"), np.array([2, 0, 1, 2])
    rows = np.arange(4)
    static, got = typed_run(lambda x, r, t: x[r, t], a, rows, y, backend=backend)
    check(got, a[rows, y])
    assert static == (4,)


def test_symbolic_arange_rows(rng, backend):
    a, y = random_array(rng, (4, 3), "float64"), np.array([2, 0, 1, 2])
    static, got = typed_run(lambda x, t: x[sn.arange(x.shape[0]), t], a, y, backend=backend)
    check(got, a[np.arange(4), y])
    check_static_shape(static, got)
    sn.check_grad(lambda x: x[sn.arange(x.shape[0]), y] ** 2, [a])


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (0, 4), ()])
def test_symbolic_mask_has_unknown_dim(shape, rng, backend):
    a = random_array(rng, shape, "float64")
    static, got = typed_run(lambda x: x[x > 1.0], a, backend=backend)
    check(got, a[a > 1.0])
    assert static == (None,)


def test_mask_on_inner_axis_keeps_the_others(rng, backend):
    a = random_array(rng, (3, 4), "float32")
    static, got = typed_run(lambda x: x[:, x[0] > 1.0], a, backend=backend)
    check(got, a[:, a[0] > 1.0])
    assert static == (3, None)


UPDATES = {
    "int": ((3, 4), (1,), (4,)),
    "slice broadcast": ((3, 4), (slice(1, None), slice(None, 2)), ()),
    "new axis": ((3, 4), (None, 0), (1, 4)),
    "array": ((5, 2), (np.array([0, 3]),), (2, 2)),
    "repeated array": ((5, 2), (np.array([1, 1, 4, 1]),), (4, 2)),
    "mask": ((3, 4), (np.array([True, False, True]),), (4,)),
    "separated arrays": (
        (3, 4, 2),
        (np.array([0, 2, 0]), slice(None), np.array([1, 1, 1])),
        (3, 4),
    ),
    "empty ellipsis separates arrays": ((3, 4, 5), (slice(None), [1, 2], E, [0, 1]), (2, 3)),
}


@pytest.mark.parametrize("case", sorted(UPDATES))
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_set_and_inc_subtensor_match_numpy(case, dtype, rng, backend):
    shape, index, vshape = UPDATES[case]
    a, v = random_array(rng, shape, dtype), random_array(rng, vshape, dtype)
    want = a.copy()
    want[index] = v
    check(typed_run(lambda x, w: sn.set_subtensor(x, index, w), a, v, backend=backend)[1], want)
    check(typed_run(lambda x, w: x.at[index].set(w), a, v, backend=backend)[1], want)
    want = a.copy()
    np.add.at(want, index, v)
    check(typed_run(lambda x, w: sn.inc_subtensor(x, index, w), a, v, backend=backend)[1], want)
    check(typed_run(lambda x, w: x.at[index].add(w), a, v, backend=backend)[1], want)


@pytest.mark.parametrize("index", [1, np.array([0, 2]), slice(1, 3)])
def test_set_drops_the_values_leading_ones_as_numpy_does(index, rng, backend):
    """``a[1] = v`` of a (1, 3) v into a (3,) target drops v's leading 1s (NumPy's setitem);
    ``np.add.at`` refuses them, and so does an increase."""
    a, v = random_array(rng, (4, 3), "float64"), random_array(rng, (1, 1, 3), "float64")
    want = a.copy()
    want[index] = v
    check(typed_run(lambda x, w: x.at[index].set(w), a, v, backend=backend)[1], want)
    check(typed_run(lambda x, w: sn.set_subtensor(x[index], w), a, v, backend=backend)[1], want)
    with reference_backend():
        sn.check_grad(lambda w: (sn.set_subtensor(sn.constant(a)[index], w) ** 2).sum(), [v])
    x, w = sn.tensor("x", (4, 3)), sn.tensor("w", (1, 1, 3))
    with pytest.raises(sn.ShapeError, match="has more dims than x"):
        x.at[index].add(w)
    with pytest.raises(sn.ShapeError, match="drops leading dims known to be 1"):
        x.at[index].set(sn.tensor("u", (None, 1, 1, 3)))


SETS_NUMPY_REFUSES = {
    "last element": ((4,), -1, (1,)),
    "element of a matrix": ((3, 4), (0, 0), (1, 1)),
    "0-d index array": ((4,), np.array(1), (1,)),
    "0-d x, empty tuple": ((), (), (1,)),
    "lone full mask": ((4,), np.array([True, False, False, False]), (1, 1)),
}
SETS_NUMPY_TAKES = {
    "slice of one": ((4,), slice(0, 1), (1, 1)),
    "row": ((3, 4), 0, (1, 4)),
    "element then ...": ((4,), (0, E), (1,)),
    "0-d x, ...": ((), E, (1, 1)),
    "element then new axis": ((4,), (1, None), (1, 1)),
    "array of one": ((4,), [1], (1, 1)),
    "mask then ...": ((4,), (np.array([True, False, False, False]), E), (1, 1)),
    "mask over rows": ((3, 4), np.array([True, False, False]), (1, 1, 4)),
}


@pytest.mark.parametrize("case", sorted(SETS_NUMPY_REFUSES))
def test_set_refuses_a_value_with_dims_where_numpy_drops_no_leading_ones(case):
    """``a[-1] = np.array([5])`` is NumPy's "setting an array element with a sequence": an
    integer on every axis stores one element, and a lone mask over all axes a 0-d or 1-d
    value; the set dropped v's leading 1s there and stored v[0]."""
    shape, index, vshape = SETS_NUMPY_REFUSES[case]
    a = np.zeros(shape)
    with pytest.raises((ValueError, TypeError)):
        a[index] = np.ones(vshape)
    x, v = sn.tensor("x", shape, "int16"), sn.tensor("v", vshape, "int16")
    message = rf"set_subtensor: x\[.*\] of 'x' \(int16{re.escape(str(shape))}\).*value 'v'"
    for update in (lambda: sn.set_subtensor(x, index, v), lambda: x.at[index].set(v)):
        with pytest.raises(sn.ShapeError, match=message) as info:
            update()
        assert f"has shape {format_shape(vshape)}" in str(info.value)
        assert "test_index.py, line" in str(info.value)
    with pytest.raises(sn.ShapeError, match="set_subtensor: x\\[.*is one element|mask"):
        sn.set_subtensor(x[index], v)  # Theano's spelling


@pytest.mark.parametrize("case", sorted(SETS_NUMPY_TAKES))
def test_set_still_drops_leading_ones_where_numpy_does(case, backend):
    shape, index, vshape = SETS_NUMPY_TAKES[case]
    a, v = np.zeros(shape), np.arange(1.0, 1 + np.prod(vshape)).reshape(vshape)
    want = a.copy()
    want[index] = v
    check(typed_run(lambda x, w: sn.set_subtensor(x, index, w), a, v, backend=backend)[1], want)


def test_take_of_an_empty_list_is_empty_as_in_numpy():
    a = np.arange(12.0).reshape(4, 3)
    x = sn.tensor("x", (4, 3), "float64")
    check(sn.function([x], sn.take(x, [], axis=0), backend="py")(a), np.take(a, [], axis=0))
    check(sn.function([x], x.at[[]].set(1.0), backend="py")(a), a)


def test_updates_leave_the_input_unchanged_and_cast_weak_scalars(backend):
    a = np.zeros((2, 3), "float32")
    out = typed_run(lambda x: x.at[0].set(2.5), a, backend=backend)[1]
    check(out, np.array([[2.5] * 3, [0] * 3], "float32"))
    assert not a.any()


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize(
    "indices",
    [np.array([0, 2, -1, 2]), np.array(1), np.array([[0], [1]]), np.array([True, False, True])],
)
def test_take_matches_numpy(axis, indices, rng, backend):
    a = random_array(rng, (3, 4), "int64")
    static, got = typed_run(lambda x, i: sn.take(x, i, axis=axis), a, indices, backend=backend)
    check(got, np.take(a, indices, axis=axis))
    check_static_shape(static, got)


def test_take_reads_bools_as_the_integers_0_and_1_not_as_a_mask():
    """np.take([10, 11], [True, False]) is [11, 10]: x[mask] would be [10]."""
    a = np.array([[10.0, 11.0], [12.0, 13.0]])
    x = sn.tensor("x", (2, 2), "float64")
    for indices, axis in [([True, False], None), (True, 0), (np.array([[False], [True]]), 1)]:
        want = np.take(a, indices, axis=axis)
        for y in (sn.take(x, indices, axis=axis), np.take(x, indices, axis=axis)):
            assert y.type.shape == want.shape
            check(sn.function([x], y, backend="py")(a), want)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("shape", [(3, 4), (None, "m")])
def test_take_modes_wrap_and_clip_match_numpy(mode, axis, shape, backend):
    """np.take's mode: "wrap" takes each index modulo the axis's length, "clip" limits it to
    [0, length - 1]; symbolic indices, a 0-d one, a constant list and a Python int."""
    a = np.arange(12.0).reshape(3, 4)
    x = sn.tensor("x", shape, "float64")
    i, s = sn.tensor("i", (2, 2), "int32"), sn.tensor("s", (), "int64")
    iv = np.array([[0, 5], [-7, 13]], "int32")
    outs = [
        sn.take(x, i, axis=axis, mode=mode),
        sn.take(x, s, axis, mode),
        sn.take(x, [-13, 4, 1], axis, mode),
        sn.take(x, 17, axis, mode),
        np.take(x, i, axis=axis, mode=mode),
    ]
    got = sn.function([x, i, s], outs, backend=backend)(a, iv, -5)
    wants = [np.take(a, k, axis=axis, mode=mode) for k in (iv, -5, [-13, 4, 1], 17, iv)]
    for g, want in zip(got, wants):
        check(g, want)


@pytest.mark.parametrize("mode", ["wrap", "clip"])
@pytest.mark.parametrize("axis", [None, 1])
def test_take_mode_gradient_goes_to_the_element_read(mode, axis, backend):
    a = np.arange(12.0).reshape(3, 4)
    iv = np.array([-1, 9, 3, 9])
    x, i = sn.tensor("x", (3, 4), "float64"), sn.tensor("i", (4,), "int64")
    picked = sn.take(x, i, axis=axis, mode=mode)
    weights = np.arange(1.0, 1 + np.take(a, iv, axis=axis, mode=mode).size)
    weights = weights.reshape(picked.type.shape)
    got = sn.function([x, i], sn.grad(sn.sum(picked * weights), x), backend=backend)(a, iv)
    n = a.size if axis is None else a.shape[axis]
    read = np.mod(iv, n) if mode == "wrap" else np.clip(iv, 0, n - 1)
    want = np.zeros_like(a)
    if axis is None:
        np.add.at(want.reshape(-1), read, weights)
    else:
        np.add.at(want, (slice(None), read), weights)
    check(got, want)


def test_take_refuses_an_unknown_mode_and_an_empty_axis_to_wrap():
    x = sn.tensor("x", (3, 0), "float64")
    for mode in ("wrapped", None):
        with pytest.raises(sn.ArgumentError) as info:
            sn.take(x, [0], mode=mode)
        message = str(info.value)
        assert f"take of 'x' (float64(3, 0)): mode={mode!r} is not a mode" in message
        assert "'raise', 'wrap', 'clip'" in message and "test_index.py, line" in message
    with pytest.raises(sn.ShapeError, match=r"mode='wrap'\) from axis 1 of 'x'.*empty") as info:
        sn.take(x, [0], axis=1, mode="wrap")
    assert "test_index.py, line" in str(info.value)
    f = sn.tensor("f", (2,), "float64")
    for indices in (f, [0.5, 1.0]):  # never truncated to ints
        with pytest.raises(sn.DTypeError, match="take of 'x'.*: the indices must have an integer"):
            sn.take(x, indices, axis=0, mode="clip")


def test_a_list_of_symbolic_int_scalars_is_an_index_array(backend):
    """NumPy makes an array of a list of ints; with symbolic ints among them the list is
    their stack: ``x[[i, j]]`` is ``x[sn.stack([i, j])]`` (nested lists and tuples too)."""
    a = np.arange(12.0).reshape(3, 4)
    x = sn.tensor("x", (3, 4), "float64")
    i, j = sn.tensor("i", (), "int64"), sn.tensor("j", (), "int32")
    stored, added = a.copy(), a.copy()
    stored[[2, 0]] = -1.0
    np.add.at(added, [2, 2], 1.0)
    grad = np.zeros_like(a)
    np.add.at(grad, [2, 0, 2], a)
    cases = [
        (x[[i, j]], a[[2, 0]]),
        (x[:, [i, 0, j]], a[:, [2, 0, 0]]),
        (x[[[i, j], (0, i)]], a[[[2, 0], [0, 2]]]),
        (x[(i, j), 1], a[(2, 0), 1]),
        (x.at[[i, j]].set(-1.0), stored),
        (sn.inc_subtensor(x[[i, i]], 1.0), added),
        (sn.take(x, [j, i], axis=1), a[:, [0, 2]]),
        (sn.grad(sn.sum(x[[i, j, i]] * a), x), grad),
    ]
    got = sn.function([x, i, j], [out for out, _ in cases], backend=backend)(a, 2, 0)
    for g, (_, want) in zip(got, cases):
        check(g, want)
    assert x[[i, j]].type.shape == (2, 4)


def test_a_list_index_holding_other_variables_says_what_it_cannot_be():
    x, v = sn.tensor("x", (3, 4), "float64"), sn.tensor("v", (2,), "int64")
    i, f = sn.tensor("i", (), "int64"), sn.tensor("f", (), "float64")
    named = r"a list in the index of 'x' \(float64\(3, 4\)\) holds ints and integer scalar"
    for build in (lambda: x[[i, v]], lambda: x[:, [[0], [v]]], lambda: sn.take(x, [v, i])):
        with pytest.raises(sn.ShapeError, match=named + r".*'v' \(int64\(2,\)\) has 1 dim"):
            build()
    with pytest.raises(sn.DTypeError, match=r"integer dtype, not .*float64\(2,\)") as info:
        x[[i, f]]
    assert "test_index.py, line" in str(info.value)
    with pytest.raises(sn.ShapeError, match="rows of a list in the index of 'x'.*differ") as info:
        x[[[i, 0], [1]]]
    assert "test_index.py, line" in str(info.value)


def test_updates_written_as_in_place_changes_say_what_builds_the_copy():
    """``x[0] = v`` and ``x.at.set(v)`` (no index: it used to set every element) are
    UpdateErrors (TypeErrors) at the user's line, naming the spelling that works."""
    x = sn.tensor("x", (3, 4), "float64")
    cases = [
        (
            lambda: x.__setitem__(0, 1.0),
            r"x = x.at\[0\].set\(v\) \(.add\(v\) for \+=\), or sn.set_subtensor\(x\[0\], v\)",
        ),
        (lambda: x.__setitem__((slice(1, None), None), 1.0), r"x.at\[1:, None\].set"),
        (lambda: x.__setitem__(x[0, 0] > 0, 1.0), r"x.at\[index\].set"),
        (lambda: x.at.set(5.0), r"x = x.at\[index\].set\(v\) \(x.at\[:\].set\(v\) for every"),
        (lambda: x.at.add(5.0), r"x.at.add\(v\) does not update 'x'.*x.at\[index\].add"),
        (lambda: x.at.__setitem__(2, 5.0), r"x.at\[2\] = v does not update.*x.at\[2\].set"),
    ]
    for build, message in cases:
        with pytest.raises(sn.UpdateError, match=message) as info:
            build()
        assert isinstance(info.value, TypeError) and "test_index.py" in str(info.value)
    with pytest.raises(TypeError, match=r"'x' \(float64\(3, 4\)\) is symbolic and immutable"):
        x[0] += 1.0
    out = sn.function([x], x.at[None].set(5.0), backend="py")(np.zeros((3, 4)))
    check(out, np.full((3, 4), 5.0))  # None is an index (NumPy's a[None] = 5.0)


@pytest.mark.parametrize(
    "shape,ishape,axis",
    [((3, 4), (3, 2), 1), ((3, 4), (5, 4), 0), ((3, 4), (1, 2), -1), ((2, 3, 4), (2, 3, 1), 2)],
)
def test_take_along_axis_matches_numpy(shape, ishape, axis, rng, backend):
    a = random_array(rng, shape, "float32")
    idx = rng.integers(-shape[axis], shape[axis], size=ishape)
    static, got = typed_run(lambda x, i: sn.take_along_axis(x, i, axis), a, idx, backend=backend)
    check(got, np.take_along_axis(a, idx, axis))
    check_static_shape(static, got)


def test_take_along_axis_none_picks_from_the_flattened_array(backend):
    """np.take_along_axis(a, i, axis=None): a flattened, i a vector (NumPy's, as for sort);
    it was a ShapeTypeError "axis is one int, not None"."""
    a = np.arange(12.0).reshape(3, 4)
    x = sn.tensor("x", shape=(None, None))
    i = sn.tensor("i", shape=(None,), dtype="int64")
    outputs = [sn.take_along_axis(x, i, axis=None), np.take_along_axis(x, i, axis=None)]
    idx = np.array([0, 11, -1, 5])
    for got in sn.function([x, i], outputs, backend=backend)(a, idx):
        check(got, np.take_along_axis(a, idx, axis=None))
    with reference_backend():  # the gradient reaches x's elements through the flattening
        sn.check_grad(lambda v: sn.take_along_axis(v, np.array([0, 5, 5]), None), [a])
    with pytest.raises(sn.ShapeError) as info:
        sn.take_along_axis(x, np.zeros((2, 2), "int64"), axis=None)
    message = str(info.value)
    assert (
        "take_along_axis of 'x' (float64(?, ?)): with axis=None (x flattened) indices are a "
        in message
    )
    assert "vector, not" in message and "test_index.py" in message


def test_a_named_dim_against_an_unknown_one_in_an_index_has_the_runtime_size(backend):
    """i of ("n",) and j of (None,) broadcast to the length of j where n is 1, and so do the
    rows of x ("n", 4) against indices (None, 2) in take_along_axis: the result is typed
    unknown there, not n (which said 1 for 3 rows)."""
    x = sn.tensor("x", shape=(5, 6))
    i = sn.tensor("i", shape=("n",), dtype="int64")
    j = sn.tensor("j", shape=(None,), dtype="int64")
    assert x[i, j].type.shape == (None,)
    xv, jv = np.arange(30.0).reshape(5, 6), np.array([0, 2, 3])
    check(sn.function([x, i, j], x[i, j], backend=backend)(xv, np.array([1]), jv), xv[1, jv])
    rows = sn.tensor("rows", shape=("n", 4))
    idx = sn.tensor("idx", shape=(None, 2), dtype="int64")
    picked = sn.take_along_axis(rows, idx, 1)
    assert picked.type.shape == (None, 2)
    rv, iv = np.arange(4.0)[None], np.array([[0, 1], [2, 3], [1, 1]])
    got = sn.function([rows, idx], picked, backend=backend)(rv, iv)
    check(got, np.take_along_axis(rv, iv, 1))


ERRORS = [
    (
        lambda x: x[3],
        sn.ShapeError,
        r"index 3 is out of bounds for axis 0 of 'x' \(float64\(3, 4\)\)",
    ),
    (lambda x: x[:0][:, 0][0], sn.ShapeError, r"axis 0 of .* \(size 0: it has no elements\)"),
    (lambda x: x[2**70], sn.ShapeError, r"index 1180591620717411303424 is out of bounds"),
    (lambda x: x[0, 0, 0], sn.ShapeError, "too many indices for 'x'.*covers 3 axes"),
    (lambda x: x[..., 0, ...], sn.ShapeError, "single ellipsis"),
    (lambda x: x[1.5], sn.DTypeError, "integer dtype"),
    (lambda x: x[::0], sn.ShapeError, "step cannot be zero"),
    (lambda x: x[np.array([0, 5])], sn.ShapeError, "index 5 in an index array is out of bounds"),
    (lambda x: x[np.ones((2, 4), bool)], sn.ShapeError, "mask axis 0 has size 2 but.*size 3"),
    (lambda x: x[np.array([0, 1]), np.array([0, 1, 2])], sn.ShapeError, r"\(2,\), \(3,\)"),
    (lambda x: x.at[0].set(np.ones(3)), sn.ShapeError, r"does not broadcast.*\(4,\)"),
    (lambda x: x.at[0].set(np.ones(4, complex)), sn.DTypeError, "change of kind"),
    (lambda x: sn.take_along_axis(x, np.zeros(3, "int64"), 0), sn.ShapeError, "rank"),
    (lambda x: sn.take(x, [0], axis=2), sn.ShapeError, "axis 2 is out of range"),
    (lambda x: sn.take(x, slice(0, 2)), sn.DTypeError, "cannot use slice"),
]


@pytest.mark.parametrize("build,error,message", ERRORS)
def test_index_errors_name_the_variable_and_the_clash(build, error, message):
    x = sn.tensor("x", (3, 4), "float64")
    with pytest.raises(error, match=message) as info:
        build(x)
    assert "test_index.py" in str(info.value)  # the user's line is appended


@pytest.mark.parametrize(
    "build",
    [
        lambda x, np_: x[3],
        lambda x, np_: x[:0][:, 0][0],
        lambda x, np_: x[2**70],
        lambda x, np_: x[0, 0, 0],
        lambda x, np_: x[..., 0, ...],
        lambda x, np_: x[np.array([0, 5])],
        lambda x, np_: x[np.ones((2, 4), bool)],
        lambda x, np_: x[np.array([0, 1]), np.array([0, 1, 2])],
        lambda x, np_: np_.take(x[:, :0], [1], axis=1, mode="wrap"),
    ],
)
def test_an_index_numpy_refuses_as_an_index_error_is_one(build):
    """``except IndexError`` catches what it catches from NumPy for the same index: it
    was a ShapeError, a ValueError only. It is still a ShapeError (and a ValueError)."""
    with pytest.raises(IndexError):
        build(np.ones((3, 4)), np)
    with pytest.raises(IndexError) as info:
        build(sn.tensor("x", (3, 4), "float64"), sn)
    assert isinstance(info.value, sn.ShapeIndexError)
    assert isinstance(info.value, sn.ShapeError) and isinstance(info.value, ValueError)
    assert "test_index.py" in str(info.value)  # at the user's line, as before


def _set_first(x, i):
    out = x.copy()
    out[i] = 1.0
    return out


EMPTY_AXIS_INDEXES = [  # (label, symnb's form, NumPy's, does NumPy refuse it on x (0, 3))
    ("x[i]", lambda x, i, n, e: x[i], None, True),
    ("x[n]", lambda x, i, n, e: x[n], None, True),
    ("x[n, e]", lambda x, i, n, e: x[n, e], None, True),  # an integer is checked regardless
    ("x[i[:1], e]", lambda x, i, n, e: x[i[:1], e], None, False),  # broadcast empty: no read
    ("x[e]", lambda x, i, n, e: x[e], None, False),
    ("x[:, i]", lambda x, i, n, e: x[:, i], None, False),
    (
        "set x[i]",
        lambda x, i, n, e: sn.set_subtensor(x[i], 1.0),
        lambda x, i, n, e: _set_first(x, i),
        True,
    ),
    (
        "take wrap",
        lambda x, i, n, e: sn.take(x, i, axis=0, mode="wrap"),
        lambda x, i, n, e: np.take(x, i, axis=0, mode="wrap"),
        True,
    ),
    (
        "take clip",
        lambda x, i, n, e: sn.take(x, i * n, axis=0, mode="clip"),
        lambda x, i, n, e: np.take(x, i * n, axis=0, mode="clip"),
        True,
    ),
    (
        "take raise",
        lambda x, i, n, e: sn.take(x, i, axis=0),
        lambda x, i, n, e: np.take(x, i, axis=0),
        True,
    ),
]


@pytest.mark.parametrize("label,build,numpy_form,refused", EMPTY_AXIS_INDEXES)
def test_computed_indices_into_an_axis_fixed_at_length_0_are_refused_when_built(
    label, build, numpy_form, refused
):
    """The shapes alone decide that every call would fail (NumPy's "index 0 is out of
    bounds for axis 0 with size 0", whatever the indices are): a ShapeIndexError at the
    user's line, as for constant indices; the index forms NumPy runs stay accepted."""
    values = (np.zeros((0, 3)), np.array([0, 1, 2]), np.int64(1), np.zeros(0, np.int64))
    numpy_form = numpy_form or build  # (an index on an ndarray is NumPy's own)
    if refused:
        with pytest.raises(IndexError):
            numpy_form(*values)
    symbols = (
        sn.tensor("x", (0, 3), "float64"),
        sn.tensor("i", (3,), "int64"),
        sn.scalar("n", dtype="int64"),
        sn.tensor("e", (0,), "int64"),
    )
    if refused:
        with pytest.raises(sn.ShapeIndexError, match=r"axis 0 of 'x'.*empty") as info:
            build(*symbols)
        assert "test_index.py" in str(info.value)
    else:
        out = sn.function(list(symbols), build(*symbols), backend="py")
        check(out(*values), numpy_form(*values))


def test_an_empty_ellipsis_between_advanced_items_is_kept_and_shown():
    x = sn.tensor("x", (3, 4, 5), "float64")
    y = x[:, [1, 2], ..., [0, 1]]
    assert y.type.shape == np.zeros((3, 4, 5))[:, [1, 2], ..., [0, 1]].shape == (2, 3)
    assert str(y.owner.op) == "advanced_subtensor[:, <array>, ..., <array>]"
    assert x[0, ..., 1, :].owner.op.spec == x[0, 1, :].owner.op.spec  # basic: dropped


def test_an_int_index_beyond_int64_is_refused_when_built_even_on_an_unknown_dim():
    x = sn.tensor("x", (None, 4), "float64")
    with pytest.raises(sn.ShapeError, match=r"-1180591620717411303424 is out of .*'x'.*int64"):
        x[-(2**70)]
    with pytest.raises(sn.ShapeError, match=r"axis 1 of 'x' \(float64\(\?, 4\)\)"):
        sn.set_subtensor(x, (slice(None), 2**64), 1.0)


def test_named_dims_survive_full_slices_and_len_is_clear():
    x = sn.tensor("x", ("batch", 4))
    assert x[:, 1:3].type.shape == ("batch", 2)
    assert x[::-1, ::-1].type.shape == ("batch", 4)
    assert x[1:].type.shape == (None, 4)
    with pytest.raises(TypeError, match="use x.shape"):
        len(x)


GRADS = {
    "basic": ((4, 3), lambda x: x[1:, None, -1] * 2),
    "negative step": ((5,), lambda x: x[::-2]),
    "repeated int array": ((4, 3), lambda x: x[np.array([0, 2, 0, 0])]),
    "separated arrays": ((3, 4, 2), lambda x: x[np.array([1, 1]), :, np.array([0, 1])]),
    "mask": ((3, 4), lambda x: x[x > 1.2]),
    "empty ellipsis between arrays": (
        (3, 4, 5),
        lambda x: x[:, [1, 1], ..., [0, 4]] * [[1.0], [2.0]],
    ),
    "take_along_axis": ((3, 4), lambda x: sn.take_along_axis(x, np.array([[0, 0, 3]]), 1)),
    "take flattened": ((3, 4), lambda x: sn.take(x, np.array([5, 5, 0]))),
}


@pytest.mark.parametrize("case", sorted(GRADS))
def test_indexing_gradients(case, rng):
    shape, fn = GRADS[case]
    sn.check_grad(fn, [random_array(rng, shape, "float64")])


@pytest.mark.parametrize(
    "index,vshape",
    [
        ((slice(1, 3),), (1, 3)),
        ((np.array([2, 2, 0]),), (3, 3)),
        ((np.array([True, False] * 2),), (3,)),
        ((np.array([0, 3, 3, 1]), np.array([2, 1, 1, 0])), (4,)),  # a position set twice
        ((np.array([3, 3]),), (1,)),  # one value stored twice in one place
    ],
)
@pytest.mark.parametrize("set_instead", [True, False])
def test_update_gradients_wrt_x_and_v(index, vshape, set_instead, rng):
    """With repeated indices, set keeps the last value stored: only it gets a gradient."""
    update = sn.set_subtensor if set_instead else sn.inc_subtensor
    a, v = random_array(rng, (4, 3), "float64"), random_array(rng, vshape, "float64")
    sn.check_grad(lambda x, w: update(x, index, w) * (x + 1), [a, v])


@pytest.mark.parametrize(
    "index", [(slice(1, 3),), ([0, 2],), ([0, 0],), (1, slice(None, 2)), (np.array([1, 3]), 0)]
)
@pytest.mark.parametrize("set_instead", [True, False])
def test_theano_spelling_builds_the_same_update(index, set_instead, rng):
    """``set_subtensor(x[index], v)`` (Theano) equals ``set_subtensor(x, index, v)``."""
    update = sn.set_subtensor if set_instead else sn.inc_subtensor
    a = random_array(rng, (4, 3), "float64")
    want = a.copy()
    v = random_array(rng, np.shape(want[index]), "float64")
    if set_instead:
        want[index] = v
    else:
        np.add.at(want, index, v)
    x, w = sn.tensor("x", shape=(4, 3)), sn.tensor("w", shape=v.shape)
    theano, numpy_style = update(x[index], w), update(x, index, w)
    assert theano.owner.op == numpy_style.owner.op
    np.testing.assert_allclose(sn.function([x, w], theano)(a, v), want)


def test_theano_spelling_needs_an_indexed_variable():
    x, v = sn.tensor("x", shape=(4, 3)), sn.tensor("v", shape=(3,))
    with pytest.raises(TypeError) as info:
        sn.inc_subtensor(x * 2, v)  # <- not indexed
    message = str(info.value)
    assert "inc_subtensor(x[index], v) takes an indexed variable first" in message
    assert "inc_subtensor(x, index, v)" in message and "test_index.py, line" in message
