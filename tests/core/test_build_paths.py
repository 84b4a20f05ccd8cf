"""The fast paths of building a node give what the general rules give: the same types, the
user's line on every variable, the same warnings and errors."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.core.dims import DimMismatch, unify
from symnb.core.shapes import hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.shapes.broadcast import broadcast_shapes
from symnb.core.types import TensorType
from symnb.ops import linalg
from symnb.ops._dtypes import probe_dtype


def test_interned_type_is_shared_and_equal_to_a_checked_one():
    a = TensorType.of(np.dtype("float32"), ("batch", 10))
    assert a is TensorType.of(np.dtype("float32"), ("batch", 10))
    assert a == TensorType("f32", ("batch", 10)) and hash(a) == hash(
        TensorType("f32", ["batch", 10])
    )
    assert TensorType.of(np.dtype("float64"), ("batch", 10)) != a


def test_interned_type_still_checks_what_it_has_not_seen():
    with pytest.raises(TypeError, match="does not support dtype object"):
        TensorType.of(np.dtype(object), (3,))


def test_nodes_of_one_line_share_its_location_constants_included():
    x = sn.tensor("x", shape=("batch", 4))
    W = sn.shared(np.ones((4, 3)))
    b = sn.shared(np.ones(3))
    h = sn.tanh(x @ W + b) * 0.5  # the line every node below must name
    line = h.source.lineno
    assert W.source.lineno == line - 2 and b.source.lineno == line - 1
    node, seen = h.owner, []
    while node is not None:
        seen += [node.op.op_name(), *(v.source.lineno for v in node.inputs if v.owner is None)]
        assert node.outputs[0].source.lineno == line
        assert node.outputs[0].source.filename == __file__
        node = next((v.owner for v in node.inputs if v.owner is not None), None)
    assert seen[:2] == ["mul", line]  # the constant 0.5 takes the node's line
    assert seen[2:] == ["tanh", "add", line - 1, "matmul", x.source.lineno, line - 2]


def test_shared_with_its_own_shape_skips_no_check():
    v = sn.shared(np.zeros((2, 3), "float32"))
    assert v.type == TensorType("float32", (2, 3))
    with pytest.raises(sn.ShapeError):
        v.set_value(np.zeros((3, 2), "float32"))
    with pytest.raises(sn.ShapeError):
        sn.shared(np.zeros((2, 3)), shape=(3, None))


@pytest.mark.parametrize(
    "shapes, expected",
    [
        ([("batch", 10), (10,)], ("batch", 10)),  # a bias: the tail of the other shape
        ([(), ("n", 3)], ("n", 3)),
        ([(2, None, 3), (None, 3), (3,)], (2, None, 3)),
        ([(3, 1), (5,)], (3, 5)),  # not a tail: the general rule
        ([(4, 1), (1, 4)], (4, 4)),
    ],
)
def test_broadcast_fast_path_agrees_with_numpy_rules(shapes, expected):
    inputs = [sn.tensor(f"v{i}", shape=s) for i, s in enumerate(shapes)]
    assert broadcast_shapes(sn.add, inputs) == expected
    assert (inputs[0] + inputs[1]).type.shape == broadcast_shapes(sn.add, inputs[:2])


def test_a_bias_add_is_silent_and_an_outer_broadcast_still_warns():
    x, b = sn.tensor("x", shape=("n", 10)), sn.tensor("b", shape=(10,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (x + b).type.shape == ("n", 10)
    y, p = sn.tensor("y", shape=("n",)), sn.tensor("p", shape=("n", 1))
    with pytest.warns(sn.BroadcastOuterWarning):
        assert (p - y).type.shape == ("n", "n")


def test_a_clash_found_on_the_slow_path_names_the_user_line():
    x, y = sn.tensor("x", shape=("n", 3)), sn.tensor("y", shape=(4,))
    with pytest.raises(sn.ShapeError, match="axis -1 is 3 in one and 4") as info:
        x + y  # noqa: B018 - the error is the point
    assert info.value.location.lineno == info.tb.tb_lineno


def test_variable_tag_is_made_on_first_use_and_cloned_apart():
    v = sn.tensor("v", shape=(2,))
    assert "tag" not in vars(v)
    v.tag["note"] = 1
    twin = v.clone()
    twin.tag["note"] = 2
    assert v.tag == {"note": 1} and twin.tag == {"note": 2}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        v.nothing  # noqa: B018


def test_dtype_rule_cache_tells_ops_with_other_parameters_apart():
    x = sn.tensor("x", shape=(3, 4), dtype="int8")
    assert sn.sum(x, axis=0).dtype == np.sum(np.ones((3, 4), "int8"), axis=0).dtype
    assert sn.cast(x, "float32").dtype == np.float32 and sn.cast(x, "int16").dtype == np.int16
    assert (x * 2).dtype == np.int8 and (x * 2.5).dtype == np.float64


def test_user_line_is_right_at_each_offset_of_each_code_object():
    """The line is remembered per (code object, instruction): two lines of one function, the
    same line run again, and another function whose call sits at the same offset."""
    x = sn.tensor("x", shape=(3,))

    def first():
        return sn.exp(x), sn.tanh(x)

    def second():
        return sn.exp(x), sn.tanh(x)  # the same bytecode as first's: the same offsets

    for _ in range(2):
        a, b = first()
        c, d = second()
        assert a.source.lineno == first.__code__.co_firstlineno + 1
        assert b.source.lineno == a.source.lineno
        assert c.source.lineno == second.__code__.co_firstlineno + 1
        assert c.source.lineno == d.source.lineno
    e = sn.exp(x)
    f = sn.exp(x)
    assert f.source.lineno == e.source.lineno + 1
    assert e.source.filename == __file__


def test_code_objects_made_and_dropped_never_take_each_others_line():
    """Cells run once and dropped (their ids may be reused) keep their own lines."""
    x = sn.tensor("x", shape=(3,))
    for n in range(30):
        names = {"sn": sn, "x": x}
        exec(compile("\n" * n + "y = sn.exp(x)", "<cell>", "exec"), names)
        assert (names["y"].source.filename, names["y"].source.lineno) == ("<cell>", n + 1)


def test_the_same_line_shares_one_location_object():
    x = sn.tensor("x", shape=(3,))
    outs = [sn.exp(x) for _ in range(3)]
    assert outs[0].source is outs[1].source is outs[2].source


@pytest.mark.parametrize("how", ["call", "make_node"])
def test_calling_an_op_and_make_node_give_the_same_node(how):
    x = sn.tensor("x", shape=("n", 3))
    build = (lambda *a: sn.add(*a)) if how == "call" else (lambda *a: sn.add.make_node(*a).out)
    y = build(x, 2.0)  # a Python number is wrapped as a weak constant at the node's line
    here = y.source.lineno
    assert y.type == TensorType("float64", ("n", 3))
    assert y.source.filename == __file__ and here == build.__code__.co_firstlineno
    const = y.owner.inputs[1]
    assert const.weak and const.source is y.source
    with pytest.raises(sn.ShapeError, match="cannot broadcast") as info:
        build(x, sn.tensor("z", shape=(4,)))
    assert info.value.location.lineno == here


MATMUL_CASES = [
    ((4, 3), (3, 2)),  # two matrices: the fast path
    (("batch", 3), (3, "k")),
    ((3,), (3, 2)),  # vector operands: the general path
    ((4, 3), (3,)),
    ((2, 4, 3), (3, 5)),  # a batch
    ((5, 1, 4, 3), (2, 3, 5)),
    ((None, 3), (None, 2)),  # an unknown inner dim on one side
    (("n", "k"), ("k", 2)),
    (("n", "k"), (3, 2)),  # a name pinned to a size: a warning on both paths
    ((4, 3), (2, 5)),  # clashes
    ((4, "k"), ("j", 5)),
    ((4,), ()),  # 0-d
    ((), (4,)),
]


def _general_matmul(x, y):
    """The rule's general path, step by step as it was before the two-matrix fast path."""
    for v in (x, y):
        if v.type.ndim == 0:
            raise sn.ShapeError(f"matmul: {v.describe()} is 0-d; use * for scalars")
        if v.type.dtype.kind == "b":
            raise sn.DTypeError(f"matmul: {v.describe()} is boolean; cast it first")
    xs, ys = x.type.shape, y.type.shape
    k_x, k_y = xs[-1], ys[-2] if len(ys) > 1 else ys[0]
    try:
        unify(k_x, k_y)
    except DimMismatch:
        raise sn.ShapeError(linalg._inner_message(x, y) + hints.names_hint(k_x, k_y)) from None
    shape_warnings.pinned_hook(sn.matmul, x, -1, y, -2 if len(ys) > 1 else 0)
    batch = linalg._batch_shape(sn.matmul, x, y)
    shape = batch + xs[-2:-1] + (ys[-1:] if len(ys) > 1 else ())
    return TensorType(probe_dtype(sn.matmul, np.matmul, [x, y]), shape)


def _outcome(build):
    """(type or (error class, message without the user's line), [(warning class, message)])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = build()
        except (sn.ShapeError, sn.DTypeError) as exc:
            got = (type(exc), str(exc).split("\n  at ")[0])
    return got, [(w.category, str(w.message).split("\n  at ")[0]) for w in caught]


@pytest.mark.parametrize("xs, ys", MATMUL_CASES)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "int8"), ("bool", "f64")])
def test_matmul_fast_path_agrees_with_the_general_rule(xs, ys, dtypes):
    x = sn.tensor("x", shape=xs, dtype=dtypes[0])
    y = sn.tensor("y", shape=ys, dtype=dtypes[1])
    fast = _outcome(lambda: (x @ y).type)
    assert fast == _outcome(lambda: _general_matmul(x, y))
    if (xs, ys) == (("n", "k"), (3, 2)) and dtypes[0] != "bool":
        assert [c for c, _ in fast[1]] == [sn.PinnedDimWarning]  # (the case is not silent)
