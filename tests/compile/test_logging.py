"""The ``symnb`` loggers: a compile (what, its steps, its kernels compiled or found in the
cache, the compiler's command, seconds), fallbacks to NumPy references (planned, and where a
kernel declines a call) and calls the C runner declines. Nothing is logged unless asked."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import symnb as sn
from symnb.backends import phases
from symnb.backends.c import cache
from tests.helpers import needs_c, run_python


def messages(caplog, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


@pytest.fixture
def fresh_cache(tmp_path):
    """A compile directory of this test's own, so its kernels compile here."""
    before = sn.config.compiledir
    sn.config.compiledir = str(tmp_path)
    yield tmp_path
    sn.config.compiledir = before


@needs_c
def test_a_compile_is_logged_with_its_kernels_command_and_seconds(caplog, fresh_cache):
    caplog.set_level(logging.INFO, logger="symnb")
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], [sn.sum(sn.exp(x)), sn.tanh(x) * 2], name="f")
    (compiled,) = messages(caplog, "symnb.compile.function")
    assert re.fullmatch(
        r"compiled function 'f'\(x\) -> 2 output\(s\) in \d+\.\d{3} s: backend 'c', optimize "
        r"'fast', \d+ rewrites, 2 steps \(2 kernel\); calls run in the (C runner|Python executor)"
        r"; phases: .*",
        compiled,
    ), compiled
    (kernels,) = messages(caplog, "symnb.backends.c.cache")
    where = re.escape(str(fresh_cache))
    assert re.fullmatch(
        rf"2 kernels in \d+\.\d{{3}} s: 2 compiled, 0 from the disk cache "
        rf"\({where}/c\), 0 loaded already",
        kernels,
    )
    commands = messages(caplog, "symnb.backends.c.compiler")
    assert commands and all(
        re.match(r"compiled in \d+\.\d{3} s: \S+ kernel\.c -o ", c) for c in commands
    ), commands
    assert all(str(fresh_cache) in c and "-shared" in c for c in commands)
    caplog.clear()
    sn.function([x], [sn.sum(sn.exp(x)), sn.tanh(x) * 2], name="f")  # the same kernels again
    assert messages(caplog, "symnb.backends.c.compiler") == []
    assert ": 0 compiled, 0 from the disk cache" in messages(caplog, "symnb.backends.c.cache")[0]
    assert messages(caplog, "symnb.backends.c.cache")[0].endswith(", 2 loaded already")
    np.testing.assert_allclose(f(np.zeros(3))[0], 3.0)


def phases_of(message: str) -> tuple[dict[str, float], list[float]]:
    """The phases a compile's log line gives (name -> seconds), and its compiler runs'."""
    said = message.split("; phases: ")[1]
    seconds = {name: float(s) for name, s in re.findall(r"(?:^|, )([a-z]+) (\d+\.\d{3}) s", said)}
    runs = re.search(r"\(\d+ compiler runs?: ([\d., ]+) s\)", said)
    return seconds, [float(s) for s in runs[1].split(", ")] if runs else []


@needs_c
def test_a_compile_logs_its_phases_which_add_up_to_its_seconds(caplog, fresh_cache, monkeypatch):
    monkeypatch.setattr(cache, "_cores", lambda: 2)  # two compiler runs at once
    caplog.set_level(logging.INFO, logger="symnb")
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], [sn.sum(sn.exp(x)), sn.tanh(x) * 2, sn.max(x * 3)], name="f")
    (compiled,) = messages(caplog, "symnb.compile.function")
    total = float(re.search(r" in (\d+\.\d{3}) s: ", compiled)[1])
    seconds, runs = phases_of(compiled)
    assert {"graph", "rewrites", "planning", "compile", "loading", "runner"} <= set(seconds)
    assert set(seconds) <= set(phases.ORDER), compiled  # "probe" where the flags were probed
    assert sum(seconds.values()) == pytest.approx(total, abs=0.005), compiled
    assert f.compile_phases.total() == pytest.approx(f.compile_time, rel=0.01, abs=1e-3)
    assert len(runs) == 2 and all(0 < r <= seconds["compile"] + 0.001 for r in runs), compiled
    assert seconds["compile"] > 0.5 * max(runs)  # the runs went at once, inside the phase
    caplog.clear()
    sn.function([x], [sn.sum(sn.exp(x)), sn.tanh(x) * 2, sn.max(x * 3)], name="f")
    seconds, runs = phases_of(messages(caplog, "symnb.compile.function")[0])
    assert "compile" not in seconds and runs == []  # nothing compiled: no such phase


