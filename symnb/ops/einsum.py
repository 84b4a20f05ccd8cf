"""``einsum`` with NumPy's semantics, compiled to the ops it names: tensordot where two
operands share a summed index, a broadcasting product and a sum where they also share a kept
one, transposes and sums for one operand, a diagonal where a term repeats an index. Parses
both of NumPy's forms (the subscripts string and the interleaved operand/index-list form),
``...`` in either, and checks each term against its operand."""

from __future__ import annotations

import string

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, is_int, unify
from symnb.core.op import _at_user_line, located_call
from symnb.core.variable import as_variable, describe_value
from symnb.errors import ArgumentError, ShapeError
from symnb.ops._einsum_path import contraction_tree, read_optimize
from symnb.ops.checks import HasShape
from symnb.ops.creation import arange
from symnb.ops.elemwise import cast, mul
from symnb.ops.linalg import Tensordot, transpose
from symnb.ops.reduce import sum as sum_
from symnb.ops.shape import DimShuffle, squeeze


def einsum(subscripts: str, *operands, optimize=True):
    """``np.einsum`` for products, transposes and sums (``"ij,jk->ik"``, ``"bij->bji"``,
    ``"i,i->"``, ``",ij->ij"`` with a 0-d operand, implicit output), built from tensordot,
    broadcasting products and sums. A dim known to be 1 when the graph is built broadcasts
    against the same index's larger size, as in NumPy. ``...`` stands for the axes a term
    does not name, broadcast between operands from the right (``"...ij,...jk->...ik"``); an
    implicit output puts them first. An index repeated inside one term takes that operand's
    diagonal (``"ii->i"``, ``"ii"`` the trace, ``"iji->j"``), whose axes must have one length
    (a ShapeError when the graph is built, or when the function runs where the types do not
    give it, as NumPy refuses them); a diagonal of dims all 1 broadcasts as a size-1 dim does
    (``"bb,b->"`` of (1, 1) and (3,)). NumPy's interleaved form
    ``einsum(x, [0, 1], y, [1, 2], [0, 2])`` is the same: each operand followed by its
    indices as ints in 0..51 (0..25 are A..Z, 26..51 a..z) or ``Ellipsis``, the output's
    last if given. Bool operands are NumPy's too: all bool gives bool (an OR of ANDs,
    computed as int64 counts compared with 0); a bool operand beside others is read as 0/1
    in their dtype. Three or more operands are contracted two at a time, in the order of
    fewest multiply-adds (``"ij,jk,k->i"`` is ``A @ (B @ v)``): ``optimize`` takes
    ``np.einsum``'s values, but its default is True (NumPy's is False): True searches every
    order for up to 8 operands and takes NumPy's greedy order beyond, ``"optimal"`` and
    ``"greedy"`` ask for one of them, ``False`` contracts left to right, and an explicit
    ``["einsum_path", (1, 2), (0, 1)]`` (as ``np.einsum_path`` returns) is followed step by
    step; the memory limit of a ``("greedy", limit)`` pair is not applied, and any other value
    is an ArgumentError. The cost counts each dim known when the graph is built at its size,
    an unknown one as 100 and a named one as its expression with 100 for each name (the same
    name is the same size). The order changes the time, not the values (up to rounding).
    """
    read_optimize(optimize)
    if not isinstance(subscripts, str):
        subscripts, operands = located_call(_interleaved, subscripts, operands)
    if not operands:
        raise _at_user_line(
            ArgumentError(f"einsum: {subscripts!r} has no operands; give one array per term")
        )
    operands = [as_variable(o) for o in operands]
    dtype = np.result_type(*[o.type.dtype for o in operands])
    terms, output, stretched = located_call(_parse_einsum, subscripts, operands)
    counts = np.dtype("int64") if dtype.kind == "b" else dtype  # tensordot takes no bool
    operands = [
        _repeats_checked(subscripts, k, o, t) for k, (o, t) in enumerate(zip(operands, terms))
    ]
    operands = [cast(o, counts) if o.type.dtype.kind == "b" else o for o in operands]
    for k, term in enumerate(terms):
        operands[k], terms[k] = _diagonals(operands[k], term)
    for k, c in stretched:  # a size-1 axis repeats along its index: its letter is the others'
        operands[k] = squeeze(operands[k], terms[k].index(c))
        terms[k] = terms[k].replace(c, "")
    shapes = [o.type.shape for o in operands]
    tree = located_call(contraction_tree, optimize, terms, output, shapes)
    acc, letters, _ = _contract_tree(tree, operands, terms, output)
    acc, letters = _sum_out(acc, letters, set(output))
    acc = transpose(acc, [letters.index(c) for c in output])
    return cast(acc, dtype)


