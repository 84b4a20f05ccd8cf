"""Index arithmetic every CPU-model kernel shares, in the C subset all dialects accept.

A kernel is called as ``sn_kernel(a, ptr)`` (the launch ABI in ``symnb/backends/plan.py``):
``ptr`` holds each operand's address (inputs, then outputs); ``a[0]`` = ndim (at least 1),
``a[1:1+ndim]`` = the index space's shape, then for each operand ``ndim`` byte strides (0 on
broadcast, length-1 and absent axes), then each output's element count (reductions read it).
A plan's ``Launch`` step builds these (symnb/backends/plan.py, layout.py). The kernel works
on a copy of the shape and strides; ``SN_MAXDIM`` is ``symnb.core.types.MAX_RANK``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

from symnb.core.types import MAX_RANK  # the one rank limit, as in runner.c

#: the helpers' C (``sn_collapse`` merges axes that are contiguous for every operand and drops
#: length-1 axes, so a C-contiguous elementwise call becomes one flat loop whatever its rank)
HEADER = Path(__file__).with_name("runtime.h")
#: a helper's definition line: linkage, return type, name, parameters
SIGNATURE = re.compile(r"^SN_RT(?:_INLINE)? ([\w ]+?) (sn_\w+)\(([^)]*)\)\s*\{", re.M)
DEFINES = """
#define SN_MAXDIM @MAX_RANK@
#define SN_ARGS(nops) (2 + SN_MAXDIM + (nops) * SN_MAXDIM)
#define SN_ROWS 64 /* rows located once and then advanced; threads split blocks of them */
"""
#: the prefix the C runner exports the helpers under (runner.c)
EXPORTED = "snrt_"


@functools.cache
def helpers() -> str:
    """The helpers as a kernel's own static functions."""
    text = HEADER.read_text()
    text = text[text.index("*/") + 3 :]  # the header's comment is about the header
    return text.replace("SN_RT_INLINE ", "static inline ").replace("SN_RT ", "static ")


@functools.cache
def declarations() -> str:
    """The helpers as the C runner exports them: declared, each ``sn_`` name a macro for its
    exported name. The header's hash is part of the text, so a kernel's cache key changes
    with the helpers it calls."""
    text = HEADER.read_text()
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    lines = [f"/* the runner's helpers, runtime.h {digest} */"]
    for ret, name, params in SIGNATURE.findall(text):
        exported = EXPORTED + name[len("sn_") :]
        params = " ".join(params.split())
        lines += [f"{ret} {exported}({params});", f"#define {name} {exported}"]
    return "\n".join(lines) + "\n"


def names() -> list[str]:
    """Every helper's ``sn_`` name, in the header's order."""
    return [name for _, name, _ in SIGNATURE.findall(HEADER.read_text())]


def runtime(parallel_min: int, shared: bool = False) -> str:
    """The defines and helpers a CPU kernel starts with; ``shared``: the runner's helpers."""
    text = DEFINES.replace("@MAX_RANK@", str(MAX_RANK))
    return (
        f"#define SN_PARALLEL_MIN {parallel_min}\n{text}\n{declarations() if shared else helpers()}"
    )
