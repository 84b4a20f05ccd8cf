"""Compilers that run but misbehave, played by stand-in shell scripts around the real one: one
that cannot build, one whose runtime links but does not load, one that hangs, one that writes
nothing, wrappers that echo their command line or reject a flag, a dispatcher by ``argv[0]``
(ccache's masquerade links), and the CPU as ARM's /proc/cpuinfo and macOS's sysctl say it."""

import logging
import os
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

import symnb as sn
import symnb.backends as backends
from symnb.backends.c import cache, compiler, runner
from symnb.errors import CompileError
from tests.backends.c.cache_tools import failing_creates
from tests.helpers import run_python


@pytest.fixture(autouse=True)
def runner_built_by_the_real_compiler(monkeypatch):
    """The runner's memo lasts the process: built first under a stand-in compiler that cannot
    build it, it would stay missing for every later test in this worker (kernels would stop
    calling its helpers). So it is looked up with the real compiler first, and whatever a test
    does to the memo is undone after it."""
    runner.exports_helpers()
    for memo in ("_module", "_problem", "_exports"):
        monkeypatch.setattr(runner, memo, list(getattr(runner, memo)))


@pytest.fixture
def clean(compiledir, monkeypatch):
    """Nothing probed, warned or loaded in this process yet (a stand-in compiler each time)."""
    monkeypatch.setattr(compiler, "_flags", {})
    monkeypatch.setattr(compiler, "_unusable", {}, raising=False)
    monkeypatch.setattr(backends, "_warned_no_compiler", [])
    monkeypatch.setattr(cache, "_verified", {})
    monkeypatch.setattr(cache, "_libraries", {})
    monkeypatch.setattr(sn.config, "backend", "")
    return compiledir


def stand_in(tmp_path, monkeypatch, body, name="stand-in-cc"):
    """An executable ``name`` running ``body`` (``$CC`` is the real compiler), set as
    sn.config.cc."""
    real = compiler.require_compiler()
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\nCC={real}\n{body}\n")
    path.chmod(0o755)
    monkeypatch.setattr(sn.config, "cc", str(path))
    return str(path)


def exp_function(backend=None):
    x = sn.vector("x")
    return sn.function([x], sn.exp(x) + 1, backend=backend)


def check(f):
    a = np.linspace(-1, 1, 5)
    np.testing.assert_allclose(f(a), np.exp(a) + 1)


NO_HEADERS = """[ "$1" = "--version" ] && exec $CC --version
echo "probe.c:1:10: fatal error: math.h: No such file or directory" >&2
echo "compilation terminated." >&2
exit 1"""


# -- a compiler that runs but cannot build ---------------------------------------------------------
def test_a_compiler_that_runs_but_cannot_build_falls_back_to_py_with_one_warning(
    clean, tmp_path, monkeypatch
):
    cc = stand_in(tmp_path, monkeypatch, NO_HEADERS)
    with pytest.warns(RuntimeWarning) as seen:
        f = exp_function()
        g = exp_function()
    (warning,) = seen
    message = str(warning.message)
    assert cc in message and "fatal error: math.h: No such file or directory" in message
    assert "backend='py'" in message
    assert warning.filename == __file__  # the user's line, not symnb's
    assert f.backend == g.backend == "py"
    check(f)
    with pytest.raises(compiler.CompilerUnusable, match="math.h: No such file"):
        exp_function(backend="c")  # chosen: an error, never a silent fallback


# -- a runtime that links but does not load --------------------------------------------------------
@pytest.fixture
def link_only_library(tmp_path):
    """``libfakedep.so`` in a folder the dynamic loader does not search."""
    if not sys.platform.startswith("linux"):
        pytest.skip("GNU ld's --no-as-needed")
    folder = tmp_path / "fl"
    folder.mkdir()
    (folder / "fakedep.c").write_text("int sn_fakedep(void) { return 1; }\n")
    built = subprocess.run(
        [compiler.require_compiler(), "-shared", "-fPIC", "fakedep.c", "-o", "libfakedep.so"],
        cwd=folder,
        capture_output=True,
    )
    assert built.returncode == 0, built.stderr
    return folder


def openmp_that_does_not_load(tmp_path, monkeypatch, library_folder):
    """A compiler whose -fopenmp links a library the loader cannot find (LLVM's libomp
    outside its path)."""
    return stand_in(
        tmp_path,
        monkeypatch,
        f"""case " $* " in *" -fopenmp "*)
  exec $CC "$@" -L{library_folder} -Wl,--no-as-needed -lfakedep;;
esac
exec $CC "$@" """,
    )


