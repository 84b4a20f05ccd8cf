"""Where a symnb call spends its time: symnb's own per-step profile, and a short cProfile
listing of the Python around it."""

from __future__ import annotations

import cProfile
import os
import pstats

TOP = 12


def profile_calls(run, calls: int) -> str:
    """The functions with the most own time over ``calls`` calls of ``run``, one per line."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        run()
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    rows = sorted(stats.items(), key=_own_time, reverse=True)[:TOP]
    lines = [f"{'own s/call':>11} {'calls/call':>10}  function"]
    lines += [_line(key, value, calls) for key, value in rows]
    return "\n".join(lines)


def own_profile(run, repeat: int = 50) -> str:
    """The library's own per-step profile of the function behind ``run``, where the peer
    attached one (``run.profiled = (function, args)``); empty otherwise."""
    attached = getattr(run, "profiled", None)
    if attached is None:
        return ""
    function, args = attached
    return function.profile(*args, repeat=repeat).text()


def _own_time(item) -> float:
    return item[1][2]


def _line(key, value, calls: int) -> str:
    filename, lineno, function = key
    where = f"{os.path.basename(filename)}:{lineno}" if lineno else filename
    own_s, count = value[2] / calls, value[1] / calls
    return f"{own_s:11.3g} {count:10.4g}  {function} ({where})"
