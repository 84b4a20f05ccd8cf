"""What the ``_repr_*_`` methods of variables and functions return (imported lazily by core).

A bundle is computed once per display: HTML card (with the graph), LaTeX for expressions,
and plain text for terminals. ``include``/``exclude`` are honoured so a terminal never
pays for drawing.
"""

from __future__ import annotations

from symnb.viz.cards import function_card, kernel_count, variable_card
from symnb.viz.latex import to_latex
from symnb.viz.text import MAX_LINE_CHARS, cap_lines, format_expr


def _wanted(mime: str, include, exclude) -> bool:
    return (include is None or mime in include) and not (exclude and mime in exclude)


def variable_text(var) -> str:
    """``x:f32[batch,3]`` for a leaf; for an expression, also its graph in text form, cut
    to its first lines for a large graph (``sn.format_expr(var)`` gives all of it)."""
    head = repr(var)
    if var.owner is None:
        return head
    hint = f"print(sn.format_expr({var.name or 'var'})) shows all"
    return f"{head}\n{cap_lines(format_expr(var), hint)}"


def variable_bundle(var, include=None, exclude=None) -> dict:
    bundle = {"text/plain": variable_text(var)}
    if _wanted("text/html", include, exclude):
        bundle["text/html"] = variable_card(var)
    if var.owner is not None and _wanted("text/latex", include, exclude):
        bundle["text/latex"] = f"${to_latex(var)}$"
    return bundle


def function_text(function) -> str:
    """A few lines a terminal can show: signature, backend, counts, compile time."""
    ins = _listed([repr(v) for v in function.inputs], "inputs")
    outs = _listed([str(v.type) for v in function.results], "outputs")
    return "\n".join(
        [
            f"{function.name or 'function'}({ins}) -> {outs}",
            f"  backend {function.backend}{_on_device(function)}; nodes "
            f"{len(function.graph_before)} -> {len(function.graph)}; "
            f"kernels {kernel_count(function).replace('—', '-')}; "
            f"compiled in {function.compile_time * 1e3:.1f} ms",
        ]
    )


def _listed(items: list[str], what: str, max_chars: int = MAX_LINE_CHARS // 3) -> str:
    """``items`` joined with commas, cut to about ``max_chars`` with how many are left out,
    so that a function of 500 inputs is not one line of thousands of characters."""
    shown, size = [], 0
    for item in items:
        if shown and size + len(item) > max_chars:
            return f"{', '.join(shown)}, ... and {len(items) - len(shown)} more {what}"
        shown.append(item)
        size += len(item) + 2
    return ", ".join(shown)


def _on_device(function) -> str:
    return f" ({function.linker.device})" if function.linker.resident else ""


def function_bundle(function, include=None, exclude=None) -> dict:
    bundle = {"text/plain": function_text(function)}
    if _wanted("text/html", include, exclude):
        bundle["text/html"] = function_card(function)
    return bundle
