"""Builds symnb's C runner (symnb/backends/c/runner.c) at install time.

The build is optional: when it fails (no Python headers), symnb compiles runner.c into its
cache on first use instead, or runs calls in Python (symnb/backends/c/runner.py). Everything
else is declared in pyproject.toml.
"""

import hashlib
from pathlib import Path

import numpy
from setuptools import Extension, setup

RUNNER = "symnb/backends/c/runner.c"
DIGEST = hashlib.sha256(Path(RUNNER).read_bytes()).hexdigest()[:16]  # as runner.source_hash()

setup(
    ext_modules=[
        Extension(
            "symnb.backends.c._runner",
            [RUNNER],
            include_dirs=[numpy.get_include()],
            define_macros=[("SN_RUNNER_HASH", f'"{DIGEST}"')],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
