"""The loaded mode (a background spinner, one-thread twins) and the A/B mode (``--baseline``)."""

import json
import os
import subprocess
import sys
import time

import pytest

from benchmarks import baseline, cli, load, peers, report, runner
from benchmarks.runner import Result

HAS_AFFINITY = hasattr(os, "sched_getaffinity")


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def wait_gone(pid: int, limit_s: float = 20.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def test_spinner_runs_in_the_block_and_is_stopped_after_it():
    with load.Spinner() as spinner:
        proc = spinner.proc
        assert spinner.running and proc.poll() is None
        if HAS_AFFINITY:
            assert spinner.pinned and os.sched_getaffinity(proc.pid) == {load.spinner_core()}
    assert proc.poll() is not None and not spinner.running and spinner.proc is None
    spinner.stop()  # a second stop is harmless


def test_spinner_is_stopped_when_the_block_raises():
    with pytest.raises(KeyboardInterrupt):
        with load.Spinner() as spinner:
            proc = spinner.proc
            raise KeyboardInterrupt
    assert proc.poll() is not None


def test_spinner_ends_by_itself_when_its_parent_is_killed():
    if not os.path.exists("/proc/self/stat"):
        pytest.skip("needs /proc to see the orphan")
    code = (
        "import os, signal, sys\n"
        "from benchmarks import load\n"
        "spinner = load.Spinner().start()\n"
        "print(spinner.proc.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"  # no finally, no atexit
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=runner.REPO,
        env=runner.worker_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    pid = int(done.stdout.split()[0])
    assert done.returncode == -9
    assert wait_gone(pid), f"spinner {pid} outlived its parent"


def test_condition_spins_only_when_loaded():
    with load.condition(load.IDLE) as background:
        assert background == ""
    with load.condition(load.LOADED) as background:
        assert background.startswith("one process spinning")


def test_one_thread_env_sets_every_pool_and_keeps_the_users_xla_flags():
    env = load.one_thread_env({"XLA_FLAGS": "--xla_dump_to=/tmp/x", "OMP_NUM_THREADS": "8"})
    assert (
        env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["NUMEXPR_NUM_THREADS"] == "1"
    )
    assert env["XLA_FLAGS"] == "--xla_dump_to=/tmp/x --xla_cpu_multi_thread_eigen=false"
    assert load.one_thread_env(env)["XLA_FLAGS"] == env["XLA_FLAGS"]
    assert load.CORE_VARIABLE not in env and load.one_thread_env({}, 1)[load.CORE_VARIABLE] == "1"


def test_loaded_mode_times_idle_and_loaded_rows_and_stops_every_spinner(tmp_path, monkeypatch):
    spinners = []

    class Recorded(load.Spinner):
        def start(self):
            spinners.append(self)
            return super().start()

    monkeypatch.setattr(load, "Spinner", Recorded)
    cli.main(
        [
            "--size",
            "tiny",
            "--only",
            "W4",
            "--peers",
            "numpy",
            "--loaded",
            "--one-thread",
            "--rounds",
            "2",
            "--out",
            str(tmp_path),
        ]
    )
    saved = json.loads((tmp_path / "latest.json").read_text())
    rows = {(r["workload"], r["condition"], r["peer"]): r for r in saved["results"]}
    keys = {key for key, _, _ in rows}
    assert keys == {"W4", "W4-float", "W4-npscalar"}
    for key in keys:
        for condition in ("idle", "loaded"):
            for peer in ("numpy", "numpy [1 thread]"):
                row = rows[key, condition, peer]
                assert row["status"] == "ok", row["note"]
                assert len(row["samples_s"]) == 2
                assert row["min_s"] == min(row["samples_s"]) <= row["median_s"]
                assert ("background" in row) == (condition == "loaded")
    assert len(spinners) == 3 and all(s.proc is None for s in spinners)
    threads = saved["run"]["threads"]
    assert threads["numpy [1 thread]"]["OMP_NUM_THREADS"] == "1"
    if HAS_AFFINITY:
        assert threads["numpy [1 thread]"]["cores"] == 1
    text = (tmp_path / "latest.md").read_text()
    assert "| W4 (loaded) | numpy | " in text and "| W4 (idle) | numpy [1 thread] | " in text
    assert "beside one process spinning" in text


def timed(key, peer, samples, condition=""):
    return Result(key, peer, "ok", samples=samples, condition=condition)


def test_conditions_are_compared_apart_and_twins_are_never_the_fastest():
    rows = [
        timed("W2", "numpy", [4.0], "idle"),
        timed("W2", "symnb-c", [2.0], "idle"),
        timed("W2", "symnb-c [1 thread]", [1.0], "idle"),
        timed("W2", "numpy", [8.0], "loaded"),
        timed("W2", "symnb-c", [16.0], "loaded"),
        timed("W2", "symnb-base", [1.0], "loaded"),
    ]
    report.add_ratios(rows)
    assert [r.extra["vs_fastest"] for r in rows] == [2.0, 1.0, 0.5, 1.0, 2.0, 0.125]
    assert [r.extra["vs_symnb"] for r in rows] == [2.0, 1.0, 0.5, 0.5, 1.0, 0.0625]
    matrix = report.summary_matrix(rows)
    assert "| W2 (loaded) | 8 s (1.00x), min 8 s | 16 s (2.00x), min 16 s |" in matrix


def test_threads_section_divides_by_the_own_twin_and_the_fastest_peer():
    rows = [
        timed("W3", "symnb-c", [3.0, 2.0, 5.0], "loaded"),
        timed("W3", "symnb-c [1 thread]", [2.0, 1.0, 2.0], "loaded"),
        timed("W3", "jax", [1.5, 4.0, 6.0], "loaded"),
        timed("W3", "jax [1 thread]", [7.0], "loaded"),
    ]
    section = report.threads_section(rows)
    line = next(row for row in section.splitlines() if row.startswith("| W3 (loaded)"))
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    # medians 3/2 and 3/4; minimums 2/1 and 2/1.5
    assert cells[3] == "**1.50**, **2.00**"
    assert cells[5] == "0.75, **1.33**"
    assert cells[6] == "jax: 7 s, 7 s"
    assert report.threads_section([timed("W3", "symnb-c", [1.0])]) is None


def test_ab_ratios_and_flags():
    tree = baseline.Tree("v1", "0123456789abcdef", None, None, None)
    rows = [
        timed("W2", "symnb-c", [2.0, 3.0, 4.0]),
        timed("W2", "symnb-base", [1.0, 2.0, 2.0]),
        timed("W6", "symnb-c", [1.04, 1.0]),
        timed("W6", "symnb-base", [1.0, 1.0]),
        timed("W6", "numpy", [0.1]),
    ]
    assert baseline.ratios(rows[0], rows[1]) == (1.5, 2.0)
    assert baseline.ratios(rows[2], rows[3]) == pytest.approx((1.02, 1.0))
    section = baseline.ab_section(rows, tree)
    assert "| W2 | symnb-c | 3 s, 2 s | 2 s, 1 s | **1.50** | **2.00** | SLOWER" in section
    assert "| W6 | symnb-c | 1.02 s, 1 s | 1 s, 1 s | 1.02 | 1.00 |  |" in section
    assert section.endswith("Slower than 1.05x the baseline: W2.")
    twins = [timed("W2", "symnb-c [1 thread]", [2.0]), timed("W2", "symnb-base [1 thread]", [1.0])]
    assert baseline.ab_section(rows + twins, tree).endswith("baseline: W2, W2 [1 thread].")
    wrong = Result("W2", "symnb-base", "WRONG", "off")
    assert baseline.ratios(rows[0], wrong) == (None, None)


def test_baseline_defaults_to_symnb_c_and_twins_follow_the_peers():
    assert cli.chosen_peers(None, "HEAD") == ["symnb-c", "symnb-base"]
    assert cli.chosen_peers("numpy,symnb-c", "HEAD", "all") == [
        "numpy",
        "symnb-c",
        "symnb-base",
        "numpy [1 thread]",
        "symnb-c [1 thread]",
        "symnb-base [1 thread]",
    ]
    assert cli.chosen_peers("numpy,numpy (out=)", None, "all")[-1] == "numpy [1 thread]"
    with pytest.raises(SystemExit, match="symnb-base"):
        cli.chosen_peers("symnb-base")
    with pytest.raises(SystemExit, match="jax"):
        cli.chosen_peers("numpy", None, "jax")
    assert peers.load("symnb-base [1 thread]").name == "symnb-base"


def git(repo, *args):
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


FAKE_SYMNB = """\
__version__ = "fake-base-{marker}"


class backends:
    @staticmethod
    def get_linker(name):
        return None
"""


@pytest.fixture
def fake_repo(tmp_path):
    """A git repository whose symnb is a stub with a version marker, at two commits."""
    repo = tmp_path / "repo"
    (repo / "symnb").mkdir(parents=True)
    git(repo, "init", "-q")
    for marker in ("one", "two"):
        (repo / "symnb" / "__init__.py").write_text(FAKE_SYMNB.format(marker=marker))
        git(repo, "add", "symnb")
        git(repo, "commit", "-q", "-m", marker)
    return repo


def test_the_baseline_worker_imports_symnb_of_the_other_tree(fake_repo, tmp_path):
    tree = baseline.export(fake_repo, "HEAD~1", parent=str(tmp_path))
    try:
        assert (tree.path / "symnb" / "__init__.py").exists()
        assert not (tree.path / "benchmarks").exists()
        env = tree.env(runner.worker_env())
        assert env["SYMNB_COMPILEDIR"] == str(tree.compiledir) and tree.compiledir.is_dir()
        assert env["PYTHONPATH"].split(os.pathsep)[:2] == [str(tree.path), str(runner.REPO)]
        with open(tmp_path / "log", "w") as log:
            live, hello = runner.start_workers([peers.BASE_PEER], log, tree)
            for worker in live.values():
                worker.close()
        assert hello[peers.BASE_PEER]["status"] == "ok", hello
        version = hello[peers.BASE_PEER]["version"]
        assert version.startswith("fake-base-one (backend c") and str(tree.path) in version
    finally:
        tree.remove()
    assert not tree.root.exists()


def test_a_worker_of_this_tree_does_not_see_the_baseline(fake_repo, tmp_path):
    tree = baseline.export(fake_repo, "HEAD", parent=str(tmp_path))
    try:
        with open(tmp_path / "log", "w") as log:
            live, hello = runner.start_workers(["symnb-py"], log, tree)
            for worker in live.values():
                worker.close()
        assert "fake-base" not in hello["symnb-py"]["version"]
    finally:
        tree.remove()


def test_baseline_export_names_a_bad_revision(fake_repo, tmp_path):
    with pytest.raises(SystemExit, match="no-such-rev"):
        baseline.export(fake_repo, "no-such-rev", parent=str(tmp_path))
    with pytest.raises(ValueError, match="--baseline"):
        runner.WorkerProcess(peers.BASE_PEER, None)


def test_readme_table_has_a_row_per_condition_with_the_minimum(tmp_path):
    rows = [
        timed("W2", "numpy", [4.0, 3.0, 5.0], "idle"),
        timed("W2", "numpy", [8.0, 6.0, 9.0], "loaded"),
    ]
    report.add_ratios(rows)
    readme = tmp_path / "README.md"
    readme.write_text("# title\n")
    report.update_readme(
        readme,
        {"started": "now", "machine_line": "cpu", "background": "one process spinning"},
        rows,
    )
    text = readme.read_text()
    assert "| W2 (idle) | 4 s (1.00x), min 3 s |" in text
    assert "| W2 (loaded) | 8 s (1.00x), min 6 s |" in text
    assert "(loaded) beside one process spinning" in text


def test_alternating_rounds_report_both_workers_and_the_policys_share_of_one_thread():
    """``python -m benchmarks.alternating``: two workers by turns, each row with its calls."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.alternating", "2", "0.05", "map+gemm"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert lines[0] == "map+gemm: 2 alternating rounds of 0.05 s"
    for name, line in zip(("policy", "pinned"), lines[1:3]):
        words = line.split()
        assert words[0] == name and words[1] == "median" and int(words[-2]) >= 2
    share = lines[3].rsplit(" ", 1)[1]
    assert lines[3].startswith("  calls of the policy's worker on one thread: ")
    assert share.endswith("%") and 0 <= int(share[:-1]) <= 100
