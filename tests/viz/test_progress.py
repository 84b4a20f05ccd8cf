"""``sn.progress``: tqdm's bars where tqdm is installed (text in a terminal, its widget in a
kernel), symnb's own where it is not, and nothing where stderr is no terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

import symnb as sn
from tests.helpers import needs_c, run_python

WORK = "import symnb as sn\nprint(sum(sn.progress(range(8), label='work')))\n"
NO_TQDM = "import sys\nsys.modules['tqdm'] = None  # as if tqdm were not installed\n"


def in_terminal(code: str) -> str:
    """What ``code`` writes (stdout and stderr) when run by this Python in a terminal (a pty)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # rows, cols
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=120) == 0, b"".join(chunks).decode(errors="replace")
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def test_tqdm_draws_a_text_bar_in_a_terminal():
    pytest.importorskip("tqdm")
    shown = in_terminal(WORK)
    assert "work: 100%" in shown and "8/8 [" in shown, shown  # tqdm's own format
    assert "28" in shown


def test_without_tqdm_a_terminal_gets_symnbs_counter():
    shown = in_terminal(NO_TQDM + WORK)
    assert "\rwork: 8/8 done" in shown and "%" not in shown, shown


def test_nothing_is_written_where_stderr_is_not_a_terminal():
    pytest.importorskip("tqdm")
    code = WORK + "import sys\nprint(repr(sys.stderr.isatty()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.split() == ["28", "False"]
    assert done.stderr == ""


def test_short_loops_show_nothing_even_in_a_terminal():
    shown = in_terminal("import symnb as sn\nprint(sum(sn.progress(range(4), label='work')))")
    assert "work" not in shown and "28" not in shown and "6" in shown


def test_progress_is_public_and_what_long_compiles_use():
    assert sn.progress is sn.config.progress
    assert list(sn.progress(iter(range(7)), total=7)) == list(range(7))


@needs_c
def test_a_script_compiling_many_kernels_shows_tqdms_bar_in_a_terminal(tmp_path):
    """The kernel cache compiles a function's missing kernels under ``config.progress``."""
    pytest.importorskip("tqdm")
    code = (
        "import os, numpy as np, symnb as sn\n"
        f"sn.config.compiledir = {str(tmp_path)!r}\n"
        "x = sn.tensor('x', shape=('n',))\n"
        "outs = [sn.sum(sn.exp(x * k) + k) for k in range(1, 9)]\n"
        "f = sn.function([x], outs)\n"
        "print(len(f(np.ones(3))))\n"
    )
    shown = in_terminal(code)
    assert "compiling kernels:" in shown and "100%" in shown, shown
    assert run_python(code).strip() == "8"  # cached now, and no terminal: nothing but the output
