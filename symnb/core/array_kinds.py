"""Array objects that are not NumPy arrays, read as ndarrays for the input checks.

Whatever its kind, a value then meets the same dtype rule as an ndarray (symnb/compile/
inputs.py): a torch tensor, a JAX array, a pandas object or a memoryview whose dtype does not
cast safely to the input's is refused, never rounded. An object with ``__dlpack__`` (torch,
JAX, CuPy, ...) is taken without a copy where its memory is on the host; a torch tensor that
requires grad is detached first, with an ``InputWarning``. No array library is imported here:
kinds are recognised by their protocols and their class's module. Where NumPy's own reading
rounds before any check sees the values (a list mixing ints and floats, a DataFrame of int and
float columns, both read as float64), the integers are checked as they were given.
"""

from __future__ import annotations

import re

import numpy as np

from symnb.core.source import warn_at_user
from symnb.errors import InputError, InputWarning

#: DLPack device types whose memory the CPU reads (CPU, CUDA host, ROCm host, CUDA managed)
HOST_DEVICES = {1, 3, 11, 13}
DEVICE_NAMES = {
    2: "a CUDA device",
    4: "an OpenCL device",
    7: "a Vulkan device",
    8: "a Metal device",
    10: "a ROCm device",
}
#: the dims xarray gives an array it was not told the dims of (``dim_0``, ``dim_1``, ...)
XARRAY_DEFAULT_DIM = re.compile(r"dim_\d+")


def describe(value) -> str:
    """What the user passed, for messages: "array", "torch Tensor", "JAX array"."""
    if isinstance(value, np.ndarray):
        return "array"
    kind = type(value)
    library = kind.__module__.split(".")[0]
    if library in ("jax", "jaxlib"):
        return "JAX array"
    return kind.__name__ if library == "builtins" else f"{library} {kind.__name__}"


def cast_hint(value, dtype: np.dtype) -> str:
    """How to convert ``value`` to ``dtype`` in its own library."""
    library = type(value).__module__.split(".")[0]
    if library == "torch":
        return f"value.to(torch.{dtype.name})"
    if hasattr(value, "astype"):
        return f"value.astype('{dtype.name}')"
    return f"np.asarray(value, '{dtype.name}')"


def is_dataarray(value) -> bool:
    """An xarray DataArray (recognised without importing xarray)."""
    return type(value).__module__.startswith("xarray.") and hasattr(value, "dims")


def refuse_masked(value, label: str) -> None:
    """A masked array is refused: symnb computes on plain arrays and would drop its mask."""
    if isinstance(value, np.ma.MaskedArray):
        raise InputError(
            f"{label} got a masked array; symnb computes on plain arrays and would drop the "
            "mask: pass value.filled(fill_value) (or np.asarray(value) to use the data under "
            "the mask)"
        )


def host_value(value, label: str, shape: tuple | None = None):
    """A constant's or shared variable's value read by the rules of inputs: an ndarray or a
    Python value as it is (a masked array refused), any other kind through ``to_numpy``, a
    DataArray's dims matched to the named dims of ``shape`` (when given) by name."""
    if isinstance(value, np.ndarray):
        refuse_masked(value, label)
        return value
    if isinstance(value, (list, tuple, bool, int, float, complex, np.generic)):
        return value
    if not is_dataarray(value):
        return to_numpy(value, label)
    order = None if shape is None else dataarray_order(tuple(value.dims), shape, label)
    array = to_numpy(value.values, label)
    return array if order is None else array.transpose(order)


def lends_memory(value, array: np.ndarray) -> bool:
    """Whether ``array`` (``value`` as ``host_value`` read it) is memory the caller still
    holds through ``value``: an ndarray, a torch tensor or JAX array taken through DLPack, a
    memoryview, a DataArray's data... A write the caller makes there is then what the next
    call must read (``SharedVariable``'s ``lent``). A conversion that copied (a list, a
    resolved torch view, a cast) lends nothing."""
    if isinstance(value, (list, tuple, bool, int, float, complex, np.generic)):
        return False
    held = _memory_of(value)
    return held is not None and np.may_share_memory(array, held)


