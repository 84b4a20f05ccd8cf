"""Launching kernel descriptions with pyopencl: many kernels built as one program, each
launched with the launch ABI's arguments (``symnb/backends/layout.py``) in device buffers.

This copies operands to the device and results back on every launch: it is how the tests run
every kernel the op suite generates on PoCL. ``backend="opencl"``, with buffers kept on the
device between steps, builds on it.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import layout
from symnb.backends.kernels.ir import Map, Rows
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.render.grid import GROUP, render_program

#: work-items of an elementwise or reduction launch at most (a grid-stride loop covers more)
MAX_ITEMS = 1 << 16
#: work-groups of a row launch at most
MAX_GROUPS = 1 << 10


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

    def launch(self, index: int, arrays, in_absent, outs):
        """Run kernel ``index`` on host ``arrays``; ``outs`` holds (dtype, absent, keepdims)
        per output. Returns the outputs, or None when the kernel declined or the operands do
        not broadcast."""
        arrays = [np.ascontiguousarray(a) for a in arrays]
        space = layout.index_space([a.shape for a in arrays], in_absent)
        if space is None:
            return None
        results = [np.empty(layout.output_shape(space, ab), dt) for dt, ab, _ in outs]
        args = layout.arguments(arrays, in_absent, results, [ab for _, ab, _ in outs], space)
        if 0 in space and not isinstance(self.kernels[index].body, Map):
            return None  # NumPy decides what an empty reduction gives
        if 0 not in space and not self._run(index, args, arrays, results, space):
            return None
        return [r.reshape(layout.output_shape(space, ab, True)) if keep else r
                for r, (_, ab, keep) in zip(results, outs)]  # fmt: skip

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
        kernel(self.queue, *self._sizes(index, space), arg_buf, *inputs, *outputs, status_buf)
        for result, buffer in zip(results, outputs):
            if result.nbytes:
                cl.enqueue_copy(self.queue, result, buffer)
        cl.enqueue_copy(self.queue, status, status_buf)
        self.queue.finish()
        return status[0] == 0

    def _sizes(self, index: int, space) -> tuple:
        """(global size, local size): a work-group per row for row programs."""
        if isinstance(self.kernels[index].body, Rows):
            rows = int(np.prod(space[:-1], dtype=np.int64))
            return (GROUP * max(1, min(rows, MAX_GROUPS)),), (GROUP,)
        total = int(np.prod(space, dtype=np.int64))
        return (max(1, min(total, MAX_ITEMS)),), None


def _nonempty(array: np.ndarray) -> np.ndarray:
    """OpenCL refuses zero-byte buffers; an operand with no bytes is never read."""
    return array if array.nbytes else np.zeros(1, array.dtype)
