"""Every magic and display, executed in a real kernel (nbclient); assertions on the outputs."""

import json
import re

import pytest

from tests.helpers import needs_c
from tests.magics.nbtools import data, execute, mimetypes, notebook, stream, svg_structure

pytest.importorskip("pygraphviz")
pytest.importorskip("ipywidgets")

WIDGET = "application/vnd.jupyter.widget-view+json"

CELLS = {
    "load": "%load_ext symnb\nimport numpy as np\nimport symnb as sn",
    "compile": (
        "%%symcompile f --backend py --show before,after,diff,grad,kernels,profile,steps\n"
        "x = tensor('x', shape=('batch', 3))\n"
        "y = tensor('y', shape=('batch', 2))\n"
        "W = shared(np.ones((3, 2)), name='W')\n"
        "loss = mean(sum((sigmoid(x @ W) - y) ** 2, axis=1))\n"
        "gW = grad(loss, W)\n"
        "updates = {W: W - 0.1 * gW}\n"
        "loss"
    ),
    "naming": "print(f.name, [v.name for v in f.inputs], f.graph.outputs[0].name, len(f.updates))",
    "symgraph": "%symgraph loss",
    "symprofile": "%symprofile -n 3 f(np.ones((4, 3)), np.zeros((4, 2)))",
    "shape_error": (
        "%%symcompile bad\n"
        "a = tensor('a', shape=('batch', 3))\n"
        "V = shared(np.ones((2, 2)), name='V')\n"
        "a @ V"
    ),
    "leaf": "x",
    "expr": "loss",
    "card": "f",
    "graph": "f.graph",
    "stepper": "st = sn.magics.stepper(f)\ns0 = st.graph.outputs[0]['data']['image/svg+xml']\nst",
    "step": (
        "import json\nst.next.click()\nst.next.click()\n"
        "print(json.dumps({'value': st.slider.value, 'max': st.slider.max,"
        " 'info': st.info.value, 's0': s0,"
        " 'svg': st.graph.outputs[0]['data']['image/svg+xml'],"
        " 'rule': f.rewrites[1].rule}))"
    ),
    "explicit": (
        "%%symcompile g --inputs y2,x2 --outputs a2,b2 --optimize none --quiet\n"
        "x2 = tensor('x2', shape=(3,))\ny2 = tensor('y2', shape=(3,))\na2 = x2 + y2\nb2 = x2 * y2"
    ),
    "explicit_check": (
        "print([v.name for v in g.inputs], g(np.ones(3), 2 * np.ones(3))[1].tolist(), "
        "len(g.graph) == len(g.graph_before))"
    ),
    "progress": "from symnb.viz.progress import progress\nsum(progress(range(8), label='work'))",
}
NAMES = list(CELLS)


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    nb = notebook(*CELLS.values(), raises=(NAMES.index("shape_error"),))
    execute(nb, str(tmp_path_factory.mktemp("nb")))
    return dict(zip(NAMES, nb.cells)), nb


def test_load_ext_is_silent(cells):
    assert cells[0]["load"].outputs == []


def test_symcompile_shows_card_and_every_view(cells):
    cell = cells[0]["compile"]
    assert {"text/html", "image/svg+xml", WIDGET} <= mimetypes(cell)
    svgs = data(cell, "image/svg+xml")
    assert len(svgs) == 4  # before, after, diff, grad
    before, after, diff, grad = (svg_structure(s) for s in svgs)
    assert len(before["node"]) > len(after["node"]) or after["cluster"]
    assert any("grad" in c.split() for _, c in grad["node"])
    assert any("removed" in c.split() for _, c in diff["node"])
    html = "\n".join(data(cell, "text/html"))
    assert "ƒ f" in html  # the card
    assert "generates no kernels; use --backend c" in html  # --show kernels on py
    assert "profile: 10 calls" in html  # --show profile


def test_inputs_outputs_and_updates_are_named_from_the_cell(cells):
    assert stream(cells[0]["naming"]).strip() == "f ['x', 'y'] loss 1"


def test_symgraph_draws_the_expression(cells):
    (svg,) = data(cells[0]["symgraph"], "image/svg+xml")
    titles = {t for t, _ in svg_structure(svg)["node"]}
    assert {"var:x", "var:y", "var:W", "matmul#0", "sigmoid#0", "out:0"} <= titles


def test_symprofile_shows_table_and_chart(cells):
    (html,) = data(cells[0]["symprofile"], "text/html")
    assert "profile: 3 calls" in html and "<table" in html and "<rect class='bar'" in html
    assert "NumPy" in html


def test_shape_error_is_short_and_points_at_the_cell_line(cells):
    cell = cells[0]["shape_error"]
    (html,) = data(cell, "text/html")
    assert "ShapeError" in html and "matmul" in html
    assert re.search(r"notebook cell( In\[\d+\])?, line 4: a @ V", html)
    assert "<details><summary>full traceback</summary>" in html
    (error,) = [o for o in cell.outputs if o.output_type == "error"]  # for nbclient/nbconvert
    assert error.ename == "ShapeError" and error.evalue.startswith("matmul: inner dims differ")
    assert error.traceback[0].startswith("ShapeError: matmul") and len(error.traceback) <= 3
    assert not any("File " in line for line in error.traceback)  # no traceback wall


def test_rich_reprs(cells):
    assert {"text/html", "text/plain"} <= mimetypes(cells[0]["leaf"])
    assert data(cells[0]["leaf"], "text/latex") == ["$x$"]
    assert {"text/html", "text/latex", "text/plain"} <= mimetypes(cells[0]["expr"])
    (latex,) = data(cells[0]["expr"], "text/latex")
    assert r"\sigma" in latex
    assert "nodes" in data(cells[0]["card"], "text/html")[0]
    assert "image/svg+xml" in mimetypes(cells[0]["graph"])


def test_stepper_state_after_stepping(cells):
    cell_map, nb = cells
    assert WIDGET in mimetypes(cell_map["stepper"])
    state = json.loads(stream(cell_map["step"]))
    assert state["value"] == 2 and state["max"] >= 2
    assert f"<b class='rule'>{state['rule']}</b>" in state["info"]
    assert svg_structure(state["svg"]) != svg_structure(state["s0"])
    widgets = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    sliders = [w["state"] for w in widgets.values() if w["model_name"] == "IntSliderModel"]
    assert any(s["value"] == 2 and s["description"] == "step" for s in sliders)


@needs_c  # without a compiler, the notebook's first compile warns (on stderr) that it uses py
def test_explicit_inputs_outputs_and_optimize(cells):
    assert stream(cells[0]["explicit_check"]).strip() == "['y2', 'x2'] [2.0, 2.0, 2.0] True"
    assert cells[0]["explicit"].outputs == []  # --quiet


def test_progress_shows_a_bar_and_finishes(cells):
    cell = cells[0]["progress"]
    # the bar's output became one line when it finished: what a saved or exported page shows
    assert WIDGET not in mimetypes(cell)
    assert "work: 8/8 done" in data(cell, "text/html")[0]
    assert data(cell, "text/plain") == ["work: 8/8 done", "28"]
