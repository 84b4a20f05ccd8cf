"""``f.kernels`` for teaching: a kernel's own loop first, its boilerplate folded (text, HTML)."""

import re

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c.compiler import find_compiler
from symnb.backends.listing import c_sections
from symnb.viz.cards import kernels_html

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


@pytest.fixture(scope="module")
def kernels():
    x = sn.tensor("x", shape=("batch", 64), dtype="float32")
    W = sn.shared(np.zeros((64, 10), "float32"), name="W")
    b = sn.shared(np.zeros(10, "float32"), name="b")
    outputs = [2.0 * sn.sigmoid(sn.tanh(x @ W + b)) - 1.0, sn.sum(sn.exp(x) * 2, axis=1)]
    f = sn.function([x], outputs, backend="c")
    return [k for k in f.kernels if k.kind == "kernel"], f.kernels


def test_the_sections_give_the_source_back(kernels):
    for k in kernels[0]:
        sections = c_sections(k.source)
        assert "".join(text for _, text in sections) == k.source
        assert "sn_kernel" in [name for name, _ in sections]


def test_print_shows_the_loop_first_and_folds_the_rest(kernels):
    fused = next(k for k in kernels[0] if "tanh" in k.ops)
    text = str(fused)
    lines = text.splitlines()
    assert lines[0] == f"// {fused.ops}: {fused.loops()[0]}"
    assert re.match(r"static void sn_\w+\(", lines[1])
    body = "\n".join(lines[1:-1])
    assert "tanhf(" in body and "sn_sigmoid_float32(" in body  # the kernel's own scalar ops
    assert "sn_collapse" not in body and "#include" not in body  # no boilerplate in the loop
    total = len(fused.source.splitlines())
    assert len(lines) < 30 < total
    folded = total - (len(lines) - 2)
    assert re.match(rf"// \.\.\. {folded} more lines: \d+ more variants? of this loop", lines[-1])
    assert lines[-1].endswith(".source has all of it")


def test_a_reduction_shows_its_accumulating_loop(kernels):
    reduction = next(k for k in kernels[0] if "sum" in k.ops)
    loop, rest, summary = reduction.folded()
    assert "acc" in loop and "expf(" in loop and "sn_kernel" in rest
    assert f"/* {reduction.loops()[0]}: shown above */" in rest
    shown = len(reduction.source.splitlines()) - len(loop.splitlines())
    assert summary.startswith(f"{shown} more lines: {len(reduction.loops()) - 1} more variants")


def test_the_html_puts_the_rest_behind_a_click(kernels):
    html = kernels_html(kernels[1])
    loops = re.findall(r'<pre class="symnb-loop">(.*?)</pre>', html, re.S)
    assert len(loops) == len(kernels[0]) and all("v0" in loop for loop in loops)
    folded = re.findall(r'<details class="symnb-folded"><summary>(.*?)</summary>', html)
    assert len(folded) == len(kernels[0]) and all("more lines" in s for s in folded)
    assert "int sn_kernel(" not in "".join(loops) and "int sn_kernel(" in html
    assert "gemm" in html  # the BLAS step keeps its one line


def test_the_text_listing_names_every_step(kernels):
    text = kernels[1].listing()
    assert text.startswith("  0  blas") and text.count("// ... ") == len(kernels[0])
