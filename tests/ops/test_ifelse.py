"""sn.ifelse: values against NumPy on every backend, laziness, gradients, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.backends.plan import Branch, Launch
from symnb.core.op import Op
from symnb.core.types import TensorType
from tests.helpers import available_backends, check

BACKENDS = available_backends()
#: backends that run only the side taken (a Branch step): every one, the device backends too
#: (their executor reads the condition on the host, docs/gpu_backends.md)
LAZY = BACKENDS
RNG = np.random.default_rng(15)


class _Counted(Op):
    """An op whose reference counts its calls, and raises when told to: it proves which
    branch ran (on "c" it runs as a library step, like any op without a kernel)."""

    def __init__(self, log: list, boom: bool = False):
        self.log, self.boom = log, boom

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        self.log.append(1)
        if self.boom:
            raise FloatingPointError("the branch not taken ran")
        return x.copy()


def _truth(value):
    return np.array(value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_match_numpy(backend):
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    f = sn.function([c, x], sn.ifelse(c, sn.exp(x) * 2, sn.log(x) + 1), backend=backend)
    xv = RNG.uniform(0.5, 2.0, 7)
    check(f(_truth(True), xv), np.exp(xv) * 2)
    check(f(_truth(False), xv), np.log(xv) + 1)


@pytest.mark.parametrize("backend", LAZY)
def test_branch_not_taken_never_runs(backend):
    """The else-branch raises if it runs and the then-branch counts its runs: each call
    runs exactly the branch its condition picks (on "c" in the C runner)."""
    then_log, else_log = [], []
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="int64")
    then = _Counted(then_log)(sn.exp(x)) * 3
    other = _Counted(else_log, boom=True)(sn.sin(x))
    f = sn.function([c, x], sn.ifelse(c, then, other), backend=backend)
    xv = RNG.uniform(0.5, 2.0, 5)
    for _ in range(3):
        check(f(np.int64(2), xv), np.exp(xv) * 3)
    assert (len(then_log), len(else_log)) == (3, 0)
    with pytest.raises(sn.SymnbError, match="branch not taken ran"):
        f(np.int64(0), xv)
    assert len(then_log) == 3
    if backend == "c" and f.runner is not None:
        assert f.runner.runs == 3


@pytest.mark.parametrize("backend", LAZY)
def test_an_error_only_the_branch_not_taken_would_raise_fails_no_call(backend):
    """``ifelse(i < n, x[i], 0)`` guards an index, and a product whose inner sizes differ
    sits in the side not taken: each call gives the side taken, as on "py". On "opencl" both
    sides ran (the ifelse was its reference on the host), so the call raised the index's
    IndexError or the tensordot's ValueError."""
    x = sn.tensor("x", shape=(None,), dtype="float64")
    i = sn.tensor("i", shape=(), dtype="int64")
    guarded = sn.ifelse(i < x.shape[0], x[i], sn.constant(np.float64(0.0)))
    f = sn.function([x, i], guarded, backend=backend)
    assert f(np.arange(4.0), np.int64(5)) == 0.0
    assert f(np.arange(4.0), np.int64(2)) == 2.0
    m = sn.tensor("m", shape=(3, None), dtype="float64")
    product = sn.ifelse(sn.sum(m) < 0, sn.tensordot(m, m, axes=1), m @ m.T)
    a = np.arange(12.0).reshape(3, 4)
    check(sn.function([m], product, backend=backend)(a), a @ a.T)
    nested = sn.ifelse(i >= 0, sn.ifelse(i < x.shape[0], x[i] * 2, sn.sum(x)), x[-1])
    g = sn.function([x, i], nested, backend=backend)
    assert [float(g(np.arange(4.0), np.int64(k))) for k in (1, 9, -3)] == [2.0, 6.0, 3.0]


@pytest.mark.parametrize("backend", LAZY)
def test_in_a_loop_a_guarded_index_runs_only_where_it_is_in_range(backend):
    """An ifelse in a scan's step guards ``row[k]``: the steps whose k is out of range take
    the other side, on every backend (a device's loop body plans its own branch)."""
    seq = sn.matrix("seq", dtype="float64")

    def step(row, total):
        k = sn.cast(row[0], "int64")
        return sn.ifelse(k < row.shape[0], total + row[k], total - 1.0)

    totals, _ = sn.scan(step, sequences=seq, outputs_info=sn.constant(np.float64(0.0)))
    f = sn.function([seq], totals, backend=backend)
    check(f(np.array([[1.0, 2.0, 3.0], [5.0, 0.0, 0.0], [2.0, 9.0, 4.0]])), [2.0, 1.0, 5.0])


