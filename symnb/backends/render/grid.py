"""The GPU form of each loop shape: work-items over the index space, work-groups over rows.

A map gives each work-item elements of the index space (a grid-stride loop, so any launch size
covers any size); a reduction gives each work-item output elements and loops over the reduced
axes; a row program gives each work-group rows, its work-items sharing every row pass and
combining their partial reductions in local memory between barriers. The arguments are the
launch ABI's (``symnb/backends/plan.py``) with ``a`` in device memory and one pointer
parameter per operand; a row whose check fails sets ``status`` to 1 (the kernel declines).

The schedule (``symnb/backends/schedule/gpu.py``) gives the work-group size and a product's
tiles; the dialect supplies ``entry_signature``, the thread indices (``global_id``, ``global_size``,
``group_id``, ``group_count``, ``local_id``), ``barrier``, ``local_array`` and ``space`` (the
qualifier of device pointers).
"""

from __future__ import annotations

from symnb.backends.render.contract import ContractWriter
from symnb.backends.render.maps import MapWriter
from symnb.backends.render.reductions import ReduceWriter
from symnb.backends.render.rows import RowWriter
from symnb.backends.schedule.base import GpuGrid


def render_grid(r, kernel, schedule: GpuGrid) -> str:
    return render_program(r, [kernel], ["sn_kernel"], [schedule])


def render_program(r, kernels, names, schedules) -> str:
    """One program holding every kernel under its name (helpers written once), each laid out
    as its schedule says: a device compiler builds many kernels in one run for about the cost
    of one. The kernels of one program share its work-group size (``SN_GROUP``)."""
    r = r.fresh()
    groups = {s.group for s in schedules}
    if len(groups) != 1:
        raise ValueError(f"one program's kernels have work-groups of {sorted(groups)} items")
    entries = []
    for kernel, name, schedule in zip(kernels, names, schedules):
        writer = WRITERS[schedule.strategy](r, kernel, schedule)
        entries.append(writer.source().replace("sn_kernel(", f"{name}(", 1))
    preamble = r.preamble(*kernels)
    return "\n".join([preamble, f"#define SN_GROUP {groups.pop()}", r.helper_source(), *entries])


#: the writer of each strategy (``GpuGrid.strategy``)
WRITERS = {"elements": MapWriter, "outputs": ReduceWriter, "group-rows": RowWriter,
           "tiles": ContractWriter}  # fmt: skip
