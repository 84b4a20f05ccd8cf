"""``einsum`` with NumPy's semantics, compiled to the ops it names: tensordot where two
operands share a summed index, a broadcasting product and a sum where they also share a kept
one, transposes and sums for one operand. Parses both of NumPy's forms (the subscripts string
and the interleaved operand/index-list form) and checks each term against its operand."""

from __future__ import annotations

import string

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, is_int, unify
from symnb.core.op import _at_user_line, located_call
from symnb.core.variable import as_variable, describe_value
from symnb.errors import ArgumentError, ShapeError
from symnb.ops.elemwise import cast, mul
from symnb.ops.linalg import Tensordot, transpose
from symnb.ops.reduce import sum as sum_
from symnb.ops.shape import DimShuffle, squeeze


def einsum(subscripts: str, *operands):
    """``np.einsum`` for products, transposes and sums (``"ij,jk->ik"``, ``"bij->bji"``,
    ``"i,i->"``, ``",ij->ij"`` with a 0-d operand, implicit output), built from tensordot,
    broadcasting products and sums. A dim known to be 1 when the graph is built broadcasts
    against the same index's larger size, as in NumPy. NumPy's interleaved form
    ``einsum(x, [0, 1], y, [1, 2], [0, 2])`` is the same: each operand followed by its
    indices as ints in 0..51 (0..25 are A..Z, 26..51 a..z), the output's last if given.
    Bool operands are NumPy's too: all bool gives bool (an OR of ANDs, computed as int64
    counts compared with 0); a bool operand beside others is read as 0/1 in their dtype.

    Not supported: ``...`` and a letter repeated inside one operand (diagonals: use
    ``sn.trace``); both raise a clear error.
    """
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
    operands = [cast(o, counts) if o.type.dtype.kind == "b" else o for o in operands]
    for k, c in stretched:  # a size-1 axis repeats along its index: its letter is the others'
        operands[k] = squeeze(operands[k], terms[k].index(c))
        terms[k] = terms[k].replace(c, "")
    keep_later = [set(output).union(*terms[k + 1 :]) for k in range(len(terms))]
    acc, letters = _sum_out(operands[0], terms[0], keep_later[0])
    for k in range(1, len(terms)):
        acc, letters = _contract(acc, letters, operands[k], terms[k], keep_later[k])
    acc, letters = _sum_out(acc, letters, set(output))
    acc = transpose(acc, [letters.index(c) for c in output])
    return cast(acc, dtype)


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
    if isinstance(sublist, (list, tuple)) and any(i is Ellipsis for i in sublist):
        raise ShapeError(f"einsum: ... ({sublist!r} {where}) is not supported; name the axes")
    if not isinstance(sublist, (list, tuple)) or not all(map(is_int, sublist)):
        raise ArgumentError(f"einsum: {form}; got {describe_value(sublist)} {where}")
    for label in sublist:
        if not 0 <= label < len(_LABELS):
            raise ArgumentError(
                f"einsum: an index of the interleaved form is an int in 0..51, not {label} "
                f"({list(sublist)!r} {where})"
            )
    return "".join(_LABELS[label] for label in sublist)


def _parse_einsum(subscripts, operands):
    """The operands' terms, the output's letters, and the (operand, letter) pairs of size-1
    axes that broadcast against a larger size of their letter."""
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise ShapeError(f"einsum: '...' in {subscripts!r} is not supported; name the axes")
    lhs, arrow, rhs = spec.partition("->")
    for c in lhs.replace(",", "") + rhs:
        if c not in string.ascii_letters:
            raise ArgumentError(
                f"einsum: index {c!r} in {subscripts!r} is not a letter: indices are a-z, A-Z"
            )
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ShapeError(f"einsum: {subscripts!r} names {len(terms)} operands, got {len(operands)}")
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
    dims known to be 1, listed in ``ones`` (they broadcast)."""
    if len(term) != var.type.ndim:
        raise ShapeError(
            f"einsum: term {term!r} of {subscripts!r} has {len(term)} indices but operand {k} "
            f"{var.describe()} has {var.type.ndim} dims"
        )
    if len(set(term)) != len(term):
        raise ShapeError(
            f"einsum: {term!r} repeats an index inside one operand (a diagonal); "
            "use sn.trace or sn.diag for that"
        )
    for c, d in zip(term, var.type.shape):
        if isinstance(d, int) and d == 1:
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
