"""Launching kernel descriptions one at a time on an OpenCL runtime (``runtime.py``), as
``backend="opencl"`` launches them: built through the runtime (``Runtime.kernels``: a kernel it
built before is not built again), each launched as a plan's ``Launch`` step over the same grid,
its arguments made by the executor's own functions (``symnb/backends/execute.py``).

This copies operands to the device and results back on every launch: it is how the tests run
every kernel the test suite generates on PoCL.
"""

from __future__ import annotations

import numpy as np

from symnb.backends import execute
from symnb.backends.device.runtime import launch_ints, launch_kernel
from symnb.backends.kernels.ir import Map
from symnb.backends.plan import Launch
from symnb.backends.planner import launch_rank


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
    """Kernel descriptions built on ``runtime`` (an ``OpenCLRuntime``) together, less those it
    built before; ``launch(i, ...)`` runs kernel ``i``."""

    def __init__(self, runtime, kernels):
        self.runtime, self.kernels = runtime, list(kernels)
        sources = [runtime.dialect.render(kernel) for kernel in self.kernels]
        self.built = runtime.kernels(self.kernels, sources)

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
        runtime, kernel = self.runtime, self.kernels[index]
        inputs = [runtime.upload(_nonempty(a)) for a in arrays]
        outputs = [runtime.alloc(max(r.nbytes, 1)) for r in results]
        status = runtime.upload(np.zeros(1, np.int32))
        count = space if isinstance(kernel.body, Map) else results[0].shape
        count = int(np.prod(count, dtype=np.int64))
        args = launch_ints(kernel, args, len(arrays) + len(results))
        args = runtime.upload(np.array(args, np.int64))
        built = self.built[index]
        launch_kernel(runtime, built, kernel, space, count, args, [*inputs, *outputs, status])
        for result, buffer in zip(results, outputs):
            if result.nbytes:
                raw = runtime.download(buffer, result.nbytes).view(result.dtype)
                result[...] = raw.reshape(result.shape)
        return runtime.download(status, 4).view(np.int32)[0] == 0


def launch_record(lowered) -> Launch:
    """A lowered kernel as a plan step over its own slots: inputs, then outputs."""
    ins = tuple((k, tuple(absent)) for k, (_, absent) in enumerate(lowered.inputs))
    outs = tuple(
        (len(ins) + j, np.dtype(v.type.dtype), tuple(absent), bool(keep))
        for j, (v, absent, keep) in enumerate(lowered.outputs)
    )
    rank = launch_rank(lowered.inputs, [(v, None, a, k) for v, a, k in lowered.outputs])
    return Launch(None, ins, outs, rank, lowered.inplace, lowered.empty, lowered.nodes[-1], None)


def _nonempty(array: np.ndarray) -> np.ndarray:
    """OpenCL refuses zero-byte buffers; an operand with no bytes is never read."""
    return array if array.nbytes else np.zeros(1, array.dtype)
