"""The order in which ``einsum`` contracts its operands, two at a time: a tree whose leaves
are the operands' positions and whose nodes are pairwise contractions (``((0, 1), 2)`` is
left to right). ``optimize`` picks how the tree is chosen, with ``np.einsum``'s values:
False (left to right), True (by cost), ``"greedy"``, ``"optimal"``, a ``(strategy, memory
limit)`` pair, or an explicit ``["einsum_path", (1, 2), (0, 1)]``.

The cost of a pairwise contraction is the number of multiply-adds it does: the product of
the sizes of every index either operand still has (an index neither the output nor another
operand names is summed out of its operand first, whatever the order). A size is the dim's
int when the graph is built; a dim not known then counts as :data:`GUESS`, a named dim as
its expression with :data:`GUESS` for each name (``"n"`` and ``"n"`` are the same size,
``2*n`` twice it)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from symnb.core.dims import evaluate, names_in
from symnb.core.variable import describe_value
from symnb.errors import ArgumentError

#: The size counted for a dim not known when the graph is built (None, or a name's share of
#: a named dim), when the contraction order is chosen by cost.
GUESS = 100

#: ``optimize=True`` (the default) searches every order for at most this many operands
#: (``"optimal"``), and contracts the cheapest pair first beyond (``"greedy"``).
OPTIMAL_UP_TO = 8

_FORMS = (
    "optimize is True (the order by cost), False (left to right), 'greedy', 'optimal', a "
    "(strategy, memory limit) pair or an explicit ['einsum_path', (1, 2), (0, 1)] as "
    "np.einsum_path gives"
)


def read_optimize(optimize):
    """``optimize`` as ``(strategy, steps)``: strategy one of "left", "auto", "greedy",
    "optimal", "path" (steps then the explicit path's steps); an ArgumentError names
    anything else."""
    if optimize is None or (isinstance(optimize, (bool, np.bool_)) and not optimize):
        return "left", None
    if isinstance(optimize, (bool, np.bool_)):
        return "auto", None
    if isinstance(optimize, str) and optimize in ("greedy", "optimal"):
        return optimize, None
    if isinstance(optimize, (list, tuple)) and optimize and isinstance(optimize[0], str):
        if optimize[0] == "einsum_path":
            return "path", list(optimize[1:])
        limit = optimize[1] if len(optimize) == 2 else None
        if optimize[0] in ("greedy", "optimal") and isinstance(limit, (int, float, np.number)):
            return optimize[0], None  # the memory limit is not applied (docs/ops.md)
    raise ArgumentError(f"einsum: {_FORMS}, not {describe_value(optimize)}")


def contraction_tree(optimize, terms: list[str], output: str, shapes: list[tuple]):
    """The tree of pairwise contractions of the operands (their terms and shapes, one per
    operand) that ``optimize`` asks for: an int for one operand, (left, right) for the
    contraction of two subtrees."""
    strategy, steps = read_optimize(optimize)
    count = len(terms)
    if strategy == "path":
        return _explicit(optimize, steps, count)
    if strategy == "left" or count < 3:
        tree = 0
        for k in range(1, count):
            tree = (tree, k)
        return tree
    size = _letter_sizes(terms, shapes)
    sets = _kept_letters([frozenset(t) for t in terms], frozenset(output))
    if strategy == "optimal" or (strategy == "auto" and count <= OPTIMAL_UP_TO):
        return _optimal(sets, frozenset(output), size)
    return _greedy(sets, frozenset(output), size)


def _letter_sizes(terms, shapes) -> dict:
    """Each letter's size for the cost: an int dim's where one operand has it, else the
    guess for its named dim or GUESS."""
    size = {}
    for term, shape in zip(terms, shapes):
        for c, d in zip(term, shape):
            if isinstance(d, int):
                size[c] = d
            elif c not in size:
                guess = evaluate(d, dict.fromkeys(names_in(d), GUESS))
                size[c] = GUESS if guess is None else max(guess, 1)
    return size


def _kept_letters(sets, output):
    """Each operand's letters less those that only it names and the output does not: they
    are summed out of it before any contraction."""
    counts = Counter(c for s in sets for c in s)
    return [frozenset(c for c in s if c in output or counts[c] > 1) for s in sets]


def _volume(letters, size) -> int:
    return math.prod(size[c] for c in letters)


def _optimal(sets, output, size):
    """The tree of the fewest multiply-adds in all (then the smallest intermediates):
    every split of every subset of the operands, cheapest first (3**n splits)."""
    count = len(sets)
    full = (1 << count) - 1
    union = [frozenset()] * (full + 1)
    for mask in range(1, full + 1):
        low = (mask & -mask).bit_length() - 1
        union[mask] = union[mask & (mask - 1)] | sets[low]
    kept = [union[m] & (output | union[full ^ m]) for m in range(full + 1)]
    best = {1 << k: ((0, 0), k) for k in range(count)}
    for mask in range(1, full + 1):
        if mask & (mask - 1) == 0:
            continue
        low = mask & -mask
        choice = None
        sub = (mask - 1) & mask
        while sub:
            if sub & low:  # the part with the lowest operand is the left one
                other = mask ^ sub
                (fa, sa), left = best[sub]
                (fb, sb), right = best[other]
                flops = _volume(kept[sub] | kept[other], size)
                cost = (fa + fb + flops, sa + sb + _volume(kept[mask], size))
                if choice is None or cost < choice[0]:
                    choice = (cost, (left, right))
            sub = (sub - 1) & mask
        best[mask] = choice
    return best[full][1]


def _greedy(sets, output, size):
    """NumPy's greedy order: contract the pair that shrinks the operands most (then the one
    of the fewest multiply-adds), among pairs that share an index when any do."""
    nodes = [(s, k, k) for k, s in enumerate(sets)]  # (letters, tree, its lowest operand)
    while len(nodes) > 1:
        counts = Counter(c for s, _, _ in nodes for c in s)
        pairs = [
            (i, j)
            for i in range(len(nodes))
            for j in range(i + 1, len(nodes))
            if nodes[i][0] & nodes[j][0]
        ]
        pairs = pairs or [(i, j) for i in range(len(nodes)) for j in range(i + 1, len(nodes))]
        choice = None
        for i, j in pairs:
            a, b = nodes[i][0], nodes[j][0]
            both = a | b
            keep = {c for c in both if c in output or counts[c] > (c in a) + (c in b)}
            result = frozenset(keep)
            growth = _volume(result, size) - _volume(a, size) - _volume(b, size)
            key = (growth, _volume(both, size), i, j)
            if choice is None or key < choice[0]:
                choice = (key, result)
        (_, _, i, j), result = choice
        (_, ta, la), (_, tb, lb) = nodes[i], nodes[j]
        tree = (ta, tb) if la < lb else (tb, ta)
        nodes = [n for k, n in enumerate(nodes) if k not in (i, j)] + [(result, tree, min(la, lb))]
    return nodes[0][1]


def _explicit(optimize, steps, count):
    """The tree of an explicit path (NumPy's: each step the positions it contracts in the
    list of operands left, its result put last; a step of more than two contracts them in
    the order given)."""
    nodes = list(range(count))
    for step in steps:
        if (
            not isinstance(step, (list, tuple))
            or not step
            or not all(isinstance(p, (int, np.integer)) and 0 <= p < len(nodes) for p in step)
            or len(set(step)) != len(step)
        ):
            raise ArgumentError(
                f"einsum: step {step!r} of the path {optimize!r} is not distinct "
                f"positions among the {len(nodes)} operands left at that step"
            )
        tree = nodes[step[0]]
        for p in step[1:]:
            tree = (tree, nodes[p])
        nodes = [n for k, n in enumerate(nodes) if k not in step] + [tree]
    if len(nodes) != 1:
        raise ArgumentError(
            f"einsum: the path {optimize!r} leaves {len(nodes)} of the {count} operands "
            "uncontracted; its steps must bring them down to one"
        )
    return nodes[0]
