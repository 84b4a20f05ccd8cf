"""The rewrite stepper's frames, and a stepper that needs no kernel and no network.

A frame is what the stepper shows at one position: position 0 is the graph as written, and
position k the graph right after the k-th rewrite (of those kept by a filter), with what that
rewrite removed, added or rewired, its rule, phase and time. After the function's own
rewrites come those inside each loop's step (a scan's inner graph, rewritten when its
backend compiles it), each frame saying which loop it is in and showing that inner graph.
The ipywidgets stepper (symnb.magics.stepper_widget) draws frames on demand;
:func:`static_stepper_html` embeds every frame in one HTML fragment switched by a few lines of
self-contained JavaScript (inline handlers, no global names, nothing fetched), so a page
exported by nbconvert steps through the optimisation offline.
"""

from __future__ import annotations

from collections import Counter
from html import escape

from symnb.viz.diff import diff_graphs, diff_picture
from symnb.viz.graphs import MAX_BOXES, picture
from symnb.viz.theme import STYLE
from symnb.viz.view import loop_output_labels

#: at most this many rewrites are embedded in a static stepper (each is one SVG)
MAX_STATIC_STEPS = 60
#: a static stepper stops embedding frames once their HTML adds up to about this many bytes
#: (it is saved in the notebook: a 100-layer MLP's frames are ~125 KB each) ...
MAX_STATIC_BYTES = 1_500_000
#: ... or once its drawings stood for about this many graph nodes: the time to make a frame
#: (replaying the history, the diff, the layout) grows with the nodes it draws
MAX_STATIC_NODES = 12_000


def loop_histories(function) -> list:
    """``(label, history)`` of each scan's inner graph as its backend rewrote it (every
    backend rewrites each loop's step on its own, with the function's ``optimize=``), a scan
    inside a scan after the one holding it."""
    return [(label, history) for label, _, history in _loops(function)]


def _loops(function) -> list:
    """``(label, scan node, history)`` of each loop's step (as :func:`loop_histories`)."""
    found: list = []
    _bodies_of(function.linker, "", found)
    return found


def _bodies_of(linker, prefix: str, found: list) -> None:
    for k, (node, body) in enumerate(linker.bodies):
        label = f"{prefix}scan {k} ({node.op})"
        if body.rewrites is not None:
            found.append((label, node, body.rewrites))
        _bodies_of(body, f"{label} › ", found)


def stepper_steps(function) -> list | None:
    """What the stepper walks: ``function.rewrites``, then the rewrites inside each loop's
    step (:func:`loop_histories`); None when the function has no rewrite history."""
    history = function.rewrites
    if history is None:
        return None
    steps = list(history)
    for _, inner in loop_histories(function):
        steps += list(inner)
    return steps


def start_frame(function, history: list, shown: int, max_boxes: int = MAX_BOXES):
    """(info HTML, picture) of position 0: the graph as written."""
    before = function.graph_before
    pic = picture(before, "as written", max_boxes, function=function)
    if not history:
        return "<b class='rule'>(no rewrites)</b> no rewrite fired for this function", pic
    info = (
        f"<b class='rule'>as written</b> · {shown} of {len(history)} rewrites "
        "match the filters; step through them with Next ›"
    )
    return info, pic


def step_frame(function, history: list, index: int, position: int, shown: int, max_boxes):
    """(info HTML, picture) of the graph right after rewrite ``history[index]``, shown at
    ``position`` of ``shown``."""
    step = history[index]
    inside, loop = _inside(function, step)
    # the graph of its history (the function's, or a loop step's) before and after the step:
    # two replays of one history, which the diff compares node by node as it recorded them
    before = step.history.replay(step.index)
    after = step.graph_after()
    where = f"inside <b>{escape(inside)}</b> › " if inside else ""
    info = (
        f"step {position}/{shown} · {where}rule <b class='rule'>{escape(step.rule)}</b> · "
        f"phase <i>{escape(step.phase)}</i> · {step.seconds * 1e3:.3f} ms · "
        f"{escape(diff_graphs(before, after).summary())}"
    )
    if loop is None:
        pic = diff_picture(before, after, f"after {step.rule}", max_boxes, function=function)
    else:  # the loop's step: its outputs are the step's, named as the loop's drawing names them
        labels = loop_output_labels(loop.op.loop)
        pic = diff_picture(before, after, f"after {step.rule}", max_boxes, labels=labels)
    return info, pic


_MOVE = (
    "var s=this.closest('.symnb-stepper'),f=s.querySelectorAll('.symnb-frame'),"
    "n=f.length-1,k=Math.max(0,Math.min(n,{target}));s.dataset.step=k;"
    "s.querySelector('.symnb-slider').value=k;"
    "s.querySelector('.symnb-position').textContent=k+' / '+n;"
    "f.forEach(function(e,i){{e.hidden=i!==k}});"
)
_CSS = """<style>
.symnb-stepper .symnb-controls{display:flex;gap:8px;align-items:center;margin:4px 0}
.symnb-stepper button{padding:2px 10px}
</style>"""


