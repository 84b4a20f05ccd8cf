"""Dimensions of a symbolic shape: a fixed int, a named size such as ``"batch"``, unknown
(``None``), or arithmetic of those (``n+m``, ``batch*784``, ``(H+1)//2``).

This module is the only place that interprets a dim, so the ops never look inside one. A name
means the same size everywhere in a graph. Arithmetic is kept in one canonical form (a
polynomial with integer coefficients whose atoms are names and irreducible floor divisions),
so two expressions of the same size compare and hash equal. A dim stored in a type is always
canonical: an ``int`` when it is fixed, a ``str`` when it is a bare name, a :class:`DimExpr`
only for a compound expression.
"""

from __future__ import annotations

import ast
import math
import numbers
from collections.abc import Mapping, Set
from functools import reduce

from symnb.errors import ShapeError, ShapeTypeError


class DimMismatch(Exception):
    """Two dims that must be equal provably differ; ops turn this into a ShapeError."""

    def __init__(self, a, b):
        super().__init__(f"{format_dim(a)} != {format_dim(b)}")
        self.a, self.b = a, b

    def __reduce__(self):  # (made again from both dims: its args hold the message alone)
        return type(self), (self.a, self.b), self.__dict__


# -- the canonical form ---------------------------------------------------------------------
# A polynomial is a dict {monomial: coefficient}; a monomial is a sorted tuple of atoms; an
# atom is a name (str) or a _FloorDiv that could not be simplified.


class _FloorDiv:
    """An irreducible ``numerator // divisor`` (numerator: polynomial terms, divisor > 1)."""

    __slots__ = ("numerator", "divisor")

    def __init__(self, numerator: tuple, divisor: int):
        self.numerator, self.divisor = numerator, divisor

    def __eq__(self, other):
        return isinstance(other, _FloorDiv) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def key(self):
        return (self.numerator, self.divisor)

    def __str__(self):
        inner = _format_terms(self.numerator)
        bare = len(self.numerator) == 1 and self.numerator[0][1] == 1
        bare = bare and len(self.numerator[0][0]) == 1 and isinstance(self.numerator[0][0][0], str)
        return f"{inner}//{self.divisor}" if bare else f"({inner})//{self.divisor}"


def _atom_key(atom):
    return (0, atom) if isinstance(atom, str) else (1, str(atom))


def _monomial_key(monomial):
    return (len(monomial) == 0, [_atom_key(a) for a in monomial])


def _freeze(poly: dict) -> tuple:
    """Sorted (monomial, coefficient) pairs without zero coefficients: the canonical terms."""
    items = [(m, c) for m, c in poly.items() if c != 0]
    return tuple(sorted(items, key=_term_key))


def _term_key(term):
    return _monomial_key(term[0])


def _poly(d) -> dict:
    if isinstance(d, DimExpr):
        return dict(d.terms)
    if isinstance(d, str):
        return {(d,): 1}
    return {(): int(d)} if d else {}  # an int


def _canonical(terms: tuple):
    """The simplest spelling: an int, a bare name, or a DimExpr."""
    if not terms:
        return 0
    if len(terms) == 1:
        monomial, coef = terms[0]
        if not monomial:
            return coef
        if coef == 1 and len(monomial) == 1 and isinstance(monomial[0], str):
            return monomial[0]
    return DimExpr(terms)


def _from_poly(poly: dict):
    return _canonical(_freeze(poly))


