"""NumPy-style operators and methods on symbolic variables.

Each method only forwards to the op catalogue (:mod:`symnb.ops`), which is built on
:mod:`symnb.core` and registers itself as the "ops" hook when it is imported.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from symnb.core.hooks import hook, provided
from symnb.core.source import at_user_line, pinned, user_location
from symnb.errors import DTypeError, InputError, ShapeError, SymbolicValueError, UpdateError


def _ops():
    return hook("ops")


class _LayerMethod:
    """A variable attribute that a layer above may define for the variables of its graphs,
    through its "methods" hook: the Theano layer gives Theano's ``x.round()`` (half away from
    zero), ``x.sort(axis, kind)``, ``x.sum(axis, dtype, keepdims, acc_dtype)``,
    ``x.max(axis, keepdims)``, ``x.var(axis, ddof, keepdims, corrected)``, and Theano's
    methods NumPy arrays lack (``x.norm(L)``, ``x.exp()``, ``x.size``...). Elsewhere it is
    symnb's own method, or missing (an AttributeError, so ``hasattr`` is false), so symnb's
    rules stay for symnb's users."""

    def __init__(self, method=None):
        self.method = method
        self.__doc__ = getattr(method, "__doc__", None)

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self if self.method is None else self.method
        methods = provided("methods")
        found = None if methods is None else methods(obj, self.name)
        if found is not None:
            return found
        if self.method is None:
            raise _missing(obj, self.name)
        return self.method.__get__(obj, objtype)


def _missing(obj, name: str) -> AttributeError:
    """An attribute only a layer defines (``hasattr`` stays false): NumPy's method
    ``x.<name>()`` says what its function ``np.<name>(x)`` says to write instead."""
    message = f"{type(obj).__name__!r} object has no attribute {name!r}"
    dispatch = provided("numpy")
    instead = dispatch and dispatch.method_hint(name)
    if instead:
        message += f" ({obj.describe()})\n  hint: use {instead}"
    return at_user_line(AttributeError(message))


#: the attributes only a layer's "methods" hook defines (Theano's, which symnb's lack)
LAYER_ONLY = (
    "arccos arccosh arcsin arcsinh arctan arctanh ceil copy cos cosh deg2rad "
    "diagonal exp exp2 expm1 fill floor get_scalar_constant_value log log10 log1p log2 "
    "nonzero nonzero_values norm ones_like ptp rad2deg sin sinh size sqrt take tan tanh "
    "trunc zeros_like"
).split()


def _binary(name, reflected=False):
    def method(self, other):
        fn = getattr(hook("ops"), name)  # the hook itself, not _ops(): the hottest path
        return fn(other, self) if reflected else fn(self, other)

    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    method.__doc__ = f"``{name}`` of the two operands (NumPy semantics)."
    return method


def _numpy_only(ufunc, reflected=False):
    """An operator with no symnb op (``<<``, ``>>``): NumPy's protocol says so, and what to
    write instead."""

    def method(self, other):
        args = (other, self) if reflected else (self, other)
        return hook("numpy").function(ufunc, args, {})

    method.__name__ = f"__{'r' if reflected else ''}{ufunc.__name__}__"
    return method


def _unary(name):
    def method(self):
        return getattr(_ops(), name)(self)

    method.__name__ = f"__{name}__"
    return method


#: NumPy's own files: ``np.ones(n)`` asks for the int in NumPy's Python code, not the user's
_NUMPY_DIR = os.path.dirname(np.__file__) + os.sep


def _at_numpys_caller(exc: Exception) -> Exception:
    """``at_user_line`` at the line that called NumPy, where NumPy's Python code asked."""
    with pinned(user_location((_NUMPY_DIR,))):
        return at_user_line(exc)


