"""A notebook exported by ``jupyter nbconvert --to script`` is a Python script that
``ipython`` runs, magics included (docs/notebook.md, "Scripts, logs and flags"). nbconvert
picks the exporter and the file's extension from the notebook's ``language_info``, so every
committed notebook keeps those keys (with ``{"name": "python"}`` alone it wrote a ``.txt``
holding the raw ``%%symcompile`` lines)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.magics.nbtools import ROOT

nbformat = pytest.importorskip("nbformat")
exporters = pytest.importorskip("nbconvert.exporters")

#: what nbconvert and the frontends read from a notebook's language_info
PYTHON = {
    "name": "python",
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebook_exports_to_a_python_script(path):
    nb = nbformat.read(str(path), as_version=4)
    info = nb.metadata.get("language_info", {})
    assert {k: info.get(k) for k in PYTHON} == PYTHON, path.name
    body, resources = exporters.ScriptExporter().from_notebook_node(nb)
    assert resources["output_extension"] == ".py"
    assert not [line for line in body.splitlines() if line.startswith("%")]  # no raw magics
    compile(body, path.name, "exec")


def test_the_exported_script_runs_under_ipython(tmp_path):
    """The magics need IPython's ``get_ipython()``: ``ipython script.py`` runs the script a
    notebook with ``%%symcompile`` cells exports to, and gives the notebook's values."""
    tour = nbformat.read(str(ROOT / "notebooks" / "00_tour.ipynb"), as_version=4)
    cells = [
        "%load_ext symnb\nimport numpy as np",
        "%%symcompile f --backend py --quiet\nx = vector('x')\nsum(exp(x) * 2)",
        "print(f(np.arange(3.0)))",
    ]
    nb = nbformat.v4.new_notebook(metadata=tour.metadata)
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    body, resources = exporters.ScriptExporter().from_notebook_node(nb)
    script = tmp_path / f"course{resources['output_extension']}"
    script.write_text(body, encoding="utf-8")
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    run = [sys.executable, "-m", "IPython", "--no-banner", "--quick", str(script)]
    done = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout.split()[-1]) == pytest.approx(np.sum(np.exp(np.arange(3.0)) * 2))