def test_the_probe_loads_what_it_builds_so_openmp_whose_runtime_does_not_load_is_dropped(
    clean, tmp_path, monkeypatch, link_only_library
):
    """LLVM's libomp outside the loader's path: -fopenmp links but the library does not load;
    the probe finds it (it loads its library) and keeps -fopenmp-simd."""
    cc = openmp_that_does_not_load(tmp_path, monkeypatch, link_only_library)
    used = compiler.probe_flags(cc)
    assert "-fopenmp" not in used and "-fopenmp-simd" in used


def test_a_kernel_library_that_does_not_load_is_deleted_and_built_again_without_openmp(
    clean, tmp_path, monkeypatch, link_only_library
):
    """A cold compile directory's first try links -fopenmp unprobed (nothing loads then):
    the library does not load, is deleted, the flags are probed again and the kernel is
    compiled with the new ones."""
    cc = openmp_that_does_not_load(tmp_path, monkeypatch, link_only_library)
    f = exp_function(backend="c")
    check(f)
    assert "-fopenmp" not in compiler.flags(cc)
    for library in (clean / "c").glob("lib-*"):  # what is left loads
        assert b"libfakedep" not in library.read_bytes()


def test_a_compiler_whose_every_library_does_not_load_says_so(
    clean, tmp_path, monkeypatch, link_only_library
):
    cc = stand_in(
        tmp_path,
        monkeypatch,
        f"""[ "$1" = "--version" ] && exec $CC --version
exec $CC "$@" -L{link_only_library} -Wl,--no-as-needed -lfakedep""",
    )
    with pytest.raises(CompileError, match=r"libfakedep\.so: cannot open shared object file"):
        exp_function(backend="c")
    assert not list((clean / "c").glob("lib-*"))  # nothing that does not load stays cached
    with pytest.warns(RuntimeWarning, match=f"{cc} cannot build symnb's kernels"):
        assert exp_function().backend == "py"


# -- a compiler that writes nothing ----------------------------------------------------------------
def test_a_compiler_that_exits_0_and_writes_nothing_says_so(clean, tmp_path, monkeypatch):
    cc = stand_in(tmp_path, monkeypatch, '[ "$1" = "--version" ] && exec $CC --version\nexit 0')
    with pytest.raises(CompileError, match="exited with status 0 but wrote no probe"):
        exp_function(backend="c")
    compiler.accept_flags(cc, compiler.first_try())  # flags known: the kernel's own compile,
    monkeypatch.setattr(compiler, "probe_flags", compiler.flags)  # and its error stands
    with pytest.raises(CompileError, match=f"C compiler {cc} exited with status 0 but wrote no"):
        exp_function(backend="c")


# -- a compiler that hangs -------------------------------------------------------------------------
def test_a_compiler_that_hangs_is_stopped_with_a_clear_error(clean, tmp_path, monkeypatch, caplog):
    """Not ``exec sleep``: the shell's child holds the pipes, as cc1 does for gcc."""
    cc = stand_in(tmp_path, monkeypatch, '[ "$1" = "--version" ] && exec $CC --version\nsleep 30')
    monkeypatch.setattr(compiler, "PROBE_TIMEOUT", 0.5)
    monkeypatch.setattr(compiler, "COMPILE_TIMEOUT", 0.5)
    caplog.set_level(logging.DEBUG, logger="symnb")
    with pytest.raises(CompileError, match=rf"{cc} did not finish a (kernel|probe) in 0.5 s"):
        exp_function(backend="c")
    started = [r.getMessage() for r in caplog.records if r.getMessage().startswith("compiling")]
    assert started and cc in started[0]  # a stuck compile is told from a slow one


HANGS_ONCE_MARKED = """if [ -e {marker} ] && [ "$1" != "--version" ]; then
  sleep 60 & echo "$$ $!" > {started}.$$; wait; exit 1
fi
exec $CC "$@"
"""

