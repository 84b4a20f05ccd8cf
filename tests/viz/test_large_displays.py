"""Displays of large functions stay small and quick: the static stepper embeds frames up to
a budget and says what it left out; plain-text forms are cut with a count."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

import symnb as sn
from symnb.magics import views
from symnb.viz import stepper as stepper_module
from symnb.viz.mathml import to_mathml
from symnb.viz.reprs import variable_bundle
from symnb.viz.stepper import static_stepper_html
from symnb.viz.text import MAX_LINE_CHARS, MAX_TEXT_LINES
from tests.helpers import needs_c

pytest.importorskip("pygraphviz")


def chain(n: int, backend="py"):
    z = sn.tensor("z", shape=("n",))
    h = z
    for _ in range(n):
        h = sn.sin(h) + 1
    return sn.function([z], h, backend=backend, name="chain")


def frames(html: str) -> int:
    return html.count('class="symnb-frame"')


def left_out(html: str) -> str:
    found = re.findall(r'symnb-left-out">(.*?)</div>', html)
    return found[0] if found else ""


def test_the_static_stepper_of_a_large_function_keeps_to_its_budget(monkeypatch):
    """A 200-layer chain has 200 rewrites and draws ~400 nodes a frame: frames stop at the
    node budget (the time to make them grows with it), not at 60 frames, and a note says
    how many were left out and how to see them."""
    f = chain(200)
    made = []
    step_frame = stepper_module.step_frame
    monkeypatch.setattr(
        stepper_module, "step_frame", lambda *a, **k: made.append(1) or step_frame(*a, **k)
    )
    html = static_stepper_html(f)
    kept = frames(html) - 1
    assert len(made) == kept < stepper_module.MAX_STATIC_STEPS
    drawn = len(f.graph_before)  # each frame draws about the whole graph
    assert kept * drawn <= stepper_module.MAX_STATIC_NODES + drawn
    note = left_out(html)
    assert f"steps 1 to {kept} of the {len(f.rewrites)} rewrites" in note
    assert f"the other {len(f.rewrites) - kept} are left out" in note
    assert "sn.magics.stepper(f)" in note and "phase=" in note and "merge (" in note
    assert f'max="{kept}"' in html and f"step 1/{kept} " in html


def test_a_byte_budget_and_filters(monkeypatch):
    f = chain(5)
    history = list(f.rewrites)
    whole = static_stepper_html(f)
    assert frames(whole) == len(history) + 1 and not left_out(whole)
    small = static_stepper_html(f, max_bytes=1)  # the first step is always there
    assert frames(small) == 2 and "as much as a saved notebook should hold" in left_out(small)
    assert f"(the first 1 of {len(history)} rewrites)" in small
    phase = history[-1].phase
    only = static_stepper_html(f, phase=phase)
    assert frames(only) == sum(s.phase == phase for s in history) + 1
    assert f"phase <i>{phase}</i>" in only and not left_out(only)


def test_the_stepper_takes_its_filters_from_the_start():
    pytest.importorskip("ipywidgets")
    from symnb.magics import stepper

    f = chain(5)
    phase = list(f.rewrites)[-1].phase
    st = stepper(f, phase=phase)
    assert st.phase.value == phase
    assert st.slider.max == sum(s.phase == phase for s in f.rewrites)
    assert frames(st.static_html()) == st.slider.max + 1
    with pytest.raises(ValueError, match="no rewrite of phase 'nonsense'.*merge"):
        stepper(f, phase="nonsense")


def test_the_plain_text_of_a_large_expression_is_cut_with_a_count():
    """A 3000-node expression's text/plain was its whole text form (172 KB in the notebook):
    now its first lines and how to print the rest, which format_expr still gives."""
    z = sn.tensor("z", shape=("n",))
    h = z
    for _ in range(1500):
        h = sn.sin(h) + 1
    h.name = "h"
    text = variable_bundle(h, include={"text/plain"})["text/plain"]
    whole = sn.format_expr(h)
    lines = text.splitlines()
    assert lines[0] == repr(h) and lines[1:-1] == whole.splitlines()[:MAX_TEXT_LINES]
    more = len(whole.splitlines()) - MAX_TEXT_LINES
    assert lines[-1] == f"... {more:,} more lines; print(sn.format_expr(h)) shows all"
    small = sn.sin(z) + 1
    assert variable_bundle(small)["text/plain"] == f"{small!r}\n{sn.format_expr(small)}"


def test_the_plain_text_of_a_function_of_many_inputs_is_cut_with_a_count():
    """500 inputs were one line of 6,000+ characters; each list is cut with a count."""
    xs = [sn.vector(f"x{i}") for i in range(500)]
    total = sum(xs[1:], xs[0])
    f = sn.function(xs, [total, total * 2, total + 1], backend="py", name="g")
    text = f._repr_mimebundle_(include={"text/plain"})["text/plain"]
    head = text.splitlines()[0]
    assert max(len(line) for line in text.splitlines()) <= MAX_LINE_CHARS
    k = len(re.findall(r"x\d+:f64\[\?\]", head))
    listed = ", ".join(f"x{i}:f64[?]" for i in range(k))
    assert 3 < k < 500
    assert head == f"g({listed}, ... and {500 - k} more inputs) -> f64[?], f64[?], f64[?]"
    small = sn.function(xs[:2], xs[0] + xs[1], backend="py", name="s")
    small_text = small._repr_mimebundle_(include={"text/plain"})["text/plain"]
    assert small_text.splitlines()[0] == "s(x0:f64[?], x1:f64[?]) -> f64[?]"


@needs_c
def test_the_kernels_view_shows_each_kernel_source_once():
    """Each layer of a deep network compiles to the same C: the view shows it once and
    names the first step for the others; its plain text is cut with a count."""
    x = sn.tensor("x", shape=("batch", 8))
    h = x
    for i in range(20):
        h = sn.tanh(h @ sn.shared(np.ones((8, 8)) * 0.1, name=f"W{i}"))
    f = sn.function([x], h.sum(), backend="c")
    sources = [k.source for k in f.kernels if k.source]
    assert len(sources) >= 20
    bundle = views.show_kernels(f)._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    assert html.count('class="symnb-loop"') == len(set(sources)) < len(sources)
    layer = max(set(sources), key=sources.count)  # tanh, 20 times
    first = next(i for i, k in enumerate(f.kernels) if k.source == layer)
    assert f"the same C as step {first}</div>" in html
    assert len(text.splitlines()) == MAX_TEXT_LINES + 1
    assert text.endswith("more lines; print(f.kernels.listing()) for all")


def test_a_shared_subexpression_is_written_once_in_the_formula():
    """to_latex wrote a value used k times k times, at every level: a 60-node chain of
    ``h = where(h > 1, h - 1, h)`` made a 455 KB card, 9 nodes of ``concatenate([g] * 5)``
    took 52 s. Now a value used more than once is named and defined once."""
    a, b = sn.vector("a"), sn.vector("b")
    s = sn.exp(a + b)
    assert sn.viz.to_latex(s * s + s) == (
        r"t_{1} \cdot t_{1} + t_{1} \quad \text{where} \quad t_{1} = \exp\left(a + b\right)"
    )
    shown = to_mathml(sn.viz.to_latex(s * s))  # the page's MathML spaces out "where"
    assert '<mo>\u2003</mo><mi mathvariant="normal">where</mi>' in shown and "mtext" not in shown
    e = sn.exp(sn.vector("t"))  # bound names take a letter no input is written with
    assert sn.viz.to_latex(e / sn.sum(e)) == (
        r"\frac{s_{1}}{\sum_{0} s_{1}} \quad \text{where} \quad s_{1} = \exp\left(t\right)"
    )
    h = sn.vector("h")
    for _ in range(20):  # 60 nodes, h used 3 times at each step
        h = sn.where(h > 1.0, h - 1.0, h)
    g = sn.vector("g")
    for _ in range(9):
        g = sn.concatenate([g, g, g, g, g])
    for var, nodes in ((h, 60), (g, 9)):
        latex = sn.viz.to_latex(var)
        assert len(latex) < 100 * nodes, len(latex)
        bundle = variable_bundle(var)
        assert len(bundle["text/html"]) < 60_000 and len(bundle["text/latex"]) < 100 * nodes
    assert sn.viz.to_latex(h).startswith(r"\operatorname{where}\left(t_{11} > 1, t_{11} - 1,")


def test_many_inputs_of_one_name_are_told_apart_in_linear_time():
    """Each twin's index was found by comparing every candidate with every input written:
    ``sn.stack`` of 1,200 unnamed scalars took 11 s to write as LaTeX, 2,000 about a minute."""
    n = 2000
    parts = [sn.scalar(dtype="float64") for _ in range(n)] + [sn.scalar("v_1")]
    stacked = sn.stack(parts)
    start = time.perf_counter()
    latex, infix = sn.viz.to_latex(stacked), sn.viz.latex.to_infix(stacked)
    assert time.perf_counter() - start < 5.0
    names = re.findall(r"dimshuffle\}\\left\((.*?)\\right\)", latex)
    assert names[:3] == ["v", "{v}^{(1)}", "{v}^{(2)}"] and names[-1] == "v_{1}"
    assert len(set(names)) == n + 1 and names[n - 1] == f"{{v}}^{{({n - 1})}}"
    assert len(set(re.findall(r"\('x',\)\]\((.*?)\)", infix))) == n + 1
