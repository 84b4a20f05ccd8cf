"""The C runner: a compiled function's whole call (checks, steps, outputs) in one C call.

``runner.c`` is a CPython extension. ``pip install`` builds it (setup.py, optional); when the
installed build is missing or older than ``runner.c``, it is compiled once into
``<compiledir>/runner/`` like a kernel (keyed by the source, Python, NumPy and the compiler).
Without it (no Python headers, a failed build, ``sn.config.c_runner = False``) the Python
executor (symnb/backends/execute.py) runs every call of the same plan, with the same results.

The runner is the executor of record for backend "c". Each step's record carries a Python
callable (``execute.run_declined`` bound to the step) that runs that one step when the runner
cannot run it as planned: the runner goes on with the next step, and a failing step's error
(naming the node and the user's line) is raised by the call itself. A call returns None only
when an argument is not as planned, before any step ran: the function then converts its
arguments and calls the runner again. ``run_profiled`` times the runner's own steps for
``f.profile()``; ``force_decline`` (tests) hands every step of some kinds to Python.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
import sysconfig
from pathlib import Path

import numpy as np

from symnb.backends import execute
from symnb.backends.c import cache, compiler, forks, platforms, threads
from symnb.backends.compiledir import (
    ensure_private,
    fingerprint,
    load_checked,
    read_regular,
    sweep_stale,
    temporary,
    verified,
    write_private,
)
from symnb.backends.plan import SERIAL_MAX, Branch, Gemm, Launch, Library, Repeat, View
from symnb.backends.render.runtime import EXPORTED, names
from symnb.config import config, watch
from symnb.core import locks
from symnb.core.dims import DimExpr
from symnb.core.source import warn_at_user
from symnb.core.types import MAX_RANK
from symnb.errors import CompileError

SOURCE = Path(__file__).with_name("runner.c")
#: every file of the extension (runner.c includes its eight headers and the kernels'
#: helpers), hashed together
SOURCES = (
    SOURCE,
    SOURCE.with_name("runner_plan.h"),
    SOURCE.with_name("runner_args.h"),
    SOURCE.with_name("runner_views.h"),
    SOURCE.with_name("runner_threads.h"),
    SOURCE.with_name("runner_launch.h"),
    SOURCE.with_name("runner_gemm.h"),
    SOURCE.with_name("runner_loop.h"),
    SOURCE.with_name("runner_entry.h"),
    SOURCE.parent.parent / "render" / "runtime.h",
)
MODULE = "symnb.backends.c._runner"
#: runner.c's ``build_id`` in a build's file: its source hash and OpenMP runtime
BUILD_ID = re.compile(rb"SYMNB-RUNNER-BUILD ([0-9a-f]{16}) (\w*);")
BUILD_TIMEOUT = 300  # seconds runner.c may take to compile (about 5 s here) before it is stopped
MAX_NAMES = MAX_RANK * 4  # named dims one call may bind (runner.c's MAXDIM * 4)
_module: list = []  # [module or None] once looked up
_problem: list[str] = []  # why the runner could not be built, when it could not
_exports: list[bool] = []  # [whether kernels may call the runner's helpers] once known
#: held while the runner is looked up (built, loaded), so threads compiling their first
#: functions at once load one runner, and while its helpers are exported; unlocked in a
#: forked child (core/locks.py); re-entrant, since ``exports_helpers`` asks ``module``
_looking_up = locks.rlock()


@functools.cache
def source_hash() -> str:
    """The sources with the rank they are built for (setup.py computes the same)."""
    text = b"".join(path.read_bytes() for path in SOURCES) + _salt().encode()
    return hashlib.sha256(text).hexdigest()[:16]


def _salt() -> str:
    """The defines a build bakes in (setup.py salts its hash the same way)."""
    return f"MAX_RANK={MAX_RANK} SERIAL_MAX={SERIAL_MAX}"


def module():
    """The extension module, or None when it cannot be had (then the Python executor runs)."""
    if not _module:
        with _looking_up:
            if not _module:  # (another thread may have loaded it while this one waited)
                _look_up()
    return _module[0]


def _look_up() -> None:
    with threads.openmp_environment():  # the OpenMP runtime it brings in sleeps when idle
        found = _installed() or _compiled()
    if found is not None:  # set up before other threads can see it in ``_module``
        forks.note(ctypes.CDLL(found.__file__))  # its products' OpenMP threads
        _give_team(found)
    _module.append(found)
    if found is None and _problem:
        warn_at_user(
            f"symnb: the C runner could not be built ({_problem[0]}); backend 'c' runs "
            "each call's steps from Python instead (same results, a few microseconds "
            "more per call)",
            RuntimeWarning,
        )


def reset_team(value=None) -> None:
    """Give a loaded runner the thread policy (threads.py); it asks again on its next call
    (also whenever ``sn.config.threads`` is set)."""
    _give_team(_module[0] if _module else None)


def _give_team(built) -> None:
    if built is not None and hasattr(built, "set_team_policy"):
        built.set_team_policy(threads.team)


watch("threads", reset_team)


def exports_helpers() -> bool:
    """Whether kernels may call the runner's copies of the index helpers (runtime.h) instead of
    compiling their own: true once the extension is loaded and its symbols are made global
    (Python loads extensions with RTLD_LOCAL; opening the same file again with RTLD_GLOBAL
    promotes it), so that a kernel library's references to them resolve when it is opened.
    ``sn.config.c_runner = False`` leaves the runner out of it too: kernels define their own."""
    if not config.c_runner or not platforms.current().shares_helpers:
        return False
    if not _exports:
        with _looking_up:
            if not _exports:
                _exports.append(_export(module()))
    return _exports[0]


def _export(built) -> bool:
    path = getattr(built, "__file__", None)
    if not path:
        return False
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
    except OSError:
        return False
    return all(hasattr(library, EXPORTED + name[len("sn_") :]) for name in names())


def installed_build() -> str | None:
    """The path of the build pip made, when it was made from this very runner.c and links
    the kernels' OpenMP runtime (``$CC=clang`` kernels link LLVM's libomp, pip's GCC build
    libgomp: the runner's team would never reach them, and the process would hold two thread
    pools). Both are read from the file, so a build that does not serve is never loaded.
    None otherwise: then each compile directory builds its own on first use (``_compiled``),
    which a checkout whose runner.c changed since ``pip install -e`` pays once per directory."""
    try:  # the file on the package's path, never the module a cache build put in sys.modules
        spec = importlib.machinery.PathFinder.find_spec(MODULE, [str(SOURCE.parent)])
    except (ImportError, ValueError):
        return None
    found = build_of(spec.origin) if spec is not None and spec.origin else None
    if found is None or found[0] != source_hash() or not _same_openmp(found[1]):
        return None
    return spec.origin


def _installed():
    """The installed build, loaded, when it serves (``installed_build``)."""
    if installed_build() is None:
        return None
    try:
        return importlib.import_module(MODULE)
    except ImportError:
        return None


def build_of(path: str) -> tuple[str, str] | None:
    """(source hash, OpenMP runtime) of the runner build at ``path`` (runner.c's
    ``build_id``), None when the file has none (a build of another runner.c)."""
    try:
        found = BUILD_ID.search(Path(path).read_bytes())
    except OSError:
        return None
    return None if found is None else (found[1].decode(), found[2].decode())


def _same_openmp(built: str | None) -> bool:
    """Whether a runner linking ``built`` serves the kernels: always where they have no
    OpenMP (or there is no compiler, so no kernels), else when it links the same runtime."""
    cc = compiler.find_compiler()
    if cc is None or compiler.problem():
        return True
    try:
        wanted = compiler.openmp_runtime(cc)
    except CompileError:
        return True
    return wanted == "" or built == wanted


def _compiled():
    """Compile runner.c into the cache (once per machine) and load it."""
    if not platforms.current().builds_runner:
        return None  # Windows: a DLL cannot leave Python's symbols to the loader
    cc = compiler.find_compiler()
    if cc is None or compiler.problem():
        return None
    path = _cached_path(cc)
    if not verified(path, read_regular(path + ".sum"), "C runner") and not _build(cc, path):
        return None
    try:
        return load_checked(path, read_regular(path + ".sum"), _extension, "C runner")
    except ImportError as exc:
        _problem.append(f"loading {path}: {exc}")
        return None


def _extension(path: str):
    """The runner module loaded from ``path`` (a descriptor's path: load_checked)."""
    loader = importlib.machinery.ExtensionFileLoader(MODULE, path)
    spec = importlib.util.spec_from_file_location(MODULE, path, loader=loader)
    built = importlib.util.module_from_spec(spec)
    loader.exec_module(built)
    return built


def _cached_path(cc: str) -> str:
    identity = [compiler.compiler_identity(cc), compiler.compiler_file(cc)]
    parts = [source_hash(), sys.version, np.__version__, *identity, *_threading(cc)]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]
    suffix = platforms.extension_suffix()
    return os.path.join(
        ensure_private(os.path.join(cache.compiledir(), "runner")), f"_runner_{key}{suffix}"
    )


