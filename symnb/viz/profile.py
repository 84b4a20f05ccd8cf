"""``f.profile()``: time per node (or kernel), shown as a sorted table and a bar chart.

The linker's ``run_profiled`` (a separate call from the normal one) reports
``(node, seconds, bytes, kind, steps, within)`` per step: on backend "c" the C runner times
its own steps, on the path a plain call takes; backend "py" (and "c" without a runner) the
Python executor, which is that path there. Before anything is timed, the call runs untimed
(``WARMUP`` times, both ways): the first call pays once for what later calls find ready (BLAS
starting its threads, loading a kernel, the first touch of fresh buffers, cold caches), which
a plain timed call does not pay either. Then each of ``repeat`` rounds times a whole call as
``f(...)`` makes it and a profiled call, each step timed. Times are reported by their median
and spread (the interquartile range), so one slow call (the machine busy elsewhere) moves
neither: the total per call is the whole calls' median, what a plain timed call measures;
each step's row its median per call, and its share of the steps' sum, which a note compares
with the whole call. Backends without ``run_profiled`` are timed as one "whole call" row,
with a note saying so. Profiling never writes updates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from html import escape

import numpy as np

from symnb.errors import SymnbError
from symnb.viz.charts import bar_chart_svg
from symnb.viz.progress import progress
from symnb.viz.samples import sample_inputs
from symnb.viz.theme import STYLE

#: untimed calls before timing: one pays the first-use costs, a second the ones it uncovers
#: (a BLAS thread pool woken by the first call's product settles during the second)
WARMUP = 2


def quartiles(samples) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of ``samples`` (zeros when empty)."""
    if not len(samples):
        return 0.0, 0.0, 0.0
    q1, q2, q3 = np.percentile(np.asarray(samples, dtype=float), [25, 50, 75])
    return float(q1), float(q2), float(q3)


@dataclass
class ProfileRow:
    """One node or kernel: where it ran, how often, how long, how many bytes it touched."""

    label: str
    op: str
    where: str
    calls: int = 0
    seconds: float = 0.0  # over all timed calls
    bytes: int = 0  # over all timed calls (the table shows ``bytes_per_call``)
    steps: int = 0  # iterations of a loop (a scan), over all calls
    #: a step of a loop's body: the row of the loop (summed over its iterations)
    loop: ProfileRow | None = None
    #: seconds in each timed call
    samples: list = field(default_factory=list)
    #: (samples' identity and length, their quartiles): a table of many rows asks each row's
    #: median once per other row (its share), which must not compute it again each time
    _quartiles: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def quartiles(self) -> tuple[float, float, float]:
        """(first quartile, median, third quartile) of the seconds per call, computed once
        for the samples there are (samples are only ever added)."""
        key = (id(self.samples), len(self.samples))
        if self._quartiles is None or self._quartiles[0] != key:
            self._quartiles = (key, quartiles(self.samples))
        return self._quartiles[1]

    @property
    def median(self) -> float:
        """Seconds per call, the median over the timed calls."""
        return self.quartiles[1]

    @property
    def bytes_per_call(self) -> int:
        """Bytes moved per call, as the time columns are per call (not growing with
        ``repeat``)."""
        return self.bytes // self.calls if self.calls else 0

    @property
    def spread(self) -> tuple[float, float]:
        """The interquartile range of the seconds per call."""
        q1, _, q3 = self.quartiles
        return q1, q3


