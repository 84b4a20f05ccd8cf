"""Where compiled code is cached, and the rules that keep that directory trustworthy.

The directory is ``sn.config.compiledir``, else ``$SYMNB_COMPILEDIR``, else
``~/.cache/symnb`` (``$XDG_CACHE_HOME/symnb``). Code found there is loaded into the process,
so a directory another user can write is a way to run their code in ours: symnb creates it
with mode 0700, refuses one that is not the user's or that group or others may write (naming
the fix), writes files 0600 (libraries 0700), opens only regular files (a FIFO planted as an
entry would block a read forever), and records each library's size and SHA-256 beside it so
a truncated or replaced file is deleted and rebuilt instead of loaded (``verified``). A
compile directory that cannot be written falls back, with one warning, to a private
temporary directory for the process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import time
import warnings

from symnb.config import config
from symnb.errors import SymnbError

STALE_SECONDS = 600  # a temporary file this old belongs to a compile that was killed
_checked: dict[str, str] = {}  # directory asked for -> the checked directory used
_swept: set[str] = set()
_made: set[str] = set()


class CompileDirError(SymnbError, PermissionError):
    """The compile directory is not safe to load code from (owner or mode)."""


def compiledir() -> str:
    """The checked compile directory (created 0700 on first use)."""
    wanted = requested()
    if wanted not in _checked:
        _checked[wanted] = _usable(wanted)
    return _checked[wanted]


def requested() -> str:
    """``sn.config.compiledir``, ``$SYMNB_COMPILEDIR``, or ``~/.cache/symnb``, unchecked."""
    if config.compiledir:
        return config.compiledir
    if os.environ.get("SYMNB_COMPILEDIR"):
        return os.environ["SYMNB_COMPILEDIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "symnb")


def kernel_dir() -> str:
    """The C kernels' layer of the cache (made and checked once per process)."""
    path = os.path.join(compiledir(), "c")
    if path not in _made:
        ensure_private(path)
    return path


def ensure_private(path: str) -> str:
    """``path`` and the compile directory above it made 0700 if missing, and checked (each
    compile calls it again: the directory may have been cleared since)."""
    private_dir(os.path.dirname(path))
    private_dir(path)
    _made.add(path)
    return path


def private_dir(path: str) -> str:
    """``path`` created with mode 0700 if missing, and checked (see ``check_dir``)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except FileExistsError:
        pass
    check_dir(path)
    return path


def check_dir(path: str) -> None:
    """Refuse a directory another user could have written code into."""
    info = os.lstat(path)
    how = ("remove it, or set sn.config.compiledir (or SYMNB_COMPILEDIR) to a directory of "
           "your own")  # fmt: skip
    if not stat.S_ISDIR(info.st_mode):
        raise CompileDirError(f"the compile directory {path} is not a directory; {how}")
    if info.st_uid != os.geteuid():
        raise CompileDirError(
            f"the compile directory {path} belongs to user {info.st_uid}, not to you "
            f"({os.geteuid()}): code in it would run in your process; {how}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CompileDirError(
            f"the compile directory {path} is writable by group or others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): anyone could plant code in it; run "
            f"'chmod 700 {path}' after checking its contents, or {how}"
        )


def _usable(path: str) -> str:
    """``path`` checked; a directory that cannot be written falls back to a private temporary
    one (a warning says so), and a refused one raises CompileDirError."""
    try:
        private_dir(path)
        if writable(path):
            return path
        why = "it is read-only"
    except CompileDirError:
        raise
    except OSError as exc:
        why = f"{type(exc).__name__}: {exc}"
    fallback = tempfile.mkdtemp(prefix="symnb-compiledir-")
    warnings.warn(
        f"symnb: cannot use the compile directory {path} ({why}); compiled code goes to "
        f"{fallback} for this process (set sn.config.compiledir or SYMNB_COMPILEDIR)",
        RuntimeWarning,
        stacklevel=4,
    )
    return fallback


def writable(path: str) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def forget() -> None:
    """Check the directory again on next use (tests; after the user fixed its mode)."""
    _checked.clear()
    _swept.clear()
    _made.clear()


# -- files ---------------------------------------------------------------------------------------
def read_regular(path: str, limit: int = 1 << 16) -> str | None:
    """The text of ``path`` if it is a regular file; None if missing or anything else (a FIFO
    is opened without blocking and refused, a link is not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    finally:
        os.close(fd)


def write_private(path: str, text: str) -> None:
    """Write ``text`` atomically (a unique temporary file, then ``os.replace``), mode 0600."""
    tmp = temporary(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def temporary(path: str) -> str:
    return f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def sweep_stale(directory: str) -> None:
    """Delete temporary files older than STALE_SECONDS (left by killed compiles); once per
    directory and process."""
    if directory in _swept:
        return
    _swept.add(directory)
    cutoff = time.time() - STALE_SECONDS
    for entry in scan(directory):
        if ".tmp" in entry.name and _older(entry, cutoff):
            _remove(entry.path)


def scan(directory: str) -> list[os.DirEntry]:
    """The directory's entries; none when it is gone (cleared by another process)."""
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except FileNotFoundError:
        return []


def _older(entry, cutoff: float) -> bool:
    try:
        return entry.stat(follow_symlinks=False).st_mtime < cutoff
    except OSError:
        return False


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass


# -- fingerprints ---------------------------------------------------------------------------------
def fingerprint(path: str) -> str | None:
    """``"<size> <sha256>"`` of a regular file, None for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        digest = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"{info.st_size} {digest.hexdigest()}"


def verified(path: str, recorded: str | None, what: str) -> bool:
    """Whether the file at ``path`` matches its recorded fingerprint. A mismatch (truncated,
    replaced, empty, a directory) deletes the file, warns, and returns False: the caller
    compiles it again. A missing file returns False; so does one with no record (written by
    an older symnb), which is deleted without a warning."""
    if not os.path.lexists(path):
        return False
    if recorded and fingerprint(path) == recorded.strip():
        return True
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        _remove(path)
    if not recorded:
        return False
    warnings.warn(
        f"symnb: the cached {what} {path} was damaged (its size or hash differs from the "
        "record); it was deleted and is compiled again",
        RuntimeWarning,
        stacklevel=4,
    )
    return False
