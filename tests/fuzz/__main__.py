"""``make fuzz``: draw random graphs for ``FUZZ_SECONDS`` (default 60) and report disagreements.

Unlike the test in ``make test``, the seed is new each run and a failing batch does not stop
the run: each program of the batch is judged alone, so the report names the programs that
disagree, one per failure. Exit status 1 when any did.

    FUZZ_SECONDS=600 make fuzz      # or: python -m tests.fuzz --seconds 600
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import symnb as sn
from tests.fuzz.graphs import Outcome, every_backend, judge, programs

BATCH = 12


def _run_for(seconds: float, outcome: Outcome, failures: list) -> None:
    deadline = time.monotonic() + seconds

    @settings(
        max_examples=10**9,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(programs(), min_size=BATCH, max_size=BATCH))
    def batch_agrees(batch):
        if time.monotonic() > deadline:
            raise _TimeUp
        try:
            judge(batch, every_backend(), outcome=outcome)
        except _TimeUp:
            raise
        except Exception:
            failures.extend(_isolated(batch))

    try:
        batch_agrees()
    except _TimeUp:
        pass


def _isolated(batch) -> list[str]:
    """Each program of a failing batch judged alone: what each failure says."""
    found = []
    for program in batch:
        try:
            judge([program], every_backend())
        except AssertionError as exc:
            found.append(str(exc))
        except Exception as exc:
            found.append(f"{type(exc).__name__} on {program.describe()}: {exc}")
    return found


class _TimeUp(Exception):
    """Raised inside the hypothesis test when the time is spent (it ends the run)."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    default = float(os.environ.get("FUZZ_SECONDS", "60"))
    parser.add_argument("--seconds", type=float, default=default)
    args = parser.parse_args(argv)
    sn.config.compiledir = sn.config.compiledir or tempfile.mkdtemp(prefix="symnb-fuzz-")
    outcome, failures, start = Outcome(), [], time.monotonic()
    _run_for(args.seconds, outcome, failures)
    spent = time.monotonic() - start
    for failure in dict.fromkeys(failures):
        print(failure[:4000], "\n")
    for reason, count in outcome.reasons.most_common(8):
        print(f"  refused {count}x: {reason}")
    print(
        f"fuzz: {outcome.graphs} graphs compared on {outcome.compares} configurations in "
        f"{spent:.0f} s ({outcome.refused} refused by the reference); "
        f"{len(set(failures))} disagreements"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
