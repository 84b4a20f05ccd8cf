"""The compile directory after issue #35: no one else may swap it or the files in it, symnb
deletes only what it made, another process clearing it does not break a compile, and a
directory that cannot be used gets a message naming it and the fix.

The tests run as root, so "another user" is a file or directory chowned to another uid (root
may), a group-writable mode, or a stand-in for the failing call."""

import ctypes
import errno
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

import symnb as sn
from symnb import cli
from symnb.backends import compiledir as cdir
from symnb.backends.c import cache, compiler
from tests.backends.c.cache_tools import (
    build,
    failing_creates,
    library,
    reload_from_disk,
    works,
)

pytestmark = pytest.mark.usefixtures("fresh_cache")

OTHER = 54321  # a uid that is not ours
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


# -- ancestors another user may rename -------------------------------------------------------------
@as_root
def test_a_parent_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    parent = tmp_path / "theirs"
    parent.mkdir(mode=0o755)
    os.chown(parent, OTHER, OTHER)
    monkeypatch.setattr(sn.config, "compiledir", str(parent / "mine"))
    with pytest.raises(cdir.CompileDirError, match=f"user {OTHER} .* may rename .*mine"):
        build()


@pytest.mark.parametrize("bits", [0o777, 0o775])
def test_a_parent_others_may_write_is_refused(tmp_path, monkeypatch, bits):
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(bits)
    monkeypatch.setattr(sn.config, "compiledir", str(parent / "mine"))
    with pytest.raises(cdir.CompileDirError, match="may rename .*chmod \\+t"):
        build()


def test_a_sticky_shared_parent_like_tmp_is_accepted_when_the_directory_is_ours(
    tmp_path, monkeypatch
):
    parent = tmp_path / "tmp-like"
    parent.mkdir()
    parent.chmod(0o1777)
    monkeypatch.setattr(sn.config, "compiledir", str(parent / "mine"))
    monkeypatch.setattr(cache, "_loaded", {})
    works(build())


@as_root
def test_a_grandparent_of_another_user_is_refused_too(tmp_path, monkeypatch):
    top = tmp_path / "theirs"
    (top / "mine").mkdir(parents=True, mode=0o700)
    os.chown(top, OTHER, OTHER)
    monkeypatch.setattr(sn.config, "compiledir", str(top / "mine" / "cache"))
    with pytest.raises(cdir.CompileDirError, match=f"user {OTHER}"):
        build()