@pytest.mark.parametrize("backend", LAZY)
def test_plan_nests_branch_only_nodes(backend):
    """A node both branches and the outputs read stays outside; branch-only ones go in."""
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    shared_work = sn.exp(x)
    out = sn.ifelse(c, shared_work * sn.tanh(x), sn.sqrt(x))
    f = sn.function([c, x], [out, shared_work.sum()], backend=backend)
    (branch,) = [s for s in f.linker.plan.steps if isinstance(s, Branch)]
    assert len(branch.then_steps) >= 1 and len(branch.else_steps) >= 1
    inner = {s.node.op.op_name() for s in branch.then_steps + branch.else_steps}
    assert "exp" not in inner and "sqrt" in str(inner)
    if backend == "c":
        assert any(isinstance(s, Launch) for s in branch.else_steps)
    xv = RNG.uniform(0.5, 2.0, 4)
    got, total = f(_truth(False), xv)
    check(got, np.sqrt(xv))
    check(total, np.exp(xv).sum())


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_nested_and_leaf_results(backend):
    """Several outputs, an ifelse inside a branch, a leaf returned as a copy."""
    x = sn.vector("x", dtype="float64")
    a = sn.scalar("a", dtype="bool")
    b = sn.scalar("b", dtype="bool")
    inner = sn.ifelse(b, x * 2, x * 3)
    first, second = sn.ifelse(a, [inner + 1, x], [x - 1, inner])
    f = sn.function([a, b, x], [first, second], backend=backend)
    xv = RNG.uniform(0.5, 2.0, 3)
    for av in (True, False):
        for bv in (True, False):
            inner_v = xv * 2 if bv else xv * 3
            want = (inner_v + 1, xv) if av else (xv - 1, inner_v)
            got = f(_truth(av), _truth(bv), xv)
            check(got[0], want[0])
            check(got[1], want[1])
    got = f(_truth(True), _truth(True), xv)[1]
    assert not np.may_share_memory(got, xv)


def test_python_number_branch_takes_the_dtype():
    x = sn.vector("x", shape=("n",), dtype="float32")
    c = sn.scalar("c", dtype="bool")
    out = sn.ifelse(c, x.sum(), 0.0)
    assert out.type == TensorType("float32", ())


@pytest.mark.parametrize(
    "shapes, want",
    [
        (((None,), (2,)), (None,)),  # unknown beside fixed
        ((("batch",), (5,)), (None,)),  # a name beside a fixed size
        (((sn.dim("n") * 2,), (4,)), (None,)),  # an expression beside a fixed size
        ((("n", 3), ("n", None)), ("n", None)),  # kept where both are the same
    ],
)
def test_a_dim_only_one_branch_fixes_is_unknown(shapes, want):
    c = sn.scalar("c", dtype="bool")
    h, w = (sn.tensor(name, shape=s, dtype="float64") for name, s in zip("hw", shapes))
    assert sn.ifelse(c, h, w).type.shape == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapes_come_from_the_branch_taken(backend):
    """h: f64[?] beside w: f64[2] once gave f64[2]: a 5-element h then had o.shape[0] == 2
    and ones_like(o) of 2 elements."""
    c = sn.scalar("c", dtype="bool")
    h = sn.vector("h", shape=(None,), dtype="float64")
    w = sn.vector("w", shape=(2,), dtype="float64")
    o = sn.ifelse(c, h, w)
    f = sn.function([c, h, w], [o, o.shape[0], sn.mean(o), sn.ones_like(o)], backend=backend)
    hv, wv = RNG.normal(size=5), RNG.normal(size=2)
    for cond, want in ((True, hv), (False, wv)):
        val, n, mean, ones = f(_truth(cond), hv, wv)
        check(val, want)
        assert int(n) == want.shape[0]
        check(mean, want.mean())
        check(ones, np.ones_like(want))


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize(
    "then, else_, dtype, value",  # value: np.where's, the else-branch taken
    [
        (1, 2.5, "float64", 2.5),
        (True, 7, "int64", 7),
        ("x8", 2.5, "float64", 2.5),
        ("x8", 100, "int8", 100),
        ("x32", 2.5, "float32", 2.5),
    ],
)
def test_python_number_branch_keeps_its_value(backend, then, else_, dtype, value):
    c = sn.scalar("c", dtype="bool")
    xs = {"x8": sn.scalar("x8", dtype="int8"), "x32": sn.scalar("x32", dtype="float32")}
    xv = {"x8": np.int8(3), "x32": np.float32(3)}
    out = sn.ifelse(c, xs.get(then, then), else_)
    want = np.where(False, xv.get(then, then), else_)
    assert out.type.dtype == want.dtype == np.dtype(dtype)
    ins = [c, xs[then]] if then in xs else [c]
    got = sn.function(ins, out, backend=backend)(*[_truth(False), xv.get(then)][: len(ins)])
    assert got.dtype == want.dtype and got == value


