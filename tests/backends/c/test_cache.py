"""The compile cache: hits by content, concurrent compiles, clearing, compile errors."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import CacheMiss, CompileError, cache, forbid_compile


def build(dtype="float64"):
    x = sn.vector("x", dtype=dtype)
    return sn.function([x], sn.exp(x) * 2 + 1, backend="c")


def test_second_compile_is_a_cache_hit(compiledir):
    build()
    cache._loaded.clear()  # a new process has only the disk layer
    with forbid_compile():
        f = build()
    x = np.linspace(0, 1, 5)
    np.testing.assert_allclose(f(x), np.exp(x) * 2 + 1)
    assert len(list((compiledir / "c").glob("*.so"))) == 1


def test_forbid_compile_raises_on_a_miss(compiledir):
    with forbid_compile(), pytest.raises(CacheMiss, match="compiling is forbidden"):
        build("float32")


def test_cached_entry_keeps_its_source_beside_it(compiledir):
    f = build()
    (source_file,) = (compiledir / "c").glob("*.c")
    assert source_file.read_text() == f.kernels[0].source


def test_clear_cache_empties_the_directory(compiledir):
    build()
    assert list((compiledir / "c").glob("*.so"))
    sn.clear_cache()
    assert not (compiledir / "c").exists()
    with forbid_compile(), pytest.raises(CacheMiss):
        build()


def test_cli_clear(compiledir):
    build()
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    code = f"import sys, symnb as sn; sn.config.compiledir = {str(compiledir)!r}; " + (
        "from symnb.backends.c.__main__ import main; sys.exit(main(['clear']))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "removed" in done.stdout
    assert not (compiledir / "c").exists()


def test_compile_error_shows_compiler_message_and_numbered_source(compiledir):
    source = "void sn_kernel(int64_t *a, char **ptr) {\n    this is not C;\n}\n"
    with pytest.raises(CompileError) as info:
        cache.load(source, lambda path: None)
    message = str(info.value)
    assert "error" in message
    assert "   2      this is not C;" in message
    assert not list((compiledir / "c").glob("*.so"))  # nothing half-written is left


WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import symnb as sn
    sn.config.compiledir = sys.argv[1]
    x = sn.matrix("x")
    f = sn.function([x], sn.sum(sn.tanh(x) * 3 - 1, axis=1), backend="c")
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(a), (np.tanh(a) * 3 - 1).sum(axis=1))
    print("ok")
    """
)


def test_two_processes_compiling_at_once_both_succeed(compiledir):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(compiledir)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert out.strip() == "ok"
    entries = sorted(p.name for p in (compiledir / "c").iterdir())
    libraries = [e for e in entries if e.endswith(".so")]
    assert len(libraries) == 1, entries
    assert not [e for e in entries if e.endswith(".tmp")], entries
    with forbid_compile():  # the entry is valid: it loads and runs here too
        cache._loaded.clear()
        x = sn.matrix("x")
        f = sn.function([x], sn.sum(sn.tanh(x) * 3 - 1, axis=1), backend="c")
    a = np.ones((2, 5))
    np.testing.assert_allclose(f(a), (np.tanh(a) * 3 - 1).sum(axis=1))


def test_compiling_many_kernels_reports_progress(compiledir, monkeypatch):
    """Missing kernels compile through ``sn.config.progress`` (a bar in a notebook)."""
    calls = []

    def record(iterable, total=None, label=""):
        calls.append((total, label))
        yield from iterable

    monkeypatch.setattr(sn.config, "progress", record)
    x = sn.vector("x")
    y = sn.vector("y")
    f = sn.function([x, y], [sn.exp(x) * 3.25, sn.sin(y) - 0.75, sn.sum(x * y * 1.5)], backend="c")
    assert np.allclose(f([1.0, 2.0], [3.0, 4.0])[2], 1.5 * 11)
    assert calls and calls[0][1] == "compiling kernels" and calls[0][0] >= 2