def test_a_symlinked_compile_directory_is_refused_with_the_right_advice(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setattr(sn.config, "compiledir", str(tmp_path / "link"))
    with pytest.raises(cdir.CompileDirError, match=f"symbolic link \\(to {real}\\).*to {real}"):
        build()


# -- the files: checked as opened, loaded through the descriptor -----------------------------------
@pytest.mark.parametrize("which", ["library", "entry"])
def test_a_group_writable_file_is_refused_and_rebuilt(compiledir, which):
    works(build())
    target = library(compiledir) if which == "library" else next((compiledir / "c").glob("*.entry"))
    target.chmod(0o660 if which == "entry" else 0o770)
    reload_from_disk()
    compiles = cache.stats.compiles
    with pytest.warns(RuntimeWarning, match="refused .*writable by group or others"):
        works(build())
    assert cache.stats.compiles == compiles + 1
    assert target.stat().st_mode & 0o077 == 0


@as_root
def test_a_library_of_another_user_is_refused(compiledir):
    works(build())
    os.chown(library(compiledir), OTHER, OTHER)
    reload_from_disk()
    with pytest.warns(RuntimeWarning, match=f"refused .*belongs to user {OTHER}"):
        works(build())
    assert library(compiledir).stat().st_uid == os.geteuid()


def test_a_symlinked_entry_is_not_followed(compiledir, tmp_path):
    works(build())
    (entry,) = (compiledir / "c").glob("*.entry")
    planted = tmp_path / "planted.entry"
    planted.write_text(entry.read_text())
    planted.chmod(0o600)
    entry.unlink()
    entry.symlink_to(planted)
    assert cdir.read_regular(str(entry)) is None


def test_libraries_are_loaded_through_the_checked_descriptor(compiledir, monkeypatch):
    opened = []
    real = ctypes.CDLL

    def recording(path, *args, **kwargs):
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", recording)
    monkeypatch.setattr(cache, "_loaded", {})
    works(build(7.0), 7.0)
    kernels = [p for p in opened if "/symnb-probe-" not in p]  # a probe's own private build
    assert kernels and all(p.startswith("/proc/self/fd/") for p in kernels), opened


def test_a_library_swapped_after_its_check_is_not_loaded(compiledir):
    works(build(2.0))
    first = library(compiledir)
    works(build(3.0), 3.0)  # a second library, a valid one
    other = next(p for p in (compiledir / "c").glob("lib-*.so") if p != first)
    reload_from_disk()
    (entry,) = [e for e in (compiledir / "c").glob("*.entry") if first.name in e.read_text()]
    key = entry.name[: -len(".entry")]
    assert cache._library_of(key) == str(first)  # checked
    os.replace(other, first)  # swapped after the check
    with pytest.warns(RuntimeWarning, match="damaged"):
        assert cache.open_symbol(str(first), cache.symbol(key)) is None


# -- deleting only what symnb made -----------------------------------------------------------------
def users_files(root):
    """A project directory that already has a c/ folder of the user's."""
    mine = root / "c"
    mine.mkdir(parents=True)
    files = {
        "notes.tmp": "draft",
        "main.c": "int main(void) { return 0; }",
        "data.tmp.csv": "1,2",
        "lib-x.so": "not a library",
    }
    past = time.time() - 10 * cdir.STALE_SECONDS
    for name, text in files.items():
        (mine / name).write_text(text)
        os.utime(mine / name, (past, past))
    return files


def test_a_directory_symnb_did_not_make_keeps_its_files(tmp_path, monkeypatch, capsys):
    project = tmp_path / "project"
    files = users_files(project)
    project.chmod(0o700)
    monkeypatch.setattr(sn.config, "compiledir", str(project))
    monkeypatch.setattr(cache, "_loaded", {})
    works(build())
    assert cache.compiledir() == str(project / cdir.SUBFOLDER)
    assert list((project / cdir.SUBFOLDER / "c").glob("lib-*.so"))
    sn.clear_cache()
    assert cli.main(["cache", "clear"]) == 0
    assert {p.name: p.read_text() for p in (project / "c").iterdir()} == files
    assert not (project / cdir.MARKER).exists()


def test_an_empty_existing_directory_is_marked_and_used(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o700)
    monkeypatch.setattr(sn.config, "compiledir", str(empty))
    monkeypatch.setattr(cache, "_loaded", {})
    works(build())
    assert cache.compiledir() == str(empty)
    assert (empty / cdir.MARKER).is_file()


def test_clear_and_sweep_delete_only_symnb_names(compiledir):
    works(build())
    kernels = compiledir / "c"
    foreign = {"readme.txt": "mine", "old.tmp": "mine", "x.1.abcdef01.tmp.bak": "mine"}
    past = time.time() - 10 * cdir.STALE_SECONDS
    for name, text in foreign.items():
        (kernels / name).write_text(text)
        os.utime(kernels / name, (past, past))
    cdir.forget()
    works(build(5.0), 5.0)  # the first compile of a process sweeps
    sn.clear_cache()
    assert {p.name: p.read_text() for p in kernels.iterdir()} == foreign


# -- another process clearing the cache; damaged entries -------------------------------------------
COMPILER_WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import symnb as sn
    sn.config.compiledir = sys.argv[1]
    x = sn.vector("x")
    for i in range(int(sys.argv[2])):
        scale = 1.0 + int(sys.argv[3]) * 1000 + i
        f = sn.function([x], sn.exp(x) * scale - 0.25, backend="c")
        np.testing.assert_allclose(f(np.ones(3)), np.exp(1.0) * scale - 0.25)
    print("ok")
    """
)
CLEARER = textwrap.dedent(
    """
    import sys, time
    import symnb as sn
    sn.config.compiledir = sys.argv[1]
    end = time.time() + float(sys.argv[2])
    while time.time() < end:
        sn.clear_cache()
        time.sleep(0.05)
    print("ok")
    """
)


def test_compiling_while_another_process_clears_the_cache(compiledir):
    works(build())  # the directory exists, marked
    env = dict(os.environ, PYTHONPATH=os.getcwd())

    def start(script, *args):
        return subprocess.Popen(
            [sys.executable, "-c", script, str(compiledir), *map(str, args)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    workers = [start(COMPILER_WORKER, 6, n) for n in range(3)]
    clearer = start(CLEARER, 20)
    try:
        for proc in workers:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0 and out.strip() == "ok", err[:3000]
    finally:
        clearer.kill()
        clearer.communicate(timeout=30)
        for proc in workers:
            proc.kill()


def test_a_cleared_kernel_directory_is_made_again_in_the_same_process(compiledir, monkeypatch):
    works(build())
    real = compiler.compile_kernels

    def cleared_first(kernels, target, used, unprobed=()):  # another process clears meanwhile
        if not cleared_first.done:
            cleared_first.done = True
            sn.backends.c.cache.remove_named(str(compiledir / "c"), cache.CACHE_NAME)
        real(kernels, target, used, unprobed)

    cleared_first.done = False
    monkeypatch.setattr(compiler, "compile_kernels", cleared_first)
    works(build(9.0), 9.0)


def test_a_kernel_directory_removed_again_as_it_is_made_again(compiledir, monkeypatch):
    """Another process clears ``c/`` just before the library moves in, and again between the
    directory being made again and checked (a `symnb cache clear` loop did this in CI)."""
    works(build())
    kernels = str(compiledir / "c")
    real_replace, real_make = os.replace, cdir._make
    removals = []

    def replace(src, dst):
        if os.path.basename(dst).startswith("lib-") and not removals:
            removals.append("before the move")
            cache.remove_named(kernels, cache.CACHE_NAME)
        return real_replace(src, dst)

    def make(path):
        made = real_make(path)
        if path == kernels and removals == ["before the move"]:
            removals.append("before the check")
            os.rmdir(path)
        return made

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(cdir, "_make", make)
    works(build(7.0), 7.0)
    assert removals == ["before the move", "before the check"]
    assert any(name.startswith("lib-") for name in os.listdir(kernels))


def test_a_private_directory_removed_between_made_and_checked_is_made_again(tmp_path, monkeypatch):
    real_make, made = cdir._make, []

    def make(path):  # another process removes it right after each of the first two makes
        real_make(path)
        made.append(path)
        if len(made) < cdir.MAKE_TRIES:
            os.rmdir(path)

    monkeypatch.setattr(cdir, "_make", make)
    target = str(tmp_path / "kernels")
    assert cdir.private_dir(target) == target and os.path.isdir(target)
    assert made == [target] * cdir.MAKE_TRIES
    monkeypatch.setattr(cdir, "_make", lambda path: real_make(path) and os.rmdir(path))
    with pytest.raises(FileNotFoundError):  # removed after every make: it gives up
        cdir.private_dir(str(tmp_path / "gone"))


def test_an_entry_that_is_a_directory_is_repaired(compiledir):
    works(build())
    (entry,) = (compiledir / "c").glob("*.entry")
    entry.unlink()
    entry.mkdir()
    (entry / "junk").write_text("x")
    reload_from_disk()
    works(build())
    assert entry.is_file()


# -- messages --------------------------------------------------------------------------------------
def command_in(message: str, program: str) -> list[str]:
    """The words of the shell command for ``program`` the message tells the user to run."""
    start = message.index(f"run {program} ") + len("run ")
    return shlex.split(message[start:].split(" after ")[0].split(" if ")[0].split(", or")[0])


def test_the_commands_to_run_are_quoted_for_the_shell(tmp_path, monkeypatch):
    """``run 'chmod 700 /tmp/x/my cache'`` pasted into a shell changed /tmp/x/my and ./cache."""
    parent = tmp_path / "shared dir"
    parent.mkdir()
    wide = parent / "my cache"
    wide.mkdir()
    wide.chmod(0o777)
    monkeypatch.setattr(sn.config, "compiledir", str(wide))
    with pytest.raises(cdir.CompileDirError) as refused:
        build()
    assert command_in(str(refused.value), "chmod") == ["chmod", "700", str(wide)]
    wide.chmod(0o700)
    parent.chmod(0o777)
    cdir.forget()
    with pytest.raises(cdir.CompileDirError) as renamable:
        build()
    assert command_in(str(renamable.value), "chmod") == ["chmod", "+t", str(parent)]
    parent.chmod(0o755)
    cdir.forget()
    denied = str(cdir.unwritable(str(wide / "c" / "x"), PermissionError(errno.EACCES, "denied")))
    top = cdir.compiledir()
    assert " " in top and command_in(denied, "chmod") == ["chmod", "-R", "u+rwX", top]


def test_a_read_only_kernel_directory_names_the_directory_and_the_fix(compiledir, monkeypatch):
    works(build())
    failing_creates(monkeypatch, lambda path: path.startswith(str(compiledir / "c")), errno.EACCES)
    reload_from_disk()
    with pytest.raises(cdir.CompileDirError, match=f"compile directory {compiledir}.*chmod"):
        works(build(4.0), 4.0)


def test_a_kernel_directory_on_another_file_system_gets_its_libraries(compiledir, monkeypatch):
    """``c/`` a mount point (tmpfs, a volume): a library compiled beside it cannot be renamed
    into it (EXDEV), and every compile failed, saying to chmod."""
    real = os.replace

    def across(source, target, **kwargs):
        if os.path.dirname(os.path.abspath(source)) != os.path.dirname(os.path.abspath(target)):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(source, target, **kwargs)

    monkeypatch.setattr(os, "replace", across)
    works(build())
    reload_from_disk()
    with cache.forbid_compile():
        works(build())
    assert os.stat(library(compiledir)).st_mode & 0o777 == 0o700
    left = [p.name for p in compiledir.rglob("*.tmp")]
    assert not left


def test_only_a_refused_permission_is_answered_with_chmod():
    for code, fix in [(errno.EXDEV, "SYMNB_COMPILEDIR"), (errno.EROFS, "read-only file system")]:
        said = str(cdir.unwritable("/x/c", OSError(code, os.strerror(code))))
        assert fix in said and "chmod" not in said and os.strerror(code) in said


def test_a_full_disk_names_the_compile_directory(compiledir, monkeypatch):
    works(build())
    failing_creates(monkeypatch, lambda path: path.startswith(str(compiledir)))
    with pytest.raises(
        cdir.CompileDirError, match=f"disk holding the compile directory {compiledir}"
    ):
        works(build(4.0), 4.0)


def test_a_compiler_that_runs_out_of_space_names_the_compile_directory(compiledir, monkeypatch):
    works(build())

    def out_of_space(source, target, options, unprobed=()):
        raise compiler.CompileError(
            "the C compiler failed\nld: final link failed: No space left on device"
        )

    monkeypatch.setattr(compiler, "_compile", out_of_space)
    with pytest.raises(
        cdir.CompileDirError, match=f"disk holding the compile directory {compiledir}"
    ):
        works(build(4.0), 4.0)


@pytest.mark.parametrize("backend", ["c", None])
def test_a_full_disk_while_writing_the_flags_memo_names_the_compile_directory(
    compiledir, monkeypatch, backend
):
    """The memo of a cold directory's flags (``accept_flags``) was a bare OSError from
    ``_write_once``, with no directory named, on either backend (as a library write is)."""
    monkeypatch.setattr(sn.config, "backend", "")
    failing_creates(monkeypatch, lambda path: os.path.basename(path).startswith("flags-"))
    x = sn.vector("x")
    with pytest.raises(cdir.CompileDirError) as full:
        sn.function([x], sn.exp(x) * 3.0 + 1, backend=backend)
    said = str(full.value)
    assert said.startswith(f"the disk holding the compile directory {compiledir} is full")
    assert "flags-" in said and "No space left on device" in said
    assert "free some space on that disk" in said
    assert isinstance(full.value.__cause__, OSError)
    assert full.value.__cause__.errno == errno.ENOSPC


def test_every_write_into_the_compile_directory_says_the_disk_is_full(compiledir):
    """``write_private`` itself converts the failure, whoever calls it (memos, records)."""
    works(build())
    memo = compiledir / "c" / "compiler-0123456789abcdef.txt"
    with pytest.MonkeyPatch.context() as patch:
        failing_creates(patch, lambda path: True, errno.EDQUOT)
        with pytest.raises(cdir.CompileDirError, match="compile directory .* is full") as full:
            cdir.write_private(str(memo), "gcc 12")
    said = f"{compiledir} is full (writing {memo}: {os.strerror(errno.EDQUOT)})"
    assert said in str(full.value)
    assert not memo.exists() and not list(compiledir.rglob("*.tmp"))


@pytest.mark.parametrize("backend", ["c", None])
def test_a_new_compile_directory_on_a_full_disk_says_the_disk_is_full(
    tmp_path, monkeypatch, backend
):
    """The marker of a new directory could not be written: claim read "not marked" as
    files symnb did not make, said to empty or remove them, and left a symnb-cache/ folder."""
    new = tmp_path / "new" / "cache"
    monkeypatch.setattr(sn.config, "compiledir", str(new))
    monkeypatch.setattr(sn.config, "backend", "")
    monkeypatch.setattr(cache, "_loaded", {})
    failing_creates(monkeypatch, lambda path: path.startswith(str(new)))
    x = sn.vector("x")
    with pytest.raises(cdir.CompileDirError) as full:
        sn.function([x], sn.exp(x) * 5.0 + 1, backend=backend)
    said = str(full.value)
    assert said.startswith(f"the disk holding the compile directory {new} is full")
    assert f"writing {new / cdir.MARKER}: No space left on device" in said
    assert "did not make" not in said and "empty or remove" not in said
    assert not new.exists()  # made by symnb and left empty: removed, no symnb-cache/ in it


def test_an_empty_directory_of_the_users_on_a_full_disk_is_left_as_it_was(tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setattr(sn.config, "compiledir", str(mine))
    failing_creates(monkeypatch, lambda path: path.startswith(str(mine)))
    with pytest.raises(cdir.CompileDirError, match=f"compile directory {mine} is full"):
        cdir.compiledir()
    assert mine.is_dir() and not list(mine.iterdir())


def test_a_read_only_new_directory_still_falls_back(tmp_path, monkeypatch):
    """Only a lack of space is raised from the marker's write: a directory where it is
    refused (read-only) is not marked, and symnb works in the user's fallback."""
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setattr(sn.config, "compiledir", str(mine))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir(mode=0o700)
    failing_creates(monkeypatch, lambda path: path.startswith(str(mine)), errno.EACCES)
    monkeypatch.setattr(os, "makedirs", refuse_under(mine, os.makedirs))
    with pytest.warns(RuntimeWarning, match=f"cannot use the compile directory {mine}"):
        chosen = cdir.compiledir()
    assert chosen == cdir.shared_fallback() and cdir.marked(chosen)


def refuse_under(top, real):
    def makedirs(path, *args, **kwargs):
        if str(path).startswith(str(top)) and not os.path.exists(path):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path, *args, **kwargs)

    return makedirs


