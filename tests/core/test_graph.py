import itertools
import linecache
import pickle
from types import SimpleNamespace

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import OUTPUT, Graph, clone_graph, substitute
from symnb.core.source import SourceLoc, SourceSpan, assigned_target
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
    # pickled and loaded, it keeps the span of the call that made it (and so its name)
    assert pickle.loads(pickle.dumps(W)).assigned_name() == "W"


_cells = itertools.count()


def _run_cell(code: str) -> dict:
    """Run ``code`` as a notebook cell is run: from a file name whose lines linecache holds."""
    filename = f"<assigned-name-cell-{next(_cells)}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace = {"sn": sn, "np": np, "SimpleNamespace": SimpleNamespace}
    exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - the test's own code
    return namespace


def test_a_variable_is_named_after_an_assignment_only_when_it_is_the_whole_value():
    """The weights made inside ``h = sn.tanh(sn.dot(x, sn.shared(...)))`` are not h (the
    tanh output), and j of ``i = ...; j = ...`` is j, not i: a message naming another
    variable sends the reader to the wrong place."""
    made = _run_cell(
        "x = sn.matrix('x', dtype='float64')\n"
        "h = sn.tanh(sn.dot(x, sn.shared(np.ones((4, 3)))))\n"
        "i = sn.scalar(dtype='int32'); j = sn.scalar(dtype='int32')\n"
        "W = sn.shared(\n"
        "    np.zeros(3),\n"
        "    name=None,\n"
        ")\n"
        "layer = SimpleNamespace()\n"
        "layer.b = sn.vector(dtype='float64')\n"
        "V: object = sn.vector(dtype='float64')\n"
        "a = b = sn.vector(dtype='float64')\n"
        "c, d = sn.vector(dtype='float64'), sn.vector(dtype='float64')\n"
        "e = [sn.vector(dtype='float64')]\n"
        "g = SimpleNamespace(\n"
        "    w=sn.vector(dtype='float64')\n"
        ")\n"
        "(k := sn.vector(dtype='float64'))\n"
    )
    weights = made["h"].owner.inputs[0].owner.inputs[1]
    assert weights.assigned_name() is None
    names = [made[n].assigned_name() for n in ("i", "j", "W", "V", "a", "c", "d", "k")]
    assert names == ["i", "j", "W", "V", None, None, None, "k"]
    assert made["layer"].b.assigned_name() == "layer.b"
    assert made["e"][0].assigned_name() is None and made["g"].w.assigned_name() is None
    f = sn.function([made["x"]], made["h"])
    with pytest.raises(Exception) as raised:
        f(np.ones((2, 5)))
    assert "matmul('x' (float64(?, ?)), an unnamed variable (float64(4, 3)))" in str(raised.value)
    g = sn.function([made["x"], made["j"]], made["x"][:, made["j"]])
    with pytest.raises(Exception) as raised:
        g(np.ones((5, 3)), 5)
    assert "'j' (int32())" in str(raised.value) and "'i'" not in str(raised.value)


def test_without_columns_only_a_line_of_one_assignment_of_one_call_names_a_variable():
    """Python 3.10 records no columns: a line that is ``W = call(...)`` alone names W; a
    line of two statements, a value that is no call, or a statement that does not parse on
    its line names none. A location without a span (a node's line, pinned) names none."""
    code = (
        "W = sn.shared(np.zeros(3))\n"
        "i = sn.iscalar(); j = sn.iscalar()\n"
        "y = 1  # try:\n"
        "try: y = sn.vector()\n"
        "V = sn.shared(\n"
        "    np.zeros(3))\n"
    )
    filename = "<assigned-name-no-columns>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    names = [assigned_target(SourceSpan(filename, line)) for line in range(1, 7)]
    assert names == ["W", None, None, None, None, None]
    assert assigned_target(SourceLoc(filename, 1)) is None


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


@pytest.mark.parametrize("copy", [clone_graph, substitute])
def test_replacing_one_output_of_a_node_still_rebuilds_it_for_the_others(copy):
    """``clone_graph``/``substitute`` skipped (or overwrote) a node one of whose outputs is
    a key: its other outputs kept reading the old inputs, or lost their replacement."""
    x, x2 = sn.vector("x", shape=(4,)), sn.vector("x2", shape=(4,))
    a, b = sn.split(x * 2, 2)
    zeros = sn.zeros((2,))
    new_a, new_b = copy([a, b], {x: x2, a: zeros})
    assert new_a is zeros
    assert new_b is not b and new_b.owner.inputs[0].owner.inputs[0] is x2
    f = sn.function([x2], [new_a, new_b], backend="py")
    got = f(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(got[0], [0.0, 0.0])
    np.testing.assert_array_equal(got[1], [6.0, 8.0])


def test_a_nodes_carried_default_update_takes_the_place_of_the_variables():
    """``node.tag["default_updates"]`` (what ``theano.clone`` notes on a copy reading a
    replaced input) is written in place of the shared variable's own ``default_update``,
    also where the variable is found only through another default update."""
    k, k2 = sn.scalar("k"), sn.scalar("k2")
    s, t = sn.shared(np.float64(0), name="s"), sn.shared(np.float64(0), name="t")
    s.tag["default_update"], t.tag["default_update"] = s + k, t + s
    out = t * 1
    out.owner.tag["default_updates"] = [(s, s + k2)]
    f = sn.function([k2], out, backend="py")
    f(1.0), f(1.0)
    assert (float(s.get_value()), float(t.get_value())) == (2.0, 1.0)
