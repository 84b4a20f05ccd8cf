"""``print(f.rewrites)`` stays readable on large graphs: long steps are cut with counts, and a
run of one rule's repeated steps is one line."""

from __future__ import annotations

import symnb as sn


def test_a_long_chain_prints_in_a_few_short_lines():
    z = sn.tensor("z", shape=("n",))
    h = z
    for _ in range(300):
        h = sn.sin(h) + 1
    f = sn.function([z], h, backend="py")
    text = str(f.rewrites)
    lines = text.splitlines()
    assert len(lines) == 2 and max(map(len, lines)) < 200, text
    merges, fuse = lines
    assert (
        merges
        == "   0 merge/merge_constants x299 (steps 0-298): replaced 1:i64[] -> 1:i64[] (x299)"
    )
    assert fuse.startswith(" 299 fuse/fuse_elemwise: add, sin, add, sin, ... (600 ops: ")
    assert "300 add, 300 sin) -> composite[" in fuse and fuse.endswith("...")


def test_short_histories_print_one_line_per_step():
    x = sn.tensor("x", shape=("n",))
    f = sn.function([x], sn.log(1 + sn.exp(x)) * 2.0, backend="py")
    lines = str(f.rewrites).splitlines()
    assert len(lines) == len(f.rewrites)
    assert all(
        line.startswith(f"{i:4d} {s.phase}/{s.rule}: ")
        for i, (line, s) in enumerate(zip(lines, f.rewrites))
    )
