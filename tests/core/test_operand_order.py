"""Dim unification, broadcasting and shape inference do not depend on operand order.

A rule that favours one side (``unify`` returning its second argument, say) makes
``x(3,) + y(n,)`` and ``y + x`` infer different shapes; these properties mix fixed sizes,
named dims, expressions of names and unknown dims through the dim functions and through the
ops that unify shapes (elementwise, ``concatenate``, ``matmul``).
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symnb as sn
from symnb.core import dims as D
from symnb.errors import ShapeError

DIMS = st.sampled_from([1, 2, 3, "n", "m", D.mul("n", 2), D.add("n", 1), None])
SHAPES = st.lists(DIMS, min_size=0, max_size=3).map(tuple)


def outcome(fn, *args):
    """``fn(*args)``, or the kind of error it raised (the outcome both orders must share)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pinning a name to a size warns; not the point here
        try:
            return fn(*args)
        except (D.DimMismatch, ShapeError) as exc:
            return type(exc)


@given(DIMS, DIMS)
def test_unify_is_symmetric(a, b):
    assert outcome(D.unify, a, b) == outcome(D.unify, b, a)


@given(DIMS, DIMS)
def test_broadcast_dims_is_symmetric(a, b):
    assert outcome(D.broadcast_dims, a, b) == outcome(D.broadcast_dims, b, a)


@given(DIMS, DIMS, DIMS)
def test_unify_is_associative_where_it_succeeds(a, b, c):
    left = outcome(lambda: D.unify(D.unify(a, b), c))
    right = outcome(lambda: D.unify(a, D.unify(b, c)))
    if not (isinstance(left, type) or isinstance(right, type)):
        assert left == right


def shape_of(build, *shapes):
    """The shape ``build`` infers for inputs of ``shapes``, or the error type it raised."""

    def infer():
        xs = [sn.tensor(f"v{i}", shape=s) for i, s in enumerate(shapes)]
        return build(*xs).type.shape

    return outcome(infer)


@settings(max_examples=150, deadline=None)
@given(SHAPES, SHAPES)
def test_elementwise_shape_does_not_depend_on_operand_order(a, b):
    assert shape_of(lambda x, y: x + y, a, b) == shape_of(lambda x, y: y + x, b, a)
    assert shape_of(lambda x, y: x * y, a, b) == shape_of(lambda x, y: y * x, b, a)


@settings(max_examples=100, deadline=None)
@given(SHAPES, SHAPES, SHAPES)
def test_three_operand_elementwise_shape_does_not_depend_on_operand_order(a, b, c):
    """Swapping operands at each level keeps the result. (Regrouping may not: ``2 + n``
    pins n to 2 and then ``+ m`` pins m, while ``n + m`` first is a clash of two names.)"""
    want = shape_of(lambda x, y, z: (x + y) + z, a, b, c)
    assert shape_of(lambda x, y, z: z + (y + x), a, b, c) == want
    assert shape_of(lambda x, y, z: (y + x) + z, a, b, c) == want


@settings(max_examples=120, deadline=None)
@given(st.lists(DIMS, min_size=1, max_size=3), st.lists(DIMS, min_size=1, max_size=3), DIMS, DIMS)
def test_concatenate_shape_does_not_depend_on_operand_order(rest_a, rest_b, n_a, n_b):
    if len(rest_a) != len(rest_b):
        rest_b = (rest_b * 3)[: len(rest_a)]
    a, b = (n_a, *rest_a[1:]), (n_b, *rest_b[1:])

    def concat(x, y):
        return sn.concatenate([x, y], axis=0)

    forward, backward = shape_of(concat, a, b), shape_of(concat, b, a)
    if isinstance(forward, type) or isinstance(backward, type):
        assert forward == backward
    else:  # the joined axis is a sum (order-free); every other axis unifies
        assert forward[1:] == backward[1:]
        assert forward[0] == backward[0]


@settings(max_examples=120, deadline=None)
@given(DIMS, DIMS, DIMS, DIMS)
def test_matmul_inner_dims_unify_whichever_operand_holds_which(rows, k1, k2, cols):
    def matmul(x, y):
        return x @ y

    assert shape_of(matmul, (rows, k1), (k2, cols)) == shape_of(matmul, (rows, k2), (k1, cols))


@pytest.mark.parametrize(
    "a, b, want",
    [
        ((3,), ("n",), (3,)),
        (("n",), (3,), (3,)),
        ((None,), ("n",), (None,)),  # n may be 1 and the unknown side 3: unknown
        ((None,), (3,), (3,)),  # a size other than 1: the unknown side is 1 or 3
        ((None,), ("2*n",), (D.mul("n", 2),)),  # 2*n is never 1
        (("n", 1), (1, 3), ("n", 3)),
        ((None, 3), ("m", None), (None, 3)),
    ],
)
def test_known_results_in_both_orders(a, b, want):
    assert shape_of(lambda x, y: x + y, a, b) == want
    assert shape_of(lambda x, y: x + y, b, a) == want
