"""Rules only the values decide, checked when the function runs: ``x`` unchanged, or an
error that says what was asked (the rule is checked when the graph is built wherever the
types or constants already tell): shapes (``at_most``, ``same_shape``, ``shape_from``,
``has_shape``, ``square_matrices``), the domains of random draws' parameters (``in_domain``)
and class labels (``ClassLabels``)."""

from __future__ import annotations

import numpy as np

from symnb.core.dim_sizes import SizeConflict, bind_all_derived
from symnb.core.dims import evaluate, format_shape, is_symbolic
from symnb.core.op import Op
from symnb.core.source import user_location
from symnb.core.types import TensorType
from symnb.core.variable import Variable, as_variable
from symnb.errors import CheckedShapeError, DTypeError, ShapeError


class _ShapeCheck(Op):
    """A check of its inputs' shapes (and of the integer scalars at ``value_inputs``) that
    passes x through: :meth:`check` raises what the run raises, reading only the shapes of
    the other inputs, so check mode (``compile/checkmode.py``) runs it on the call's shapes
    with no data."""

    def value_inputs(self) -> tuple[int, ...]:
        """The inputs whose values (integer scalars) the check reads; of the others, only
        their shapes."""
        return ()

    def check(self, *arrays) -> None:
        raise NotImplementedError


class AtMost(_ShapeCheck):
    """x unchanged where the integer scalar ``count`` is at most ``limit``; else a
    ShapeError: ``what`` followed by both numbers (raised as it is, at the caller's line,
    not wrapped naming the node: the graph's own check)."""

    dtype_rule = "x's dtype"
    __props__ = ("what",)

    def __init__(self, what: str):
        self.what = str(what)

    def infer_types(self, x, count, limit):
        for var in (count, limit):
            if var.type.ndim != 0 or var.type.dtype.kind not in "iu":
                raise DTypeError(f"at_most: an integer scalar, not {var.describe()}")
        return [x.type]

    def value_inputs(self) -> tuple[int, ...]:
        return (1, 2)

    def check(self, x, count, limit) -> None:
        if int(count) > int(limit):
            raise CheckedShapeError(f"{self.what} ({int(count)} > {int(limit)})")

    def perform(self, x, count, limit):
        self.check(x, count, limit)
        return np.array(x, copy=True)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0], None, None]


def at_most(x, count, limit, what: str) -> Variable:
    """``x``, once ``count <= limit`` is checked when the function runs (``what`` says what
    failed otherwise)."""
    x = as_variable(x)
    return AtMost(what)(x, as_variable(count), as_variable(limit))


def _negative(x):
    return x < 0


def _negative_or_not_finite(x):
    return ~(np.isfinite(x) & (x >= 0))


class InDomain(Op):
    """x unchanged where each value lies in a domain known only when the function runs (a
    random draw's parameter, as NumPy's Generator requires; a count of copies); else a
    ValueError naming the op, the parameter and the first value outside (values known when
    the graph is built are checked then)."""

    dtype_rule = "x's dtype"
    __props__ = ("what", "domain")
    _DRAW = ", as NumPy's Generator requires"
    DOMAINS = {  # name -> (the values refused, what the message says they must be)
        "non-negative": (_negative, "must be >= 0" + _DRAW),  # NaN passes, as in NumPy
        "finite non-negative": (_negative_or_not_finite, "must be finite and >= 0" + _DRAW),
        "count": (_negative, "must be >= 0"),  # repeat's and tile's counts
    }

    def __init__(self, what: str, domain: str):
        self.what, self.domain = str(what), str(domain)

    def infer_types(self, x):
        return [x.type]

    def perform(self, x):
        refused, must = self.DOMAINS[self.domain]
        bad = np.asarray(refused(np.asarray(x)))
        if bad.any():
            first = np.asarray(x).reshape(-1)[int(np.argmax(bad.reshape(-1)))]
            raise ValueError(f"{self.what} {must}; got {first}")
        return x

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0]]


