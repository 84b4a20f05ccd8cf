"""A kernel's whole source: ``render(kernel, schedule, dialect)``, and a GPU program of many.

One writer per body shape (maps.py, reductions.py, rows.py, contract.py) writes the kernel for
every C-family target, taking the CPU's loops or a GPU's grid as the schedule says
(``symnb/backends/schedule``); this module picks the writer and frames what it writes: for a
CPU the dialect's preamble, the helpers and the index runtime (``runtime.py``), for a GPU
one program whose kernels share their helpers and work-group size.
"""

from __future__ import annotations

from symnb.backends.render.contract import ContractWriter
from symnb.backends.render.maps import MapWriter
from symnb.backends.render.reductions import ReduceWriter
from symnb.backends.render.rows import RowWriter
from symnb.backends.render.runtime import runtime
from symnb.backends.schedule.base import CpuContract, CpuMap, CpuReduce, CpuRows, GpuGrid

#: the writer of each schedule: a CPU schedule's class, a GPU schedule's strategy (a product
#: the CPU schedule does not pack has a ``CpuReduce``: it is written as the sum it is)
WRITERS = {
    CpuMap: MapWriter,
    CpuReduce: ReduceWriter,
    CpuRows: RowWriter,
    CpuContract: ContractWriter,
    "elements": MapWriter,
    "outputs": ReduceWriter,
    "group-rows": RowWriter,
    "tiles": ContractWriter,
}


def writer(r, kernel, schedule):
    key = schedule.strategy if isinstance(schedule, GpuGrid) else type(schedule)
    return WRITERS[key](r, kernel, schedule)


def render(kernel, schedule, dialect) -> str:
    """The source of ``kernel`` in ``dialect``, laid out as ``schedule`` says."""
    if isinstance(schedule, GpuGrid):
        return render_program(dialect, [kernel], ["sn_kernel"], [schedule])
    r = dialect.fresh()
    shape = writer(r, kernel, schedule)
    entry = shape.source()
    return "\n".join(
        [
            r.preamble(kernel, shape.streams),
            r.helper_source(),
            runtime(schedule.parallel_min, r.shared_helpers()),
            entry,
        ]
    )


def render_program(dialect, kernels, names, schedules) -> str:
    """One GPU program holding every kernel under its name (helpers written once), each laid
    out as its schedule says: a device compiler builds many kernels in one run for about the
    cost of one. Each kernel's work-group size is ``SN_GROUP`` in its own source (defined
    again before each: a map's groups are wider than a row program's)."""
    r = dialect.fresh()
    entries = []
    for kernel, name, schedule in zip(kernels, names, schedules):
        source = writer(r, kernel, schedule).source()
        group = f"#undef SN_GROUP\n#define SN_GROUP {schedule.group}"
        entries.append(group + source.replace("sn_kernel(", f"{name}(", 1))
    preamble = r.preamble(*kernels)
    return "\n".join([preamble, r.helper_source(), *entries])
