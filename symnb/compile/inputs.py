"""Checking the values passed to a compiled function, once per call.

A value must have the input's rank, fit its fixed dims, cast to its dtype without loss, and
give each named dim one size across all the inputs of a call.
"""

from __future__ import annotations

import math

import numpy as np

from symnb.core import array_kinds
from symnb.core.dim_sizes import (
    ACROSS_A_CALL,
    SizeConflict,
    bind_all_derived,
    bind_names,
    bind_values,
)
from symnb.core.dims import DimExpr, format_shape
from symnb.core.variable import Variable
from symnb.errors import InputError, InputShapeError


class InputSpec:
    """What one input accepts; ``convert`` returns the array to compute with."""

    def __init__(self, var: Variable, position: int):
        self.label = f"input {position} '{var.name}'" if var.name else f"input {position}"
        self.dtype = var.type.dtype
        self.shape = var.type.shape
        self.fixed = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, int)]
        self.named = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, str)]
        self.derived = [(i, d) for i, d in enumerate(self.shape) if isinstance(d, DimExpr)]
        #: the shape every value must have when all dims are fixed ints (then ``quick`` applies)
        self.exact = self.shape if len(self.fixed) == len(self.shape) else None
        #: the largest finite value of a float input: a Python float beyond it becomes inf
        self.largest = float(np.finfo(self.dtype).max) if self.dtype.kind in "fc" else None

    def quick(self, value):
        """``value`` itself when it is already an array of the dtype and fixed shape (or a NumPy
        scalar of the dtype for a 0-d input), checked with no allocation; None otherwise, and
        ``convert`` then does the full check."""
        if type(value) is np.ndarray:
            if value.dtype == self.dtype and value.shape == self.exact:
                return value
        elif self.exact == () and isinstance(value, np.generic) and value.dtype == self.dtype:
            return np.asarray(value)
        return None

    def convert(self, value, sizes: dict) -> np.ndarray:
        array = self._as_array(value)
        if array.ndim != len(self.shape):
            self._fail(array, f"it has {array.ndim} dims, expected {len(self.shape)}")
        for i, d in self.fixed:
            if array.shape[i] != d:
                self._fail(array, f"axis {i} has length {array.shape[i]}, expected {d}")
        if self.named:
            try:
                bind_names(self.named, sizes, array.shape, self.label)
            except SizeConflict as exc:
                raise self.shape_error(array, str(exc)) from None
        return array

    def _as_array(self, value) -> np.ndarray:
        """Arrays of every kind by their dtype (a lossy cast refused); Python values, lists
        and NumPy scalars by their values (each must survive the cast). A subclass of ndarray
        (np.matrix, np.memmap) is read as a plain ndarray view of its data: the NumPy
        references call methods such as ``.sum(keepdims=...)`` that a subclass may redefine."""
        if isinstance(value, np.ndarray):
            array_kinds.refuse_masked(value, self.label)
            plain = value if type(value) is np.ndarray else value.view(np.ndarray)
            return self._typed(plain, value)
        if isinstance(value, PYTHON_VALUES):
            return self._from_python(value)
        return self._typed(self._foreign(value), value)

    def _foreign(self, value) -> np.ndarray:
        """A torch tensor, JAX array, pandas object, memoryview, ... as an ndarray; an xarray
        DataArray's dims put in the input's order by name."""
        return array_kinds.host_value(value, self.label, self.shape)

    def _typed(self, array: np.ndarray, value) -> np.ndarray:
        """The ndarray rule: the input's dtype as it is, a safe cast when no value changes."""
        if array.dtype == self.dtype:
            return array
        if array.dtype.kind not in "biufc":  # (strings, structured, bfloat16, dates, objects)
            of = f" of {array.dtype} values"
            of = " holding Python objects (no one numeric dtype)" if array.dtype.kind == "O" else of
            raise InputError(
                f"{self.label} expects {self.dtype.name}, got "
                f"{_article(array_kinds.describe(value))}{of}"
            )
        if np.can_cast(array.dtype, self.dtype, "safe"):
            return self._exactly(array, array.astype(self.dtype))
        raise InputError(self._lossy_message(array, value))

    def _exactly(self, value: np.ndarray, array: np.ndarray) -> np.ndarray:
        """``array`` (value cast to the input's dtype) when no value changed: NumPy calls
        int64 -> float64 safe, but integers beyond 2**53 round."""
        if value.dtype.kind in "iu" and self.dtype.kind in "fc":
            with np.errstate(all="ignore"):
                exact = np.array_equal(array.real.astype(value.dtype), value)
            if not exact:
                raise InputError(
                    f"{self.label} expects {self.dtype.name}; the {value.dtype.name} array "
                    f"holds integers that {self.dtype.name} cannot represent exactly (beyond "
                    f"2**{np.finfo(self.dtype).nmant + 1}); convert it yourself if rounding "
                    f"is fine, or declare the input with dtype='{value.dtype.name}'"
                )
        return array

    def _lossy_message(self, array: np.ndarray, value) -> str:
        """Float values for an integer input are usually labels: convert them, do not widen
        the input (an int64 input feeds indexing and one-hot ops that need integers)."""
        kind = array_kinds.describe(value)
        got = f"{self.label} expects {self.dtype.name}, got a {array.dtype.name} {kind}"
        cast = array_kinds.cast_hint(value, self.dtype)
        if self.dtype.kind in "iu" and array.dtype.kind == "c":
            return (
                f"{got}; integer inputs take real integer values (yours are complex)\n  hint: "
                f"take their real part (np.real) and convert it with {cast}"
            )
        if self.dtype.kind in "iu" and array.dtype.kind == "f":
            finite = bool(np.all(np.isfinite(array)))
            whole = finite and bool(np.all(np.mod(array, 1) == 0))
            why = "they are whole numbers" if whole else "some are not whole numbers: check them"
            if not finite:  # (a pandas Int64 <NA> arrives as NaN)
                why = "some are missing (NaN, NA) or infinite: fill or drop them first"
                cast = _filled_first(value, cast, self.dtype)
            return (
                f"{got}; integer inputs take integer values such as class labels (yours are "
                f"floats; {why})\n  hint: convert them with {cast}"
            )
        return (
            f"{got}, which would lose precision; pass {cast} or declare the input with "
            f"dtype='{array.dtype.name}'"
        )

    def _from_python(self, value) -> np.ndarray:
        """Lists, Python numbers and NumPy scalars are accepted when their values survive the
        cast; a bare Python float into a float input is rounded to it, as a literal is."""
        if type(value) is float and self.dtype.kind in "fc":  # the common scalar: one check
            if abs(value) > self.largest and not math.isinf(value):
                return self._beyond_largest(value)
            return np.array(value, dtype=self.dtype)
        try:
            raw = np.asarray(value)
        except (ValueError, TypeError, RuntimeError) as exc:  # (torch: a tensor needing grad)
            raise InputError(f"{self.label}: cannot make an array of {value!r}: {exc}") from None
        if raw.dtype.kind not in "biufc":
            why = f"{raw.dtype} values"
            if raw.dtype.kind == "O":
                why = (
                    "values NumPy holds only as Python objects: an int wider than 64 bits, "
                    "None, a Decimal, or values of mixed kinds"
                )
            raise InputError(
                f"{self.label} expects {self.dtype.name}, got {type(value).__name__} "
                f"{_short(value)}: {why}"
            )
        if raw.dtype.kind == "c" and self.dtype.kind != "c":
            raw = self._real_part(value, raw)
        rounded = array_kinds.rounded_integers(value, raw)
        if rounded is not None:
            return self._with_integers(value, raw, *rounded)
        if raw.dtype == self.dtype and raw.flags.owndata:  # (a list of floats: nothing to cast)
            return raw
        with np.errstate(all="ignore"):
            array = raw.astype(self.dtype)
            if raw.dtype.kind in "fc" and self.dtype.kind in "fc":
                exact = np.array_equal(array, raw, equal_nan=True)  # (in the wider dtype)
            else:  # (no cast to a non-float gives NaN)
                exact = np.array_equal(array, raw)
            if exact and raw.dtype.kind in "iu" and self.dtype.kind in "fc":
                # the comparison above rounds raw too: 2**53 + 1 would equal its float64
                exact = np.array_equal(array.real.astype(raw.dtype), raw)
        if not exact:
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} does not convert "
                f"without loss{self._rounding(raw, array)}"
            )
        return array

    def _with_integers(self, value, raw: np.ndarray, positions, ints) -> np.ndarray:
        """A list whose integers NumPy read as rounded floats (``raw``; ``ints``, at the flat
        ``positions``, exact): each integer is checked as the Python int it is, and an integer
        input takes it exactly (``[2**62 + 1, 2.0]``, ``[2**64 - 1, 0]`` for uint64), as
        ``np.asarray(value, dtype)`` converts it; the other values as any list's."""
        inexact = array_kinds.inexact_integer(ints, self.dtype)
        if inexact is not None:
            v, held = inexact
            if held is None:
                info = np.iinfo(self.dtype)
                why = f" ({self.dtype.name} holds {info.min} to {info.max}, not {v})"
            elif self.dtype.kind not in "fc":  # (bool: 0 and 1 alone)
                why = f" ({self.dtype.name} holds the int {v} as {held!r})"
            else:
                bits = np.finfo(self.dtype).nmant + 1
                why = (
                    f" ({self.dtype.name} holds the int {v} as {held!r}: integers beyond "
                    f"2**{bits} round); pass np.asarray(value, '{self.dtype.name}') if "
                    "rounding is fine"
                )
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} does not convert "
                f"without loss{why}"
            )
        others = np.ones(raw.size, dtype=bool)
        others[positions] = False
        raw_flat = raw.reshape(-1)
        with np.errstate(all="ignore"):
            flat = raw_flat.astype(self.dtype)
            if self.dtype.kind in "iu":
                flat[positions] = np.array(ints, dtype=self.dtype)
            equal_nan = self.dtype.kind in "fc"  # (no cast to a non-float gives NaN)
            exact = np.array_equal(flat[others], raw_flat[others], equal_nan=equal_nan)
        array = flat.reshape(raw.shape)
        if not exact:
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} does not convert "
                f"without loss{self._rounding(raw, array)}"
            )
        return array

    def _beyond_largest(self, value: float) -> np.ndarray:
        """A Python float above a narrow float input's largest value: one that rounds down to
        it is taken (as NumPy rounds), one that would become inf is refused, as the same
        value given as np.float64 or in a list is."""
        with np.errstate(over="ignore"):
            array = np.array(value, dtype=self.dtype)
        if np.isinf(array):
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} is beyond its "
                f"largest finite value ({np.finfo(self.dtype).max!s}) and would become inf; "
                f"declare the input with dtype='float64', or pass inf if that is meant"
            )
        return array

    def _rounding(self, raw: np.ndarray, array: np.ndarray) -> str:
        """For floats that a narrower float input would round: the first one, and the way out."""
        if not (raw.dtype.kind in "fc" and self.dtype.kind in "fc"):
            return ""
        flat, held = raw.reshape(-1), array.reshape(-1)
        with np.errstate(all="ignore"):
            kept = (held == flat) | np.isnan(flat)
        k = int(np.argmin(kept))
        return (
            f" ({self.dtype.name} holds {flat[k].item()!r} as {held[k].item()!r}); pass "
            f"np.asarray(value, '{self.dtype.name}') if rounding is fine"
        )

    def _real_part(self, value, raw: np.ndarray) -> np.ndarray:
        """Complex Python numbers for a real input: only those with no imaginary part pass
        (a cast would drop it silently, as NumPy does with a mere ComplexWarning)."""
        if np.any(raw.imag != 0):
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} has complex "
                "numbers with an imaginary part, which the cast would drop; declare the input "
                f"with dtype='complex128' or pass the real part"
            )
        return raw.real

    def _fail(self, array, why):
        raise self.shape_error(array, why)

    def shape_error(self, array, why) -> InputShapeError:
        return InputShapeError(
            f"{self.label} expects shape {format_shape(self.shape)} ({self.dtype.name}), "
            f"got an array of shape {array.shape}: {why}"
        )


