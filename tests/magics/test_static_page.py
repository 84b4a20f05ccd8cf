"""What an exported page needs without network or kernel: formulas as MathML, and a stepper
whose every step is embedded and switched by inline JavaScript."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symnb as sn
from symnb.viz.cards import variable_card
from symnb.viz.latex import to_latex
from symnb.viz.mathml import formula, to_mathml
from symnb.viz.stepper import static_stepper_html

M = "{http://www.w3.org/1998/Math/MathML}"


def tree(latex: str) -> ET.Element:
    return ET.fromstring(to_mathml(latex))  # well-formed XML, or this raises


def tags(element) -> list[str]:
    return [e.tag.removeprefix(M) for e in element.iter()]


def test_every_construct_that_to_latex_writes():
    x = sn.tensor("x_in", shape=(3,))
    W = sn.tensor("W", shape=(3, 3))
    cases = {
        sn.sqrt(abs(x)) / (x // 2): ["mfrac", "msqrt"],
        sn.sum(sn.exp(x @ W.T) ** 2, axis=0): ["msub", "msup"],
    }
    for expr, expected in cases.items():
        root = tree(to_latex(expr))
        assert set(expected) <= set(tags(root)), to_latex(expr)
    text = "".join(tree(to_latex(sn.sigmoid(x) - sn.log_softmax(x, axis=0))).itertext())
    assert "σ" in text and "log_softmax" in text and "\\" not in text
    assert "in" in "".join(tree(to_latex(x + 1)).itertext())  # x_{in}: a subscript


def test_fences_stretch_and_operators_are_math_symbols():
    root = tree(r"\left(a - b\right) \cdot \left\lfloor c \right\rfloor \le \ldots")
    fences = [e.text for e in root.iter(M + "mo") if e.get("stretchy") == "true"]
    assert fences == ["(", ")", "⌊", "⌋"]
    operators = [e.text for e in root.iter(M + "mo") if e.get("stretchy") is None]
    assert operators == ["−", "·", "≤", "…"]


def test_an_unknown_command_is_kept_not_dropped():
    root = tree(r"\weird{a} + \mathbf{c}")
    assert [e.text for e in root.iter(M + "mtext")] == ["\\weird"]
    assert [e.get("mathvariant") for e in root.iter(M + "mi")][-1] == "bold"


def test_formula_and_the_expression_card_carry_mathml():
    x = sn.tensor("x", shape=(3,))
    f = formula(sn.exp(x) / 2)
    assert "<mfrac>" in f._repr_html_() and f._repr_latex_() == r"$$\frac{\exp\left(x\right)}{2}$$"
    assert "<math" in variable_card(sn.exp(x), with_graph=False)
    assert "<math" not in variable_card(x, with_graph=False)


@pytest.fixture
def f():
    pytest.importorskip("pygraphviz")
    x = sn.tensor("x", shape=("batch", 3))
    W = sn.shared(np.ones((3, 2)), name="W")
    loss = sn.mean(sn.sum(sn.sigmoid(x @ W) * 2.0 + 0.0, axis=1))
    return sn.function([x], loss, backend="py", name="f")


def test_the_static_stepper_embeds_every_step(f):
    html = static_stepper_html(f)
    frames = re.findall(r'<div class="symnb-frame" data-step="(\d+)"( hidden)?>', html)
    assert len(frames) == len(f.rewrites) + 1 >= 3
    assert frames[0] == ("0", "") and all(hidden for _, hidden in frames[1:])
    assert html.count("<svg") == len(frames)
    for step, info in zip(f.rewrites, re.findall(r'<div class="symnb-info">(.*?)</div>', html)[1:]):
        assert f"<b class='rule'>{step.rule}</b>" in info
    assert "<script" not in html and "http" not in html.replace("http://www.w3.org", "")
    assert 'onclick="var s=this.closest(' in html and f'max="{len(frames) - 1}"' in html


def test_a_long_history_is_cut_with_a_note(f):
    html = static_stepper_html(f, max_steps=1)
    assert html.count('class="symnb-frame"') == 2
    n = len(f.rewrites)
    assert f"(the first 1 of {n} rewrites)" in html
    # the first frame counts the rewrites the filters match, not those embedded
    first = re.findall(r'<div class="symnb-info">(.*?)</div>', html)[0]
    assert f"· {n} of {n} rewrites match the filters" in first
    phase = f.rewrites[0].phase
    matching = sum(s.phase == phase for s in f.rewrites)
    html = static_stepper_html(f, max_steps=1, phase=phase)
    first = re.findall(r'<div class="symnb-info">(.*?)</div>', html)[0]
    assert f"· {matching} of {n} rewrites match the filters" in first


def test_the_widget_carries_the_static_stepper_for_exports(f):
    pytest.importorskip("ipywidgets")
    from symnb.magics import stepper

    bundle = stepper(f)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert 'class="symnb-card symnb-stepper"' in bundle["text/html"]


def test_without_ipywidgets_the_stepper_is_the_static_one(f, monkeypatch):
    import importlib.util

    from symnb.magics import stepper

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name)
    )
    bundle = stepper(f)._repr_mimebundle_()
    assert 'class="symnb-card symnb-stepper"' in bundle["text/html"]
    assert bundle["text/plain"].startswith(f"{len(f.rewrites)} rewrites (install ipywidgets")


def test_without_ipywidgets_a_filter_the_history_lacks_is_refused(f, monkeypatch):
    """Without ipywidgets a typo of a phase/rule was an empty static stepper; it is refused
    as the widget refuses it, naming those the history has."""
    import importlib.util

    from symnb.magics import stepper

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name)
    )
    phases = list(dict.fromkeys(s.phase for s in f.rewrites))
    with pytest.raises(ValueError, match=r"no rewrite of phase 'fusee' in this history; its "):
        stepper(f, phase="fusee")
    with pytest.raises(ValueError, match=r"no rewrite of rule 'nope'"):
        stepper(f, rule="nope")
    text = stepper(f, phase=phases[0])._repr_mimebundle_()["text/plain"]
    assert text.startswith(f"{len(f.rewrites)} rewrites")


@pytest.mark.skipif(sn.backends.default_backend() != "c", reason="no C compiler")
def test_without_ipywidgets_the_count_takes_in_the_loops_rewrites(monkeypatch):
    import importlib.util

    from symnb.magics import stepper
    from symnb.magics.stepper_widget import history_of

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name)
    )
    x, w = sn.tensor("x", shape=("T", 3)), sn.matrix("w")
    hs, _ = sn.scan(
        lambda xt, h: sn.tanh(xt + (sn.exp(h) - 1) @ w), sequences=x, outputs_info=sn.zeros(3)
    )
    f = sn.function([x, w], hs, backend="c", name="loop")
    history = history_of(f)
    assert len(history) > len(f.rewrites)
    text = stepper(f)._repr_mimebundle_()["text/plain"]
    assert text.startswith(f"{len(history)} rewrites (install ipywidgets")
