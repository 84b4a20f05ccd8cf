"""Formulas written by hand (softplus, log-sigmoid, softmax, log-softmax, logsumexp): finite
values and gradients at the extremes, equal to the stable op's, on backends py and c; and the
near misses the rules must leave alone."""

import numpy as np
import pytest

import symnb as sn
from tests.helpers import named_backends
from tests.opt.util import fired

ROWS, COLS = 3, 4


def _sum_back(s, how, axis):
    """A sum over ``axis`` (keepdims=False) brought back to rank 2 at ``axis``."""
    if how == "dimshuffle":
        return s.dimshuffle(0, "x") if axis == 1 else s.dimshuffle("x", 0)
    if how == "index":
        return s[:, None] if axis == 1 else s[None, :]
    return s.reshape((-1, 1) if axis == 1 else (1, -1))


def _softmax_by_hand(z, axis, how="keepdims", shift=False):
    if shift:
        z = z - sn.max(z, axis=axis, keepdims=True)
    if how == "keepdims":
        return sn.exp(z) / sn.sum(sn.exp(z), axis=axis, keepdims=True)
    return sn.exp(z) / _sum_back(sn.sum(sn.exp(z), axis=axis), how, axis)


#: name -> (the formula by hand, the stable op it must equal, the rules that must fire)
FORMULAS = {
    "log(1+exp(z))": (lambda z: sn.log(1 + sn.exp(z)), sn.softplus, "softplus_of_formula"),
    "log(exp(z)+1)": (lambda z: sn.log(sn.exp(z) + 1), sn.softplus, "softplus_of_formula"),
    "log1p(exp(z))": (lambda z: sn.log1p(sn.exp(z)), sn.softplus, "softplus_of_formula"),
    "log(sigmoid(z))": (
        lambda z: sn.log(sn.sigmoid(z)),
        lambda z: -sn.softplus(-z),
        "log_sigmoid",
    ),
    "log(1-sigmoid(z))": (
        lambda z: sn.log(1 - sn.sigmoid(z)),
        lambda z: -sn.softplus(z),
        "log_one_minus_sigmoid",
    ),
    "log(1/(1+exp(-z)))": (
        lambda z: sn.log(1 / (1 + sn.exp(-z))),
        lambda z: -sn.softplus(-z),
        "log_sigmoid",
    ),
    "-log(1+exp(-z))": (
        lambda z: -sn.log(1 + sn.exp(-z)),
        lambda z: -sn.softplus(-z),
        "softplus_of_formula",
    ),
    **{
        f"softmax(axis={a}, {how})": (
            lambda z, a=a, how=how: _softmax_by_hand(z, a, how),
            lambda z, a=a: sn.softmax(z, axis=a),
            "softmax_of_formula",
        )
        for a in (0, 1)
        for how in ("keepdims", "dimshuffle", "index", "reshape")
    },
    "softmax(exp(z - max))": (
        lambda z: _softmax_by_hand(z, 1, shift=True),
        lambda z: sn.softmax(z, axis=1),
        "softmax_of_formula",
    ),
    **{
        f"log(softmax(axis={a}))": (
            lambda z, a=a: sn.log(_softmax_by_hand(z, a)),
            lambda z, a=a: sn.log_softmax(z, axis=a),
            "log_softmax_of_softmax",
        )
        for a in (0, 1)
    },
    "z - log(sum(exp(z)))": (
        lambda z: z - sn.log(sn.sum(sn.exp(z), axis=1, keepdims=True)),
        lambda z: sn.log_softmax(z, axis=1),
        "logsumexp_of_exp",
    ),
    "log(sum(exp(z)))": (
        lambda z: sn.log(sn.sum(sn.exp(z), axis=1)),
        lambda z: sn.logsumexp(z, axis=1),
        "logsumexp_of_exp",
    ),
    "log(sum(exp(z)), all)": (
        lambda z: sn.log(sn.sum(sn.exp(z))),
        lambda z: sn.logsumexp(z),
        "logsumexp_of_exp",
    ),
}


def _extremes(dtype):
    """Logits past exp's overflow (88.7 in float32, 709.8 in float64), around 120 and very
    negative, mixed in rows and columns, and a row of ordinary values."""
    big = 120.0 if dtype == "float32" else 800.0
    rng = np.random.default_rng(7)
    z = np.array(
        [[big, -big, 3.0, 89.5], [-1000.0, -big, -big - 5, -big + 1], [0.5, -0.25, 1.5, 2.0]]
    )
    return (z + rng.uniform(-0.1, 0.1, z.shape)).astype(dtype)


def _value_and_grad(fn, z, backend, optimize="fast"):
    """fn(z) and the gradient of a weighted sum of it (weights without structure)."""
    out = fn(z)
    w = np.random.default_rng(3).uniform(0.5, 1.5, out.type.shape).astype(z.type.dtype)
    cost = sn.sum(out * sn.constant(w))
    return sn.function([z], [out, sn.grad(cost, z)], backend=backend, optimize=optimize)


