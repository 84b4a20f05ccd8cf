"""Near misses of the rewrite rules: graphs one attribute away from what a rule rewrites (the
axis, keepdims, a dtype, a second client of a value the rule would absorb), on square shapes
so that a wrong rewrite keeps every shape and only the values tell. Each is compiled with and
without rewrites and must give the same values; the exact matches beside them must fire the
rule, so the near misses are not missed for a trivial reason."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from symnb.ops.elemwise import Exp
from symnb.ops.nnet import LogSoftmax, SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad
from symnb.ops.take import IncAlongAxis
from tests.opt.util import assert_same_values, compile_pair

N = 5
RNG = np.random.default_rng(35)


def _x(shape=(N, N)):
    return RNG.normal(scale=2.0, size=shape)


def _labels(rows=N):
    return RNG.integers(0, N, size=rows)


def _fused(f) -> dict:
    """op name -> count in the optimised graph."""
    counts: dict = {}
    for node in f.graph.toposort():
        name = type(node.op).op_name()
        counts[name] = counts.get(name, 0) + 1
    return counts


def _fired(f, name) -> int:
    return f.rewrites.counts().get(name, 0)


# -- the fused softmax cross-entropy ---------------------------------------------------------
#: (softmax axis, crossentropy axis, whether the fused op may take them)
XENT_AXES = [(1, 1, True), (0, 0, True), (0, 1, False), (1, 0, False), (-1, 1, True)]


@pytest.mark.parametrize("sm_axis, ce_axis, fuses", XENT_AXES)
def test_crossentropy_of_a_softmax_along_another_axis(sm_axis, ce_axis, fuses):
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    loss = sn.categorical_crossentropy(sn.softmax(x, axis=sm_axis), y, axis=ce_axis)
    f = assert_same_values([x, y], loss, [_x(), _labels()], rtol=1e-12)
    assert bool(_fired(f, "softmax_crossentropy_fused")) == fuses


@pytest.mark.parametrize("sm_axis, ce_axis, fuses", XENT_AXES)
def test_gradient_of_crossentropy_along_another_axis(sm_axis, ce_axis, fuses):
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    w = sn.vector("w", shape=(N,))
    loss = sn.categorical_crossentropy(sn.softmax(x, axis=sm_axis), y, axis=ce_axis)
    g = sn.grad(sn.sum(loss * w), x)
    f = assert_same_values([x, y, w], [loss, g], [_x(), _labels(), _x((N,))], rtol=1e-10)
    assert bool(_fired(f, "softmax_crossentropy_grad_fused")) == fuses


@pytest.mark.parametrize("axis", [1, 2])
def test_crossentropy_of_three_dimensional_logits(axis):
    x = sn.tensor("x", shape=(3, N, N))
    y = sn.tensor("y", shape=(3, N), dtype="int64")
    loss = sn.categorical_crossentropy(sn.softmax(x, axis=axis), y, axis=axis)
    other = sn.categorical_crossentropy(sn.softmax(x, axis=3 - axis), y, axis=axis)
    g = sn.grad(sn.sum(loss) + sn.sum(other), x)
    values = [_x((3, N, N)), RNG.integers(0, N, size=(3, N))]
    assert_same_values([x, y], [loss, other, g], values, rtol=1e-10)


def _picked(log_p, labels, take_axis, expand_axis, drop_axis):
    index = sn.expand_dims(labels, expand_axis)
    return -sn.squeeze(sn.take_along_axis(log_p, index, take_axis), drop_axis)


@pytest.mark.parametrize("ls_axis, take_axis", [(1, 1), (0, 0), (0, 1), (1, 0)])
def test_picked_log_softmax_by_hand(ls_axis, take_axis):
    """-log_softmax(x)[labels] written out; fused only when every axis agrees."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    loss = _picked(sn.log_softmax(x, axis=ls_axis), y, take_axis, take_axis, take_axis)
    f = assert_same_values([x, y], loss, [_x(), _labels()], rtol=1e-12)
    assert bool(_fired(f, "softmax_crossentropy_fused")) == (ls_axis == take_axis)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_labels_of_every_width_fuse(dtype):
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype=dtype)
    loss = sn.categorical_crossentropy(sn.softmax(x), y)
    g = sn.grad(sn.sum(loss), x)
    values = [_x(), _labels().astype(dtype)]
    f = assert_same_values([x, y], [loss, g], values, rtol=1e-10)
    assert _fired(f, "softmax_crossentropy_fused") and _fired(f, "softmax_crossentropy_grad_fused")


