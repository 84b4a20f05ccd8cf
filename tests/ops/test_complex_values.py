"""Ops that take complex values give NumPy's complex results (and real ones where NumPy's
are real), on every backend: a stabilised formula written for floats (``abs``, ``max``) must
not drop the phase."""

from __future__ import annotations

import numpy as np
import pytest

import symnb as sn
from tests.helpers import named_backends

BACKENDS = named_backends("py", "c")
Z = np.array([-2 + 0j, -1j, 0.5 + 1j, 30 - 2j, -30 + 0.5j])


def _z(ndim=1):
    return sn.tensor("z", shape=(None,) * ndim, dtype="complex128")


@pytest.mark.parametrize("backend", BACKENDS)
def test_sigmoid_of_complex_values_is_numpys_logistic_function(backend):
    z = _z()
    got = sn.function([z], sn.sigmoid(z), backend=backend)(Z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-Z)), rtol=1e-12)
    far = np.array([-800 + 1j, 800 - 2j])  # 1 / (1 + exp(800)) is 0, not NaN
    np.testing.assert_allclose(sn.function([z], sn.sigmoid(z), backend=backend)(far), [0, 1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_logsumexp_of_complex_values_keeps_the_imaginary_part(backend):
    z = _z(2)
    rows = np.stack([Z, Z[::-1] + 1j])
    want = np.log(np.sum(np.exp(rows), axis=1))
    written = sn.log(sn.sum(sn.exp(z), axis=1))  # rewritten to logsumexp
    for got in sn.function([z], [sn.logsumexp(z, axis=1), written], backend=backend)(rows):
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-12)


VECTOR_ORDS = [None, 2, 1, 0, np.inf, -np.inf, 3, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_norms_of_complex_values_are_numpys_real_norms(dtype, backend):
    v = np.array([1 + 2j, -3 - 0.5j, 0.5j, 0], dtype)
    m = np.array([[1 + 1j, 2, 0.5j], [-1j, 3 - 1j, 1]], dtype)
    z = sn.tensor("z", shape=(None,), dtype=dtype)
    a = sn.tensor("a", shape=(None, None), dtype=dtype)
    for value, var, ords in [(v, z, VECTOR_ORDS), (m, a, MATRIX_ORDS)]:
        for order in ords:
            want = np.linalg.norm(value, order)
            got = sn.function([var], sn.norm(var, order), backend=backend)(value)
            assert got.dtype == want.dtype, (order, got.dtype)
            np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"ord={order!r}")
    s = sn.function([a], sn.svd(a, full_matrices=False)[1], backend=backend)(m)
    np.testing.assert_allclose(s, np.linalg.svd(m, compute_uv=False), rtol=1e-5)
    assert s.dtype == np.linalg.svd(m, compute_uv=False).dtype


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_slogdet_of_complex_matrices_has_a_complex_sign_and_a_real_log(dtype, backend):
    """np.linalg.slogdet of complex128 is (complex128 sign, float64 log|det|); symnb declared
    both complex and failed at run time ("slogdet returned float64, promised complex128")."""
    m = np.array([[[1 + 2j, 0.5], [0.3j, 2 - 1j]], [[-1j, 2], [3, 1 + 1j]]], dtype)
    want_sign, want_log = np.linalg.slogdet(m)
    a = sn.tensor("a", shape=(None, 2, 2), dtype=dtype)
    sign, log = sn.slogdet(a)
    assert (sign.type.dtype, log.type.dtype) == (want_sign.dtype, want_log.dtype)
    got_sign, got_log = sn.function([a], [sign, log], backend=backend)(m)
    assert (got_sign.dtype, got_log.dtype) == (want_sign.dtype, want_log.dtype)
    np.testing.assert_allclose(got_sign, want_sign, rtol=1e-5)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-5)
    with pytest.raises(sn.DTypeError, match="cannot differentiate with respect to 'a'"):
        sn.grad(sn.sum(log), a)  # docs/autodiff.md: complex gradients are refused


@pytest.mark.parametrize("backend", BACKENDS)
def test_formulas_that_rewrite_to_softplus_compute_complex_values_as_written(backend):
    """softplus refuses complex values: the stabilize rules leave these formulas as they are
    (they raised softplus's DTypeError, an op the user never wrote)."""
    z = _z()
    s = 1 / (1 + np.exp(-Z))
    cases = [
        (sn.log(1 + sn.exp(z)), np.log(1 + np.exp(Z))),
        (sn.log(sn.sigmoid(z)), np.log(s)),
        (sn.log(1 - sn.sigmoid(z)), np.log(1 - s)),
        (sn.log1p(-sn.sigmoid(z)), np.log1p(-s)),
    ]
    f = sn.function([z], [formula for formula, _ in cases], backend=backend)
    for got, (_, want) in zip(f(Z), cases):
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, want, rtol=1e-12)


