"""HTML cards: a variable (name, dtype, named shape, line, graph), a compiled function
(inputs/outputs, backend, node and kernel counts before/after, compile time, graphs), a
profile (table + chart) and a short error message. Each carries the one style sheet
(symnb.viz.theme), so it works offline, in exported HTML, and in light and dark themes."""

from __future__ import annotations

from html import escape

from symnb.core.dims import format_dim
from symnb.core.types import short_dtype
from symnb.viz.diff import side_by_side_html
from symnb.viz.graphs import picture
from symnb.viz.mathml import formula
from symnb.viz.theme import STYLE


def dims_html(var) -> str:
    """Each dim as a badge: named dims highlighted, unknown shown as ?."""
    badges = [
        f'<span class="symnb-badge{" symnb-dim" if isinstance(d, str) else ""}">'
        f"{escape(format_dim(d))}</span>"
        for d in var.type.shape
    ]
    return "".join(badges) or '<span class="symnb-badge">scalar</span>'


def variable_card(var, with_graph: bool = True) -> str:
    """Name, kind, dtype, shape with named dims, where it was built, and its graph."""
    kind = type(var).__name__ if var.owner is None else f"computed by {var.owner.op}"
    where = (
        f'<div class="symnb-note">built at {escape(str(var.source))}</div>' if var.source else ""
    )
    graph = picture(var).html() if with_graph and var.owner is not None else ""
    math = formula(var).html() if var.owner is not None else ""
    return (
        f'{STYLE}<div class="symnb-card"><h4>{escape(var.name or "(unnamed)")} '
        f'<span class="symnb-badge">{short_dtype(var.type.dtype)}</span>{dims_html(var)}</h4>'
        f'<div class="symnb-note">{escape(kind)}</div>{math}{where}{graph}</div>'
    )


def _io_rows(variables, heading) -> str:
    return "".join(
        f"<tr><td>{heading}</td><td><b>{escape(v.name or '?')}</b></td>"
        f"<td>{short_dtype(v.type.dtype)}</td><td>{dims_html(v)}</td></tr>"
        for v in variables
    )


def kernel_count(function) -> str:
    """Generated kernels, and the other steps (BLAS, NumPy fallback) beside them."""
    kernels = function.kernels
    if kernels is None:
        return "—"
    generated = sum(1 for k in kernels if getattr(k, "kind", "kernel") == "kernel")
    others = len(kernels) - generated
    return f"{generated}" + (f" (+{others} other steps)" if others else "")


def _device_badge(function) -> str:
    """The device a device backend runs on (``sn.config.opencl_device`` chose it)."""
    if not function.linker.resident:
        return ""
    return f'<span class="symnb-badge">device {escape(function.linker.device)}</span>'


def function_card(function, with_graphs: bool = True) -> str:
    """The summary card of a compiled function."""
    outs = function.results
    rows = _io_rows(function.inputs, "input") + _io_rows(outs, "output")
    rows += "".join(
        f"<tr><td>update</td><td><b>{escape(s.name or '?')}</b></td><td colspan=2></td></tr>"
        for s, _ in function.updates
    )
    stats = (
        f'<span class="symnb-badge">backend {escape(str(function.backend))}</span>'
        f"{_device_badge(function)}"
        f'<span class="symnb-badge">nodes {len(function.graph_before)} → {len(function.graph)}'
        f'</span><span class="symnb-badge">kernels {kernel_count(function)}</span>'
        f'<span class="symnb-badge">compiled in {function.compile_time * 1e3:.1f} ms</span>'
    )
    graphs = _graphs_html(function) if with_graphs else ""
    return (
        f'{STYLE}<div class="symnb-card"><h4>ƒ {escape(function.name or "function")}</h4>'
        f'{stats}<table class="symnb-table">{rows}</table>{graphs}</div>'
    )


def _graphs_html(function) -> str:
    before = picture(function.graph_before, title="as written", function=function)
    after = picture(function, title="optimised")
    return f"<details><summary>graphs</summary>{side_by_side_html(before, after)}</details>"


def error_html(exc, traceback_text: str) -> str:
    """A short styled message; the full traceback one click away (``<details>``)."""
    message, _, where = str(exc).partition("\n  at ")
    line = f"<div><b>at</b> {escape(where)}</div>" if where else ""
    return (
        f'{STYLE}<div class="symnb-error"><b>{type(exc).__name__}</b>'
        f"<pre>{escape(message)}</pre>{line}<details><summary>full traceback</summary>"
        f"<pre>{escape(traceback_text)}</pre></details></div>"
    )


def warning_html(message, category, where: str) -> str:
    """A ShapeWarning in one line (category, the user's line, the message's first line); the
    rest of the message and how to silence this category open on a click."""
    head, _, rest = str(message).partition("\n")
    name = category.__name__
    silence = f'warnings.simplefilter("ignore", sn.{name})'
    return (
        f'{STYLE}<details class="symnb-warning {escape(name)}"><summary><b>{escape(name)}</b> '
        f"at {escape(where)}: {escape(head)}</summary>"
        + (f"<pre>{escape(rest.strip())}</pre>" if rest.strip() else "")
        + f'<div class="symnb-note">to silence this category: <code>{escape(silence)}'
        "</code></div></details>"
    )


def message_html(text: str) -> str:
    """One line of explanation (a display that cannot be shown, and why)."""
    return f'{STYLE}<div class="symnb-note">{escape(text)}</div>'


def kernels_html(kernels) -> str:
    """Each step of a kernel backend: a kernel's own loop shown, the rest of its C (the other
    variants, helpers and shared boilerplate) behind a click; other steps in one line. A
    kernel whose C is that of an earlier step (each layer of a deep network) names that step
    instead of repeating it."""
    items, first = [], {}
    for i, k in enumerate(kernels):
        line = escape(k.line() if hasattr(k, "line") else repr(k))
        source = getattr(k, "source", None)
        if source and source in first:
            language = escape(getattr(k, "language", "C"))
            body = f'<div class="symnb-note">the same {language} as step {first[source]}</div>'
        else:
            first.setdefault(source, i)
            body = _kernel_body(k)
        items.append(
            f'<div class="symnb-kernel"><div><b>{i}</b> <code>{line}</code></div>{body}</div>'
        )
    return f'{STYLE}<div class="symnb-card"><h4>kernels ({len(items)})</h4>{"".join(items)}</div>'


def _kernel_body(kernel) -> str:
    source = getattr(kernel, "source", None)
    if not source:
        return ""
    loop, rest, summary = kernel.folded() if hasattr(kernel, "folded") else (source, "", "")
    folded = (
        f'<details class="symnb-folded"><summary>{escape(summary)}</summary>'
        f"<pre>{escape(rest)}</pre></details>"
        if rest
        else ""
    )
    return f'<pre class="symnb-loop">{escape(loop)}</pre>{folded}'


class Html:
    """An HTML fragment Jupyter displays as is (plain text for terminals)."""

    def __init__(self, html: str, text: str = ""):
        self.html, self.text = html, text

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": repr(self)}

    def __repr__(self):
        return self.text or f"(HTML display, {len(self.html):,} characters)"
