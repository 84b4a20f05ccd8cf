"""Where each node of a graph runs, given its ``ifelse`` nodes: at top level or in a branch.

A node runs inside the then-branch of an ifelse when everything that reads it (following
its users down to the graph's outputs) reads it only through that branch; likewise for the
else-branch and for branches nested in branches (symnb/core/lazy.py finds these regions).
Those nodes become the sub-steps of the ifelse's ``Branch`` step (symnb/backends/plan.py), so
the branch not taken costs nothing. A node that anything else also reads runs where both can
see it (the innermost region that contains every use). Every linker ("py", "c", the device
backends) plans its steps through :func:`plan_steps`.
"""

from __future__ import annotations

from symnb.backends.plan import Branch
from symnb.control.ifelse import IfElse
from symnb.core.lazy import TOP
from symnb.core.lazy import regions as lazy_regions


def regions(graph, order):
    """Each node's region: TOP, or ``(id(ifelse node), "then" | "else")`` (``Regions``)."""
    return lazy_regions(order, lambda var: graph.clients.get(var, []))


def plan_steps(builder, order, make_step) -> list:
    """The steps of the top region, in ``order``: ``make_step(node)`` for each node (None to
    leave it out: a node fused into another's kernel), a ``Branch`` for each ifelse holding
    the steps of its branches."""
    found = regions(builder.graph, order)
    members: dict = {}
    for node in order:
        for region in found.placed(node):  # (a node copied into sides: in each)
            members.setdefault(region, []).append(node)
    make_step = _once(make_step)

    # The regions nest as deep as the ifelses do (an if/elif ladder of thousands): an explicit
    # stack, not a recursion, walks them, calling ``make_step`` in the same order a recursive
    # walk would (a region's nodes in order, an ifelse's then-region, then its else-region).
    top: list = []
    # each frame: (the region's nodes still to place, its steps, the ifelse it is a side of,
    # the steps of the region holding that ifelse, the then-side's steps once the else-side runs)
    stack = [(iter(members.get(TOP, [])), top, None, None, None)]
    while stack:
        nodes, steps, node, outer, then_steps = stack[-1]
        for member in nodes:
            if isinstance(member.op, IfElse):
                stack.append((iter(members.get((id(member), "then"), [])), [], member, steps, None))
                break
            _add(steps, make_step(member))
        else:
            stack.pop()
            if node is None:
                continue
            if then_steps is None:  # the then-side done: the else-side next
                else_nodes = iter(members.get((id(node), "else"), []))
                stack.append((else_nodes, [], node, outer, steps))
            else:
                outer.append(_branch(builder, node, then_steps, steps))
    return top


def _once(make_step):
    """``make_step`` asked once per node: a node computed in several sides is the same step
    in each (its slots, its kernel)."""
    made: dict = {}

    def step(node):
        if id(node) not in made:
            made[id(node)] = make_step(node)
        return made[id(node)]

    return step


def plan_flat(builder, order, make_step) -> list:
    """The steps of every node in ``order``, with no ``Branch``: for a target whose executor
    cannot run one (no ``"branches"`` capability), where an ifelse runs as its reference and
    both branches are computed."""
    steps: list = []
    for node in order:
        _add(steps, make_step(node))
    return steps


def _add(steps: list, step) -> None:
    """``make_step``'s answer appended: None (a node fused into another), one step, or a
    tuple of steps."""
    if step is not None:
        steps.extend(step if isinstance(step, tuple) else (step,))


def _branch(builder, node, then_steps: list, else_steps: list) -> Branch:
    n = node.op.n
    cond, *values = builder.slots_of(node.inputs)
    return Branch(
        cond,
        tuple(then_steps),
        tuple(values[:n]),
        tuple(else_steps),
        tuple(values[n:]),
        builder.out_slots(node),
        builder.n_leaves,
        node,
    )
