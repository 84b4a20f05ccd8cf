"""The compile cache cannot be planted and heals itself (issue #17): owner and mode checks,
private files, validated flags, fingerprinted libraries, FIFOs, stale temporary files, a
read-only directory, a size cap with LRU eviction, ``symnb cache``, ``SYMNB_COMPILEDIR``."""

import os
import stat
import threading
import time
import warnings

import numpy as np
import pytest

import symnb as sn
from symnb import cli
from symnb.backends import compiledir as cdir
from symnb.backends.c import cache, compiler, runner
from symnb.errors import CompileDirError
from tests.backends.c.cache_tools import build, library, reload_from_disk, works

pytestmark = pytest.mark.usefixtures("fresh_cache")


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# -- owner and mode -------------------------------------------------------------------------------
def test_directory_is_made_0700_and_files_0600(compiledir):
    old = os.umask(0)  # the worst umask: nothing masked
    try:
        works(build())
    finally:
        os.umask(old)
    assert mode(compiledir) == 0o700 and mode(compiledir / "c") == 0o700
    assert mode(library(compiledir)) == 0o700
    others = [p for p in (compiledir / "c").iterdir() if not p.name.endswith(".so")]
    assert others and all(mode(p) == 0o600 for p in others), [
        (p.name, oct(mode(p))) for p in others
    ]


@pytest.mark.parametrize("bits", [0o770, 0o777, 0o722])
def test_directory_writable_by_others_is_refused(compiledir, bits):
    compiledir.mkdir()
    compiledir.chmod(bits)
    with pytest.raises(cdir.CompileDirError, match=f"chmod 700 {compiledir}"):
        build()


def test_the_refusal_is_caught_by_its_public_name(compiledir):
    """``CompileDirError`` was importable only from symnb.backends.compiledir (or .c.cache)."""
    assert cdir.CompileDirError is CompileDirError is sn.errors.CompileDirError
    assert issubclass(CompileDirError, sn.SymnbError) and issubclass(CompileDirError, OSError)
    compiledir.mkdir()
    compiledir.chmod(0o777)
    with pytest.raises(sn.errors.CompileDirError, match=f"{compiledir} is writable by group"):
        build()


def test_directory_of_another_user_is_refused(compiledir, monkeypatch):
    compiledir.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.lstat(compiledir).st_uid + 1)
    with pytest.raises(cdir.CompileDirError, match="not to you.*SYMNB_COMPILEDIR"):
        build()


def test_environment_variable_sets_the_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(sn.config, "compiledir", "")
    monkeypatch.setattr(cache, "_loaded", {})
    monkeypatch.setenv("SYMNB_COMPILEDIR", str(tmp_path / "from-env"))
    works(build())
    assert list((tmp_path / "from-env" / "c").glob("lib-*.so"))


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    """``tempfile.gettempdir()`` for this test: fallbacks go there, not to /tmp."""
    root = tmp_path / "tmp"
    root.mkdir(mode=0o700)
    monkeypatch.setattr(cdir.tempfile, "gettempdir", lambda: str(root))
    monkeypatch.setattr(cdir.tempfile, "tempdir", str(root))  # mkdtemp's default
    return root


def test_read_only_directory_falls_back_to_a_private_one_with_one_warning(
    compiledir, monkeypatch, temp_root
):
    compiledir.mkdir(mode=0o700)
    monkeypatch.setattr(cdir, "writable", lambda path: path != str(compiledir))  # root writes all
    with pytest.warns(RuntimeWarning, match="cannot use the compile directory") as seen:
        works(build())
        works(build(3.0), 3.0)
    assert len([w for w in seen if "cannot use" in str(w.message)]) == 1
    assert {p.name for p in compiledir.iterdir()} <= {cdir.MARKER}  # root may write the marker
    assert mode(cdir.compiledir()) == 0o700


