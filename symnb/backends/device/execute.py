"""Running a device plan: the same records as ``symnb/backends/execute.py``, over values that
are device arrays (kernels, views of them) or host arrays (inputs, NumPy fallbacks). A scan's
loop (``Repeat``) runs here too, its step the body's device plan (``run_repeat``, ``loop.py``).

Kernels are queued without waiting; a call waits once, when its results come back. A row
kernel that declines (a label out of range) sets the call's status flag; the call is then run
again on the host, every step through its NumPy reference, which gives NumPy's answer or the
error naming the node. Nothing is written in place on the device, so a call that fails leaves
every value as it was.

A lazy ``ifelse`` (``Branch``) reads its condition on the host (the plan copies it down first,
``transfers.py``) and runs only the steps of the side it picks, as the host executor does.
"""

from __future__ import annotations

import math
import time

import numpy as np

from symnb.backends import execute
from symnb.backends.device import layouts
from symnb.backends.device.loop import DeviceMemory
from symnb.backends.device.runtime import (
    MAX_BYTES,
    DeviceArray,
    DeviceError,
    DeviceOutOfMemory,
    launch_kernel,
    nbytes_of,
)
from symnb.backends.device.transfers import HOST_VIEWS
from symnb.backends.kernels.ir import Contract, Map
from symnb.backends.plan import (
    Branch,
    Gemm,
    Launch,
    Layout,
    Library,
    Repeat,
    Transfer,
    View,
    step_bytes,
)
from symnb.control.loop import run_loop


class Call:
    """One call's state: the runtime, its own status flag (``flag``, a device array no other
    call holds: calls from several threads run at once, and one that declines must not set,
    zero or free another's), the linker's caches of kernel arguments and uploaded
    constants, whether steps run on the host only, and the timings."""

    def __init__(self, linker, host_only: bool = False, profiled: bool = False, flag=None):
        self.linker, self.runtime, self.host_only = linker, linker.runtime, host_only
        if host_only:
            self.flag = None
        else:
            self.flag = linker.status_flag() if flag is None else flag
        self.status = None if self.flag is None else self.flag.buffer
        self.records: list | None = [] if profiled else None
        # slot -> its host value's copy on the device, in this run of the plan (a loop's
        # body is run by a call of its own each step: its slots hold new values each step)
        self.uploaded: dict = {}

    def inner(self, linker) -> Call:
        """A call of another linker's plan (a loop's step, a copy) within this one: the
        same status flag (a kernel of it that declines reruns this whole call on the host),
        untimed (the loop is one record)."""
        return Call(linker, self.host_only, flag=self.flag)

    def host(self, value):
        return value.to_host() if isinstance(value, DeviceArray) else value

    def device(self, value):
        return self.runtime.to_device(value)

    def operand(self, slots: list, slot: int) -> DeviceArray:
        """Slot ``slot``'s value on the device. A shared value still on the host (one no
        function has updated) is uploaded once and kept with it (``cache_on_device``), so
        the next call finds it there."""
        value = slots[slot]
        if isinstance(value, DeviceArray) and value.runtime is self.runtime:
            return value
        if slot in self.uploaded:  # (the host steps keep reading the host value)
            return self.uploaded[slot]
        device = self.uploaded[slot] = self.runtime.to_device(value)
        shared = self.linker.shared_of.get(slot)
        if shared is not None:
            shared.cache_on_device(device, value)
        return device


class HostSlots:
    """The slots as a NumPy step sees them: device values copied to the host when read."""

    def __init__(self, call: Call, slots: list):
        self.call, self.slots, self.copies = call, slots, {}

    def __getitem__(self, i):
        if i not in self.copies:
            self.copies[i] = self.call.host(self.slots[i])
        return self.copies[i]

    def __setitem__(self, i, value):
        self.slots[i] = value


def run(call: Call, plan, leaf_values: list) -> list:
    """Every step of ``plan`` in order (of a branch, the side taken); the output slots'
    values (device or host). Timed, a branch's steps are records of their own, then the
    branch's (the choice and its results), as ``execute.run_profiled`` records them."""
    slots = plan.template()
    slots[: len(leaf_values)] = leaf_values
    if call.records is None:
        for step in plan.steps:
            run_step(call, step, slots)
        return [slots[i] for i in plan.outputs]
    for step, taken in execute._taken_steps(plan.steps, HostSlots(call, slots)):
        start = time.perf_counter()
        if taken is None:
            run_step(call, step, slots)
        else:
            branch_results(step, slots, taken)
        call.runtime.synchronize()
        call.records.append((step, time.perf_counter() - start, step_bytes(step, slots)))
    return [slots[i] for i in plan.outputs]


