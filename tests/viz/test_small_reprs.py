"""What objects print as in a terminal (and a saved notebook's text/plain): a short line
that says what they are, never ``<... object at 0x...>``; wrong arguments get clear errors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symnb as sn
from symnb.ops.random import RandomStream
from symnb.viz.cards import Html
from symnb.viz.charts import plot_line
from symnb.viz.graphs import as_graph, picture

ADDRESS = re.compile(r"object at 0x")


@pytest.fixture
def f():
    x = sn.tensor("x", shape=("n",))
    return sn.function([x], sn.log(1 + sn.exp(x)) * 2.0, name="f", backend="py")


def test_short_reprs(f):
    stream = RandomStream(3)
    stream.uniform((2,))
    shown = {
        "html": repr(Html("<b>x</b>")),
        "html with text": repr(Html("<b>x</b>", "bold x")),
        "chart": repr(plot_line([1.0, 2.0, 3.0], "loss")),
        "stream": repr(stream),
        "phases": repr(f.compile_phases),
        "linker": repr(f.linker),
    }
    assert not [k for k, v in shown.items() if ADDRESS.search(v)], shown
    assert shown["html"] == "(HTML display, 8 characters)"
    assert shown["html with text"] == "bold x"
    assert shown["chart"].startswith("<chart: line chart loss")
    assert shown["stream"] == "<RandomStream seed=3: 1 draw>"
    assert shown["phases"].startswith("<compile phases, ") and "rewrites" in shown["phases"]
    steps = len(f.linker.plan.steps)
    assert re.fullmatch(rf"<PyLinker: backend 'py', on NumPy, {steps} steps?>", shown["linker"])


def test_a_picture_counts_what_it_draws_in_words():
    """A picture's text (and its SVG's aria-label) said "2 input, 1 op, 1 output"."""
    x, y = sn.vector("x"), sn.vector("y")
    W = sn.shared(np.zeros(3), name="W")
    assert repr(picture(x + y)) == "<graph: 2 inputs, 1 op, 1 output>"
    two = picture([sn.exp(x * W), x + 1.0], "before")
    assert repr(two) == "<graph before: 1 input, 1 shared, 1 constant, 3 ops, 2 outputs>"


def test_the_stepper_prints_as_itself_and_shows_any_position(f):
    pytest.importorskip("ipywidgets")
    from symnb.magics import stepper

    st = stepper(f)
    last = st.slider.max
    assert repr(st) == f"<rewrite stepper of f: step 0 of {last}; {last} rewrites; .go(k) moves it>"
    assert st._repr_mimebundle_()["text/plain"] == repr(st)
    st.show(100)  # clamped as go() is: the last position
    assert f"step {last}/{last} " in st.info.value
    st.show(-1)
    assert "as written" in st.info.value


@pytest.mark.parametrize("thing", [42, None, 1.5])
def test_drawing_something_that_is_not_a_graph_says_what_it_takes(thing):
    with pytest.raises(TypeError, match=r"cannot show .*: expected a graph, a function"):
        as_graph(thing)
    with pytest.raises(TypeError, match=r"cannot show .*: expected a graph, a function"):
        picture(thing)
    assert len(as_graph([sn.exp(sn.tensor("x", shape=(2,)))])) == 1
