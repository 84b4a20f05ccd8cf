"""The renderer every C-family dialect shares: scalar values, ops, literals and helpers.

It spells the kernel description's SSA values as ``const T vN = ...;`` statements. Ops that
C-family languages write alike (operators, the ternary) are spelled here; math functions go
through :meth:`Renderer.math_name` (``expf`` in C, the overloaded ``exp`` in OpenCL); ops with
NumPy semantics that no language has become helpers (``helpers.py``). The loop structure is
written by one writer per body shape (``maps.py``, ``reductions.py``, ``rows.py``,
``contract.py``) as the kernel's schedule (``symnb/backends/schedule``) lays it out.

A dialect subclass sets: ``name``, ``model``, ``TYPES``, ``math_suffix``, ``int_suffix``,
``helper_qualifier``, ``preamble(kernel)``, the capabilities the schedule reads (``streams``,
``prefetches``) and the hooks its model uses (see loops/grid).
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np

from symnb.backends.kernels.ir import Convert, Literal, Op, Unsupported
from symnb.backends.render.helpers import helper_table, instantiate

_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")

#: ops every C-family language writes the same way
OPERATORS = {
    "add": "({0} + {1})",
    "sub": "({0} - {1})",
    "mul": "({0} * {1})",
    "div": "({0} / {1})",
    "neg": "(-{0})",
    "lt": "({0} < {1})",
    "le": "({0} <= {1})",
    "gt": "({0} > {1})",
    "ge": "({0} >= {1})",
    "eq": "({0} == {1})",
    "ne": "({0} != {1})",
    "not": "(!{0})",
    "bit_and": "({0} & {1})",
    "bit_or": "({0} | {1})",
    "bit_xor": "({0} ^ {1})",
    "where": "({0} ? {1} : {2})",
}
#: op name -> the math-library function computing it for floats
MATH = {
    **{
        n: n
        for n in (
            "exp log sqrt tanh sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh expm1 "
            "log1p log2 log10 exp2 pow erf erfc tgamma lgamma cbrt hypot floor ceil trunc rint "
            "fmod copysign isnan isinf isfinite".split()
        )
    },
    "abs": "fabs",
}
#: math functions that are type-generic macros or overloads in every dialect (no suffix)
GENERIC = frozenset(("isnan", "isinf", "isfinite"))
#: integer ops that overflow: computed in an unsigned type at least as wide as ``int`` (which
#: wraps, in C, OpenCL C and CUDA C alike) and converted back, as NumPy's integers wrap
WRAPPING = {"add": "+", "sub": "-", "mul": "*"}
#: float -> integer conversions with a defined result for every float, the results GCC gives
#: on x86-64 (and so NumPy's there): NaN and values out of range give the type's minimum, and
#: 8- and 16-bit targets (signed or not) take the low bits of the int32 conversion, uint32 of
#: int64's; NaN -> uint64 is 2**63 (NumPy's in every loop on NumPy 2.4)
TO_INT = {
    "to_i32": """
static inline I32 NAME(T a) {
    return (a > (T)-2147483648.0 && a < (T)2147483648.0) ? (I32)a : (I32)(-2147483647 - 1);
}""",
    "to_i64": """
static inline I64 NAME(T a) {
    return (a > (T)-9223372036854775808.0 && a < (T)9223372036854775808.0) ? (I64)a
        : (I64)(-9223372036854775807LL - 1);
}""",
    "to_u64": """
