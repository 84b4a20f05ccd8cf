"""Where each slot of a device plan lives, and the ``Transfer`` steps between host and device.

A kernel reads and writes the device, and so does a scan's loop (``Repeat``: its sequences,
states and non-sequences go up, its outputs stay there); a NumPy fallback (``Library``) reads
and writes the host; a view lives where its source does (the size of an axis on the host),
but the windows of a convolution are made on the device (their kernels read them there, and
the input is kh*kw times smaller than its windows copied out). Before each step
whose operand is on the other side, one ``Transfer`` copies it, once: later steps reading the
same value there reuse the copy. Inputs and constants start on the host, shared values on the
device (a transfer of a value already there passes it through), so inputs cross once per call
and weights stay on the device between calls.
"""

from __future__ import annotations

import collections
import dataclasses

from symnb.backends.plan import (
    Gemm,
    Launch,
    Layout,
    Library,
    Plan,
    Repeat,
    Transfer,
    View,
    step_outputs,
)

HOST, DEVICE = "host", "device"


def with_transfers(plan: Plan, n_inputs: int) -> Plan:
    """``plan`` with a Transfer before each step that needs an operand from the other side.
    A view of a host value (an input's transpose) that only device steps read is made on the
    device, of the value's device copy, rather than uploaded as a second copy of it."""
    follow: set[int] = set()
    while True:
        steps, moved_up, nslots = _placed(plan, n_inputs, follow)
        more = _views_to_follow(plan, steps, moved_up) - follow
        if not more:
            return Plan(plan.inputs, plan.nargs, nslots, plan.constants, tuple(steps), plan.outputs)
        follow |= more


def _placed(plan: Plan, n_inputs: int, follow: set) -> tuple[list, set, int]:
    """The steps with transfers, views in ``follow`` (by position) made on the device; the
    slots uploaded; the slot count."""
    where = {slot: HOST for slot in range(plan.nslots)}
    where.update({slot: DEVICE for slot in range(n_inputs, plan.nargs)})
    moved: dict[tuple[int, str], int] = {}
    steps: list = []
    nslots = plan.nslots
    for index, step in enumerate(plan.steps):
        side = side_of(step, where)
        if side is None and index in follow and all(where[s] == HOST for s in sources(step)):
            side = DEVICE
        if side is None:  # a view: where its source is (a shape or size: on the host)
            out_side = view_side(step, where)
        else:
            remap = {}
            for slot in operands(step):
                if where[slot] == side:
                    continue
                if (slot, side) not in moved:
                    moved[slot, side] = nslots
                    where[nslots] = side
                    steps.append(Transfer(side, slot, nslots, step.node))
                    nslots += 1
                remap[slot] = moved[slot, side]
            step, out_side = remapped(step, remap), view_side(step, where, side)
        steps.append(step)
        for slot in step_outputs(step):
            where[slot] = out_side
    return steps, {slot for slot, side in moved if side == DEVICE}, nslots


def _views_to_follow(plan: Plan, steps: list, moved_up: set) -> set[int]:
    """Positions of views (and layouts) computed on the host whose result was uploaded and is
    read by no host step: made on the device instead (their sources go up, or already went)."""
    where = collections.defaultdict(lambda: HOST)
    where.update({slot: DEVICE for slot in range(len(plan.inputs), plan.nargs)})
    host_reads = set(plan.outputs)  # a result that stays on the host stays where it was
    for step in steps:
        if isinstance(step, Transfer):
            where[step.out] = step.to
            continue
        side = side_of(step, where)
        if side == HOST or (side is None and isinstance(step, Layout)):
            host_reads.update(operands(step))
        out_side = view_side(step, where, side)
        for slot in step_outputs(step):
            where[slot] = out_side
    return {
        index
        for index, step in enumerate(plan.steps)
        if isinstance(step, (View, Layout))
        and getattr(step, "how", None) not in HOST_VIEWS
        and step.out in moved_up
        and step.out not in host_reads
    }


#: views whose result is on the host whatever their source: lengths read from the shape
HOST_VIEWS = ("size", "shape")
#: views made on the device (their source goes up): windows read by kernels, fills
DEVICE_VIEWS = ("windows", "alloc")
#: layouts that are kernels (``device/windows.py``): on the device, their arrays going up
KERNEL_LAYOUTS = ("pad", "max_pool_grad")


def view_side(step, where: dict, side: str | None = None) -> str:
    """Where a step's result lives: ``side`` for a step that runs there; for a view, the
    host for lengths, else where its source is (a layout's: the host when ``side`` is None,
    its arrays all being there)."""
    if isinstance(step, Layout):
        return side or HOST
    if not isinstance(step, View):
        return side
    if step.how in HOST_VIEWS:
        return HOST
    return side or where[step.src]