def _inside(function, step) -> tuple[str, object]:
    """The label and the scan node of the loop whose step ``step`` rewrote, or ("", None)
    for the function's graph."""
    for label, node, inner in _loops(function):
        if step.history is inner:
            return label, node
    return "", None


def static_stepper_html(
    function,
    max_boxes: int = MAX_BOXES,
    max_steps=MAX_STATIC_STEPS,
    *,
    max_bytes: int = MAX_STATIC_BYTES,
    max_nodes: int = MAX_STATIC_NODES,
    phase: str | None = None,
    rule: str | None = None,
):
    """The frames of ``function.rewrites`` (then the loops' inner rewrites) in one fragment,
    with Prev/Next and a slider: those of ``phase`` and ``rule`` when given, at most
    ``max_steps``, and no more once the frames' HTML reaches about ``max_bytes`` or their
    drawings about ``max_nodes`` graph nodes (the first step is always embedded). When steps
    are left out, a note says how many and how to see them."""
    history = stepper_steps(function) or []
    chosen = [i for i, s in enumerate(history) if _keeps(s, phase, rule)]
    # the first frame says how many rewrites match the filters; how many of them are
    # embedded is the heading's and the left-out note's to say
    frames = [_frame_html(0, *start_frame(function, history, len(chosen), max_boxes))]
    size, drawn = len(frames[0][0]), frames[0][1]
    for position, index in enumerate(chosen[:max_steps], 1):
        # the next frame is taken to cost what the last one did
        last_size, last_drawn = len(frames[-1][0]), frames[-1][1]
        if position > 1 and (size + last_size > max_bytes or drawn + last_drawn > max_nodes):
            break
        info, pic = step_frame(function, history, index, position, _SHOWN, max_boxes)
        frames.append(_frame_html(position, info, pic))
        size, drawn = size + len(frames[-1][0]), drawn + frames[-1][1]
    kept = len(frames) - 1
    body = "".join(html for html, _ in frames).replace(_SHOWN, str(kept))
    what = _filtered(phase, rule)
    head = note = ""
    if kept < len(chosen):
        head = f" (the first {kept} of {len(chosen)} rewrites{what})"
        if kept == max_steps:
            why = f"at most {max_steps} steps are embedded"
        elif drawn + frames[-1][1] > max_nodes:
            why = f"their drawings stand for {drawn:,} graph nodes, as many as draw quickly"
        else:
            why = f"they take {size / 1e6:.1f} MB, as much as a saved notebook should hold"
        note = _left_out_note(history, chosen, kept, why, what)
    return (
        f'{STYLE}{_CSS}<div class="symnb-card symnb-stepper" data-step="0">'
        f"<h4>rewrite stepper: {escape(function.name or 'function')}{escape(head)}</h4>"
        f"{note}{_controls(kept)}{body}</div>"
    )


#: stands for the number of steps embedded, known once the budget has cut them
_SHOWN = "\x00shown\x00"


def _keeps(step, phase, rule) -> bool:
    return phase in (None, "all", step.phase) and rule in (None, "all", step.rule)


def _filtered(phase, rule) -> str:
    parts = [f"{k} {v}" for k, v in (("phase", phase), ("rule", rule)) if v not in (None, "all")]
    return f" of {' and '.join(parts)}" if parts else ""


def _frame_html(position: int, info: str, pic) -> tuple[str, int]:
    """The frame's HTML, and how many graph nodes its drawing stands for (its cost)."""
    hidden = "" if position == 0 else " hidden"
    html = (
        f'<div class="symnb-frame" data-step="{position}"{hidden}>'
        f'<div class="symnb-info">{info}</div>{pic.html()}</div>'
    )
    return html, sum(box.count for box in pic.view.nodes.values())


def _left_out_note(history, chosen, kept: int, why: str, what: str) -> str:
    """What a static stepper left out, why, and how to see it."""
    phases = ", ".join(
        f"{name} ({n})" for name, n in Counter(history[i].phase for i in chosen).items()
    )
    text = (
        f"Embedded here: steps 1 to {kept} of the {len(chosen)} rewrites{what} ({why}); "
        f"the other {len(chosen) - kept} are left out. To see them, step through the live "
        "stepper in a kernel, sn.magics.stepper(f), which draws each step when asked, or "
        "embed fewer steps with a filter: sn.magics.stepper(f, phase=..., rule=...) "
        f"(phases here: {phases})."
    )
    return f'<div class="symnb-note symnb-left-out">{escape(text)}</div>'


def _controls(last: int) -> str:
    prev = _MOVE.format(target="+s.dataset.step-1")
    step = _MOVE.format(target="+s.dataset.step+1")
    slide = _MOVE.format(target="+this.value")
    return (
        f'<div class="symnb-controls"><button type="button" class="symnb-prev" '
        f'onclick="{prev}">‹ Prev</button><input type="range" class="symnb-slider" min="0" '
        f'max="{last}" value="0" oninput="{slide}"><button type="button" class="symnb-next" '
        f'onclick="{step}">Next ›</button><span class="symnb-position">0 / {last}</span></div>'
    )
