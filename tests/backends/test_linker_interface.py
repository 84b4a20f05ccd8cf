"""Every backend is a ``Linker`` (symnb/backends/linker.py), and the layers above ask it only
what that interface declares: no ``getattr``/``hasattr`` probe of an interface name is left
in ``compile/`` or ``viz/``."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.backends import get_linker
from symnb.backends.linker import Linker
from symnb.compile.checkmode import CheckLinker
from symnb.compile.debugmode import LINKERS

ROOT = Path(sn.__file__).parent
#: what the interface declares (attributes and methods), which no caller may probe for
INTERFACE = {name for name in dir(Linker) if not name.startswith("_")}
PROBES = ("getattr", "hasattr")


def probes_of(path: Path) -> list[str]:
    """``file:line getattr(..., "name")`` for each probe of an interface name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in PROBES or len(node.args) < 2:
            continue
        name = node.args[1]
        if isinstance(name, ast.Constant) and name.value in INTERFACE:
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_the_interface_names_what_callers_use():
    assert {
        "plan",
        "kernels",
        "runner",
        "run",
        "run_profiled",
        "resident",
        "device",
        "placement",
        "bodies",
        "steps_timed",
        "where",
    } <= INTERFACE


def test_no_probe_of_a_linker_above_the_backends():
    found = [
        p
        for part in ("compile", "viz")
        for f in sorted((ROOT / part).rglob("*.py"))
        for p in probes_of(f)
    ]
    assert found == []


def test_the_probe_finder_finds_a_probe(tmp_path):
    sample = ROOT / "compile" / "_probe_sample.py"
    try:
        sample.write_text('def f(linker):\n    return getattr(linker, "plan", None)\n')
        assert probes_of(sample) == [
            'symnb/compile/_probe_sample.py:2 getattr(linker, "plan", None)'.replace('"', "'")
        ]
    finally:
        sample.unlink()


@pytest.mark.parametrize("backend", ["py", "c"])
def test_host_linkers_are_linkers(backend):
    cls = get_linker(backend)
    assert issubclass(cls, Linker)
    assert cls.steps_timed and not cls.resident


def test_mode_linkers_are_linkers():
    assert issubclass(CheckLinker, Linker)
    assert all(issubclass(cls, Linker) for cls in LINKERS.values())


def test_device_linkers_are_linkers():
    from symnb.backends.cuda.linker import CUDALinker
    from symnb.backends.opencl.linker import OpenCLLinker

    for cls in (CUDALinker, OpenCLLinker):
        assert issubclass(cls, Linker) and cls.resident and cls.steps_timed


def test_defaults_say_what_a_backend_lacks():
    class Bare(Linker):
        name = "bare"

    bare = Bare()
    assert (bare.plan, bare.kernels, bare.runner(), bare.placement(), bare.rewrites) == (
        None,
        None,
        None,
        None,
        None,
    )
    assert list(bare.bodies) == [] and bare.where == "bare" and not bare.steps_timed
    with pytest.raises(NotImplementedError):
        bare.run([])
    with pytest.raises(NotImplementedError, match="'bare' does not time its steps"):
        bare.run_profiled([])


@pytest.mark.parametrize("backend", ["py", "c"])
def test_a_function_reads_its_linker_through_the_interface(backend):
    x = sn.tensor("x", shape=(3,))
    f = sn.function([x], sn.exp(x) * 2, backend=backend)
    assert isinstance(f.linker, Linker)
    assert f.kernels is f.linker.kernels
    assert (f.runner is not None) == (backend == "c")
    prof = f.profile(np.arange(3.0))
    assert prof.rows and all(r.calls for r in prof.rows)
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) * 2)


