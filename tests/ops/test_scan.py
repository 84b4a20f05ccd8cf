"""``sn.scan``: loops against NumPy loops on every backend, gradients against finite
differences (``sn.check_grad``), and the errors a loop can raise at the user's line."""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.backends.execute import RuntimeFailure
from symnb.control.scan import Scan
from tests.helpers import available_backends

BACKENDS = available_backends()
RNG = np.random.default_rng(7)


def _f64(*shape):
    return RNG.standard_normal(shape)


def _in_runner(f, backend):
    """On backend "c" every call ran in runner.c, the loops included (none handed back)."""
    if backend == "c" and f.runner is not None:
        assert f.runner.runs > 0 and f.runner.declined == 0, (f.runner.runs, f.runner.declined)


# -- forward ------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_cumulative_sum(backend):
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    out, updates = sn.scan(lambda xt, h: h + xt, sequences=x, outputs_info=h0)
    assert not updates and out.type.shape[1:] == (3,)
    xv, hv = _f64(6, 3), _f64(3)
    f = sn.function([x, h0], out, backend=backend)
    np.testing.assert_allclose(f(xv, hv), hv + np.cumsum(xv, axis=0))
    _in_runner(f, backend)


def test_cumulative_sum_gradient():
    def cumsum(x, h0):
        return sn.scan(lambda xt, h: h + xt, sequences=x, outputs_info=h0)[0]

    sn.check_grad(cumsum, [_f64(5, 2), _f64(2)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_power_iteration_stops_with_until(backend):
    a = sn.tensor("A", shape=(4, 4), dtype="float64")
    v0 = sn.tensor("v0", shape=(4,), dtype="float64")

    def step(v, a):
        w = a @ v
        w = w / sn.sqrt(sn.sum(w * w))
        return w, sn.until(sn.max(sn.abs(w - v)) < 1e-10)

    vs, _ = sn.scan(step, outputs_info=v0, non_sequences=a, n_steps=500)
    m = _f64(4, 4)
    m = m @ m.T + np.diag([8.0, 0, 0, 0])
    start = np.ones(4) / 2
    f = sn.function([a, v0], vs, backend=backend)
    got = f(m, start)
    _in_runner(f, backend)
    v, steps, done = start, 0, False
    while not done and steps < 500:  # the same loop in NumPy
        w = m @ v
        w = w / np.sqrt(w @ w)
        done = np.max(np.abs(w - v)) < 1e-10
        v, steps = w, steps + 1
    assert 1 < len(got) == steps < 500
    np.testing.assert_allclose(got[-1], v)
    top = np.linalg.eigh(m)[1][:, -1]
    np.testing.assert_allclose(np.abs(got[-1] @ top), 1.0, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fibonacci_with_two_taps(backend):
    f0 = sn.tensor("f0", shape=(2,), dtype="int64")
    fib, _ = sn.scan(lambda a, b: a + b, outputs_info={"initial": f0, "taps": [-2, -1]}, n_steps=10)
    f = sn.function([f0], fib, backend=backend)
    np.testing.assert_array_equal(f(np.array([0, 1])), [1, 2, 3, 5, 8, 13, 21, 34, 55, 89])
    _in_runner(f, backend)


def test_two_taps_gradient():
    def second_order(x, h0):
        step = lambda xt, h2, h1: 0.5 * h1 - 0.3 * h2 * h1 + xt  # noqa: E731
        return sn.scan(step, sequences=x, outputs_info={"initial": h0, "taps": [-2, -1]})[0]

    sn.check_grad(second_order, [_f64(5, 2), _f64(2, 2)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_sequence_taps_go_backwards_and_plain_outputs(backend):
    x = sn.tensor("x", shape=(6,), dtype="float64")

    def step(prev, now, acc):
        return acc + now, now - prev  # the running sum and a difference not fed back

    taps = {"input": x, "taps": [-1, 0]}
    (sums, diffs), _ = sn.scan(
        step, sequences=taps, outputs_info=[sn.constant(0.0), None], go_backwards=True
    )
    xv = _f64(6)
    prev, now = xv[:-1][::-1], xv[1:][::-1]  # each tap's cut, reversed (Theano's rule)
    got_sums, got_diffs = sn.function([x], [sums, diffs], backend=backend)(xv)
    np.testing.assert_allclose(got_diffs, now - prev)
    np.testing.assert_allclose(got_sums, np.cumsum(now))


@pytest.mark.parametrize("backend", BACKENDS)
def test_symbolic_n_steps_and_shared_updates(backend):
    count = sn.shared(np.float64(0.0), name="count")
    n = sn.scalar("n", dtype="int64")
    h0 = sn.tensor("h0", shape=(2,), dtype="float64")

    def step(h):
        return 2 * h, {count: count + 1}

    hs, updates = sn.scan(step, outputs_info=h0, n_steps=n)
    assert list(updates) == [count]
    f = sn.function([n, h0], hs[-1], updates=updates, backend=backend)
    np.testing.assert_allclose(f(3, np.ones(2)), [8.0, 8.0])
    np.testing.assert_allclose(f(5, np.ones(2)), [32.0, 32.0])
    assert count.get_value() == 8.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_updated_shared_variable_listed_in_non_sequences_still_changes(backend):
    """A shared variable the step updates is a state, listed in non_sequences or not
    (Theano's rule): it was read as its starting value at every step (outputs 1, 2, 3, 4
    and S = 2 where the loop gives 1, 3, 7, 15 and S = 16). Its gradient, through the
    loop, against finite differences."""
    S = sn.shared(np.array(1.0), name="S")
    c0 = sn.tensor("c0", shape=(), dtype="float64")
    for listed in ([S], [S, S]):
        S.set_value(np.array(1.0))
        o, upd = sn.scan(
            lambda c, *s: (c + s[0], {S: s[-1] * 2.0}),
            outputs_info=c0,
            non_sequences=listed,
            n_steps=4,
        )
        f = sn.function([c0], o, updates=upd, backend=backend)
        np.testing.assert_allclose(f(0.0), [1.0, 3.0, 7.0, 15.0])
        assert S.get_value() == 16.0
    w = sn.tensor("w", shape=(2,), dtype="float64")
    V = sn.shared(np.array([1.0, 0.5]), name="V")
    hs, upd = sn.scan(
        lambda h, v, w: (h * w + sn.sin(v), {V: v * w + 0.1}),
        outputs_info=c0 + sn.zeros(2),
        non_sequences=[V, w],
        n_steps=3,
    )
    cost = sn.sum(hs**2) + sn.sum(upd[V] ** 3)
    f = sn.function([c0, w], [cost, *sn.grad(cost, [V, w, c0])], backend=backend)
    args, start = [0.3, np.array([0.9, 1.1])], np.array([1.0, 0.5])
    _, g_v, g_w, g_c = f(*args)

    def numeric(k, i=None, eps=1e-6):  # input k (0: V's start), element i
        total = 0.0
        for sign in (1, -1):
            v, point = start.copy(), [np.array(a, dtype="float64") for a in args]
            target = v if k == 0 else point[k - 1]
            target[() if i is None else i] += sign * eps
            V.set_value(v)
            total += sign * f(*point)[0] / (2 * eps)
        V.set_value(start)
        return total

    np.testing.assert_allclose(g_v, [numeric(0, i) for i in range(2)], rtol=1e-6)
    np.testing.assert_allclose(g_w, [numeric(2, i) for i in range(2)], rtol=1e-6)
    np.testing.assert_allclose(g_c, numeric(1), rtol=1e-6)


def test_loop_invariant_work_moves_out():
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    w = sn.shared(_f64(3, 3), name="W")
    out, _ = sn.scan(
        lambda xt, h: sn.tanh(xt + h @ (w.T * 2.0)),
        sequences=x,
        outputs_info=sn.constant(np.zeros(3)),
    )
    loop = out.owner.op.loop
    inner_ops = {type(n.op).__name__ for n in loop.order()}
    assert "DimShuffle" not in inner_ops and "Mul" not in inner_ops, inner_ops
    assert loop.n_nonseqs == 1  # W.T * 2, computed once outside the loop


# -- recurrent networks -------------------------------------------------------------------------
def _elman(x, h0, w, u):
    hs, _ = sn.scan(
        lambda xt, h, w, u: sn.tanh(xt @ u + h @ w),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w, u],
    )
    return hs


def _elman_numpy(x, h0, w, u):
    h, out = h0, []
    for xt in x:
        h = np.tanh(xt @ u + h @ w)
        out.append(h)
    return np.array(out)


def _elman_data(t=4, b=2, n=3):
    return [_f64(t, b, n), _f64(b, n), 0.5 * _f64(n, n), 0.5 * _f64(n, n)]


def _symbols(arrays):
    return [sn.tensor(f"a{i}", shape=a.shape, dtype=a.dtype) for i, a in enumerate(arrays)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_elman_rnn_forward_and_backward(backend):
    arrays = _elman_data()
    xs = _symbols(arrays)
    hs = _elman(*xs)
    cost = sn.sum(hs * hs)
    grads = sn.grad(cost, xs)
    f = sn.function(xs, [hs, *grads], backend=backend)
    got = f(*arrays)
    _in_runner(f, backend)
    np.testing.assert_allclose(got[0], _elman_numpy(*arrays), rtol=1e-10)
    reference = sn.function(xs, grads, backend="py")(*arrays)
    for g, r in zip(got[1:], reference):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


def test_elman_rnn_check_grad():
    sn.check_grad(_elman, _elman_data())


def _lstm(x, h0, c0, w, u):
    def step(xt, h, c, w, u):
        z = xt @ w + h @ u
        n = h.type.shape[-1]
        i, f, o = (sn.sigmoid(z[:, k * n : (k + 1) * n]) for k in range(3))
        g = sn.tanh(z[:, 3 * n :])
        c = f * c + i * g
        return o * sn.tanh(c), c

    (hs, cs), _ = sn.scan(step, sequences=x, outputs_info=[h0, c0], non_sequences=[w, u])
    return hs


def _lstm_numpy(x, h, c, w, u):
    out = []
    n = h.shape[-1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    for xt in x:
        z = xt @ w + h @ u
        i, f, o = (sig(z[:, k * n : (k + 1) * n]) for k in range(3))
        c = f * c + i * np.tanh(z[:, 3 * n :])
        h = o * np.tanh(c)
        out.append(h)
    return np.array(out)


def _lstm_data(t=3, b=2, d=2, n=2):
    return [_f64(t, b, d), _f64(b, n), _f64(b, n), 0.5 * _f64(d, 4 * n), 0.5 * _f64(n, 4 * n)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_forward_and_backward(backend):
    """The forward against a NumPy loop; the gradients against backend "py"'s, which
    ``check_grad`` checks below."""
    arrays = _lstm_data()
    xs = _symbols(arrays)
    hs = _lstm(*xs)
    grads = sn.grad(sn.sum(hs * sn.sin(hs)), xs)
    f = sn.function(xs, [hs, *grads], backend=backend)
    got = f(*arrays)
    _in_runner(f, backend)
    np.testing.assert_allclose(got[0], _lstm_numpy(*arrays), rtol=1e-10)
    reference = sn.function(xs, grads, backend="py")(*arrays)
    for g, r in zip(got[1:], reference, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12)


def test_gradient_of_fewer_steps_than_rows():
    """A symbolic n_steps (3) over 5 rows: the output has 3 rows (its type must not claim the
    sequence's 5), and the gradient reads the rows of the steps run."""

    def three_steps(x, h0, w):
        n = sn.cast(sn.shape(x)[0] - 2, "int64")  # symbolic: the sequence keeps its 5 rows
        return sn.scan(
            lambda xt, h, w: sn.tanh(xt + h @ w),
            sequences=x,
            outputs_info=h0,
            non_sequences=w,
            n_steps=n,
        )[0]

    sn.check_grad(three_steps, [_f64(5, 2, 3), _f64(2, 3), 0.5 * _f64(3, 3)])


def test_lstm_check_grad():
    sn.check_grad(_lstm, _lstm_data())


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncated_gradient_matches_a_hand_truncated_reference(backend):
    t, k = 6, 2
    x, h0, w, u = _elman_data(t=t)
    xs = _symbols([x, h0, w, u])
    hs, _ = sn.scan(
        lambda xt, h, w, u: sn.tanh(xt @ u + h @ w),
        sequences=xs[0],
        outputs_info=xs[1],
        non_sequences=xs[2:],
        truncate_gradient=k,
    )
    f = sn.function(xs, sn.grad(sn.sum(hs), xs), backend=backend)
    got = f(x, h0, w, u)
    _in_runner(f, backend)
    states = np.concatenate([h0[None], _elman_numpy(x, h0, w, u)])
    gx, gw, gu = np.zeros_like(x), np.zeros_like(w), np.zeros_like(u)
    carry = np.zeros_like(h0)
    for step in range(t - 1, t - 1 - k, -1):  # BPTT over the last k steps only
        dz = (1 - states[step + 1] ** 2) * (1.0 + carry)
        gx[step] = dz @ u.T
        gu += x[step].T @ dz
        gw += states[step].T @ dz
        carry = dz @ w.T
    for g, r in zip(got, [gx, np.zeros_like(h0), gw, gu]):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rop_through_scan(backend):
    arrays = _elman_data(t=3)
    xs = _symbols(arrays)
    hs = _elman(*xs)
    tangent = 0.1 * _f64(*arrays[2].shape)
    v = sn.tensor("v", shape=tangent.shape, dtype="float64")
    f = sn.function([*xs, v], sn.Rop(hs, xs[2], v), backend=backend)
    jvp = f(*arrays, tangent)
    _in_runner(f, backend)
    eps = 1e-6
    up = _elman_numpy(arrays[0], arrays[1], arrays[2] + eps * tangent, arrays[3])
    down = _elman_numpy(arrays[0], arrays[1], arrays[2] - eps * tangent, arrays[3])
    np.testing.assert_allclose(jvp, (up - down) / (2 * eps), rtol=1e-6, atol=1e-9)


def test_jacobian_and_hessian_of_symbolic_shapes():
    x = sn.tensor("x", shape=("n",), dtype="float64")
    jac = sn.jacobian(sn.tanh(x) * sn.sum(x), x)
    hess = sn.hessian(sn.sum(sn.exp(x) * x[0]), x)
    assert any(isinstance(n.op, Scan) for n in sn.Graph([x], [jac]).toposort())
    xv = _f64(4)
    got_j, got_h = sn.function([x], [jac, hess], backend="py")(xv)
    ref_j = np.diag((1 - np.tanh(xv) ** 2) * xv.sum()) + np.tanh(xv)[:, None]
    ref_h = np.diag(np.exp(xv) * xv[0])
    ref_h[0, :] += np.exp(xv)
    ref_h[:, 0] += np.exp(xv)
    np.testing.assert_allclose(got_j, ref_j, rtol=1e-10)
    np.testing.assert_allclose(got_h, ref_h, rtol=1e-10)


@pytest.mark.skipif("c" not in BACKENDS, reason="no C compiler")
def test_sequence_classifier_trains():
    """A tanh RNN learns whether a sequence's sum is positive: 90% accuracy within 150
    steps of gradient descent (it reaches ~97%; the data and start are seeded)."""
    rng = np.random.default_rng(0)
    t, n, hidden = 8, 256, 8
    data = rng.standard_normal((t, n, 1)).astype("float32")
    labels = (data.sum(axis=(0, 2)) > 0).astype("float32")
    x = sn.tensor("x", shape=(t, "batch", 1), dtype="float32")
    y = sn.tensor("y", shape=("batch",), dtype="float32")
    params = [
        sn.shared((s * rng.standard_normal(shape)).astype("float32"), name=name)
        for name, shape, s in [
            ("U", (1, hidden), 1.0),
            ("W", (hidden, hidden), 0.2),
            ("v", (hidden,), 0.5),
        ]
    ]
    u, w, v = params
    h0 = sn.zeros((x.shape[1], hidden), dtype="float32")
    hs, _ = sn.scan(lambda xt, h: sn.tanh(xt @ u + h @ w), sequences=x, outputs_info=h0)
    logit = hs[-1] @ v
    p = sn.sigmoid(logit)
    loss = sn.mean(sn.binary_crossentropy(p, y))
    grads = sn.grad(loss, params)
    train = sn.function(
        [x, y], loss, updates={q: q - 0.5 * g for q, g in zip(params, grads)}, backend="c"
    )
    for _ in range(150):
        train(data, labels)
    _in_runner(train, "c")
    predict = sn.function([x], p > 0.5, backend="c")
    accuracy = np.mean(predict(data) == (labels > 0.5))
    assert accuracy >= 0.9, accuracy


# -- errors at the user's line ------------------------------------------------------------------
def _line_of(text: str) -> int:
    import inspect

    source, start = inspect.getsourcelines(_errors_source)
    return start + next(i for i, line in enumerate(source) if text in line)


def _errors_source():  # the lines the error tests point at
    x = sn.tensor("x", shape=(5, 3), dtype="float32")
    h0 = sn.tensor("h0", shape=(3,), dtype="float32")
    two_taps = {"initial": h0[None], "taps": [-1, -2]}

    def widen(xt, h):
        return sn.cast(h, "float64") + xt

    def count():
        return sn.scan(lambda xt, h: (h, h), sequences=x, outputs_info=h0)  # @count

    def dtype():
        return sn.scan(widen, sequences=x, outputs_info=h0)  # @dtype

    def taps():
        return sn.scan(lambda h2, h1: h1, n_steps=3, outputs_info=two_taps)  # @taps

    def n_steps():
        return sn.scan(lambda xt: xt, sequences=x, n_steps=9)  # @n_steps

    def until():
        return sn.scan(lambda h: (h, sn.until(h)), outputs_info=h0, n_steps=2)  # @until

    def key():  # a misspelled key silently meant "not fed back"
        return sn.scan(lambda *args: h0 * len(args), outputs_info={"init": h0}, n_steps=3)  # @key

    def seq_key():
        return sn.scan(lambda xt: xt, sequences={"inputs": x, "taps": [0]})  # @seq_key

    def no_initial():
        return sn.scan(lambda h: h, outputs_info={"taps": [-1]}, n_steps=3)  # @no_initial

    cases = (count, dtype, taps, n_steps, until, key, seq_key, no_initial)
    return {f.__name__: f for f in cases}


@pytest.mark.parametrize(
    "case, words",
    [
        ("count", ["returned 2 output", "outputs_info has 1"]),
        ("dtype", ["float32(3,)", "float64(3,)", "keep its dtype"]),
        ("taps", ["taps [-1, -2]", "reach 2 steps", "1 rows"]),
        ("n_steps", ["n_steps=9", "only 5 steps"]),
        ("until", ["boolean scalar", "'h0[t-1]' (float32(3,))"]),
        (
            "key",
            [
                "outputs_info[0] has the key 'init', which scan does not know (did you mean "
                "'initial'?); its keys are 'initial', 'taps'"
            ],
        ),
        ("seq_key", ["sequences[0] has the key 'inputs'", "mean 'input'", "are 'input', 'taps'"]),
        ("no_initial", ["outputs_info[0] has taps [-1] but no initial value"]),
    ],
)
def test_errors_name_the_problem_at_the_users_line(case, words):
    with pytest.raises((sn.ShapeError, sn.DTypeError, sn.GraphError)) as info:
        _errors_source()[case]()
    message = str(info.value)
    for word in words:
        assert word in message, message
    assert f"test_scan.py, line {_line_of('# @' + case)}" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_plain_output_changing_shape_is_named_by_its_place_in_the_return(backend):
    """Output 2 of [h + a, 2 * a, a[argmax(a):]] (0 fed back, 1 unread, so dropped from the
    loop) was "output 0 of the step": its place among the outputs not fed back, counted
    after the rewrite, which to the user is the state h + a."""
    x = sn.tensor("X", shape=("T", "k"), dtype="float64")
    h0 = sn.tensor("h0", shape=("k",), dtype="float64")
    for returned, unread in [(lambda a, h: [h + a, a[sn.argmax(a) :]], []), (None, [1])]:
        step = returned or (lambda a, h: [h + a, 2 * a, a[sn.argmax(a) :]])
        outs, _ = sn.scan(step, sequences=x, outputs_info=[h0, None] + [None] * len(unread))
        scan_line = inspect.currentframe().f_lineno - 1
        used = [o for i, o in enumerate(outs) if i not in unread]
        f = sn.function([x, h0], used, backend=backend)
        with pytest.raises(sn.ShapeError) as info:
            f(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.zeros(3))
        message = str(info.value)
        want = f"scan: output {len(outs) - 1} of the step has shape (1,) at step 1, but (2,)"
        assert message.startswith(want), message
        assert f"test_scan.py, line {scan_line}:" in message, message


def test_strict_refuses_a_value_from_outside_not_listed_as_a_graph_error():
    """A value the step reads that non_sequences does not list is a missing input of the
    step (Theano's MissingInputError), not a shape problem: it was a ShapeError."""
    w = sn.shared(np.full(3, 2.0), name="W")
    h0 = sn.tensor("h0", shape=(3,), dtype="float64")
    with pytest.raises(sn.GraphError) as info:
        sn.scan(lambda h: h * w, outputs_info=h0, n_steps=2, strict=True)
    scan_line = inspect.currentframe().f_lineno - 1
    assert not isinstance(info.value, sn.ShapeError)
    message = str(info.value)
    assert message.startswith("sn.scan(strict=True): the step reads 'W' (float64(3,))"), message
    assert f"test_scan.py, line {scan_line}:" in message, message
    hs, _ = sn.scan(lambda h, w: h * w, outputs_info=h0, non_sequences=w, n_steps=2, strict=True)
    np.testing.assert_array_equal(sn.function([h0], hs)(np.ones(3)), [[2.0] * 3, [4.0] * 3])


def test_runtime_n_steps_beyond_the_sequence():
    x = sn.tensor("x", shape=("T", 2), dtype="float64")
    n = sn.scalar("n", dtype="int64")
    out, _ = sn.scan(lambda xt: 2 * xt, sequences=x, n_steps=n)
    f = sn.function([x, n], out, backend="py")
    np.testing.assert_allclose(f(np.ones((4, 2)), 3), 2 * np.ones((3, 2)))
    with pytest.raises(sn.SymnbError, match="n_steps=5, but the sequence 'x' has only 4"):
        f(np.ones((4, 2)), 5)


@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_a_bool_n_steps_is_refused_as_a_bool_variable_is(flag):
    """A Python bool is an int to isinstance: n_steps=True ran one step, False none, where
    a bool scalar variable (and truncate_gradient=True) is refused."""
    h0 = sn.tensor("h0", shape=(3,))
    for bad in (flag, sn.scalar("b", dtype="bool")):
        with pytest.raises(
            sn.DTypeError, match=r"^sn.scan: n_steps must be an integer sca"
        ) as info:
            sn.scan(lambda h: h * 2, outputs_info=h0, n_steps=bad)
        assert info.value.location.filename == __file__
    hs, _ = sn.scan(lambda h: h * 2, outputs_info=h0, n_steps=np.int32(2))
    assert hs.type.shape == (2, 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("with_sequence", [False, True])
def test_a_negative_symbolic_n_steps_is_one_error_at_the_scans_line(backend, with_sequence):
    """A negative count once read as "not given": "give n_steps or at least one sequence"
    (a RuntimeFailure wrapping it on "py"), or with a sequence, silently all of its rows.
    Every backend now raises the loop's own ShapeError, at the line of the scan."""
    n, h0 = sn.scalar("n", dtype="int64"), sn.vector("h0")
    x = sn.tensor("x", shape=("T", 3))
    step = (lambda xt, h: h + xt) if with_sequence else (lambda h: h * 2)
    seqs = [x] if with_sequence else []
    hs, _ = sn.scan(step, sequences=seqs, outputs_info=h0, n_steps=n)
    scan_line = inspect.currentframe().f_lineno - 1
    f = sn.function([x, h0, n] if with_sequence else [h0, n], hs, backend=backend)
    args = [np.ones((4, 3))] if with_sequence else []
    for count in (-1, -3):
        with pytest.raises(sn.ShapeError) as info:
            f(*args, np.ones(3), count)
        assert not isinstance(info.value, RuntimeFailure)  # the same type on every backend
        message = str(info.value)
        assert message.startswith(f"scan: n_steps must be >= 0, got {count}\n"), message
        assert f"test_scan.py, line {scan_line}:" in message, message
    assert f(*args, np.ones(3), 0).shape == (0, 3)
    np.testing.assert_allclose(f(*args, np.ones(3), 2), [[2.0] * 3, [3.0 if seqs else 4.0] * 3])


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b != "py"])  # a loop body's plan
def test_inner_values_are_not_named_after_the_line_assigning_the_function(backend):
    """A value moved out of the step (``W[:, :3]``) and a non-sequence are inputs of the
    loop's body; their placeholders, made on the user's line, were named after what it
    assigns (``f``, the compiled function). A placeholder is named as its outer value: an
    unnamed shared value by its own line (``U``), a computed value not at all."""
    W, h0 = sn.shared(np.ones((3, 4)), name="W"), sn.vector("h0")
    U = sn.shared(np.ones((3, 3)))  # no name=: messages use the Python name U
    make = functools.partial(sn.function, [h0], backend=backend)
    f = make(sn.scan(lambda h: h @ W[:, :3], outputs_info=h0, n_steps=4)[0])
    g = make(sn.scan(lambda h, u: h @ u, outputs_info=h0, non_sequences=U, n_steps=2)[0])
    for function, operand in [(f, "an unnamed variable (float64(3, 3))"), (g, "'U' (float64")]:
        with pytest.raises(sn.SymnbError) as info:
            function(np.ones(5))  # h0 has 5 elements, the product 3 rows
        first = str(info.value).splitlines()[0]
        assert "matmul(" in first and operand in first, first
        assert "'f'" not in first and "'g'" not in first, first


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("py", "c")])  # a loop step
def test_the_profile_reports_the_loops_steps(backend):
    x = sn.tensor("x", shape=(7, 3), dtype="float64")
    out, _ = sn.scan(lambda xt, h: h * 0.5 + xt, sequences=x, outputs_info=sn.zeros(3))
    f = sn.function([x], out, backend=backend)
    profile = f.profile(np.ones((7, 3)), repeat=2)
    (note,) = [n for n in profile.notes if "steps per call" in n]
    assert "scan: 7 steps per call" in note, profile.text()
    (row,) = [r for r in profile.rows if r.steps]
    assert row.steps == 14 and row.calls == 2
    body = [r for r in profile.rows if r.loop is row]
    if backend == "c":  # the body's steps, each summed over the 7 iterations of each call
        assert [r.label for r in body] == ["0/0: composite"] and body[0].calls == 2, body
        assert body[0].where == "generated C on the CPU" and body[0].bytes == 2 * 7 * 3 * 24
    else:  # backend "py" runs a scan as its NumPy reference: one step
        assert body == []


def test_the_backward_loop_computes_only_the_gradients_asked_for():
    arrays = _elman_data()
    xs = _symbols(arrays)
    grads = sn.grad(sn.sum(_elman(*xs)), xs[2:])  # W and U only: no per-step gradient of x
    f = sn.function(xs, grads)
    # forward; backward: no per-step gradient of x, and dz's rows (one output for dW and dU,
    # each one product after the loop), the carry its only state (no accumulators), as
    # built (optimize="none": no rewrite removes outputs the loop should not have made)
    for g in [f, sn.function(xs, grads, optimize="none")]:
        loops = [n.op.loop for n in g.graph.toposort() if isinstance(n.op, Scan)]
        assert [(loop.n_states, loop.n_plain) for loop in loops] == [(1, 0), (1, 1)]
    assert f.rewrites.counts().get("scan_unused_outputs", 0) == 0
    reference = sn.function(xs, grads, optimize="none")(*arrays)
    for got, want in zip(f(*arrays), reference):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def _central(fn, arrays, i, eps=1e-6):
    """d sum(fn(*arrays)) / d arrays[i] by central differences."""
    grad = np.zeros_like(arrays[i])
    for idx in np.ndindex(arrays[i].shape):
        moved = [a.copy() for a in arrays]
        moved[i][idx] += eps
        up = np.sum(fn(*moved))
        moved[i][idx] -= 2 * eps
        grad[idx] = (up - np.sum(fn(*moved))) / (2 * eps)
    return grad


def _backward_loops(ins, outs):
    """The loops of the graph as built (no rewrite), after the first (the forward one)."""
    f = sn.function(ins, outs, optimize="none")
    return [n.op.loop for n in f.graph.toposort() if isinstance(n.op, Scan)][1:]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_backward_loop_differentiates_only_the_inputs_a_gradient_needs(backend):
    """The backward step is differentiated with respect to the inputs asked for and the
    states that depend on them, not every float input: d/dp of ``h ** p`` is
    ``h ** p * log(h)``, NaN for h < 0, which mode="nanguard" stopped at although the
    gradient of U was finite, and "py" warned of (invalid value in log)."""
    rng = np.random.default_rng(18)
    arrays = [rng.standard_normal((5, 3)), 0.5 * rng.standard_normal((3, 3))]
    arrays += [rng.standard_normal(3), np.array(3.0)]
    s, u = sn.matrix("s", dtype="float64"), sn.matrix("U", dtype="float64")
    h0, p = sn.vector("h0", dtype="float64"), sn.scalar("p", dtype="float64")

    def loop(s, u, h0, p):  # states h (reads U and p), c (reads h) and k (reads p only)
        (hs, cs, ks), _ = sn.scan(
            lambda a, h, c, k, p: (sn.tanh(a @ u + h**p), 0.5 * c + sn.sum(h), k * p),
            sequences=s,
            outputs_info=[h0, sn.constant(0.0), sn.constant(1.0)],
            non_sequences=p,
        )
        return sn.sum(hs) + sn.sum(cs) + sn.sum(ks)

    def reference(s, u, h0, p):
        h, c, k, total = h0, 0.0, 1.0, 0.0
        for a in s:
            h, c, k = np.tanh(a @ u + h**p), 0.5 * c + h.sum(), k * p
            total += h.sum() + c + k
        return total

    ins = [s, u, h0, p]
    cost = loop(*ins)
    # the carries of h and c (c reads h), none of k, no accumulator of p (before: 5 states,
    # the 3 carries and the sums of p and U, and the rows of s's gradient, whatever wrt was)
    for wrt, states, plain in [([u], 3, 0), ([h0], 2, 0), ([s], 2, 1), ([u, h0], 3, 0)]:
        grads = sn.grad(cost, wrt)
        (backward,) = _backward_loops(ins, grads)
        assert (backward.n_states, backward.n_plain) == (states, plain), wrt
        f = sn.function(ins, grads, backend=backend, mode="nanguard")
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = f(*arrays)
        for x, g in zip(wrt, got):
            i = [id(v) for v in ins].index(id(x))
            np.testing.assert_allclose(g, _central(reference, arrays, i), rtol=1e-6, atol=1e-8)
    # p's gradient where it is defined (h > 0 at every step): the states that read it, k too
    positive = [np.abs(a) for a in arrays[:3]] + [np.array(2.0)]
    (gp,) = sn.function(ins, sn.grad(cost, [p]), backend=backend)(*positive)
    np.testing.assert_allclose(gp, _central(reference, positive, 3), rtol=1e-6)
    (backward,) = _backward_loops(ins, sn.grad(cost, [p]))
    assert backward.n_states == 4  # the carries of h, c and k, p's sum


@pytest.mark.parametrize("backend", BACKENDS)
def test_rop_through_a_scan_differentiates_no_exponent_of_its_first_pass(backend):
    """sn.Rop's first pass writes d(h**2)/dh = 2 * h ** (2 - 1), the exponent a non-sequence
    of the backward loop; the second pass differentiated with respect to it too (log(h) of
    a negative h: NaN in an accumulator no result reads)."""
    rng = np.random.default_rng(18)
    arrays = [rng.standard_normal((5, 3)), 0.5 * rng.standard_normal((3, 3))]
    arrays += [rng.standard_normal(3), 0.5 * rng.standard_normal((3, 3))]
    s, u = sn.matrix("s", dtype="float64"), sn.matrix("U", dtype="float64")
    h0, v = sn.vector("h0", dtype="float64"), sn.matrix("v", dtype="float64")
    (_, sq), _ = sn.scan(
        lambda a, h: (sn.tanh(a @ u + h), sn.sum(h**2)), sequences=s, outputs_info=[h0, None]
    )
    jv = sn.Rop(sq, u, v)
    f = sn.function([s, u, h0, v], jv, backend=backend, mode="nanguard")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = f(*arrays)

    def squares(s, u, h0):
        h, out = h0, []
        for a in s:
            out.append(np.sum(h**2))
            h = np.tanh(a @ u + h)
        return np.array(out)

    eps, (sv, uv, h0v, vv) = 1e-6, arrays
    want = (squares(sv, uv + eps * vv, h0v) - squares(sv, uv - eps * vv, h0v)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_a_needed_input_no_output_with_a_gradient_reads_gets_zeros():
    """p reaches only a plain output that the cost does not read: its gradient is zeros
    (the backward step has no output to differentiate)."""
    x = sn.vector("x", dtype="float64")
    p = sn.scalar("p", dtype="float64")
    (hs, ys), _ = sn.scan(
        lambda a, h, p: (0.5 * h + a, a * p),
        sequences=x,
        outputs_info=[x[0], None],
        non_sequences=p,
    )
    gx, gp = sn.grad(sn.sum(hs), [x, p])
    got = sn.function([x, p], [gx, gp])(np.arange(4.0), np.array(2.0))
    np.testing.assert_allclose(got[1], 0.0)
    np.testing.assert_allclose(got[0], [1.875 + 0.9375, 1.75, 1.5, 1.0])  # x[0]: h0 too


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scan_inside_a_scan(backend):
    def row_sum(row, acc):
        inner, _ = sn.scan(
            lambda v, a: a * 0.5 + sn.sin(v), sequences=row, outputs_info=sn.constant(0.0)
        )
        return acc + inner[-1]

    def nested(x):
        return sn.scan(row_sum, sequences=x, outputs_info=sn.constant(0.0))[0]

    xv = _f64(4, 3)
    x = sn.tensor("x", shape=(4, 3), dtype="float64")
    f = sn.function([x], nested(x), backend=backend)
    got = f(xv)
    _in_runner(f, backend)
    acc, want = 0.0, []
    for row in xv:
        a = 0.0
        for v in row:
            a = a * 0.5 + np.sin(v)
        acc += a
        want.append(acc)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if backend == "py":
        sn.check_grad(nested, [xv])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_step_may_differentiate_through_its_non_sequences(backend):
    """The step is called with the non-sequences themselves (Theano's contract), so a value
    computed from them outside can be differentiated inside: a Jacobian row per step."""
    x = sn.vector("x")
    y = sn.tanh(x) * x[::-1]
    rows, _ = sn.scan(
        lambda i, y, x: sn.grad(y[i], x), sequences=sn.arange(y.shape[0]), non_sequences=[y, x]
    )
    xv = _f64(4)
    got = sn.function([x], rows, backend=backend)(xv)
    want = np.diag((1 - np.tanh(xv) ** 2) * xv[::-1])
    want[np.arange(4), np.arange(4)[::-1]] += np.tanh(xv)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_step_taking_the_wrong_number_of_arguments_is_told_what_it_gets():
    x, h0, w = sn.matrix("x"), sn.vector("h0"), sn.vector("w")
    with pytest.raises(sn.GraphError) as caught:
        sn.scan(lambda xt, h: h + xt, sequences=x, outputs_info=h0, non_sequences=w)
    assert str(caught.value).startswith(
        "sn.scan: fn(xt, h) is called with 3 argument(s): 1 for the sequences' taps, 1 for "
        "the fed-back outputs' taps and 1 non-sequence(s), in that order\n  at "
    )
    out, _ = sn.scan(lambda *taps: taps[0] + taps[1], sequences=x, outputs_info=h0)
    assert out.type.ndim == 2  # *args takes whatever the loop passes


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_of_no_steps_gives_each_output_its_per_step_shape(backend):
    """No rows to loop over (an empty minibatch, n_steps=0): outputs whose per-step shape is
    known only when a step runs still have it ((0, 3), not (0, 0)), and the gradient is
    zeros of the sequence's shape, not an error."""
    x, h0 = sn.tensor("x", shape=(None, None)), sn.tensor("h0", shape=(None,))
    n = sn.scalar("n", dtype="int64")
    rows, _ = sn.scan(lambda r: sn.tanh(r) * 2, sequences=x)
    outer, _ = sn.scan(lambda r: r[:, None] * r[None, :], sequences=x)
    counted, _ = sn.scan(lambda r: r + 1, sequences=x, n_steps=n)
    f = sn.function([x, n], [rows, outer, counted], backend=backend)
    for data, steps in [(np.zeros((0, 3)), 0), (np.ones((4, 3)), 0), (np.ones((4, 3)), 2)]:
        got = f(data, steps)
        assert [g.shape for g in got] == [data.shape, data.shape + (3,), (steps, 3)]
    states, _ = sn.scan(lambda r, h: sn.tanh(r + h), sequences=x, outputs_info=h0)
    g = sn.function([x, h0], sn.grad(states.sum() + h0.sum(), [x, h0]), backend=backend)
    gx, gh0 = g(np.zeros((0, 3)), np.full(3, 0.5))
    assert gx.shape == (0, 3) and gh0.tolist() == [1.0, 1.0, 1.0]
    taps, _ = sn.scan(lambda a, b: a * b, sequences=[{"input": x, "taps": [-1, 0]}])
    gt = sn.function([x], sn.grad(taps.sum(), x), backend=backend)(np.ones((1, 3)))
    assert gt.shape == (1, 3) and not gt.any()


def _cut_as_theano(seq_taps, arrays, backwards):
    """Each sequence cut as if tap 0 were among its taps, each cut reversed when going
    backwards (Theano's scan): one array per tap, row t of it read at step t."""
    cuts = []
    for taps, a in zip(seq_taps, arrays):
        low, high = min(*taps, 0), max(*taps, 0)
        for k in taps:
            cut = a[k - low :] if k == high else a[k - low : k - high]
            cuts.append(cut[::-1] if backwards else cut)
    return cuts


@pytest.mark.parametrize(
    "seq_taps",
    [[[2]], [[-1]], [[1, 2]], [[-2, -1]], [[0], [-1]], [[-3, -1], [0, 2]], [[-1, 0], [1]]],
)
@pytest.mark.parametrize("backwards", [False, True])
def test_sequence_taps_cut_each_sequence_as_if_tap_0_were_there(seq_taps, backwards, rng):
    """Taps [2] read x[2:], [-1] x[:-1] (they read x itself, shifted by the first tap, and
    ran too many steps); going backwards each tap's cut is reversed."""
    arrays = [rng.standard_normal(9), rng.standard_normal(8)][: len(seq_taps)]
    weights = [1.0, -2.0, 3.0, 0.5, 4.0]

    def step(*rows):
        return sum(w * r for w, r in zip(weights, rows))

    cuts = _cut_as_theano(seq_taps, arrays, backwards)
    want = np.array([step(*(c[t] for c in cuts)) for t in range(min(map(len, cuts)))])

    def build(*xs):
        seqs = [{"input": x, "taps": t} for x, t in zip(xs, seq_taps)]
        return sn.scan(step, sequences=seqs, go_backwards=backwards)[0]

    xs = [sn.tensor(f"x{i}", shape=(None,), dtype="float64") for i in range(len(arrays))]
    for backend in BACKENDS:
        got = sn.function(xs, build(*xs), backend=backend)(*arrays)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=backend)
    sn.check_grad(lambda *xs: build(*xs) ** 2, arrays)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_reaches_a_value_from_outside_the_step_does_not_list(backend):
    """A value computed outside and read by the step without being in non_sequences is the
    loop's input itself (not a copy of its graph): sn.grad reaches it, as if listed."""
    s = sn.vector("s", shape=(4,))
    x = sn.vector("x", shape=(3,))
    h = sn.tanh(x) * 2
    hs, _ = sn.scan(lambda si, a: sn.tanh(a * h + si), sequences=[s], outputs_info=[sn.zeros((3,))])
    listed, _ = sn.scan(
        lambda si, a, hh: sn.tanh(a * hh + si),
        sequences=[s],
        outputs_info=[sn.zeros((3,))],
        non_sequences=[h],
    )
    g, g_listed = sn.grad(hs[-1].sum(), h), sn.grad(listed[-1].sum(), h)
    xv, sv = _f64(3), _f64(4)
    got, got_listed = sn.function([x, s], [g, g_listed], backend=backend)(xv, sv)

    def cost(hv):
        a = np.zeros(3)
        for si in sv:
            a = np.tanh(a * hv + si)
        return a.sum()

    hv, eps = np.tanh(xv) * 2, 1e-6
    numeric = [(cost(hv + eps * e) - cost(hv - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got, got_listed, rtol=1e-12)
