"""Linear algebra with NumPy's semantics: ``matmul``/``dot``, ``tensordot``, ``outer``, the
``np.linalg`` ops on stacks of square matrices (``inv``, ``det``, ``slogdet``, ``cholesky``,
``solve``), ``trace`` and ``norm`` (``einsum`` is in ops/einsum.py).
Shape errors name both operands and the dims that clash."""

from __future__ import annotations

import numbers
import operator
from collections import namedtuple

import numpy as np

from symnb.core.dims import DimMismatch, format_dim, format_shape, is_int, unify
from symnb.core.op import Op, _at_user_line, located_call
from symnb.core.shapes import hints as shape_hints
from symnb.core.shapes import warnings as shape_warnings
from symnb.core.shapes.broadcast import broadcast_shapes
from symnb.core.types import TensorType
from symnb.core.variable import Variable, as_variable
from symnb.errors import ArgumentError, DTypeError, ShapeError
from symnb.ops._axes import CountedAxes, diagonal_offset, normalize_axis, one_axis
from symnb.ops._cofactor import cofactor_derivative
from symnb.ops._dtypes import probe_dtype
from symnb.ops._square import _SquareOp, real_dtype
from symnb.ops._square import swap_last as _swap_last
from symnb.ops.elemwise import abs as abs_
from symnb.ops.elemwise import (
    as_array,
    cast,
    fit_gradient,
    input_gradient,
    less,
    mul,
    not_equal,
    sqrt,
    where,
)
from symnb.ops.layout import pad, tril
from symnb.ops.reduce import max as max_
from symnb.ops.reduce import min as min_
from symnb.ops.reduce import sum as sum_
from symnb.ops.shape import DimShuffle, expand_dims, reshape, squeeze
from symnb.ops.svd import SingularValues, Svd, svd  # noqa: F401 - svd is re-exported


class Matmul(Op):
    """``x @ y``: matrix product over the last two axes, broadcasting the batch axes."""

    dtype_rule = "NumPy's promotion of x and y (as np.matmul; bool is refused)"

    def infer_types(self, x, y):
        xt, yt = x.type, y.type
        if not xt.ndim or not yt.ndim or xt.dtype.kind == "b" or yt.dtype.kind == "b":
            _refuse_operands(x, y)
        xs, ys = xt.shape, yt.shape
        k_x, k_y = xs[-1], ys[-2] if len(ys) > 1 else ys[0]
        if k_x != k_y:  # equal inner dims unify and pin nothing: the common case skips both
            try:
                unify(k_x, k_y)
            except DimMismatch:
                raise ShapeError(_inner_message(x, y) + shape_hints.names_hint(k_x, k_y)) from None
            shape_warnings.pinned_hook(self, x, -1, y, -2 if len(ys) > 1 else 0)
        if len(xs) == 2 and len(ys) == 2:  # two matrices, the common case: no batch axes
            shape = (xs[0], ys[1])
        else:
            shape = _batch_shape(self, x, y) + xs[-2:-1] + (ys[-1:] if len(ys) > 1 else ())
        return [TensorType.of(probe_dtype(self, np.matmul, [x, y]), shape)]

    def axis_sources(self, node):
        """Rows come from x, columns from y, the broadcast batch axes from both."""
        x, y = node.inputs
        n = node.outputs[0].type.ndim
        tail = [[(0, x.type.ndim - 2)]] if x.type.ndim > 1 else []
        tail += [[(1, y.type.ndim - 1)]] if y.type.ndim > 1 else []
        lead = n - len(tail)
        out = []
        for k in range(lead):
            pairs = [(i, k - lead + v.type.ndim - 2) for i, v in enumerate((x, y))]
            out.append([(i, a) for i, a in pairs if a >= 0])
        return out + tail

    def perform(self, x, y):
        return np.matmul(x, y)

    def result_shape(self, xs, ys):
        """The result's shape for operands of shapes xs and ys (``ResultShape``), or
        NumPy's error where their inner dims differ or their batch axes do not broadcast."""
        k_x, k_y = xs[-1], ys[-2] if len(ys) > 1 else ys[0]
        if k_x != k_y:
            raise ValueError(
                f"matmul: inner dims differ: {format_shape(xs)} @ {format_shape(ys)}: {k_x} "
                f"(last axis of the left) != {k_y} "
                f"({'second-to-last' if len(ys) > 1 else 'only'} axis of the right)"
            )
        batch = np.broadcast_shapes(xs[:-2], ys[:-2])
        return batch + xs[-2:-1] + (ys[-1:] if len(ys) > 1 else ())

    def grad(self, inputs, outputs, output_grads):
        (x, y), (g,) = inputs, output_grads
        x2 = expand_dims(x, 0) if x.type.ndim == 1 else x
        y2 = expand_dims(y, -1) if y.type.ndim == 1 else y
        g2 = expand_dims(g, -1) if y.type.ndim == 1 else g  # (for two vectors, g is 0-d)
        g2 = expand_dims(g2, -2) if x.type.ndim == 1 else g2
        gx, gy = g2 @ _swap_last(y2), _swap_last(x2) @ g2
        gx = squeeze(gx, -2) if x.type.ndim == 1 else gx
        gy = squeeze(gy, -1) if y.type.ndim == 1 else gy
        broadcast = x.type.ndim > 2 or y.type.ndim > 2  # batch axes: sum them back; else gx
        # and gy are shaped as x and y (so the gradient reads neither)
        return [input_gradient(gx, x, broadcast), input_gradient(gy, y, broadcast)]