def test_python_int_beyond_the_partners_dtype_is_refused():
    c = sn.scalar("c", dtype="bool")
    x8 = sn.scalar("x8", dtype="int8")
    with pytest.raises(sn.DTypeError) as info:
        sn.ifelse(c, x8, 300)  # <- the user's line
    message = str(info.value)
    assert "Python integer 300 is out of bounds for int8" in message and "'x8'" in message
    assert "<- the user's line" in message
    with pytest.raises(OverflowError, match="300 out of bounds for int8"):
        np.int8(0) + 300  # NumPy 2's refusal, which ifelse follows
    with pytest.raises(sn.DTypeError, match="-1 is out of bounds for uint8"):
        sn.ifelse(c, -1, sn.scalar("u8", dtype="uint8"))


@pytest.mark.parametrize("cond", [True, False])
def test_gradient_flows_into_the_branch_taken(cond):
    def fn(x, y):
        return sn.ifelse(np.array(cond), sn.sum(sn.sin(x) * y), sn.sum(x**2 * y))

    sn.check_grad(fn, [RNG.normal(size=4), RNG.normal(size=4)])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_values(backend):
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    loss = sn.sum(sn.ifelse(c, sn.exp(x), x**3))
    f = sn.function([c, x], sn.grad(loss, x), backend=backend)
    xv = RNG.uniform(0.5, 2.0, 5)
    check(f(_truth(True), xv), np.exp(xv))
    check(f(_truth(False), xv), 3 * xv**2)


def _guarded_exp(x, i):
    """``exp(x[i])`` where ``0 <= i < len(x)``, else 0: a branch that fails if it runs."""
    inside = (i >= 0) & (i < x.shape[0])
    return sn.ifelse(inside, sn.exp(x[i]) * 3.0, sn.constant(np.float64(0.5)))


def _guarded_exp_grad(xv, iv, scale=1.0):
    want = np.zeros_like(xv)
    if 0 <= iv < len(xv):
        want[iv] = 3.0 * np.exp(xv[iv]) * scale
    return want


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("cost", ["y", "y**2", "sin(y)"])
def test_the_gradient_of_a_branch_not_taken_is_never_computed(backend, cost):
    """The backward of the nodes only a branch reads stays under the branch's condition: with
    the index out of range it would fail (``inc_subtensor`` at ``i``) and it is zero anyway.
    Asked with the cost too (a cost linear or not in the ifelse's value: the forward values of
    the branch the backward reads stay inside one branch, ``ifelses_on_one_condition``)."""
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    y = _guarded_exp(x, i)
    loss = {"y": y, "y**2": y**2, "sin(y)": sn.sin(y)}[cost]
    g = sn.grad(loss, x)
    both = sn.function([x, i], [loss, g], backend=backend)
    alone = sn.function([x, i], g, backend=backend)
    xv = RNG.uniform(-1.0, 1.0, 5)
    for iv in (2, 5, -1, 40):
        yv = 3.0 * np.exp(xv[iv]) if 0 <= iv < 5 else 0.5
        dloss = {"y": 1.0, "y**2": 2 * yv, "sin(y)": np.cos(yv)}[cost]
        value = {"y": yv, "y**2": yv**2, "sin(y)": np.sin(yv)}[cost]
        got_loss, got_grad = both(xv, np.int64(iv))
        check(got_loss, np.float64(value))
        check(got_grad, _guarded_exp_grad(xv, iv, dloss))
        check(alone(xv, np.int64(iv)), _guarded_exp_grad(xv, iv, dloss))


@pytest.mark.parametrize("backend", LAZY)
def test_the_gradient_of_a_branch_not_taken_is_zero_not_nan(backend):
    """``ifelse(s > 0, sqrt(s), 0)`` at 0: the then-branch's derivative is infinite there, and
    a zero gradient times it would be NaN; the branch's backward never runs, so it is 0."""
    s = sn.scalar("s", dtype="float64")
    y = sn.ifelse(s > 0, sn.sqrt(s), sn.constant(np.float64(0.0)))
    f = sn.function([s], sn.grad(y, s), backend=backend)
    check(f(np.float64(0.0)), np.float64(0.0))
    check(f(np.float64(4.0)), np.float64(0.25))
    check(f(np.float64(-1.0)), np.float64(0.0))


@pytest.mark.parametrize("backend", LAZY)
def test_nested_and_else_side_gradients_stay_in_their_branches(backend):
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    low = sn.constant(np.float64(-1.0))
    inner = sn.ifelse(i >= 0, sn.exp(x[i]), low)  # the index read under two conditions
    y = sn.ifelse(i >= x.shape[0], sn.constant(np.float64(0.0)), inner)
    f = sn.function([x, i], [y, sn.grad(y * y, x)], backend=backend)
    xv = RNG.uniform(-1.0, 1.0, 4)
    for iv in (1, 3, 4, 9, -2):
        yv = np.exp(xv[iv]) if 0 <= iv < 4 else (0.0 if iv >= 4 else -1.0)
        want = np.zeros(4)
        if 0 <= iv < 4:
            want[iv] = 2 * yv * np.exp(xv[iv])
        got_y, got_g = f(xv, np.int64(iv))
        check(got_y, np.float64(yv))
        check(got_g, want)


