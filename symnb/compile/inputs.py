"""Checking the values passed to a compiled function, once per call.

A value must have the input's rank, fit its fixed dims, cast to its dtype without loss, and
give each named dim one size across all the inputs of a call.
"""

from __future__ import annotations

import numpy as np

from symnb.core.dims import DimExpr, evaluate, format_shape
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
        for i, name in self.named:
            seen = sizes.setdefault(name, (array.shape[i], self.label))
            if seen[0] != array.shape[i]:
                self._fail(
                    array,
                    f"dim '{name}' (axis {i}) is {array.shape[i]} here but {seen[0]} in "
                    f"{seen[1]}; a named dim has one size across a call",
                )
        return array

    def check_derived(self, array, sizes: dict) -> None:
        """Dims such as ``n+m`` or ``batch*784`` against the sizes their names got."""
        known = {name: size for name, (size, _) in sizes.items()}
        for i, d in self.derived:
            want = evaluate(d, known)
            if want is not None and want != array.shape[i]:
                where = ", ".join(f"{n}={known[n]} in {sizes[n][1]}" for n in sorted(known))
                self._fail(array, f"axis {i} ({d}) should be {want} with {where}")

    def _as_array(self, value) -> np.ndarray:
        if isinstance(value, np.ma.MaskedArray):
            raise InputError(
                f"{self.label} got a masked array; symnb computes on plain arrays and would "
                "drop the mask: pass value.filled(fill_value) (or np.asarray(value) to use "
                "the data under the mask)"
            )
        if isinstance(value, np.ndarray):
            if value.dtype == self.dtype:
                return value
            if np.can_cast(value.dtype, self.dtype, "safe"):
                return self._exactly(value, value.astype(self.dtype))
            raise InputError(self._lossy_message(value))
        return self._from_python(value)

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

    def _lossy_message(self, value) -> str:
        """Float values for an integer input are usually labels: convert them, do not widen
        the input (an int64 input feeds indexing and one-hot ops that need integers)."""
        got = f"{self.label} expects {self.dtype.name}, got a {value.dtype.name} array"
        cast = f"value.astype('{self.dtype.name}')"
        if self.dtype.kind in "iu" and value.dtype.kind in "fc":
            whole = bool(np.all(np.isfinite(value)) and np.all(np.mod(value, 1) == 0))
            why = "they are whole numbers" if whole else "some are not whole numbers: check them"
            return (
                f"{got}; integer inputs take integer values such as class labels (yours are "
                f"floats; {why})\n  hint: convert them with {cast}"
            )
        return (
            f"{got}, which would lose precision; pass {cast} or declare the input with "
            f"dtype='{value.dtype.name}'"
        )

    def _from_python(self, value) -> np.ndarray:
        """Lists and scalars are accepted when their values survive the cast (floats into a
        float input are rounded to it, as a literal would be)."""
        if type(value) is float and self.dtype.kind in "fc":  # the common scalar: no checks
            return np.array(value, dtype=self.dtype)
        try:
            raw = np.asarray(value)
        except (ValueError, TypeError) as exc:
            raise InputError(f"{self.label}: cannot make an array of {value!r}: {exc}") from None
        if raw.dtype.kind not in "biufc":
            raise InputError(f"{self.label} expects {self.dtype.name}, got {type(value).__name__}")
        if raw.dtype.kind == "c" and self.dtype.kind != "c":
            raw = self._real_part(value, raw)
        with np.errstate(all="ignore"):
            array = raw.astype(self.dtype)
            rounded = raw.dtype.kind in "fc" and self.dtype.kind in "fc"
            exact = rounded or np.array_equal(array, raw)  # (no cast to a non-float gives NaN)
            if exact and raw.dtype.kind in "iu" and self.dtype.kind in "fc":
                # the comparison above rounds raw too: 2**53 + 1 would equal its float64
                exact = np.array_equal(array.real.astype(raw.dtype), raw)
        if not exact:
            raise InputError(
                f"{self.label} expects {self.dtype.name}; the value {value!r} does not convert "
                "without loss"
            )
        return array

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
        raise InputShapeError(
            f"{self.label} expects shape {format_shape(self.shape)} ({self.dtype.name}), "
            f"got an array of shape {array.shape}: {why}"
        )


def check_derived_dims(specs, arrays, sizes: dict) -> None:
    """Once every input of a call has bound its names, check the dims computed from them."""
    for spec, array in zip(specs, arrays):
        spec.check_derived(array, sizes)
