"""The shape-bug suite: every program under ``programs/`` is run by ``symnb check``'s engine.

A program declares what it must produce: ``# expect: clean`` in its header, or a comment
``# expect: ShapeError`` (several classes: comma-separated) on each line that must produce that
error or warning. A program passes when it yields exactly those diagnostics at those lines,
and nothing else (no other diagnostic, no crash).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from symnb.shapes.checker import Report, check_path

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))
_MARK = re.compile(r"#\s*expect:\s*([\w, ]+)")


def expected(path: Path) -> set[tuple[str, int]]:
    """(class name, line) for every marker; empty for a clean program."""
    found = set()
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        match = _MARK.search(line)
        if match and match.group(1).strip() != "clean":
            found |= {(name.strip(), lineno) for name in match.group(1).split(",")}
    return found


def declared_clean(path: Path) -> bool:
    return "# expect: clean" in path.read_text()


@functools.cache
def report_of(path: Path) -> Report:
    return check_path(str(path))


def produced(report: Report) -> set[tuple[str, int]]:
    return {(d.category, d.lineno) for d in report.of("error", "warning")}


def test_suite_is_large_and_every_program_declares_its_outcome():
    bugs = [p for p in PROGRAMS if expected(p)]
    clean = [p for p in PROGRAMS if declared_clean(p)]
    assert len(PROGRAMS) >= 40
    assert len(bugs) >= 25 and len(clean) >= 15
    assert {p for p in bugs} | {p for p in clean} == set(PROGRAMS)
    assert not {p for p in bugs} & {p for p in clean}


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_yields_exactly_the_declared_diagnostics(path):
    report = report_of(path)
    crashes = report.of("failure", "not checked")
    assert not crashes, "\n".join(d.format() for d in crashes)
    assert produced(report) == expected(path), report.format()


def test_detection_and_false_positive_counts(capsys):
    """The numbers for the issue's closing note (run with -s to see them)."""
    bugs = [p for p in PROGRAMS if expected(p)]
    clean = [p for p in PROGRAMS if declared_clean(p)]
    detected = sum(expected(p) <= produced(report_of(p)) for p in bugs)
    extra = sum(len(produced(report_of(p)) - expected(p)) for p in bugs)
    false_positive_programs = sum(bool(produced(report_of(p))) for p in clean)
    with capsys.disabled():
        print(
            f"\nshape suite: {detected}/{len(bugs)} bug programs detected at the expected line; "
            f"{false_positive_programs}/{len(clean)} clean programs with a diagnostic; "
            f"{extra} unexpected diagnostics in bug programs"
        )
    assert detected == len(bugs) and false_positive_programs == 0 and extra == 0
