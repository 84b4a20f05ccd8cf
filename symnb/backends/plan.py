"""The frozen plan of a compiled function: step records over numbered slots.

A linker turns the optimised graph into a ``Plan``; executors run it: ``runner.c`` for
backend "c" (it converts the records into C structs once, and hands a step it cannot run as
planned to Python for that step only), and the Python executor
(``symnb/backends/execute.py``) for backend "py" (a plan of ``Library`` steps and branches),
the single steps the runner hands back, and backend "c" where no C extension can be built.

Slots: the call's arguments first (the inputs, then the shared values), then the constants,
then one slot per value a step computes (and one per scalar constant a kernel reads that the
graph does not hold: ``PlanBuilder.operand_slot``). The records know no language: a kernel is
an opaque handle (its entry point ``int sn_kernel(int64_t *a, char **ptr)``; see
``Launch``), BLAS is an address found in the process, and a library step is a Python
callable. A loop (``Repeat``) holds the plan of its step.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

log = logging.getLogger(__name__)


class KernelRef:
    """A compiled kernel as the plan holds it: its name and source for display, and the
    function the linker fills in once the kernels of a function are compiled together."""

    __slots__ = ("name", "source", "description", "fn", "address")

    def __init__(self, name: str, source: str | None, description=None):
        self.name, self.source, self.description = name, source, description
        self.fn, self.address = None, 0

    def load(self, fn, address: int) -> None:
        self.fn, self.address = fn, address

    def __repr__(self):
        return f"<kernel {self.name}>"


class OwnResults:
    """A fallback's callable whose results never share memory with its arguments: a NumPy
    reference may hand an input back (or a view of one), but a kernel or BLAS step's output is
    storage of its own, and ``fresh_outputs`` counts on it. Each run is a fallback, which the
    ``symnb.backends.plan`` logger reports (INFO the first time per step, DEBUG after)."""

    __slots__ = ("fn", "node", "told")

    def __init__(self, fn, node=None):
        self.fn, self.node, self.told = fn, node, False

    def __call__(self, *args):
        if log.isEnabledFor(logging.DEBUG if self.told else logging.INFO):
            self._log(args)
        result = self.fn(*args)
        if isinstance(result, (tuple, list)):
            return tuple(_owned(r, args) for r in result)
        return _owned(result, args)

    def _log(self, args) -> None:
        level = logging.DEBUG if self.told else logging.INFO
        self.told = True
        values = ", ".join(_described(a) for a in args)
        outputs = getattr(self.node, "outputs", None)
        where = outputs[0].source if outputs else None
        log.log(
            level,
            "fallback: %s ran its NumPy reference (its kernel or BLAS call declined "
            "this call's layout or sizes) on %s%s",
            getattr(self.node, "op", "a step"),
            values,
            f" (built at {where})" if where else "",
        )


def _described(value) -> str:
    shape = getattr(value, "shape", None)
    return f"{value.dtype}{list(shape)}" if shape is not None else type(value).__name__


def _owned(value, args):
    return value.copy() if isinstance(value, np.ndarray) and may_alias(value, args) else value


def may_alias(result, args) -> bool:
    """Whether ``result`` could share memory with one of ``args``: it is a view, or it is one
    of them (a NumPy reference that hands an input back)."""
    return getattr(result, "base", None) is not None or any(result is a for a in args)


@dataclass(frozen=True, eq=False)
class Library:
    """``outs = fn(*ins)``: an op's NumPy reference (or a Python callable standing in for
    one, a user's op); a result that is not what the types promised (another dtype than
    ``dtypes``, another rank or fixed size than ``shapes``, another number of results) is
    an error naming the op. ``kind`` is what ``f.kernels`` and profiles call it (library,
    blas, kernel). ``shapes``: per output, its fixed sizes, -1 where the size is not fixed
    (``promised_shape``); None: only the dtypes are checked."""

    fn: Callable
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    dtypes: tuple[np.dtype, ...]
    node: object
    kind: str = "library"
    shapes: tuple[tuple[int, ...], ...] | None = None


def promised_shape(variable) -> tuple[int, ...]:
    """The shape a step's result for ``variable`` must have, as executors check it: its
    fixed sizes, -1 for a dim whose size is unknown or named (a named size is bound by the
    call's arguments: its value is not the plan's)."""
    return tuple(d if type(d) is int else -1 for d in variable.type.shape)


def keeps_promise(shape: tuple, promised: tuple) -> bool:
    """Whether an array of ``shape`` fits ``promised`` (``promised_shape``): the same rank
    and each fixed size (a comparison of tuples when every size is fixed)."""
    if shape == promised:
        return True
    if len(shape) != len(promised):
        return False
    for n, p in zip(shape, promised):
        if p != n and p != -1:
            return False
    return True


@dataclass(frozen=True, eq=False)
class Launch:
    """One kernel call over a broadcast index space of rank ``ndim``.

    ``ins``: (slot, absent axes) per input; ``outs``: (slot, dtype, absent axes, keepdims) per
    output, allocated C-contiguous over the space without their absent axes (length 1 when
    ``keepdims``). Output 0 may reuse input ``inplace``'s buffer. ``empty``: "skip" (outputs
    are empty arrays) or "decline" (the fallback runs) when the space has no element; the
    ``fallback`` (the node's NumPy reference) also runs when the kernel declines a layout or
    the inputs do not broadcast. ``into``: a slot whose array output 0 is written into,
    whatever its strides (a view the plan made of storage it made in the call: the interior
    of padded planes); where the fallback runs, the executor copies its result there, and
    an array that cannot take it (another shape or dtype) is an error naming the node."""

    kind: ClassVar[str] = "kernel"
    kernel: KernelRef
    ins: tuple[tuple[int, tuple[int, ...]], ...]
    outs: tuple[tuple[int, np.dtype, tuple[int, ...], bool], ...]
    ndim: int
    inplace: int | None
    empty: str
    node: object
    fallback: Library
    into: int | None = None
    #: the Python executor's kernel arguments per input layout (a cache, not part of the plan)
    layouts: dict = field(init=False, repr=False, default_factory=dict)


#: multiply-adds below which a product outside loops runs on one BLAS thread: woken for a
#: small product, OpenBLAS's threads spin for about 0.1 s on the core the next kernel's
#: OpenMP threads need. runner.c gets it as ``SN_SERIAL_MAX`` (runner_gemm.h gives the bands
#: above it).
SERIAL_MAX = 1 << 24


@dataclass(frozen=True, eq=False)
class BlasRef:
    """A ``cblas_?gemm`` entry point: its address and whether its ints are 64-bit;
    ``threads``: the addresses of its library's ``set_num_threads(int)`` and
    ``get_num_threads()`` (0: none found), with which a loop runs its small products on one
    thread (runner.c's run_gemm)."""

    name: str
    address: int
    ilp64: bool
    threads: tuple[int, int] = (0, 0)


@dataclass(frozen=True, eq=False)
class Gemm:
    """``out = beta * z + alpha * (x @ y)`` for 2-d ``dtype`` (float32/64) operands as one
    ``?gemm`` call; ``z``/``alpha``/``beta`` None mean no z, 1 and 0 (plain matmul). ``blas``
    None: no BLAS was found, NumPy runs (the fallback). Into z's buffer when ``inplace`` and z
    can hold the result without overlapping x or y."""

    kind: ClassVar[str] = "blas"
    z: int | None
    alpha: int | None
    x: int
    y: int
    beta: int | None
    out: int
    dtype: np.dtype
    inplace: bool
    blas: BlasRef | None
    node: object
    fallback: Library


@dataclass(frozen=True, eq=False)
class View:
    """A layout op computed without calling Python: ``how`` is

    - "axes": out axis i is input axis ``axes[i]``, or a new length-1 axis where it is -1;
      input axes not listed must have length 1 (DimShuffle, transpose, squeeze, expand_dims);
    - "broadcast": ``src`` broadcast to ``like``'s shape, a read-only view (BroadcastLike);
    - "reshape": a C-contiguous ``src`` viewed as ``target`` (>= 0 fixed, -1 the rest,
      -(k+2) the length of input axis k), or as ``like``'s shape when ``like`` is set;
    - "same_shape": ``src`` itself, read-only, where ``like`` has its shape, else the fallback
      (``SumToLike``, which sums nothing then: a bias's gradient when the batch's sizes were
      unknown at compile time);
    - "shape": ``src``'s dims as a new int64 vector (``Shape``);
    - "basic": ``src[index]``, read-only, for Subtensor's basic index (ints, slices, new
      axes; ``basic_index``'s encoding in ``target``), its symbolic ints read from the
      0-d integer arrays in the ``bounds`` slots: a minibatch sliced from a shared dataset
      by a symbolic index; an int out of range or a zero step runs the fallback, which
      raises NumPy's error naming the node;
    - "size": the int64 product of ``src``'s lengths over ``axes`` (ReducedSize);
    - "windows": every window of a 4-d ``src``'s last two axes, read-only, with no copy:
      ``target`` = (kh, kw, stride h, stride w, dilation h, dilation w, top, left: where
      the first window starts), and out axis i is
      axis ``axes[i]`` of (N, C, out_h, out_w, kh, kw) (convolution and pooling; see
      symnb/backends/planning/convolution.py, pools.py);
    - "strided": any strides over ``src``, read-only: ``target`` = (nd, dims, coefficients
      (nd x src's ndim), offsets (src's ndim)); out axis k's stride is the sum of its
      coefficients times src's strides, a dim >= 0 is fixed and -(a+2) is ``like``'s axis a,
      the first element sits at the sum of the offsets times src's strides; a view that would
      reach outside the bytes src spans runs the fallback (col2im's shifted reads, pools'
      window elements: convolution.py, pools.py).

    What does not fit (a dropped axis longer than 1, a non-contiguous reshape) runs the
    ``fallback``."""

    kind: ClassVar[str] = "view"
    how: str
    src: int
    like: int | None
    out: int
    axes: tuple[int, ...]
    target: tuple[int, ...]
    node: object
    fallback: Library
    bounds: tuple[int, ...] = ()


#: ``basic_index``'s entry kinds, and its mask bits: bit k (k = 0, 1, 2: start, stop, step)
#: a ``None``, bit k + 3 a symbolic value (the value is then its position in ``bounds``)
BASIC_NEW, BASIC_INT, BASIC_SLICE = 0, 1, 2
BASIC_ENTRY = 5  # int64s per entry: (kind, start, stop, step, mask)


def basic_index(spec) -> tuple[int, ...]:
    """Subtensor's basic index as a "basic" view's ``target``: per entry (kind, start, stop,
    step, mask); an int index is a slice's start. Symbolic parts count from 0 in order."""
    out, symbolic = [], 0
    for entry in spec:
        if entry[0] == "new":
            out += [BASIC_NEW, 0, 0, 0, 0]
            continue
        kind, values = (BASIC_INT, entry[1:2]) if entry[0] == "int" else (BASIC_SLICE, entry[1:])
        fields, mask = [0, 0, 0], 0
        for k, value in enumerate(values):
            if value is None:
                mask |= 1 << k
            elif isinstance(value, int):
                fields[k] = value
            else:  # SYM: the next bound
                fields[k], mask, symbolic = symbolic, mask | 1 << (k + 3), symbolic + 1
        out += [kind, *fields, mask]
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Layout:
    """A layout op a device executor computes within the device, by a view of its source or
    copies between device buffers at byte offsets (a device array has no offset of its
    own): ``how`` is

    - "slice": ``arrays[0][index]`` for a basic index (``params``: Subtensor's spec, its
      symbolic bounds read from the ``ints`` slots);
    - "concatenate": ``arrays`` joined along axis ``params[0]``;
    - "reshape": ``arrays[0]`` reshaped to ``params`` = (target, name_axes), Reshape's, the
      sizes given as inputs read from the ``ints`` slots.
    - "pad": ``arrays[0]`` padded around its last two axes, ``params`` = (((top, bottom),
      (left, right)), fill), by a kernel (symnb/backends/device/windows.py);
    - "max_pool_grad": ``MaxPool2dGrad`` (``params[0]``, the op) of ``arrays`` = (x, g), by
      a kernel gathering each input element's gradient (windows.py).

    It runs where its arrays are: on the device when one of them is there, else on the host
    (the ``fallback``, the node's reference). The ``ints`` are read on the host. A layout the
    device cannot express (a negative step, pieces of other dtypes) runs the fallback.
    Planned for device linkers only (symnb/backends/device/linker.py)."""

    kind: ClassVar[str] = "view"
    how: str
    arrays: tuple[int, ...]
    ints: tuple[int, ...]
    out: int
    params: tuple
    node: object
    fallback: Library


@dataclass(frozen=True, eq=False)
class Branch:
    """A lazy ``ifelse``: when the scalar in slot ``cond`` is true the ``then_steps`` run and
    ``outs`` take the values in ``then_outs``, else the ``else_steps`` and ``else_outs``; the
    steps of the branch not taken never run (symnb/backends/branches.py plans them). A
    result that is a leaf (slot < ``n_leaves``: an argument or constant) is copied, so the
    output never aliases it."""

    kind: ClassVar[str] = "branch"
    cond: int
    then_steps: tuple
    then_outs: tuple[int, ...]
    else_steps: tuple
    else_outs: tuple[int, ...]
    outs: tuple[int, ...]
    n_leaves: int
    node: object


@dataclass(frozen=True, eq=False)
class Repeat:
    """A scan's loop, run by the executor itself: ``body`` (the inner graph's own plan) runs
    once per step over its own slots, which take, in order, each sequence's row at this step,
    each state's value after the step before, and the non-sequences.

    ``ins`` = (n_steps, the sequences, the initial states, the non-sequences); ``outs``: per
    state all its values (``history``) or only its last one, then each plain output's rows,
    written into storage allocated once per call; ``dtypes``: theirs. ``body.outputs``: each
    state's next value, the plain outputs, then (``until``) the truth that stops the loop
    after the step that computed it. ``backwards``: from the sequences' last row to their
    first, each step's results stored at the row it read (a gradient's loop). The meaning is
    ``symnb.control.loop.run_loop``'s; a loop the runner cannot run as planned (a state that
    changes shape, no steps to run) is handed to the Python executor as one step, which
    runs it with ``run_loop`` and raises the error at the user's line."""

    kind: ClassVar[str] = "loop"
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    dtypes: tuple[np.dtype, ...]
    n_seqs: int
    n_states: int
    history: tuple[bool, ...]
    until: bool
    backwards: bool
    #: n_steps is a step count (``Loop.counted``): a negative one is handed to Python
    counted: bool
    body: Plan
    node: object

    @property
    def n_plain(self) -> int:
        return len(self.outs) - self.n_states


@dataclass(frozen=True, eq=False)
class Transfer:
    """Copy slot ``src`` to ``out`` across the bus: ``to`` is "device" or "host". Device
    backends put one before each step that needs its operand on the other side (a kernel
    reading an input, a NumPy fallback reading a kernel's result); a value already there
    passes through without a copy (a shared value kept on the device). ``node``: the node
    whose step needs it."""

    kind: ClassVar[str] = "transfer"
    to: str
    src: int
    out: int
    node: object


@dataclass(frozen=True, eq=False)
class Plan:
    """``inputs``: (dtype, shape) of each checked argument (the function's inputs);
    ``nargs``: arguments of a call (inputs, then shared values); ``constants``: (slot, array);
    ``outputs``: the slots returned, in order."""

    inputs: tuple[tuple[np.dtype, tuple], ...]
    nargs: int
    nslots: int
    constants: tuple[tuple[int, object], ...]
    steps: tuple
    outputs: tuple[int, ...]

    def template(self) -> list:
        """The slot list before a call: the constants in place, every other slot empty."""
        return list(self._template)

    @functools.cached_property
    def _template(self) -> tuple:
        slots: list = [None] * self.nslots
        for slot, value in self.constants:
            slots[slot] = value
        return tuple(slots)

    def __repr__(self):
        """One line per step: ``3  gemm     s9 <- s4, s7  (gemm)``."""
        head = f"plan: {self.nargs} arguments, {self.nslots} slots, outputs {list(self.outputs)}"
        return "\n".join([head] + [f"{i:3d}  {describe(s)}" for i, s in enumerate(self.steps)])


def describe(step) -> str:
    """A step as one line of text: its kind, the slots it writes and reads, its op."""
    outs = ", ".join(f"s{i}" for i in step_outputs(step))
    ins = ", ".join(f"s{i}" for i in step_inputs(step))
    if isinstance(step, Transfer):
        return f"{step.kind:<8} {outs} <- {ins}  (to {step.to}, for {step.node.op})"
    return f"{step.kind:<8} {outs} <- {ins}  ({step.node.op})"


def fresh_outputs(plan: Plan) -> frozenset[int]:
    """The output slots whose arrays a call allocates itself (a kernel's or a BLAS call's
    storage, or an in-place result written over such storage): they never alias an argument,
    a constant or a shared value, so a function returns them without checking."""
    fresh: set[int] = set()
    for step in plan.steps:
        if isinstance(step, Launch) and isinstance(step.fallback.fn, OwnResults):
            slots = [out[0] for out in step.outs]
            taken = step.inplace is not None and step.ins[step.inplace][0] not in fresh
            fresh.update(slots[1:] if taken else slots)
        elif isinstance(step, Gemm) and isinstance(step.fallback.fn, OwnResults):
            if not step.inplace or step.z in fresh:
                fresh.add(step.out)
    return frozenset(s for s in plan.outputs if s in fresh)


def step_outputs(step) -> tuple[int, ...]:
    """The slots a step writes."""
    if isinstance(step, Launch):
        return tuple(out[0] for out in step.outs)
    if isinstance(step, (Library, Branch, Repeat)):
        return step.outs
    return (step.out,)


def step_inputs(step) -> tuple[int, ...]:
    """The slots a step reads."""
    if isinstance(step, Launch):
        into = () if step.into is None else (step.into,)
        return tuple(slot for slot, _ in step.ins) + into
    if isinstance(step, Gemm):
        return tuple(s for s in (step.z, step.alpha, step.x, step.y, step.beta) if s is not None)
    if isinstance(step, View):
        return (step.src,) + (() if step.like is None else (step.like,)) + step.bounds
    if isinstance(step, Branch):
        return (step.cond,)
    if isinstance(step, Transfer):
        return (step.src,)
    if isinstance(step, Layout):
        return step.arrays + step.ints
    return step.ins


def step_bytes(step, slots) -> int:
    """The bytes a step moves, for ``f.profile()``: its arrays read and written, as they are
    after it ran. A transfer counts its array once (one copy: its input and output are the
    same data on each side), and none when the value was already there; a view and a branch
    hand a value on without copying it: none. A Python scalar is not an array (a kernel's
    literal), so it counts nothing, as in runner.c's ``step_bytes``."""
    if isinstance(step, (View, Branch)):
        return 0
    if isinstance(step, Transfer):
        out = slots[step.out]
        return 0 if out is slots[step.src] else int(getattr(out, "nbytes", 0))
    used = (*step_inputs(step), *step_outputs(step))
    return sum(int(getattr(slots[i], "nbytes", 0)) for i in used)