def in_domain(x, what: str, domain: str) -> Variable:
    """``x``, once its values are checked to lie in ``domain`` (a key of InDomain.DOMAINS)
    when the function runs; ``what`` names the draw and parameter (``"normal: std"``)."""
    return InDomain(what, domain)(as_variable(x))


def label_problem(what: str, label, axis: int, n) -> str:
    """Why ``label`` is no class index of an axis of ``n`` classes (n None: not known)."""
    where = f"for axis {axis}" + ("" if n is None else f" of size {n}")
    if n is None:
        valid = "class labels count from 0"
    elif n == 0:
        valid = "the axis has no class"
    else:
        valid = f"class labels are 0 to {n - 1}"
    return (
        f"{what}: label {label} is out of range {where}: {valid} "
        "(a negative label does not count from the end)"
    )


def first_bad_label(labels, n):
    """The first label outside [0, n) (n None: the first negative one), else None."""
    labels = np.asarray(labels)
    bad = labels < 0 if n is None else (labels < 0) | (labels >= n)
    return labels[bad].flat[0] if bad.any() else None


class ClassLabels(Op):
    """Integer labels unchanged where each is a class index along ``axis``: 0 or more, and
    below the number of classes (``n`` where the graph knows it, else the run-time length
    given as a second input); else a ValueError naming the op (``what``), the label and n.
    For a cross-entropy of probabilities, whose labels a gather would otherwise read as NumPy
    does (-1: the last class) or refuse with an IndexError naming the gather."""

    dtype_rule = "the labels' dtype"
    __props__ = ("what", "axis", "n")

    def __init__(self, what: str, axis: int, n=None):
        self.what, self.axis = str(what), int(axis)
        self.n = None if n is None else int(n)

    def infer_types(self, labels, *length):
        if labels.type.dtype.kind not in "iu":
            raise DTypeError(f"{self.what}: labels {labels.describe()} must be integers")
        if len(length) > 1 or any(v.type.ndim or v.type.dtype.kind not in "iu" for v in length):
            raise DTypeError(f"{self.what}: the number of classes is one integer scalar")
        return [labels.type]

    def perform(self, labels, *length):
        n = int(length[0]) if length else self.n
        bad = first_bad_label(labels, n)
        if bad is not None:
            raise ValueError(label_problem(self.what, bad, self.axis, n))
        return labels

    def grad(self, inputs, outputs, output_grads):
        return [None] * len(inputs)


class SameShape(_ShapeCheck):
    """x unchanged where its shape is ``like``'s when the function runs; else a ShapeError:
    ``what`` followed by both shapes. For a value that must not broadcast (an eval point
    and its ``wrt``) whose dims are unknown when the graph is built; backends plan it as a
    view, so a call whose shapes match pays nothing."""

    dtype_rule = "x's dtype"
    __props__ = ("what",)

    def __init__(self, what: str):
        self.what = str(what)

    def infer_types(self, x, like):
        if x.type.ndim != like.type.ndim:
            raise ShapeError(f"{self.what}: {x.type.ndim} axes, not {like.type.ndim}")
        return [x.type]

    def check(self, x, like) -> None:
        if np.shape(x) != np.shape(like):
            shapes = f"{format_shape(np.shape(x))}, not {format_shape(np.shape(like))}"
            raise CheckedShapeError(f"{self.what} ({shapes}, when the function ran)")

    def perform(self, x, like):
        self.check(x, like)
        return np.asarray(x)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0], None]


def same_shape(x, like, what: str) -> Variable:
    """``x``, once its shape is checked to be ``like``'s when the function runs (``what``
    names ``x`` in the error); no check where both shapes are fixed and equal."""
    x, like = as_variable(x), as_variable(like)
    fixed = all(isinstance(d, int) for d in x.type.shape + like.type.shape)
    if fixed and x.type.shape == like.type.shape:
        return x
    return SameShape(what)(x, like)