def side_of(step, where: dict) -> str | None:
    """The side a step runs on, ``where`` the slots' sides so far: ``needs``; a layout on
    the device when one of its arrays is there, else None (with its arrays, on the host),
    a kernel's (``KERNEL_LAYOUTS``) on the device."""
    if isinstance(step, Layout) and step.how not in KERNEL_LAYOUTS:
        return DEVICE if any(where[slot] == DEVICE for slot in step.arrays) else None
    return needs(step)


def sources(step) -> tuple[int, ...]:
    """The slots a view (or layout) made on the device reads there."""
    return step.arrays if isinstance(step, Layout) else (step.src,)


def needs(step) -> str | None:
    """The side a step runs on: None for a view (either). A loop runs on the device (its
    body's own plan has its own transfers), its outputs stay there."""
    if isinstance(step, (Launch, Repeat)) or getattr(step, "how", None) in KERNEL_LAYOUTS:
        return DEVICE
    if isinstance(step, View):
        return DEVICE if step.how in DEVICE_VIEWS else None
    return HOST


def operands(step) -> tuple[int, ...]:
    if isinstance(step, Launch):
        return tuple(slot for slot, _ in step.ins)
    if isinstance(step, Library):
        return step.ins
    if isinstance(step, Gemm):
        return tuple(s for s in (step.z, step.alpha, step.x, step.y, step.beta) if s is not None)
    if isinstance(step, View):
        return (step.src,)
    if isinstance(step, Layout):  # (its ints are read on the host, wherever they are)
        return step.arrays
    if isinstance(step, Repeat):  # its step count is read where it is (one scalar)
        return step.ins[1:]
    return ()


def remapped(step, remap: dict):
    """The step reading ``remap[slot]`` instead of ``slot`` (its fallback keeps the originals:
    it runs on the host, reading whatever the original slots hold)."""
    if not remap:
        return step
    if isinstance(step, Launch):
        ins = tuple((remap.get(slot, slot), absent) for slot, absent in step.ins)
        return dataclasses.replace(step, ins=ins)
    if isinstance(step, Library):
        return dataclasses.replace(step, ins=tuple(remap.get(s, s) for s in step.ins))
    if isinstance(step, View):
        return dataclasses.replace(step, src=remap.get(step.src, step.src))
    if isinstance(step, Layout):
        return dataclasses.replace(step, arrays=tuple(remap.get(s, s) for s in step.arrays))
    if isinstance(step, Repeat):
        return dataclasses.replace(step, ins=tuple(remap.get(s, s) for s in step.ins))
    fields = {
        k: remap.get(getattr(step, k), getattr(step, k))
        for k in ("z", "alpha", "x", "y", "beta")
        if getattr(step, k) is not None
    }
    return dataclasses.replace(step, **fields)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a device plan runs each node and where values cross the bus, for the graph
    display: ``sides`` maps id(node) to "device", "host" or "device+host" (a node planned as
    several steps, such as a padded convolution); ``crossings`` lists (variable, "device" or
    "host", node) for each Transfer of a graph value into a node's step, with ``node`` None
    for a result copied back to the host at the end of the call; ``inner``: the ids of nodes
    whose own steps move a value of theirs across. ``device``: the device's label."""

    device: str
    sides: dict
    crossings: tuple
    inner: frozenset


def placement(plan: Plan, n_inputs: int, variables: dict, device: str, n_results: int) -> Placement:
    """The Placement of a plan with transfers; ``variables`` maps slots to graph variables;
    the first ``n_results`` outputs come back to the host (updates stay where they are)."""
    where = {slot: HOST for slot in range(plan.nslots)}
    where.update({slot: DEVICE for slot in range(n_inputs, plan.nargs)})
    sides: dict[int, set] = {}
    crossings, inner = [], set()
    for step in plan.steps:
        if isinstance(step, Transfer):
            if step.src in variables:
                crossings.append((variables[step.src], step.to, step.node))
            else:
                inner.add(id(step.node))
            where[step.out] = step.to
            continue
        side = view_side(step, where, side_of(step, where))
        for slot in step_outputs(step):
            where[slot] = side
        sides.setdefault(id(step.node), set()).add(side)
    crossings += [
        (variables[s], HOST, None)
        for s in plan.outputs[:n_results]
        if where[s] == DEVICE and s in variables
    ]
    joined = {k: "+".join(sorted(v, reverse=True)) for k, v in sides.items()}
    return Placement(device, joined, tuple(crossings), frozenset(inner))
