"""Graph pictures: structure of the SVG (titles, classes, counts), diffs, collapse, fallback."""

import re

import numpy as np
import pytest

import symnb as sn
from symnb.ops.composite import Composite
from symnb.ops.elemwise import mul, tanh
from symnb.viz import render, stepper
from symnb.viz.diff import diff_graphs, diff_picture
from symnb.viz.graphs import picture
from tests.magics.nbtools import svg_structure

pytest.importorskip("pygraphviz")


def titles(svg, kind="node"):
    return {title for title, _ in svg_structure(svg)[kind]}


def classes(svg):
    return {title: cls for title, cls in svg_structure(svg)["node"]}


@pytest.fixture
def small():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    W = sn.shared(np.zeros((3, 2), "float32"), name="W")
    b = sn.constant(np.array([1, 2], "float32"), name="b")
    return x, W, sn.mean(sn.tanh(x @ W + b) * 2.0, axis=1)


def test_nodes_and_edges_of_a_small_graph(small):
    x, W, loss = small
    svg = picture(loss).svg()
    assert titles(svg) == {
        "var:x",
        "var:W",
        "const:b",
        "const:2.0",
        "matmul#0",
        "add#0",
        "tanh#0",
        "mul#0",
        "mean#0",
        "out:0",
    }
    assert len(svg_structure(svg)["edge"]) == 9
    kinds = classes(svg)
    assert (kinds["var:x"], kinds["var:W"], kinds["const:b"], kinds["out:0"]) == (
        "input",
        "shared",
        "constant",
        "output",
    )
    assert kinds["matmul#0"] == "op"
    assert "f32[batch,3]" in svg and "f32[batch,2]" in svg  # edges carry shapes


def test_gradient_nodes_are_drawn_distinctly(small):
    x, W, loss = small
    (gW,) = sn.grad(sn.sum(loss), [W])
    svg = picture(gW).svg()
    grad_nodes = [t for t, c in svg_structure(svg)["node"] if c.split()[0] == "grad"]
    forward = [t for t, c in svg_structure(svg)["node"] if c.split()[0] == "op"]
    assert grad_nodes and forward
    assert "matmul#0" in forward


def test_a_fused_kernel_is_a_cluster_of_its_scalar_ops():
    x = sn.tensor("x", shape=(4,))
    program = [(tanh, [("in", 0)]), (mul, [("tmp", 0), ("const", 2.0, "float64")])]
    y = Composite(program, "float64", 1)(x)
    svg = picture(y).svg()
    structure = svg_structure(svg)
    assert [t for t, _ in structure["cluster"]] == ["cluster_fused#0"]
    assert {"fused#0.0:tanh", "fused#0.1:mul"} <= titles(svg)
    assert ("fused#0.0:tanh->fused#0.1:mul", "") in structure["edge"]
    assert classes(svg)["fused#0.0:tanh"] == "scalar"


def test_diff_marks_removed_added_and_kept_nodes():
    x = sn.tensor("x", shape=(3,))
    before = sn.exp(x) * 1.0
    after = sn.log(sn.exp(x))
    diff = diff_graphs([before], [after])
    assert [n.op.op_name() for n in diff.removed] == ["mul"]
    assert [n.op.op_name() for n in diff.added] == ["log"]
    assert diff.kept == 1
    svg = diff_picture([before], [after]).svg()
    kinds = classes(svg)
    assert kinds["removed:mul#0"] == "op removed"
    assert kinds["log#0"] == "op added"
    assert kinds["exp#0"] == "op"


def test_diff_of_a_compiled_function_shows_the_rewrites():
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x) * 1.0, backend="py")
    diff = diff_graphs(f.graph_before, f.graph)
    assert len(f.graph) < len(f.graph_before)
    assert diff.removed or diff.changed