def compile_command(cc: str, target: str) -> list[str]:
    """The command building runner.c (setup.py passes the same defines), linked as this
    Python links its extensions (sysconfig's ``LDSHARED``: ``-bundle -undefined
    dynamic_lookup`` on macOS). It runs in runner.c's directory and names it relatively, so
    the build holds no path of the checkout (its asserts' ``__FILE__``): checkouts sharing a
    compile directory build the same bytes under the same name, whose ``.sum`` then agrees."""
    includes = [sysconfig.get_paths()["include"], np.get_include()]
    link = platforms.current().runner_link
    return [
        cc,
        "-O2",
        *link,
        *_threading(cc),
        *[f"-I{d}" for d in includes],
        f'-DSN_RUNNER_HASH="{source_hash()}"',
        f"-DSN_MAX_RANK={MAX_RANK}",
        f"-DSN_SERIAL_MAX={SERIAL_MAX}",
        SOURCE.name,
        "-o",
        os.path.abspath(target),
    ]


def _threading(cc: str) -> tuple[str, ...]:
    """``-fopenmp`` where the kernels link with it: the runner splits large products between
    the same OpenMP threads (runner.c's SPLIT_MIN)."""
    return ("-fopenmp",) if "-fopenmp" in compiler.flags(cc) else ()


