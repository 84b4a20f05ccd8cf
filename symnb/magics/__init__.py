"""The IPython extension (``%load_ext symnb``): magics, styled errors, graph displays.

It adds no engine: every magic calls the library and ``symnb.viz``.
"""

from __future__ import annotations


def load_ipython_extension(shell) -> None:
    from symnb.core.graph import Graph
    from symnb.magics import errors
    from symnb.magics.commands import SymnbMagics

    shell.register_magics(SymnbMagics)
    errors.install(shell)
    svg = shell.display_formatter.formatters["image/svg+xml"]
    svg.for_type(Graph, _graph_svg)


def _graph_svg(graph) -> str | None:
    """A Graph (``f.graph``, ``f.graph_before``) draws itself once the extension is loaded."""
    from symnb.viz.graphs import picture
    from symnb.viz.render import RenderUnavailable

    try:
        return picture(graph).svg()
    except RenderUnavailable:
        return None


def unload_ipython_extension(shell) -> None:
    from symnb.magics import errors

    errors.uninstall(shell)


def stepper(function):
    """The rewrite stepper widget for ``function`` (see symnb.magics.stepper_widget)."""
    from symnb.magics.stepper_widget import stepper as make

    return make(function)
