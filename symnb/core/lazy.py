"""Lazy ops and the regions they make: which nodes run only when a branch is taken.

An op that reads some of its inputs only under a condition (``sn.ifelse``, in
symnb/control/ifelse.py) says so through :class:`LazyChoice`. A node runs inside a side of such
an op when everything that reads it, followed down to the outputs, reads it only through that
side (:func:`regions`). Two layers ask: the planners run those nodes inside the side's
``Branch`` step (symnb/backends/branches.py), and the gradient walk keeps their backward pass
under the same condition (symnb/grad/reverse.py), so that a branch not taken is never
differentiated either: its backward would read values the forward pass never computed (an
index out of range) or multiply a zero gradient by an infinite derivative (NaN).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from symnb.core.graph import OUTPUT
from symnb.core.op import Apply
from symnb.core.variable import Variable

TOP = None  # the region of nodes every call runs


class LazyChoice:
    """Mixed into an op that reads some inputs only on one side of a condition."""

    def side_of(self, i: int) -> str | None:
        """The side (``"then"`` or ``"else"``) under which input ``i`` is read, or None for
        an input read whatever the condition (the condition itself)."""
        raise NotImplementedError

    def condition(self, node: Apply) -> Variable:
        """The condition ``node`` reads to pick its side."""
        raise NotImplementedError

    def output_of(self, i: int) -> int:
        """The output that side input ``i`` becomes when its side is taken."""
        raise NotImplementedError

    def kept_to_side(self, node: Apply, side: str, value: Variable, other: Variable) -> Variable:
        """A variable that is ``value`` when ``node`` takes ``side`` and ``other`` when it
        does not, computing ``value`` only in the first case."""
        raise NotImplementedError


class Regions:
    """Each node's region in one graph: TOP, or ``(id(lazy node), side)``, nested as the lazy
    nodes are."""

    def __init__(self, where: dict, parent: dict, lazy: dict):
        self.where = where  # id(node) -> its region
        self.parent = parent  # region -> the region around it
        self.lazy = lazy  # id(lazy node) -> the node
        #: id(node) -> the sides it runs in, for a pure node read only inside sides with
        #: different guards (``_sides_to_run_in``): its region (``of``) is theirs in common
        self.copies: dict = {}

    def of(self, node: Apply):
        return self.where[id(node)]

    def placed(self, node: Apply) -> tuple:
        """The regions whose steps compute ``node``: its region, or each side it is copied
        into."""
        return self.copies.get(id(node)) or (self.where[id(node)],)

    def chain(self, region) -> list:
        """The region and those around it, innermost first, ending with TOP."""
        chain = [region]
        while region is not TOP:
            region = self.parent[region]
            chain.append(region)
        return chain

    def guard(self, region) -> tuple[int, str]:
        """``(id(condition), side)`` of a region below TOP: the same for the same side of two
        lazy nodes on one condition."""
        node = self.lazy[region[0]]
        return id(node.op.condition(node)), region[1]

    def under(self, region, guard) -> bool:
        """Whether ``region`` is within a side with ``guard`` (``Regions.guard``)."""
        return any(self.guard(r) == guard for r in self.chain(region)[:-1])

    def guards(self, region) -> list[tuple[Apply, str]]:
        """(lazy node, side) for each side around ``region``, innermost first."""
        return [(self.lazy[key[0]], key[1]) for key in self.chain(region)[:-1]]


def regions(order: list[Apply], clients: Callable[[Variable], Iterable]) -> Regions:
    """The region of each node of ``order`` (inputs before users), where ``clients(var)``
    gives the ``(node, input index)`` pairs that read ``var`` (``(OUTPUT, i)`` for an output).
    A node is placed in the innermost region containing every use; one read by nothing is
    at TOP."""
    where: dict = {}
    parent: dict = {TOP: TOP}
    lazy: dict = {}
    found = Regions(where, parent, lazy)
    if not has_lazy(order):  # (most graphs: every node at TOP, nothing to walk)
        where.update(dict.fromkeys(map(id, order), TOP))
        return found
    position = {id(node): k for k, node in enumerate(order)}
    for node in reversed(order):
        uses = [use for out in node.outputs for c in clients(out) for use in _uses(c, found)]
        common = _innermost_common(uses, found) if uses else TOP
        paths = _paths_below(uses, common, found)
        where[id(node)] = _same_condition_side(paths, common, found, position)
        if where[id(node)] == common and _may_copy(node):
            sides = _sides_to_run_in(paths)
            if sides:
                found.copies[id(node)] = sides
        if isinstance(node.op, LazyChoice):
            lazy[id(node)] = node
            for side in ("then", "else"):
                parent[(id(node), side)] = where[id(node)]
    return found


def _paths_below(uses: list, common, found: Regions) -> list:
    """Per use, the regions between ``common`` and it, outermost first; none where a use is
    in ``common`` itself (most nodes) or there is one use: nothing to place further in."""
    if len(uses) < 2 or common in uses:
        return []
    paths = []
    for use in uses:
        chain = found.chain(use)
        paths.append(chain[: chain.index(common)][::-1])
    return paths


def _same_condition_side(paths: list, common, found: Regions, position: dict):
    """``common``, or a side of the earliest of several lazy nodes on one condition when
    every use is under that side of one of them (the value and its gradient, each in its own
    ifelse on the branch's condition): the condition takes the same side in all of them, so
    computing the node in the first to run computes it exactly when one of them needs it, and
    its value stays in its slot for the later ones. Where every use is also under a
    same-condition side further in (nested ifelses and their gradient's), the node goes there,
    within the side chosen a level up, as deep as the uses' guards agree (sides a side around
    them already implies do not count: the forward ifelse inside its gradient's wrapper)."""
    if not paths:
        return common
    implied = {found.guard(region) for region in found.chain(common)[:-1]}
    paths = [(raw, _levels(raw, found, implied)) for raw in paths]  # (with their kept levels)
    chosen = common
    for depth in range(min(len(levels) for _, levels in paths)):
        level = [raw[levels[depth]] for raw, levels in paths]
        if len({found.guard(region) for region in level}) != 1:
            break
        inside = [  # (within the side chosen a level up)
            (raw, levels[depth])
            for raw, levels in paths
            if depth == 0 or raw[levels[depth - 1]] == chosen
        ]
        raw, k = min(inside, key=lambda p: _run_order(p[0][: p[1] + 1], position))
        chosen = raw[k]
    return chosen


def _run_order(path: list, position: dict) -> list:
    """A key putting paths of sides in the order the planners walk them
    (symnb/backends/branches.py): steps in order within a region, a side within its ifelse's
    step, an ifelse's then-side before its else-side. Two paths part at the two sides of one
    ifelse where the guard of one side is already implied around them (an ifelse on ``c``
    nested in another's side on ``c``, with both of its sides): by position alone the shorter
    would come first, and a value placed in the else-side would have no slot yet when an
    ifelse in the then-side, planned first, reads it."""
    return [(position[lazy], side == "else") for lazy, side in path]


def _levels(path: list, found: Regions, implied: set) -> list[int]:
    """The indices of ``path``'s sides whose guard no side around them already has (an
    ifelse on the same condition and side nested in another adds nothing: it runs whenever
    the one around it runs), so paths of different depths compare level by level."""
    seen = set(implied)
    kept = []
    for k, region in enumerate(path):
        guard = found.guard(region)
        if guard not in seen:
            seen.add(guard)
            kept.append(k)
    return kept


def has_lazy(order: list[Apply]) -> bool:
    return any(isinstance(node.op, LazyChoice) for node in order)


def _uses(client_and_input, found: Regions) -> list:
    """The regions in which ``client`` reads its input: one, or each side a copied client
    runs in."""
    client, i = client_and_input
    if client != OUTPUT and id(client) in found.copies:
        return list(found.copies[id(client)])
    return [_use(client, i, found.where)]


def _sides_to_run_in(paths: list) -> tuple:
    """For a node every use reads inside a side below the common region (``paths``), with
    sides of different guards (two ifelses on different conditions each computing the same
    value: the merge rewrite makes one node of equal ones): those sides, each computing it
    in its own steps, so that it runs only where a side taken needs it (read by the common
    region's steps it would run whatever the conditions, and a guarded ``x[i]`` would fail).
    Its slot is written by whichever runs; where two run, it is computed twice (so never for
    an impure node: ``_may_copy``). Empty where there are no such paths or one side."""
    sides = tuple(dict.fromkeys(path[0] for path in paths))
    return sides if len(sides) > 1 else ()


def _may_copy(node: Apply) -> bool:
    """Whether ``node`` may run in each of several sides (``_sides_to_run_in``): not a lazy
    node, nor an impure one (``pure = False``: ``print_value``, a random draw), which runs
    once per call, so in the region around those sides: two sides taken would print twice."""
    return node.op.pure and not isinstance(node.op, LazyChoice)


def _use(client, i: int, where: dict):
    """The region in which input ``i`` of ``client`` is read."""
    if client == OUTPUT:
        return TOP
    if isinstance(client.op, LazyChoice):
        side = client.op.side_of(i)
        if side is not None:
            return (id(client), side)
    return where[id(client)]


def _innermost_common(uses: list, found: Regions):
    """The innermost region containing every use."""
    common = found.chain(uses[0])
    for use in uses[1:]:
        around = set(found.chain(use))
        common = [r for r in common if r in around]
    return common[0]
