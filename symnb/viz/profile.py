"""``f.profile()``: time per node (or kernel), shown as a sorted table and a bar chart.

The linker's ``run_profiled`` (a separate path from the normal call) reports
``(node, seconds, bytes)`` per step; rows are summed over repeats. Backends without it are
timed as one "whole call" row, with a note saying so. Profiling never writes updates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from html import escape

from symnb.viz.cards import STYLE
from symnb.viz.charts import bar_chart_svg
from symnb.viz.progress import progress
from symnb.viz.samples import sample_inputs


@dataclass
class ProfileRow:
    """One node or kernel: where it ran, how often, how long, how many bytes it touched."""

    label: str
    op: str
    where: str
    calls: int = 0
    seconds: float = 0.0
    bytes: int = 0
    steps: int = 0  # iterations of a loop (a scan), over all calls
    #: a step of a loop's body: the row of the loop (summed over its iterations)
    loop: ProfileRow | None = None


@dataclass
class Profile:
    """Rows sorted by time, the number of calls, and notes (fallbacks, what was run)."""

    rows: list[ProfileRow]
    calls: int
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(r.seconds for r in self.rows)

    def share(self, row: ProfileRow) -> float:
        return row.seconds / self.total if self.total else 0.0

    def text(self) -> str:
        """A plain table for terminals."""
        head = f"{'node':<28} {'where':<10} {'calls':>6} {'ms':>10} {'share':>7} {'bytes':>12}"
        lines = [f"profile: {self.calls} calls, {self.total * 1e3:.3f} ms in nodes", head]
        for r in self.rows:
            lines.append(
                f"{r.label[:28]:<28} {r.where[:10]:<10} {r.calls:>6} {r.seconds * 1e3:>10.3f} "
                f"{self.share(r):>6.1%} {r.bytes:>12,}"
            )
        return "\n".join(lines + self.notes)

    __str__ = text

    def __repr__(self):
        return self.text()

    def html(self) -> str:
        return profile_html(self)

    def _repr_html_(self):
        return self.html()

    def chart_svg(self, top: int = 15) -> str:
        """Bar chart of the share of total time of the ``top`` slowest rows."""
        rows = self.rows[:top]
        labels = [f"{r.label} ({r.where})" for r in rows]
        return bar_chart_svg(labels, [self.share(r) * 100 for r in rows], unit="%")


def profile_function(function, args=(), kwargs=None, repeat: int = 10) -> Profile:
    """``f.profile()``: with no arguments, random inputs that fit the input types are used."""
    if not args and not kwargs and function.inputs:
        profile = run_profile(function, sample_inputs(function), {}, repeat)
        profile.notes.append("inputs: random arrays fitting the input types (named dims = 64)")
        return profile
    return run_profile(function, args, kwargs, repeat)


def run_profile(function, args=(), kwargs=None, repeat: int = 10) -> Profile:
    """Run ``function`` ``repeat`` times on its linker's profiled path and sum the timings."""
    arrays = function_arrays(function, args, kwargs or {})
    linker = function.linker
    rows: dict[int, ProfileRow] = {}
    for _ in progress(range(repeat), label=f"profiling {function.name or 'function'}"):
        if linker.steps_timed:
            _add_records(linker.run_profiled(arrays)[1], linker.where, rows)
        else:
            _time_whole_call(linker, arrays, rows)
    notes = [] if linker.steps_timed else [_whole_call_note(linker)]
    notes += [_loop_note(r, rows.values()) for r in rows.values() if r.steps]
    notes += _transfer_note(rows)
    placement = _placement_note(function.kernels)
    notes += [placement] if placement else []
    ordered = sorted(rows.values(), key=_by_time, reverse=True)
    return Profile(ordered, repeat, notes)


def _loop_note(row: ProfileRow, rows) -> str:
    """Steps per call and the time per step, the body's steps included."""
    seconds = row.seconds + sum(r.seconds for r in rows if r.loop is row)
    per_step = seconds / row.steps * 1e6
    return f"{row.label}: {row.steps / row.calls:g} steps per call, {per_step:.1f} µs per step"


def _transfer_note(rows: dict) -> list[str]:
    """A device backend's copies between host and device, apart from the compute."""
    moved = [r for r in rows.values() if r.where == "transfer"]
    if not moved:
        return []
    seconds = sum(r.seconds for r in moved)
    total = sum(r.seconds for r in rows.values())
    return [f"transfers between host and device: {seconds * 1e3:.3f} ms of "
            f"{total * 1e3:.3f} ms ({sum(r.bytes for r in moved):,} bytes)"]  # fmt: skip


