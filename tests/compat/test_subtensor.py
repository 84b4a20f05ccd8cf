"""``T.set_subtensor``/``T.inc_subtensor`` with Theano's signatures,
``(x[index], y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False)``,
against NumPy; symnb's ``(x, index, v)`` form must not be what a third argument means. Lists
of symbolic scalars index as Theano's ``as_tensor_variable`` stacked them."""

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T
from symnb.compat.theano.tensor.subtensor import inc_subtensor, set_subtensor

X = np.arange(12).reshape(3, 4)
Y = np.array([1, 1, 1, 1])


def run(output, x, y):
    return theano.function([x, y], output, mode="FAST_COMPILE")(X, Y)


def _added(index, value):
    want = X.copy()
    np.add.at(want, index, value)
    return want


def _set(index, value):
    want = X.copy()
    want[index] = value
    return want


def test_the_third_argument_is_inplace_and_the_flags_follow_theano():
    x, y = T.lmatrix("x"), T.lvector("y")
    cases = [
        (T.inc_subtensor(x[0], y, False), _added(0, Y)),
        (T.inc_subtensor(x[0], y, True, False, True), _added(0, Y)),
        (T.inc_subtensor(x[0], y, set_instead_of_inc=True), _set(0, Y)),
        (T.inc_subtensor(x[1], y, inplace=False, set_instead_of_inc=True), _set(1, Y)),
        (T.set_subtensor(x[2], y, True), _set(2, Y)),
        (T.set_subtensor(x[:, 1], y[:3], tolerate_inplace_aliasing=True), _set((..., 1), Y[:3])),
        (inc_subtensor(x[1:], y), _added(slice(1, None), Y)),
        (set_subtensor(x[0], 7), _set(0, 7)),
    ]
    for got, want in zip(run([c for c, _ in cases], x, y), (w for _, w in cases)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_advanced_indexes_accumulate_repeats_when_increasing():
    x, y = T.lmatrix("x"), T.lvector("y")
    rows = np.array([0, 2, 0])
    got = run([T.inc_subtensor(x[rows], y), T.set_subtensor(x[rows, 1], y[:3], False)], x, y)
    np.testing.assert_array_equal(got[0], _added(rows, Y))
    np.testing.assert_array_equal(got[1], _set((rows, 1), Y[:3]))


def test_misuses_are_clear_errors_at_the_users_line():
    x, y = T.lmatrix("x"), T.lvector("y")
    with pytest.raises(
        TypeError, match=r"inplace is a bool, not 'y'.*symnb.inc_subtensor\(x, index"
    ):
        T.inc_subtensor(x, 0, y)  # symnb's (x, index, v) form
    with pytest.raises(TypeError, match="x must be the result of a subtensor") as info:
        T.set_subtensor(x, y)
    assert "test_subtensor.py" in str(info.value)
    with pytest.raises(sn.ShapeError, match="more dims than the subtensor") as info:
        T.set_subtensor(x[0], T.lmatrix("row"))
    assert "test_subtensor.py" in str(info.value)
    with pytest.raises(sn.UpdateError, match=r"x = x.at\[0\].set\(v\).*or T.set_subtensor\(x\[0"):
        x[0] = 1  # Theano code reads Theano's names


def test_advanced_subtensor1_ops_take_theanos_argument_order(backend):
    """``advanced_inc_subtensor1(x, y, ilist)``: value before index, as Theano's op."""
    x, y, i = T.dmatrix("x"), T.dmatrix("y"), T.lvector("i")
    xv, yv, iv = np.arange(6.0).reshape(3, 2), np.arange(3.0 * 2).reshape(3, 2), np.array([0, 2, 0])
    added, stored = xv.copy(), xv.copy()
    np.add.at(added, iv, yv)
    stored[iv] = yv
    outs = [T.advanced_subtensor1(x, i), T.advanced_inc_subtensor1(x, y, i)]
    outs.append(T.subtensor.advanced_set_subtensor1(x, y, i))
    got = sn.function([x, y, i], outs, backend=backend)(xv, yv, iv)
    for g, want in zip(got, [xv[iv], added, stored]):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize(
    "build,error,message",
    [
        (lambda x, i: T.advanced_subtensor1(x, i.astype("float64")), sn.DTypeError, "integers"),
        (lambda x, i: T.advanced_subtensor1(x, i[None]), sn.ShapeError, r"int64\(1, \?\).*vector"),
        (lambda x, i: T.advanced_inc_subtensor1(x, x[None], i), sn.ShapeError, "more dims than x"),
    ],
)
def test_advanced_subtensor1_misuses_are_clear_errors(build, error, message):
    x, i = T.dmatrix("x"), T.lvector("i")
    with pytest.raises(error, match=message) as info:
        build(x, i)
    assert "test_subtensor.py" in str(info.value)


def test_lists_of_symbolic_scalars_are_stacked_as_theanos_as_tensor_variable(backend):
    """Theano's ``as_tensor_variable([i, j])`` is ``stack(i, j)``, and indexing went through
    it: ``x[[i, j]]``, ``x[:, [i, j]]``, ``set_subtensor(x[[i, j]], 0.)`` (gradients too)."""
    a = np.arange(12.0).reshape(3, 4)
    x, i, j = T.dmatrix("x"), T.lscalar("i"), T.lscalar("j")
    stored = a.copy()
    stored[[2, 0]] = 0.0
    read_twice = np.zeros_like(a)
    np.add.at(read_twice, [2, 0, 2], 1.0)
    cases = [
        (T.as_tensor_variable([i, j]) * 1, np.array([2, 0])),
        (T.as_tensor_variable([[i, 0], (j, 1)], name="ij") + 0, np.array([[2, 0], [0, 1]])),
        (T.as_tensor_variable([x[0], x[1]], ndim=2), a[[0, 1]]),
        (x[[i, j]], a[[2, 0]]),
        (x[:, [i, j]], a[:, [2, 0]]),
        (x[[i, 1], [[j], [3]]], a[[2, 1], [[0], [3]]]),
        (T.set_subtensor(x[[i, j]], 0.0), stored),
        (T.take(x, [j, i], axis=1), a[:, [0, 2]]),
        (T.grad(T.sum(x[[i, j, i]]), x), read_twice),
    ]
    got = sn.function([x, i, j], [out for out, _ in cases], backend=backend)(a, 2, 0)
    for g, (_, want) in zip(got, cases):
        np.testing.assert_array_equal(g, want)
    assert T.as_tensor_variable([i, 0], name="ij").name == "ij"
