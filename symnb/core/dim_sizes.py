"""The sizes of one call, the named dims its values bind (symnb/core/dims.py is the algebra
of dims themselves).

A call binds each name to one size: the first value with that name gives it, the others must
agree, and a dim computed from names (``2*n``, ``n+m``) must be what their sizes make it, or,
where it leaves one name unbound and is linear in it, binds it. ``sizes`` is
``{name: (size, label of what gave it)}``. The input checks of a compiled function
(compile/inputs.py) and the value of a shared variable (core/variable.py) both check here.
"""

from __future__ import annotations

from symnb.core.dims import DimExpr, linear_in_one_name, size_given

#: what a named-dim conflict within a call ends with
ACROSS_A_CALL = "; a named dim has one size across a call"


class SizeConflict(Exception):
    """A value's size that the sizes bound so far say otherwise; the message says how
    (``dim 'n' (axis 1) is 3 here but 2 in input 0 'x'...``), ``index`` which value of
    ``bind_all_derived``'s list."""

    index = 0


def bind_names(named, sizes: dict, shape, label: str, rule: str = ACROSS_A_CALL) -> None:
    """Bind each ``(axis, name)`` of ``named`` to ``shape[axis]`` in ``sizes`` (``label``:
    what gave it), or a SizeConflict where the name has another size already."""
    for i, name in named:
        seen = sizes.setdefault(name, (shape[i], label))
        if seen[0] != shape[i]:
            raise SizeConflict(
                f"dim '{name}' (axis {i}) is {shape[i]} here but {seen[0]} in {seen[1]}{rule}"
            )


def bind_derived(derived, sizes: dict, shape, label: str, seen: dict) -> list:
    """Dims such as ``n+m`` or ``2*n`` (``derived``: ``(axis, dim)`` pairs) against the sizes
    their names got, binding the one name a linear dim leaves without a size (``2*n`` of 6
    makes n 3; 7 fits no n), and comparing the same dim across values (``seen``: {dim:
    (size, label)}) where that is all a call can tell; a SizeConflict where one does not fit.
    Returns the dims left to check once more names have sizes."""
    left, known = [], {name: size for name, (size, _) in sizes.items()}
    for i, d in derived:
        got = shape[i]
        want = size_given(d, known)
        if want is not None:
            if want != got:
                where = ", ".join(f"{n}={known[n]} in {sizes[n][1]}" for n in sorted(known))
                raise SizeConflict(f"axis {i} ({d}) should be {want} with {where}")
            continue
        linear = linear_in_one_name(d, known)
        if linear is not None:
            name, slope, rest = linear
            size, remainder = divmod(got - rest, slope)
            if remainder or size < 0:
                raise SizeConflict(f"axis {i} ({d}) is {got}, which no size of '{name}' gives")
            sizes[name], known[name] = (size, f"{label} ({d} = {got})"), size
            continue
        first = seen.setdefault(d, (got, label))
        if first[0] != got:
            raise SizeConflict(
                f"axis {i} ({d}) is {got} here but {first[0]} in {first[1]}; a dim has one "
                "size across a call"
            )
        left.append((i, d))
    return left


def bind_all_derived(values: list, sizes: dict) -> None:
    """``bind_derived`` over ``values`` (``(derived, shape, label)`` each) once every named dim
    is bound: a name one value's dim binds (``2*n``) is checked in the others' dims, whichever
    comes first, so the values are gone over again while that binds more names. A
    SizeConflict's ``index`` says which value did not fit."""
    pending = [(k, value) for k, value in enumerate(values) if value[0]]
    while pending:
        bound, seen, left = len(sizes), {}, []
        for k, (derived, shape, label) in pending:
            try:
                rest = bind_derived(derived, sizes, shape, label, seen)
            except SizeConflict as exc:
                exc.index = k
                raise
            if rest:
                left.append((k, (rest, shape, label)))
        if len(sizes) == bound:
            return
        pending = left


def sizes_of(values: list) -> dict:
    """``{name: size}`` that ``values`` (``(dims, shape)`` pairs: a type's shape, a value's)
    give, as a call binds them (``bind_values``). A SizeConflict where they disagree."""
    sizes = bind_values([(dims, shape, f"value {k}") for k, (dims, shape) in enumerate(values)])
    return {name: size for name, (size, _) in sizes.items()}


def bind_values(values: list) -> dict:
    """The sizes (``{name: (size, label)}``) that ``values``, ``(dims, shape, label)``
    triples, give as a call binds them: each bare name from its axis, then each name only a
    dim computed from names gives (``2*n`` of 6 makes n 3; ``n+m`` of 5 with n 2 makes m 3).
    A SizeConflict where they disagree, its ``index`` the value that did not fit."""
    sizes: dict = {}
    for k, (dims, shape, label) in enumerate(values):
        named = [(i, d) for i, d in enumerate(dims) if isinstance(d, str)]
        try:
            bind_names(named, sizes, shape, label)
        except SizeConflict as exc:
            exc.index = k
            raise
    derived = [
        ([(i, d) for i, d in enumerate(dims) if isinstance(d, DimExpr)], shape, label)
        for dims, shape, label in values
    ]
    bind_all_derived(derived, sizes)
    return sizes


def check_sizes(dims, shape) -> None:
    """One value of ``dims`` (a type's shape; ``shape`` fits each fixed dim already) whose
    named dims agree with each other (``(n, n)`` of (2, 3) does not; nor ``(n, 2*n)`` of
    (3, 5)): a SizeConflict saying where not. Each axis names what it gave (``axis 0``)."""
    sizes: dict = {}
    for i, d in enumerate(dims):
        if isinstance(d, str):
            bind_names([(i, d)], sizes, shape, f"axis {i}", "; a named dim has one size")
    derived = [(i, d) for i, d in enumerate(dims) if isinstance(d, DimExpr)]
    if derived:
        bind_all_derived([(derived, shape, "this value")], sizes)
