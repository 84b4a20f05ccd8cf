"""``python -m symnb.backends.c clear``: delete the compiled-kernel cache; ``where``: print it."""

from __future__ import annotations

import sys

from symnb.backends.c.cache import CompileDirError, clear_requested, kernel_dir


def main(argv: list[str]) -> int:
    if argv == ["clear"]:
        try:
            print(f"removed {clear_requested()}")
        except CompileDirError as exc:  # read-only: nothing of the user's was touched
            print(exc, file=sys.stderr)
            return 1
        return 0
    if argv == ["where"]:
        print(kernel_dir())
        return 0
    print("usage: python -m symnb.backends.c clear|where", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
