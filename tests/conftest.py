"""Fixtures: a seeded random generator (and each module's, seeded per test), and the backend
each op test runs on."""

import contextlib
import os
import pickle
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from symnb.core import source
from tests.helpers import available_backends, prebuild_opencl

# The properties check values, not timing: on a loaded 2-core machine (or under mutmut's
# tracing) a deadline only makes them flaky. Tests that set their own settings keep them.
settings.register_profile("symnb", deadline=None)
settings.load_profile("symnb")

if "mutmut" in sys.modules:  # `make mutate`: mutated functions are called through trampolines
    source.FORWARDERS.append(os.path.dirname(sys.modules["mutmut"].__file__) + os.sep)


@pytest.fixture(scope="session", autouse=True)
def _private_compiledir(tmp_path_factory):
    """Compiled kernels go to a temporary directory, never to the user's cache."""
    import symnb as sn

    before = sn.config.compiledir
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # parallel processes share one (it is safe)
        root = root.parent
    sn.config.compiledir = str(root / "compiledir")
    os.makedirs(sn.config.compiledir, exist_ok=True)
    yield sn.config.compiledir
    sn.config.compiledir = before


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


#: module-level generators a test module draws its inputs from
MODULE_GENERATORS = ("RNG", "rng")


@pytest.fixture(autouse=True)
def _inputs_of_the_test_alone(request, monkeypatch):
    """A module's generator (``RNG`` or ``rng``) is seeded again for each test, from the
    test's id: the test draws the same inputs whichever tests ran before it in its process
    (pytest -n spreads them differently on every run), so a failure reruns as it failed."""
    module = request.module
    seed = zlib.crc32(request.node.nodeid.encode())
    for name in MODULE_GENERATORS:
        if isinstance(getattr(module, name, None), np.random.Generator):
            monkeypatch.setattr(module, name, np.random.default_rng(seed))


@pytest.fixture(params=available_backends())
def backend(request):
    """Each test that takes ``backend`` runs once per available backend."""
    return request.param


#: every kernel lowered while the suite runs (kernel -> the Lowered that made it first)
LOWERED: dict = {}
#: kernels the suite lowered that could not be handed to the after-suite run (their ops)
UNSAVED: list = []
#: OpenCL sources of kernels launched in the processes of the parallel run (see ``launched``)
LAUNCHED: set = set()
#: the built kernels this process's OpenCL runtimes queued (id -> kernel, held so that the
#: id stays its own), and those runtimes
_QUEUED: dict = {}
_RUNTIMES: dict = {}
#: ``make test`` runs the suite in parallel processes (pytest-xdist), then the ``after_suite``
#: tests in a run of their own: each process leaves the kernels it lowered in this directory,
#: and the later run starts from all of them
KERNELS_DIR = os.environ.get("SYMNB_SUITE_KERNELS")


@pytest.fixture(scope="session", autouse=True)
def _record_kernels():
    """Keep every kernel the suite lowers, for the tests that render them in every dialect."""
    from symnb.backends.kernels.lowering import observing

    if KERNELS_DIR:
        _load_kernels(Path(KERNELS_DIR))
    with observing(lambda lowered: LOWERED.setdefault(lowered.kernel, lowered)):
        with _recording_opencl_launches():
            yield
    if KERNELS_DIR:
        _save_kernels(Path(KERNELS_DIR))


def launched() -> set:
    """The OpenCL source of every kernel the suite launched through backend="opencl" (the
    op suite's "opencl" rows and the device tests compare those runs with NumPy), in this
    process or, under ``make test``, in the parallel run's: the after-suite run on PoCL
    leaves them out, since PoCL compiles a kernel again at its first launch in a process
    (about 0.1 s each) and they were run already."""
    found = set(LAUNCHED)
    for runtime in _RUNTIMES.values():
        found.update(src for src, kernel in (runtime._built or {}).items() if id(kernel) in _QUEUED)
    return found


@contextlib.contextmanager
def _recording_opencl_launches():
    """Keeps each kernel the OpenCL runtime queues, for ``launched``."""
    try:
        from symnb.backends.opencl.runtime import OpenCLRuntime
    except ImportError:
        yield
        return
    launch = OpenCLRuntime.launch

    def recording(self, kernel, *args, **kwargs):
        _QUEUED.setdefault(id(kernel), kernel)
        _RUNTIMES.setdefault(id(self), self)
        return launch(self, kernel, *args, **kwargs)

    OpenCLRuntime.launch = recording
    try:
        yield
    finally:
        OpenCLRuntime.launch = launch


def _save_kernels(directory: Path) -> None:
    saved, unsaved = [], list(UNSAVED)
    for lowered in LOWERED.values():
        try:
            saved.append(pickle.dumps(lowered))
        except Exception as exc:  # noqa: BLE001 - reported by the after-suite tests
            unsaved.append(f"{lowered.nodes[-1].op}: {type(exc).__name__}: {exc}")
    directory.mkdir(parents=True, exist_ok=True)
    name = os.environ.get("PYTEST_XDIST_WORKER", "main") + f"-{os.getpid()}.pickle"
    (directory / name).write_bytes(pickle.dumps((saved, unsaved, sorted(launched()))))


def _load_kernels(directory: Path) -> None:
    for path in sorted(directory.glob("*.pickle")):
        saved, unsaved, launched = pickle.loads(path.read_bytes())
        UNSAVED.extend(unsaved)
        LAUNCHED.update(launched)
        for blob in saved:
            lowered = pickle.loads(blob)
            LOWERED.setdefault(lowered.kernel, lowered)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "after_suite: runs after every other test (it reads what they generated)"
    )


def pytest_collection_modifyitems(config, items):
    """The op suite's "opencl" rows run after the other tests (``prebuild`` below), and tests
    marked ``after_suite`` go last, in their own order."""
    items.sort(
        key=lambda item: (item.get_closest_marker("after_suite") is not None, _on_opencl(item))
    )


def _on_opencl(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("backend") == "opencl"


def pytest_runtest_setup(item):
    """Before the first "opencl" row: every kernel lowered so far (the "py" and "c" rows
    lowered the same descriptions) built on backend="opencl"'s runtime in programs of
    OPENCL_CHUNK, so a row's function finds its kernels built instead of building a program
    of its own; on PoCL each program costs about 0.1 s of CPU before its first kernel."""
    if _on_opencl(item) and not _PREBUILT:
        _PREBUILT.append(True)
        prebuild_opencl([lowered.kernel for lowered in LOWERED.values()])


_PREBUILT: list = []
