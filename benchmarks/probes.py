"""A probe is a measurement in a new process that prints one JSON line: W5 (compile_time.py)
and W11 (build_time.py) run each peer that way, so no import or cache is shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from benchmarks.runner import REPO


def run_probe(module: str, args: list[str], env: dict, timeout_s: float) -> dict:
    """``python -m module args...`` in a new process; its JSON reply, or an error row."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", module, *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return {"status": "error", "note": f"probe took over {timeout_s} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "error", "note": f"probe failed: {tail[:300]}"}
    return json.loads(lines[-1])


def reply(measure, *args) -> None:
    """The probe's side: ``measure(*args)`` printed as the one JSON line on stdout, with
    everything the libraries print sent to stderr."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    replies.write(json.dumps(measure(*args)) + "\n")
    replies.flush()