#: values checked by value (each must survive the cast), not by dtype; NumPy scalars are here
#: too (np.float64 is a float subclass; np.int64(3) fits an int32 input)
PYTHON_VALUES = (list, tuple, int, float, complex, np.generic)


def _filled_first(value, cast: str, dtype: np.dtype) -> str:
    """``cast`` (a hint such as ``value.astype('int64')``) after filling the missing values,
    in the value's own library."""
    then = cast[len("value") :] if cast.startswith("value.") else f".astype('{dtype.name}')"
    if hasattr(value, "fillna"):  # pandas
        return f"value.fillna(fill_value){then}"
    if type(value).__module__.split(".")[0] == "torch":
        return f"value.nan_to_num(fill_value){then}"
    return f"np.nan_to_num(value, nan=fill_value){then}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _article(noun: str) -> str:
    """A noun with its article ("an array", "a torch Tensor"); a builtin's bare name."""
    if " " not in noun and noun != "array":
        return noun  # a builtin's name: "got str", "got dict"
    return f"an {noun}" if noun[0] in "aeiouAEIOU" else f"a {noun}"


def call_arrays(specs, values, shared, tied: dict | None = None) -> list[np.ndarray]:
    """The arrays of a call's ``values``, each checked by its spec, once every named dim has
    one size across the inputs and the ``shared`` values the call reads, from their plain dims
    (``n``) and their expression dims (``2*n``, ``n+1``) alike: the shared values' first
    (``shared_sizes``, after the sizes updates tie: ``tied``), then each input's, then the
    expression dims of all (``check_derived_dims``). The one place a call binds its names."""
    sizes = shared_sizes(shared, tied) if shared or tied else {}
    arrays = [spec.convert(v, sizes) for spec, v in zip(specs, values)]
    check_derived_dims(specs, arrays, sizes, shared)
    return arrays


