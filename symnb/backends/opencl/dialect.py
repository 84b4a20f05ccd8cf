"""The OpenCL C dialect: the shared renderer with OpenCL's names and one work-item per element.

What differs from the C dialect is only what OpenCL spells differently: type names (``long``,
``uchar`` for bool), overloaded math (``exp`` for float and double alike), ``inline`` helpers,
``L`` integer literals, and the entry point: a ``__kernel`` where work-item ``i`` decodes its
index over the broadcast shape into each operand's byte offset. The scalar DAG, the helpers
with NumPy's semantics and the literals come from :class:`KernelRenderer` unchanged.
"""

from __future__ import annotations

from symnb.backends.c.renderer import KernelRenderer
from symnb.backends.kernel_ir import Reduction, Unsupported


class OpenCLDialect(KernelRenderer):
    """OpenCL C 1.2; ``render`` returns one program whose kernel is ``sn_kernel``."""

    TYPES = {
        "bool": "uchar", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
        "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
        "float32": "float", "float64": "double",
    }  # fmt: skip
    helper_qualifier = "inline"

    def math_suffix(self, dtype: str) -> str:
        return ""  # OpenCL's math builtins are overloaded on the argument type

    def literal(self, value, dtype: str) -> str:
        return super().literal(value, dtype).replace("LL)", "L)")  # (U)LL is not OpenCL C

    def render(self, kernel) -> str:
        if isinstance(kernel.result, Reduction):
            raise Unsupported("the OpenCL dialect renders elementwise kernels only so far")
        entry = self.entry(kernel)  # first: it collects the helpers the body calls
        doubles = any(v.dtype == "float64" for v in kernel.values)
        pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if doubles else ""
        return "\n".join([pragma, self.helper_source(), entry])

    def entry(self, kernel) -> str:
        nin = len(kernel.inputs)
        names = [f"p{k}" for k in range(nin)] + ["pout"]
        params = [f"__global const char *{n}" for n in names[:-1]] + ["__global char *pout"]
        loads = {k: self._load(kernel, k) for k in range(nin)}
        body = "\n".join("    " + line for line in self.body(kernel, loads.__getitem__))
        out_t = self.type_name(kernel.result.dtype)
        offsets = "\n".join(f"        o{k} += i * strides[{k} * nd + d];" for k in range(nin + 1))
        return f"""
__kernel void sn_kernel(const long n, const int nd, __global const long *shape,
                        __global const long *strides, {", ".join(params)}) {{
    const long gid = get_global_id(0);
    if (gid >= n) return;
    long rest = gid, {", ".join(f"o{k} = 0" for k in range(nin + 1))};
    for (int d = nd - 1; d >= 0; d--) {{
        const long i = rest % shape[d];
        rest /= shape[d];
{offsets}
    }}
{body}
    *(__global {out_t} *)(pout + o{nin}) = v{kernel.result.value};
}}"""

    def _load(self, kernel, k: int) -> str:
        t = self.type_name(kernel.inputs[k].dtype)
        return f"(*(__global const {t} *)(p{k} + o{k}))"
