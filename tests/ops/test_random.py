"""sn.RandomStream: Philox against its published answers, the same numbers on every backend,
states that advance, moments within stated bounds, impure nodes, bad input, a dropout MLP."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symnb as sn
from symnb.backends.execute import RuntimeFailure
from symnb.ops.philox import philox4x32
from tests.helpers import available_backends

BACKENDS = ["py", *(b for b in available_backends() if b != "py")]  # "py": the reference


def _words(*values):
    return tuple(np.array([v], np.uint64) for v in values)


@pytest.mark.parametrize(
    "counter, key, want",
    [
        ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
            (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ],
)
def test_philox_matches_random123_known_answers(counter, key, want):
    got = philox4x32(_words(*counter), key)
    assert tuple(int(w[0]) for w in got) == want


def _draws(rng, n):
    return [
        rng.uniform((n, 3), low=-1.0, high=2.0),
        rng.normal((n,), avg=1.0, std=2.0, dtype="float32"),
        rng.bernoulli((n,), p=0.25),
        rng.binomial((2, n), n=5, p=0.5),
        rng.integers(3, 9, size=(n,)),
        rng.choice(np.array([10, 20, 30, 40]), size=(3,), replace=False),
        rng.choice(4, size=(n,), p=[0.1, 0.2, 0.3, 0.4]),
        rng.permutation(7),
        rng.multinomial((2,), n=6, pvals=[0.5, 0.25, 0.25]),
    ]


def test_same_seed_same_numbers_on_every_backend_and_calls_differ():
    n = sn.scalar("n", dtype="int64")
    results = {}
    for backend in BACKENDS:
        rng = sn.RandomStream(7)
        f = sn.function([n], _draws(rng, n), backend=backend)
        results[backend] = [f(np.int64(5)), f(np.int64(5))]
        assert len(rng.updates()) == 9
    first, second = results["py"]
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)
    for backend in BACKENDS:
        for got, want in zip(results[backend][0] + results[backend][1], first + second):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    again = sn.function([n], _draws(sn.RandomStream(7), n))(np.int64(5))
    assert all(np.array_equal(a, b) for a, b in zip(again, first))
    other = sn.function([n], _draws(sn.RandomStream(8), n))(np.int64(5))
    assert not np.array_equal(other[0], first[0])


@pytest.mark.skipif("c" not in BACKENDS, reason="no C compiler")
def test_float64_normals_on_c_agree_with_the_reference_within_8_ulp():
    """The one draw that is not bit-identical: the C kernel's log1p and cos are libm's (or
    glibc's vector libmvec, up to 4 ulp), the reference's NumPy's (docs/random.md)."""
    z = {
        b: sn.function([], sn.RandomStream(3).normal((2 * 10**5,), dtype="float64"), backend=b)()
        for b in ("py", "c")
    }
    big = np.maximum(np.abs(z["py"]), np.abs(z["c"]))
    assert np.max(np.abs(z["py"] - z["c"]) / np.spacing(big)) <= 8


def test_values_are_valid_samples():
    rng = sn.RandomStream(3)
    draws = sn.function([], _draws(rng, 50))()
    u, z, b, k, c, w, p, m = (
        draws[0],
        draws[1],
        draws[2],
        draws[4],
        draws[5],
        draws[6],
        draws[7],
        draws[8],
    )
    assert u.shape == (50, 3) and u.min() >= -1.0 and u.max() < 2.0
    assert z.dtype == np.float32 and z.shape == (50,)
    assert set(np.unique(b)) <= {0, 1} and b.dtype == np.int8
    assert draws[3].shape == (2, 50) and draws[3].max() <= 5
    assert k.min() >= 3 and k.max() < 9
    assert len(set(c.tolist())) == 3 and set(c.tolist()) <= {10, 20, 30, 40}
    assert set(w.tolist()) <= {0, 1, 2, 3}
    assert sorted(p.tolist()) == list(range(7))
    assert m.shape == (2, 3) and (m.sum(axis=1) == 6).all()


def test_moments_and_chi_square():
    """10^5 draws: means and variances within 5 standard errors; the chi-square of uniform
    (20 bins) and integers (10 values) below the 99.9% point of its distribution."""
    rng = sn.RandomStream(2026)
    size = 100_000
    f = sn.function(
        [],
        [
            rng.uniform((size,), dtype="float64"),
            rng.normal((size,), dtype="float64"),
            rng.integers(0, 10, size=(size,)),
            rng.binomial((size,), n=4, p=0.3),
        ],
    )
    u, z, k, b = f()
    se = 5 / np.sqrt(size)
    assert abs(u.mean() - 0.5) < se * np.sqrt(1 / 12) and abs(u.var() - 1 / 12) < se * 0.075
    assert abs(z.mean()) < se and abs(z.var() - 1) < se * np.sqrt(2)
    assert abs(b.mean() - 1.2) < se * np.sqrt(0.84) and abs(b.var() - 0.84) < 0.02
    chi_u = _chi_square(np.histogram(u, bins=20, range=(0, 1))[0])
    chi_k = _chi_square(np.bincount(k, minlength=10))
    assert chi_u < 43.8 and chi_k < 27.9  # 99.9% points of chi-square(19) and (9)


def _chi_square(counts):
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def test_random_nodes_are_never_merged_or_folded():
    rng = sn.RandomStream(0)
    a, b = rng.normal((3,)), rng.normal((3,))
    f = sn.function([], [a, b, a + 1], optimize="fast")
    x, y, x1 = f()
    assert not np.array_equal(x, y) and np.allclose(x1, x + 1)
    names = [n.op.op_name() for n in f.graph.toposort()]
    assert names.count("philox_normal") == 2


def test_state_is_an_update_and_seed_restarts():
    rng = sn.RandomStream(5)
    draw = rng.uniform((4,))
    ((counter, next_counter),) = rng.updates()
    assert counter.type.dtype == np.uint64 and next_counter.owner is not None
    f = sn.function([], draw)
    first = f()
    assert int(counter.get_value()) == 4  # four blocks used
    assert not np.array_equal(f(), first)
    rng.seed(5)
    assert np.array_equal(f(), first)


def test_symbolic_size_gives_named_dims():
    x = sn.matrix("x", shape=("batch", 3))
    mask = sn.RandomStream(1).bernoulli(x.shape, p=0.5, dtype="float64")
    assert mask.type.shape == ("batch", 3)


def test_an_integer_scalar_size_is_a_one_dim_shape():
    """docs/random.md: a size may be an integer scalar such as ``x.shape[0]``."""
    x = sn.matrix("x", shape=("batch", 3))
    rng = sn.RandomStream(2)
    draws = [rng.normal(x.shape[0]), rng.uniform(size=x.shape[1] * 2), rng.bernoulli(x.shape[0])]
    assert [d.type.shape for d in draws] == [("batch",), (None,), ("batch",)]
    got = sn.function([x], draws)(np.zeros((4, 3)))
    assert [g.shape for g in got] == [(4,), (6,), (4,)]
    assert len(set(got[0])) == 4 and len(set(got[1])) == 6


def test_bad_input_is_reported_at_the_users_line():
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ShapeError, match="negative dimensions") as info:
        rng.uniform((2, -1))  # <- negative size
    assert "<- negative size" in str(info.value)
    with pytest.raises(ValueError, match=r"binomial: p must lie in \[0, 1\]"):
        rng.bernoulli((3,), p=1.5)
    with pytest.raises(ValueError, match="pvals must sum to 1"):
        rng.multinomial((2,), n=3, pvals=[0.5, 0.6])
    with pytest.raises(ValueError, match="high .* must exceed low"):
        rng.integers(5, 5, size=(2,))
    with pytest.raises(sn.DTypeError, match="normal: dtype must be a float dtype, not int32"):
        rng.normal((2,), dtype="int32")
    n = sn.scalar("n", dtype="int64")
    f = sn.function([n], rng.uniform((n,)))
    with pytest.raises(sn.SymnbError, match=r"negative dimensions.*\n  given int64\[1\]\n  built"):
        f(np.int64(-2))
    p = sn.scalar("p", dtype="float64")
    g = sn.function([p], rng.bernoulli((2,), p=p))
    with pytest.raises(sn.SymnbError, match=r"p must lie in \[0, 1\]"):
        g(np.float64(-0.5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_range_is_refused_only_where_something_is_drawn(backend):
    """NumPy's ``integers(5, 5, size=0)`` is an empty array: an empty range is an error only
    for a draw, so a size of 0 (known now, or only when the function runs) draws nothing."""
    rng = sn.RandomStream(0)
    for size in (0, (3, 0), (0, 2)):
        got = sn.function([], rng.integers(5, 5, size=size), backend=backend)()
        expected = np.random.default_rng(0).integers(5, 5, size=size)
        assert got.shape == expected.shape and got.dtype == expected.dtype
    n = sn.scalar("n", dtype="int64")
    f = sn.function([n], rng.integers(7, 2, size=(n,)), backend=backend)
    assert f(0).shape == (0,)
    with pytest.raises(RuntimeFailure, match=r"integers: high \(2\) must be greater than low"):
        f(3)
    for size in (None, 1, (2, 3)):
        with pytest.raises(sn.ArgumentError, match=r"integers: high \(5\) must exceed low"):
            rng.integers(5, 5, size=size)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])
