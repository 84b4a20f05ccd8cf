"""The generated source of every kernel, written to files, to compare two versions of the
renderer (or of the schedule step) kernel by kernel.

``python -m benchmarks.kernel_sources dump DIR [--mode full,quick] [--suite DIR2]`` builds each
timed benchmark workload (benchmarks/workloads.py) with backend "c" and writes the C of every
kernel its compilation rendered to ``DIR/c/<workload>-<mode>/<n>.c``; the same kernel
descriptions are rendered as OpenCL C and CUDA C into ``DIR/opencl`` and ``DIR/cuda``, and
those a test run left in ``DIR2`` (``SYMNB_SUITE_KERNELS=DIR2 pytest ...``, tests/conftest.py)
in all three into ``DIR/*/suite``.
The descriptions are kept in ``DIR/kernels.pickle``.

``python -m benchmarks.kernel_sources render DIR OUT`` renders the descriptions kept in DIR
with the current code into OUT, in the same layout (``diff -r DIR OUT`` then shows what the
renderer changed, apart from what the linkers changed, which a second ``dump`` shows).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

from benchmarks import workloads
from benchmarks.peers.symnb_peer import Peer
from symnb.backends.c.dialect import CDialect
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.ir import Unsupported
from symnb.backends.opencl.dialect import OpenCLDialect

DIALECTS = {"c": CDialect, "opencl": OpenCLDialect, "cuda": CUDADialect}


class _Shared(CDialect):
    """The C dialect with the runner's helpers declared, whatever this process loaded (the
    source then does not depend on whether the runner was built)."""

    def shared_helpers(self) -> bool:
        return True


def workload_kernels(modes) -> dict[str, list]:
    """Workload-mode -> the kernel descriptions the C linker rendered while compiling it."""
    found: dict[str, list] = {}
    current: list = []
    original = CDialect.render

    def recording(self, kernel, *args, **kwargs):
        current.append(kernel)
        return original(self, kernel, *args, **kwargs)

    CDialect.render = recording
    try:
        peer = Peer("c")
        for workload in workloads.WORKLOADS:
            if workload.kind != "timed":
                continue
            for mode in modes:
                current.clear()
                inputs = workloads.make_inputs(workload, mode)
                try:
                    peer.build(workload.builder, inputs)
                except Exception as exc:  # noqa: BLE001 - a workload this version cannot build
                    print(f"{workload.key} {mode}: {exc}", file=sys.stderr)
                found[f"{workload.key}-{mode}"] = list(dict.fromkeys(current))
    finally:
        CDialect.render = original
    return found


def suite_kernels(directory: Path) -> list:
    """The kernel descriptions a test run left in ``directory`` (tests/conftest.py)."""
    kernels: dict = {}  # by pickled form: two versions of the IR read them alike
    for path in sorted(directory.glob("*.pickle")):
        saved, _ = pickle.loads(path.read_bytes())
        for blob in saved:
            kernel = pickle.loads(blob).kernel
            kernels.setdefault(pickle.dumps(kernel), kernel)
    return list(kernels.values())


def render(kernel, dialect: str) -> str | None:
    cls = _Shared if dialect == "c" else DIALECTS[dialect]
    try:
        return cls().render(kernel)
    except Unsupported as exc:
        return f"/* Unsupported: {exc} */\n"


def write(groups: dict[str, list], out: Path) -> int:
    """Every kernel of every group in every dialect under out."""
    count = 0
    for group, kernels in groups.items():
        for dialect in DIALECTS:
            folder = out / dialect / group
            folder.mkdir(parents=True, exist_ok=True)
            ext = {"c": "c", "opencl": "cl", "cuda": "cu"}[dialect]
            for n, kernel in enumerate(kernels):
                (folder / f"{n:03d}.{ext}").write_text(render(kernel, dialect) or "")
                count += 1
    return count


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump")
    dump.add_argument("out", type=Path)
    dump.add_argument("--mode", default="full,quick")
    dump.add_argument("--suite", type=Path)
    again = sub.add_parser("render")
    again.add_argument("source", type=Path)
    again.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        groups = workload_kernels(args.mode.split(","))
        if args.suite:
            groups["suite"] = suite_kernels(args.suite)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "kernels.pickle").write_bytes(pickle.dumps(groups))
    else:
        groups = pickle.loads((args.source / "kernels.pickle").read_bytes())
        args.out.mkdir(parents=True, exist_ok=True)
    count = write(groups, args.out)
    print(f"{count} sources of {sum(map(len, groups.values()))} kernels in {args.out}")


if __name__ == "__main__":
    main()
