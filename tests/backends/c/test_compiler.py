"""Several kernels in one translation unit: each keeps its own names, and generated kernels
follow the naming convention that makes this safe (every file-scope name starts with sn_, but
the index helpers the C runner exports, which every kernel shares)."""

import re

import numpy as np
import pytest

import symnb as sn
from symnb.backends.c import cache, compiler, runner
from symnb.backends.render import runtime

POINTER = re.compile(r"\(\*\s*(\w+)\)")  # typedef void (*name)(...)
DECLARED = re.compile(r"\b(\w+)\s*(?:\(|\[|=|;)")


def test_translation_unit_keeps_each_kernels_names_apart():
    first = "#define SN_N 2\nstatic int sn_half(int x) { return x / SN_N; }\n"
    second = "#define SN_N 3\nstatic int sn_half(int x) { return x / SN_N; }\n"
    unit = compiler.translation_unit(
        [
            ("sn_kernel_a", first + "int sn_kernel(void) { return sn_half(6); }\n"),
            ("sn_kernel_b", second + "int sn_kernel(void) { return sn_half(6); }\n"),
        ]
    )
    assert "#define sn_half sn_half__k0" in unit and "#define sn_half sn_half__k1" in unit
    assert unit.index("#undef SN_N") < unit.index("#define SN_N 3")
    assert "#define sn_kernel sn_kernel_b" in unit


def test_a_name_the_kernel_defines_as_a_macro_is_not_renamed():
    """The runner's helpers are declared by their exported name with an ``sn_`` macro for it:
    renaming that macro would make each kernel call a function nobody defines."""
    source = "int snrt_half(int x);\n#define sn_half snrt_half\n"
    source += "int sn_kernel(void) { return sn_half(6); }\n"
    unit = compiler.translation_unit([("sn_kernel_a", source), ("sn_kernel_b", source)])
    assert "sn_half__k" not in unit
    assert unit.count("#undef sn_half") == 2


def test_kernels_call_the_runners_helpers_when_it_is_loaded(compiledir):
    x = sn.matrix("x")
    f = sn.function([x], sn.exp(x).sum(axis=1), backend="c")
    source = f.kernels[0].source
    assert runner.exports_helpers()
    for name in runtime.names():
        exported = runtime.EXPORTED + name[len("sn_") :]
        assert f"#define {name} {exported}" in source
        assert not re.search(rf"^static[^\n]*\b{name}\(", source, re.M)  # not its own copy
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(f(a), np.exp(a).sum(axis=1))