def test_float32_logits_with_float64_losses_are_not_fused():
    """The loss in another dtype than the logits (a cast between): no fused op of the
    logits' dtype stands in for it."""
    x, y = sn.matrix("x", shape=(N, N), dtype="float32"), sn.vector("y", shape=(N,), dtype="int64")
    loss = -sn.squeeze(
        sn.take_along_axis(sn.cast(sn.log_softmax(x), "float64"), sn.expand_dims(y, 1), 1), 1
    )
    assert_same_values([x, y], loss, [_x().astype("float32"), _labels()], rtol=1e-6)


def test_softmax_with_a_second_client_is_shared_by_the_fused_ops():
    """The softmax is also an output (a second client): values agree, and one fused op
    gives the losses, the gradient's softmax and the output."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    p = sn.softmax(x)
    loss = sn.mean(sn.categorical_crossentropy(p, y))
    g = sn.grad(loss, x)
    f = assert_same_values([x, y], [loss, g, p, sn.sum(p * p)], [_x(), _labels()], rtol=1e-10)
    assert _fused(f).get(SoftmaxCrossEntropy.op_name(), 0) == 1


def test_two_label_vectors_get_two_fused_ops():
    """Two losses of one softmax with different labels: one fused op each, never one
    reused for the other's labels."""
    x = sn.matrix("x", shape=(N, N))
    y, z = (sn.vector(n, shape=(N,), dtype="int64") for n in "yz")
    p = sn.softmax(x)
    la, lb = sn.categorical_crossentropy(p, y), sn.categorical_crossentropy(p, z)
    g = sn.grad(sn.sum(la) + 2.0 * sn.sum(lb), x)
    f = assert_same_values([x, y, z], [la, lb, g], [_x(), _labels(), _labels()], rtol=1e-10)
    assert _fused(f).get(SoftmaxCrossEntropy.op_name(), 0) == 2


def _scatter_grad(x, y, base, scatter_axis, sum_axis, keepdims, softmax_of):
    """``h - softmax(x) * sum(h)`` with h the scatter of -1s at the labels into ``base``."""
    index = sn.expand_dims(y, 1)
    h = IncAlongAxis(scatter_axis)(base, index, sn.expand_dims(-sn.ones_like(y, "float64"), 1))
    return h - softmax_of(x) * sn.sum(h, axis=sum_axis, keepdims=keepdims)


GRAD_FORMS = {
    "exact": dict(scatter_axis=1, sum_axis=1, keepdims=True, zeros=True, of="softmax"),
    "exp_of_log_softmax": dict(scatter_axis=1, sum_axis=1, keepdims=True, zeros=True, of="exp"),
    "sum_along_other_axis": dict(
        scatter_axis=1, sum_axis=0, keepdims=True, zeros=True, of="softmax"
    ),
    "scatter_along_other_axis": dict(
        scatter_axis=0, sum_axis=1, keepdims=True, zeros=True, of="softmax"
    ),
    "into_ones": dict(scatter_axis=1, sum_axis=1, keepdims=True, zeros=False, of="softmax"),
    "softmax_along_other_axis": dict(
        scatter_axis=1, sum_axis=1, keepdims=True, zeros=True, of="softmax0"
    ),
    "exp_of_something_else": dict(
        scatter_axis=1, sum_axis=1, keepdims=True, zeros=True, of="exp_x"
    ),
    "log_softmax_itself": dict(
        scatter_axis=1, sum_axis=1, keepdims=True, zeros=True, of="log_softmax"
    ),
}
SOFTMAX_OF = {
    "softmax": lambda x: sn.softmax(x, axis=1),
    "softmax0": lambda x: sn.softmax(x, axis=0),
    "exp": lambda x: sn.exp(sn.log_softmax(x, axis=1)),
    "exp_x": lambda x: sn.exp(x),
    "log_softmax": lambda x: sn.log_softmax(x, axis=1),
}