INTERRUPTED = """
import glob, os, signal, threading, time, numpy as np, symnb as sn
from symnb.backends.c import cache
cache._cores = lambda: 2  # two batches, two compiler runs in worker threads, whatever the load
x = sn.tensor("x", shape=("n",), dtype="float64")
sn.function([x], sn.exp(x) + 1, backend="c")(np.ones(2))  # the probe and the runner
open({marker!r}, "w").close()  # from now on the compiler hangs
outs = [sn.sort(sn.exp(x * 0.5) - 1), sn.sort(sn.tanh(x * 0.25) + 3)]  # two kernels
sent = []
def interrupt():
    deadline = time.time() + 30
    while len(glob.glob({started!r} + ".*")) < 2 and time.time() < deadline:
        time.sleep(0.05)
    sent.append(time.time())
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
threading.Thread(target=interrupt, daemon=True).start()
try:
    sn.function([x], outs, backend="c")
except KeyboardInterrupt:
    print("interrupted", time.time() - sent[0], len(glob.glob({started!r} + ".*")))
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
def test_ctrl_c_during_a_parallel_compile_kills_every_compiler_run_at_once(tmp_path):
    """A Ctrl-C reaches the main thread, which waited (up to COMPILE_TIMEOUT) for the batches
    compiling in worker threads: now their compilers are killed, with their children, and
    no half-written library is left in the compile directory."""
    marker, started = str(tmp_path / "hang"), str(tmp_path / "started")
    cc = tmp_path / "cc"
    body = HANGS_ONCE_MARKED.format(marker=marker, started=started)
    cc.write_text(f"#!/bin/sh\nCC={compiler.require_compiler()}\n{body}\n")
    cc.chmod(0o755)
    compiledir = tmp_path / "compiledir"
    env = dict(os.environ, CC=str(cc), SYMNB_COMPILEDIR=str(compiledir))
    env.pop("SYMNB_FLAGS", None)
    out = run_python(INTERRUPTED.format(marker=marker, started=started), env, timeout=60)
    word, seconds, runs = out.split()
    assert word == "interrupted" and runs == "2"
    assert float(seconds) < 5  # was: not before the hung compilers ended (60 s here)
    pids = [int(p) for path in tmp_path.glob("started.*") for p in path.read_text().split()]
    assert len(pids) == 4 and not [p for p in pids if _alive(p)]
    left = [p.name for p in compiledir.rglob("*") if p.name.startswith("lib-") or ".tmp" in p.name]
    libraries = {line.split()[0] for line in map(Path.read_text, compiledir.rglob("*.entry"))}
    assert set(left) == libraries  # only the first function's, every one with its entry


# -- what the compiler says about a flag -----------------------------------------------------------
def test_a_wrapper_that_echoes_its_command_line_keeps_every_flag(clean, tmp_path, monkeypatch):
    """NIX_DEBUG's, spack's or distcc's verbose wrappers name every flag and reject none:
    they keep the flags the compiler itself takes (clang has no -fvect-cost-model)."""
    want = compiler.probe_flags(compiler.require_compiler())
    cc = stand_in(
        tmp_path,
        monkeypatch,
        'echo "extra flags: -Wno-unused-command-line-argument" >&2\n'
        'echo "+ $CC $*" >&2\nexec $CC "$@"',
    )
    check(exp_function(backend="c"))
    assert compiler.flags(cc) == want


def test_only_a_diagnostic_about_a_flag_rejects_it():
    said = [
        "gcc: error: unrecognized command-line option '-fvect-cost-model=dynamic'",
        "clang: warning: optimization flag '-fno-math-errno' is not supported "
        "[-Wignored-optimization-argument]",
        "clang: warning: argument unused during compilation: '-march=native'",
        "icc: command line warning #10006: ignoring unknown option '-pipe'",
    ]
    for line in said:
        flag = line.split("'")[1]
        assert compiler.mentions(f"probe.c: note\n{line}\n", (flag,)), line
    echoed = "+ cc -pipe -march=native -Wno-unused-command-line-argument -Werror=invalid-pch"
    assert not compiler.mentions(echoed, ("-pipe", "-march=native"))


def test_pipe_is_probed_and_dropped_where_rejected(clean, tmp_path, monkeypatch):
    cc = stand_in(
        tmp_path,
        monkeypatch,
        """for a; do
  if [ "$a" = "-pipe" ]; then
    echo "cc: error: unrecognized command-line option '-pipe'" >&2; exit 1
  fi
