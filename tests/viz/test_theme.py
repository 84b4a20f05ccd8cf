"""The colours a graph's texts are read in and on, resolved from the style sheet as a page
would for each theme: symnb's light and dark fallbacks, JupyterLab's Light and Dark (their
``--jp-*`` values). WCAG contrast at least 4.5 everywhere (docs/notebook.md). Chromium checks
the same in the page (tests/browser); this runs where no browser is installed."""

from __future__ import annotations

import re

import pytest

from symnb.viz import dot
from symnb.viz.theme import PALETTE, STYLE


def _hex(text: str) -> tuple:
    return tuple(int(text[i : i + 2], 16) for i in (1, 3, 5))


def _theme(scheme: int) -> dict:
    return {name: (*_hex(pair[scheme]), 1.0) for name, pair in PALETTE.items()}


#: each theme's page colours, (r, g, b, alpha): symnb's fallbacks, JupyterLab's variables
THEMES = {
    "symnb light": _theme(0),
    "symnb dark": _theme(1),
    "JupyterLab Light": {
        "paper": (255, 255, 255, 1.0),
        "ink": (0, 0, 0, 0.87),
        "muted": (0, 0, 0, 0.54),
    },
    "JupyterLab Dark": {
        "paper": (33, 33, 33, 1.0),
        "ink": (255, 255, 255, 1.0),
        "muted": (255, 255, 255, 0.7),
    },
}


def _over(top: tuple, bottom: tuple) -> tuple:
    a = top[3]
    return (*(t * a + b * (1 - a) for t, b in zip(top[:3], bottom[:3])), 1.0)


def _colour(css: str, theme: dict, under: tuple) -> tuple:
    """A CSS colour of the style sheet (``#hex``, ``var(--symnb-x)``, ``color-mix(in srgb,
    A p%,B)``) as opaque RGB over ``under``."""
    css = css.strip()
    mix = re.fullmatch(r"color-mix\(in srgb,(.+?) (\d+)%,(.+)\)", css)
    if mix:
        a, p, b = _colour(mix[1], theme, under), int(mix[2]) / 100, _colour(mix[3], theme, under)
        return (*(x * p + y * (1 - p) for x, y in zip(a[:3], b[:3])), 1.0)
    name = re.fullmatch(r"var\(--symnb-(\w+)\)", css)
    if name:
        return _over(theme[name[1]], under)
    return _over((*_hex(css), 1.0), under)


def _rule(selector_tail: str) -> str | None:
    """The ``fill`` the style sheet gives to ``.symnb-graph svg <selector_tail>``."""
    rules = STYLE.replace("\n", "")
    found = re.search(
        re.escape(f".symnb-graph svg {selector_tail}") + r"\{\s*fill:([^}]+)\}", rules
    )
    return found[1] if found else None


def _ratio(a: tuple, b: tuple) -> float:
    def lum(c):
        v = [x / 255 for x in c[:3]]
        v = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in v]
        return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("theme", THEMES)
def test_texts_inside_clusters_and_on_transfers_read_in_every_theme(theme):
    """Edge labels inside a loop's or fused kernel's cluster were the page's muted text on
    the cluster's fixed light-green fill (contrast 1.05 in JupyterLab Dark), and a
    transfer's red ``⇢ device`` label took the muted colour too."""
    colours = THEMES[theme]
    paper = colours["paper"]
    drawn = re.search(r'fillcolor="(#[0-9a-f]{6})"', dot.CLUSTER_STYLE)[1]
    cluster = _colour(_rule("g.cluster>:is(path,polygon)") or drawn, colours, paper)
    label = _rule("g.edge text")
    transfer = _rule("g.edge.transfer text") or label
    drawn_title = re.search(r'fontcolor="(#[0-9a-f]{6})"', dot.CLUSTER_STYLE)[1]
    title = _rule("g.cluster>text") or drawn_title
    for name, text, on in [
        ("edge label", label, paper),
        ("edge label in a cluster", label, cluster),
        ("cluster title", title, cluster),
        ("transfer label", transfer, paper),
        ("transfer label in a cluster", transfer, cluster),
    ]:
        ratio = _ratio(_colour(text, colours, on), on)
        assert ratio >= 4.5, f"{theme}: {name} {text} on {on[:3]}: contrast {ratio:.2f}"
    assert transfer != label  # a transfer's label keeps a colour of its own
