"""The schedule step (symnb/backends/schedule): the CPU and GPU schedules of representative
kernels (maps, reductions of each kind, row programs, products; fixed and unknown sizes) pinned
in ``snapshots/schedules.json``, apart from any generated text, and the renderers spelling what
a schedule says (a changed schedule changes the source; nothing else decides).

To accept a deliberate change: ``SYMNB_UPDATE_SNAPSHOTS=1 pytest tests/backends/test_schedule.py``
and review the diff of ``snapshots/schedules.json``.
"""

import dataclasses
import json
import os
from pathlib import Path

import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.kernels.ir import Kernel, Load, Map, Op, Operand
from symnb.backends.kernels.lowering import lower, product_kernel
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.backends.render.source import render_program
from symnb.backends.schedule import base, cpu, gpu, schedule
from symnb.ops.nnet import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad

SNAPSHOT = Path(__file__).with_name("snapshots") / "schedules.json"


def _graphs() -> dict:
    """name -> an output whose node lowers to one kernel."""
    m32 = sn.matrix("m32", dtype="float32")  # unknown sizes
    big = sn.tensor("big", (10_000_000,), "float64")
    small = sn.tensor("small", (3, 4), "float64")
    planes = sn.tensor("planes", (8, 16, 24, 24), "float32")
    bias = sn.tensor("bias", (1, 16, 1, 1), "float32")
    wide = sn.tensor("wide", (8, 16, 24, 100), "float32")
    ints = sn.tensor("ints", (1000, 2000), "int64")
    labels = sn.vector("labels", dtype="int64")
    rows = sn.tensor("rows", (512, 1000), "float32")
    dloss = sn.vector("dloss", dtype="float32")
    a, b = sn.tensor("a", (64, 128), "float32"), sn.tensor("b", (128, 32), "float32")
    return {
        "map exp unknown float32": sn.exp(m32) * 2 - m32,
        "map small fixed float64": sn.tanh(small) + 1,
        "map 10M float64": sn.exp(-big * big),
        "map with a bias constant along rows": planes + bias,
        "reduce sum axis 0 unknown": sn.sum(m32, axis=0),
        "reduce sum of everything unknown": sn.sum(m32),
        "reduce mean of short rows (bias gradient)": sn.mean(planes, axis=(0, 2, 3)),
        "reduce sum of long rows": sn.sum(wide, axis=(2, 3)),
        "reduce max axis 1 unknown": sn.max(m32 * m32, axis=1),
        "reduce prod int64 fixed": sn.prod(ints, axis=1),
        "reduce all unknown": sn.all(m32 > 1, axis=0),
        "reduce any fixed": sn.any(ints > 3),
        "rows softmax 512x1000 float32": sn.softmax(rows),
        "rows logsumexp unknown": sn.logsumexp(m32, axis=1),
        "rows cross-entropy unknown": SoftmaxCrossEntropy(1)(m32, labels)[0],
        "rows cross-entropy gradient unknown": SoftmaxCrossEntropyGrad(1)(
            dloss, sn.softmax(m32), labels
        ),
        "product 64x128x32 float32": a @ b,
        "product unknown float32": m32 @ m32,
    }


def _stepped_map() -> Kernel:
    """A 2x2 max-pool as planning/pools.py builds it: a map over four windows views, each
    taking two elements a step along the rows."""
    ops = tuple(Operand("float32", row_step=2) for _ in range(4))
    values = tuple(Load(k, "float32") for k in range(4))
    values += (Op("maximum", (0, 1), "float32"), Op("maximum", (2, 3), "float32"))
    values += (Op("maximum", (4, 5), "float32"),)
    return Kernel(ops, (Operand("float32"),), values, Map(((0, 6),)), 590_000)


def kernels() -> dict:
    found = {name: lower(out.owner, CDialect()).kernel for name, out in _graphs().items()}
    found["map over windows stepping 2 (planner's row_step)"] = _stepped_map()
    x, y = sn.matrix("x", dtype="float64"), sn.matrix("y", dtype="float64")
    found["product over groups (a convolution's windows) float64"] = product_kernel(
        x, y, "float64", (16, 3, 3, 3, 64, 26, 26), (1, 3, 3), 64 * 26 * 26
    )
    return found