# -- the flags memo -------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "garbage !!", "-wrapper /bin/sh,-c,touch {mark}"])
def test_flags_memo_that_symnb_would_not_write_is_ignored(compiledir, text, tmp_path, monkeypatch):
    mark = tmp_path / "planted-ran"
    cc = compiler.require_compiler()
    monkeypatch.setattr(compiler, "_flags", {})  # read from the memo, as in a new process
    memo = compiler._flags_memo(cc)
    with open(memo, "w") as f:
        f.write(text.format(mark=mark))
    works(build())
    assert not mark.exists()
    assert compiler.trusted(compiler.flags(cc))


def test_memoised_flags_that_fail_are_probed_again(compiledir, monkeypatch):
    cc = compiler.require_compiler()
    monkeypatch.setattr(compiler, "_flags", {})  # read from the memo, as in a new process
    first, other = (*compiler.base_flags(), "-fno-math-errno"), compiler.base_flags()
    compiler._remember(compiler._flags_memo(cc), " ".join(first))
    real, calls = compiler.compile_kernels, []

    def fails_with_first(kernels, target, used, unprobed=()):
        calls.append(used)
        if used == first:
            raise compiler.CompileError("libgomp went away")
        real(kernels, target, used, unprobed)

    monkeypatch.setattr(compiler, "compile_kernels", fails_with_first)
    monkeypatch.setattr(compiler, "_probe", lambda path: other)
    works(build())
    assert calls == [first, other] and compiler.flags(cc) == other


