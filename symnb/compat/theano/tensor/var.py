"""Theano's typed constructors (``T.matrix``, ``T.ivector``, ``T.TensorType``...).

A Theano type is a dtype and a *broadcastable* pattern: True marks a dim of length 1 that
broadcasts, False a dim of any length. In symnb that is a shape whose dims are 1 or unknown
(None), so ``T.row()`` is ``(1, None)`` and ``T.matrix()`` is ``(None, None)``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from symnb.compat.theano.configparser import resolve_dtype
from symnb.config import config
from symnb.core import array_kinds
from symnb.core.hooks import register
from symnb.core.op import _at_user_line
from symnb.core.types import TensorType as _SymnbType
from symnb.core.types import dtype_arg
from symnb.core.variable import Constant, SharedVariable, Variable, as_variable
from symnb.errors import DTypeError, InputError
from symnb.ops.elemwise import _Logical


def shape_of(broadcastable) -> tuple:
    """symnb dims for a Theano broadcastable pattern: 1 where True, unknown where False."""
    return tuple(1 if b else None for b in broadcastable)


class TensorType:
    """``T.TensorType(dtype, broadcastable)``: call it (``ttype("x")``) for a variable."""

    def __init__(self, dtype, broadcastable, name=None, shape=None):
        self.dtype = dtype_arg(resolve_dtype(dtype), "TensorType", None).name
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        self.name = name
        self.shape = shape_of(self.broadcastable) if shape is None else tuple(shape)
        if len(self.shape) != len(self.broadcastable):
            raise ValueError(
                f"TensorType: shape {self.shape} and broadcastable {self.broadcastable} "
                "have different lengths"
            )

    @property
    def ndim(self) -> int:
        return len(self.broadcastable)

    def symnb_type(self) -> _SymnbType:
        return _SymnbType(self.dtype, self.shape)

    def __call__(self, name=None) -> Variable:
        return TensorVariable(self.symnb_type(), name=name)

    make_variable = __call__

    def filter(self, data, strict=False, allow_downcast=None) -> np.ndarray:
        """``data`` as an array of this type (symnb's ``TensorType.filter``)."""
        return self.symnb_type().filter(data, strict, allow_downcast)

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.dtype, self.shape) == (
            other.dtype,
            other.shape,
        )

    def __hash__(self):
        return hash((self.dtype, self.shape))

    def __repr__(self):
        return f"TensorType({self.dtype}, {self.broadcastable})"


def tensor(*args, name=None, **kwargs) -> Variable:
    """``T.tensor(dtype, broadcastable, name=None)``."""
    return TensorType(*args, **kwargs)(name)


#: Theano's one-letter dtype prefixes, in the order the families below unpack them
PREFIXES = (
    ("b", "int8"),
    ("w", "int16"),
    ("i", "int32"),
    ("l", "int64"),
    ("f", "float32"),
    ("d", "float64"),
    ("c", "complex64"),
    ("z", "complex128"),
)
#: the broadcastable pattern of each kind of constructor
KINDS = {
    "scalar": (),
    "vector": (False,),
    "matrix": (False, False),
    "row": (True, False),
    "col": (False, True),
    "tensor3": (False,) * 3,
    "tensor4": (False,) * 4,
    "tensor5": (False,) * 5,
    "tensor6": (False,) * 6,
    "tensor7": (False,) * 7,
}


def _generic(kind: str):
    """``T.matrix(name=None, dtype=None)``: dtype defaults to floatX when called."""
    pattern = KINDS[kind]

    def make(name=None, dtype=None):
        dtype = dtype_arg(resolve_dtype(dtype), f"T.{kind}", config.floatX)
        return TensorType(dtype, pattern)(name)

    make.__name__ = make.__qualname__ = kind
    make.__doc__ = f"A symbolic {kind} (dtype ``theano.config.floatX`` unless given)."
    return make