def _contract_tree(tree, operands, terms, output):
    """(variable, its letters, the operands it holds) of a contraction tree (an operand's
    position, or a (left, right) pair of trees), each pair contracted over the letters that
    neither the output nor an operand outside it names."""
    if not isinstance(tree, tuple):
        return operands[tree], list(terms[tree]), {tree}
    a, la, held_a = _contract_tree(tree[0], operands, terms, output)
    b, lb, held_b = _contract_tree(tree[1], operands, terms, output)
    held = held_a | held_b
    keep = set(output).union(*(t for k, t in enumerate(terms) if k not in held))
    acc, letters = _contract(a, la, b, lb, keep)
    return acc, letters, held


#: NumPy's letters for the ints of the interleaved form: 0..25 are A..Z, 26..51 a..z
_LABELS = string.ascii_uppercase + string.ascii_lowercase


def _interleaved(first, rest) -> tuple[str, tuple]:
    """(subscripts, operands) of NumPy's interleaved form ``einsum(op0, sublist0, op1,
    sublist1, ..., [sublist_out])``, each sublist a list of ints in 0..51; anything else
    given in place of the subscripts is an ArgumentError naming einsum and what it takes."""
    args = (first, *rest)
    form = (
        "the subscripts are a str such as 'ij,jk->ik', or NumPy's interleaved form "
        "einsum(x, [0, 1], y, [1, 2], [0, 2]) (each operand followed by its indices as ints)"
    )
    if first is None or len(args) < 2:
        raise ArgumentError(f"einsum: {form}, not {describe_value(first)}")
    pairs, out = len(args) // 2, args[-1] if len(args) % 2 else None
    terms = [_sublist(args[2 * k + 1], f"after operand {k}", form) for k in range(pairs)]
    last = "as the output's indices (the last argument)"
    spec = ",".join(terms) + ("" if out is None else "->" + _sublist(out, last, form))
    return spec, tuple(args[0 : 2 * pairs : 2])


def _sublist(sublist, where: str, form: str) -> str:
    """The letters of one sublist of the interleaved form (its ints as NumPy reads them),
    given ``where`` (``"after operand 0"``)."""
    if not isinstance(sublist, (list, tuple)) or not all(
        i is Ellipsis or is_int(i) for i in sublist
    ):
        raise ArgumentError(f"einsum: {form}; got {describe_value(sublist)} {where}")
    for label in sublist:
        if label is not Ellipsis and not 0 <= label < len(_LABELS):
            raise ArgumentError(
                f"einsum: an index of the interleaved form is Ellipsis or an int in 0..51, "
                f"not {label} ({list(sublist)!r} {where})"
            )
    return "".join("..." if label is Ellipsis else _LABELS[label] for label in sublist)


def _parse_einsum(subscripts, operands):
    """The operands' terms, the output's letters, and the (operand, letter) pairs of size-1
    axes that broadcast against a larger size of their letter."""
    spec = subscripts.replace(" ", "")
    if "." in spec:
        spec = _without_ellipsis(subscripts, spec, operands)
    lhs, arrow, rhs = spec.partition("->")
    for c in lhs.replace(",", "") + rhs:
        if c not in string.ascii_letters:
            raise ArgumentError(
                f"einsum: index {c!r} in {subscripts!r} is not a letter: indices are a-z, A-Z"
            )
    terms = lhs.split(",")
    _check_count(subscripts, terms, operands)
    sizes, ones = {}, []
    for k, (term, var) in enumerate(zip(terms, operands)):
        _check_term(subscripts, k, term, var, sizes, ones)
    letters = "".join(terms)
    output = rhs if arrow else "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for c in output:
        if c not in letters or output.count(c) > 1:
            raise ShapeError(f"einsum: output index {c!r} of {subscripts!r} is unknown or repeated")
    return terms, output, [(k, c) for k, c in ones if c in sizes]


def _check_term(subscripts, k, term, var, sizes, ones):
    """Checks operand k against its term; unifies each letter's dims in ``sizes``, but for
    dims known to be 1, listed in ``ones`` (they broadcast): a letter the term repeats (a
    diagonal) broadcasts where all its dims are 1, as in NumPy (the diagonal is 1 long)."""
    if len(term) != var.type.ndim:
        raise ShapeError(
            f"einsum: term {term!r} of {subscripts!r} has {len(term)} indices but operand {k} "
            f"{var.describe()} has {var.type.ndim} dims"
        )
    for c, d in zip(term, var.type.shape):
        dims = [e for letter, e in zip(term, var.type.shape) if letter == c]
        if all(isinstance(e, int) and e == 1 for e in dims):
            if (k, c) not in ones:
                ones.append((k, c))
            continue
        seen, where = sizes.setdefault(c, (d, f"operand {k} {var.describe()}"))
        try:
            sizes[c] = (unify(seen, d), where)
        except DimMismatch:
            raise ShapeError(
                f"einsum: index {c!r} is {format_dim(seen)} in {where} but {format_dim(d)} in "
                f"operand {k} {var.describe()}"
            ) from None


def _check_count(subscripts: str, terms: list, operands) -> None:
    """One term per operand."""
    if len(terms) != len(operands):
        raise ShapeError(f"einsum: {subscripts!r} names {len(terms)} operands, got {len(operands)}")