def run_step(call: Call, step, slots: list) -> None:
    try:
        (HOST_ONLY if call.host_only else EXECUTE)[type(step)](call, step, slots)
    except DeviceOutOfMemory as exc:
        if exc.node is not None:  # named by a step of a loop's body
            raise
        message = execute.failure_message(step.node, exc)
        raise exc.at(step.node, message) from exc.__cause__
    except DeviceError:
        raise
    except Exception as exc:
        errors = call.runtime.errors
        if not isinstance(exc, errors):
            raise
        raise DeviceError(
            f"{call.runtime.label} device {call.runtime.device_name}: "
            + execute.failure_message(step.node, exc)
        ) from exc


# -- on the device ----------------------------------------------------------------------------
def run_launch(call: Call, step: Launch, slots: list) -> None:
    arrays = [call.operand(slots, slot) for slot, _ in step.ins]
    space = execute.index_space(step, arrays)
    kernel = step.kernel.description
    if space is None or (step.empty == "decline" and 0 in space) or _mismatched(kernel, arrays):
        return run_host(call, step.fallback, slots)
    shapes = [execute.output_shape(space, absent, keep) for _, _, absent, keep in step.outs]
    outs = [call.runtime.empty(shape, dtype) for shape, (_, dtype, _, _) in zip(shapes, step.outs)]
    if 0 not in space and not _library_product(call, kernel, arrays, outs):
        count = math.prod(space if isinstance(kernel.body, Map) else shapes[0])
        args = call.linker.launch_args(step, space, arrays)
        buffers = [a.buffer for a in (*arrays, *outs)]
        launch_kernel(
            call.runtime, step.kernel.fn, kernel, space, count, args, [*buffers, call.status]
        )
    for (slot, *_), out in zip(step.outs, outs):
        slots[slot] = out
    return None


def _mismatched(kernel, arrays) -> bool:
    """A product whose inner lengths differ (one of them 1 would broadcast): NumPy's error."""
    return isinstance(kernel.body, Contract) and arrays[0].shape[-1] != arrays[1].shape[-2]


def _library_product(call: Call, kernel, arrays, outs) -> bool:
    """Whether the runtime's BLAS (cuBLAS) computed this matrix product instead of the kernel."""
    return isinstance(kernel.body, Contract) and call.runtime.product(kernel, arrays, outs[0])


def run_transfer(call: Call, step: Transfer, slots: list) -> None:
    value = slots[step.src]
    if step.to == "host":
        slots[step.out] = call.host(value)
    elif step.src in call.linker.constant_slots:
        slots[step.out] = call.linker.constant_on_device(step.src, value)
    elif step.src >= call.linker.plan.nargs and not isinstance(value, DeviceArray):
        slots[step.out] = call.linker.small_on_device(value)  # a length read on the host
    else:
        slots[step.out] = call.operand(slots, step.src)


def run_view(call: Call, step: View, slots: list) -> None:
    if step.src in call.linker.shared_of and step.how not in HOST_VIEWS:
        call.operand(slots, step.src)  # a weight still on the host goes up once (W.T)
    src = call.uploaded.get(step.src, slots[step.src])
    like = None if step.like is None else slots[step.like]
    if step.how in OWN_VIEWS:
        value = OWN_VIEWS[step.how](step, src, like)
    elif not isinstance(src, DeviceArray):
        return execute.run_view(step, slots)
    else:
        if step.how == "reshape" and not src.c_contiguous:  # (a transposed array, say)
            src = call.linker.dense(src, call)  # made C-ordered on the device, then viewed
        value = DEVICE_VIEWS[step.how](step, src, like)
    if value is None:
        return run_host(call, step.fallback, slots)
    slots[step.out] = value
    return None