def _family(kind: str) -> tuple:
    """``bmatrix, wmatrix, imatrix, lmatrix, fmatrix, dmatrix, cmatrix, zmatrix``."""
    makers = []
    for prefix, dtype in PREFIXES:

        def make(name=None, _dtype=dtype):
            return TensorType(_dtype, KINDS[kind])(name)

        make.__name__ = make.__qualname__ = prefix + kind
        make.__doc__ = f"A symbolic {dtype} {kind}."
        makers.append(make)
    return tuple(makers)


scalar, vector, matrix, row, col = (
    _generic(k) for k in ("scalar", "vector", "matrix", "row", "col")
)
tensor3, tensor4, tensor5, tensor6, tensor7 = (
    _generic(k) for k in ("tensor3", "tensor4", "tensor5", "tensor6", "tensor7")
)
bscalar, wscalar, iscalar, lscalar, fscalar, dscalar, cscalar, zscalar = _family("scalar")
bvector, wvector, ivector, lvector, fvector, dvector, cvector, zvector = _family("vector")
bmatrix, wmatrix, imatrix, lmatrix, fmatrix, dmatrix, cmatrix, zmatrix = _family("matrix")
brow, wrow, irow, lrow, frow, drow, crow, zrow = _family("row")
bcol, wcol, icol, lcol, fcol, dcol, ccol, zcol = _family("col")
btensor3, wtensor3, itensor3, ltensor3, ftensor3, dtensor3, ctensor3, ztensor3 = _family("tensor3")
btensor4, wtensor4, itensor4, ltensor4, ftensor4, dtensor4, ctensor4, ztensor4 = _family("tensor4")
btensor5, wtensor5, itensor5, ltensor5, ftensor5, dtensor5, ctensor5, ztensor5 = _family("tensor5")
btensor6, wtensor6, itensor6, ltensor6, ftensor6, dtensor6, ctensor6, ztensor6 = _family("tensor6")
btensor7, wtensor7, itensor7, ltensor7, ftensor7, dtensor7, ctensor7, ztensor7 = _family("tensor7")


#: the plural of each kind of constructor, as Theano spells it
PLURALS = {
    "scalar": "scalars",
    "vector": "vectors",
    "matrix": "matrices",
    "row": "rows",
    "col": "cols",
    "tensor3": "tensor3s",
    "tensor4": "tensor4s",
    "tensor5": "tensor5s",
    "tensor6": "tensor6s",
    "tensor7": "tensor7s",
}


def _plural(single, kind: str):
    """Theano's plural constructors (its ``_multi``): ``T.dmatrices("a", "b")`` makes one
    variable per name (a single variable for one name), ``T.matrices(3)`` a list of three
    unnamed ones, and one string or list alone is the sequence of names, so
    ``x, y = T.vectors("xy")`` names them "x" and "y" (``T.vectors("x")`` is one vector)."""

    def make(*names):
        if len(names) == 1 and isinstance(names[0], numbers.Integral):
            return [single() for _ in range(names[0])]
        if len(names) == 1 and isinstance(names[0], (str, list, tuple)):
            names = names[0]
        made = [single(name) for name in names]
        return made[0] if len(made) == 1 else made

    make.__name__ = make.__qualname__ = single.__name__[: -len(kind)] + PLURALS[kind]
    make.__doc__ = f"One ``{single.__name__}`` per name given (or as many as an int says)."
    return make


def _plurals(kind: str, singles) -> tuple:
    return tuple(_plural(single, kind) for single in singles)


