"""The rewrite stepper without a kernel: filters, positions and what each step shows."""

import numpy as np
import pytest

import symnb as sn
from symnb.magics import stepper
from tests.magics.nbtools import svg_structure

pytest.importorskip("ipywidgets")
pytest.importorskip("pygraphviz")


@pytest.fixture
def f():
    x = sn.tensor("x", shape=("batch", 3))
    W = sn.shared(np.ones((3, 2)), name="W")
    loss = sn.mean(sn.sum(sn.sigmoid(x @ W) * 2.0 + 0.0, axis=1))
    return sn.function([x], loss, backend="py", name="f")


def shown(st):
    return svg_structure(st.graph.outputs[0]["data"]["image/svg+xml"])


def test_steps_through_the_history(f):
    st = stepper(f)
    history = list(f.rewrites)
    assert st.slider.max == len(history) >= 2
    assert "as written" in st.info.value
    start = shown(st)
    st.go(1)
    assert f"<b class='rule'>{history[0].rule}</b>" in st.info.value
    assert history[0].phase in st.info.value
    assert shown(st) != start
    st.go(99)
    assert st.slider.value == st.slider.max
    st.go(0)
    assert shown(st) == start


def test_filter_by_phase_and_rule(f):
    st = stepper(f)
    history = list(f.rewrites)
    phase = history[-1].phase
    st.phase.value = phase
    assert st.slider.max == sum(1 for s in history if s.phase == phase)
    st.go(1)
    assert f"phase <i>{phase}</i>" in st.info.value
    st.phase.value = "all"
    st.rule.value = history[0].rule
    assert st.slider.max == sum(1 for s in history if s.rule == history[0].rule)


def test_a_function_without_history_gets_one_line(f):
    f.rewrites = None
    display = stepper(f)
    assert "no rewrite history" in display._repr_mimebundle_()["text/html"]


@pytest.mark.skipif(sn.backends.default_backend() != "c", reason="no C compiler")
def test_steps_into_the_rewrites_inside_a_loop():
    """Backend "c" rewrites each scan's step when it compiles it: after the function's own
    rewrites the stepper walks those, each frame naming the loop and showing its graph."""
    x, w = sn.tensor("x", shape=("T", 3)), sn.matrix("w")

    def step(xt, h):  # exp(h) - 1 inside the step: the inner rewrite makes it expm1(h)
        return sn.tanh(xt + (sn.exp(h) - 1) @ w)

    hs, _ = sn.scan(step, sequences=x, outputs_info=sn.zeros(3))
    f = sn.function([x, w], hs, backend="c", name="loop")
    outer = list(f.rewrites)
    st = stepper(f)
    assert st.slider.max > len(outer)
    inner = [s.rule for s in st.history[len(outer) :]]
    assert inner[0] == "expm1_of_exp" and "fuse_elemwise" in inner, inner
    st.go(len(outer) + 1)
    assert "inside <b>scan 0 (scan[1 seq, 1 state, 0 out])</b>" in st.info.value
    boxes = shown(st)
    st.go(len(outer))  # the function's last own rewrite: the outer graph
    assert "inside" not in st.info.value and shown(st) != boxes
    np.testing.assert_allclose(f(np.ones((2, 3)), np.eye(3))[0], np.tanh(np.ones(3)))