static inline U64 NAME(T a) {
    const T two63 = (T)9223372036854775808.0;
    if (a != a) return (U64)1 << 63;
    if (a < (T)0) return (U64)(a > -two63 ? (I64)a : (I64)(-9223372036854775807LL - 1));
    if (a < two63) return (U64)(I64)a;
    if (a < (T)18446744073709551616.0) return (U64)(I64)(a - two63) + ((U64)1 << 63);
    return 0;
}""",
}


class Renderer:
    """Shared spelling of values; subclasses are dialects."""

    name = "C-family"
    model = "loops"
    TYPES = {
        "bool": "bool",
        "int8": "int8_t",
        "int16": "int16_t",
        "int32": "int32_t",
        "int64": "int64_t",
        "uint8": "uint8_t",
        "uint16": "uint16_t",
        "uint32": "uint32_t",
        "uint64": "uint64_t",
        "float32": "float",
        "float64": "double",
    }
    math_names = frozenset(MATH)  # the math functions the dialect's library has
    helper_prefix = "sn_"
    helper_qualifier = "static inline"
    int_suffix = "LL"
    streams = False  # capabilities the CPU schedule reads: streaming stores,
    prefetches = False  # prefetch instructions
    extrema_lanes = False  # float max/min in explicit lanes for some compilers (``lanes_or_simd``)
    space = ""  # the qualifier of pointers to the operands' memory (a GPU's global space)

    def __init__(self):
        self.helpers: dict[str, str] = {}
        self.math_used: set[tuple[str, str]] = set()
        self.extrema_used: set[str] = set()  # float max/min reductions (the C dialect's)

    def fresh(self):
        """This dialect with nothing used yet: what one source needs (its helpers, its math
        declarations) must not depend on what was rendered before it."""
        clone = copy.copy(self)
        Renderer.__init__(clone)
        return clone

    # -- what the dialect can spell ---------------------------------------------------------------
    def spells(self, name: str, dtype: str) -> bool:
        kind = np.dtype(dtype).kind
        if name in OPERATORS or name in helper_table(kind):
            return True
        return kind == "f" and name in self.math_names

    def type_name(self, dtype: str) -> str:
        if dtype not in self.TYPES:
            raise Unsupported(f"the {self.name} dialect has no type for {dtype}")
        return self.TYPES[dtype]

    def math_suffix(self, dtype: str) -> str:
        """The math library's per-type suffix: ``expf`` for float; "" where overloaded."""
        return "f" if dtype == "float32" else ""

    def math_name(self, name: str, dtype: str) -> str:
        base = MATH[name]
        self.math_used.add((base, dtype))
        return base if base in GENERIC else base + self.math_suffix(dtype)

    # -- values -----------------------------------------------------------------------------------
    def literal(self, value, dtype: str) -> str:
        ctype = self.type_name(dtype)
        if isinstance(value, (bool, np.bool_)) or dtype == "bool":
            return f"(({ctype}){int(bool(value))})"
        if isinstance(value, float) or np.dtype(dtype).kind == "f":
            return f"(({ctype}){_float_literal(float(value))})"
        if int(value) == -(2**63):  # 9223372036854775808 fits no signed literal: -(max) - 1
            return f"(({ctype})(-{2**63 - 1}{self.int_suffix} - 1))"
        if int(value) < 2**63:
            return f"(({ctype}){int(value)}{self.int_suffix})"
        return f"(({ctype}){value}U{self.int_suffix})"

    def value(self, item, names: list[str]) -> str:
        """The expression of a Literal, Convert or Op (leaves are the loop writer's)."""
        if isinstance(item, Literal):
            return self.literal(item.value, item.dtype)
        if isinstance(item, Convert):
            return self.convert(names[item.arg], item.dtype, self._dtypes[item.arg])
        if isinstance(item, Op):
            t = self.type_name(item.dtype)
            if item.dtype == "bool" and t != "bool":  # a bool stored as an integer: True + True
                return f"(({t})({self.op(item, names)} != 0))"  # is 2 there, but True in NumPy
            return f"(({t}){self.op(item, names)})"
        raise TypeError(f"unknown kernel value {item!r}")

    def convert(self, text: str, dtype: str, source: str) -> str:
        """A conversion; floats reach unsigned integers through int32/int64, as NumPy's do on x86
        (a direct conversion of a negative float is undefined and differs once vectorised);
        where bool is an integer type, any nonzero value becomes 1 (``(uchar)0.5`` is 0)."""
        t = self.type_name(dtype)
        if dtype == "bool" and source != "bool" and t != "bool":
            return f"(({t})({text} != 0))"  # a bool stored as an integer (OpenCL's uchar)
        if np.dtype(source).kind == "f" and np.dtype(dtype).kind in "iu":
            return self.float_to_int(text, dtype, source)
        return f"(({t}){text})"

    def float_to_int(self, text: str, dtype: str, source: str) -> str:
        """A float converted to an integer type through ``TO_INT``'s defined helpers (a C cast
        of an out-of-range float is undefined, and compilers exploit it: PoCL drops a clip
        before one)."""
        target = np.dtype(dtype)
        name = {"uint64": "to_u64", "int64": "to_i64"}.get(dtype)
        name = name or ("to_i64" if target.kind == "u" and target.itemsize == 4 else "to_i32")
        template = TO_INT[name].replace("LL", self.int_suffix)
        for short, full in (("I32", "int32"), ("I64", "int64"), ("U64", "uint64")):
            template = template.replace(short, self.type_name(full))
        helper = self.helper(name, source, template)
        return f"(({self.type_name(dtype)}){helper}({text}))"

    def wrapping(self, symbol: str, args: list[str], dtype: str) -> str:
        """``a symbol b`` (or ``-a``) of integers, wrapping without signed overflow."""
        wide = self.type_name("uint64" if np.dtype(dtype).itemsize == 8 else "uint32")
        t = self.type_name(dtype)
        if len(args) == 1:
            return f"(({t})(({wide})0 - ({wide}){args[0]}))"
        return f"(({t})(({wide}){args[0]} {symbol} ({wide}){args[1]}))"

    def op(self, item: Op, names: list[str]) -> str:
        args = [names[a] for a in item.args]
        dtype = self._dtypes[item.args[-1]]
        if np.dtype(dtype).kind in "iu" and (item.name in WRAPPING or item.name == "neg"):
            return self.wrapping(WRAPPING.get(item.name, "-"), args, dtype)
        if item.name == "pow" and self._is_literal(item.args[1], 0.5):
            return f"{self.math_name('sqrt', dtype)}({args[0]})"  # NumPy's x ** 0.5 is sqrt
        if item.name in OPERATORS:
            return OPERATORS[item.name].format(*args)
        helpers = helper_table(np.dtype(dtype).kind)
        if item.name in helpers:
            return f"{self.helper(item.name, dtype, helpers[item.name])}({', '.join(args)})"
        if np.dtype(dtype).kind == "f" and item.name in self.math_names:
            return f"{self.math_name(item.name, dtype)}({', '.join(args)})"
        raise Unsupported(f"{item.name}() has no {dtype} version in the {self.name} dialect")

    def statements(self, values: tuple, refs, leaf) -> list[str]:
        """``const T vN = ...;`` for the values ``refs`` (SSA order); ``leaf(item)`` spells the
        values that read memory or the loop (loads, row values, the index)."""
        self._dtypes = [v.dtype for v in values]
        self._values = values
        names = [f"v{i}" for i in range(len(values))]
        lines = []
        for ref in refs:
            item = values[ref]
            known = isinstance(item, (Literal, Convert, Op))
            text = self.value(item, names) if known else leaf(item)
            lines.append(f"const {self.type_name(item.dtype)} v{ref} = {text};")
        return lines

    def _is_literal(self, ref: int, value) -> bool:
        item = self._values[ref]
        while isinstance(item, Convert):
            item = self._values[item.arg]
        return isinstance(item, Literal) and item.value == value

    # -- helpers ----------------------------------------------------------------------------------
    def helper(self, name: str, dtype: str, template: str) -> str:
        full = f"{self.helper_prefix}{name}_{dtype}"
        if full not in self.helpers:
            ctype = self.type_name(dtype)
            utype = self.type_name("u" + dtype) if dtype.startswith("int") else ctype
            for called in _CALL.findall(template.replace("F(", "(")):
                if called in self.math_names:
                    self.math_used.add((called, dtype))
            text = instantiate(template, full, ctype, utype, self.math_suffix(dtype))
            self.helpers[full] = text.replace("static inline", self.helper_qualifier)
        return full

    def extremum(self, kind: str, dtype: str) -> str:
        """The helper combining two values for a max or min reduction (NaN wins)."""
        name = "maximum" if kind == "max" else "minimum"
        return self.helper(name, dtype, helper_table(np.dtype(dtype).kind)[name])

    def lanes_or_simd(self, lanes: str, simd: str) -> str:
        """A float max/min loop: ``lanes`` (explicit lanes) where the compiler vectorises no
        float max/min reduction, else ``simd``; a dialect with ``extrema_lanes`` says which."""
        return simd

    def shared_helpers(self) -> bool:
        """Whether a CPU kernel calls index helpers compiled elsewhere (render/runtime.h) or
        defines its own."""
        return False

    def helper_source(self) -> str:
        return "\n".join(self.helpers[k] for k in sorted(self.helpers))


def _float_literal(value: float) -> str:
    """An exact literal (hexadecimal floats round-trip every double)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return value.hex()