def _build(cc: str, path: str) -> bool:
    """Compile to a unique name, record its size and hash (``<path>.sum``, checked before
    each load), then move into place (processes may race here)."""
    sweep_stale(os.path.dirname(path))
    tmp = temporary(path)
    try:
        command = compile_command(cc, tmp)
        done = compiler.run_compiler(command, BUILD_TIMEOUT, "the C runner", cwd=SOURCE.parent)
        if done.returncode != 0:
            _problem.append(compiler.summary(done.stderr + done.stdout))
            return False
        os.chmod(tmp, 0o700)
        write_private(path + ".sum", fingerprint(tmp) or "")
        os.replace(tmp, path)
        return True
    except (OSError, CompileError) as exc:
        _problem.append(f"{cc}: {str(exc).splitlines()[0]}")
        return False
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def entry(fast, owner, call, declined, structure, names, **state):
    """A compiled function's native entry point (runner_entry.h's ``Entry``; ``state``: its
    ``shared``, ``updates``, ``turns`` and the updates' ``labels``), or None where there is no
    runner module."""
    built = module()
    if built is None:
        return None
    return built.Entry(fast, owner, call, declined, structure, names, **state)


def schedule(plan, shared=(), fixed=None):
    """A ``Schedule`` running ``plan`` (symnb/backends/plan.py), called with the inputs then
    the shared values; None where the runner does not apply (then the Python executor runs
    every call). ``shared``: (dtype, shape) of the first shared values, checked after the
    inputs (their named dims against the inputs'). ``fixed``: ``{name: size}`` of named dims
    checked as that fixed size (an update ties them)."""
    built = module() if config.c_runner else None
    if built is None:
        return None
    checked = [*plan.inputs, *shared]
    dims, names = _input_dims(checked, fixed or {})
    return built.Schedule(
        nargs=plan.nargs,
        specs=[(dtype, d) for (dtype, _), d in zip(checked, dims)],
        nnames=len(names),
        nslots=plan.nslots,
        constants=list(plan.constants),
        steps=[_record(step) for step in plan.steps],
        out_slots=list(plan.outputs),
    )


def _input_dims(inputs, fixed: dict):
    """Each input's dims for runner.c (>= 0 fixed, -1 any, -(k+2) the k-th named dim), and the
    names. A dim computed from names (``n+m``) is -1 here, as is every name past the first
    ``MAX_NAMES``: the Python input checks check those before such a call reaches the runner
    (``checks_every_dim``). A name in ``fixed`` is its size there."""
    names: dict[str, int] = {}
    dims = []
    for _, shape in inputs:
        row = []
        for d in shape:
            if isinstance(d, str) and d in fixed:
                row.append(fixed[d])
            elif isinstance(d, str) and (d in names or len(names) < MAX_NAMES):
                row.append(-(names.setdefault(d, len(names)) + 2))
            else:
                row.append(d if isinstance(d, int) else -1)
        dims.append(row)
    return dims, names


