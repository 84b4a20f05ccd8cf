"""The Python executor of a plan (symnb/backends/plan.py): the same records runner.c runs.

It runs backend "py" (a plan of ``Library`` steps and lazy branches), the single steps the C
runner hands back (``run_declined``: a step runner.c cannot run as planned, run here alone,
after which the runner goes on), and every step of backend "c" where there is no runner: no
Python headers to build it with (Debian's system Python without python3-dev), a failed
build, or ``sn.config.c_runner = False``. That last path is why kernel launches (through
cffi) and views have functions here too: without them a machine with no runner would run
each kernel's NumPy reference instead of the kernel (a product runs its NumPy reference,
whose matmul calls the same BLAS runner.c calls). It times steps for
``f.profile()`` only on backend "py" and without a runner (runner.c times its own steps
where it runs). It never reruns a call of backend "c" that the runner started.

Each step kind has one function here; a step that cannot run as planned (inputs that do not
broadcast, a layout a kernel declines, no BLAS) runs its ``fallback``, the node's NumPy
reference, which computes the value or raises the error naming the node and the user's line.
"""

from __future__ import annotations

import functools
import logging
import time

import numpy as np

from symnb.backends.plan import (
    BASIC_ENTRY,
    BASIC_INT,
    BASIC_NEW,
    Branch,
    Gemm,
    Launch,
    Library,
    Repeat,
    View,
    keeps_promise,
    step_bytes,
    step_inputs,
    step_outputs,
)
from symnb.control.loop import run_loop
from symnb.control.scan import Scan
from symnb.errors import CheckedShapeError, SymnbError

log = logging.getLogger(__name__)
KERNEL_TYPE = "int(*)(int64_t *, char **)"  # the launch ABI's entry point (plan.py)


@functools.cache
def _ffi():
    """cffi, through which this executor calls kernels and BLAS: imported when it first runs
    a step, so a process whose functions runner.c runs never loads it (a twentieth of a cold
    start's time to the first result)."""
    import cffi  # deferred: see the docstring

    return cffi.FFI()


def __getattr__(name: str):
    """``execute.ffi``: the executor's cffi instance, for callers that build arguments."""
    if name == "ffi":
        return _ffi()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def kernel_function(ref):
    """The kernel at ``ref.address`` (a ``KernelRef``) as a cffi function, made once."""
    if ref.fn is None:
        ref.fn = _ffi().cast(KERNEL_TYPE, ref.address)
    return ref.fn


class RuntimeFailure(SymnbError, RuntimeError):
    """An op failed while running; the message names the node and the line that built it."""


class RuntimeValueFailure(RuntimeFailure, ValueError):
    """An op refused a value while running (its error a ValueError: a class label out of
    range): a RuntimeFailure that ``except ValueError`` catches, as it would the op's own
    error (Theano's ops raised ValueError for such values)."""


def runtime_failure(node, exc, values=None) -> RuntimeFailure:
    """The RuntimeFailure of ``node`` failing with ``exc`` (``failure_message``), a
    RuntimeValueFailure where exc is a ValueError."""
    kind = RuntimeValueFailure if isinstance(exc, ValueError) else RuntimeFailure
    return kind(failure_message(node, exc, values))


def failure_message(node, exc, values=None) -> str:
    """The node as built (its inputs' declared types), the error, the run-time ``values``
    the step was given where known (unknown dims are ``?`` in the declared types: the sizes
    that failed are in the values), and the user's line that built it."""
    args = ", ".join(v.describe() for v in node.inputs)
    where = node.outputs[0].source
    given = "" if values is None else "\n  given " + ", ".join(map(_value_kind, values))
    return f"{node.op}({args}) failed: {type(exc).__name__}: {exc}{given}" + (
        f"\n  built at {where}" if where else ""
    )