@dataclass
class Profile:
    """Rows sorted by median time, the number of timed calls, each call's total, and notes
    (fallbacks, what was run)."""

    rows: list[ProfileRow]
    calls: int
    notes: list[str] = field(default_factory=list)
    #: the seconds of each whole call, timed as ``f(...)`` runs it
    per_call: list = field(default_factory=list)
    warmup: int = 0
    #: the seconds of each profiled call's steps, added up
    in_steps: list = field(default_factory=list)

    @property
    def total(self) -> float:
        """Seconds in the steps over all timed calls."""
        return sum(r.seconds for r in self.rows)

    @property
    def median(self) -> float:
        """Seconds per call: the median of the whole calls."""
        return quartiles(self.per_call)[1]

    def steps_median(self) -> float:
        """The rows' medians added up: what :meth:`share` divides by."""
        return sum(r.median for r in self.rows)

    def share(self, row: ProfileRow, whole: float | None = None) -> float:
        """The row's part of a call, by medians; ``whole``: :meth:`steps_median`, when the
        caller asks for many rows' shares (a table), so that it is added up once."""
        whole = self.steps_median() if whole is None else whole
        return row.median / whole if whole else 0.0

    def headline(self) -> str:
        q1, median, q3 = quartiles(self.per_call)
        warm = f" after {self.warmup} untimed" if self.warmup else ""
        return (
            f"profile: {self.calls} calls{warm}, median {median * 1e6:.1f} µs per call "
            f"(interquartile range {q1 * 1e6:.1f}–{q3 * 1e6:.1f} µs)"
        )

    def text(self) -> str:
        """A plain table for terminals."""
        head = (
            f"{'node':<28} {'where':<10} {'calls':>6} {'median µs':>10} {'IQR µs':>17} "
            f"{'share':>7} {'bytes/call':>12}"
        )
        lines = [self.headline(), head]
        whole = self.steps_median()
        for r in self.rows:
            low, high = r.spread
            share = self.share(r, whole)
            lines.append(
                f"{r.label[:28]:<28} {r.where[:10]:<10} {r.calls:>6} {r.median * 1e6:>10.1f} "
                f"{f'{low * 1e6:.1f}–{high * 1e6:.1f}':>17} {share:>6.1%} {r.bytes_per_call:>12,}"
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
        """Bar chart of the share of a call's median time of the ``top`` slowest rows."""
        rows = self.rows[:top]
        labels = [f"{r.label} ({r.where})" for r in rows]
        whole = self.steps_median()
        return bar_chart_svg(labels, [self.share(r, whole) * 100 for r in rows], unit="%")


def profile_function(function, args=(), kwargs=None, repeat: int = 10) -> Profile:
    """``f.profile()``: with no arguments, random inputs that fit the input types are used."""
    _check_repeat(repeat)
    if not args and not kwargs and function.inputs:
        samples = sample_inputs(function)
        try:
            profile = run_profile(function, samples, {}, repeat)
        except Exception as exc:  # the drawn sizes do not fit the graph: say so, not where
            raise SymnbError(_samples_failed(function, samples, exc)) from None
        fixed = ", ".join(f"{n} = {v}" for n, v in sorted(function.shared_dim_sizes().items()))
        fixed = f"; {fixed}, fixed by the shared values" if fixed else ""
        profile.notes.append(
            f"inputs: random arrays fitting the input types (named dims = 64{fixed})"
        )
        return profile
    return run_profile(function, args, kwargs, repeat)


def _check_repeat(repeat) -> None:
    """Zero calls would report a median of none as 0.0 us, a negative count the same."""
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
        raise ValueError(
            f"f.profile(repeat=...) takes the number of calls to time, an integer of at least "
            f"1, not {repeat!r}"
        )


def _samples_failed(function, samples, exc) -> str:
    """Why ``f.profile()`` without inputs failed: the random inputs it drew, and the way out."""
    drawn = ", ".join(
        f"{var.name or f'input {i}'}: {value.dtype}{list(value.shape)}"
        for i, (var, value) in enumerate(zip(function.inputs, samples))
    )
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return (
        "f.profile() without inputs calls the function on random arrays fitting the input "
        f"types, every dim that the types and the shared values do not fix of size 64 ({drawn}), "
        "and that call "
        f"failed:\n  {type(exc).__name__}: {first}\n"
        "  hint: pass inputs of the sizes you mean to time: f.profile(x_value, ...)"
    )


def run_profile(function, args=(), kwargs=None, repeat: int = 10) -> Profile:
    """Warm up, then ``repeat`` times: a whole call as a plain call runs it (timed as one),
    and a call on the linker's profiled path (each step timed); ``repeat`` checked by
    ``profile_function``."""
    arrays = function_arrays(function, args, kwargs or {})
    linker = function.linker
    profiled = linker.run_profiled if linker.steps_timed else None
    plain = plain_call(function, args, kwargs or {}, arrays)
    for _ in range(WARMUP):
        plain()
        if profiled is not None:
            profiled(arrays)
    rows: dict[int, ProfileRow] = {}
    per_call, in_steps = [], []
    where = linker.where
    for _ in progress(range(repeat), label=f"profiling {function.name or 'function'}"):
        start = time.perf_counter()
        plain()
        per_call.append(time.perf_counter() - start)
        if profiled is None:
            _add_whole_call(linker, per_call[-1], rows)
        else:
            in_steps.append(_add_records(profiled(arrays)[1], where, rows))
    notes = [] if profiled else [_whole_call_note(linker)]
    notes += _steps_note(per_call, in_steps)
    notes += [_loop_note(r, rows.values()) for r in rows.values() if r.steps]
    notes += _transfer_note(rows)
    placement = _placement_note(function.kernels)
    notes += [placement] if placement else []
    ordered = sorted(rows.values(), key=_by_time, reverse=True)
    return Profile(ordered, repeat, notes, per_call, WARMUP, in_steps)


def plain_call(function, args, kwargs, arrays):
    """A whole call, as ``function(...)`` makes it: the call itself, or for a function with
    updates (profiling writes none) the same path from its leaf values, its results
    dropped."""
    if not function.updates:
        return lambda: function(*args, **kwargs)
    runner = function.runner

    def without_updates():
        if runner is None or runner(*arrays) is None:  # no runner, or it declined this call
            function.linker.run(arrays)

    return without_updates


def _steps_note(per_call: list, in_steps: list) -> list[str]:
    """How the steps' own times add up against a whole call (its arguments' checks, the
    outputs and the clock reads are apart)."""
    if not in_steps:
        return []
    steps, whole = (quartiles(v)[1] for v in (in_steps, per_call))
    return [
        f"the steps, each timed on its own, add up to {steps * 1e6:.1f} µs per call "
        f"(median); a whole call takes {whole * 1e6:.1f} µs"
    ]


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
    seconds = sum(r.median for r in moved)
    total = sum(r.median for r in rows.values())
    return [
        f"transfers between host and device: {seconds * 1e6:.1f} µs of {total * 1e6:.1f} µs "
        f"per call (medians), {sum(r.bytes_per_call for r in moved):,} bytes per call"
    ]


def _by_time(row: ProfileRow) -> float:
    return row.median


def function_arrays(function, args, kwargs) -> list:
    """The leaf values a call would pass to the linker, checked by the call's own code."""
    return function.leaf_values(*args, **kwargs)


def _add_records(records, where: str, rows: dict) -> float:
    """Add one call's ``(node, seconds, bytes[, kind[, steps[, within]]])`` records to rows;
    a kernel backend's records say what ran each step (kernel, blas, library, loop);
    ``steps``: a loop's iterations; ``within``: a loop's body step's (the loop's record,
    the body step's index). Returns the call's seconds in its steps."""
    total = 0.0
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
        row.samples.append(seconds)
        row.bytes += moved
        row.steps += (rest[1] if len(rest) > 1 else None) or 0
        total += seconds  # a loop's own record leaves its body steps' time to theirs
    return total


def _where(node, default: str) -> str:
    """Where a step ran: a linker may tag nodes it ran elsewhere (``tag["device"]``)."""
    return node.tag.get("device", default)


def _add_whole_call(linker, seconds: float, rows: dict) -> None:
    row = rows.setdefault(0, ProfileRow("whole call", "all steps", linker.name))
    row.calls += 1
    row.seconds += seconds
    row.samples.append(seconds)


def _whole_call_note(linker) -> str:
    return f"backend {linker.name!r} has no per-step timing: the whole call is timed as one row"


PLACES = {
    "kernel": "generated C on the CPU",
    "blas": "BLAS",
    "view": "view (C)",
    "library": "NumPy",  # a NumPy step: an op without a kernel, or one the plan calls (padding)
    "loop": "loop (own time; its body steps: rows k/i)",
}


#: the same, of a device backend's steps (``language``: its kernels' dialect)
DEVICE_PLACES = {
    "kernel": "{language} kernel on the device",
    "view": "view on the device",
    "library": "NumPy on the host",
    "blas": "NumPy on the host",
}


def _placement_note(kernels) -> str:
    """Where the steps of a kernel backend run (from ``f.kernels``), e.g. C vs NumPy."""
    if not kernels:
        return ""
    counts: dict[str, int] = {}
    for step in kernels:
        kind = getattr(step, "kind", "step")
        language = getattr(step, "language", "C")
        if language != "C":  # a device backend's steps
            kind = DEVICE_PLACES.get(kind, "{kind}").format(language=language, kind=kind)
        counts[kind] = counts.get(kind, 0) + 1
    parts = [f"{n} × {PLACES.get(kind, kind)}" for kind, n in counts.items()]
    return "where the steps run: " + ", ".join(parts)


def profile_rows_html(profile: Profile) -> str:
    """The sorted table, one row per node, with an inline share bar."""
    whole = profile.steps_median()
    body = "".join(_row_html(profile, r, whole) for r in profile.rows)
    return (
        '<table class="symnb-table"><thead><tr><th>node</th><th>op</th><th>where</th>'
        "<th>calls</th><th>median µs</th><th>IQR µs</th><th>share</th><th>bytes/call</th></tr>"
        f"</thead><tbody>{body}</tbody></table>"
    )


def _row_html(profile: Profile, r: ProfileRow, whole: float) -> str:
    share = profile.share(r, whole)
    low, high = r.spread
    bar = f'<div class="symnb-share" style="width:{share * 100:.1f}%"></div>'
    return (
        f"<tr><td>{escape(r.label)}</td><td><code>{escape(r.op)}</code></td>"
        f"<td>{escape(r.where)}</td><td>{r.calls}</td><td>{r.median * 1e6:.1f}</td>"
        f"<td>{low * 1e6:.1f}–{high * 1e6:.1f}</td>"
        f'<td style="min-width:90px">{share:.1%}{bar}</td><td>{r.bytes_per_call:,}</td></tr>'
    )


def profile_html(profile) -> str:
    notes = "".join(f'<div class="symnb-note">{escape(n)}</div>' for n in profile.notes)
    return (
        f'{STYLE}<div class="symnb-card"><h4>{escape(profile.headline())}</h4>{notes}'
        f'<div class="symnb-chart">{profile.chart_svg()}</div>'
        f"{profile_rows_html(profile)}</div>"
    )
