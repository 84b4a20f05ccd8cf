"""Rich reprs, LaTeX, profiles and charts, without a kernel."""

import numpy as np
import pytest

import symnb as sn
from symnb.viz.charts import bar_chart_svg, plot_line
from symnb.viz.latex import to_latex

pytest.importorskip("pygraphviz")


def test_variable_bundle_has_card_latex_and_text():
    x = sn.tensor("x", shape=("batch", 3), dtype="float32")
    W = sn.shared(np.ones((3, 2), "float32"), name="W")
    y = sn.tanh(x @ W)
    bundle = y._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html", "text/latex"}
    assert "<svg" in bundle["text/html"] and "batch" in bundle["text/html"]
    assert bundle["text/latex"] == r"$\tanh\left(x W\right)$"
    assert bundle["text/plain"].startswith("Variable:f32[batch,2]\ninputs: x:f32[batch,3]")
    leaf = x._repr_mimebundle_(include={"text/plain"})
    assert leaf == {"text/plain": "x:f32[batch,3]"}


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda x, y: x + y * 2.0, r"x + y \cdot 2"),
        (lambda x, y: (x + y) * 2.0, r"\left(x + y\right) \cdot 2"),
        (lambda x, y: x / sn.sqrt(y), r"\frac{x}{\sqrt{y}}"),
        (lambda x, y: x - (y - x), r"x - \left(y - x\right)"),
        (lambda x, y: sn.exp(-x) ** 2, r"\exp\left(-x\right)^{2}"),
        (lambda x, y: sn.sum(x * y, axis=0), r"\sum_{0} \left(x \cdot y\right)"),
    ],
)
def test_latex_of_expressions(build, expected):
    x, y = sn.vector("x"), sn.vector("y")
    assert to_latex(build(x, y)) == expected


def test_function_card_counts_nodes_before_and_after():
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x) * 1.0, backend="py", name="f")
    bundle = f._repr_mimebundle_()
    assert f"nodes {len(f.graph_before)} → {len(f.graph)}" in bundle["text/html"]
    assert "backend py" in bundle["text/html"] and "kernels —" in bundle["text/html"]
    assert bundle["text/plain"].startswith("f(x:f64[3]) -> f64[3]")


def test_profile_times_every_node_on_the_py_backend():
    x = sn.tensor("x", shape=("n", 4))
    W = sn.shared(np.ones((4, 3)), name="W")
    f = sn.function([x], sn.sum(sn.tanh(x @ W), axis=1), backend="py", optimize="none")
    profile = f.profile(np.ones((5, 4)), repeat=3)
    assert len(profile.rows) == len(f.graph)
    assert all(r.calls == 3 and r.where == "NumPy" for r in profile.rows)
    assert sum(profile.share(r) for r in profile.rows) == pytest.approx(1.0)
    seconds = [r.seconds for r in profile.rows]
    assert seconds == sorted(seconds, reverse=True)
    matmul = next(r for r in profile.rows if r.op == "matmul")
    assert matmul.bytes == 3 * (5 * 4 + 4 * 3 + 5 * 3) * 8
    html = profile._repr_html_()
    assert html.count("<rect class='bar'") == len(profile.rows)
    assert "matmul" in profile.text()


def test_profile_times_every_step_on_the_c_backend():
    if "c" not in sn.backends.LINKERS:
        pytest.skip("the C backend is not registered")
    x = sn.tensor("x", shape=("n", 4))
    W = sn.shared(np.ones((4, 3)), name="W")
    f = sn.function([x], sn.sum(sn.tanh(x @ W), axis=1), backend="c")
    profile = f.profile(np.ones((5, 4)), repeat=3)
    assert len(profile.rows) == len(f.kernels) and all(r.calls == 3 for r in profile.rows)
    where = {r.op.split("[")[0]: r.where for r in profile.rows}
    assert where["matmul"] == "BLAS" and where["sum"] == "generated C on the CPU"
    assert not any("no per-step timing" in note for note in profile.notes)


def test_profile_without_arguments_uses_random_inputs():
    x = sn.tensor("x", shape=("batch", 4))
    y = sn.tensor("y", shape=("batch",))
    f = sn.function([x, y], sn.sum(x, axis=1) + y, backend="py")
    profile = f.profile(repeat=2)
    assert profile.calls == 2 and profile.rows
    assert "random arrays" in profile.notes[-1]


def test_profile_of_a_backend_without_step_timing_says_so():
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x), backend="py")
    f.linker.run_profiled = None
    profile = f.profile(np.ones(3), repeat=2)
    assert [r.label for r in profile.rows] == ["whole call"]
    assert "no per-step timing" in profile.notes[0]


def test_charts():
    svg = bar_chart_svg(["a", "b"], [75.0, 25.0], unit="%")
    assert svg.count("<rect class='bar'") == 2 and "75.0%" in svg
    line = plot_line([3.0, 2.0, 1.5, 1.0], title="loss")._repr_svg_()
    assert len(line.split("points='")[1].split("'")[0].split()) == 4


def test_profile_checks_its_inputs_as_a_call_does():
    a, b = sn.tensor("a", shape=("n",)), sn.tensor("b", shape=("m",))
    c = sn.tensor("c", shape=("n+m",))
    f = sn.function([a, b, c], sn.concatenate([a, b]) + c, backend="py")
    wrong = (np.ones(2), np.ones(3), np.ones(4))  # n+m is 5, not 4
    with pytest.raises(sn.InputError) as call_error:
        f(*wrong)
    with pytest.raises(sn.InputError) as profile_error:
        f.profile(*wrong, repeat=1)
    assert str(profile_error.value) == str(call_error.value)
