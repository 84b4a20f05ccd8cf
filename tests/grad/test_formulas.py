"""Formulas differentiated as their ops (symnb/grad/formulas.py), with respect to the
formula's own variables: ``sn.grad`` rebuilds ``1 / (1 + exp(-z))`` as ``sigmoid(z)``, which
does not compute ``-z``, so a gradient with respect to ``-z`` lost the formula's path (a
DisconnectedInputError, or silently only its other uses' part). For every formula and every
variable it is made of or reads, the gradient, Lop and Rop are compared with finite
differences of the cost with that variable made an input."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import substitute

ZV = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
ZSHAPE = ZV.shape


def _weights(var) -> np.ndarray:
    """Distinct weights shaped like var (its shape fixed)."""
    size = int(np.prod(var.type.shape))
    return np.linspace(-1.0, 2.5, size).reshape(var.type.shape) + 0.1


def _formulas(z):
    """name -> (the formula's result, {name: a variable it is made of or reads})."""
    cases = {}
    one = sn.constant(1.0)
    u = -z
    e = sn.exp(u)
    t = one + e
    cases["1 / (1 + exp(-z))"] = (one / t, {"-z": u, "exp": e, "1 + exp": t, "1": one})
    e = sn.exp(z)
    t = 1 + e
    cases["1 / (1 + exp(z))"] = (1 / t, {"exp": e, "1 + exp": t})
    e = sn.exp(z)
    t = one + e
    cases["log(1 + exp(z))"] = (sn.log(t), {"exp": e, "1 + exp": t, "1": one})
    e = sn.exp(z)
    cases["log1p(exp(z))"] = (sn.log1p(e), {"exp": e})
    e = sn.exp(z)
    s = sn.sum(e, axis=1, keepdims=True)
    cases["softmax, keepdims"] = (e / s, {"exp": e, "sum": s})
    e = sn.exp(z)
    s = sn.sum(e, axis=1)
    back = s[:, None]
    cases["softmax, put back"] = (e / back, {"exp": e, "sum": s, "put back": back})
    e = sn.exp(z)
    s = sn.sum(e, axis=1)
    cases["log(sum(exp(z)))"] = (sn.log(s), {"exp": e, "sum": s})
    sig = sn.sigmoid(z)
    cases["log(sigmoid(z))"] = (sn.log(sig), {"sigmoid": sig})
    sig = sn.sigmoid(z)
    tr = sig.T
    d = one - tr
    cases["log(1 - sigmoid(z).T)"] = (sn.log(d), {"sigmoid": sig, "T": tr, "1 - s": d, "1": one})
    sig = sn.sigmoid(z)
    m = -sig
    cases["log1p(-sigmoid(z))"] = (sn.log1p(m), {"sigmoid": sig, "-s": m})
    sm = sn.softmax(z, axis=1)
    tr = sm.T
    cases["log(softmax(z).T)"] = (sn.log(tr), {"softmax": sm, "T": tr})
    return cases


CASES = [
    (formula, name)
    for formula, (_, parts) in _formulas(sn.tensor("z", shape=ZSHAPE)).items()
    for name in parts
]


def _numeric(z, result, var, extra: bool):
    """The cost ``sum(w * result)`` (plus ``sum(var**2)``: another use of var), var's value,
    and central differences of the cost in var (var made an input)."""
    w = sn.constant(_weights(result))
    cost = sn.sum(w * result) + (sn.sum(var * var) if extra else 0.0)
    free = sn.tensor("free", shape=var.type.shape, dtype=var.type.dtype)
    (moved,) = substitute([cost], {var: free})
    at = sn.function([z, free], moved)
    value = np.asarray(sn.function([z], var)(ZV), dtype="float64")
    want = np.zeros_like(value)
    for k in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[k] = 1e-6
        want[k] = (at(ZV, value + step) - at(ZV, value - step)) / 2e-6
    return cost, value, want


@pytest.mark.parametrize("extra", [False, True], ids=["only the formula", "also elsewhere"])
@pytest.mark.parametrize(("formula", "part"), CASES)
def test_gradient_with_respect_to_a_formulas_own_variable(formula, part, extra):
    z = sn.tensor("z", shape=ZSHAPE, dtype="float64")
    result, parts = _formulas(z)[formula]
    var = parts[part]
    cost, _, want = _numeric(z, result, var, extra)
    got = sn.function([z], sn.grad(cost, var))(ZV)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("formula", "part"), CASES)