def shared_sizes(shared, tied: dict | None = None) -> dict:
    """The sizes the shared values give their named dims, which a call's inputs must give
    them too: ``{name: (size, "shared 'A' (float64(n,))")}``, the start of a call's sizes,
    after the sizes updates tie (``tied``, symnb/compile/fit.py ``tied_dims``); a name only
    an expression dim gives (``("2*n",)`` of 6) is solved for it. Read from the values where
    they are (a device copy has a shape too)."""
    sizes: dict = dict(tied) if tied else {}
    for var in shared:
        shape = var.current_value().shape
        for axis, d in enumerate(var.type.shape):
            if not isinstance(d, str):
                continue
            label = var.describe_as("shared")
            seen = sizes.setdefault(d, (shape[axis], label))
            if seen[0] != shape[axis]:
                raise InputShapeError(
                    f"{label} has dim '{d}' (axis {axis}) of size {shape[axis]} but {seen[0]} "
                    f"in {seen[1]}{ACROSS_A_CALL}: set_value them alike"
                )
    _bind_derived([], [], shared, sizes)
    return sizes


def check_derived_dims(specs, arrays, sizes: dict, shared=()) -> None:
    """Once every input of a call has bound its names, check the dims computed from them
    (``2*n``, ``n+m``: core/dim_sizes.py ``bind_all_derived``) in the inputs and the ``shared``
    values, the error naming the input or the shared variable."""
    if any(spec.derived for spec in specs) or shared:
        _bind_derived(specs, arrays, shared, sizes)


