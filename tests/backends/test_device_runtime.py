"""The device runtime builds each kernel source once per process: the kernels a function needs
that the runtime has not built yet compile together as one program, the others are reused."""

from __future__ import annotations

import symnb as sn
from symnb.backends.device import runtime as device_runtime
from symnb.backends.kernels.lowering import lower
from symnb.backends.opencl.dialect import OpenCLDialect


class CountingRuntime(device_runtime.Runtime):
    """Builds nothing: records each program it is asked to build."""

    dialect = OpenCLDialect()

    def __init__(self):
        self.programs: list[tuple[str, list[str]]] = []

    def build(self, source, names):
        self.programs.append((source, names))
        return [f"kernel {len(self.programs)}.{name}" for name in names]


def descriptions(*outputs):
    kernels = [lower(out.owner, OpenCLDialect()).kernel for out in outputs]
    return kernels, [OpenCLDialect().render(k) for k in kernels]


def test_new_kernels_build_together_and_built_ones_are_reused():
    x = sn.matrix("x", dtype="float32")
    exp, total, square = sn.exp(x), sn.sum(x, axis=0), x * x
    runtime = CountingRuntime()
    first = runtime.kernels(*descriptions(exp, total, sn.exp(x)))  # exp twice: one source
    assert len(runtime.programs) == 1 and runtime.programs[0][1] == ["sn_kernel_0", "sn_kernel_1"]
    assert first == ["kernel 1.sn_kernel_0", "kernel 1.sn_kernel_1", "kernel 1.sn_kernel_0"]
    assert runtime.kernels(*descriptions(total, exp)) == first[1::-1]  # nothing new to build
    assert len(runtime.programs) == 1
    again = runtime.kernels(*descriptions(square, exp))
    source, names = runtime.programs[1]
    assert names == ["sn_kernel_0"] and "sn_kernel_0(" in source and "sn_kernel_1(" not in source
    assert again == ["kernel 2.sn_kernel_0", first[0]]


def test_the_runtime_starts_again_empty_past_max_built(monkeypatch):
    monkeypatch.setattr(device_runtime, "MAX_BUILT", 2)
    x = sn.vector("x", dtype="float64")
    runtime = CountingRuntime()
    runtime.kernels(*descriptions(sn.exp(x), sn.log(x)))
    runtime.kernels(*descriptions(sn.exp(x)))  # the cache was full: built again
    assert len(runtime.programs) == 2 and len(runtime._built) == 1
