"""Locks that a forked child gets back unlocked.

``os.fork()`` copies a process's memory with one thread, the one that forked. A lock another
thread held at that moment (the kernel cache's lock, held for a whole compile; a function's
turns, held for a call with updates) stays held in the child, and no thread there will ever
release it: the child's first compile or call waits forever (the workers of
``ProcessPoolExecutor()``, whose start method is fork on Linux before Python 3.14). So every
lock symnb makes comes from ``lock()``/``rlock()``, which remember it (weakly), and a fork's
child makes each of them new and unlocked, in place (bound methods the C runner keeps still
work). A lock the forking thread held itself is unlocked in the child too: fork outside a
symnb call or compile (symnb itself forks only to exec a compiler, which runs no Python).
Windows never forks; there, and where a Python lacks the hook, the locks are plain.
"""

from __future__ import annotations

import os
import threading
import weakref

_locks: weakref.WeakSet = weakref.WeakSet()


def lock() -> threading.Lock:
    """A ``threading.Lock`` that a forked child finds unlocked."""
    return _remember(threading.Lock())


def rlock() -> threading.RLock:
    """A ``threading.RLock`` that a forked child finds unlocked."""
    return _remember(threading.RLock())


def _remember(made):
    if hasattr(made, "_at_fork_reinit"):  # CPython 3.9+; elsewhere the lock stays plain
        _locks.add(made)
    return made


def in_child() -> None:
    """Run after a fork, in the child: every lock made here, unlocked (a new lock in place)."""
    for made in list(_locks):
        made._at_fork_reinit()


if hasattr(os, "register_at_fork"):  # not on Windows, which never forks
    os.register_at_fork(after_in_child=in_child)
