"""The renderer every C-like dialect shares: it walks a Kernel's values and spells them.

A dialect is a subclass that overrides data and a few hooks; this class turns the scalar DAG
into statements and collects the helpers it needs. What a dialect overrides:

- ``TYPES``: dtype name -> the dialect's type name (``double``, ``int64_t``...).
- ``MATH``: libm names the dialect spells, and ``math_name(name, dtype)`` for per-type names
  (``expf`` for float32 in C; OpenCL's overloaded ``exp``).
- ``helper_prefix`` and ``helper_qualifier`` (``static inline`` in C, ``__device__`` in CUDA).
- ``render(kernel)``: the translation unit: includes and declarations (vector math...), the
  helpers (``helper_source()``), and the entry point with its loop or thread indexing, which
  calls ``body(kernel, load)`` with a function giving the expression that loads an operand.

Anything it cannot spell raises ``Unsupported``, so the node runs as a library call instead.
"""

from __future__ import annotations

import math
import re

import numpy as np

from symnb.backends.c.helpers import helper_table, instantiate
from symnb.backends.kernel_ir import Convert, Expr, Literal, Load, Unsupported

_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")

#: names from op templates that the helpers implement with NumPy's semantics
HELPER_NAMES = frozenset(
    ("floor_div", "py_mod", "sign", "sigmoid", "invert", "fmax", "fmin", "fabs")
    + ("isnan", "isinf", "isfinite", "floor", "ceil", "trunc", "rint")
)


class KernelRenderer:
    """Shared walk of a Kernel's scalar values; subclasses set the dialect."""

    TYPES = {
        "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
        "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
        "uint64": "uint64_t", "float32": "float", "float64": "double",
    }  # fmt: skip
    MATH = frozenset(
        "exp log sqrt tanh sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh "
        "expm1 log1p log2 log10 exp2 pow erf erfc tgamma lgamma cbrt hypot floor ceil trunc "
        "rint fabs fmod copysign isnan isinf isfinite".split()
    )
    helper_prefix = "sn_"
    helper_qualifier = "static inline"

    def __init__(self):
        self.helpers: dict[str, str] = {}
        self.math_used: set[tuple[str, str]] = set()

    # -- types and names ----------------------------------------------------------------------
    def type_name(self, dtype: str) -> str:
        if dtype not in self.TYPES:
            raise Unsupported(f"the {type(self).__name__} has no type for {dtype}")
        return self.TYPES[dtype]

    def math_suffix(self, dtype: str) -> str:
        """libm's per-type suffix: ``expf`` for float; dialects with overloads return ""."""
        return "f" if dtype == "float32" else ""

    def math_name(self, name: str, dtype: str) -> str:
        """libm's per-type names: ``exp`` for double, ``expf`` for float."""
        if name in ("isnan", "isinf", "isfinite"):
            return name
        return name + self.math_suffix(dtype)

    def function_name(self, name: str, dtype: str) -> str:
        """The name a template's call becomes for operands of ``dtype``."""
        kind = np.dtype(dtype).kind
        helpers = helper_table(kind)
        if name in HELPER_NAMES and name in helpers:
            return self._helper(name, dtype, helpers[name])
        if kind == "f" and name in self.MATH:
            self.math_used.add((name, dtype))
            return self.math_name(name, dtype)
        raise Unsupported(f"{name}() has no {dtype} version in {type(self).__name__}")

    def _helper(self, name: str, dtype: str, template: str) -> str:
        full = f"{self.helper_prefix}{name}_{dtype}"
        if full not in self.helpers:
            ctype = self.type_name(dtype)
            utype = self.type_name("u" + dtype) if dtype.startswith("int") else ctype
            suffix = self.math_suffix(dtype)
            for called in _CALL.findall(template.replace("F(", "(")):
                if called in self.MATH:
                    self.math_used.add((called, dtype))
            text = instantiate(template, full, ctype, utype, suffix)
            self.helpers[full] = text.replace("static inline", self.helper_qualifier)
        return full

    # -- values -------------------------------------------------------------------------------
    def literal(self, value, dtype: str) -> str:
        ctype = self.type_name(dtype)
        if isinstance(value, (bool, np.bool_)) or dtype == "bool":
            return f"(({ctype}){int(bool(value))})"
        if isinstance(value, float) or np.dtype(dtype).kind == "f":
            return f"(({ctype}){_float_literal(float(value))})"
        return f"(({ctype}){int(value)}LL)" if int(value) < 2**63 else f"(({ctype}){value}ULL)"

    def value(self, item, names: list[str], load) -> str:
        """The C expression of one SSA value."""
        if isinstance(item, Load):
            return load(item.operand)
        if isinstance(item, Literal):
            return self.literal(item.value, item.dtype)
        if isinstance(item, Convert):
            return f"(({self.type_name(item.dtype)}){names[item.arg]})"
        if isinstance(item, Expr):
            return f"(({self.type_name(item.dtype)}){self.expression(item, names)})"
        raise TypeError(f"unknown kernel value {item!r}")

    def expression(self, item: Expr, names: list[str]) -> str:
        """The op's template with its calls renamed for the dtype and its operands filled."""
        pieces = _CALL.split(item.template)  # text, name, text, name, ..., text
        for i in range(1, len(pieces), 2):
            pieces[i] = self.function_name(pieces[i], item.dtype) + "("
        return "".join(pieces).format(*[names[a] for a in item.args])

    def body(self, kernel, load) -> list[str]:
        """One ``const T vN = ...;`` statement per value."""
        names, lines = [], []
        for i, item in enumerate(kernel.values):
            text = self.value(item, names, load)
            lines.append(f"const {self.type_name(item.dtype)} v{i} = {text};")
            names.append(f"v{i}")
        return lines

    def helper_source(self) -> str:
        return "\n".join(self.helpers[k] for k in sorted(self.helpers))


def _float_literal(value: float) -> str:
    """An exact C99 literal (hexadecimal floats round-trip every double)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return value.hex()
