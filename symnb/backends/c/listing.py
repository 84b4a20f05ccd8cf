"""``f.kernels``: what each step of a compiled function runs, with the C source of kernels."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KernelInfo:
    """One step: ``kind`` is "kernel" (generated C), "blas" or "library" (NumPy reference)."""

    kind: str
    nodes: object  # an Apply, or [producer, reduction] for a fused reduction
    source: str | None
    reason: str = ""

    @property
    def ops(self) -> str:
        nodes = self.nodes if isinstance(self.nodes, list) else [self.nodes]
        return " -> ".join(str(n.op) for n in nodes)

    def line(self) -> str:
        if self.kind == "kernel":
            note = f"; {self.reason}" if self.reason else ""
            return f"kernel   {self.ops} ({len(self.source.splitlines())} lines of C{note})"
        return f"{self.kind:<8} {self.ops}: {self.reason}"

    def __repr__(self):
        return f"<{self.line()}>"


class KernelList(list):
    """The steps in schedule order; prints one line each (``.source`` of an item is its C)."""

    def __repr__(self):
        return "\n".join(f"{i:3d}  {k.line()}" for i, k in enumerate(self)) or "(no steps)"

    def sources(self) -> list[str]:
        return [k.source for k in self if k.source is not None]