@needs_c
def test_another_process_finds_the_kernels_on_disk(tmp_path):
    code = (
        "import logging, sys, numpy as np, symnb as sn\n"
        "logging.basicConfig(stream=sys.stdout, level=logging.INFO,\n"
        "                    format='%(name)s: %(message)s')\n"
        f"sn.config.compiledir = {str(tmp_path)!r}\n"
        "x = sn.tensor('x', shape=('n',))\n"
        "f = sn.function([x], sn.sum(sn.exp(x) * x))\n"
    )
    first, second = run_python(code), run_python(code)
    assert "symnb.backends.c.compiler: compiled in" in first
    assert re.search(r"cache: 1 kernels in \S+ s: 1 compiled, 0 from the disk cache", first)
    assert "symnb.backends.c.compiler" not in second
    assert re.search(r"cache: 1 kernels in \S+ s: 0 compiled, 1 from the disk cache", second)


@needs_c
def test_an_op_without_a_kernel_is_logged_as_a_fallback_when_planned(caplog):
    caplog.set_level(logging.INFO, logger="symnb")
    x = sn.tensor("x", shape=("n",))
    sn.function([x], sn.sort(x) * 2)  # sort has no kernel: its NumPy reference runs
    (line,) = messages(caplog, "symnb.backends.planning.kernel_linker")
    assert line.startswith("fallback: sort[axis=0] has no kernel here: ")
    assert f"(built at {__file__}, line {_line_of('sn.sort(x)')}: sn.function(" in line, line


@pytest.mark.parametrize("runner", [True, False], ids=["runner", "python-executor"])
@needs_c
def test_a_kernel_that_declines_a_call_logs_its_fallback_once(caplog, runner):
    """An empty row space: a max has no identity, so the kernel declines and NumPy's reference
    gives the (empty) result; INFO the first time, DEBUG on later calls."""
    before = sn.config.c_runner
    sn.config.c_runner = runner
    try:
        x = sn.tensor("x", shape=("n", "m"))
        f = sn.function([x], sn.max(sn.exp(x), axis=1))
    finally:
        sn.config.c_runner = before
    assert (f.runner is not None) == runner
    caplog.set_level(logging.DEBUG, logger="symnb")
    for _ in range(3):
        assert f(np.ones((0, 3))).shape == (0,)
    f(np.ones((2, 3)))  # the kernel runs: no record
    said = [
        (r.levelname, r.getMessage()) for r in caplog.records if r.name == "symnb.backends.plan"
    ]
    assert [level for level, _ in said] == ["INFO", "DEBUG", "DEBUG"], said
    assert said[0][1].startswith(
        "fallback: max[axis=(1,), keepdims=False] ran its NumPy "
        "reference (its kernel or BLAS call declined this call's layout "
        "or sizes) on float64[0, 3] (built at "
    )


@needs_c
def test_a_call_the_runner_declines_is_logged_at_debug(caplog):
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], x * 2, name="double")
    caplog.set_level(logging.DEBUG, logger="symnb")
    f(np.ones(3))  # as planned: nothing said
    f([1.0, 2.0])
    f(np.ones(3, "float32"))
    said = messages(caplog, "symnb.compile.function")
    assert said == [
        "the C runner declined the arguments of a call of function 'double' (arguments: "
        "list); the input checks convert them and the runner runs the call",
        "the C runner declined the arguments of a call of function 'double' (arguments: "
        "ndarray float32(3,)); the input checks convert them and the runner runs the call",
    ]
    assert f.runner.declined == 2


def test_nothing_is_logged_at_the_default_level(caplog):
    caplog.set_level(logging.WARNING)
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], sn.sort(x) * 2)
    f([3.0, 1.0])
    assert [r for r in caplog.records if r.name.startswith("symnb")] == []


def _line_of(text: str) -> int:
    with open(__file__) as source:
        return next(i for i, line in enumerate(source, 1) if text in line and "sn.function" in line)


def test_compile_phases_pickle_and_deep_copy():
    """``f.compile_phases`` held a lock, which neither pickle nor deepcopy could copy."""
    import copy
    import pickle

    x = sn.vector("x")
    phases = sn.function([x], sn.exp(x) + 1).compile_phases
    for copied in (pickle.loads(pickle.dumps(phases)), copy.deepcopy(phases)):
        assert copied.seconds == phases.seconds and str(copied) == str(phases)
        copied.add("graph", 1.0)  # its lock works
        assert copied.seconds["graph"] == pytest.approx(phases.seconds.get("graph", 0) + 1)
