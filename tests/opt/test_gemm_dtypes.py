"""The gemm rules keep the graph's float type: a symbolic scale of that type, or one that
widens into it losslessly, is cast to it and the rule fires. Found by mutation testing: a
scale cast to the default dtype only stopped the rule, and every gemm test was float64."""

import numpy as np

import symnb as sn
from tests.opt.util import assert_same_values, fired, ops_of

SPECIALIZE = {"include": ["specialize"]}


def matrices(dtype):
    return [sn.tensor(name, shape, dtype) for name, shape in zip("xwz", [(4, 3), (3, 2), (4, 2)])]


def test_a_float32_product_with_a_symbolic_scale_becomes_one_gemm(rng):
    x, w, z = matrices("float32")
    values = [rng.normal(size=s).astype("float32") for s in ((4, 3), (3, 2), (4, 2))]
    for scale_dtype in ("float32", "float16", "int8"):
        a = sn.tensor("a", (), scale_dtype)
        for expr, rule in [(z + a * (x @ w), "add_to_gemm"), (z - (x @ w) * a, "sub_to_gemm")]:
            args = [*values, np.array(3, scale_dtype)]
            f = assert_same_values([x, w, z, a], expr, args, SPECIALIZE, rtol=1e-6)
            assert f.rewrites.counts() == {rule: 1} and ops_of(f)[-1] == "gemm"
            assert f(*args).dtype == np.float32


def test_a_scale_that_widens_the_result_keeps_the_product_out_of_gemm():
    x, w, z = matrices("float32")
    for scale_dtype in ("float64", "int32"):  # the result would be float64, z is float32
        a = sn.tensor("a", (), scale_dtype)
        assert fired([x, w, z, a], z + sn.cast(a, "float32") * (x @ w), SPECIALIZE)
        assert "gemm" not in ops_of(sn.function([x, w, z, a], z + (x @ w) * a, backend="py"))


def test_a_constant_integer_scale_is_cast_before_it_is_negated(rng):
    """z - alpha * (x @ w) is gemm(z, -alpha, ...) with -alpha taken in the float dtype: an
    int8 -128 negated in int8 stays -128, and a uint8 cannot be negated at all."""
    x, w, z = matrices("float32")
    values = [rng.normal(size=s).astype("float32") for s in ((4, 3), (3, 2), (4, 2))]
    for alpha in (np.int8(-128), np.uint8(3), np.int16(-32768)):
        expr = z - sn.constant(alpha) * (x @ w)
        f = assert_same_values([x, w, z], expr, values, SPECIALIZE, rtol=1e-6)
        assert f.rewrites.counts() == {"sub_to_gemm": 1} and ops_of(f)[-1] == "gemm"
        want = values[2] - alpha * (values[0] @ values[1])
        np.testing.assert_allclose(f(*values), want, rtol=1e-6)
