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

A lazy ``ifelse`` (``Branch``) reads its condition on the host (one scalar comes down), and
each of its sides is placed on its own: a copy made inside a side is that side's (the other
side, and the steps after the branch, never see it), and a result of the branch lives on one
side whichever side ran: on the device when either side leaves it there, the other side
copying its value up as its last step.
"""

from __future__ import annotations

import collections
import dataclasses

from symnb.backends.plan import (
    Branch,
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


def _start(plan: Plan, n_inputs: int) -> dict:
    """Where each slot is before the first step: shared values on the device, the rest on
    the host."""
    where = {slot: HOST for slot in range(plan.nslots)}
    where.update({slot: DEVICE for slot in range(n_inputs, plan.nargs)})
    return where


class _Placing:
    """One placement of a plan's steps: the next free slot, the slots uploaded, and which
    views (``follow``: ids of the plan's steps) are made on the device."""

    def __init__(self, nslots: int, follow: set):
        self.nslots, self.follow, self.moved_up = nslots, follow, set()

    def steps(self, steps, where: dict, moved: dict) -> list:
        """``steps`` with their transfers, ``where`` and ``moved`` (``(slot, side)`` -> its
        copy there) updated as they run. A branch's condition is read on the host, and each
        of its sides is placed from copies of both (a copy made in one side is that side's);
        branches nest as deep as the user's ifelses (an if/elif ladder of thousands), so an
        explicit stack of the sides entered walks them, not a recursion."""
        top: list = []
        stack = [_Side(iter(steps), top, where, moved)]
        while stack:
            side = stack[-1]
            for step in side.todo:
                if isinstance(step, Branch):
                    cond = step.cond
                    if side.where[cond] != HOST:
                        cond = self.copy(cond, HOST, side, step.node)
                    todo = iter(step.then_steps)
                    stack.append(
                        _Side(todo, [], dict(side.where), dict(side.moved), step, cond, side)
                    )
                    break
                self.step(step, side)
            else:
                stack.pop()
                if side.branch is None:
                    continue
                outer = side.outer
                if side.then is None:  # the then-side placed: the else-side next
                    todo = iter(side.branch.else_steps)
                    stack.append(
                        _Side(
                            todo,
                            [],
                            dict(outer.where),
                            dict(outer.moved),
                            side.branch,
                            side.cond,
                            outer,
                            then=side,
                        )
                    )
                else:
                    outer.placed.append(self.joined(side.then, side))
        return top

    def step(self, step, side: _Side) -> None:
        """One step (not a branch) placed at the end of ``side``, after its transfers."""
        where = side.where
        runs_on = side_of(step, where)
        if (
            runs_on is None
            and id(step) in self.follow
            and all(where[s] == HOST for s in sources(step))
        ):
            runs_on = DEVICE
        if runs_on is None:  # a view: where its source is (a shape or size: on the host)
            out_side = view_side(step, where)
        else:
            remap = {
                slot: self.copy(slot, runs_on, side, step.node)
                for slot in operands(step)
                if where[slot] != runs_on
            }
            step, out_side = remapped(step, remap), view_side(step, where, runs_on)
        side.placed.append(step)
        for slot in step_outputs(step):
            where[slot] = out_side

    def copy(self, slot: int, to: str, side: _Side, node) -> int:
        """The slot holding ``slot``'s value on side ``to`` within ``side``: a Transfer
        appended to its steps the first time."""
        if (slot, to) not in side.moved:
            side.moved[slot, to] = self.nslots
            side.where[self.nslots] = to
            side.placed.append(Transfer(to, slot, self.nslots, node))
            self.nslots += 1
            if to == DEVICE:
                self.moved_up.add(slot)
        return side.moved[slot, to]

    def joined(self, then: _Side, other: _Side) -> Branch:
        """The branch of the two placed sides. A result is on the device where either side
        leaves it there (the other side copies its value up as its last step), else on the
        host; the steps after the branch see it there."""
        step = then.branch
        ends = [
            DEVICE if DEVICE in (then.where[t], other.where[e]) else HOST
            for t, e in zip(step.then_outs, step.else_outs)
        ]
        outs = []
        for side, results in ((then, step.then_outs), (other, step.else_outs)):
            outs.append(
                tuple(
                    slot if side.where[slot] == end else self.copy(slot, end, side, step.node)
                    for slot, end in zip(results, ends)
                )
            )
        for slot, end in zip(step.outs, ends):
            then.outer.where[slot] = end
        return dataclasses.replace(
            step,
            cond=then.cond,
            then_steps=tuple(then.placed),
            then_outs=outs[0],
            else_steps=tuple(other.placed),
            else_outs=outs[1],
        )


@dataclasses.dataclass
class _Side:
    """Steps being placed: the plan's, or one side of a branch (``branch``, its condition's
    slot on the host ``cond``, the side holding it ``outer``, and for the else-side the
    then-side placed, ``then``)."""

    todo: object
    placed: list
    where: dict
    moved: dict
    branch: Branch | None = None
    cond: int | None = None
    outer: _Side | None = None
    then: _Side | None = None


def _placed(plan: Plan, n_inputs: int, follow: set) -> tuple[list, set, int]:
    """The steps with transfers, views in ``follow`` (ids of the plan's steps) made on the
    device; the slots uploaded; the slot count."""
    placing = _Placing(plan.nslots, follow)
    steps = placing.steps(plan.steps, _start(plan, n_inputs), {})
    return steps, placing.moved_up, placing.nslots


def walk(steps):
    """Every step of ``steps`` in order, a branch's (after the branch) as well: each side's
    steps, then the branch. An explicit stack: branches nest as deep as the user's ifelses."""
    stack = [iter(steps)]
    while stack:
        for step in stack[-1]:
            if isinstance(step, Branch):
                stack.append(iter((*step.then_steps, *step.else_steps, _Chosen(step))))
                break
            yield step.branch if isinstance(step, _Chosen) else step
        else:
            stack.pop()


class _Chosen:
    """``walk``'s marker: the branch whose sides were just walked."""

    def __init__(self, branch: Branch):
        self.branch = branch


def _views_to_follow(plan: Plan, steps: list, moved_up: set) -> set[int]:
    """Ids of views (and layouts) computed on the host whose result was uploaded and is read
    by no host step: made on the device instead (their sources go up, or already went)."""
    where = collections.defaultdict(lambda: HOST)
    where.update({slot: DEVICE for slot in range(len(plan.inputs), plan.nargs)})
    host_reads = set(plan.outputs)  # a result that stays on the host stays where it was
    for step in walk(steps):
        if isinstance(step, Transfer):
            where[step.out] = step.to
            continue
        if isinstance(step, Branch):  # its condition is read on the host
            host_reads.add(step.cond)
            for out, result in zip(step.outs, step.then_outs):
                where[out] = where[result]
            continue
        side = side_of(step, where)
        if side == HOST or (side is None and isinstance(step, Layout)):
            host_reads.update(operands(step))
        out_side = view_side(step, where, side)
        for slot in step_outputs(step):
            where[slot] = out_side
    return {
        id(step)
        for step in walk(plan.steps)
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
    the first ``n_results`` outputs come back to the host (updates stay where they are). An
    ifelse runs where its results are (it passes on the value of the side taken)."""
    where = _start(plan, n_inputs)
    sides: dict[int, set] = {}
    crossings, inner = [], set()
    for step in walk(plan.steps):
        if isinstance(step, Transfer):
            if step.src in variables:
                crossings.append((variables[step.src], step.to, step.node))
            else:
                inner.add(id(step.node))
            where[step.out] = step.to
            continue
        if isinstance(step, Branch):
            outs = [where[result] for result in step.then_outs]
            for slot, side in zip(step.outs, outs):
                where[slot] = side
            sides.setdefault(id(step.node), set()).update(outs or [HOST])
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
