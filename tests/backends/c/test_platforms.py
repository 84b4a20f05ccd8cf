"""The compiler matrix and the platform paths, with stand-in values for what this machine is not:
macOS's and Windows's library names and link flags, the BLAS found there, and the fallback to
backend "py" where no compiler can build the kernels (docs/install.md)."""

import os
import warnings
from dataclasses import replace

import numpy as np
import pytest

import symnb as sn
import symnb.backends as backends
from symnb.backends.c import blas, cache, compiler, platforms, runner
from symnb.errors import CompileError

LINUX_LDSHARED = "gcc -shared -L/opt/py/lib -Wl,-rpath,/opt/py/lib"
MACOS_LDSHARED = "clang -bundle -undefined dynamic_lookup -arch arm64 -L/opt/homebrew/lib"


def build(scale=2.0):
    x = sn.vector("x")
    return sn.function([x], sn.exp(x) * scale + 1, backend="c")


def works(f, scale=2.0):
    a = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(a), np.exp(a) * scale + 1)


def fake_compiler(tmp_path, name, banner, status=0):
    """An executable that answers ``--version`` with ``banner`` (on stderr, as cl does)."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\necho '{banner}' >&2\nexit {status}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def stand_in(monkeypatch):
    """Make ``platforms.current()`` answer for another system (what it builds here)."""

    def use(platform):
        monkeypatch.setattr(platforms, "current", lambda *args, **kwargs: platform)
        monkeypatch.setattr(compiler, "_flags", {})
        monkeypatch.setattr(runner, "_exports", [])
        return platform

    return use


# -- library naming and link flags -----------------------------------------------------------------
def test_macos_links_as_cpython_does_and_names_libraries_dylib():
    mac = platforms.current("darwin", ldshared=MACOS_LDSHARED)
    assert mac.library_suffix == ".dylib"
    assert mac.runner_link == ("-bundle", "-undefined", "dynamic_lookup")  # no -arch, no -L
    assert mac.kernel_link == ("-dynamiclib", "-undefined", "dynamic_lookup")
    assert mac.builds_runner and mac.shares_helpers
    # an LDSHARED without the lookup flag still gets it: Python's symbols are the loader's
    assert "dynamic_lookup" in platforms.current("darwin", ldshared="cc -shared").runner_link
    assert "xcode-select --install" in mac.install_hint


def test_linux_takes_only_the_link_mode_from_ldshared():
    linux = platforms.current("linux", ldshared=LINUX_LDSHARED)
    assert linux.runner_link == ("-shared", "-fPIC")
    assert linux.kernel_link == ("-shared", "-fPIC")
    assert linux.library_suffix == ".so"


def test_windows_dlls_carry_their_own_helpers_and_the_runner_is_pips():
    win = platforms.current("win32", ldshared="")
    assert win.library_suffix == ".dll" and win.kernel_link == ("-shared",)
    assert not win.builds_runner and not win.shares_helpers
    assert "MinGW-w64" in win.install_hint and "MSVC" in win.install_hint


def test_the_flags_and_the_runners_command_follow_the_platform(stand_in, monkeypatch):
    stand_in(platforms.current("darwin", ldshared=MACOS_LDSHARED))
    assert compiler.base_flags()[-4:] == ("-dynamiclib", "-undefined", "dynamic_lookup", "-lm")
    monkeypatch.setattr(compiler, "flags", lambda path: (*compiler.base_flags(), "-fopenmp"))
    command = runner.compile_command("cc", "out.so")
    assert "-fopenmp" in command
    assert command[2:5] == ["-bundle", "-undefined", "dynamic_lookup"]
    assert not any(word.startswith("-L") for word in command)


def test_a_library_takes_the_platforms_suffix(compiledir, stand_in):
    """macOS's naming, on this machine's linker: the library is named, indexed and loaded."""
    here = platforms.current("linux", ldshared=LINUX_LDSHARED)
    stand_in(replace(here, library_suffix=".dylib"))
    works(build(2.5), 2.5)
    assert [p.suffix for p in (compiledir / "c").glob("lib-*")] == [".dylib"]
    cache._loaded.clear()
    works(build(2.5), 2.5)  # found again through its entry


def test_where_dlls_cannot_share_helpers_kernels_define_their_own(compiledir, stand_in):
    here = platforms.current("linux", ldshared=LINUX_LDSHARED)
    stand_in(replace(here, library_suffix=".dll", shares_helpers=False, builds_runner=False))
    x = sn.matrix("x")
    f = sn.function([x], sn.exp(x).sum(axis=1), backend="c")
    assert "static int64_t sn_collapse(" in f.kernels[0].source
    assert "snrt_" not in f.kernels[0].source
    a = np.arange(12.0).reshape(3, 4) / 7
    np.testing.assert_allclose(f(a), np.exp(a).sum(axis=1))
    assert [p.suffix for p in (compiledir / "c").glob("lib-*")] == [".dll"]
    assert runner._compiled() is None  # Windows: only pip's build of the runner


# -- the BLAS, found through threadpoolctl's list of loaded libraries ----------------------------
def lib(path, api="blas"):
    return {"user_api": api, "internal_api": "openblas", "filepath": path}


@pytest.mark.parametrize(
    "system, numpys, scipys",
    [
        (
            "darwin",
            "/sp/numpy/.dylibs/libscipy_openblas64_.dylib",
            "/sp/scipy/.dylibs/libscipy_openblas.dylib",
        ),
        (
            "win32",
            "/sp/numpy.libs/libscipy_openblas64_-ab12.dll",
            "/sp/scipy.libs/libscipy_openblas-cd34.dll",
        ),
        (
            "linux",
            "/sp/numpy.libs/libscipy_openblas64_-ab12.so",
            "/sp/scipy.libs/libscipy_openblas-cd34.so",
        ),
    ],
)
def test_the_blas_is_numpys_among_the_loaded_libraries(system, numpys, scipys):
    loaded = [lib(scipys), lib("/usr/lib/libgomp.so.1", "openmp"), lib(numpys)]
    assert blas.blas_library(loaded, system, "scipy-openblas", root="/sp") == numpys
    assert blas.blas_library([lib(scipys)], system, "scipy-openblas", root="/sp") is None


def test_accelerate_on_macos_and_a_system_blas_elsewhere():
    assert blas.blas_library([], "darwin", "accelerate", root="/sp") == blas.ACCELERATE
    assert blas.blas_library([], "linux", "accelerate", root="/sp") is None
    conda = lib("/opt/conda/lib/libopenblasp-r0.3.so")
    assert blas.blas_library([conda], "linux", "openblas", root="/sp") == conda["filepath"]


def test_this_machines_blas_is_found_without_proc():
    found = blas._numpy_blas_path()
    root = os.path.dirname(os.path.dirname(np.__file__))
    assert found is not None and found.startswith(os.path.join(root, "numpy"))


# -- no compiler that can build the kernels: backend "py", one warning -------------------------
@pytest.mark.parametrize(
    "name, banner, status, says",
    [
        ("cl", "Microsoft (R) C/C++ Optimizing Compiler Version 19.38", 2, "is MSVC"),
        ("cc", "xcrun: error: invalid active developer path", 1, "does not run"),
    ],
)
def test_a_compiler_that_cannot_build_kernels_falls_back_to_py_once(
    tmp_path, monkeypatch, stand_in, name, banner, status, says
):
    platform = stand_in(platforms.current("win32" if name == "cl" else "darwin", ldshared=""))
    monkeypatch.setattr(sn.config, "cc", str(fake_compiler(tmp_path, name, banner, status)))
    monkeypatch.setattr(backends, "_warned_no_compiler", [])
    x = sn.vector("x")
    with pytest.warns(RuntimeWarning) as seen:
        f = sn.function([x], sn.exp(x) + 1)
        g = sn.function([x], x * 2)
    (warning,) = seen  # one warning a process
    message = str(warning.message)
    assert says in message and "backend='py'" in message and platform.install_hint in message
    assert f.backend == g.backend == "py"
    np.testing.assert_allclose(f(np.arange(3.0)), np.exp(np.arange(3.0)) + 1)


def test_no_compiler_at_all_on_windows_says_what_to_install(monkeypatch, stand_in):
    win = stand_in(platforms.current("win32", ldshared=""))
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(sn.config, "cc", "")
    monkeypatch.setattr(backends, "_warned_no_compiler", [])
    with pytest.warns(RuntimeWarning, match="no C compiler found") as seen:
        assert backends.default_backend() == "py"
    assert "MinGW-w64" in str(seen[0].message) and win.install_hint in str(seen[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert backends.default_backend() == "py"


# -- which compiler -----------------------------------------------------------------------------
def test_the_compiler_is_the_config_then_cc_then_the_path(tmp_path, monkeypatch):
    first = fake_compiler(tmp_path, "first-cc", "gcc (stand-in) 1.0")
    second = fake_compiler(tmp_path, "second-cc", "gcc (stand-in) 2.0")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CC", "second-cc")
    monkeypatch.setattr(sn.config, "cc", "first-cc")
    assert compiler.find_compiler() == str(first)
    monkeypatch.setattr(sn.config, "cc", "")
    assert compiler.find_compiler() == str(second)
    monkeypatch.delenv("CC")
    assert os.path.basename(compiler.find_compiler()) in compiler.CANDIDATES


def test_a_relative_compiler_path_is_taken_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "tools").mkdir()
    made = fake_compiler(tmp_path / "tools", "mycc", "gcc (stand-in) 1.0")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sn.config, "cc", os.path.join("tools", "mycc"))
    assert compiler.find_compiler() == str(made)
    monkeypatch.setattr(sn.config, "cc", os.path.join("tools", "missing-cc"))
    with pytest.raises(CompileError, match=r"sn.config.cc = 'tools/missing-cc' is not an exec"):
        compiler.find_compiler()


def test_a_relative_compiler_path_compiles_kernels(compiledir, tmp_path, monkeypatch):
    """Issue 35's case: the compile runs in a temporary directory, where a relative path
    named nothing (a raw FileNotFoundError on every compile)."""
    real = compiler.find_compiler()
    (tmp_path / "bin").mkdir()
    os.symlink(real, tmp_path / "bin" / os.path.basename(real))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sn.config, "cc", os.path.join("bin", os.path.basename(real)))
    works(build(4.5), 4.5)


def test_the_compilers_version_is_in_every_key(monkeypatch):
    key = cache.cache_key("int sn_kernel;")
    monkeypatch.setattr(compiler, "compiler_identity", lambda path: "gcc (stand-in) 99.1")
    assert cache.cache_key("int sn_kernel;") != key


def test_without_openmp_kernels_compile_without_it_and_agree(compiledir, monkeypatch):
    monkeypatch.setattr(sn.config, "openmp", False)
    cc = compiler.require_compiler()
    used = compiler.flags(cc)
    assert "-fopenmp" not in used and set(compiler.REQUIRED) <= set(used)
    x = sn.matrix("x")
    f = sn.function([x], [sn.exp(x).sum(axis=1), sn.tanh(x) * 2], backend="c")
    a = np.linspace(-2, 2, 300 * 400).reshape(300, 400)
    got = f(a)
    np.testing.assert_allclose(got[0], np.exp(a).sum(axis=1))
    np.testing.assert_allclose(got[1], np.tanh(a) * 2)
    memo = compiler._flags_memo(cc)
    monkeypatch.setattr(sn.config, "openmp", True)
    assert compiler._flags_memo(cc) != memo  # probed apart: one setting never reads the other's
