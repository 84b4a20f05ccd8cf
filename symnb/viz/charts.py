"""Small self-contained SVG charts (no plotting library, no network): bars and lines."""

from __future__ import annotations

from html import escape

FONT = "font-family='Helvetica,Arial,sans-serif' font-size='11'"


def bar_chart_svg(labels: list[str], values: list[float], unit: str = "") -> str:
    """Horizontal bars, longest first as given, each labelled with its value."""
    width, label_w, row_h = 640, 260, 20
    top = max(values, default=0) or 1.0
    rows = []
    for i, (label, value) in enumerate(zip(labels, values)):
        y = 6 + i * row_h
        bar = (width - label_w - 70) * value / top
        rows.append(
            f"<text x='{label_w - 6}' y='{y + 13}' text-anchor='end' {FONT}>"
            f"{escape(label[:40])}</text>"
            f"<rect class='bar' x='{label_w}' y='{y + 2}' width='{bar:.1f}' height='{row_h - 6}'"
            f" fill='#3b82f6'><title>{escape(label)}: {value:.2f}{unit}</title></rect>"
            f"<text x='{label_w + bar + 4:.1f}' y='{y + 13}' {FONT}>{value:.1f}{unit}</text>"
        )
    height = 12 + len(rows) * row_h
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"class='symnb-bars'>{''.join(rows)}</svg>"
    )


def line_chart_svg(values: list[float], title: str = "", xlabel: str = "step") -> str:
    """A line over ``values`` with min/max marked: enough for a loss curve."""
    width, height, pad = 520, 240, 40
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    points = " ".join(
        f"{pad + i * step:.1f},{height - pad - (v - lo) / span * (height - 2 * pad):.1f}"
        for i, v in enumerate(values)
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"class='symnb-line'><text x='{width / 2}' y='16' text-anchor='middle' {FONT}>"
        f"{escape(title)}</text>"
        f"<line x1='{pad}' y1='{height - pad}' x2='{width - pad}' y2='{height - pad}' "
        "stroke='#9ca3af'/>"
        f"<line x1='{pad}' y1='{pad}' x2='{pad}' y2='{height - pad}' stroke='#9ca3af'/>"
        f"<polyline class='curve' fill='none' stroke='#2563eb' stroke-width='2' "
        f"points='{points}'/>"
        f"<text x='{pad - 4}' y='{pad + 4}' text-anchor='end' {FONT}>{hi:.3g}</text>"
        f"<text x='{pad - 4}' y='{height - pad}' text-anchor='end' {FONT}>{lo:.3g}</text>"
        f"<text x='{width / 2}' y='{height - 10}' text-anchor='middle' {FONT}>"
        f"{escape(xlabel)} (0–{len(values) - 1})</text></svg>"
    )


class Chart:
    """An SVG string that Jupyter displays as an image."""

    def __init__(self, svg: str):
        self.svg = svg

    def _repr_svg_(self):
        return self.svg


def plot_line(values, title: str = "", xlabel: str = "step") -> Chart:
    """``sn.viz.plot_line(losses, "loss")``: a line chart, displayed in a notebook."""
    return Chart(line_chart_svg([float(v) for v in values], title, xlabel))
