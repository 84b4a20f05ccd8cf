"""Device linkers: the planning every kernel target shares (``KernelLinker``: kernels by op
class, views, NumPy fallbacks) with kernels rendered in the device's dialect and built as one
program, transfers placed between host and device steps (``transfers.py``), and run by the
device executor (``execute.py``). A sibling of the C linker, not a kind of it.

A subclass names its runtime (``runtime()``): ``symnb/backends/opencl/linker.py``,
``symnb/backends/cuda/linker.py``. Matrix products are the tiled kernel of the description
(``Contract``; a runtime with a BLAS, cuBLAS, may run it instead, see ``Runtime.product``);
convolution and pooling are the shared steps (symnb/backends/planning/) with that kernel as
their product; their padding and the max-pool gradient are the device's hand-written kernels
(``windows.py``), and the steps without a device form (col2im) run NumPy on the host.
A lazy ``ifelse`` is a ``Branch`` step, as on backend "c": its condition is read back to the
host and only the side it picks runs (``execute.run_branch``). The capabilities a device
lacks (a host BLAS, views at an offset) leave those ops to their NumPy reference on the host
(``PlanTable``).
"""

from __future__ import annotations

import warnings

import numpy as np

from symnb.backends.device import execute, windows
from symnb.backends.device.runtime import DeviceArray, launch_ints
from symnb.backends.device.transfers import Placement, placement, with_transfers
from symnb.backends.kernels.build import narrows_weak_floats
from symnb.backends.kernels.ir import Unsupported
from symnb.backends.kernels.lowering import PRODUCT_NOTE, contraction, gemm_epilogue, lower
from symnb.backends.listing import KernelInfo
from symnb.backends.plan import Layout, Library, View
from symnb.backends.planner import PLANS, _reshape
from symnb.backends.planning.kernel_linker import KernelLinker
from symnb.config import config
from symnb.control.scan import Scan
from symnb.core.graph import Graph
from symnb.core.types import TensorType
from symnb.core.variable import Constant, Variable
from symnb.ops.blas import Gemm as GemmOp
from symnb.ops.broadcast import Alloc, SumToLike
from symnb.ops.checks import SameShape
from symnb.ops.conv import MaxPool2dGrad
from symnb.ops.elemwise import Cast
from symnb.ops.index import Subtensor
from symnb.ops.join import Concatenate
from symnb.ops.layout import Pad
from symnb.ops.linalg import Matmul
from symnb.ops.shape import Reshape, Shape

LAYOUT_NOTE = (
    "made on the device where its arrays are ({how}: a view of its source, or copies "
    "within the device at byte offsets), else NumPy on the host"
)
VIEW_NOTE = (
    "a view the device executor makes of the device array (a new shape and strides over its "
    "buffer, or read from them: no copy, no kernel), else NumPy on the host"
)
WINDOW_NOTE = (
    "a hand-written {what} kernel on the device (device/windows.py), else NumPy on the host"
)
#: bytes up to which a value computed on the host is uploaded once per distinct value
SMALL = 64
HOST_NOTE = "no {label} kernel for this op: runs its NumPy reference on the host (transfers)"
HOST_LOOP_NOTE = (
    "a loop run on the host (its NumPy reference): {why} (sn.config.device_loops, "
    "docs/gpu_backends.md)"
)
PLACES = {
    "kernel": "{label} kernel",
    "view": "view (device)",
    "library": "NumPy on the host",
    "blas": "NumPy on the host",
    "transfer": "transfer",
    "loop": "{label} loop",
    "branch": "branch",
}


