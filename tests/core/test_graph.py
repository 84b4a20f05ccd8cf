from types import SimpleNamespace

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import OUTPUT, Graph
from symnb.ops.composite import Composite
from symnb.ops.elemwise import Mul


def test_graph_clones_nodes_but_keeps_leaves():
    x = sn.vector("x")
    y = sn.exp(x) + 1
    g = Graph([x], [y])
    assert g.outputs[0] is not y and g.outputs[0].owner.op == y.owner.op
    assert len(g) == 2
    (node,) = [n for n in g.nodes if n.op == sn.exp]
    assert node.inputs[0] is x
    assert g.clients[x] == [(node, 0)]
    assert g.clients[g.outputs[0]] == [(OUTPUT, 0)]


def test_replace_updates_clients_and_prunes():
    x = sn.vector("x")
    y = sn.exp(x) * 2
    g = Graph([x], [y])
    (exp_node,) = [n for n in g.nodes if n.op == sn.exp]
    g.replace(exp_node.outputs[0], sn.sin(x))
    assert {n.op.op_name() for n in g.nodes} == {"sin", "mul"}
    f = sn.function([x], y)  # the user's graph is untouched
    assert np.allclose(f([0.0]), [2.0])
    assert all(c is not exp_node for c, _ in g.clients.get(x, []))


def test_replace_refuses_a_different_type():
    x = sn.vector("x")
    g = Graph([x], [sn.exp(x)])
    with pytest.raises(sn.GraphError, match="cannot replace"):
        g.replace(g.outputs[0], sn.cast(x, "int32"))


def test_ops_are_hashable_by_parameters():
    a, b = sn.vector("a"), sn.vector("b")
    assert sn.sum(a, axis=0).owner.op == sn.sum(b, axis=0).owner.op
    assert sn.sum(a, axis=0).owner.op != sn.sum(a, axis=0, keepdims=True).owner.op
    assert hash(sn.mean(a).owner.op) == hash(sn.mean(b).owner.op)


def test_ops_tell_apart_parameters_equal_but_for_a_zeros_sign_or_a_nan():
    """0.0 == -0.0 and nan != nan in Python: ops compare their parameters as constants do,
    by value, the sign of a zero and the bits of a NaN, in __eq__ and __hash__ alike."""
    x = sn.vector("x")

    def pad(value):
        return sn.pad(x, 1, constant_values=value).owner.op

    def clip(lower, upper):
        return sn.grad_clip(x, lower, upper).owner.op

    def scaled(zero):
        return Composite([(Mul(), (("in", 0), ("const", zero, "float64")))], "float64", 1)

    for zero, negative in [
        (pad(0.0), pad(-0.0)),
        (pad(np.float32(0.0)), pad(np.float32(-0.0))),
        (pad([[0.0, 1.0]]), pad([[-0.0, 1.0]])),  # (before, after) per axis
        (pad(0j), pad(complex(0.0, -0.0))),
        (clip(0.0, 1.0), clip(-0.0, 1.0)),
        (clip(-1.0, 0.0), clip(-1.0, -0.0)),
        (scaled(0.0), scaled(-0.0)),
    ]:
        assert zero != negative and hash(zero) != hash(negative), (zero, negative)
    for one, same in [
        (pad(-0.0), pad(-0.0)),
        (pad(np.nan), pad(np.nan)),  # a NaN with the same bits is the same parameter
        (pad(1), pad(1.0)),
        (clip(0, 1), clip(0.0, 1.0)),
        (scaled(-0.0), scaled(-0.0)),
    ]:
        assert one == same and hash(one) == hash(same), (one, same)


def test_deep_graphs_do_not_recurse():
    x = sn.scalar("x")
    y = x
    for _ in range(5000):
        y = y + 1
    assert float(sn.function([x], y)(0.0)) == 5000.0


def test_the_python_name_of_an_unnamed_variable_is_an_assignments_target_only():
    """``describe`` names an unnamed input or shared value after the assignment on its line;
    a keyword argument's ``=`` after ``key:`` (a dict's entry) or ``try:`` is none."""
    W = sn.shared(np.zeros(3))
    V: sn.Variable = sn.vector(dtype="float64")
    assert (W.assigned_name(), V.assigned_name()) == ("W", "V")
    key = "k"
    made = {
        key: sn.vector(dtype="float64"),
    }
    assert made["k"].assigned_name() is None and "an unnamed variable" in made["k"].describe()
    for code, name in [("try: y = sn.vector(dtype='float64')", None), ("y = 1  # try:", "y")]:
        made["k"].source = SimpleNamespace(code=code)  # (a SourceLoc reads it from the file)
        assert made["k"].assigned_name() == name, code


def test_detaching_a_client_does_not_walk_the_others():
    # a variable with many clients (a merged constant along a long chain) lost them one by one
    # in a rewrite that dropped every node: each detach rebuilt the whole list, O(N^2)
    n = 60
    x = sn.vector("x", dtype="float64")
    g = Graph([x], [x * float(k + 2) for k in range(n)])
    walked = [0]
    users = g.clients[x]

    class Counting(type(users)):
        def __iter__(self):
            for pair in super().__iter__():
                walked[0] += 1
                yield pair

    g.clients[x] = Counting(list(users))
    for k in range(n):
        g.replace(g.outputs[k], x)  # drops the node x * k: one client of x detached
    assert len(g) == 0
    assert walked[0] == 0
    assert g.clients[x] == [(OUTPUT, k) for k in range(n)]  # in the order they came