def run_layout(call: Call, step: Layout, slots: list) -> None:
    """A slice, concatenation or reshape: made on the device when one of its arrays is there
    (``layouts.py``: a view, or copies within the device), else the reference on the host;
    a layout the device cannot express runs the reference on host copies."""
    arrays = [slots[slot] for slot in step.arrays]
    if not any(isinstance(a, DeviceArray) for a in arrays):
        return run_host(call, step.fallback, slots)
    arrays = [call.operand(slots, slot) for slot in step.arrays]
    ints = [call.host(slots[slot]) for slot in step.ints]
    value = layouts.LAYOUTS[step.how](step, arrays, ints, lambda a: call.linker.dense(a, call))
    if value is None:
        return run_host(call, step.fallback, slots)
    slots[step.out] = value
    return None


def run_host(call: Call, step, slots: list) -> None:
    """A NumPy step (a Library, or a fallback) on host copies of its operands."""
    execute.run_library(step, HostSlots(call, slots))


def run_gemm(call: Call, step: Gemm, slots: list) -> None:
    run_host(call, step.fallback, slots)


def run_repeat(call: Call, step: Repeat, slots: list) -> None:
    """A scan's loop on the device: the one loop runtime (``run_loop``: its checks raise the
    errors other backends raise) with device memory (``DeviceMemory``), each step the body's
    device plan run by this executor over device arrays: the sequences' rows, the states,
    the non-sequences. Only the step count (once) and an ``until`` condition's truth (once
    per step) are read on the host."""
    body = call.linker.body_of(step)
    n_steps = int(call.host(slots[step.ins[0]]))
    arrays = [call.operand(slots, slot) for slot in step.ins[1:]]
    memory = DeviceMemory(call.runtime, lambda array: call.linker.dense(array, call))

    def one_step(values: list) -> list:
        # a call of its own each step: what one step uploaded (``Call.uploaded``, by slot) is
        # that step's value, not the next one's
        return run(call.inner(body), body.plan, values)

    results = run_loop(step.node.op.loop, one_step, n_steps, arrays, memory)
    for slot, value in zip(step.outs, results, strict=True):
        slots[slot] = value


def run_branch(call: Call, step: Branch, slots: list) -> None:
    """Only the steps of the side the condition picks, then the results of that side
    (``execute._taken_steps``: nested branches are an explicit stack, as deep as the user's
    ifelses). The condition is read on the host: the plan copies it there, but a loop body's
    inputs arrive on the device whatever its plan assumed, so it is read through
    ``HostSlots`` (a device scalar's truth as an object would be True)."""
    for sub, taken in execute._taken_steps([step], HostSlots(call, slots)):
        if taken is None:
            run_step(call, sub, slots)
        else:
            branch_results(sub, slots, taken)


def branch_results(step: Branch, slots: list, taken: bool) -> None:
    """The outputs take the results of the side taken. A leaf on the host (an argument, a
    constant) is copied, so a result never aliases it; a device array is never written after
    its kernel, so one is passed on as it is (a shared value kept on the device)."""
    for out, result in zip(step.outs, step.then_outs if taken else step.else_outs):
        value = slots[result]
        copied = result < step.n_leaves and not isinstance(value, DeviceArray)
        slots[out] = np.array(value, copy=True) if copied else value


def view_axes(step: View, src: DeviceArray, like):
    kept = [a for a in step.axes if a >= 0]
    if any(n != 1 for d, n in enumerate(src.shape) if d not in kept):
        return None
    shape = [1 if a < 0 else src.shape[a] for a in step.axes]
    strides = [0 if a < 0 else src.strides[a] for a in step.axes]
    return src.view(shape, strides)


def view_broadcast(step: View, src: DeviceArray, like):
    if not execute._broadcasts_to(src.shape, like.shape):
        return None
    strides = execute.placed(
        [0 if n == 1 else s for n, s in zip(src.shape, src.strides)], (), len(like.shape), 0
    )
    return src.view(like.shape, strides)


def view_reshape(step: View, src: DeviceArray, like):
    shape = execute.reshape_target(step, src, like)
    if shape is None or not src.c_contiguous:
        return None
    return src.view(shape, execute._c_strides(shape, src.dtype.itemsize))


def view_size(step: View, src, like):
    return execute.view_size(step, src, like)