def test_dropout_mlp_trains(backend):
    """A 2-16-2 tanh MLP with dropout (keep 0.8) on noisy XOR (a task no linear model
    solves: it starts near 50%) reaches >= 95% accuracy, measured without dropout, in 200
    full-batch steps (the same draws on both backends)."""
    data = np.random.default_rng(0)
    centers = data.choice([-1.0, 1.0], size=(200, 2))
    xs = centers + data.normal(0, 0.3, (200, 2))
    ys = (centers[:, 0] * centers[:, 1] > 0).astype(np.int64)
    x = sn.matrix("x", shape=("batch", 2), dtype="float64")
    y = sn.vector("y", shape=("batch",), dtype="int64")
    w1 = sn.shared(data.normal(0, 1.0, (2, 16)), name="w1")
    b1 = sn.shared(np.zeros(16), name="b1")
    w2 = sn.shared(data.normal(0, 0.5, (16, 2)), name="w2")
    rng = sn.RandomStream(11)
    hidden = sn.tanh(x @ w1 + b1)
    dropped = hidden * rng.bernoulli(hidden.shape, p=0.8, dtype="float64") / 0.8
    loss = sn.mean(sn.crossentropy(sn.softmax(dropped @ w2, axis=-1), y))
    params = [w1, b1, w2]
    grads = sn.grad(loss, params)
    step = {p: p - 0.5 * g for p, g in zip(params, grads)}
    train = sn.function([x, y], loss, updates=step, backend=backend)
    predict = sn.function([x], sn.argmax(hidden @ w2, axis=-1), backend=backend)
    assert (predict(xs) == ys).mean() < 0.7
    losses = [train(xs, ys) for _ in range(200)]
    assert losses[-1] < 0.5 * losses[0]
    assert (predict(xs) == ys).mean() >= 0.95


