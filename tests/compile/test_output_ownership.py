"""Every output is the caller's own array (docs/reliability.md, "Values at the borders"):
writable, holding each element once (no broadcast view with zero strides), sharing memory
with no input, shared value, other output or later call. Checked over outputs that a
rewrite can turn into a broadcast, a constant, a view or an input: gradients of sums and
means (``grad(sum(x), x)`` is ones broadcast to x's shape), ``zeros_like``, ``alloc``,
transposes, reshapes, an output listed twice. ``borrow=True`` is the documented exception."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn


def _graphs(x, v, w):
    """name: outputs over a (3, 4) matrix x, a (4,) vector v and a shared (3, 4) w."""
    return {
        "grad_of_sum": [sn.grad(sn.sum(x), x)],
        "grad_of_mean": [sn.grad(sn.mean(x), x)],
        "grad_of_broadcast_sum": [sn.grad(sn.sum(x + v), v)],
        "grad_of_shared": [sn.grad(sn.sum(w * 2.0), w)],
        "zeros_like": [sn.zeros_like(x)],
        "ones": [sn.ones((3, 4))],
        "alloc_of_a_row": [sn.alloc(v, 3, 4)],
        "broadcast_add_of_zero": [x * 0.0 + v],
        "transpose": [x.T],
        "reshape": [sn.reshape(x, (4, 3))],
        "constant": [sn.constant(np.arange(12.0).reshape(3, 4))],
        "shared": [w, w.T],
        "input": [x, v],
        "twice": [x * 2.0, x * 2.0],
        "same_output_twice": [sn.exp(x)] * 2,
        "a_view_of_another_output": [sn.exp(x), sn.exp(x).T, sn.exp(x)[::-1]],
        "a_view_before_its_base": [sn.exp(x).T, sn.exp(x)[::-1], sn.exp(x)],
        "a_view_of_a_big_constant": [sn.constant(np.ones((500, 400)))[1:].T, x * 2.0],
        "scalar": [sn.sum(x)],
        # a branch hands over the side it took: here another output's very array
        "a_branch_that_took_another_output": [
            sn.ifelse(sn.sum(x) > 100.0, x * 2.0, sn.exp(x)),
            sn.exp(x),
        ],
        "a_branch_taken_twice": list(
            sn.ifelse(sn.sum(x) < 100.0, [sn.exp(x), sn.exp(x)], [x * 3.0, x * 4.0])
        ),
    }


NAMES = list(_graphs(sn.matrix("x"), sn.vector("v"), sn.shared(np.ones((3, 4)))))


def _check_own(outs, others):
    for i, out in enumerate(outs):
        out = np.asarray(out)
        assert out.flags.writeable, f"output {i} is read-only"
        assert all(s != 0 for s, n in zip(out.strides, out.shape) if n > 1), (
            f"output {i} is a broadcast view, strides {out.strides}"
        )
        for j, other in enumerate([*outs[:i], *outs[i + 1 :], *others]):
            assert not np.shares_memory(out, other), f"output {i} shares memory with {j}"


@pytest.mark.parametrize("name", NAMES)
def test_every_output_is_writable_and_its_own(name, backend):
    x = sn.matrix("x", shape=(3, 4), dtype="float64")
    v = sn.vector("v", shape=(4,), dtype="float64")
    w = sn.shared(np.arange(12.0).reshape(3, 4), name="w")
    f = sn.function([x, v], _graphs(x, v, w)[name], backend=backend)
    xv, vv = np.arange(12.0).reshape(3, 4) / 7, np.linspace(-1, 1, 4)
    first = [np.array(o, copy=True) for o in f(xv, vv)]
    outs = f(xv, vv)
    _check_own(list(outs), [xv, vv, w.get_value(borrow=True)])
    for out in outs:  # every element written: each holds its own value afterwards
        out = np.asarray(out)
        marks = np.arange(out.size, dtype=out.dtype).reshape(out.shape) + 100
        out[...] = marks
        np.testing.assert_array_equal(out, marks)
    again = f(xv, vv)  # writing into the outputs changed nothing the function keeps
    for a, b in zip(again, first, strict=True):
        np.testing.assert_array_equal(a, b)
    _check_own([*again, *outs], [xv, vv])


def test_an_output_that_is_also_an_update_is_its_own(backend):
    """An output whose value is also written to a shared variable: writing into the output
    leaves the shared value alone."""
    x = sn.vector("x", shape=(3,), dtype="float64")
    w = sn.shared(np.zeros(3), name="w")
    f = sn.function([x], sn.exp(x), updates={w: sn.exp(x)}, backend=backend)
    out = f(np.zeros(3))
    out[...] = 7.0
    np.testing.assert_array_equal(w.get_value(), np.ones(3))


def test_an_output_that_is_a_view_of_an_update_is_its_own(backend):
    """The update's value comes after the outputs: an output that is a view of it is
    copied, so writing into the output leaves the shared value alone."""
    x = sn.matrix("x", shape=(2, 3), dtype="float64")
    w = sn.shared(np.zeros((2, 3)), name="w")
    f = sn.function([x], sn.exp(x).T, updates={w: sn.exp(x)}, backend=backend)
    out = f(np.zeros((2, 3)))
    out[...] = -5.0
    np.testing.assert_array_equal(w.get_value(), np.ones((2, 3)))


def test_two_updates_that_are_views_of_one_value_are_stored_apart(backend):
    """``{s1: y.T, s2: y}``: each shared variable gets its own array."""
    x = sn.matrix("x", shape=(2, 3), dtype="float64")
    s1, s2 = sn.shared(np.zeros((3, 2)), name="s1"), sn.shared(np.zeros((2, 3)), name="s2")
    f = sn.function([x], [], updates={s1: sn.exp(x).T, s2: sn.exp(x)}, backend=backend)
    f(np.zeros((2, 3)))
    assert not np.shares_memory(s1.get_value(borrow=True), s2.get_value(borrow=True))
    s2.get_value(borrow=True)[...] = 9.0
    np.testing.assert_array_equal(s1.get_value(), np.ones((3, 2)))


def test_two_gradients_that_are_one_array_at_run_time_are_two_outputs(backend):
    """``grad(sum((x + b)**2), [x, b])`` with unknown lengths: nothing is summed away at run
    time, so both gradients are one array unless copied (the "py" reference hands its input
    back, "c" two views of one sum); as outputs and as two updates, each is its own and
    writable (not the plan's read-only view of its storage)."""
    x, b = sn.vector("x", dtype="float64"), sn.vector("b", dtype="float64")
    gx, gb = sn.grad(sn.sum((x + b) ** 2), [x, b])
    outs = sn.function([x, b], [gx, gb], backend=backend)(np.ones(3), np.full(3, 0.5))
    _check_own(list(outs), [])
    p, q = sn.shared(np.zeros(3), name="p"), sn.shared(np.zeros(3), name="q")
    sn.function([x, b], [], updates={p: gx, q: gb}, backend=backend)(np.ones(3), np.ones(3))
    assert not np.shares_memory(p.get_value(borrow=True), q.get_value(borrow=True))


def test_a_branch_that_took_an_updates_value_is_its_own(backend):
    """``ifelse(c, x * 2, y)`` returned while ``y`` is written to a shared variable, and two
    updates from one branch's array: writing one never changes another."""
    c = sn.tensor("c", shape=(), dtype="bool")
    x = sn.vector("x", shape=(3,), dtype="float64")
    y = sn.exp(x)
    w = sn.shared(np.zeros(3), name="w")
    out = sn.function([c, x], sn.ifelse(c, x * 2.0, y), updates={w: y}, backend=backend)(
        False, np.zeros(3)
    )
    out[...] = 100.0
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    p, q = sn.shared(np.zeros(3), name="p"), sn.shared(np.zeros(3), name="q")
    updates = {p: sn.ifelse(c, y, x * 2.0), q: y}
    sn.function([c, x], [], updates=updates, backend=backend)(True, np.zeros(3))
    assert not np.shares_memory(p.get_value(borrow=True), q.get_value(borrow=True))


@pytest.mark.parametrize("optimize", ["none", "fast"])
def test_views_of_a_constant_are_writable_copies(backend, optimize):
    """A constant's array is read-only and the function's own: a view of it is returned
    as a copy, whether the rewrites fold it or not."""
    c = sn.constant(np.arange(6.0).reshape(2, 3))
    f = sn.function([], [c.T, c[0], c.reshape((6,))], backend=backend, optimize=optimize)
    for out, expected in zip(f(), [np.arange(6.0).reshape(2, 3).T, [0, 1, 2], np.arange(6.0)]):
        assert out.flags.writeable
        np.testing.assert_array_equal(out, expected)
        out[...] = -1.0
    np.testing.assert_array_equal(c.value, np.arange(6.0).reshape(2, 3))


def test_borrow_true_may_return_a_view_of_an_input(backend):
    """The documented exception: with borrow=True an input comes back as itself."""
    x = sn.vector("x", shape=(3,), dtype="float64")
    xv = np.ones(3)
    (out,) = sn.function([x], [x], backend=backend, borrow=True)(xv)
    assert np.shares_memory(out, xv)


#: updates (and outputs) that hand one shared variable's value to another, as symnb builds
#: them from shared variables a, b, c and as NumPy computes them from their values
EXCHANGES = {
    "swap": (lambda a, b, c: ([], {a: b, b: a}), lambda a, b, c: ([], (b, a, c))),
    "swap, one changed": (
        lambda a, b, c: ([], {a: b, b: a + 1.0}),
        lambda a, b, c: ([], (b, a + 1.0, c)),
    ),
    "rotate three": (
        lambda a, b, c: ([], {a: b, b: c, c: a * 2.0}),
        lambda a, b, c: ([], (b, c, a * 2.0)),
    ),
    "two from one": (
        lambda a, b, c: ([], {a: c, b: c, c: c + 1.0}),
        lambda a, b, c: ([], (c, c, c + 1.0)),
    ),
    "from another shared, which is an output too": (
        lambda a, b, c: ([b, a * 2.0], {a: b, b: b * 3.0}),
        lambda a, b, c: ([b, a * 2.0], (b, b * 3.0, c)),
    ),
    "an output that is a shared its update reads": (
        lambda a, b, c: ([a], {c: a, a: c - 1.0}),
        lambda a, b, c: ([a], (c - 1.0, b, a)),
    ),
}


@pytest.mark.parametrize("name", EXCHANGES)
def test_updates_that_exchange_shared_values_equal_numpy_call_after_call(name, backend):
    """An update to another shared variable's value (on a device backend, a device array
    after the first call: it is kept as it is, device arrays are never written again) equals
    NumPy over several calls, and writing into an output changes no shared value."""
    build, numpy_step = EXCHANGES[name]
    values = [np.arange(4.0), np.arange(4.0) * 10, np.arange(4.0) - 5]
    shared = [sn.shared(v.copy(), name=n) for v, n in zip(values, "abc")]
    outputs, updates = build(*shared)
    f = sn.function([], outputs, updates=updates, backend=backend)
    for call in range(4):
        want_outs, values = numpy_step(*values)
        outs = f()
        for out, want in zip(outs, want_outs, strict=True):
            np.testing.assert_array_equal(out, want, err_msg=f"call {call}")
            out[...] = -99.0
        for s, want in zip(shared, values, strict=True):
            got = s.get_value()
            assert got.dtype == want.dtype, (s.name, got.dtype)
            np.testing.assert_array_equal(got, want, err_msg=f"{s.name}, call {call}")