class DeviceLinker(KernelLinker):
    """Compiles a Graph into a device plan; ``run(values)`` returns the first ``n_results``
    outputs on the host and the rest (updates) where they were computed, so shared values
    stay on the device (``SharedVariable.keep_on_device``)."""

    resident = True  # sn.function passes shared values as they are (device arrays)
    steps_timed = True
    #: a matrix product is the description's tiled kernel; no host BLAS, and no offset views
    #: (a device array has none: convolution.py keeps its other steps). ``"loops"``: a scan
    #: is a ``Repeat`` step, its body a device plan the executor runs per step
    #: (``execute.run_repeat``). ``"branches"``: an ifelse is a lazy ``Branch`` step, its
    #: condition read on the host and only the side taken run (``execute.run_branch``).
    #: ``"device_views"``: views only this executor makes (``Shape`` read from a device
    #: array's metadata, ``Alloc`` as its value broadcast, ``SumToLike`` that sums nothing,
    #: ``SameShape`` whose shapes match,
    #: and ``Layout`` steps: basic slices, ``concatenate``, reshapes to given sizes).
    #: ``"window_kernels"``: padding (of convolutions, pools, ``sn.pad``) and the max-pool
    #: gradient as the device's hand-written kernels (``windows.py``)
    capabilities = frozenset(
        {"product_kernels", "device_views", "loops", "branches", "window_kernels"}
    )
    loop_runner = "the device executor"
    view_note = VIEW_NOTE

    def __init__(self, graph, leaves: list, n_results: int | None = None):
        self.runtime = self.make_runtime()
        self.dialect = self.runtime.dialect
        #: why a scan's loop runs on the host, or None when it runs on the device
        self.host_loops = host_loops(self.runtime)
        if self.host_loops:
            self.capabilities = self.capabilities - {"loops"}
        self.device = f"{self.runtime.label} on {self.runtime.device_name}"
        self.n_results = len(graph.outputs) if n_results is None else n_results
        self._no_float64: list = []
        super().__init__(graph, leaves)
        self._load_kernels()
        self.plan = with_transfers(self.plan, len(graph.inputs))
        self.constant_slots = {slot for slot, _ in self.plan.constants}
        n_inputs = len(graph.inputs)
        self.shared_of = {i: leaves[i] for i in range(n_inputs, self.plan.nargs)}
        self._constants: dict = {}
        self._small: dict = {}
        self._args: dict = {}
        self._flags: list = []  # zeroed status flags no call holds (``status_flag``)
        self._dense: dict = {}  # (dtype, ndim) -> the linker of a copy kernel (``dense``)
        library = self.runtime.product_library()
        for info in self.kernels:
            info.language = self.dialect.name
            if library and info.reason == PRODUCT_NOTE:
                info.reason = f"{library} where the layout fits, else this kernel ({PRODUCT_NOTE})"
        self._warn_float64()

    @classmethod
    def make_runtime(cls):
        raise NotImplementedError

    # -- planning ---------------------------------------------------------------------------
    def _step(self, node):
        if not self.runtime.float64 and _uses_float64(node):
            self._no_float64.append(node)
            reason = f"{self.runtime.device_name} has no float64: runs its NumPy reference"
            return self._library_step(node, reason)
        return super()._step(node)

    def _library_step(self, node, reason: str, kind: str = "library"):
        if self.host_loops and isinstance(node.op, Scan):
            reason = HOST_LOOP_NOTE.format(why=self.host_loops)
        elif reason.startswith("no kernel for this op"):
            reason = HOST_NOTE.format(label=self.runtime.label)
        return super()._library_step(node, reason, kind)

    def _warn_float64(self) -> None:
        if self._no_float64:
            ops = ", ".join(sorted({str(n.op) for n in self._no_float64}))
            warnings.warn(
                f"{self.device} has no float64 support: {len(self._no_float64)} "
                f"float64 node(s) ({ops}) run as NumPy on the host",
                RuntimeWarning,
                stacklevel=4,
            )

    def _load_kernels(self) -> None:
        """The plan's kernels that the runtime has not built yet, built as one program (one
        device-compiler run); the others are those it built for earlier functions."""
        refs = self.kernel_refs
        if not refs:
            return
        built = self.runtime.kernels([r.description for r in refs], [r.source for r in refs])
        for ref, kernel in zip(refs, built):
            ref.load(kernel, 0)

    def product_step(self, steps, a, b, out):
        """``out = a @ b`` inside a convolution's steps (convolution.py): the tiled kernel."""
        lowered = contraction(a, b, out, (steps.node,))
        source = self.render(lowered.kernel)
        fallback = steps.fallback(np.matmul, [a, b], out, kind="blas")
        outs = [(out, steps.dtype, absent, keep) for _, absent, keep in lowered.outputs]
        step = self.launch(
            steps.node, source, lowered.inputs, outs, None, lowered.empty, fallback, lowered.kernel
        )
        steps.note("kernel", lowered.note, source)
        return step

    def window_kernel(self, node, how: str, what: str, dtype, fill=0.0) -> None:
        """Lists the "pad" or "max_pool_grad" kernel (``windows.py``) of ``node`` in
        ``f.kernels``, its source for ``dtype``; a dtype the dialect has no type for is
        listed as NumPy (the kernel declines it at run time)."""
        try:
            source = windows.source_of(self.runtime, how, dtype, fill)
        except Unsupported:
            reason = f"{np.dtype(dtype).name}: NumPy on the host"
            self.kernels.append(KernelInfo("library", node, None, reason))
            return
        note = WINDOW_NOTE.format(what=what)
        self.kernels.append(KernelInfo("kernel", node, source, note, language=self.dialect.name))

    def placement(self) -> Placement:
        """Where each node runs and which values cross the bus (the graph display draws it);
        an elementwise node computed inside a reduction's kernel runs where that kernel does."""
        graph_vars = [*self.leaves, *(v for n in self.graph.toposort() for v in n.outputs)]
        variables = {self.slot[id(v)]: v for v in graph_vars if id(v) in self.slot}
        found = placement(
            self.plan, len(self.graph.inputs), variables, self.runtime.label, self.n_results
        )
        for reduction, producer in self.producers.items():
            if reduction in found.sides:
                found.sides[id(producer)] = found.sides[reduction]
        return found

    def runner(self):
        return None  # no C runner: the device executor runs every call

    # -- running ----------------------------------------------------------------------------
    def run(self, leaf_values: list) -> list:
        return self._run(leaf_values, profiled=False)[0]

    def run_profiled(self, leaf_values: list) -> tuple[list, list]:
        """Like ``run``, timing each step (waiting for the device after each): records
        ``(node, seconds, bytes, where)``, transfers in rows of their own."""
        outputs, records = self._run(leaf_values, profiled=True)
        label = self.runtime.label
        return outputs, [
            (step.node, seconds, moved, PLACES[step.kind].format(label=label))
            for step, seconds, moved in records
        ]

    def _run(self, leaf_values: list, profiled: bool) -> tuple[list, list]:
        self.runtime.check_process()
        call = execute.Call(self, profiled=profiled)
        try:
            outputs = execute.run(call, self.plan, leaf_values)
            if profiled:  # each result's copy timed on its own, after the flag
                results = None if self._declined(call) else self._results(call, outputs)
            else:
                results = self._fetch(call, outputs)
        except BaseException:
            self._settle()
            raise
        if results is None:
            call = execute.Call(self, host_only=True, profiled=profiled)
            outputs = execute.run(call, self.plan, leaf_values)
            results = self._results(call, outputs)
        return results, call.records or []

    def _fetch(self, call, outputs: list) -> list | None:
        """The first ``n_results`` on the host and the rest as they are, after one
        synchronisation: the call's status flag and the results are read behind the kernels
        together. None when a kernel declined (the call runs again on the host)."""
        flag = self.runtime.read(call.status, 4)
        finish = [
            value.read() if i < self.n_results and isinstance(value, DeviceArray) else None
            for i, value in enumerate(outputs)
        ]
        self.runtime.synchronize()
        if self._flag_set(call, flag):
            return None
        return [value if done is None else done() for value, done in zip(outputs, finish)]

    def _settle(self) -> None:
        """After a failed call: wait for what it queued (a copy from a host array the caller
        may change once the call raised)."""
        try:
            self.runtime.synchronize()
        except Exception:  # noqa: BLE001 - the call's own error is the one to report
            pass

    def _results(self, call, outputs: list) -> list:
        """The first ``n_results`` copied to the host (timed as transfers when profiled)."""
        results = list(outputs)
        for i in range(self.n_results):
            if isinstance(results[i], DeviceArray):
                start = execute.time.perf_counter()
                results[i] = results[i].to_host()
                if call.records is not None:
                    node = self.graph.outputs[i].owner
                    seconds = execute.time.perf_counter() - start
                    call.records.append((_Download(node), seconds, results[i].nbytes))
        return results

    def _declined(self, call) -> bool:
        """Whether a kernel of ``call`` declined (reads its status flag: waits once)."""
        return self._flag_set(call, self.runtime.download(call.status, 4))

    def _flag_set(self, call, flag: np.ndarray) -> bool:
        """Whether ``flag`` (the call's status, read after its kernels) is set; a flag still
        zero is free again for a later call (``status_flag``), a set one is dropped."""
        if flag.view(np.int32)[0]:
            return True
        self._flags.append(call.flag)
        return False

    def status_flag(self) -> DeviceArray:
        """A zeroed status flag (int32) for one call, which its kernels set when they
        decline: a free one that a finished call left zero, else a new one. Never one a
        running call holds (calls from several threads each read their own)."""
        try:
            return self._flags.pop()  # (atomic: threads may share a linker)
        except IndexError:
            return self.runtime.to_device(np.zeros(1, np.int32))

    def launch_args(self, step, space: tuple, arrays) -> object:
        """The launch ABI's integers for this layout, uploaded once per layout."""
        key = (id(step), tuple((a.shape, a.strides) for a in arrays))
        buffer = self._args.get(key)
        if buffer is None:
            if len(self._args) >= 4096:
                self._args.clear()
            args = execute.execute.kernel_args(step, space, arrays)
            nops = len(arrays) + len(step.outs)
            args = np.array(launch_ints(step.kernel.description, args, nops), np.int64)
            buffer = self._args[key] = self.runtime.upload(args)
        return buffer

    def body_of(self, step) -> DeviceLinker:
        """The linker of a loop step's body (``compile_body``: a linker of this class)."""
        return next(body for node, body in self.bodies if node is step.node)

    def dense(self, array: DeviceArray, call) -> DeviceArray:
        """A C-ordered copy of a strided device array (a transposed or broadcast view), made
        on the device by a copy kernel (a cast to its own dtype, which every dtype has, where
        ``+x`` refuses bool; one linker per dtype and rank, built once) within ``call`` (its
        status flag). A dtype kernels do not compute (float16, complex) is copied by NumPy
        on the host and uploaded again: callers view the result as a device array."""
        key = (array.dtype.str, array.ndim)
        linker = self._dense.get(key)
        if linker is None:
            x = Variable(TensorType(array.dtype, (None,) * array.ndim), name="x")
            graph = Graph([x], [Cast(array.dtype).make_node(x).outputs[0]], clone=False)
            linker = self._dense[key] = type(self)(graph, [x])
        (out,) = execute.run(call.inner(linker), linker.plan, [array])
        return call.runtime.to_device(out)

    def constant_on_device(self, slot: int, value) -> DeviceArray:
        if slot not in self._constants:
            self._constants[slot] = self.runtime.to_device(np.asarray(value))
        return self._constants[slot]

    def small_on_device(self, value) -> DeviceArray:
        """A value computed on the host (a batch size a mean divides by) on the device:
        uploaded once per distinct value of at most SMALL bytes (device arrays are never
        written after their kernel, so calls share it); a larger one each time."""
        array = np.asarray(value)
        if array.nbytes > SMALL:
            return self.runtime.to_device(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        found = self._small.get(key)
        if found is None:
            if len(self._small) >= 256:
                self._small.clear()
            found = self._small[key] = self.runtime.to_device(array)
        return found


@PLANS.register(Shape, needs={"device_views"})
def _shape(linker: DeviceLinker, node) -> View:
    return linker.view(node, "shape")


@PLANS.register(Alloc, needs={"device_views"})
def _alloc(linker: DeviceLinker, node) -> View:
    return linker.view(node, "alloc", like=node.inputs[1])


@PLANS.register(SumToLike, needs={"device_views"})
def _sum_to_like(linker: DeviceLinker, node) -> View:
    return linker.view(node, "sum_to_like", like=node.inputs[1])


@PLANS.register(SameShape, needs={"device_views"})
def _same_shape(linker: DeviceLinker, node) -> View:
    return linker.view(node, "same_shape", like=node.inputs[1])


def _layout(linker: DeviceLinker, node, how: str, n_arrays: int, params: tuple) -> Layout:
    """A ``Layout`` step of the node's first ``n_arrays`` inputs, the rest read as ints."""
    fallback = linker.library(node)
    arrays = linker.slots_of(node.inputs[:n_arrays])
    ints = linker.slots_of(node.inputs[n_arrays:])
    linker.kernels.append(KernelInfo("view", node, None, LAYOUT_NOTE.format(how=how)))
    return Layout(how, arrays, ints, fallback.outs[0], params, node, fallback)


@PLANS.register(Subtensor, needs={"device_views"})
def _subtensor(linker: DeviceLinker, node) -> Layout:
    return _layout(linker, node, "slice", 1, node.op.spec)


@PLANS.register(Concatenate, needs={"device_views"})
def _concatenate(linker: DeviceLinker, node) -> Layout:
    return _layout(linker, node, "concatenate", len(node.inputs), (node.op.axis,))


@PLANS.register(Reshape, needs={"device_views"})
def _reshape_sized(linker: DeviceLinker, node) -> View | Layout:
    """A reshape to fixed sizes is the shared view; one to sizes given as inputs a layout
    (the sizes are read on the host, the array stays where it is)."""
    if None not in node.op.target:
        return _reshape(linker, node)
    params = (node.op.target, node.op.name_axes)
    return _layout(linker, node, "reshape", 1, params)


@PLANS.register(Pad, needs={"window_kernels"})
def _pad(linker: DeviceLinker, node) -> Layout | Library:
    """``sn.pad`` of the last two axes only (x of 2 to 4 axes) with one value: the pad
    kernel."""
    widths, x = node.op.widths, node.inputs[0]
    if not 2 <= x.type.ndim <= 4 or any(a or b for a, b in widths[:-2]):
        return linker._library_step(node, "padding of other axes than the last two: NumPy")
    if isinstance(node.op.value, tuple):
        return linker._library_step(node, "a constant per side (constant_values): NumPy")
    params = (tuple(map(tuple, widths[-2:])), node.op.value)
    fallback = linker.library(node)
    linker.window_kernel(node, "pad", "pad", x.type.dtype, node.op.value)
    arrays = linker.slots_of(node.inputs)
    return Layout("pad", arrays, (), fallback.outs[0], params, node, fallback)


@PLANS.register(MaxPool2dGrad, needs={"window_kernels"})
def _max_pool_grad(linker: DeviceLinker, node) -> Layout:
    """The max-pool gradient: a kernel gathering each input element's gradient."""
    fallback = linker.library(node)
    what = "max-pool gradient (each input element's windows)"
    linker.window_kernel(node, "max_pool_grad", what, node.inputs[1].type.dtype)
    arrays = linker.slots_of(node.inputs)
    return Layout("max_pool_grad", arrays, (), fallback.outs[0], (node.op,), node, fallback)


@PLANS.register(GemmOp, needs={"product_kernels"})
def _gemm(linker: DeviceLinker, node) -> tuple:
    """``beta * z + alpha * (x @ y)`` as two kernels: the product into a slot of its own,
    then the elementwise rest; a gemm they cannot run is the NumPy reference on the host."""
    _, _, x, y, _ = node.inputs
    product = Matmul().make_node(x, y)
    try:
        lowered = lower(product, linker.dialect)
        epilogue = gemm_epilogue(node, product.outputs[0], linker.dialect)
    except Unsupported as exc:
        return linker._library_step(node, str(exc))
    return (_launch(linker, product, lowered), _launch(linker, node, epilogue))


def _launch(linker: DeviceLinker, node, lowered):
    source = linker.render(lowered.kernel)
    outs = [(v, v.type.dtype, absent, keep) for v, absent, keep in lowered.outputs]
    step = linker.launch(
        node, source, lowered.inputs, outs, None, lowered.empty, None, lowered.kernel
    )
    linker.kernels.append(KernelInfo("kernel", node, source, lowered.note))
    return step


class _Download:
    """A profile record's step for an output copied back to the host."""

    kind = "transfer"

    def __init__(self, node):
        self.node = node


def _uses_float64(node) -> bool:
    """Whether a node reads or writes float64; a weak Python float (``x32 * 0.1``) does not
    count where its kernel holds it in the other operands' dtype (``narrows_weak_floats``;
    a fused Composite's does not, so it runs on the host there)."""
    narrowed = narrows_weak_floats(node)
    return any(
        v.type.dtype == np.float64
        for v in (*node.inputs, *node.outputs)
        if not (narrowed and isinstance(v, Constant) and v.weak and v.type.ndim == 0)
    )


def host_loops(runtime) -> str | None:
    """Why a scan's loop runs on the host on ``runtime``'s device, or None when its steps run
    on the device (``sn.config.device_loops``). On a CPU device the device's memory is the
    host's, so the device loop saves no transfer and pays a launch per kernel per step: an
    RNN's 100 steps took 289-305 ms on PoCL against 173 ms on the host (docs/benchmarks.md)."""
    wanted = config.device_loops
    if wanted == "host":
        return 'sn.config.device_loops is "host"'
    if wanted == "auto" and runtime.on_cpu:
        return (
            f"{runtime.device_name} is a CPU device, where the host's loop costs less than "
            "a launch per step"
        )
    return None