done
exec $CC "$@" """,
    )
    check(exp_function(backend="c"))
    assert "-pipe" not in compiler.flags(cc) and "-O2" in compiler.flags(cc)


# -- $CC with arguments ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value, meant",
    [
        ("{cc} -O3", "set it to '{cc}'"),
        ("{path} -O2", "set it to '{path}'"),  # a path with flags said "not an executable file"
        ("ccache {cc}", "for ccache, name its masquerade link (e.g. /usr/lib/ccache/{cc})"),
        ("no-such-launcher {cc}", "set it to 'no-such-launcher'"),
    ],
)
def test_a_compiler_setting_with_arguments_says_so(monkeypatch, value, meant):
    """Whether or not its first word is installed (without ccache, ``CC="ccache gcc"`` said
    to install a C compiler), and for a path too: the arguments are the mistake."""
    path = compiler.require_compiler()
    names = {"cc": os.path.basename(path), "path": path}
    value, meant = value.format(**names), meant.format(**names)
    monkeypatch.setenv("CC", value)
    monkeypatch.setattr(sn.config, "cc", "")
    with pytest.raises(CompileError) as info:
        compiler.find_compiler()
    first, rest = value.split(None, 1)
    assert str(info.value).startswith(
        f"$CC = {value!r} holds arguments ({rest!r}) after {first!r}: symnb takes one executable"
    )
    assert meant in str(info.value)
    assert compiler.problem().startswith(f"$CC = {value!r} holds arguments")
    monkeypatch.setattr(sn.config, "cc", value)
    with pytest.raises(CompileError, match=r"^sn.config.cc = .* holds arguments"):
        compiler.find_compiler()


# -- the runner's build failing: its reason --------------------------------------------------------
LD_FULL = """/usr/bin/ld: final link failed: No space left on device
collect2: error: ld returned 1 exit status"""


def test_the_runners_build_failure_shows_the_linkers_line(compiledir, tmp_path, monkeypatch):
    cc = stand_in(tmp_path, monkeypatch, f"cat >&2 <<'EOF'\n{LD_FULL}\nEOF\nexit 1")
    monkeypatch.setattr(runner, "_threading", lambda cc: ())
    monkeypatch.setattr(runner, "_problem", [])
    assert not runner._build(cc, str(tmp_path / "runner.so"))
    assert "No space left on device" in runner._problem[0]
    assert compiler.summary(LD_FULL) == "/usr/bin/ld: final link failed: No space left on device"


def test_the_runners_record_on_a_full_disk_names_the_compile_directory(
    compiledir, tmp_path, monkeypatch
):
    """The runner's ``.sum`` written on a full disk: its reason was "[Errno 28] No space
    left on device", no directory named; now the compile directory's full-disk message."""
    cc = stand_in(tmp_path, monkeypatch, 'for last; do :; done\nprintf built > "$last"')
    monkeypatch.setattr(runner, "_threading", lambda cc: ())
    monkeypatch.setattr(runner, "_problem", [])
    failing_creates(monkeypatch, lambda path: ".sum." in os.path.basename(path))
    target = tmp_path / "runner.so"
    assert not runner._build(cc, str(target))
    (said,) = runner._problem
    assert said.startswith(f"{cc}: the disk holding the compile directory {compiledir} is full")
    assert f"writing {target}.sum: No space left on device" in said
    assert not list(tmp_path.glob("runner.so*"))


def test_the_runners_warning_is_at_the_users_line(compiledir, monkeypatch):
    monkeypatch.setattr(runner, "_module", [])
    monkeypatch.setattr(runner, "_exports", [])
    monkeypatch.setattr(runner, "_problem", ["stand-in reason"])
    monkeypatch.setattr(runner, "_installed", lambda: None)
    monkeypatch.setattr(runner, "_compiled", lambda: None)
    with pytest.warns(RuntimeWarning, match="C runner could not be built") as seen:
        exp_function(backend="c")
    assert seen[0].filename == __file__


