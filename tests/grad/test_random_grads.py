"""Gradients and random draws: sn.check_grad holds a draw's numbers fixed through its
finite differences; normal and uniform are differentiable in their float parameters (the
reparameterisation trick), exactly, also in Rop, hessian, scan and the Theano forms."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.compat.theano.gradient import verify_grad
from tests.helpers import available_backends, named_backends


def test_check_grad_of_an_expression_with_a_draw_holds_its_numbers_fixed():
    """d/dx sum(x * z * proj) is z; each finite-difference call must see the same z."""
    rng = sn.RandomStream(1)
    sn.check_grad(lambda x: x * rng.normal((3,), dtype="float64"), [np.ones(3)])
    verify_grad(lambda x: sn.tanh(x * rng.uniform((3,), dtype="float64")), [np.ones(3)], rng=0)
    for _, counter in rng.states:  # the checks leave the streams where they were
        assert int(counter.get_value()) == 0


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_normal_and_uniform_are_differentiable_in_their_parameters(backend):
    """The reparameterisation trick: ``normal(avg=mu, std=s)`` is ``mu + s * z``, so
    d/dmu = 1, d/ds = z; ``uniform(low=a, high=b)`` is ``a + (b - a) * u``: d/da = 1 - u,
    d/db = u (z and u the standard draws of the same seed)."""
    mu, s = sn.vector("mu", dtype="float64"), sn.vector("s", dtype="float64")
    w = sn.vector("w", dtype="float64")
    rng = sn.RandomStream(3)
    z = rng.normal(avg=mu, std=s, dtype="float64")  # the parameters' shape, (4,)
    u = rng.uniform(low=mu, high=mu + s, dtype="float64")
    grads = sn.grad(sn.sum(w * z) + sn.sum(w * u), [mu, s])
    f = sn.function([mu, s, w], [z, u, *grads], backend=backend)
    m0, s0, w0 = np.array([0.5, -1.0, 2.0, 0.0]), np.array([1.0, 2.0, 0.5, 0.0]), np.arange(4.0)
    got_z, got_u, g_mu, g_s = f(m0, s0, w0)
    both = sn.RandomStream(3)
    standard = [both.normal((4,), dtype="float64"), both.uniform((4,), dtype="float64")]
    z0, u0 = sn.function([], standard, backend=backend)()
    np.testing.assert_array_equal(got_z, m0 + s0 * z0)
    np.testing.assert_array_equal(got_u, m0 + s0 * u0)
    np.testing.assert_allclose(g_mu, w0 * 2, rtol=1e-15)  # d/dmu of z, of a and of b = mu + s
    np.testing.assert_allclose(g_s, w0 * (z0 + u0), rtol=1e-15)  # s = 0 is no special case


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_float32_gradient_is_the_standard_draw_not_a_difference_of_rounded_values(backend):
    """``(out - avg) / std`` of a float32 output 1000 + 0.001 z loses every digit of z; the
    gradient reads the z the forward drew."""
    avg, std = sn.scalar("avg", dtype="float32"), sn.scalar("std", dtype="float32")
    z = sn.RandomStream(8).normal((1000,), avg=avg, std=std, dtype="float32")
    g = sn.grad(sn.sum(z), std)
    got = sn.function([avg, std], g, backend=backend)(np.float32(1000), np.float32(1e-3))
    want = sn.function([], sn.RandomStream(8).normal((1000,), dtype="float32"), backend=backend)()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want.sum(), rtol=1e-5)


@pytest.mark.parametrize("backend", named_backends("py", "c"))
def test_check_grad_rop_and_hessian_through_draws(backend):
    m0, s0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    rng = sn.RandomStream(0)
    sn.check_grad(lambda m, s: rng.normal(avg=m, std=s), [m0, s0], backend=backend)
    sn.check_grad(lambda m, s: rng.normal((4, 3), avg=m, std=s), [m0, s0], backend=backend)
    sn.check_grad(lambda a, b: rng.uniform(low=a, high=b + 3), [m0, s0], backend=backend)
    mu, s = sn.vector("mu", dtype="float64"), sn.vector("s", dtype="float64")
    vm, vs = sn.vector("vm", dtype="float64"), sn.vector("vs", dtype="float64")
    z = sn.RandomStream(2).normal(avg=mu, std=s, dtype="float64")
    outs = [
        z,
        sn.Rop(z, [mu, s], [vm, vs]),
        *sn.hessian(sn.sum(z**2), [mu, s]),  # symbolic shapes: a scan over the rows
    ]
    got_z, rop, h_mu, h_s = sn.function([mu, s, vm, vs], outs, backend=backend)(
        m0, s0, np.ones(3), np.full(3, 2.0)
    )
    eps = sn.function([], sn.RandomStream(2).normal((3,), dtype="float64"), backend=backend)()
    np.testing.assert_allclose(got_z, m0 + s0 * eps, rtol=1e-15)
    np.testing.assert_allclose(rop, 1 + 2 * eps, rtol=1e-14)
    np.testing.assert_allclose(h_mu, 2 * np.eye(3), rtol=1e-15)
    np.testing.assert_allclose(h_s, np.diag(2 * eps**2), rtol=1e-14)


def test_theano_random_streams_draws_with_symbolic_parameters_have_gradients():
    from symnb.compat.theano.sandbox.rng_mrg import MRG_RandomStreams
    from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams

    for streams in (MRG_RandomStreams(1), RandomStreams(1)):
        mu, log_sigma = sn.vector("mu", dtype="float64"), sn.vector("ls", dtype="float64")
        eps = streams.normal(size=(3,), avg=0.0, std=1.0, dtype="float64")
        z = streams.normal(size=(3,), avg=mu, std=sn.exp(log_sigma), dtype="float64")
        u = streams.uniform(size=(3,), low=mu, high=mu + 1, dtype="float64")
        cost = sn.sum(z**2) + sn.sum(u)
        g_mu, g_ls = sn.grad(cost, [mu, log_sigma])
        f = sn.function([mu, log_sigma], [eps, z, g_mu, g_ls], no_default_updates=True)
        m0, ls0 = np.array([0.1, 0.2, 0.3]), np.array([0.0, -1.0, 1.0])
        e0, z0, a, b = f(m0, ls0)
        sigma = np.exp(ls0)
        np.testing.assert_allclose(a, 2 * z0 + 1, rtol=1e-12)
        np.testing.assert_allclose(b, 2 * z0 * (z0 - m0) / sigma * sigma, rtol=1e-12)
        assert not np.allclose(e0, (z0 - m0) / sigma)  # two draws, two streams


def test_draws_of_integers_and_probabilities_have_no_gradient():
    p = sn.scalar("p", dtype="float64")
    mask = sn.RandomStream(0).bernoulli((3,), p=p, dtype="float64")
    with pytest.raises(sn.NotDifferentiableError, match="p"):
        sn.grad(sn.sum(mask), p)


def test_a_draw_in_a_scan_step_is_differentiable_in_its_parameters():
    """A random walk with a learned drift: d/dmu sum_t h_t = sum_t (t + 1) over 4 steps."""
    mu, s = sn.scalar("mu", dtype="float64"), sn.scalar("s", dtype="float64")
    rng = sn.RandomStream(5)
    h, updates = sn.scan(
        lambda h: h + rng.normal((), avg=mu, std=s, dtype="float64"),
        outputs_info=[sn.constant(0.0)],
        n_steps=4,
    )
    g_mu, g_s = sn.grad(sn.sum(h), [mu, s])
    f = sn.function([mu, s], [h, g_mu, g_s], no_default_updates=True)
    walk, a, b = f(np.float64(0.0), np.float64(1.0))
    steps = np.diff(walk, prepend=0.0)  # the standard draws, mu = 0 and s = 1
    assert a == pytest.approx(10.0)
    assert b == pytest.approx(float(np.sum(steps * np.arange(4, 0, -1))))


def _draws_in(f) -> int:
    """Philox draws in a compiled graph, fused ones included (``composite[philox_normal+...]``)."""
    return sum(str(node.op).count("philox_") for node in f.graph.toposort())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draw_gradients_reuse_the_forward_draw(dtype):
    """d/dstd of ``normal(avg, std)`` is the z its value used, d/dlow and d/dhigh of
    ``uniform(low, high)`` are 1 - u and u: one draw node, the same numbers on every backend,
    and finite where std is 0 or high == low (the standard draw of that seed)."""
    mu, s, hi, w = (sn.vector(name, dtype=dtype) for name in ("mu", "s", "hi", "w"))
    m0 = np.array([0.5, -1.0, 3.0, 0.0, 2.0], dtype)
    s0 = np.array([1.0, 2.0, 0.25, 0.0, 0.0], dtype)  # std 0, and high == low, at the end
    w0 = np.arange(1, 6).astype(dtype)
    results = {}
    for backend in available_backends():
        rng = sn.RandomStream(11)
        z = rng.normal(avg=mu, std=s, dtype=dtype)
        u = rng.uniform(low=mu, high=hi, dtype=dtype)
        g_z = sn.grad(sn.sum(w * z), s)
        g_low, g_high = sn.grad(sn.sum(w * u), [mu, hi])
        f = sn.function([mu, s, hi, w], [z, u, g_z, g_low, g_high], backend=backend)
        assert _draws_in(f) == 2, backend  # one normal, one uniform: no second draw
        results[backend] = f(m0, s0, m0 + s0, w0)
    standard = sn.RandomStream(11)
    z0, u0 = sn.function(
        [], [standard.normal((5,), dtype="float64"), standard.uniform((5,), dtype=dtype)]
    )()
    tol = {"float32": 1e-6, "float64": 1e-14}[dtype]
    for backend, (z, u, g_z, g_low, g_high) in results.items():
        assert all(g.dtype == dtype and np.all(np.isfinite(g)) for g in (g_z, g_low, g_high))
        seen = (z[:3].astype(np.float64) - m0[:3]) / s0[:3]  # the z the forward value used
        np.testing.assert_allclose(g_z[:3] / w0[:3], seen, rtol=tol * 20, err_msg=backend)
        np.testing.assert_allclose(g_z, w0 * z0, rtol=tol, atol=tol, err_msg=backend)
        np.testing.assert_array_equal(z[3:], m0[3:])  # std 0: the mean, gradient z
        np.testing.assert_allclose(g_high, w0 * u0, rtol=tol, err_msg=backend)
        np.testing.assert_allclose(g_low, w0 * (1 - u0), rtol=tol, err_msg=backend)
        np.testing.assert_array_equal(u[3:], m0[3:])  # high == low: low, gradients u, 1 - u
    for got in results.values():  # every backend gives the reference's numbers
        for a, b in zip(got, results["py"]):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