def _no_value(what: str, name: str | None = None):
    """``int(x)``, ``float(x)``, ``range(n)``: Python asks for a value a symbolic variable
    does not have yet (``name``: the method's, where ``what`` does not spell it)."""

    def method(self):
        raise _at_numpys_caller(
            InputError(
                f"{what} needs a value, but {self.describe()} is symbolic: its value is unknown "
                "until the function runs\n  hint: compile it with sn.function (or call "
                ".eval({...})) to get its value; for a size, pass the symbolic scalar itself "
                "(sn.zeros(n), sn.arange(n), rng.normal(n) with n = x.shape[0])"
            )
        )

    method.__name__ = name or f"__{what.split('(')[0]}__"
    return method


def _no_index(self):
    """``range(n)``, ``np.zeros(n)``, a list index: a Python int. An integer scalar has the
    right type but no value yet (a ValueError, which NumPy lets through: it replaces a
    TypeError with a message naming neither the variable nor the fix); anything else is not
    an int at all (a TypeError, as Python's own)."""
    what = "a Python int (range(n), a list index, np.zeros(n), operator.index)"
    if self.type.ndim == 1 and self.type.dtype.kind in "iu":
        raise _at_numpys_caller(SymbolicValueError(_shape_message(self)))
    if self.type.ndim == 0 and self.type.dtype.kind in "iu":
        raise _at_numpys_caller(
            SymbolicValueError(
                f"{what} needs a value, but {self.describe()} is symbolic: its value is "
                "unknown until the function runs\n  hint: for a size, pass the symbolic scalar "
                "to symnb's function instead (np.zeros(n) -> sn.zeros(n); also sn.ones, "
                "sn.full, sn.arange, rng.normal(size=n)); to get its value, compile it with "
                "sn.function (or call .eval({...}))"
            )
        )
    _no_value(what)(self)


def _shape_message(self) -> str:
    """``np.zeros(x.shape)``, ``arr.reshape(x.shape)``, ``rng.normal(size=x.shape)``: NumPy
    asks an integer vector for Python ints (its ``__index__``, once its iteration failed)."""
    name = self.label or "shape"
    of = name[: -len(".shape")] if name.endswith(".shape") else None
    like = f" or sn.zeros_like({of})" if of else ""
    return (
        "Python ints from an integer vector (a shape: np.zeros(shape), arr.reshape(shape), "
        f"size=shape) need values, but {self.describe()} is symbolic: its values are "
        "unknown until the function runs\n  hint: pass the symbolic shape to symnb's function "
        "instead: "
        f"np.zeros({name}) -> sn.zeros({name}){like} (also sn.ones, sn.full), "
        f"arr.reshape({name}) -> sn.reshape(arr, {name}), rng.normal(size={name}) with rng an "
        "sn.RandomStream; to get its values, compile it with sn.function (or call .eval({...}))"
    )


def _numpy_method(x, func, *args, **kwargs):
    """NumPy's method ``x.<name>(...)`` as its function ``np.<name>(x, ...)`` on the
    variable: NumPy's signature, symnb's op, and the same errors (symnb.ops.numpy_api)."""
    return hook("numpy").function(func, (x, *args), kwargs)


#: NumPy's "no value given" default (``initial``, ``mean``, ``correction``)
_NO_VALUE = getattr(np, "_NoValue", None)


def _numpy_keywords(x, func, args: tuple, **given):
    """NumPy 2's keywords of a reduction method that symnb's method does not take itself
    (``x.max(initial=0)``, ``x.sum(where=m)``, ``x.var(correction=1)``): the call as its
    function ``np.<name>(x, ...)``, which takes each one symnb can (``correction``) and
    refuses the others with its message; None where all are NumPy's defaults."""
    extra = {
        key: value
        for key, value in given.items()
        if value is not _NO_VALUE and not (key == "where" and value is True)
    }
    return _numpy_method(x, func, *args, **extra) if extra else None


