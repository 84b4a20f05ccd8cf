"""``make mutate``: mutmut over the modules where a silent bug costs most, one group at a time.

``python -m tests.mutate [GROUP ...]`` (all groups by default). Each group is one module (or a
few) with the tests that cover it, run by mutmut in its own copy of the tree under
``build/mutate/GROUP`` with ``[tool.mutmut]`` narrowed to it. One run over every module with
every test would be simpler but far slower: a mutant runs every test that calls the function
it changed, and a surviving mutant of ``dims.unify`` (which every op calls) would run most of
the suite. Scores and triage: docs/mutation.md.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.mutation_scores import table

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "mutate"

#: the gradient rules of linalg.py and svd.py: their ops' grad methods and the helpers only
#: they use (_square.py's matrix helpers)
LINALG_GRADS = [
    "symnb.ops.linalg.*grad*",
    "symnb.ops.linalg.*TraceAdjoint*",
    "symnb.ops.linalg.*Cofactor*",
    "symnb.ops.linalg.x__t__*",
    "symnb.ops.linalg.x__tril*",
    "symnb.ops.linalg.x__free_axes*",
    "symnb.ops.svd.*grad*",
    "symnb.ops.svd.x__plus*",
    "symnb.ops.svd.x__known_equal*",
    "symnb.ops._square.x_swap_last*",
    "symnb.ops._square.x_eye_like*",
    "symnb.ops._square.x_diag_embed*",
    "symnb.ops._square.x_diag_part*",
]

#: the fused cross-entropy's tests: the rules' own and the op's
XENT_TESTS = ["tests/opt", "tests/ops/test_xent.py", "tests/backends/test_xent.py"]
#: the Python executor of plans and their planning: the runner against it, layouts, plans
EXECUTOR_TESTS = [
    "tests/backends/test_runner.py",
    "tests/backends/test_keyed_caches.py",
    "tests/backends/test_plan.py",
    "tests/backends/test_declined_steps.py",
    "tests/compile/test_output_ownership.py",
]

#: group: (modules to mutate, the tests that cover them, mutant-name patterns or all)
GROUPS = {
    "dims": (["symnb/core/dims.py", "symnb/core/dim_sizes.py"], ["tests/core"], []),
    "inputs": (["symnb/compile/inputs.py"], ["tests/compile"], []),
    "rules": (
        ["symnb/opt/rules/*"],
        [
            "tests/opt",
            "tests/ops/test_xent.py",
            "tests/backends/test_xent.py",
            "tests/backends/test_plan.py",
        ],
        [],
    ),
    "linalg-grads": (
        ["symnb/ops/linalg.py", "symnb/ops/svd.py", "symnb/ops/_square.py"],
        [
            "tests/ops/test_linalg.py",
            "tests/ops/test_linalg_general.py",
            "tests/grad/test_op_grads.py::test_matmul_gradients",
            "tests/grad/test_higher_order.py",
            "tests/grad/test_singular_points.py",
            "tests/grad/test_svd_grads.py",
        ],
        LINALG_GRADS,
    ),
    "kernel-ir": (["symnb/backends/kernels/ir.py"], ["tests/backends/test_kernel_ir.py"], []),
    # the modules where issue 35's surviving deliberate bugs lived, each with its tests
    "xent": (["symnb/opt/rules/xent.py"], XENT_TESTS, []),
    "merge": (["symnb/opt/rules/merge.py"], ["tests/opt"], []),
    "rop": (["symnb/grad/forward.py"], ["tests/grad"], []),
    "scan-grad": (
        ["symnb/control/scan_grad.py"],
        ["tests/ops/test_scan.py", "tests/ops/test_scan_truncation.py"],
        [],
    ),
    "random": (
        ["symnb/ops/random.py", "symnb/ops/random_draws.py"],
        ["tests/ops/test_random.py", "tests/ops/test_random_seeding.py"],
        [],
    ),
    "dtype-cache": (
        ["symnb/ops/_dtypes.py"],
        ["tests/backends/test_keyed_caches.py", "tests/ops/test_first_set.py"],
        [],
    ),
    "execute": (["symnb/backends/execute.py"], EXECUTOR_TESTS, []),
    "planner": (["symnb/backends/planner.py"], EXECUTOR_TESTS, []),
    "lowering": (
        ["symnb/backends/kernels/lowering.py"],
        [
            "tests/backends/test_accumulation.py",
            "tests/backends/test_xent.py",
            "tests/backends/test_logsumexp.py",
            "tests/backends/test_kernel_ir.py",
        ],
        [],
    ),
}

#: the op suite without its OpenCL rows: a mutant's process, forked by mutmut, waited on a futex
#: with no CPU use (it had pyopencl's cache open; PoCL's threads do not survive a fork), and
#: mutmut's timeouts count CPU time, so that group never ended
WITHOUT_DEVICES = os.environ | {"SYMNB_SUITE_DEVICES": ""}

COPIED = [
    "symnb",
    "tests",
    "pyproject.toml",
    "setup.py",
    "README.md",
    "benchmarks",
    "docs",
    "notebooks",
    "examples",
]


def narrowed_pyproject(only: list[str], tests: list[str]) -> str:
    """pyproject.toml with [tool.mutmut]'s modules and tests replaced by this group's (a list
    of strings is spelled alike in JSON and TOML; tomllib is not in Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    for key, value in (("only_mutate", only), ("pytest_add_cli_args_test_selection", tests)):
        pattern = rf"^{key} = \[.*?\]$"
        text, found = re.subn(pattern, f"{key} = {json.dumps(value)}", text, flags=re.S | re.M)
        assert found == 1, f"no {key} in pyproject.toml's [tool.mutmut]"
    return text


def prepare(group: str) -> Path:
    """A fresh copy of the tree for one group (mutmut writes mutants/ where it runs)."""
    where = OUT / group
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, where / name, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, where / name)
    only, tests, _ = GROUPS[group]
    (where / "pyproject.toml").write_text(narrowed_pyproject(only, tests))
    return where


def cpu_seconds() -> float:
    """User and system time of the finished child processes (mutmut and its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(group: str, children: int) -> tuple[float, float]:
    """mutmut over one group: its wall time and CPU time in seconds. On a shared machine the
    wall time depends on the load; the CPU time over 2 cores is what an idle one would take."""
    where = prepare(group)
    mutmut = Path(sys.executable).with_name("mutmut")
    start, cpu = time.monotonic(), cpu_seconds()
    command = [str(mutmut), "run", "--max-children", str(children), *GROUPS[group][2]]
    with open(where / "mutmut.log", "w") as log:  # mutmut's progress lines
        subprocess.run(command, cwd=where, check=True, stdout=log, env=WITHOUT_DEVICES)
    return time.monotonic() - start, cpu_seconds() - cpu


def main(argv: list[str]) -> int:
    children = 2
    groups = argv or list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"unknown groups {unknown}; the groups are {list(GROUPS)}", file=sys.stderr)
        return 2
    total = [0.0, 0.0]
    for group in groups:
        wall, cpu = run(group, children)
        total = [total[0] + wall, total[1] + cpu]
        print(f"## {group}: {wall:.0f} s, {cpu:.0f} s of CPU\n")
        print("\n".join(table(OUT / group / "mutants")) + "\n", flush=True)
    print(f"all groups: {total[0]:.0f} s, {total[1]:.0f} s of CPU (--max-children {children})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
