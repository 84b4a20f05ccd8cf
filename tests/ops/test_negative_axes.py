"""Op classes built directly with a negative axis (as internal callers may write): applied
as the op with that axis counted from the input's rank. Their rules compare axes with
positions, so ``Prod(axis=(-1,))`` reduced nothing on backend "c" (ones, a (1, 3, 4)
array) and promised a wrong type on "py"."""

import numpy as np
import pytest

import symnb as sn
from symnb.ops.broadcast import Sum
from symnb.ops.join import Concatenate, Split
from symnb.ops.layout import Flip, Repeat, Roll
from symnb.ops.linalg import Trace
from symnb.ops.nnet import Softmax
from symnb.ops.reduce import All, Argmax, Cumsum, Logsumexp, Max, Mean, Prod, Var
from symnb.ops.sort import Sort
from tests.helpers import available_backends

X = np.arange(1.0, 13.0).reshape(3, 4) / 4

CASES = {
    "sum": (lambda x: Sum((-1,))(x), X.sum(-1)),
    "prod": (lambda x: Prod((-1,))(x), X.prod(-1)),
    "max": (lambda x: Max((-2, -1))(x), X.max()),
    "mean": (lambda x: Mean((-2,), keepdims=True)(x), X.mean(-2, keepdims=True)),
    "var": (lambda x: Var((-1,))(x), X.var(-1)),
    "all": (lambda x: All((-1,))(x > 1), (X > 1).all(-1)),
    "logsumexp": (lambda x: Logsumexp((-1,))(x), np.log(np.exp(X).sum(-1))),
    "argmax": (lambda x: Argmax(-1)(x), X.argmax(-1)),
    "cumsum": (lambda x: Cumsum(-2)(x), X.cumsum(-2)),
    "softmax": (lambda x: Softmax(-2)(x), np.exp(X) / np.exp(X).sum(-2)),
    "sort": (lambda x: Sort(-2)(-x), np.sort(-X, -2)),
    "flip": (lambda x: Flip((-1,))(x), np.flip(X, -1)),
    "roll": (lambda x: Roll((1, 2), (-1, -2))(x), np.roll(X, (1, 2), (-1, -2))),
    "repeat": (lambda x: Repeat(2, -1)(x), np.repeat(X, 2, -1)),
    "concatenate": (lambda x: Concatenate(-1)(x, x), np.concatenate([X, X], -1)),
    "split": (lambda x: Split(-1, (1, 3))(x, np.array([1, 3]))[1], X[:, 1:]),
    "trace": (lambda x: Trace(1, -1, -2)(x), np.trace(X, 1, -1, -2)),
}


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_op_built_with_a_negative_axis_counts_it_from_the_rank(name, backend):
    build, want = CASES[name]
    x = sn.tensor("x", shape=(None, None), dtype="float64")
    out = build(x)
    assert out.type.ndim == np.ndim(want), out.type
    got = sn.function([x], out, backend=backend)(X)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want)


def test_the_counted_op_is_the_one_the_public_function_builds():
    x = sn.matrix("x")
    assert Prod((-1,))(x).owner.op == sn.prod(x, axis=1).owner.op
    assert Max((-1, 0))(x).owner.op.axis == (0, 1)  # the reductions' axes stay sorted
    g = sn.grad(sn.sum(Prod((-1,))(x) ** 2), x)  # its gradient reads the counted axis
    value = X + 1
    want = 2 * value.prod(-1, keepdims=True) ** 2 / value
    np.testing.assert_allclose(sn.function([x], g)(value), want)


def test_a_negative_axis_out_of_range_is_a_shape_error_at_the_users_line():
    x = sn.matrix("x")
    with pytest.raises(sn.ShapeError, match=r"prod: axis -3 is out of range for 'x'") as info:
        Prod((-3,))(x)
    assert "test_negative_axes.py" in str(info.value)
