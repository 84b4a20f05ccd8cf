"""Ratios, the printed table, and the JSON / Markdown files of the latest run."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from benchmarks import peers

README_START = "<!-- benchmarks:start (written by python -m benchmarks) -->"
README_END = "<!-- benchmarks:end -->"
COLUMNS = ("Workload", "Peer", "Median", "Min", "Spread", "x symnb", "x fastest", "Load", "Note")
PHASE_NAMES = {
    "import_s": "import",
    "runtime_s": "runtime start",
    "compile_s": "compile + first call",
}


def add_ratios(results: list) -> None:
    """Each timed row gets its ratio to the best symnb backend, to the fastest headline row
    (``out=`` rows are compared with it but never are it) and, on a workload with a floor
    (W1b), to the lowest floor. Ratios above 1 mean slower. The loaded mode's conditions are
    compared apart (idle rows with idle rows); one-thread twins and the ``--baseline`` tree are
    compared with the best symnb and the fastest row but never are either."""
    for key in dict.fromkeys(r.group for r in results):
        rows = [r for r in results if r.group == key and r.median_s is not None]
        timed = [r for r in rows if r.status == "ok"]
        symnb = [r.median_s for r in timed if peers.is_symnb(r.peer) and peers.is_headline(r.peer)]
        floors = [r.median_s for r in rows if r.status == "floor"]
        headline = [r.median_s for r in timed if peers.is_headline(r.peer)]
        fastest = min(headline or [r.median_s for r in timed], default=None)
        for row in timed:
            row.extra["vs_symnb"] = row.median_s / min(symnb) if symnb else None
            row.extra["vs_fastest"] = row.median_s / fastest
            if floors:
                row.extra["vs_floor"] = row.median_s / min(floors)


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def spread(result) -> str:
    """The fastest and slowest sample relative to the median: ``-2%/+5%``."""
    if len(result.samples) < 2 or not result.median_s:
        return "-" if not result.samples else "1 sample"
    low, high = min(result.samples), max(result.samples)
    return f"{low / result.median_s - 1:+.0%}/{high / result.median_s - 1:+.0%}"


def phases(result) -> str:
    """W5's phases, each the median over the repeats: import, runtime start, compile."""
    parts = [
        f"{name} {format_seconds(statistics.median(result.extra[key]))}"
        for key, name in PHASE_NAMES.items()
        if result.extra.get(key)
    ]
    return "; ".join(parts)


def row_cells(result) -> list[str]:
    notes = [result.note, phases(result)]
    if "vs_floor" in result.extra:
        notes.insert(0, f"{result.extra['vs_floor']:.2f}x floor")
    note = "; ".join(n for n in notes if n)
    load = result.extra.get("load")
    median = format_seconds(result.median_s) if result.median_s is not None else result.status
    if result.status == "WRONG":
        median = "WRONG"
    minimum = format_seconds(result.min_s) if result.status in ("ok", "floor") else "-"
    return [
        result.group,
        result.peer,
        median,
        minimum,
        spread(result) if result.status in ("ok", "floor") else "-",
        _ratio(result.extra.get("vs_symnb")),
        _ratio(result.extra.get("vs_fastest")),
        "-" if load is None else f"{load:.1f}",
        note,
    ]


