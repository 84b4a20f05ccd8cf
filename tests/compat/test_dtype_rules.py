"""The Theano layer's dtype rules as properties over argument types: every constructor that
takes Python numbers gives floatX when *any* of them is a Python float, in *any* position,
and int64 (or the requested dtype) otherwise, under both floatX settings. A rule that looks
at some arguments only (``T.arange`` reading ``start`` and ``stop`` but not ``step``) fails
here."""

import itertools

import numpy as np
import pytest

import symnb as sn
import symnb.compat.theano as theano
import symnb.compat.theano.tensor as T

FLOATX = ["float32", "float64"]
#: a Python int and a Python float of each sign, the argument types Theano's rules look at
NUMBERS = {"int": (1, -2), "float": (1.0, -2.5)}


def _expected(kinds, floatx, default="int64"):
    return floatx if "float" in kinds else default


def _arange_args(kinds):
    """(start, stop, step) of the given kinds, with a range that is not empty."""
    start, stop, step = (NUMBERS[k][0] for k in kinds)
    return start - 1, stop + 5, step


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("kinds", list(itertools.product(NUMBERS, repeat=3)))
def test_arange_takes_floatx_when_any_argument_is_a_python_float(floatx, kinds):
    theano.config.floatX = floatx
    start, stop, step = _arange_args(kinds)
    out = T.arange(start, stop, step)
    assert out.type.dtype == _expected(kinds, floatx)
    want = np.arange(start, stop, step).astype(_expected(kinds, floatx))
    np.testing.assert_allclose(out.eval(), want)


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("kind", list(NUMBERS))
@pytest.mark.parametrize("position", ["start", "stop", "step"])
def test_arange_by_keyword_takes_floatx_from_any_argument(floatx, kind, position):
    """One argument of ``kind`` given by keyword, the others Python ints."""
    theano.config.floatX = floatx
    args = {"start": 0, "stop": 6, "step": 2}
    args[position] = NUMBERS[kind][0] * args[position] if position != "start" else 0.0
    kinds = ["float"] if isinstance(args[position], float) else []
    assert T.arange(**args).type.dtype == _expected(kinds, floatx)


@pytest.mark.parametrize("floatx", FLOATX)
def test_arange_with_a_dtype_ignores_floatx(floatx):
    theano.config.floatX = floatx
    assert T.arange(0, 3, 0.5, dtype="float64").type.dtype == "float64"
    assert T.arange(0, 3, 1, dtype="floatX").type.dtype == floatx


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("kind", list(NUMBERS))
def test_constants_alloc_fill_take_floatx_for_python_floats(floatx, kind):
    theano.config.floatX = floatx
    value = NUMBERS[kind][1]
    want = _expected([kind], floatx)
    model = T.matrix("m")
    built = {
        "constant": T.constant(value),
        "as_tensor_variable": T.as_tensor_variable(value),
        "alloc": T.alloc(value, 2, 3),
        "fill": T.fill(model, value),
    }
    assert {name: v.type.dtype for name, v in built.items()} == dict.fromkeys(built, want)


def test_a_constant_with_a_dtype_is_cast_as_theano_cast_it():
    """``T.constant(x, dtype=...)`` was Theano's ``theano._asarray(x, dtype)``: NumPy's cast,
    whatever it does to the values (``sn.constant`` refuses such a dtype instead)."""
    assert T.constant(0.5, dtype="int32").value == 0
    np.testing.assert_array_equal(T.constant(np.array([-1, 300]), dtype="uint8").value, [255, 44])
    assert T.constant(2.5, dtype="float32").type.dtype == "float32"
    with pytest.raises(sn.DTypeError, match="int64"):
        sn.constant(0.5, dtype="int64")


