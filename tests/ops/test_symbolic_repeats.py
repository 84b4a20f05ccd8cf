"""``repeat``, ``tile``, ``roll`` and ``one_hot`` with counts, reps, shifts and depths known
only at run time (``sn.repeat(h0, x.shape[0], axis=0)``) or given per element (NumPy's
``np.repeat(x, [2, 0], axis=0)``): values against NumPy on every backend, static shapes
where the graph knows them, gradients, and the errors for bad counts."""

import numpy as np
import pytest

import symnb as sn
from symnb.backends.execute import RuntimeFailure
from tests.helpers import check, reference_backend

X = np.arange(12.0).reshape(4, 3)


def _x():
    return sn.tensor("x", shape=("T", 3), dtype="float64")


def _ints(name, ndim=0):
    return sn.tensor(name, shape=(None,) * ndim, dtype="int64")


def _run(inputs, outputs, values, backend):
    return sn.function(inputs, outputs, backend=backend)(*values)


# -- repeat --------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_repeat_by_a_scalar_variable(axis, backend):
    x, n = _x(), _ints("n")
    for count in (3, 0, 1):
        got = _run([x, n], sn.repeat(x, n, axis=axis), [X, count], backend)
        check(got, np.repeat(X, count, axis=axis))


def test_repeat_by_a_sequence_length_the_rnn_idiom(backend):
    x = _x()
    h0 = sn.tensor("h0", shape=(1, 3), dtype="float64")
    h = sn.repeat(h0, x.shape[0], axis=0)
    assert h.type.shape == ("T", 3)  # the count is x's dim T
    assert sn.repeat(x, x.shape[1], axis=1).type.shape == ("T", 9)
    h0v = np.array([[1.0, 2.0, 3.0]])
    check(_run([x, h0], h, [X, h0v], backend), np.repeat(h0v, 4, axis=0))


@pytest.mark.parametrize(
    "counts", [[2, 0, 1, 3], np.array([1, 1, 0, 2]), (0, 0, 0, 0), [3], np.array([2])]
)
def test_repeat_by_constant_counts_per_element(counts, backend):
    fixed = sn.tensor("x", shape=(4, 3), dtype="float64")
    out = sn.repeat(fixed, counts, axis=0)
    want = np.repeat(X, counts, axis=0)
    assert out.type.shape == want.shape  # the counts are known, so is the length
    check(_run([fixed], out, [X], backend), want)
    x = _x()
    check(_run([x], sn.repeat(x, counts, axis=0), [X], backend), want)  # length T


def test_repeat_by_a_vector_variable(backend):
    x, c = _x(), _ints("c", 1)
    f = sn.function([x, c], [sn.repeat(x, c, axis=0), sn.repeat(x, c[:3], axis=1)], backend=backend)
    for counts in ([2, 0, 1, 3], [0, 0, 0, 0], [1, 1, 1, 1]):
        rows, cols = f(X, np.array(counts))
        check(rows, np.repeat(X, counts, axis=0))
        check(cols, np.repeat(X, counts[:3], axis=1))
    rows, _ = f(X, np.array([2]))  # one count for every element, as NumPy
    check(rows, np.repeat(X, 2, axis=0))


def test_repeat_with_bad_counts_at_run_time_names_the_problem(backend):
    x, c, n = _x(), _ints("c", 1), _ints("n")
    f = sn.function([x, c], sn.repeat(x, c, axis=0), backend=backend)
    with pytest.raises(RuntimeFailure, match="repeat: 3 counts for an axis of 4 elements"):
        f(X, np.array([1, 2, 3]))
    with pytest.raises(RuntimeFailure, match="repeat: counts must be >= 0, got -1"):
        f(X, np.array([1, -1, 0, 2]))
    g = sn.function([x, n], sn.repeat(x, n, axis=1), backend=backend)
    with pytest.raises(RuntimeFailure, match="repeat: repeats must be >= 0; got -2"):
        g(X, -2)  # not NumPy's alloc words, "negative dimensions are not allowed"
    t = sn.function([x, n], sn.tile(x, (n, 1)), backend=backend)
    with pytest.raises(RuntimeFailure, match="tile: reps must be >= 0; got -1"):
        t(X, -1)
    check(t(X, 2), np.tile(X, (2, 1)))


