"""Showing graphs: the text form, DOT/SVG, LaTeX, rich cards and profiles.

The layers below (core's variables and graphs, the compiler's functions) display themselves
through the hooks registered here, so none of them imports viz.
"""

from symnb.core.hooks import register
from symnb.viz.cards import variable_card
from symnb.viz.graphs import graph_bundle, graph_svg
from symnb.viz.latex import to_latex
from symnb.viz.profile import profile_function
from symnb.viz.reprs import function_bundle, variable_bundle, variable_text
from symnb.viz.text import format_graph

for _provider in (
    variable_bundle,
    variable_card,
    variable_text,
    to_latex,
    format_graph,
    graph_svg,
    graph_bundle,
    function_bundle,
    profile_function,
):
    register(_provider.__name__, _provider)