class DimExpr:
    """A symbolic size built from names and ints with ``+ - * //``.

    Users get one from ``sn.dim("H")`` and combine it with Python operators:
    ``(sn.dim("H") + 2 * 1 - 3) // 2 + 1``. Equal sizes compare and hash equal, whatever
    their spelling; inside a type a dim is always stored in its simplest form.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: tuple):
        object.__setattr__(self, "terms", terms)

    def __setattr__(self, name, value):
        raise AttributeError("DimExpr is immutable")

    def __reduce__(self):
        """Pickled as its constructor call (unpickling must not set attributes)."""
        return DimExpr, (self.terms,)

    @classmethod
    def of(cls, d) -> DimExpr:
        """Wrap any dim (a name, an int, an expression string) so operators apply to it."""
        d = normalize_dim(d)
        if d is None:
            raise ShapeError("an unknown dim (None) has no arithmetic")
        return d if isinstance(d, DimExpr) else cls(_freeze(_poly(d)))

    def simplest(self):
        return _canonical(self.terms)

    def __eq__(self, other):
        """Compares sizes, not spellings: ``dim("n") + 0 == "n"``."""
        if isinstance(other, DimExpr):
            return self.terms == other.terms
        if isinstance(other, str) and other.isidentifier() or is_int(other):
            return self.terms == _freeze(_poly(other))
        return NotImplemented

    def __hash__(self):
        simple = self.simplest()
        return hash(self.terms) if isinstance(simple, DimExpr) else hash(simple)

    def __str__(self):
        return _format_terms(self.terms)

    def __repr__(self):
        return f"DimExpr({self})"

    def _wrap(self, result) -> DimExpr | None:
        return None if result is None else DimExpr(_freeze(_poly(result)))

    def __add__(self, other):
        return self._wrap(add(self, other))

    def __radd__(self, other):
        return self._wrap(add(other, self))

    def __sub__(self, other):
        return self._wrap(sub(self, other))

    def __rsub__(self, other):
        return self._wrap(sub(other, self))

    def __mul__(self, other):
        return self._wrap(mul(self, other))

    def __rmul__(self, other):
        return self._wrap(mul(other, self))

    def __floordiv__(self, other):
        _check_divisor(other)
        return self._wrap(floordiv(self, other))

    def __rfloordiv__(self, other):
        _check_divisor(self)
        return self._wrap(floordiv(other, self))

    def __truediv__(self, other):
        """A size is an integer: say so, and which division it has."""
        raise ShapeTypeError(
            f"a dim has no true division: {_operand(self)} / {_operand(other, True)} is no "
            f"size; write {_operand(self)} // {_operand(other, True)} (floor division) for an "
            "integer size"
        )

    def __rtruediv__(self, other):
        raise ShapeTypeError(
            f"a dim has no true division: {_operand(other)} / {_operand(self, True)} is no "
            f"size; write {_operand(other)} // {_operand(self, True)} (floor division) for an "
            "integer size"
        )

    def __neg__(self):
        return self._wrap(neg(self))


def _operand(x, right: bool = False) -> str:
    """An operand of a division a user wrote: a dim as ``format_operand`` prints it, anything
    else (a float, a string) as its repr."""
    return format_operand(x, right) if isinstance(x, DimExpr) or is_int(x) else repr(x)


#: the largest size of an axis: NumPy's sizes are int64 (np.zeros(2**63) is "Maximum allowed
#: dimension exceeded"), and so are the runners' and kernels'
MAX_DIM = 2**63 - 1


def too_large(size) -> str:
    """Why the int ``size`` is no size of an axis: "" where it fits in int64."""
    if size <= MAX_DIM:
        return ""
    return f"{size} does not fit in int64 (a size is at most 2**63-1: no array is that long)"


def is_int(x) -> bool:
    """An int or NumPy integer, not a bool (which Python counts as one)."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _check_divisor(d) -> None:
    """A size divided by 0 or a negative int is no size (the internal ``floordiv`` answers
    unknown for it; what users write is refused)."""
    if is_int(d) and d <= 0:
        raise ShapeError(f"a dim cannot be divided by {d}: a divisor of a size is positive")


Dim = int | str | DimExpr | None


def _format_monomial(monomial, coef: int, first: bool) -> str:
    """One term without its sign: ``batch*784``, ``n``, ``m*((n+1)//2)``. A floor division
    stands bare only where no factor or leading minus could bind tighter than ``//``."""
    bare = len(monomial) == 1 and (coef == 1 or coef == -1 and not first)
    factors = [str(a) if isinstance(a, str) or bare else f"({a})" for a in monomial]
    if abs(coef) != 1 or not monomial:
        factors.append(str(abs(coef)))
    return "*".join(factors)


def _print_order(term) -> tuple:
    """Names with positive coefficients first, then negative ones, the constant last."""
    monomial, coef = term
    return (not monomial, coef < 0)


def _format_terms(terms) -> str:
    if not terms:
        return "0"
    out = ""
    for monomial, coef in sorted(terms, key=_print_order):
        sign = "-" if coef < 0 else ("+" if out else "")
        out += sign + _format_monomial(monomial, coef, not out)
    return out


# -- arithmetic -----------------------------------------------------------------------------
def _known_operands(a, b) -> bool:
    return a is not None and b is not None