class ShapeFrom(_ShapeCheck):
    """x unchanged where its shape is the one ``dims`` reads off the other inputs when the
    function runs; else a ShapeError: ``what`` followed by both shapes. ``dims`` has one
    entry per axis of x: a fixed length, or an expression (``n0``, ``n0 + 2``, ``2 * n0``,
    ``n0 + n1``) of the names in ``names``, each ``(name, pairs)``: the length that the
    ``(source, axis)`` pairs (sources counted from 0 after x) broadcast to, NumPy's rule: the
    one that is not 1; axis None reads the value of an integer scalar source (an entry of a
    ``RuleShape`` vector), and a negative one leaves its name, and the axes whose length is
    made of it, unchecked (a shape rule that could not tell the length). For an eval point
    whose variable no value computed holds the shape of, but values its shape follows from
    do (an elementwise op's operands, a reduction's input, the input of a pad or a sort, the
    inputs of a gather by its rule applied when the function runs:
    ``grad.points.checked_points``); it reads only their shapes."""

    dtype_rule = "x's dtype"
    __props__ = ("what", "dims", "names")

    def __init__(self, what: str, dims: tuple, names: tuple = ()):
        self.what = str(what)
        self.dims = tuple(dims)
        self.names = tuple((str(n), tuple(map(tuple, pairs))) for n, pairs in names)

    def infer_types(self, x, *sources):
        if x.type.ndim != len(self.dims):
            raise ShapeError(f"{self.what}: {x.type.ndim} axes, not {len(self.dims)}")
        return [x.type]

    def value_inputs(self) -> tuple[int, ...]:
        return tuple(1 + i for _, pairs in self.names for i, a in pairs if a is None)

    def check(self, x, *sources) -> None:
        sizes = {}
        for name, pairs in self.names:
            lengths = [
                np.shape(sources[i])[a] if a is not None else int(sources[i]) for i, a in pairs
            ]
            if min(lengths, default=0) >= 0:  # (else a rule's length unknown: not checked)
                sizes[name] = _broadcast_length(lengths)
        want = tuple(evaluate(d, sizes) for d in self.dims)
        got = np.shape(x)
        if any(w is not None and w != n for w, n in zip(want, got)):
            shapes = f"{format_shape(got)}, not {format_shape(want)}"
            raise CheckedShapeError(f"{self.what} ({shapes}, when the function ran)")

    def perform(self, x, *sources):
        self.check(x, *sources)
        return np.asarray(x)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0]] + [None] * (len(inputs) - 1)


def _broadcast_length(lengths) -> int:
    """The length that lengths broadcast to: the first that is not 1 (they agree where the
    values were computed), else 1."""
    return next((n for n in lengths if n != 1), 1)


def shape_from(x, dims, names, sources, what: str) -> Variable:
    """``x``, once its shape is checked to be the one ``dims`` reads off ``sources`` (by
    ``names``) when the function runs (``ShapeFrom``)."""
    return ShapeFrom(what, dims, names)(as_variable(x), *map(as_variable, sources))


