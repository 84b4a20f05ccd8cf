"""Pages made outside JupyterLab, in headless Chromium with every request but files aborted:

- a notebook exported by a plain ``jupyter nbconvert --to html --execute`` (nbclient stores
  the widget state by default) shows the static stepper beside the stored widget, and its
  Prev/Next step through every frame offline;
- symnb's displays in a page with no Jupyter theme follow the reader's colour scheme
  (``prefers-color-scheme``) and keep their text readable in both.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import symnb as sn
from tests.browser.browser import (
    CONTRAST,
    ROOT,
    contrast_failures,
    launch,
    offline_page,
    screenshots,
    sync_api,
)

pytest.importorskip("nbconvert")
pytest.importorskip("ipywidgets")
pytest.importorskip("pygraphviz")
nbformat = pytest.importorskip("nbformat")
from tests.magics.nbtools import notebook  # noqa: E402

CELLS = [
    "%load_ext symnb\nimport numpy as np\nimport symnb as sn",
    "%%symcompile f --backend py --quiet --show steps\n"
    "x = tensor('x', shape=('batch', 3))\n"
    "W = shared(np.ones((3, 2)), name='W')\n"
    "loss = mean(sum(sigmoid(x @ W) * 2.0 + 0.0, axis=1))\n"
    "loss",
]
FRAME = """s => {
  const f = [...s.querySelectorAll('.symnb-frame')].filter(e => !e.hidden);
  return {steps: f.map(e => e.dataset.step), position: s.querySelector('.symnb-position').innerText,
          info: f.length ? f[0].querySelector('.symnb-info').innerText : '',
          svg: f.length ? f[0].querySelector('svg').outerHTML : '',
          visible: s.getBoundingClientRect().height > 0};
}"""


def _export(tmp_path):
    """The notebook exported by nbconvert with no option but ``--to html --execute``."""
    path = tmp_path / "stepper.ipynb"
    nbformat.write(notebook(*CELLS), str(path))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),  # no user's nbconvert configuration
    )
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute"]
    done = subprocess.run(
        [*command, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp_path / "stepper.html"


def test_a_plain_nbconvert_export_steps_offline(tmp_path):
    page_path = _export(tmp_path)
    html = page_path.read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget-state+json" in html  # nbclient's default: stored
    blocked: list[str] = []
    shots = screenshots("export")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = offline_page(browser, blocked)
        page.goto(page_path.as_uri(), wait_until="load")
        stepper = page.locator(".symnb-stepper")
        assert stepper.count() == 1
        handle = stepper.element_handle()
        start = page.evaluate(FRAME, handle)
        assert start["visible"] and start["steps"] == ["0"], start
        assert start["info"].startswith("as written") and "<svg" in start["svg"]
        last = int(start["position"].split("/")[1])
        assert last >= 2
        seen = [start["svg"]]
        for k in range(1, last + 1):
            stepper.locator(".symnb-next").click()
            now = page.evaluate(FRAME, handle)
            assert now["steps"] == [str(k)] and now["position"] == f"{k} / {last}", now
            assert now["info"].startswith(f"step {k}/{last}")
            seen.append(now["svg"])
        stepper.screenshot(path=str(shots / "stepper_last.png"))
        stepper.locator(".symnb-next").click()  # past the end: stays on the last frame
        assert page.evaluate(FRAME, handle)["steps"] == [str(last)]
        stepper.locator(".symnb-prev").click()
        assert page.evaluate(FRAME, handle)["steps"] == [str(last - 1)]
        assert len(set(seen)) == len(seen)  # every frame its own graph
        browser.close()
    assert blocked and all(not url.startswith("file://") for url in blocked)


def _displays() -> str:
    """A page with no Jupyter theme holding a card, an error, a warning, a chart, a profile."""
    from symnb.viz.cards import error_html, function_card, variable_card, warning_html
    from symnb.viz.charts import plot_lines

    x = sn.tensor("x", shape=("batch", 3))
    W = sn.shared(np.ones((3, 2)), name="W")
    f = sn.function([x], sn.tanh(x @ W), backend="py", name="f")
    error = sn.ShapeError("matmul: inner dims differ\n  at cell, line 1: x @ W.T")
    parts = [
        variable_card(sn.tanh(x @ W)),
        function_card(f),
        error_html(error, "Traceback ..."),
        warning_html("add: broadcast (n,) and (n, 1)\nhint", sn.ShapeWarning, "cell, line 2"),
        plot_lines({"train": [3, 2, 1], "test": [3, 2.5, 2]}, "loss")._repr_mimebundle_()[
            "text/html"
        ],
        f.profile(np.ones((4, 3)), repeat=3).html(),
    ]
    return "<!DOCTYPE html><html><body>" + "".join(parts) + "</body></html>"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_displays_follow_the_colour_scheme_of_a_page_without_jupyter(tmp_path, scheme):
    path = tmp_path / "displays.html"
    path.write_text(_displays(), encoding="utf-8")
    shots = screenshots(f"no_jupyter_{scheme}")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = offline_page(browser, [])
        page.emulate_media(color_scheme=scheme)
        page.goto(path.as_uri(), wait_until="load")
        found = page.evaluate(CONTRAST, page.locator("body").element_handle())
        page.screenshot(path=str(shots / "page.png"), full_page=True)
        paper = page.locator(".symnb-card").first.evaluate(
            "e => getComputedStyle(e).backgroundColor"
        )
        browser.close()
    kinds = {f["kind"] for f in found}
    assert {"symnb-card", "symnb-error", "symnb-warning", "symnb-chart", "symnb-graph"} <= kinds
    assert not contrast_failures(found), contrast_failures(found)[:8]
    assert paper == ("rgb(250, 250, 250)" if scheme == "light" else "rgb(31, 41, 55)")
