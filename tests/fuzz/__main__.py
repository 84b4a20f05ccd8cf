"""``make fuzz``: draw random graphs for ``FUZZ_SECONDS`` (default 60) and report disagreements.

Unlike the test in ``make test``, the seed is new each run (printed at the end; ``--seed``
draws a run's programs again) and a failing batch does not stop the run: each program of the
batch is judged alone, so the report names the programs that disagree, one per failure. Each
batch is judged on every configuration, with each step's NumPy check and the gradient mode
(tests/fuzz/gradients.py). Exit status 1 when any program disagreed.

    FUZZ_SECONDS=600 make fuzz      # or: python -m tests.fuzz --seconds 600
    python -m tests.fuzz --seconds 300 --seed 7 --steps 10 --empty

``FUZZ_STEPS``, ``FUZZ_EMPTY=1`` and ``FUZZ_BIG=1`` set ``--steps``, ``--empty`` and
``--big`` for ``make fuzz``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import symnb as sn
from tests.fuzz.gradients import judge_gradients
from tests.fuzz.graphs import (
    BIG_SHAPES,
    EMPTY_SHAPES,
    SHAPES,
    Outcome,
    every_backend,
    judge,
    programs,
)

BATCH = 12


def judge_all(batch, outcome: Outcome | None = None) -> None:
    """Outputs, NumPy checks and gradients of a batch on every configuration this machine runs."""
    outcome = outcome if outcome is not None else Outcome()
    kept = judge(batch, every_backend(), outcome=outcome)
    judge_gradients(kept, every_backend(), outcome)


def _run_for(args, outcome: Outcome, failures: list) -> None:
    deadline = time.monotonic() + args.seconds
    shapes = BIG_SHAPES if args.big else SHAPES
    shapes = shapes + EMPTY_SHAPES if args.empty else shapes
    drawn = programs(max_steps=args.steps, shapes=shapes)

    @seed(args.seed)
    @settings(
        max_examples=10**9,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(drawn, min_size=BATCH, max_size=BATCH))
    def batch_agrees(batch):
        if time.monotonic() > deadline:
            raise _TimeUp
        try:
            judge_all(batch, outcome)
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
            judge_all([program])
        except AssertionError as exc:
            found.append(str(exc))
        except Exception as exc:
            found.append(f"{type(exc).__name__} on {program.describe()}: {exc}")
    return found


class _TimeUp(Exception):
    """Raised inside the hypothesis test when the time is spent (it ends the run)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fuzz",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    env = os.environ.get
    parser.add_argument("--seconds", type=float, default=float(env("FUZZ_SECONDS", "60")))
    parser.add_argument("--seed", type=int, help="draw the programs of an earlier run again")
    parser.add_argument(
        "--steps", type=int, default=int(env("FUZZ_STEPS", "6")), help="most steps a program has"
    )
    parser.add_argument(
        "--empty",
        action="store_true",
        default=bool(env("FUZZ_EMPTY")),
        help="leaves without elements too: (0, 4), (3, 0), (0,)",
    )
    parser.add_argument(
        "--big",
        action="store_true",
        default=bool(env("FUZZ_BIG")),
        help="leaves with a last axis of 1031 (kernels' blocks and vector remainders)",
    )
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.seed is None:
        args.seed = random.randrange(2**32)
    sn.config.compiledir = sn.config.compiledir or tempfile.mkdtemp(prefix="symnb-fuzz-")
    outcome, failures, start = Outcome(), [], time.monotonic()
    _run_for(args, outcome, failures)
    spent = time.monotonic() - start
    for failure in dict.fromkeys(failures):
        print(failure[:4000], "\n")
    for reason, count in outcome.reasons.most_common(8):
        print(f"  refused {count}x: {reason}")
    for reason, count in outcome.grad_reasons.most_common(8):
        print(f"  gradient refused {count}x: {reason}")
    for mismatch in outcome.fd_mismatches[:20]:
        print(mismatch[:3000], "\n")
    print(
        f"fuzz: {outcome.graphs} graphs compared on {outcome.compares} configurations in "
        f"{spent:.0f} s ({outcome.refused} refused by the reference); {outcome.numpy_checks} "
        f"steps checked against NumPy; {outcome.grad_graphs} gradients compared "
        f"({outcome.grad_refused} refused by the reference), {outcome.fd_checked} spot-checked "
        f"by finite differences ({len(outcome.fd_mismatches)} differ, printed above); "
        f"{outcome.excused} disagreements of 'fast' excused by its rules outside the domain; "
        f"{len(set(failures))} disagreements (--seed {args.seed})"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
