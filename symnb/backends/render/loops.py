"""The CPU form of each loop shape: loop nests over the index space, threads, SIMD.

Maps get a flat loop for contiguous calls (threaded, with streaming stores, where the
schedule says) and a strided row loop for the rest, plus the row variants the schedule asks
for; row programs run their passes over each row with rows split between threads; reductions
are written in reductions.py, and what all three share in loop_base.py. The schedule
(``symnb/backends/schedule/cpu.py``) decides; the dialect supplies the spelling of threads
(``parallel_for``, ``team``), SIMD (``simd``), ``prefetch`` and streaming stores.
"""

from __future__ import annotations

from symnb.backends.render.contract import ContractWriter
from symnb.backends.render.maps import MapWriter
from symnb.backends.render.reductions import ReduceWriter
from symnb.backends.render.rows import RowWriter
from symnb.backends.render.runtime import runtime
from symnb.backends.schedule.base import CpuContract, CpuMap, CpuReduce, CpuRows


def render_loops(r, kernel, schedule) -> str:
    """The entry point and its loops for a CPU dialect ``r``, as ``schedule`` lays them out
    (a product the schedule does not pack is written as the sum it is)."""
    r = r.fresh()
    writers = {CpuMap: MapWriter, CpuReduce: ReduceWriter, CpuContract: ContractWriter,
               CpuRows: RowWriter}  # fmt: skip
    writer = writers[type(schedule)](r, kernel, schedule)
    entry = writer.source()
    return "\n".join(
        [
            r.preamble(kernel, writer.streams),
            r.helper_source(),
            runtime(schedule.parallel_min, r.shared_helpers()),
            entry,
        ]
    )
