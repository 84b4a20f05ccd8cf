"""symnb's benchmark suite: each workload on symnb's backends and on the peers, side by side.

Run ``python -m benchmarks`` (or ``make bench``); ``docs/benchmarks.md`` explains the method.
"""