def text_table(results: list) -> str:
    """The table printed at the end of a run, columns aligned."""
    rows = [list(COLUMNS)] + [row_cells(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def markdown_table(results: list) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for result in results:
        cells = [cell.replace("|", "\\|") for cell in row_cells(result)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary_matrix(results: list) -> str:
    """Workloads (and conditions) down, peers across (not the ``out=`` rows); each cell the
    median, its ratio to the fastest and the minimum."""
    shown = [r for r in results if not peers.is_variant(r.peer)]
    peer_names = list(dict.fromkeys(r.peer for r in shown if r.status in ("ok", "WRONG")))
    keys = list(dict.fromkeys(r.group for r in results))
    cell = {(r.group, r.peer): r for r in results}
    header = ["Workload", *peer_names, "Note"]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for key in keys:
        cells = [_matrix_cell(cell.get((key, name))) for name in peer_names]
        notes = [_side_note(r) for r in shown if r.group == key and r.peer not in peer_names]
        lines.append(f"| {key} | " + " | ".join([*cells, "; ".join(notes)]) + " |")
    return "\n".join(lines)


def _side_note(result) -> str:
    if result.status == "floor":
        return f"{result.peer}: {format_seconds(result.median_s)}"
    return result.note


def _matrix_cell(result) -> str:
    if result is None:
        return ""
    if result.status != "ok":
        return result.status
    return (
        f"{format_seconds(result.median_s)} ({result.extra['vs_fastest']:.2f}x), "
        f"min {format_seconds(result.min_s)}"
    )


def markdown_report(run: dict, results: list, extra_sections: list[str]) -> str:
    """The whole ``latest.md``: how it was run, the machine, the matrix and the full table."""
    parts = [
        "# Benchmark results (latest run)",
        f"`{run['command']}` on {run['started']}, {run['wall_s']:.0f} s in all, mode "
        f"{run['mode']}, {run['rounds']} alternating rounds per workload.",
        f"Machine: {run['machine_line']}",
        f"Load average (1 min) at the start and the end: {run['load'][0]:.1f}, "
        f"{run['load'][1]:.1f} (other jobs on the machine make every number noisier).",
        "Ratios: each median divided by the best symnb backend's (x symnb) and by the fastest "
        "headline row's (x fastest; `out=` rows, one-thread twins and the baseline tree are "
        "compared with it, never are it); above 1 is slower. Min: the fastest sample. Spread: "
        "the fastest and the slowest sample against the median. Load: the 1-minute load "
        "average as the row's workload ended. See docs/benchmarks.md.",
        *(
            [
                f"Conditions: each workload timed as the machine was (idle), then beside "
                f"{run['background']} (loaded), the background started and stopped by the harness."
            ]
            if run.get("background")
            else []
        ),
        "## Summary (median, ratio to the fastest, minimum)",
        summary_matrix(results),
        "## All rows",
        markdown_table(results),
        *extra_sections,
    ]
    return "\n\n".join(parts) + "\n"


def w5_section(results: list) -> str | None:
    """W5's phases as columns, one row per peer and cache state (medians over the repeats)."""
    rows = [r for r in results if r.workload.startswith("W5-") and r.extra.get("compile_s")]
    if not rows:
        return None
    header = ["Peer", "Cache", *PHASE_NAMES.values(), "W5 time", "Spread", "Repeats"]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for r in rows:
        cells = [format_seconds(statistics.median(r.extra[key])) for key in PHASE_NAMES]
        cache = r.workload.removeprefix("W5-")
        total = [format_seconds(r.median_s), spread(r), str(len(r.samples))]
        lines.append("| " + " | ".join([r.peer, cache, *cells, *total]) + " |")
    intro = (
        "## W5: time to the first result of the W3 step in a new process\n\n"
        "W5 time = runtime start + compile + first call, counted from the moment the "
        "library's import has returned; the import is shown beside it. Every peer gets the "
        "same number of cold/warm pairs."
    )
    return intro + "\n\n" + "\n".join(lines)


def w11_section(results: list) -> str | None:
    """W11's phases per peer: nodes, median time and microseconds per node."""
    rows = [r for r in results if r.workload.startswith("W11-") and r.status == "ok"]
    if not rows:
        return None
    header = ["Phase", "Peer", "Nodes", "Median", "us/node", "CPU us/node", "Spread", "Repeats"]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for r in rows:
        per, nodes = r.extra.get("us_per_node"), r.extra.get("nodes")
        cpu = 1e6 * r.extra["cpu_s"] / nodes if nodes and "cpu_s" in r.extra else None
        cells = [
            r.workload.removeprefix("W11-"),
            r.peer,
            str(nodes or "-"),
            format_seconds(r.median_s),
            "-" if per is None else f"{per:.2f}",
            "-" if cpu is None else f"{cpu:.2f}",
            spread(r),
            str(len(r.samples)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    intro = (
        "## W11: graph building (benchmarks/build_time.py)\n\n"
        "Nodes: apply nodes (symnb, PyTensor) or jaxpr equations (JAX). JAX's grad row is "
        "`make_jaxpr(grad)`, which traces the forward pass again; symnb's and PyTensor's "
        "differentiate the graph already built. compile is symnb's `sn.function` only."
    )
    return intro + "\n\n" + "\n".join(lines)


ONE_THREAD_TARGET = 1.15  # issue 37: loaded median within 1.15x of its own one-thread median
PEER_TARGET = 1.0  # ... and at most the fastest peer's median


def threads_section(results: list) -> str | None:
    """Issue 37's ratios, per workload and condition: symnb's best backend against its own
    one-thread twin and against the fastest other peer (medians; the minimums beside them).
    Only for a run with conditions (``--loaded``) or one-thread twins (``--one-thread``)."""
    if not any(r.condition or peers.is_one_thread(r.peer) for r in results):
        return None
    header = [
        "Workload",
        "symnb (median, min)",
        "symnb on 1 thread",
        "x own 1 thread",
        "fastest peer",
        "x fastest peer",
        "fastest peer on 1 thread",
    ]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for key in dict.fromkeys(r.group for r in results):
        timed = {r.peer: r for r in results if r.group == key and r.status == "ok" and r.samples}
        ours = _fastest(timed, lambda p: peers.is_symnb(p) and peers.is_headline(p))
        if ours is None:
            continue
        alone = timed.get(peers.one_thread(ours.peer))
        best = _fastest(timed, lambda p: peers.is_headline(p) and not peers.is_symnb(p))
        best_alone = _fastest(timed, lambda p: peers.is_one_thread(p) and not peers.is_symnb(p))
        cells = [
            key,
            f"{ours.peer}: {_median_min(ours)}",
            _median_min(alone),
            _target(ours, alone, ONE_THREAD_TARGET),
            f"{best.peer}: {_median_min(best)}" if best else "-",
            _target(ours, best, PEER_TARGET),
            f"{peers.plain(best_alone.peer)}: {_median_min(best_alone)}" if best_alone else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    intro = (
        "## Threads on a busy machine (issue 37)\n\n"
        "symnb's best backend in each condition against its own one-thread twin (target: at "
        f"most {ONE_THREAD_TARGET}x) and against the fastest other peer at its default threads "
        f"(target: at most {PEER_TARGET:.2f}x); ratios of medians, then of minimums; a ratio "
        "over its target is in bold. `loaded`: beside one process spinning on one core; "
        "`[1 thread]`: every thread pool at one, the worker pinned to one core."
    )
    return intro + "\n\n" + "\n".join(lines)


def _fastest(timed: dict, wanted):
    rows = [r for name, r in timed.items() if wanted(name)]
    return min(rows, key=lambda r: r.median_s, default=None)


def _median_min(row) -> str:
    return "-" if row is None else f"{format_seconds(row.median_s)}, {format_seconds(row.min_s)}"


def _target(row, other, target: float) -> str:
    """``median ratio, min ratio``, each in bold above ``target``."""
    if other is None:
        return "-"
    ratios = (row.median_s / other.median_s, row.min_s / other.min_s)
    return ", ".join(f"**{r:.2f}**" if r > target else f"{r:.2f}" for r in ratios)


def profile_section(results: list) -> str | None:
    """The profiles of symnb's best backend: taken where it was slower than the fastest row,
    and always for the workloads whose targets name one (W3s, W8, W8b)."""
    profiled = [r for r in results if r.extra.get("profile")]
    if not profiled:
        return None
    parts = [
        "## Profiles of symnb's best backend\n\nWhere symnb is slower than the fastest row, "
        "and for the workloads marked profiled: its own `f.profile()` per step, then "
        "cProfile's top functions by own time per call (the Python between the steps)."
    ]
    for result in profiled:
        ratio = result.extra.get("vs_fastest")
        title = f"{result.workload}, {result.peer}" + (
            f" ({ratio:.2f}x the fastest)" if ratio else ""
        )
        parts.append(f"### {title}\n\n```\n{result.extra['profile']}\n```")
    return "\n\n".join(parts)


def to_json(run: dict, results: list) -> str:
    rows = [
        {
            "workload": r.workload,
            "peer": r.peer,
            "status": r.status,
            "note": r.note,
            "condition": r.condition,
            "median_s": r.median_s,
            "min_s": r.min_s,
            "samples_s": r.samples,
            "calls_per_sample": r.calls_per_sample,
            **r.extra,
        }
        for r in results
    ]
    return json.dumps({"run": run, "results": rows}, indent=1) + "\n"


def save(directory: Path, run: dict, results: list, extra_sections: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "latest.json").write_text(to_json(run, results))
    (directory / "latest.md").write_text(markdown_report(run, results, extra_sections))


def update_readme(readme: Path, run: dict, results: list) -> None:
    """Replace (or append) the README's Benchmarks section with the latest summary."""
    section = "\n\n".join(
        [
            README_START,
            f"Latest `make bench` ({run['started']}, {run['machine_line']}). Median per call, "
            "its ratio to the fastest, and the minimum"
            + (
                f"; (idle) as the machine was, (loaded) beside {run['background']}"
                if run.get("background")
                else ""
            )
            + "; full table in `benchmarks/results/latest.md`, method in `docs/benchmarks.md`.",
            summary_matrix(results),
            README_END,
        ]
    )
    text = readme.read_text()
    if README_START in text and README_END in text:
        head, rest = text.split(README_START, 1)
        text = head + section + rest.split(README_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Benchmarks\n\n" + section + "\n"
    readme.write_text(text)
