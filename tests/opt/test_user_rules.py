"""A user's rewrite rule that is wrong gets a RewriteError naming it and its line, when it is
registered where it can be, else when it fires: never an error from inside the engine or a
backend, nor a result of another size."""

from __future__ import annotations

import re
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

import symnb as sn
from symnb.core.graph import Graph
from symnb.ops.checks import HasShape
from symnb.ops.elemwise import Add, Mul, Sin
from symnb.opt import Const, Pattern, RewriteError, register, unregister


@contextmanager
def registered(fn, phase="canonicalize", pattern=None, **options):
    rule = register(fn, phase, pattern or Pattern(Sin, "x"), **options)
    try:
        yield rule
    finally:
        unregister(rule.name)


def _compile(x, out, backend="py", optimize="fast"):
    return sn.function([x], out, backend=backend, optimize=optimize)


def test_a_replacement_that_reads_what_it_replaces_is_refused_naming_the_rule():
    def sin_plus_one(m):
        return m.out + 1.0  # the graph would be a cycle: sin's users read sin + 1

    x = sn.vector("x")
    with registered(sin_plus_one) as rule:
        with pytest.raises(RewriteError) as info:
            _compile(x, sn.sin(x) * 2)
    message = str(info.value)
    assert f"rule sin_plus_one ({rule.source})" in message
    assert "reads the value it replaces" in message and "(m.x), not from m.out" in message


def test_graph_replace_refuses_a_value_that_reads_the_one_it_replaces():
    x = sn.vector("x")
    graph = Graph([x], [sn.sin(x) * 2])
    old = graph.outputs[0].owner.inputs[0]
    with pytest.raises(sn.GraphError, match="which reads it: the graph would be a cycle"):
        graph.replace(old, old + 1.0)


@pytest.mark.parametrize("verify", [False, True])
def test_a_replacement_reading_a_variable_of_another_graph_is_refused_naming_the_rule(
    verify, monkeypatch
):
    monkeypatch.setattr(sn.config, "verify_rewrites", verify)
    stray = sn.vector("stray")  # not an input of the function

    def cos_of_stray(m):
        return sn.cos(stray)

    x = sn.vector("x")
    with registered(cos_of_stray) as rule:
        with pytest.raises(RewriteError) as info:
            _compile(x, sn.sin(x) + 1)
    message = str(info.value)
    assert f"rule cos_of_stray ({rule.source})" in message
    assert "reads 'stray' (float64(?,))" in message and "not among the graph's inputs" in message


def test_a_replacement_that_is_a_variable_of_another_graph_is_refused():
    x, stray = sn.vector("x"), sn.vector("stray")
    graph = Graph([x], [sn.sin(x) * 2])
    with pytest.raises(sn.GraphError, match="reads 'stray'.*not among the graph's inputs"):
        graph.replace(graph.outputs[0].owner.inputs[0], stray)
    assert graph.outputs[0].owner.inputs[0].owner.op.op_name() == "sin"  # left as it was


@pytest.mark.parametrize("verify", [False, True])
def test_a_pair_replacing_a_value_not_in_the_graph_is_refused_naming_the_rule(verify, monkeypatch):
    monkeypatch.setattr(sn.config, "verify_rewrites", verify)
    elsewhere = sn.vector("elsewhere") * 3  # not in the function's graph

    def stale(m):
        return [(elsewhere, sn.exp(m.x) * 5)]

    x = sn.vector("x")
    with registered(stale) as rule:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sn.opt.RewriteLoopWarning)
            with pytest.raises(RewriteError) as info:
                _compile(x, sn.sin(x) + 1)
    message = str(info.value)
    assert f"rule stale ({rule.source})" in message
    assert "is not a value of the graph" in message


def test_graph_replace_attaches_nothing_for_a_value_nothing_reads():
    x = sn.vector("x")
    graph = Graph([x], [sn.sin(x) + 1])
    nodes = set(graph.nodes)
    assert graph.replace(sn.vector("y") * 3, sn.exp(x) * 5) == ([], [])
    assert graph.nodes == nodes and not graph.holds(sn.vector("y"))


@pytest.mark.parametrize(
    "answer, said",
    [
        (lambda m: 1.0, "a value of type float (1.0)"),
        (lambda m: np.zeros(4), "a value of type ndarray (array("),
        (lambda m: (m.out, sn.cos(m.x)), "a bare (old, new) tuple (put it in a list"),
        (lambda m: [(m.out, 2.0)], "a value of type list"),
    ],
)
def test_an_answer_that_is_no_variable_nor_pairs_names_the_rule(answer, said):
    x = sn.vector("x")
    with registered(answer, name="user_answer") as rule:
        with pytest.raises(RewriteError) as info:
            _compile(x, sn.sin(x) * 2)
    message = str(info.value)
    assert message.startswith(f"rule user_answer ({rule.source}) returned {said}"), message
    assert "a list of (old, new) pairs of Variables, or None" in message


def test_an_exception_in_a_rule_names_the_rule_and_keeps_the_cause():
    def divides(m):
        return m.x / 0 if 1 / 0 else None

    x = sn.vector("x")
    with registered(divides) as rule:
        with pytest.raises(RewriteError) as info:
            _compile(x, sn.sin(x))
    said = f"rule divides ({rule.source}) raised ZeroDivisionError: division by zero"
    assert str(info.value) == said
    assert isinstance(info.value.__cause__, ZeroDivisionError)


