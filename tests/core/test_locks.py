"""symnb's locks and fork: every lock symnb makes comes from ``symnb/core/locks.py``, so a child
forked while another thread held one finds it unlocked (docs/c_backend.md). A child that would
wait forever is killed, so a regression fails instead of hanging."""

import os
import pathlib
import re

import pytest

import symnb
from tests.helpers import run_python, waiting_for_child

#: a lock made without ``locks.lock()``/``locks.rlock()`` stays held in a forked child
PLAIN_LOCK = re.compile(
    r"\b(?:threading|_thread)\.(?:Lock|RLock|Condition|Semaphore|BoundedSemaphore|allocate_lock)"
    r"\s*\(|^\s*from\s+(?:threading|_thread)\s+import\b",
    re.MULTILINE,
)


def test_every_lock_in_symnb_comes_from_core_locks():
    root = pathlib.Path(symnb.__file__).parent
    plain = [
        f"{path.relative_to(root.parent)}:{source[: found.start()].count(chr(10)) + 1}"
        for path in sorted(root.rglob("*.py"))
        if path != root / "core" / "locks.py"
        for source in [path.read_text()]
        for found in PLAIN_LOCK.finditer(source)
    ]
    assert plain == [], "plain locks (use symnb.core.locks.lock()/rlock()): " + ", ".join(plain)


def test_the_check_finds_a_plain_lock():
    assert PLAIN_LOCK.search("_LOCK = threading.Lock()")
    assert PLAIN_LOCK.search("self.lock = threading.RLock()")
    assert PLAIN_LOCK.search("from threading import Lock")
    assert not PLAIN_LOCK.search("_LOCK = locks.lock()  # not threading.local()")


#: another thread holds ``{LOCK}`` (for good) when the program forks; the child uses what the
#: lock guards and must finish (``waiting_for_child`` ends it)
HELD_AT_FORK = """
import os, threading, time
import numpy as np
import symnb as sn
import symnb.compat.theano as theano
from symnb.compat.theano import configparser
from symnb.compile import checkmode
from symnb.core import variable

def change_flags():
    with theano.change_flags(floatX="float32"):
        return theano.config.floatX == "float32" and sn.config.floatX == "float32"

def set_value():
    w = sn.shared(np.zeros(3), name="w")
    w.set_value(np.ones(3))
    return w.get_value().sum() == 3

def check_mode():
    with checkmode.check_mode(all_threads=True):
        return checkmode.active()

lock, use = {LOCK}, {USE}
held = threading.Event()

def hold():
    with lock:
        held.set()
        time.sleep(3600)

threading.Thread(target=hold, daemon=True).start()
held.wait()
pid = os.fork()
if pid == 0:
    os._exit(0 if use() else 1)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize(
    "lock, use",
    [
        ("configparser._ACTIVE_LOCK", "change_flags"),
        ("variable._VALUE_LOCK", "set_value"),
        ("checkmode._process_lock", "check_mode"),
    ],
)
def test_a_child_forked_while_a_thread_holds_a_lock_goes_on(tmp_path, lock, use):
    """A thread inside ``theano.change_flags`` (its blocks' lock), writing a shared value, or
    entering ``check_mode(all_threads=True)`` when another forks: the child does the same."""
    env = dict(os.environ, SYMNB_COMPILEDIR=str(tmp_path / "compiledir"))
    program = HELD_AT_FORK.replace("{LOCK}", lock).replace("{USE}", use) + waiting_for_child(15)
    assert run_python(program, env=env, timeout=120).strip() == "child exit 0"
