"""The benchmark harness runs end to end in a tiny mode, and refuses to time wrong answers."""

import json
import weakref

import numpy as np
import pytest

from benchmarks import compile_time, numpy_impl, report, timing
from benchmarks.check import Skip, compare, relative_error
from benchmarks.cli import main
from benchmarks.peers.numpy_peer import Peer as NumpyPeer
from benchmarks.peers.symnb_peer import Peer as SymnbPeer
from benchmarks.runner import Result, _profile_symnb, rounds_for
from benchmarks.worker import Worker
from benchmarks.workloads import BY_KEY, comparable, make_inputs, reference, select
from tests.helpers import run_python


def test_tiny_run_times_numpy_and_symnb_py(tmp_path):
    main(["--size", "tiny", "--only", "W4", "--peers", "numpy,symnb-py", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "latest.json").read_text())
    rows = {row["peer"]: row for row in saved["results"]}
    assert set(rows) == {"numpy", "symnb-py"}
    for row in rows.values():
        assert row["status"] == "ok", row["note"]
        assert row["median_s"] > 0 and len(row["samples_s"]) == 2
    assert rows["symnb-py"]["vs_symnb"] == pytest.approx(1.0)
    assert min(row["vs_fastest"] for row in rows.values()) == pytest.approx(1.0)
    assert saved["run"]["machine"]["cores"] >= 1
    assert "| W4 | numpy |" in (tmp_path / "latest.md").read_text()


class OffByOnePercent(NumpyPeer):
    """A peer whose W4 answer is 1% too large."""

    def build_w4(self, v):
        def run():
            return [(v["a"] * v["b"] + 1) * 1.01]

        return run


class MissingOp(NumpyPeer):
    def build_w4(self, v):
        raise Skip("sn.something not available")


def prepared(peer) -> Worker:
    worker = Worker("numpy")
    worker.peer = peer
    return worker


def test_wrong_answer_is_reported_and_not_timed():
    worker = prepared(OffByOnePercent())
    reply = worker.handle(
        {"cmd": "setup", "args": {"workload": "W4", "mode": "tiny", "target_s": 0.001}}
    )
    assert reply["status"] == "WRONG"
    assert "off by 0.01" in reply["note"]
    assert worker.handle({"cmd": "time"})["status"] == "error"


def test_correct_answer_is_timed():
    worker = prepared(NumpyPeer())
    setup = {"workload": "W4", "mode": "tiny", "target_s": 0.001}
    assert worker.handle({"cmd": "setup", "args": setup})["status"] == "ok"
    seconds = worker.handle({"cmd": "time", "args": {"samples": 3}})["seconds"]
    assert len(seconds) == 3 and all(s > 0 for s in seconds)


def test_missing_op_is_a_skip_with_its_reason():
    worker = prepared(MissingOp())
    setup = {"workload": "W4", "mode": "tiny", "target_s": 0.001}
    reply = worker.handle({"cmd": "setup", "args": setup})
    assert reply == {"status": "skipped", "note": "sn.something not available"}


def test_training_step_check_sees_a_wrong_gradient():
    """Parameters are compared as their change, so a step of the wrong size is caught."""
    spec = BY_KEY["W3"]
    inputs = make_inputs(spec, "tiny")
    expected = comparable(spec, inputs, reference(spec, inputs))
    for lr, verdict in ((0.1, None), (0.1 * 1.01, "output 1")):
        params = [inputs[k].copy() for k in spec.params]
        loss = numpy_impl.mlp_step(params, inputs["x"], inputs["labels"], lr)
        problem = compare(comparable(spec, inputs, [loss, *params]), expected, "float32")
        assert (problem or "").startswith(verdict or "")
        assert (problem is None) == (verdict is None)


def test_relative_error_of_nan_or_wrong_shape_is_infinite():
    assert relative_error(np.array([np.nan]), np.array([1.0])) == np.inf
    assert relative_error(np.ones(3), np.ones(4)) == np.inf
    assert relative_error(np.array([1.5, 2.0]), np.array([1.0, 2.0])) == pytest.approx(0.25)


