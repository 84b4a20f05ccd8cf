"""The two gradient rules of stabilize (``sigmoid_grad_without_division``,
``softmax_grad_without_division``) on hand-built forms: the divisions they may cancel inside
sums, differences, negations, ``sum_to_like`` and scatters, and the near misses they must
leave alone (a divisor that is not the probability, a pick at other indices or of another
array, a term with no division). Each case says whether the rule fires and compares the
stable graph with the naive one on ordinary inputs, where both are accurate."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.ops.broadcast import SumToLike
from symnb.ops.take import IncAlongAxis
from tests.opt.util import compile_pair

SIGMOID_RULE, SOFTMAX_RULE = "sigmoid_grad_without_division", "softmax_grad_without_division"


def check_rule(inputs, expr, values, rule, fires):
    plain, stable = compile_pair(inputs, expr, "stable")
    want, got = plain(*values), stable(*values)
    assert (stable.rewrites.counts().get(rule, 0) == 1) == fires, stable.rewrites.counts()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)


def sigmoid_forms():
    """name -> (q, fires) for the rule's ``q * s * (1 - s)``, s = sigmoid(z)."""
    z, h, c = sn.vector("z"), sn.vector("h"), sn.vector("c")
    hh = sn.matrix("hh")
    s = sn.sigmoid(z)
    forms = {
        "h/s + c": (h / s + c, True),
        "h/s - c": (h / s - c, True),
        "c - h/(1-s)": (c - h / (1 - s), True),
        "h/s - s": (h / s - s, True),
        "-(h/s)": (-(h / s), True),
        "-c": (-c, False),
        "c + h": (c + h, False),
        "h/(2 + -s)": (h / (2 + -s), False),
        "sum_to_like(hh/s, s)": (SumToLike()(hh / s, s), True),
        "sum_to_like(hh, s)": (SumToLike()(hh, s), False),
    }
    return [z, h, c, hh], s, forms


@pytest.mark.parametrize("name", sorted(sigmoid_forms()[2]))
def test_sigmoid_gradient_rule_on_its_forms(name, rng):
    inputs, s, forms = sigmoid_forms()
    q, fires = forms[name]
    values = [rng.normal(size=5), rng.normal(size=5), rng.normal(size=5), rng.normal(size=(3, 5))]
    check_rule(inputs, q * s * (1 - s), values, SIGMOID_RULE, fires)


def softmax_forms():
    """name -> (g, fires) for the rule's ``sm * (g - sum(g * sm, 1, keepdims))``."""
    x, h, w = sn.matrix("x"), sn.vector("h"), sn.vector("w")
    column, v = sn.matrix("column"), sn.matrix("v")  # given (3, 1): broadcast along the axis
    i = sn.tensor("i", shape=(None, 1), dtype="int64")
    j = sn.tensor("j", shape=(None, 1), dtype="int64")
    sm = sn.softmax(x, axis=1)
    other = sn.softmax(2 * x, axis=1)

    def scatter(value):
        return IncAlongAxis(1)(sn.zeros_like(x), i, value)

    def picked(p, at):
        return sn.squeeze(sn.take_along_axis(p, at, 1), -1)

    forms = {
        "h/sm": (sn.expand_dims(h, -1) / sm, True),
        "column/sm (unknown dims)": (column / sm, True),
        "fixed (3, 1)/sm": (sn.constant(np.arange(1.0, 4.0).reshape(3, 1)) / sm, True),
        "batch/sm": (sn.constant(np.arange(24.0).reshape(2, 3, 4)) / sm, True),
        "scatter of h/sm[i]": (scatter(sn.expand_dims(h / picked(sm, i), -1)), True),
        "scatter of h/sm[j]": (scatter(sn.expand_dims(h / picked(sm, j), -1)), False),
        "scatter of h/other[i]": (scatter(sn.expand_dims(h / picked(other, i), -1)), False),
        "scatter of h/w": (scatter(sn.expand_dims(h / w, -1)), False),
        "scatter of w": (scatter(sn.expand_dims(w, -1)), False),
        "scatter of a plain input": (scatter(v), False),
    }
    return [x, h, w, i, j, column, v], sm, forms


@pytest.mark.parametrize("name", sorted(softmax_forms()[2]))
def test_softmax_gradient_rule_on_its_forms(name, rng):
    inputs, sm, forms = softmax_forms()
    g, fires = forms[name]
    expr = sm * (g - sn.sum(g * sm, axis=1, keepdims=True))
    values = [
        rng.normal(size=(3, 4)),
        rng.normal(size=3),
        rng.uniform(1, 2, size=3),
        np.array([[1], [3], [0]]),
        np.array([[2], [0], [0]]),
        rng.normal(size=(3, 1)),
        rng.normal(size=(3, 1)),
    ]
    check_rule(inputs, expr, values, SOFTMAX_RULE, fires)
