"""docs/ops.md is generated from the op classes, and must be regenerated when ops change."""

import numpy as np
import pytest

import symnb as sn
from symnb import catalogue
from symnb.core.op import OP_REGISTRY, Op


def test_docs_ops_md_is_current():
    """Fails when an op was added or changed without ``make docs``."""
    rendered = catalogue.render()
    on_disk = catalogue.DOC_PATH.read_text()
    assert rendered == on_disk, (
        "docs/ops.md is stale: regenerate it with `make docs` "
        "(python -m symnb.catalogue) and commit it"
    )


def test_every_op_of_the_op_packages_is_listed():
    text = catalogue.render()
    listed = {cls.op_name() for cls in catalogue.op_classes()}
    assert {"conv2d", "subtensor", "inc_subtensor", "softmax", "positions"} <= listed
    assert "composite" in listed and not {"elemwise", "reduce"} & listed
    for name in listed:
        assert f"| `{name}` |" in text


def test_rows_state_signature_dtype_rule_and_gradient():
    rows = {cls.op_name(): catalogue.op_row(cls) for cls in catalogue.op_classes()}
    conv = rows["conv2d"]
    assert "`conv2d(x, filters, stride=1, padding='valid', dilation=1, groups=1)`" in conv
    assert "promotion of input and filters" in conv and "| yes |" in conv
    assert "| yes |" in rows["max_pool2d_grad"] and "| no |" in rows["positions"]
    spelled = "`set_subtensor(x, index, v=None)`<br>`inc_subtensor(x, index, v=None)`"
    assert spelled in rows["inc_subtensor"]
    assert "i64→f64" in rows["exp"] and "bool→refused" in rows["neg"]
    assert "| internal |" in rows["trace_adjoint"]


def test_ops_defined_outside_the_op_packages_are_left_out():
    class _TestOnly(Op):
        pass

    class LocalTestOp(_TestOnly):
        """Registered by this test module only."""

    try:
        assert OP_REGISTRY["local_test_op"] is LocalTestOp
        assert LocalTestOp not in catalogue.op_classes()
    finally:
        del OP_REGISTRY["local_test_op"]


def test_composite_functions_are_listed_with_their_signature():
    text = catalogue.render()
    assert "| `einsum(subscripts, *operands, optimize=True)` |" in text
    assert "| `norm(x, ord=None, axis=None, keepdims=False)` |" in text
    assert "| `take(x, indices, axis=None, mode='raise')` |" in text


def test_this_engineers_ops_state_their_dtype_rule():
    families = ("index", "linalg", "nnet", "conv")
    mine = [c for c in catalogue.op_classes() if catalogue.family(c) in families]
    assert len(mine) > 20
    for cls in mine:
        assert "not stated" not in catalogue.dtype_rule(cls), cls.op_name()
    assert sn.softmax(sn.vector("v", dtype="int8")).dtype == np.float16  # as the rule says


def test_the_command_line_takes_help_and_a_path_not_an_option_as_the_file(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        catalogue.main(["--help"])
    assert done.value.code == 0 and "python -m symnb.catalogue" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # no file named "--help"
    with pytest.raises(SystemExit) as done:
        catalogue.main(["--bogus"])
    assert done.value.code == 2 and list(tmp_path.iterdir()) == []
    assert catalogue.main([str(tmp_path / "ops.md")]) == 0
    assert (tmp_path / "ops.md").read_text() == catalogue.render()