@pytest.mark.parametrize("backend", named_backends("py", "c"))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FORMULAS))
def test_formula_by_hand_is_finite_and_equals_the_op(name, dtype, backend):
    by_hand, stable, rule_name = FORMULAS[name]
    z = sn.tensor("z", shape=(ROWS, COLS), dtype=dtype)
    values = _extremes(dtype)
    f = _value_and_grad(by_hand, z, backend)
    want_value, want_grad = _value_and_grad(stable, z, backend)(values)
    value, grad = f(values)
    assert rule_name in f.rewrites.counts()
    assert np.isfinite(value).all() and np.isfinite(grad).all()
    assert value.dtype == want_value.dtype and grad.dtype == np.dtype(dtype)
    tol = 2e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(value, want_value, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, want_grad, rtol=tol, atol=tol)


#: formulas of an op whose own gradient is finite (a log of one needs stabilize's rules)
OPS = ("softplus_of_formula", "softmax_of_formula", "logsumexp_of_exp")


@pytest.mark.parametrize("name", [name for name in FORMULAS if FORMULAS[name][2] in OPS])
def test_formula_gradient_is_finite_without_rewrites(name):
    """The gradient is taken through the op, not the formula: finite with no rewrites."""
    by_hand, stable, _ = FORMULAS[name]
    z = sn.tensor("z", shape=(ROWS, COLS), dtype="float32")
    z_in = sn.tensor("z_in", shape=(ROWS, COLS), dtype="float32")
    grad_of = sn.function([z], sn.grad(sn.sum(by_hand(z) * 1.5), z), optimize="none")
    want = sn.function([z_in], sn.grad(sn.sum(stable(z_in) * 1.5), z_in), optimize="none")
    values = _extremes("float32")
    np.testing.assert_allclose(grad_of(values), want(values), rtol=2e-6, atol=2e-6)


def _near_miss(outputs_of, inputs, values, rule_name):
    """The rule does not fire, and the graph computes what it did as written."""
    outputs = outputs_of(*inputs)
    assert rule_name not in fired(inputs, outputs)
    plain = sn.function(inputs, outputs, optimize="none", backend="py")
    fast = sn.function(inputs, outputs, backend="py")
    for want, got in zip(plain(*values), fast(*values), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


SQUARE = (3, 3)  # a sum over the wrong axis broadcasts without a shape error


@pytest.mark.parametrize(
    "formula",
    [
        # the sum over axis 1 without keepdims broadcasts along the rows: not a normalisation
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=1)],
        # put back at the wrong axis
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=1)[None, :]],
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=1).dimshuffle("x", 0)],
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=0).reshape((-1, 1))],
        # a sum over both axes, and the exp of another variable in the sum
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=(0, 1), keepdims=True)],
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(w), axis=1, keepdims=True)],
        # a second client: the exponentials (or their sum) are an output too
        lambda z, w: [sn.exp(z) / sn.sum(sn.exp(z), axis=1, keepdims=True), sn.exp(z)],
        lambda z, w: [
            sn.exp(z) / sn.sum(sn.exp(z), axis=1, keepdims=True),
            sn.sum(sn.exp(z), axis=1, keepdims=True),
        ],
    ],
)
def test_softmax_near_misses(formula):
    z = sn.tensor("z", shape=SQUARE, dtype="float64")
    w = sn.tensor("w", shape=SQUARE, dtype="float64")
    rng = np.random.default_rng(0)
    values = [rng.normal(size=SQUARE), rng.normal(size=SQUARE)]
    _near_miss(formula, [z, w], values, "softmax_of_formula")


def test_softplus_near_misses():
    z = sn.tensor("z", shape=SQUARE, dtype="float64")
    values = [np.random.default_rng(1).normal(size=SQUARE)]
    # log(2 + exp(z)) is not softplus; exp(z) used by a second output keeps the formula
    _near_miss(lambda z: [sn.log(2 + sn.exp(z))], [z], values, "softplus_of_formula")
    _near_miss(lambda z: [sn.log1p(sn.exp(z)), sn.exp(z)], [z], values, "softplus_of_formula")
    _near_miss(lambda z: [sn.log1p(sn.exp(z) * 2)], [z], values, "softplus_of_formula")


def test_rbm_free_energy_by_hand_is_finite():
    """The RBM tutorial's free energy, log(1 + exp(v W + b)) summed, past exp's overflow."""
    v = sn.tensor("v", shape=("batch", 5), dtype="float32")
    W = sn.shared(np.full((5, 4), 30.0, "float32"), name="W")
    wx_b = v @ W
    free_energy = -sn.sum(sn.log(1 + sn.exp(wx_b)), axis=1)
    f = sn.function([v], [free_energy, sn.grad(sn.mean(free_energy), W)])
    energy, grad = f(np.ones((2, 5), "float32"))
    np.testing.assert_allclose(energy, -4 * 150.0, rtol=1e-6)
    np.testing.assert_allclose(grad, -1.0, rtol=1e-6)