def add(a: Dim, b: Dim) -> Dim:
    """a + b (unknown if either is)."""
    if not _known_operands(a, b):
        return None
    poly = _poly(normalize_dim(a, signed=True))
    for m, c in _poly(normalize_dim(b, signed=True)).items():
        poly[m] = poly.get(m, 0) + c
    return _from_poly(poly)


def add_all(dims) -> Dim:
    """The sum of many dims in one pass (unknown if any is): ``add`` in a loop would rebuild
    and re-sort the whole sum once per dim, quadratic in their number."""
    poly: dict = {}
    for d in dims:
        if d is None:
            return None
        for m, c in _poly(normalize_dim(d, signed=True)).items():
            poly[m] = poly.get(m, 0) + c
    return _from_poly(poly)


def neg(a: Dim) -> Dim:
    return mul(a, -1)  # unknown if a is


def sub(a: Dim, b: Dim) -> Dim:
    """a - b (unknown if either is: add and neg say so)."""
    return add(a, neg(b))


def _mul_monomials(m1, m2):
    return tuple(sorted(m1 + m2, key=_atom_key))


def mul(a: Dim, b: Dim) -> Dim:
    """a * b, expanded (unknown if either is)."""
    if not _known_operands(a, b):
        return None
    out: dict = {}
    for m1, c1 in _poly(normalize_dim(a, signed=True)).items():
        for m2, c2 in _poly(normalize_dim(b, signed=True)).items():
            m = _mul_monomials(m1, m2)
            out[m] = out.get(m, 0) + c1 * c2
    return _from_poly(out)


def floordiv(a: Dim, b: Dim) -> Dim:
    """a // b. By a positive int it always has a form (the divisible part comes out of the
    floor: ``(4n+5)//2 == 2n+2 + 1//2``); by a symbolic size only when it divides exactly."""
    if not _known_operands(a, b):
        return None
    a, b = normalize_dim(a, signed=True), normalize_dim(b, signed=True)
    if isinstance(b, numbers.Integral):
        return _floordiv_int(_poly(a), int(b))
    return exact_div(a, b)


