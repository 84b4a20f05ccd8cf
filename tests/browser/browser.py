"""What the browser tests share: Debian's Chromium driven by playwright (never a downloaded
browser), a JupyterLab server in temporary folders, running a notebook's cells there, pages
that may fetch nothing but files, and the contrast check of symnb's displays.

Importing this module skips the importing test module when Chromium or playwright is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    reason = "Debian's chromium is not installed (.ci/run installs it as root)"
    pytest.skip(reason, allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TOKEN = "symnb-browser-test"
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def launch(pw):
    return pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)


def screenshots(name: str) -> Path:
    """``build/screenshots/<name>`` in the checkout (ignored by git), emptied first."""
    folder = ROOT / "build" / "screenshots" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(config: Path, settings: dict) -> None:
    """JupyterLab user settings: ``{"@jupyterlab/x-extension/plugin": {...}}``."""
    for plugin, values in settings.items():
        path = config / "lab" / "user-settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@contextlib.contextmanager
def lab_server(tmp_path: Path, root: Path, settings: dict | None = None, expose: bool = False):
    """A JupyterLab server on 127.0.0.1 serving ``root``, with fresh config/runtime dirs and
    ``settings`` written as the user's; ``expose``: ``window.jupyterapp`` in the page (to run
    commands such as changing the theme). Yields its URL; stopped by PID."""
    config = tmp_path / "config"
    _write_settings(config, settings or {})
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
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
    if expose:
        cmd.append("--LabApp.expose_app_in_browser=True")
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


def open_notebook(page, lab: str, name: str) -> None:
    """Open ``name`` in JupyterLab and wait until its kernel is idle."""
    page.goto(f"{lab}/lab/tree/{name}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)


def dismiss_news(page) -> None:
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


def run_all(page, count: int, timeout: int = 15_000) -> None:
    """Run each of the ``count`` code cells in turn (click it, Shift+Enter) and wait until it
    has finished (JupyterLab may not have attached them all yet when the notebook opens).

    A request sent while the kernel is still connecting can be dropped, so a cell that
    shows no execution count after a while is run again.
    """
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    for i in range(count):
        for attempt in range(4):
            _accept_dialog(page)
            cells.nth(i).locator(".jp-InputArea-editor").click()
            page.keyboard.press("Shift+Enter")
            if _finished(page, cells.nth(i), timeout * (attempt + 1)):
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


def set_theme(page, theme: str) -> None:
    """Switch JupyterLab's theme (the server must expose the app) and wait for it."""
    page.evaluate(
        "t => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})",
        THEMES[theme],
    )
    page.wait_for_function(
        "t => document.body.dataset.jpThemeName === t", arg=THEMES[theme], timeout=30_000
    )
    page.wait_for_timeout(800)


def offline_page(browser, blocked: list):
    """A page whose every request but ``file://`` is aborted (and listed in ``blocked``)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})

    def route(request_route):
        url = request_route.request.url
        if url.startswith("file://"):
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    page.route("**/*", route)
    return page


#: every visible piece of text in symnb's displays under ``root``: its colour, the colour it is
#: read on (backgrounds composited up the page; an SVG text inside a drawn box on that box's
#: fill), and their WCAG contrast ratio
CONTRAST = """root => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = css => {
    if (!css || css === 'none') return [0, 0, 0, 0];
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0, 0, 0, 0)';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, bottom) =>
    [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const behind = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      if (e instanceof SVGElement) continue;
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] > 0.99) break; }
    }
    let bg = [255, 255, 255, 1];
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  // an edge's label inside a cluster (a loop's step, a fused kernel) is read on the
  // innermost cluster's fill drawn under it (clusters are drawn outermost first)
  const clusterFill = text => {
    const r = text.getBBox();
    const [x, y] = [r.x + r.width / 2, r.y + r.height / 2];
    let fill = null;
    for (const s of text.closest('svg').querySelectorAll('g.cluster > :is(polygon, path)')) {
      const b = s.getBBox();
      if (x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height) {
        const c = rgba(getComputedStyle(s).fill);
        if (c[3] > 0) fill = c;
      }
    }
    return fill;
  };
  const shapeFill = text => {
    const box = text.closest('g.node, g.cluster');
    if (!box) return text.closest('g.edge') ? clusterFill(text) : null;
    for (const s of box.querySelectorAll('polygon, ellipse, path')) {
      const c = rgba(getComputedStyle(s).fill);
      if (c[3] > 0) return c;
    }
    return null;
  };
  const lum = c => {
    const [r, g, b] = c.slice(0, 3).map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const visible = el => {
    if (!el.getClientRects().length) return false;
    const cs = getComputedStyle(el);
    return cs.visibility !== 'hidden' && Number(cs.opacity) > 0;
  };
  const ownText = el => [...el.childNodes]
    .filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
  const display = ':is(.symnb-card, .symnb-error, .symnb-warning, .symnb-note, ' +
    '.symnb-formula, .symnb-chart, .symnb-graph)';
  const found = [];
  for (const el of root.querySelectorAll(`${display}, ${display} *`)) {
    const text = ownText(el);
    if (!text || !visible(el) || el.closest('[hidden]')) continue;
    let fg, bg;
    if (el instanceof SVGElement) {
      const svg = el.closest('svg');
      const page = behind(svg.parentElement);
      const fill = shapeFill(el);
      bg = fill ? over(fill, page) : page;
      fg = over(rgba(getComputedStyle(el).fill), bg);
    } else {
      bg = behind(el);
      fg = over(rgba(getComputedStyle(el).color), bg);
    }
    const kind = el.closest(display).className.baseVal ?? el.closest(display).className;
    found.push({text: text.slice(0, 60), tag: el.tagName, kind: String(kind).split(' ')[0],
                fg: fg.slice(0, 3).map(Math.round), bg: bg.slice(0, 3).map(Math.round),
                ratio: ratio(fg, bg)});
  }
  return found;
}"""


def contrast_failures(found: list, minimum: float = 4.5) -> list:
    return [f for f in found if f["ratio"] < minimum]
