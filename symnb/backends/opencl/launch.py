"""Running one elementwise node's OpenCL kernel with pyopencl (copies in, one launch, copy out).

The kernel reads operands through byte strides over the broadcast shape (0 on broadcast
axes), so any NumPy layout works after the host copy makes each operand contiguous.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.c.steps import operand_strides
from symnb.backends.kernel_ir import elemwise_kernel
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.core.variable import Constant


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


class OpenCLKernel:
    """``node``'s kernel built for ``context``; call it with the node's input values."""

    def __init__(self, node, context):
        cl = pyopencl()
        self.node, self.context = node, context
        self.kernel, self.operands = elemwise_kernel(node)
        self.source = OpenCLDialect().render(self.kernel)
        self.program = cl.Program(context, self.source).build()
        self.queue = cl.CommandQueue(context)

    def __call__(self, *values):
        given = {id(v): value for v, value in zip(self.node.inputs, values)}
        arrays = [_value_of(var, given) for var in self.operands]
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        out = np.empty(shape, self.node.outputs[0].type.dtype)
        if out.size:
            self._launch(arrays, out)
        return out

    def _launch(self, arrays, out) -> None:
        cl = pyopencl()
        nd = max(out.ndim, 1)
        space = out.shape or (1,)
        host = [np.ascontiguousarray(a) for a in arrays]
        strides = [operand_strides(a, space) for a in host] + [operand_strides(out, space)]
        flags = cl.mem_flags
        read = flags.READ_ONLY | flags.COPY_HOST_PTR
        buffers = [cl.Buffer(self.context, read, hostbuf=_nonempty(a)) for a in host]
        result = cl.Buffer(self.context, flags.WRITE_ONLY, out.nbytes)
        shape_buf = cl.Buffer(self.context, read, hostbuf=np.array(space, np.int64))
        stride_buf = cl.Buffer(self.context, read, hostbuf=np.array(strides, np.int64).ravel())
        self.program.sn_kernel(
            self.queue, (out.size,), None, np.int64(out.size), np.int32(nd),
            shape_buf, stride_buf, *buffers, result,
        )  # fmt: skip
        cl.enqueue_copy(self.queue, out, result)
        self.queue.finish()


def _value_of(var, given: dict) -> np.ndarray:
    if isinstance(var, Constant):
        return np.asarray(var.data)
    return np.asarray(given[id(var)], dtype=var.type.dtype)


def _nonempty(array: np.ndarray) -> np.ndarray:
    """OpenCL refuses zero-byte buffers; an operand with no bytes is never read."""
    return array if array.nbytes else np.zeros(1, array.dtype)