def _memory_of(value) -> np.ndarray | None:
    """``value``'s own memory as an ndarray, read without a copy, a warning or a check (None
    where it offers none on the host): what ``lends_memory`` compares with."""
    if isinstance(value, np.ndarray):
        return value
    if is_dataarray(value):
        data = getattr(value, "data", None)
        return data if isinstance(data, np.ndarray) else None
    if getattr(value, "requires_grad", False) is True and callable(getattr(value, "detach", None)):
        value = value.detach()  # (the same memory)
    try:
        if hasattr(value, "__dlpack__"):
            return np.from_dlpack(value)  # (raw memory: a torch view's bit is not applied)
        return np.asarray(value)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return None


def to_numpy(value, label: str) -> np.ndarray:
    """``value`` as an ndarray: through DLPack (no copy) where it offers it on the host, else
    through ``__array__`` or the buffer protocol (pandas, memoryviews, array-likes)."""
    if getattr(value, "requires_grad", False) is True and callable(getattr(value, "detach", None)):
        _note_detached(label)
        value = value.detach()
    value = _resolved(value)
    if hasattr(value, "__dlpack__"):
        _check_device(value, label)
        try:
            return np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError, ValueError):
            pass  # a dtype or layout DLPack cannot carry: NumPy's conversion says why
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise InputError(f"{label}: cannot read the {describe(value)} as an array: {exc}") from None
    _check_merged_columns(value, array, label)
    return array


def _check_merged_columns(frame, array: np.ndarray, label: str) -> None:
    """A pandas DataFrame of integer and float columns is read as one float array, which
    rounds the integers beyond 2**53 before any dtype check sees them: each integer column
    must come through unchanged (as its own array would have to for a float input)."""
    if array.dtype.kind not in "fc" or array.ndim != 2 or not hasattr(frame, "columns"):
        return
    if type(frame).__module__.split(".")[0] != "pandas":
        return
    for j, dtype in enumerate(frame.dtypes):
        if getattr(dtype, "kind", None) not in ("i", "u"):
            continue
        column = np.asarray(frame.iloc[:, j])
        with np.errstate(all="ignore"):
            kept = np.array_equal(array[:, j].real.astype(column.dtype), column)
        if not kept:
            bits = np.finfo(array.dtype).nmant + 1
            raise InputError(
                f"{label} got a pandas DataFrame whose {column.dtype} column "
                f"{frame.columns[j]!r} holds integers that {array.dtype} cannot represent "
                f"exactly (beyond 2**{bits}), and its columns are read as one {array.dtype} "
                f"array, which would round them; convert it yourself if rounding is fine "
                f"(value.astype('{array.dtype}')), or pass the integer columns apart"
            )


def rounded_integers(value, raw: np.ndarray, limit: float | None = None):
    """The integers of the list or tuple ``value`` that NumPy's reading of it, the float array
    ``raw``, may have rounded: NumPy reads a list that mixes Python ints with floats, or ints
    that fit no one integer dtype (``[2**64 - 1, 0]``), as float64, so ``[2**53 + 1, 0.5]``
    arrives as ``[2**53, 0.5]``. Returns the flat positions in ``raw`` of its integers of
    magnitude ``limit`` or more (by default those ``raw``'s dtype may round) and their exact
    values as Python ints; None when there are none, which a list of floats costs one
    comparison to learn."""
    if raw.dtype.kind not in "fc" or not isinstance(value, (list, tuple)):
        return None
    if limit is None:
        limit = 2.0 ** (np.finfo(raw.dtype).nmant + 1)
    large = np.abs(raw.real.reshape(-1)) >= limit  # (inf too: an int beyond the range)
    if not large.any():
        return None
    leaves = integer_leaves(value, raw.shape, every=False)
    if leaves is None:
        return None
    positions = [p for p in np.flatnonzero(large) if leaves[p] is not None]
    if not positions:
        return None
    return np.array(positions, dtype=np.intp), [leaves[p] for p in positions]