class HasShape(_ShapeCheck):
    """A copy of x where its shape is ``shape`` when the function runs, each name in it the
    length of a source's axis (``names``: (name, source, axis)) or solved from an expression
    dim of one (``(n+1, source, axis)``: the axis's length less 1), or with axis None the value
    of a source, an integer scalar (a length the graph computes: Theano's ``specify_shape``
    of symbolic lengths); else a ShapeError: ``what`` followed by both shapes. For a
    replacement a user's rewrite rule returns whose dims the types cannot prove to be those
    of what it replaces (``symnb/opt/replacements.py``)."""

    dtype_rule = "x's dtype"
    __props__ = ("what", "shape", "names")

    def __init__(self, what: str, shape: tuple, names: tuple):
        self.what, self.shape, self.names = str(what), tuple(shape), tuple(names)

    def infer_types(self, x, *sources):
        if x.type.ndim != len(self.shape):
            raise ShapeError(f"{self.what}: {x.type.ndim} axes, not {len(self.shape)}")
        values = {name for name, _, axis in self.names if axis is None}
        shape = tuple(
            x.type.shape[i] if d is None or d in values else d for i, d in enumerate(self.shape)
        )
        return [TensorType.of(x.type.dtype, shape)]

    def value_inputs(self) -> tuple[int, ...]:
        return tuple(1 + i for _, i, axis in self.names if axis is None)

    def check(self, x, *sources) -> None:
        want = tuple(evaluate(d, self._sizes(sources)) for d in self.shape)
        got = np.shape(x)
        if any(w is not None and w != g for w, g in zip(want, got)):
            shapes = f"{format_shape(got)}, not {format_shape(self.shape)}"
            sized = "" if want == self.shape else f" = {format_shape(want)}"
            raise CheckedShapeError(f"{self.what} ({shapes}{sized}, when the function ran)")

    def perform(self, x, *sources):
        self.check(x, *sources)
        return np.array(x, copy=True)

    def _sizes(self, sources) -> dict:
        """The sizes of the names, read off the sources: a name's axis, a scalar's value, and
        a name only an expression dim gives (``n+1`` of 5 makes n 4: core/dims.py
        ``bind_all_derived``, as a call's input checks solve it)."""
        sizes, derived = {}, {}
        for d, i, axis in self.names:
            if axis is None:
                sizes[d] = (int(sources[i]), i)
            elif isinstance(d, str):
                sizes[d] = (np.shape(sources[i])[axis], i)
            else:
                derived.setdefault(i, []).append((axis, d))
        if derived:
            values = [(dims, np.shape(sources[i]), i) for i, dims in derived.items()]
            try:
                bind_all_derived(values, sizes)
            except SizeConflict:  # (the call's input checks refused it first)
                pass
        return {name: size for name, (size, _) in sizes.items()}

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0]] + [None] * (len(inputs) - 1)


def has_shape(x, shape, sources, what: str) -> Variable:
    """``x``, once its shape is checked to be ``shape`` when the function runs: the names in
    ``shape`` are read off ``sources`` (variables whose types hold them, as a plain dim or in
    an expression dim that gives them: ``n+1``), a dim None or of names no source gives is
    not checked."""
    x, sources = as_variable(x), [as_variable(s) for s in sources]
    names = tuple(
        (d, i, axis)
        for i, source in enumerate(sources)
        for axis, d in enumerate(source.type.shape)
        if is_symbolic(d)
    )
    return HasShape(what, shape, names)(x, *sources)


class SquareMatrices(Op):
    """A copy of x where its last two axes have one length when the function runs (a stack
    of square matrices whose dims the types do not prove equal); else a ShapeError:
    ``what`` (the op and x) "is not square", with both lengths and x's shape, at ``source``,
    the user's line that built the check (not a prop: equal checks of one x merge)."""

    dtype_rule = "x's dtype"
    __props__ = ("what",)

    def __init__(self, what: str, source=None):
        self.what, self.source = str(what), source

    def infer_types(self, x):
        if x.type.ndim < 2:
            raise ShapeError(f"{self.what} has {x.type.ndim} dims; a matrix is needed")
        return [x.type]

    def perform(self, x):
        shape = np.shape(x)
        if shape[-2] != shape[-1]:
            raise CheckedShapeError(
                f"{self.what} is not square: its last two dims are {shape[-2]} and "
                f"{shape[-1]} (shape {format_shape(shape)}, when the function ran)",
                self.source,
            )
        return np.array(x, copy=True)

    def grad(self, inputs, outputs, output_grads):
        return [output_grads[0]]


def square_matrices(x, what: str) -> Variable:
    """``x``, once its last two dims are checked to be equal when the function runs (no
    check where the types prove it: one int or one name); ``what`` names the op and x."""
    x = as_variable(x)
    rows, cols = x.type.shape[-2:]
    if rows == cols and rows is not None:
        return x
    checked = SquareMatrices(what, user_location())(x)
    checked.name = x.name  # (x itself, to the messages of what reads it)
    return checked
