"""The course in notebooks/: every notebook there is executed headlessly (nbclient, in a fresh
kernel of this interpreter), must run without errors outside its cells tagged
``raises-exception`` (and those must raise), and shows what it says it shows; none is
committed with outputs; ``symnb check`` passes on each.

A notebook is found by the glob, never listed by hand: a new one is executed and checked
for errors as soon as it lands, and the table ``CHECKS`` adds what its own outputs must say.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.helpers import needs_c
from tests.magics.nbtools import ROOT, data, stream, svg_structure

#: the notebooks run as students run them, on backend "c" (without a compiler every notebook's
#: first compile warns on stderr, which this test counts as a failure)
pytestmark = needs_c
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("sklearn")
#: notebooks that need a package beyond the notebook and demo extras (the test extra has it)
NEEDS = {"10_dask_sweep": "distributed"}

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RAISES = "raises-exception"


def tagged(cell) -> bool:
    return RAISES in cell.get("metadata", {}).get("tags", [])


def errors(cell) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in cell.get("outputs", []) if o.output_type == "error"]


def text(nb) -> str:
    """Everything a reader sees as text: streams, plain-text and HTML results, errors."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        parts.append(stream(cell))
        parts += data(cell, "text/plain") + data(cell, "text/html")
        parts += errors(cell)
    return "\n".join(parts)


def charts(nb, kind: str) -> int:
    """How many of symnb's SVG charts of ``kind`` ("lines", "bars", "images") are shown."""
    return sum(f"class='symnb-{kind}'" in s[:400] for s in svgs(nb))


def svgs(nb) -> list[str]:
    return [s for cell in nb.cells if cell.cell_type == "code" for s in data(cell, "image/svg+xml")]


def number(pattern: str, nb) -> float:
    found = re.search(pattern, text(nb))
    assert found, f"no output matches {pattern!r}"
    return float(found.group(1))