# -- a relative compile directory -----------------------------------------------------------------
def test_a_relative_compile_directory_is_the_one_under_the_working_directory_checked(
    tmp_path, monkeypatch
):
    """After os.chdir a relative compile directory names another directory: the kernels go
    there and that one is checked (made 0700 and marked) before use, not the first one."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    monkeypatch.setattr(sn.config, "compiledir", "cache")
    assert cdir.compiledir() == str(first / "cache")
    x = sn.vector("x")
    works(sn.function([x], sn.exp(x) * 2 + 1, backend="c"))
    monkeypatch.chdir(second)
    assert cdir.requested() == str(second / "cache")
    works(sn.function([x], sn.exp(x) * 3 + 1, backend="c"), scale=3.0)
    made = second / "cache"
    assert made.is_dir() and (made.stat().st_mode & 0o777) == 0o700
    assert any((made / "c").iterdir())


@pytest.mark.parametrize("where", ["config", "environment"])
def test_a_compile_directory_under_the_home_directory_by_tilde(tmp_path, monkeypatch, where):
    """``compiledir=~/x`` (SYMNB_FLAGS, THEANO_FLAGS, where no shell expands the ``~``) made
    a folder literally named "~" in the working directory; as Theano's, it is under $HOME."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(mode=0o700)
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    if where == "config":
        monkeypatch.setattr(sn.config, "compiledir", "~/kernels")
    else:
        monkeypatch.setattr(sn.config, "compiledir", "")
        monkeypatch.setenv("SYMNB_COMPILEDIR", "~/kernels")
    assert cdir.requested() == str(home / "kernels")
    x = sn.vector("x")
    works(sn.function([x], sn.exp(x) * 2 + 1, backend="c"))
    assert any((home / "kernels" / "c").iterdir())
    assert not os.path.exists(work / "~")


@pytest.mark.parametrize(
    "home, xdg, want",
    [
        ("", "", None),  # expanduser("~") is "/": /.cache/symnb at the filesystem root
        ("relative/home", "", None),  # a folder of the working directory
        ("{tmp}", "relative/cache", "{tmp}/.cache/symnb"),  # ignored, as the XDG spec says
        ("", "{tmp}/xdg", "{tmp}/xdg/symnb"),
        ("{tmp}", "", "{tmp}/.cache/symnb"),
    ],
)
def test_a_relative_or_empty_home_or_cache_home_is_not_used(tmp_path, monkeypatch, home, xdg, want):
    monkeypatch.setattr(sn.config, "compiledir", "")
    monkeypatch.delenv("SYMNB_COMPILEDIR", raising=False)
    monkeypatch.setenv("HOME", home.format(tmp=tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", xdg.format(tmp=tmp_path))
    monkeypatch.chdir(tmp_path)
    expected = cdir.shared_fallback() if want is None else want.format(tmp=tmp_path)
    assert cdir.requested() == expected