def test_a_rewrite_marks_only_the_nodes_it_rewired():
    """pow -> square in sin(cos(exp(x**2))): exp is rewired (changed); cos and sin, whose
    inputs are what they were, are kept, not changed in cascade down to the outputs."""
    x = sn.vector("x")
    f = sn.function([x], sn.sin(sn.cos(sn.exp(x**2))), optimize={"exclude": ["fuse"]})
    history = list(f.rewrites)
    i = next(k for k, s in enumerate(history) if s.rule == "pow_two_to_square")
    before = f.graph_before if i == 0 else history[i - 1].graph_after()
    diff = diff_graphs(before, history[i].graph_after())
    assert diff.summary() == "1 removed, 1 added, 1 changed, 2 kept"
    assert [(old.op.op_name(), new.op.op_name()) for old, new in diff.changed] == [("exp", "exp")]
    assert [n.op.op_name() for n in diff.removed] == ["pow"]
    assert [n.op.op_name() for n in diff.added] == ["square"]
    kinds = classes(diff_picture(before, history[i].graph_after()).svg())
    assert kinds["exp#0"] == "op changed" and kinds["square#0"] == "op added"
    assert kinds["cos#0"] == kinds["sin#0"] == "op"


def test_a_node_rewired_below_a_changed_one_is_still_changed():
    """sin is rewired to a new input, and mul below it to sin and a new input: both are
    changed; tanh, whose input is the changed mul, is kept."""

    def layer(inner, scale):
        return sn.tanh(sn.sin(inner) * scale)  # one line: a changed node's twin is of its line

    x = sn.tensor("x", shape=(3,))
    diff = diff_graphs([layer(sn.exp(x), 2.0)], [layer(sn.log(x), sn.cos(x))])
    assert [(old.op.op_name(), new.op.op_name()) for old, new in diff.changed] == [
        ("sin", "sin"),
        ("mul", "mul"),
    ]
    assert diff.summary() == "1 removed, 2 added, 2 changed, 1 kept"


def test_a_rewired_node_is_told_from_a_removed_one_of_its_line_by_its_inputs():
    """sub_self in (a - a) - a: the inner sub (both inputs a) is removed, the outer one (a
    sub of the same line) rewired to the zeros; compared by structure (graph_before)."""
    a = sn.tensor("a", shape=(3,), dtype="float64")
    f = sn.function([a], (a - a) - a, backend="py", optimize={"include": ["sub_self"]})
    (step,) = f.rewrites
    diff = diff_graphs(f.graph_before, step.graph_after())
    (gone,) = diff.removed
    assert gone.inputs == [a, a]
    ((was, now),) = diff.changed
    assert was.inputs[0].owner is gone and now.inputs[1] is a
    assert diff.summary() == "1 removed, 0 added, 1 changed, 0 kept"


def test_each_step_diff_shows_what_the_step_removed_and_added():
    """A gradient graph, whose nodes all have the sn.grad line: the diff of two steps is
    the step's record (the replays' nodes are the history's), not a guess by line."""
    x = sn.tensor("x", shape=("batch", 5), dtype="float64")
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    W = sn.shared(np.ones((5, 3)), name="W")
    b = sn.shared(np.zeros(3), name="b")
    loss = sn.mean(sn.crossentropy(sn.softmax(x @ W + b, axis=-1), y))
    f = sn.function([x, y], [loss, *sn.grad(loss, [W, b])], backend="py")
    history = f.rewrites
    assert len(history) > 3
    for i, step in enumerate(history):
        diff = diff_graphs(history.replay(i), step.graph_after())
        names = [[n.op.op_name() for n in nodes] for nodes in (diff.removed, diff.added)]
        recorded = [[n.op.op_name() for n in nodes] for nodes in (step.removed, step.added)]
        assert [sorted(n) for n in names] == [sorted(n) for n in recorded], (i, step.rule)
    i = next(k for k, s in enumerate(history) if s.rule == "log_softmax_of_softmax")
    diff = diff_graphs(history.replay(i), history[i].graph_after())
    assert sorted(n.op.op_name() for n in diff.removed) == [
        "dim_shuffle",
        "log",
        "softmax",
        "take_along_axis",
    ]