def test_repeat_refuses_bad_counts_at_the_users_line():
    m = sn.tensor("m", shape=(3, 4), dtype="float64")
    with pytest.raises(sn.ShapeError, match=r"repeat: counts must be >= 0, not \[1, -1, 0\]"):
        sn.repeat(m, [1, -1, 0], axis=0)
    with pytest.raises(sn.DTypeError, match="repeats must be an integer scalar or vector, not 'f'"):
        sn.repeat(m, sn.scalar("f"), axis=0)
    with pytest.raises(sn.DTypeError, match="repeat: repeats must be an integer .* 'k'"):
        sn.repeat(m, _ints("k", 2), axis=0)
    with pytest.raises(TypeError, match=r"repeat: repeats must be an int.*\[1.5, 2.0\]"):
        sn.repeat(m, [1.5, 2.0], axis=1)


def test_repeat_mixed_counts_in_a_list(backend):
    x, n = _x(), _ints("n")
    got = _run([x, n], sn.repeat(x, [n, 0, 1], axis=1), [X, 2], backend)
    check(got, np.repeat(X, [2, 0, 1], axis=1))


# -- tile ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reps, want",
    [
        (lambda n: n, (2,)),
        (lambda n: (n, 1), (2, 1)),
        (lambda n: (1, n, 2), (1, 2, 2)),
        (lambda n: sn.stack([n, n + 1]), (2, 3)),
        (lambda n: (0, n), (0, 2)),
    ],
)
def test_tile_by_scalar_variables(reps, want, backend):
    x, n = _x(), _ints("n")
    check(_run([x, n], sn.tile(x, reps(n)), [X, 2], backend), np.tile(X, want))


def test_tile_keeps_the_static_dims_it_knows():
    x = _x()
    assert str(sn.tile(x, (x.shape[0], 2)).type) == "f64[T*T,6]"
    assert str(sn.tile(x, x.shape[0]).type) == "f64[T,T*3]"
    with pytest.raises(sn.ShapeError, match="tile: the length of reps 'r' .* known statically"):
        sn.tile(x, _ints("r", 1))


# -- roll ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "axis, shifts",
    [(None, [0, 5, -7, 13]), (0, [1, -1, 6]), (1, [2, -4]), ((0, 1), [3, -2]), ((1, 1), [1])],
)
def test_roll_by_a_scalar_variable(axis, shifts, backend):
    x, s = _x(), _ints("s")
    shift = s if axis is None or isinstance(axis, int) else (s, -s)
    out = sn.roll(x, shift, axis=axis)
    assert out.type == x.type
    f = sn.function([x, s], out, backend=backend)
    for k in shifts:
        want_shift = k if axis is None or isinstance(axis, int) else (k, -k)
        check(f(X, k), np.roll(X, want_shift, axis=axis))


def test_roll_mixes_int_and_variable_shifts_and_rolls_an_empty_axis(backend):
    x, s = _x(), _ints("s")
    f = sn.function([x, s], sn.roll(x, (s, 1), axis=(0, 1)), backend=backend)
    check(f(X, 3), np.roll(X, (3, 1), axis=(0, 1)))
    check(f(np.zeros((0, 3)), 3), np.zeros((0, 3)))


def test_roll_takes_an_axis_numpy_reads_through_index(backend):
    """np.roll(a, 1, axis=np.array(1)): a 0-d int array is its int, as in every reducer; it
    was Python's "iteration over a 0-d array" (roll made a tuple of any axis not an int)."""
    x, s = _x(), _ints("s")
    outputs = [
        sn.roll(x, 1, axis=np.array(1)),
        sn.roll(x, s, axis=np.array(-2, np.int8)),
        sn.roll(x, (1, 2), axis=(np.array(0), np.int64(1))),
    ]
    got = sn.function([x, s], outputs, backend=backend)(X, 2)
    check(got[0], np.roll(X, 1, axis=np.array(1)))
    check(got[1], np.roll(X, 2, axis=np.array(-2, np.int8)))
    check(got[2], np.roll(X, (1, 2), axis=(0, 1)))
    with pytest.raises(
        sn.ShapeTypeError, match=r"roll: axis is an int, a tuple .* not array\(1\.\)"
    ):
        sn.roll(x, 1, axis=np.array(1.0))


