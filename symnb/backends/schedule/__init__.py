"""The schedule step between lowering and rendering: ``schedule(kernel, dialect)``.

``base`` holds the decisions (frozen dataclasses), ``cpu`` and ``gpu`` the heuristics of each
target family; the dialect's ``model`` ("loops" or "grid") picks the family. Linkers call this
before rendering (``dialect.render(kernel, schedule)``); docs/schedule.md explains each
threshold.
"""

from __future__ import annotations

from symnb.backends.schedule import cpu, gpu


def schedule(kernel, dialect, device=None):
    """The schedule of ``kernel`` on ``dialect``'s target (``device``: a GPU's facts)."""
    if dialect.model == "grid":
        return gpu.schedule(kernel, dialect, device)
    return cpu.schedule(kernel, dialect)