def _refuse_operands(x, y) -> None:
    """The error for a 0-d or boolean operand, the left one's first."""
    for v in (x, y):
        if v.type.ndim == 0:
            raise ShapeError(f"matmul: {v.describe()} is 0-d; use * for scalars")
        if v.type.dtype.kind == "b":
            raise DTypeError(f"matmul: {v.describe()} is boolean; cast it first")


def _batch_shape(op, x, y) -> tuple:
    """The broadcast batch axes (all but the last two) of x and y; none for matrices and
    vectors, the common case, which needs no broadcast at all."""
    if x.type.ndim <= 2 and y.type.ndim <= 2:
        return ()
    return broadcast_shapes(op, [x, y], core=2)


def _inner_message(x, y) -> str:
    kx = x.type.shape[-1]
    ky = y.type.shape[-2] if y.type.ndim > 1 else y.type.shape[0]
    message = (
        f"matmul: inner dims differ: {x.describe()} @ {y.describe()}: "
        f"{format_dim(kx)} (last axis of the left) != {format_dim(ky)} "
        f"({'second-to-last' if y.type.ndim > 1 else 'only'} axis of the right)"
    )
    if y.type.ndim == 2 and _fits(kx, y.type.shape[-1]):
        message += _transpose_hint(y, "the right operand")
    elif x.type.ndim == 2 and _fits(x.type.shape[-2], ky):
        message += _transpose_hint(x, "the left operand")
    return message


def _transpose_hint(var, fallback: str) -> str:
    """``did you mean W.T?``, or ``did you mean W?`` when the operand is already ``W.T``."""
    label = var.message_name() or fallback
    fix = label[:-2] if label.endswith(".T") else f"{label}.T"
    return f"\n  hint: did you mean {fix}?"


def _fits(a, b) -> bool:
    """Equal for sure: a hint must not rest on pinning a name to a size."""
    return a is not None and a == b


matmul = Matmul()


def dot(x, y):
    """NumPy's ``dot`` for vectors and matrices (a matrix product); a 0-d operand multiplies
    the other elementwise, as ``x * y`` (IEEE: ``inf * 0`` and ``nan * 0`` are NaN, where
    NumPy's BLAS scaling by a 0-d 0 writes 0). A Python number is an array, as NumPy makes
    it: ``dot(x8, 2)`` is int64 and ``dot(2.0, x32)`` float64, unlike ``x8 * 2``."""
    x, y = as_array(x), as_array(y)
    if x.type.ndim == 0 or y.type.ndim == 0:
        return mul(x, y)
    if x.type.ndim > 2 or y.type.ndim > 2:
        raise ShapeError(
            f"dot of {x.describe()} and {y.describe()}: use matmul (batched) or tensordot"
        )
    return matmul(x, y)