PARTS = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, -2.0]
GRID = np.array([complex(r, i) for r in PARTS for i in PARTS])


def _same_bits(got, want) -> bool:
    """Equal parts, NaN where NumPy has NaN, and the sign of every zero and infinity."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        nan = np.isnan(w)
        if not np.array_equal(np.isnan(g), nan):
            return False
        if not np.array_equal(g[~nan], w[~nan]) or (np.signbit(g) != np.signbit(w))[~nan].any():
            return False
    return True


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["none", "stable", "fast"])
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_complex_powers_2_one_half_and_minus_1_are_numpys_operator(dtype, mode, backend):
    """NumPy's ``z ** 0.5``, ``z ** -1`` and ``z ** 2`` are sqrt, reciprocal and square;
    np.power's general complex power gave inf+nanj for (-inf+1j) ** 0.5 (0+infj), nan+nanj
    for (inf+0j) ** -1 (0-0j) and 6e-17-1j for (-1-0j) ** 0.5 (-1j)."""
    z = sn.tensor("z", shape=(None,), dtype=dtype)
    values = GRID.astype(dtype)
    outs = [z**0.5, z**-1, z**2, z**1.5]
    f = sn.function([z], outs, backend=backend, optimize=mode)
    with np.errstate(all="ignore"):
        got = f(values)
        want = [values**0.5, values**-1, values**2, values**1.5]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and _same_bits(g, w), (g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_powers_at_run_time_exponents_and_in_place(backend):
    """An exponent array holding 0.5 and -1 among others takes them element by element; the
    power written into its base's buffer (in place) reads the base before writing."""
    z = sn.tensor("z", shape=(None,), dtype="complex128")
    y = sn.tensor("y", shape=(None,), dtype="float64")
    values = np.array([complex(-np.inf, 1.0), complex(np.inf, 0.0), 2j, complex(-1, -0.0)])
    exponents = np.array([0.5, -1.0, 3.0, 0.5])
    f = sn.function([z, y], [(z + 1j) ** y, sn.exp(z) ** 0.5], backend=backend)
    with np.errstate(all="ignore"):
        got, root = f(values, exponents)
        shifted = values + 1j
        fast = {0.5: np.sqrt, -1.0: np.reciprocal}
        want = np.array(
            [fast[e](s) if e in fast else np.power(s, e) for s, e in zip(shifted, exponents)]
        )
        assert _same_bits(got, want), (got, want)
        assert _same_bits(root, np.exp(values) ** 0.5)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_conj_real_and_imag_of_complex_values_are_numpys(dtype, backend):
    """sn.conj/sn.real/sn.imag (and NumPy's np.conj/np.real/np.imag, x.conj(), x.real,
    x.imag): the conjugate keeps the complex dtype, the parts are float32 of complex64 and
    float64 of complex128."""
    z = sn.tensor("z", shape=(None,), dtype=dtype)
    v = Z.astype(dtype)
    outs = [sn.conj(z), sn.real(z), sn.imag(z), np.conj(z), np.real(z), np.imag(z)]
    outs += [z.conj(), z.conjugate(), z.real, z.imag, sn.conj(z) * z + sn.real(z)]
    want = [np.conj(v), v.real, v.imag] * 2 + [np.conj(v), np.conj(v), v.real, v.imag]
    want.append(np.conj(v) * v + v.real)
    got = sn.function([z], outs, backend=backend)(v)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_gradients_through_conj_real_and_imag_follow_the_complex_policy():
    """Of a real x they are x, x and 0, with those gradients; through a complex value the
    gradient is refused, as through any other (docs/autodiff.md)."""
    x = sn.vector("x", dtype="float64")
    cost = sn.sum(sn.conj(x) * 2 + sn.real(x) * x + sn.imag(x) * 5)
    got = sn.function([x], sn.grad(cost, x), backend="py")(np.array([1.0, -3.0]))
    np.testing.assert_array_equal(got, [4.0, -4.0])
    for part in (sn.real, sn.imag, lambda z: sn.abs(sn.conj(z))):
        with pytest.raises(sn.DTypeError, match=r"^sn.grad: cannot differentiate through "):
            sn.grad(sn.sum(part(x * 1j)), x)
