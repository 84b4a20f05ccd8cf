"""JupyterLab in headless Chromium: run a notebook, wait for the graph, move the stepper.

Playwright drives Debian's Chromium (``/usr/bin/chromium``); no browser is ever downloaded.
Screenshots go to the test's tmp folder (``<tmp>/screenshots``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    reason = "Debian's chromium is not installed (.ci/run installs it as root)"
    pytest.skip(reason, allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("jupyterlab")
pytest.importorskip("pygraphviz")
from tests.magics.nbtools import notebook  # noqa: E402

nbformat = pytest.importorskip("nbformat")

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "symnb-browser-test"
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 with fresh config/runtime dirs; stopped by PID."""
    root = tmp_path / "root"
    root.mkdir()
    nbformat.write(notebook(*CELLS), str(root / "stepper.ipynb"))
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}",
    ]
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _wait_ready(port: int, timeout: float = 60) -> None:
    url = f"http://127.0.0.1:{port}/api/status?token={TOKEN}"
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                json.load(reply)
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("JupyterLab did not start")


def _graph_src(page, index: int = -1) -> str:
    """The SVG JupyterLab shows (as an <img>) in the last SVG output, decoded."""
    imgs = page.locator('[data-mime-type="image/svg+xml"] img')
    src = imgs.nth(imgs.count() - 1 if index < 0 else index).get_attribute("src")
    return urllib.parse.unquote(src.split(",", 1)[1])


def _titles(svg: str) -> set[str]:
    from tests.magics.nbtools import svg_structure

    return {t for t, _ in svg_structure(svg)["node"]}


def test_graph_and_stepper_in_jupyterlab(lab, tmp_path):
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{lab}/lab/tree/stepper.ipynb?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook", timeout=60_000)
        page.wait_for_selector(
            ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
        )
        try:
            _run_all(page)
            page.wait_for_selector('[data-mime-type="image/svg+xml"]', timeout=60_000)
        except Exception:
            page.screenshot(path=str(shots / "0_failure.png"), full_page=True)
            raise
        page.wait_for_selector("button:has-text('Next ›')", timeout=60_000)
        page.wait_for_selector(".widget-html b.rule", timeout=30_000)
        page.wait_for_timeout(500)
        _dismiss_news(page)
        page.locator('[data-mime-type="image/svg+xml"]').first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "1_symgraph.png"))
        stepper = page.locator(".widget-vbox").last
        stepper.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "2_stepper_as_written.png"))

        rule = page.locator(".widget-html b.rule").inner_text()
        graph = _graph_src(page)
        assert rule == "as written"
        assert {"x", "W", "matmul#0", "out:0"} <= _titles(graph)

        page.locator("button:has-text('Next ›')").click()
        page.wait_for_function(
            "() => document.querySelector('.widget-html b.rule').innerText !== 'as written'"
        )
        page.wait_for_timeout(800)
        stepper.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "3_stepper_after_next.png"))
        stepper.screenshot(path=str(shots / "4_stepper_widget.png"))
        new_rule = page.locator(".widget-html b.rule").inner_text()
        new_graph = _graph_src(page)
        assert new_rule != rule
        assert new_graph != graph
        assert any(t.startswith("removed:") for t in _titles(new_graph)) or _titles(
            new_graph
        ) != _titles(graph)
        browser.close()
    assert len(list(shots.glob("*.png"))) == 4


def _dismiss_news(page) -> None:
    """JupyterLab asks whether to fetch news (it cannot: offline); answer No."""
    button = page.get_by_role("button", name="No", exact=True)
    if button.count():
        button.first.click()
        page.wait_for_timeout(300)


def _accept_dialog(page) -> None:
    """On a slow machine JupyterLab may ask which kernel to start: take the default."""
    accept = page.locator(".jp-Dialog button.jp-mod-accept")
    if accept.count():
        accept.first.click()
        page.wait_for_timeout(500)


def _run_all(page) -> None:
    """Run each cell in turn (click it, Shift+Enter) and wait until it has finished.

    A request sent while the kernel is still connecting can be dropped, so a cell that
    shows no execution count after a while is run again.
    """
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    for i in range(len(CELLS)):
        for attempt in range(4):
            _accept_dialog(page)
            cells.nth(i).locator(".jp-InputArea-editor").click()
            page.keyboard.press("Shift+Enter")
            if _finished(page, cells.nth(i), 15_000 * (attempt + 1)):
                break
        else:
            raise AssertionError(f"cell {i} never ran")


def _finished(page, cell, timeout: int) -> bool:
    prompt = cell.locator(".jp-InputArea-prompt").element_handle()
    try:
        page.wait_for_function("el => /\\[\\d+\\]/.test(el.innerText)", arg=prompt, timeout=timeout)
    except sync_api.TimeoutError:
        return False
    return True