# -- contractions --------------------------------------------------------------------------
class Tensordot(Op):
    """``np.tensordot``: sum over ``axes_a`` of a paired with ``axes_b`` of b; the result
    has a's free axes, then b's."""

    __props__ = ("axes_a", "axes_b")
    dtype_rule = "NumPy's promotion of a and b (as np.tensordot; bool is refused)"

    def __init__(self, axes_a, axes_b):
        self.axes_a, self.axes_b = tuple(axes_a), tuple(axes_b)

    def infer_types(self, a, b):
        for v in (a, b):
            if v.type.dtype.kind == "b":
                raise DTypeError(f"tensordot: {v.describe()} is boolean; cast it first")
        _summed_once(a, self.axes_a)
        _summed_once(b, self.axes_b)
        for i, j in zip(self.axes_a, self.axes_b):
            _paired(self, a, i, b, j)
        shape = _free(a.type.shape, self.axes_a) + _free(b.type.shape, self.axes_b)
        return [TensorType(probe_dtype(self, self.perform, [a, b]), shape)]

    def perform(self, a, b):
        return np.asarray(np.tensordot(a, b, axes=(self.axes_a, self.axes_b)))

    def result_shape(self, sa, sb):
        """The result's shape for operands of shapes sa and sb (``ResultShape``): a's free
        dims, then b's; NumPy's error where summed axes differ in length."""
        for i, j in zip(self.axes_a, self.axes_b):
            if sa[i] != sb[j]:
                raise ValueError(
                    f"{self}: axis {i} of an array of shape {format_shape(sa)} has length "
                    f"{sa[i]} but axis {j} of {format_shape(sb)}, summed with it, {sb[j]}"
                )
        return _free(sa, self.axes_a) + _free(sb, self.axes_b)

    def grad(self, inputs, outputs, output_grads):
        (a, b), (g,) = inputs, output_grads
        na = a.type.ndim - len(self.axes_a)
        free_b = _free_axes(b.type.ndim, self.axes_b)
        ga = Tensordot(tuple(range(na, g.type.ndim)), free_b)(g, b)
        ga = transpose(ga, _grad_order(a.type.ndim, self.axes_a, self.axes_b, True))
        gb = Tensordot(_free_axes(a.type.ndim, self.axes_a), tuple(range(na)))(a, g)
        gb = transpose(gb, _grad_order(b.type.ndim, self.axes_b, self.axes_a, False))
        return [input_gradient(ga, a), input_gradient(gb, b)]


def _summed_once(v, axes) -> None:
    """A ShapeError for an axis of v listed twice among its summed axes (checked before the
    dtype probe, where NumPy's refusal would read as a dtype problem)."""
    for k in axes:
        if axes.count(k) > 1:
            raise ShapeError(
                f"tensordot: axis {k} of {v.describe()} is summed twice (its axes {axes}); "
                "each axis pairs with one axis of the other operand"
            )


def _paired(op, a, i, b, j):
    try:
        unify(a.type.shape[i], b.type.shape[j])
    except DimMismatch:
        raise ShapeError(
            f"{op}: axis {i} of {a.describe()} has size {format_dim(a.type.shape[i])} but the "
            f"axis {j} of {b.describe()} it is summed with has size {format_dim(b.type.shape[j])}"
        ) from None


def _free_axes(ndim, summed) -> tuple:
    return tuple(k for k in range(ndim) if k not in summed)


def _free(shape, summed) -> tuple:
    return tuple(shape[k] for k in _free_axes(len(shape), summed))


