"""Where each slot of a device plan lives, and the ``Transfer`` steps between host and device.

A kernel reads and writes the device; a NumPy fallback (``Library``) reads and writes the
host; a view lives where its source does (the size of an axis on the host), but the windows of
a convolution are made on the device (their kernels read them there, and the input is kh*kw
times smaller than its windows copied out). Before each step
whose operand is on the other side, one ``Transfer`` copies it, once: later steps reading the
same value there reuse the copy. Inputs and constants start on the host, shared values on the
device (a transfer of a value already there passes it through), so inputs cross once per call
and weights stay on the device between calls.
"""

from __future__ import annotations

import dataclasses

from symnb.backends.plan import Gemm, Launch, Library, Plan, Transfer, View, step_outputs

HOST, DEVICE = "host", "device"


def with_transfers(plan: Plan, n_inputs: int) -> Plan:
    """``plan`` with a Transfer before each step that needs an operand from the other side."""
    where = {slot: HOST for slot in range(plan.nslots)}
    where.update({slot: DEVICE for slot in range(n_inputs, plan.nargs)})
    moved: dict[tuple[int, str], int] = {}
    steps: list = []
    nslots = plan.nslots
    for step in plan.steps:
        side = needs(step)
        if side is None:  # a view: where its source is
            out_side = HOST if step.how == "size" else where[step.src]
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
            step, out_side = remapped(step, remap), side
        steps.append(step)
        for slot in step_outputs(step):
            where[slot] = out_side
    return Plan(plan.inputs, plan.nargs, nslots, plan.constants, tuple(steps), plan.outputs)


def needs(step) -> str | None:
    """The side a step runs on: None for a view (either)."""
    if isinstance(step, Launch):
        return DEVICE
    if isinstance(step, View):
        return DEVICE if step.how == "windows" else None
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
    fields = {k: remap.get(getattr(step, k), getattr(step, k)) for k in ("z", "alpha", "x", "y",
              "beta") if getattr(step, k) is not None}  # fmt: skip
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


def placement(plan: Plan, n_inputs: int, variables: dict, device: str,
              n_results: int) -> Placement:  # fmt: skip
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
        side = needs(step) or (HOST if step.how == "size" else where[step.src])
        for slot in step_outputs(step):
            where[slot] = side
        sides.setdefault(id(step.node), set()).add(side)
    crossings += [(variables[s], HOST, None) for s in plan.outputs[:n_results]
                  if where[s] == DEVICE and s in variables]  # fmt: skip
    joined = {k: "+".join(sorted(v, reverse=True)) for k, v in sides.items()}
    return Placement(device, joined, tuple(crossings), frozenset(inner))
