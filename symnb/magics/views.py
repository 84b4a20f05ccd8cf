"""What ``--show`` can ask for: one displayable per name, or one line saying why not."""

from __future__ import annotations

from types import SimpleNamespace

from symnb.errors import SymnbError
from symnb.magics.cell import check_options
from symnb.magics.stepper_widget import stepper
from symnb.viz.cards import Html, kernels_html, message_html
from symnb.viz.diff import diff_picture
from symnb.viz.graphs import picture
from symnb.viz.text import cap_lines
from symnb.viz.view import is_grad_node


def _unavailable(text: str) -> Html:
    return Html(message_html(text), text)


def show_before(f):
    return picture(f.graph_before, title=f"{f.name or 'function'}: as written", function=f)


def show_after(f):
    return picture(f, title=f"{f.name or 'function'}: optimised")


def show_diff(f):
    return diff_picture(f.graph_before, f, title=f"{f.name or 'function'}: before → after")


def show_grad(f):
    """The graph as written, gradient nodes (``tag["grad_of"]``) in violet."""
    count = sum(1 for n in f.graph_before.toposort() if is_grad_node(n))
    if not count:
        return _unavailable("no node of this function was built by sn.grad: no gradient to show")
    title = f"{f.name or 'function'}: gradient nodes in violet"
    pic = picture(f.graph_before, title=title, function=f)
    pic.view.notes.append(f"{count} of {len(f.graph_before)} nodes compute gradients")
    return pic


def show_kernels(f):
    kernels = getattr(f, "kernels", None)
    if kernels is None:
        return _unavailable(f"backend {f.backend!r} generates no kernels; use --backend c")
    text = kernels.listing() if hasattr(kernels, "listing") else repr(kernels)
    return Html(kernels_html(kernels), cap_lines(text, "print(f.kernels.listing()) for all"))


def show_profile(f):
    return f.profile()


def show_steps(f):
    return stepper(f)


VIEWS = {
    "before": show_before,
    "after": show_after,
    "diff": show_diff,
    "grad": show_grad,
    "kernels": show_kernels,
    "profile": show_profile,
    "steps": show_steps,
}


def views_for(f, names: str):
    """The displayables for a comma-separated list of view names (unknown names raise), each
    made as it is asked for: one that cannot be built (``f.profile()``'s random inputs out of
    a gather's range) becomes one line saying why, and the others are still shown."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    check_options(SimpleNamespace(show=names, backend=None))  # a CellError (styled card)
    for name in wanted:
        try:
            yield VIEWS[name](f)
        except Exception as exc:  # noqa: BLE001 - a view is a display; the function stands
            yield _unavailable(f"{name}: cannot be shown: {_one_line(exc)}")


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, SymnbError) else f"{type(exc).__name__}: {text}"
