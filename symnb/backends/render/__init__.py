"""Rendering kernel descriptions as C-family source: one renderer, small dialects.

The renderers spell a kernel under the schedule they are given (``symnb/backends/schedule``
decides threads, blocks, tiles; docs/schedule.md). ``base`` spells values and ops and collects
helpers; one writer per body shape (``maps``, ``reductions``, ``rows``, ``contract``) writes
both the CPU form (loop nests, threads, SIMD) and the GPU form (work-items over elements,
work-groups over rows), sharing ``walk``; ``source`` frames a kernel (``render``) or a GPU
program; ``runtime`` is the CPU kernels' index arithmetic. A dialect
(``symnb/backends/c/dialect.py``, ``opencl/dialect.py``, ``cuda/dialect.py``) is a subclass
that supplies type names, math names, qualifiers, thread indices and barriers.
"""