def _output_boxes(pic):
    return [n.label for n in pic.view.nodes.values() if n.kind == "output"]


def test_results_keep_the_users_names_after_the_rewrites_replace_them():
    """fuse_elemwise puts an unnamed composite in prob's place, mul_by_one the input a in
    q's: the pictures after and every stepper frame still name them prob and q."""
    a = sn.tensor("a", shape=(3,), dtype="float64")
    p = sn.exp(a) * 2 + 1
    p.name = "prob"
    q = a * 1
    q.name = "q"
    W = sn.shared(np.ones(3), name="W")
    f = sn.function([a], [p, q], updates={W: W + 1}, backend="py")
    names = ["prob", "q", "W ← update"]
    assert _output_boxes(picture(f.graph_before, "as written", function=f)) == names
    assert _output_boxes(picture(f, "after")) == names
    steps = stepper.stepper_steps(f)
    for i in range(len(steps)):
        _, frame = stepper.step_frame(f, steps, i, i + 1, len(steps), 200)
        assert _output_boxes(frame) == names, steps[i].rule
    assert _output_boxes(diff_picture(f.graph_before, f)) == names


def test_a_loop_step_frame_names_the_steps_outputs_not_the_functions():
    x = sn.tensor("x", shape=("T", 3), dtype="float64")
    W = sn.shared(np.ones(3), name="W")

    def step(x_t, h):
        return h + x_t * 1, x_t * 2 + 0

    (hs, ys), _ = sn.scan(step, sequences=x, outputs_info=[sn.zeros(3), None])
    f = sn.function([x], sn.sum(hs[-1]) + sn.sum(ys), updates={W: W + 1}, backend="py")
    steps = stepper.stepper_steps(f)
    inner = [i for i, s in enumerate(steps) if s.history is not f.rewrites]
    assert inner
    for i in inner:
        _, frame = stepper.step_frame(f, steps, i, i + 1, len(steps), 200)
        assert _output_boxes(frame) == ["next state 0", "step output 0"], steps[i].rule


def test_a_2000_node_graph_is_collapsed_to_a_readable_drawing():
    """Structure only; the render time (budget 3 s) is measured by benchmarks/notebook_render.py."""
    xs = [sn.tensor(f"x{i}", shape=(8,)) for i in range(20)]
    outs = []
    for x in xs:
        h = x
        for _ in range(50):
            h = sn.tanh(h * 1.5)
        outs.append(h)
    total = outs[0]
    for o in outs[1:]:
        total = total + o
    pic = picture(total)
    svg = pic.svg()
    nodes = titles(svg)
    assert len(nodes) < 300
    assert pic.view.notes and "merged" in pic.view.notes[0]
    assert any("×" in t for t in nodes)


def test_a_rolled_loop_keeps_its_inputs_and_outputs():
    h = sn.tensor("h", shape=(4,))
    for _ in range(1000):
        h = sn.tanh(h * 1.01)
    svg = picture(h).svg()
    nodes = titles(svg)
    assert {"var:h", "out:0"} <= nodes
    assert any(t.startswith("tanh×1000") for t in nodes)