def integer_leaves(value, shape: tuple, every: bool = True) -> list | None:
    """The leaves of the list ``value`` (read as an array of ``shape``), flat, each integer as
    the Python int it is and any other leaf as None; None when ``every`` leaf must be an
    integer and one is not (or when the leaves do not make that shape)."""
    try:
        objects = np.array(value, dtype=object)
    except (ValueError, TypeError):
        return None
    if objects.shape != shape:
        return None
    leaves = [_as_int(v) for v in objects.reshape(-1)]
    if every and any(v is None for v in leaves):
        return None
    return leaves


def _as_int(leaf) -> int | None:
    """A Python int or NumPy integer as a Python int; None for any other leaf."""
    return int(leaf) if isinstance(leaf, (int, np.integer)) else None


def inexact_integer(ints, dtype: np.dtype):
    """The first of the Python ints ``ints`` that ``dtype`` does not hold exactly, and what a
    cast makes of it (None beyond an integer dtype's range); None when it holds them all."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        outside = next((v for v in ints if not lo <= v <= hi), None)
        return None if outside is None else (outside, None)
    for v in ints:
        try:
            with np.errstate(over="ignore"):
                held = np.array(float(v), dtype=dtype)[()]
        except OverflowError:  # (beyond float64: 2**1024)
            held = dtype.type(np.inf)
        if not (np.isfinite(held.real) and int(held.real) == v):
            return v, held.item()
    return None


def _resolved(value):
    """A torch view with its negative or conjugate bit set (``z.conj().imag``,
    ``z.conj()``) made plain: DLPack exports its raw memory without the bit, so symnb would
    read -value (or the unconjugated value)."""
    if type(value).__module__.split(".")[0] != "torch":
        return value
    if callable(getattr(value, "is_conj", None)) and value.is_conj():
        value = value.resolve_conj()
    if callable(getattr(value, "is_neg", None)) and value.is_neg():
        value = value.resolve_neg()
    return value


def _note_detached(label: str) -> None:
    message = (
        f"{label} got a torch tensor that requires grad: symnb computes on its values "
        "(detached), so no gradient flows back to torch; pass value.detach() to say so"
    )
    warn_at_user(message, InputWarning, stacklevel=2)


def _check_device(value, label: str) -> None:
    try:
        device_type = int(value.__dlpack_device__()[0])
    except (AttributeError, TypeError, ValueError, IndexError):
        return  # no device said: DLPack's import decides
    if device_type not in HOST_DEVICES:
        where = DEVICE_NAMES.get(device_type, f"DLPack device type {device_type}")
        raise InputError(
            f"{label} got a {describe(value)} on {where}; symnb's inputs are read on the host: "
            "copy it there first (torch: value.cpu(), JAX: jax.device_get(value), CuPy: "
            "value.get())"
        )


def dataarray_order(dims: tuple, shape: tuple, label: str) -> tuple[int, ...] | None:
    """The transpose that puts a DataArray's ``dims`` in the input's order, matching the
    input's named dims by name (the other dims keep their order); None when no transpose is
    needed. A DataArray with xarray's default names (``dim_0``, ...) is taken as it is."""
    names = [d for d in shape if isinstance(d, str)]
    named = set(names)
    if len(dims) != len(shape) or not named or len(named) < len(names):
        return None  # a rank the check after says is wrong; no names; a name twice (n, n)
    if all(XARRAY_DEFAULT_DIM.fullmatch(str(d)) for d in dims):
        return None
    missing = [name for name in names if name not in dims]
    if missing:
        others = [d for d in dims if d not in named]
        old = repr(others[0]) if len(missing) == len(others) == 1 else "..."
        raise InputError(
            f"{label} has dims {_spelled(shape)}; the DataArray's dims are {_spelled(dims)}, "
            f"with no {' or '.join(repr(m) for m in missing)}: rename them (value.rename("
            f"{{{old}: {missing[0]!r}}})) or pass value.values to match by position"
        )
    rest = iter(k for k, d in enumerate(dims) if d not in named)
    order = tuple(dims.index(d) if isinstance(d, str) else next(rest) for d in shape)
    return None if order == tuple(range(len(dims))) else order


def _spelled(dims) -> str:
    return "(" + ", ".join(repr(d) if isinstance(d, str) else str(d) for d in dims) + ")"
