"""The type of a symbolic tensor: a dtype plus a shape of dims (see :mod:`symnb.core.dims`)."""

from __future__ import annotations

import numpy as np

from symnb.core.dims import Dim, format_shape, normalize_shape
from symnb.core.hooks import hook
from symnb.errors import DTypeError

#: the most dims a tensor may have: every runtime (the C runner, the kernels' argument arrays)
#: is built for this many, and a variable with more is an error where it is built
MAX_RANK = 32

_SHORT = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
}
_LONG = {v: k for k, v in _SHORT.items()}
#: the supported dtypes as objects: every node's type passes through as_dtype, and most
#: already hold one of these (the check of its name is the slow part)
_SUPPORTED = frozenset(np.dtype(name) for name in _SHORT)
_DTYPE_CLASSES = frozenset(type(dt) for dt in _SUPPORTED)


def as_dtype(dtype) -> np.dtype:
    """Accept a dtype, its name, or a short name ("f32"); in native byte order, the order
    kernels read (a '>f8' type would have them read big-endian bytes as native doubles).
    A string NumPy reads means what NumPy says ("i8" is int64, as in ``x.astype("i8")``);
    the short display names are read only where NumPy reads nothing ("f32", "i64")."""
    if type(dtype) in _DTYPE_CLASSES and dtype in _SUPPORTED:
        return dtype
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        if not (isinstance(dtype, str) and dtype in _LONG):
            raise DTypeError(f"{dtype!r} is not a dtype") from exc
        dt = np.dtype(_LONG[dtype])
    if dt.name not in _SHORT:
        raise DTypeError(_unsupported(dtype, dt))
    return dt if dt.isnative else dt.newbyteorder("=")


def dtype_arg(dtype, what: str, default) -> np.dtype:
    """A function's ``dtype`` argument: ``default`` for None alone, any other value read by
    :func:`as_dtype`, its DTypeError naming ``what``. (``dtype or default`` took False, ""
    and 0, most often a positional argument out of place, ``zeros(shape, 0)``, as no dtype;
    NumPy refuses them.)"""
    try:
        return as_dtype(default if dtype is None else dtype)
    except DTypeError as exc:
        raise DTypeError(f"{what}: {exc.args[0]}") from None


def _unsupported(asked, dt: np.dtype) -> str:
    """Why ``asked`` (read by NumPy as ``dt``) is refused, with the spelling meant if any."""
    message = f"symnb does not support dtype {dt.name}"
    if dt.kind == "f" and dt.itemsize > 8:
        message += " (symnb computes up to float64)"
    if asked == "f16":
        message += "; for float16 write 'float16' (NumPy reads 'f16' as a 16-byte float)"
    return message


def short_dtype(dtype) -> str:
    return _SHORT[np.dtype(dtype).name]


#: (dtype, shape) -> the TensorType of it that :meth:`TensorType.of` hands out
_INTERNED: dict = {}
_MAX_INTERNED = 1 << 14


class TensorType:
    """dtype + shape. Equal types describe the same set of arrays; hashable and immutable."""

    __slots__ = ("dtype", "shape", "ndim")

    def __init__(self, dtype, shape):
        object.__setattr__(self, "dtype", as_dtype(dtype))
        object.__setattr__(self, "shape", shape := normalize_shape(shape))
        object.__setattr__(self, "ndim", len(shape))  # read everywhere: stored, not computed

    def __setattr__(self, name, value):
        raise AttributeError("TensorType is immutable")

    def __reduce__(self):
        """Pickled as its constructor call (unpickling must not set attributes)."""
        return TensorType, (self.dtype, self.shape)

    def __eq__(self, other):
        return (
            isinstance(other, TensorType)
            and self.dtype == other.dtype
            and self.shape == other.shape
        )

    def __hash__(self):
        return hash((self.dtype, self.shape))

    @classmethod
    def of(cls, dtype: np.dtype, shape: tuple[Dim, ...]) -> TensorType:
        """The type of a rule's output whose dtype is a supported ``np.dtype`` and whose shape
        is a tuple of dims taken from other types (so already canonical): one shared object
        per (dtype, shape), found by one dict lookup, so building a node makes no new type
        (the checks of the constructor run once, when a pair is first seen)."""
        key = (dtype, shape)
        found = _INTERNED.get(key)
        if found is None:
            found = cls(dtype, shape)
            if len(_INTERNED) >= _MAX_INTERNED:  # a program of many shapes: start again
                _INTERNED.clear()
            _INTERNED[key] = found
        return found

    def with_shape(self, shape: tuple[Dim, ...]) -> TensorType:
        return TensorType(self.dtype, shape)

    def with_dtype(self, dtype) -> TensorType:
        return TensorType(dtype, self.shape)

    @property
    def is_float(self) -> bool:
        """A floating-point dtype, real or complex (NumPy's inexact kinds): the values a
        gradient flows through. A rewrite whose identity holds for real numbers only asks
        ``is_real_float`` (``log(1 + x)`` is not ``log1p(x)`` at a complex x of imaginary
        part -0.0: the sign of that zero picks the side of log's branch cut)."""
        return self.dtype.kind in "fc"

    @property
    def is_real_float(self) -> bool:
        """A real floating-point dtype (float16, float32, float64), not complex."""
        return self.dtype.kind == "f"

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Theano's pattern: True for each dim fixed at 1."""
        return tuple(type(d) is int and d == 1 for d in self.shape)

    def __call__(self, name: str | None = None):
        """A new input variable of this type (Theano's ``x.type("y")``)."""
        return hook("variable_of_type")(self, name)

    make_variable = __call__

    def filter(self, data, strict: bool = False, allow_downcast=None) -> np.ndarray:
        """``data`` as an array of this type, or TypeError/ValueError saying why not.
        ``strict``: it must be an array of this dtype already; otherwise a cast that loses
        nothing is made (``allow_downcast=True``: any cast; None: also one whose values
        survive unchanged, as Theano's)."""
        if strict and not (isinstance(data, np.ndarray) and data.dtype == self.dtype):
            raise TypeError(f"{self}: strict filter needs an ndarray of {self.dtype.name}")
        array = np.asarray(data)
        if array.dtype != self.dtype:
            cast = array.astype(self.dtype)
            safe = np.can_cast(array.dtype, self.dtype, "safe")
            kept = allow_downcast is None and np.array_equal(cast, array)
            if not (allow_downcast or safe or kept):
                raise TypeError(
                    f"{self}: a {array.dtype.name} value cannot be converted to "
                    f"{self.dtype.name} without loss (allow_downcast=True to force it)"
                )
            array = cast
        if array.ndim != self.ndim:
            raise TypeError(f"{self}: a value of {self.ndim} dims, not {array.ndim}")
        for axis, (dim, size) in enumerate(zip(self.shape, array.shape, strict=True)):
            if type(dim) is int and dim != size:
                raise ValueError(f"{self}: dim {axis} must be {dim}, not {size}")
        return array

    def __str__(self):
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{short_dtype(self.dtype)}[{dims}]"

    def __repr__(self):
        return f"TensorType({self.dtype.name}, {format_shape(self.shape)})"
