"""The OpenCL C dialect: the shared renderer's GPU form with OpenCL's names.

Work-items and work-groups come from ``get_global_id``/``get_group_id``, device pointers are
``__global``, row reductions meet in ``__local`` memory between barriers, math builtins are
overloaded (``exp`` for float and double), and bools are stored as ``uchar``. The kernel is
``sn_kernel(a, p0, ..., status)``: the launch ABI's arguments in device buffers (a reduction's
also a scratch buffer before ``status``: ``device/runtime.py: launch_kernel``).
"""

from __future__ import annotations

from symnb.backends.render.base import Renderer
from symnb.backends.render.source import render
from symnb.backends.schedule import gpu

TYPEDEFS = """typedef char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
typedef uchar uint8_t; typedef ushort uint16_t; typedef uint uint32_t; typedef ulong uint64_t;
"""


#: float32 ``tanh`` is exactly +-1 from |a| > 9.02 on (1 - tanh(a) is then under half an ulp
#: of 1); PoCL's builtin gives 1 - 2**-24 there and at the infinities, so a saturated unit's
#: gradient ``1 - y*y`` was 1.2e-7, not NumPy's 0
TANH = """
static inline T NAME(T a) {
    return fabsF(a) > (T)9.02 ? copysignF((T)1, a) : tanhF(a);
}"""

#: ``log1p(a)`` is ``a`` for |a| under the epsilon (``a*a/2`` is then under half an ulp of
#: ``a``), as NumPy gives; PoCL's builtin flushes subnormals to 0 (double too) and is an ulp off
#: near 1e-310, so ``log(sigmoid(x))`` at x = 100 (log1p of a subnormal) was off. The other
#: builtins odd at 0 (sin, tan, asin, atan, sinh, expm1, ...) keep subnormals on PoCL.
LOG1P = """
static inline T NAME(T a) {
    return fabsF(a) < EPS ? a : log1pF(a);
}"""
EPSILON = {"float32": "FLT_EPSILON", "float64": "DBL_EPSILON"}


class OpenCLDialect(Renderer):
    """OpenCL C 1.2; ``render`` returns one program whose kernel is ``sn_kernel``."""

    name = "OpenCL C"
    model = "grid"
    TYPES = {
        "bool": "uchar",
        "int8": "char",
        "int16": "short",
        "int32": "int",
        "int64": "long",
        "uint8": "uchar",
        "uint16": "ushort",
        "uint32": "uint",
        "uint64": "ulong",
        "float32": "float",
        "float64": "double",
    }
    helper_qualifier = "inline"
    int_suffix = "L"
    space = "__global "
    global_id, global_size = "get_global_id(0)", "get_global_size(0)"
    group_id, group_count, local_id = "get_group_id(0)", "get_num_groups(0)", "get_local_id(0)"
    barrier = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"

    def render(self, kernel, schedule=None) -> str:
        """The kernel's program as ``schedule`` lays it out (the GPU schedule's when None)."""
        return render(kernel, schedule or gpu.schedule(kernel, self), self)

    def op(self, item, names: list[str]) -> str:
        if item.name == "tanh" and self._dtypes[item.args[0]] == "float32":
            return f"{self.helper('tanh', 'float32', TANH)}({names[item.args[0]]})"
        if item.name == "log1p" and (dtype := self._dtypes[item.args[0]]) in EPSILON:
            template = LOG1P.replace("EPS", EPSILON[dtype])
            return f"{self.helper('log1p', dtype, template)}({names[item.args[0]]})"
        return super().op(item, names)

    def math_suffix(self, dtype: str) -> str:
        return ""  # OpenCL's math builtins are overloaded on the argument type

    def preamble(self, *kernels) -> str:
        doubles = any(
            item.dtype == "float64" for k in kernels for item in (*k.values, *k.inputs, *k.outputs)
        )
        pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if doubles else ""
        return pragma + TYPEDEFS

    def entry_signature(self, nops: int) -> str:
        params = ", ".join(f"__global char *p{k}" for k in range(nops))
        return f"__kernel void sn_kernel(__global const int64_t *a, {params}, __global int *status)"

    def local_array(self, ctype: str, name: str, size: str) -> str:
        return f"    __local {ctype} {name}[{size}];"