def _grad_order(ndim, mine, partners, free_first):
    """The permutation that puts a contraction's gradient back in its input's axis order.

    The gradient comes out with this input's free axes and the partner's summed axes (in the
    partner's axis order), the free axes first or last as ``free_first`` says.
    """
    partner_rank = {p: r for r, p in enumerate(sorted(partners))}
    free = _free_axes(ndim, mine)
    n_summed = len(mine)
    order = []
    for k in range(ndim):
        if k in free:
            pos = free.index(k)
            order.append(pos if free_first else n_summed + pos)
        else:
            rank = partner_rank[partners[mine.index(k)]]
            order.append(len(free) + rank if free_first else rank)
    return tuple(order)


def tensordot(a, b, axes=2):
    """``np.tensordot``: ``axes`` is an int (last n of a with first n of b) or two lists."""
    a, b = as_variable(a), as_variable(b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    if len(axes_a) != len(axes_b):
        raise _at_user_line(
            ShapeError(f"tensordot: {len(axes_a)} axes of a but {len(axes_b)} of b")
        )
    norm_a = [one_axis(k, a.type.ndim, "tensordot", a) for k in axes_a]
    norm_b = [one_axis(k, b.type.ndim, "tensordot", b) for k in axes_b]
    return Tensordot(norm_a, norm_b)(a, b)


def _tensordot_axes(a, b, axes) -> tuple[tuple, tuple]:
    """The summed axes of a and of b, as NumPy reads ``axes``: a count (any integer, NumPy's
    included), or a pair of an axis or a sequence of axes each."""
    pair = _sequence(axes)
    if pair is None:
        n = _integer(axes)
        if n is None:
            raise _at_user_line(ArgumentError(f"tensordot: {_axes_forms(axes)}"))
        if n < 0 or n > min(a.type.ndim, b.type.ndim):
            message = f"tensordot: axes={n} does not fit {a.describe()} and {b.describe()}"
            raise _at_user_line(ShapeError(message))
        return tuple(range(a.type.ndim - n, a.type.ndim)), tuple(range(n))
    if len(pair) != 2:
        raise _at_user_line(ArgumentError(f"tensordot: {_axes_forms(axes)}"))
    return tuple(_axes_of_one(k) for k in pair)


def _axes_of_one(entry) -> tuple:
    """One operand's summed axes: one axis, or a sequence (an entry of any other kind is
    passed on as one axis, for the axis check to name it)."""
    entries = _sequence(entry)
    return (entry,) if entries is None else entries


def _integer(value) -> int | None:
    """``value`` as an int where it is one (a NumPy integer or a 0-d integer array too; not
    a bool), else None."""
    if isinstance(value, (bool, np.bool_, Variable, list, tuple)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _sequence(value) -> tuple | None:
    """The entries of a list, tuple or array (a Variable's are not known), else None."""
    if isinstance(value, (list, tuple)) or isinstance(value, np.ndarray) and value.ndim:
        return tuple(value)
    return None


def _axes_forms(axes) -> str:
    given = axes.describe() if isinstance(axes, Variable) else repr(axes)
    return (
        "axes is an int (the last n axes of a with the first n of b) or a pair (axes of a, "
        f"axes of b), not {given}"
    )


def outer(a, b):
    """``np.outer``: every element of a (flattened) times every element of b."""
    a, b = as_variable(a), as_variable(b)
    a = a if a.type.ndim == 1 else reshape(a, (-1,))
    b = b if b.type.ndim == 1 else reshape(b, (-1,))
    return mul(expand_dims(a, 1), expand_dims(b, 0))


def transpose(x, order):
    return x if tuple(order) == tuple(range(x.type.ndim)) else DimShuffle(order)(x)


# -- decompositions and solvers ------------------------------------------------------------
class Inv(_SquareOp):
    """``np.linalg.inv``: the inverse of each square matrix."""

    def infer_types(self, a):
        n = self._square(a)
        return [TensorType(self._dtype(a), a.type.shape[:-2] + (n, n))]

    def perform(self, a):
        return np.linalg.inv(a)

    def grad(self, inputs, outputs, output_grads):
        y_t = _swap_last(outputs[0])
        return [-(y_t @ output_grads[0] @ y_t)]


class Det(_SquareOp):
    """``np.linalg.det``: the determinant of each square matrix."""

    def infer_types(self, a):
        self._square(a)
        return [TensorType(self._dtype(a), a.type.shape[:-2])]

    def perform(self, a):
        return np.asarray(np.linalg.det(a))

    def grad(self, inputs, outputs, output_grads):
        # adj(a)^T, not det(a) * inv(a)^T: the same where a is invertible, and finite where
        # it is singular
        return [expand_dims(output_grads[0], (-2, -1)) * Cofactor()(inputs[0])]


class Cofactor(_SquareOp):
    """The cofactor matrix ``adj(a)^T`` of each square matrix, det's gradient, finite where a
    is singular (det(a) * inv(a)^T is not): from the SVD a = U diag(s) Vh it is
    sign * U diag(p) Vh, p_i the product of the other singular values, sign = det(U Vh)."""

    def infer_types(self, a):
        n = self._square(a)
        return [TensorType(self._dtype(a), a.type.shape[:-2] + (n, n))]

    def perform(self, a):
        """det(a) * inv(a)^T where NumPy's LU inverts a (the two come from the same LU, so
        their product is the cofactor matrix of a matrix within rounding of a, even near a
        singular one); the SVD's form where it does not (a zero pivot)."""
        try:
            with np.errstate(all="ignore"):
                out = np.linalg.det(a)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
            if np.all(np.isfinite(out)) or not np.all(np.isfinite(a)):
                return out
        except np.linalg.LinAlgError:
            pass
        u, s, vh = np.linalg.svd(a)
        sign = np.sign(np.linalg.det(u @ vh))
        eye = np.eye(s.shape[-1], dtype=bool)
        others = np.prod(np.where(eye, 1, s[..., None, :]), axis=-1)
        return (sign[..., None, None] * u * others[..., None, :]) @ vh

    def grad(self, inputs, outputs, output_grads):
        return [fit_gradient(CofactorGrad()(inputs[0], output_grads[0]), inputs[0])]


class CofactorGrad(_SquareOp):
    """det's Hessian applied to W, cofactor's gradient: ``det (<W, B> B - B W^T B)`` with
    B = inv(a)^T where a is well conditioned (one inverse), else the SVD's form, exact at
    singular matrices (symnb/ops/_cofactor.py). The Hessian is symmetric: W's gradient is
    the op again; a's (det's third derivative) is written from inv(a), finite where a is
    invertible."""

    def infer_types(self, a, w):
        self._square(a)
        return [TensorType(self._dtype(a), a.type.shape)]

    def perform(self, a, w):
        return cofactor_derivative(a, w)

    def grad(self, inputs, outputs, output_grads):
        (a, w), (g,) = inputs, output_grads

        def dot(x, y):  # <x, y> of each matrix, kept as a 1x1 matrix
            return sum_(x * y, axis=(-2, -1), keepdims=True)

        b = _swap_last(inv(a))
        bwb, bgb = b @ _swap_last(w) @ b, b @ _swap_last(g) @ b
        d = expand_dims(det(a), (-2, -1))
        third = d * (bwb @ _swap_last(g) @ b + bgb @ _swap_last(w) @ b)
        third = third - d * (dot(g, b) * bwb + dot(w, b) * bgb) + dot(g, outputs[0]) * b
        return [fit_gradient(third, a), fit_gradient(CofactorGrad()(a, g), w)]


class Slogdet(_SquareOp):
    """``np.linalg.slogdet``: (sign, log|det|) of each square matrix; the sign has no
    gradient (it is piecewise constant). Of a complex matrix the sign is complex (``det /
    |det|``) and log|det| real, as in NumPy (complex128 -> complex128, float64)."""

    nout = 2
    dtype_rule = (
        "float64 for integer input, else the input's dtype; log|det| is real "
        "(float64 of complex128), as np.linalg.slogdet"
    )

    def infer_types(self, a):
        self._square(a)
        dtype, batch = self._dtype(a), a.type.shape[:-2]
        return [TensorType(dtype, batch), TensorType(real_dtype(dtype), batch)]

    def perform(self, a):
        sign, logdet = np.linalg.slogdet(a)
        return np.asarray(sign), np.asarray(logdet)

    def grad(self, inputs, outputs, output_grads):
        g = output_grads[1]
        if g is None:
            return [None]
        return [expand_dims(g, (-2, -1)) * _swap_last(inv(inputs[0]))]


class Cholesky(_SquareOp):
    """``np.linalg.cholesky``: lower-triangular L with ``L @ L.T = a``; only a's lower
    triangle is read, so the gradient lives on the lower triangle."""

    def infer_types(self, a):
        n = self._square(a)
        return [TensorType(self._dtype(a), a.type.shape[:-2] + (n, n))]

    def perform(self, a):
        return np.linalg.cholesky(a)

    def grad(self, inputs, outputs, output_grads):
        # Murray 2016, lower-read convention, written with differentiable ops so that
        # second derivatives (hessian, Rop through its Lop) exist.
        lower_t = _swap_last(outputs[0])
        phi = _tril_half_diagonal(lower_t @ output_grads[0])
        left = Solve()(lower_t, phi)  # L^-T phi
        p = _swap_last(Solve()(lower_t, _swap_last(left)))  # L^-T phi L^-1
        return [_tril_half_diagonal(p + _swap_last(p))]


def _tril_half_diagonal(m):
    """The lower triangle of each matrix with its diagonal halved."""
    return 0.5 * (tril(m) + tril(m, -1))


class Solve(_SquareOp):
    """``np.linalg.solve(a, b)``: x with ``a @ x = b``; b is a vector when it is 1-D (NumPy
    2's rule), else a stack of matrices; the batch axes broadcast."""

    dtype_rule = "NumPy's promotion of a and b, at least float64 for integers"

    def infer_types(self, a, b):
        n = self._square(a)
        if b.type.ndim < 1:
            raise ShapeError(f"solve: {b.describe()} is 0-d; b is a vector or matrix")
        if b.type.ndim == 1:
            self._rows(a, b, n, b.type.shape[0])
            shape = a.type.shape[:-2] + (n,)
        else:
            self._rows(a, b, n, b.type.shape[-2])
            shape = broadcast_shapes(self, [a, b], core=2) + (n, b.type.shape[-1])
        return [TensorType(probe_dtype(self, np.linalg.solve, [a, b]), shape)]  # (shapes first)

    def _rows(self, a, b, n, rows):
        try:
            unify(n, rows)
        except DimMismatch:
            raise ShapeError(
                f"solve: {a.describe()} has {format_dim(n)} rows but {b.describe()} has "
                f"{format_dim(rows)} (its {'only' if b.type.ndim == 1 else 'second-to-last'} "
                "axis)"
            ) from None

    def perform(self, a, b):
        return np.linalg.solve(a, b)

    def grad(self, inputs, outputs, output_grads):
        (a, b), (x,), (g,) = inputs, outputs, output_grads
        if b.type.ndim == 1:  # g holds one vector per matrix of a: solve it as a column
            gb = squeeze(Solve()(_swap_last(a), expand_dims(g, -1)), -1)
            ga = -(expand_dims(gb, -1) * expand_dims(x, -2))
        else:
            gb = Solve()(_swap_last(a), g)
            ga = -(gb @ _swap_last(x))
        return [input_gradient(ga, a), input_gradient(gb, b)]


inv, det, cholesky, solve = Inv(), Det(), Cholesky(), Solve()


#: ``np.linalg.slogdet``'s result (NumPy 2): ``slogdet(x).logabsdet``
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def slogdet(a):
    """``(sign, logabsdet)`` of each square matrix, as ``np.linalg.slogdet``: a
    :data:`SlogdetResult` of variables."""
    sign, logdet = Slogdet()(a)
    return SlogdetResult(sign, logdet)


# -- trace and norms -----------------------------------------------------------------------
class Trace(CountedAxes, Op):
    """``np.trace``: the sum of a diagonal (``offset`` above the main one) of the
    ``axis1``/``axis2`` planes."""

    __props__ = ("offset", "axis1", "axis2")
    axis_props = ("axis1", "axis2")
    dtype_rule = "the dtype np.sum gives (small ints and bool widen to int64)"

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def infer_types(self, x):
        if x.type.ndim < 2:
            raise ShapeError(f"trace: {x.describe()} has {x.type.ndim} dims; 2 or more needed")
        shape = tuple(d for k, d in enumerate(x.type.shape) if k not in (self.axis1, self.axis2))
        return [TensorType(probe_dtype(self, self.perform, [x]), shape)]

    def perform(self, x):
        return np.asarray(np.trace(x, self.offset, self.axis1, self.axis2))

    def grad(self, inputs, outputs, output_grads):
        return [TraceAdjoint(self.offset, self.axis1, self.axis2)(output_grads[0], inputs[0])]


class TraceAdjoint(CountedAxes, Op):
    """Zeros shaped like x with g on the diagonal that ``trace`` sums: its gradient."""

    __props__ = ("offset", "axis1", "axis2")
    axis_props = ("axis1", "axis2")
    dtype_rule = "the dtype of g"

    def axes_of(self, inputs):
        return as_variable(inputs[1])  # like: the matrix whose diagonal g fills

    def __init__(self, offset, axis1, axis2):
        self.offset, self.axis1, self.axis2 = offset, axis1, axis2

    def infer_types(self, g, like):
        return [TensorType(g.type.dtype, like.type.shape)]

    def perform(self, g, like):
        out = np.zeros(np.shape(like), dtype=np.asarray(g).dtype)
        diagonal = np.diagonal(out, self.offset, self.axis1, self.axis2)
        diagonal.setflags(write=True)
        diagonal[...] = np.expand_dims(g, -1)
        return out

    def grad(self, inputs, outputs, output_grads):
        return [Trace(self.offset, self.axis1, self.axis2)(output_grads[0]), None]


def trace(x, offset=0, axis1=0, axis2=1):
    """``np.trace``: sum of the ``offset`` diagonal (an int) over ``axis1`` and ``axis2``."""
    x = as_variable(x)
    offset = diagonal_offset(offset, "trace", "offset", x)
    a1 = one_axis(axis1, x.type.ndim, "trace", x, "axis1")
    a2 = one_axis(axis2, x.type.ndim, "trace", x, "axis2")
    if a1 == a2:
        raise _at_user_line(ShapeError(f"trace: axis1 and axis2 are both axis {a1}"))
    return Trace(offset, a1, a2)(x)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """``np.linalg.norm``: vector norms (ord None/2, 1, inf, -inf, 0, any p) over one axis;
    matrix norms (None/'fro', 'nuc', 2, -2, 1, -1, inf, -inf) over two. Integers are
    computed in float64.
    """
    x = as_variable(x)
    if not x.type.is_float:
        x = cast(x, "float64")
    axes = _norm_axes(x, ord, axis)
    if ord is None or (ord == "fro" and len(axes) == 2):
        return _norm_sum_pow(x, 2, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    return _vector_norm(x, ord, axes, keepdims)


def _norm_axes(x, ord, axis) -> tuple:
    """The axes a norm reduces, in the order given (a matrix norm's rows, then columns)."""
    ndim = x.type.ndim
    if axis is None:
        if ord is None:
            return tuple(range(ndim))
        if ndim not in (1, 2):
            raise _at_user_line(ShapeError(f"norm: ord={ord!r} needs axis for {x.describe()}"))
        return tuple(range(ndim))
    raw = (axis,) if is_int(axis) else axis  # NumPy's integers too (np.int64(1))
    located_call(normalize_axis, raw, ndim, "norm", x)  # a float, a string: ShapeTypeError
    raw = tuple(int(a) for a in raw)
    if len(raw) > 2 or (ord is not None and len(raw) != len(set(raw))):
        raise _at_user_line(ShapeError(f"norm: axis={axis!r}: give one axis or two"))
    return tuple(a % ndim for a in raw)


def _norm_sum_pow(x, p, axes, keepdims):
    if p == 2:  # |z|**2 for complex z (z * z would keep the phase)
        a = abs_(x) if x.type.dtype.kind == "c" else x
        return sqrt(sum_(a * a, axis=axes, keepdims=keepdims))
    return sum_(abs_(x) ** p, axis=axes, keepdims=keepdims) ** (1 / p)


def _vector_norm(x, ord, axes, keepdims):
    if ord == np.inf:
        return _max_or_zero(abs_(x), axes[0], keepdims)
    if ord == -np.inf:
        return min_(abs_(x), axis=axes, keepdims=keepdims)
    if ord == 0:  # the count of non-zeros: not differentiable (its value is piecewise flat)
        real = np.empty(0, x.type.dtype).real.dtype  # (a complex norm is real)
        return sum_(cast(not_equal(x, 0), real), axis=axes, keepdims=keepdims)
    if ord == 1:
        return sum_(abs_(x), axis=axes, keepdims=keepdims)
    if isinstance(ord, str) or not isinstance(ord, numbers.Real):  # (1j: NumPy refuses it)
        raise _at_user_line(
            ArgumentError(
                f"norm: ord={ord!r} is not a vector norm ({x.describe()}): it is None, a real "
                "p, inf, -inf or 0"
            )
        )
    return _norm_sum_pow(x, ord, axes, keepdims)


def _matrix_norm(x, ord, axes, keepdims):
    """Singular-value norms (ord 2, -2, 'nuc'), or max/min absolute column sums (ord ±1) or
    row sums (ord ±inf)."""
    if ord in (2, -2, "nuc"):
        out = _singular_value_norm(x, ord, axes)
    elif ord in (1, -1, np.inf, -np.inf):
        out = _abs_sum_norm(x, ord, axes)
    else:
        message = (
            f"norm: matrix ord={ord!r} is not a matrix norm (None, 'fro', 'nuc', ±1, ±2, ±inf)"
        )
        raise _at_user_line(ArgumentError(message))
    return expand_dims(out, tuple(sorted(axes))) if keepdims else out


def _abs_sum_norm(x, ord, axes):
    row, col = axes
    summed_axis, over = (row, col) if ord in (1, -1) else (col, row)
    sums = sum_(abs_(x), axis=summed_axis)
    over -= over > summed_axis
    return _max_or_zero(sums, over) if ord in (1, np.inf) else min_(sums, axis=over)


def _singular_value_norm(x, ord, axes):
    rest = [a for a in range(x.type.ndim) if a not in axes]
    s = SingularValues()(transpose(x, rest + list(axes)))
    if ord == 2:
        return _max_or_zero(s, s.type.ndim - 1)
    return (min_ if ord == -2 else sum_)(s, axis=-1)


def _max_or_zero(v, axis, keepdims=False):
    """The max of non-negative ``v`` over ``axis``, 0 where that axis is empty: NumPy's norms
    take their max with ``initial=0`` (their min has none, so the -inf, -1 and -2 norms of
    nothing raise, as in NumPy). Over an axis not known to be non-empty the max is taken
    with a -1 prepended, which no value of ``v`` ties (so each element's gradient is the one
    the plain max gives), and a max of -1 (nothing) becomes 0. Not -inf: clang's ``omp simd``
    max reduction starts its lanes at -DBL_MAX, so a max of only -inf is -DBL_MAX there."""
    if isinstance(v.type.shape[axis], int) and v.type.shape[axis] > 0:
        return max_(v, axis=axis, keepdims=keepdims)
    padded = pad(v, [(int(a == axis), 0) for a in range(v.type.ndim)], constant_values=-1)
    out = max_(padded, axis=axis, keepdims=keepdims)
    return where(less(out, 0), 0, out)