@pytest.mark.parametrize("floatx", FLOATX)
def test_zeros_ones_default_to_floatx_and_keep_a_given_dtype(floatx):
    theano.config.floatX = floatx
    for make in (T.zeros, T.ones):
        assert make((2,)).type.dtype == floatx
        assert make((2,), dtype="int8").type.dtype == "int8"
        assert make((2,), dtype="floatX").type.dtype == floatx


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("dtypes", list(itertools.product(["int8", "int64", "float32"], repeat=2)))
def test_true_div_of_integers_gives_floatx_and_of_floats_numpy_dtype(floatx, dtypes):
    theano.config.floatX = floatx
    a, b = T.TensorType(dtypes[0], ())("a"), T.TensorType(dtypes[1], ())("b")
    integers = all(np.dtype(d).kind in "iu" for d in dtypes)
    want = floatx if integers else np.result_type(*dtypes, np.float16).name
    assert T.true_div(a, b).type.dtype == want


#: the layer's float math and NumPy's function of a float array, for integer arguments
FLOAT_MATH = {
    "exp": (T.exp, np.exp),
    "log": (T.log, np.log),
    "sqrt": (T.sqrt, np.sqrt),
    "tanh": (T.tanh, np.tanh),
    "cos": (T.cos, np.cos),
    "arctan": (T.arctan, np.arctan),
    "log1p": (T.log1p, np.log1p),
    "expm1": (T.expm1, np.expm1),
    "exp2": (T.exp2, np.exp2),
    "sigmoid": (T.nnet.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "softplus": (T.nnet.softplus, lambda a: np.log1p(np.exp(a))),
    "hard_sigmoid": (T.nnet.hard_sigmoid, lambda a: np.clip(0.2 * a + 0.5, 0, 1)),
    "inv": (T.inv, np.reciprocal),  # NumPy's integer reciprocal would make 1/2 0
    "softsign": (T.nnet.softsign, lambda a: a / (1 + np.abs(a))),
    "arctan2": (lambda a: T.arctan2(a, a + 2), lambda a: np.arctan2(a, a + 2)),
}
#: Theano's upgrade_to_float (NumPy gives float16 for the 8-bit ones)
UPGRADED = {"int8": "float32", "uint8": "float32", "int16": "float32"}
UPGRADED.update(int32="float64", int64="float64")


@pytest.mark.parametrize("dtype", list(UPGRADED))
def test_float_math_of_integers_follows_theanos_upgrade_to_float(dtype):
    """``T.exp(T.bvector())`` is float32 (NumPy's float16 makes exp(10) 2.203e+04); the
    values are NumPy's computed in that float. symnb's own ``sn.exp`` keeps NumPy's rule."""
    x = T.TensorType(dtype, (False,))("x")
    outputs = {name: theano_fn(x) for name, (theano_fn, _) in FLOAT_MATH.items()}
    assert {name: out.dtype for name, out in outputs.items()} == dict.fromkeys(
        FLOAT_MATH, UPGRADED[dtype]
    )
    values = np.array([1, 2, 5, 10, 50], dtype)
    got = theano.function([x], outputs)(values)
    as_float = values.astype(UPGRADED[dtype])
    rtol = 1e-6 if UPGRADED[dtype] == "float32" else 1e-13
    for name, (_, numpy_fn) in FLOAT_MATH.items():
        assert got[name].dtype == UPGRADED[dtype], name
        np.testing.assert_allclose(got[name], numpy_fn(as_float), rtol=rtol, err_msg=name)
    assert sn.exp(x).type.dtype == np.exp(values[:0]).dtype  # float16 for 8 bits: NumPy's rule
    assert T.exp(T.dvector()).dtype == "float64" and T.exp(T.fvector()).dtype == "float32"


@pytest.mark.parametrize("call", ["softmax", "logsoftmax"])
def test_softmax_of_integers_is_refused_as_in_theano(call):
    """Theano's Softmax takes floats only; NumPy's rule would compute int8 in float16."""
    with pytest.raises(
        sn.DTypeError, match=rf"T\.nnet\.{call}: x must be a tensor of floats.*'bv' \(int8"
    ):
        getattr(T.nnet, call)(T.bvector("bv"))
    assert getattr(T.nnet, call)(T.fvector()).dtype == "float32"


#: (cast_policy, floatX, arguments as dtypes or Python ints, Theano's dtype of T.arange of
#: them). 'custom' (Theano's default): the upcast of the three (``start`` 0 and ``step`` 1 are
#: int8 to Theano), NumPy's promotion, integers made int64 (Theano 1.0's TestARange.test_upcast:
#: ``arange(iscalar(), fscalar())`` is float64 under either floatX). 'numpy+floatX': NumPy's
#: arange dtype (Python ints are int64), float32 for float64 with floatX float32 and no float64
ARANGE_DTYPES = [
    ("custom", "float64", ["float32"], "float32"),
    ("custom", "float64", ["int32"], "int64"),
    ("custom", "float64", ["int8"], "int64"),
    ("custom", "float64", ["uint8"], "int64"),  # with start 0 and step 1, int8: int16
    ("custom", "float64", ["uint8", "uint16", "uint8"], "uint64"),
    ("custom", "float64", ["float32", "float64"], "float64"),
    ("custom", "float64", ["int32", "float32"], "float64"),
    ("custom", "float64", ["int16", "float32"], "float32"),
    ("custom", "float64", ["float32", 100], "float32"),
    ("custom", "float64", ["float32", 100000], "float64"),
    ("custom", "float64", ["int64", "uint64"], "float64"),
    ("custom", "float32", ["float32"], "float32"),
    ("custom", "float32", ["int32", "float32"], "float64"),
    ("custom", "float32", ["int64", "float32"], "float64"),
    ("custom", "float32", ["int16", "float32"], "float32"),
    ("custom", "float32", ["float32", 100000], "float64"),
    ("custom", "float32", ["float32", "float64"], "float64"),
    ("custom", "float32", ["int32", "int64", "int8"], "int64"),
    ("numpy+floatX", "float32", ["float32"], "float32"),
    ("numpy+floatX", "float32", ["int32", "float32"], "float32"),
    ("numpy+floatX", "float32", ["int64", "float32"], "float32"),
    ("numpy+floatX", "float32", ["float32", 100000], "float32"),
    ("numpy+floatX", "float32", ["float32", "float64"], "float64"),
    ("numpy+floatX", "float32", ["int8"], "int64"),
    ("numpy+floatX", "float64", ["float32"], "float64"),  # start 0 and step 1 are int64
    ("numpy+floatX", "float64", ["int32", "float32"], "float64"),
    ("numpy+floatX", "float64", ["int8"], "int64"),
]


@pytest.mark.parametrize("policy, floatx, args, want", ARANGE_DTYPES)
def test_arange_of_symbolic_bounds_takes_theanos_upcast(policy, floatx, args, want):
    theano.config.floatX = floatx
    with theano.change_flags(cast_policy=policy):
        bounds = [
            a if isinstance(a, int) else T.scalar(f"a{i}", dtype=a) for i, a in enumerate(args)
        ]
        out = T.arange(*bounds)
    assert out.type.dtype == want
    values = {
        v: np.asarray(3 + i, v.type.dtype) for i, v in enumerate(bounds) if not isinstance(v, int)
    }
    plain = [values[b] if b in values else b for b in bounds]
    got = theano.function(list(values), out)(*values.values())
    np.testing.assert_array_equal(got, np.arange(*plain).astype(want))
    assert got.dtype == want


def test_arange_under_custom_policy_is_theanos_test_upcast():
    """Theano 1.0's TestARange.test_upcast under its default cast_policy 'custom', with
    floatX float32: int32 with float32 is float64 (NumPy's promotion)."""
    theano.config.floatX = "float32"
    assert theano.config.cast_policy == "custom"
    assert T.arange(T.iscalar()).dtype == "int64"
    assert T.arange(T.fscalar()).dtype == "float32"
    assert T.arange(T.dscalar()).dtype == "float64"
    assert T.arange(T.iscalar(), T.fscalar()).dtype == "float64"
    assert T.arange(T.iscalar(), T.dscalar()).dtype == "float64"
    assert T.arange(T.fscalar(), T.dscalar()).dtype == "float64"
    assert T.arange(T.iscalar(), T.fscalar(), T.dscalar()).dtype == "float64"


@pytest.mark.parametrize("floatx", FLOATX)
def test_scalar_upcast_follows_cast_policy(floatx):
    """Theano 1.0's ``upcast``: NumPy's promotion under the default cast_policy 'custom'
    (int32 or int64 with float32 is float64, as ``ivector * fscalar``); under
    'numpy+floatX' a float64 result stays float32 where floatX is float32, unless a float64
    is given."""
    theano.config.floatX = floatx
    assert theano.config.cast_policy == "custom"
    assert theano.scalar.upcast("int32", "float32") == "float64"
    assert theano.scalar.upcast("float32", "int64", "int8") == "float64"
    assert theano.scalar.upcast("int16", "float32") == "float32"
    assert theano.scalar.upcast("float32", "float64") == "float64"
    assert theano.scalar.upcast("int8", "uint8") == "int16"
    assert (T.ivector("x") * T.fscalar("s")).dtype == theano.scalar.upcast("int32", "float32")
    theano.config.cast_policy = "numpy+floatX"
    try:
        assert theano.scalar.upcast("int32", "float32") == floatx
        assert theano.scalar.upcast("float32", "int64", "int8") == floatx
        assert theano.scalar.upcast("float32", "float64") == "float64"
        assert theano.scalar.upcast("int32", "float64") == "float64"
        assert theano.scalar.upcast("int8", "uint8") == "int16"
    finally:
        theano.config.cast_policy = "custom"


def test_scalar_upcast_keeps_float16_under_numpy_floatx_float16():
    """Theano's keep_float16: with floatX float16 under 'numpy+floatX' a float32 or float64
    result is float16 unless a float32 or float64 is given (then NumPy's, since keep_float32
    needs floatX float32)."""
    theano.config.floatX = "float16"
    with theano.change_flags(cast_policy="numpy+floatX"):
        assert theano.scalar.upcast("int16", "float16") == "float16"
        assert theano.scalar.upcast("int32", "float16") == "float16"
        assert theano.scalar.upcast("int8", "float32") == "float32"  # a float32 given
        assert theano.scalar.upcast("int32", "float32") == "float64"  # nor float32 kept
        assert theano.scalar.upcast("int32", "float64") == "float64"
    assert theano.scalar.upcast("int32", "float16") == "float64"


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("target", [1, 0.0, 0.9])
def test_binary_crossentropy_of_a_literal_target_keeps_the_outputs_dtype(floatx, target):
    """Theano's ``binary_crossentropy`` is the plain formula, so a literal target (label
    smoothing's 0.9, test_nnet.py's ``1``) is autocast: an fvector gives a float32 loss
    (it was float64: ``1 - target`` became a float64 node)."""
    theano.config.floatX = floatx
    p = T.fvector("p")
    loss = T.nnet.binary_crossentropy(p, target)
    assert loss.type.dtype == "float32"
    pv = np.array([0.3, 0.8], "float32")
    got = theano.function([p], loss.mean())(pv)
    assert got.dtype == np.float32
    want = -(target * np.log(pv) + (1 - target) * np.log(1 - pv)).mean()
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("floatx", FLOATX)
def test_python_floats_on_their_own_take_floatx_in_every_function(floatx):
    """Theano's ``as_tensor_variable`` made a Python float a floatX constant wherever it
    went in alone: ``T.switch(c, 1., 0.)``, ``ifelse(c, 1., 0.)``, ``T.sqrt(2.)``, ``T.exp(1.)``,
    ``T.log(2 * np.pi)``, ``T.maximum(0., 1.)``, ``T.sqr(3.)`` were float64 here under floatX
    float32, which made ``x32 * T.log(2 * np.pi)`` float64 and refused a float32 shared
    variable's update masked by ``T.switch``. Ints stay weak beside such a float (Theano's int8
    constant upcast with floatX), and a tensor's dtype decides beside a tensor."""
    from symnb.compat.theano.ifelse import ifelse

    theano.config.floatX = floatx
    x = T.matrix("x")
    c = x > 0
    built = {
        "switch": T.switch(c, 1.0, 0.0),
        "where": T.where(c, 1.0, 0.0),
        "switch of an int and a float": T.switch(c, 1, 0.0),
        "ifelse": ifelse(T.gt(x.sum(), 0), 1.0, 0.0),
        "ifelse of lists": ifelse(T.iscalar("k"), [1.0, 2.0], [0.0, 3.0])[1],
        "sqrt": T.sqrt(2.0),
        "exp": T.exp(1.0),
        "x * log(2 pi)": x * T.log(2 * np.pi),
        "maximum": T.maximum(0.0, 1.0),
        "sqr": T.sqr(3.0),
        "add": T.add(1.0, 2.0),
        "true_div": T.true_div(1.0, 2.0),
        "round": T.round(2.5),
        "theano.scalar.constant": theano.scalar.constant(2.5),
    }
    assert {name: v.dtype for name, v in built.items()} == dict.fromkeys(built, floatx)
    assert T.switch(c, 1, 0).dtype == "int64"  # ints alone: the layer's int64, as T.constant(1)
    assert T.switch(c, T.dmatrix("d"), 0.0).dtype == "float64"  # a tensor's dtype decides
    m = np.array([[1.0, -1.0]], dtype=floatx)
    got = theano.function([x], [built["switch"], built["x * log(2 pi)"]])(m)
    np.testing.assert_array_equal(got[0], [[1.0, 0.0]])
    np.testing.assert_allclose(got[1], m * np.log(2 * np.pi), rtol=1e-6)
    assert theano.function([], built["sqrt"])() == pytest.approx(np.sqrt(2.0))


def test_a_float32_update_masked_by_a_switch_of_python_floats_compiles():
    """``W * T.switch(W > 0.5, 1., 0.)`` for a float32 W under floatX float32: Theano's mask is
    float32, so the update keeps W's dtype (it was refused here as float64)."""
    theano.config.floatX = "float32"
    W = theano.shared(np.array([0.25, 1.0, 2.0], dtype="float32"), name="W")
    step = theano.function([], [], updates=[(W, W * T.switch(W > 0.5, 1.0, 0.0))])
    step()
    np.testing.assert_array_equal(W.get_value(), np.array([0.0, 1.0, 2.0], dtype="float32"))


@pytest.mark.parametrize("floatx", FLOATX)
@pytest.mark.parametrize("as_dict", [False, True])
def test_scan_initial_python_float_takes_floatx(floatx, as_dict):
    """``theano.scan(..., outputs_info=0.)`` (or ``{'initial': 0.}``): Theano made the
    initial value a floatX constant (``as_tensor_variable``), so a float32 loop stays float32
    and can update a float32 shared variable; it was a float64 output here."""
    theano.config.floatX = floatx
    xs = T.matrix("xs")
    initial = {"initial": 0.0, "taps": [-1]} if as_dict else 0.0
    s, _ = theano.scan(lambda x_t, acc: acc + x_t.sum(), sequences=xs, outputs_info=initial)
    p, _ = theano.scan(lambda acc: acc * 2.0, outputs_info=1.0, n_steps=3)
    assert (s.dtype, p.dtype) == (floatx, floatx)
    total = theano.shared(np.asarray(0, dtype=floatx), name="total")
    f = theano.function([xs], [s, p], updates=[(total, s[-1])])
    got_s, got_p = f(np.ones((3, 2), dtype=floatx))
    np.testing.assert_array_equal(got_s, [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(got_p, [2.0, 4.0, 8.0])
    assert total.get_value() == 6.0 and got_s.dtype == floatx
