"""Scalar ops with NumPy's semantics, written once per type a kernel needs, in the subset of
C that C99, OpenCL C and CUDA C share.

The kernel description names ops such as ``floor_div``, ``mod``, ``sign``, ``sigmoid``,
``invert``, ``maximum``, ``minimum``, ``abs``, ``isnan``; C-family languages have no such
functions for every type (or have them with other semantics: ``/`` truncates, ``fmax`` drops
NaN, integer division by zero traps), so the renderer instantiates a helper below per (name,
dtype). ``T`` is the type, ``U`` its unsigned twin, ``F`` the math-function suffix (``f`` for
float in C and CUDA, empty for double and in OpenCL, whose builtins are overloaded).
"""

from __future__ import annotations

#: helpers for floating-point types
FLOAT_HELPERS = {
    "floor_div": """
static inline T NAME(T a, T b) {
    if (b == 0 || isnan(a) || isnan(b)) return a / b;
    if (isinf(a)) return a - a;
    T mod = fmodF(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return copysignF((T)0, a / b);
    T whole = floorF(div);
    return (div - whole > (T)0.5) ? whole + 1 : whole;
}""",
    "mod": """
static inline T NAME(T a, T b) {
    if (b == 0) return fmodF(a, b);
    T mod = fmodF(a, b);
    if (mod == 0) return copysignF((T)0, b);
    return ((b < 0) != (mod < 0)) ? mod + b : mod;
}""",
    "sign": """
static inline T NAME(T a) {
    return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == 0 ? (T)0 : a));
}""",
    "sigmoid": """
static inline T NAME(T a) {
    T e = expF(-fabsF(a));
    return a >= 0 ? 1 / (1 + e) : e / (1 + e);
}""",
    "maximum": """
static inline T NAME(T a, T b) { T m = a > b ? a : b; return a != a ? a : m; }""",
    "minimum": """
static inline T NAME(T a, T b) { T m = a < b ? a : b; return a != a ? a : m; }""",
}  # on a tie (+0.0 and -0.0) the second, as NumPy's maximum and minimum

#: helpers for signed integer types
SIGNED_HELPERS = {
    "floor_div": """
static inline T NAME(T a, T b) {
    if (b == 0) return 0;
    if (b == -1) return (T)(0 - (U)a);
    T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}""",
    "mod": """
static inline T NAME(T a, T b) {
    if (b == 0 || b == -1) return 0;
    T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}""",
    "sign": """
static inline T NAME(T a) { return (T)((a > 0) - (a < 0)); }""",
    "abs": """
static inline T NAME(T a) { return a < 0 ? (T)(0 - (U)a) : a; }""",
    "invert": """
static inline T NAME(T a) { return (T)~a; }""",
    "maximum": """
static inline T NAME(T a, T b) { return a >= b ? a : b; }""",
    "minimum": """
static inline T NAME(T a, T b) { return a <= b ? a : b; }""",
}

#: helpers for unsigned integer types
UNSIGNED_HELPERS = {
    "floor_div": """
static inline T NAME(T a, T b) { return b == 0 ? 0 : a / b; }""",
    "mod": """
static inline T NAME(T a, T b) { return b == 0 ? 0 : a % b; }""",
    "sign": """
static inline T NAME(T a) { return (T)(a > 0); }""",
    "abs": """
static inline T NAME(T a) { return a; }""",
    "invert": """
static inline T NAME(T a) { return (T)~a; }""",
    "maximum": SIGNED_HELPERS["maximum"],
    "minimum": SIGNED_HELPERS["minimum"],
}

#: helpers for bool
BOOL_HELPERS = {
    "abs": UNSIGNED_HELPERS["abs"],
    "invert": """
static inline T NAME(T a) { return !a; }""",
    "maximum": """
static inline T NAME(T a, T b) { return a || b; }""",
    "minimum": """
static inline T NAME(T a, T b) { return a && b; }""",
}

#: integer and bool values are never NaN or infinite
EXACT_CLASSIFIERS = {
    "isnan": """
static inline bool NAME(T a) { (void)a; return 0; }""",
    "isinf": """
static inline bool NAME(T a) { (void)a; return 0; }""",
    "isfinite": """
static inline bool NAME(T a) { (void)a; return 1; }""",
    "floor": """
static inline T NAME(T a) { return a; }""",
    "ceil": """
static inline T NAME(T a) { return a; }""",
    "trunc": """
static inline T NAME(T a) { return a; }""",
    "rint": """
static inline T NAME(T a) { return a; }""",
}


def helper_table(kind: str) -> dict[str, str]:
    """The helpers available for a dtype kind (``f``, ``i``, ``u``, ``b``)."""
    table = {"f": FLOAT_HELPERS, "i": SIGNED_HELPERS, "u": UNSIGNED_HELPERS}.get(kind, {})
    if kind == "b":
        table = BOOL_HELPERS
    return {**table, **(EXACT_CLASSIFIERS if kind in "iub" else {})}


def instantiate(template: str, name: str, ctype: str, utype: str, suffix: str) -> str:
    """One helper for one type."""
    text = template.replace("NAME", name).replace("F(", suffix + "(")
    return text.replace("(T)", f"({ctype})").replace("(U)", f"({utype})").replace("T ", ctype + " ")