scalars, vectors, matrices, rows, cols, tensor3s, tensor4s, tensor5s, tensor6s, tensor7s = (
    _plural(f, k)
    for f, k in zip(
        (scalar, vector, matrix, row, col, tensor3, tensor4, tensor5, tensor6, tensor7), PLURALS
    )
)
bscalars, wscalars, iscalars, lscalars, fscalars, dscalars, cscalars, zscalars = _plurals(
    "scalar", (bscalar, wscalar, iscalar, lscalar, fscalar, dscalar, cscalar, zscalar)
)
bvectors, wvectors, ivectors, lvectors, fvectors, dvectors, cvectors, zvectors = _plurals(
    "vector", (bvector, wvector, ivector, lvector, fvector, dvector, cvector, zvector)
)
bmatrices, wmatrices, imatrices, lmatrices, fmatrices, dmatrices, cmatrices, zmatrices = _plurals(
    "matrix", (bmatrix, wmatrix, imatrix, lmatrix, fmatrix, dmatrix, cmatrix, zmatrix)
)
brows, wrows, irows, lrows, frows, drows, crows, zrows = _plurals(
    "row", (brow, wrow, irow, lrow, frow, drow, crow, zrow)
)
bcols, wcols, icols, lcols, fcols, dcols, ccols, zcols = _plurals(
    "col", (bcol, wcol, icol, lcol, fcol, dcol, ccol, zcol)
)
btensor3s, wtensor3s, itensor3s, ltensor3s, ftensor3s, dtensor3s, ctensor3s, ztensor3s = _plurals(
    "tensor3", (btensor3, wtensor3, itensor3, ltensor3, ftensor3, dtensor3, ctensor3, ztensor3)
)
btensor4s, wtensor4s, itensor4s, ltensor4s, ftensor4s, dtensor4s, ctensor4s, ztensor4s = _plurals(
    "tensor4", (btensor4, wtensor4, itensor4, ltensor4, ftensor4, dtensor4, ctensor4, ztensor4)
)
btensor5s, wtensor5s, itensor5s, ltensor5s, ftensor5s, dtensor5s, ctensor5s, ztensor5s = _plurals(
    "tensor5", (btensor5, wtensor5, itensor5, ltensor5, ftensor5, dtensor5, ctensor5, ztensor5)
)
btensor6s, wtensor6s, itensor6s, ltensor6s, ftensor6s, dtensor6s, ctensor6s, ztensor6s = _plurals(
    "tensor6", (btensor6, wtensor6, itensor6, ltensor6, ftensor6, dtensor6, ctensor6, ztensor6)
)
btensor7s, wtensor7s, itensor7s, ltensor7s, ftensor7s, dtensor7s, ctensor7s, ztensor7s = _plurals(
    "tensor7", (btensor7, wtensor7, itensor7, ltensor7, ftensor7, dtensor7, ctensor7, ztensor7)
)

#: the class of constants Theano code tests with isinstance
TensorConstant = Constant


class DTypeName(str):
    """A dtype as Theano spelled it, a string (``y.dtype.startswith("int")`` in the tutorial's
    ``errors``), that also answers what a NumPy dtype does (``.kind``, ``.itemsize``) and
    equals one (``x.dtype == np.float32``)."""

    def __getattr__(self, name):
        return getattr(np.dtype(str(self)), name)

    def __eq__(self, other):
        if isinstance(other, str):
            return str.__eq__(self, other)
        try:
            return np.dtype(str(self)) == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


class _Truthy(type):
    """The metaclass of the two classes below: ``isinstance(x, T.TensorVariable)`` is true of
    every symbolic tensor, as in Theano, not only of those the constructors made (the symnb
    class each wraps is its last base)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.__bases__[-1])


class _TheanoRules:
    """What Theano's variables did that symnb's do not. They were true in ``if``, so that
    tutorial code tests whether one was given with ``if not input:`` (the RBM) or ``if not W:``
    (the dA); a comparison's result (``if x > 0:``) still refuses, as in Theano. And their
    dtype was a string (``y.dtype.startswith("int")``)."""

    def __bool__(self):
        return True

    @property
    def dtype(self) -> DTypeName:
        return DTypeName(self.type.dtype.name)


class TensorVariable(_TheanoRules, Variable, metaclass=_Truthy):
    """A variable made by ``T.matrix()`` & co.; symnb's own variables refuse ``if`` always."""


