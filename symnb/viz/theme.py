"""The one style sheet of symnb's displays, readable in light and dark themes.

Every card, table, chart, graph frame, error and warning card takes its colours from a few
CSS custom properties set here, never from a colour written into the card: JupyterLab's theme
variables first (``--jp-content-font-color1``, ``--jp-layout-color1``..., which VS Code and
other frontends define too), then a light palette, or a dark one where the page has no
Jupyter theme and the reader's system prefers dark (``prefers-color-scheme``: an exported
page opened outside JupyterLab). A text colour always comes with the background it is read
on. SVG charts draw their text and axes in ``currentColor``, so they follow the text colour
of the page they sit in; graph drawings keep their own light boxes (dark text on pastel fills
reads in both themes) on a transparent background, their title and edge labels in the page's
text colours. A cluster (a loop's step, a fused kernel) is the page's paper tinted green, not
a light fill, since the edge labels drawn over it are in the page's text colours; the red of
a transfer's label (``⇢ device``) is mixed with the text colour so it reads on either paper.
Wide graphs scroll inside their frame instead of being cut at the page edge.
"""

from __future__ import annotations

#: the fallbacks of each colour where no Jupyter theme is loaded: (light, dark)
PALETTE = {
    "ink": ("#111827", "#e5e7eb"),  # text
    "muted": ("#4b5563", "#b6bcc6"),  # notes, edge labels, axes
    "paper": ("#fafafa", "#1f2937"),  # a card's background
    "rule": ("#d1d5db", "#4b5563"),  # borders and table rules
    "badge": ("#e5e7eb", "#374151"),  # a badge's background
}

#: bars (a chart's, a profile row's share): read on light and dark papers alike
ACCENT = "#3b82f6"

#: each colour: the Jupyter theme's variable, then symnb's fallback for the page's scheme
JUPYTER = {
    "ink": "--jp-content-font-color1",
    "muted": "--jp-content-font-color2",
    "paper": "--jp-layout-color1",
    "rule": "--jp-border-color2",
    "badge": "--jp-layout-color3",
}

#: every element that starts a display: where the colours are defined and applied
ROOTS = (
    ".symnb-card,.symnb-error,.symnb-warning,.symnb-note,.symnb-formula,.symnb-chart,.symnb-graph"
)


def _fallbacks(scheme: int) -> str:
    return "".join(f"--symnb-{name}-fb:{pair[scheme]};" for name, pair in PALETTE.items())


def _variables() -> str:
    return "".join(
        f"--symnb-{name}:var({JUPYTER[name]},var(--symnb-{name}-fb));" for name in PALETTE
    )


RULES = """
:is(ROOTS){color:var(--symnb-ink);background-color:var(--symnb-paper);
 font-family:Helvetica,Arial,sans-serif;font-size:13px;max-width:100%;box-sizing:border-box}
:is(ROOTS) :is(ROOTS){background-color:transparent}
.symnb-card{border:1px solid var(--symnb-rule);border-radius:8px;padding:10px 14px;margin:4px 0;
 overflow-x:auto}
.symnb-card h4{margin:0 0 6px 0;font-size:14px;color:inherit}
.symnb-badge{display:inline-block;padding:1px 7px;border-radius:9px;font-size:11px;
 margin-right:4px;background:var(--symnb-badge);color:var(--symnb-ink)}
.symnb-badge.symnb-dim{background:#dbeafe;color:#1e3a8a}
.symnb-table{border-collapse:collapse;font-size:12px;margin:6px 0;color:inherit}
.symnb-table td,.symnb-table th{border-bottom:1px solid var(--symnb-rule);padding:2px 8px;
 text-align:left;color:inherit;background:none}
.symnb-note{color:var(--symnb-muted);font-size:12px;margin:4px 0}
.symnb-title{font-weight:bold;margin:6px 0 2px 0}
.symnb-share{background:ACCENT;height:8px}
.symnb-error{border-left:4px solid #dc2626;padding:8px 12px;
 background-color:color-mix(in srgb,var(--symnb-paper) 88%,#dc2626)}
.symnb-warning{border-left:4px solid #d97706;padding:4px 12px;margin:4px 0;
 background-color:color-mix(in srgb,var(--symnb-paper) 88%,#d97706)}
.symnb-warning summary{cursor:pointer}
:is(ROOTS) :is(pre,code){color:inherit;background:none}
:is(.symnb-error,.symnb-warning) pre{white-space:pre-wrap;margin:4px 0}
:is(.symnb-error,.symnb-warning) .symnb-note{color:inherit}
.symnb-formula{font-size:130%}
.symnb-chart{overflow-x:auto}
div.symnb-chart>svg{display:block;max-width:none}
.symnb-graph{overflow-x:auto}
div.symnb-graph>svg{max-width:none}
.symnb-graph svg g.graph>polygon:first-of-type{fill:transparent;stroke:none}
.symnb-graph svg g.graph>text{fill:var(--symnb-ink)}
.symnb-graph svg g.edge:not(.added,.removed,.changed,.touched,.transfer) :is(path,polygon){
 stroke:var(--symnb-muted)}
.symnb-graph svg g.edge:not(.added,.removed,.changed,.touched,.transfer) polygon{
 fill:var(--symnb-muted)}
.symnb-graph svg g.edge text{fill:var(--symnb-muted)}
.symnb-graph svg g.edge.transfer text{fill:color-mix(in srgb,#dc2626 50%,var(--symnb-ink))}
.symnb-graph svg g.cluster>:is(path,polygon){
 fill:color-mix(in srgb,var(--symnb-paper) 95%,#059669)}
.symnb-graph svg g.cluster>text{fill:var(--symnb-ink)}
"""


def stylesheet() -> str:
    """The ``<style>`` element every display carries (an output may be shown on its own)."""
    return (
        f"<style>{ROOTS}{{{_fallbacks(0)}{_variables()}}}"
        f"@media (prefers-color-scheme: dark){{{ROOTS}{{{_fallbacks(1)}}}}}"
        f"{RULES.strip().replace('ROOTS', ROOTS).replace('ACCENT', ACCENT)}</style>"
    )


STYLE = stylesheet()