def test_threads_looking_up_the_runner_at_once_load_it_once(monkeypatch):
    """The first compiles of several threads at once: one thread loads the runner while the
    others wait for it, and all get that one (each loaded a copy of its own)."""
    built = runner.module()
    if built is None:
        pytest.skip("no C runner here")
    loads = []

    def installed():
        loads.append(types.SimpleNamespace(__file__=built.__file__))
        time.sleep(0.2)  # a build or a load takes a while: the other threads arrive meanwhile
        return loads[-1]

    monkeypatch.setattr(runner, "_module", [])
    monkeypatch.setattr(runner, "_exports", [])
    monkeypatch.setattr(runner, "_installed", installed)
    got = []
    workers = [threading.Thread(target=lambda: got.append(runner.module())) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(loads) == 1 and runner._module == loads and got == loads * 4


# -- one file, several compilers (ccache's masquerade links) ---------------------------------------
def test_compilers_dispatched_by_their_name_have_their_own_identity(compiledir, tmp_path):
    script = tmp_path / "dispatch"
    script.write_text(
        '#!/bin/sh\ncase "$(basename "$0")" in\n'
        '  gcc) echo "gcc (stand-in) 12.2.0";;\n'
        '  clang) echo "clang version 14.0.6 (stand-in)";;\n'
        "esac\n"
    )
    script.chmod(0o755)
    (tmp_path / "masq").mkdir()
    for name in ("gcc", "clang"):
        os.symlink(script, tmp_path / "masq" / name)
    gcc = compiler.compiler_identity(str(tmp_path / "masq" / "gcc"))
    clang = compiler.compiler_identity(str(tmp_path / "masq" / "clang"))
    assert gcc == "gcc (stand-in) 12.2.0" and clang == "clang version 14.0.6 (stand-in)"


def test_a_wrapper_printing_the_compilers_banner_has_kernels_of_its_own(
    clean, tmp_path, monkeypatch
):
    """A wrapper (spack's, nix's; here one adding -ffinite-math-only, whose isnan is always
    false) prints the banner of the compiler it runs: its kernels are never the compiler's
    own. (Not -ffast-math: its libraries turn on flush-to-zero in the process that loads them,
    and every later test of subnormals in this worker would fail.)"""
    real = compiler.require_compiler()
    wrapper = stand_in(tmp_path, monkeypatch, 'exec $CC -ffinite-math-only "$@"', name="fastcc")
    assert compiler.compiler_identity(wrapper) == compiler.compiler_identity(real)
    x = sn.vector("x")
    sn.function([x], sn.where(sn.isnan(x), 5.0, x), backend="c")(np.array([1.0, np.nan]))
    monkeypatch.setattr(sn.config, "cc", real)
    f = sn.function([x], sn.where(sn.isnan(x), 5.0, x), backend="c")
    np.testing.assert_array_equal(f(np.array([1.0, np.nan])), [1.0, 5.0])
    assert runner._cached_path(wrapper) != runner._cached_path(real)  # the runner's build too
    assert np.array([5e-324]) * 2 > 0  # subnormals still kept in this process


# -- a loaded kernel follows the flags -------------------------------------------------------------
def test_a_loaded_kernel_is_not_reused_after_openmp_is_turned_off(compiledir, monkeypatch):
    monkeypatch.setattr(sn.config, "openmp", True)
    if "-fopenmp" not in compiler.flags(compiler.require_compiler()):
        # (Debian's clang without libomp-dev: both settings build the same kernel)
        pytest.skip("the compiler builds no OpenMP kernels here: no kernel to tell apart")
    check(exp_function(backend="c"))
    before = cache.stats.memory_hits
    monkeypatch.setattr(sn.config, "openmp", False)
    f = exp_function(backend="c")
    check(f)
    assert cache.stats.memory_hits == before  # not the kernel loaded with -fopenmp
    assert "-fopenmp" not in compiler.flags(compiler.require_compiler())


# -- the CPU in the cache key ----------------------------------------------------------------------
def arm_cpuinfo(part: str) -> str:
    block = (
        "processor\t: {n}\nBogoMIPS\t: 50.00\n"
        "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
        f"CPU part\t: {part}\nCPU revision\t: 1\n\n"
    )
    return "".join(block.format(n=n) for n in range(4))


def test_arm_cpus_differ_by_their_part():
    n1 = compiler.describe_cpu("aarch64", arm_cpuinfo("0xd0c"))  # Neoverse N1
    v1 = compiler.describe_cpu("aarch64", arm_cpuinfo("0xd40"))  # Neoverse V1
    assert n1 != v1 and "0xd0c" in n1 and "asimd" in n1 and "0x41" in n1


def test_macos_cpus_are_told_apart_by_sysctl():
    def asker(brand, features):
        answers = {
            ("-n", "machdep.cpu.brand_string"): brand,
            ("hw.optional",): features,
        }
        return lambda *arguments: answers[arguments]

    m1 = compiler.describe_cpu("arm64", None, asker("Apple M1", "hw.optional.arm.FEAT_BF16: 0"))
    m2 = compiler.describe_cpu("arm64", None, asker("Apple M2", "hw.optional.arm.FEAT_BF16: 1"))
    assert m1 != m2 and "Apple M1" in m1 and "FEAT_BF16" in m1
    assert compiler.describe_cpu("arm64", None, lambda *a: None, lambda: "arm") == "arm64 arm"