def view_windows(step: View, src: DeviceArray, like):
    """The windows of a 4-d device array as strides (``execute.windows_view``); a device array
    has no offset, so windows that start past the first element run the host fallback."""
    kh, kw, sh, sw, dh, dw, top, left = step.target
    if top or left:
        return None
    n, c, h, w = src.shape
    s_n, s_c, s_h, s_w = src.strides
    dims = (n, c, (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1, kh, kw)
    strides = (s_n, s_c, s_h * sh, s_w * sw, s_h * dh, s_w * dw)
    return src.view([dims[a] for a in step.axes], [strides[a] for a in step.axes])


def view_shape(step: View, src, like):
    """``Shape``: read from the array's metadata, wherever it is (nothing crosses)."""
    return np.array(getattr(src, "shape", np.shape(src)), dtype=np.int64)


def view_alloc(step: View, src, like):
    """``Alloc``: the value (on the device) broadcast to the shape in ``like``, as strides
    of 0: nothing writes a device array after its kernel, so a fill needs no buffer of its
    own; kernels read it through its strides. None (the reference's error) when the value
    does not broadcast to the shape, or the shape is past what an array can have (``MAX_BYTES``:
    NumPy's "array is too big", as on backend "c"; a view of it would have a size no int64
    holds, and the kernels reading it would ask for a buffer of a wrapped size)."""
    if not isinstance(src, DeviceArray):
        return None
    shape = tuple(int(n) for n in (like.to_host() if isinstance(like, DeviceArray) else like))
    if min(shape, default=0) < 0 or not execute._broadcasts_to(src.shape, shape):
        return None
    if nbytes_of(shape, src.dtype.itemsize) > MAX_BYTES:
        return None
    strides = [0 if n == 1 else s for n, s in zip(src.shape, src.strides)]
    return src.view(shape, [0] * (len(shape) - src.ndim) + strides)


def view_sum_to_like(step: View, src, like):
    """``SumToLike`` where ``like``'s run-time shape sums no axis of ``src`` (the gradient of
    a bias added to a batch whose size is unknown when compiling): ``src`` itself. A sum over
    axes runs the reference on the host (None)."""
    shape = like.shape if hasattr(like, "shape") else np.shape(like)
    lead = len(src.shape) - len(shape)
    if lead or any(n == 1 and g != 1 for n, g in zip(shape, src.shape)):
        return None
    return src


def view_same_shape(step: View, src, like):
    """``SameShape`` whose shapes match: ``src`` itself; else the reference raises (None)."""
    shape = like.shape if hasattr(like, "shape") else np.shape(like)
    return src if tuple(shape) == tuple(src.shape) else None


#: views the device executor makes itself (planned only for device linkers, ``linker.py``)
OWN_VIEWS = {
    "shape": view_shape,
    "alloc": view_alloc,
    "sum_to_like": view_sum_to_like,
    "same_shape": view_same_shape,
}
DEVICE_VIEWS = {
    "axes": view_axes,
    "broadcast": view_broadcast,
    "reshape": view_reshape,
    "size": view_size,
    "windows": view_windows,
}
EXECUTE = {
    Library: run_host,
    Launch: run_launch,
    Gemm: run_gemm,
    View: run_view,
    Layout: run_layout,
    Transfer: run_transfer,
    Repeat: run_repeat,
    Branch: run_branch,
}


# -- on the host only (a call a kernel declined, run again) -----------------------------------
def host_launch(call: Call, step: Launch, slots: list) -> None:
    run_host(call, step.fallback, slots)


def host_transfer(call: Call, step: Transfer, slots: list) -> None:
    slots[step.out] = call.host(slots[step.src])


def host_view(call: Call, step: View, slots: list) -> None:
    if step.how in OWN_VIEWS:
        return run_host(call, step.fallback, slots)
    return execute.run_view(step, HostSlots(call, slots))


def host_repeat(call: Call, step: Repeat, slots: list) -> None:
    """The loop on the host: ``run_loop`` over NumPy arrays, each step the body's plan run
    on the host as this call's steps are."""
    body = call.linker.body_of(step)
    n_steps, *arrays = [call.host(slots[slot]) for slot in step.ins]

    def one_step(values: list) -> list:
        return [call.host(value) for value in run(call.inner(body), body.plan, values)]

    results = run_loop(step.node.op.loop, one_step, int(n_steps), arrays)
    for slot, value in zip(step.outs, results, strict=True):
        slots[slot] = value


HOST_ONLY = {
    Library: run_host,
    Launch: host_launch,
    Gemm: run_gemm,
    View: host_view,
    Layout: lambda call, step, slots: run_host(call, step.fallback, slots),
    Transfer: host_transfer,
    Repeat: host_repeat,
    Branch: run_branch,
}