def test_roll_refuses_bad_shifts_at_the_users_line():
    x, s = _x(), _ints("s")
    with pytest.raises(sn.ShapeError, match="roll: 2 shifts for axis=None; give one"):
        sn.roll(x, (s, 1))
    with pytest.raises(sn.DTypeError, match="roll: shift must be an integer scalar or vector"):
        sn.roll(x, sn.scalar("f"), axis=0)


# -- one_hot -------------------------------------------------------------------------------
def test_one_hot_of_a_depth_known_at_run_time(backend):
    y, n = _ints("y", 1), _ints("n")
    f = sn.function([y, n], sn.one_hot(y, n, dtype="float32"), backend=backend)
    check(f(np.array([0, 2, 1]), 4), np.eye(4, dtype="float32")[[0, 2, 1]])
    with pytest.raises(RuntimeFailure, match=r"one_hot: index 3 is outside \[0, 3\)"):
        f(np.array([0, 3]), 3)
    x = _x()
    assert sn.one_hot(y, x.shape[0]).type.shape == (None, "T")
    with pytest.raises(sn.DTypeError, match="one_hot: depth must be an integer scalar"):
        sn.one_hot(y, sn.scalar("f"))


# -- gradients -----------------------------------------------------------------------------
GRADS = {
    "repeat_scalar": lambda x: sn.repeat(x, sn.shape(x)[0], axis=1),
    "repeat_flat": lambda x: sn.repeat(x, sn.shape(x)[1]),
    "repeat_constant_counts": lambda x: sn.repeat(x, [2, 0, 1], axis=1),
    "repeat_vector": lambda x: sn.repeat(x, sn.arange(sn.shape(x)[0]) % 3, axis=0),
    "tile": lambda x: sn.tile(x, (sn.shape(x)[0], 2)),
    "roll": lambda x: sn.roll(x, sn.shape(x)[1] + 1, axis=1),
    "roll_flat": lambda x: sn.roll(x, -sn.shape(x)[0]),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_through_symbolic_counts(name, rng):
    with reference_backend():
        sn.check_grad(GRADS[name], [rng.normal(size=(4, 3))])


# -- the Theano layer ----------------------------------------------------------------------
def test_theano_repeat_tile_roll_and_to_one_hot_take_variables(backend):
    import symnb.compat.theano.tensor as T

    x, h0, v, n, y = T.matrix("x"), T.row("h0"), T.ivector("v"), T.iscalar("n"), T.ivector("y")
    outs = [
        T.repeat(h0, x.shape[0], axis=0),
        T.extra_ops.repeat(x, np.array([2, 0, 1, 1]), axis=0),
        T.tile(x, v, ndim=3),  # a vector of unknown length, padded to ndim
        T.tile(x, n, ndim=3),
        T.extra_ops.to_one_hot(y, n),
        T.roll(x, n, axis=1),
    ]
    f = sn.function([x, h0, v, n, y], outs, backend=backend)
    h0v, vv, yv = np.ones((1, 3)), np.array([2, 3], "int32"), np.array([0, 2], "int32")
    got = f(X, h0v, vv, 3, yv)
    want = [
        np.repeat(h0v, 4, axis=0),
        np.repeat(X, [2, 0, 1, 1], axis=0),
        np.tile(X, (1, 2, 3)),
        np.tile(X, (1, 1, 3)),
        np.eye(3)[yv],
        np.roll(X, 3, axis=1),
    ]
    for g, w in zip(got, want):
        check(g, w)
    with pytest.raises(sn.ShapeError, match="tile: 4 reps for ndim=3"):
        T.tile(x, (1, 2, 3, 4), ndim=3)
    with pytest.raises(sn.ShapeError, match="tile: ndim=1 is less than the 2 dims of 'x'"):
        T.tile(x, n, ndim=1)
