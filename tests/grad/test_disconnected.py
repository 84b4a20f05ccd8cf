"""Disconnected inputs in every position, for every way to differentiate (``Rop``, ``Lop``,
``grad``): each result belongs to its own input, checked against central
differences of the compiled function. A product that pairs tangents or gradients with the
wrong input once an input without a path to the output comes first fails here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import symnb as sn

SHAPE = (3,)
EPS = 1e-6


def _outputs(connected):
    """Two outputs of the connected inputs (each reads all of them, differently)."""
    p, q = connected
    return [sn.sin(p) * q + sn.exp(0.5 * p), q * q - sn.tanh(p)]


def _layout(n_inputs, disconnected):
    """Variables a0..a{n-1}, the ones at positions ``disconnected`` unused by the outputs
    (a disconnected one of another shape where ``odd_shape``)."""
    xs = [sn.tensor(f"a{i}", shape=SHAPE, dtype="float64") for i in range(n_inputs)]
    connected = [x for i, x in enumerate(xs) if i not in disconnected]
    return xs, _outputs(connected)


def _points(rng, n):
    return [rng.standard_normal(SHAPE) for _ in range(n)]


def _numeric_jvp(f, values, tangents):
    up = f(*[v + EPS * t for v, t in zip(values, tangents)])
    down = f(*[v - EPS * t for v, t in zip(values, tangents)])
    return [(u - d) / (2 * EPS) for u, d in zip(up, down)]


def _numeric_vjp(f, values, cotangents):
    """d <f(values), cotangents> / d values, one input at a time."""
    grads = []
    for i, v in enumerate(values):
        g = np.zeros_like(v)
        for j in range(v.size):
            step = np.zeros_like(v)
            step.flat[j] = EPS
            up = f(*values[:i], v + step, *values[i + 1 :])
            down = f(*values[:i], v - step, *values[i + 1 :])
            g.flat[j] = sum(np.sum((a - b) * c) for a, b, c in zip(up, down, cotangents))
        grads.append(g / (2 * EPS))
    return grads


#: (inputs, disconnected positions): one disconnected input in each of 3 positions, two in
#: each pair of 4 positions
LAYOUTS = [(3, {i}) for i in range(3)] + [(4, set(p)) for p in itertools.combinations(range(4), 2)]


@pytest.mark.parametrize("n, disconnected", LAYOUTS, ids=lambda v: str(v))
def test_rop_pairs_each_tangent_with_its_input(n, disconnected):
    rng = np.random.default_rng(n + 10 * min(disconnected))
    xs, outs = _layout(n, disconnected)
    vs = [sn.tensor(f"v{i}", shape=SHAPE, dtype="float64") for i in range(n)]
    jvp = sn.Rop(outs, xs, vs, disconnected="ignore")
    got = sn.function([*xs, *vs], jvp, backend="py")
    f = sn.function(xs, outs, backend="py")
    values, tangents = _points(rng, n), _points(rng, n)
    want = _numeric_jvp(f, values, tangents)
    for g, w in zip(got(*values, *tangents), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n, disconnected", LAYOUTS, ids=lambda v: str(v))
def test_lop_and_grad_give_each_input_its_own_gradient(n, disconnected):
    rng = np.random.default_rng(n + 20 * min(disconnected))
    xs, outs = _layout(n, disconnected)
    us = [sn.tensor(f"u{i}", shape=SHAPE, dtype="float64") for i in range(len(outs))]
    lop = sn.Lop(outs, xs, us, disconnected="ignore")
    cost = sum((o * u).sum() for o, u in zip(outs, us))
    grads = sn.grad(cost, xs, disconnected="ignore")
    got = sn.function([*xs, *us], [*lop, *grads], backend="py")
    f = sn.function(xs, outs, backend="py")
    values, cotangents = _points(rng, n), _points(rng, len(outs))
    want = _numeric_vjp(f, values, cotangents)
    result = got(*values, *cotangents)
    for i, (a, b, w) in enumerate(zip(result[:n], result[n:], want, strict=True)):
        np.testing.assert_allclose(a, w, rtol=1e-6, atol=1e-8, err_msg=f"Lop, input {i}")
        np.testing.assert_allclose(b, w, rtol=1e-6, atol=1e-8, err_msg=f"grad, input {i}")
        if i in disconnected:
            assert not np.any(a) and not np.any(b)


@pytest.mark.parametrize("position", range(3))
def test_rop_with_a_disconnected_input_of_another_shape_and_dtype(position):
    """The disconnected input is an int32 matrix: its tangent is skipped, not paired."""
    xs = [sn.tensor(f"a{i}", shape=SHAPE, dtype="float64") for i in range(2)]
    other = sn.tensor("k", shape=(2, 2), dtype="float32")
    wrt = xs[:position] + [other] + xs[position:]
    out = _outputs(xs)[0]
    vs = [sn.tensor(f"v{i}", shape=w.type.shape, dtype=w.type.dtype) for i, w in enumerate(wrt)]
    jvp = sn.function([*xs, *vs], sn.Rop(out, wrt, vs, disconnected="ignore"), backend="py")
    rng = np.random.default_rng(position)
    values, tangents = _points(rng, 2), _points(rng, 2)
    extra = np.ones((2, 2), np.float32)
    vals = tangents[:position] + [extra] + tangents[position:]
    f = sn.function(xs, [out], backend="py")
    (want,) = _numeric_jvp(f, values, tangents)
    np.testing.assert_allclose(jvp(*values, *vals), want, rtol=1e-6, atol=1e-8)