def test_ratios_and_readme_section(tmp_path):
    rows = [
        Result("W1b", "floor, 1 thread", "floor", samples=[0.01]),
        Result("W1b", "numpy", "ok", samples=[0.04, 0.05, 0.06]),
        Result("W1b", "symnb-py", "ok", samples=[0.02]),
        Result("W1b", "jax", "WRONG", "off"),
    ]
    report.add_ratios(rows)
    assert rows[1].extra == pytest.approx({"vs_symnb": 2.5, "vs_fastest": 2.5, "vs_floor": 5.0})
    assert "vs_symnb" not in rows[0].extra and "vs_symnb" not in rows[3].extra
    readme = tmp_path / "README.md"
    readme.write_text("# title\n\nintro\n")
    run = {"started": "now", "machine_line": "cpu"}
    report.update_readme(readme, run, rows)
    report.update_readme(readme, run, rows)
    text = readme.read_text()
    assert text.startswith("# title\n\nintro\n\n## Benchmarks")
    assert text.count("## Benchmarks") == 1 and "WRONG" in text and "50 ms (2.50x)" in text


def test_only_selects_by_key_or_family():
    assert [w.key for w in select("W1,W7-abs")] == ["W1-f64", "W1-f32", "W7-abs"]
    assert [w.key for w in select("W1b")] == ["W1b"]
    with pytest.raises(SystemExit, match="W42"):
        select("W42")


def test_slow_rows_take_fewer_rounds_but_at_least_three():
    assert rounds_for(0.05, rounds=7, budget_s=8.0) == 7
    assert rounds_for(2.0, rounds=7, budget_s=8.0) == 4
    assert rounds_for(5.0, rounds=7, budget_s=8.0) == 3
    assert rounds_for(5.0, rounds=2, budget_s=0.5) == 2


class Float64Loss(NumpyPeer):
    """A peer whose W2 values are right but whose outputs are float64 (float32 inputs)."""

    def build_w2(self, v):
        def run():
            loss, grad = numpy_impl.softmax_xent(v["logits"].astype(np.float64), v["labels"])
            return [loss, grad]

        return run


def test_an_output_of_the_wrong_dtype_is_wrong():
    reply = prepared(Float64Loss()).handle(
        {"cmd": "setup", "args": {"workload": "W2", "mode": "tiny", "target_s": 0.001}}
    )
    assert reply == {
        "status": "WRONG",
        "note": "output 0 has dtype float64, the reference's is float32",
    }


def test_each_call_runs_while_the_previous_results_are_still_held():
    """As in ``out = f(x)``: a library cannot recycle the buffer the caller still holds."""
    alive_during_call, previous = [], []

    def run():
        alive_during_call.append(bool(previous) and previous[-1]() is not None)
        result = np.ones(3)
        previous.append(weakref.ref(result))
        return [result]

    kept = timing.Kept()
    timing.batch_seconds(run, 3, kept)
    timing.batch_seconds(run, 2, kept)
    assert alive_during_call == [False, True, True, True, True]


def test_out_rows_are_compared_with_the_fastest_but_never_are_it():
    rows = [
        Result("W1b", "numpy (out=)", "ok", samples=[0.01, 0.012, 0.009]),
        Result("W1b", "numpy", "ok", samples=[0.04]),
        Result("W1b", "symnb-c", "ok", samples=[0.02]),
    ]
    report.add_ratios(rows)
    assert rows[0].extra["vs_fastest"] == pytest.approx(0.5)
    assert rows[2].extra["vs_fastest"] == pytest.approx(1.0)
    assert "numpy (out=)" not in report.summary_matrix(rows)
    assert report.spread(rows[0]) == "-10%/+20%" and report.spread(rows[1]) == "1 sample"
    rows[0].extra["load"] = 3.25
    assert report.row_cells(rows[0])[2:8] == ["10 ms", "9 ms", "-10%/+20%", "0.50", "0.50", "3.2"]


def test_w5_probe_times_each_phase_from_the_import():
    reply = compile_time.probe("numpy", "/nonexistent-cache", "tiny")
    assert reply["status"] == "ok"
    assert reply["seconds"] == pytest.approx(reply["runtime_s"] + reply["compile_s"])
    assert all(reply[phase] >= 0 for phase in compile_time.PHASES)


def test_w5_counts_the_first_import_of_symnbs_backend():
    """After ``import symnb`` (the untimed import phase) the C backend is not loaded yet: its
    first import falls in W5's timed window (runtime start), as it does for a user. cffi,
    the Python executor's, is loaded by neither (runner.c runs the step)."""
    script = (
        "import sys\n"
        "from benchmarks import peers\n"
        "peer = peers.load('symnb-c')\n"
        "before = {'symnb.backends.c.linker', 'cffi'} & set(sys.modules)\n"
        "peer.start_runtime()\n"
        "after = {'symnb.backends.c.linker', 'cffi'} & set(sys.modules)\n"
        "print(sorted(before), sorted(after))\n"
    )
    assert run_python(script).split("\n")[0] == "[] ['symnb.backends.c.linker']"


