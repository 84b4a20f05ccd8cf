"""Fusion into Composite nodes and in-place variants: what they build and that values hold."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.ops.composite import Composite
from symnb.ops.inplace import ElemwiseInplace
from symnb.opt.rules.fuse import MAX_INPUTS
from tests.opt.util import assert_same_values, fired, ops_of

FUSE = {"include": ["fuse"]}
INPLACE = {"include": ["inplace"]}


def test_a_chain_of_elementwise_ops_becomes_one_node(rng):
    x, b = sn.matrix("x"), sn.vector("b")
    expr = sn.tanh(x * 2.0 + b) * sn.exp(-x)
    f = assert_same_values([x, b], expr, [rng.normal(size=(3, 4)), rng.normal(size=4)], FUSE)
    (node,) = f.graph.toposort()
    assert isinstance(node.op, Composite) and len(node.op.program) == 6
    assert ("const", 2.0, "float64") in node.op.program[0][1]  # weak scalars stay weak


def test_fusion_takes_leading_broadcasts_along(rng):
    x, b = sn.matrix("x"), sn.vector("b")
    expr = sn.exp(x) + sn.expand_dims(sn.sin(b), 0)
    f = assert_same_values([x, b], expr, [rng.normal(size=(3, 4)), rng.normal(size=4)], FUSE)
    assert ops_of(f) == ["composite"]


def test_a_value_used_twice_is_not_fused_into_both(rng):
    x = sn.matrix("x")
    e = sn.exp(x)
    exprs = [sn.sin(e) * 2.0, sn.cos(e) + 1.0]
    f = assert_same_values([x], exprs, [rng.normal(size=(2, 2))], FUSE)
    assert sorted(ops_of(f)) == ["composite", "composite", "exp"]
    assert fired([x], sn.exp(x), FUSE) == {}  # one op: nothing to fuse


def test_a_value_read_twice_inside_one_group_is_one_temporary_of_its_kernel(rng):
    """``s * (1 - s)`` (a sigmoid's derivative), ``tanh(h * w + sin(h))`` layer on layer: the
    value read twice joins the group once every reader has, and is computed once."""
    x = sn.matrix("x")
    s = sn.sigmoid(x)
    h = x
    for w in (1.5, 2.5, 3.5):
        h = sn.tanh(h * w + sn.sin(h))
    e = sn.exp(x)
    for expr, ops in [(s * (1 - s), 3), (h, 12), (e * e + x, 3)]:
        f = assert_same_values([x], expr, [rng.normal(size=(3, 4))], FUSE)
        (node,) = f.graph.toposort()
        assert isinstance(node.op, Composite) and len(node.op.program) == ops, node.op
        names = [type(op).__name__ for op, _ in node.op.program]
        assert names.count("Sigmoid") <= 1 and names.count("Exp") <= 1


def test_fusion_stops_at_non_elementwise_ops(rng):
    x = sn.matrix("x")
    expr = sn.exp(sn.sum(sn.sin(x) * 2.0, axis=1)) + 1.0
    f = assert_same_values([x], expr, [rng.normal(size=(2, 3))], FUSE)
    assert ops_of(f) == ["composite", "sum", "composite"]


def test_inplace_reuses_dead_intermediates_only(rng):
    x = sn.matrix("x")
    value = rng.normal(size=(2, 3))
    kept = value.copy()
    f = assert_same_values([x], sn.tanh(sn.exp(x)), [value], INPLACE)
    assert ops_of(f) == ["exp", "elemwise_inplace"]
    np.testing.assert_array_equal(value, kept)  # the caller's array is untouched
    assert fired([x], sn.exp(x), INPLACE) == {}  # x is a graph input


def test_inplace_near_misses():
    x = sn.matrix("x")
    e = sn.exp(x)
    assert fired([x], [sn.tanh(e), e], INPLACE) == {}  # e is an output too
    assert fired([x], sn.tanh(e) + e, INPLACE) == {"elemwise_inplace": 1}  # only the add
    i = sn.tensor("i", shape=(None, None), dtype="int64")
    assert fired([i], sn.exp(i * 2), INPLACE) == {}  # float result, int buffer
    w = sn.shared(np.ones((2, 2)), name="w")
    assert fired([], sn.exp(w.T), INPLACE) == {}  # a view of a shared value


def test_inplace_falls_back_when_the_buffer_is_too_small(rng):
    a, b = sn.matrix("a"), sn.matrix("b")
    values = [rng.normal(size=(1, 3)), rng.normal(size=(2, 3))]  # exp(a) is broadcast
    f = assert_same_values([a, b], sn.exp(a) + b, values, INPLACE)
    assert any(isinstance(n.op, ElemwiseInplace) for n in f.graph.toposort())


def test_shared_values_are_never_overwritten(rng):
    w = sn.shared(rng.normal(size=(3, 3)), name="w")
    before = w.get_value()
    x = sn.matrix("x")
    f = sn.function([x], sn.tanh(x @ w + 1.0) * 3.0, backend="py")
    f(rng.normal(size=(2, 3)))
    np.testing.assert_array_equal(w.get_value(), before)


def test_a_fused_kernel_takes_at_most_max_inputs_and_the_runner_takes_the_plan(rng):
    """80 vectors summed: every composite has at most MAX_INPUTS inputs (runner.c takes 64
    operands a step; more made it decline the whole plan, every call then in Python)."""
    xs = [sn.vector(f"x{i}") for i in range(80)]
    total = xs[0]
    for i, x in enumerate(xs[1:]):
        total = total + x * float(i % 3 + 1)
    values = [rng.normal(size=5) for _ in xs]
    f = assert_same_values(xs, total, values, FUSE)
    composites = [n for n in f.graph.toposort() if isinstance(n.op, Composite)]
    assert len(composites) >= 3
    assert max(len(n.inputs) for n in composites) <= MAX_INPUTS
    assert sum(len(n.op.program) for n in composites) == 79 + 79  # every add and mul fused
    c = sn.function(xs, total, backend="c")
    if c.runner is not None:
        assert c.runner(*values) is not None  # runner.c ran the call itself
    want = values[0] + sum(v * float(i % 3 + 1) for i, v in enumerate(values[1:]))
    np.testing.assert_allclose(c(*values), want, rtol=1e-12)


def test_a_fused_node_broadcasts_named_dims_in_the_order_its_ops_did(rng):
    """``clip(a, b, exp(c))`` with dims d4, 4 and d1 builds (4 pins both names), but one
    broadcast of the fused node's inputs in their own order (c, a, b) met d1 against d4
    first, two names, and the fuse rule raised a ShapeError (found by ``make fuzz``)."""
    a, b = sn.tensor("a", shape=("d4",)), sn.tensor("b", shape=(4,))
    c = sn.tensor("c", shape=("d1",))
    values = [rng.normal(size=4), rng.normal(size=4), rng.normal(size=1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sn.ShapeWarning)  # (the names pinned to 4)
        exprs = [sn.clip(a, b, sn.exp(c)), sn.exp(a) * (b + sn.exp(c))]
    for expr in exprs:
        assert expr.type.shape == (4,)
        f = assert_same_values([a, b, c], expr, values, FUSE)
        assert ops_of(f) == ["composite"] and f.graph.outputs[0].type.shape == (4,)
    with np.testing.assert_raises(sn.ShapeError):  # what does not build still fails
        Composite([(sn.add, (("in", 0), ("in", 1)))], "float64", 2)(a, c)


def _picks_gradient(n):
    x = sn.vector("x")
    cost = sn.sin(x[0])
    for k in range(1, n):
        cost = cost + sn.sin(x[k]) * (k + 1)
    return x, sn.grad(cost, x)


def test_the_gradient_of_many_picks_increases_one_array_in_place(rng, backend):
    """n picks x[i]: their gradients, each an inc_subtensor of one array of zeros, are one
    array increased in turn (increments_of_one_zeros) in its own buffer, the zeros' alloc
    included (inc_subtensor_inplace): O(n) work, where n arrays of zeros were summed
    (O(n^2))."""
    from symnb.ops.index import IncSubtensor
    from symnb.ops.inplace import IncSubtensorInplace

    n = 12
    x, g = _picks_gradient(n)
    value = rng.normal(size=n + 3)
    want = np.concatenate([np.cos(value[:n]) * np.r_[1, np.arange(2, n + 1)], np.zeros(3)])
    f = sn.function([x], g, backend=backend)
    for _ in range(2):  # a buffer written in place does not leak into the next call
        np.testing.assert_allclose(f(value), want, rtol=1e-12)
    counts = f.rewrites.counts()
    assert counts["increments_of_one_zeros"] == n - 1
    assert counts["inc_subtensor_inplace"] == n
    incs = [node.op for node in f.graph.toposort() if isinstance(node.op, IncSubtensor)]
    assert len(incs) == n and all(isinstance(op, IncSubtensorInplace) for op in incs)
    assert "add" not in ops_of(f) and "composite" not in ops_of(f)[-1:]


def test_increments_of_other_arrays_are_added_as_before(rng):
    """Only increments of one array of zeros join: a term of another base, a set, or
    different zeros are added as written (the values say they stay right)."""
    x, y = sn.vector("x"), sn.vector("y")
    zeros = sn.zeros_like(x)
    other = sn.zeros_like(y)
    exprs = [
        sn.inc_subtensor(zeros[1], x[0]) + sn.inc_subtensor(y[2], x[3]),
        sn.inc_subtensor(zeros[1], x[0]) + sn.set_subtensor(zeros[2], x[3]),
        sn.inc_subtensor(zeros[1], x[0]) + sn.inc_subtensor(other[2], x[3]),
        sn.inc_subtensor(zeros[1], x[0]) + sn.inc_subtensor(zeros[1], x[2]),
    ]
    values = [rng.normal(size=5), rng.normal(size=5)]
    f = assert_same_values([x, y], exprs, values)
    assert f.rewrites.counts().get("increments_of_one_zeros") == 1  # the last one only


def test_an_increment_in_place_never_writes_an_input_or_a_value_read_again(rng, backend):
    """x (an input) and y (read by two nodes, and an output) keep their values; the chain
    on z, a fresh product read once, is written in place."""
    x = sn.vector("x")
    y = x * 2.0
    z = sn.set_subtensor((x * 3.0)[0], 5.0)
    chain = sn.inc_subtensor(z[1], 7.0)
    kept = sn.inc_subtensor(y[2], 1.0)
    f = sn.function([x], [chain, kept, y, sn.inc_subtensor(x[0], 1.0)], backend=backend)
    value = rng.normal(size=4)
    before = value.copy()
    for _ in range(2):
        got = f(value)
        want_chain = value * 3.0
        want_chain[0], want_chain[1] = 5.0, want_chain[1] + 7.0
        want_kept = value * 2.0
        want_kept[2] += 1.0
        want_x = value.copy()
        want_x[0] += 1.0
        for g, w in zip(got, [want_chain, want_kept, value * 2.0, want_x]):
            np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_array_equal(value, before)


def test_an_embeddings_gradient_reads_no_forward_value_for_its_shape(rng, backend):
    """grad(sum(square(W[idx])), W): broadcast_like read square(W[idx]) only for its shape
    (shape_read_off_an_input reads W[idx]'s), and the gradient's zeros are increased in
    place (an alloc is a fresh buffer): one W-sized array, not two."""
    from symnb.ops.inplace import IncSubtensorInplace
    from symnb.opt.rules.fold import MAX_FOLDED_ELEMENTS

    table = rng.normal(size=(MAX_FOLDED_ELEMENTS // 4 + 1, 4))  # its zeros are not folded
    W = sn.shared(table, name="W")
    idx = sn.vector("idx", dtype="int64")
    f = sn.function([idx], sn.grad(sn.sum(sn.square(W[idx])), W), backend=backend)
    picks = np.array([3, 7, 3, len(table) - 1])
    want = np.zeros_like(table)
    np.add.at(want, picks, 2 * table[picks])
    for _ in range(2):
        np.testing.assert_allclose(f(picks), want, rtol=1e-12)
    names = ops_of(f)
    assert "square" not in names and not any("square" in str(n.op) for n in f.graph.toposort())
    assert any(isinstance(n.op, IncSubtensorInplace) for n in f.graph.toposort())
    assert f.rewrites.counts()["shape_read_off_an_input"] >= 1


@pytest.mark.parametrize("shape", [(None,), (2,)], ids=["unknown", "fixed"])
def test_a_gradient_reads_no_print_or_sort_for_its_shape(backend, shape, capsys):
    """grad(sum(print_value(x) * 3), x) is 3s: the seed's broadcast_like read the print only
    for its shape, so every call printed (Theano's optimiser read Print's shape off x and
    printed nothing); the same kept a sort alive. shape_read_off_an_input reads x's shape
    through ops whose result has their input's shape (``keeps_shape``)."""
    x = sn.tensor("x", shape=shape)
    printed = sn.grad(sn.sum(sn.print_value(x, "pp") * 3), x)
    sorted_ = sn.grad(sn.sum(sn.flip(sn.sort(x), 0) * 3), x)
    f = sn.function([x], [printed, sorted_], backend=backend)
    capsys.readouterr()
    for got in f(np.array([2.0, 1.0])):
        np.testing.assert_array_equal(got, [3.0, 3.0])
    assert capsys.readouterr().out == ""
    assert not {"print_value", "sort"} & set(ops_of(f))  # (a flip of the gradient stays)
    assert f.rewrites.counts()["shape_read_off_an_input"] >= 1
    used = sn.function([x], sn.grad(sn.sum(sn.print_value(x, "pp") ** 2), x), backend=backend)
    capsys.readouterr()
    np.testing.assert_array_equal(used(np.array([2.0, 1.0])), [4.0, 2.0])
    assert capsys.readouterr().out == "pp __str__ = [2. 1.]\n"  # its value read: printed


def _finite_differences(cost, values, k, eps=1e-6):
    """The central differences of ``cost`` (NumPy arrays -> a number) in ``values[k]``."""
    out = np.zeros_like(values[k])
    for i in np.ndindex(out.shape):
        up, down = [v.copy() for v in values], [v.copy() for v in values]
        up[k][i] += eps
        down[k][i] -= eps
        out[i] = (cost(*up) - cost(*down)) / (2 * eps)
    return out


def _nodes_reading(f, op_name, *inputs):
    """The nodes of f's graph of op ``op_name`` reading exactly ``inputs`` (by name)."""
    names = [v.name for v in inputs]
    return [
        n
        for n in f.graph.toposort()
        if type(n.op).op_name() == op_name and [v.name for v in n.inputs] == names
    ]


def test_a_gradient_computes_no_matmul_for_its_shape(rng, backend):
    """grad(sum(A @ B), A) is ones((m, n)) @ B.T: A @ B was computed for its shape alone
    (shape_computed_from_inputs reads it off A's and B's shapes); length-1 dims and an
    empty inner axis included, and the values are the finite differences'."""
    A, B = sn.matrix("A"), sn.matrix("B")
    f = sn.function([A, B], sn.grad(sn.sum(A @ B), A), backend=backend)
    assert not _nodes_reading(f, "matmul", A, B)
    assert f.rewrites.counts()["shape_computed_from_inputs"] == 1
    for m, k, n in [(3, 4, 5), (3, 1, 5), (1, 1, 1), (4, 3, 1), (1, 2, 1), (2, 0, 3)]:
        a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
        np.testing.assert_allclose(f(a, b), np.ones((m, n)) @ b.T, rtol=1e-12)
        if k:
            numeric = _finite_differences(lambda x, y: np.sum(x @ y), [a, b], 0)
            np.testing.assert_allclose(f(a, b), numeric, rtol=1e-6, atol=1e-8)


def test_a_gradient_whose_matmul_is_dropped_still_refuses_inner_dims_that_differ(backend):
    """The dropped matmul's error is the shape's: the call raises, naming both shapes and
    the line of the matmul, where it returned a (3, 2) gradient of a (3, 4) A."""
    A, B = sn.matrix("A"), sn.matrix("B")
    Y = A @ B  # the line both errors name
    grad = sn.grad(sn.sum(Y), A)
    shape = sn.shape(Y)
    line = next(n for n, text in enumerate(open(__file__), 1) if "# the line both" in text)
    for out in (grad, shape):  # (the rewrite's nodes took the grad's or the shape's line)
        f = sn.function([A, B], out, backend=backend)
        with pytest.raises(sn.SymnbError, match=r"inner dims differ: \(3, 4\) @ \(5, 2\)") as err:
            f(np.ones((3, 4)), np.ones((5, 2)))
        assert f"test_fuse_inplace.py, line {line}: Y = A @ B" in str(err.value)


def test_gradients_compute_no_reduction_transpose_or_tensordot_for_a_shape(rng, backend):
    """A sum over an axis, a transpose of a matmul (its sum_to_like too) and a tensordot,
    read only for their shapes by the gradient, are not computed."""
    X, A, B = sn.matrix("X"), sn.matrix("A"), sn.matrix("B")
    f = sn.function([X], sn.grad(sn.sum(sn.sum(X, axis=1) * 3.0), X), backend=backend)
    assert "sum" not in ops_of(f)
    xv = rng.normal(size=(4, 1))
    np.testing.assert_allclose(f(xv), np.full((4, 1), 3.0), rtol=1e-12)
    g = sn.function([A, B], sn.grad(sn.sum((A @ B).T * 2.0), A), backend=backend)
    t = sn.function([A, B], sn.grad(sn.sum(sn.tensordot(A, B, axes=1)), B), backend=backend)
    assert not _nodes_reading(g, "matmul", A, B) and not _nodes_reading(t, "tensordot", A, B)
    # (the transpose's sum_to_like sums nothing: g is broadcast to its shape; no int8 like)
    assert "sum_to_like" not in ops_of(g)
    for m, k, n in [(3, 4, 5), (3, 1, 5), (1, 1, 1), (1, 4, 1)]:
        a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
        np.testing.assert_allclose(g(a, b), np.full((m, n), 2.0) @ b.T, rtol=1e-12)
        np.testing.assert_allclose(t(a, b), a.T @ np.ones((m, n)), rtol=1e-12)
        numeric = _finite_differences(lambda x, y: np.sum((x @ y).T * 2.0), [a, b], 0)
        np.testing.assert_allclose(g(a, b), numeric, rtol=1e-6, atol=1e-8)


def test_a_convolutions_gradient_computes_no_convolution_for_its_shape(rng, backend):
    """grad(sum(conv2d(x, w)), [x, w]) read the convolution only for its shape; it is
    computed from x's and w's (padding and strides included), and a call whose channels
    differ still raises."""
    x = sn.tensor("x", shape=(None, None, None, None))
    w = sn.tensor("w", shape=(None, None, 3, 3))
    for options in [{}, {"padding": "same"}, {"stride": 2}]:
        cost = sn.sum(sn.conv2d(x, w, **options))
        f = sn.function([x, w], sn.grad(cost, [x, w]), backend=backend)
        want = sn.function([x, w], sn.grad(cost, [x, w]), backend="py", optimize="none")
        assert "conv2d" not in ops_of(f)
        for xs, ws in [((2, 3, 7, 6), (4, 3, 3, 3)), ((1, 1, 3, 3), (1, 1, 3, 3))]:
            xv, wv = rng.normal(size=xs), rng.normal(size=ws)
            for got, expected in zip(f(xv, wv), want(xv, wv)):
                np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        with pytest.raises(sn.SymnbError, match=r"conv2d: the input of shape \(1, 2, 5, 5\)"):
            f(np.ones((1, 2, 5, 5)), np.ones((1, 3, 3, 3)))


def test_reshape_like_and_sum_to_like_of_a_matmul_read_its_shape_off_the_operands(rng, backend):
    """reshape_like(g, A @ B) is a reshape to the computed shape's entries, sum_to_like(G,
    A @ B) reads an int8 alloc of it: neither computes the matmul (a length-1 like's axis
    is summed over)."""
    from symnb.ops.broadcast import SumToLike
    from symnb.ops.shape import ReshapeLike

    A, B, g = sn.matrix("A"), sn.matrix("B"), sn.vector("g")
    G = sn.tensor("G", shape=(None, None, None))
    f = sn.function([g, A, B], ReshapeLike()(g, A @ B), backend=backend)
    h = sn.function([G, A, B], SumToLike()(G, A @ B), backend=backend)
    assert not _nodes_reading(f, "matmul", A, B) and not _nodes_reading(h, "matmul", A, B)
    a, b, gv = rng.normal(size=(3, 2)), rng.normal(size=(2, 4)), rng.normal(size=12)
    np.testing.assert_array_equal(f(gv, a, b), gv.reshape(3, 4))
    for n in (4, 1):
        Gv = rng.normal(size=(5, 3, n))
        np.testing.assert_allclose(h(Gv, a, rng.normal(size=(2, n))), Gv.sum(0), rtol=1e-12)
    Gv = rng.normal(size=(5, 3, 4))
    np.testing.assert_allclose(h(Gv, a, rng.normal(size=(2, 1))), Gv.sum((0, 2))[:, None])


def test_the_shape_of_a_matmul_is_computed_from_its_operands_shapes(rng, backend):
    """shape(A @ B), alone an output, reads A's and B's shapes (batch axes broadcast)."""
    A, B = sn.tensor("A", shape=(None, None, None)), sn.matrix("B")
    f = sn.function([A, B], (A @ B).shape, backend=backend)
    assert not _nodes_reading(f, "matmul", A, B)
    np.testing.assert_array_equal(f(np.ones((2, 3, 4)), np.ones((4, 1))), [2, 3, 1])
    with pytest.raises(sn.SymnbError, match="inner dims differ"):
        f(np.ones((2, 3, 4)), np.ones((3, 1)))


def test_a_shape_is_read_off_an_operand_only_where_nothing_broadcasts_it(rng, backend):
    """x + y's shape is not x's where y may broadcast x larger (dims unknown when built): a
    length-1 x and a length-5 y give a length-5 gradient of y and a 1 of x."""
    x, y = sn.vector("x"), sn.vector("y")
    cost = sn.sum(sn.exp(x + y))
    f = sn.function([x, y], sn.grad(cost, [x, y]), backend=backend)
    for xs, ys in [(1, 5), (5, 1), (5, 5)]:
        xv, yv = rng.normal(size=xs), rng.normal(size=ys)
        e = np.exp(xv + yv)
        gx, gy = f(xv, yv)
        np.testing.assert_allclose(gx, e.sum() if xs == 1 else e, rtol=1e-12)
        np.testing.assert_allclose(gy, e.sum() if ys == 1 else e, rtol=1e-12)


def test_the_gradient_of_take_along_axis_adds_into_its_zeros(rng, backend):
    """inc_along_axis(zeros, i, g), the gradient of take_along_axis, adds in place into the
    zeros' buffer (inc_along_axis_inplace): one array of x's size a call, not two; repeated
    indices accumulate, and a second call starts from zeros again."""
    from symnb.ops.inplace import IncAlongAxisInplace

    x = sn.matrix("x")
    i = sn.matrix("i", dtype="int64")
    f = sn.function([x, i], sn.grad(sn.sum(sn.take_along_axis(x, i, 1) ** 2), x), backend=backend)
    xv, iv = rng.normal(size=(3, 5)), np.array([[0, 0], [4, 1], [2, 2]])
    want = np.zeros_like(xv)
    for r in range(3):
        for c in iv[r]:
            want[r, c] += 2 * xv[r, c]
    for _ in range(2):
        np.testing.assert_allclose(f(xv, iv), want, rtol=1e-12)
    assert any(isinstance(n.op, IncAlongAxisInplace) for n in f.graph.toposort())


def test_in_place_variants_are_named_after_their_op():
    """The text form names an in-place update by its op and ``_inplace``, once."""
    from symnb.ops.inplace import IncAlongAxisInplace, IncSubtensorInplace

    assert str(IncAlongAxisInplace(1)) == "inc_along_axis[axis=1]_inplace"
    assert str(IncSubtensorInplace((("int", 0),), False)) == "inc_subtensor[0]_inplace"
