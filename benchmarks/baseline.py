"""``--baseline REV``: symnb of another commit as one more peer, ``symnb-base``, in the same run.

The commit's ``symnb/`` (and ``pyproject.toml``, where its version is read) is exported with
``git archive`` into a temporary directory; the ``symnb-base`` worker runs there, with that
directory first on its path, so its ``import symnb`` finds the old tree while the harness,
the other workers and ``benchmarks/`` itself stay this tree's. Its compiled code (the C
runner, the kernels) goes to a compile directory of its own (``SYMNB_COMPILEDIR``), so the
two trees never share a cache entry. The report's A/B section divides this tree's
``symnb-c`` by ``symnb-base``, workload by workload (``ab_section``).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks import peers
from benchmarks.report import format_seconds

EXPORTED = ("symnb", "pyproject.toml")
NEW_PEER = "symnb-c"
SLOWER = 1.05  # a new/base ratio above this is flagged (issue 31: "no workload 5% slower")


@dataclass
class Tree:
    """An exported commit: ``path`` holds its ``symnb/``; ``compiledir`` is its own cache."""

    rev: str
    commit: str
    path: Path
    compiledir: Path
    root: Path  # the temporary directory holding both, removed by ``remove``

    def env(self, env: dict) -> dict:
        """``env`` for the baseline's worker: this tree's ``symnb`` first on the path (before
        the harness's repository, which holds ``benchmarks``), its own compile directory."""
        path = [str(self.path), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
        return dict(env, PYTHONPATH=os.pathsep.join(path), SYMNB_COMPILEDIR=str(self.compiledir))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def export(repo: Path, rev: str, parent: str | None = None) -> Tree:
    """Export ``rev`` of the git repository ``repo`` into a new temporary directory."""
    commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()
    root = Path(tempfile.mkdtemp(prefix=f"symnb-base-{commit[:10]}-", dir=parent))
    try:
        present = _git(repo, "ls-tree", "--name-only", commit).decode().split()
        wanted = [name for name in EXPORTED if name in present]
        if "symnb" not in wanted:
            raise SystemExit(f"--baseline {rev}: commit {commit[:10]} has no symnb/ folder")
        archive = _git(repo, "archive", "--format=tar", commit, *wanted)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            _extract(tar, root / "tree")
        (root / "compiledir").mkdir(mode=0o700)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Tree(rev, commit, root / "tree", root / "compiledir", root)


def _extract(tar: tarfile.TarFile, where: Path) -> None:
    try:
        tar.extractall(where, filter="data")
    except TypeError:  # a Python without extraction filters (git's own archive: trusted)
        tar.extractall(where)


def _git(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise SystemExit(f"--baseline: git {' '.join(args)} failed: {message}")
    return done.stdout


def pairs(results: list) -> list[tuple]:
    """(new row, base row) per workload and condition where both were timed."""
    cell = {(r.group, r.peer): r for r in results}
    groups = dict.fromkeys(r.group for r in results)
    out = []
    for group in groups:
        for suffix in ("", peers.ONE_THREAD_SUFFIX):
            new = cell.get((group, NEW_PEER + suffix))
            base = cell.get((group, peers.BASE_PEER + suffix))
            if new and base:
                out.append((new, base))
    return out


def ratios(new, base) -> tuple[float | None, float | None]:
    """new/base of the medians and of the minimums (None where either was not timed)."""
    if not (new.status == base.status == "ok" and new.samples and base.samples):
        return None, None
    return new.median_s / base.median_s, new.min_s / base.min_s


def ab_section(results: list, tree: Tree) -> str | None:
    """The A/B table: this tree's symnb-c against the baseline's, median and minimum."""
    rows = pairs(results)
    if not rows:
        return None
    header = [
        "Workload",
        "Peer",
        "new median, min",
        "base median, min",
        "new/base median",
        "new/base min",
        "Flag",
    ]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    flagged = []
    for new, base in rows:
        median, minimum = ratios(new, base)
        slower = [n for n, r in (("median", median), ("min", minimum)) if r and r > SLOWER]
        if slower:
            flagged.append(
                new.group + (peers.ONE_THREAD_SUFFIX if peers.is_one_thread(new.peer) else "")
            )
        cells = [
            new.group,
            new.peer,
            _pair(new, format_seconds),
            _pair(base, format_seconds),
            _flag(median),
            _flag(minimum),
            f"SLOWER ({', '.join(slower)} > {SLOWER})" if slower else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    verdict = (
        f"Slower than {SLOWER}x the baseline: {', '.join(flagged)}."
        if flagged
        else f"No workload above {SLOWER}x the baseline (median or min)."
    )
    intro = (
        f"## A/B: this tree against {tree.rev} ({tree.commit[:10]})\n\n"
        f"`{NEW_PEER}` (this tree) and `{peers.BASE_PEER}` (symnb of {tree.commit[:10]}, "
        "backend c, its own compile directory) in the same run, alternating round by round. "
        "Ratios are new/base: above 1 is slower."
    )
    return intro + "\n\n" + "\n".join(lines) + "\n\n" + verdict


def _pair(row, fmt) -> str:
    if row.status != "ok" or not row.samples:
        return row.status
    return f"{fmt(row.median_s)}, {fmt(row.min_s)}"


def _flag(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    return f"**{ratio:.2f}**" if ratio > SLOWER else f"{ratio:.2f}"