def _walk(backend):
    """Four steps of a random walk drawn inside a scan, called twice."""
    rng = sn.RandomStream(3)
    out, updates = sn.scan(
        lambda acc: acc + rng.uniform(size=(3,)), outputs_info=[sn.zeros((3,))], n_steps=4
    )
    f = sn.function([], out, updates=updates, backend=backend)
    return f(), f()


def test_a_draw_inside_scan_advances_every_step_and_every_call():
    results = {backend: _walk(backend) for backend in BACKENDS}
    first, second = results["py"]
    steps = np.diff(np.vstack([np.zeros(3), first]), axis=0)
    assert len({tuple(row) for row in steps.round(12)}) == 4  # each step drew new numbers
    assert np.all((steps > 0) & (steps < 1))
    assert not np.allclose(first, second)  # the counter moved on between calls
    for backend, (a, b) in results.items():
        np.testing.assert_array_equal(a, first, err_msg=backend)
        np.testing.assert_array_equal(b, second, err_msg=backend)


def _loop(kind, rng, x):
    """A draw inside a scan over the rows of ``x``: plain, read backwards, or in an inner
    scan (the inner loop's updates not returned by the outer step)."""

    def draw(row):
        return row + rng.uniform((2,), dtype="float64")

    if kind == "nested":
        return sn.scan(lambda row: sn.scan(draw, sequences=sn.stack([row, row]))[0], sequences=x)
    return sn.scan(draw, sequences=x, go_backwards=kind == "backwards")


@pytest.mark.parametrize("kind", ["forwards", "backwards", "nested"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_function_without_scans_updates_still_moves_the_stream_past_the_whole_loop(backend, kind):
    x = sn.tensor("x", shape=(3, 2), dtype="float64")
    out, updates = _loop(kind, sn.RandomStream(1), x)
    without = sn.function([x], out, backend=backend)  # scan's updates not passed
    out, updates = _loop(kind, sn.RandomStream(1), x)
    passed = sn.function([x], out, updates=updates, backend=backend)
    calls = [without(np.zeros((3, 2))) for _ in range(2)]
    for got in calls:  # the same numbers as a function given the updates
        np.testing.assert_array_equal(got, passed(np.zeros((3, 2))))
    first, second = (c.ravel() for c in calls)
    assert len(set(first)) == first.size  # no step repeats another's draws
    assert not set(first) & set(second)  # nor does the next call


def test_no_default_updates_leaves_the_streams_where_they_are():
    rng = sn.RandomStream(3)
    u, n = rng.uniform((3,)), rng.normal((3,))
    frozen = sn.function([], [u, n], no_default_updates=True)
    np.testing.assert_array_equal(frozen()[0], frozen()[0])
    only_n = sn.function([], [u, n], no_default_updates=[rng.states[0][1]])  # u's counter
    first, second = only_n(), only_n()
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.array_equal(first[1], second[1])
    with pytest.raises(sn.GraphError, match="list of shared variables"):
        sn.function([], u, no_default_updates=["u"])


@pytest.mark.parametrize("backend", ["py", "c"])
def test_default_updates_are_collected_after_the_givens(backend):
    """A draw only a given's replacement reads advances at each call; one only a key reads
    (the givens remove it) does not, so a function that draws nothing leaves the stream."""
    rng = sn.RandomStream(1)
    x = sn.tensor("x", (3,), dtype="float64")
    f = sn.function([], x * 1, givens={x: rng.uniform(size=(3,))}, backend=backend)
    first, second = f(), f()
    assert len(f.updates) == 1 and not np.array_equal(first, second)
    noisy = x + rng.uniform(size=(3,))
    g = sn.function([x], noisy, backend=backend)
    before = g(np.zeros(3))
    rng.seed(1)
    evaluate = sn.function([x], noisy * 2, givens={noisy: x}, backend=backend)
    np.testing.assert_array_equal(evaluate(np.ones(3)), [2.0, 2.0, 2.0])
    assert evaluate.updates == []
    np.testing.assert_array_equal(g(np.zeros(3)), before)  # the stream did not move


@pytest.mark.parametrize(
    "build, numpy_call, message",
    [
        (
            lambda r: r.integers(0, 1000, (64,), dtype="int8"),
            lambda g: g.integers(0, 1000, 64, dtype=np.int8),
            r"integers: high - 1 \(999\) is out of bounds for int8, which holds -128 to 127",
        ),
        (
            lambda r: r.integers(-5, 5, (64,), dtype="uint8"),
            lambda g: g.integers(-5, 5, 64, dtype=np.uint8),
            r"integers: low \(-5\) is out of bounds for uint8, which holds 0 to 255",
        ),
        (
            lambda r: r.integers(np.int16(-200), 5, dtype="int8"),
            lambda g: g.integers(np.int16(-200), 5, dtype=np.int8),
            r"integers: low \(-200\) is out of bounds for int8",
        ),
        (
            lambda r: r.integers(0, 3, (4,), dtype="bool"),
            lambda g: g.integers(0, 3, 4, dtype=bool),
            r"integers: high - 1 \(2\) is out of bounds for bool, which holds 0 to 1",
        ),
        (
            lambda r: r.binomial((4,), n=300, p=1.0, dtype="int8"),
            None,  # NumPy's binomial has no dtype; its int64 holds 300
            r"binomial: n \(300\) is out of bounds for int8",
        ),
        (
            lambda r: r.multinomial((2,), n=300, pvals=[0.5, 0.5], dtype="int8"),
            None,
            r"multinomial: n \(300\) is out of bounds for int8",
        ),
    ],
)
def test_integer_draws_refuse_bounds_their_dtype_cannot_hold(build, numpy_call, message):
    """The values would wrap around (0..999 drawn into int8 gave -122, 253...): NumPy refuses
    such bounds, and so does symnb, where the draw is built."""
    rng = sn.RandomStream(1)
    if numpy_call is not None:
        with pytest.raises(ValueError, match="out of bounds"):
            numpy_call(np.random.default_rng(0))
    with pytest.raises(sn.DTypeError, match=message) as caught:
        build(rng)
    assert f"test_random.py, line {build.__code__.co_firstlineno}" in str(caught.value)
    assert rng.states == []  # no state was made for the refused draw


def test_integer_draws_within_the_dtype_and_symbolic_bounds_checked_when_run():
    rng = sn.RandomStream(1)
    full = sn.function([], rng.integers(0, 256, (200,), dtype="uint8"))()
    assert full.dtype == np.uint8 and full.max() > 200  # the whole range, none wrapped
    coins = sn.function([], rng.integers(0, 2, (50,), dtype="bool"))()
    assert coins.dtype == np.bool_ and 0 < coins.sum() < 50
    with pytest.raises(sn.DTypeError, match="integers: dtype must be an integer"):
        rng.integers(0, 5, dtype="float32")  # NumPy: "Unsupported dtype"
    low = sn.scalar("low", dtype="int64")
    f = sn.function([low], rng.integers(low, 100, (3,), dtype="int8"))
    assert np.all((f(-100) >= -100) & (f(-100) < 100))
    with pytest.raises(sn.SymnbError, match=r"integers: low \(-200\) is out of bounds for int8"):
        f(-200)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])