def _bind_derived(specs, arrays, shared, sizes: dict) -> None:
    values = [(spec.derived, array.shape, spec.label) for spec, array in zip(specs, arrays)]
    for var in shared:
        derived = [(i, d) for i, d in enumerate(var.type.shape) if isinstance(d, DimExpr)]
        values.append((derived, var.current_value().shape, var.describe_as("shared")))
    if not any(derived for derived, _, _ in values):
        return
    try:
        bind_all_derived(values, sizes)
    except SizeConflict as exc:
        if exc.index < len(specs):
            raise specs[exc.index].shape_error(arrays[exc.index], str(exc)) from None
        _, shape, label = values[exc.index]
        raise InputShapeError(f"{label} has shape {shape}: {exc}") from None


def check_updated_sizes(shared, updates: list, values: list, labels: tuple) -> None:
    """Before a call writes its updates: the named dims of the ``shared`` values (fit.py
    ``retied_shared``) have one size each once the update ``values`` are written, else an
    InputError naming the update (its ``labels``), its shared variable, the dim and the other
    value, with nothing written: a value of another size would make every later call reading
    them both fail (``updates={A: x}``, A and B of ``("n",)``, x of 4 values for n 3)."""
    new = {id(var): (value, label) for (var, _), value, label in zip(updates, values, labels)}
    kept = [var for var in shared if id(var) not in new]  # (they give the sizes first)
    entries = []
    for var in kept + [var for var in shared if id(var) in new]:
        value, label = new.get(id(var), (var.current_value(), None))
        what = f"{'' if label is None else 'the update of '}{var.describe_as('shared')}"
        entries.append((var, value.shape, label, what))
    try:
        bind_values([(var.type.shape, shape, what) for var, shape, _, what in entries])
    except SizeConflict as exc:
        raise _retied(entries[exc.index], exc) from None


def _retied(entry, exc: SizeConflict) -> InputShapeError:
    var, shape, label, _ = entry
    said = "its value" if label is None else label
    return InputShapeError(
        f"{var.describe_as('shared')}: {said} has shape {shape}: {exc}; no shared value was "
        "written (update them alike)"
    )