def test_a_box_merged_at_a_later_stage_keeps_a_box_of_its_own():
    """A chain of 3 muls rolled up by line (``mul×3``) and 3 parallel muls merged at the
    same stage each keep a box: the second ``mul×3`` replaced the first (6 muls drawn as 3,
    the chain's arrows drawn into the other box)."""
    x = sn.vector("x")
    h = sn.cos(x)
    for _ in range(3):
        h = h * 3.0
    xs = [sn.vector(f"x{i}") for i in range(3)]
    p0 = xs[0] * 5.0
    p1 = xs[1] * 5.0
    p2 = xs[2] * 5.0
    s = x
    for _ in range(300):
        s = sn.sin(s)
    view = picture([h, p0, p1, p2, s]).view
    muls = {b.id: b for b in view.nodes.values() if b.label.startswith("mul")}
    assert sorted(b.count for b in muls.values()) == [3, 3] and len(muls) == 2
    assert sum(len(b.members) for b in muls.values()) == 6
    (chain,) = [i for i, b in muls.items() if any(n is h.owner for n in b.members)]
    edges = {(e.src, e.dst) for e in view.edges}
    assert {("cos#0", chain), ("const:3.0", chain), (chain, chain)} <= edges
    (parallel,) = set(muls) - {chain}
    assert {("var:x0", parallel), ("const:5.0", parallel)} <= edges
    assert ("cos#0", parallel) not in edges and ("const:5.0", chain) not in edges


def test_without_graphviz_the_dot_text_is_shown(monkeypatch, small):
    monkeypatch.setattr(render, "RENDERERS", ())
    render.render_svg.cache_clear()
    bundle = picture(small[2]).__class__._repr_mimebundle_(picture(small[2]))
    render.render_svg.cache_clear()
    assert "image/svg+xml" not in bundle
    assert "no Graphviz found" in bundle["text/html"]
    assert "digraph symnb" in bundle["text/html"]


def test_svg_titles_are_not_coordinates(small):
    svg = picture(small[2]).svg()
    assert not re.search(r"<title>[\d.,\s]+</title>", svg)


def test_a_graph_displays_itself_without_the_extension():
    x = sn.tensor("x", shape=("n", 3))
    f = sn.function([x], sn.sum(sn.exp(x) * 2.0, axis=1), backend="py")
    assert str(f.graph_before) == sn.format_graph(f.graph_before)
    assert repr(f.graph).startswith("<symnb.Graph: 1 input,")
    svg = f.graph_before._repr_svg_()
    assert svg is not None and "<svg" in svg and svg.count('class="node') >= 4


def test_a_scan_is_one_box_with_its_step_as_a_cluster():
    x = sn.tensor("x", shape=("T", 3))
    W = sn.shared(np.eye(3), name="W")
    hs, _ = sn.scan(lambda xt, h: sn.tanh(xt + h @ W), sequences=x, outputs_info=x[0])
    svg = picture(sn.sum(hs)).svg()
    structure = svg_structure(svg)
    assert [t for t, _ in structure["cluster"]] == ["cluster_scan#0"]
    names = titles(svg)
    assert {"scan#0", "scan#0/tanh#0", "scan#0/matmul#0", "scan#0/out:0"} <= names
    assert sum(1 for n in names if n.startswith("scan#0/")) >= 6  # 3 inputs, 3 ops, 1 output
    assert any(edge == "scan#0/matmul#0->scan#0/add#0" for edge, _ in structure["edge"])


@pytest.mark.parametrize("name", ["add#0", "out:0", "mul#0", "const:2", "removed:add#0"])
def test_a_variable_named_like_a_box_symnb_makes_stays_a_box_of_its_own(name):
    """User names and symnb's ids are separate namespaces: an input named ``add#0`` or
    ``out:0`` was merged with that op's or output's box (a self-loop, the input lost)."""
    x = sn.tensor(name, shape=(3,), dtype="float32")
    b = sn.tensor("b", shape=(3,), dtype="float32")
    view = picture((x + b) * 2.0 * b).view
    kinds = sorted(n.kind for n in view.nodes.values())
    assert kinds == ["constant", "input", "input", "op", "op", "op", "output"]
    assert [n.label for n in view.nodes.values() if n.kind == "input"] == [name, "b"]
    assert all(e.src != e.dst for e in view.edges) and len(view.edges) == 7
    svg = picture((x + b) * 2.0 * b).svg()
    assert f"var:{name}" in titles(svg) and len(titles(svg)) == 7