def checks_every_dim(inputs, fixed=None) -> bool:
    """Whether runner.c checks every dim of these (dtype, shape) inputs itself: not where one
    is computed from names (``n+m``, ``2*n``), which only the Python input checks solve, nor
    where they name more dims than runner.c binds (``MAX_NAMES``); a function with such an
    input checks its calls in Python first, then runs the runner."""
    if any(isinstance(d, DimExpr) for _, shape in inputs for d in shape):
        return False
    fixed = fixed or {}
    named = {d for _, shape in inputs for d in shape if isinstance(d, str) and d not in fixed}
    return len(named) <= MAX_NAMES


# -- plan records as runner.c reads them: (kind, target, ins, outs, types, fallback, params,
# decline) -------------------------------------------------------------------------------------
def _record(step) -> tuple:
    """The record of ``step``, with those of the steps it holds (its fallback, a branch's
    sides, a loop's body) built first. Branches nest as deep as the user's ifelses (an
    if/elif ladder of thousands): an explicit stack, not a recursion, builds them."""
    done: list = []  # records built; those a step holds are the last ones when it is built
    todo: list = [(step, False)]
    while todo:
        step, ready = todo.pop()
        inner = _inner(step)
        if not ready:
            todo.append((step, True))
            todo.extend((sub, False) for sub in reversed(inner))
            continue
        held = done[len(done) - len(inner) :]
        del done[len(done) - len(inner) :]
        record = RECORDS[type(step)](step, iter(held))
        done.append((*record, functools.partial(execute.run_declined, step)))
    return done[0]


def _inner(step) -> tuple:
    """The steps whose records ``step``'s record holds, in the order it takes them: those
    nested in it (``_nested``), or the fallback of a step that has one."""
    if isinstance(step, (Branch, Repeat, Library)):
        return _nested(step)
    return (step.fallback,)


def _library(step: Library, held) -> tuple:
    """params: () or (the outputs' promised ranks, their sizes in turn: runner.c checks
    each result against them, as execute.py's ``run_library`` does)."""
    shapes = step.shapes
    params = () if shapes is None else ([len(s) for s in shapes], [d for s in shapes for d in s])
    return ("library", step.fn, list(step.ins), list(step.outs), list(step.dtypes), None, params)


def _mask(axes) -> int:
    return sum(1 << a for a in axes)


def _launch(step: Launch, held) -> tuple:
    ins = [slot for slot, _ in step.ins]
    outs = [slot for slot, *_ in step.outs]
    masks = [_mask(a) for _, a in step.ins] + [_mask(a) for _, _, a, _ in step.outs]
    keepdims = [int(keep) for *_, keep in step.outs]
    inplace = -1 if step.inplace is None else step.inplace
    into = -1 if step.into is None else step.into
    params = (step.ndim, inplace, int(step.empty == "skip"), masks, keepdims, into)
    types = [dtype for _, dtype, *_ in step.outs]
    return ("launch", step.kernel.address, ins, outs, types, next(held), params)


def _gemm(step: Gemm, held) -> tuple:
    ins = [-1 if s is None else s for s in (step.z, step.alpha, step.x, step.y, step.beta)]
    ref = step.blas
    address, ilp64, threads = (
        (0, 0, (0, 0)) if ref is None else (ref.address, int(ref.ilp64), ref.threads)
    )
    loop_serial = int(config.loop_products_on_one_thread)
    params = (int(step.inplace), ilp64, *threads, loop_serial)
    return ("gemm", address, ins, [step.out], [step.dtype], next(held), params)


def _view(step: View, held) -> tuple:
    ins = [step.src, -1 if step.like is None else step.like, *step.bounds]
    types = list(step.fallback.dtypes)
    params = (list(step.axes), list(step.target))
    how = VIEW_KINDS.index(step.how)
    return ("view", how, ins, [step.out], types, next(held), params)


def _branch(step: Branch, held) -> tuple:
    then_records = [next(held) for _ in step.then_steps]
    else_records = [next(held) for _ in step.else_steps]
    params = (then_records, list(step.then_outs), else_records, list(step.else_outs), step.n_leaves)
    types = [v.type.dtype for v in step.node.outputs]
    return ("branch", None, [step.cond], list(step.outs), types, None, params)


