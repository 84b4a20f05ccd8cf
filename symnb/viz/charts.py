"""Small self-contained SVG charts (no plotting library, no network): bars, lines, and small
matrices drawn as grids of coloured squares (weights, filters, digits).

Text and axes are drawn in ``currentColor``: inside a page (the HTML a notebook shows) they
take the theme's text colour (symnb.viz.theme); the SVG shown on its own as an image gets a
light paper of its own. Each chart names itself (``<title>`` and ``aria-label``)."""

from __future__ import annotations

import re
from html import escape, unescape

import numpy as np

from symnb.core.words import printable
from symnb.errors import ArgumentError
from symnb.viz.theme import ACCENT, STYLE

FONT = "font-family='Helvetica,Arial,sans-serif' font-size='11' fill='currentColor'"
AXIS = "stroke='currentColor' stroke-opacity='0.55'"
#: the colours of a chart shown on its own (an image: no page colours reach it)
PAPER = "color:#111827;background:#ffffff"


def svg_text(caller: str) -> str:
    """The caller's text (a label, a title, a unit) as SVG text or an attribute's value:
    never markup, and control characters written as their escapes (``\\x01``), which XML
    cannot hold (as the graph drawings write them, symnb.core.words.printable)."""
    return escape(printable(caller), quote=True)


#: about how wide a character of :data:`FONT` is, in pixels: the room a text takes
CHAR_W = 6


def fit(texts: list[str], most: int) -> list[str]:
    """The caller's ``texts`` as a chart shows them where there is room for ``most``
    characters: each in its printable form (as :func:`svg_text` writes it), a longer one cut
    in its middle at "…", keeping its start and its end (where a sweep's labels differ,
    "test loss, lr=0.1, batch 32" is "test loss, l…1, batch 32"); texts that differ but
    would read alike so cut are shown whole (the chart makes room for them), so that two
    labels never read alike unless they are alike."""
    shown = [printable(t) for t in texts]
    head, tail = most - 1 - (most - 1) // 2, (most - 1) // 2
    cut = [t if len(t) <= most else f"{t[:head]}…{t[len(t) - tail :]}" for t in shown]
    reads: dict[str, set[str]] = {}
    for whole, short in zip(shown, cut):
        reads.setdefault(short, set()).add(whole)
    return [short if len(reads[short]) == 1 else whole for whole, short in zip(shown, cut)]


def fitted_text(caller: str, shown: str) -> str:
    """``shown`` (the caller's text as :func:`fit` made it) as SVG text, with the whole
    text as its tooltip (``<title>``) where it was cut."""
    whole = printable(caller)
    tip = "" if shown == whole else f"<title>{svg_text(whole)}</title>"
    return f"{svg_text(shown)}{tip}"


def svg_root(width, height, kind: str, label: str) -> str:
    """The opening ``<svg>`` of a chart of ``kind`` ("bars", "lines"...), with its name for
    screen readers and tooltips."""
    name = svg_text(label)
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"class='symnb-{kind}' role='img' aria-label='{name}'><title>{name}</title>"
    )


def bar_chart_svg(labels: list[str], values: list[float], unit: str = "") -> str:
    """Horizontal bars, in the order given, each labelled with its value. Bars are scaled by
    the largest finite magnitude; a negative one goes left of a zero line (a negative SVG
    width is no bar at all), and a value that is not finite is a marked gap, not a bar."""
    if len(labels) != len(values):
        raise ArgumentError(
            f"plot_bars: {len(labels)} labels for {len(values)} values; give one label a value"
        )
    shown = fit(labels, 40)
    wide = CHAR_W * max([0, *(len(t) - 40 for t in shown)])  # room for a label shown whole
    width, label_w, row_h, text_w = 640 + wide, 260 + wide, 20, 70
    finite = [v for v in values if np.isfinite(v)]
    pos, neg = max([0.0, *finite]), -min([0.0, *finite])
    left = text_w if neg else 0  # room for a negative bar's value, left of it
    scale = (width - label_w - text_w - left) / ((pos + neg) or 1.0)
    zero = label_w + left + neg * scale
    shown_unit = svg_text(unit)
    rows = []
    for i, (label, value) in enumerate(zip(labels, values)):
        y = 6 + i * row_h
        rows.append(
            f"<text x='{label_w - 6}' y='{y + 13}' text-anchor='end' {FONT}>"
            f"{fitted_text(label, shown[i])}</text>"
        )
        tip = f"<title>{svg_text(label)}: {value:.2f}{shown_unit}</title>"
        if not np.isfinite(value):
            rows.append(
                f"<text class='gap' x='{zero + 4:.1f}' y='{y + 13}' {FONT} fill-opacity='0.7'>"
                f"{tip}{value}{shown_unit} (not drawn)</text>"
            )
            continue
        bar = abs(value) * scale
        x = zero - bar if value < 0 else zero
        at = f"x='{x - 4:.1f}' text-anchor='end'" if value < 0 else f"x='{x + bar + 4:.1f}'"
        rows.append(
            f"<rect class='bar' x='{x:.1f}' y='{y + 2}' width='{bar:.1f}' height='{row_h - 6}'"
            f" fill='{ACCENT}'>{tip}</rect>"
            f"<text {at} y='{y + 13}' {FONT}>{value:.1f}{shown_unit}</text>"
        )
    height = 12 + len(labels) * row_h
    if neg:
        rows.append(f"<line x1='{zero:.1f}' y1='4' x2='{zero:.1f}' y2='{height - 4}' {AXIS}/>")
    name = f"bar chart of {len(labels)} values" + (f" in {unit.strip()}" if unit.strip() else "")
    return f"{svg_root(width, height, 'bars', name)}{''.join(rows)}</svg>"


