"""What a grader running a notebook (nbclient, ``jupyter nbconvert --execute``) and a student
reading it see: errors with their name and message, warnings as cards, options checked first."""

import re
import subprocess
import sys

import pytest

from tests.magics.nbtools import data, execute, notebook, stream

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("pygraphviz")

LOAD = "%load_ext symnb\nimport numpy as np\nimport symnb as sn"
BUG = "x = sn.tensor('x', shape=('batch', 4))\nW = sn.tensor('W', shape=(3, 4))\nh = x @ W"
CELLS = {
    "load": LOAD,
    "warning": (
        "import warnings\nv = sn.tensor('v', shape=('n',))\n"
        "col = sn.tensor('col', shape=('n', 1))\nu = v + col"
    ),
    "silenced": (
        "warnings.simplefilter('ignore', sn.BroadcastOuterWarning)\n"
        "u2 = v + col\nwarnings.resetwarnings()"
    ),
    "typo": "%%symcompile bad --show afterr\nz = tensor('z', shape=(3,))\nprint('ran')\nz + 1",
    "after_typo": "print('bad' in dir())",
    "no_name": "%%symcompile --show before\nprint('ran')\nz + 1",
    "bug": BUG,
}
NAMES = list(CELLS)


@pytest.fixture(scope="module")
def failed(tmp_path_factory):
    """The notebook run as a grader runs it: no cell tagged, so the bug stops the run."""
    nb = notebook(*CELLS.values(), raises=(NAMES.index("typo"), NAMES.index("no_name")))
    with pytest.raises(nbclient.exceptions.CellExecutionError) as info:
        execute(nb, str(tmp_path_factory.mktemp("grading")))
    return info.value, dict(zip(NAMES, nb.cells))


def test_the_grader_sees_the_errors_name_and_message(failed):
    error, _ = failed
    assert error.ename == "ShapeError"
    text = str(error)
    assert "ShapeError: matmul: inner dims differ: 'x' (float64(batch, 4)) @ 'W'" in text
    assert "hint: did you mean W.T?" in text
    assert re.search(r"at notebook cell, line 3: h = x @ W", text)


def test_the_student_still_sees_the_card(failed):
    _, cells = failed
    (html,) = data(cells["bug"], "text/html")
    assert '<div class="symnb-error"><b>ShapeError</b>' in html
    assert "<details><summary>full traceback</summary>" in html
    (error,) = [o for o in cells["bug"].outputs if o.output_type == "error"]
    assert error.traceback[0].startswith("ShapeError: matmul")


def test_a_shape_warning_is_a_card_naming_the_cell_line(failed):
    _, cells = failed
    cell = cells["warning"]
    assert stream(cell) == ""  # not stderr text citing ipykernel_NNN/...py
    (html,) = data(cell, "text/html")
    assert '<details class="symnb-warning BroadcastOuterWarning">' in html
    assert re.search(r"at notebook cell, line 4: u = v \+ col  \(In\[\d+\]\): add:", html)
    assert "simplefilter(&quot;ignore&quot;, sn.BroadcastOuterWarning)" in html
    (text,) = data(cell, "text/plain")
    assert "ipykernel_" not in text and "notebook cell, line 4" in text
    assert cells["silenced"].outputs == []  # the warnings filters still decide


def test_a_typo_in_show_is_refused_before_the_cell_runs(failed):
    _, cells = failed
    cell = cells["typo"]
    (html,) = data(cell, "text/html")
    assert '<div class="symnb-error"><b>CellError</b>' in html
    assert "unknown view &#x27;afterr&#x27;; choose from before, after, diff" in html
    assert "ran" not in stream(cell)  # the cell body never ran, nothing was compiled
    assert stream(cells["after_typo"]).strip() == "False"
    (html,) = data(cells["no_name"], "text/html")
    assert "<b>CellError</b><pre>%%symcompile: the following arguments are required: name" in html
    assert "ran" not in stream(cells["no_name"])


def test_nbconvert_execute_prints_the_shape_error(tmp_path):
    path = tmp_path / "homework.ipynb"
    nbformat.write(notebook(LOAD, BUG), str(path))
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute"]
    done = subprocess.run(
        [*command, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode != 0
    assert "ShapeError: matmul: inner dims differ" in done.stderr
    assert "hint: did you mean W.T?" in done.stderr


def test_the_options_are_checked_without_ipython():
    from symnb.magics.cell import VIEW_NAMES, CellError, check_options, parse_line, symcompile
    from symnb.magics.views import VIEWS

    assert tuple(VIEWS) == VIEW_NAMES
    with pytest.raises(CellError, match=r"unknown backend 'cc'; choose from py, c"):
        check_options(parse_line("f --backend cc"))
    with pytest.raises(CellError, match=r"%%symcompile: unrecognized arguments: --shwo"):
        parse_line("f --shwo before")
    with pytest.raises(CellError, match=r"--optimize needs a value \(fast, stable, none, or"):
        parse_line("f --optimize --quiet")
    namespace: dict = {}
    f = symcompile(parse_line("f --backend py --quiet"), "a = tensor('a', shape=(2,))\na * 3")
    assert f.name == "f" and "f" not in namespace
    g = symcompile(
        parse_line("g --backend py"), "b = tensor('b', shape=(2,))\nb + 1", None, namespace
    )
    assert namespace["g"] is g and g([1.0, 2.0]).tolist() == [2.0, 3.0]
