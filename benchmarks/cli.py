"""``python -m benchmarks [--quick] [--only W1,W4] [--peers numpy,jax]``: run, print, save."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import bandwidth, build_time, compile_time, machine, peers, report, runner, special
from benchmarks.runner import Result
from benchmarks.workloads import MODES, select

RESULTS = Path(__file__).with_name("results")
README = Path(__file__).resolve().parent.parent / "README.md"
ROUNDS = {"full": 7, "quick": 3, "tiny": 2}
SAMPLE_S = {"full": 0.05, "quick": 0.02, "tiny": 0.002}  # target length of one timed sample
BUDGET_S = {"full": 4.0, "quick": 2.0, "tiny": 0.5}  # sampling time of a row with slow calls


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
    parser.add_argument("--size", choices=MODES, help="sizes to use (default full)")
    parser.add_argument("--only", help="comma-separated workloads, e.g. W1,W4 or W7-abs")
    parser.add_argument("--peers", help="comma-separated peers (default: all installed)")
    parser.add_argument("--rounds", type=int, help="alternating rounds per workload")
    parser.add_argument("--out", type=Path, help="where to write latest.json and latest.md")
    args = parser.parse_args(argv)
    args.mode = args.size or ("quick" if args.quick else "full")
    args.partial = args.mode != "full" or bool(args.only) or bool(args.peers)
    return args


def chosen_peers(spec: str | None) -> list[str]:
    known = peers.all_peers()
    if not spec:
        return known
    wanted = [name.strip() for name in spec.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise SystemExit(f"unknown peer(s) {unknown}; choose from {known}")
    return wanted


_T0 = time.perf_counter()


def say(message: str) -> None:
    """Progress on stderr, with seconds since the start."""
    print(f"[{time.perf_counter() - _T0:5.0f} s] {message}", file=sys.stderr, flush=True)


def run_workloads(workloads, live: dict, args) -> tuple[list[Result], list[str]]:
    pace = runner.Pace(args.rounds or ROUNDS[args.mode], SAMPLE_S[args.mode], BUDGET_S[args.mode])
    results, sections = [], []
    for workload in workloads:
        say(f"{workload.key}: {workload.title}")
        if workload.kind == "timed":
            if workload.key == "W1b":
                results += floor_rows(workload, args.mode)
            results += runner.run_workload(workload, live, args.mode, pace, say)
        elif workload.kind == "compile":
            results += compile_time.measure(list(live), args.mode, say)
        elif workload.kind == "build":
            results += build_time.measure(list(live), args.mode, say)
        elif workload.kind == "rewrite":
            rows, extra = special.rewrite_rows(say)
            results, sections = results + rows, sections + extra
    return results, sections


def floor_rows(workload, mode: str) -> list[Result]:
    rows = []
    for floor in bandwidth.measure(workload.size(mode)):
        note = floor["method"] + (f"; {floor['note']}" if "note" in floor else "")
        rows.append(Result(workload.key, floor["label"], "floor", note, [floor["seconds"]], 1))
    return rows


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    started, load_at_start = time.perf_counter(), os.getloadavg()[0]
    workloads = select(args.only)
    log = tempfile.NamedTemporaryFile("w", prefix="symnb-bench-workers-", suffix=".log",
                                      delete=False)  # fmt: skip
    say(f"starting one worker per peer (their output: {log.name})")
    live, hello = runner.start_workers(chosen_peers(args.peers), log)
    try:
        results, sections = run_workloads(workloads, live, args)
    finally:
        for worker in live.values():
            worker.close()
    report.add_ratios(results)
    run = run_record(args, hello, started)
    run["load"] = [load_at_start, os.getloadavg()[0]]
    absent = [f"{name}: {reply.get('note', '')}" for name, reply in hello.items()
              if reply["status"] != "ok"]  # fmt: skip
    if absent:
        sections.append("## Peers not run\n\n" + "\n".join(f"- {a}" for a in absent))
    extra = (report.w5_section(results), report.w11_section(results))
    sections += [s for s in (*extra, report.profile_section(results)) if s]
    publish(args, run, results, sections)
    return 0


def run_record(args, hello: dict, started: float) -> dict:
    versions = {name: reply["version"] for name, reply in hello.items() if reply["status"] == "ok"}
    info = machine.describe(versions)
    return {
        "command": "python -m benchmarks " + " ".join(sys.argv[1:]),
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "wall_s": time.perf_counter() - started,
        "mode": args.mode,
        "rounds": args.rounds or ROUNDS[args.mode],
        "machine": info,
        "machine_line": machine.line(info),
        "absent": {n: r.get("note", "") for n, r in hello.items() if r["status"] != "ok"},
    }


def publish(args, run: dict, results: list, sections: list[str]) -> None:
    print("Machine: " + run["machine_line"])
    print("Load average (1 min) at the start and the end: {:.1f}, {:.1f}".format(*run["load"]))
    print(report.text_table(results))
    for section in sections:
        print("\n" + section)
    out = args.out or (Path(tempfile.gettempdir()) / "symnb-bench" if args.partial else RESULTS)
    report.save(out, run, results, sections)
    if not args.partial and args.out is None:
        report.update_readme(README, run, results)
    print(f"\nwrote {out / 'latest.json'} and {out / 'latest.md'} in {run['wall_s']:.0f} s")