def _value_kind(value) -> str:
    """``float64[2, 3]`` for an array, the type's name for anything else."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    return type(value).__name__


# -- running a plan ----------------------------------------------------------------------------
def run(plan, leaf_values: list) -> list:
    """One call: ``leaf_values`` are the arguments (inputs, then shared values)."""
    slots = plan.template()
    slots[: len(leaf_values)] = leaf_values
    for step in plan.steps:
        EXECUTE[type(step)](step, slots)
    return [slots[i] for i in plan.outputs]


def run_profiled(plan, leaf_values: list) -> tuple[list, list]:
    """Like ``run``, timing each step (backend "py", and backend "c" without a runner:
    runner.c times its own steps, ``runner.run_profiled``): ``(outputs, [(node, seconds,
    bytes, kind, steps, within)])`` where ``steps`` is the number of iterations a loop ran
    (None for other steps) and ``within`` is None (runner.c's records give a loop's body
    steps, with ``within`` the loop's record's index and the body step's). A branch's
    records follow those of the steps it ran; a loop here is one record."""
    slots = plan.template()
    slots[: len(leaf_values)] = leaf_values
    records: list = []
    _run_timed(plan.steps, slots, records)
    return [slots[i] for i in plan.outputs], records


def _run_timed(steps, slots: list, records: list) -> None:
    """Run and time each step; a branch's steps are timed one by one (then the branch)."""
    for step, taken in _taken_steps(steps, slots):
        start = time.perf_counter()
        if taken is None:
            EXECUTE[type(step)](step, slots)
        else:
            branch_results(step, slots, taken)
        _timed(step, slots, records, time.perf_counter() - start)


def _timed(step, slots: list, records: list, seconds: float) -> None:
    records.append(
        (step.node, seconds, step_bytes(step, slots), step.kind, _loop_steps(step, slots), None)
    )


def run_declined(step, slots: list, raised=None) -> None:
    """A step the C runner hands back (runner.c's ``decline_step``), run here alone over the
    call's slots (a list the runner copies back); with ``raised``, the exception the step's
    Python callable (a library step, a fallback) raised in the runner: the error naming the
    node and the user's line, raised by the runner's call."""
    if raised is not None:
        if isinstance(raised, (RuntimeFailure, CheckedShapeError)):
            raise raised
        library = step if isinstance(step, Library) else getattr(step, "fallback", None)
        values = None if library is None else [slots[i] for i in library.ins]
        raise runtime_failure(step.node, raised, values) from raised
    if log.isEnabledFor(logging.DEBUG):
        log.debug("the C runner handed a %s step of %s to Python", step.kind, step.node.op)
    EXECUTE[type(step)](step, slots)


def _loop_steps(step, slots) -> int | None:
    """How many steps a scan ran in this call (from its outputs), else None."""
    if not isinstance(step.node.op, Scan):
        return None
    outputs, inputs = step_outputs(step), step_inputs(step)
    return step.node.op.steps_taken([slots[i] for i in outputs], [slots[i] for i in inputs])


# -- Library -----------------------------------------------------------------------------------
def run_library(step: Library, slots: list) -> None:
    args = [slots[i] for i in step.ins]
    try:
        result = step.fn(*args)
    except (RuntimeFailure, CheckedShapeError):  # (the graph's own checks: raised as they are)
        raise
    except Exception as exc:
        raise runtime_failure(step.node, exc, args) from exc
    outs = step.outs
    if len(outs) == 1:  # most steps
        value = np.asarray(result)
        if not _as_promised(step, 0, value):
            raise broken_promise(step, result, args)
        slots[outs[0]] = value
        return
    if not isinstance(result, (tuple, list)) or len(result) != len(outs):
        raise broken_promise(step, result, args)
    values = [np.asarray(r) for r in result]
    if not all(_as_promised(step, k, value) for k, value in enumerate(values)):
        raise broken_promise(step, result, args)
    for slot, value in zip(outs, values):
        slots[slot] = value


def _as_promised(step: Library, k: int, array: np.ndarray) -> bool:
    """Whether result ``k`` has the dtype and the shape its node's type promised."""
    return array.dtype == step.dtypes[k] and (
        step.shapes is None or keeps_promise(array.shape, step.shapes[k])
    )


def broken_promise(step: Library, result, args) -> RuntimeFailure:
    """The error of a library step whose ``result`` is not what its node's types promised
    (a user's op whose ``perform`` disagrees with its ``infer_types``): a RuntimeFailure
    naming the op, the promise, what came back and the line that built the node; a
    RuntimeValueFailure for a shape or a number of results (a TypeError for a dtype). Every
    executor raises it: runner.c hands such a step to Python, which runs it here."""
    shapes = step.shapes or [None] * len(step.dtypes)
    promised = [_promise(d, s) for d, s in zip(step.dtypes, shapes)]
    n = len(step.outs)
    if n > 1 and (not isinstance(result, (tuple, list)) or len(result) != n):
        got = f"{len(result)} results" if isinstance(result, (tuple, list)) else "one result"
        got += f" ({_value_kind(result)})" if not isinstance(result, (tuple, list)) else ""
        problem = ValueError(
            f"its perform returned {got}, not the {n} ({', '.join(promised)}) "
            "its infer_types promised"
        )
        return runtime_failure(step.node, problem, args)
    results = (result,) if n == 1 else result
    for k, (value, want) in enumerate(zip(results, promised)):
        array = np.asarray(value)
        if _as_promised(step, k, array):
            continue
        what = "its perform returned" if n == 1 else f"result {k} of its perform is"
        given = _value_kind(value)
        if not isinstance(value, np.ndarray):
            given += f" ({_value_kind(array)} as an array)"
        kind = TypeError if array.dtype != step.dtypes[k] else ValueError
        problem = kind(f"{what} {given}, not the {want} its infer_types promised")
        return runtime_failure(step.node, problem, args)
    problem = ValueError(
        f"its perform returned {_value_kind(result)}, not what its "
        f"infer_types promised ({', '.join(promised)})"
    )
    return runtime_failure(step.node, problem, args)  # (not reached: a caller saw a break)


def _promise(dtype, shape) -> str:
    """``float64[?, 3]``: a promised result as messages name it (``?`` a size not fixed)."""
    if shape is None:
        return f"{np.dtype(dtype)} array"
    return f"{np.dtype(dtype)}[{', '.join('?' if d < 0 else str(d) for d in shape)}]"


# -- Launch ------------------------------------------------------------------------------------
def run_launch(step: Launch, slots: list) -> None:
    """The kernel over its inputs, else its fallback; output 0 in the ``into`` array either
    way when the step has one (``_fill_into``)."""
    if not _launch(step, slots):
        run_library(step.fallback, slots)
        if step.into is not None:
            _fill_into(step, slots)


def _fill_into(step: Launch, slots: list) -> None:
    """The fallback's result copied into the ``into`` array, which then holds output 0 as when
    the kernel ran (the plan's own view of storage made in the call: a writeable alias)."""
    into, result = slots[step.into], slots[step.outs[0][0]]
    if into is result:
        return
    if not (isinstance(result, np.ndarray) and _fits(into, result.shape, result.dtype)):
        planned = f"{getattr(into, 'dtype', '')}{list(getattr(into, 'shape', ()))}"
        problem = f"its result {_value_kind(result)} cannot go into the {planned}"
        raise RuntimeFailure(
            failure_message(step.node, ValueError(problem + " it was planned for"))
        )
    view_at(into, into.shape, into.strides, 0, writeable=True)[...] = result
    slots[step.outs[0][0]] = into


def _launch(step: Launch, slots: list):
    """The kernel's run: False when the fallback must run instead."""
    arrays = [slots[slot] for slot, _ in step.ins]
    into = None if step.into is None else slots[step.into]
    key = tuple([(a.shape, a.strides) for a in arrays])
    if into is not None:  # output 0 follows its strides
        if not isinstance(into, np.ndarray):
            return False
        key += (("into", into.shape, into.strides),)
    layout = step.layouts.get(key) or _prepare(step, arrays, key, into)
    if layout is DECLINE:
        return False
    shapes, args = layout
    if into is not None and not _fits(into, shapes[0], step.outs[0][1]):
        return False
    outs = [
        into if k == 0 and into is not None else _output(step, k, shape, arrays)
        for k, shape in enumerate(shapes)
    ]
    if args is not None:
        pointers = _ffi().new("char *[]", [pointer(a) for a in [*arrays, *outs]])
        if kernel_function(step.kernel)(args, pointers):
            return False  # the kernel declined this layout
    for (slot, *_), out in zip(step.outs, outs):
        slots[slot] = out
    return True


DECLINE = ("decline",)
MAX_LAYOUTS = 64  # per step; a step called with ever new shapes starts over


def _prepare(step: Launch, arrays, key: tuple, into=None):
    """``step.layouts[key]``: (output shapes, kernel arguments or None when empty), or DECLINE.
    The arguments depend on nothing else (outputs are new C-ordered arrays, an input of the
    same layout, or the ``into`` array whose layout the key holds: ``_launch`` checks that it
    fits before they are used), and kernels work on a copy of them, so calls and threads
    share them."""
    space = index_space(step, arrays)
    if space is None or (step.empty == "decline" and 0 in space):
        layout = DECLINE
    else:
        shapes = [output_shape(space, absent, keep) for _, _, absent, keep in step.outs]
        values = None if 0 in space else kernel_args(step, space, arrays, into)
        args = None if values is None else _ffi().new("int64_t[]", values)
        layout = (shapes, args)
    if len(step.layouts) >= MAX_LAYOUTS:
        step.layouts.clear()
    step.layouts[key] = layout
    return layout


def placed(values, absent, ndim: int, fill):
    """An operand's per-axis ``values`` over an ``ndim``-axis space: right-aligned against the
    axes it does not lack, ``fill`` elsewhere; None when it has too many axes."""
    present = [d for d in range(ndim) if d not in absent]
    if len(values) > len(present):
        return None
    out = [fill] * ndim
    for d, v in zip(present[len(present) - len(values) :], values):
        out[d] = v
    return out


def index_space(step: Launch, arrays) -> tuple | None:
    """The broadcast of the inputs over the space; None when they do not broadcast."""
    shape = [1] * step.ndim
    for array, (_, absent) in zip(arrays, step.ins):
        dims = placed(array.shape, absent, step.ndim, 1)
        if dims is None:
            return None
        for d, n in enumerate(dims):
            if n != shape[d] and n != 1:
                if shape[d] != 1:
                    return None
                shape[d] = n
    return tuple(shape)


def output_shape(space: tuple, absent, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if d in absent else n for d, n in enumerate(space))
    return tuple(n for d, n in enumerate(space) if d not in absent)


def _fits(into, shape: tuple, dtype) -> bool:
    """Whether a launch's ``into`` array can take its output 0 (any strides)."""
    return isinstance(into, np.ndarray) and into.shape == tuple(shape) and into.dtype == dtype


def _output(step: Launch, k: int, shape: tuple, arrays):
    """Output k: input ``inplace``'s buffer when it can hold output 0, else a new array."""
    dtype = step.outs[k][1]
    if k == 0 and step.inplace is not None:
        target = arrays[step.inplace]
        flags = target.flags
        if target.shape == shape and target.dtype == dtype and flags.writeable:
            if flags.c_contiguous:
                return target
    return np.empty(shape, dtype)


def operand_strides(array, absent, ndim: int) -> list[int]:
    """Byte strides over the space: 0 on broadcast, length-1 and absent axes."""
    return _strides_over(array.shape, array.strides, absent, ndim)


def _strides_over(shape, strides, absent, ndim: int) -> list[int]:
    return placed([0 if n == 1 else s for n, s in zip(shape, strides)], absent, ndim, 0)


def _c_strides(shape: tuple, itemsize: int) -> list[int]:
    strides = []
    for n in reversed(shape):
        strides.insert(0, itemsize)
        itemsize *= n
    return strides


def kernel_args(step: Launch, space: tuple, arrays, into=None) -> list[int]:
    """``[nd, shape, strides of each input then output, element count of each output]``; a
    0-d space is passed as one axis of length 1; outputs are C-ordered but the ``into``
    array output 0 is written into."""
    nd = max(len(space), 1)
    args = [nd, *(space or (1,))]
    for array, (_, absent) in zip(arrays, step.ins):
        args += operand_strides(array, absent, step.ndim) or [0]
    counts = []
    for k, (_, dtype, absent, keepdims) in enumerate(step.outs):
        shape = output_shape(space, absent, keepdims)
        strides = _c_strides(shape, dtype.itemsize)
        if k == 0 and into is not None:
            strides = into.strides
        args += _strides_over(shape, strides, () if keepdims else absent, step.ndim) or [0]
        counts.append(int(np.prod(shape)))
    return args + counts


def pointer(array: np.ndarray):
    """A ``char *`` to the array's first element (any strides, read-only too)."""
    try:
        return _ffi().from_buffer(array)
    except (ValueError, TypeError):  # not C-contiguous: cffi wants a plain buffer
        return _ffi().cast("char *", array.ctypes.data)


# -- Gemm --------------------------------------------------------------------------------------
def run_gemm(step: Gemm, slots: list) -> None:
    """The product by its NumPy reference, whose matmul calls the same BLAS: runner.c makes
    the one ``?gemm`` call (alpha, beta and z folded in); without a runner NumPy does."""
    run_library(step.fallback, slots)


def _broadcasts_to(small: tuple, shape: tuple) -> bool:
    if len(small) > len(shape):
        return False
    return all(d == 1 or d == s for d, s in zip(reversed(small), reversed(shape)))


# -- View --------------------------------------------------------------------------------------
def run_view(step: View, slots: list) -> None:
    src = slots[step.src]
    like = None if step.like is None else slots[step.like]
    arrays = isinstance(src, np.ndarray) and (like is None or isinstance(like, np.ndarray))
    bounds = [slots[i] for i in step.bounds]
    value = VIEWS[step.how](step, src, like, *bounds) if arrays else None
    if value is None:
        return run_library(step.fallback, slots)
    slots[step.out] = value
    return None


def _strided(src, shape, strides, writeable: bool):
    writeable = writeable and src.flags.writeable
    return np.lib.stride_tricks.as_strided(src, shape, strides, writeable=writeable)


def view_axes(step: View, src, like):
    kept = [a for a in step.axes if a >= 0]
    if any(n != 1 for d, n in enumerate(src.shape) if d not in kept):
        return None
    shape = [1 if a < 0 else src.shape[a] for a in step.axes]
    strides = [0 if a < 0 else src.strides[a] for a in step.axes]
    return _strided(src, shape, strides, writeable=True)


def view_broadcast(step: View, src, like):
    shape = like.shape
    if not _broadcasts_to(src.shape, shape):
        return None
    strides = placed(
        [0 if n == 1 else s for n, s in zip(src.shape, src.strides)], (), len(shape), 0
    )
    return _strided(src, shape, strides, writeable=False)


def reshape_target(step: View, src, like) -> tuple | None:
    """The shape a reshape asks for, with its -1 filled; None when it does not fit."""
    if like is not None:
        shape = list(like.shape)
    else:
        shape = [src.shape[-d - 2] if d <= -2 else d for d in step.target]
    known = int(np.prod([d for d in shape if d != -1]))
    if -1 in shape:
        if known == 0 or src.size % known:
            return None
        shape[shape.index(-1)] = src.size // known
    return tuple(shape) if int(np.prod(shape)) == src.size else None


def view_reshape(step: View, src, like):
    shape = reshape_target(step, src, like)
    if shape is None or not src.flags.c_contiguous:
        return None
    return src.reshape(shape)


def view_same_shape(step: View, src, like):
    """``src``, read-only, where ``like`` has its shape (runner.c's view_same_shape); else
    None: the fallback sums (``SumToLike``)."""
    if np.shape(like) != src.shape:
        return None
    return _strided(src, src.shape, src.strides, writeable=False)


def view_shape(step: View, src, like):
    """``Shape``: src's dims as an int64 vector (runner.c's view_shape)."""
    return np.array(src.shape, dtype=np.int64)


def view_basic(step: View, src, like, *bounds):
    """``src[index]``, read-only, for the index ``basic_index`` encoded in ``step.target``
    (runner.c's view_basic); None where NumPy would raise (the fallback raises it)."""
    index, target = [], step.target
    for at in range(0, len(target), BASIC_ENTRY):
        kind, *fields, mask = target[at : at + BASIC_ENTRY]
        values = [
            None if mask >> k & 1 else bound_value(bounds, v) if mask >> (k + 3) & 1 else v
            for k, v in enumerate(fields)
        ]
        if BAD_BOUND in values:
            return None
        index.append(
            None if kind == BASIC_NEW else values[0] if kind == BASIC_INT else slice(*values)
        )
    try:
        view = src[(*index, Ellipsis)]
    except (IndexError, ValueError):
        return None
    return _strided(view, view.shape, view.strides, writeable=False)


BAD_BOUND = object()


def bound_value(bounds, at: int):
    """The int in the 0-d integer array ``bounds[at]``; BAD_BOUND for anything else."""
    value = bounds[at] if 0 <= at < len(bounds) else None
    if not isinstance(value, np.ndarray) or value.ndim or value.dtype.kind not in "iu":
        return BAD_BOUND
    return int(value)


def view_size(step: View, src, like):
    return np.array(int(np.prod([src.shape[a] for a in step.axes])), dtype=np.int64)


def view_windows(step: View, src, like):
    """The windows of src's last two axes, as runner.c's view_windows makes them."""
    kh, kw, _, _, dh, dw, top, left = step.target
    if src.ndim != 4 or top < 0 or left < 0:
        return None
    if src.shape[2] - top < dh * (kh - 1) + 1 or src.shape[3] - left < dw * (kw - 1) + 1:
        return None
    return windows_view(src, step.target, step.axes)


def windows_view(x, geometry, order):
    """Read-only windows of 4-d x: the axes (N, C, out_h, out_w, kh, kw) in ``order``;
    ``geometry`` = (kh, kw, stride h, stride w, dilation h, dilation w, top, left)."""
    kh, kw, sh, sw, dh, dw, top, left = geometry
    x = x[:, :, top:, left:]
    s_n, s_c, s_h, s_w = x.strides
    out_h = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    out_w = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    dims = (x.shape[0], x.shape[1], out_h, out_w, kh, kw)
    strides = (s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw)
    return _strided(x, [dims[a] for a in order], [strides[a] for a in order], writeable=False)


def view_strided(step: View, src, like):
    """Any strides over src, as runner.c's view_strided makes them; None where the view would
    reach outside src's memory."""
    geometry = strided_geometry(step.target, src, like)
    return None if geometry is None else view_at(src, *geometry)


def strided_geometry(target, src, like):
    """(shape, byte strides, byte offset) of a "strided" view; None when it does not fit.
    ``target`` = (nd, dims[nd], coefficients[nd][src.ndim], offsets[src.ndim]): out axis k has
    stride sum_a coefficients[k][a] * src.strides[a]; dims >= 0 are fixed, -(a+2) is like's
    axis a; the view starts at sum_a offsets[a] * src.strides[a] and must stay within the
    bytes src spans."""
    nd, m = target[0], src.ndim
    if len(target) != 1 + nd + nd * m + m:
        return None
    dims, coefs, offs = target[1 : 1 + nd], target[1 + nd : 1 + nd + nd * m], target[-m:]
    if any(d < 0 and (like is None or -d - 2 >= like.ndim) for d in dims):
        return None
    shape = [d if d >= 0 else like.shape[-d - 2] for d in dims]
    strides = [
        sum(c * s for c, s in zip(coefs[k * m : (k + 1) * m], src.strides)) for k in range(nd)
    ]
    offset = sum(o * s for o, s in zip(offs, src.strides))
    if 0 in shape:
        return shape, strides, 0
    low, high = _span(shape, strides, src.itemsize)
    src_low, src_high = _span(src.shape, src.strides, src.itemsize)
    inside = src.size > 0 and offset + low >= src_low and offset + high <= src_high
    return (shape, strides, offset) if inside else None


def _span(shape, strides, itemsize: int) -> tuple[int, int]:
    """The bytes [low, high) an array of this shape and strides touches, from its first
    element's address."""
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    return low, sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize


def view_at(src, shape, strides, offset: int, writeable: bool = False):
    """A view of src's memory starting ``offset`` bytes after its first element, read-only
    unless ``writeable`` (the plan writing its own storage: ``_fill_into``)."""
    interface = dict(src.__array_interface__, shape=tuple(shape), strides=tuple(strides))
    interface["data"] = (interface["data"][0] + offset, not writeable)
    return np.asarray(_Memory(interface, src))


class _Memory:
    """An array interface that keeps the array owning the memory alive."""

    def __init__(self, interface: dict, owner):
        self.__array_interface__, self.owner = interface, owner


VIEWS = {
    "axes": view_axes,
    "broadcast": view_broadcast,
    "reshape": view_reshape,
    "size": view_size,
    "windows": view_windows,
    "strided": view_strided,
    "same_shape": view_same_shape,
    "shape": view_shape,
    "basic": view_basic,
}


# -- Branch ------------------------------------------------------------------------------------
def run_branch(step: Branch, slots: list) -> None:
    """Only the steps of the branch the condition picks run."""
    for sub, taken in _taken_steps([step], slots):
        if taken is None:
            EXECUTE[type(sub)](sub, slots)
        else:
            branch_results(sub, slots, taken)


def _taken_steps(steps, slots: list):
    """What a run of ``steps`` does, in order: ``(step, None)`` for a step to run, and
    ``(branch, taken)`` once the side its condition picked has run (its results to write).
    A condition is read when its branch is reached, so the caller runs each step before it
    asks for the next. An explicit stack of the branches entered, not a recursion: they nest
    as deep as the user's ifelses (an if/elif ladder of thousands)."""
    stack = [(iter(steps), None, None)]  # (steps still to run, their branch, its side taken)
    while stack:
        todo, branch, taken = stack[-1]
        for step in todo:
            if isinstance(step, Branch):
                side = branch_taken(step, slots)
                stack.append((iter(step.then_steps if side else step.else_steps), step, side))
                break
            yield step, None
        else:
            stack.pop()
            if branch is not None:
                yield branch, taken


def branch_taken(step: Branch, slots: list) -> bool:
    """Whether the then-branch runs."""
    return bool(slots[step.cond])


def branch_results(step: Branch, slots: list, taken: bool) -> None:
    """The outputs take the results of the side taken (leaves copied)."""
    for out, result in zip(step.outs, step.then_outs if taken else step.else_outs):
        value = slots[result]
        slots[out] = np.array(value, copy=True) if result < step.n_leaves else value


# -- Repeat ------------------------------------------------------------------------------------
def run_repeat(step: Repeat, slots: list) -> None:
    """The loop by the one loop runtime (``run_loop``: its checks raise the errors naming the
    loop's inputs), each step one run of ``step.body``."""
    n_steps, *arrays = [slots[i] for i in step.ins]
    results = run_loop(step.node.op.loop, _body_runner(step.body), int(n_steps), arrays)
    for slot, value in zip(step.outs, results, strict=True):
        slots[slot] = value


def _body_runner(body):
    def one_step(values: list) -> list:
        return run(body, values)

    return one_step


EXECUTE = {
    Library: run_library,
    Launch: run_launch,
    Gemm: run_gemm,
    View: run_view,
    Branch: run_branch,
    Repeat: run_repeat,
}