def _repeat(step: Repeat, held) -> tuple:
    body = step.body
    records = [next(held) for _ in body.steps]
    plan = (body.nargs, body.nslots, list(body.constants), records, list(body.outputs))
    params = (
        step.n_seqs,
        step.n_states,
        [int(h) for h in step.history],
        int(step.until),
        int(step.backwards),
        int(step.counted),
        plan,
    )
    return ("loop", None, list(step.ins), list(step.outs), list(step.dtypes), None, params)


#: runner.c's VIEW_* numbers
VIEW_KINDS = (
    "axes",
    "broadcast",
    "reshape",
    "size",
    "windows",
    "strided",
    "same_shape",
    "shape",
    "basic",
)
RECORDS = {
    Library: _library,
    Launch: _launch,
    Gemm: _gemm,
    View: _view,
    Branch: _branch,
    Repeat: _repeat,
}
#: runner.c's STEP_* numbers, by the names of the records' kinds
KIND_BITS = {"library": 0, "launch": 1, "gemm": 2, "view": 3, "branch": 4, "loop": 5}


def force_decline(schedule, kinds) -> None:
    """Tests: the runner hands every step of these kinds (names of ``KIND_BITS``; a branch's
    and a loop's body's steps too) to Python, as it does a step it cannot run as planned."""
    schedule.force_decline(sum(1 << KIND_BITS[kind] for kind in set(kinds)))


# -- profiling ---------------------------------------------------------------------------------
def run_profiled(schedule, plan, leaf_values: list) -> tuple[list, list] | None:
    """A call run by the runner with each step timed: ``(outputs, records)`` in the format of
    ``execute.run_profiled`` (``(node, seconds, bytes, kind, steps, within)``: a branch's
    records after those of the steps it ran, a loop's before one record per step of its
    body, summed over the iterations, whose ``within`` is ``(the loop's record's index, the
    body step's index)``); None when an argument is not as planned."""
    outputs, times = schedule.profile(*leaf_values)
    if outputs is None:
        return None
    records: list = []
    _records(plan.steps, iter(times), records)
    return list(outputs), records


def _records(steps, times, records: list, ran_only: bool = False) -> float:
    """Records of ``steps`` (their rows of ``times`` in runner.c's walk order); a branch's
    steps that did not run (``ran_only``) have none. Returns the seconds they took. The
    branches entered are an explicit stack, not a recursion: they nest as deep as the
    user's ifelses (an if/elif ladder of thousands)."""
    # each frame: [steps still to record, ran_only, their seconds so far, the branch they are
    # the sides of with its row and the ran_only of the steps around it (None at the top)]
    stack = [[iter(steps), ran_only, 0.0, None]]
    while True:
        frame = stack[-1]
        todo, only, _, around = frame
        for step in todo:
            row = next(times)
            seconds, calls, moved, iterations = row
            frame[2] += seconds
            if isinstance(step, Branch):
                sides = iter((*step.then_steps, *step.else_steps))
                stack.append([sides, True, 0.0, (step, row, only)])
                break
            if isinstance(step, Repeat):
                at = len(records)
                body = []
                for sub in step.body.steps:
                    body.append((sub, *next(times)))
                    _skip(sub, times)
                inner = sum(row[1] for row in body)
                if calls or not only:
                    records.append(
                        (step.node, max(seconds - inner, 0.0), moved, step.kind, iterations, None)
                    )
                    records.extend(
                        (sub.node, sec, b, sub.kind, None, (at, i))
                        for i, (sub, sec, _, b, _) in enumerate(body)
                    )
            elif calls or not only:
                records.append((step.node, seconds, moved, step.kind, None, None))
        else:
            stack.pop()
            if around is None:
                return frame[2]
            step, (seconds, calls, moved, _), outer_only = around
            if calls or not outer_only:
                inner = frame[2]
                records.append((step.node, max(seconds - inner, 0.0), moved, step.kind, None, None))


def _skip(step, times) -> None:
    """Past the rows of a body step's own steps (a branch's sides, a nested loop's body), in
    runner.c's walk order."""
    todo = list(reversed(_nested(step)))
    while todo:
        sub = todo.pop()
        next(times)
        todo.extend(reversed(_nested(sub)))


def _nested(step) -> tuple:
    """A branch's sides, a loop's body: the steps runner.c walks after ``step``."""
    if isinstance(step, Branch):
        return (*step.then_steps, *step.else_steps)
    if isinstance(step, Repeat):
        return tuple(step.body.steps)
    return ()
