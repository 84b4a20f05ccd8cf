"""The disk cache of CUDA binaries (``<compiledir>/cuda``, symnb/backends/cuda/nvrtc.py): keyed
by the source, the target architecture, NVRTC's version and the options; a second process
compiles nothing; a damaged or unsafe file is deleted and built again. NVRTC is real, the
driver a stand-in (tests/backends/cuda_standin.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import symnb as sn
from symnb.backends.cuda import nvrtc

pytest.importorskip("cuda.bindings.nvrtc", reason="pip install 'symnb[cuda13]' for NVRTC")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = 'extern "C" __global__ void sn_kernel(float *x) { x[threadIdx.x] += 1.0f; }'

PROGRAM = """
import hashlib, numpy as np, symnb as sn
from tests.backends.cuda_standin import StandInDriver
from symnb.backends.cuda import cublas, nvrtc, runtime
driver = StandInDriver()
runtime.driver = lambda: driver
cublas.find_cublas = lambda loader=None: None
sn.config.cuda_launcher = "cuda-python"
x, W = sn.matrix("x", dtype="float32"), sn.shared(np.ones((3, 2), "float32"), name="W")
outputs = [sn.exp(x) * 2, sn.sum(x, axis=0), sn.softmax(x @ W, axis=1)]
f = sn.function([x], outputs, backend="cuda")
f(np.ones((4, 3), "float32"))
print(nvrtc.compiles, len(driver.modules), hashlib.sha256(b"".join(driver.modules)).hexdigest())
"""


def run_process(compiledir) -> tuple[int, int, str]:
    env = dict(os.environ, PYTHONPATH=ROOT, SYMNB_COMPILEDIR=str(compiledir))
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    compiles, modules, digest = done.stdout.split()
    return int(compiles), int(modules), digest


def test_a_second_process_compiles_nothing(tmp_path):
    first = run_process(tmp_path / "cache")
    second = run_process(tmp_path / "cache")
    assert first[0] >= 1 and first[1] == first[0]  # each program compiled once, then loaded
    assert second == (0, first[1], first[2])  # the same binaries, none compiled
    assert len(os.listdir(tmp_path / "cache" / "cuda")) == first[0]
    other = run_process(tmp_path / "other")  # an empty cache compiles again
    assert other[0] == first[0]


def test_the_key_is_source_architecture_version_and_options(monkeypatch):
    path = nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())
    assert path.startswith(os.path.join(sn.config.compiledir, "cuda")) and path.endswith(".cubin")
    others = {
        nvrtc.cache_path(SOURCE + " ", "sm_90", "CUBIN", ()),
        nvrtc.cache_path(SOURCE, "sm_80", "CUBIN", ()),
        nvrtc.cache_path(SOURCE, "compute_90", "PTX", ()),
        nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ("--use_fast_math",)),
    }
    major, minor = nvrtc.version()
    monkeypatch.setattr(nvrtc, "version", lambda: (major, minor + 1))
    others.add(nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ()))
    assert len(others) == 5 and path not in others


def test_built_once_then_read_from_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path))
    before = nvrtc.compiles
    code, kind = nvrtc.compile_for_device(SOURCE, 90)
    assert kind == "CUBIN" and code.startswith(b"\x7fELF") and nvrtc.compiles == before + 1
    assert nvrtc.compile_for_device(SOURCE, 90) == (code, "CUBIN")
    assert nvrtc.compiles == before + 1
    path = nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_clear_cache_deletes_the_binaries_and_only_them(tmp_path, monkeypatch):
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "cache"))
    code, _ = nvrtc.compile_for_device(SOURCE, 90)
    path = nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())
    mine = Path(path).with_name("notes.txt")
    mine.write_text("the user's own file")
    sn.clear_cache()
    assert not os.path.exists(path) and mine.read_text() == "the user's own file"
    before = nvrtc.compiles
    assert nvrtc.compile_for_device(SOURCE, 90) == (code, "CUBIN")  # built again
    assert nvrtc.compiles == before + 1


def test_a_damaged_binary_is_deleted_and_built_again(tmp_path, monkeypatch):
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path))
    code, _ = nvrtc.compile_for_device(SOURCE, 90)
    path = nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 10)
    before = nvrtc.compiles
    with pytest.warns(RuntimeWarning, match="cached CUDA binary .* was damaged"):
        again, _ = nvrtc.compile_for_device(SOURCE, 90)
    assert again == code and nvrtc.compiles == before + 1
    assert nvrtc.compile_for_device(SOURCE, 90)[0] == code and nvrtc.compiles == before + 1


def test_a_binary_others_may_write_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path))
    code, _ = nvrtc.compile_for_device(SOURCE, 90)
    path = nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())
    os.chmod(path, 0o666)
    before = nvrtc.compiles
    with pytest.warns(RuntimeWarning, match="refused the cached file .* writable by group"):
        assert nvrtc.compile_for_device(SOURCE, 90)[0] == code
    assert nvrtc.compiles == before + 1 and os.stat(path).st_mode & 0o777 == 0o600


def test_temporary_files_of_killed_writes_are_swept(tmp_path, monkeypatch):
    from symnb.backends import compiledir

    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path))
    monkeypatch.setattr(compiledir, "_swept", set())
    folder = Path(nvrtc.cache_path(SOURCE, "sm_90", "CUBIN", ())).parent
    monkeypatch.setattr(compiledir, "_swept", set())
    stale, fresh = folder / "a.cubin.123.0badf00d.tmp", folder / "b.cubin.123.0badf00d.tmp"
    for path in (stale, fresh):
        path.write_bytes(b"half")
    os.utime(stale, (1, 1))
    nvrtc.compile_for_device(SOURCE, 90)
    assert not stale.exists() and fresh.exists()  # another process may be writing that one
