"""Launching kernel descriptions with pyopencl: many kernels built as one program, each
launched as a plan's ``Launch`` step, its arguments made by the executor's own functions
(``symnb/backends/execute.py``) and passed in device buffers.

This copies operands to the device and results back on every launch: it is how the tests run
every kernel the op suite generates on PoCL. ``backend="opencl"``, with buffers kept on the
device between steps, builds on it.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import execute
from symnb.backends.device.runtime import grid_of
from symnb.backends.kernels.ir import Map
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.plan import Launch
from symnb.backends.planner import launch_rank
from symnb.backends.render.grid import render_program


def pyopencl():
    """The pyopencl module, or an ImportError saying what to install."""
    try:
        import pyopencl as cl
    except ImportError as exc:
        raise ImportError(
            "the OpenCL kernels need pyopencl: pip install 'symnb[opencl]' (pyopencl with "
            "PoCL, which runs OpenCL on the CPU)"
        ) from exc
    return cl


class OpenCLProgram:
    """Kernel descriptions built for ``context`` as one program; ``launch(i, ...)`` runs one."""

    def __init__(self, context, kernels):
        cl = pyopencl()
        self.context, self.kernels = context, list(kernels)
        self.names = [f"sn_kernel_{i}" for i in range(len(self.kernels))]
        self.source = render_program(OpenCLDialect(), self.kernels, self.names)
        self.program = cl.Program(context, self.source).build()
        self.queue = cl.CommandQueue(context)

    def launch(self, index: int, step: Launch, arrays):
        """Run kernel ``index`` as ``step`` (see ``launch_record``) on host ``arrays``: its
        outputs, or None when the kernel declined or the operands do not broadcast."""
        arrays = [np.require(a, requirements="C") for a in arrays]  # keeps 0-d arrays 0-d
        space = execute.index_space(step, arrays)
        if space is None:
            return None
        shapes = [execute.output_shape(space, absent, keep) for _, _, absent, keep in step.outs]
        results = [np.empty(shape, dtype) for shape, (_, dtype, _, _) in zip(shapes, step.outs)]
        if 0 in space:  # NumPy decides what an empty reduction gives
            return results if isinstance(self.kernels[index].body, Map) else None
        args = execute.kernel_args(step, space, arrays)
        return results if self._run(index, args, arrays, results, space) else None

    def _run(self, index, args, arrays, results, space) -> bool:
        cl = pyopencl()
        flags = cl.mem_flags
        read = flags.READ_ONLY | flags.COPY_HOST_PTR
        inputs = [cl.Buffer(self.context, read, hostbuf=_nonempty(a)) for a in arrays]
        outputs = [cl.Buffer(self.context, flags.READ_WRITE, max(r.nbytes, 1)) for r in results]
        arg_buf = cl.Buffer(self.context, read, hostbuf=np.array(args, np.int64))
        status = np.zeros(1, np.int32)
        status_buf = cl.Buffer(self.context, flags.READ_WRITE | flags.COPY_HOST_PTR, hostbuf=status)
        kernel = getattr(self.program, self.names[index])
        sizes = self._sizes(index, space, results)
        kernel(self.queue, *sizes, arg_buf, *inputs, *outputs, status_buf)
        for result, buffer in zip(results, outputs):
            if result.nbytes:
                cl.enqueue_copy(self.queue, result, buffer)
        cl.enqueue_copy(self.queue, status, status_buf)
        self.queue.finish()
        return status[0] == 0

    def _sizes(self, index: int, space, results) -> tuple:
        """(global size, local size), as backend "opencl" launches the kernel."""
        kernel = self.kernels[index]
        count = space if isinstance(kernel.body, Map) else results[0].shape
        groups, size = grid_of(kernel, space, int(np.prod(count, dtype=np.int64)))
        return (groups * size,), (size,)


def launch_record(lowered) -> Launch:
    """A lowered kernel as a plan step over its own slots: inputs, then outputs."""
    ins = tuple((k, tuple(absent)) for k, (_, absent) in enumerate(lowered.inputs))
    outs = tuple((len(ins) + j, np.dtype(v.type.dtype), tuple(absent), bool(keep))
                 for j, (v, absent, keep) in enumerate(lowered.outputs))  # fmt: skip
    rank = launch_rank(lowered.inputs, [(v, None, a, k) for v, a, k in lowered.outputs])
    return Launch(None, ins, outs, rank, lowered.inplace, lowered.empty, lowered.nodes[-1], None)


def _nonempty(array: np.ndarray) -> np.ndarray:
    """OpenCL refuses zero-byte buffers; an operand with no bytes is never read."""
    return array if array.nbytes else np.zeros(1, array.dtype)