@pytest.mark.parametrize("form", list(GRAD_FORMS))
def test_softmax_gradient_forms_by_hand(form):
    """The gradient pattern written out, and its near misses: fused only when exact."""
    spec = GRAD_FORMS[form]
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    base = sn.zeros((N, N)) if spec["zeros"] else sn.ones((N, N))
    out = _scatter_grad(
        x, y, base, spec["scatter_axis"], spec["sum_axis"], spec["keepdims"], SOFTMAX_OF[spec["of"]]
    )
    f = assert_same_values([x, y], out, [_x(), _labels()], rtol=1e-10)
    fused = _fused(f).get(SoftmaxCrossEntropyGrad.op_name(), 0)
    assert fused == (form in ("exact", "exp_of_log_softmax")), f.text()


def test_scattered_values_that_are_not_a_negation():
    """Values scattered at the labels that are not ``-g``: the fused gradient negates them
    itself (the per-row gradient read through a negation, or negated when there is none)."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    g = sn.vector("g", shape=(N,))
    for values in (sn.expand_dims(g, 1), sn.expand_dims(-g, 1), sn.reshape(g, (N, 1))):
        h = IncAlongAxis(1)(sn.zeros((N, N)), sn.expand_dims(y, 1), values)
        out = h - sn.softmax(x, axis=1) * sn.sum(h, axis=1, keepdims=True)
        assert_same_values([x, y, g], out, [_x(), _labels(), _x((N,))], rtol=1e-10)


def test_a_fused_loss_keeps_the_users_line():
    """The fused op's loss quotes the line of the loss it replaced (run-time label errors
    name it)."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    loss = sn.categorical_crossentropy(sn.softmax(x), y)
    g = sn.grad(sn.sum(loss), x)
    f = sn.function([x, y], [loss, g], backend="py")
    fused = [n for n in f.graph.toposort() if isinstance(n.op, SoftmaxCrossEntropy)]
    assert fused and fused[0].outputs[0].source is not None
    assert fused[0].outputs[0].source == loss.source


# -- merge ----------------------------------------------------------------------------------
def _merged(inputs, outputs, values):
    f = assert_same_values(inputs, outputs, values, {"include": ["merge"]}, rtol=1e-12)
    return f


#: pairs of nodes one attribute apart over one square matrix: never one node
MERGE_NEAR_MISSES = {
    "sum_axis": lambda x: (sn.sum(x, axis=0), sn.sum(x, axis=1)),
    "sum_keepdims": lambda x: (sn.sum(x, axis=1), sn.sum(x, axis=1, keepdims=True)[:, 0]),
    "max_axis": lambda x: (sn.max(x, axis=0), sn.max(x, axis=1)),
    "max_min": lambda x: (sn.max(x, axis=0), sn.min(x, axis=0)),
    "mean_axis": lambda x: (sn.mean(x, axis=0), sn.mean(x, axis=1)),
    "softmax_axis": lambda x: (sn.softmax(x, axis=0), sn.softmax(x, axis=1)),
    "transpose": lambda x: (x.T * 2.0, x * 2.0),
    "cast_dtype": lambda x: (sn.cast(x, "float32") * 1, sn.cast(x, "float16") * 1),
    "cumsum_axis": lambda x: (sn.cumsum(x, axis=0), sn.cumsum(x, axis=1)),
    "argmax_axis": lambda x: (sn.argmax(x, axis=0), sn.argmax(x, axis=1)),
}


@pytest.mark.parametrize("name", list(MERGE_NEAR_MISSES))
def test_merge_keeps_nodes_one_attribute_apart(name):
    x = sn.matrix("x", shape=(N, N))
    a, b = MERGE_NEAR_MISSES[name](x)
    f = _merged([x], [a, b], [_x()])
    plain, _ = compile_pair([x], [a, b])
    va, vb = plain(_x())
    assert va.shape == vb.shape  # only the values could tell
    assert _fired(f, "merge_nodes") == 0, f.rewrites