def test_integers_with_endpoint_draw_both_ends_as_numpy(backend):
    """NumPy's ``integers(low, high, endpoint=True)`` is [low, high], for any high the dtype
    holds (an int8 high of 127; a whole 64-bit range); the errors name high as given."""
    h, lo = sn.scalar("h", dtype="int8"), sn.scalar("lo", dtype="int64")
    rng = sn.RandomStream(2)
    draws = [
        rng.integers(0, 127, (3000,), dtype="int8", endpoint=True),
        rng.integers(lo, h, (3000,), endpoint=True),
        rng.integers(0, [1, 2, 3], endpoint=True),
        rng.integers(-(2**63), 2**63 - 1, (2000,), endpoint=True),
        rng.integers(0, 2**64 - 1, (2000,), dtype="uint64", endpoint=True),
        rng.integers(np.array([-(2**63), 5]), np.array([2**63 - 1, 5]), endpoint=True),
    ]
    small, mixed, listed, whole, whole_u, per = sn.function([lo, h], draws, backend=backend)(
        -200, np.int8(127)
    )
    assert small.dtype == np.int8 and (small.min(), small.max()) == (0, 127)
    assert (mixed.min(), mixed.max()) == (-200, 127)
    assert listed.shape == (3,) and np.all((listed >= 0) & (listed <= [1, 2, 3]))
    assert 0.45 < np.mean(whole < 0) < 0.55  # all 2**64 values: half of them negative
    assert 0.45 < np.mean(whole_u >= 2**63) < 0.55
    assert per[1] == 5
    # [low, high] is [low, high + 1) of the same stream
    want = sn.function([], sn.RandomStream(4).integers(-3, 10, (50,)), backend=backend)()
    got = sn.RandomStream(4).integers(-3, 9, (50,), endpoint=True)
    np.testing.assert_array_equal(sn.function([], got, backend=backend)(), want)
    with pytest.raises(sn.ArgumentError, match=r"integers: high \(4\) must be at least low \(5\)"):
        rng.integers(5, 4, endpoint=True)
    assert set(sn.function([], rng.integers(5, 5, (4,), endpoint=True))()) == {5}
    with pytest.raises(sn.DTypeError, match=r"integers: high \(128\) is out of bounds for int8"):
        rng.integers(0, 128, dtype="int8", endpoint=True)
    f = sn.function([lo, h], rng.integers(lo, h, (2,), endpoint=True), backend=backend)
    with pytest.raises(sn.SymnbError, match=r"integers: high \(4\) must be at least low \(5\)"):
        f(5, np.int8(4))


