"""The fast paths of building a node give what the general rules give: the same types, the
user's line on every variable, the same warnings and errors."""

import warnings

import numpy as np
import pytest

import symnb as sn
from symnb.core.types import TensorType
from symnb.ops.elemwise import broadcast_shapes


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
