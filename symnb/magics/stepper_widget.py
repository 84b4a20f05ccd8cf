"""An ipywidgets control that walks a compiled function's rewrite history.

Step 0 is the graph as written; step k shows the graph right after the k-th rewrite (of
those the phase/rule filters keep), with what that rewrite removed (dashed red), added
(green) or rewired (orange), its rule, phase and time.

Displayed in a kernel, the stepper is two outputs: the live widget, and its static twin
(symnb.viz.stepper: every step embedded, switched by the page itself). A page with no live
widget manager (a notebook exported by nbconvert, which stores the widget state by default
but cannot fetch the widget manager offline) shows the twin; a live frontend renders the
widget, whose hidden ``HTML`` child holds the one style rule that hides the twin there (not
in an nbconvert page, whose body is ``.jp-Notebook``, should the widget manager load).
"""

from __future__ import annotations

import importlib.util
import uuid

from symnb.viz.cards import Html, message_html
from symnb.viz.stepper import start_frame, static_stepper_html, step_frame, stepper_steps


def history_of(function):
    """``function.rewrites`` then the loops' inner rewrites, as a list, or None when this
    build has no rewrite history."""
    return stepper_steps(function)


class RewriteStepper:
    """``RewriteStepper(f)`` in a cell shows the control; ``.go(k)`` moves it from code;
    ``phase`` and ``rule`` set its filters from the start (and its static twin's)."""

    def __init__(self, function, max_boxes: int = 200, phase=None, rule=None):
        import ipywidgets as w

        self.function, self.max_boxes = function, max_boxes
        self.history = history_of(function) or []
        self.phase = w.Dropdown(
            options=["all", *_unique(s.phase for s in self.history)], description="phase"
        )
        self.rule = w.Dropdown(
            options=["all", *_unique(s.rule for s in self.history)], description="rule"
        )
        self.slider = w.IntSlider(min=0, max=0, description="step")
        self.prev = w.Button(description="‹ Prev", layout=w.Layout(width="80px"))
        self.next = w.Button(description="Next ›", layout=w.Layout(width="80px"))
        self.info = w.HTML()
        self.graph = w.Output()
        self.twin = f"symnb-static-{uuid.uuid4().hex[:12]}"
        hide = f"<style>body:not(.jp-Notebook) #{self.twin}{{display:none}}</style>"
        self.hider = w.HTML(hide, layout=w.Layout(display="none"))
        controls = [w.HBox([self.phase, self.rule]), w.HBox([self.prev, self.slider, self.next])]
        self.widget = w.VBox([*controls, self.info, self.graph, self.hider])
        _choose(self.phase, phase)
        _choose(self.rule, rule)
        self._wire()
        self._refilter()

    def _wire(self) -> None:
        self.slider.observe(self._on_slider, names="value")
        self.phase.observe(self._on_filter, names="value")
        self.rule.observe(self._on_filter, names="value")
        self.prev.on_click(self._on_prev)
        self.next.on_click(self._on_next)

    # -- what is shown --------------------------------------------------------------------
    @property
    def visible(self) -> list[int]:
        """Indices into the history that pass the phase and rule filters."""
        return [i for i, s in enumerate(self.history) if self._keeps(s)]

    def _keeps(self, step) -> bool:
        return self.phase.value in ("all", step.phase) and self.rule.value in ("all", step.rule)

    def _refilter(self) -> None:
        self.slider.max = len(self.visible)
        self.slider.value = min(self.slider.value, self.slider.max)
        self.show(self.slider.value)

    def show(self, k: int) -> None:
        """Draw position ``k`` (0 = as written) of the filtered history; ``k`` is clamped
        to the positions there are, as ``go`` does (-1 is 0, past the last is the last)."""
        shown = len(self.visible)
        k = max(0, min(int(k), shown))
        if k == 0:
            info, pic = start_frame(self.function, self.history, shown, self.max_boxes)
        else:
            index = self.visible[k - 1]
            info, pic = step_frame(self.function, self.history, index, k, shown, self.max_boxes)
        self.info.value = info
        self.graph.outputs = ()
        self.graph.append_display_data(pic)

    # -- events ---------------------------------------------------------------------------
    def go(self, k: int) -> None:
        self.slider.value = max(0, min(k, self.slider.max))

    def _on_slider(self, change) -> None:
        self.show(change["new"])

    def _on_filter(self, change) -> None:
        self._refilter()

    def _on_prev(self, button) -> None:
        self.go(self.slider.value - 1)

    def _on_next(self, button) -> None:
        self.go(self.slider.value + 1)

    def static_html(self) -> str:
        """The static twin: every step embedded, switched without a kernel."""
        html = static_stepper_html(
            self.function, self.max_boxes, phase=self.phase.value, rule=self.rule.value
        )
        return f'<div id="{self.twin}" class="symnb-static-stepper">{html}</div>'

    def __repr__(self):
        filters = [f"{d.description} {d.value}" for d in (self.phase, self.rule)]
        kept = [f for f in filters if not f.endswith(" all")]
        where = f" ({', '.join(kept)})" if kept else ""
        return (
            f"<rewrite stepper of {self.function.name or 'function'}: step "
            f"{self.slider.value} of {self.slider.max}{where}; {len(self.history)} rewrites; "
            ".go(k) moves it>"
        )

    def _widget_bundle(self, include=None, exclude=None) -> dict:
        """The widget's own bundle, its text (a terminal's) this stepper's repr, not the
        VBox's."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = repr(self)
        return bundle

    def _ipython_display_(self):
        """The widget, then its static twin (see the module docstring)."""
        from IPython.display import display

        display(self._widget_bundle(), raw=True)
        text = f"static stepper: {len(self.history)} rewrites"
        display(Html(self.static_html(), text))

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget, and for a renderer without widgets its static twin, in one bundle
        (IPython displays the two as two outputs instead: ``_ipython_display_``)."""
        bundle = self._widget_bundle(include=include, exclude=exclude)
        bundle["text/html"] = self.static_html()
        return bundle


def _unique(values) -> list:
    return list(dict.fromkeys(values))


def _choose(dropdown, value) -> None:
    """Set a filter from the start (``_check_filter`` has refused a name it lacks)."""
    if value is not None:
        _check_filter(dropdown.description, value, dropdown.options[1:])
        dropdown.value = value


def _check_filter(kind: str, value, present) -> None:
    """Refuse a phase/rule the history lacks, naming those it has, so that a typo is not an
    empty stepper (with or without ipywidgets)."""
    if value is not None and value not in present:
        raise ValueError(
            f"no rewrite of {kind} {value!r} in this history; "
            f"its {kind}s: {', '.join(map(str, present))}"
        )


def stepper(function, phase: str | None = None, rule: str | None = None):
    """The stepper for ``function``, or a one-line explanation when it has no history; without
    ipywidgets, the static stepper (the steps embedded, switched in the page). ``phase`` and
    ``rule`` keep only those rewrites, from the start."""
    history = history_of(function)
    if history is None:
        text = "this function has no rewrite history (f.rewrites): nothing to step through"
        return Html(message_html(text), text)
    _check_filter("phase", phase, _unique(s.phase for s in history))
    _check_filter("rule", rule, _unique(s.rule for s in history))
    if importlib.util.find_spec("ipywidgets") is None:
        text = f"{len(history)} rewrites (install ipywidgets for the live stepper)"
        return Html(static_stepper_html(function, phase=phase, rule=rule), text)
    return RewriteStepper(function, phase=phase, rule=rule)
