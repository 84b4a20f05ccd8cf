"""What differs between operating systems for backend "c": library names, link flags, hints.

Linux and macOS are alike but for the linker: a macOS library may not leave a symbol undefined
unless told (``-undefined dynamic_lookup``), which the runner needs for Python's symbols and a
kernel for the runner's helpers; CPython builds its own extensions that way (``LDSHARED``).
Windows has no such lookup: a DLL resolves every symbol when it is linked, so there kernels
carry their own helpers and the runner is only ever the one ``pip install`` built. Everything
here takes the platform as a value (``sys.platform`` by default), so the tests run the macOS
and Windows paths on Linux.
"""

from __future__ import annotations

import functools
import shlex
import sys
import sysconfig
from dataclasses import dataclass

#: flags of ``LDSHARED`` that say how to link a loadable module (the rest are the
#: interpreter's own search paths, which a kernel library must not inherit)
LINK_MODE = ("-shared", "-bundle", "-dynamiclib", "-Wl,-undefined,dynamic_lookup")
DARWIN_LINK = ("-bundle", "-undefined", "dynamic_lookup")


@dataclass(frozen=True)
class Platform:
    """The facts of one operating system that backend "c" depends on."""

    system: str  # a ``sys.platform`` value
    library_suffix: str  # the file name ending of a kernel library
    kernel_link: tuple[str, ...]  # flags linking kernels into a library ctypes can open
    runner_link: tuple[str, ...]  # flags linking runner.c into a CPython extension
    builds_runner: bool  # whether symnb compiles runner.c itself (else only pip's build)
    shares_helpers: bool  # whether a kernel may call the runner's helpers (resolved at load)
    install_hint: str  # how to get a C compiler that builds the kernels


@functools.cache
def current(system: str | None = None, ldshared: str | None = None) -> Platform:
    """The platform ``system`` (default: this one); ``ldshared`` stands in for sysconfig's
    ``LDSHARED`` (how this Python links its extensions)."""
    system = system or sys.platform
    if ldshared is None:
        ldshared = sysconfig.get_config_var("LDSHARED") or ""
    if system == "darwin":
        return Platform(
            system,
            ".dylib",
            ("-dynamiclib", "-undefined", "dynamic_lookup"),
            _darwin_link(_link_mode(ldshared)),
            True,
            True,
            "install Apple's command line tools: xcode-select --install",
        )
    if system in ("win32", "cygwin"):
        return Platform(
            system,
            ".dll",
            ("-shared",),
            (),
            False,
            False,
            "install MinGW-w64 gcc or LLVM clang and put it on the PATH (MSVC's cl "
            "cannot build symnb's kernels), or set sn.config.cc to it",
        )
    return Platform(
        system,
        ".so",
        ("-shared", "-fPIC"),
        (*(_link_mode(ldshared) or ("-shared",)), "-fPIC"),
        True,
        True,
        "install a C compiler (Debian/Ubuntu: apt-get install gcc; Fedora: dnf "
        "install gcc; conda: conda install -c conda-forge c-compiler)",
    )


def _link_mode(ldshared: str) -> tuple[str, ...]:
    """The link-mode flags of an ``LDSHARED`` value (``-undefined`` keeps its argument)."""
    words = shlex.split(ldshared)
    kept = []
    for i, word in enumerate(words):
        if word in LINK_MODE:
            kept.append(word)
        elif word == "-undefined" and i + 1 < len(words):
            kept += [word, words[i + 1]]
    return tuple(kept)


def _darwin_link(mode: tuple[str, ...]) -> tuple[str, ...]:
    """A macOS extension must leave Python's symbols to the loader, whatever LDSHARED says."""
    return mode if any("dynamic_lookup" in flag for flag in mode) else DARWIN_LINK


def extension_suffix() -> str:
    """The file name ending CPython imports an extension module by (``.cpython-311-...so``)."""
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"
