"""The synchronisation of the rendered GPU kernels, checked without a GPU: every kernel that
uses work-group memory (``__local`` in OpenCL C, ``__shared__`` in CUDA C) is parsed, its
loops unrolled twice, and each access to a shared array is checked against the dialect's
barrier. A work-item may read what another one wrote only after a barrier (a tile loaded,
then used), and may overwrite what others may still read only after one (a tile used, then
loaded again in the next step of k or for the next block). PoCL runs a work-group's items in
an order that hides a missing barrier, so running the kernels is not enough."""

from __future__ import annotations

import re

import pytest

import symnb as sn
from symnb.backends.cuda.dialect import CUDADialect
from symnb.backends.kernels.lowering import Unsupported, lower
from symnb.backends.opencl.dialect import OpenCLDialect
from symnb.ops.nnet import SoftmaxCrossEntropy, SoftmaxCrossEntropyGrad

DIALECTS = {"opencl": OpenCLDialect, "cuda": CUDADialect}
DECLARED = r"(?:__shared__|__local)\s+[\w ]+?\s+(\w+)\s*\["
ASSIGN = r"\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"


# -- a small parser of the kernels' C: statements, blocks and loops ---------------------------
def _balanced(text: str, i: int, open_: str, close: str) -> int:
    """The index just past the bracket closing the one at ``text[i]``."""
    depth = 0
    for j in range(i, len(text)):
        depth += {open_: 1, close: -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    raise ValueError(f"unbalanced {open_}{close} from {text[i : i + 40]!r}")


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _statement(text: str, i: int):
    """(node, end) for the statement at i: ("stmt", text), ("seq", nodes) for a block or an
    if/else (both branches: work-items of one group may take either), ("loop", node)."""
    i = _skip_space(text, i)
    head = re.match(r"(for|while|if)\s*\(", text[i:])
    if head:
        close = _balanced(text, i + head.end() - 1, "(", ")")
        body, end = _statement(text, close)
        if head.group(1) != "if":
            return ("loop", body), end
        after = _skip_space(text, end)
        if re.match(r"else\b", text[after:]):
            other, end = _statement(text, after + 4)
            return ("seq", [body, other]), end
        return body, end
    if text[i] == "{":
        close = _balanced(text, i, "{", "}")
        return ("seq", _statements(text[i + 1 : close - 1])), close
    end = i
    while text[end] != ";":
        end = _balanced(text, end, "(", ")") if text[end] == "(" else end + 1
    return ("stmt", text[i:end].strip()), end + 1


def _statements(text: str) -> list:
    nodes, i = [], 0
    while _skip_space(text, i) < len(text):
        node, i = _statement(text, i)
        nodes.append(node)
    return nodes


def _trace(node) -> list[str]:
    """The statements in the order one work-item may run them, each loop's body twice (its
    last iteration meets the next one's first)."""
    kind, body = node
    if kind == "stmt":
        return [body]
    if kind == "loop":
        return _trace(body) * 2
    return [s for child in body for s in _trace(child)]


def kernel_body(source: str) -> str:
    start = source.index("sn_kernel(")
    brace = source.index("{", source.index(")", start))
    return source[brace + 1 : _balanced(source, brace, "{", "}") - 1]


def shared_arrays(body: str) -> list[str]:
    return re.findall(DECLARED, body)


def unsynchronised(source: str, barrier: str) -> list[str]:
    """Each pair of statements of the trace that touch one shared array with no barrier
    between them, one writing it and the other reading it (or writing what it read)."""
    body = kernel_body(source)
    names = shared_arrays(body)
    trace = [s for s in _trace(("seq", _statements(body))) if not re.match(DECLARED, s)]
    found = []
    for name in names:
        writes, reads = set(), set()  # statements since the last barrier
        for k, stmt in enumerate(trace):
            if stmt.replace(" ", "") == barrier.replace(" ", ""):
                writes, reads = set(), set()
                continue
            wrote = len(re.findall(rf"\b{name}\s*\[[^\]]*\]{ASSIGN}", stmt))
            read = len(re.findall(rf"\b{name}\s*\[", stmt)) > wrote
            if read and writes - {k}:
                found.append(f"{name}: read in {stmt!r} after a write, no barrier between")
            if wrote and reads - {k}:
                found.append(f"{name}: written in {stmt!r} after a read, no barrier between")
            writes |= {k} if wrote else set()
            reads |= {k} if read else set()
    return found


# -- the kernels that use work-group memory ----------------------------------------------------
def _nodes():
    """name: a node whose device kernel meets in work-group memory."""
    f32, f64 = (sn.matrix(n, dtype=d) for n, d in (("x", "float32"), ("z", "float64")))
    y = sn.matrix("y", dtype="float32")
    s = sn.tensor("s", shape=(None, None, None), dtype="float32")
    labels = sn.vector("labels", dtype="int64")
    losses, probs = SoftmaxCrossEntropy(1)(f32, labels)
    return {
        "matmul_float32": (f32 @ y).owner,
        "matmul_float64": (f64 @ f64).owner,
        "matmul_transposed": (f32.T @ f32).owner,
        "matmul_batched": (s @ y).owner,
        "sum_rows": sn.sum(f32, axis=1).owner,
        "sum_columns": sn.sum(f32, axis=0).owner,
        "sum_all": sn.sum(f32).owner,
        "max_rows": sn.max(f64, axis=1).owner,
        "mean_rows": sn.mean(f32, axis=1).owner,
        "softmax": sn.softmax(f32, axis=-1).owner,
        "log_softmax": sn.log_softmax(f64, axis=-1).owner,
        "logsumexp": sn.logsumexp(f32, axis=1).owner,
        "softmax_cross_entropy": losses.owner,
        "softmax_cross_entropy_grad": SoftmaxCrossEntropyGrad(1)(losses, probs, labels).owner,
    }


NODES = list(_nodes())
PRODUCTS = [n for n in NODES if n.startswith("matmul")]
ROWS = ["softmax", "log_softmax", "logsumexp", "softmax_cross_entropy"]
REDUCTIONS = ["sum_rows", "sum_columns", "sum_all", "max_rows", "mean_rows"]


def _source(dialect, name):
    node = _nodes()[name]
    try:
        lowered = lower(node, DIALECTS[dialect]())
    except Unsupported as exc:
        pytest.skip(f"no {dialect} kernel: {exc}")
    return DIALECTS[dialect]().render(lowered.kernel)


@pytest.mark.parametrize("name", NODES)
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_every_shared_array_is_read_and_rewritten_across_a_barrier(dialect, name):
    source = _source(dialect, name)
    assert unsynchronised(source, DIALECTS[dialect].barrier) == [], source


@pytest.mark.parametrize("name", PRODUCTS + ROWS + REDUCTIONS)
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_the_tiled_and_row_kernels_use_work_group_memory(dialect, name):
    """The check above is not empty for them: they declare shared arrays and barriers."""
    source = _source(dialect, name)
    assert shared_arrays(kernel_body(source)), source
    assert DIALECTS[dialect].barrier in source


def _barrier_lines(source, barrier) -> list[int]:
    return [i for i, line in enumerate(source.split("\n")) if line.strip() == barrier + ";"]


def _without(source, drop) -> str:
    return "\n".join(line for i, line in enumerate(source.split("\n")) if i not in drop)


@pytest.mark.parametrize("name", PRODUCTS)
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_dropping_any_one_barrier_of_the_tiled_product_is_found(dialect, name):
    """Each of the product's two barriers is needed, and the check sees its absence: the
    one after loading the tiles (read before written) and the one after using them (the next
    step of k, or the next block, overwrites them while others still read)."""
    source = _source(dialect, name)
    barrier = DIALECTS[dialect].barrier
    at = _barrier_lines(source, barrier)
    assert len(at) == 2, source
    for i in at:
        assert unsynchronised(_without(source, {i}), barrier), f"line {i} dropped"


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_dropping_the_row_kernels_barriers_is_found(dialect, name):
    """Row kernels: without their barriers the tree of partial results races (each pass
    alone; some single barriers are covered by the next pass's, and one orders the global
    stores of a pass, which this check does not model)."""
    source = _source(dialect, name)
    barrier = DIALECTS[dialect].barrier
    assert unsynchronised(_without(source, set(_barrier_lines(source, barrier))), barrier)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_dropping_any_one_barrier_of_a_reductions_tree_is_found(dialect, name):
    """A reduction's work-group tree (few long outputs): the barrier after each item stores
    its partial, the one after each halving, and the one before the next output's partials
    overwrite what the first item may still read: each is needed, and seen missing. Three
    trees: one pass, and the two launches of a split one (``ReduceWriter.two_pass``)."""
    source = _source(dialect, name)
    barrier = DIALECTS[dialect].barrier
    at = _barrier_lines(source, barrier)
    assert len(at) == 3 * 3, source
    for i in at:
        assert unsynchronised(_without(source, {i}), barrier), f"line {i} dropped"


def test_the_checker_on_small_kernels():
    ok = """void sn_kernel(int lid) {
        __local float t[8];
        for (int k = 0; k < 4; k++) {
            t[lid] = k;
            B;
            x += t[7 - lid];
            B;
        }
    }"""
    assert unsynchronised(ok, "B") == []
    assert unsynchronised(ok.replace("B;\n            x", "x"), "B")
    assert len(unsynchronised(ok.replace("x += t[7 - lid];\n            B;", "x += t[7];"), "B"))
    reduce_in_place = """void sn_kernel(int lid) {
        __shared__ float r[8];
        r[lid] = 1;
        B;
        for (int s = 4; s > 0; s >>= 1) {
            if (lid < s) r[lid] = r[lid] + r[lid + s];
            B;
        }
        y = r[0];
    }"""
    assert unsynchronised(reduce_in_place, "B") == []
    assert unsynchronised(reduce_in_place.replace("            B;\n        }", "        }"), "B")
