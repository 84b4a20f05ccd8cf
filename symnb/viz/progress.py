"""Progress for long work (compiling many kernels, profiling, a benchmark, training):
``sn.progress(iterable, label=...)``.

With tqdm installed, tqdm's bars: its widget in a Jupyter kernel, its text bar in a terminal.
Without it, symnb's own: an ipywidgets bar in a kernel, a counter line in a terminal. Where
stderr is not a terminal (a script piped to a file, CI, tests) nothing is written. In a kernel,
when done, the bar closes itself and its output becomes one line ("training: 30/30 done"),
which is what a saved or exported notebook shows (a closed widget has no state to show there).
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


def _summarise(shown, label: str, done: int, total) -> None:
    """The bar's output (display handle ``shown``) becomes one line of text."""
    line = f"{label or 'progress'}: {done}/{total} done"
    shown.update(Html(message_html(line), line))


def progress(iterable, total: int | None = None, label: str = ""):
    """Yield from ``iterable``, showing a bar when there is enough work (``MIN_ITEMS``)."""
    total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
    if not total or total < MIN_ITEMS:
        yield from iterable
    elif _in_kernel():
        yield from _in_notebook(iterable, total, label)
    elif _terminal():
        yield from _in_terminal(iterable, total, label)
    else:
        yield from iterable


def _in_notebook(iterable, total: int, label: str):
    """tqdm's widget, else symnb's; either becomes the one-line summary when done."""
    bar = _tqdm_widget(total, label)
    if bar is None:
        yield from _own_widget(iterable, total, label)
        return
    from IPython.display import display

    shown = display(bar.container, display_id=True)
    try:
        for item in iterable:
            yield item
            bar.update()
    finally:
        bar.close()  # an unfinished bar stays, in tqdm's colour for failure
    bar.container.close()
    _summarise(shown, label, bar.n, total)


def _tqdm_widget(total: int, label: str):
    """tqdm's notebook bar, not displayed yet; None without tqdm or ipywidgets."""
    try:
        from tqdm.notebook import tqdm

        return tqdm(total=total, desc=label or None, display=False)
    except ImportError:  # tqdm.notebook raises it too, when ipywidgets is missing
        return None


def _own_widget(iterable, total: int, label: str):
    bar = _bar(total, label)
    done = 0
    for done, item in enumerate(iterable, 1):
        yield item
        if bar is not None:
            bar[0].value, bar[1].value = done, f"{done}/{total}"
    if bar is not None:
        bar[2].close()
        _summarise(bar[3], label, done, total)


def _terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _in_terminal(iterable, total: int, label: str):
    """tqdm's text bar on stderr, else a counter line that rewrites itself."""
    try:
        from tqdm.std import tqdm
    except ImportError:
        pass
    else:
        yield from tqdm(iterable, total=total, desc=label or None, file=sys.stderr)
        return
    name, done = label or "progress", 0
    for done, item in enumerate(iterable, 1):
        yield item
        sys.stderr.write(f"\r{name}: {done}/{total}")
        sys.stderr.flush()
    sys.stderr.write(f"\r{name}: {done}/{total} done\n")
