"""``symnb check`` on what a class hands in: %%symcompile notebooks, programs that end their
process or never finish, malformed notebooks, magics inside strings, call-time clashes."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symnb.cli import main
from symnb.shapes.checker import _without_magics, check_path

ROOT = Path(__file__).resolve().parents[2]


def _write_notebook(path: Path, *cells, tags: dict | None = None) -> Path:
    def cell(i, source):
        metadata = {"tags": tags[i]} if tags and i in tags else {}
        kind = "markdown" if source.startswith("#!md") else "code"
        out = {"cell_type": kind, "metadata": metadata, "source": source.splitlines(True)}
        return out if kind == "markdown" else {**out, "execution_count": None, "outputs": []}

    nb = {"cells": [cell(i, s) for i, s in enumerate(cells)], "metadata": {}, "nbformat": 4}
    nb["nbformat_minor"] = 5
    path.write_text(json.dumps(nb))
    return path


def _script(tmp_path: Path, text: str, name: str = "prog.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


#: the README's own example (as tests/test_readme.py runs it), then what check mode must
#: still allow a program to do with the function it compiled
README = (
    (Path(__file__).parents[2] / "README.md").read_text().split("```python\n")[1].split("```")[0]
    + 'assert list(train.kernels) == [] and "check mode" in repr(train.kernels)\n'
    + 'kernels = [k for k in train.kernels if k.kind == "kernel"]\n'
    + "print(list(train.rewrites), train.rewrites)\n"
)


def test_the_readme_snippet_is_clean(tmp_path, capsys):
    assert main(["check", str(_script(tmp_path, README))]) == 0
    assert "0 errors, 0 warnings, 0 failures" in capsys.readouterr().out


SYMCOMPILE = (
    "%%symcompile train --backend c --show grad,kernels\n"
    "x = tensor('x', shape=('batch', 4))\n"
    "W = shared(np.zeros((4, 3)), name='W')\n"
    "loss = mean(x @ W)\n"
    "updates = {W: W - 0.1 * grad(loss, W)}\n"
    "loss"
)


def test_symcompile_cells_are_checked_and_define_the_function(tmp_path, capsys):
    nb = _write_notebook(
        tmp_path / "hw.ipynb",
        "%load_ext symnb\nimport numpy as np\nimport symnb as sn",
        SYMCOMPILE,
        "train(np.ones((8, 4)))\nprint(train.kernels, train.rewrites)\ntrain(np.ones((8, 5)))",
        "%%symcompile bad\nz = tensor('z', shape=('n', 2))\nV = shared(np.ones((3, 3)))\nz @ V",
        "%%symcompile typo --show afterr\nq = tensor('q', shape=(2,))\nq + 1",
    )
    assert main(["check", str(nb)]) == 1
    out = capsys.readouterr().out
    assert f"{nb}, cell 3, line 3: error: InputError" in out  # train exists; 5 != 4 columns
    assert f"{nb}, cell 4, line 4: error: ShapeError: matmul: inner dims differ" in out
    assert "    z @ V" in out
    assert f"{nb}, cell 5, line 1: error: CellError: %%symcompile --show: unknown view" in out
    assert "NameError" not in out and "magic cells skipped" not in out


def test_symcompile_cells_after_blank_lines_name_the_lines_the_notebook_shows(tmp_path, capsys):
    """IPython drops the blank lines before a %%symcompile line; the checker numbered the
    cell from the magic, so every line it named was off by their number."""
    nb = _write_notebook(
        tmp_path / "nb.ipynb",
        "import symnb as sn\nx = sn.tensor('x', shape=('batch', 784))",
        "\n\n%%symcompile g\nV = sn.tensor('V', shape=(5, 7))\nx @ V",
        "\n%%symcompile h --show afterr\nx",
        "\n\n\n%%symcompile k\nV = sn.tensor('V', shape=(5, 7))",
    )
    assert main(["check", str(nb)]) == 1
    out = capsys.readouterr().out
    assert f"{nb}, cell 2, line 5: error: ShapeError: matmul: inner dims differ" in out
    assert "    x @ V" in out
    assert f"{nb}, cell 3, line 2: error: CellError: %%symcompile --show: unknown view" in out
    assert f"{nb}, cell 4, line 4: error: CellError" in out  # no output: at the magic
    assert "    %%symcompile k" in out


def test_an_error_in_a_cell_tagged_raises_exception_is_expected(tmp_path, capsys):
    nb = _write_notebook(
        tmp_path / "tour.ipynb",
        "import symnb as sn\nx = sn.tensor('x', shape=('batch', 4))",
        "wrong = x @ sn.tensor('W', shape=(3, 4))",
        tags={1: ["raises-exception"]},
    )
    assert main(["check", str(nb)]) == 0
    out = capsys.readouterr().out
    assert f"{nb}, cell 2, line 1: expected: ShapeError" in out
    assert "0 errors, 0 warnings, 0 failures, 1 expected" in out


def test_a_program_that_ends_its_process_after_a_shape_error_is_not_clean(tmp_path, capsys):
    script = _script(
        tmp_path,
        """\
        import os
        import symnb as sn
        h = sn.tensor("x", shape=("batch", 4)) @ sn.tensor("W", shape=(3, 4))
        os._exit(0)
        """,
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 3: error: ShapeError" in out
    assert (
        f"{script}, line 4: failure: ProcessExit: the program ended its process (os._exit(0))"
        in out
    )
    assert check_path(str(script)).exit_code == 1  # in this process too, which survives
    clean_exit = _script(
        tmp_path, "import os\ntry:\n    os._exit(0)\nexcept Exception:\n    pass\n", "exit.py"
    )
    assert main(["check", str(clean_exit)]) == 2  # never "clean"
    assert f"{clean_exit}, line 3: failure: ProcessExit" in capsys.readouterr().out


@pytest.mark.parametrize("call, status", [("sys.exit('fatal')", 1), ("sys.exit(3)", 3)])
def test_a_program_that_exits_failing_is_a_failure_not_clean(tmp_path, capsys, call, status):
    script = _script(
        tmp_path,
        f"import sys\nimport symnb as sn\n{call}\nsn.tensor('x', shape=(3, 4)) @ "
        "sn.tensor('W', shape=(5, 2))\n",
    )
    assert main(["check", str(script)]) == 2
    out = capsys.readouterr().out
    assert (
        f"{script}, line 3: failure: SystemExit: the program exited with status {status} "
        f"({call}) during this statement; nothing after it was checked" in out
    )
    assert "0 errors, 0 warnings, 1 failure (3 statements)" in out


@pytest.mark.parametrize("call", ["sys.exit()", "sys.exit(0)", "sys.exit(None)"])
def test_a_program_that_exits_with_status_0_is_clean(tmp_path, capsys, call):
    script = _script(tmp_path, f"import sys\nx = 1\n{call}\n")
    assert main(["check", str(script)]) == 0
    assert "0 errors, 0 warnings, 0 failures" in capsys.readouterr().out


def test_a_process_that_dies_is_reported_at_its_statement(tmp_path, capsys):
    script = _script(tmp_path, "import os, signal\nx = 1\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert main(["check", str(script)]) == 2
    out = capsys.readouterr().out
    assert (
        f"{script}, line 3: failure: ProcessExit: the program's process ended (exit status -9"
        in out
    )
    assert "(3 statements)" in out


def test_a_program_that_never_ends_is_stopped_by_the_timeout(tmp_path, capsys):
    script = _script(tmp_path, "import time\nx = 1\nwhile True:\n    time.sleep(0.05)\n")
    # (6 s: the checking child imports symnb first, which took 2-4 s on a loaded 2-core machine)
    assert main(["check", "--timeout", "6", str(script)]) == 2
    out = capsys.readouterr().out
    assert f"{script}, line 3: failure: Timeout: still running after 6 s" in out


@pytest.mark.parametrize(
    "content, says",
    [
        ("{not json", "invalid JSON"),
        ('{"cells": 3, "nbformat": 4}', "no list of 'cells'"),
        ('{"cells": [{"cell_type": "code", "source": 7}], "nbformat": 4}', "cell 1: malformed"),
        # these crashed the checking process (a "ProcessExit" failure, exit 2)
        ('{"cells": [], "nbformat": "4"}', "'nbformat' is '4', not 4 or more"),
        ('{"cells": [], "nbformat": null}', "'nbformat' is None, not 4 or more"),
        ('{"cells": [], "nbformat": 3}', "'nbformat' is 3, not 4 or more"),
        (
            '{"cells": [{"cell_type": "code", "source": ["x = 1\\n", 2], "metadata": {}}], '
            '"nbformat": 4}',
            "cell 1: malformed cell",
        ),
    ],
)
def test_a_malformed_notebook_has_its_own_exit_status(tmp_path, capsys, content, says):
    path = tmp_path / "broken.ipynb"
    path.write_text(content)
    assert main(["check", str(path)]) == 3
    assert says in capsys.readouterr().err
    assert main(["check", str(tmp_path / "missing.py")]) == 3


def test_magics_inside_strings_and_brackets_are_left_alone():
    source = (
        'doc = """\n%matplotlib inline\n!ls\n"""\n'
        "%time x = 1\n"
        "total = (3\n  % 2)\n"
        "files = !ls\n"
        "sn.function?\n"
        "s = 'a' \\\n  '%b'\n"
        "if True:\n    !echo hi\n"
    )
    lines = _without_magics(source).split("\n")
    assert lines[:4] == ['doc = """', "%matplotlib inline", "!ls", '"""']
    assert lines[4] == "pass" and lines[5:7] == ["total = (3", "  % 2)"]
    assert lines[7] == "files = None" and lines[8] == "pass"
    assert lines[9:11] == ["s = 'a' \\", "  '%b'"] and lines[12] == "    pass"


def test_a_backslash_ending_a_comment_does_not_continue_the_line():
    """``# in C:\\data\\`` set the line as continued, so the magic after it was kept (a
    SyntaxError); a backslash in a string goes on with the string, as Python reads it."""
    source = (
        "# the data lives in C:\\data\\\n%matplotlib inline\n"
        "x = 1  # \\\n!ls\n"
        "y = 1 + \\\n  2\n"
        "s = 'a\\\n%b'\n"
        "%time x\r\n"
    )
    lines = _without_magics(source).split("\n")
    assert lines[1] == "pass" and lines[3] == "pass"
    assert lines[4:8] == ["y = 1 + \\", "  2", "s = 'a\\", "%b'"]
    assert lines[8] == "pass"


def test_a_magic_after_a_comment_ending_in_a_backslash_is_skipped(tmp_path, capsys):
    nb = _write_notebook(
        tmp_path / "nb.ipynb",
        "# the data lives in C:\\data\\\n%matplotlib inline\nimport symnb as sn\n"
        "x = sn.tensor('x', shape=(3, 4))\ny = x @ x",
    )
    assert main(["check", str(nb)]) == 1
    out = capsys.readouterr().out
    assert f"{nb}, cell 1, line 5: error: ShapeError: matmul" in out
    assert "SyntaxError" not in out


def test_a_notebook_with_magics_in_a_string_runs_unchanged(tmp_path):
    nb = _write_notebook(
        tmp_path / "s.ipynb", 'usage = """\n%%timeit\n!pip list\n"""\nassert "!pip" in usage'
    )
    report = check_path(str(nb))
    assert report.diagnostics == [] and report.statements == 2


def test_call_time_clashes_keep_the_operand_names(tmp_path, capsys):
    script = _script(
        tmp_path,
        """\
        import numpy as np
        import symnb as sn
        x = sn.matrix("x")
        W = sn.shared(np.zeros((784, 10)), name="W")
        f = sn.function([x], sn.tanh(x @ W.T))
        f(np.ones((32, 784)))
        """,
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert "'x' (float64(32, 784)) @ 'W.T' (float64(10, 784))" in out
    assert "hint: did you mean W?" in out and "the right operand" not in out


def test_unknown_dims_that_broadcast_into_an_outer_product_warn_at_call_time(tmp_path):
    script = _script(
        tmp_path,
        """\
        import numpy as np
        import symnb as sn
        p = sn.matrix("p")
        y = sn.vector("y")
        loss = sn.mean((p - y) ** 2)
        f = sn.function([p, y], loss)
        for step in range(3):
            f(np.ones((32, 1)), np.ones(32))
        f(np.ones((32, 5)), np.ones(5))
        """,
    )
    report = check_path(str(script))
    (warning,) = report.diagnostics
    assert (warning.severity, warning.category, warning.lineno) == (
        "warning",
        "BroadcastOuterWarning",
        5,  # the line that built p - y, not the call
    )
    assert "with the shapes of this call: sub: 'y' (float64(32,)) and 'p' (float64(32, 1))" in (
        warning.message
    )
    assert "(the function was called at" in warning.message and "line 8" in warning.message


def test_the_tour_notebook_is_clean_under_symnb_check():
    command = [sys.executable, "-m", "symnb", "check", str(ROOT / "notebooks" / "00_tour.ipynb")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 errors" in done.stdout and "0 failures" in done.stdout
    assert "cell 10, line 1: expected: ShapeError" in done.stdout  # the tour's deliberate bug


def test_forked_workers_still_end_with_os_exit(tmp_path, capsys):
    script = _script(
        tmp_path,
        """\
        import multiprocessing as mp
        import symnb as sn

        def work(q):
            q.put(1)

        if __name__ == "__main__":
            q = mp.get_context("fork").Queue()
            p = mp.get_context("fork").Process(target=work, args=(q,))
            p.start(); p.join()
            assert q.get() == 1 and p.exitcode == 0
            h = sn.tensor("x", shape=("batch", 4)) @ sn.tensor("W", shape=(3, 4))
        """,
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert "error: ShapeError" in out and "failure:" not in out
    assert out.count("ShapeError") == 1  # the worker did not go on checking the program


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_that_exits_does_not_end_the_check(tmp_path, capsys):
    """The child a program forks is a copy of the checking process: its ``sys.exit(0)`` ended
    the copied check, which wrote "done", so the parent's ShapeError was dropped (exit 0); and
    it exited 0 whatever its status."""
    script = _script(
        tmp_path,
        """\
        import os, sys
        import symnb as sn
        pid = os.fork()
        if pid == 0:
            sys.exit(3)
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        assert status == 3, status
        y = sn.tensor("x", shape=(3, 4)) @ sn.tensor("W", shape=(3, 4))
        """,
    )
    assert main(["check", str(script)]) == 1
    out = capsys.readouterr().out
    assert f"{script}, line 8: error: ShapeError: matmul" in out
    assert "1 error, 0 warnings, 0 failures (7 statements)" in out


def test_the_timeout_stops_the_program_where_there_are_no_process_groups(
    tmp_path, capsys, monkeypatch
):
    """Windows has no ``os.killpg``: the program itself is killed (a stand-in removes it)."""
    monkeypatch.delattr("os.killpg")
    script = _script(tmp_path, "import time\nwhile True:\n    time.sleep(0.05)\n")
    assert main(["check", "--timeout", "1", str(script)]) == 2
    assert "failure: Timeout: still running after 1 s" in capsys.readouterr().out


def test_functions_built_and_called_in_worker_threads_are_checked_not_run(tmp_path, capsys):
    """A new thread starts with a fresh context: check mode (a ContextVar) was off there, and
    a function built in a thread pool was compiled for real and wrote its updates."""
    out = tmp_path / "out.json"
    script = _script(
        tmp_path,
        f"""\
        import json, threading
        from concurrent.futures import ThreadPoolExecutor
        import numpy as np
        import symnb as sn
        W = sn.shared(np.ones((3, 2)), name="W")
        def build_and_run():
            x = sn.matrix("x")
            f = sn.function([x], sn.sum(x @ W), updates={{W: W * 2}})
            return [f.backend, float(f(np.ones((4, 3)))), float(W.get_value()[0, 0])]
        with ThreadPoolExecutor(1) as pool:
            seen = [pool.submit(build_and_run).result()]
        thread = threading.Thread(target=lambda: seen.append(build_and_run()))
        thread.start()
        thread.join()
        open({str(out)!r}, "w").write(json.dumps(seen))
        """,
    )
    assert main(["check", str(script)]) == 0, capsys.readouterr().out
    assert json.loads(out.read_text()) == [["check", 0.0, 1.0], ["check", 0.0, 1.0]]
