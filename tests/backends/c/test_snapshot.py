"""The generated C of one small kernel, pinned: a refactor must change it on purpose.

To accept a deliberate change: ``SYMNB_UPDATE_SNAPSHOTS=1 pytest tests/backends/c`` and review
the diff of ``snapshots/``.
"""

import os
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.dialect import CDialect
from symnb.backends.kernels.lowering import lower
from symnb.ops.composite import Composite
from tests.backends.c.test_contract_kernel import contract_kernel

SNAPSHOTS = Path(__file__).with_name("snapshots")


class SharedHelpersC(CDialect):
    """The C dialect with the runner's helpers, as kernels are rendered wherever the runner
    loads, pinned so that the snapshots do not depend on whether it was built."""

    def shared_helpers(self) -> bool:
        return True


def source_of(out) -> str:
    return SharedHelpersC().render(lower(out.owner, SharedHelpersC()).kernel)


def check_snapshot(name: str, source: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("SYMNB_UPDATE_SNAPSHOTS"):
        changed = not path.exists() or path.read_text() != source
        path.write_text(source)
        pytest.skip(f"snapshot {'rewritten' if changed else 'unchanged'}: {path} (review the diff)")
    assert source == path.read_text(), f"generated C changed; see the module docstring ({path})"


#: exp(x) * s + 1 as the fuse rewrite writes it; 1 is a weak Python scalar
PROGRAM = (
    (sn.exp, (("in", 0),)),
    (sn.mul, (("tmp", 0), ("in", 1))),
    (sn.add, (("tmp", 1), ("const", 1, "int64"))),
)


def composite_output():
    x = sn.vector("x", dtype="float32")
    s = sn.scalar("s", dtype="float32")
    return x, s, Composite(PROGRAM, "float32", 2)(x, s)


def test_snapshot_of_a_composite_kernel():
    check_snapshot("composite_exp_mul_add_float32.c", source_of(composite_output()[2]))


def test_composite_built_directly_runs_as_one_kernel():
    x, s, out = composite_output()
    f = sn.function([x, s], out, backend="c", optimize="none")
    a = np.linspace(-2, 2, 7, dtype=np.float32)
    got = f(a, np.float32(3))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.exp(a) * np.float32(3) + 1, rtol=1e-6)
    assert [k.kind for k in f.kernels] == ["kernel"]


def test_snapshot_of_a_row_kernel():
    """logsumexp over rows: the max pass, then the exp pass in chunks that prefetch the next
    row, with the next row's offset read once per row (read in the chunk loop, W6 was 10%
    slower)."""
    x = sn.tensor("x", shape=(None, None), dtype="float64")
    source = source_of(sn.logsumexp(x, axis=1))
    assert "const int64_t ahead0 = last > 0 ? st[0][last - 1] : 0;" in source
    check_snapshot("logsumexp_rows_float64.c", source)


def test_only_a_loop_kernels_entry_is_compiled_as_a_driver():
    """``SN_DRIVER`` (-O1) marks the entry, which only walks rows; the row functions and a
    product kernel, which hold the hot loops, keep the full flags."""
    loops = source_of(composite_output()[2])
    lines = loops.splitlines()
    marked = [lines[i + 1] for i, line in enumerate(lines) if line == "SN_DRIVER"]
    assert marked == ["int sn_kernel(int64_t *a, char **ptr) {"]
    product = SharedHelpersC().render(contract_kernel("float32", (1, 1, 1)))
    assert "SN_DRIVER\nint sn_kernel" not in product
    assert "int sn_kernel(int64_t *a, char **ptr)" in product
