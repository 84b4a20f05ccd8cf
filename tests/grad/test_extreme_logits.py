"""Gradients of log-probabilities at extreme logits: ``log(softmax(x))`` picked in any way
and ``log(sigmoid(x))``, ``log(1 - sigmoid(x))``, ``log1p(-sigmoid(x))``, at every order.
Their gradients divide by a probability that underflows to 0 at logits of +-1000; the
stabilize rules cancel that division in a first gradient of one shape only, so ``sn.grad``
differentiates the stable op instead (symnb/grad/formulas.py). Against torch at moderate
logits, finite and exact at extreme ones."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn

EXTREME = np.array([[1000.0, -1000.0, 0.0], [-500.0, 500.0, 30.0]])
LABELS = np.array([1, 0])
PICKS = ["fancy", "take_along_axis", "take_along_axis squeezed", "transposed fancy"]
PICKS += ["crossentropy", "one-hot"]
LOG_SIGMOIDS = ["log(sigmoid(x))", "log(1 - sigmoid(x))", "log1p(-sigmoid(x))"]
LOG_SIGMOIDS += ["log(1 / (1 + exp(-x)))"]


def _inputs():
    x = sn.tensor("x", shape=(None, 3), dtype="float64")
    return x, sn.tensor("t", shape=(None,), dtype="int64")


def _picked_losses(x, t):
    """name -> the per-row loss ``-log(p[label])``, p = softmax(x), picked each way."""
    sm = sn.softmax(x, axis=1)
    n, picked = x.shape[0], sn.take_along_axis(sm, t[:, None], 1)
    onehot = sn.cast(sn.equal(sn.arange(3)[None, :], t[:, None]), "float64")
    return {
        "fancy": -sn.log(sm[sn.arange(n), t]),
        "take_along_axis": -sn.log(sn.take_along_axis(sm, t[:, None], axis=1))[:, 0],
        "take_along_axis squeezed": -sn.log(sn.squeeze(picked, axis=1)),
        "transposed fancy": -sn.log(sm.T[t, sn.arange(n)]),
        "crossentropy": sn.crossentropy(sm, t),
        "one-hot": -sn.sum(onehot * sn.log(sm), axis=1),
    }


def _softmax(z):
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("name", PICKS)
def test_picked_log_softmax_gradients_at_extreme_logits(name, backend):
    x, t = _inputs()
    loss = _picked_losses(x, t)[name]
    g = sn.grad(sn.sum(loss), x)
    h = sn.grad(sn.sum(g * g), x)
    for optimize in ("fast", "stable"):
        f = sn.function([x, t], [loss, g, h], backend=backend, optimize=optimize)
        got_loss, got_g, got_h = f(EXTREME, LABELS)
        p = _softmax(EXTREME)
        np.testing.assert_allclose(got_loss, [2000.0, 1000.0])
        np.testing.assert_allclose(got_g, p - np.eye(3)[LABELS], atol=1e-12)
        assert np.isfinite(got_h).all(), (optimize, got_h)
        np.testing.assert_allclose(got_h, _xent_second(EXTREME, LABELS), atol=1e-12)


def _xent_second(z, labels):
    """d/dz sum(g * g), g = softmax(z) - onehot: 2 J^T g with J = diag(p) - p p^T per row."""
    p = _softmax(z)
    g = p - np.eye(z.shape[1])[labels]
    return 2 * (p * g - p * np.sum(p * g, axis=1, keepdims=True))


@pytest.mark.parametrize("name", PICKS)
def test_picked_log_softmax_first_and_second_gradients_equal_torch(name, rng):
    torch = pytest.importorskip("torch")
    z, labels = rng.normal(size=(4, 3)) * 3, np.array([2, 0, 1, 1])
    x, t = _inputs()
    g = sn.grad(sn.sum(_picked_losses(x, t)[name]), x)
    h = sn.grad(sn.sum(g * g), x)
    got_g, got_h = sn.function([x, t], [g, h], backend="c")(z, labels)
    tz = torch.tensor(z, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(tz, torch.tensor(labels), reduction="sum")
    (tg,) = torch.autograd.grad(loss, tz, create_graph=True)
    (th,) = torch.autograd.grad((tg * tg).sum(), tz)
    np.testing.assert_allclose(got_g, tg.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got_h, th.numpy(), rtol=1e-12, atol=1e-14)


def _log_sigmoids(x):
    """name -> (loss, its torch form)."""
    return {
        "log(sigmoid(x))": (sn.log(sn.sigmoid(x)), lambda v: torch_f(v)),
        "log(1 - sigmoid(x))": (sn.log(1 - sn.sigmoid(x)), lambda v: torch_f(-v)),
        "log1p(-sigmoid(x))": (sn.log1p(-sn.sigmoid(x)), lambda v: torch_f(-v)),
        "log(1 / (1 + exp(-x)))": (sn.log(1 / (1 + sn.exp(-x))), lambda v: torch_f(v)),
    }


def torch_f(v):
    import torch

    return torch.nn.functional.logsigmoid(v)


@pytest.mark.parametrize("name", LOG_SIGMOIDS)
def test_log_sigmoid_second_gradient_at_extreme_logits(name, backend):
    x = sn.tensor("x", shape=(None,), dtype="float64")
    loss, _ = _log_sigmoids(x)[name]
    g = sn.grad(sn.sum(loss), x)
    h = sn.grad(sn.sum(g * g), x)
    xv = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    sign = 1.0 if name in ("log(sigmoid(x))", "log(1 / (1 + exp(-x)))") else -1.0
    with np.errstate(over="ignore"):  # loss = log(s), s = sigmoid(sign x): g = sign (1 - s)
        s, rest = 1 / (1 + np.exp(-sign * xv)), 1 / (1 + np.exp(sign * xv))
    want_g, want_h = sign * rest, -2 * sign * rest * s * rest
    for optimize in ("fast", "stable"):
        got_g, got_h = sn.function([x], [g, h], backend=backend, optimize=optimize)(xv)
        # sigmoid's own gradient s (1 - s) rounds 1 - s at s near 1, as torch's does
        np.testing.assert_allclose(got_g, want_g, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got_h, want_h, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", LOG_SIGMOIDS)
def test_log_sigmoid_first_and_second_gradients_equal_torch(name, rng):
    torch = pytest.importorskip("torch")
    xv = rng.normal(size=6) * 4
    x = sn.tensor("x", shape=(None,), dtype="float64")
    loss, torch_loss = _log_sigmoids(x)[name]
    g = sn.grad(sn.sum(loss), x)
    h = sn.grad(sn.sum(g * g), x)
    got_g, got_h = sn.function([x], [g, h], backend="c")(xv)
    tx = torch.tensor(xv, requires_grad=True)
    (tg,) = torch.autograd.grad(torch_loss(tx).sum(), tx, create_graph=True)
    (th,) = torch.autograd.grad((tg * tg).sum(), tx)
    np.testing.assert_allclose(got_g, tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(got_h, th.numpy(), rtol=1e-10)


def test_gradient_with_respect_to_the_probabilities_keeps_the_formula():
    """``sn.grad`` of ``log(softmax(x)[i])`` with respect to the softmax itself is ``1 / p``
    at the label: the cost is not rebuilt where a target sits inside the formula."""
    x, t = _inputs()
    sm = sn.softmax(x, axis=1)
    gp = sn.grad(sn.sum(-sn.log(sm[sn.arange(x.shape[0]), t])), sm)
    z = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    p = _softmax(z)
    want = np.zeros_like(p)
    want[np.arange(2), LABELS] = -1 / p[np.arange(2), LABELS]
    np.testing.assert_allclose(sn.function([x, t], gp)(z, LABELS), want, rtol=1e-12)


def _jvp_cases(z, t):
    """name -> f(z): the log-probabilities sn.grad rebuilds, and a binary cross-entropy."""
    return {
        "log(sigmoid(z))": sn.log(sn.sigmoid(z)),
        "log(1 / (1 + exp(-z)))": sn.log(1 / (1 + sn.exp(-z))),
        "log(1 - sigmoid(z))": sn.log(1 - sn.sigmoid(z)),
        "binary_crossentropy(sigmoid(z), t)": sn.binary_crossentropy(sn.sigmoid(z), t),
        "log(softmax(z))": sn.log(sn.softmax(z)),
        "log(1 + exp(z))": sn.log(1 + sn.exp(z)),
    }


def _jacobians(zv, tv):
    """name -> the analytic Jacobian of each of _jvp_cases at zv (float64)."""
    with np.errstate(over="ignore"):
        s, rest = 1 / (1 + np.exp(-zv)), 1 / (1 + np.exp(zv))  # sigmoid(z), sigmoid(-z)
    p = np.exp(zv - zv.max())
    p /= p.sum()
    return {
        "log(sigmoid(z))": np.diag(rest),
        "log(1 / (1 + exp(-z)))": np.diag(rest),
        "log(1 - sigmoid(z))": np.diag(-s),
        "binary_crossentropy(sigmoid(z), t)": np.diag(s - tv),
        "log(softmax(z))": np.eye(len(zv)) - p,
        "log(1 + exp(z))": np.diag(s),
    }


@pytest.mark.parametrize("name", list(_jacobians(np.zeros(1), np.zeros(1))))
@pytest.mark.parametrize("where", ["ordinary", "extreme"])
def test_rop_and_lop_of_log_probabilities_are_the_jacobians_products(name, where, backend):
    """sn.Rop went through Lop with known gradients, which differentiated the formula as
    written: the second pass divided by a probability that underflows (J v was NaN at
    logits of -1000, and at 40 for a cross-entropy, where sigmoid rounds to 1), and Lop was
    NaN for the logistic and softplus formulas written out."""
    z = sn.tensor("z", shape=(4,), dtype="float64")
    zv = {"ordinary": [-1.5, -0.2, 0.7, 2.0], "extreme": [-1000.0, -2.0, 40.0, 1000.0]}[where]
    zv, tv = np.array(zv), np.array([1.0, 0.0, 1.0, 1.0])
    v, u = np.array([1.0, -0.5, 2.0, 0.25]), np.array([0.5, 2.0, -1.0, 3.0])
    f = _jvp_cases(z, sn.constant(tv))[name]
    products = [sn.Rop(f, z, v), sn.Lop(f, z, u), sn.jacobian(f, z)]
    with np.errstate(all="ignore"):  # the forward values may overflow; the products not
        jvp, vjp, jac = sn.function([z], products, backend=backend)(zv)
    want = _jacobians(zv, tv)[name]
    np.testing.assert_allclose(jvp, want @ v, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(vjp, u @ want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(jac, want, rtol=1e-12, atol=1e-15)


def test_lop_of_a_picked_log_softmax_at_extreme_logits(backend):
    """Lop of ``-log(softmax(x)[arange(n), t])`` was NaN at logits of +-1000 (the division
    by the picked probability, which the stabilize rules do not cancel through a Lop)."""
    x, t = _inputs()
    loss = _picked_losses(x, t)["fancy"]
    u = np.array([1.0, 2.0])
    got = sn.function([x, t], sn.Lop(loss, x, u), backend=backend)(EXTREME, LABELS)
    want = u[:, None] * (_softmax(EXTREME) - np.eye(3)[LABELS])
    np.testing.assert_allclose(got, want, atol=1e-12)