def _floordiv_int(poly: dict, d: int) -> Dim:
    if d <= 0:
        return None
    nested = _nested_floordiv(poly)
    if nested is not None:  # (P//a + c)//d == (P + a*c)//(a*d): one canonical spelling
        inner, c = nested
        top = dict(inner.numerator)
        top[()] = top.get((), 0) + inner.divisor * c
        return _floordiv_int(top, inner.divisor * d)
    quotient = {m: c // d for m, c in poly.items()}
    remainder = _freeze({m: c % d for m, c in poly.items()})
    if not remainder or len(remainder) == 1 and not remainder[0][0]:
        return _from_poly(quotient)  # what is left is a constant in [0, d): it floors to 0
    quotient[(_FloorDiv(remainder, d),)] = 1
    return _from_poly(quotient)


def _nested_floordiv(poly: dict):
    """(the floor division, the constant) when poly is ``P//a + c``; None otherwise."""
    atoms = [m for m in poly if m]
    if len(atoms) != 1 or len(atoms[0]) != 1 or poly[atoms[0]] != 1:
        return None
    (atom,) = atoms[0]
    return (atom, poly.get((), 0)) if isinstance(atom, _FloorDiv) else None


def exact_div(a: Dim, b: Dim) -> Dim:
    """a / b when b divides a for every value of the names; None otherwise."""
    if not _known_operands(a, b) or b == 0:
        return None
    divisor = _freeze(_poly(b))
    if len(divisor) != 1:
        return a if a == b else None
    (dm, dc), out = divisor[0], {}
    for m, c in _poly(a).items():
        rest = _without(m, dm)
        if rest is None or c % dc:
            return None
        out[rest] = c // dc  # distinct monomials divided by one factor stay distinct
    return _from_poly(out)


def _without(monomial, factor):
    """monomial / factor as a monomial, or None when factor is not part of it."""
    left = list(monomial)
    for atom in factor:
        if atom not in left:
            return None
        left.remove(atom)
    return tuple(left)


def product(dims) -> Dim:
    """Number of elements: an int when every dim is fixed, an expression when names are
    involved, None when any dim is unknown."""
    dims = list(dims)
    if any(d is None for d in dims):
        return None
    return reduce(mul, dims, 1)


def conv_output(size: Dim, kernel: int, stride: int = 1, padding: int = 0, dilation: int = 1):
    """Length of a convolution or pooling output: ``(size + 2p - d(k-1) - 1)//s + 1``."""
    return window_output(size, kernel, stride, dilation, (padding, padding))


def window_output(size: Dim, kernel: int, stride: int, dilation: int, padding) -> Dim:
    """Output length of a sliding window; ``padding`` is "valid", "same" (the output is
    ``ceil(size / stride)``) or (before, after)."""
    if padding == "same":
        return floordiv(add(size, stride - 1), stride)
    pads = (0, 0) if padding == "valid" else padding
    span = dilation * (kernel - 1) + 1
    return add(floordiv(sub(add(size, pads[0] + pads[1]), span), stride), 1)


# -- reading what users write ---------------------------------------------------------------
_BINARY = {ast.Add: add, ast.Sub: sub, ast.Mult: mul, ast.FloorDiv: floordiv}


def parse_dim(text: str) -> Dim:
    """A dim from its printed form: ``"batch*784"``, ``"n+m"``, ``"(H+1)//2-1"``."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
        return _eval_node(tree)
    except (SyntaxError, _NotADim):
        hint = "; a size is an integer: use // for division" if "/" in text else ""
        raise ShapeError(
            f"a named dim must be an identifier or arithmetic of names and ints "
            f"(+ - * //), not {text!r}{hint}"
        ) from None


class _NotADim(Exception):
    pass


def _eval_node(node) -> Dim:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval_node(node.left), _eval_node(node.right)
        if type(node.op) is ast.FloorDiv:
            _check_divisor(right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _eval_node(node.operand)
        return neg(inner) if isinstance(node.op, ast.USub) else inner
    raise _NotADim


def normalize_dim(d, signed: bool = False) -> Dim:
    """Accept what users write for a dim (int, numpy int, name, expression string, DimExpr,
    None) and return its canonical form; reject the rest. Sizes in a shape cannot be
    negative (``signed`` allows it for intermediate arithmetic)."""
    if d is None:
        return None
    if isinstance(d, DimExpr):
        simple = d.simplest()
        if isinstance(simple, DimExpr):
            if not signed and _always_negative(simple.terms):
                raise ShapeError(f"a dim cannot be negative, got {simple}")
            return simple
        return normalize_dim(simple, signed)
    if isinstance(d, str):
        return d if d.isidentifier() else normalize_dim(parse_dim(d), signed)
    if isinstance(d, numbers.Integral) and not isinstance(d, bool):
        if d < 0 and not signed:
            raise ShapeError(f"a dim cannot be negative, got {d}")
        if d > MAX_DIM and not signed:
            raise ShapeError(f"a dim {too_large(d)}")
        return int(d)
    raise ShapeTypeError(
        f"a dim is an int, a name (str), an expression of those or None, not {d!r}"
    )


def _always_negative(terms) -> bool:
    """An expression below 0 for every size of its names (``-n``, ``-2*n*m-1``): no term is
    positive, and a negative one is a constant or a product of names (names are at least 1;
    a floor division may be 0)."""
    pure = [c for m, c in terms if all(isinstance(a, str) for a in m)]
    return all(c <= 0 for _, c in terms) and any(c < 0 for c in pure)


def normalize_shape(shape) -> tuple[Dim, ...]:
    if type(shape) is tuple and all(map(_is_canonical, shape)):
        return shape  # every rule's output shape: already canonical, checked in one pass
    if isinstance(shape, (str, numbers.Integral, DimExpr)) or shape is None:
        shape = (shape,)
    if unordered(shape):
        raise ShapeTypeError(f"a shape is a tuple of dims, not {unordered(shape)}")
    try:
        dims = iter(shape)
    except TypeError:
        raise ShapeTypeError(f"a shape is a tuple of dims, not {shape!r}") from None
    return tuple(normalize_dim(d) for d in dims)


def unordered(shape) -> str:
    """What ``shape`` is when it is a set or a mapping (``"{5, 6} (a set)"``), else "": its
    iteration order (a set's, or a dict's keys) is no order of axes the user wrote, and
    NumPy refuses both as a shape."""
    if isinstance(shape, (Set, Mapping)):
        return f"{shape!r} (a {type(shape).__name__})"
    return ""


def _is_canonical(d) -> bool:
    """True for a dim normalize_dim would return unchanged (a plain int of int64's sizes, an
    identifier, None); expressions take the full path."""
    kind = type(d)
    return kind is int and 0 <= d <= MAX_DIM or kind is str and d.isidentifier() or d is None


def dim(name) -> DimExpr:
    """A symbolic size to do arithmetic with: ``sn.dim("n") + sn.dim("m")``."""
    return DimExpr.of(name)


# -- questions about dims -------------------------------------------------------------------
def is_known(d: Dim) -> bool:
    """True for a fixed size."""
    return isinstance(d, int)


def is_symbolic(d: Dim) -> bool:
    """True for a name or an expression of names."""
    return isinstance(d, (str, DimExpr))


def names_in(d: Dim) -> set[str]:
    """The names a dim is made of."""
    if isinstance(d, str):
        return {d}
    if not isinstance(d, DimExpr):
        return set()
    return set().union(*(_atom_names(a) for m, _ in d.terms for a in m))


def _atom_names(atom) -> set[str]:
    if isinstance(atom, str):
        return {atom}
    return set().union(*(_atom_names(a) for m, _ in atom.numerator for a in m))


def evaluate(d: Dim, sizes: dict) -> int | None:
    """The size of d given sizes for its names; None when a name has none (or d is None)."""
    if d is None or isinstance(d, int):
        return d
    if isinstance(d, str):
        return sizes.get(d)
    return _evaluate_terms(d.terms, sizes)


def _evaluate_terms(terms, sizes) -> int | None:
    total = 0
    for monomial, coef in terms:
        value = coef
        for atom in monomial:
            part = sizes.get(atom) if isinstance(atom, str) else _evaluate_atom(atom, sizes)
            if part is None:
                return None
            value *= part
        total += value
    return total


def _evaluate_atom(atom: _FloorDiv, sizes) -> int | None:
    top = _evaluate_terms(atom.numerator, sizes)
    return None if top is None else top // atom.divisor


def _partly_evaluated(d: DimExpr, sizes: dict) -> tuple[int, dict]:
    """d with the sizes given put in: ``(constant, {monomial of the names without a size:
    coefficient})``. A term with a factor of size 0 is 0 whatever its other names are (``n*m``
    with n 0), so it drops out; terms left with the same names are added up."""
    rest, free = 0, {}
    for monomial, coef in d.terms:
        value, unknown = coef, []
        for atom in monomial:
            part = sizes.get(atom) if isinstance(atom, str) else _evaluate_atom(atom, sizes)
            if part is None:
                unknown.append(atom)
            else:
                value *= part
        if value and unknown:
            free[tuple(unknown)] = free.get(tuple(unknown), 0) + value
        else:
            rest += value
    return rest, {m: c for m, c in free.items() if c}


def size_given(d: Dim, sizes: dict) -> int | None:
    """The size of d that the sizes given make it, whatever sizes its other names get (``n*m``
    with n 0 is 0); None where it depends on a name that has no size."""
    if not isinstance(d, DimExpr):
        return evaluate(d, sizes)
    rest, free = _partly_evaluated(d, sizes)
    return None if free else rest


def linear_in_one_name(d: Dim, sizes: dict) -> tuple[str, int, int] | None:
    """``(name, a, b)`` when d, with the sizes given, is ``a*name + b`` (a != 0) in the one
    name that has no size; None otherwise (a product of such names, a floor division of one,
    several of them, or none: ``size_given``). A call solves such a dim for its name."""
    if not isinstance(d, DimExpr):
        return None
    rest, free = _partly_evaluated(d, sizes)
    if len(free) != 1:
        return None
    ((monomial, slope),) = free.items()
    if len(monomial) != 1 or not isinstance(monomial[0], str):
        return None
    return monomial[0], slope, rest


def never_multiple_of(d: Dim, k: int) -> bool:
    """True when no sizes of d's names make d a multiple of the positive int k: d is
    ``g*Q + c`` (g the gcd of its coefficients but the constant's), and a multiple of k needs
    gcd(g, k) to divide c (``2*n+1`` is never even; ``3*n`` may be a multiple of 9)."""
    if d is None or k <= 0:
        return False
    poly = _poly(d)
    constant = poly.pop((), 0)
    if not poly:
        return constant % k != 0
    return constant % math.gcd(reduce(math.gcd, poly.values()), k) != 0


def provably_differ(a: Dim, b: Dim) -> bool:
    """True when a and b cannot be the same size, taking every name to be at least 1
    (integer arithmetic: ``4n`` is never ``6``; ``n*3`` never ``n*2``)."""
    if a is None or b is None:
        return False
    diff = _poly(sub(a, b))
    constant = diff.pop((), 0)
    if not diff:
        return constant != 0
    if constant % reduce(math.gcd, diff.values()):
        return True
    return _one_signed_and_nonzero(diff, constant)


def _one_signed_and_nonzero(diff: dict, constant: int) -> bool:
    """A sum whose every term has one sign and whose least value is not 0."""
    sign = 1 if all(c > 0 for c in diff.values()) else -1
    if any(c * sign <= 0 for c in diff.values()) or constant * sign < 0:
        return False
    pure = sum(abs(c) for m, c in diff.items() if all(isinstance(a, str) for a in m))
    return abs(constant) + pure > 0


def format_dim(d: Dim) -> str:
    return "?" if d is None else str(d)


def format_operand(d: Dim, right: bool = False) -> str:
    """d printed as an operand of ``*``, ``/`` or ``//`` inside a larger expression of a
    message: in parentheses where its own operators bind looser (a sum, a negative term:
    ``(m+n)/2``, not ``m+n/2``) and, on the ``right`` of a division, where it is a product or
    a floor division too (``k/(2*n)``)."""
    text = format_dim(d)
    if not isinstance(d, DimExpr):
        return f"({text})" if is_int(d) and d < 0 else text
    if len(d.terms) > 1:
        return f"({text})"
    monomial, coef = d.terms[0]
    compound = len(monomial) + (abs(coef) != 1) > 1 or not all(isinstance(a, str) for a in monomial)
    return f"({text})" if coef < 0 or right and compound else text


def format_shape(shape) -> str:
    inner = ", ".join(format_dim(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


# -- the rules ops use ----------------------------------------------------------------------
def unify(a: Dim, b: Dim) -> Dim:
    """The dim that both a and b can be; raise DimMismatch where they provably differ.

    Two different symbolic sizes (``batch`` and ``seq``) are taken to differ: a name says
    the size is its own. A name against a fixed size pins the name to it.
    """
    if a == b:
        return a
    if a is None or b is None:
        return b if a is None else a
    if is_known(a) and is_known(b) or is_symbolic(a) and is_symbolic(b):
        raise DimMismatch(a, b)
    if provably_differ(a, b):
        raise DimMismatch(a, b)
    return a if is_known(a) else b


def shapes_unify(a, b) -> bool:
    """Whether two shapes can be one: the same rank, and no dim provably differs (``unify``
    of each pair). Every "may these be the same shape" check asks this."""
    if len(a) != len(b):
        return False
    try:
        for x, y in zip(a, b):
            unify(x, y)
    except DimMismatch:
        return False
    return True


def broadcast_dims(a: Dim, b: Dim) -> Dim:
    """NumPy broadcasting of one axis; raise DimMismatch when neither side can stretch.

    The result is a name or an expression only where it provably is the broadcast size. An
    unknown side is 1 or the other's size when the function runs, so against a size that is
    never 1 (``3``, ``2*n``) it gives that size; against one that may be 1 (a name, ``n+1``
    with n 0) it is unknown: with ``n`` 1 and the unknown side 3 the result is 3, not ``n``.
    Two names, a name and a fixed size, follow ``unify`` (the one size both must be, where
    neither is 1)."""
    if a == 1:
        return b
    if b == 1:
        return a
    if a is None or b is None:
        other = b if a is None else a
        return other if never_one(other) else None
    return unify(a, b)


def never_one(d: Dim) -> bool:
    """True when d is 1 for no sizes of its names (a fixed size other than 1, ``2*n``,
    ``3*n+2``); False for a name, an unknown dim and any expression that may be 1 (``n+1``:
    names may be 0). An expression ``g*Q + c`` (g the gcd of its coefficients but the
    constant's) is 1 only where g divides ``c - 1``."""
    if d is None:
        return False
    poly = _poly(d)
    constant = poly.pop((), 0)
    if not poly:
        return constant != 1
    return (constant - 1) % reduce(math.gcd, poly.values(), 0) != 0


def matches_value(d: Dim, size: int) -> bool:
    """Does a concrete size fit the dim (named and unknown dims fit anything)?"""
    return not isinstance(d, int) or d == size
