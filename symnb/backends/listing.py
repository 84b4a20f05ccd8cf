"""``f.kernels``: what each step of a compiled function runs, with the C source of kernels.

For teaching, ``print(kernel)`` shows the kernel's own loop first (the first function that
computes its scalar values) and folds the rest (the other variants of that loop, the scalar
helpers and the boilerplate every kernel shares) into one line; ``kernel.folded()`` gives
both parts (the HTML form puts the rest behind a click) and ``kernel.source`` the whole C.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FUNCTION = re.compile(r"^(?:static\s|int\s|void\s)[^;]*\(")
_NAME = re.compile(r"(\w+)\s*\(")
_VALUE = re.compile(r"\bv\d+\s*=")  # the renderer's scalar values: v0, v1, ...


def c_sections(source: str) -> list[tuple[str | None, str]]:
    """The source cut into top-level functions ``(name, text)`` and what lies between them
    ``(None, text)``, in order; joined they give the source back."""
    sections, lines, depth, name = [], [], 0, None
    for line in source.splitlines(keepends=True):
        if name is None and _FUNCTION.match(line) and not line.rstrip().endswith(";"):
            if lines:
                sections.append((None, "".join(lines)))
            lines, name, depth, opened = [], _NAME.search(line).group(1), 0, False
        lines.append(line)
        if name is not None:
            depth += line.count("{") - line.count("}")
            opened = opened or "{" in line
            if opened and depth <= 0:
                sections.append((name, "".join(lines)))
                lines, name = [], None
    if lines:
        sections.append((name, "".join(lines)))
    return sections


@dataclass
class KernelInfo:
    """One step: ``kind`` is "kernel" (generated C), "blas" or "library" (NumPy reference)."""

    kind: str
    nodes: object  # an Apply, or [producer, reduction] for a fused reduction
    source: str | None
    reason: str = ""
    language: str = "C"  # of ``source``: "C", "OpenCL C", "CUDA C"

    @property
    def ops(self) -> str:
        nodes = self.nodes if isinstance(self.nodes, list) else [self.nodes]
        return " -> ".join(str(n.op) for n in nodes)

    def line(self) -> str:
        if self.kind == "kernel":
            note = f"; {self.reason}" if self.reason else ""
            lines = len(self.source.splitlines())
            return f"kernel   {self.ops} ({lines} lines of {self.language}{note})"
        return f"{self.kind:<8} {self.ops}: {self.reason}"

    def __repr__(self):
        return f"<{self.line()}>"

    def loops(self) -> list[str]:
        """The names of the functions that compute the kernel's values (its loop variants)."""
        return [n for n, text in c_sections(self.source or "") if n and _VALUE.search(text)]

    def folded(self) -> tuple[str, str, str]:
        """(the kernel's first loop, the rest of the source with that loop elided, a one-line
        summary of the rest); a step without C gives ("", "", its line)."""
        if not self.source:
            return "", "", self.line()
        loops = self.loops()
        if not loops:
            return self.source, "", ""
        sections = c_sections(self.source)
        loop = next(text for n, text in sections if n == loops[0])
        rest = "".join(f"/* {n}: shown above */\n" if n == loops[0] else t for n, t in sections)
        return loop, rest, self._summary(loops, sections, loop)

    def _summary(self, loops: list[str], sections, loop: str) -> str:
        total, shown = len(self.source.splitlines()), len(loop.splitlines())
        others = [n for n, _ in sections if n and n not in loops]
        variants = (
            f"{len(loops) - 1} more variant{'s' if len(loops) > 2 else ''} of this loop "
            f"({', '.join(loops[1:])}), "
            if len(loops) > 1
            else ""
        )
        return (
            f"{total - shown} more lines: {variants}{len(others)} helper functions and the "
            "boilerplate every kernel shares (includes, threads, streaming stores, index "
            "decoding, and sn_kernel, the entry point that picks a variant)"
        )

    def __str__(self):
        """The teaching view: the loop, then one line for everything folded."""
        loop, rest, summary = self.folded()
        if not loop:
            return summary
        head = f"// {self.ops}: {self.loops()[0] if rest else 'the whole kernel'}"
        fold = f"// ... {summary}; .source has all of it\n" if rest else ""
        return f"{head}\n{loop.rstrip()}\n{fold}".rstrip()


class KernelList(list):
    """The steps in schedule order; prints one line each (``.source`` of an item is its C)."""

    def __repr__(self):
        return "\n".join(f"{i:3d}  {k.line()}" for i, k in enumerate(self)) or "(no steps)"

    def listing(self) -> str:
        """Every step's line, each kernel followed by its teaching view (``str(kernel)``)."""
        parts = [f"{i:3d}  {k.line()}" + (f"\n{k}" if k.source else "") for i, k in enumerate(self)]
        return "\n\n".join(parts) or "(no steps)"

    def sources(self) -> list[str]:
        return [k.source for k in self if k.source is not None]
