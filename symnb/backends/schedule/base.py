"""The schedule: how a kernel's work is laid out on a target, decided apart from its spelling.

Lowering says what a kernel computes (``symnb/backends/kernels/ir.py``); the schedule step says
how its loops run on one target: threads and the sizes that take them, streaming stores, row
variants compiled in, blocks and prefetches on a CPU; work-group sizes, launch limits and how
work-items share a reduction on a GPU. The renderers (``symnb/backends/render``) spell a
schedule and decide nothing. One schedule per body shape and target family, frozen and
comparable (the snapshot tests compare them as text: ``as_dict``); the heuristics that fill
them are ``cpu.py`` and ``gpu.py``, their thresholds explained in docs/schedule.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


# -- CPU loops ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CpuMap:
    """A map's loops. ``threads``: whether it has threaded paths (a fixed size below
    ``parallel_min`` has none); ``parallel_min``: elements from which a call splits its rows
    or its flat range between threads; ``stream``: whether a flat call may write with streaming
    stores, from ``stream_min_bytes`` of output, staged ``stream_block_bytes`` at a time;
    ``constant_rows``: the inputs a row variant reads once (stride 0 along the row);
    ``row_steps``: the element steps (inputs, then the output) compiled into a row variant,
    None for no such variant."""

    threads: bool
    parallel_min: int
    stream: bool
    stream_min_bytes: int
    stream_block_bytes: int
    constant_rows: tuple[int, ...] = ()
    row_steps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class CpuReduce:
    """A reduction's loops (also a product that is not packed: it is a sum). ``threads``,
    ``parallel_min``: as a map's (threads over distinct output rows, or over pieces of the
    rows, each into a copy of the output); ``short_rows``: rows shorter than this, whose axis
    above is reduced too, are summed in blocks of rows (None: no such variant). Rows that
    share outputs are cut into the largest count of ``pieces`` (in decreasing order) that
    leaves each piece ``piece_min`` elements or more, and at least ``piece_outputs`` elements
    per output element (its copy's cost): by their sizes alone, so the result is the same
    bits whatever the team. ``lane_bytes``: a float max/min row is reduced in explicit lanes
    of this many bytes where the compiler vectorises no other form (0: no lanes form).
    ``sum_block``: a float sum with no wider accumulator adds each row in blocks of this many
    elements, the block sums combined with compensation (None: one accumulator)."""

    threads: bool
    parallel_min: int
    short_rows: int | None = None
    pieces: tuple[int, ...] = ()
    piece_min: int = 0
    piece_outputs: int = 0
    lane_bytes: int = 0
    sum_block: int | None = None


@dataclass(frozen=True)
class CpuRows:
    """A row program's loops. ``threads``: whether rows may be split between threads (from
    ``parallel_min`` elements, at run time); ``blocks``: per pass, the elements a blocked sum
    accumulates before adding the block to its total (a wider type, or, for a float64
    sum, the same with compensation; None: one accumulator);
    ``prefetch``: the passes over flat rows that fetch the next row, ``prefetch_chunk``
    elements at a time; ``lane_bytes``: float max/min passes in explicit lanes of this many
    bytes, as a reduction's (0: none)."""

    threads: bool
    parallel_min: int
    blocks: tuple[int | None, ...] = ()
    prefetch: tuple[int, ...] = ()
    prefetch_chunk: int = 0
    lane_bytes: int = 0


@dataclass(frozen=True)
class CpuContract:
    """A packed, register-tiled product (``render/contract.h``); ``parallel_min``: the
    multiply-adds from which it splits between threads."""

    parallel_min: int


# -- GPU grids ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GpuGrid:
    """A kernel's grid. ``strategy``: how work-items share the work: "elements" (a
    grid-stride loop over the index space), "outputs" (a work-item per output element,
    looping over the reduced axes, or a work-group per output past ``coop`` elements
    each), "group-rows" (a work-group per row, partial reductions combined as a tree in
    local memory), "tiles" (a work-group per tile of a product's
    outputs, operands staged in local memory). ``group``: work-items per work-group;
    ``max_groups``: work-groups per launch at most (grid-stride loops cover the rest);
    ``tile``, ``tile_k``, ``work``: a product's tile of outputs, its step along k, and the
    outputs per work-item along each side (0 elsewhere); ``coop``: a reduction's elements
    per output from which a work-group reduces one output together (a tree in local
    memory), where the outputs are few or reduce along the innermost axis (0 elsewhere);
    ``split``, ``few``: a reduction to fewer than ``few`` outputs (the device's compute
    units) splits each output's elements over work-groups of ``split`` elements or more,
    each writing a partial result, and a second launch combines each output's partials
    (``gpu.parts``; 0: one pass only)."""

    strategy: str
    group: int
    max_groups: int
    tile: int = 0
    tile_k: int = 0
    work: int = 0
    coop: int = 0
    split: int = 0
    few: int = 0

    @property
    def side(self) -> int:
        """Work-items along each side of a product's tile."""
        return self.tile // self.work

    @property
    def tile_items(self) -> int:
        """Work-items of a product's work-group."""
        return self.side * self.side


@dataclass(frozen=True)
class DeviceFacts:
    """What the GPU schedule knows of the device: ``max_group``: work-items per work-group at
    most; ``local_bytes``: local (shared) memory per work-group; ``compute_units``: its
    multiprocessors (CUDA) or compute units (OpenCL), which size a launch. The defaults hold
    for every OpenCL 1.2 GPU (32 KiB of local memory is its minimum) and CUDA device; each
    runtime reads its device's (``Runtime.facts``: pyopencl's device info, the CUDA driver's
    attributes)."""

    max_group: int = 256
    local_bytes: int = 32768
    compute_units: int = 16


Schedule = CpuMap | CpuReduce | CpuRows | CpuContract | GpuGrid


def as_dict(schedule) -> dict:
    """The schedule as plain data, its kind first (snapshots, ``f.kernels``)."""
    return {"kind": type(schedule).__name__, **dataclasses.asdict(schedule)}
