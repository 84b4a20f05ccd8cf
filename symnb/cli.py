"""The ``symnb`` command line: ``symnb check FILE.py|NOTEBOOK.ipynb ...``; ``symnb cache
info|clear`` (what the compiled-kernel cache holds; empty it); ``symnb --version``."""

from __future__ import annotations

import argparse
import math
import os
import sys

from symnb.shapes.checker import ProgramUnreadable
from symnb.shapes.isolate import DEFAULT_TIMEOUT, check_isolated
from symnb.version import version

#: exit status of ``symnb check`` when a file is not a program it can read
UNREADABLE = 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="symnb", description="symnb command line tools")
    parser.add_argument("--version", action="version", version=f"symnb {version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check",
        help="run scripts or notebooks in check mode and report shape errors and warnings",
        description=(
            "Run each program with graphs built and shape-checked but nothing compiled: a "
            "compiled function checks its inputs and returns zeros of its output shapes. "
            "The program's code is executed with your rights: checking an untrusted notebook "
            "is running it. Exit status: 0 clean (warnings allowed), 1 shape errors, 2 other "
            "failures (an exception, a timeout, a program that ended the process or exited "
            "failing: sys.exit(1)), 3 a file "
            "that cannot be read as a program (missing, malformed notebook)."
        ),
    )
    check.add_argument("paths", nargs="+", metavar="FILE", help="a .py script or .ipynb notebook")
    check.add_argument(
        "--show-output", action="store_true", help="let the programs print (hidden by default)"
    )
    check.add_argument("--strict", action="store_true", help="exit with status 1 on warnings too")
    check.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"stop a program that runs longer (default {DEFAULT_TIMEOUT:g}; 0: no limit)",
    )
    cache = commands.add_parser(
        "cache",
        help="show or clear the compiled-kernel cache",
        description="The compile directory is sn.config.compiledir, $SYMNB_COMPILEDIR or "
        "~/.cache/symnb; its size cap is sn.config.cache_limit_mb (least recently used "
        "libraries go first).",
    )
    cache.add_argument("action", choices=["info", "clear"])
    return parser


def cache_command(action: str) -> int:
    """``symnb cache info`` prints what the kernel cache holds; ``clear`` empties it."""
    from symnb.backends.c import cache  # cffi and the code generator: only for this command
    from symnb.backends.compiledir import requested
    from symnb.backends.cuda import nvrtc

    try:
        if action == "clear" and not os.path.lexists(requested()):  # nothing to make it for
            print(f"removed nothing: {requested()} does not exist")
        elif action == "clear":
            print(f"removed {cache.clear_requested()}")
            print(f"removed {nvrtc.clear_cache()}")
        else:
            print(cache.info())
    except cache.CompileDirError as exc:  # refused or read-only: say so, clear nothing
        print(f"symnb cache {action}: {exc}", file=sys.stderr)
        return 1
    return 0


def _seconds(text: str) -> float:
    """``--timeout``'s value: a number of seconds, 0 or more (0: no limit)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(
            f"takes a number of seconds, 0 or more (0: no limit), not {text!r}"
        )
    return seconds


def check(
    paths: list[str], show_output: bool = False, strict: bool = False, timeout=DEFAULT_TIMEOUT
) -> int:
    """Check every path (each in a child process), print the reports, return the exit
    status: 1 if any file has shape errors (or, ``strict``, warnings), else the highest
    status of the files."""
    codes = set()
    for path in paths:
        try:
            report = check_isolated(path, timeout, show_output)
        except ProgramUnreadable as exc:
            print(f"{path}: cannot check: {exc}", file=sys.stderr)
            codes.add(UNREADABLE)
            continue
        print(report.format())
        codes.add(1 if strict and report.of("warning") else report.exit_code)
    return 1 if 1 in codes else max(codes)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "cache":
        return cache_command(args.action)
    return check(args.paths, args.show_output, args.strict, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