def _order(x, method: str, order) -> None:
    """NumPy's ``order``: symnb's elements are in C (row-major) order only."""
    if order not in ("C", "A", "K"):
        raise at_user_line(
            InputError(
                f"{method}(order={order!r}) of {x.describe()}: symnb orders elements as C does "
                "(row-major) only; for Fortran order transpose first (x.ravel('F') is "
                "x.T.ravel())"
            )
        )


class TensorMethods:
    """Mixed into :class:`~symnb.core.variable.Variable`."""

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("true_div"), _binary("true_div", True)
    __floordiv__, __rfloordiv__ = _binary("floor_div"), _binary("floor_div", True)
    __mod__, __rmod__ = _binary("mod"), _binary("mod", True)
    __rpow__ = _binary("pow", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")
    __lshift__, __rlshift__ = _numpy_only(np.left_shift), _numpy_only(np.left_shift, True)
    __rshift__, __rrshift__ = _numpy_only(np.right_shift), _numpy_only(np.right_shift, True)
    __neg__, __pos__ = _unary("neg"), _unary("pos")
    __abs__, __invert__ = _unary("abs"), _unary("invert")
    __int__, __float__ = _no_value("int()"), _no_value("float()")
    __complex__ = _no_value("complex()")
    __trunc__ = _no_value("math.trunc()", "__trunc__")
    __index__ = _no_index

    def __format__(self, spec: str) -> str:
        """``f"{x}"`` is ``str(x)``; a format spec (``f"{loss:.4f}"``, ``"{:d}".format(n)``)
        formats a value, which a symbolic variable has only when the function runs."""
        if not spec:
            return str(self)
        written = f'f"{{{self.label or "x"}:{spec}}}"'
        return _no_value(f"the format spec {spec!r} ({written})", "__format__")(self)

    def __pow__(self, other):
        """``pow`` of the two operands (NumPy semantics), with NumPy's operator fast path for
        the exponent 2 (a Python int): ``np.square``, whose dtype differs from ``np.power``'s
        for a bool x only: ``x ** 2`` is int8 there, ``np.power(x, 2)`` (``sn.pow``) int64."""
        if type(other) is int and other == 2 and self.type.dtype.kind == "b":
            return hook("ops").square(self)
        return hook("ops").pow(self, other)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __round__(self, ndigits=None):
        """``round(x)``: ``x.round()`` (NumPy's arrays round to an array, not an int)."""
        return _ops().round(self, 0 if ndigits is None else ndigits)

    # -- NumPy's protocols: np.exp(x), np.dot(x, W) build symnb ops (symnb.ops.numpy_api) ----
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return hook("numpy").ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return hook("numpy").function(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        """No value exists before the function runs: never an object array (NumPy asks
        for one in ``np.arange(n)``, ``np.array([x, y])``, ``a[n]``)."""
        size = self.type.ndim == 0 and self.type.dtype.kind in "iu"
        dispatch = provided("numpy")  # (symnb.ops registers it)
        hint = (dispatch and dispatch.library_hint()) or (
            "compile it with sn.function (or call .eval({...})) to get an array; build "
            "symbolic arrays with symnb's functions (sn.stack, sn.concatenate"
            + (", sn.arange(n) for np.arange(n), sn.zeros(n)" if size else "")
            + ")"
        )
        raise _at_numpys_caller(
            InputError(
                f"{self.describe()} is symbolic and has no value until the function runs, so "
                f"NumPy cannot make an array of it\n  hint: {hint}"
            )
        )

    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """True for each dim known to be 1 (Theano's broadcastable pattern of the type)."""
        return tuple(d == 1 for d in self.type.shape)

    @property
    def shape(self):
        """The symbolic shape, an int64 vector; the static one is ``x.type.shape``."""
        return _ops().shape(self)

    @property
    def T(self):
        return _ops().transpose(self)

    @property
    def mT(self):
        """The matrix transpose: the last two axes swapped (NumPy 2's and torch's ``x.mT``)."""
        if self.type.ndim < 2:
            raise at_user_line(
                ShapeError(
                    f"mT: {self.describe()} has {self.type.ndim} dim"
                    f"{'s' if self.type.ndim != 1 else ''}; the matrix transpose swaps the "
                    "last two axes, so it needs at least 2 (as NumPy's)"
                )
            )
        return _ops().swapaxes(self, -2, -1)

    def __len__(self):
        first = self.type.shape[0] if self.type.ndim else None
        if not isinstance(first, int):
            if not self.type.ndim:
                message = f"len() of {self.describe()}: a 0-d variable has no length"
            else:
                message = (
                    f"len() of {self.describe()} is not known before it runs (its first "
                    f"dim is not a fixed size); use {self.message_name() or 'x'}.shape[0], a "
                    "symbolic size"
                )
            raise at_user_line(InputError(message))
        return first

    def __iter__(self):
        """An iterator whose first step is the error: NumPy's dispatch asks for the iterator
        itself (``np.concatenate(x)`` takes x's rows) and would put its own "dispatcher ...
        did not return an iterable" in place of an error raised here."""
        raise at_user_line(InputError(self._iteration_message()))
        yield  # a generator: the error comes at the first step

    def _iteration_message(self) -> str:
        name = self.message_name() or "x"
        if self.type.ndim < 2:
            return (
                f"cannot iterate over {self.describe_as('symbolic')}: its elements exist when the "
                f"function runs\n  hint: index them ({name}[0], {name}[1], ...), or apply an op "
                "to the whole variable"
            )
        rest = "" if self.type.ndim <= 2 else f"{name}.shape[2:]"
        joined = f"{name}.reshape(-1)" if not rest else f"{name}.reshape((-1,) + {rest})"
        return (
            f"cannot iterate over {self.describe_as('symbolic')}: its rows exist when the function "
            f"runs\n  hint: index the rows ({name}[0], {name}[1], ...); a NumPy function given "
            f"one variable for a sequence of arrays joins its rows: np.concatenate({name}) is "
            f"{joined}, np.stack({name}) is {name} itself"
        )

    def __getitem__(self, index):
        return _ops().getitem(self, index)

    def __setitem__(self, index, value):
        """``x[0] = v`` (and ``x[0] += v``) cannot change a symbolic tensor: say what builds
        the updated copy instead of Python's bare "does not support item assignment"."""
        name, key = self.name or "x", _spelled_index(index)
        raise at_user_line(
            UpdateError(
                f"{self.describe()} is symbolic and immutable: {name}[{key}] = v cannot change "
                f"it; write {name} = {name}.at[{key}].set(v) (.add(v) for +=), or "
                f"sn.set_subtensor({name}[{key}], v), which build the updated copy"
            )
        )

    @property
    def at(self):
        """``x.at[index].set(v)`` / ``.add(v)``: x with ``x[index]`` replaced or increased."""
        return hook("index_update")(self)

    @_LayerMethod
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
        """NumPy's ``x.sum``, in its argument order (``x.sum(1, "int8")`` is a dtype)."""
        args = (axis, dtype, out, keepdims)
        found = _numpy_keywords(self, np.sum, args, initial=initial, where=where)
        return _ops().sum(self, *args) if found is None else found

    @_LayerMethod
    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        args = (axis, dtype, out, keepdims)
        found = _numpy_keywords(self, np.mean, args, where=where)
        return _ops().mean(self, *args) if found is None else found

    @_LayerMethod
    def max(self, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
        args = (axis, out, keepdims)
        found = _numpy_keywords(self, np.max, args, initial=initial, where=where)
        return _ops().max(self, *args) if found is None else found

    @_LayerMethod
    def min(self, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
        args = (axis, out, keepdims)
        found = _numpy_keywords(self, np.min, args, initial=initial, where=where)
        return _ops().min(self, *args) if found is None else found

    def reshape(self, *shape, order="C", copy=None, ndim=None):
        """NumPy's ``x.reshape(shape, order='C', copy=None)`` (C order only; ``copy`` changes
        nothing symbolic) or Theano's ``ndim=``."""
        _order(self, "reshape", order)
        return _ops().reshape(self, shape[0] if len(shape) == 1 else shape, ndim=ndim)

    def transpose(self, *axes):
        """``x.transpose()``, ``x.transpose(1, 0)``, ``x.transpose((1, 0))``; one int is one
        axis, as in NumPy (``v.transpose(0)`` of a vector). Only no argument (or None)
        reverses the axes: ``x.transpose(())`` is the empty permutation, as in NumPy (an
        error but for a 0-d x)."""
        if not axes:
            return _ops().transpose(self, None)
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = axes[0]  # None, or the axes as one tuple
        return _ops().transpose(self, axes)

    @_LayerMethod
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        """NumPy's ``x.astype``: ``casting`` checked as NumPy checks it; ``order`` C-like
        only; ``subok`` and ``copy`` change nothing symbolic."""
        _order(self, "astype", order)
        if casting != "unsafe":
            try:
                wanted = np.dtype(dtype)
                allowed = np.can_cast(self.type.dtype, wanted, casting)
            except (TypeError, ValueError) as exc:
                raise at_user_line(InputError(f"astype of {self.describe()}: {exc}")) from None
            if not allowed:
                raise at_user_line(
                    DTypeError(
                        f"astype of {self.describe()}: cannot cast from {self.type.dtype} to "
                        f"{wanted} according to the rule {casting!r}"
                    )
                )
        return _ops().cast(self, dtype)

    @_LayerMethod
    def dot(self, other):
        """``np.dot`` of vectors and matrices (``sn.dot``); of a Theano graph, ``T.dot``, for
        every rank."""
        return _ops().dot(self, other)

    # -- more NumPy methods; unlike NumPy's in-place ``sort``, ``x.sort()`` returns the result
    @_LayerMethod
    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
        args = (axis, dtype, out, keepdims)
        found = _numpy_keywords(self, np.prod, args, initial=initial, where=where)
        return _ops().prod(self, *args) if found is None else found

    @_LayerMethod
    def var(
        self,
        axis=None,
        dtype=None,
        out=None,
        ddof=0,
        keepdims=False,
        *,
        where=True,
        mean=_NO_VALUE,
        correction=_NO_VALUE,
    ):
        """NumPy's ``x.var``; also np.var's ``correction`` (``ddof``), which NumPy's method
        lacks."""
        args = (axis, dtype, out, ddof, keepdims)
        given = {"where": where, "mean": mean, "correction": correction}
        found = _numpy_keywords(self, np.var, args, **given)
        return _ops().var(self, *args) if found is None else found

    @_LayerMethod
    def std(
        self,
        axis=None,
        dtype=None,
        out=None,
        ddof=0,
        keepdims=False,
        *,
        where=True,
        mean=_NO_VALUE,
        correction=_NO_VALUE,
    ):
        args = (axis, dtype, out, ddof, keepdims)
        given = {"where": where, "mean": mean, "correction": correction}
        found = _numpy_keywords(self, np.std, args, **given)
        return _ops().std(self, *args) if found is None else found

    @_LayerMethod
    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        found = _numpy_keywords(self, np.all, (axis, out, keepdims), where=where)
        return _ops().all(self, axis, out, keepdims) if found is None else found

    @_LayerMethod
    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        found = _numpy_keywords(self, np.any, (axis, out, keepdims), where=where)
        return _ops().any(self, axis, out, keepdims) if found is None else found

    @_LayerMethod
    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _ops().argmax(self, axis, out, keepdims=keepdims)

    @_LayerMethod
    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _ops().argmin(self, axis, out, keepdims=keepdims)

    @_LayerMethod
    def cumsum(self, axis=None, dtype=None, out=None):
        return _numpy_method(self, np.cumsum, axis, dtype, out)

    @_LayerMethod
    def cumprod(self, axis=None, dtype=None, out=None):
        return _numpy_method(self, np.cumprod, axis, dtype, out)

    def clip(self, min=None, max=None, out=None, **kwargs):  # noqa: A002 - NumPy's names
        if out is not None or kwargs:  # NumPy's errors (out=, dtype=...)
            return _numpy_method(self, np.clip, min, max, out, **kwargs)
        return _ops().clip(self, min, max)

    def item(self, *args):
        return _no_value("item()")(self)

    def tolist(self):
        """NumPy's ``x.tolist()``: the values, which exist only when the function runs."""
        return _no_value("tolist()")(self)

    @_LayerMethod
    def round(self, decimals=0):
        """NumPy's round (half to even)."""
        return _ops().round(self, decimals)

    def flatten(self, ndim=1):
        """NumPy's ``x.flatten(order='C')`` or Theano's ``x.flatten(ndim)``."""
        if isinstance(ndim, str):
            _order(self, "flatten", ndim)
            ndim = 1
        return _ops().flatten(self, ndim)

    def ravel(self, order="C"):
        """The elements in one vector (C order)."""
        _order(self, "ravel", order)
        return _ops().flatten(self, 1)

    def squeeze(self, axis=None):
        return _ops().squeeze(self, axis=axis)

    def repeat(self, repeats, axis=None):
        return _ops().repeat(self, repeats, axis=axis)

    @_LayerMethod
    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """NumPy's ``x.sort`` arguments (symnb's sort is stable: every kind is its order)."""
        return _numpy_method(self, np.sort, axis, kind, order, stable=stable)

    @_LayerMethod
    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return _numpy_method(self, np.argsort, axis, kind, order, stable=stable)

    def swapaxes(self, axis1, axis2):
        return _ops().swapaxes(self, axis1, axis2)

    @_LayerMethod
    def trace(self, offset=0, axis1=0, axis2=1, dtype=None):
        """NumPy's ``x.trace()``: the sum of the ``offset`` diagonal over ``axis1`` and
        ``axis2``, computed in ``dtype`` where one is given (as np.trace's)."""
        if dtype is None:
            return _ops().trace(self, offset, axis1, axis2)
        cast = _ops().cast
        return cast(_ops().trace(cast(self, dtype), offset, axis1, axis2), dtype)

    def dimshuffle(self, *order):
        return _ops().dimshuffle(self, *order)

    @_LayerMethod
    def conj(self):
        """NumPy's ``x.conj()``: the complex conjugate (``sn.conj``; a real x's is x)."""
        return _ops().conj(self)

    @_LayerMethod
    def conjugate(self):
        """NumPy's ``x.conjugate()``: ``x.conj()``."""
        return _ops().conj(self)

    @property
    def real(self):
        """NumPy's ``x.real``: the real part (``sn.real``; a real x's is x)."""
        return _ops().real(self)

    @property
    def imag(self):
        """NumPy's ``x.imag``: the imaginary part (``sn.imag``; zeros for a real x)."""
        return _ops().imag(self)


def _spelled_index(index) -> str:
    """An index as written (``1:3, None``) when made of ints, slices, None and ``...``;
    ``index`` otherwise."""
    items = index if isinstance(index, tuple) else (index,)
    try:
        return ", ".join(map(_spelled_item, items))
    except TypeError:
        return "index"


def _spelled_item(item) -> str:
    if item is None or item is Ellipsis:
        return "None" if item is None else "..."
    if isinstance(item, slice):
        parts = ["" if b is None else _spelled_int(b) for b in (item.start, item.stop, item.step)]
        return ":".join(parts[:2]) + ("" if item.step is None else f":{parts[2]}")
    return _spelled_int(item)


def _spelled_int(item) -> str:
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        return str(int(item))
    raise TypeError(item)


for _name in LAYER_ONLY:
    _attribute = _LayerMethod()
    _attribute.__set_name__(TensorMethods, _name)
    setattr(TensorMethods, _name, _attribute)
del _name, _attribute