def test_merge_joins_twins_whose_first_input_is_used_more():
    """x*y twice where x has more users than y: the twin is found through either input."""
    x, y = sn.vector("x", shape=(N,)), sn.vector("y", shape=(N,))
    outs = [x * y, x * y, x + 1.0, x - 1.0, sn.exp(x)]
    f = _merged([x, y], outs, [_x((N,)), _x((N,))])
    assert _fired(f, "merge_nodes") == 1
    assert [type(n.op).op_name() for n in f.graph.toposort()].count("mul") == 1


def test_merge_joins_twins_whose_later_input_is_used_more():
    x, y, z = (sn.vector(n, shape=(N,)) for n in "xyz")
    outs = [sn.where(x > 0, y, z), sn.where(x > 0, y, z), z * 2.0, z * 3.0, y + 1.0]
    f = _merged([x, y, z], outs, [_x((N,)), _x((N,)), _x((N,))])
    assert _fired(f, "merge_nodes") >= 2  # the comparisons, then the selections


# -- fusion ---------------------------------------------------------------------------------
def _ops_in_composites(f) -> dict:
    """op name -> how often the optimised graph computes it (inside composites included)."""
    counts: dict = {}
    for node in f.graph.toposort():
        program = getattr(node.op, "program", None)
        names = (
            [type(s[0]).op_name() if isinstance(s, tuple) else str(s) for s in program]
            if (program)
            else [type(node.op).op_name()]
        )
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


#: an elementwise value also read elsewhere: fusion must not take it into its users' group
FUSION_NEAR_MISSES = {
    "also_an_output": lambda x: [sn.tanh(sn.exp(x) + 1.0) * 2.0, sn.exp(x)],
    "also_reduced": lambda x: [sn.tanh(sn.exp(x) + 1.0) * 2.0 + sn.sum(sn.exp(x))],
    "also_in_a_product": lambda x: [sn.tanh(sn.exp(x) + 1.0) * 2.0, sn.exp(x) @ x],
    "two_elementwise_users": lambda x: [
        sn.tanh(sn.exp(x) + 1.0) * 2.0,
        sn.sin(sn.exp(x) - 1.0) * 3.0,
    ],
}


