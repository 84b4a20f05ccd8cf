"""The tour in JupyterLab, light and dark: every piece of text in symnb's displays (variable
and function cards, formulas, graphs, the error and warning cards, the profile, the charts)
contrasts with what it is read on (WCAG ratio >= 4.5), with JupyterLab's Light and Dark
themes, and wide graphs scroll inside their frame.

Screenshots of both themes go to ``build/screenshots/themes`` (ignored by git).
"""

from __future__ import annotations

import shutil

import pytest

from tests.browser.browser import (
    CONTRAST,
    ROOT,
    contrast_failures,
    dismiss_news,
    lab_server,
    launch,
    open_notebook,
    run_all,
    screenshots,
    set_theme,
    sync_api,
)
from tests.helpers import needs_c

pytestmark = needs_c  # the tour compiles its functions with --backend c
pytest.importorskip("jupyterlab")
pytest.importorskip("pygraphviz")
pytest.importorskip("sklearn")
nbformat = pytest.importorskip("nbformat")

TOUR = ROOT / "notebooks" / "00_tour.ipynb"
#: every kind of display whose text is checked, by the class of its root element
KINDS = (
    "symnb-card",
    "symnb-error",
    "symnb-warning",
    "symnb-formula",
    "symnb-chart",
    "symnb-graph",
    "symnb-note",
)
#: the shots taken in each theme: name -> the output it shows
SHOTS = {
    "card": ".symnb-card:has(.symnb-formula)",
    "error": ".symnb-error",
    "warning": ".symnb-warning",
    "profile": ".symnb-card:has(.symnb-share)",
    "chart": ".jp-OutputArea-output > .symnb-chart",
    "stepper": ".widget-vbox",
}
SETTINGS = {
    # every cell in the page, so the check sees every output
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},
}
# a graph wider than any page: its frame scrolls, and its right end can be reached
WIDE = (
    "ins = [sn.tensor(f'in{k}', shape=(3,)) for k in range(40)]\n"
    "ops = [sn.exp, sn.tanh, sn.sin, sn.cos, sn.abs, sn.sqrt, sn.log, sn.sigmoid]\n"
    "sn.viz.graphs.picture([ops[k % 8](v) * float(k) for k, v in enumerate(ins)])"
)


@pytest.fixture
def lab(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(TOUR, root / "tour.ipynb")
    nb = nbformat.read(str(root / "tour.ipynb"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(WIDE))
    nbformat.write(nb, str(root / "tour.ipynb"))
    code_cells = sum(c.cell_type == "code" for c in nb.cells)
    with lab_server(tmp_path, root, SETTINGS, expose=True) as url:
        yield url, code_cells


def test_the_tour_reads_well_in_light_and_dark(lab):
    url, code_cells = lab
    shots = screenshots("themes")
    with sync_api.sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        open_notebook(page, url, "tour.ipynb")
        dismiss_news(page)
        try:
            run_all(page, code_cells, timeout=60_000)
            page.wait_for_selector(".jp-OutputArea-output .symnb-chart svg", timeout=60_000)
        except Exception:
            page.screenshot(path=str(shots / "0_failure.png"))
            raise
        for theme in ("light", "dark"):
            set_theme(page, theme)
            found = page.evaluate(CONTRAST, page.locator(".jp-Notebook").element_handle())
            kinds = {f["kind"] for f in found}
            assert set(KINDS) <= kinds, f"{theme}: no text checked in {set(KINDS) - kinds}"
            bad = contrast_failures(found)
            assert not bad, f"{theme}: text that does not contrast: {bad[:8]}"
            _shoot(page, shots, theme)
        _wide_graph_scrolls(page)
        browser.close()
    assert len(list(shots.glob("*.png"))) == 2 * len(SHOTS)


def _shoot(page, shots, theme: str) -> None:
    for name, selector in SHOTS.items():
        element = page.locator(selector).first
        element.scroll_into_view_if_needed()
        element.screenshot(path=str(shots / f"{theme}_{name}.png"))


def _wide_graph_scrolls(page) -> None:
    frame = page.locator(".jp-OutputArea-output .symnb-graph").last
    frame.scroll_into_view_if_needed()
    sizes = frame.evaluate(
        "e => ({scroll: e.scrollWidth, client: e.clientWidth, page: window.innerWidth,"
        " overflow: getComputedStyle(e).overflowX})"
    )
    assert sizes["scroll"] > sizes["page"] > 0 and sizes["client"] < sizes["page"], sizes
    assert sizes["overflow"] == "auto"
    frame.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    assert frame.evaluate("e => e.scrollLeft") >= sizes["scroll"] - sizes["client"] - 1
