"""The ``symnb`` command line: ``symnb check FILE.py|NOTEBOOK.ipynb ...``; ``symnb cache
info|clear`` (what the compiled-kernel cache holds; empty it)."""

from __future__ import annotations

import argparse
import sys

from symnb.shapes.checker import check_path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="symnb", description="symnb command line tools")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check",
        help="run scripts or notebooks in check mode and report shape errors and warnings",
        description=(
            "Run each program with graphs built and shape-checked but nothing compiled: a "
            "compiled function checks its inputs and returns zeros of its output shapes. "
            "Exit status: 0 clean (warnings allowed), 1 shape errors, 2 other failures."
        ),
    )
    check.add_argument("paths", nargs="+", metavar="FILE", help="a .py script or .ipynb notebook")
    check.add_argument(
        "--show-output", action="store_true", help="let the programs print (hidden by default)"
    )
    check.add_argument("--strict", action="store_true", help="exit with status 1 on warnings too")
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

    if action == "clear":
        print(f"removed {cache.clear_cache()}")
    else:
        print(cache.info())
    return 0


def check(paths: list[str], show_output: bool = False, strict: bool = False) -> int:
    """Check every path, print the reports, return the exit status."""
    codes = set()
    for path in paths:
        try:
            report = check_path(path, quiet_output=not show_output)
        except (OSError, ValueError) as exc:
            print(f"{path}: cannot read: {exc}", file=sys.stderr)
            codes.add(2)
            continue
        print(report.format())
        codes.add(report.exit_code or (1 if strict and report.of("warning") else 0))
    return 1 if 1 in codes else max(codes)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "cache":
        return cache_command(args.action)
    return check(args.paths, show_output=args.show_output, strict=args.strict)


if __name__ == "__main__":
    sys.exit(main())
