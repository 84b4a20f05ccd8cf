"""The CPU schedule: threads, streaming stores, row variants, blocks and prefetches.

Each function takes a kernel description and the dialect (its capabilities: ``streams``,
``prefetches``) and returns the body shape's schedule (``base.py``). Every number here is
explained in terms of the machine in docs/schedule.md; what was measured to set it is in
docs/benchmarks.md, "Measurements behind the code".
"""

from __future__ import annotations

import numpy as np

from symnb.backends.kernels.ir import Contract, Map, Reduce, Rows
from symnb.backends.schedule.base import CpuContract, CpuMap, CpuReduce, CpuRows

#: elements from which a map or a reduction splits between threads: a parallel region costs a
#: few microseconds on idle cores but can cost milliseconds when other processes hold them, so
#: only a kernel of about a millisecond of work (a million cheap elements) takes threads
PARALLEL_MIN = 1 << 20
#: a reduction whose rows share outputs (a bias gradient, a sum of everything) cuts them into
#: pieces, each reduced into a copy of the output, the copies combined in piece order: the cut
#: depends on the sizes alone, never on the team (a loaded machine gives a call fewer threads,
#: and a cut by threads would change the rounding from one call to the next). The count is the
#: largest of PIECES that leaves each piece at least PIECE_MIN elements: teams of 2 and 4
#: threads take equal shares of any of them, of 3, 6, 8, 12 and 16 of the larger. A piece is
#: about 100 us of a plain sum on one core, so a million elements make 4 pieces: on one thread
#: every copy costs a pass over the output, so fewer, larger pieces are cheaper there ...
PIECES = (48, 24, 12, 8, 4, 2)
PIECE_MIN = 1 << 18
#: ... and of at least PIECE_OUTPUTS elements per output element: a piece's copy is written
#: once and added once, so on one thread the copies cost at most about 2/PIECE_OUTPUTS of
#: the reduction's own reads
PIECE_OUTPUTS = 32
#: elements from which a row program splits its rows between threads (the same cost weighed
#: against a row program's work per element, which is larger: an exp per element)
ROW_PARALLEL_MIN = 1 << 20
#: output bytes from which a flat map writes with streaming stores: an output this much larger
#: than the last-level cache is evicted before anything reads it, and normal stores would
#: first read each line in (write-allocate), one more stream of memory traffic
STREAM_MIN_BYTES = 1 << 24
#: the staging block of a streamed map: results are computed into it (vectorised, in L1), then
#: copied out one 64-byte cache line per streaming store
STREAM_BLOCK_BYTES = 512
#: reduced rows shorter than this (the axis above them reduced too) are summed in blocks of
#: rows: each row of a vectorised reduction pays a horizontal sum of its vector registers,
#: which a short row cannot amortise
SHORT_ROW = 64
#: a blocked row sum (a pass that accumulates in a narrower type than its total) adds this many
#: elements in its accumulating type, vectorised, before adding them to the total: as accurate
#: as NumPy's pairwise sum, and the vector lanes are not widened element by element
ROW_BLOCK = 512
#: a float64 sum (no wider type to total in) adds blocks of this many elements, vectorised,
#: and combines the block sums with Neumaier's compensation: about NumPy's pairwise accuracy
#: (an error of a few ulps per block, where one accumulator's grows with the row's length)
SUM_BLOCK = ROW_BLOCK
#: elements per chunk of a row pass that prefetches the next row: a few cache lines of each
#: input ahead, so the prefetches overlap the chunk's arithmetic
PREFETCH_CHUNK = 64
#: a float max/min reduction in explicit lanes (where the dialect has that form, for compilers
#: that vectorise no other: LLVM vectorises a float max only when it may assume no NaNs) keeps
#: this many bytes of lanes: four AVX2 vectors (two AVX-512), independent compare chains that
#: hide the compare's latency (clang 14, a 4096-element float row: 252 ns in 32 lanes, 340 ns
#: in 16, 5,300 ns in the declared reduction it does not vectorise)
EXTREMA_LANE_BYTES = 128
#: multiply-adds from which a packed product splits between threads (``contract.h``'s own
#: SN_CONTRACT_PARALLEL_MIN decides per call; this is the kernel's define)
CONTRACT_PARALLEL_MIN = 1 << 22
#: accumulating types the packed product is written for
PACKED_FLOATS = ("float32", "float64")
#: a convolution's product is a packed product kernel reading the windows in place only with
#: at least this many rows on the left: fewer leave the micro-kernel's register tile (SN_MR
#: rows, 4 to 12 by vector width: render/contract.h) mostly empty, a matrix-vector product
#: reading each window element for one multiply-add (see ``packed_product``)
PACKED_ROWS_MIN = 4
#: ... and an inner length (the sum) of at least this: a shorter sum does few multiply-adds
#: per output element, so both forms are bound by memory, and the im2col copy (K x N, K short)
#: is small next to the output the product writes
PACKED_INNER_MIN = 64
#: ... and at least this many output elements (M x N: 40 of AVX2's 6 x 16 register tiles, 20
#: of AVX-512's): a smaller output with its long sum (the filter gradient of a layer with few
#: channels, a sum over every output pixel) leaves the packed kernel a few tiles, each packing
#: and storing its tile per block of the sum, and threads that can only split the sum and add
#: their partial tiles back; BLAS's kernels for that shape outrun the copy they need
PACKED_OUTPUT_MIN = 4096