def test_draw_parameters_broadcast_to_the_size_as_in_numpy():
    """Arrays are parameters as variables are; size None is the shape they broadcast to, and
    a parameter must broadcast to the size (NumPy's Generator rule): before, an array avg
    was an internal TypeError, and a vector avg with the default size gave one normal for
    every element."""
    generator = np.random.default_rng(0)
    rng = sn.RandomStream(1)
    avg = np.array([0.0, 10.0, 20.0])
    cases = [  # (the draw, NumPy's, the values both must have up to `tolerance`)
        (rng.normal(avg=avg, std=0.001), generator.normal(avg, 0.001), avg, 0.01),
        (rng.normal((2, 3), avg=avg, std=1e-3), generator.normal(avg, 1e-3, (2, 3)), avg, 0.01),
        (
            rng.uniform(low=[0.0, 5.0], high=[1.0, 6.0]),
            generator.uniform([0.0, 5.0], [1.0, 6.0]),
            [0.5, 5.5],
            0.5,
        ),
        (rng.bernoulli(p=np.array([0.0, 1.0])), generator.binomial(1, [0.0, 1.0]), [0, 1], 0),
    ]
    for draw, want, values, tolerance in cases:
        got = sn.function([], draw, backend="py")()
        assert got.shape == want.shape and draw.type.shape == want.shape
        np.testing.assert_allclose(got, np.broadcast_to(values, got.shape), atol=tolerance)
        np.testing.assert_allclose(want, np.broadcast_to(values, got.shape), atol=tolerance)
    a = sn.vector("a")  # a symbolic vector: each element its own draw
    values = sn.function([a], rng.normal(avg=a))(np.zeros(1000))
    assert values.shape == (1000,) and len(np.unique(values)) == 1000
    for wrong in [lambda: rng.normal((3,), avg=np.zeros((2, 3))), lambda: rng.normal((), avg=avg)]:
        with pytest.raises(ValueError, match="not compatible"):  # NumPy
            generator.normal(np.zeros((2, 3)), size=(3,))
        with pytest.raises(sn.ShapeError, match="does not broadcast to the size"):
            wrong()
    with pytest.raises(sn.ShapeError, match="do not broadcast together"):
        rng.uniform(low=np.zeros(3), high=np.ones(4))
    with pytest.raises(sn.ArgumentError, match="normal: avg is a number, an array"):
        rng.normal(avg="a")
    scalar = rng.uniform(None)  # the shape of its (scalar) parameters, as NumPy's
    assert scalar.type.shape == ()


def test_a_ragged_list_as_a_float_parameter_is_an_argument_error():
    """A ragged list as avg, std, low, high or lam was NumPy's raw "setting an array element
    with a sequence" ValueError from inside symnb; it is the ArgumentError a parameter that is
    no number gives (as for n and p), naming the draw, the parameter and the user's line."""
    rng = sn.RandomStream(0)
    cases = [
        (
            lambda: rng.normal(avg=[[1.0, 2.0], [3.0]]),
            "normal: avg",
            r"\[\[1\.0, 2\.0\], \[3\.0\]\]",
        ),
        (lambda: rng.normal((2,), std=[1.0, [2.0]]), "normal: std", r"\[1\.0, \[2\.0\]\]"),
        (lambda: rng.uniform((2,), low=[0.0, [1.0]]), "uniform: low", r"\[0\.0, \[1\.0\]\]"),
        (lambda: rng.uniform(high=[[2.0], 3.0]), "uniform: high", r"\[\[2\.0\], 3\.0\]"),
        (lambda: rng.poisson(lam=[1.0, [2.0, 3.0]]), "poisson: lam", r"\[1\.0, \[2\.0, 3\.0\]\]"),
    ]
    for build, named, shown in cases:
        with pytest.raises(sn.ArgumentError) as info:
            build()  # <- the draw
        message = str(info.value)
        assert message.startswith(f"{named} is a number, an array of numbers or a variable, not ")
        assert re.search(shown, message.splitlines()[0]) and "test_random.py, line" in message
    assert rng.states == []


@pytest.mark.parametrize("draw", ["bernoulli", "binomial"])
def test_no_gradient_flows_through_a_probability_per_element(draw):
    """docs/random.md: a gradient through p raises, a per-element p as a scalar one (it was
    0: ``less(u, p)``'s gradient), in grad, Lop, Rop and jacobian alike; the draw matches
    NumPy's rule: 1 where a uniform falls below p."""
    rng, pv = sn.RandomStream(0), sn.vector("pv", dtype="float64")
    d = getattr(rng, draw)
    sample = (
        d(pv.shape, pv, dtype="float64")
        if draw == "bernoulli"
        else d(pv.shape, 1, pv, dtype="float64")
    )
    for ask in (
        lambda: sn.grad(sn.sum(sample), pv),
        lambda: sn.Lop(sample, pv, sn.ones_like(sample)),
        lambda: sn.Rop(sample, pv, sn.ones_like(pv)),
        lambda: sn.jacobian(sample, pv),
    ):
        with pytest.raises(sn.NotDifferentiableError, match="not differentiable.*pv"):
            ask()
    p = np.array([0.0, 1.0, 0.25, 0.75] * 5000)
    got = sn.function([pv], sample)(p)
    assert set(got[:2]) == {0.0, 1.0} and got[0] == 0 and got[1] == 1
    np.testing.assert_allclose([got[2::4].mean(), got[3::4].mean()], [0.25, 0.75], atol=0.02)


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])
def test_uint64_draws_take_bounds_beyond_int64_as_numpy_does(backend):
    """``integers(2**63, 2**63 + 10, dtype="uint64")`` (NumPy draws it): constant, scalar and
    array bounds were refused or wrapped to negative int64. The numbers are those of
    ``integers(0, 10)`` of the same stream, shifted by 2**63, exactly."""
    lo, hi = sn.scalar("lo", dtype="uint64"), sn.scalar("hi", dtype="uint64")
    big = np.full(3, 2**63, np.uint64)
    draws = [
        lambda r: r.integers(2**63, 2**63 + 10, size=(3,), dtype="uint64"),
        lambda r: r.integers(lo, hi, size=(3,), dtype="uint64"),
        lambda r: r.integers(big, big + np.uint64(10), dtype="uint64"),
        lambda r: r.integers([2**63] * 3, 2**64 - 1, dtype="uint64"),
    ]
    for draw in draws:
        got = sn.function([lo, hi], draw(sn.RandomStream(4)), backend=backend)(
            np.uint64(2**63), np.uint64(2**63 + 10)
        )
        assert got.dtype == np.uint64 and got.min() >= 2**63, got
        if got.max() < 2**63 + 10:
            want = sn.function([], sn.RandomStream(4).integers(0, 10, size=(3,)))()
            np.testing.assert_array_equal(got - np.uint64(2**63), want.astype(np.uint64))
    with pytest.raises(sn.DTypeError, match=r"integers: low \(9223372036854775808\).*int64"):
        sn.RandomStream(0).integers(2**63, 2**63 + 10, dtype="int64")


