"""Progress for long work (compiling many kernels, profiling, a benchmark, training).

In a Jupyter kernel with ipywidgets, a progress bar with a label that updates in place;
elsewhere nothing at all (scripts and tests stay quiet). When done, the bar closes itself and
its output becomes one line ("training: 30/30 done"), which is what a saved or exported
notebook shows (a closed widget has no state to show there).
"""

from __future__ import annotations

import sys

from symnb.viz.cards import Html, message_html

MIN_ITEMS = 5  # shorter loops show no bar


def _in_kernel() -> bool:
    """True in a Jupyter kernel; never imports IPython (0.4 s) where it is not loaded yet."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _bar(total: int, label: str):
    try:
        import ipywidgets as widgets
        from IPython.display import display
    except ImportError:
        return None
    bar = widgets.IntProgress(min=0, max=total, description=label[:20])
    text = widgets.Label(f"0/{total}")
    box = widgets.HBox([bar, text])
    return bar, text, box, display(box, display_id=True)


def _done(bar, label: str, done: int, total) -> None:
    bar[2].close()
    line = f"{label or 'progress'}: {done}/{total} done"
    bar[3].update(Html(message_html(line), line))


def progress(iterable, total: int | None = None, label: str = ""):
    """Yield from ``iterable``, showing a bar in a notebook when there is enough work."""
    total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
    bar = _bar(total, label) if total and total >= MIN_ITEMS and _in_kernel() else None
    done = 0
    for done, item in enumerate(iterable, 1):
        yield item
        if bar is not None:
            bar[0].value, bar[1].value = done, f"{done}/{total}"
    if bar is not None:
        _done(bar, label, done, total)