def test_displays_use_only_a_functions_public_interface():
    """viz/ and magics/ read a compiled function through its public names (``leaf_values``,
    ``results``, ``kernels``, ``linker``), never its private ones."""
    found = []
    for part in ("viz", "magics"):
        for path in sorted((ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id in ("function", "f", "fn")
                    and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                ):
                    found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_leaf_values_are_what_a_call_hands_its_linker():
    x = sn.tensor("x", shape=(2,), dtype="float32")
    w = sn.shared(np.array([1.0, 2.0], "float32"), name="w")
    f = sn.function([x], x * w, updates={w: w + 1}, backend="c")
    values = f.leaf_values([1, 2])
    assert [v.dtype for v in values] == [np.float32, np.float32]
    np.testing.assert_array_equal(values[1], [1.0, 2.0])
    assert f.results == [f.graph.outputs[0]]
    with pytest.raises(sn.InputError, match="missing"):
        f.leaf_values()


# -- one plan table, per target capability -------------------------------------------------------
def test_plan_table_takes_the_first_entry_a_target_can_use():
    from symnb.backends.planner import PlanTable

    class Base:
        pass

    class Child(Base):
        pass

    table = PlanTable()

    @table.register(Base)
    def any_target(linker, node):
        pass

    @table.register(Child, needs={"blas"})
    def with_blas(linker, node):
        pass

    @table.register(Child, needs={"blas", "loops"})
    def with_both(linker, node):
        pass

    assert table.find(Child(), frozenset({"blas", "loops"})) is with_both
    assert table.find(Child(), frozenset({"blas"})) is with_blas
    assert table.find(Child(), frozenset()) is any_target  # falls back to the base class's
    assert table.find(object(), frozenset({"blas"})) is None
    assert ("Child", "blas, loops", with_both.__qualname__) in table.rows()


def test_each_target_plans_ops_by_its_capabilities():
    from symnb.backends.c.linker import CLinker
    from symnb.backends.device.linker import DeviceLinker
    from symnb.backends.planner import PLANS
    from symnb.control.scan import Scan
    from symnb.ops.blas import Gemm
    from symnb.ops.conv import MaxPool2dGrad
    from symnb.ops.index import Subtensor
    from symnb.ops.join import Concatenate
    from symnb.ops.layout import Pad
    from symnb.ops.linalg import Matmul
    from symnb.ops.shape import Reshape

    def plan_name(op_class, linker_class):
        op = op_class.__new__(op_class)
        return PLANS.find(op, linker_class.capabilities).__name__

    assert plan_name(Matmul, CLinker) == "_matmul"  # one ?gemm through the host BLAS
    assert plan_name(Matmul, DeviceLinker) == "_kernel"  # the description's tiled product
    assert plan_name(Gemm, CLinker) == "_gemm"
    assert PLANS.find(Gemm.__new__(Gemm), DeviceLinker.capabilities).__module__.endswith(
        "device.linker"
    )
    assert plan_name(Scan, CLinker) == "_scan"  # runner.c runs the loop
    assert plan_name(Scan, DeviceLinker) == "_scan"  # the device executor runs the loop
    assert plan_name(MaxPool2dGrad, CLinker) == "_max_pool_grad"
    # the max-pool gradient and sn.pad: the device's hand-written kernels (device/windows.py)
    for op_class, name in ((MaxPool2dGrad, "_max_pool_grad"), (Pad, "_pad")):
        found = PLANS.find(op_class.__new__(op_class), DeviceLinker.capabilities)
        assert (found.__name__, found.__module__) == (name, "symnb.backends.device.linker")
    assert plan_name(Pad, CLinker) == "_kernel"
    # slices, concatenations and sized reshapes: device Layout steps; runner.c's own
    assert plan_name(Subtensor, DeviceLinker) == "_subtensor"
    assert plan_name(Concatenate, DeviceLinker) == "_concatenate"
    assert plan_name(Reshape, DeviceLinker) == "_reshape_sized"
    assert plan_name(Reshape, CLinker) == "_reshape"


def test_device_linkers_are_siblings_of_the_c_linker():
    from symnb.backends.c.linker import CLinker
    from symnb.backends.device.linker import DeviceLinker
    from symnb.backends.planning.kernel_linker import KernelLinker

    assert not issubclass(DeviceLinker, CLinker)
    assert issubclass(DeviceLinker, KernelLinker) and issubclass(CLinker, KernelLinker)


def test_shared_planning_imports_no_target():
    """backends/planning/ and the device backends never import the C target's modules."""
    parts = [ROOT / "backends" / "planning", ROOT / "backends" / "device"]
    found = []
    for folder in parts:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
                if module == "symnb.backends.c" or module.startswith("symnb.backends.c."):
                    found.append(f"{path.name}:{node.lineno} {node.module}")
    assert found == []