def test_bounds_beyond_int64_are_compared_and_kept_exactly():
    """A list mixing a bound beyond int64 with small ones is float64 to NumPy (2**63 - 2 is
    2**63 there), and a float64 array's 2**63 wrapped to -2**63 as int64: ``integers([2**63
    - 2, 0], [2**63, 1])`` was refused as an empty range, and ``integers(0, [2.0**63] * 2,
    dtype="uint64")`` built and failed at every call. Both are drawn as NumPy draws them."""
    g = np.random.default_rng(0)
    g.integers([2**63 - 2, 0], [2**63, 1], size=(3, 2))  # NumPy takes all three
    g.integers(np.array([2**63 - 1, 5]), [2**63, 6], size=(3, 2), dtype="uint64")
    g.integers(0, np.array([2.0**63] * 2), size=(3, 2), dtype="uint64")
    rng = sn.RandomStream(0)
    low, high = sn.function(
        [],
        [
            rng.integers([2**63 - 2, 0], [2**63, 1], size=(100, 2)),
            rng.integers(np.array([2**63 - 1, 5]), [2**63, 6], size=(3, 2), dtype="uint64"),
        ],
    )()
    assert set(low[:, 0].tolist()) == {2**63 - 2, 2**63 - 1} and (low[:, 1] == 0).all()
    assert high.dtype == np.uint64 and high.tolist() == [[2**63 - 1, 5]] * 3
    wide = rng.integers(0, np.array([2.0**63] * 2), size=(1000, 2), dtype="uint64")
    got = sn.function([], wide)()
    assert got.dtype == np.uint64 and 2**62 < got.max() < 2**63, got.max()
    with pytest.raises(sn.ArgumentError, match=r"high \(\[9223372036854775809, 1\]\) must") as info:
        rng.integers([2**63 + 1, 0], [2**63 + 1, 1], dtype="uint64")  # not 2**63 to float64
    assert "test_random.py" in str(info.value) and len(rng.states) == 3


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])
def test_uint64_draws_take_numpys_exclusive_high_of_2_to_the_64(backend):
    """``integers(0, 2**64, dtype="uint64")`` is NumPy's spelling of every uint64 (an
    exclusive high): it was a DTypeError "constant: Python int too large to convert to C
    long". It draws what ``integers(0, 2**64 - 1, endpoint=True)`` of the same stream does;
    a bound no dtype holds is a DTypeError naming it, the dtype and the user's line."""
    lo = sn.scalar("lo", dtype="uint64")
    draws = [
        lambda r: r.integers(0, 2**64, size=(1000,), dtype="uint64"),
        lambda r: r.integers(2**64, size=(1000,), dtype="uint64"),  # [0, high)
        lambda r: r.integers(lo, 2**64, size=(1000,), dtype="uint64"),
        lambda r: r.integers(0, [2**64] * 1000, dtype="uint64"),
        lambda r: r.integers(0, 2.0**64, size=(1000,), dtype="uint64"),  # truncated, as NumPy
    ]
    np.random.default_rng(0).integers(0, [2**64, 2.0**64], dtype="uint64")  # NumPy takes them
    inclusive = sn.RandomStream(4).integers(0, 2**64 - 1, (1000,), dtype="uint64", endpoint=True)
    want = sn.function([], inclusive, backend=backend)()
    for draw in draws:
        got = sn.function([lo], draw(sn.RandomStream(4)), backend=backend)(np.uint64(0))
        assert got.dtype == np.uint64 and got.max() > 2**63, got  # P(all below) = 2**-1000
        np.testing.assert_array_equal(got, want)
    top = sn.function([], sn.RandomStream(1).integers(2**64 - 2, 2**64, (200,), dtype="uint64"))()
    assert set(top.tolist()) == {2**64 - 2, 2**64 - 1}
    refused = [
        (lambda r: r.integers(0, 2**65, dtype="uint64"), r"high - 1 \(3689\d+\) .*for uint64"),
        (lambda r: r.integers(0, 2**64, dtype="uint64", endpoint=True), r"high \(1844\d+\)"),
        (lambda r: r.integers(0, 2**64, dtype="int64"), r"high - 1 \(1844\d+\) .*for int64"),
        (lambda r: r.integers(-(2**64), 0), r"low \(-1844\d+\) is out of bounds for int64"),
        (lambda r: r.integers(lo, [2**65], dtype="uint64"), r"high - 1 \(3689\d+\) .*uint64"),
        (lambda r: r.binomial((2,), 2**64), r"binomial: n \(1844\d+\) is out of bounds for"),
    ]
    for build, message in refused:
        with pytest.raises(sn.DTypeError, match=message) as info:
            build(sn.RandomStream(0))
        assert "test_random.py" in str(info.value) and "C long" not in str(info.value)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda r: r.poisson((2,), 1e19), r"poisson: lam must be at most 9.22337e\+18.*1e\+19"),
        (lambda r: r.choice(3, size=(2,), p=[0.2] * 3), r"choice: p must sum to 1.*0\.6"),
        (lambda r: r.permutation(-3), r"permutation: an int x \(for range\(x\)\).*-3"),
        (lambda r: r.choice(-3, size=(2,)), r"choice: an int a \(for range\(a\)\).*-3"),
    ],
)
def test_constant_parameters_numpy_refuses_are_refused_when_the_draw_is_built(build, message):
    """docs/random.md: a constant parameter is checked when the draw is built; these passed
    and failed only when the function ran (choice(-3) as "a is empty")."""
    with pytest.raises(sn.ArgumentError, match=message) as info:
        build(sn.RandomStream(0))
    assert "test_random.py" in str(info.value)  # at the user's line
    got = sn.function([], sn.RandomStream(0).choice(np.array([-1, -2]), size=(3,)))()
    assert set(got) <= {-1, -2}  # an array a of negative numbers is fine