def environment(**extra) -> dict:
    """This process's environment with this checkout first on the path (the package may be
    installed in editable mode from another one)."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return dict(os.environ, PYTHONPATH=path, **extra)


def execute(path, cwd, compiledir):
    """Run every cell of the notebook at ``path`` in a fresh kernel; the executed notebook."""
    nb = nbformat.read(path, as_version=4)
    env = environment(SYMNB_COMPILEDIR=compiledir)  # the suite's private kernel cache
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute(env=env)
    return nb


# -- what each notebook's outputs must say ----------------------------------------------------
def check_tour(nb):
    assert number(r"training accuracy (0\.\d+)", nb) > 0.9


def check_autodiff(nb):
    grad_nodes = [c for s in svgs(nb) for _, c in svg_structure(s)["node"] if "grad" in c]
    assert grad_nodes, "no gradient node drawn"
    assert "check_grad: the symbolic gradient agrees" in text(nb)
    assert number(r"largest difference from diag\(p\) - p pᵀ: (\S+)", nb) < 1e-12
    newton = re.search(r"Newton after 8 steps: +\[([-\d. ]+)\]", text(nb)).group(1).split()
    assert [float(v) for v in newton] == [1.0, 1.0]
    assert charts(nb, "lines") == 2 and charts(nb, "images") == 1  # slopes, paths; jacobian


def check_optimisations(nb):
    shown = text(nb)
    assert 'class="symnb-card symnb-stepper"' in shown and 'data-step="3"' in shown
    broken = number(r"as written: (\d+) of 401 losses are inf or nan", nb)
    assert broken > 50 and "rewritten:  0 of 401 losses are inf or nan, 0 gradients" in shown
    assert "log_one_minus_sigmoid" in shown
    assert "same values: True" in shown
    clusters = [t for s in svgs(nb) for t, _ in svg_structure(s)["cluster"]]
    assert any("fused" in t for t in clusters), clusters
    assert charts(nb, "bars") == 3 and charts(nb, "lines") == 2


def check_accuracy(threshold):
    def check(nb):
        assert number(r"final test accuracy (0\.\d+)", nb) > threshold
        assert charts(nb, "lines") >= 2 and charts(nb, "images") >= 1  # curves; weights

    return check


def check_mlp(nb):
    check_accuracy(0.95)(nb)
    assert "profile: 20 calls" in text(nb)


def check_rnn(nb):
    assert number(r"final test accuracy (0\.\d+)", nb) > 0.93
    assert charts(nb, "lines") == 3
    assert "rows with no gradient under truncation: [0, 1, 2, 3, 4]" in text(nb)
    assert "last three rows, the same gradient in both: True" in text(nb)
    assert len(re.findall(r"^ *\d+ +loop +scan\[", text(nb), re.M)) == 2  # forward, backward


def check_from_theano(nb):  # the Theano tutorial's logistic regression (symnb.compat.theano)
    assert number(r"test error of that model ([\d.]+) %", nb) < 10
    assert charts(nb, "line") >= 1  # its curves, drawn by symnb.viz.charts.plot_line


def check_kernels(nb):
    shown = text(nb)
    for entry in ("int sn_kernel(", "__kernel void sn_kernel(", "__global__ void sn_kernel("):
        assert entry in shown.replace("&quot;", '"'), entry
    assert "get_global_id(0)" in shown and "blockIdx.x" in shown and "#pragma omp" in shown
    assert "f.kernels source is the C rendering above: True" in shown


def check_shapes(nb):
    raised = [errors(c)[0].split(":")[0] for c in nb.cells if c.cell_type == "code" and tagged(c)]
    assert raised == ["ShapeError"] * 5 + ["DTypeError", "InputError"], raised
    shown = text(nb)
    for category in ("BroadcastOuter", "SuspiciousAxis", "ReshapeMovesDim", "ReshapeSplitsDim"):
        assert f'class="symnb-warning {category}Warning"' in shown, category
    assert "did you mean W.T?" in shown
    assert "error: ShapeError" in shown and "exit status 1" in shown


def check_dask_sweep(nb):
    """Two worker processes each trained their own copies, compiling nothing (the kernels
    came from the shared cache), and what came back is what this process computes."""
    shown = text(nb)
    workers = re.findall(
        r"^worker \d+: (\d+) kernels compiled, (\d+) loaded from the disk cache", shown, re.M
    )
    assert len(workers) == 2 and all(c == "0" and int(d) > 0 for c, d in workers), workers
    assert "W here is still zeros: True" in shown
    assert len(set(re.findall(r"\(worker (\d+)\)", shown))) == 2  # the tasks used both
    best = re.search(r"test accuracy (0\.\d+) here, (0\.\d+) in the worker", shown)
    assert best and best.group(1) == best.group(2) and float(best.group(1)) > 0.95


CHECKS = {
    "00_tour": check_tour,
    "01_autodiff": check_autodiff,
    "02_optimisations": check_optimisations,
    "03_logistic_regression": check_accuracy(0.93),
    "04_mlp": check_mlp,
    "05_convnet": check_accuracy(0.93),
    "06_rnn": check_rnn,
    "07_from_theano": check_from_theano,
    "08_kernels": check_kernels,
    "09_shapes": check_shapes,
    "10_dask_sweep": check_dask_sweep,
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_and_shows_its_results(path, tmp_path, _private_compiledir):
    if path.stem in NEEDS:
        pytest.importorskip(NEEDS[path.stem])
    nb = execute(path, tmp_path, _private_compiledir)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    for k, cell in enumerate(code):
        if tagged(cell):
            assert errors(cell), f"code cell {k} is tagged {RAISES} but raised nothing"
        else:  # nbclient stops at an untagged error; warnings on stderr count as well
            assert not errors(cell) and "Traceback" not in stream(cell), (k, errors(cell))
        noise = [o.text for o in cell.outputs if o.get("name") == "stderr"]
        assert not noise, f"code cell {k} wrote to stderr: {noise}"
    check = CHECKS.get(path.stem)
    if check is not None:
        check(nb)


def _repo_notebooks() -> list:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.ipynb"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:  # not a git checkout: every notebook outside hidden folders
        return [p for p in ROOT.rglob("*.ipynb") if not any(s.startswith(".") for s in p.parts)]
    return [ROOT / line for line in listed.stdout.splitlines()]


def test_no_notebook_is_committed_with_outputs():
    found = _repo_notebooks()
    assert set(NOTEBOOKS) <= set(found)
    for path in found:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for k, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [], f"{path.name}, cell {k + 1} has outputs"
                assert cell["execution_count"] is None, f"{path.name}, cell {k + 1} has a count"


def test_symnb_check_passes_on_every_notebook(tmp_path):
    command = [sys.executable, "-m", "symnb", "check", *map(str, NOTEBOOKS)]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=environment()
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    summaries = [line for line in done.stdout.splitlines() if ": 0 errors," in line]
    assert len(summaries) == len(NOTEBOOKS), done.stdout[-4000:]
    assert all("0 failures" in line and "not checked" not in line for line in summaries)