class TensorSharedVariable(_TheanoRules, SharedVariable, metaclass=_Truthy):
    """``theano.shared``'s variable. A value of another dtype is converted by Theano's rule
    (``TensorType.filter``) with the ``strict`` and ``allow_downcast`` it was made with
    (``theano_filter``), then checked as symnb's shared values are (its shape)."""

    #: ``theano.shared(..., strict=True)``: only an ndarray of the variable's dtype
    strict = False
    #: ``theano.shared(..., allow_downcast=...)``: True converts any value; None (the
    #: default) and False what converts without loss, None also a Python float into floatX
    allow_downcast = None

    def fitted(self, value, borrow: bool = False, what: str | None = None) -> np.ndarray:
        """``value`` as ``set_value`` would keep it: Theano's dtype rule, then symnb's checks
        (an update of the variable's own dtype, what a function writes, goes straight on)."""
        if not (type(value) is np.ndarray and value.dtype == self.type.dtype):
            value = theano_filter(self, value)
        return SharedVariable.fitted(self, value, borrow, what)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> np.ndarray:
        """Theano's ``get_value``. ``return_internal_type`` asked for the value in the type
        the variable keeps it in (a GPU array under Theano's GPU backend, where a plain call
        gave a NumPy copy); symnb keeps a NumPy array, so it is that array either way
        (``borrow`` says whether a copy)."""
        return SharedVariable.get_value(self, borrow)

    @property
    def default_update(self) -> Variable:
        """Theano's ``v.default_update = expr``: what every function reading ``v`` writes to
        it (unless ``no_default_updates`` leaves it out). It is symnb's
        ``v.tag["default_update"]``, which ``sn.function`` reads; an AttributeError until
        set, as in Theano (``hasattr(v, "default_update")``)."""
        try:
            return self.tag["default_update"]
        except KeyError:
            raise AttributeError(
                f"shared variable {self.describe()} has no default_update"
            ) from None

    @default_update.setter
    def default_update(self, value) -> None:
        try:
            self.tag["default_update"] = as_variable(value)  # (a number: a constant)
        except DTypeError as exc:
            raise _at_user_line(DTypeError(f"{self.describe()}.default_update: {exc}")) from None

    @default_update.deleter
    def default_update(self) -> None:
        self.tag.pop("default_update", None)


#: Python values and NumPy scalars, which Theano's filter converts by their values (any other
#: value is an array of some kind, read as an ndarray first and filtered by its dtype)
_BY_VALUE = (np.generic, numbers.Number, list, tuple)