CHOICES_NUMPY_REFUSES = [  # (NumPy's call, symnb's, the message)
    (
        lambda g: g.choice(0, (2,)),
        lambda r: r.choice(0, (2,)),
        r"^choice: 2 draws \(size \(2,\)\) from an empty a \(range\(0\)\); NumPy draws",
    ),
    (lambda g: g.choice(0), lambda r: r.choice(0), r"^choice: 1 draw \(size \(\)\) from an empty"),
    (
        lambda g: g.choice(np.zeros(0), (2,)),
        lambda r: r.choice(sn.tensor("e", shape=(0,)), (2,)),
        r"^choice: 2 draws \(size \(2,\)\) from an empty a \('e' \(float64\(0,\)\)\)",
    ),
    (
        lambda g: g.choice(3, (5,), replace=False),
        lambda r: r.choice(3, (5,), replace=False),
        r"^choice without replacement: 5 draws \(size \(5,\)\) from the 3 elements of range",
    ),
    (
        lambda g: g.choice(np.arange(2.0), (2, 2), replace=False),
        lambda r: r.choice(sn.tensor("a", shape=(2,)), (2, 2), replace=False),
        r"^choice without replacement: 4 draws .* from the 2 elements of 'a' \(float64\(2,\)\)",
    ),
    (
        lambda g: g.choice(3, (2,), p=[0.5, 0.5]),
        lambda r: r.choice(3, (2,), p=[0.5, 0.5]),
        r"^choice: p has 2 entries for the 3 elements of range\(3\); a and p must have the same",
    ),
    (
        lambda g: g.choice(3, 0, p=[0.5, 0.5]),
        lambda r: r.choice(3, 0, p=[0.5, 0.5]),
        r"^choice: p has 2 entries for the 3 elements",
    ),
]


@pytest.mark.parametrize("numpy_call, symnb_call, message", CHOICES_NUMPY_REFUSES)
def test_choice_numpy_refuses_is_refused_when_the_draw_is_built(numpy_call, symnb_call, message):
    """docs/random.md: a constant parameter is checked when the draw is built; these built
    and every call of the function failed in the draw's reference."""
    with pytest.raises(ValueError):
        numpy_call(np.random.default_rng(0))
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ArgumentError, match=message) as info:
        symnb_call(rng)
    assert info.value.location.filename == __file__  # at the user's line
    assert rng.states == []


def test_choice_numpy_takes_builds_and_what_only_a_call_knows_is_checked_then():
    rng, k = sn.RandomStream(0), sn.scalar("k", dtype="int64")
    draws = [
        rng.choice(0, 0),
        rng.choice(3, (3,), replace=False),
        rng.choice(k, (5,), replace=False),
    ]
    f = sn.function([k], draws, backend="py")
    nothing, every, five = f(5)
    assert nothing.shape == (0,) and sorted(every) == [0, 1, 2] and sorted(five) == [0, 1, 2, 3, 4]
    with pytest.raises(sn.SymnbError, match="choice without replacement: 5 draws from 4"):
        f(4)


