"""Builds symnb's C runner (symnb/backends/c/runner.c) at install time.

The build is optional: when it fails (no Python headers), symnb compiles runner.c into its
cache on first use instead, or runs calls in Python (symnb/backends/c/runner.py). Everything
else is declared in pyproject.toml.
"""

import hashlib
import re
from pathlib import Path

import numpy
from setuptools import Extension, setup

RUNNER = "symnb/backends/c/runner.c"
HEADER = "symnb/backends/c/runner_plan.h"  # included by runner.c
ARGS = "symnb/backends/c/runner_args.h"  # included by runner.c
VIEWS = "symnb/backends/c/runner_views.h"  # included by runner.c
LAUNCH = "symnb/backends/c/runner_launch.h"  # included by runner.c
GEMM = "symnb/backends/c/runner_gemm.h"  # included by runner.c
LOOP = "symnb/backends/c/runner_loop.h"  # included by runner.c
THREADS = "symnb/backends/c/runner_threads.h"  # included by runner.c
ENTRY = "symnb/backends/c/runner_entry.h"  # included by runner.c
HELPERS = "symnb/backends/render/runtime.h"  # included by runner.c: the kernels' helpers
#: symnb.core.types.MAX_RANK, read from its file (the build does not import symnb);
#: runner.py passes the same define
MAX_RANK = int(re.search(r"^MAX_RANK = (\d+)", Path("symnb/core/types.py").read_text(), re.M)[1])
#: symnb.backends.plan.SERIAL_MAX (1 << n), read the same way
SERIAL_MAX = 1 << int(
    re.search(r"^SERIAL_MAX = 1 << (\d+)", Path("symnb/backends/plan.py").read_text(), re.M)[1]
)
SALT = f"MAX_RANK={MAX_RANK} SERIAL_MAX={SERIAL_MAX}".encode()
#: in runner.py's order (runner.SOURCES)
FILES = (RUNNER, HEADER, ARGS, VIEWS, THREADS, LAUNCH, GEMM, LOOP, ENTRY, HELPERS)
SOURCES = b"".join(Path(p).read_bytes() for p in FILES)
DIGEST = hashlib.sha256(SOURCES + SALT).hexdigest()[:16]  # as runner.source_hash()

setup(
    ext_modules=[
        Extension(
            "symnb.backends.c._runner",
            [RUNNER],
            depends=[HEADER, ARGS, VIEWS, THREADS, LAUNCH, GEMM, LOOP, ENTRY, HELPERS],
            include_dirs=[numpy.get_include()],
            define_macros=[
                ("SN_RUNNER_HASH", f'"{DIGEST}"'),
                ("SN_MAX_RANK", str(MAX_RANK)),
                ("SN_SERIAL_MAX", str(SERIAL_MAX)),
            ],
            # -fopenmp: large products are split between OpenMP threads (runner.c's
            # SPLIT_MIN); where it fails, symnb builds the runner itself on first use
            extra_compile_args=["-O2", "-fopenmp"],
            extra_link_args=["-fopenmp"],
            optional=True,
        )
    ]
)