def schedule(kernel, dialect):
    """The CPU schedule of ``kernel`` for a loop dialect."""
    body = kernel.body
    if isinstance(body, Map):
        return map_schedule(kernel, dialect)
    if isinstance(body, Contract) and packable(kernel):
        return CpuContract(CONTRACT_PARALLEL_MIN)
    if isinstance(body, (Reduce, Contract)):
        return reduce_schedule(kernel, dialect)
    if isinstance(body, Rows):
        return rows_schedule(kernel, dialect)
    raise TypeError(f"no CPU schedule for a {type(body).__name__} body")


def may_reach(kernel, elements: int) -> bool:
    """Whether the kernel's index space may hold ``elements`` (always, for unknown sizes)."""
    return kernel.size is None or kernel.size >= elements


def array_operands(kernel) -> list:
    return [op for op in kernel.inputs + kernel.outputs if not (op.scalar or op.per_row)]


def map_threshold(kernel) -> int:
    """Elements from which a map's rows are split between threads: PARALLEL_MIN, fewer where
    operands take steps along the rows (``Operand.row_step``): an operand stepping s elements
    touches s times the memory per element (each cache line serves 1/s of its elements), so
    the map does s times the memory work per element. Weighing every map by the bytes it moves
    instead split small maps of many arrays too, which ran slower."""
    arrays = array_operands(kernel)
    touched = sum(op.row_step or 1 for op in arrays)  # a map has its output at least
    return -(-PARALLEL_MIN * len(arrays) // touched)


def map_schedule(kernel, dialect) -> CpuMap:
    """Threads by ``map_threshold``; streaming stores where the dialect has them and the
    output may pass STREAM_MIN_BYTES; a constant row for inputs whose type makes them likely
    constant along the rows (``Operand.row_constant``); a stepped row where the planner expects
    steps other than 1 (``Operand.row_step``: compiled-in steps let the C compiler vectorise
    with permutes, where run-time strides left a scalar loop)."""
    threshold = map_threshold(kernel)
    ((out, _),) = kernel.body.stores
    itemsize = np.dtype(kernel.outputs[out].dtype).itemsize
    stream = dialect.streams and may_reach(kernel, STREAM_MIN_BYTES // itemsize)
    constant = tuple(k for k, op in enumerate(kernel.inputs) if op.row_constant)
    steps = tuple(
        1 if op.row_step is None else op.row_step for op in kernel.inputs + kernel.outputs
    )
    stepped = steps if any(s != 1 for s in steps) else None
    threads = may_reach(kernel, threshold)
    return CpuMap(
        threads, threshold, stream, STREAM_MIN_BYTES, STREAM_BLOCK_BYTES, constant, stepped
    )


def extrema_lanes(kind: str | None, dtype: str | None, dialect) -> int:
    """EXTREMA_LANE_BYTES for a float max/min where the dialect spells lanes, else 0."""
    floats = bool(dtype) and np.dtype(dtype).kind == "f"
    lanes = getattr(dialect, "extrema_lanes", False) and kind in ("max", "min") and floats
    return EXTREMA_LANE_BYTES if lanes else 0


def reduce_schedule(kernel, dialect=None) -> CpuReduce:
    """Threads from PARALLEL_MIN, pieces of shared rows by PIECES, PIECE_MIN and
    PIECE_OUTPUTS; blocks of short rows for a sum over the last two axes
    whose rows may be shorter than SHORT_ROW (``Reduce.tail``, ``Reduce.row``); a float
    max/min in lanes of EXTREMA_LANE_BYTES where the dialect has that form."""
    body = kernel.body
    tail, row = getattr(body, "tail", 0), getattr(body, "row", None)
    short = body.kind == "sum" and tail >= 2 and (row is None or row < SHORT_ROW)
    return CpuReduce(
        may_reach(kernel, PARALLEL_MIN),
        PARALLEL_MIN,
        SHORT_ROW if short else None,
        PIECES,
        PIECE_MIN,
        PIECE_OUTPUTS,
        extrema_lanes(body.kind, body.acc_dtype, dialect),
        SUM_BLOCK if compensated(body, kernel.outputs[0].dtype) else None,
    )


def compensated(body, out_dtype) -> bool:
    """Whether a reduction kernel's float64 sum has no wider type to total in: its blocks are
    combined with compensation (``SUM_BLOCK``). A float32 sum totals in float64 already."""
    wide = np.dtype(body.acc_dtype) == np.float64 and np.dtype(out_dtype) == np.float64
    return body.kind == "sum" and wide


def rows_schedule(kernel, dialect) -> CpuRows:
    """Rows split between threads from ROW_PARALLEL_MIN elements (decided at run time: every
    row program carries the threaded loop); blocked sums where a pass totals in a wider type
    than it accumulates; the second pass prefetches the next row where the dialect can: it
    reads what the first pass left in cache and computes (an exp per element), so the next
    row's first pass finds its row in cache."""
    passes = kernel.body.passes
    # a float64 pass keeps one accumulator: its sums are of exponentials (positive, no
    # cancellation), a few ulps over 10^6 elements, and blocks cost W6 5-8% (measured)
    blocks = tuple(ROW_BLOCK if p.kind == "sum" and p.total_dtype else None for p in passes)
    prefetch = (1,) if dialect.prefetches and len(passes) > 1 and passes[1].kind else ()
    lanes = max(extrema_lanes(p.kind, p.acc_dtype, dialect) for p in passes)
    chunk = PREFETCH_CHUNK if prefetch else 0
    return CpuRows(True, ROW_PARALLEL_MIN, blocks, prefetch, chunk, lanes)


def packable(kernel) -> bool:
    """Whether a ``Contract`` kernel has the packed product's form: one output of a float
    dtype, accumulated in it. Others are written as the sum they are."""
    body = kernel.body
    dtypes = {body.acc_dtype, kernel.outputs[0].dtype}
    return (
        len(kernel.outputs) == 1
        and len(dtypes) == 1
        and dtypes <= set(PACKED_FLOATS)
        and all(np.dtype(op.dtype).kind in "biuf" for op in kernel.inputs)
    )


def packed_product(m: int | None, k: int | None, n: int | None) -> bool:
    """Whether a convolution's product (m x k) @ (k x n) is a packed product kernel reading
    the windows in place (``Contract``: no copy), rather than im2col's copy (or the input
    gradient's grid) and a BLAS gemm: at least PACKED_ROWS_MIN rows, an inner length of at
    least PACKED_INNER_MIN and an output of at least PACKED_OUTPUT_MIN elements. There the
    packed kernel's register tiles are full and many, and it saves the copy; outside, BLAS
    multiplies faster than the copy costs. docs/benchmarks.md, "The packed product against
    BLAS", has the measurements. A size known only when the function runs (None: a named or
    unknown batch, which a course's layers make large) counts as large enough."""
    rows = m is None or m >= PACKED_ROWS_MIN
    inner = k is None or k >= PACKED_INNER_MIN
    outputs = m is None or n is None or m * n >= PACKED_OUTPUT_MIN
    return rows and inner and outputs
