"""W5: time to first result of the W3 training step in a new process, cold and warm cache.

``python -m benchmarks.compile_time PEER CACHE_DIR MODE`` is one probe, a new process in which
NumPy and the harness are already imported. It times three phases and prints them as one JSON
line: *import* (the peer's module, i.e. the library's top-level import), *runtime start* (what
the peer starts once per process: JAX's CPU client, symnb's backend code that ``import symnb``
defers), and *compile + first call* (building the step: tracing, differentiation, rewrites,
code generation, compilation, and one step). W5's time is the last two, counted from the moment
the import has returned, as a user pays them before the first result. Between the import and
the runtime start it points the peer's compile cache at CACHE_DIR (untimed). The result is
then checked against the float64 reference, computed after the timed part: its float64 BLAS
calls leave OpenBLAS threads spinning for a while, which on two cores took CPU from the
compiler (about 0.07 s more CPU in the timed part, measured with symnb-c). Cold: a new empty
CACHE_DIR. Warm: a new process on the directory a cold probe filled.

Before the probes, symnb's modules are compiled to bytecode (untimed), as ``pip install``
does for an installed package and every peer's installed package has: with
``PYTHONDONTWRITEBYTECODE`` set (as in the project's shells), an editable checkout otherwise
recompiles its sources in every new process, 0.13 s of import and 0.03 s of runtime start
measured here, which no user of an installed symnb pays.
"""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import peers, probes
from benchmarks.check import Skip, problem_with
from benchmarks.runner import REPO, Result, with_load, worker_env
from benchmarks.workloads import BY_KEY, comparable, copy_inputs, make_inputs, reference

REPEATS = {"full": 3, "quick": 1, "tiny": 1}  # cold/warm pairs, the same for every peer
PHASES = ("import_s", "runtime_s", "compile_s")
PROBE_TIMEOUT_S = 420


def probe(peer_name: str, cache_dir: str, mode: str) -> dict:
    """Import the peer, start its runtime, build and run the W3 step once; the phases' times."""
    spec = BY_KEY["W5"]
    inputs = make_inputs(spec, mode)
    start = time.perf_counter()
    peer = peers.load(peer_name)
    imported = time.perf_counter()
    peer.configure_cache(cache_dir)
    configured = time.perf_counter()
    peer.start_runtime()
    started = time.perf_counter()
    try:
        outputs = peer.build(spec.builder, copy_inputs(inputs))()
    except Skip as exc:
        return {"status": "skipped", "note": str(exc)}
    done = time.perf_counter()
    expected = comparable(spec, inputs, reference(spec, inputs))  # untimed: see the docstring
    outputs = peer.to_numpy(outputs)
    problem = problem_with(outputs, comparable(spec, inputs, outputs), expected, spec.dtype)
    if problem:
        return {"status": "WRONG", "note": problem}
    phases = [imported - start, started - configured, done - started]
    reply = {"status": "ok", "seconds": phases[1] + phases[2], **dict(zip(PHASES, phases))}
    return reply | ({"note": note} if (note := peer.cold_note()) else {})


def measure(peer_names: list[str], mode: str, say) -> list[Result]:
    """Cold and warm rows for every peer (not the ``out=`` variants), equal repeats each."""
    results = []
    _bytecode_compiled()
    if any(peers.is_symnb(name) for name in peer_names):
        _runner_installed(say)
    for name in peer_names:
        if peers.is_variant(name):
            continue
        say(f"  W5: {name}, {REPEATS[mode]} cold + {REPEATS[mode]} warm new processes")
        results += with_load(_cold_and_warm(name, mode, REPEATS[mode]))
    return results


def _bytecode_compiled() -> None:
    """symnb's ``.pyc`` files, as an install writes them (see the module docstring); a
    directory that cannot be written (an installed copy) already has them."""
    compileall.compile_dir(str(REPO / "symnb"), quiet=2)


def _runner_installed(say) -> None:
    """symnb's C runner built in place from this tree's runner.c, as ``pip install`` builds it
    (untimed), when the installed build is of another runner.c: a checkout changed since
    ``pip install -e`` would otherwise build it into every cold probe's empty cache, about
    1 s that a user pays once per compile directory, not per compile (a probe that still
    builds it says so in the row's note)."""
    from symnb.backends.c import runner  # deferred: the harness needs it only here

    if runner.installed_build() is not None:
        return
    say("  W5: building the C runner in place (the installed one is of another runner.c)")
    done = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        say(f"  W5: the build failed; each cold probe builds its own: {done.stderr[-300:]}")


def _cold_and_warm(name: str, mode: str, repeats: int) -> list[Result]:
    cold, warm = Result("W5-cold", name, "ok"), Result("W5-warm", name, "ok")
    with tempfile.TemporaryDirectory(prefix="symnb-bench-cache-") as root:
        for index in range(repeats):
            cache = os.path.join(root, str(index))
            os.makedirs(cache)
            _record(cold, _spawn(name, cache, mode))
            if cold.status == "skipped":
                return [cold]
            _record(warm, _spawn(name, cache, mode))
    return [cold, warm]


def _record(result: Result, reply: dict) -> None:
    if result.status != "ok":
        return
    if reply["status"] == "ok":
        if reply.get("note") and reply["note"] not in result.note:
            result.note = "; ".join(filter(None, [result.note, reply["note"]]))
        result.samples.append(reply["seconds"])
        result.calls_per_sample = 1
        for phase in PHASES:
            result.extra.setdefault(phase, []).append(reply[phase])
    else:
        result.status, result.note, result.samples = reply["status"], reply.get("note", ""), []


def _spawn(name: str, cache: str, mode: str) -> dict:
    env = worker_env() | peers.cache_env(name, cache)
    return probes.run_probe("benchmarks.compile_time", [name, cache, mode], env, PROBE_TIMEOUT_S)


def main(argv: list[str]) -> None:
    probes.reply(probe, argv[0], argv[1], argv[2])


if __name__ == "__main__":
    main(sys.argv[1:])
