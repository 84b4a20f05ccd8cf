"""``python -m benchmarks [--quick] [--only W1,W4] [--peers numpy,jax] [--loaded] [--one-thread]
[--baseline REV]``: run, print, save."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import (
    bandwidth,
    baseline,
    build_time,
    compile_time,
    load,
    machine,
    peers,
    report,
    runner,
    special,
)
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
    parser.add_argument(
        "--loaded",
        action="store_true",
        help="time each workload idle, then beside a process spinning on one core (issue 37)",
    )
    parser.add_argument(
        "--one-thread",
        nargs="?",
        const="all",
        metavar="PEERS",
        help="add a twin of each peer (or of these, comma-separated) with "
        "every thread pool at one thread, pinned to one core",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run symnb of git commit REV as peer symnb-base (backend c), "
        "and print new/base ratios; peers default to symnb-c",
    )
    args = parser.parse_args(argv)
    args.mode = args.size or ("quick" if args.quick else "full")
    args.partial = args.mode != "full" or bool(args.only) or bool(args.peers) or bool(args.baseline)
    args.conditions = (load.IDLE, load.LOADED) if args.loaded else ("",)
    return args


def chosen_peers(spec: str | None, rev: str | None = None, twins: str | None = None):
    """The peers to start: ``spec`` (default: all installed, or only symnb-c with a
    baseline ``rev``), then symnb-base with a baseline, then the one-thread twins ``twins`` asks
    for ("all": one per peer other than the ``out=`` rows)."""
    known = peers.all_peers() + ([peers.BASE_PEER] if rev else [])
    if not spec:
        wanted = [baseline.NEW_PEER] if rev else peers.all_peers()
    else:
        wanted = [name.strip() for name in spec.split(",") if name.strip()]
    if rev and peers.BASE_PEER not in wanted:
        wanted.append(peers.BASE_PEER)
    unknown = [name for name in wanted if name not in known]
    if twins and twins != "all":
        doubled = [name.strip() for name in twins.split(",") if name.strip()]
        unknown += [name for name in doubled if name not in wanted]
    elif twins:
        doubled = [name for name in wanted if not peers.is_variant(name)]
    else:
        doubled = []
    if unknown:
        raise SystemExit(
            f"unknown peer(s) {unknown}; choose from {known} (a one-thread twin's "
            "peer must be run too)"
        )
    return wanted + [peers.one_thread(name) for name in doubled]


_T0 = time.perf_counter()


def say(message: str) -> None:
    """Progress on stderr, with seconds since the start."""
    print(f"[{time.perf_counter() - _T0:5.0f} s] {message}", file=sys.stderr, flush=True)


def run_workloads(workloads, live: dict, args) -> tuple[list[Result], list[str]]:
    pace = runner.Pace(args.rounds or ROUNDS[args.mode], SAMPLE_S[args.mode], BUDGET_S[args.mode])
    results, sections = [], []
    # W5 and W11 start processes of their own, from this tree with default threads: the
    # baseline and the one-thread twins are not in them.
    probed = [name for name in live if not (peers.is_baseline(name) or peers.is_one_thread(name))]
    for workload in workloads:
        say(f"{workload.key}: {workload.title}")
        if workload.kind == "timed":
            if workload.key == "W1b":
                results += conditioned(args.conditions, say, floor_rows, workload, args.mode)
            results += runner.run_workload(workload, live, args.mode, pace, say, args.conditions)
        elif workload.kind == "compile":
            results += conditioned(
                args.conditions, say, compile_time.measure, probed, args.mode, say
            )
        elif workload.kind == "build":
            results += conditioned(args.conditions, say, build_time.measure, probed, args.mode, say)
        elif workload.kind == "rewrite":
            rows, extra = special.rewrite_rows(say)
            results, sections = results + rows, sections + extra
    return results, sections


def conditioned(conditions, say, measure, *args) -> list[Result]:
    """``measure(*args)``'s rows once per condition, each run in it and labelled with it."""
    rows = []
    for condition in conditions:
        with load.condition(condition, say) as background:
            for row in measure(*args):
                row.condition = condition
                row.extra.update({"background": background} if background else {})
                rows.append(row)
    return rows


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
    log = tempfile.NamedTemporaryFile(
        "w", prefix="symnb-bench-workers-", suffix=".log", delete=False
    )
    names = chosen_peers(args.peers, args.baseline, args.one_thread)
    base = baseline.export(runner.REPO, args.baseline) if args.baseline else None
    if base:
        say(f"--baseline {args.baseline}: commit {base.commit[:10]} exported to {base.path}")
    say(f"starting one worker per peer (their output: {log.name})")
    live = {}
    try:
        live, hello = runner.start_workers(names, log, base)
        results, sections = run_workloads(workloads, live, args)
    finally:
        for worker in live.values():
            worker.close()
        if base:
            base.remove()
    report.add_ratios(results)
    run = run_record(args, hello, started)
    run["background"] = next(
        (r.extra["background"] for r in results if "background" in r.extra), ""
    )
    if base:
        run["baseline"] = {"rev": base.rev, "commit": base.commit}
        sections.insert(0, baseline.ab_section(results, base) or "## A/B\n\nNothing timed.")
    run["load"] = [load_at_start, os.getloadavg()[0]]
    absent = [
        f"{name}: {reply.get('note', '')}"
        for name, reply in hello.items()
        if reply["status"] != "ok"
    ]
    if absent:
        sections.append("## Peers not run\n\n" + "\n".join(f"- {a}" for a in absent))
    extra = (
        report.threads_section(results),
        report.w5_section(results),
        report.w11_section(results),
    )
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
        "threads": {n: r["threads"] for n, r in hello.items() if "threads" in r},
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
