"""The steps of a compiled schedule: a kernel call, a BLAS call, or a NumPy library call.

Each step reads its inputs from the flat slot list and writes its output slot. Kernel steps
build one int64 argument array (shape, strides) and a pointer array per call; an output that
never leaves the schedule (every reader is a kernel) keeps its buffer between calls.
"""

from __future__ import annotations

import cffi
import numpy as np

from symnb.backends import layout
from symnb.backends.py import RuntimeFailure, _failure_message

ffi = cffi.FFI()
ffi.cdef("int sn_kernel(int64_t *a, char **ptr);")

from_buffer = ffi.from_buffer


def pointer(array: np.ndarray):
    """A ``char *`` to the array's first element (any strides, read-only too)."""
    try:
        return from_buffer(array)
    except ValueError:  # not C-contiguous: cffi wants a plain buffer
        return ffi.cast("char *", array.ctypes.data)


def broadcast_shape(node, shapes: list[tuple]) -> tuple:
    """NumPy's broadcast of the operands' shapes; a clash names the node and its line."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as exc:
        raise RuntimeFailure(_failure_message(node, exc)) from None


def operand_strides(array: np.ndarray, shape: tuple) -> list[int]:
    """Byte strides of ``array`` over ``shape`` (0 where it is broadcast)."""
    pad = len(shape) - array.ndim
    strides = [0] * pad
    for dim, stride in zip(array.shape, array.strides):
        strides.append(0 if dim == 1 else stride)
    return strides


class Buffer:
    """An output array, reused between calls when the shape repeats and nothing kept it."""

    def __init__(self, dtype: np.dtype, private: bool):
        self.dtype, self.private = dtype, private
        self.array = None
        self.ptr = None

    def get(self, shape: tuple):
        if self.private and self.array is not None and self.array.shape == shape:
            return self.array, self.ptr
        array = np.empty(shape, self.dtype)
        ptr = pointer(array)
        if self.private:
            self.array, self.ptr = array, ptr
        return array, ptr


class KernelStep:
    """out = kernel(inputs) over their broadcast shape."""

    kind = "kernel"

    def __init__(self, node, fn, ins: list[int], out: int, dtype, private: bool):
        self.node, self.fn, self.ins, self.out = node, fn, ins, out
        self.buffer = Buffer(np.dtype(dtype), private)
        self.inplace: int | None = None  # operand whose buffer may take the result
        self.layout = None  # (shapes and strides of the inputs) the cached args were made for
        self.ptrs = ffi.new("char *[]", len(ins) + 1)
        self.last_inputs: list = []
        self.last_pointers: list = []

    def __call__(self, slots: list) -> None:
        arrays = [slots[i] for i in self.ins]
        layout = tuple([(a.shape, a.strides) for a in arrays])
        if layout != self.layout:
            self._prepare(arrays, layout)
        out, out_ptr = self._output(arrays, self.shape)
        if self.size:
            keep = self._pointers(arrays)
            keep.append(out_ptr)
            self.ptrs[0 : len(keep)] = keep
            if self.fn(self.args, self.ptrs):
                out = self._reference(slots)
        slots[self.out] = out

    def _pointers(self, arrays) -> list:
        """Data pointers; an input that is the very array of the last call reuses its pointer
        (the step holds that array, so its buffer cannot have moved or been freed)."""
        last = self.last_inputs
        if len(last) == len(arrays) and all(a is b for a, b in zip(arrays, last)):
            return list(self.last_pointers)
        self.last_inputs, self.last_pointers = arrays, [pointer(a) for a in arrays]
        return list(self.last_pointers)

    def _prepare(self, arrays, layout) -> None:
        """Shape and stride arguments, rebuilt only when the inputs' layout changes."""
        shape = broadcast_shape(self.node, [a.shape for a in arrays])
        space = shape or (1,)
        args = [len(space), *space]
        for a in arrays:
            args += operand_strides(a, space)
        itemsize, step = self.buffer.dtype.itemsize, []
        for dim in reversed(space):
            step.insert(0, itemsize if dim != 1 else 0)
            itemsize *= dim
        args += step
        self.shape, self.size, self.layout = shape, int(np.prod(space)), layout
        self.args = ffi.new("int64_t[]", args)

    def _reference(self, slots):
        """The op's NumPy reference, for layouts the kernel declines (over 64 dims)."""
        return np.asarray(self.node.op.perform(*[slots[i] for i in self.reference_ins]))

    def _output(self, arrays, shape):
        """The destroyed input's buffer when it can hold the result (an in-place node)."""
        if self.inplace is not None:
            target = arrays[self.inplace]
            if (
                target.shape == shape
                and target.dtype == self.buffer.dtype
                and target.flags.writeable
                and target.flags.c_contiguous
            ):
                return target, pointer(target)
        return self.buffer.get(shape)


