"""``symnb check`` on a script and on a notebook with known bugs: what it prints, its exit code."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
from symnb.cli import main
from symnb.compile.checkmode import check_mode
from symnb.shapes.checker import check_path

SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import symnb as sn

    x = sn.tensor("x", shape=("batch", 784), dtype="float32")
    y = sn.tensor("y", shape=("batch",), dtype="float32")
    W = sn.shared(np.zeros((10, 784), "float32"), name="W")
    h = x @ W
    v = sn.shared(np.zeros((784, 1), "float32"), name="v")
    loss = sn.mean((x @ v - y) ** 2)
    train = sn.function([x, y], loss)
    for epoch in range(20000):
        print(train(np.ones((32, 784), "float32"), np.ones(32, "float32")))
    print(h)
    """
)


def _cell(source: str, kind: str = "code") -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(path: Path) -> Path:
    cells = [
        _cell("# A notebook with two shape bugs", "markdown"),
        _cell("%matplotlib inline\nimport numpy as np\nimport symnb as sn"),
        _cell(
            'x = sn.tensor("x", shape=("batch", 4))\nW = sn.tensor("W", shape=(3, 4))\nz = x @ W'
        ),
        _cell("%%timeit\nz = x @ W"),
        _cell("p = sn.softmax(x, axis=0)\nf = sn.function([x], p)\nout = f(np.ones((2, 4)))"),
        _cell("print(out.shape)\nassert out.shape == (2, 4)"),
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook))
    return path


