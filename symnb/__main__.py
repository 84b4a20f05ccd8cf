"""``python -m symnb check FILE``: the same as the ``symnb`` command."""

import sys

from symnb.cli import main

sys.exit(main())
