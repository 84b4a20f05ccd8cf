"""Arrays made from a shape: ``alloc``/``broadcast_to``, ``zeros``/``ones``/``full`` (and
``*_like``), ``arange``, ``eye``, ``one_hot``.

A shape argument may be a tuple of ints and 0-d integer variables, one of them alone (the
shape ``(n,)``), or an int vector variable such as ``x.shape``. It becomes one int64 vector
input of the op, and the op's ``dims`` prop keeps what is known statically: ints stay ints,
and ``x.shape`` brings x's own dims (names included), so ``zeros_like(x)`` has exactly x's
type.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from symnb.config import config
from symnb.core.dims import (
    MAX_DIM,
    DimExpr,
    format_dim,
    format_shape,
    is_int,
    normalize_dim,
    too_large,
)
from symnb.core.dims import add as dim_add
from symnb.core.dims import floordiv as dim_floordiv
from symnb.core.op import Op, _at_user_line
from symnb.core.shapes.hints import division_hint
from symnb.core.types import TensorType, as_dtype, dtype_arg
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError, ShapeTypeError
from symnb.ops._axes import diagonal_offset
from symnb.ops._dtypes import probe_dtype
from symnb.ops.broadcast import Alloc, full_like, ones_like, zeros_like  # noqa: F401 - re-exported
from symnb.ops.elemwise import cast
from symnb.ops.join import stack
from symnb.ops.numpy_api import numpy_keywords
from symnb.ops.shape import Shape
from symnb.ops.shape import shape as shape_of


class Arange(Op):
    """Evenly spaced values in [start, stop) (``np.arange``); the length is static when the
    bounds are constants."""

    dtype_rule = "``dtype``, else NumPy's for the bounds (``np.arange``)"
    __props__ = ("dtype",)
    differentiable = False

    def __init__(self, dtype=None):
        self.dtype = None if dtype is None else as_dtype(dtype).name

    def infer_types(self, start, stop, step):
        for v in (start, stop, step):
            if v.type.ndim != 0:
                raise ShapeError(f"arange: bounds and step are scalars, not {v.describe()}")
        stop_dim = _static_number(stop)
        if stop_dim is None and stop.type.dtype.kind in "iu":
            stop_dim = _dim_of_shape_entry(stop)
        length = _arange_length(_static_number(start), stop_dim, _static_number(step))
        return [TensorType(probe_dtype(self, self.perform, [start, stop, step]), (length,))]

    def perform(self, start, stop, step):
        bounds = [np.asarray(v) for v in (start, stop, step)]
        if all(v.dtype.kind in "iu" for v in bounds):  # (``arange(y.shape[0])``)
            # as Python ints, in the dtype NumPy gives these bounds: 4x faster than NumPy's
            # arange of 0-d arrays (1 us, not 4.5, for 600 values)
            dtype = self.dtype or _arange_dtype(*(v.dtype for v in bounds))
            return np.arange(*(int(v) for v in bounds), dtype=dtype)
        return np.arange(start, stop, step, dtype=self.dtype)

    def grad(self, inputs, outputs, output_grads):
        return [None, None, None]


@functools.cache
def _arange_dtype(*dtypes) -> np.dtype:
    """The dtype ``np.arange`` gives for 0-d integer bounds of these dtypes."""
    return np.arange(*(np.array(n, d) for n, d in zip((0, 1, 1), dtypes))).dtype


class Eye(Op):
    """An n x m matrix with ones on the k-th diagonal (``np.eye``)."""

    dtype_rule = "``dtype``, else config.floatX (float64 by default)"
    __props__ = ("k", "dtype")
    differentiable = False

    def __init__(self, k=0, dtype=None):
        self.k, self.dtype = int(k), as_dtype(config.floatX if dtype is None else dtype).name

    def infer_types(self, n, m):
        for v in (n, m):
            if v.type.ndim != 0 or v.type.dtype.kind not in "iu":
                raise DTypeError(f"eye: sizes are integer scalars, not {v.describe()}")
        return [TensorType(self.dtype, (_static_size(n), _static_size(m)))]

    def perform(self, n, m):
        return np.eye(int(n), int(m), self.k, dtype=self.dtype)

    def grad(self, inputs, outputs, output_grads):
        return [None, None]


class OneHot(Op):
    """``indices`` as one-hot rows of length ``depth`` (a new last axis); a depth known only
    at run time (``y.max() + 1``, ``n_classes``) is a second input, ``depth`` then None."""

    dtype_rule = "``dtype``, else config.floatX (float64 by default)"
    __props__ = ("depth", "dtype")
    differentiable = False

    def __init__(self, depth: int | None, dtype=None):
        self.depth = None if depth is None else int(depth)
        self.dtype = as_dtype(config.floatX if dtype is None else dtype).name

    def infer_types(self, indices, *depth):
        if indices.type.dtype.kind not in "iu":
            raise DTypeError(f"one_hot: indices must be integers, not {indices.describe()}")
        if len(depth) != (self.depth is None):
            raise ShapeError("one_hot: the depth is given either as a prop or as an input")
        n = self.depth if self.depth is not None else _static_size(depth[0])
        n = None if isinstance(n, int) and n < 0 else n
        return [TensorType(self.dtype, indices.type.shape + (n,))]

    def perform(self, indices, *depth):
        indices = np.asarray(indices)
        n = self.depth if self.depth is not None else int(depth[0])
        if n < 0:
            raise ValueError(f"one_hot: depth must be >= 0, not {n}")
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            bad = indices[(indices < 0) | (indices >= n)].flat[0]
            raise IndexError(f"one_hot: index {bad} is outside [0, {n})")
        return (indices[..., None] == np.arange(n)).astype(self.dtype)

    def grad(self, inputs, outputs, output_grads):
        return [None] * len(inputs)


# -- shape arguments -----------------------------------------------------------------------
def _static_number(var: Variable):
    """The Python number a 0-d constant holds; None for anything computed."""
    return var.value.item() if isinstance(var, Constant) and var.type.ndim == 0 else None


def _static_size(var: Variable):
    """The dim a size variable stands for: an int, the dim behind ``x.shape[i]``, or None."""
    n = _static_number(var)
    return int(n) if n is not None else _dim_of_shape_entry(var)


def _dim_of_shape_entry(var: Variable):
    """x's dim i when var is ``x.shape[i]`` with a fixed int i, else None: a symbolic i
    (``x.shape[k]``, the spec's ``SYM`` slot) picks a dim only known at run time."""
    node = var.owner
    if node is None or node.op.op_name() != "subtensor":
        return None
    spec = getattr(node.op, "spec", None)
    source = node.inputs[0].owner
    if source is None or not isinstance(source.op, Shape) or not spec or len(spec) != 1:
        return None
    kind, index = spec[0][0], spec[0][-1]
    fixed = kind == "int" and isinstance(index, int)
    return source.inputs[0].type.shape[index] if fixed else None


def _arange_length(start, stop, step):
    """The static length of arange: an int for constant bounds, ``ceil(stop / step)`` as a dim
    when it starts at 0 with a positive constant step, else None."""
    if step == 0:
        raise ShapeError("arange: step is 0")
    if None not in (start, stop, step) and not isinstance(stop, (str, DimExpr)):
        return _constant_arange_length(start, stop, step)
    if start == 0 and isinstance(step, int) and step > 0 and stop is not None:
        return dim_floordiv(dim_add(stop, step - 1), step)
    return None


def _constant_arange_length(start, stop, step) -> int | None:
    """``len(np.arange(start, stop, step))`` for Python numbers, as NumPy computes it (its
    ``_calc_length``): ``ceil((stop - start) / step)`` in floats, at least 0, but 1 where the
    quotient is a zero of a nonzero span by an infinite step (``arange(0, 10, inf)`` is
    ``[0.]``); a quotient NumPy cannot take (NaN, infinite, past int64 either way) is
    NumPy's ValueError, a ShapeError naming arange here. None (NumPy's, when it runs) for complex
    bounds."""
    call = f"arange({start!r}, {stop!r}, {step!r})"
    delta = stop - start
    try:
        quotient = delta / step
    except OverflowError:  # an int span too large for a float
        quotient = math.inf
    if isinstance(quotient, complex):
        return None
    if math.isnan(quotient) or math.isinf(quotient):
        numpys = "cannot compute length" if math.isnan(quotient) else "Maximum allowed size"
        raise ShapeError(
            f"{call}: cannot compute the length: (stop - start) / step is {quotient} (NumPy "
            f"refuses it too: {numpys!r})"
        )
    if not -MAX_DIM - 1 <= math.ceil(quotient) <= MAX_DIM:  # (NumPy's bounds, both ways)
        raise ShapeError(
            f"{call}: (stop - start) / step is {quotient}, past int64 (NumPy: 'Maximum "
            "allowed size exceeded'); an array has at most 2**63-1 elements"
        )
    if quotient == 0.0 and delta != 0:  # the span divided by an infinite step
        return 0 if math.copysign(1.0, quotient) < 0 else 1
    return max(0, math.ceil(quotient))


def shape_operand(shape) -> tuple[tuple, Variable]:
    """(static dims, int64 vector variable) for a shape as users write it: a scalar (an int,
    or an integer scalar such as ``x.shape[0]``) is the shape ``(n,)``, as in ``np.zeros(n)``."""
    if isinstance(shape, Variable) and shape.type.ndim != 0:
        return _vector_shape(shape)
    if _is_scalar_size(shape):
        entries = (shape,)
    elif isinstance(shape, (tuple, list, np.ndarray)):
        entries = tuple(shape)
    else:
        raise ShapeTypeError(f"a shape is an int, a tuple or an int vector, not {shape!r}")
    for e in entries:
        if is_int(e) and too_large(int(e)):
            raise ShapeError(f"the size {too_large(int(e))}")
    if all(is_int(e) for e in entries):
        if any(int(e) < 0 for e in entries):
            raise ShapeError(f"negative dimensions are not allowed: {entries}")
        dims = tuple(int(e) for e in entries)
        return dims, Constant(np.array(dims, dtype=np.int64))
    variables = [_size_entry(e) for e in entries]
    dims = tuple(_static_size(v) for v in variables)
    return dims, stack([cast(v, "int64") for v in variables])


def _is_scalar_size(shape) -> bool:
    if isinstance(shape, Variable):
        return shape.type.ndim == 0
    return isinstance(shape, numbers.Integral) or isinstance(shape, np.ndarray) and shape.ndim == 0


def _size_entry(entry) -> Variable:
    if isinstance(entry, str) or entry is None:
        raise ShapeError(
            f"a size in a shape must be known at run time: {entry!r} is not; "
            "use an int or a size such as x.shape[0]"
        )
    var = as_variable(entry)
    if var.type.ndim != 0 or var.type.dtype.kind not in "iu":
        raise DTypeError(
            f"a size in a shape is an int or an integer scalar variable, not {var.describe()}"
            + division_hint(entry if isinstance(entry, float) else var)
        )
    return var


def _vector_shape(var: Variable) -> tuple[tuple, Variable]:
    if var.type.ndim != 1 or var.type.dtype.kind not in "iu":
        raise DTypeError(f"a shape is an integer vector, not {var.describe()}")
    if var.owner is not None and isinstance(var.owner.op, Shape):
        return var.owner.inputs[0].type.shape, var
    if isinstance(var, Constant):
        return tuple(int(n) for n in var.value), cast(var, "int64")
    if var.type.shape[0] is None or not isinstance(var.type.shape[0], int):
        raise ShapeError(f"the length of shape {var.describe()} must be known statically")
    return (None,) * var.type.shape[0], cast(var, "int64")


# -- public functions ----------------------------------------------------------------------
def broadcast_to(x, shape) -> Variable:
    """x broadcast to ``shape`` (ints, integer scalars, or a vector such as ``y.shape``); an
    entry may also name one of x's own dims (``(3, "batch")`` for x of ``("batch",)``, or a
    name where x's dim is unknown), or be None where it lines up with an axis of x: its size
    then comes from x when the function runs, and broadcasting is checked by name."""
    return _broadcast_to(x, shape, "broadcast_to")


def _broadcast_to(x, shape, what: str) -> Variable:
    """``broadcast_to``, its shape errors naming ``what`` (the function called)."""
    x = as_variable(x)
    try:
        sizes, named = _own_sizes(x, shape)
    except ShapeError as exc:
        raise _at_user_line(exc) from None
    return _alloc(x, sizes, named, what)


def _alloc(value: Variable, shape, named=None, what: str = "alloc") -> Variable:
    """``value`` broadcast to ``shape`` as users write shapes (a name is no size here),
    with the dims at the positions of ``named`` given by name; a bad shape is an error
    naming ``what``."""
    try:
        dims, vector = shape_operand(shape)
    except (ShapeError, DTypeError) as exc:
        raise _at_user_line(type(exc)(f"{what}: {exc.args[0]}")) from None
    named = named or {}
    return Alloc(tuple(named.get(i, d) for i, d in enumerate(dims)))(value, vector)


def _own_sizes(x: Variable, shape) -> tuple[object, dict]:
    """``shape`` with each name, and each None, replaced by x's size there (``x.shape[k]``,
    whose static dim is x's own), and {position: the name} for the names."""
    if not isinstance(shape, (tuple, list)):
        return shape, {}
    entries, named = list(shape), {}
    lead = len(entries) - x.type.ndim
    for i, entry in enumerate(entries):
        if entry is None or isinstance(entry, (str, DimExpr)):
            axis, dim = _own_axis(x, shape, i, lead)
            entries[i] = shape_of(x)[axis]
            if dim is not None:
                named[i] = dim
    return tuple(entries), named


def _own_axis(x: Variable, shape, i: int, lead: int) -> tuple[int, object]:
    """The axis of x whose size the entry ``shape[i]`` stands for: for None, or a dim that x
    has (or leaves unknown) at the axis it lines up with, that axis; else the first axis of
    x with that dim. Also the entry as a dim (None for None)."""
    entry, own = shape[i], x.type.shape
    aligned = i - lead if i >= lead else None
    if entry is None:
        if aligned is None:
            raise ShapeError(
                f"broadcast_to: None at position {i} of the target shape {format_shape(shape)} "
                f"lines up with no axis of {x.describe()}; None keeps that value's own size, "
                "so give a size there (an int or a symbolic size such as y.shape[0])"
            )
        return aligned, None
    try:
        dim = normalize_dim(entry)
    except (TypeError, ValueError):
        dim = entry  # not a dim at all: shape_operand says what a shape takes
    if aligned is not None and own[aligned] in (dim, None):
        return aligned, dim
    if dim in own:
        return own.index(dim), dim
    raise ShapeError(
        f"broadcast_to: {format_dim(dim)!r} in the target shape {format_shape(shape)} is not a "
        f"dim of {x.describe()}; a name in the target takes its size from that value's dim of "
        "the same name, so give any other size as an int or a symbolic size (y.shape[0])"
    )


def alloc(value, *shape) -> Variable:
    """Theano's ``alloc(value, *shape)``: value broadcast to the shape."""
    shape = shape[0] if len(shape) == 1 and _is_vector(shape[0]) else shape
    return _broadcast_to(value, shape, "alloc")


def _is_vector(entry) -> bool:
    return isinstance(entry, Variable) and entry.type.ndim == 1 or isinstance(entry, (tuple, list))


def full(shape, fill_value, dtype=None) -> Variable:
    """An array of ``fill_value``; dtype from the value as in ``np.full`` unless given (a
    symbolic fill is cast to it, as ``np.full`` casts its fill)."""
    return _full(shape, fill_value, dtype, "full")


def _full(shape, fill_value, dtype, what: str) -> Variable:
    if dtype is None:
        value = as_variable(fill_value)
    elif isinstance(fill_value, Variable):
        value = cast(fill_value, dtype_arg(dtype, what, None))
    else:
        value = Constant(fill_value, dtype=dtype_arg(dtype, what, None), casting="unsafe")
    return _alloc(value, shape, None, what)


def zeros(shape, dtype=None) -> Variable:
    """An array of zeros (dtype ``sn.config.floatX`` unless given; float64 by default)."""
    return _full(shape, 0, dtype_arg(dtype, "zeros", config.floatX), "zeros")


def ones(shape, dtype=None) -> Variable:
    """An array of ones (dtype ``sn.config.floatX`` unless given; float64 by default)."""
    return _full(shape, 1, dtype_arg(dtype, "ones", config.floatX), "ones")


def arange(start=None, stop=None, step=1, dtype=None) -> Variable:
    """``np.arange``: bounds may be numbers or scalar variables (``arange(x.shape[0])``);
    one bound is the stop (``arange(4)``, ``arange(stop=4)``), a step of None is 1."""
    if stop is None and start is None:
        raise _at_user_line(ArgumentError("arange: give the stop (arange(4), arange(stop=4))"))
    if stop is None:
        start, stop = 0, start
    start, step = 0 if start is None else start, 1 if step is None else step
    return Arange(None if dtype is None else dtype_arg(dtype, "arange", None))(start, stop, step)


@numpy_keywords
def eye(n, m=None, k: int = 0, dtype=None) -> Variable:
    """An n x m matrix (m defaults to n) with ones on the k-th diagonal (NumPy's ``N=`` and
    ``M=`` name n and m)."""
    m = n if m is None else m
    for what, size in (("n", n), ("m", m)):
        if is_int(size) and size < 0:
            raise _at_user_line(ShapeError(f"eye: {what}={size} is negative; a size is >= 0"))
        if is_int(size) and too_large(size):
            raise _at_user_line(ShapeError(f"eye: {what}={too_large(size)}"))
    return Eye(diagonal_offset(k, "eye"), dtype_arg(dtype, "eye", config.floatX))(n, m)


def one_hot(indices, depth, dtype=None) -> Variable:
    """One-hot rows of length ``depth`` for integer ``indices`` (Theano's ``to_one_hot``);
    ``depth`` is an int or an integer scalar variable."""
    indices = as_variable(indices)
    dtype = dtype_arg(dtype, f"one_hot of {indices.describe()}", config.floatX)
    if isinstance(depth, Constant) and depth.type.ndim == 0:
        depth = depth.value.item()
    if isinstance(depth, Variable):
        if depth.type.ndim != 0 or depth.type.dtype.kind not in "iu":
            raise _at_user_line(
                DTypeError(f"one_hot: depth must be an integer scalar, not {depth.describe()}")
            )
        return OneHot(None, dtype)(indices, cast(depth, "int64"))
    if not is_int(depth):
        message = (
            f"one_hot of {indices.describe()}: depth is an int or an integer scalar variable, "
            f"not {depth!r}"
        )
        raise _at_user_line(ShapeTypeError(message))
    if depth < 0 or too_large(depth):
        why = f"must be >= 0, not {depth}" if depth < 0 else too_large(depth)
        raise _at_user_line(ShapeError(f"one_hot of {indices.describe()}: depth {why}"))
    return OneHot(depth, dtype)(indices)