def test_kernels_in_one_unit_compute_what_each_computes_alone(compiledir, monkeypatch):
    """Two kernels with the same static helpers and macros of different values, one library."""
    monkeypatch.setattr(cache, "_cores", lambda: 1)
    x = sn.vector("x")
    f = sn.function([x], [sn.exp(x) // 0.75, sn.sum(sn.maximum(x, 0.5), axis=0)], backend="c")
    a = np.linspace(-2, 2, 9)
    got = f(a)
    np.testing.assert_allclose(got[0], np.exp(a) // 0.75)
    np.testing.assert_allclose(got[1], np.maximum(a, 0.5).sum())
    assert len(list((compiledir / "c").glob("*.so"))) == 1


@pytest.mark.parametrize("how", ["not built", "turned off"])
def test_without_the_runner_a_kernel_compiles_its_own_helpers(compiledir, monkeypatch, how):
    """No runner to call (no Python headers, a failed build, ``c_runner = False``): each kernel
    defines the helpers, and several such kernels still share one translation unit."""
    if how == "not built":
        monkeypatch.setattr(runner, "_exports", [False])
    else:
        monkeypatch.setattr(sn.config, "c_runner", False)
    monkeypatch.setattr(cache, "_cores", lambda: 1)
    x = sn.matrix("x")
    f = sn.function([x], [sn.exp(x).sum(axis=1), sn.tanh(x) * 2], backend="c")
    for kernel in f.kernels:
        assert "static int64_t sn_collapse(" in kernel.source
        assert runtime.EXPORTED not in kernel.source
    a = np.arange(12.0).reshape(3, 4) / 7
    got = f(a)
    np.testing.assert_allclose(got[0], np.exp(a).sum(axis=1))
    np.testing.assert_allclose(got[1], np.tanh(a) * 2)
    assert len(list((compiledir / "c").glob("*.so"))) == 1


def file_scope_names(source: str) -> set[str]:
    """Names declared outside any braces, preprocessor lines and attribute lines aside."""
    names, depth = set(), 0
    for line in source.splitlines():
        text = line.strip()
        if depth == 0 and text and not text.startswith(("#", "__attribute__", "//")):
            found = POINTER.search(text) or DECLARED.search(text.replace("(void)", "()"))
            if found:
                names.add(found.group(1))
        depth += line.count("{") - line.count("}")
    return names


def test_every_file_scope_name_of_a_generated_kernel_starts_with_sn():
    x = sn.matrix("x", dtype="float32")
    i = sn.matrix("i", dtype="int32")
    outputs = [
        sn.exp(x) * 2 + sn.sigmoid(x),  # elementwise with helpers and vector math
        i // 3 + i % 5,  # integer helpers
        sn.sum(sn.tanh(x), axis=1),  # reduction with a fused producer
        sn.max(x, axis=0),
        sn.logsumexp(x, axis=1),
        sn.softmax(x),
    ]
    f = sn.function([x, i], outputs, backend="c")
    sources = [k.source for k in f.kernels if k.source]
    assert len(sources) >= 5
    for source in sources:
        shared = {runtime.EXPORTED + n[len("sn_") :] for n in runtime.names()}
        names = file_scope_names(source) - shared
        assert all(name.startswith("sn_") for name in names), source


def test_only_the_strided_row_functions_are_marked(compiledir):
    """W3's kinds of kernel: a map (``sn_flat`` and its strided ``sn_row``), a row program
    (``sn_rows`` and ``sn_rows_flat``) and a reduction with its scatter rows. Each strided
    function's definition line gains ``SN_STRIDED``; every other line is as rendered."""
    x = sn.matrix("x", dtype="float32")
    f = sn.function([x], [sn.maximum(x, 0) * 2, sn.softmax(x, axis=-1), sn.sum(x, axis=0)])
    marked = set()
    for source in f.kernels.sources():
        lines, done = source.splitlines(), compiler.strided(source).splitlines()
        assert len(done) == len(lines)
        for old, new in zip(lines, done):
            if new != old:
                assert new == "SN_STRIDED " + old, new
                marked.add(re.match(r"static \w+ (sn_\w+)\(", old)[1])
    assert marked == {"sn_row", "sn_rows", "sn_scatter"}
    unit = compiler.translation_unit(
        [(f"sn_kernel_{i}", s) for i, s in enumerate(f.kernels.sources())]
    )
    assert unit.startswith(compiler.STRIDED_PRELUDE) and "SN_STRIDED static void sn_row(" in unit


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_strided_rows_compute_what_numpy_does(compiledir, dtype):
    """Transposed and broadcast operands run the strided row functions (-O1 under GCC)."""
    x, m = sn.matrix("x", dtype=dtype), sn.vector("m", dtype=dtype)
    outs = [
        sn.exp(x.T) * 2 + 1,
        sn.tanh(x - m.dimshuffle(0, "x")),
        sn.sum(sn.exp(x.T), axis=1),
        sn.softmax(x.T, axis=-1),
        sn.max(x.T * 3, axis=0),
    ]
    f = sn.function([x, m], outs)
    a = np.random.default_rng(0).standard_normal((37, 45)).astype(dtype)
    b = np.linspace(-1, 1, 37).astype(dtype)
    e = np.exp(a.T)
    expected = [e * 2 + 1, np.tanh(a - b[:, None]), e.sum(axis=1), e / e.sum(axis=1, keepdims=True)]
    expected.append((a.T * 3).max(axis=0))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(f(a, b), expected):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


def test_a_single_kernel_error_gives_the_kernels_own_line(compiledir):
    """The prelude before a kernel compiled alone does not shift the compiler's line numbers."""
    source = (
        "#include <stdint.h>\n"
        "static void sn_flat(int64_t n) { (void)n; }\n"
        "static void sn_row(int64_t n) { (void)n; }\n"
        "int sn_kernel(int64_t *a, char **ptr) {\n"
        "    not C at all;\n"
        "}\n"
    )
    with pytest.raises(compiler.CompileError) as info:
        cache.load_many([source])
    assert "kernel.c:5:" in str(info.value)
    assert "   5      not C at all;" in str(info.value)  # the numbered source is the kernel's