@pytest.mark.parametrize("name", list(FUSION_NEAR_MISSES))
def test_fusion_computes_a_value_read_elsewhere_once(name, backend):
    x = sn.matrix("x", shape=(N, N))
    outs = FUSION_NEAR_MISSES[name](x)
    f = sn.function([x], outs, backend=backend)
    plain = sn.function([x], outs, backend="py", optimize="none")
    # moderate inputs, and an absolute bound beside the relative one: the compiled exp may
    # differ from NumPy's in its last bit, and sin(exp(x) - 1) carries that difference times
    # exp(x) (an input of 7.6 drawn at scale 2 made it 7e-13; a value near one of sin's
    # zeros has no relative bound at all)
    value = RNG.uniform(-2.0, 2.0, size=(N, N))
    for got, want in zip(f(value), plain(value), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    exps = sum(1 for n in f.graph.toposort() for _ in _exps(n))
    assert exps == 1, f.text()


def _exps(node):
    """The exp computations of a node (a composite's steps included)."""
    if isinstance(node.op, Exp):
        yield node
    for step in getattr(node.op, "program", None) or ():
        op = step[0] if isinstance(step, tuple) else getattr(step, "op", step)
        if isinstance(op, Exp):
            yield step


def test_fusion_takes_a_value_used_by_one_node_only():
    """The exact match beside the near misses: exp read by the chain alone joins its group."""
    x = sn.matrix("x", shape=(N, N))
    f = sn.function([x], sn.tanh(sn.exp(x) + 1.0) * 2.0, backend="py")
    assert len(f.graph.toposort()) == 1, f.text()


def test_log_softmax_is_not_rebuilt_from_a_softmax_along_another_axis():
    """stabilize: log(softmax(x, axis)) becomes log_softmax(x, axis), that axis."""
    x = sn.matrix("x", shape=(N, N))
    for axis in (0, 1):
        f = assert_same_values([x], sn.log(sn.softmax(x, axis=axis)), [_x()], rtol=1e-12)
        (node,) = [n for n in f.graph.toposort() if isinstance(n.op, LogSoftmax)]
        assert node.op.axis == axis


@pytest.mark.parametrize("axis, keepdims", [(0, False), (1, False), (1, True), (None, False)])
def test_logsumexp_of_exp_keeps_the_axis_and_keepdims(axis, keepdims):
    x = sn.matrix("x", shape=(N, N))
    out = sn.log(sn.sum(sn.exp(x), axis=axis, keepdims=keepdims))
    f = assert_same_values([x], out, [_x()], rtol=1e-12)
    assert _fired(f, "logsumexp_of_exp") == 1


def test_pow_to_square_only_for_two():
    x = sn.vector("x", shape=(N,))
    for c, fires in ((2.0, True), (2.5, False), (3.0, False), (-2.0, False)):
        f = assert_same_values([x], x**c, [np.abs(_x((N,))) + 0.5], rtol=1e-12)
        assert bool(_fired(f, "pow_two_to_square")) == fires, c


def test_a_fused_loss_alone_keeps_the_users_line():
    """No gradient: the loss rule makes the fused op itself and gives it the loss's line."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    loss = sn.categorical_crossentropy(sn.softmax(x), y)
    f = sn.function([x, y], loss, backend="py")
    (fused,) = [n for n in f.graph.toposort() if isinstance(n.op, SoftmaxCrossEntropy)]
    assert loss.source is not None and fused.outputs[0].source == loss.source


def test_an_index_or_a_scatter_that_is_an_input_is_left_alone():
    """The picked index, or the scattered array h, is an input (no node made it)."""
    x = sn.matrix("x", shape=(N, N))
    index = sn.matrix("index", shape=(N, 1), dtype="int64")
    loss = -sn.squeeze(sn.take_along_axis(sn.log_softmax(x), index, 1), 1)
    values = [_x(), _labels()[:, None]]
    assert not _fired(assert_same_values([x, index], loss, values), "softmax_crossentropy_fused")
    h = sn.matrix("h", shape=(N, N))
    out = h - sn.softmax(x, axis=1) * sn.sum(h, axis=1, keepdims=True)
    f = assert_same_values([x, h], out, [_x(), _x()], rtol=1e-12)
    assert not _fired(f, "softmax_crossentropy_grad_fused")


def test_labels_that_are_not_expanded_at_the_axis_are_not_fused():
    """The index is a (1, N) label matrix transposed to (N, 1), not ``expand_dims(y, 1)``."""
    x, y = sn.matrix("x", shape=(N, N)), sn.matrix("y", shape=(1, N), dtype="int64")
    loss = -sn.squeeze(sn.take_along_axis(sn.log_softmax(x), y.T, 1), 1)
    f = assert_same_values([x, y], loss, [_x(), _labels()[None, :]], rtol=1e-12)
    assert not _fired(f, "softmax_crossentropy_fused")


@pytest.mark.parametrize("form", ["expand", "negated", "reshape", "transpose"])
def test_scattered_values_of_every_form_fuse(form):
    """The scattered values as ``expand_dims(g, 1)``, ``expand_dims(-g, 1)``, a reshape or a
    transposed row: each gives the fused gradient, with the per-row values read right."""
    x, y = sn.matrix("x", shape=(N, N)), sn.vector("y", shape=(N,), dtype="int64")
    g = sn.vector("g", shape=(N,))
    values = {
        "expand": sn.expand_dims(g, 1),
        "negated": sn.expand_dims(-g, 1),
        "reshape": sn.reshape(g, (N, 1)),
        "transpose": sn.reshape(g, (1, N)).T,
    }[form]
    h = IncAlongAxis(1)(sn.zeros((N, N)), sn.expand_dims(y, 1), values)
    out = h - sn.softmax(x, axis=1) * sn.sum(h, axis=1, keepdims=True)
    f = assert_same_values([x, y, g], out, [_x(), _labels(), _x((N,))], rtol=1e-10)
    assert _fired(f, "softmax_crossentropy_grad_fused"), f.text()
