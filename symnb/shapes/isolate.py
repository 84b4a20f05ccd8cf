"""``symnb check`` runs each program in a child process, so that what the program does to its
process cannot hide what was found: the child streams every statement it starts and every
diagnostic it finds to a file as it goes, and the parent reads them back. A program whose
process ends early (a crash, a signal, anything past the checker's own ``os._exit`` guard) or
that runs past ``--timeout`` is then reported as a failure at the statement it was running,
after everything found before it.

The child runs with the user's rights, like any program: checking a notebook is running it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

import symnb
from symnb.shapes.checker import Diagnostic, ProgramUnreadable, Report, check_path

#: seconds a program may run before symnb check stops it
DEFAULT_TIMEOUT = 300.0
_UNREADABLE = 3  # the child's exit status for a file that is not a program
#: signals that end symnb check and, with it, the program it checks
FORWARDED = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def check_isolated(path: str, timeout: float | None = DEFAULT_TIMEOUT, show_output=False):
    """The Report of ``path`` checked in a child process (``timeout`` None or 0: no limit).
    Raises ProgramUnreadable for a file that is not a program."""
    with tempfile.TemporaryDirectory(prefix="symnb-check-") as tmp:
        events = os.path.join(tmp, "events.jsonl")
        status, timed_out = _run_child(path, events, timeout or None, show_output)
        with open(events, encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.endswith("\n")]
    return _report(path, records, status, timed_out, timeout)


#: the child's start: ``python -c`` without the '' (the working directory) that -c (like -m)
#: puts first on sys.path, so that sys.path is as ``python script.py`` sets it and a symnb.py
#: (or numpy.py) there does not replace the one this child must import
_CHILD = (
    "import sys\n"
    "if not getattr(sys.flags, 'safe_path', False):\n"
    "    del sys.path[0]\n"
    "from symnb.shapes.isolate import _child\n"
    "sys.exit(_child(sys.argv[1:]))\n"
)


def _run_child(path: str, events: str, timeout, show_output: bool) -> tuple[int | None, bool]:
    open(events, "w").close()
    command = [sys.executable, "-c", _CHILD, path, events]
    output = None if show_output else subprocess.DEVNULL  # the program writes to it directly
    child = None
    try:
        # the handlers first: a signal that comes while the child starts stops it too
        with _signals_stop_the_check():
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                env=_child_env(),
                start_new_session=True,
            )
            return child.wait(timeout=timeout), False
    except subprocess.TimeoutExpired:
        return None, True
    except _Stopped as stopped:
        _stop(child)
        signal.raise_signal(stopped.signum)  # the handler is back: ends symnb as it would have
        raise
    finally:
        _stop(child)


def _stop(child: subprocess.Popen | None) -> None:
    """Stop the program and its children (timed out, interrupted or terminated)."""
    if child is not None and child.poll() is None:
        if hasattr(os, "killpg"):  # its session: the program's own children too
            os.killpg(child.pid, signal.SIGKILL)
        else:  # Windows: no sessions or process groups to kill; the program itself
            child.kill()
        child.wait()


class _Stopped(BaseException):
    """symnb check itself got SIGTERM or SIGHUP while the program ran."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_stop_the_check():
    """SIGTERM and SIGHUP raise _Stopped while the child runs: the child has a session of its
    own (the terminal's signals do not reach it), so without this it would run on forever
    once its checker is gone."""

    def stop(signum, frame):
        raise _Stopped(signum)

    if threading.current_thread() is not threading.main_thread():
        yield  # no handlers outside the main thread
        return
    # read before any is replaced, and put back even when a signal comes while they are set
    # (raised here, then raised again by the caller to end symnb as the signal would); one
    # this process ignores (``nohup symnb check``: SIGHUP) stays ignored
    previous = {name: signal.getsignal(name) for name in FORWARDED}
    previous = {name: h for name, h in previous.items() if h is not signal.SIG_IGN}
    try:
        for name in previous:
            signal.signal(name, stop)
        yield
    finally:
        for name, handler in previous.items():
            if handler is not None:  # (None: set outside Python, cannot be put back)
                signal.signal(name, handler)


def _child_env() -> dict:
    """This symnb for the child, whatever the program's folder holds."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(symnb.__file__)))
    paths = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


def _report(path: str, records: list[dict], status, timed_out: bool, timeout) -> Report:
    report = Report(path)
    started = [r for r in records if r["event"] == "statement"]
    for record in records:
        event = record.pop("event")
        if event == "unreadable":
            raise ProgramUnreadable(record["message"])
        if event == "diagnostic":
            report.diagnostics.append(Diagnostic(**record))
        if event == "done":
            report.statements, report.skipped_cells = record["statements"], record["skipped"]
            return report
    report.statements = len(started)
    last = started[-1] if started else {"where": path, "lineno": 0, "cell": None, "code": ""}
    report.diagnostics.append(_ended(last, status, timed_out, timeout))
    return report


def _ended(where: dict, status, timed_out: bool, timeout) -> Diagnostic:
    """The failure of a program that did not run to its end under the check."""
    if timed_out:
        category = "Timeout"
        message = f"still running after {timeout:g} s (--timeout); the check stopped it here"
    else:
        category = "ProcessExit"
        message = (
            f"the program's process ended (exit status {status}: a crash, a signal) during "
            "this statement; nothing after it was checked"
        )
    return Diagnostic("failure", category, message, **where)


def _child(argv: list[str]) -> int:
    """The child (see _CHILD, or ``python -m symnb.shapes.isolate PATH EVENTS``): check PATH
    here, its output to this process's stdout and stderr (the null device unless
    --show-output). Only this process writes events: a child the program forks (and that
    goes on, or ends, as a copy of this one) writes none, so its end is not the check's."""
    path, events = argv[0], argv[1]
    checker = os.getpid()
    with open(events, "a", encoding="utf-8") as out:

        def sink(event: str, fields: dict) -> None:
            if os.getpid() == checker:
                out.write(json.dumps({"event": event, **fields}) + "\n")
                out.flush()

        try:
            report = check_path(path, quiet_output=False, sink=sink)
        except ProgramUnreadable as exc:
            sink("unreadable", {"message": str(exc)})
            return _UNREADABLE
        sink("done", {"statements": report.statements, "skipped": report.skipped_cells})
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
