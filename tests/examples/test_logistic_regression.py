"""The demo's model trains to > 90% test accuracy on scikit-learn's digits."""

import importlib.util
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).parents[2] / "examples" / "logistic_regression.py"


def load_example():
    spec = importlib.util.spec_from_file_location("logistic_regression", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_logistic_regression_trains_on_digits(capsys):
    example = load_example()
    accuracy = example.main(epochs=15)
    assert accuracy > 0.9
    losses = [float(line.split()[3]) for line in capsys.readouterr().out.splitlines()]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] / 3
    assert np.isfinite(losses).all()


def test_logistic_regression_trains_with_sn_grad():
    example = load_example()
    train, _ = example.build()
    backward = [n for n in train.graph_before.nodes if "grad_of" in n.tag]
    forward_ops = {n.tag["grad_of"].op.op_name() for n in backward if n.tag["grad_of"]}
    # the softmax written out is differentiated as the op, and the log of it as log_softmax
    # (symnb/grad/formulas.py: finite at any logits, at every order)
    assert {"matmul", "log_softmax", "max"} <= forward_ops and "softmax" not in forward_ops
    assert "softmax_of_formula" in train.rewrites.counts()
