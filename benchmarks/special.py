"""Workloads that are not timed through the workers: W10 (rewrite time)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from benchmarks.runner import REPO, Result, worker_env

REWRITE_TIMEOUT_S = 300


def rewrite_rows(say) -> tuple[list[Result], list[str]]:
    """W10 runs ``benchmarks/rewrite_time.py`` (the rewrites engineer's) when it exists."""
    if importlib.util.find_spec("benchmarks.rewrite_time") is None:
        note = "skipped: benchmarks/rewrite_time.py does not exist yet"
        return [Result("W10", "symnb", "skipped", note)], []
    say("  W10: python -m benchmarks.rewrite_time")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.rewrite_time"],
            cwd=REPO,
            env=worker_env(),
            capture_output=True,
            text=True,
            timeout=REWRITE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        note = f"benchmarks.rewrite_time ran over {REWRITE_TIMEOUT_S} s"
        return [Result("W10", "symnb", "error", note)], []
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [Result("W10", "symnb", "error", f"rewrite_time failed: {tail[:300]}")], []
    section = "## W10: rewrite time (benchmarks/rewrite_time.py)\n\n```\n"
    section += done.stdout.strip() + "\n```"
    note = "ran benchmarks/rewrite_time.py; its output is printed below the table"
    return [Result("W10", "symnb", "done", note)], [section]
