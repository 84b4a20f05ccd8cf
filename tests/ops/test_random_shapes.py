"""The shape of a draw whose parameters are arrays, by NumPy's Generator rules: without a size
the draw has the parameters' broadcast shape, one Philox block per element (no number
repeated across the elements a parameter broadcasts to); with a size, the parameters must
broadcast to it (a ShapeError when the types show they do not, or when the function runs)."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.compat.theano.tensor.shared_randomstreams import RandomStreams
from tests.helpers import available_backends

BACKENDS = ["py", *(b for b in available_backends() if b != "py")]
MU = np.linspace(-3.0, 3.0, 6)
P = np.linspace(0.05, 0.95, 16)


def _cases(mu, m, p):
    """(label, draw given an rng, the same numbers from scalar parameters and a size, shape)."""
    return [
        ("normal(avg=mu)", lambda r: r.normal(avg=mu), lambda r: r.normal((6,)) + mu, (6,)),
        (
            "normal(std=m)",
            lambda r: r.normal(std=m),
            lambda r: r.normal((4, 3)) * m,
            (4, 3),
        ),
        (
            "uniform(low=mu, high=mu + 1)",
            lambda r: r.uniform(low=mu, high=mu + 1),
            lambda r: r.uniform((6,)) + mu,
            (6,),
        ),
        (
            "uniform(low=m[:, :1], high=2)",
            lambda r: r.uniform(low=m[:, :1], high=2.0),
            lambda r: m[:, :1] + (2.0 - m[:, :1]) * r.uniform((4, 1)),
            (4, 1),
        ),
        ("bernoulli(p=p)", lambda r: r.bernoulli(p=p), lambda r: r.bernoulli((16,), p=p), (16,)),
        (
            "binomial(n=1, p=p)",
            lambda r: r.binomial(n=1, p=p),
            lambda r: sn.cast(r.uniform((16,)) < p, "int64"),
            (16,),
        ),
        ("normal((4, 3), avg=mu[:3])", lambda r: r.normal((4, 3), avg=mu[:3]), None, (4, 3)),
        ("normal(avg=mu, std=m[:, :1])", lambda r: r.normal(avg=mu, std=m[:, :1]), None, (4, 6)),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_parameters_draw_one_number_per_element(backend):
    mu, m, p = sn.vector("mu"), sn.matrix("m"), sn.vector("p")
    values = [MU, np.arange(1.0, 13.0).reshape(4, 3), P]
    for label, draw, same, shape in _cases(mu, m, p):
        rng = sn.RandomStream(11)
        f = sn.function([mu, m, p], draw(rng), backend=backend)
        first, second = f(*values), f(*values)
        assert first.shape == shape, label
        if first.dtype.kind == "f":
            assert len(np.unique(first)) == first.size, label  # no number repeated
        else:
            assert 0 < first.sum() < first.size, label
        assert not np.array_equal(first, second), label  # the counter moved past them all
        again = sn.function([mu, m, p], draw(sn.RandomStream(11)), backend=backend)
        assert np.array_equal(again(*values), first), label  # the seed alone decides
        if same is not None:  # element i still uses block counter + i
            g = sn.function([mu, m, p], same(sn.RandomStream(11)), backend=backend)
            np.testing.assert_allclose(first, g(*values), rtol=1e-12, err_msg=label)


def test_the_counter_advances_by_the_broadcast_element_count():
    mu, m = sn.vector("mu"), sn.matrix("m")
    rng = sn.RandomStream(0)
    rng.normal(avg=mu, std=m)
    ((counter, update),) = rng.updates()
    step = sn.function([mu, m], update)(np.zeros(3), np.ones((5, 1)))
    assert int(step) == 15


def test_static_parameter_shapes_give_a_static_draw_shape():
    rng = sn.RandomStream(0)
    x = sn.matrix("x", shape=("batch", 3))
    assert rng.normal(avg=sn.constant(np.zeros(5))).type.shape == (5,)
    assert rng.uniform(low=x, high=x + 1).type.shape == ("batch", 3)
    assert rng.normal((2, x.shape[0], 3), avg=x).type.shape == (2, "batch", 3)
    assert rng.normal().type.shape == () and rng.bernoulli().type.shape == ()
    assert rng.integers(5).type.shape == () and rng.choice(4).type.shape == ()


def test_statistics_of_a_draw_per_element():
    n = 20_000
    mu, s = np.linspace(-5, 5, n), np.linspace(0.5, 2.0, n)
    avg, std = sn.vector("avg"), sn.vector("std")
    z = sn.function([avg, std], sn.RandomStream(5).normal(avg=avg, std=std))(mu, s)
    t = (z - mu) / s
    assert abs(t.mean()) < 5 / np.sqrt(n) and abs(t.var() - 1) < 5 * np.sqrt(2 / n)
    p = sn.vector("p")
    probs = np.repeat([0.1, 0.9], n // 2)
    b = sn.function([p], sn.RandomStream(5).bernoulli(p=p))(probs)
    assert abs(b[: n // 2].mean() - 0.1) < 0.02 and abs(b[n // 2 :].mean() - 0.9) < 0.02


def test_parameters_that_do_not_broadcast_to_the_size_are_refused_at_build_time():
    rng = sn.RandomStream(0)
    m = sn.matrix("M", shape=(4, 3))
    with pytest.raises(sn.ShapeError, match=r"normal: avg, 'M' \(float64\(4, 3\)\), does not") as e:
        rng.normal((3,), avg=m)  # <- size too small
    assert "<- size too small" in str(e.value) and "leave size out (None)" in str(e.value)
    with pytest.raises(sn.ShapeError, match=r"uniform: high, 'v' .*to the size \(4, 2\)"):
        rng.uniform((4, 2), high=sn.vector("v", shape=(3,)))
    with pytest.raises(sn.ShapeError, match=r"binomial: p, 'p' .* to the size \(\)"):
        rng.bernoulli((), p=sn.vector("p"))
    with pytest.raises(sn.ShapeError, match="normal: the parameters do not broadcast together"):
        rng.normal(avg=sn.vector("a", shape=(3,)), std=sn.vector("b", shape=(4,)))
    assert rng.states == []  # a refused draw takes no state


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_that_do_not_broadcast_to_the_size_are_refused_when_it_runs(backend):
    rng = sn.RandomStream(0)
    mu = sn.vector("mu")
    f = sn.function([mu], rng.normal((2, 3), avg=mu), backend=backend)
    assert f(np.zeros(3)).shape == f(np.zeros(1)).shape == (2, 3)
    with pytest.raises(sn.SymnbError, match=r"normal: avg of shape \(4,\) does not broadcast"):
        f(np.zeros(4))
    h = sn.vector("h")
    g = sn.function([mu, h], rng.uniform(low=mu, high=h), backend=backend)
    with pytest.raises(sn.SymnbError, match=r"uniform: low \(4,\), high \(3,\) do not broadcast"):
        g(np.zeros(4), np.ones(3))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "draw, message",
    [
        (
            lambda r, v: r.normal(avg=v, std=np.ones(3)),
            r"normal: avg \(5,\), std \(3,\) do not broadcast together",
        ),
        (
            lambda r, v: r.uniform(low=v, high=np.arange(1.0, 4.0)),
            r"uniform: low \(5,\), high \(3,\) do not broadcast together",
        ),
        (
            lambda r, v: r.normal(avg=np.zeros((2, 3)), std=v + 1),
            r"normal: avg \(2, 3\), std \(5,\) do not broadcast together",
        ),
        (
            lambda r, v: r.integers(sn.cast(v, "int64"), np.arange(1, 4)),
            r"integers: low of shape \(5,\) does not broadcast",
        ),
        (
            lambda r, v: r.binomial(None, np.full(3, 2), v / 2),
            r"binomial: p of shape \(5,\) does not broadcast",
        ),
    ],
)
def test_a_parameter_of_unknown_length_beside_a_fixed_one_is_checked_without_a_size(
    draw, message, backend
):
    """With size=None, a parameter whose length is known only at run time next to one of a
    fixed shape (the draw typed by the fixed one) was never checked: the fused kernel failed
    with NumPy's "operands could not be broadcast". It is the ShapeError two parameters of
    unknown length give, naming the draw and both parameters (the draws run by their
    reference check theirs against the draw's shape); lengths that broadcast draw the numbers
    of the same draw with fixed parameters."""
    v = sn.vector("v", dtype="float64")
    f = sn.function([v], draw(sn.RandomStream(0), v), backend=backend)
    with pytest.raises(sn.SymnbError, match=message):
        f(np.zeros(5))
    same = sn.function([v], draw(sn.RandomStream(0), sn.constant(np.zeros(3))), backend=backend)
    want = same(np.zeros(3))
    np.testing.assert_array_equal(f(np.zeros(3)), want)
    assert f(np.zeros(1)).shape == want.shape


def test_integers_and_binomial_take_array_parameters_as_numpy_does():
    """NumPy's Generator broadcasts integers' low/high and binomial's n and p, with a size
    or without (their broadcast shape): every backend gives the same numbers, each column
    within its own bounds, the means within 5 standard errors."""
    lo, hi = sn.vector("lo", dtype="int64"), sn.vector("hi", dtype="int64")
    n, p = sn.vector("n", dtype="int64"), sn.matrix("p", dtype="float64")
    low0, high0 = np.array([0, 10, -5]), np.array([5, 20, -4])
    n0, p0 = np.array([3, 0, 10]), np.array([[0.5], [0.2]])  # broadcast to (2, 3)
    results = []
    for backend in available_backends():
        rng = sn.RandomStream(7)
        draws = [
            rng.integers(lo, hi, size=(20000, 3)),
            rng.integers(lo, hi),  # size None: the bounds' shape
            rng.binomial((10000, 2, 3), n=n, p=p),
            rng.binomial(n=n, p=0.5),
        ]
        results.append(sn.function([lo, hi, n, p], draws, backend=backend)(low0, high0, n0, p0))
    for got in results[1:]:
        for a, b in zip(got, results[0]):
            np.testing.assert_array_equal(a, b)
    k, k1, b, b1 = results[0]
    assert k.shape == (20000, 3) and k1.shape == (3,) and b.shape == (10000, 2, 3)
    assert b1.shape == (3,) and b1[1] == 0 and np.all(k1 >= low0) and np.all(k1 < high0)
    assert np.all(k >= low0) and np.all(k < high0) and np.all(k[:, 2] == -5)
    for j in range(3):  # uniform on [low, high): every value drawn
        assert set(np.unique(k[:, j])) == set(range(low0[j], high0[j]))
    mean, var = (low0 + high0 - 1) / 2, ((high0 - low0) ** 2 - 1) / 12
    assert np.all(np.abs(k.mean(axis=0) - mean) <= 5 * np.sqrt(var / 20000) + 1e-12)
    mean, var = n0 * p0, n0 * p0 * (1 - p0)
    assert np.all(np.abs(b.mean(axis=0) - mean) <= 5 * np.sqrt(var / 10000) + 1e-12)
    assert b[:, :, 1].max() == 0 and b.max() <= 10


def test_integer_array_parameters_are_checked_like_numpy():
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ArgumentError, match="integers: high .* must exceed low"):
        rng.integers([0, 5], [5, 5])  # NumPy: low >= high
    with pytest.raises(sn.ArgumentError, match="binomial: n must be a non-negative"):
        rng.binomial(n=[1, -1])
    with pytest.raises(sn.ShapeError, match="integers: low, .* does not broadcast to the size"):
        rng.integers([0, 1, 2], 9, size=(4, 2))
    with pytest.raises(
        sn.DTypeError, match=r"integers: high - 1 \(299\) is out of bounds for int8"
    ):
        rng.integers(0, [300, 5], dtype="int8")
    hi = sn.vector("hi", dtype="int64")
    f = sn.function([hi], rng.integers([0, 5], hi))
    with pytest.raises(sn.SymnbError, match="at element 1 of the draw low is 5 and high 5"):
        f(np.array([5, 5]))
    n = sn.vector("n", dtype="int64")
    rng = sn.RandomStream(0)
    g = sn.function([n], rng.binomial(n=n, p=0.5))
    assert g(np.array([2, 0, 3])).shape == (3,) and int(rng.states[0][1].get_value()) == 5
    assert g(np.zeros(0, np.int64)).shape == (0,)  # as NumPy: no trials, no blocks
    assert int(rng.states[0][1].get_value()) == 5


def test_theano_streams_take_the_parameters_shape_without_a_size():
    srng = RandomStreams(4)
    mu = sn.vector("mu")
    z = sn.function([mu], srng.normal(avg=mu))(MU)
    assert z.shape == (6,) and len(np.unique(z)) == 6
    assert srng.normal(sn.matrix("x").shape[0], ndim=1).type.ndim == 1


@pytest.mark.parametrize(
    "draw, name",
    [
        (lambda r, v: r.poisson((4,), lam=v), "poisson: lam"),
        (lambda r, v: r.binomial((4,), 3, v / 2), "binomial: p"),
        (lambda r, v: r.binomial((4,), sn.cast(v, "int64"), 0.5), "binomial: n"),
        (lambda r, v: r.integers(sn.cast(v, "int64"), 10, size=(4,)), "integers: low"),
    ],
)
def test_a_parameter_of_a_draw_run_by_its_reference_is_checked_against_the_size(
    draw, name, backend
):
    """Known only when the function runs, a parameter that does not broadcast to the size is
    the error the elementwise draws give; it was NumPy's "operands could not be broadcast
    together with remapped shapes", naming neither."""
    v = sn.vector("v")
    f = sn.function([v], draw(sn.RandomStream(0), v), backend=backend)
    with pytest.raises(sn.SymnbError, match=f"{name} of shape \\(3,\\) does not broadcast to the "):
        f(np.ones(3))
    assert f(np.ones(4)).shape == (4,) and f(np.ones(1)).shape == (4,)
