"""NumPy's dispatch protocols on symbolic variables (``__array_ufunc__``,
``__array_function__``): ``np.exp(x)``, ``np.dot(x, W)``, ``np.sum(x, axis=1)`` or
``scipy.special.erf(x)`` build the symnb op of the same name in the catalogue; a NumPy function
with none is an error that names what to write instead. NumPy never gets to make an object
array of variables, whose error would appear a line later.

The catalogue is the table: a NumPy name is looked up in :mod:`symnb.ops` (``np.tanh`` ->
``sn.tanh``); :data:`ALIASES` lists only the NumPy names that symnb spells differently.
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy

from symnb.core.source import at_user_line, library_call
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, InputError, ShapeError, ShapeTypeError

#: NumPy (and SciPy) names of functions the catalogue has under another name
ALIASES = {
    "negative": "neg",
    "absolute": "abs",
    "fabs": "abs",
    "power": "pow",
    "multiply": "mul",
    "subtract": "sub",
    "floor_divide": "floor_div",
    "remainder": "mod",
    "positive": "pos",
    "true_divide": "true_div",
    "amax": "max",
    "amin": "min",
    "around": "round",
    "ravel": "flatten",
    "expit": "sigmoid",
    "concat": "concatenate",
    "permute_dims": "transpose",
}

#: ``ufunc.reduce`` / ``ufunc.accumulate`` as the catalogue's reductions
REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

#: what to write for NumPy functions the catalogue does not have
INSTEAD = {
    "nonzero": "sn.where(mask, x, 0): the size of nonzero's result depends on the values",
    "argwhere": "sn.where(mask, x, 0): the size of argwhere's result depends on the values",
    "unique": "nothing symbolic: the size of unique's result depends on the values",
    "left_shift": "a * 2**b for a << b (on integers it wraps as the shift does)",
    "right_shift": "a // 2**b for a >> b (floor division: the arithmetic shift of signed ints)",
    "ndim": "x.ndim",
    "size": "sn.prod(x.shape)",
    "copy": "x itself: symbolic variables are never modified in place",
    "isclose": "sn.abs(a - b) <= atol + rtol * sn.abs(b)",
    "allclose": "sn.all(sn.abs(a - b) <= atol + rtol * sn.abs(b))",
    "append": "sn.concatenate",
    "hstack": "sn.concatenate(..., axis=1) (axis=0 for vectors)",
    "vstack": "sn.concatenate(..., axis=0)",
    "atleast_2d": "sn.expand_dims",
    "diagonal": "sn.diag(x) for the diagonal of a matrix (sn.diag(x, k) for the k-th)",
}


#: what to write for np.linalg functions (NumPy 2's array-API forms) the catalogue lacks
INSTEAD_LINALG = {
    "diagonal": "sn.diag(x) for a matrix (np.linalg.diagonal takes the last two axes)",
    "cross": "the components: a[..., [1, 2, 0]] * b[..., [2, 0, 1]] - ...",
    "vecdot": "sn.sum(x1 * x2, axis=-1)",
}


def _linalg_trace(sn, x, /, *, offset=0):
    """``np.linalg.trace``: the diagonal of the LAST two axes (np.trace's are the first two)."""
    _at_least_matrix(sn, x, "np.linalg.trace", "it sums the diagonal of the last two axes")
    return sn.trace(x, offset, -2, -1)


def _linalg_outer(sn, x1, x2, /):
    """``np.linalg.outer``: vectors only (np.outer flattens its operands)."""
    x1, x2 = as_variable(x1), as_variable(x2)
    if x1.type.ndim != 1 or x2.type.ndim != 1:
        raise at_user_line(
            ShapeError(
                "np.linalg.outer: input arrays must be one-dimensional, but they are "
                f"{x1.describe()} and {x2.describe()}\n  hint: np.outer flattens its operands "
                "(np.outer(x1, x2)), or write x1[..., :, None] * x2[..., None, :] for stacks"
            )
        )
    return sn.outer(x1, x2)


def _linalg_matrix_transpose(sn, x, /):
    """``np.linalg.matrix_transpose`` (and ``np.matrix_transpose``): ``x.mT``."""
    return as_variable(x).mT


def _at_least_matrix(sn, x, spelled: str, why: str) -> None:
    x = as_variable(x)
    if x.type.ndim < 2:
        raise at_user_line(
            ShapeError(
                f"{spelled}: {x.describe()} has {x.type.ndim} dim"
                f"{'' if x.type.ndim == 1 else 's'}; {why}, so it needs 2"
            )
        )


#: np.linalg's functions that numpy also has under the same name. They are NumPy 2's
#: array-API forms and may compute another thing (np.linalg.trace sums the diagonal of the
#: last two axes, np.trace of the first two; np.linalg.outer refuses what np.outer flattens),
#: so the lookup keys on the module: each is built here, or has the same meaning as its
#: catalogue namesake (None), or is missing (an error, never np's namesake).
LINALG = {
    "matmul": None,
    "tensordot": None,
    "trace": _linalg_trace,
    "outer": _linalg_outer,
    "matrix_transpose": _linalg_matrix_transpose,
}
#: numpy's own functions built here rather than by name
NUMPY = {"matrix_transpose": _linalg_matrix_transpose}


def _shared_with_numpy(func) -> bool:
    """Whether ``func`` is an np.linalg function with a namesake in numpy itself."""
    name = getattr(func, "__name__", "")
    module = getattr(func, "__module__", None) or ""
    return module.startswith("numpy.linalg") and callable(getattr(numpy, name, None))


class NumpyDispatch:
    """Answers NumPy's protocols for the variables of one op catalogue (a module)."""

    def __init__(self, catalogue):
        self.catalogue = catalogue

    def symnb_name(self, numpy_name: str) -> str | None:
        """The catalogue's name for a NumPy function, or None when it has none."""
        name = ALIASES.get(numpy_name, numpy_name)
        found = getattr(self.catalogue, name, None)
        return name if callable(found) and not name.startswith("_") else None

    def method_hint(self, name: str) -> str | None:
        """What to write for NumPy's method ``x.<name>()``, which symnb's variables lack
        (``x.nonzero()``: np.nonzero's hint; ``x.exp()``: sn.exp(x)), or None."""
        found = self.symnb_name(name)
        return INSTEAD.get(name) or (f"sn.{found}(x)" if found else None)

    def library_hint(self) -> str | None:
        """Where a NumPy or SciPy function the user called runs NumPy on a symbolic variable
        (``scipy.special.logsumexp(x)``): what to write instead, else None."""
        asked = library_call()
        if asked is None:
            return None
        outer, own = asked
        found = self.symnb_name(own)
        return f"{outer} runs NumPy on the values it is given and cannot build a graph: " + (
            f"use sn.{found}" if found else "see docs/ops.md for the op catalogue"
        )

    def ufunc(self, ufunc, method: str, inputs: tuple, kwargs: dict):
        """``np.add(x, 1)``, ``np.exp(x)``, ``np.add.reduce(x, axis=0)``, ..."""
        name = ufunc.__name__
        if "out" in kwargs:
            raise _error(
                f"{_spelled(ufunc)}(..., out=...) cannot write a symbolic result into an array; "
                "use the variable it returns"
            )
        if method == "__call__":
            loop = _loop(ufunc, inputs)
            inputs, out_dtype = self._loop_dtypes(ufunc, inputs, loop)
            result = self._call(name, inputs, kwargs, _spelled(ufunc))
            if out_dtype is not None and isinstance(result, Variable):
                if result.type.dtype != out_dtype:
                    result = self.catalogue.cast(result, out_dtype)
            return result
        table = {"reduce": REDUCE, "accumulate": ACCUMULATE}.get(method, {})
        if name in table:  # NumPy's default axis is 0 here
            x, *rest = inputs
            axis = rest[0] if rest else kwargs.pop("axis", 0)
            spelled = f"{_spelled(ufunc)}.{method}"
            axis = _method_axis(method, spelled, as_variable(x), axis)
            return self._call(table[name], (x,), {**kwargs, "axis": axis}, spelled)
        raise _error(f"{_spelled(ufunc)}.{method} has no symnb equivalent for {_first(inputs)}")

    def _loop_dtypes(self, ufunc, inputs: tuple, loop):
        """(inputs, dtype of the result) for a ufunc the catalogue computes with another
        function (``np.fabs`` with ``abs``, ``scipy.special.expm1`` with NumPy's ``expm1``):
        the inputs cast to the dtypes of the ufunc's own ``loop``, as the ufunc casts them
        (``np.fabs(int8)`` is float16 where ``abs`` keeps int8; SciPy's ``expm1(int8)`` is
        float64 where NumPy's is float16); (inputs, None) for a ufunc that is the op's own
        reference, or inputs without a dtype (a Python number: the op's rule)."""
        name = self.symnb_name(ufunc.__name__)
        op = getattr(self.catalogue, name) if name is not None else None
        if op is None or ufunc in (getattr(op, "impl", None), getattr(op, "ufunc", None)):
            return inputs, None
        if loop is None or not all(isinstance(v, Variable) for v in inputs):
            return inputs, None
        cast = self.catalogue.cast
        inputs = tuple(
            v if v.type.dtype == dt.name else cast(v, dt.name)
            for v, dt in zip(inputs, loop[: ufunc.nin], strict=True)
        )
        return inputs, loop[ufunc.nin].name if ufunc.nout == 1 else None

    def function(self, func, args: tuple, kwargs: dict):
        """``np.dot(x, W)``, ``np.sum(x, axis=1)``, ``np.concatenate([a, b])``, ...: the
        arguments are bound by the NumPy function's own signature, so ``np.mean(x, 0,
        np.float32)`` passes the dtype as one, not as symnb's third parameter."""
        spelled = _spelled(func)
        name, fn = self._lookup(func, args, spelled)
        call = _numpy_call(func, fn, name, spelled, args, kwargs)
        if call is None:  # no signature to bind by: as written
            return self._call(func.__name__, args, kwargs, spelled)
        args, kwargs, dtype = call
        if dtype is None:
            return fn(*args, **kwargs)
        cast = self.catalogue.cast  # NumPy's dtype= of a reduction: computed in that dtype
        return cast(fn(cast(args[0], dtype), *args[1:], **kwargs), dtype)

    def _lookup(self, func, args, spelled: str):
        """(name, function) building ``func``: keyed on its module too, np.linalg.trace
        is not np.trace (:data:`LINALG`)."""
        numpy_name = func.__name__
        if _shared_with_numpy(func):
            if numpy_name not in LINALG:
                self._name_or_error(numpy_name, args, spelled, INSTEAD_LINALG, missing=True)
            build = LINALG[numpy_name]
            if build is not None:
                return numpy_name, functools.partial(build, self.catalogue)
        elif numpy_name in NUMPY and (getattr(func, "__module__", None) or "") == "numpy":
            return numpy_name, functools.partial(NUMPY[numpy_name], self.catalogue)
        name = self._name_or_error(numpy_name, args, spelled)
        return name, getattr(self.catalogue, name)

    def _name_or_error(
        self, numpy_name: str, args, spelled: str, instead=INSTEAD, missing=False
    ) -> str:
        name = None if missing else self.symnb_name(numpy_name)
        if name is None:
            instead = instead.get(numpy_name)
            hint = f"use {instead}" if instead else "see docs/ops.md for the op catalogue"
            hint = self.library_hint() or hint
            raise _error(
                f"{spelled} has no symnb equivalent for {_first(args)}\n  hint: {hint}, or "
                "apply NumPy to the values the compiled function returns"
            )
        return name

    def _call(self, numpy_name: str, args, kwargs, spelled: str):
        name = self._name_or_error(numpy_name, args, spelled)
        fn = getattr(self.catalogue, name)
        _check_arguments(fn, name, spelled, args, kwargs)
        return fn(*args, **kwargs)


def _loop(ufunc, inputs: tuple):
    """The dtypes of the ufunc's loop for these operands (NumPy's ``resolve_dtypes``, a
    Python number weak as in NumPy 2), or None where an operand has no dtype to ask with (a
    list). No loop is a DTypeError naming the ufunc and the operands' dtypes, whichever op
    the catalogue builds for it: ``np.fabs`` of a complex z is refused as NumPy refuses it,
    though ``sn.abs`` (which builds it) takes complex."""
    dtypes = [_operand_dtype(v) for v in inputs]
    if len(inputs) != ufunc.nin or any(dt is None for dt in dtypes):
        return None
    try:
        return ufunc.resolve_dtypes((*dtypes, *([None] * ufunc.nout)))
    except TypeError as exc:
        operands = ", ".join(_operand(v) for v in inputs)
        raise at_user_line(
            DTypeError(f"{_spelled(ufunc)} has no loop for {operands}; NumPy refuses it: {exc}")
        ) from None
    except (ValueError, AttributeError):  # (not a loop's absence): the op's own rule
        return None


def _operand_dtype(value):
    """What ``resolve_dtypes`` takes for an operand: its dtype, or the type of a Python
    number (weak); None for an operand of no dtype (a list, which the op converts)."""
    if isinstance(value, Constant) and value.weak:
        return type(value.data)
    if isinstance(value, Variable):
        return numpy.dtype(value.type.dtype)
    if type(value) in (int, float, complex):
        return type(value)
    if isinstance(value, (bool, numpy.generic, numpy.ndarray)):
        return numpy.asarray(value).dtype
    return None


def _operand(value) -> str:
    if isinstance(value, Variable):
        return value.describe()
    if type(value) in (bool, int, float, complex):
        return f"the Python {type(value).__name__} {value!r}"
    return f"a NumPy {numpy.asarray(value).dtype} value"


def _method_axis(method: str, spelled: str, x: Variable, axis):
    """The axis of ``np.add.reduce``/``np.add.accumulate`` as the catalogue's reductions
    take it. ``reduce`` of a 0-d x over axis 0 or -1 reduces nothing (NumPy's result is x);
    ``accumulate`` takes one axis: None is the only axis of a vector (not np.cumsum's
    flattening), a one-axis tuple that axis; more axes, or a 0-d x, are NumPy's errors."""
    ndim = x.type.ndim
    if method == "reduce":
        return () if ndim == 0 and type(axis) is int and axis in (0, -1) else axis
    if ndim == 0:
        raise at_user_line(
            ShapeTypeError(f"{spelled} of {x.describe()}: cannot accumulate on a scalar")
        )
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is None and ndim == 1:
        axis = 0
    if axis is None or isinstance(axis, tuple):
        raise at_user_line(
            ShapeTypeError(
                f"{spelled} of {x.describe()}: accumulate does not allow multiple axes "
                f"(axis={axis!r})\n  hint: give one axis; for the running total of all "
                "the elements in order, accumulate the flattened x (x.ravel())"
            )
        )
    return axis


#: NumPy 2's spellings of parameters that symnb's functions name as NumPy 1 did (where the
#: function has that name): ``np.clip(x, min=0)`` on a variable passes ``a_min``, and the
#: functions themselves take both spellings through :func:`numpy_keywords`
RENAMED = {
    "shape": "newshape",
    "correction": "ddof",
    "min": "a_min",
    "max": "a_max",
    "N": "n",
    "M": "m",
}
#: NumPy functions whose ``dtype=`` is the dtype the result is computed in
COMPUTED_IN_DTYPE = {"sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "trace"}
#: NumPy parameters that change how, not what, a symbolic result is computed
IGNORED = {"optimize", "subok", "copy", "overwrite_input"}
_NO_VALUE = getattr(numpy, "_NoValue", object())
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


def _numpy_call(func, fn, name: str, spelled: str, args, kwargs):
    """(args, kwargs, dtype) for ``sn.<name>``: the NumPy function's required and
    positional-only arguments in order, the others by keyword under symnb's names; ``dtype``
    for a reduction computed in one (else None). None where either function has no
    signature."""
    try:
        numpy_signature, target = inspect.signature(func), inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    try:
        bound = numpy_signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise _error(f"{spelled}: {exc}") from None
    positional, given = [], {}
    for param_name, value in bound.arguments.items():
        param = numpy_signature.parameters[param_name]
        if param.kind == inspect.Parameter.VAR_KEYWORD:
            given.update(value)
        elif param.kind == inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif param.kind in _POSITIONAL or param.default is inspect.Parameter.empty:
            positional.append(value)
        else:
            given[param_name] = value
    keywords, dtype = {}, None
    clash = _renamed_clash(given)  # np.var(x, ddof=1, correction=0): refused
    if clash:
        raise _error(f"{spelled} on {_first(positional)}: {clash}")
    for param_name, value in given.items():
        default = getattr(numpy_signature.parameters.get(param_name), "default", None)
        where = _keyword_of(target, param_name)
        memory_order = param_name == "order" and isinstance(default, str)  # np.sort's: fields
        if param_name == "out" and value is not None:
            raise _error(
                f"{spelled}(..., out=...) cannot write a symbolic result into an array; use "
                "the variable it returns"
            )
        if where is not None:
            keywords[where] = value
        elif param_name == "dtype" and value is not None and func.__name__ in COMPUTED_IN_DTYPE:
            dtype = value
        elif memory_order and value not in (default, "C", "A", "K"):
            raise _error(
                f"{spelled}(..., order={value!r}) on {_first(positional)}: symnb orders "
                "elements as C does (row-major) only; for Fortran order transpose first "
                "(np.ravel(x, 'F') is np.ravel(x.T))"
            )
        elif param_name not in IGNORED and not memory_order and not _same(value, default):
            raise _error(
                f"{spelled} on symbolic variables builds sn.{name}{_plain(target)}, which "
                f"has no {param_name}= ({param_name}={value!r})"
            )
    keywords.update(_numpy_defaults(numpy_signature, target, bound.arguments, keywords))
    return positional, keywords, dtype


def _renamed_clash(given: dict) -> str | None:
    """What is wrong where a parameter is given under both its names (:data:`RENAMED`), as
    NumPy refuses it (``ddof=0`` beside ``correction`` is not a clash: NumPy tests
    ``ddof != 0``), else None."""
    for name, value in given.items():
        other = RENAMED.get(name)
        if other in given and value is not _NO_VALUE and given[other] is not _NO_VALUE:
            if other == "ddof" and _same(given[other], 0):
                continue
            return (
                f"{other} and {name} can't be provided simultaneously "
                f"({other}={given[other]!r}, {name}={value!r})"
            )
    return None


def numpy_keywords(fn):
    """``fn`` taking NumPy 2's spellings (:data:`RENAMED`) of the parameters it names as
    NumPy 1 did, by keyword: ``sn.clip(x, min=0, max=1)``, ``sn.reshape(x, shape=(2, -1))``,
    ``sn.eye(3, M=2)``, ``sn.var(x, correction=1)``. A parameter given under both names is
    an ArgumentError at the user's line, as NumPy refuses it. ``fn``'s signature is kept
    (``inspect.signature`` and NumPy's dispatch read it)."""
    signature = inspect.signature(fn)
    params = signature.parameters
    renames = {new: old for new, old in RENAMED.items() if old in params and new not in params}

    @functools.wraps(fn)
    def call(*args, **kwargs):
        spelled = {new: kwargs.pop(new) for new in renames if new in kwargs}
        if not spelled:
            return fn(*args, **kwargs)
        try:
            bound = signature.bind_partial(*args, **kwargs)
        except TypeError:  # Python's error for the rest of the call
            return fn(*args, **kwargs)
        clash = _renamed_clash({**bound.arguments, **spelled})
        if clash:
            of = _first(bound.arguments.values())
            raise at_user_line(ArgumentError(f"{call.__name__} of {of}: {clash}"))
        for new, value in spelled.items():
            bound.arguments[renames[new]] = value
        return fn(*bound.args, **bound.kwargs)

    return call


def _numpy_defaults(numpy_signature, target, given, keywords) -> dict:
    """NumPy's defaults for the parameters ``sn.<name>`` requires and the user left out
    (``np.take_along_axis(x, i)``: NumPy >= 2.3's ``axis=-1``): the call means NumPy's."""
    defaults = {}
    for param_name, param in numpy_signature.parameters.items():
        default = param.default
        if param_name in given or default is inspect.Parameter.empty or default is _NO_VALUE:
            continue
        where = _keyword_of(target, param_name)
        own = target.parameters.get(where) if where is not None else None
        if own is not None and own.default is inspect.Parameter.empty and where not in keywords:
            defaults[where] = default
    return defaults


def _keyword_of(target, param_name: str) -> str | None:
    """The name under which ``sn.<name>`` takes NumPy's parameter, or None."""
    params = target.parameters
    for candidate in (param_name, RENAMED.get(param_name)):
        if candidate in params and params[candidate].kind not in _POSITIONAL:
            return candidate
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return param_name
    return None


def _same(value, default) -> bool:
    """Whether an argument is NumPy's default (None, a flag, a number, a string)."""
    if value is default:
        return True
    simple = (bool, int, float, str, type(None))
    return isinstance(value, simple) and type(value) is type(default) and value == default


def _check_arguments(fn, name, spelled, args, kwargs) -> None:
    """NumPy-only arguments (``dtype=``, ``where=``) are an error naming sn.<name>."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # an op instance without a Python signature
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise _error(
            f"{spelled} on symbolic variables builds sn.{name}{_plain(signature)}, "
            f"which cannot take these arguments ({exc})"
        ) from None


def _plain(signature) -> str:
    return str(signature.replace(return_annotation=inspect.Signature.empty))


def _spelled(func) -> str:
    """How the user wrote it: ``np.exp``, ``np.linalg.norm``, ``scipy.special.erf`` (a ufunc
    has no module of its own: SciPy's is found in scipy.special where the user imported it)."""
    module = getattr(func, "__module__", None) or "numpy"
    special = sys.modules.get("scipy.special")
    name = func.__name__
    if isinstance(func, numpy.ufunc) and getattr(numpy, name, None) is not func:
        if special is not None and getattr(special, name, None) is func:
            return f"scipy.special.{name}"
    if module.startswith("numpy"):
        inner = [p for p in module.split(".")[1:] if not p.startswith("_")]
        return ".".join(["np", *inner, func.__name__])
    return f"{module}.{func.__name__}"


def _first(values) -> str:
    """The first variable among the arguments, for the message."""
    for v in values:
        items = v if isinstance(v, (list, tuple)) else [v]
        for item in items:
            if isinstance(item, Variable):
                return item.describe()
    return "symbolic variables"


def _error(message: str) -> InputError:
    """An InputError (a TypeError, as NumPy's own) at the user's line."""
    return at_user_line(InputError(message))