@pytest.mark.parametrize("backend", LAZY)
def test_higher_order_and_forward_mode_through_a_guarded_branch(backend):
    """Jacobians, Hessians, Lop, Rop and a gradient of a gradient of ``exp(x[i]) * x`` taken
    only where ``i`` is in range: their ifelses on the branch's condition each read the
    branch's values; those are computed in the first of them (symnb/core/lazy.py), never
    where the condition is false, and the derivatives are exact where it is true."""
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    v = sn.vector("v", dtype="float64")
    y = sn.ifelse(i < x.shape[0], sn.exp(x[i]) * x, x * 0.5)
    g = sn.grad(sn.sum(y), x)
    built = [
        y,
        sn.Rop(y, x, v),
        sn.Lop(y, x, v),
        sn.jacobian(y, x),
        sn.hessian(sn.sum(y), x),
        sn.grad(sn.sum(g**2), x),
    ]
    f = sn.function([x, i, v], built, backend=backend)
    xv, vv = RNG.uniform(-1.0, 1.0, 3), RNG.normal(size=3)
    for iv in (1, 7):
        if iv < 3:
            e = np.exp(xv[iv])
            jac = e * np.eye(3)
            jac[:, iv] += xv * e
            grad = jac.sum(axis=0)
            hess = np.zeros((3, 3))
            hess[iv, :] += e
            hess[:, iv] += e
            hess[iv, iv] += e * xv.sum()
            value = e * xv
        else:
            jac, hess, value = 0.5 * np.eye(3), np.zeros((3, 3)), 0.5 * xv
            grad = jac.sum(axis=0)
        want = [value, jac @ vv, jac.T @ vv, jac, hess, 2 * hess.T @ grad]
        for got, ref in zip(f(xv, np.int64(iv), vv), want):
            check(got, ref, rtol=1e-12)


@pytest.mark.parametrize("backend", LAZY)
def test_the_gradient_with_respect_to_a_value_only_a_branch_reads(backend):
    """d ifelse(c, h, 0) / d h is 1 where c holds and 0 where it does not, and so is the
    gradient of anything only the branch computes (``t`` under ``h``), through sn.grad,
    sn.Lop and sn.jacobian: inside the branch the walk sends such values gradients exact
    only there, and a requested one is put under the branch's condition."""
    s = sn.scalar("s", dtype="float64")
    t = s * 3.0
    h = sn.exp(t) * 2.0
    y = sn.ifelse(s > 0, h, sn.constant(np.float64(0.0)))
    f = sn.function([s], [y, *sn.grad(y, [h, t])], backend=backend)
    for sv, want in [(-1.0, [0.0, 0.0, 0.0]), (0.5, [2 * np.exp(1.5), 1.0, 2 * np.exp(1.5)])]:
        for got, ref in zip(f(np.float64(sv)), want):
            check(got, np.float64(ref))
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    v = sn.vector("v", dtype="float64")
    hid = sn.tanh(x) * 2.0
    out = sn.ifelse(c, hid * 3.0, x)
    g = sn.function([x, c, v], [sn.Lop(out, hid, v), sn.jacobian(out, hid)], backend=backend)
    xv, vv = RNG.normal(size=2), RNG.normal(size=2)
    for cv in (False, True):
        lop, jac = g(xv, _truth(cv), vv)
        check(lop, 3.0 * vv if cv else np.zeros(2))
        check(jac, 3.0 * np.eye(2) if cv else np.zeros((2, 2)))


