"""Build notebooks from code cells, execute them headlessly (nbclient), read their outputs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def notebook(*cells: str, raises: tuple[int, ...] = ()):
    """A notebook of code cells; cells listed in ``raises`` may end in an error."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    for i, source in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source)
        if i in raises:
            cell.metadata["tags"] = ["raises-exception"]
        nb.cells.append(cell)
    return nb


def execute(nb, cwd: str, timeout: int = 120):
    """Run every cell in a fresh kernel (this interpreter's), keeping widget state."""
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": cwd}},
        store_widget_state=True,
    )
    client.execute()
    return nb


def mimetypes(cell) -> set[str]:
    types = set()
    for out in cell.outputs:
        types.update(out.get("data", {}))
        if out.output_type == "error":
            types.add("error")
    return types


def data(cell, mime: str) -> list[str]:
    return [out["data"][mime] for out in cell.outputs if mime in out.get("data", {})]


def stream(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


_TITLE = re.compile(
    r"<g id=\"(?:node|edge|clust)\d+\" class=\"(node|edge|cluster)([^\"]*)\">\s*"
    r"<title>(.*?)</title>",
    re.S,
)


def svg_structure(svg: str) -> dict[str, list[tuple[str, str]]]:
    """``{"node": [(title, classes)], "edge": [...], "cluster": [...]}`` from Graphviz SVG."""
    found: dict[str, list] = {"node": [], "edge": [], "cluster": []}
    for kind, classes, title in _TITLE.findall(svg):
        found[kind].append((_unescape(title), classes.strip()))
    return found


def _unescape(text: str) -> str:
    return (
        text.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&").replace("&#45;", "-")
    )


ROOT = Path(__file__).resolve().parents[2]
_TOURS: dict[str, Path] = {}


def build_tour(tmp_path_factory) -> Path:
    """``make tour`` (the command ``make demo`` runs) into a temporary folder, once per
    session; returns the path of tour.html."""
    key = str(tmp_path_factory.getbasetemp())
    if key not in _TOURS:
        build = tmp_path_factory.mktemp("tour")
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
        )
        command = ["make", "-s", "tour", f"JUPYTER={sys.executable} -m jupyter", f"BUILD={build}"]
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-3000:]
        _TOURS[key] = build / "tour.html"
    return _TOURS[key]
