"""Rendering kernel descriptions as C-family source: one renderer, small dialects.

The renderers spell a kernel under the schedule they are given (``symnb/backends/schedule``
decides threads, blocks, tiles; docs/schedule.md). ``base`` spells values and ops and collects
helpers, ``loops`` writes the CPU form of each loop shape (loop nests, threads, SIMD), ``grid``
the GPU form (one work-item per element, one work-group per row), ``runtime`` the index
arithmetic both share. A dialect
(``symnb/backends/c/dialect.py``, ``opencl/dialect.py``, ``cuda/dialect.py``) is a subclass
that supplies type names, math names, qualifiers, thread indices and barriers.
"""
