"""``python -m benchmarks``: run the suite (see ``benchmarks/cli.py``)."""

import sys

from benchmarks.cli import main

sys.exit(main())
