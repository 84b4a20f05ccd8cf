"""The per-module table of a mutmut run: ``python -m tests.mutation_scores [mutants dir]``.

``make mutate`` prints it after ``mutmut run``. It reads the ``.meta`` files mutmut leaves
next to each mutated module and counts only the mutants that were run: a run limited to
some mutants by name (the gradient rules of ``symnb/ops/linalg.py``) leaves the others
unchecked, and they are no part of the score. A timeout counts as killed (the tests did not
pass); the survivors, and mutants no test reached, are listed by name for
``mutmut show NAME``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

# mutmut's exit codes (mutmut/stats.py): what a mutant run ended with.
KILLED = {1, 3, 24, -24, 36, 152, 255, -9, -11}
SURVIVED = {0}
NO_TESTS = {5, 33}


def outcome(exit_code) -> str | None:
    """killed / survived / no tests, or None for a mutant that was not run."""
    if exit_code is None:
        return None
    if exit_code in SURVIVED:
        return "survived"
    if exit_code in NO_TESTS:
        return "no tests"
    return "killed" if exit_code in KILLED else "other"


def module_outcomes(meta: Path) -> dict[str, str]:
    """{mutant name: outcome} for the mutants of one module that were run."""
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    found = {name: outcome(code) for name, code in codes.items()}
    return {name: what for name, what in found.items() if what is not None}


def table(root: Path) -> list[str]:
    """Markdown rows, one per module with mutants run, then the names that were not killed."""
    rows = [
        "| module | mutants | killed | survived | no tests | score |",
        "|---|---|---|---|---|---|",
    ]
    left = []
    for meta in sorted(root.rglob("*.py.meta")):
        results = module_outcomes(meta)
        if not results:
            continue
        counts = Counter(results.values())
        module = meta.relative_to(root).as_posix().removesuffix(".meta")
        score = 100 * counts["killed"] / len(results)
        rows.append(
            f"| `{module}` | {len(results)} | {counts['killed']} | {counts['survived']} "
            f"| {counts['no tests']} | {score:.0f}% |"
        )
        left += [f"{what}: {name}" for name, what in sorted(results.items()) if what != "killed"]
    return rows + [""] + left


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "mutants")
    if not root.is_dir():
        print(f"no {root}/ here: run `make mutate` first", file=sys.stderr)
        return 1
    print("\n".join(table(root)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
