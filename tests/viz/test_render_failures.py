"""A Graphviz that is there but cannot lay a graph out (pygraphviz's OSError, ``dot`` exiting
non-zero) leaves every display its note and DOT text, as a missing Graphviz does."""

from __future__ import annotations

import os

import numpy as np
import pytest

import symnb as sn
from symnb.magics import views
from symnb.viz import render
from symnb.viz.cards import function_card, variable_card
from symnb.viz.graphs import picture
from symnb.viz.reprs import variable_bundle
from symnb.viz.stepper import static_stepper_html


@pytest.fixture
def function():
    x = sn.tensor("x", shape=("batch", 3))
    W = sn.shared(np.ones((3, 2)), name="W")
    loss = sn.mean(sn.sum(sn.exp(x @ W) * 2.0, axis=1))
    return sn.function([x], loss, updates={W: W - 0.1 * sn.grad(loss, W)}, backend="py")


def _trouble_in_init_rank(*args, **kwargs):
    raise OSError("trouble in init_rank")


@pytest.fixture(params=["pygraphviz", "dot"])
def broken(request, monkeypatch, tmp_path):
    """Graphviz present but failing: pygraphviz's draw raising, or a ``dot`` exiting 1."""
    if request.param == "pygraphviz":
        pygraphviz = pytest.importorskip("pygraphviz")
        monkeypatch.setattr(pygraphviz.AGraph, "draw", _trouble_in_init_rank)
        monkeypatch.setattr(render, "RENDERERS", (render._pygraphviz,))
        said = "OSError: trouble in init_rank"
    else:
        dot = tmp_path / "dot"
        dot.write_text("#!/bin/sh\necho 'Error: trouble in init_rank' >&2\nexit 1\n")
        dot.chmod(0o755)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setattr(render, "RENDERERS", (render._dot_executable,))
        said = "dot failed: Error: trouble in init_rank"
    render.render_svg.cache_clear()
    yield said
    render.render_svg.cache_clear()


def test_a_layout_failure_shows_the_note_and_the_dot_text(broken, function):
    bundle = picture(function)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "Graphviz failed" in bundle["text/html"] and broken in bundle["text/html"]
    assert "digraph symnb" in bundle["text/html"] and "Graphviz failed" in bundle["text/plain"]
    with pytest.raises(render.RenderUnavailable, match="Graphviz failed"):
        picture(function).svg()


def test_every_display_survives_a_layout_failure(broken, function):
    var = function.graph_before.outputs[0]
    for html in (
        variable_card(var),
        variable_bundle(var)["text/html"],
        function_card(function),
        static_stepper_html(function),
    ):
        assert "Graphviz failed" in html and "digraph symnb" in html
    assert function.graph._repr_svg_() is None
    for name in ("before", "after", "diff", "grad"):
        shown = views.VIEWS[name](function)
        assert "Graphviz failed" in shown._repr_mimebundle_()["text/html"], name


def test_a_graph_without_graphviz_shows_the_note_and_the_dot_text(monkeypatch, function):
    """``f.graph`` with no Graphviz showed only ``<symnb.Graph: ...>``: now what picture()
    shows then, and in plain text how to print its text form."""
    monkeypatch.setattr(render, "RENDERERS", ())
    render.render_svg.cache_clear()
    bundle = function.graph._repr_mimebundle_()
    render.render_svg.cache_clear()
    assert "image/svg+xml" not in bundle
    assert "no Graphviz found" in bundle["text/html"] and "digraph symnb" in bundle["text/html"]
    text = bundle["text/plain"]
    assert text.startswith(repr(function.graph)) and "print(graph) for its text form" in text
    assert function.graph._repr_svg_() is None


def test_a_graph_with_graphviz_is_its_svg(function):
    pytest.importorskip("pygraphviz")
    bundle = function.graph._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"] and bundle["text/plain"] == repr(function.graph)
    assert function.graph._repr_mimebundle_(include={"text/plain"}) == {
        "text/plain": repr(function.graph)
    }


def test_without_graphviz_a_view_keeps_its_notes_and_style(monkeypatch, function):
    """The fallback of a view with notes (``--show diff``, ``grad``) showed the DOT text alone:
    its notes and the style sheet were lost."""
    monkeypatch.setattr(render, "RENDERERS", ())
    render.render_svg.cache_clear()
    for name in ("diff", "grad"):
        shown = views.VIEWS[name](function)
        html = shown._repr_mimebundle_()["text/html"]
        assert shown.view.notes, name
        for note in shown.view.notes:
            assert note in html, (name, note)
        assert html.startswith("<style>") and "digraph symnb" in html, name
    render.render_svg.cache_clear()