def line_chart_svg(values: list[float], title: str = "", xlabel: str = "step") -> str:
    """A line over ``values`` with min/max marked: enough for a loss curve. Values that are
    not finite leave gaps, as in :func:`lines_chart_svg`, and do not set the axis."""
    width, height, pad = 520, 240, 40
    ys = np.asarray(values, dtype=float).ravel()
    finite = ys[np.isfinite(ys)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    span = (hi - lo) or 1.0
    step = (width - 2 * pad) / max(len(ys) - 1, 1)
    curves = "".join(
        "<polyline class='curve' fill='none' stroke='#2563eb' stroke-width='2' points='"
        + " ".join(
            f"{pad + i * step:.1f},{height - pad - (v - lo) / span * (height - 2 * pad):.1f}"
            for i, v in run
        )
        + "'/>"
        for run in _runs(list(enumerate(ys.tolist())))
    )
    if finite.size:
        gaps = len(ys) - finite.size
        what = f"{lo:.3g} to {hi:.3g}" + (f", {gaps} not finite (gaps)" if gaps else "")
    else:
        what = "none finite" if len(ys) else "nothing to draw"
    name = f"line chart {title or ''} of {len(ys)} values, {what}"
    return (
        f"{svg_root(width, height, 'line', ' '.join(name.split()))}"
        f"<text x='{width / 2}' y='16' text-anchor='middle' {FONT}>{svg_text(title)}</text>"
        f"<line x1='{pad}' y1='{height - pad}' x2='{width - pad}' y2='{height - pad}' {AXIS}/>"
        f"<line x1='{pad}' y1='{pad}' x2='{pad}' y2='{height - pad}' {AXIS}/>"
        f"{curves}"
        + (
            f"<text x='{pad - 4}' y='{pad + 4}' text-anchor='end' {FONT}>{hi:.3g}</text>"
            f"<text x='{pad - 4}' y='{height - pad}' text-anchor='end' {FONT}>{lo:.3g}</text>"
            if finite.size
            else f"<text x='{width / 2}' y='{height / 2}' text-anchor='middle' {FONT}>"
            f"{'no finite values' if len(ys) else 'no values'}</text>"
        )
        + f"<text x='{width / 2}' y='{height - 10}' text-anchor='middle' {FONT}>"
        f"{svg_text(xlabel)} (0–{max(len(ys) - 1, 0)})</text></svg>"
    )


#: line colours, in the order series are given
PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")


def _runs(points: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """The points cut where a value is not finite: an overflowed loss leaves a gap."""
    runs, run = [], []
    for x, y in points:
        if np.isfinite(x) and np.isfinite(y):
            run.append((x, y))
        elif run:
            runs, run = runs + [run], []
    return runs + [run] if run else runs


def lines_chart_svg(
    series: dict, title: str = "", xlabel: str = "step", x=None, log: bool = False
) -> str:
    """Several lines on shared axes with a legend. ``series`` maps a label to its values;
    ``x`` gives the abscissae (default 0, 1, ...), one a value of every series; ``log``
    draws log10 of the values (those not above 0 leave gaps, as values that are not finite
    do)."""
    given = None if x is None else np.asarray(x, dtype=float).ravel()
    data, read_as = {}, {}
    for label, values in series.items():
        reading = printable(str(label))
        if reading in read_as:  # one legend entry would name two lines
            raise ArgumentError(
                f"plot_lines: series {read_as[reading]!r} and {label!r} both read "
                f"{reading!r} in the legend; give each series a label of its own"
            )
        read_as[reading] = label
        ys = np.asarray(values, dtype=float).ravel()
        if given is not None and len(given) != len(ys):  # zip would drop points unsaid
            raise ArgumentError(
                f"plot_lines: series {str(label)!r} has {len(ys)} values for {len(given)} "
                "x values; give one x a value"
            )
        if log:
            with np.errstate(all="ignore"):
                ys = np.where(ys > 0, np.log10(np.where(ys > 0, ys, 1.0)), np.nan)
        xs = np.arange(len(ys), dtype=float) if given is None else given
        data[str(label)] = list(zip(xs.tolist(), ys.tolist()))
    shown = fit(list(data), 24)
    wide = CHAR_W * max([0, *(len(t) - 24 for t in shown)])  # room for a label shown whole
    width, height, pad, legend_w = 560 + wide, 250, 44, 150 + wide
    finite = [p for pts in data.values() for p in pts if np.isfinite(p[0]) and np.isfinite(p[1])]
    x_lo, x_hi = (min(p[0] for p in finite), max(p[0] for p in finite)) if finite else (0, 1)
    y_lo, y_hi = (min(p[1] for p in finite), max(p[1] for p in finite)) if finite else (0, 1)
    x_span, y_span = (x_hi - x_lo) or 1.0, (y_hi - y_lo) or 1.0
    plot_w = width - legend_w - 2 * pad

    def at(px, py):
        return (
            f"{pad + (px - x_lo) / x_span * plot_w:.1f},"
            f"{height - pad - (py - y_lo) / y_span * (height - 2 * pad):.1f}"
        )

    parts = []
    for k, (label, pts) in enumerate(data.items()):
        colour = PALETTE[k % len(PALETTE)]
        for run in _runs(pts):
            points = " ".join(at(px, py) for px, py in run)
            parts.append(
                f"<polyline class='curve' data-series='{svg_text(label)}' "
                f"fill='none' stroke='{colour}' stroke-width='2' points='{points}'/>"
            )
        y = pad + 4 + 16 * k
        parts.append(
            f"<line x1='{width - legend_w + 6}' y1='{y - 4}' x2='{width - legend_w + 24}' "
            f"y2='{y - 4}' stroke='{colour}' stroke-width='3'/><text class='legend' "
            f"x='{width - legend_w + 28}' y='{y}' {FONT}>{fitted_text(label, shown[k])}</text>"
        )

    def tick(v):
        return f"{10**v if log else v + 0.0:.3g}"  # + 0.0: no "-0"

    right = pad + plot_w
    name = f"line chart {title} of {', '.join(data) or 'no series'} against {xlabel}"
    return (
        f"{svg_root(width, height, 'lines', ' '.join(name.split()))}"
        f"<text x='{pad + plot_w / 2}' y='16' text-anchor='middle' {FONT}>{svg_text(title)}</text>"
        f"<line x1='{pad}' y1='{height - pad}' x2='{right}' y2='{height - pad}' {AXIS}/>"
        f"<line x1='{pad}' y1='{pad}' x2='{pad}' y2='{height - pad}' {AXIS}/>"
        + "".join(parts)
        + f"<text x='{pad - 4}' y='{pad + 4}' text-anchor='end' {FONT}>{tick(y_hi)}</text>"
        f"<text x='{pad - 4}' y='{height - pad}' text-anchor='end' {FONT}>{tick(y_lo)}</text>"
        f"<text x='{pad}' y='{height - pad + 14}' text-anchor='middle' {FONT}>{x_lo:.3g}</text>"
        f"<text x='{right}' y='{height - pad + 14}' text-anchor='middle' {FONT}>{x_hi:.3g}</text>"
        f"<text x='{pad + plot_w / 2}' y='{height - 8}' text-anchor='middle' {FONT}>"
        f"{svg_text(xlabel)}</text></svg>"
    )


def _colour(v: float, diverging: bool) -> str:
    """``v`` in [-1, 1] (diverging: blue below 0, red above) or [0, 1] (white to black)."""
    if not np.isfinite(v):
        return "#fde047"  # a value that is not finite stands out in yellow
    if diverging:
        t = min(abs(v), 1.0)
        far = (220, 38, 38) if v > 0 else (37, 99, 235)
        rgb = [round(255 + (c - 255) * t) for c in far]
    else:
        rgb = [round(255 * (1 - min(max(v, 0.0), 1.0)))] * 3
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _matrices(images, titles) -> tuple[list[np.ndarray], list[str]]:
    """The matrices to draw and their titles: an image of 2 dims as it is (a vector as one
    row, a number as one square); one of more dims as the matrices over its last two axes,
    as NumPy stacks matrices (a filter bank (out, in, h, w) one grid a filter and input
    channel), each titled with its index after the image's title (``filters[1, 0]``; an
    untitled image's position in the list where there are several, ``2[1, 0]``)."""
    titles = [str(t) for t in titles]
    mats, names = [], []
    for k, image in enumerate(images):
        title = titles[k] if k < len(titles) else ""
        try:
            m = np.asarray(image, dtype=float)
        except (TypeError, ValueError) as exc:  # ragged lists, text
            what = f"image {k}" + (f" ({title!r})" if title else "")
            raise ArgumentError(
                f"show_images: {what} is not an array of numbers ({exc}); give each image "
                "as a matrix of numbers, or a stack of them"
            ) from None
        if m.ndim <= 2:
            mats.append(np.atleast_2d(m))
            names.append(title)
            continue
        base = title or (str(k) if len(images) > 1 else "")
        for index in np.ndindex(m.shape[:-2]):
            mats.append(m[index])
            names.append(f"{base}[{', '.join(map(str, index))}]")
    return mats, names


def heatmaps_svg(
    images, titles=(), diverging: bool = True, cell: int = 10, columns: int = 10
) -> str:
    """Small matrices side by side as grids of squares. ``diverging``: each matrix scaled by
    its own largest magnitude, negative blue, positive red (weights, filters); otherwise
    values in [0, 1] from white to black (pixels). An image of more than 2 dims (a conv
    layer's filters (out, in, h, w), a stack of digits) is drawn as its matrices over the
    last two axes, each titled with its index (see :func:`_matrices`)."""
    mats, titles = _matrices(list(images), titles)
    shown = fit(titles, 16)
    box_w = max((m.shape[1] for m in mats), default=1) * cell + 8
    box_w = max([box_w, *(CHAR_W * len(t) + 8 for t in shown if len(t) > 16)])
    box_h = max((m.shape[0] for m in mats), default=1) * cell + 22
    columns = max(1, min(columns, len(mats)))
    parts = []
    for k, (m, name) in enumerate(zip(mats, titles)):
        x0, y0 = (k % columns) * box_w, (k // columns) * box_h
        finite = m[np.isfinite(m)]
        scale = (np.abs(finite).max() if finite.size else 0.0) or 1.0
        values = m / scale if diverging else m
        parts.append(
            f"<text x='{x0 + box_w / 2 - 4}' y='{y0 + 12}' text-anchor='middle' "
            f"{FONT}>{fitted_text(name, shown[k])}</text><g class='image'>"
        )
        for (i, j), v in np.ndenumerate(values):
            parts.append(
                f"<rect x='{x0 + j * cell}' y='{y0 + 16 + i * cell}' width='{cell}' "
                f"height='{cell}' fill='{_colour(v, diverging)}'/>"
            )
        parts.append("</g>")
    rows = -(-len(mats) // columns)
    scale = "red positive, blue negative" if diverging else "white 0 to black 1"
    name = f"{len(mats)} matrices as grids of squares ({scale})"
    root = svg_root(columns * box_w, max(rows, 1) * box_h, "images", name)
    return f"{root}{''.join(parts)}</svg>"


class Chart:
    """An SVG chart in a notebook: inline in the page's HTML (its text in the theme's
    colours), and as an image on its own paper for frontends that show only images."""

    def __init__(self, svg: str):
        self.svg = svg

    def html(self) -> str:
        return f'{STYLE}<div class="symnb-chart">{self.svg}</div>'

    def _repr_svg_(self):
        """The chart on its own light paper (an image sees no page colours)."""
        return self.svg.replace("<svg ", f"<svg style='{PAPER}' ", 1)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/html": self.html(),
            "image/svg+xml": self._repr_svg_(),
            "text/plain": repr(self),
        }

    def __repr__(self):
        """What the chart shows, in words (its ``aria-label``)."""
        label = re.search(r"aria-label='([^']*)'", self.svg)
        return f"<chart: {unescape(label.group(1))}>" if label else "<chart>"


def plot_line(values, title: str = "", xlabel: str = "step") -> Chart:
    """``sn.viz.plot_line(losses, "loss")``: a line chart, displayed in a notebook."""
    return Chart(line_chart_svg(values, title, xlabel))


def plot_lines(
    series: dict, title: str = "", xlabel: str = "step", x=None, log: bool = False
) -> Chart:
    """``plot_lines({"train": losses, "test": test_losses}, "loss", "epoch")``: lines with a
    legend, displayed in a notebook (see :func:`lines_chart_svg`)."""
    return Chart(lines_chart_svg(series, title, xlabel, x, log))


def plot_bars(labels, values, unit: str = "") -> Chart:
    """Horizontal bars with their values, displayed in a notebook."""
    return Chart(bar_chart_svg([str(k) for k in labels], [float(v) for v in values], unit))


def show_images(
    images, titles=(), diverging: bool = True, cell: int = 10, columns: int = 10
) -> Chart:
    """Small matrices (weights, filters, 8x8 digits) as coloured grids, displayed in a
    notebook; an array of more dims (a conv layer's filters) one grid a matrix over its
    last two axes (see :func:`heatmaps_svg`)."""
    return Chart(heatmaps_svg(images, titles, diverging, cell, columns))
