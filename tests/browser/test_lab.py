"""JupyterLab in headless Chromium: run a notebook, wait for the graph, move the stepper.

Playwright drives Debian's Chromium (``/usr/bin/chromium``); no browser is ever downloaded.
Screenshots go to ``build/screenshots/lab_stepper`` (ignored by git).
"""

from __future__ import annotations

import pytest

from tests.browser.browser import (
    dismiss_news,
    lab_server,
    launch,
    open_notebook,
    run_all,
    screenshots,
    sync_api,
)

pytest.importorskip("jupyterlab")
pytest.importorskip("pygraphviz")
from tests.magics.nbtools import notebook  # noqa: E402

nbformat = pytest.importorskip("nbformat")

CELLS = [
    "%load_ext symnb\nimport numpy as np\nimport symnb as sn",
    "%%symcompile f --backend py --quiet\n"
    "x = tensor('x', shape=('batch', 3))\n"
    "W = shared(np.ones((3, 2)), name='W')\n"
    "loss = mean(sum(sigmoid(x @ W) * 2.0 + 0.0, axis=1))\n"
    "loss",
    "%symgraph loss",
    "sn.magics.stepper(f)",
]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 with fresh config/runtime dirs; stopped by PID."""
    root = tmp_path / "root"
    root.mkdir()
    nbformat.write(notebook(*CELLS), str(root / "stepper.ipynb"))
    with lab_server(tmp_path, root) as url:
        yield url


def _graph_svg(page, within: str) -> str:
    """The last graph JupyterLab shows inside ``within`` (inline SVG in symnb's frame)."""
    return page.locator(f"{within} .symnb-graph svg").last.evaluate("e => e.outerHTML")


def _titles(svg: str) -> set[str]:
    from tests.magics.nbtools import svg_structure

    return {t for t, _ in svg_structure(svg)["node"]}


def test_graph_and_stepper_in_jupyterlab(lab):
    shots = screenshots("lab_stepper")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_notebook(page, lab, "stepper.ipynb")
        try:
            run_all(page, len(CELLS))
            page.wait_for_selector(".jp-OutputArea-output .symnb-graph svg", timeout=60_000)
        except Exception:
            page.screenshot(path=str(shots / "0_failure.png"), full_page=True)
            raise
        page.wait_for_selector(".widget-button:has-text('Next ›')", timeout=60_000)
        page.wait_for_selector(".widget-html b.rule", timeout=30_000)
        page.wait_for_timeout(500)
        dismiss_news(page)
        page.locator(".symnb-graph").first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "1_symgraph.png"))
        stepper = page.locator(".widget-vbox").last
        stepper.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "2_stepper_as_written.png"))
        # the live widget hides its static twin (shown where no widget manager runs)
        assert page.locator(".symnb-static-stepper").count() == 1
        assert not page.locator(".symnb-static-stepper").is_visible()

        rule = page.locator(".widget-html b.rule").inner_text()
        graph = _graph_svg(page, ".widget-vbox")
        assert rule == "as written"
        assert {"var:x", "var:W", "matmul#0", "out:0"} <= _titles(graph)

        page.locator(".widget-button:has-text('Next ›')").click()
        page.wait_for_function(
            "() => document.querySelector('.widget-html b.rule').innerText !== 'as written'"
        )
        page.wait_for_timeout(800)
        stepper.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "3_stepper_after_next.png"))
        stepper.screenshot(path=str(shots / "4_stepper_widget.png"))
        new_rule = page.locator(".widget-html b.rule").inner_text()
        new_graph = _graph_svg(page, ".widget-vbox")
        assert new_rule != rule
        assert new_graph != graph
        assert any(t.startswith("removed:") for t in _titles(new_graph)) or _titles(
            new_graph
        ) != _titles(graph)
        browser.close()
    assert len(list(shots.glob("*.png"))) == 4
