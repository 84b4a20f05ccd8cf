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