def _without_ellipsis(subscripts: str, spec: str, operands) -> str:
    """``spec`` with each ``...`` spelled as letters it does not use: the axes its term does
    not name, aligned from the right across operands (NumPy's broadcasting), in the output
    where it says ``...``, or first where the output is implicit."""
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    _check_count(subscripts, terms, operands)
    for term in [*terms, rhs]:
        if term.replace("...", "", 1).count("."):
            raise ArgumentError(
                f"einsum: {term!r} in {subscripts!r} has a '.' outside one '...' (each term "
                "takes at most one ellipsis)"
            )
    counts = []
    for k, (term, var) in enumerate(zip(terms, operands)):
        named = len(term.replace("...", ""))
        count = var.type.ndim - named if "..." in term else 0
        if count < 0:
            raise ShapeError(
                f"einsum: term {term!r} of {subscripts!r} names {named} indices but operand "
                f"{k} {var.describe()} has {var.type.ndim} dims"
            )
        counts.append(count)
    free = [c for c in string.ascii_letters if c not in spec]
    most = max(counts)
    if most > len(free):
        raise ArgumentError(f"einsum: {subscripts!r} needs more than 52 indices")
    spelled = "".join(free[:most])
    terms = [t.replace("...", spelled[most - n :]) for t, n in zip(terms, counts)]
    if not arrow:
        letters = "".join(terms)
        named = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in spelled)
        return ",".join(terms) + "->" + spelled + "".join(named)
    if "..." not in rhs and most:
        raise ShapeError(
            f"einsum: the output {rhs!r} of {subscripts!r} has no '...' for the {most} axes "
            "the operands' '...' stand for (NumPy refuses it too); write '...' in the output "
            "or sum those axes first"
        )
    return ",".join(terms) + "->" + rhs.replace("...", spelled)


def _repeats_checked(subscripts: str, k: int, var, term: str):
    """Operand k, once the axes its term repeats an index on are checked to have one length
    when the function runs, where the types do not show it (the types were unified when the
    graph was built, ``_check_term``): NumPy's "dimensions in single operand for collapsing
    index 'i' don't match", a ShapeError naming einsum, the operand, the index and the
    sizes. A ``HasShape``, each later axis against the first one's length."""
    shape, names, lengths, repeats = [None] * var.type.ndim, [], [], []
    for c in dict.fromkeys(term):
        axes = [a for a, letter in enumerate(term) if letter == c]
        first = var.type.shape[axes[0]]
        loose = [a for a in axes[1:] if first is None or var.type.shape[a] != first]
        if not loose:
            continue
        for a in loose:
            shape[a] = c
        names.append((c, len(lengths), None))
        lengths.append(var.shape[axes[0]])
        repeats.append(f"index {c!r} at axes {', '.join(map(str, axes))}")
    if not lengths:
        return var
    what = (
        f"einsum: operand {k} {var.describe()} repeats {' and '.join(repeats)} in "
        f"{subscripts!r}: an index repeated in one term takes that operand's diagonal, so its "
        "axes must have one length, as in np.einsum"
    )
    return HasShape(what, tuple(shape), tuple(names))(var, *lengths)


def _diagonals(var, term: str):
    """``var`` and its term with each index the term repeats taken once: the diagonal of
    those axes (``"ii"`` -> ``"i"``), first in the result, as ``x[n, n]`` of the moved axes."""
    while (c := next((c for c in term if term.count(c) > 1), None)) is not None:
        first = term.index(c)
        second = term.index(c, first + 1)
        rest = [a for a in range(len(term)) if a not in (first, second)]
        var = transpose(var, [first, second, *rest])
        size = var.type.shape[0]
        steps = np.arange(size) if isinstance(size, int) else arange(var.shape[0])
        var = var[steps, steps]
        term = c + "".join(term[a] for a in rest)
    return var, term


def _sum_out(var, letters, keep):
    gone = [k for k, c in enumerate(letters) if c not in keep]
    if not gone:
        return var, list(letters)
    return sum_(var, axis=tuple(gone)), [c for c in letters if c in keep]


def _contract(a, la, b, lb, keep):
    """a and b contracted over their shared letters that are not kept."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    summed = [c for c in la if c in lb and c not in keep]
    if not any(c in lb and c in keep for c in la):  # no batch index: one tensordot
        out = Tensordot([la.index(c) for c in summed], [lb.index(c) for c in summed])(a, b)
        return out, [c for c in la if c not in summed] + [c for c in lb if c not in summed]
    order = la + [c for c in lb if c not in la]
    a = DimShuffle([la.index(c) if c in la else "x" for c in order])(a)
    b = DimShuffle([lb.index(c) if c in lb else "x" for c in order])(b)
    axes = tuple(order.index(c) for c in summed)
    prod = mul(a, b)
    return (sum_(prod, axis=axes) if axes else prod), [c for c in order if c not in summed]