def _by_time(row: ProfileRow) -> float:
    return row.seconds


def function_arrays(function, args, kwargs) -> list:
    """The leaf values a call would pass to the linker, checked by the call's own code."""
    return function.leaf_values(*args, **kwargs)


def _add_records(records, where: str, rows: dict) -> None:
    """Sum ``(node, seconds, bytes[, kind[, steps]])`` records into rows; a kernel backend's
    records say what ran each step (kernel, blas, library, loop); ``steps``: a loop's
    iterations."""
    for position, (node, seconds, moved, *rest) in enumerate(records):
        kind = rest[0] if rest else None
        within = rest[2] if len(rest) > 2 else None
        row = rows.get(position)
        if row is None:
            label = f"{position}: {node.op.op_name()}"
            loop = None
            if within is not None:  # a step of a loop's body: "3/1: gemm" for body step 1
                loop = rows[within[0]]
                label = f"{loop.label.split(':')[0]}/{within[1]}: {node.op.op_name()}"
            place = PLACES.get(kind, kind) if kind else _where(node, where)
            row = rows[position] = ProfileRow(label, str(node.op), place, loop=loop)
        row.calls += 1
        row.seconds += seconds
        row.bytes += moved
        row.steps += (rest[1] if len(rest) > 1 else None) or 0


def _where(node, default: str) -> str:
    """Where a step ran: a linker may tag nodes it ran elsewhere (``tag["device"]``)."""
    return node.tag.get("device", default)


def _time_whole_call(linker, arrays, rows: dict) -> None:
    start = time.perf_counter()
    linker.run(arrays)
    row = rows.setdefault(0, ProfileRow("whole call", "all steps", linker.name))
    row.calls += 1
    row.seconds += time.perf_counter() - start


def _whole_call_note(linker) -> str:
    return f"backend {linker.name!r} has no per-step timing: the whole call is timed as one row"


PLACES = {
    "kernel": "generated C on the CPU",
    "blas": "BLAS",
    "view": "view (C)",
    "library": "NumPy",  # a NumPy step: an op without a kernel, or one the plan calls (padding)
    "loop": "loop (own time; its body steps: rows k/i)",
}


def _placement_note(kernels) -> str:
    """Where the steps of a kernel backend run (from ``f.kernels``), e.g. C vs NumPy."""
    if not kernels:
        return ""
    counts: dict[str, int] = {}
    for step in kernels:
        kind = getattr(step, "kind", "step")
        language = getattr(step, "language", "C")
        if kind == "kernel" and language != "C":  # a device backend's kernels
            kind = f"{language} kernel on the device"
        counts[kind] = counts.get(kind, 0) + 1
    parts = [f"{n} × {PLACES.get(kind, kind)}" for kind, n in counts.items()]
    return "where the steps run: " + ", ".join(parts)


def profile_rows_html(profile: Profile) -> str:
    """The sorted table, one row per node, with an inline share bar."""
    body = "".join(_row_html(profile, r) for r in profile.rows)
    return (
        '<table class="symnb-table"><thead><tr><th>node</th><th>op</th><th>where</th>'
        "<th>calls</th><th>total ms</th><th>share</th><th>bytes</th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _row_html(profile: Profile, r: ProfileRow) -> str:
    share = profile.share(r)
    bar = f'<div style="background:#60a5fa;height:8px;width:{share * 100:.1f}%"></div>'
    return (
        f"<tr><td>{escape(r.label)}</td><td><code>{escape(r.op)}</code></td>"
        f"<td>{escape(r.where)}</td><td>{r.calls}</td><td>{r.seconds * 1e3:.3f}</td>"
        f'<td style="min-width:90px">{share:.1%}{bar}</td><td>{r.bytes:,}</td></tr>'
    )


def profile_html(profile) -> str:
    notes = "".join(f'<div class="symnb-note">{escape(n)}</div>' for n in profile.notes)
    return (
        f'{STYLE}<div class="symnb-card"><h4>profile: {profile.calls} calls, '
        f"{profile.total * 1e3:.3f} ms in nodes</h4>{notes}{profile.chart_svg()}"
        f"{profile_rows_html(profile)}</div>"
    )