def test_script_reports_every_bug_with_its_line_and_exits_1(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 7: error: ShapeError: matmul: inner dims differ" in out
    assert "'x' (float32(batch, 784)) @ 'W' (float32(10, 784))" in out
    assert "    h = x @ W" in out and "hint: did you mean W.T?" in out
    assert f"{script}, line 9: warning: BroadcastOuterWarning: sub:" in out
    assert f"{script}, line 13: not checked: NameError" in out  # h was never made
    assert "1 error, 1 warning, 0 failures, 1 not checked" in out
    assert "0.0" not in out  # the program's own prints are hidden


INDEPENDENT = textwrap.dedent(
    """\
    import symnb as sn

    x = sn.tensor("x", shape=("batch", 784))
    W = sn.tensor("W", shape=(10, 784))
    h = x @ W
    z = sn.tensor("z", shape=("batch", -2))
    s = sn.sum(x, axis=1.0)
    if x > 0:
        pass
    y = h + 1
    print(undefined_name)
    """
)


def test_failures_after_an_error_are_not_checked_only_when_they_need_its_names(tmp_path, capsys):
    """Every exception after a first error was "not checked", also bad input on lines that
    need nothing the failed line made (now symnb errors, counted) and independent failures;
    and a message carrying its "at ..." line printed it twice."""
    script = tmp_path / "independent.py"
    script.write_text(INDEPENDENT)
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 5: error: ShapeError: matmul" in out
    assert f"{script}, line 6: error: ShapeError: tensor 'z'" in out
    assert f"{script}, line 7: error: ShapeTypeError: sum: axis is an int" in out
    assert f"{script}, line 8: error: InputError: `if`" in out  # independent of line 5
    assert f"{script}, line 10: not checked: NameError: name 'h'" in out  # h was never made
    assert f"{script}, line 11: failure: NameError" in out  # a typo, no earlier error's
    assert "4 errors, 0 warnings, 1 failure, 1 not checked" in out
    assert "\n  at " not in out  # the line is shown once, as the code under the message


def test_the_training_loop_runs_in_check_mode_quickly(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    report = check_path(str(script))
    assert report.statements == 11 and len(report.of("error")) == 1


def test_notebook_reports_cells_and_lines(tmp_path, capsys):
    notebook = _notebook(tmp_path / "model.ipynb")
    assert main(["check", str(notebook)]) == 1
    out = capsys.readouterr().out
    assert f"{notebook}, cell 3, line 3: error: ShapeError: matmul" in out
    assert f"{notebook}, cell 5, line 1: warning: SuspiciousAxisWarning: softmax" in out
    assert "1 magic cells skipped" in out
    report = check_path(str(notebook))
    assert [d.cell for d in report.diagnostics] == [3, 5]
    assert not report.of("failure", "not checked")  # the placeholder has the right shape


def test_clean_programs_exit_0_and_strict_counts_warnings(tmp_path, capsys):
    clean = tmp_path / "clean.py"
    clean.write_text("import symnb as sn\nx = sn.tensor('x', shape=('n', 3))\ny = x + 1\n")
    warned = tmp_path / "warned.py"
    warned.write_text("import symnb as sn\ny = sn.vector('y') - sn.tensor('p', shape=(None, 1))\n")
    assert main(["check", str(clean), str(warned)]) == 0
    assert main(["check", "--strict", str(warned)]) == 1
    out = capsys.readouterr().out
    assert f"{clean}: 0 errors, 0 warnings, 0 failures" in out


def test_strict_counts_a_warning_as_an_error_whatever_else_the_file_holds(tmp_path, capsys):
    """A warning and a later failure in one file exited 2 under --strict, and 1 split over
    two files: a warning counts as an error, and errors come before failures."""
    warned = "import symnb as sn\ny = sn.tensor('y', shape=('n',)) - sn.tensor('q', shape=('n', 1))"
    warned += "\n"
    both = tmp_path / "both.py"
    both.write_text(warned + "z = 1 / 0\n")
    assert main(["check", str(both)]) == 2
    assert main(["check", "--strict", str(both)]) == 1
    (tmp_path / "w.py").write_text(warned)
    (tmp_path / "f.py").write_text("z = 1 / 0\n")
    assert main(["check", "--strict", str(tmp_path / "w.py"), str(tmp_path / "f.py")]) == 1
    assert "0 errors, 1 warning, 1 failure" in capsys.readouterr().out


def test_other_failures_exit_2(tmp_path, capsys):
    script = tmp_path / "broken.py"
    script.write_text("import numpy as np\nnp.load('missing.npy')\n")
    assert main(["check", str(script)]) == 2
    assert "line 2: failure: FileNotFoundError" in capsys.readouterr().out


def test_a_shape_warning_the_program_makes_an_error_is_an_error(tmp_path, capsys):
    """``warnings.simplefilter("error", sn.ShapeWarning)`` (docs/shapes.md recommends it)
    raises the warning: it was a "failure" of another kind, with 0 errors, and exit 2."""
    script = tmp_path / "strict.py"
    script.write_text(
        "import warnings\nimport symnb as sn\nwarnings.simplefilter('error', sn.ShapeWarning)\n"
        "d = sn.tensor('y', shape=('n',)) - sn.tensor('q', shape=('n', 1))\nprint(d)\n"
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 4: error: BroadcastOuterWarning: sub: 'y'" in out
    assert f"{script}, line 5: not checked: NameError" in out  # d was never made
    assert "1 error, 0 warnings, 0 failures, 1 not checked" in out
    assert "\n  at " not in out  # the line is shown once, as the code under the message


def test_python_dash_m_and_the_console_script(tmp_path):
    script = tmp_path / "bug.py"
    script.write_text(SCRIPT)
    runs = [[sys.executable, "-m", "symnb", "check", str(script)]]
    console = Path(sys.executable).with_name("symnb")
    if console.exists():
        runs.append([str(console), "check", str(script)])
    for command in runs:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        assert "line 7: error: ShapeError" in done.stdout


def test_check_mode_functions_return_placeholders_of_the_inferred_shapes():
    x = sn.tensor("x", shape=("batch", 3, "H", "W"))
    w = sn.shared(np.zeros((8, 3, 3, 3)), name="w")
    y = sn.conv2d(x, w, stride=2, padding=1)
    with check_mode():
        f = sn.function([x], [y, y.sum(axis=(1, 2, 3))], updates={w: w * 2})
        out, total = f(np.ones((4, 3, 9, 12)))
    assert out.shape == (4, 8, 5, 6) and total.shape == (4,) and not out.any()
    assert w.get_value().shape == (8, 3, 3, 3)  # shared values are not updated


def test_check_mode_placeholders_of_huge_outputs_take_no_memory():
    """A (100000, 100000) output was np.zeros of 74.5 GiB: a MemoryError (or that memory)
    where the program is shape-correct; past 64 MiB a placeholder is one zero broadcast."""
    z = sn.zeros((100000, 100000))
    with check_mode():
        f = sn.function([], [z @ z, z @ z, z[:2, :3]])  # a repeated result is not copied
        big, again, small = f()
    assert big.shape == again.shape == (100000, 100000) and big.strides == (0, 0)
    assert big[12345, 678] == 0 and big.dtype == z.dtype and not big.flags.writeable
    assert small.shape == (2, 3) and small.flags.writeable and not small.any()
    small += 1  # a placeholder of a size a program writes into is an array of its own


def test_check_mode_sizes_names_that_only_a_dim_computed_from_names_gives():
    """``("2*n",)`` of 6 makes n 3 (the call's checks solve it), so an output of ``("n",)`` is
    zeros of (3,) as in a real run, not a placeholder 1; and m of ``("n+m",)`` of 5 with x
    of ``("n",)`` of 2 is 3, so ``c * 2`` and ``(c, c*x[0])`` joined are (5,) and (10,)."""
    q = sn.tensor("q", shape=("2*n",))
    halves = q.reshape((2, -1)).sum(axis=0)
    c, x = sn.tensor("c", shape=("n+m",)), sn.tensor("x", shape=("n",))
    outputs = [c * 2, sn.concatenate([c, c * x[0]])]
    with check_mode():
        (got,) = sn.function([q], [halves])(np.ones(6))
        doubled, joined = sn.function([c, x], outputs)(np.ones(5), np.ones(2))
    assert got.shape == (3,) and not got.any()
    assert doubled.shape == (5,) and joined.shape == (10,)
    real = sn.function([c, x], outputs, backend="py")(np.ones(5), np.ones(2))
    assert [r.shape for r in real] == [(5,), (10,)]


def test_check_mode_names_an_unnamed_shared_variable_as_it_was_made_not_after_the_call():
    """The stand-ins check mode checks the call's shapes with are named as the variables they
    stand for: W of ``W = sn.shared(...)``, not ``out`` of the ``out = f(...)`` that made them
    (nor an unnamed variable after the call's line)."""
    x = sn.matrix("x", dtype="float64")
    W = sn.shared(np.ones((4, 3)))
    with check_mode():
        f = sn.function([x], sn.dot(x, W))
        with pytest.raises(sn.ShapeError) as raised:
            out = f(np.ones((2, 5)))  # noqa: F841 - the assignment is the point
    assert "'x' (float64(2, 5)) @ 'W' (float64(4, 3))" in str(raised.value)
    assert "'out'" not in str(raised.value)


def test_check_mode_computes_what_the_calls_shapes_decide():
    """``c[x.shape[0]:]`` of a c of 10 and an x of 3 is 7 long in check mode as in a real run
    (it was a placeholder 1: the bound was a value), and an output that is shape arithmetic
    is its value (a loop's ``range(n)`` runs as in the real program); a value read from the
    data stays a placeholder zero (check mode reads no data)."""
    x, c = sn.vector("x"), sn.vector("c")
    outputs = [c[x.shape[0] :], c[: x.shape[0] * 2 - 1 : 2], x.shape[0] * 3, x.shape, x.argmax()]
    with check_mode():
        tail, strided, n, shape, argmax = sn.function([x, c], outputs)(np.ones(3), np.ones(10))
    assert tail.shape == (7,) and strided.shape == (3,) and not tail.any()
    assert n == 9 and n.dtype == np.int64 and n.shape == () and list(shape) == [3]
    assert argmax == 0 and argmax.shape == ()
    real = sn.function([x, c], outputs, backend="py")(np.arange(3.0), np.ones(10))
    assert [np.shape(r) for r in real] == [(7,), (3,), (), (1,), ()]


def test_check_mode_takes_named_dims_at_the_calls_sizes_where_rules_compare_them():
    """``x`` of ``("T", "batch", 16)`` flattened against ``z`` of ``(None, "batch", 32)``: the
    inner dims were ``T*batch`` against ``batch*5`` (the unknown dim filled, the names kept), a
    false ShapeError; with T 5 and batch 4 both are 20, as in a real run. A reshape to a
    named dim still finds it."""
    x = sn.tensor("x", shape=("T", "batch", 16))
    z = sn.tensor("z", shape=(None, "batch", 32))
    outputs = [x.reshape((-1, 16)).T @ z.reshape((-1, 32)), x.reshape(("T", -1))]
    args = (np.zeros((5, 4, 16)), np.zeros((5, 4, 32)))
    with check_mode():
        inner, flat = sn.function([x, z], outputs)(*args)
    assert inner.shape == (16, 32) and flat.shape == (5, 64)
    real = sn.function([x, z], outputs, backend="py")(*args)
    assert [r.shape for r in real] == [(16, 32), (5, 64)]
    with check_mode(), pytest.raises(sn.ShapeError, match="inner dims differ.*20 .*!= 16 "):
        sn.function([x, z], outputs)(np.zeros((5, 4, 16)), np.zeros((4, 4, 32)))


def test_check_mode_checks_the_rnn_of_the_loops_guide_that_runs():
    """The docs/loops.md RNN trained with sn.grad through sn.scan: the backward scan meets
    ``T*batch`` and an unknown dim filled with 20; check mode raised a false ShapeError."""
    x = sn.tensor("x", shape=("T", "batch", 16), dtype="float32")
    h0 = sn.tensor("h0", shape=("batch", 32), dtype="float32")
    y = sn.tensor("y", shape=("batch",), dtype="int64")
    W, U, V = (sn.shared(np.zeros(s, "float32")) for s in [(32, 32), (16, 32), (32, 10)])
    hs, _ = sn.scan(lambda x_t, h: sn.tanh(x_t @ U + h @ W), sequences=x, outputs_info=h0)
    loss = sn.categorical_crossentropy(sn.softmax(hs[-1] @ V), y).mean()
    gs = sn.grad(loss, [W, U, V])
    args = (np.zeros((5, 4, 16), "float32"), np.zeros((4, 32), "float32"), np.zeros(4, "int64"))
    with check_mode():
        got = sn.function([x, h0, y], [loss, *gs])(*args)
    assert [g.shape for g in got] == [(), (32, 32), (16, 32), (32, 10)]


def test_a_bound_the_calls_shapes_decide_slices_a_named_dim_to_its_length():
    """``xb[: xb.shape[0] // 2]`` of a ``("batch", 784)`` xb of 6 rows is (3, 784) in check
    mode as in a real run, and ``c[x.shape[0]:]`` of a c of ``("m",)`` 7 long (the named dim
    stayed a name, so the slice's length was unknown: a placeholder 1)."""
    xb = sn.tensor("xb", shape=("batch", 784))
    c, x = sn.tensor("c", shape=("m",)), sn.tensor("x", shape=("n",))
    with check_mode():
        (half,) = sn.function([xb], [xb[: xb.shape[0] // 2] * 2])(np.ones((6, 784)))
        (tail,) = sn.function([x, c], [c[x.shape[0] :]])(np.ones(3), np.ones(10))
    assert half.shape == (3, 784) and tail.shape == (7,)
    assert half.reshape(3, 28, 28).shape == (3, 28, 28)


def test_check_mode_runs_the_graphs_own_shape_checks_on_the_calls_shapes():
    """A ``givens`` replacement of unknown dims for a key of fixed or named dims is checked
    when the function runs: check mode, which runs no op, returned a placeholder of the key's
    shape instead of the run's ShapeError; so did a repeated einsum index of unknown dims."""
    y, z = sn.tensor("y", shape=(1, 2)), sn.tensor("z", shape=(None, 2))
    x, d = sn.tensor("x", shape=("batch", 2)), sn.tensor("d", shape=("batch",))
    m = sn.matrix("m")
    with check_mode():
        f = sn.function([z], y * 2, givens={y: z})
        g = sn.function([z, d], x.sum(axis=1) - d, givens={x: z})
        h = sn.function([m], sn.einsum("ii->i", m))
        assert f(np.zeros((1, 2))).shape == (1, 2) and g(np.zeros((4, 2)), np.ones(4)).shape == (4,)
        with pytest.raises(sn.ShapeError) as raised:
            f(np.zeros((3, 2)))
        with pytest.raises(sn.ShapeError, match=r"\(3, 2\), not \(batch, 2\) = \(4, 2\)"):
            g(np.zeros((3, 2)), np.ones(4))
        with pytest.raises(sn.ShapeError, match=r"repeats index 'i'.*\(3, 4\), not"):
            h(np.zeros((3, 4)))
    message = (
        "'y' (float64(1, 2)) was given 'z' (float64(?, 2)) of another shape ((3, 2), not (1, 2)"
    )
    assert message in str(raised.value)
    with pytest.raises(sn.ShapeError) as real:
        sn.function([z], y * 2, givens={y: z}, backend="py")(np.zeros((3, 2)))
    assert message in str(real.value)  # the run's error


def test_check_mode_checks_the_updates_values_against_their_shared_variables():
    """An update whose value does not fit its shared variable (4 values for a B of (3,),
    ``W @ m`` of (3, 4) for a W of (3, 3)) is the run's InputError in check mode too, with no
    shared value written; it was not checked (check mode wrote no update, so it read none).
    A dim the rules cannot tell (a mask's length) is not taken to differ."""
    B, W = sn.shared(np.zeros(3), name="B"), sn.shared(np.zeros((3, 3)), name="W")
    A, C = sn.shared(np.zeros(3), name="A", shape=("n",)), sn.shared(np.ones(3), shape=("n",))
    x, m = sn.vector("x"), sn.matrix("m")
    with check_mode():
        f = sn.function([x], x.sum(), updates={B: x})
        g = sn.function([m], m.sum(), updates={W: W @ m})
        h = sn.function([x], (A * C).sum(), updates={A: x})
        masked = sn.function([x], x.sum(), updates={B: x[x > 0]})
        assert f(np.ones(3)) == 0 and g(np.ones((3, 3))) == 0 and masked(np.ones(3)) == 0
        with pytest.raises(
            sn.InputError, match=r"'B' \(float64\(3,\)\): the value of its update in this call, 'x'"
        ):
            f(np.ones(4))
        with pytest.raises(sn.InputError, match=r"has shape \(3, 4\), which does not fit \(3, 3\)"):
            g(np.ones((3, 4)))
        with pytest.raises(sn.InputError, match="no shared value was written"):
            h(np.ones(4))
    assert B.get_value().shape == (3,) and not W.get_value().any() and not A.get_value().any()
    with pytest.raises(sn.InputError, match=r"has shape \(4,\), which does not fit \(3,\)"):
        sn.function([x], x.sum(), updates={B: x}, backend="py")(np.ones(4))  # as the run


def test_a_constant_slice_bound_gives_a_known_length():
    """``c[sn.constant(3):]`` of a c of 10 is f64[7] when built, as ``c[3:]`` is."""
    c = sn.tensor("c", shape=(10,))
    assert c[sn.constant(3) :].type.shape == (7,)
    assert c[: sn.constant(-2) : sn.constant(3)].type.shape == (3,)
    with pytest.raises(sn.ShapeError, match="slice step cannot be zero"):
        c[:: sn.constant(0)]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"backend": "cc"}, "unknown backend 'cc'"),
        ({"optimize": "fastt"}, "optimize: unknown mode 'fastt'"),
        ({"mode": "debg"}, "unknown mode 'debg'"),
        ({"optimize": {"include": ["nonsense"]}}, "optimize: 'nonsense' is neither a phase"),
    ],
)
def test_check_mode_refuses_the_options_a_compile_refuses(options, message):
    """Check mode ignored backend, optimize and mode: a typo that stops the real run passed."""
    x = sn.vector("x")
    with check_mode(), pytest.raises(sn.ArgumentError, match=message) as e:
        sn.function([x], x * 2, **options)
    assert e.value.location.filename == __file__


def test_a_program_whose_compile_is_refused_does_not_pass_the_check(tmp_path, capsys):
    script = tmp_path / "typo.py"
    script.write_text(
        'import symnb as sn\nx = sn.vector("x")\nf = sn.function([x], x, backend="cc")\n'
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 3: error: ArgumentError: unknown backend 'cc'" in out


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet collected, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_a_signal_while_the_handlers_are_set_leaves_the_old_handlers(monkeypatch):
    """A signal that comes while symnb check sets its handlers (a loaded machine that ran the
    child first) is raised there and the old handlers are back, so re-raising it ends symnb
    check as the signal would (it once ended with status 1 and an uncaught _Stopped)."""
    from symnb.shapes import isolate

    before = {number: signal.getsignal(number) for number in isolate.FORWARDED}
    real = signal.signal

    def setting(number, handler):
        old = real(number, handler)
        if number == signal.SIGTERM and handler not in before.values():
            signal.raise_signal(number)  # comes as the handlers are set
        return old

    monkeypatch.setattr(isolate.signal, "signal", setting)
    with pytest.raises(isolate._Stopped), isolate._signals_stop_the_check():
        pass
    monkeypatch.undo()
    assert {number: signal.getsignal(number) for number in isolate.FORWARDED} == before


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to see the program run")
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_terminated_check_stops_the_program_it_checks(tmp_path, name):
    pid_file = tmp_path / "pid"
    script = tmp_path / "forever.py"
    script.write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n"
    )
    number = getattr(signal, name)
    check = subprocess.Popen(
        [sys.executable, "-m", "symnb", "check", "--timeout", "0", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # as a terminal starts it, whatever started the tests (nohup ignores SIGHUP)
        preexec_fn=lambda: signal.signal(number, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.time() < deadline:
            time.sleep(0.05)
        program = int(pid_file.read_text())
        assert _alive(program)
        check.send_signal(number)
        assert check.wait(timeout=30) == -number  # ends as the signal would
        deadline = time.time() + 10
        while _alive(program) and time.time() < deadline:
            time.sleep(0.05)
        assert not _alive(program), f"the checked program {program} still runs after {name}"
    finally:
        check.kill()
        check.communicate(timeout=30)
        if pid_file.exists() and pid_file.read_text() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_a_check_under_nohup_keeps_running_on_sighup(tmp_path):
    """``nohup symnb check ...``: SIGHUP is ignored, by the check as by any program."""
    script = tmp_path / "short.py"
    script.write_text("import time\ntime.sleep(3)\nprint('done')\n")
    check = subprocess.Popen(
        [sys.executable, "-m", "symnb", "check", "--timeout", "0", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    time.sleep(1.5)  # symnb imported, the program running
    check.send_signal(signal.SIGHUP)
    out, err = check.communicate(timeout=60)
    assert check.returncode == 0, err.decode()[-2000:]


POOL_SCRIPT = """
import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor


def work(n):
    return n * n


if __name__ == "__main__":
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    squares = list(pool.map(work, [2, 3], timeout=60))
    pool.shutdown()
    assert squares == [4, 9], squares
    print("squares", squares)
"""


def test_a_program_that_sends_its_own_function_to_a_process_pool_checks(tmp_path):
    """The program runs as a module set as sys.modules["__main__"], as ``python file.py``
    would: its ``work`` pickles (it had failed: "attribute lookup work on __main__ failed")
    and a spawned worker imports the file to find it; the checker's own __main__ is back
    after."""
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT)
    main_before = sys.modules["__main__"]
    report = check_path(str(script))
    assert not report.diagnostics, [str(d) for d in report.diagnostics]
    assert sys.modules["__main__"] is main_before


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "soon"])
def test_a_timeout_that_is_not_a_number_of_seconds_is_refused(value, capsys):
    """``--timeout -5`` and ``--timeout nan`` were accepted."""
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--timeout", value, "some.py"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"--timeout: takes a number of seconds, 0 or more (0: no limit), not '{value}'" in err


def _clean(report) -> None:
    assert not report.diagnostics, [d.format() for d in report.diagnostics]


def test_statements_compile_with_the_programs_future_imports_not_the_checkers(tmp_path):
    """Each statement was compiled with checker.py's own ``from __future__ import
    annotations``: an annotation naming nothing passed the check, where python raises
    NameError; and a program's own future import now holds for its later statements."""
    eager = tmp_path / "eager.py"
    eager.write_text("def f(a: Undefined):\n    return a\n")
    report = check_path(str(eager))
    assert [(d.severity, d.category, d.lineno) for d in report.diagnostics] == [
        ("failure", "NameError", 1)
    ]
    lazy = tmp_path / "lazy.py"
    lazy.write_text("from __future__ import annotations\ndef f(a: Undefined):\n    return a\n")
    _clean(check_path(str(lazy)))


def test_only_a_scripts_first_statement_is_its_docstring(tmp_path):
    """Each statement compiled as a module of its own took a later bare string for the
    module's docstring, replacing __doc__."""
    script = tmp_path / "doc.py"
    script.write_text(
        '"""Train the model."""\nx = 1\n"""--- a block comment ---"""\n'
        'assert __doc__ == "Train the model.", __doc__\n'
    )
    _clean(check_path(str(script)))


def test_the_program_sees_its_file_and_folder_as_python_gives_them(tmp_path, monkeypatch):
    """``__file__`` is absolute (it was the path as typed, so a chdir lost the program's
    files), and sys.path[0] is the script's folder with symlinks resolved (it was the
    link's, so a linked script could not import its siblings)."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "sibling_of_the_real_script.py").write_text("Y = 2\n")
    (tmp_path / "real" / "s.py").write_text(
        "import os\nimport sibling_of_the_real_script\n"
        f"assert __file__ == {str(tmp_path / 'link' / 's.py')!r}, __file__\n"
        "here = os.path.dirname(__file__)\nos.chdir('/')\n"
        "assert open(os.path.join(here, 'data.txt')).read() == '1\\n'\n"
    )
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / "s.py").symlink_to(tmp_path / "real" / "s.py")
    (tmp_path / "link" / "data.txt").write_text("1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "sibling_of_the_real_script", raising=False)
    _clean(check_path("link/s.py"))
    assert os.getcwd() == str(tmp_path)


def test_a_notebook_runs_in_its_folder(tmp_path, monkeypatch):
    """As Jupyter runs it: ``open("data.txt")`` of a file beside the notebook failed when
    the notebook was checked from another folder; the caller's folder is back after."""
    folder = tmp_path / "nbdir"
    folder.mkdir()
    (folder / "data.txt").write_text("5\n")
    notebook = {"cells": [_cell("n = int(open('data.txt').read())\nassert n == 5")]}
    (folder / "nb.ipynb").write_text(json.dumps({**notebook, "metadata": {}, "nbformat": 4}))
    monkeypatch.chdir(tmp_path)
    _clean(check_path("nbdir/nb.ipynb"))
    assert os.getcwd() == str(tmp_path)


def test_the_working_directory_is_not_on_the_programs_sys_path(tmp_path, monkeypatch, capsys):
    """The child started as ``python -m symnb.shapes.isolate`` put the working directory on
    sys.path: a module only there imported (python cannot), and a symnb.py there replaced
    symnb in the child, which crashed ("ProcessExit") on a clean program."""
    for folder in ("cwd", "prog"):
        (tmp_path / folder).mkdir()
    (tmp_path / "cwd" / "only_in_the_cwd.py").write_text("X = 1\n")
    (tmp_path / "cwd" / "symnb.py").write_text("raise ImportError('this is not symnb')\n")
    (tmp_path / "prog" / "s.py").write_text("import symnb\nimport only_in_the_cwd\n")
    monkeypatch.chdir(tmp_path / "cwd")
    assert main(["check", "../prog/s.py"]) == 2
    out = capsys.readouterr().out
    missing = "No module named 'only_in_the_cwd'"
    assert f"../prog/s.py, line 2: failure: ModuleNotFoundError: {missing}" in out
    assert "ProcessExit" not in out


def test_hidden_output_goes_to_real_files(tmp_path, capsys):
    """Without --show-output the program's sys.stdout and sys.stderr were StringIOs (which
    grew without limit): ``sys.stdout.buffer``, ``fileno()`` (faulthandler, a subprocess
    writing to sys.stdout) and ``reconfigure`` failed, and passed with --show-output."""
    script = tmp_path / "out.py"
    script.write_text(
        "import sys, faulthandler, subprocess\n"
        "sys.stdout.buffer.write(b'bytes\\n')\n"
        "faulthandler.enable()\n"
        "subprocess.run([sys.executable, '-c', 'print(1)'], stdout=sys.stdout, check=True)\n"
        "sys.stdout.reconfigure(line_buffering=True)\n"
        "print('PRINTED BY IT', file=sys.stderr)\n"
    )
    assert main(["check", str(script)]) == 0
    out = capsys.readouterr().out
    assert "0 errors, 0 warnings, 0 failures (6 statements)" in out and "PRINTED BY IT" not in out
    in_process = tmp_path / "in_process.py"  # check_path here: no faulthandler in pytest's
    in_process.write_text(
        "import sys\nsys.stdout.buffer.write(b'bytes')\nsys.stderr.fileno()\n"
        "sys.stdout.reconfigure(line_buffering=True)\nprint('PRINTED BY IT')\n"
    )
    _clean(check_path(str(in_process)))
    assert "PRINTED BY IT" not in capsys.readouterr().out
