"""Indexing with NumPy's semantics: ``x[...]``, ``set_subtensor``/``inc_subtensor`` (``take``
and ``take_along_axis``: symnb/ops/take.py).

An index is parsed once, when the node is built, into a hashable *spec*: one entry per index
item, with Python ints kept in the spec and symbolic parts (int scalars, index arrays, masks)
passed as extra inputs of the op, in order. Entries:

- ``("int", v)``: an integer index; ``v`` is an int or ``SYM`` (the next input, a 0-d int);
- ``("slice", start, stop, step)``: each an int, None or ``SYM``;
- ``("new",)``: ``None`` / ``np.newaxis``;
- ``("array",)``: an integer index array (the next input);
- ``("mask", ndim)``: a boolean mask (the next input) covering ``ndim`` axes of x.

``...`` is expanded into full slices; one that stands for no axes is kept as ``("...",)`` in
an advanced spec, where NumPy counts it as separating the advanced items. Basic specs (no
arrays or masks) build :class:`Subtensor`; the others build :class:`AdvancedSubtensor`,
whose result dims follow NumPy's rule: the broadcast index dims replace the indexed axes
when the advanced items are next to each other, and go first otherwise.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from symnb.core.array_kinds import inexact_integer
from symnb.core.dims import DimMismatch, broadcast_dims, format_shape, unify
from symnb.core.op import Op, _at_user_line, located_call
from symnb.core.shapes.hints import division_hint
from symnb.core.sugar import _spelled_index
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError, ShapeIndexError, UpdateError
from symnb.ops.broadcast import zeros_like as zeros
from symnb.ops.creation import arange
from symnb.ops.elemwise import cast, equal, fit_gradient
from symnb.ops.join import stack
from symnb.ops.shape import Shape, axis_size, reduced_size, reshape_like, squeeze

SYM = "sym"  # a spec slot filled by the op's next input
FULL = ("slice", None, None, None)
INT64 = np.iinfo(np.int64)


# -- parsing what users write --------------------------------------------------------------
def parse_index(x: Variable, index) -> tuple[tuple, list[Variable]]:
    """The spec and the symbolic inputs of ``x[index]``; errors name x and the index."""
    items = index if isinstance(index, tuple) else (index,)
    spec, inputs = [], []
    for item in items:
        spec.append(_parse_item(item, inputs, x))
    return _expand_ellipsis(x, spec), inputs


def _parse_item(item, inputs, x):
    if item is Ellipsis:
        return ("...",)
    if item is None:
        return ("new",)
    if isinstance(item, slice):
        start, stop, step = (_bound(b, inputs) for b in (item.start, item.stop, item.step))
        return ("slice", _clamped(start, INT64.min), _clamped(stop, INT64.min), _clamped(step))
    if isinstance(item, bool):
        raise DTypeError(f"index {item!r}: a Python bool is not an index (use a mask array)")
    if isinstance(item, numbers.Integral):
        return ("int", int(item))
    var = as_index_variable(item, x)
    if var.type.dtype.kind == "b":
        inputs.append(var)
        return ("mask", var.type.ndim)
    check_integer(var, "an index")
    inputs.append(var)
    return ("int", SYM) if var.type.ndim == 0 else ("array",)


def as_index_variable(item, x=None) -> Variable:
    """An index array: an empty list (``x[[]]``, ``[[]]``) is an empty int64 array, as NumPy
    takes it, not the float64 one ``np.asarray([])`` makes; a list (or tuple, nested or not)
    of numbers and 0-d variables is those stacked (``x[[i, j]]`` is ``x[sn.stack([i, j])]``),
    the array NumPy would make of their values. A list holding a variable of more dims is
    a ShapeError naming it (and x, the variable indexed, where given)."""
    if _empty_sequence(item):
        item = np.asarray(item, dtype=np.int64)
    elif _holds_variables(item, x):
        try:
            return _stacked(item)
        except ShapeError as exc:
            raise ShapeError(
                f"the rows of a list in {_index_of(x)} differ in length, so it is no array "
                f"(NumPy refuses it too): {exc.args[0]}"
            ) from None
    return as_variable(item)


def _index_of(x) -> str:
    return "an index" if x is None else f"the index of {x.describe()}"


def _empty_sequence(item) -> bool:
    return isinstance(item, (list, tuple)) and all(_empty_sequence(i) for i in item)


def _holds_variables(item, x) -> bool:
    """Whether a (nested) list holds a variable; each must be 0-d (a ShapeError names one
    that is not: NumPy would make an array of its value, which it has not yet)."""
    if not isinstance(item, (list, tuple)):
        return False
    variables = [leaf for leaf in _leaves(item) if isinstance(leaf, Variable)]
    for v in variables:
        if v.type.ndim:
            raise ShapeError(
                f"a list in {_index_of(x)} holds ints and integer scalar variables (stacked "
                f"into an index array), but {v.describe()} has {v.type.ndim} "
                f"dim{'s' if v.type.ndim > 1 else ''}: build the index array with sn.stack "
                "or sn.concatenate"
            )
    return bool(variables)


def _leaves(item):
    if isinstance(item, (list, tuple)):
        for part in item:
            yield from _leaves(part)
    else:
        yield item


def _stacked(item) -> Variable:
    """A nested list of numbers and 0-d variables stacked into one array (rows of unequal
    length are stack's ShapeError, as NumPy refuses a ragged index)."""
    if not isinstance(item, (list, tuple)):
        return item
    if not item:  # ``[[i], []]``: stack says the rows differ
        return np.zeros(0, dtype=np.int64)
    return stack([_stacked(part) for part in item])


def _bound(b, inputs):
    """A slice bound: a Python bool is the int 0 or 1 there, as in NumPy's ``x[True:]``."""
    if b is None or isinstance(b, numbers.Integral):
        return None if b is None else int(b)
    var = as_variable(b)
    check_integer(var, "a slice bound")
    if var.type.ndim != 0:
        raise ShapeError(f"a slice bound must be a scalar, not {var.describe()}")
    inputs.append(var)
    return SYM


def _clamped(bound, low=-INT64.max):
    """A constant bound brought into int64, where kernels hold it: no array is that long, so
    ``x[2**63:]`` and ``x[::10**20]`` select what they did (and ``-step`` cannot overflow)."""
    if not isinstance(bound, int):
        return bound
    return min(max(bound, low), INT64.max)


def check_integer(var, what):
    if var.type.dtype.kind not in "iu":
        raise DTypeError(
            f"{what} must have an integer dtype, not {var.describe()}" + division_hint(var)
        )


def _expand_ellipsis(x, spec):
    used = sum(_axes_used(e) for e in spec)
    if used > x.type.ndim:
        raise ShapeIndexError(
            f"too many indices for {x.describe()}: the index covers {used} axes, x has "
            f"{x.type.ndim}"
        )
    dots = [i for i, e in enumerate(spec) if e[0] == "..."]
    if len(dots) > 1:
        raise ShapeIndexError("an index can only have a single ellipsis ('...')")
    if dots:
        k, n = dots[0], x.type.ndim - used
        # an empty ``...`` still separates advanced items for NumPy (x[:, 0, ..., [0, 1]])
        spec[k : k + 1] = [FULL] * n if n or not is_advanced(spec) else [("...",)]
    return tuple(spec)


def _axes_used(entry) -> int:
    kind = entry[0]
    if kind == "mask":
        return entry[1]
    return 0 if kind in ("new", "...") else 1


def is_advanced(spec) -> bool:
    return any(e[0] in ("array", "mask") for e in spec)


# -- the static shape of x[spec] -----------------------------------------------------------
def indexed_shape(x: Variable, spec, inputs: list[Variable]) -> tuple:
    """The shape of ``x[index]`` from what is known when the node is built."""
    pieces, on_empty = _pieces(x, spec, inputs)
    dims_left = x.type.shape[sum(_axes_used(e) for e in spec) :]
    if not is_advanced(spec):
        return tuple(d for _, dims in pieces for d in dims) + dims_left
    advanced = [k for k, (adv, _) in enumerate(pieces) if adv]
    index_dims = _broadcast_index_shapes([dims for adv, dims in pieces if adv], inputs)
    if on_empty and known_size(index_dims):
        # NumPy checks an index array's values whenever the index arrays broadcast to a
        # non-empty shape: on an axis of length 0 every value is out of bounds
        axis, index = on_empty[0]
        raise ShapeIndexError(
            f"the index array {index.describe()} indexes axis {axis} of {x.describe()}, "
            "which is empty (size 0): every index is out of bounds"
        )
    plain = [dims for adv, dims in pieces if not adv]
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        before = [d for adv, dims in pieces[: advanced[0]] for d in dims]
        after = [d for adv, dims in pieces[advanced[-1] + 1 :] for d in dims]
        return tuple(before) + index_dims + tuple(after) + dims_left
    return index_dims + tuple(d for dims in plain for d in dims) + dims_left


def _pieces(x, spec, inputs):
    """Per spec entry: (is it an advanced item, the dims it contributes); and (axis, index)
    for each index array on an axis whose length is fixed at 0."""
    advanced = is_advanced(spec)
    feed = iter(inputs)
    axis, out, on_empty = 0, [], []
    for entry in spec:
        kind = entry[0]
        if kind in ("new", "..."):
            out.append((False, (1,) if kind == "new" else ()))
            continue
        dims = x.type.shape[axis : axis + _axes_used(entry)]
        if kind == "int":
            value = next(feed) if entry[1] == SYM else entry[1]
            _check_int_in_range(x, axis, value)
            out.append((advanced, ()))
        elif kind == "slice":
            bounds = [_constant_bound(next(feed)) if b == SYM else b for b in entry[1:]]
            out.append((False, (_slice_length(x, axis, *bounds),)))
        elif kind == "array":
            index = next(feed)
            _check_array_in_range(x, axis, index)
            if x.type.shape[axis] == 0:
                on_empty.append((axis, index))
            out.append((True, index.type.shape))
        else:
            out.append((True, (_mask_count(x, axis, dims, next(feed)),)))
        axis += _axes_used(entry)
    return out, on_empty


def known_size(shape) -> int:
    """The number of elements of ``shape`` where every dim is a known int, else 0."""
    return int(np.prod(shape)) if all(isinstance(d, int) for d in shape) else 0


def _check_int_in_range(x, axis, value):
    n = x.type.shape[axis]
    if isinstance(value, int) and not INT64.min <= value <= INT64.max:
        raise ShapeIndexError(
            f"index {value} is out of bounds for axis {axis} of {x.describe()}: an index "
            f"must fit in int64 (no axis is that long)"
        )
    if isinstance(value, Variable) and n == 0:
        raise ShapeIndexError(
            f"the index {value.describe()} indexes axis {axis} of {x.describe()}, which is "
            "empty (size 0): every index is out of bounds"
        )
    if isinstance(value, int) and isinstance(n, int) and not -n <= value < n:
        raise ShapeIndexError(
            f"index {value} is out of bounds for axis {axis} of {x.describe()} "
            + (f"(size {n}; valid: {-n}..{n - 1})" if n else "(size 0: it has no elements)")
        )


def _check_array_in_range(x, axis, index):
    n = x.type.shape[axis]
    if isinstance(index, Constant) and isinstance(n, int) and index.value.size:
        lo, hi = int(index.value.min()), int(index.value.max())
        if lo < -n or hi >= n:
            bad = lo if lo < -n else hi
            raise ShapeIndexError(
                f"index {bad} in an index array is out of bounds for axis {axis} of "
                f"{x.describe()} (size {n})"
            )


def _constant_bound(bound: Variable):
    """A slice bound given as a variable: its int where it is an integer constant (a graph's
    ``c[sn.constant(3):]``, check mode's ``c[x.shape[0]:]`` once the call's shapes decide
    it), so the slice's length is known; else ``SYM`` (not known)."""
    if isinstance(bound, Constant) and bound.type.ndim == 0 and bound.value.dtype.kind in "iu":
        return int(bound.value)
    return SYM


def _slice_length(x, axis, start, stop, step):
    """The slice's length when its bounds and the dim are fixed (``SYM`` bounds are not)."""
    n = x.type.shape[axis]
    if step == 0:
        raise ShapeError(f"slice step cannot be zero (axis {axis} of {x.describe()})")
    if start is None and stop is None and step in (None, 1, -1):
        return n  # the whole axis, maybe reversed: a named dim keeps its name
    static = all(b is None or isinstance(b, int) for b in (start, stop, step))
    if static and isinstance(n, int):
        return len(range(n)[slice(start, stop, step)])
    return None


def _mask_count(x, axis, dims, mask):
    """Elements selected by a mask: known only for a constant mask; checks the mask's shape."""
    for k, (a, b) in enumerate(zip(dims, mask.type.shape)):
        try:
            unify(a, b)
        except DimMismatch:
            raise ShapeIndexError(
                f"boolean mask {mask.describe()} does not fit {x.describe()}: mask axis {k} "
                f"has size {b} but the indexed axis {axis + k} has size {a}"
            ) from None
    return int(np.count_nonzero(mask.value)) if isinstance(mask, Constant) else None


def _broadcast_index_shapes(shapes, inputs) -> tuple:
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for axis in range(ndim):
        dim = 1
        for shape in padded:
            try:
                dim = broadcast_dims(dim, shape[axis])
            except DimMismatch:
                listed = ", ".join(format_shape(s) for s in shapes)
                raise ShapeIndexError(
                    f"index arrays cannot be broadcast together: shapes {listed}"
                ) from None
        out.append(dim)
    return tuple(out)


def numpy_index(spec, values) -> tuple:
    """The index tuple NumPy takes, with the symbolic slots filled from ``values``."""
    feed = iter(values)
    out = []
    for entry in spec:
        kind = entry[0]
        if kind == "new":
            out.append(None)
        elif kind == "...":
            out.append(Ellipsis)
        elif kind == "int":
            out.append(int(next(feed)) if entry[1] == SYM else entry[1])
        elif kind == "slice":
            out.append(slice(*[int(next(feed)) if b == SYM else b for b in entry[1:]]))
        else:
            out.append(np.asarray(next(feed)))
    return tuple(out)


def format_spec(spec) -> str:
    """The index as users wrote it, ``?`` for symbolic parts: ``[1:?, None, <array>]``."""
    return "[" + ", ".join(_format_entry(e) for e in spec) + "]"


def _format_entry(entry) -> str:
    kind = entry[0]
    if kind == "int":
        return "?" if entry[1] == SYM else str(entry[1])
    if kind == "slice":
        parts = ["?" if b == SYM else "" if b is None else str(b) for b in entry[1:]]
        return ":".join(parts[:2]) + (f":{parts[2]}" if entry[3] is not None else "")
    return {"new": "None", "array": "<array>", "...": "..."}.get(kind, "<mask>")


# -- the ops -------------------------------------------------------------------------------
class _Indexing(Op):
    """Shared parts of the read ops: the spec, its formatting and the type rule."""

    __props__ = ("spec",)
    dtype_rule = "the dtype of x"

    def __init__(self, spec):
        self.spec = tuple(spec)

    def __str__(self):
        return f"{self.op_name()}{format_spec(self.spec)}"

    __repr__ = __str__

    def infer_types(self, x, *index):
        return [x.type.with_shape(indexed_shape(x, self.spec, list(index)))]

    def perform(self, x, *index):
        return np.array(np.asarray(x)[numpy_index(self.spec, index)])

    def grad(self, inputs, outputs, output_grads):
        x, *index = inputs
        zeros = zeros_like(x, output_grads[0].type.dtype)
        scattered = IncSubtensor(self.spec, False)(zeros, output_grads[0], *index)
        return [scattered] + [None] * len(index)


class Subtensor(_Indexing):
    """``x[index]`` with ints, slices (symbolic bounds allowed), ``None`` and ``...``."""

    functions = ("getitem",)

    def output_label(self, node):
        """``x.shape[0]``: a fixed entry of a labelled shape (the size messages name)."""
        source = node.inputs[0]
        if source.owner is None or not isinstance(source.owner.op, Shape) or not source.label:
            return None
        if len(self.spec) != 1 or self.spec[0][0] != "int" or self.spec[0][1] == SYM:
            return None
        return f"{source.label}[{self.spec[0][1]}]"

    def symbolic_size(self, node, size_of):
        """``y.shape[k]`` is y's dim k (named, fixed, or y's own unknown size there)."""
        source = node.inputs[0].owner
        if source is None or not isinstance(source.op, Shape) or len(self.spec) != 1:
            return None
        kind, k = self.spec[0]
        return axis_size(source.inputs[0], k) if kind == "int" and k != SYM else None


class AdvancedSubtensor(_Indexing):
    """``x[index]`` with integer arrays or boolean masks (a mask's result dim is unknown); a
    list in the index may hold integer scalar variables among its ints (``x[[i, j]]``): they
    are stacked into the index array."""

    functions = ("getitem",)

    def perform(self, x, *index):
        """NumPy's advanced indexing makes a new array already: no second copy."""
        return np.asarray(np.asarray(x)[numpy_index(self.spec, index)])


class IncSubtensor(Op):
    """x with ``x[index]`` set to v (``set_instead``) or increased by v.

    Repeated indices accumulate when increasing (``np.add.at``); when setting, which of the
    repeated values lands is NumPy's choice (the last), and the gradient of v goes to that
    one only: the gradient stores each value's position the same way to learn which landed.
    """

    __props__ = ("spec", "set_instead")
    functions = ("set_subtensor", "inc_subtensor")
    dtype_rule = (
        "the dtype of x (v is cast to it; a lossy cast of kind, or a Python scalar x's dtype "
        "cannot hold, is refused)"
    )

    def __init__(self, spec, set_instead):
        self.spec, self.set_instead = tuple(spec), bool(set_instead)

    def __str__(self):
        name = "set_subtensor" if self.set_instead else "inc_subtensor"
        return f"{name}{format_spec(self.spec)}"

    __repr__ = __str__

    def infer_types(self, x, v, *index):
        target = indexed_shape(x, self.spec, list(index))
        _check_value_fits(self, x, v, target)
        return [x.type]

    def perform(self, x, v, *index):
        return self.update(np.array(x), v, *index)

    def update(self, out, v, *index):
        """``out`` (an array this op may write) with its indexed elements set or increased."""
        key = numpy_index(self.spec, index)
        v = np.asarray(v).astype(out.dtype, copy=False)
        if self.set_instead:
            out[key] = v
        elif is_advanced(self.spec):
            np.add.at(out, key, v)
        else:
            out[key] += v
        return out

    def grad(self, inputs, outputs, output_grads):
        x, v, *index = inputs
        (g,) = output_grads
        read = _read_op(self.spec)
        picked = read(g, *index)
        if self.set_instead and is_advanced(self.spec):
            picked = picked * _landed(self.spec, g, picked, index)
        gv = fit_value_gradient(picked, v)
        gx = IncSubtensor(self.spec, True)(g, zeros_scalar(g), *index) if self.set_instead else g
        return [gx, gv] + [None] * len(index)


def _landed(spec, x, picked, index):
    """1 where the value stored at each picked position is the one that stays when indices
    repeat (NumPy's set keeps the last), found by storing the positions' numbers likewise."""
    numbers = reshape_like(arange(reduced_size(picked, tuple(range(picked.type.ndim)))), picked)
    stored = IncSubtensor(spec, True)(zeros(x, "int64"), numbers, *index)
    return cast(equal(AdvancedSubtensor(spec)(stored, *index), numbers), picked.type.dtype)


def _check_scalar_fits(op, x, value):
    """A Python scalar stored (``x[i] = value``) or added (``x[i] += value``) by the rule of a
    variable or an array: refused for a change of kind (a float into integers, an int into
    bools, a complex into reals), and where x's dtype cannot hold it (an int beyond x's range;
    stored, an int beyond the integers a float holds exactly or a float that would become
    inf, while an increase computes as ``x + value`` does); a float rounds to a narrower float
    as a literal does. NumPy's ``a[0] = 0.5`` truncates silently."""
    dtype = x.type.dtype
    what = f"store {value!r} into" if op.set_instead else f"add {value!r} to"
    if dtype.kind not in _PYTHON_KINDS.get(type(value), dtype.kind):
        kind = type(value).__name__
        raise DTypeError(
            f"{op}: cannot {what} {x.describe()} without a change of kind (a Python {kind} "
            f"into {dtype.name}, which a cast would change); give a value of x's kind, or "
            "convert it yourself"
        )
    probe = np.zeros(1, dtype=dtype)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if op.set_instead:
                probe[0] = value
            else:
                np.add(probe, value, out=probe)
    except (OverflowError, ValueError, TypeError) as exc:
        held = (
            f"{dtype.name} holds {np.iinfo(dtype).min} to {np.iinfo(dtype).max}"
            if dtype.kind in "iu"
            else f"{dtype.name} holds {dtype.name} values"
        )
        raise DTypeError(
            f"{op}: cannot {what} {x.describe()}: {held}, and NumPy refuses it "
            f"({exc}); a cast would change the value"
        ) from None
    if op.set_instead and dtype.kind in "fc" and type(value) in (int, float):  # (rounded)
        inexact = inexact_integer([value], dtype) if type(value) is int else None
        if inexact is not None:
            exact = np.finfo(dtype).nmant + 1
            held = f"{dtype.name} holds integers exactly only up to 2**{exact}"
        elif np.isinf(probe[0]) and math.isfinite(value):
            held = f"{dtype.name} overflows to inf there"
        else:
            return
        raise DTypeError(
            f"{op}: cannot {what} {x.describe()}: {held}, and a cast would change the "
            "value; give a value x's dtype holds"
        )


#: the kinds of dtype a Python scalar of each type goes into without a change of kind
_PYTHON_KINDS = {bool: "biufc", int: "iufc", float: "fc", complex: "c"}


def _check_value_fits(op, x, v, target):
    weak = isinstance(v, Constant) and v.weak
    if weak:
        _check_scalar_fits(op, x, v.data)
    elif not np.can_cast(v.type.dtype, x.type.dtype, "same_kind"):
        raise DTypeError(
            f"{op}: cannot store {v.describe()} into {x.describe()} without a change of kind; "
            f"cast it with .astype('{x.type.dtype.name}')"
        )
    if v.type.ndim > len(target):
        raise ShapeError(
            f"{op}: value {v.describe()} has more dims than x{format_spec(op.spec)}, "
            f"of shape {format_shape(target)}"
            + (
                " (a set drops leading dims known to be 1, as NumPy does; an increase "
                "drops none, as np.add.at)"
            )
        )
    padded = (1,) * (len(target) - v.type.ndim) + v.type.shape
    for axis, (a, b) in enumerate(zip(padded, target)):
        if a == 1 or a is None or b is None:
            continue
        try:
            unify(a, b)
        except DimMismatch:
            raise ShapeError(
                f"{op}: value {v.describe()} does not broadcast to x{format_spec(op.spec)} "
                f"of {x.describe()}, of shape {format_shape(target)} (axis {axis}: "
                f"{a} vs {b})"
            ) from None


def _read_op(spec):
    return AdvancedSubtensor(spec) if is_advanced(spec) else Subtensor(spec)


# -- gradient helpers ----------------------------------------------------------------------
def zeros_scalar(like) -> Constant:
    return Constant(np.zeros((), dtype=like.type.dtype))


def zeros_like(x, dtype=None) -> Variable:
    """Zeros with x's runtime shape (``dtype`` defaults to x's)."""
    return zeros(x, dtype)


def fit_value_gradient(g, v) -> Variable:
    """The gradient of a broadcast value v: summed back to v's shape, in v's dtype."""
    return fit_gradient(g, v) if v.type.is_float else None


# -- public functions ----------------------------------------------------------------------
def getitem(x, index) -> Variable:
    """``x[index]`` with NumPy's semantics (basic, advanced and boolean-mask indexing)."""
    x = as_variable(x)
    spec, inputs = located_call(parse_index, x, index)
    return _read_op(spec)(x, *inputs)


def set_subtensor(x, index, v=None) -> Variable:
    """x with ``x[index] = v`` (NumPy assignment; v broadcasts); x itself is unchanged.
    Theano's spelling ``set_subtensor(x[index], v)`` builds the same node. Leading dims of v
    of length 1 beyond ``x[index]``'s rank are dropped, as NumPy does, except where NumPy
    drops none: an integer on every axis (``x[-1]``, ``x[i, j]``: one element, so v is 0-d)
    and one boolean mask over all of x's axes (v is 0-d or 1-d); there a v of more dims is a
    ShapeError, as NumPy refuses it ("setting an array element with a sequence")."""
    return _update(x, index, v, True)


def inc_subtensor(x, index, v=None) -> Variable:
    """x with ``x[index] += v``; repeated indices accumulate, as ``np.add.at``. Theano's
    spelling ``inc_subtensor(x[index], v)`` builds the same node."""
    return _update(x, index, v, False)


def _update(x, index, v, set_instead):
    x = as_variable(x)
    if v is None:  # Theano's spelling: the value came second
        x, spec, inputs, v = _theano_spelling(x, index, set_instead)
    else:
        spec, inputs = located_call(parse_index, x, index)
    v = as_variable(v)
    if set_instead:
        dots = index is not None and any(i is Ellipsis for i in _index_items(index))
        v = _without_leading_ones(x, spec, inputs, v, dots)
    return IncSubtensor(spec, set_instead)(x, v, *inputs)


def _index_items(index) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def _without_leading_ones(x, spec, inputs, v, dots: bool) -> Variable:
    """v less the leading dims of length 1 it has beyond x[index]'s rank, which NumPy's
    ``x[index] = v`` drops (``np.add.at``, and so an increase, refuses them). NumPy drops
    none where it stores without making a view, when the index has no ``...`` (``dots``):
    an integer on every axis stores one element (a v with dims is "setting an array element
    with a sequence") and a lone mask over every axis takes a 0-d or 1-d v only; a v of more
    dims there is a ShapeError naming both shapes."""
    target = located_call(indexed_shape, x, spec, list(inputs))
    extra = v.type.ndim - len(target)
    if extra <= 0:
        return v
    if not dots:
        _refuse_where_numpy_drops_no_ones(x, spec, v, target)
    if any(d != 1 for d in v.type.shape[:extra]):
        return v
    return squeeze(v, tuple(range(extra)))


def _refuse_where_numpy_drops_no_ones(x, spec, v, target) -> None:
    at = f"set_subtensor: x{format_spec(spec) if spec else '[()]'} of {x.describe()}"
    given = f"value {v.describe()} has shape {format_shape(v.type.shape)}"
    if len(spec) == x.type.ndim and all(e[0] == "int" for e in spec):
        raise _at_user_line(
            ShapeError(
                f"{at} is one element (an integer on every axis), of shape (), and {given}: "
                'NumPy refuses to store an array with dims there ("setting an array element '
                'with a sequence")\n  hint: store a 0-d value (v[0], or v.reshape(()))'
            )
        )
    if len(spec) == 1 and spec[0] == ("mask", x.type.ndim):
        raise _at_user_line(
            ShapeError(
                f"{at} is the elements a boolean mask over all of its axes picks, of shape "
                f"{format_shape(target)}, and {given}: NumPy stores a 0-d or 1-d value only "
                'there ("boolean array indexing assignment requires a 0 or 1-dimensional '
                'input")\n  hint: store v.reshape(-1)'
            )
        )


def _theano_spelling(view, v, set_instead):
    """``(x, spec, index inputs, v)`` from ``x[index]``, the first argument of the two-argument
    form; anything but an indexing result is an error that shows both spellings."""
    node = view.owner
    if node is None or not isinstance(node.op, (Subtensor, AdvancedSubtensor)):
        name = "set_subtensor" if set_instead else "inc_subtensor"
        raise _at_user_line(
            ArgumentError(
                f"{name}(x[index], v) takes an indexed variable first, got {view.describe()}; "
                f"write {name}(x[index], v) or {name}(x, index, v)"
            )
        )
    return node.inputs[0], node.op.spec, list(node.inputs[1:]), v


_NO_INDEX = object()  # ``x.at`` before ``[index]`` (None is an index: a new axis)


class IndexUpdate:
    """``x.at[index]``: ``.set(v)`` and ``.add(v)`` build the updated copy of x."""

    def __init__(self, x, index=_NO_INDEX):
        self.x, self.index = x, index

    def __getitem__(self, index):
        return IndexUpdate(self.x, index)

    def __setitem__(self, index, v):
        key = _spelled_index(index)
        raise self._misuse(f"at[{key}] = v", f"at[{key}].set(v)")

    def set(self, v) -> Variable:
        if self.index is _NO_INDEX:
            raise self._misuse("at.set(v)", "at[index].set(v)", "at[:].set(v)")
        return set_subtensor(self.x, self.index, v)

    def add(self, v) -> Variable:
        if self.index is _NO_INDEX:
            raise self._misuse("at.add(v)", "at[index].add(v)", "at[:].add(v)")
        return inc_subtensor(self.x, self.index, v)

    def _misuse(self, written, instead, every=None) -> UpdateError:
        """An update written so that it updates nothing: what to write, at the user's line."""
        x = self.x.message_name() or "x"
        also = f" ({x}.{every} for every element)" if every else ""
        return _at_user_line(
            UpdateError(
                f"{x}.{written} does not update {self.x.describe()}: write "
                f"{x} = {x}.{instead}{also}"
            )
        )
