"""Reshape with symbolic sizes (Theano's ``x.reshape((x.shape[0], -1))``): the static shape
infers named dims, the values match NumPy on every backend, a provably wrong element count is
a ShapeError at the user's line naming both counts."""

import numpy as np
import pytest

import symnb as sn
from tests.helpers import random_array


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, start=1) if marker in line)


# id -> (input shape, build(x, n), static result shape, NumPy reference(a, n))
CASES = {
    "theano idiom": (
        ("batch", 28, 28),
        lambda x, n: x.reshape((x.shape[0], -1)),
        ("batch", 784),
        lambda a, n: a.reshape(a.shape[0], -1),
    ),
    "function form": (
        ("batch", 784),
        lambda x, n: sn.reshape(x, (x.shape[0], 28, 28)),
        ("batch", 28, 28),
        lambda a, n: a.reshape(a.shape[0], 28, 28),
    ),
    "unknown batch": (
        (None, 28, 28),
        lambda x, n: x.reshape((x.shape[0], -1)),
        (None, 784),
        lambda a, n: a.reshape(a.shape[0], -1),
    ),
    "size arithmetic": (
        ("batch", 4, 6),
        lambda x, n: x.reshape((x.shape[0] * x.shape[1], x.shape[2] // 2, 2)),
        (sn.dim("batch") * 4, 3, 2),
        lambda a, n: a.reshape(-1, 3, 2),
    ),
    "arithmetic on an unknown dim": (
        (None, 4, 6),
        lambda x, n: x.reshape((x.shape[0] * 2, -1)),
        (None, 12),
        lambda a, n: a.reshape(a.shape[0] * 2, -1),
    ),
    "an int scalar input": (
        ("batch", 12),
        lambda x, n: x.reshape((n, -1)),
        (None, None),
        lambda a, n: a.reshape(n, -1),
    ),
    "the shape vector of another tensor": (
        ("batch", 12),
        lambda x, n: x.reshape(sn.tensor("like", shape=("batch", 3, 4)).shape),
        ("batch", 3, 4),
        lambda a, n: a.reshape(-1, 3, 4),
    ),
    "a fixed dim read from the shape": (
        (None, 4, 6),
        lambda x, n: x.reshape((-1, x.shape[2])),
        (None, 6),
        lambda a, n: a.reshape(-1, 6),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_symbolic_sizes_infer_dims_and_match_numpy(case, backend, rng):
    shape, build, static, reference = CASES[case]
    x = sn.tensor("x", shape=shape)
    n = sn.scalar("n", dtype="int64")
    out = build(x, n)
    assert sn.infer_shape(out) == tuple(static)
    a = random_array(
        rng, tuple(3 if d is None or isinstance(d, str) else d for d in shape), "float64"
    )
    f = sn.function([x, n], out, backend=backend, optimize="fast")
    np.testing.assert_array_equal(f(a, 2 if case == "an int scalar input" else 0), reference(a, 2))


def test_gradients_flow_through_a_symbolic_reshape(rng):
    a = random_array(rng, (3, 4, 2), "float64")
    sn.check_grad(lambda x: (x.reshape((x.shape[0], -1)) ** 2).sum(axis=1), [a])


def test_a_provably_wrong_element_count_names_both_counts_and_the_line():
    x = sn.tensor("x", shape=("batch", 784))
    with pytest.raises(sn.ShapeError) as info:
        sn.reshape(x, (x.shape[0], 28, 27))  # <- wrong count
    message = str(info.value)
    assert "cannot reshape (batch, 784) (batch*784 elements)" in message
    assert "into (batch, 28, 27) (batch*756 elements)" in message
    assert f"test_symbolic_reshape.py, line {_line_of('<- wrong count')}" in message
    assert info.value.location.lineno == _line_of("<- wrong count")


def test_a_fixed_count_that_does_not_split_and_sizes_that_are_not_ints():
    x = sn.tensor("x", shape=(None, 10))
    fixed = sn.tensor("f", shape=(4, 6))
    with pytest.raises(sn.ShapeError, match=r"\(4, 6\) \(24 elements\) does not split into"):
        fixed.reshape((-1, x.shape[1] + 1))
    with pytest.raises(sn.ShapeError, match="a size must be an integer scalar, not 's'"):
        x.reshape((sn.scalar("s"), -1))
    with pytest.raises(sn.ShapeError, match="a size is an int, a dim name or an int scalar"):
        x.reshape((2.5, -1))
    assert sn.infer_shape(x.reshape((x.shape[0], 5, 2), ndim=3)) == (None, 5, 2)  # Theano's ndim
    with pytest.raises(sn.ShapeError, match="ndim=2 but the target has 3 dims"):
        x.reshape((x.shape[0], 5, 2), ndim=2)


def test_any_negative_size_is_the_one_to_infer_as_in_numpy(backend):
    """np.reshape(a, (-2, 6)): NumPy takes any negative size as the unknown one; symnb took
    -2 as a size and refused the count, naming the private dims ``_unknown_0_0``."""
    a = np.arange(12.0).reshape(3, 4)
    y = sn.tensor("y", shape=(None, None))
    outputs = [sn.reshape(y, (-2, 6)), y.reshape(3, -5, 2), np.reshape(y, (-1, 4))]
    assert [out.type.shape for out in outputs] == [(None, 6), (3, None, 2), (None, 4)]
    got = sn.function([y], outputs, backend=backend)(a)
    for g, want in zip(got, [a.reshape(-2, 6), a.reshape(3, -5, 2), a.reshape(-1, 4)]):
        np.testing.assert_array_equal(g, want)
    with pytest.raises(sn.ShapeError) as info:
        sn.reshape(sn.tensor("x", shape=(None, 3)), (7,))  # a count 3 never divides
    message = str(info.value)
    assert "cannot reshape (?, 3) (? elements) into (7,) (7 elements)" in message
    assert "_unknown" not in message


def test_ndim_gives_the_length_of_a_shape_vector_of_unknown_length(backend):
    """Theano's ``x.reshape(shp, ndim=2)`` with ``shp`` computed in the graph: ndim entries,
    the vector's length checked when the function runs."""
    x = sn.tensor("x", shape=(2, 3, 4))
    shp = sn.tensor("shp", shape=(None,), dtype="int64")
    a = np.arange(24.0).reshape(2, 3, 4)
    for out in (sn.reshape(x, shp, ndim=2), x.reshape(shp, ndim=2)):
        assert out.type.ndim == 2
        f = sn.function([x, shp], out, backend=backend)
        np.testing.assert_array_equal(f(a, np.array([6, 4])), a.reshape(6, 4))
        np.testing.assert_array_equal(f(a, np.array([-1, 3])), a.reshape(-1, 3))
        with pytest.raises(Exception, match=r"'shp'.*\n.*int64\[3\]"):
            f(a, np.array([2, 3, 4]))  # a vector of 3 sizes for ndim=2
    with pytest.raises(sn.ShapeError, match="known length.*\n.*give its length as ndim="):
        sn.reshape(x, shp)
    known = sn.tensor("k", shape=(3,), dtype="int64")
    with pytest.raises(sn.ShapeError, match="ndim=2 but the target has 3 dims"):
        x.reshape(known, ndim=2)


def test_unknown_dims_stay_private_to_their_tensor():
    """``y.shape[0]`` of another tensor with an unknown dim is not x's unknown dim."""
    x, y = sn.tensor("x", shape=(None, 6)), sn.tensor("y", shape=(None, 6))
    assert sn.infer_shape(x.reshape((y.shape[0], -1))) == (None, None)
    assert sn.infer_shape(x.reshape((x.shape[0], 3, -1))) == (None, 3, 2)


@pytest.mark.parametrize(
    "shape, target, count, concrete",
    [
        (("b", 3), (0, -1), "b*3", (2, 3)),
        ((None, 3), (0, -1), "?", (2, 3)),
        (("b", 3), (-1, 0, 2), "b*3", (2, 3)),
        (("2*n+1",), (2, -1), "n*2+1", (7,)),
        ((3, "4*m+2"), (4, -1), "m*12+6", (3, 6)),
    ],
)
def test_a_symbolic_count_that_never_splits_is_refused_at_build(shape, target, count, concrete):
    """NumPy refuses a -1 beside a 0 whatever the size, and a count that is never a multiple
    of the rest of the target fails too: a ShapeError at the reshape, as for fixed sizes,
    where the type had a 0 or an unknown dim and the call failed inside NumPy."""
    x = sn.tensor("x", shape=shape)
    with pytest.raises(sn.ShapeError) as info:
        x.reshape(target)  # <- never splits
    message = str(info.value)
    assert f"({count} elements) does not split into {target}" in message
    assert ("a -1 beside a size 0 stands for no one size" in message) == (0 in target)
    assert info.value.location.lineno == _line_of("<- never splits")
    with pytest.raises(ValueError):  # NumPy refuses it for a size the shape allows
        np.ones(concrete).reshape(target)


def test_a_symbolic_count_that_may_split_keeps_an_unknown_size():
    """``b*3`` into ``(2, -1)`` fits an even b: built (it warns for splitting b), run by NumPy."""
    x = sn.tensor("x", shape=(3, "b"))
    with pytest.warns(sn.ReshapeSplitsDimWarning):
        y = x.reshape((2, -1))
    assert sn.infer_shape(y) == (2, None)
    f = sn.function([x], y, backend="py")
    np.testing.assert_array_equal(f(np.arange(12.0).reshape(3, 4)), np.arange(12.0).reshape(2, 6))


def test_a_size_read_from_a_broadcast_of_a_name_and_an_unknown_dim_is_the_runtime_size(backend):
    """``(a + b).shape[0]`` for a of ("n",), b of (None,) is not n: with n = 1 and b of 2 it
    is 2 (x's row count was used, and x of (1, 6) came back (1, 6) instead of (2, 3))."""
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=(None,))
    x = sn.tensor("x", shape=("n", 6))
    out = x.reshape(((a + b).shape[0], -1))
    assert sn.infer_shape(out) == (None, None)
    f = sn.function([a, b, x], out, backend=backend)
    xv = np.arange(6.0).reshape(1, 6)
    np.testing.assert_array_equal(f(np.ones(1), np.ones(2), xv), xv.reshape(2, 3))