def _guarded_values():
    """Values of unknown shape that only a branch guarded by ``i < len(x)`` computes (each
    reads ``x[i]``), with their shapes from w (n,), v (m,) and a (n, m) as NumPy gives them."""
    x, w, v = (sn.vector(name, dtype="float64") for name in "xwv")
    a = sn.matrix("a", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    pick = x[i]
    values = {
        "elementwise": (pick * w, lambda n, m: (n,)),
        "broadcast": (sn.exp(pick * a) + a * w[:, None], lambda n, m: (n, m)),
        "concatenate": (sn.concatenate([w, v]) * pick, lambda n, m: (n + m,)),
        "reduction": (sn.sum(a * pick, axis=0), lambda n, m: (m,)),
        "product": (sn.sin(pick * w) @ a, lambda n, m: (m,)),
    }
    return (x, w, v, a, i), values


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
@pytest.mark.parametrize(
    "form", ["elementwise", "broadcast", "concatenate", "reduction", "product"]
)
def test_the_gradient_with_respect_to_a_branch_value_of_unknown_shape(backend, optimize, form):
    """Where the branch is not taken, the gradient with respect to a value only it computes
    is zeros of the value's shape, read off the values it is computed from (the inputs
    here), not off the value: with ``i`` out of range computing it would fail."""
    inputs, values = _guarded_values()
    x, w, v, a, i = inputs
    h, shape = values[form]
    y = sn.ifelse(i < x.shape[0], sn.sum(sn.sin(h)), sn.sum(w))
    f = sn.function(
        list(inputs), [sn.grad(y, h), sn.Lop(y, h, 1.0)], backend=backend, optimize=optimize
    )
    n, m = 3, 2
    args = [RNG.normal(size=4), RNG.normal(size=n), RNG.normal(size=m), RNG.normal(size=(n, m))]
    for got in f(*args, np.int64(7)):
        check(got, np.zeros(shape(n, m)))
    taken = f(*args, np.int64(1))
    want = {
        "elementwise": lambda xs, ws, vs, as_: xs[1] * ws,
        "broadcast": lambda xs, ws, vs, as_: np.exp(xs[1] * as_) + as_ * ws[:, None],
        "concatenate": lambda xs, ws, vs, as_: np.concatenate([ws, vs]) * xs[1],
        "reduction": lambda xs, ws, vs, as_: np.sum(as_ * xs[1], axis=0),
        "product": lambda xs, ws, vs, as_: np.sin(xs[1] * ws) @ as_,
    }[form](*args)
    for got in taken:
        check(got, np.cos(want))


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
def test_nested_ifelses_and_their_gradient_keep_the_inner_guard(backend, optimize):
    """The forward is ``ifelse(d, ifelse(c, exp(x[i]), 0), 0)`` and the gradient's wrapper
    ``ifelse(d, ifelse(c, ...))``: ``exp(x[i])`` is computed under both conditions, not
    under the outer one alone (the regions agree level by level, symnb/core/lazy.py)."""
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    d = sn.scalar("d", dtype="bool")
    zero = sn.constant(np.float64(0.0))
    y = sn.ifelse(d, sn.ifelse(i < x.shape[0], sn.exp(x[i]), zero), zero)
    cost = sn.exp(y)  # the gradient reads exp(y): no merge of the ifelses helps
    f = sn.function([x, i, d], [cost, sn.grad(cost, x)], backend=backend, optimize=optimize)
    xv = RNG.uniform(-1.0, 1.0, 3)
    for iv, dv in [(1, True), (7, True), (7, False), (1, False)]:
        yv = np.exp(xv[iv]) if dv and iv < 3 else 0.0
        want = np.zeros(3)
        if dv and iv < 3:
            want[iv] = yv * np.exp(yv)
        got_cost, got_grad = f(xv, np.int64(iv), _truth(dv))
        check(got_cost, np.float64(np.exp(yv)))
        check(got_grad, want)


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
def test_a_gradient_alone_keeps_a_nested_guard(backend, optimize):
    """With the gradient alone asked for, the forward ifelse runs inside its gradient's
    wrapper on the same condition, one level deeper than the backward's: the levels that a
    side around them implies are skipped, so the reshape valid only where ``j == 2`` stays
    under ``j != 2``'s else-side (it ran under ``s > -5`` alone)."""
    x = sn.vector("x", dtype="float64")
    w = sn.vector("w", dtype="float64")
    j = sn.scalar("j", dtype="int64")
    s = sn.scalar("s", dtype="float64")
    guarded = sn.reshape(sn.reshape(x, (j, 2)), (-1,)) * 2.0
    y = sn.ifelse(s > -5.0, sn.ifelse(sn.not_equal(j, 2), x, guarded), w)
    f = sn.function([x, w, s, j], sn.grad(sn.sum(y**2), x), backend=backend, optimize=optimize)
    xv, wv = RNG.normal(size=4), RNG.normal(size=4)
    check(f(xv, wv, np.float64(0.0), np.int64(3)), 2 * xv)
    check(f(xv, wv, np.float64(0.0), np.int64(2)), 8 * xv)
    check(f(xv, wv, np.float64(-9.0), np.int64(3)), np.zeros(4))


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
@pytest.mark.parametrize("form", ["value", "operand", "condition"])
def test_a_value_both_sides_of_an_ifelse_nested_on_its_condition_read(backend, optimize, form):
    """``ifelse(c, ifelse(c, ifelse(c, x + 1, e), r), x - 1)`` with ``r`` reading ``e`` (as
    the else-value, an operand, an ifelse's condition): ``e`` is read in the middle ifelse's
    else-side and in the else-side of the ifelse in its then-side, which the planners walk
    first; placed in the middle else-side, ``e`` had no slot when the inner ifelse was
    planned (a bare KeyError with optimize="none", as in the Hessian-vector product through
    a loop below). Neither else-side can run inside the outer then-side: ``e`` never runs."""
    log: list = []
    x = sn.vector("x", dtype="float64")
    c = sn.sum(x) > 0.0
    e = _Counted(log, boom=True)(x * 2.0)
    r = {
        "value": e,
        "operand": e * 3.0,
        "condition": sn.ifelse(sn.sum(e) > 1.0, x * 3.0, x),
    }[form]
    y = sn.ifelse(c, sn.ifelse(c, sn.ifelse(c, x + 1.0, e), r), x - 1.0)
    f = sn.function([x], y, backend=backend, optimize=optimize)
    xv = RNG.uniform(0.5, 1.0, 3)
    check(f(xv), xv + 1.0)
    check(f(-xv), -xv - 1.0)
    assert log == []


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
def test_a_hessian_vector_product_through_a_loop_with_a_branch(backend, optimize):
    """``Rop(grad(cost, h0), h0, v)`` through an RNN whose step holds an ifelse: the backward
    loop's body nests ifelses on the step's condition, their zeros read in two else-sides
    (the test above); it compiles with or without the rewrites and matches central
    differences of the gradient."""
    rng = np.random.default_rng(22)
    xv, wv = rng.standard_normal((6, 3)), rng.standard_normal((3, 3)) * 0.5
    h0v, vv = rng.standard_normal(3), rng.standard_normal(3)
    x = sn.matrix("x", dtype="float64")
    w = sn.matrix("w", dtype="float64")
    h0 = sn.vector("h0", dtype="float64")
    v = sn.vector("v", dtype="float64")

    def step(a, h):
        return sn.ifelse(sn.sum(a) > 0, sn.tanh(a @ w + h), h)

    hs, _ = sn.scan(step, sequences=x, outputs_info=h0)
    g = sn.grad(sn.sum(sn.sin(hs)), h0)
    f = sn.function([x, w, h0, v], sn.Rop(g, h0, v), backend=backend, optimize=optimize)
    fg = sn.function([x, w, h0], g, backend="py")
    eps = 1e-5
    want = (fg(xv, wv, h0v + eps * vv) - fg(xv, wv, h0v - eps * vv)) / (2 * eps)
    check(f(xv, wv, h0v, vv), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
def test_a_value_under_two_conditions_runs_only_where_one_is_taken(backend, optimize):
    """One value read only inside sides with different conditions (written once by the user,
    or two equal ones the merge rewrite made one) runs in each side that reads it, never
    where no side taken needs it: a guarded ``x[i]`` out of range does not fail."""
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    s = sn.scalar("s", dtype="float64")
    ok = (i >= 0) & (i < x.shape[0])
    y1 = sn.ifelse(ok, sn.exp(x[i]), s)
    y2 = sn.ifelse(ok & (s > 0), sn.exp(x[i]) * 3.0, s)  # equal to y1's: merged by "fast"
    shared = sn.exp(x[i] * 2.0)
    z = sn.ifelse(ok, shared, s) + sn.ifelse(ok & (s < 0), shared, s)  # written once
    f = sn.function([x, i, s], [y1 + y2, z], backend=backend, optimize=optimize)
    xv = RNG.uniform(-1.0, 1.0, 4)
    for iv, sv in [(1, 0.5), (1, -0.5), (7, 0.5), (-9, -0.5)]:
        inside = 0 <= iv < 4
        e = np.exp(xv[iv]) if inside else 0.0
        want_y = (e if inside else sv) + (3 * e if inside and sv > 0 else sv)
        e2 = np.exp(2 * xv[iv]) if inside else 0.0
        want_z = (e2 if inside else sv) + (e2 if inside and sv < 0 else sv)
        got_y, got_z = f(xv, np.int64(iv), np.float64(sv))
        check(got_y, np.float64(want_y))
        check(got_z, np.float64(want_z))


@pytest.mark.parametrize("backend", LAZY)
@pytest.mark.parametrize("optimize", ["fast", "none"])
def test_a_print_under_two_conditions_prints_once_per_call(backend, optimize, capsys):
    """An impure node read only inside sides with different conditions is never copied into
    each side (a pure one is): a print_value prints once per call, where both are taken too."""
    x = sn.vector("x", dtype="float64")
    c1 = sn.scalar("c1", dtype="bool")
    c2 = sn.scalar("c2", dtype="bool")
    p = sn.print_value(x * 2.0, "P")
    y1 = sn.ifelse(c1, p.sum(), sn.constant(0.0))
    y2 = sn.ifelse(c2, p.max(), sn.constant(0.0))
    f = sn.function([c1, c2, x], [y1, y2], backend=backend, optimize=optimize)
    cases = [(True, True, (6.0, 4.0)), (True, False, (6.0, 0.0)), (False, True, (0.0, 4.0))]
    for t1, t2, want in cases:
        got = f(_truth(t1), _truth(t2), np.arange(3.0))
        check(got[0], np.float64(want[0]))
        check(got[1], np.float64(want[1]))
        assert capsys.readouterr().out == "P __str__ = [0. 2. 4.]\n", (t1, t2)


def test_a_value_both_sides_of_one_ifelse_read_runs_once():
    """Read by the then- and the else-side of one ifelse and nothing else, a value runs in
    the side taken, once per call (and not at all where the ifelse does not run)."""
    log: list = []
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    d = sn.scalar("d", dtype="bool")
    h = _Counted(log)(x)
    inner = sn.ifelse(c, h * 2.0, h + 1.0)
    f = sn.function([x, c, d], sn.ifelse(d, inner, x), backend="py", optimize="none")
    xv = RNG.normal(size=3)
    for cv, dv, want, runs in [
        (True, True, xv * 2, 1),
        (False, True, xv + 1, 1),
        (True, False, xv, 0),
    ]:
        log.clear()
        check(f(xv, _truth(cv), _truth(dv)), want)
        assert len(log) == runs, (cv, dv, log)


@pytest.mark.parametrize("cond", [True, False])
def test_guarded_gradients_match_finite_differences(cond):
    """The kept-under-the-condition backward is still the gradient: numerically checked on
    both sides, with values of both branches reaching the cost."""

    def fn(x, w):
        c = sn.constant(np.array(cond))
        y = sn.ifelse(c, [sn.sum(sn.tanh(x) * w), x * 2], [sn.sum(w**3), sn.sin(x)])
        return y[0] + sn.sum(y[1] * w)

    sn.check_grad(fn, [RNG.normal(size=4), RNG.normal(size=4)])


def test_ifelses_on_one_condition_become_one():
    """The forward ifelse and the one its gradient keeps the branch's backward under share a
    condition: one Branch step, whose then-side reads the index once; ifelses on one
    condition in different branches of another stay apart (merging them would run the inner
    one where the outer branch is not taken)."""
    x = sn.vector("x", dtype="float64")
    i = sn.scalar("i", dtype="int64")
    y = _guarded_exp(x, i)
    f = sn.function([x, i], [y, sn.grad(y**2, x)], backend="py")
    assert f.rewrites.counts().get("ifelses_on_one_condition") == 1
    branches = [s for s in f.linker.plan.steps if isinstance(s, Branch)]
    assert len(branches) == 1
    c = sn.scalar("c", dtype="bool")
    d = sn.scalar("d", dtype="bool")
    apart = sn.ifelse(d, sn.ifelse(c, sn.exp(x), x), sn.ifelse(c, sn.log(x), x + 1))
    g = sn.function([c, d, x], apart, backend="py")
    assert not g.rewrites.counts().get("ifelses_on_one_condition")
    xv = RNG.uniform(0.5, 2.0, 3)
    for cv, dv, want in [(1, 1, np.exp(xv)), (1, 0, np.log(xv)), (0, 1, xv), (0, 0, xv + 1)]:
        check(g(_truth(bool(cv)), _truth(bool(dv)), xv), want)


def test_errors_name_the_values_and_the_line():
    x = sn.vector("x", shape=("n",), dtype="float32")
    m = sn.matrix("m", dtype="float32")
    y = sn.vector("y", shape=("k",), dtype="float32")
    scalar_needed = r"condition .*bool\(n,\).*must be a scalar.*sn.where"
    with pytest.raises(sn.ShapeError, match=scalar_needed):
        sn.ifelse(x > 0, x, x)
    with pytest.raises(sn.ShapeError) as info:
        sn.ifelse(m, x, x)  # <- the user's line
    assert "<- the user's line" in str(info.value)
    with pytest.raises(sn.DTypeError, match="condition 's'.*boolean or an integer"):
        sn.ifelse(sn.scalar("s", dtype="float32"), x, x)
    with pytest.raises(sn.DTypeError, match="then-value 'x'.*else-value .*different dtypes"):
        sn.ifelse(sn.scalar("c", dtype="bool"), x, x.astype("float64"))
    with pytest.raises(sn.ShapeError, match=r"shapes \(n,\) and \(k,\)"):
        sn.ifelse(sn.scalar("c", dtype="bool"), x, y)
    with pytest.raises(sn.ShapeError, match="different numbers of dims"):
        sn.ifelse(sn.scalar("c", dtype="bool"), x, m)
    with pytest.raises(sn.ShapeError, match="2 values and the else-branch 1"):
        sn.ifelse(sn.scalar("c", dtype="bool"), [x, x], [x])


def test_bool_of_a_variable_points_to_ifelse():
    x = sn.scalar("x")
    with pytest.raises(TypeError, match=r"sn.ifelse\(x > 0"):
        if x > 0:
            pass


@pytest.mark.parametrize("cond", [True, False])
def test_known_condition_is_rewritten_away(cond):
    x = sn.vector("x", dtype="float64")
    f = sn.function([x], sn.ifelse(np.array(cond), sn.exp(x), sn.log(x)), backend="py")
    assert f.rewrites.counts().get("ifelse_of_known_condition") == 1
    assert not any(isinstance(s, Branch) for s in f.linker.plan.steps)
    xv = RNG.uniform(0.5, 2.0, 3)
    check(f(xv), np.exp(xv) if cond else np.log(xv))
    c = sn.scalar("c", dtype="bool")
    g = sn.function([c, x], sn.ifelse(c, x + 1, x + 1), backend="py")
    assert g.rewrites.counts().get("ifelse_of_equal_branches") == 1


@pytest.mark.parametrize("backend", LAZY)
def test_in_a_loop_a_condition_from_outside_the_loop_picks_the_side(backend):
    """A loop body's inputs arrive on the device on a device backend: a condition passed in
    as a non-sequence was read as the device array object, always true, so "opencl" took
    the then-side at every step."""
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")

    def step(row, acc, flag):
        return acc + sn.ifelse(flag, row * 2.0, row - 1.0)

    out, _ = sn.scan(step, sequences=[x], outputs_info=[np.float64(0.0)], non_sequences=[c])
    f = sn.function([x, c], out, backend=backend)
    xv = RNG.uniform(-1.0, 1.0, 4)
    check(f(xv, _truth(True)), np.cumsum(xv * 2.0))
    check(f(xv, _truth(False)), np.cumsum(xv - 1.0))


@pytest.mark.parametrize("backend", LAZY)
def test_profile_times_the_steps_of_the_branch_taken(backend):
    x = sn.vector("x", dtype="float64")
    c = sn.scalar("c", dtype="bool")
    f = sn.function([c, x], sn.ifelse(c, sn.exp(x), sn.log(x)), backend=backend)
    _, records = f.linker.run_profiled([_truth(False), RNG.uniform(0.5, 2.0, 3)])
    steps = [record for record in records if record[3] != "transfer"]  # (a device's copies)
    assert [record[0].op.op_name() for record in steps] == ["log", "ifelse"]


@pytest.mark.parametrize("backend", LAZY)
def test_in_a_loop_a_branch_runs_only_at_the_steps_that_take_it(backend):
    """Work a branch reads that no step changes stays in the loop (moving it out would run
    it on every call, taken or not); work every step reads still moves out."""
    then_log, never_log = [], []
    x = sn.vector("x", dtype="float64")
    w = sn.vector("w", dtype="float64")

    def step(a):
        then = sn.sum(_Counted(then_log)(w * 2.0)) + a
        never = sn.sum(_Counted(never_log, boom=True)(w)) + a  # a > 100 at no step
        return sn.ifelse(a > 0, then, sn.ifelse(a > 100, never, a - 1)) + sn.sum(sn.exp(w))

    ys, _ = sn.scan(step, sequences=x)
    inner = [type(n.op).__name__ for n in ys.owner.op.loop.order()]
    assert inner.count("_Counted") == 2 and "Exp" not in inner, inner
    f = sn.function([x, w], ys, backend=backend)
    xv, wv = np.array([1.0, -1.0, 2.0, -3.0]), np.array([0.5, 0.25])
    want = np.where(xv > 0, 2 * wv.sum() + xv, xv - 1) + np.exp(wv).sum()
    check(f(xv, wv), want)
    assert (len(then_log), len(never_log)) == (2, 0)


@pytest.mark.parametrize("backend", LAZY)
def test_an_if_elif_ladder_deeper_than_the_recursion_limit(backend):
    """Each else-side holds the previous ifelse: the branches nest 1500 deep, in the plan,
    the C runner's records, each call and a profiled call (docs/reliability.md: graphs of
    any depth), where a recursion per level would raise RecursionError."""
    n = 1500
    c = sn.scalar("c", dtype="bool")
    x = sn.vector("x", dtype="float64")
    y = x
    for _ in range(n):  # (one constant: a literal per link would compile 1500 kernels)
        y = sn.ifelse(c, x * 2.0, y + 1.0)
    f = sn.function([c, x], y, backend=backend)
    xv = RNG.uniform(-1.0, 1.0, 3)
    check(f(True, xv), xv * 2.0)
    check(f(False, xv), xv + n)
    outputs, records = f.linker.run_profiled([_truth(False), xv])
    check(outputs[0], xv + n)
    names = [record[0].op.op_name() for record in records if record[3] != "transfer"]
    assert names[-1] == "ifelse" and names.count("ifelse") == n and names.count("add") == n