class ReduceStep:
    """out = reduction of kernel(inputs) over ``axis``; empty inputs go to NumPy."""

    kind = "kernel"

    def __init__(self, node, fn, ins: list[int], out: int, dtype, producer, reference_ins):
        self.node, self.fn, self.ins, self.out = node, fn, ins, out
        self.axis, self.keepdims = set(node.op.axis), node.op.keepdims
        self.dtype = np.dtype(dtype)
        self.producer, self.reference_ins = producer, reference_ins

    def __call__(self, slots: list) -> None:
        arrays = [slots[i] for i in self.ins]
        space = broadcast_shape(self.node, [a.shape for a in arrays])
        if 0 in space:
            return self._reference(slots)
        kept = tuple(1 if i in self.axis else d for i, d in enumerate(space))
        out = np.empty(kept, self.dtype)
        index = space or (1,)
        args = [len(index), *index]
        for a in arrays:
            args += operand_strides(a, index)
        args += [0 if i in self.axis else s for i, s in enumerate(out.strides)] or [0]
        args.append(out.size)
        ptrs = [pointer(a) for a in arrays] + [pointer(out)]
        if self.fn(ffi.new("int64_t[]", args), ffi.new("char *[]", ptrs)):
            return self._reference(slots)  # a layout this kernel does not handle
        if not self.keepdims:
            out = out.reshape([d for i, d in enumerate(space) if i not in self.axis])
        slots[self.out] = out

    def _reference(self, slots):
        """The NumPy reference: for empty inputs (NumPy decides: 0, NaN with a warning, or an
        error) and layouts a kernel declines (logsumexp over non-innermost axes)."""
        values = [slots[i] for i in self.reference_ins]
        try:
            if self.producer is not None:
                values = [self.producer.op.perform(*values)]
            value = np.asarray(self.node.op.perform(*values))
        except Exception as exc:
            raise RuntimeFailure(_failure_message(self.node, exc)) from exc
        slots[self.out] = value.astype(self.dtype, copy=False)


class LibraryStep:
    """The op's NumPy reference, for ops no kernel describes (named in ``f.kernels``).

    ``run(*arrays)`` computes the outputs from the input arrays (one array, or a tuple for a
    node with several outputs); subclasses override it. The Python runtime calls the step on
    the slot list; the C runner (runner.py) calls ``run`` directly."""

    kind = "library"

    def __init__(self, node, ins: list[int], out, reason: str = ""):
        self.node, self.ins, self.out, self.reason = node, ins, out, reason
        self.outs = out if isinstance(out, list) else [out]
        self.dtypes = [v.type.dtype for v in node.outputs]
        self.perform = node.op.perform

    def __call__(self, slots: list) -> None:
        result = self.run(*[slots[i] for i in self.ins])
        results = (result,) if len(self.outs) == 1 else result
        for slot, value, dtype in zip(self.outs, results, self.dtypes, strict=True):
            value = np.asarray(value)
            if value.dtype != dtype:
                raise AssertionError(f"{self.node.op} returned {value.dtype}, promised {dtype}")
            slots[slot] = value

    def run(self, *arrays):
        try:
            return self.perform(*arrays)
        except Exception as exc:
            raise RuntimeFailure(_failure_message(self.node, exc)) from exc


class BlasStep(LibraryStep):
    """Dense linear algebra through NumPy's matmul, which calls the BLAS NumPy ships."""

    kind = "blas"


class LaunchStep(LibraryStep):
    """A kernel over an index space whose operands may lack axes (the launch ABI)."""

    kind = "kernel"

    def __init__(self, node, ins, out, lowered, producer, reference_ins):
        super().__init__(node, ins, out)
        self.fn, self.lowered = None, lowered
        self.producer, self.reference_ins = producer, reference_ins
        self.absent = [set(a) for _, a in lowered.inputs]
        self.out_layout = [(v.type.dtype, set(a), keep) for v, a, keep in lowered.outputs]

    def __call__(self, slots: list) -> None:
        result = self.launch([slots[i] for i in self.ins])
        if result is None:
            values = [slots[i] for i in self.reference_ins]
            if self.producer is not None:
                values = [self.producer.op.perform(*values)]
            result = LibraryStep.run(self, *values)
        results = (result,) if len(self.outs) == 1 else result
        for slot, value in zip(self.outs, results):
            slots[slot] = np.asarray(value)

    def run(self, *arrays):
        result = self.launch(arrays)
        if result is None:
            raise RuntimeError("declined")  # the runner hands the call to the Python runtime
        return result

    def launch(self, arrays):
        space = layout.index_space([a.shape for a in arrays], self.absent)
        if space is None or 0 in space:
            return None
        outs = [np.empty(layout.output_shape(space, ab), dt) for dt, ab, _ in self.out_layout]
        out_absent = [ab for _, ab, _ in self.out_layout]
        args = layout.arguments(arrays, self.absent, outs, out_absent, space)
        ptrs = [pointer(a) for a in arrays] + [pointer(o) for o in outs]
        if self.fn(ffi.new("int64_t[]", args), ffi.new("char *[]", ptrs)):
            return None
        outs = [o.reshape(layout.output_shape(space, ab, True)) if keep else o
                for o, (_, ab, keep) in zip(outs, self.out_layout)]  # fmt: skip
        return outs[0] if len(outs) == 1 else tuple(outs)