@pytest.mark.parametrize("backend", ["py", "c"])
def test_dims_the_types_cannot_prove_are_checked_when_the_function_runs(backend):
    """sin(x) -> sin(x[:-1]) on x of dims ("n",): the slice's length is unknown, so the types
    cannot refuse it; the call does, naming the rule (it returned 3 values for 4, silently)."""

    def drops_last(m):
        return sn.sin(m.x[:-1]) if m.x.owner is None else None

    x = sn.tensor("x", shape=("n",))
    with registered(drops_last) as rule:
        f = _compile(x, sn.sin(x) * 2, backend)
    assert any(isinstance(n.op, HasShape) for n in f.graph.toposort())
    with pytest.raises(sn.ShapeError) as info:
        f(np.arange(4.0))
    message = str(info.value)
    assert f"rule drops_last ({rule.source}): its replacement of" in message
    assert "((3,), not (n,) = (4,), when the function ran)" in message


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_replacement_of_the_right_size_runs_with_numpys_values(backend):
    def keeps_all(m):
        return sn.sin(m.x[: m.x.shape[0]]) if m.x.owner is None else None

    x = sn.tensor("x", shape=("n", 3))
    with registered(keeps_all):
        f = _compile(x, sn.sin(x) * 2, backend)
    value = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(f(value), np.sin(value) * 2, rtol=1e-15)
    checks = [n for n in f.graph.toposort() if isinstance(n.op, HasShape)]
    assert len(checks) == 1 and checks[0].outputs[0].type.shape == ("n", 3)


def test_unknown_dims_and_built_in_rules_add_no_check():
    def renamed(m):
        return sn.sin(m.x[: m.x.shape[0]]) if m.x.owner is None else None

    x = sn.vector("x")  # dims None: nothing to check them against
    with registered(renamed):
        f = _compile(x, sn.sin(x) * 2)
    assert not any(isinstance(n.op, HasShape) for n in f.graph.toposort())
    y = sn.tensor("y", shape=("n",))
    g = _compile(y, sn.log(1 + y) * 1.0)
    assert g.rewrites.counts() and not any(isinstance(n.op, HasShape) for n in g.graph.toposort())


@pytest.mark.parametrize("pattern, shown", [(Sin, "Sin (type)"), ("sin", "'sin' (str)")])
def test_a_pattern_that_is_no_pattern_is_refused_when_registered(pattern, shown):
    with pytest.raises(sn.ArgumentError) as info:
        register(lambda m: None, "canonicalize", pattern, name="user_bad_pattern")
    message = str(info.value)
    assert f"rule user_bad_pattern: its pattern is a symnb.opt.Pattern, not {shown}" in message
    assert "write Pattern(Sin, 'x')" in message and "user_bad_pattern" not in sn.opt.RULES
    x = sn.vector("x")
    assert _compile(x, sn.cos(x) + 1)(np.zeros(2)).tolist() == [2.0, 2.0]  # others unharmed


def test_graph_rules_return_an_iterable_of_firings():
    def listing(graph):
        return []  # a list, not a generator: no firing

    def number(graph):
        return 3

    x = sn.vector("x")
    with registered(listing, graph_level=True, pattern=None):
        assert _compile(x, sn.cos(x) + 1)(np.zeros(2)).tolist() == [2.0, 2.0]
    with registered(number, graph_level=True, pattern=None) as rule:
        with pytest.raises(RewriteError) as info:
            _compile(x, sn.cos(x) + 1)
    assert str(info.value).startswith(
        f"rule number ({rule.source}) returned a value of type int (3): a graph rule yields"
    )


def test_register_refuses_names_optimize_would_read_otherwise_and_no_phase():
    for name, kind in (("fuse", "phase"), ("stable", "mode"), ("fast", "mode")):
        with pytest.raises(sn.ArgumentError, match=f"cannot be named '{name}': that is a {kind}"):
            register(lambda m: None, "canonicalize", Pattern(Sin, "x"), name=name)
    with pytest.raises(sn.ArgumentError, match="rule user_nowhere: give its phase, one of merge"):
        register(lambda m: None, [], Pattern(Sin, "x"), name="user_nowhere")
    with pytest.raises(sn.ArgumentError, match="unknown rewrite phase 'canonicalise'"):
        register(lambda m: None, "canonicalise", Pattern(Sin, "x"), name="user_nowhere")
    assert not {"fuse", "stable", "fast", "user_nowhere"} & set(sn.opt.RULES)
    with pytest.raises(sn.ArgumentError, match="no rewrite rule is named 'user_never'"):
        unregister("user_never")


def test_include_names_strings_only():
    x = sn.vector("x")
    with pytest.raises(sn.ArgumentError, match=r"each a string, not \['fast'\]"):
        _compile(x, x + 1, optimize={"include": [["fast"]]})


def test_the_loop_warning_counts_the_firings_there_were():
    def double_to_sum(m):
        return m.x + m.x

    def sum_to_double(m):
        return m.x * 2.0

    x = sn.vector("x")
    with registered(double_to_sum, "stabilize", Pattern(Mul, "x", Const("two")), default=False):
        with registered(sum_to_double, "stabilize", Pattern(Add, "x", "x"), default=False):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                f = _compile(x, sn.exp(x) * 2.0, optimize={"include": list(RULE_PAIR)})
    said = next(str(w.message) for w in caught if w.category is sn.opt.RewriteLoopWarning)
    fired = int(re.search(r"stopped after (\d+) firings", said).group(1))
    assert fired == len(f.rewrites) and f"its budget: {fired - 1}" in said, said


RULE_PAIR = ("double_to_sum", "sum_to_double")
