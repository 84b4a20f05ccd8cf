"""Truncated backpropagation through time at its edges: ``truncate_gradient`` of 0, 1, n-1,
n, n+1 and -1 (none) for n steps, against a hand-written BPTT over the last k steps, with the
initial state's gradient (it gets one exactly when every step is run back: k >= n or -1),
for a loop run forwards and backwards, with fixed and unknown step counts."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import available_backends

BACKENDS = available_backends()
N_STEPS = 5
EDGES = [0, 1, N_STEPS - 1, N_STEPS, N_STEPS + 1, -1]


def _data(t=N_STEPS, b=2, n=3):
    rng = np.random.default_rng(35)
    return [
        rng.standard_normal((t, b, n)),
        rng.standard_normal((b, n)),
        0.5 * rng.standard_normal((n, n)),
        0.5 * rng.standard_normal((n, n)),
    ]


def _bptt(x, h0, w, u, k, backwards=False):
    """d sum(h) / d (x, h0, w, u) through the last k steps run (all for k < 0)."""
    order = list(range(len(x)))[::-1] if backwards else list(range(len(x)))
    states, h = [h0], h0
    for t in order:
        h = np.tanh(x[t] @ u + h @ w)
        states.append(h)
    steps = len(x) if k < 0 else min(k, len(x))
    gx, gw, gu = np.zeros_like(x), np.zeros_like(w), np.zeros_like(u)
    carry = np.zeros_like(h0)
    for i in range(len(x) - 1, len(x) - 1 - steps, -1):  # i: the i-th step run
        dz = (1 - states[i + 1] ** 2) * (1.0 + carry)
        gx[order[i]] = dz @ u.T
        gu += x[order[i]].T @ dz
        gw += states[i].T @ dz
        carry = dz @ w.T
    gh0 = carry if steps == len(x) else np.zeros_like(h0)
    return [gx, gh0, gw, gu]


def _grads(k, backwards, shapes, backend):
    xs = [sn.tensor(f"a{i}", shape=s, dtype="float64") for i, s in enumerate(shapes)]
    hs, _ = sn.scan(
        lambda xt, h, w, u: sn.tanh(xt @ u + h @ w),
        sequences=xs[0],
        outputs_info=xs[1],
        non_sequences=xs[2:],
        truncate_gradient=k,
        go_backwards=backwards,
    )
    return sn.function(xs, sn.grad(sn.sum(hs), xs), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("backwards", [False, True], ids=["forwards", "backwards"])
@pytest.mark.parametrize("k", EDGES)
def test_truncation_edges_match_hand_bptt(k, backwards, backend):
    arrays = _data()
    got = _grads(k, backwards, [a.shape for a in arrays], backend)(*arrays)
    for name, g, r in zip(["x", "h0", "w", "u"], got, _bptt(*arrays, k, backwards)):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12, err_msg=f"d/d{name}, k={k}")


@pytest.mark.parametrize("k", EDGES)
def test_truncation_edges_with_an_unknown_step_count(k):
    """The step count known only when the function runs (it decides whether h0 is reached)."""
    arrays = _data()
    shapes = [(None, *arrays[0].shape[1:]), *[a.shape for a in arrays[1:]]]
    got = _grads(k, False, shapes, "py")(*arrays)
    for g, r in zip(got, _bptt(*arrays, k)):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


def test_full_truncation_equals_no_truncation():
    """k = n and k = -1 are the same gradient (the property behind the n edge)."""
    arrays = _data()
    shapes = [a.shape for a in arrays]
    full = _grads(-1, False, shapes, "py")(*arrays)
    for k in (N_STEPS, N_STEPS + 1):
        for a, b in zip(_grads(k, False, shapes, "py")(*arrays), full):
            np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("given", ["a", "3", 2.5, None, True])
def test_truncate_gradient_is_an_int(given):
    """``int(truncate_gradient)`` parsed "3", truncated 2.5 and gave Python's message for
    "a" or None."""
    x = sn.vector("x")
    with pytest.raises(sn.ArgumentError) as error:
        sn.scan(lambda v: v * 2, sequences=[x], truncate_gradient=given)
    assert str(error.value).startswith(
        "sn.scan: truncate_gradient is an int (k > 0: the gradient flows back through the last "
        f"k steps; -1: through all), not {given!r}"
    )
    assert error.value.location.filename == __file__
    out, _ = sn.scan(lambda v: v * 2, sequences=[x], truncate_gradient=np.int64(2))
    assert out.type.ndim == 1
