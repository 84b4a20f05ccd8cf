"""``theano.tensor.nnet.bn.batch_normalization``: the formula, in symnb's elementwise ops
(the rewrites fuse it into one kernel)."""

from __future__ import annotations

from symnb.core.op import _at_user_line
from symnb.core.variable import as_variable
from symnb.errors import ArgumentError, ShapeError
from symnb.ops import elemwise, reduce
from symnb.ops.elemwise import cast
from symnb.ops.layout import dimshuffle


def batch_normalization(inputs, gamma, beta, mean, std, mode="low_mem"):
    """``(inputs - mean) * (gamma / std) + beta``; ``mode`` is accepted (one formula)."""
    inputs, gamma, beta = as_variable(inputs), as_variable(gamma), as_variable(beta)
    return (inputs - mean) * (gamma / std) + beta


def _axes(axes, ndim: int) -> tuple[int, ...]:
    if axes == "per-activation":
        return (0,)
    if axes == "spatial":
        return (0, *range(2, ndim))
    return tuple(int(a) for a in axes)


class _Layout:
    """Theano 1.0's rule for the parameters' layout: either the inputs' ndim (1 on the
    normalised axes), or one dim per axis not normalised, ``(C,)`` for "spatial" over
    ``(N, C, H, W)``. Those are given 1s on the normalised axes before use, and what is
    returned in their layout loses them again (else ``(C,)`` would meet the last axis)."""

    def __init__(self, where: str, ndim: int, axes: tuple[int, ...], params: dict):
        self.ndim = ndim
        self.kept = [a for a in range(ndim) if a not in axes]
        self.params_ndim = _params_ndim(where, ndim, self.kept, params)

    def widened(self, var):
        """A parameter with 1s on the normalised axes."""
        if self.params_ndim == self.ndim:
            return var
        pattern = ["x"] * self.ndim
        for i, axis in enumerate(self.kept):
            pattern[axis] = i
        return dimshuffle(var, *pattern)

    def narrowed(self, var):
        """A statistic of the inputs' ndim in the parameters' layout."""
        return var if self.params_ndim == self.ndim else dimshuffle(var, *self.kept)


def _params_ndim(where: str, ndim: int, kept: list, params: dict) -> int:
    """The parameters' common ndim, a ShapeError naming them when it is neither layout."""
    given = {name: as_variable(v) for name, v in params.items() if v is not None}
    first = next(iter(given.values()))
    want = ndim if first.type.ndim == ndim else len(kept)
    wrong = [f"{name} {v.describe()}" for name, v in given.items() if v.type.ndim != want]
    if wrong:
        raise _at_user_line(
            ShapeError(
                f"{where}: {', '.join(wrong)}: each parameter must have the inputs' {ndim} dims "
                f"(1 on the normalised axes) or {len(kept)} (one per axis not normalised, "
                f"{tuple(kept)}), all the same; {next(iter(given))} has {first.type.ndim}"
            )
        )
    return want


def batch_normalization_train(
    inputs,
    gamma,
    beta,
    axes="per-activation",
    epsilon=1e-4,
    running_average_factor=0.1,
    running_mean=None,
    running_var=None,
):
    """Theano's training-time batch norm: ``out, mean, invstd`` over ``axes``
    ("per-activation": axis 0, "spatial": 0 and 2..., or a tuple); with ``running_mean`` and
    ``running_var`` also their new values (the variance's unbiased, as Theano's). The
    statistics come back in the parameters' layout (see ``_Layout``)."""
    inputs = as_variable(inputs)
    axes = _axes(axes, inputs.type.ndim)
    if (running_mean is None) != (running_var is None):
        raise _at_user_line(
            ArgumentError("batch_normalization_train: give both running_mean and running_var")
        )
    params = {
        "gamma": gamma,
        "beta": beta,
        "running_mean": running_mean,
        "running_var": running_var,
    }
    layout = _Layout("batch_normalization_train", inputs.type.ndim, axes, params)
    gamma, beta = layout.widened(as_variable(gamma)), layout.widened(as_variable(beta))
    mean = reduce.mean(inputs, axis=axes, keepdims=True)
    var = reduce.var(inputs, axis=axes, keepdims=True)
    invstd = 1.0 / elemwise.sqrt(var + epsilon)
    out = (inputs - mean) * (gamma * invstd) + beta
    if running_mean is None:
        return out, layout.narrowed(mean), layout.narrowed(invstd)
    count = 1
    for axis in axes:
        count = count * inputs.shape[axis]
    count = cast(count, var.dtype)
    factor = running_average_factor
    running_mean = layout.widened(as_variable(running_mean))
    running_var = layout.widened(as_variable(running_var))
    new_mean = running_mean * (1.0 - factor) + mean * factor
    new_var = running_var * (1.0 - factor) + (count / (count - 1)) * var * factor
    stats = (mean, invstd, new_mean, new_var)
    return (out, *(layout.narrowed(s) for s in stats))


def batch_normalization_test(inputs, gamma, beta, mean, var, axes="per-activation", epsilon=1e-4):
    """Theano's inference-time batch norm: ``(inputs - mean) * gamma / sqrt(var + eps) +
    beta``, the parameters in either of Theano's layouts (see ``_Layout``)."""
    inputs = as_variable(inputs)
    axes = _axes(axes, inputs.type.ndim)
    params = {"gamma": gamma, "beta": beta, "mean": mean, "var": var}
    layout = _Layout("batch_normalization_test", inputs.type.ndim, axes, params)
    gamma, beta, mean, var = (layout.widened(as_variable(v)) for v in params.values())
    return (inputs - mean) * (gamma / elemwise.sqrt(var + epsilon)) + beta
