"""The GPU schedule: how work-items and work-groups share a kernel, and the launch's size.

One function per body shape's strategy (``base.GpuGrid``): a map is a grid-stride loop over
its elements; a reduction gives each work-group an output where outputs are few and long
(a tree in local memory), else each work-item output elements, looping over the reduced
axes; a row program gives each work-group rows, its work-items sharing every pass and
combining partial reductions as a tree in local memory; a product is tiled through local
memory. ``launch`` turns a schedule and a call's sizes into (work-groups, items per group);
``collapse`` merges a map's or reduction's axes that step alike before launch. Sizes follow
the device (``DeviceFacts``, read by each runtime). A reduction to fewer outputs than the
device has compute units, each long, runs in two passes (``parts``): each output's elements
split over work-groups that write partial results, a second launch combining them. A new
strategy is a new value here and its spelling in its shape's writer (``render/``). The
numbers are explained in docs/schedule.md.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.kernels.ir import Contract, Map, Reduce, Rows
from symnb.backends.schedule.base import DeviceFacts, GpuGrid

#: work-items per work-group of a row program (a power of two: its tree halves it): two warps
#: of 32 (CUDA) or one wavefront of 64 (AMD), small enough that a short row keeps most busy
GROUP = 64
#: work-items per work-group of a map or a reduction (where the device allows): eight warps,
#: enough to hide memory latency, and the width of a reduction's tree in local memory
WIDE = 256
#: work-groups per compute unit (multiprocessor) of a map or reduction launch: a few groups'
#: worth of items resident on each (2048 threads per H100 multiprocessor), a grid-stride
#: loop over the rest (a few elements per work-item amortise its index decoding)
GROUPS_PER_UNIT = 8
#: a reduction's elements per output from which a work-group reduces one output together (its
#: items striding over them, then a tree in local memory) where outputs are few: sum(x) ran
#: on one work-item; past 64 elements even a quarter-busy group beats one item
COOP = 64
#: a two-pass reduction's elements per work-group at least (each of its WIDE items folds 16
#: or more before the tree): an output splits over G = min(launch groups / outputs, its
#: elements / SPLIT) work-groups when G >= 2 and the outputs are fewer than compute units.
#: Below it the second launch (a few microseconds on a GPU) and the partials' round trip
#: through global memory cost more than one group streaming the elements alone saves
SPLIT = 4096
#: work-groups of a row launch at most (each loops over rows)
MAX_GROUPS = 1 << 10
#: work-groups of a product launch at most (each loops over blocks of TILE x TILE outputs)
MAX_BLOCKS = 1 << 16
#: a product's tiling: a work-group computes TILE x TILE outputs, each work-item WORK x WORK
#: of them in registers, reading k TILE_K at a time through local memory; (TILE / WORK)^2 =
#: 256 work-items, and the two staged tiles take TILE_K * (2 * TILE + 1) values of local memory
TILE, TILE_K, WORK = 64, 16, 4


def schedule(kernel, dialect, device: DeviceFacts | None = None) -> GpuGrid:
    """The GPU schedule of ``kernel`` on ``device`` (``DeviceFacts()``'s when None)."""
    device = device or DeviceFacts()
    body = kernel.body
    group = _group(device)
    wide = _group(device, WIDE)
    fill = max(device.compute_units, 1) * GROUPS_PER_UNIT
    if isinstance(body, Map):
        return GpuGrid("elements", wide, fill)
    if isinstance(body, Reduce):
        units = max(device.compute_units, 1)
        return GpuGrid("outputs", wide, fill, coop=COOP, split=SPLIT, few=units)
    if isinstance(body, Rows):
        return GpuGrid("group-rows", group, MAX_GROUPS)
    if isinstance(body, Contract):
        return _tiles(kernel, device, group)
    raise TypeError(f"no GPU schedule for a {type(body).__name__} body")


def _group(device: DeviceFacts, group: int = GROUP) -> int:
    """``group``, or the device's largest power of two below it."""
    while group > device.max_group:
        group //= 2
    return group


def _tiles(kernel, device: DeviceFacts, group: int) -> GpuGrid:
    tile, work = TILE, WORK
    value_bytes = max(
        np.dtype(kernel.values[v].dtype).itemsize for v in (kernel.body.left, kernel.body.right)
    )
    while (tile // work) ** 2 > device.max_group or (
        TILE_K * (2 * tile + 1) * value_bytes > device.local_bytes
    ):
        tile //= 2  # smaller tiles: fewer work-items, less local memory
    return GpuGrid("tiles", group, MAX_BLOCKS, tile, TILE_K, work)


def launch(schedule: GpuGrid, space: tuple, out_count: int) -> tuple[int, int]:
    """(work-groups, items per group) of a call over ``space`` with ``out_count`` output
    elements: a group per row or per tile of a product (up to ``max_groups``: the kernels
    loop), else enough items for every output element (the kernels loop past it), and for a
    reduction at least a group per output (up to ``max_groups``), which its kernel uses
    where its outputs are few and long (``ReduceWriter.per_output``). The one-pass grid: a
    reduction that ``parts`` splits launches twice instead (``runtime.launch_kernel``)."""
    if schedule.strategy == "tiles":
        batch = int(np.prod(space[:-3], dtype=np.int64))
        blocks = batch * -(-space[-3] // schedule.tile) * -(-space[-1] // schedule.tile)
        return max(1, min(blocks, schedule.max_groups)), schedule.tile_items
    if schedule.strategy == "group-rows":
        rows = int(np.prod(space[:-1], dtype=np.int64))
        return max(1, min(rows, schedule.max_groups)), schedule.group
    items = max(1, min(out_count, schedule.max_groups * schedule.group))
    groups = -(-items // schedule.group)
    if schedule.coop:  # enough groups for a group per output, where the kernel takes that way
        groups = max(groups, min(out_count, schedule.max_groups))
    return groups, schedule.group


def parts(schedule: GpuGrid, space: tuple, out_count: int) -> int:
    """Work-groups each output of a reduction over ``space`` to ``out_count`` outputs is
    split over in a first pass (its partial results combined by a second launch), or 0 for
    one pass: outputs fewer than the device's compute units (``few``), each at least twice
    ``split`` elements long; as many parts as fill the launch's groups (``max_groups``) and
    keep ``split`` elements each. Every reduction kind splits (sum, prod, max, min, any,
    all, and a mean, divided once in the second pass): each is associative, as the
    one-pass tree already assumes."""
    if not schedule.split or out_count < 1 or out_count >= schedule.few:
        return 0
    count = int(np.prod(space, dtype=np.int64)) // out_count
    g = min(schedule.max_groups // out_count, count // schedule.split)
    return g if g >= 2 else 0


def collapse(args: list[int], nops: int) -> list[int]:
    """A map's or reduction's launch integers (``[nd, shape, each operand's strides, output
    counts]``, execute.kernel_args) over the fewest axes that address the same elements:
    axes of length 1 dropped, and an axis merged into the next one in where every operand
    (the outputs too: a reduced axis is merged only with a reduced one) steps across it by
    the next one's length times its step. A C-contiguous call (scalars broadcast) becomes
    one axis, which the kernels index without dividing (``MapWriter.grid_stride``)."""
    nd = args[0]
    shape = args[1 : 1 + nd]
    strides = [args[1 + nd + k * nd : 1 + nd + (k + 1) * nd] for k in range(nops)]
    tail = args[1 + nd + nops * nd :]
    kept = [d for d in range(nd) if shape[d] != 1] or [nd - 1]
    axes = [[shape[d], [st[d] for st in strides]] for d in kept]
    merged = [axes[-1]]
    for n, steps in reversed(axes[:-1]):
        inner_n, inner = merged[0]
        if all(outer == step * inner_n for outer, step in zip(steps, inner)):
            merged[0] = [n * inner_n, inner]
        else:
            merged.insert(0, [n, steps])
    if len(kept) == 1 and shape[kept[0]] == 1:
        merged = [[1, [0] * nops]]
    out = [len(merged), *(n for n, _ in merged)]
    for k in range(nops):
        out += [steps[k] for _, steps in merged]
    return out + list(tail)