def schedules() -> dict:
    return {
        name: {
            "cpu": base.as_dict(schedule(kernel, CDialect())),
            "gpu": base.as_dict(schedule(kernel, OpenCLDialect())),
        }
        for name, kernel in kernels().items()
    }


def snapshot_text(found: dict) -> str:
    """JSON, a line per schedule: a change shows as the lines of the kernels it moved."""
    lines = []
    for name in sorted(found):
        targets = [f'  "{t}": {json.dumps(found[name][t])}' for t in ("cpu", "gpu")]
        lines.append(f" {json.dumps(name)}: {{\n" + ",\n".join(targets) + "\n }")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def test_schedules_match_the_snapshot():
    got = snapshot_text(schedules())
    if os.environ.get("SYMNB_UPDATE_SNAPSHOTS"):
        changed = not SNAPSHOT.exists() or SNAPSHOT.read_text() != got
        SNAPSHOT.write_text(got)
        pytest.skip(f"snapshot {'rewritten' if changed else 'unchanged'}: {SNAPSHOT}")
    assert json.loads(got) == json.loads(SNAPSHOT.read_text()), (
        f"a schedule changed; see the module docstring ({SNAPSHOT})"
    )


def test_the_cpu_schedule_follows_the_sizes_and_the_dialect():
    found = kernels()
    c = CDialect()
    unknown = schedule(found["map exp unknown float32"], c)
    assert unknown.threads and unknown.stream  # an unknown size may reach both
    small = schedule(found["map small fixed float64"], c)
    assert not small.threads and not small.stream
    big = schedule(found["map 10M float64"], c)
    assert big.threads and big.stream and big.stream_min_bytes == cpu.STREAM_MIN_BYTES

    class NoStreams(CDialect):
        streams = prefetches = False

    assert not schedule(found["map 10M float64"], NoStreams()).stream
    assert schedule(found["rows softmax 512x1000 float32"], c).prefetch == (1,)
    assert schedule(found["rows softmax 512x1000 float32"], NoStreams()).prefetch == ()
    stepped = schedule(found["map over windows stepping 2 (planner's row_step)"], c)
    assert stepped.row_steps == (2, 2, 2, 2, 1) and stepped.parallel_min == -(-(5 << 20) // 9)
    assert stepped.threads  # 590k elements: past the lowered threshold
    bias = schedule(found["map with a bias constant along rows"], c)
    assert bias.constant_rows == (1,)
    assert schedule(found["reduce mean of short rows (bias gradient)"], c).short_rows == 64
    assert schedule(found["reduce sum of long rows"], c).short_rows is None
    assert isinstance(schedule(found["product 64x128x32 float32"], c), base.CpuContract)


def test_renderers_spell_the_schedule_they_are_given():
    """The same kernel under two schedules: the source follows each (threads, streaming stores,
    the block loop, a GPU's work-group and tiles), the renderer deciding none of it."""
    found, c = kernels(), CDialect()
    kernel = found["map exp unknown float32"]
    given = schedule(kernel, c)
    assert "omp parallel" in c.render(kernel, given) and "SN_STREAM" in c.render(kernel, given)
    plain = dataclasses.replace(given, threads=False, stream=False)
    assert "omp parallel" not in c.render(kernel, plain)
    assert "sn_flat_stream" not in c.render(kernel, plain)
    short = found["reduce mean of short rows (bias gradient)"]
    blocks = schedule(short, c)
    assert "sn_block_flat" in c.render(short, blocks)
    assert "sn_block_flat" not in c.render(short, dataclasses.replace(blocks, short_rows=None))
    rows = found["rows softmax 512x1000 float32"]
    assert "+= 512)" in c.render(rows, schedule(rows, c))
    halves = dataclasses.replace(schedule(rows, c), blocks=(None, 256, None))
    assert "+= 256)" in c.render(rows, halves) and "+= 512)" not in c.render(rows, halves)
    cl, product = OpenCLDialect(), found["product 64x128x32 float32"]
    tiles = schedule(product, cl)
    assert "__local float ta[1040]" in cl.render(product, tiles)
    smaller = dataclasses.replace(tiles, tile=32)
    assert "__local float ta[528]" in cl.render(product, smaller)
    wider = dataclasses.replace(schedule(rows, cl), group=128)
    assert "#define SN_GROUP 128" in cl.render(rows, wider)


def test_gpu_launches_follow_the_schedule():
    found = kernels()
    sched = {name: gpu.schedule(k, None) for name, k in found.items()}
    mapped = sched["map exp unknown float32"]
    assert gpu.launch(mapped, (300, 7), 2100) == (9, 256)  # every element an item
    # at most GROUPS_PER_UNIT groups per compute unit (16 by default): the items loop
    assert gpu.launch(mapped, (10**8,), 10**8) == (16 * gpu.GROUPS_PER_UNIT, 256)
    h100 = gpu.schedule(found["map exp unknown float32"], None, base.DeviceFacts(compute_units=132))
    assert gpu.launch(h100, (10**8,), 10**8) == (132 * gpu.GROUPS_PER_UNIT, 256)
    narrow = gpu.schedule(found["map exp unknown float32"], None, base.DeviceFacts(max_group=128))
    assert gpu.launch(narrow, (300, 7), 2100) == (17, 128)
    rows = sched["rows softmax 512x1000 float32"]
    assert gpu.launch(rows, (512, 1000), 512) == (512, 64)  # a group per row
    assert gpu.launch(rows, (5000, 10), 5000) == (1024, 64)
    product = sched["product 64x128x32 float32"]
    assert gpu.launch(product, (2, 100, 7, 130), 26000) == (2 * 2 * 3, 256)


def test_device_facts_shrink_groups_and_tiles():
    found = kernels()
    product = found["product 64x128x32 float32"]
    small = base.DeviceFacts(max_group=32, local_bytes=4096)
    tiles = gpu.schedule(product, None, small)
    assert tiles.group == 32 and tiles.tile_items <= 32
    assert tiles.tile_k * (2 * tiles.tile + 1) * 4 <= 4096
    assert gpu.schedule(product, None).tile == gpu.TILE


def test_each_kernel_of_a_program_has_its_work_group_size():
    found = kernels()
    cl = OpenCLDialect()
    k1, k2 = found["map exp unknown float32"], found["rows softmax 512x1000 float32"]
    s1, s2 = gpu.schedule(k1, None), dataclasses.replace(gpu.schedule(k2, None), group=32)
    source = render_program(cl, [k1, k2], ["sn_a", "sn_b"], [s1, s2])
    a, b = source.index("sn_a("), source.index("sn_b(")
    assert source.rindex("#define SN_GROUP", 0, a) == source.rindex("#define SN_GROUP 256", 0, a)
    assert source.rindex("#define SN_GROUP", 0, b) == source.index("#define SN_GROUP 32")
    assert a < source.index("#define SN_GROUP 32") < b


def test_launches_collapse_axes_that_step_alike():
    # [nd, shape, strides of each operand (inputs, then output), output counts]
    contiguous = [3, 2, 3, 4, 48, 16, 4, 0, 0, 0, 96, 32, 8, 24]  # x (f32) * scalar -> f64
    assert gpu.collapse(contiguous, 3) == [1, 24, 4, 0, 8, 24]
    row_bias = [2, 3, 4, 16, 4, 0, 4, 16, 4, 12]  # a row broadcast stays two axes
    assert gpu.collapse(row_bias, 3) == row_bias
    transposed = [2, 3, 4, 4, 12, 16, 4, 12]
    assert gpu.collapse(transposed, 2) == transposed
    # a reduction: reduced axes (output stride 0) merge with reduced ones only
    kept_reduced = [3, 5, 6, 7, 168, 28, 4, 0, 0, 0, 1]
    assert gpu.collapse(kept_reduced, 2) == [1, 210, 4, 0, 1]
    mixed = [3, 5, 6, 7, 168, 28, 4, 0, 4, 0, 6]
    assert gpu.collapse(mixed, 2) == mixed
    ones = [3, 1, 5, 1, 99, 8, 77, 33, 4, 55, 5]  # axes of length 1 dropped, whatever steps
    assert gpu.collapse(ones, 2) == [1, 5, 8, 4, 5]
    assert gpu.collapse([2, 1, 1, 4, 4, 8, 8, 1], 2) == [1, 1, 0, 0, 1]