# -- fingerprinted libraries ----------------------------------------------------------------------
# Each damage writes a new file in place of the library (as another process would): this
# process still maps the old one, and changing a mapped file's bytes would crash it here.
def replace_with(path, data: bytes):
    tmp = f"{path}.new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def truncate(path):
    replace_with(path, open(path, "rb").read()[: os.path.getsize(path) // 2])


def scramble(path):
    replace_with(path, np.random.default_rng(0).bytes(os.path.getsize(path)))


def empty(path):
    replace_with(path, b"")


def directory(path):
    os.unlink(path)
    os.mkdir(path)


@pytest.mark.parametrize("damage", [truncate, scramble, empty, directory])
def test_damaged_library_is_deleted_and_compiled_again_with_one_warning(compiledir, damage):
    works(build())
    lib = library(compiledir)
    damage(lib)
    reload_from_disk()
    compiles = cache.stats.compiles
    with pytest.warns(RuntimeWarning, match="was damaged") as seen:
        works(build())
    assert len([w for w in seen if "damaged" in str(w.message)]) == 1
    assert cache.stats.compiles == compiles + 1
    (entry,) = (compiledir / "c").glob("*.entry")
    assert lib.is_file() and entry.read_text() == f"{lib.name} {cdir.fingerprint(str(lib))}"


def test_an_entry_naming_an_intact_library_without_its_kernel_is_dropped(compiledir):
    """A cache mixed up by hand: kernel 2's entry copied over kernel 1's. Loading raised
    ctypes' AttributeError ("undefined symbol") in every later process."""
    works(build(2.0), 2.0)
    first = set((compiledir / "c").glob("*.entry"))
    works(build(3.0), 3.0)
    ((other,),) = [set((compiledir / "c").glob("*.entry")) - first]
    ((mine,),) = [first]
    mine.write_text(other.read_text())
    reload_from_disk()
    with pytest.warns(RuntimeWarning, match="entry .* was damaged .* does not hold sn_kernel_"):
        works(build(2.0), 2.0)
    assert mine.read_text() != other.read_text()  # written again for its own library
    reload_from_disk()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        works(build(2.0), 2.0)
        works(build(3.0), 3.0)  # the library it named keeps its own kernel


def test_a_library_the_compiler_left_empty_is_never_indexed(compiledir, monkeypatch):
    monkeypatch.setattr(compiler, "_compile", lambda source, target, *options: empty(target))
    monkeypatch.setattr(cache, "_loaded", {})
    with pytest.raises(compiler.CompileError, match="empty library"):
        build()
    assert not list((compiledir / "c").glob("*.entry"))


def test_entry_that_is_a_fifo_does_not_hang(compiledir):
    works(build())
    (entry,) = (compiledir / "c").glob("*.entry")
    entry.unlink()
    os.mkfifo(entry)
    reload_from_disk()
    done, errors = [], []

    def load():
        try:
            done.append(build())
        except BaseException as exc:  # collected: the worker's failure must fail the test
            errors.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(60)
    assert not errors, errors
    assert done, "loading hung on a FIFO"
    works(done[0])


def test_runner_extension_is_fingerprinted(compiledir, monkeypatch):
    cc = compiler.find_compiler()
    path = runner._cached_path(cc)
    assert runner._build(cc, path)
    recorded = open(path + ".sum").read()
    assert recorded == cdir.fingerprint(path)
    truncate(path)
    with pytest.warns(RuntimeWarning, match="C runner .* was damaged"):
        assert not cdir.verified(path, recorded, "C runner")
    assert not os.path.exists(path)
    built = []
    monkeypatch.setattr(runner, "_build", lambda cc, p: built.append(p) or False)
    assert runner._compiled() is None and built == [path]  # rebuilt, never loaded


def test_the_runner_build_holds_no_path_of_the_checkout(tmp_path):
    """Two checkouts sharing a compile directory built different bytes (asserts' __FILE__)
    under one name: racing builds left a .sum that did not match, a spurious "damaged"."""
    path = str(tmp_path / "_runner_x.so")
    assert runner._build(compiler.find_compiler(), path)
    assert str(runner.SOURCE.parent).encode() not in open(path, "rb").read()
    assert open(path + ".sum").read() == cdir.fingerprint(path)


# -- stale files, the size cap, the command line ----------------------------------------------
def test_stale_temporary_files_are_removed(compiledir):
    works(build())
    kernels = compiledir / "c"
    old, new = kernels / "lib-x.so.1.abcdef01.tmp", kernels / "lib-y.so.2.cdef0123.tmp"
    for p in (old, new):
        p.write_bytes(b"half")
    past = time.time() - 2 * cdir.STALE_SECONDS
    os.utime(old, (past, past))
    cdir.forget()
    works(build(5.0), 5.0)
    assert not old.exists() and new.exists()


def test_size_cap_evicts_least_recently_used_libraries(compiledir, monkeypatch):
    for scale in (2.0, 3.0, 4.0):
        works(build(scale), scale)
    libs = sorted((compiledir / "c").glob("lib-*.so"), key=os.path.getmtime)
    oldest = libs[0]
    past = time.time() - 1000
    os.utime(oldest, (past, past))
    source = max(os.path.getsize(p) for p in (compiledir / "c").glob("*.c"))
    size = os.path.getsize(libs[1]) + source  # a library and its kernel's source
    monkeypatch.setattr(cache, "MB", 1)  # (the cap in bytes: a whole number of MB is too big)
    monkeypatch.setattr(sn.config, "cache_limit_mb", 2 * size + 100)
    assert cache.evict() == [oldest.name]
    assert cache.info().libraries == 2 and cache.info().kernels == 2
    reload_from_disk()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        works(build(3.0), 3.0)


def test_eviction_takes_the_kernels_sources_and_counts_them(compiledir, monkeypatch):
    """Evicted kernels left their ``<key>.c`` behind, uncounted: the cache grew without bound."""
    for scale in (2.0, 3.0, 4.0):
        works(build(scale), scale)
    kernels = compiledir / "c"
    libs = sorted(kernels.glob("lib-*.so"), key=os.path.getmtime)
    past = time.time() - 1000
    os.utime(libs[0], (past, past))
    (key,) = [e.stem for e in kernels.glob("*.entry") if e.read_text().startswith(libs[0].name)]
    sizes = sum(os.path.getsize(p) for p in [*libs, *kernels.glob("*.c")])
    monkeypatch.setattr(cache, "MB", 1)  # (the cap in bytes)
    monkeypatch.setattr(sn.config, "cache_limit_mb", sizes - 1)  # libraries alone fit
    assert cache.evict() == [libs[0].name]
    assert not (kernels / f"{key}.c").exists()
    assert {p.stem for p in kernels.glob("*.c")} == {p.stem for p in kernels.glob("*.entry")}
    left = sum(os.path.getsize(p) for p in [*kernels.glob("lib-*.so"), *kernels.glob("*.c")])
    assert cache.info().bytes == left


def test_sources_left_without_an_entry_go_once_stale(compiledir):
    works(build())
    kernels = compiledir / "c"
    stale, fresh = kernels / ("0" * 32 + ".c"), kernels / ("1" * 32 + ".c")
    for p in (stale, fresh):
        p.write_text("/* an older symnb's evicted kernel */")
    past = time.time() - 2 * cdir.STALE_SECONDS
    os.utime(stale, (past, past))
    cache.evict()
    assert not stale.exists() and fresh.exists()  # fresh: its entry may be on its way
    assert len(list(kernels.glob("*.c"))) == 2


def test_a_limit_of_zero_keeps_the_libraries_of_the_latest_compile(compiledir, monkeypatch):
    """A limit below one library's size (0 included) used to delete the library a compile had
    just written, and every compile failed ("deleted before it could be loaded, 3 times")."""
    monkeypatch.setattr(sn.config, "cache_limit_mb", 0)
    works(build(2.0), 2.0)
    old = sorted((compiledir / "c").glob("lib-*.so"))
    past = time.time() - 1000
    for lib in old:
        os.utime(lib, (past, past))
    works(build(7.0), 7.0)
    new = sorted((compiledir / "c").glob("lib-*.so"))
    assert new and not set(old) & set(new)


def test_cache_info_and_clear_on_the_command_line(compiledir, capsys):
    works(build())
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"{compiledir / 'c'}: 1 kernels in 1 libraries" in out and "MB of 1024 MB" in out
    assert cli.main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not (compiledir / "c").exists()


def read_only(monkeypatch, directory):
    """``directory`` (and what is in it) as if mounted read-only: root writes anyway, so the
    writability check says no, and no fallback may be made (``symnb cache`` must not)."""
    monkeypatch.setattr(cdir, "writable", lambda path: not path.startswith(str(directory)))

    def no_fallback(*args, **kwargs):
        raise AssertionError("a fallback directory was made")

    monkeypatch.setattr(cdir.tempfile, "mkdtemp", no_fallback)


def test_cache_info_describes_a_read_only_directory_not_a_fallback(compiledir, monkeypatch, capsys):
    works(build())
    cdir.forget()
    read_only(monkeypatch, compiledir)
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{compiledir / 'c'}: 1 kernels in 1 libraries"), out
    assert "cannot be written (it is read-only)" in out and "temporary directory" in out


def test_cache_clear_of_a_read_only_directory_fails_removing_nothing(
    compiledir, monkeypatch, capsys
):
    works(build())
    cdir.forget()
    read_only(monkeypatch, compiledir)
    before = sorted(p.name for p in (compiledir / "c").iterdir())
    assert cli.main(["cache", "clear"]) == 1
    out, err = capsys.readouterr()
    assert "removed" not in out and f"cannot clear the compile directory {compiledir}" in err
    assert sorted(p.name for p in (compiledir / "c").iterdir()) == before


def test_processes_that_fall_back_share_one_directory_of_the_user(
    compiledir, monkeypatch, temp_root
):
    compiledir.mkdir(mode=0o700)
    monkeypatch.setattr(cdir, "writable", lambda path: path != str(compiledir))
    with pytest.warns(RuntimeWarning, match="shared by your processes"):
        works(build())
    assert (
        cdir.compiledir()
        == cdir.shared_fallback()
        == str(temp_root / f"symnb-compiledir-user-{os.geteuid()}")
    )
    cdir.forget()  # a later process: finds the kernel compiled before
    reload_from_disk()
    with pytest.warns(RuntimeWarning, match="cannot use"), cache.forbid_compile():
        works(build())
    assert [p.name for p in temp_root.iterdir()] == [os.path.basename(cdir.shared_fallback())]


def planted_by_another(path):
    path.mkdir(mode=0o777)
    path.chmod(0o777)  # (as if) another user's: group and others may write it


def planted_link(path):
    target = path.parent / "elsewhere"
    target.mkdir(mode=0o700)
    path.symlink_to(target)


@pytest.mark.parametrize("plant", [planted_by_another, planted_link])
def test_a_planted_shared_fallback_is_refused_for_a_private_one_removed_at_exit(
    compiledir, monkeypatch, temp_root, plant
):
    compiledir.mkdir(mode=0o700)
    monkeypatch.setattr(cdir, "writable", lambda path: path != str(compiledir))
    plant(temp_root / f"symnb-compiledir-user-{os.geteuid()}")
    at_exit = []
    monkeypatch.setattr(cdir.atexit, "register", lambda *call: at_exit.append(call))
    with pytest.warns(RuntimeWarning, match="for this process, removed at exit"):
        works(build())
    private = cdir.compiledir()
    assert os.path.dirname(private) == str(temp_root) and private != cdir.shared_fallback()
    assert list((temp_root / os.path.basename(private) / "c").glob("lib-*.so"))
    # (the first weakref.finalize of a process registers one too: the test run alone)
    ((remove, *args),) = [call for call in at_exit if call[0] is cdir._remove_private]
    remove(private, os.getpid() + 1)  # a forked child's exit leaves it to the parent
    assert os.path.isdir(private)
    remove(*args)
    assert not os.path.exists(private)


# -- Windows: no owners or modes, no directory descriptors (stand-ins) -----------------------------
def test_a_system_without_owners_or_directory_descriptors_compiles_and_reloads(
    compiledir, monkeypatch
):
    """Windows has neither POSIX owners and modes (``st_uid`` 0, every mode looks writable
    by all) nor ``os.open(..., dir_fd=)``, ``O_DIRECTORY``, ``os.geteuid``, ``os.pread``: the
    cache then checks links and kinds of file only, opens files by path, and reads with a
    seek. Stand-ins for all of those: a kernel compiles, loads again from the disk under
    ``forbid_compile``, a damaged library is found, and a link is still refused."""
    monkeypatch.setattr(cdir, "OWNERS", False)
    monkeypatch.setattr(cdir, "DIR_FDS", False)
    monkeypatch.delattr(os, "geteuid")
    monkeypatch.delattr(os, "pread")
    monkeypatch.delattr(os, "O_DIRECTORY")
    compiledir.mkdir(mode=0o700)
    compiledir.chmod(0o777)  # what Windows reports for any directory
    works(build())
    cdir.forget()
    reload_from_disk()
    with cache.forbid_compile():
        works(build())
    lib = library(compiledir)
    # damaged: found by its fingerprint (replaced: a write into the library this process
    # has loaded changed its mapped code, and the test run crashed at exit)
    replace_with(lib, lib.read_bytes()[:-1])
    cdir.forget()
    reload_from_disk()
    with pytest.warns(RuntimeWarning, match="damaged"):
        works(build())
    assert "symnb-compiledir-user-" in cdir.shared_fallback()
    elsewhere = compiledir.parent / "elsewhere"
    elsewhere.mkdir()
    (compiledir.parent / "linked").symlink_to(elsewhere)
    with pytest.raises(cdir.CompileDirError, match="symbolic link"):
        cdir.check_dir(str(compiledir.parent / "linked"))


def test_cache_info_and_clear_make_no_directory(tmp_path, monkeypatch, capsys):
    """``symnb cache info`` (and ``clear``) of a compile directory no compile has used yet
    say so, and make nothing (info made the directory it described)."""
    never = tmp_path / "never" / "made"
    monkeypatch.setattr(sn.config, "compiledir", str(never))
    cdir.forget()
    assert cli.main(["cache", "info"]) == 0
    assert f"{never}: 0 kernels in 0 libraries" in capsys.readouterr().out
    assert cli.main(["cache", "clear"]) == 0
    assert f"removed nothing: {never} does not exist" in capsys.readouterr().out
    assert not never.exists() and not never.parent.exists()