def test_w5_gives_every_peer_the_same_repeats_and_a_phase_table(monkeypatch):
    monkeypatch.setitem(compile_time.REPEATS, "tiny", 2)
    rows = compile_time.measure(["numpy", "numpy (out=)"], "tiny", lambda message: None)
    assert [(r.workload, r.peer, r.status, len(r.samples)) for r in rows] == [
        ("W5-cold", "numpy", "ok", 2),
        ("W5-warm", "numpy", "ok", 2),
    ]
    assert all(len(r.extra["import_s"]) == 2 and "load" in r.extra for r in rows)
    table = report.w5_section(rows)
    assert "| import | runtime start | compile + first call | W5 time | Spread | Repeats |" in table
    assert table.count("| numpy |") == 2 and "| 2 |" in table
    assert "import " in report.row_cells(rows[0])[-1]


def test_numexpr_calls_re_evaluate_after_building():
    ne = pytest.importorskip("numexpr")
    from benchmarks.peers.numexpr_peer import Peer as NumexprPeer

    inputs = make_inputs(BY_KEY["W1b"], "tiny")
    for peer in (NumexprPeer(), NumexprPeer(out=True)):
        run = peer.build("W1b", inputs)
        first = run()[0]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ne, "evaluate", None)  # a call would raise TypeError
            again = run()[0]
        np.testing.assert_allclose(again, numpy_impl.axpy_chain(*(inputs[k] for k in "xyzw")))
        assert (again is first) == peer.out  # out=: the same buffer every call


def test_jax_training_steps_donate_their_parameters():
    pytest.importorskip("jax")
    from benchmarks.peers.jax_peer import Peer as JaxPeer

    run = JaxPeer().build("W3s", make_inputs(BY_KEY["W3s"], "tiny"))
    before = run()[1:]
    after = run()[1:]
    assert all(p.is_deleted() for p in before) and not any(p.is_deleted() for p in after)


def test_symnb_profile_has_its_own_steps_and_the_python_around_them():
    worker = prepared(SymnbPeer("py"))
    setup = {"workload": "W3s", "mode": "tiny", "target_s": 0.001}
    assert worker.handle({"cmd": "setup", "args": setup})["status"] == "ok"
    profile = worker.handle({"cmd": "profile"})["profile"]
    steps, calls = profile.split("\n\n", 1)
    assert "gemm" in steps or "matmul" in steps  # f.profile(): one row per step
    assert "own s/call" in calls and "execute.py" in calls  # cProfile: the executor


def test_profiled_workloads_are_profiled_even_when_symnb_is_fastest():
    class Asked:
        def ask(self, cmd, timeout):
            assert cmd == "profile"
            return {"status": "ok", "profile": "steps"}

    ours, theirs = Result("W3s", "symnb-c", "ok"), Result("W3s", "numpy", "ok")
    ours.samples, theirs.samples = [1.0], [2.0]
    _profile_symnb({"symnb-c": Asked()}, [ours, theirs], always=False)
    assert "profile" not in ours.extra
    _profile_symnb({"symnb-c": Asked()}, [ours, theirs], always=True)
    assert ours.extra["profile"] == "steps"
    assert all(BY_KEY[k].profiled for k in ("W3s", "W8", "W8b"))


def test_side_by_side_alternates_two_peers_in_one_process(capsys):
    """benchmarks.side_by_side: a line per set with both medians, their ratio and minimums."""
    from benchmarks import side_by_side

    side_by_side.main(["W3s", "symnb-py", "numpy", "--steps", "3", "--sets", "2"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("W3s: symnb-py ") and ", numpy " in line
        ratio = float(line.split("ratio ")[1].split(";")[0])
        assert ratio > 0 and "minimums" in line


def test_the_machine_line_shows_the_blas_kernels_and_the_environment_choosing_them(monkeypatch):
    """``OPENBLAS_CORETYPE=Haswell`` halves NumPy's float32 products on an AVX-512 CPU (for
    symnb and PyTensor, not JAX or torch): a result must say it was measured so."""
    from benchmarks import machine

    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    monkeypatch.delenv("OPENBLAS_L2_SIZE", raising=False)
    info = machine.describe({"numpy": np.__version__})
    info["blas"] = [{"api": "openblas", "version": "0.3.31", "threads": 2, "kernels": "Haswell"}]
    line = machine.line(info)
    assert "BLAS: openblas 0.3.31 (Haswell kernels) x2" in line
    assert "(environment: OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=Haswell)" in line