@pytest.mark.parametrize(
    "build, shown",
    [
        (lambda r: r.binomial((2,), n="3"), "binomial: n .* not '3'"),
        (lambda r: r.binomial((2,), n=None), "binomial: n .* not None"),
        (lambda r: r.binomial((2,), n=np.nan), "binomial: n .* not nan"),
        (lambda r: r.binomial(None, n=[1, "a"]), r"binomial: n .* not \[1, 'a'\]"),
        (lambda r: r.multinomial((2,), n="3", pvals=[0.5, 0.5]), "multinomial: n .* not '3'"),
        (lambda r: r.multinomial((2,), n=None, pvals=[0.5, 0.5]), "multinomial: n .* None"),
        (lambda r: r.integers("a", 3), "integers: low .* not 'a'"),
        (lambda r: r.integers(0, "5"), "integers: high .* not '5'"),
        (lambda r: r.integers(0, "1e3"), "integers: high .* not '1e3'"),
        (lambda r: r.integers(0, np.inf), "integers: high .* not inf"),
        (lambda r: r.integers(0, [3, None]), r"integers: high .* not \[3, None\]"),
    ],
)
def test_integer_parameters_that_are_no_numbers_are_refused_naming_them(build, shown):
    """As the float ones are: NumPy's "ufunc 'less' did not contain a loop" and Python's
    int() messages came from inside symnb, and integers(0, '5') was parsed by int()."""
    rng = sn.RandomStream(0)
    with pytest.raises(sn.ArgumentError, match=shown) as info:
        build(rng)
    assert "is an integer, an array of integers or a variable" in str(info.value)
    assert info.value.location.filename == __file__  # at the user's line
    assert rng.states == []  # no draw was made
    got = sn.function([], _accepted_draws(rng))()  # what NumPy takes: floats truncated, bools
    assert got[0].shape == (2,) and set(got[1]) <= {0, 1, 2} and set(got[2]) <= {0, 1}


def _accepted_draws(rng):
    return [rng.binomial((2,), n=2.5), rng.integers(0, 3.0, size=(4,)), rng.binomial((3,), True)]


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])
def test_choice_of_an_integer_scalar_variable_draws_from_its_range(backend):
    """``choice(k)`` with ``k`` an integer scalar variable is ``range(k)`` (NumPy's and
    Theano's rule, and ``permutation``'s); it was a ShapeError "a must be 1-d"."""
    k = sn.scalar("k", dtype="int32")
    draws = [
        sn.RandomStream(5).choice(k, size=(1000,)),
        sn.RandomStream(5).choice(k, size=(3,), replace=False),
    ]
    weighted = sn.RandomStream(5).choice(k, size=(1000,), p=[0.5, 0.0, 0.5])
    assert [d.type.dtype for d in [*draws, weighted]] == [np.dtype("int64")] * 3
    f = sn.function([k], draws, backend=backend)
    anyone, distinct = f(np.int32(5))
    assert set(np.unique(anyone)) == {0, 1, 2, 3, 4}
    assert len(set(distinct)) == 3 and set(distinct) <= set(range(5))
    # the numbers of an int a of the same value, from a stream of the same seed
    want = [
        sn.RandomStream(5).choice(5, size=(1000,)),
        sn.RandomStream(5).choice(5, size=(3,), replace=False),
    ]
    got = sn.function([], want, backend=backend)()
    np.testing.assert_array_equal(anyone, got[0])
    np.testing.assert_array_equal(distinct, got[1])
    h = sn.function([k], weighted, backend=backend)
    assert set(np.unique(h(np.int32(3)))) == {0, 2}
    with pytest.raises(sn.SymnbError, match=r"p has 3 entries for 5 elements"):
        h(np.int32(5))  # p is for range(3)
    g = sn.function([k], sn.RandomStream(1).choice(k, size=(2,)), backend=backend)
    with pytest.raises(sn.SymnbError, match=r"choice: a \(for range\(a\)\) must be >= 0, got -1"):
        g(np.int32(-1))
    with pytest.raises(sn.SymnbError, match=r"choice: a is empty \(range\(0\)\)"):
        g(np.int32(0))
    x = sn.scalar("x", dtype="float64")
    with pytest.raises(sn.DTypeError, match=r"a is a 1-d array or an int n .*'x' \(float64\(\)\)"):
        sn.RandomStream(1).choice(x, size=(2,))  # <- refused


def test_multinomial_refuses_an_array_n_and_a_scalar_pvals_naming_them():
    """docs/random.md: multinomial takes a scalar n. An array or list n was a bare TypeError
    from ``int()`` inside symnb ("only 0-dimensional arrays can be converted..."), and a
    scalar pvals was "pvals must sum to 1" though 0.5 is not a distribution at all."""
    rng = sn.RandomStream(1)
    rows = np.full((2, 2), 0.5)
    for n, shown in [
        (np.array([3, 4]), r"array\(\[3, 4\]\) \(array of shape \(2,\)\)"),
        ([3, 4], r"\[3, 4\] \(list of shape \(2,\)\)"),
    ]:
        with pytest.raises(
            sn.ShapeError, match=rf"multinomial: n is one count .* not {shown}"
        ) as e:
            rng.multinomial((), n=n, pvals=rows)  # <- the line named
        assert "<- the line named" in str(e.value)
    counts = sn.vector("counts", dtype="int64")
    with pytest.raises(sn.ShapeError, match=r"n is one count .* not 'counts' \(int64\(\?,\)\)"):
        rng.multinomial((), n=counts, pvals=rows)
    for pvals, shown in [
        (0.5, r"0\.5 \(float\)"),
        (np.full((9, 2, 2), 0.25), r"an array of shape \(9, 2, 2\)"),
    ]:
        with pytest.raises(sn.ShapeError, match=rf"pvals must be 1-d .* or 2-d .*, not {shown}"):
            rng.multinomial((), n=2, pvals=pvals)
    assert rng.states == []  # nothing was made for the refused draws
    got = sn.function([], rng.multinomial((), n=3, pvals=rows))()
    assert got.sum(axis=1).tolist() == [3, 3]