def test_lop_and_rop_with_respect_to_a_formulas_own_variable(formula, part):
    z = sn.tensor("z", shape=ZSHAPE, dtype="float64")
    result, parts = _formulas(z)[formula]
    var = parts[part]
    _, value, want = _numeric(z, result, var, extra=False)
    w = _weights(result)
    got = sn.function([z], sn.Lop(result, var, sn.constant(w)))(ZV)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # <J v, w> = <v, J^T w>: the tangent paired with the cotangent is the Lop's
    tangent = np.linspace(-1.0, 1.0, value.size).reshape(value.shape) + 0.3
    jvp = sn.function([z], sn.Rop(result, var, sn.constant(tangent)))(ZV)
    np.testing.assert_allclose(np.sum(jvp * w), np.sum(tangent * want), rtol=1e-6)


def test_jacobian_and_hessian_with_respect_to_the_minus_of_the_logistic():
    """The repro: u = -z, p = 1 / (1 + exp(u)); d p / d u = -p (1 - p), and the Hessian of
    sum(p) in u is diag(p (1 - p) (1 - 2 p))."""
    z = sn.vector("z", dtype="float64")
    zv = np.array([0.5, -1.0, 2.0])
    u = -z
    p = 1 / (1 + sn.exp(u))
    jac, hess = sn.function([z], [sn.jacobian(p, u), sn.hessian(sn.sum(p), u)])(zv)
    s = 1 / (1 + np.exp(-zv))
    np.testing.assert_allclose(jac, np.diag(-s * (1 - s)), rtol=1e-12)
    np.testing.assert_allclose(hess, np.diag(s * (1 - s) * (1 - 2 * s)), rtol=1e-12)


def test_a_gradient_with_respect_to_z_still_goes_through_sigmoid():
    """The formula is still rebuilt where no requested variable is inside it: finite at
    logits where exp(-z) overflows, as sigmoid's gradient is."""
    z = sn.vector("z", dtype="float64")
    p = 1 / (1 + sn.exp(-z))
    with np.errstate(over="ignore"):
        got = sn.function([z], sn.grad(sn.sum(p), z))(np.array([-1000.0, 0.0]))
    np.testing.assert_allclose(got, [0.0, 0.25])
    u = sn.vector("u", dtype="float64")  # exp(u) of an input u: sigmoid(-u)
    q = 1 / (1 + sn.exp(u))
    with np.errstate(over="ignore"):
        got = sn.function([u], sn.grad(sn.sum(q), u))(np.array([1000.0, 0.0]))
    np.testing.assert_allclose(got, [0.0, -0.25])


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_print_or_draw_above_a_formula_runs_once_per_call(backend, capsys):
    """The walk differentiates the cost rebuilt with sigmoid where ``1 / (1 + exp(-z))`` is
    written; the rebuilt copy of a print_value above the formula (impure, never merged)
    printed a second time per call for sn.grad, sn.Lop, sn.Rop, sn.jacobian and sn.hessian,
    and a random draw above it was drawn twice. The gradients read the user's own nodes."""
    z, v = sn.tensor("z", shape=(2,)), sn.tensor("v", shape=(2,))
    p = sn.print_value(1 / (1 + sn.exp(-z)), "P")
    cost = sn.sum(p * p)
    products = [
        sn.grad(cost, z),
        sn.Lop(p * p, z, v),
        sn.Rop(p * p, z, v),
        sn.jacobian(p * p, z),
        sn.hessian(cost, z),
    ]
    f = sn.function([z, v], [cost, *products], backend=backend)
    zv = np.array([1.0, -2.0])
    capsys.readouterr()
    _, g, lop, rop, jac, _ = f(zv, np.ones(2))
    s = 1 / (1 + np.exp(-zv))
    assert capsys.readouterr().out.splitlines() == [f"P __str__ = {s}"]
    want = 2 * s * s * (1 - s)
    np.testing.assert_allclose([g, lop, rop, np.diag(jac)], [want] * 4)
    z = sn.vector("z")
    s_z = 1 / (1 + sn.exp(-z))
    u = sn.RandomStream(7).uniform(size=s_z.shape, low=s_z)  # a draw reading the formula
    f = sn.function([z], [u, sn.grad(sn.sum(u * z), z)], backend=backend)
    draws = [n for n in f.graph_before.toposort() if not getattr(n.op, "pure", True)]
    assert len(draws) == 1, [n.op.op_name() for n in draws]
    for _ in range(2):
        drawn, got = f(zv)
        np.testing.assert_allclose(got, drawn + zv * (1 - (drawn - s) / (1 - s)) * s * (1 - s))