def theano_filter(var: TensorSharedVariable, value):
    """``value`` in ``var``'s dtype by Theano 1.0's ``TensorType.filter``: ``strict`` takes
    only an ndarray of the dtype; ``allow_downcast=True`` converts anything; otherwise an
    ndarray converts where its dtype upcasts to the variable's (int32 into int64 or float64;
    no float64 into float32, whatever its values), a Python float into floatX where
    ``allow_downcast`` is None (rounded), and other values (Python numbers, lists, NumPy
    scalars) where they come out equal. An array of another kind (a torch tensor, a
    memoryview, a DataArray...) is read as symnb reads it (``core/array_kinds.py``: a masked
    array refused, a tensor that requires grad detached with a note), then meets the ndarray
    rule by its dtype. A DTypeError (a TypeError, as Theano's) naming the variable, the value
    and the way out otherwise."""
    dtype = var.type.dtype
    if isinstance(value, np.ndarray) and value.dtype == dtype:
        return value  # (a masked array: symnb's checks refuse it next)
    if var.strict:
        got = f"an ndarray of {value.dtype.name}" if isinstance(value, np.ndarray) else None
        raise DTypeError(
            f"{var.describe_as('shared')} was made with strict=True and takes only an ndarray of "
            f"{dtype.name}, not {got or _a_value(value)} (Theano's rule); convert it with "
            f"np.asarray(value, '{dtype.name}')"
        )
    given = value
    if not isinstance(value, _BY_VALUE):
        value = _host_array(var, value)
        if value.dtype == dtype or value.dtype.kind not in "biufc":
            return value  # (of strings, objects...: symnb's checks name the dtype)
    if var.allow_downcast:
        return _converted(var, value, dtype)
    if isinstance(value, np.ndarray):
        if np.result_type(dtype, value.dtype) != dtype:
            kind = array_kinds.describe(given)
            of = "a value" if kind == "array" else f"a {kind}"
            raise DTypeError(
                f"{var.describe_as('shared')} cannot store {of} of dtype {value.dtype.name} "
                f"without risking loss of precision (Theano's rule: {value.dtype.name} does "
                f"not upcast to {dtype.name}, whatever the values); cast it with "
                f"{array_kinds.cast_hint(given, dtype)}, or make the variable with "
                "theano.shared(..., allow_downcast=True)"
            )
        return value.astype(dtype)
    converted = _converted(var, value, dtype)
    if type(value) is float and var.allow_downcast is None and dtype.name == config.floatX:
        if np.isfinite(value) and not np.isfinite(converted):  # (Theano made it inf)
            raise DTypeError(
                f"{var.describe_as('shared')} cannot store the value {value!r}: it is beyond "
                f"{dtype.name}'s largest finite value and would become inf"
            )
        return converted  # Theano's exception: a Python float literal takes floatX, rounded
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (ComplexWarning)
        raw = np.asarray(value)
        equal = raw.shape == converted.shape and bool(
            np.all((raw == converted) | (np.isnan(raw) & np.isnan(converted)))
            if raw.dtype.kind in "fc" and converted.dtype.kind in "fc"
            else np.all(raw == converted)
        )
    if not equal:
        shown = _short(value)
        raise DTypeError(
            f"{var.describe_as('shared')} cannot store accurately the value {shown}: {dtype.name} "
            f"would hold it as {_short(converted.tolist())} (Theano's rule); convert it to an "
            f"ndarray of {dtype.name} yourself, or make the variable with theano.shared(..., "
            "allow_downcast=True)"
        )
    return converted


def _host_array(var: TensorSharedVariable, value) -> np.ndarray:
    """An array of any kind as the ndarray symnb reads (a DataArray matched to the variable's
    named dims), its InputError (a masked array, a tensor on a GPU) at the user's line."""
    try:
        return np.asarray(array_kinds.host_value(value, var.describe_as("shared"), var.type.shape))
    except InputError as exc:
        raise _at_user_line(exc) from None


def _converted(var: TensorSharedVariable, value, dtype) -> np.ndarray:
    """``value`` as an array of ``dtype``, as NumPy converts it (Theano's ``_asarray``); a
    value NumPy refuses to convert (a Python int out of range, a complex number into a
    real dtype) is a DTypeError naming the variable."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (ComplexWarning)
            return (
                np.asarray(value).astype(dtype)
                if isinstance(value, np.ndarray)
                else (np.asarray(value, dtype=dtype))
            )
    except (TypeError, ValueError, OverflowError) as exc:
        raise DTypeError(
            f"{var.describe_as('shared')} cannot store {_short(value)} as {dtype.name}: {exc}"
        ) from None


def _a_value(value) -> str:
    return f"the {type(value).__name__} {_short(value)}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def theano_truth(var: Variable) -> bool:
    """Theano's truth value of a computed tensor (the "truth_value" hook of core): true when
    the Theano layer's variables are among its inputs (the deep belief network's second RBM
    tests ``if not input:`` on a sigmoid output), unless it is a comparison or logic result,
    which refuses (``if x > 0:``). Graphs of symnb's own variables refuse always."""
    if var.owner is None or isinstance(var.owner.op, _Logical):
        return False
    return in_theano_graph(var)


def in_theano_graph(var: Variable) -> bool:
    """Whether ``var`` is one of the layer's variables (``T.matrix()``, ``theano.shared``) or
    is computed from one: the variables that Theano's rules (truth values, methods) apply to.
    The walk stops at the first found."""
    stack, seen = [var], set()
    while stack:
        v = stack.pop()
        if isinstance(v, _TheanoRules):
            return True
        node = v.owner
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.extend(node.inputs)
    return False


register("truth_value", theano_truth)
