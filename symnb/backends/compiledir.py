"""Where compiled code is cached, and the rules that keep that directory trustworthy.

The directory is ``sn.config.compiledir``, else ``$SYMNB_COMPILEDIR``, else
``~/.cache/symnb`` (``$XDG_CACHE_HOME/symnb``). Code found there is loaded into the process,
so a directory another user can change is a way to run their code in ours (docs/c_backend.md,
"The compile directory"):

- the directory must be the user's, not group- or other-writable, and not a symbolic link;
- no ancestor may let another user rename it (a parent they own or may write, unless it is
  sticky, like /tmp, and the entry is the user's or root's): such a user could swap the
  directory after the check;
- every file is opened relative to a descriptor of its directory, without following links,
  and what was opened is checked (a regular file, the user's, not group- or other-writable)
  before it is read or loaded; libraries are loaded through that descriptor, so the bytes
  checked are the bytes run.

symnb deletes only what it made: a directory it creates gets a marker file (``MARKER``); an
existing directory without one is used only if empty (it is marked then); otherwise symnb
works in its ``SUBFOLDER`` inside it. Sweeps and ``clear_cache`` delete only names symnb
gives its files. Files are written 0600 (libraries 0700) and each library's size and SHA-256
recorded beside it, so a damaged one is deleted and rebuilt instead of loaded (``verified``).
A compile directory that cannot be written falls back, with one warning, to the user's
``shared_fallback`` (checked like the compile directory), or where that is refused to a
private temporary directory for the process, deleted when it exits.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import getpass
import hashlib
import os
import re
import shlex
import shutil
import stat
import tempfile
import time

from symnb.config import config
from symnb.core.source import warn_at_user
from symnb.errors import CompileDirError, SymnbError

MAKE_TRIES = 3  # makes of a directory another process keeps removing, before giving up
STALE_SECONDS = 600  # a temporary file this old belongs to a compile that was killed
MARKER = "SYMNB-COMPILEDIR"  # written in every compile directory symnb makes
SUBFOLDER = "symnb-cache"  # used inside an existing directory symnb did not make
MARKER_TEXT = "This directory is symnb's compile cache: symnb may delete what it holds.\n"
TEMPORARY = re.compile(r".+\.[0-9]+\.[0-9a-f]{8}\.tmp")  # what ``temporary`` names
_checked: dict[str, str] = {}  # directory asked for -> the checked directory used
_swept: set[str] = set()
_made: set[str] = set()
_dir_fds: dict[str, int] = {}  # directory -> a descriptor of it, checked when opened
HOW = "set sn.config.compiledir (or SYMNB_COMPILEDIR) to a directory of your own"
#: POSIX owners and modes: who may write a directory or file is checked from them. Windows
#: has neither (its per-user folders are private by their access lists; ``st_uid`` is 0 and
#: every mode looks writable by all), so there only links and kinds of file are checked
OWNERS = hasattr(os, "geteuid")
#: files are opened relative to a checked descriptor of their directory (POSIX); where
#: ``os.open`` takes no ``dir_fd`` (Windows), by path, a link still refused
DIR_FDS = os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def compiledir() -> str:
    """The checked compile directory (created 0700, and marked, on first use)."""
    wanted = requested()
    if wanted not in _checked:
        _checked[wanted] = _usable(wanted)
    return _checked[wanted]


def requested() -> str:
    """``sn.config.compiledir``, ``$SYMNB_COMPILEDIR``, or ``~/.cache/symnb``, unchecked, as
    an absolute path: a leading ``~`` (``~user``) is the home directory, as Theano's
    ``compiledir`` took it (a shell does not expand it inside ``THEANO_FLAGS`` or
    ``SYMNB_FLAGS``; it made a folder named "~"); a relative one is read from the working
    directory of the moment, so after ``os.chdir`` it is another directory, checked before
    use like any other (the check was made once, for the first, while kernels went to the
    second)."""
    if config.compiledir:
        return os.path.abspath(os.path.expanduser(config.compiledir))
    if os.environ.get("SYMNB_COMPILEDIR"):
        return os.path.abspath(os.path.expanduser(os.environ["SYMNB_COMPILEDIR"]))
    base = _cache_home()
    return shared_fallback() if base is None else os.path.join(base, "symnb")


def _cache_home() -> str | None:
    """``$XDG_CACHE_HOME``, else ``~/.cache``; a relative one is ignored, as the XDG spec
    says (it would name a folder of the working directory, or ``/.cache`` for
    ``HOME=""``), and None where no home is absolute (the user's ``shared_fallback``)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.abspath(xdg)
    home = os.environ.get("HOME")
    home = os.path.expanduser("~") if home is None else home  # unset: the password entry
    return os.path.join(os.path.abspath(home), ".cache") if os.path.isabs(home) else None


def kernel_dir() -> str:
    """The C kernels' layer of the cache (made and checked once per process)."""
    path = os.path.join(compiledir(), "c")
    if path not in _made:
        ensure_private(path)
    return path


def ensure_private(path: str) -> str:
    """``path`` and the compile directory above it made 0700 if missing, and checked (each
    compile calls it again: another process may have cleared the directory since)."""
    top = os.path.dirname(path)
    if _make(top):
        _mark(top, made=True)
    check_dir(top)
    private_dir(path)
    _made.add(path)
    return path


def private_dir(path: str) -> str:
    """``path`` created with mode 0700 if missing, and checked (see ``check_dir``). Made
    again when another process (``symnb cache clear``) removes it between the two."""
    for _ in range(MAKE_TRIES - 1):
        _make(path)
        with contextlib.suppress(FileNotFoundError):
            check_dir(path)
            return path
    _make(path)
    check_dir(path)
    return path


def _make(path: str) -> bool:
    """Create ``path`` (and missing parents) with mode 0700; whether this call created it."""
    try:
        os.makedirs(path, mode=0o700)
        return True
    except FileExistsError:
        return False


def check_dir(path: str) -> None:
    """Refuse a directory another user could have written code into."""
    _check_dir_info(path, os.lstat(path))


def _check_dir_info(path: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        target = os.path.realpath(path)
        raise CompileDirError(
            f"the compile directory {path} is a symbolic link (to {target}); symnb does not "
            f"follow links to the directory it loads code from: set sn.config.compiledir (or "
            f"SYMNB_COMPILEDIR) to {target} itself if that directory is yours"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise CompileDirError(
            f"the compile directory {path} is not a directory; move that file away, or {HOW}"
        )
    if not OWNERS:
        return
    if info.st_uid != os.geteuid():
        raise CompileDirError(
            f"the compile directory {path} belongs to user {info.st_uid}, not to you "
            f"({os.geteuid()}): code in it would run in your process; {HOW}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CompileDirError(
            f"the compile directory {path} is writable by group or others (mode "
            f"{stat.S_IMODE(info.st_mode):o}): anyone could plant code in it; run "
            f"{command('chmod', '700', path)} after checking its contents, or {HOW}"
        )


def command(*words: str) -> str:
    """A shell command the user is told to run, each word quoted where the shell needs it
    (a path with a space pasted unquoted would be two paths)."""
    return shlex.join(words)


def check_ancestors(path: str) -> None:
    """Refuse ``path`` when another user may rename it or a directory above it (then they
    could put a directory of their own in its place after every check). Renaming an entry
    needs write access to its parent; a sticky parent (/tmp) restricts that to the entry's
    and the parent's owners. The user and root are trusted. Both the path as written and
    the path its links lead to are checked. (POSIX only: see ``OWNERS``.)"""
    if not OWNERS:
        return
    for chain in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
        child = chain
        while os.path.dirname(child) != child:
            parent = os.path.dirname(child)
            who = _renamer(os.stat(parent), os.lstat(child))
            if who:
                raise CompileDirError(
                    f"the compile directory {path} is not safe: {who} may rename {child} in "
                    f"{parent}, and so put a directory of theirs in its place, whose code "
                    f"would run in your process; {HOW} whose parents only you (or root) may "
                    f"change, or run {command('chmod', '+t', parent)} if it is a shared "
                    "directory like /tmp"
                )
            child = parent


def _renamer(parent: os.stat_result, child: os.stat_result) -> str:
    """Who other than the user and root may rename ``child`` in ``parent`` ('' if nobody)."""
    trusted = (0, os.geteuid())
    if parent.st_uid not in trusted:
        return f"user {parent.st_uid} (who owns the parent)"
    writers = parent.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if not writers or parent.st_mode & stat.S_ISVTX and child.st_uid in trusted:
        return ""
    return "another user of its group" if writers == stat.S_IWGRP else "any user"


def configured() -> tuple[str, str]:
    """The compile directory asked for, as symnb works in it (``claim``'s choice: it or its
    subfolder), and '' when it can be written, else why not. It makes no fallback, so
    ``symnb cache info|clear`` describe the user's directory, never a temporary one."""
    return _choose(requested())


def _choose(path: str) -> tuple[str, str]:
    """``claim(path)`` checked, and '' or why it cannot be written (a refused directory
    raises CompileDirError)."""
    try:
        chosen = claim(path)
        check_ancestors(chosen)
        return chosen, "" if writable(chosen) else "it is read-only"
    except CompileDirError:
        raise
    except OSError as exc:
        return path, f"{type(exc).__name__}: {exc}"


def _usable(path: str) -> str:
    """``path`` (or the subfolder symnb works in) checked; a directory that cannot be
    written falls back to the user's temporary one (``_fallback``; a warning says so), and
    a refused one raises CompileDirError."""
    chosen, why = _choose(path)
    if not why:
        return chosen
    fallback, where = _fallback()
    warn_at_user(
        f"symnb: cannot use the compile directory {path} ({why}); compiled code goes to "
        f"{fallback} {where} (set sn.config.compiledir or SYMNB_COMPILEDIR)",
        RuntimeWarning,
    )
    return fallback


def shared_fallback() -> str:
    """The user's fallback compile directory: one per user, so later processes find the
    kernels compiled before (a directory per process was never deleted and compiled all
    again). Its name is predictable, so ``_fallback`` checks it as the compile directory."""
    return os.path.join(tempfile.gettempdir(), f"symnb-compiledir-user-{_user_tag()}")


def _user_tag() -> str:
    """The user's id in a file name: the uid on POSIX, else the login name's word
    characters (Windows, whose temporary folder is the user's own anyway)."""
    if OWNERS:
        return str(os.geteuid())
    try:
        name = getpass.getuser()
    except Exception:  # no login name to be found: one shared name, checked as any other
        name = "user"
    return re.sub(r"\W", "_", name) or "user"


def _fallback() -> tuple[str, str]:
    """The shared fallback (``claim`` and ``check_ancestors``: another user who made that
    path first, or may swap it, is refused), else a private directory for this process,
    removed when it exits; and words saying which."""
    try:
        chosen = claim(shared_fallback())
        check_ancestors(chosen)
        if writable(chosen):
            return chosen, "(shared by your processes)"
        why = "it is read-only"
    except OSError as exc:  # CompileDirError included: someone else's, a link, a wide mode
        why = str(exc)
    private = claim(tempfile.mkdtemp(prefix="symnb-compiledir-"))
    atexit.register(_remove_private, private, os.getpid())
    return private, f"for this process, removed at exit (not {shared_fallback()}: {why})"


def _remove_private(path: str, creator: int) -> None:
    """Delete this process's private fallback at exit; never from a forked child (the
    parent still uses it). Libraries loaded from it stay mapped on POSIX; where a loaded one
    cannot be deleted (Windows) it is left."""
    if os.getpid() == creator:
        shutil.rmtree(path, ignore_errors=True)


def fallback_note() -> str:
    """Where compiled code goes when the compile directory cannot be written (for messages)."""
    return (
        f"compiled code goes to {shared_fallback()} (shared by your processes; a private "
        "temporary directory where that one is refused)"
    )


def claim(path: str) -> str:
    """The directory symnb works in for ``path``: ``path`` itself when symnb made it (its
    marker is there) or it is empty (it is marked now), else ``path/SUBFOLDER`` the same way,
    so that nothing symnb did not make is ever swept or cleared."""
    for candidate in (path, os.path.join(path, SUBFOLDER)):
        made = _make(candidate)
        check_dir(candidate)
        if made or not os.listdir(candidate):
            _mark(candidate, made=made)
        if marked(candidate):
            return candidate
    raise CompileDirError(
        f"the compile directory {path} holds files symnb did not make, and so does "
        f"{candidate}: symnb will not write (or delete) there; empty or remove {candidate}, "
        f"or {HOW}"
    )


def marked(path: str) -> bool:
    """Whether symnb made the directory ``path`` (its marker file is there)."""
    return read_regular(os.path.join(path, MARKER)) == MARKER_TEXT


def _mark(path: str, made: bool = False) -> None:
    """Write the marker in ``path``. Where it cannot be written for lack of space, the full
    disk's CompileDirError (the directory is removed if this call ``made`` it): read as "not
    marked", claim said the directory held files symnb did not make, and made a subfolder.
    Another failure (a read-only directory) leaves it unmarked: claim then refuses it."""
    try:
        write_private(os.path.join(path, MARKER), MARKER_TEXT)
    except OSError as exc:
        if not out_of_space(exc.__cause__):
            return
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise


def writable(path: str) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def forget() -> None:
    """Check the directory again on next use (tests; after the user fixed its mode)."""
    _checked.clear()
    _swept.clear()
    _made.clear()
    for fd in _dir_fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _dir_fds.clear()


def unwritable(path: str, exc: OSError) -> CompileDirError:
    """The error for a write into the compile directory that failed: which directory, why,
    and what to do (a full disk, a read-only or foreign directory). The marker file's
    directory is the one being claimed (``claim``): not yet the checked compile directory,
    which would claim it again."""
    top = os.path.dirname(path) if os.path.basename(path) == MARKER else compiledir()
    if out_of_space(exc):
        fix = "free some space on that disk, or set sn.config.compiledir to a directory on another"
        return CompileDirError(
            f"the disk holding the compile directory {top} is full (writing {path}: "
            f"{exc.strerror}); {fix}"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        fix = f"run {command('chmod', '-R', 'u+rwX', top)}, or {HOW}"
    elif exc.errno == errno.EROFS:
        fix = f"it is on a read-only file system: {HOW}"
    else:  # chmod cannot help (EXDEV, EIO, ...)
        fix = HOW
    return CompileDirError(
        f"cannot write {path} in the compile directory {top} ({type(exc).__name__}: "
        f"{exc.strerror or exc}); {fix}"
    )


def out_of_space(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a write that failed for lack of space (a full disk, a quota)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


# -- files ---------------------------------------------------------------------------------------
class UnsafeFile(SymnbError, PermissionError):
    """A file in the compile directory that another user could have written."""


def open_file(path: str) -> int | None:
    """A descriptor of the regular file ``path``, opened relative to a descriptor of its
    directory without following a link (a FIFO is opened without blocking); None when
    missing or not a regular file. A file that is not the user's or that group or others may
    write raises UnsafeFile: what was opened is checked, not what the path names later."""
    if DIR_FDS:
        directory = dir_fd(os.path.dirname(path))
        if directory is None:
            return None
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
        try:
            fd = os.open(os.path.basename(path), flags, dir_fd=directory)
        except OSError:
            return None
    else:
        fd = _open_by_path(path)
        if fd is None:
            return None
    info = os.fstat(fd)
    why = _unsafe(info)
    if why or not stat.S_ISREG(info.st_mode):
        os.close(fd)
        if why:
            raise UnsafeFile(f"{path} {why}")
        return None
    return fd


def _open_by_path(path: str) -> int | None:
    """``open_file`` where there are no directory descriptors (Windows): the path, not
    followed if it is a link; None when missing."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None


def _unsafe(info: os.stat_result) -> str:
    if not OWNERS:
        return ""
    if info.st_uid != os.geteuid():
        return f"belongs to user {info.st_uid}, not to you ({os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


def dir_fd(directory: str) -> int | None:
    """A descriptor of ``directory``, opened once and checked (``check_dir``) when opened;
    opened again when the path now names another directory (cleared and made again). None
    when there is no directory there."""
    fd = _dir_fds.get(directory)
    try:
        now = os.lstat(directory)
    except OSError:
        now = None
    if fd is not None:
        held = os.fstat(fd)
        if now is not None and (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino):
            return fd
        os.close(_dir_fds.pop(directory))
    if now is None:
        return None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        _check_dir_info(directory, os.fstat(fd))
    except CompileDirError:
        os.close(fd)
        raise
    _dir_fds[directory] = fd
    return fd


def read_regular(path: str, limit: int = 1 << 16) -> str | None:
    """The text of ``path`` if it is a regular file the user alone may write; None if missing
    or anything else (a FIFO is not read, a link not followed). A file another user could
    have written is refused with a warning and deleted (symnb writes it again)."""
    fd = _open_or_refuse(path, "file")
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def read_private_bytes(path: str, limit: int = 1 << 28) -> bytes | None:
    """The bytes of ``path`` under the rules of ``read_regular`` (device binaries)."""
    fd = _open_or_refuse(path, "file")
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit)


def _open_or_refuse(path: str, what: str) -> int | None:
    try:
        return open_file(path)
    except UnsafeFile as exc:
        warn_at_user(
            f"symnb: refused the cached {what} {exc} (another user could have written it); "
            "it was deleted and is made again",
            RuntimeWarning,
        )
        _remove(path)
        return None


def write_private(path: str, text: str | bytes) -> None:
    """Write ``text`` (str or bytes) atomically (a unique temporary file, then
    ``os.replace``), mode 0600.
    A directory where the file goes (a damaged cache) is deleted first; the directory that
    holds it is made again if another process cleared it. A write that fails (a full disk,
    a read-only directory) raises ``unwritable``'s CompileDirError, naming the compile
    directory and the fix, for every file symnb writes there (memos, entries, records)."""
    try:
        _write_retried(path, text)
    except CompileDirError:
        raise
    except OSError as exc:
        raise unwritable(path, exc) from exc


def _write_retried(path: str, text: str | bytes) -> None:
    for attempt in range(MAKE_TRIES):
        try:
            _write_once(path, text)
            return
        except FileNotFoundError:
            if attempt == MAKE_TRIES - 1:
                raise
            _recreate(os.path.dirname(path))
        except IsADirectoryError:
            shutil.rmtree(path, ignore_errors=True)


def _write_once(path: str, text: str | bytes) -> None:
    tmp = temporary(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def place(tmp: str, path: str) -> None:
    """``os.replace(tmp, path)``; where ``path``'s directory is on another file system than
    ``tmp`` (a mount point: EXDEV), ``tmp`` is copied to a temporary file beside ``path``
    (its mode kept), which is moved into place: readers still see the whole file or none."""
    try:
        os.replace(tmp, path)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    beside = temporary(path)
    fd = os.open(beside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(os.stat(tmp).st_mode))
    try:
        with os.fdopen(fd, "wb") as out, open(tmp, "rb") as source:
            shutil.copyfileobj(source, out)
        os.replace(beside, path)
    finally:
        if os.path.lexists(beside):
            os.unlink(beside)
    os.unlink(tmp)


def _recreate(directory: str) -> None:
    """Make a directory of the cache again (another process cleared it)."""
    forget_made(directory)
    if marked(os.path.dirname(directory)):
        private_dir(directory)
    else:  # the compile directory went too: made (and marked) again
        ensure_private(directory)


def forget_made(directory: str) -> None:
    """``directory`` is made and checked again on next use (another process removed it)."""
    _made.discard(directory)


def temporary(path: str) -> str:
    return f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def sweep_stale(directory: str) -> None:
    """Delete symnb's temporary files (``temporary``'s names) older than STALE_SECONDS, left
    by killed compiles; once per directory and process."""
    if directory in _swept:
        return
    _swept.add(directory)
    cutoff = time.time() - STALE_SECONDS
    for entry in scan(directory):
        if TEMPORARY.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            if _older(entry, cutoff):
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


def remove_named(directory: str, names: re.Pattern) -> None:
    """Delete the entries of ``directory`` whose names match ``names`` (symnb's), then the
    directory if that left it empty: what symnb did not name stays (``clear_cache``)."""
    for entry in scan(directory):
        if names.fullmatch(entry.name):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                _remove(entry.path)
    _remove(directory)


# -- fingerprints and loading ---------------------------------------------------------------------
def fingerprint(path: str) -> str | None:
    """``"<size> <sha256>"`` of a regular file, None for anything else."""
    fd = _open_or_refuse(path, "file")
    return None if fd is None else _fingerprint_fd(fd, close=True)


def _fingerprint_fd(fd: int, close: bool) -> str:
    digest = hashlib.sha256()
    size = 0
    while block := _read_at(fd, size):
        digest.update(block)
        size += len(block)
    if close:
        os.close(fd)
    return f"{size} {digest.hexdigest()}"


def _read_at(fd: int, offset: int, size: int = 1 << 20) -> bytes:
    """Up to ``size`` bytes at ``offset`` (``os.pread``; where there is none, Windows, a seek
    then a read: the descriptor is this module's own)."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def verified(path: str, recorded: str | None, what: str) -> bool:
    """Whether the file at ``path`` matches its recorded fingerprint. A mismatch (truncated,
    replaced, empty, a directory) deletes the file, warns, and returns False: the caller
    compiles it again. A missing file returns False; so does one with no record (written by
    an older symnb), which is deleted without a warning."""
    if not os.path.lexists(path):
        return False
    got = fingerprint(path)
    if recorded and got == recorded.strip():
        return True
    if got is None and not os.path.lexists(path):
        return False  # refused (and deleted) as unsafe: a warning said so
    _damaged(path, recorded, what)
    return False


def _damaged(path: str, recorded: str | None, what: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        _remove(path)
    if recorded:
        warn_at_user(
            f"symnb: the cached {what} {path} was damaged (its size or hash differs from the "
            "record); it was deleted and is compiled again",
            RuntimeWarning,
        )


def load_checked(path: str, recorded: str, loader, what: str):
    """``loader(name)`` of the file at ``path`` as it was checked: opened once (see
    ``open_file``), its fingerprint compared with ``recorded``, and loaded through that
    descriptor (``/proc/self/fd/N`` where the system has it), so no one can swap the file
    between the check and the load. None (the file deleted, a warning) when it differs.

    The descriptor stays open while the process runs, as the library stays loaded: the
    dynamic loader knows a library by the name it was opened under, and a closed number
    reused for the next library would return the first one."""
    fd = _open_or_refuse(path, what)
    if fd is None:
        return None
    kept = False
    try:
        if _fingerprint_fd(fd, close=False) != (recorded or "").strip():
            _damaged(path, recorded, what)
            return None
        through = f"/proc/self/fd/{fd}"
        if not os.path.exists(through):
            return loader(path)
        loaded = loader(through)
        kept = True
        return loaded
    finally:
        if not kept:
            os.close(fd)
