"""Elementwise ops: NumPy broadcasting, NumPy dtype rules, a gradient and a kernel expression.

Each op is a small class: ``impl`` is its NumPy reference, ``scalar_op`` (or ``scalar``) its
element for kernel backends, named from the kernel description's vocabulary
(``symnb/backends/kernels/ir.py``), and ``grad_elem`` its gradient on the broadcast shape (the
base class sums it back to each input's shape).
"""

from __future__ import annotations

import numpy as np

from symnb.core import dims as _dims
from symnb.core.op import Op, _at_user_line
from symnb.core.shapes import roles as shape_roles
from symnb.core.shapes.broadcast import broadcast_shapes
from symnb.core.types import TensorType, as_dtype
from symnb.core.variable import Constant, Variable, as_variable
from symnb.errors import DTypeError, InputError
from symnb.ops._dtypes import probe_dtype, refuse_wrapped_ints
from symnb.ops.broadcast import sum_to_like
from symnb.ops.numpy_api import numpy_keywords


class Elemwise(Op):
    """Base of elementwise ops; subclasses set ``nin``, ``impl``, ``c`` and ``grad_elem``
    (or ``grad_input``)."""

    nin = 2
    impl = None
    #: the NumPy ufunc that ``impl`` is, or computes as (its dtype rules, its ``out=``) where
    #: ``impl`` is a function that departs from it at some values (``Pow``): the in-place
    #: rule writes into ``out=`` of such an impl, and ``np.<ufunc>`` of variables builds the op
    #: with the ufunc's dtype rules
    ufunc: np.ufunc | None = None
    scalar_op: str | None = None  # the kernel description's scalar op (see ``scalar``)

    def axis_sources(self, node):
        return shape_roles.broadcast_sources(node)

    def infer_types(self, *inputs):  # (``_build`` checks that there are ``nin``)
        shape = inputs[0].type.shape if self.nin == 1 else broadcast_shapes(self, inputs)
        return [TensorType.of(self.out_dtype(inputs), shape)]

    def out_dtype(self, inputs):
        return probe_dtype(self, self.impl, inputs)

    def perform(self, *arrays):
        return self.impl(*arrays)

    def grad(self, inputs, outputs, output_grads):
        return self.grad_wrt(range(len(inputs)), inputs, outputs, output_grads)

    def grad_wrt(self, needed, inputs, outputs, output_grads):
        """Each needed gradient summed back to its input's shape; the others (a constant
        operand such as the 0.9 of ``x * 0.9``) come back as None, and an op with a rule per
        input (``grad_input``) does not even build them."""
        output, gz = outputs[0], output_grads[0]
        if self._per_input():
            grads = {}  # (a loop: a comprehension would make four cells each node)
            for i in needed:
                grads[i] = self.grad_input(i, inputs, output, gz)
        else:
            grads = dict(enumerate(self.grad_elem(inputs, output, gz)))
        fit = fit_dtype if self.nin == 1 else fit_gradient  # one input: nothing is broadcast
        out = [None] * len(inputs)
        for i in needed:
            out[i] = None if grads[i] is None else fit(grads[i], inputs[i])
        return out

    def grad_elem(self, inputs, output, gz):
        """Gradients on the broadcast shape, one per input (None: no gradient flows)."""
        if self._per_input():
            return [self.grad_input(i, inputs, output, gz) for i in range(len(inputs))]
        raise NotImplementedError

    def grad_input(self, i, inputs, output, gz):
        """The gradient of input ``i`` alone, on the broadcast shape: an op whose partials
        are separate expressions (``x * y``) defines this instead of ``grad_elem``, so that
        ``sn.grad`` builds only the ones it asks for."""
        raise NotImplementedError

    def _per_input(self) -> bool:
        return type(self).grad_input is not Elemwise.grad_input

    def scalar(self, k, *args):
        """One element for kernel backends: ``k`` builds named scalar ops (``k.exp(x)``),
        ``k.to(a)`` converts an operand to the dtype the op computes in."""
        return k.op(self.scalar_op, *[k.to(a) for a in args])


class _Unary(Elemwise):
    nin = 1


class _Logical(Elemwise):
    """Comparisons and bitwise logic: integer or boolean outputs, no gradient."""

    differentiable = False

    def grad_elem(self, inputs, output, gz):
        return [None] * len(inputs)


# -- arithmetic ----------------------------------------------------------------------------
def _size_arithmetic(fn, node, size_of):
    """``x.shape[0] * 2`` as a dim: the dims arithmetic of the operands' sizes."""
    sizes = [size_of(v) for v in node.inputs]
    return None if any(d is None for d in sizes) else fn(*sizes)


class Add(Elemwise):
    """x + y."""

    impl, scalar_op = staticmethod(np.add), "add"

    def grad_elem(self, inputs, output, gz):
        return [gz, gz]

    def symbolic_size(self, node, size_of):
        return _size_arithmetic(_dims.add, node, size_of)


class Sub(Elemwise):
    """x - y."""

    impl, scalar_op = staticmethod(np.subtract), "sub"

    def grad_input(self, i, inputs, output, gz):
        return gz if i == 0 else -gz

    def symbolic_size(self, node, size_of):
        return _size_arithmetic(_dims.sub, node, size_of)


class Mul(Elemwise):
    """x * y."""

    impl, scalar_op = staticmethod(np.multiply), "mul"

    def grad_input(self, i, inputs, output, gz):
        return gz * inputs[1 - i]  # d(x*y)/dx = y, d(x*y)/dy = x

    def symbolic_size(self, node, size_of):
        return _size_arithmetic(_dims.mul, node, size_of)


class TrueDiv(Elemwise):
    """x / y (integers divide to floats, as in NumPy)."""

    impl, scalar_op = staticmethod(np.true_divide), "div"

    def grad_input(self, i, inputs, output, gz):
        y = inputs[1]
        return gz / y if i == 0 else -gz * output / y


class FloorDiv(Elemwise):
    """x // y, rounding toward minus infinity; its gradient is zero almost everywhere."""

    impl, scalar_op = staticmethod(np.floor_divide), "floor_div"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0, gz * 0]

    def symbolic_size(self, node, size_of):
        return _size_arithmetic(_dims.floordiv, node, size_of)


class Mod(Elemwise):
    """x % y with the sign of y (Python's and NumPy's rule)."""

    impl, scalar_op = staticmethod(np.mod), "mod"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz, -gz * floor_div(x, y)]


def _power(x, y, out=None):
    """``np.power``, except that a complex base to the power 2, 0.5 or -1 is its square,
    square root or reciprocal, as NumPy's ``z ** 2``, ``z ** 0.5`` and ``z ** -1`` are (its
    operator's fast path): ``np.power``'s general complex power gives ``inf+nanj`` for
    ``(-inf+1j) ** 0.5`` (``0+infj``), ``nan+nanj`` for ``(inf+0j) ** -1`` (``0-0j``) and
    ``6e-17-1j`` for ``(-1-0j) ** 0.5`` (``-1j``). The kernels spell a real ``x ** 0.5`` as
    ``sqrt`` alike (docs/c_backend.md). ``out`` may be x's or y's buffer (in place)."""
    fast = _fast_complex_powers(x, y)
    result = np.power(x, y, out=out)
    if fast:
        result = np.asarray(result)
        for at, values in fast:
            np.copyto(result, values, where=at)
    return result


#: the exponents NumPy's ``z ** c`` computes by a unary ufunc
_FAST_POWERS = ((2, np.square), (0.5, np.sqrt), (-1, np.reciprocal))


def _fast_complex_powers(x, y) -> list:
    """[(where y is the exponent, the unary ufunc of x)] for a complex x, computed before
    ``np.power`` writes (into x's buffer, in place)."""
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return []
    y = np.asarray(y)
    fast = []
    for exponent, ufunc in _FAST_POWERS:
        at = y == exponent
        if at.any():
            fast.append((at, ufunc(x)))
    return fast


class Pow(Elemwise):
    """x ** y; its partials are finite at a zero base (as JAX's, where those are). A complex
    x to the power 2, 0.5 or -1 is NumPy's ``x ** 2``, ``x ** 0.5``, ``x ** -1``: its
    square, square root or reciprocal (``np.power`` differs at infinities and signed
    zeros). A bool x to the power 2 with the operator, ``x ** 2``, is NumPy's: its fast path
    ``np.square``, int8 (``square``); ``pow(x, 2)`` is ``np.power``'s int64."""

    impl, ufunc, scalar_op = staticmethod(_power), np.power, "pow"

    def grad_input(self, i, inputs, output, gz):
        # y * x**(y-1) is 0 * inf at x = y = 0 (so every derivative of x**n past the n-th was
        # NaN at 0), and output * log(x) is 0 * -inf at x = 0: the base is taken as 1 there,
        # which keeps the values elsewhere, and their derivatives, exact. An integer y - 1
        # would wrap in y's dtype (uint8 0 - 1 is 255), and log of an integer x would take
        # log's own dtype (float16 for int8): both are computed in the output's precision
        x, y = inputs
        if i == 0:
            base = x if _nowhere_zero(y) else where(equal(y, 0) & equal(x, 0), 1, x)
            real = np.empty(0, output.type.dtype).real.dtype  # (complex128: float64)
            return gz * y * base ** (_as_dtype(y, real) - 1)
        return gz * output * self.log_base(x, output)

    @staticmethod
    def log_base(x: Variable, output: Variable) -> Variable:
        """``log(x)`` of d(x ** y)/dy = x ** y * log(x), in the output's dtype, x = 0 taken
        as 1 (where x may be 0)."""
        base = x if _nowhere_zero(x) else where(equal(x, 0), 1, x)
        return log(cast(base, output.type.dtype))


def _as_dtype(v: Variable, dtype) -> Variable:
    """``v`` in ``dtype``: a constant as a constant of that dtype (so that ``x ** 2``'s
    gradient keeps a constant exponent), anything else cast."""
    if v.type.dtype == dtype:
        return v
    if isinstance(v, Constant):
        return Constant(v.value, dtype, casting="unsafe")  # (as cast would)
    return cast(v, dtype)


def _nowhere_zero(v: Variable) -> bool:
    """``v`` is known, when the graph is built, to have no zero: then the rule needs no
    ``where`` (the gradients of ``x ** 2`` and of ``2 - 1``, its derivative's exponent, keep
    their graphs)."""
    value = _known_value(v, depth=16)
    return value is not None and bool(np.all(value != 0))


def _known_value(v: Variable, depth: int):
    """The value of a small constant, or of elementwise arithmetic on small constants; else
    None."""
    if isinstance(v, Constant):
        return v.value if v.value.size <= 64 else None
    node = v.owner
    if node is None or depth == 0 or not isinstance(node.op, Elemwise):
        return None
    args = [_known_value(x, depth - 1) for x in node.inputs]
    if any(a is None for a in args):
        return None
    try:
        with np.errstate(all="ignore"):
            return np.asarray(node.op.perform(*args))
    except Exception:  # noqa: BLE001 - unknown then: the rule keeps its where
        return None


class Neg(_Unary):
    """-x."""

    impl, scalar_op = staticmethod(np.negative), "neg"

    def grad_elem(self, inputs, output, gz):
        return [-gz]


class Pos(_Unary):
    """+x."""

    impl = staticmethod(np.positive)

    def scalar(self, k, x):
        return k.to(x)

    def grad_elem(self, inputs, output, gz):
        return [gz]


class Abs(_Unary):
    """|x|."""

    impl, scalar_op = staticmethod(np.absolute), "abs"

    def grad_elem(self, inputs, output, gz):
        return [gz * sign(inputs[0])]


class Sign(_Unary):
    """-1, 0 or 1; its gradient is zero."""

    impl, scalar_op = staticmethod(np.sign), "sign"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0]


# -- transcendental ------------------------------------------------------------------------
class Exp(_Unary):
    """e ** x."""

    impl, scalar_op = staticmethod(np.exp), "exp"

    def grad_elem(self, inputs, output, gz):
        return [gz * output]


class Log(_Unary):
    """Natural logarithm."""

    impl, scalar_op = staticmethod(np.log), "log"

    def grad_elem(self, inputs, output, gz):
        return [gz / inputs[0]]


class Sqrt(_Unary):
    """Square root."""

    impl, scalar_op = staticmethod(np.sqrt), "sqrt"

    def grad_elem(self, inputs, output, gz):
        return [gz * 0.5 / output]


class Tanh(_Unary):
    """Hyperbolic tangent."""

    impl, scalar_op = staticmethod(np.tanh), "tanh"

    def grad_elem(self, inputs, output, gz):
        return [gz * (1 - output * output)]


def as_float(x) -> np.ndarray:
    """x in the float dtype ``np.exp`` gives it (int8 -> float16, uint32 -> float64): formulas
    that negate or subtract must not run in an unsigned (wrapping) or narrow integer dtype."""
    x = np.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.exp(np.zeros((), x.dtype)).dtype)


def _sigmoid(x):
    """Logistic function, accurate at both tails (no overflow in exp); complex by the same
    split on the real part (``abs`` would drop the phase)."""
    x = as_float(x)
    if x.dtype.kind == "c":
        below = x.real < 0
        e = np.exp(np.where(below, x, -x))
        return np.where(below, e / (1 + e), 1 / (1 + e))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(e.dtype, copy=False)


class Sigmoid(_Unary):
    """1 / (1 + exp(-x))."""

    impl, scalar_op = staticmethod(_sigmoid), "sigmoid"

    def grad_elem(self, inputs, output, gz):
        return [gz * output * (1 - output)]


class Sin(_Unary):
    """Sine."""

    impl, scalar_op = staticmethod(np.sin), "sin"

    def grad_elem(self, inputs, output, gz):
        return [gz * cos(inputs[0])]


class Cos(_Unary):
    """Cosine."""

    impl, scalar_op = staticmethod(np.cos), "cos"

    def grad_elem(self, inputs, output, gz):
        return [-gz * sin(inputs[0])]


# -- rounding (gradients are zero almost everywhere) ---------------------------------------
class _Rounding(_Unary):
    def grad_elem(self, inputs, output, gz):
        return [gz * 0]


class Floor(_Rounding):
    """Largest integer <= x."""

    impl, scalar_op = staticmethod(np.floor), "floor"


class Ceil(_Rounding):
    """Smallest integer >= x."""

    impl, scalar_op = staticmethod(np.ceil), "ceil"


class Trunc(_Rounding):
    """x rounded toward zero."""

    impl, scalar_op = staticmethod(np.trunc), "trunc"


class Round(_Rounding):
    """x rounded to the nearest integer, halves to even (``np.round``; C's ``rint``)."""

    impl, scalar_op = staticmethod(np.round), "rint"

    def __call__(self, x, decimals=0):
        """``decimals`` as NumPy spells it, so ``sn.round(x, 2)``, ``np.round(x, 2)`` and
        ``x.round(2)`` fail alike at the user's line, not as a second graph input."""
        if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool) or decimals:
            described = x.describe() if isinstance(x, Variable) else repr(x)
            raise _at_user_line(
                NotImplementedError(
                    f"round: only decimals=0 is implemented, not decimals={decimals!r} "
                    f"(rounding {described})"
                )
            )
        return super().__call__(x)


# -- selection ------------------------------------------------------------------------------
class Maximum(Elemwise):
    """Elementwise larger of x and y; NaN wins, as in NumPy. Ties send the gradient to x."""

    impl, scalar_op = staticmethod(np.maximum), "maximum"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * (x >= y), gz * (x < y)]


class Minimum(Elemwise):
    """Elementwise smaller of x and y; NaN wins, as in NumPy. Ties send the gradient to x."""

    impl, scalar_op = staticmethod(np.minimum), "minimum"

    def grad_elem(self, inputs, output, gz):
        x, y = inputs
        return [gz * (x <= y), gz * (x > y)]


def _relu(x):
    return np.maximum(x, 0)


class Relu(_Unary):
    """max(x, 0); the gradient at 0 is taken as 0."""

    impl = staticmethod(_relu)

    def scalar(self, k, x):
        x, zero = k.to(x), k.const(0)
        kept = k.gt(x, zero)
        if k.dtype.startswith("float"):
            kept = k.bit_or(kept, k.isnan(x))  # NaN stays NaN, as in NumPy
        return k.where(kept, x, zero)

    def grad_elem(self, inputs, output, gz):
        # from the output (y > 0 exactly where x > 0, NaN included): x's only reader is then
        # relu, and a bias add before it fuses with it into one kernel (conv + bias + relu)
        return [gz * (output > 0)]


def _clip(x, lo, hi):
    """``np.clip``, where x equal to a bound is x and hi wins only above it: -0.0 limited
    to [0, 1] is -0.0. That is ``np.clip``'s loop for scalar bounds (``x < lo ? lo : x``,
    then ``t > hi ? hi : t``); its loop for bounds that are arrays gives the bound on a tie
    (+0.0). Only the sign of a zero differs, so scalar bounds take ``np.clip`` alone."""
    result = np.clip(x, lo, hi)
    if np.size(lo) == 1 and np.size(hi) == 1 or result.dtype.kind != "f":
        return result
    low = np.where(np.less(x, lo), lo, x)
    exact = np.where(np.greater(low, hi), hi, low)
    result = np.asarray(result)  # (a new array)
    np.copyto(result, exact, where=~np.isnan(result))  # (NaN: a NaN of x, lo or hi)
    return result


class Clip(Elemwise):
    """x limited to [lo, hi] (``np.clip``); the gradient flows to whichever bound is active.
    x equal to a bound is x (its signed zero), as ``np.clip`` with scalar bounds. A Python
    number x is an array, as NumPy makes it (only the bounds are weak): ``clip(2, x8, None)``
    is int64 and ``clip(2.5, x32, None)`` float64."""

    dtype_rule = "NumPy's promotion of x, lo and hi (``np.clip``)"
    nin = 3
    impl = staticmethod(_clip)

    def scalar(self, k, x, lo, hi):
        """NumPy's order: hi wins when lo > hi, and a NaN anywhere gives NaN; x wins a tie
        with a bound (the helpers ``maximum(a, b)`` and ``minimum(a, b)`` give b on a tie:
        +0.0 against -0.0), as ``_clip``. A Python int bound beyond an integer dtype's range
        is held to it, not wrapped (``clip`` drops such bounds when it builds the node, as
        ``np.clip``; this keeps a Clip built otherwise right)."""
        lo, hi = _held_to_range(k, lo), _held_to_range(k, hi)
        return k.minimum(k.to(hi), k.maximum(k.to(lo), k.to(x)))

    def grad_elem(self, inputs, output, gz):
        x, lo, hi = inputs
        at_hi = (x > hi) | (lo > hi)  # np.clip is minimum(maximum(x, lo), hi)
        return [gz * ((x >= lo) & (x <= hi)), gz * ((x < lo) & (lo <= hi)), gz * at_hi]


def _held_to_range(k, ref):
    """A weak Python int literal beyond the integer dtype ``k`` computes in, as the nearest end
    of that range (a literal of that dtype); any other value unchanged."""
    value = k.weak.get(ref)
    if type(value) is not int or np.dtype(k.dtype).kind not in "iu":
        return ref
    info = np.iinfo(k.dtype)
    if info.min <= value <= info.max:
        return ref
    return k.literal(int(info.min) if value < info.min else int(info.max), k.dtype)


class Where(Elemwise):
    """``where(cond, x, y)``: x where cond is true (nonzero), else y; Theano's ``switch``."""

    functions = ("where", "switch")
    dtype_rule = (
        "NumPy's promotion of x and y (a Python int beyond an integer dtype is refused, as "
        "in x + 300); cond may have any dtype"
    )
    nin = 3
    impl = staticmethod(np.where)

    def count_error(self, inputs, takes):
        if len(inputs) == 1:  # NumPy's where(cond), its nonzero
            return InputError(
                f"where: one argument ({inputs[0].describe()}) asks, as np.where(cond) does, "
                "for the indices where it is true (np.nonzero), whose count depends on the "
                "values: no symbolic op has that\n  hint: choose elements with "
                "sn.where(cond, x, y), or count them with sn.sum(cond)"
            )
        if len(inputs) == 2:  # NumPy's words for where(cond, x)
            cond, x = (v.describe() for v in inputs)
            return InputError(
                f"where({cond}, {x}): either both or neither of x and y should be given\n"
                "  hint: sn.where(cond, x, y) takes x where cond is true, else y (write "
                "sn.where(cond, x, 0) for zeros elsewhere)"
            )
        return super().count_error(inputs, takes)

    def out_dtype(self, inputs):
        """NumPy's promotion, less ``np.where``'s silent wrap of a Python int beyond an
        integer dtype (``where(c, x8, 300)`` gives 44): refused, as ``x8 + 300`` is."""
        dtype = super().out_dtype(inputs)
        refuse_wrapped_ints(self, inputs[1:], dtype)
        return dtype

    def scalar(self, k, cond, x, y):
        return k.where(k.truth(cond), k.to(x), k.to(y))  # the condition in its own dtype

    def grad_elem(self, inputs, output, gz):
        cond = inputs[0]
        return [None, where(cond, gz, 0), where(cond, 0, gz)]


# -- comparisons and logic -----------------------------------------------------------------
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
#: ``x op n`` for a Python int n below every value of x's dtype (above: lt/le/gt/ge flip)
_BELOW = {"lt": False, "le": False, "gt": True, "ge": True, "eq": False, "ne": True}


class _Comparison(_Logical):
    """A comparison; NumPy compares an integer array with any Python int exactly, even one its
    dtype cannot hold (``uint8 < 300``, ``uint64 <= -1``), where a kernel would wrap it."""

    def scalar(self, k, x, y):
        settled = _settled(k, self.scalar_op, x, y)
        if settled is not None:
            return k.literal(settled, "bool")
        exact = _signed_with_unsigned(k, self.scalar_op, x, y)
        if exact is not None:
            return exact
        return k.op(self.scalar_op, k.to(x), k.to(y))


def _settled(k, name: str, x, y) -> bool | None:
    """The answer of ``x name y`` when one side is a Python int outside the integer dtype the
    comparison runs in (then it is the same for every element), else None."""
    if np.dtype(k.dtype).kind not in "iu":
        return None
    info = np.iinfo(k.dtype)
    for literal, op in ((y, name), (x, _MIRRORED[name])):
        value = k.weak.get(literal)
        if type(value) is int and not info.min <= value <= info.max:
            below = _BELOW[op]
            return below if value < info.min or op in ("eq", "ne") else not below
    return None


#: ``i op u`` that a negative signed ``i`` makes true (for the others it makes them false)
_TRUE_IF_NEGATIVE = frozenset(("lt", "le", "ne"))


def _signed_with_unsigned(k, name: str, x, y):
    """``x name y`` of a signed integer and a uint64, which NumPy promotes to float64 (rounding
    both beyond 2**53) but NumPy 2 compares exactly: ``i < 0 or uint64(i) < u``; else None."""
    kinds = np.dtype(k.dtype_of(x)).kind + np.dtype(k.dtype_of(y)).kind
    if np.dtype(k.dtype).kind != "f" or kinds not in ("iu", "ui"):
        return None
    if kinds == "ui":
        x, y, name = y, x, _MIRRORED[name]
    signed = k.convert(x, "int64")
    negative = k.op("lt", signed, k.literal(0, "int64"))
    compared = k.op(name, k.convert(signed, "uint64"), k.convert(y, "uint64"))
    if name in _TRUE_IF_NEGATIVE:
        return k.op("bit_or", negative, compared)
    return k.op("bit_and", k.op("not", negative), compared)


class Less(_Comparison):
    """x < y."""

    impl, scalar_op = staticmethod(np.less), "lt"


class LessEqual(_Comparison):
    """x <= y."""

    impl, scalar_op = staticmethod(np.less_equal), "le"


class Greater(_Comparison):
    """x > y."""

    impl, scalar_op = staticmethod(np.greater), "gt"


class GreaterEqual(_Comparison):
    """x >= y."""

    impl, scalar_op = staticmethod(np.greater_equal), "ge"


class Equal(_Comparison):
    """x == y."""

    impl, scalar_op = staticmethod(np.equal), "eq"


class NotEqual(_Comparison):
    """x != y."""

    impl, scalar_op = staticmethod(np.not_equal), "ne"


class BitwiseAnd(_Logical):
    """x & y (logical and on booleans)."""

    impl, scalar_op = staticmethod(np.bitwise_and), "bit_and"


class BitwiseOr(_Logical):
    """x | y (logical or on booleans)."""

    impl, scalar_op = staticmethod(np.bitwise_or), "bit_or"


class BitwiseXor(_Logical):
    """x ^ y."""

    impl, scalar_op = staticmethod(np.bitwise_xor), "bit_xor"


class Invert(_Logical):
    """~x (logical not on booleans)."""

    nin = 1
    impl, scalar_op = staticmethod(np.invert), "invert"


class _TruthLogic(_Logical):
    """NumPy's ``logical_*``: each operand read as a truth value (nonzero is true, NaN too),
    a bool result whatever the operands' dtype."""

    def scalar(self, k, *args):
        return k.op(self.scalar_op, *[k.truth(a) for a in args])


class LogicalAnd(_TruthLogic):
    """x and y, elementwise, of truth values (``np.logical_and``)."""

    impl, scalar_op = staticmethod(np.logical_and), "bit_and"


class LogicalOr(_TruthLogic):
    """x or y, elementwise, of truth values (``np.logical_or``)."""

    impl, scalar_op = staticmethod(np.logical_or), "bit_or"


class LogicalXor(_TruthLogic):
    """x xor y, elementwise, of truth values (``np.logical_xor``)."""

    impl, scalar_op = staticmethod(np.logical_xor), "ne"


class LogicalNot(_TruthLogic):
    """not x, elementwise, of a truth value (``np.logical_not``; ``~`` on booleans)."""

    nin = 1
    impl, scalar_op = staticmethod(np.logical_not), "not"


class IsNan(_Logical):
    """x is NaN (false for integers)."""

    name = "isnan"
    nin = 1
    impl, scalar_op = staticmethod(np.isnan), "isnan"


class IsInf(_Logical):
    """x is +inf or -inf."""

    name = "isinf"
    nin = 1
    impl, scalar_op = staticmethod(np.isinf), "isinf"


class IsFinite(_Logical):
    """x is neither infinite nor NaN."""

    name = "isfinite"
    nin = 1
    impl, scalar_op = staticmethod(np.isfinite), "isfinite"


# -- dtype ---------------------------------------------------------------------------------
class Cast(Elemwise):
    """Convert to another dtype (``x.astype``)."""

    __props__ = ("dtype",)
    nin = 1

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype).name

    def out_dtype(self, inputs):
        return np.dtype(self.dtype)

    def symbolic_size(self, node, size_of):
        return size_of(node.inputs[0]) if np.dtype(self.dtype).kind in "iu" else None

    def perform(self, x):
        return np.asarray(x).astype(self.dtype)

    def grad_elem(self, inputs, output, gz):
        return [gz if inputs[0].type.is_float else None]


# The op instances are the public functions: ``sn.exp(x)``, ``sn.add(x, y)``.
add, sub, mul, true_div, floor_div, mod, pow = (
    Add(),
    Sub(),
    Mul(),
    TrueDiv(),
    FloorDiv(),
    Mod(),
    Pow(),
)
neg, pos, abs, sign = Neg(), Pos(), Abs(), Sign()
exp, log, sqrt, tanh, sigmoid, sin, cos = Exp(), Log(), Sqrt(), Tanh(), Sigmoid(), Sin(), Cos()
less, less_equal, greater, greater_equal = Less(), LessEqual(), Greater(), GreaterEqual()
equal, not_equal = Equal(), NotEqual()
bitwise_and, bitwise_or, bitwise_xor, invert = BitwiseAnd(), BitwiseOr(), BitwiseXor(), Invert()
logical_and, logical_or, logical_xor = LogicalAnd(), LogicalOr(), LogicalXor()
logical_not = LogicalNot()
divide = true_div
floor, ceil, trunc, round = Floor(), Ceil(), Trunc(), Round()
maximum, minimum, relu, where = Maximum(), Minimum(), Relu(), Where()
switch = where
isnan, isinf, isfinite = IsNan(), IsInf(), IsFinite()


def logistic_formula(var: Variable):
    """``(x, sigmoid(x))`` when ``var`` is the logistic function written out, ``1 / (1 +
    exp(-x))`` (or ``1 / (1 + exp(u))`` with x = -u), and ``sigmoid(x)`` has its type; else
    None. Course code writes the formula; its gradient overflows (``exp(-x) / (1 +
    exp(-x))**2``) and ``log(1 - p)`` of it is ``log(0)`` where sigmoid's are finite, so the
    gradient and the stabilize rewrites compute it as the op (symnb/grad/formulas.py)."""
    node = var.owner
    if node is None or not isinstance(node.op, TrueDiv) or not _all_ones(node.inputs[0]):
        return None
    total = node.inputs[1].owner
    if total is None or not isinstance(total.op, Add):
        return None
    a, b = total.inputs
    e = b if _all_ones(a) else a if _all_ones(b) else None
    if e is None or e.owner is None or not isinstance(e.owner.op, Exp):
        return None
    u = e.owner.inputs[0]
    x = u.owner.inputs[0] if u.owner is not None and isinstance(u.owner.op, Neg) else neg(u)
    if not x.type.is_float:
        return None
    s = sigmoid(x)
    return (x, s) if s.type == var.type else None


def _all_ones(var: Variable) -> bool:
    """A constant of ones that broadcasting cannot stretch anything by (all its dims 1)."""
    return isinstance(var, Constant) and var.value.size == 1 and bool(np.all(var.value == 1))


def as_array(x) -> Variable:
    """x as NumPy's array functions (``np.dot``, ``np.kron``, the array ``np.clip`` limits...)
    take it: a Python number is a strong float64/int64 0-d array, not a weak scalar
    (``np.dot(x8, 2)`` is int64)."""
    return x if isinstance(x, Variable) else as_variable(np.asarray(x))


@numpy_keywords
def clip(x, a_min=None, a_max=None) -> Variable:
    """x limited to [a_min, a_max]; either bound or both may be None, as ``np.clip`` in
    NumPy 2 (both None: x itself, of its dtype and shape, where NumPy gives a copy of x and
    NumPy 1 refused it); NumPy 2's ``min=``/``max=`` name them too (``clip(x, min=0)``).
    A Python number x is an array, as NumPy makes it (only the bounds are weak):
    ``clip(2, x8, None)`` is int64 and ``clip(2.5, x32, None)`` float64.

    As NumPy 2 (``np.clip``), a Python int bound beyond an integer x's range on the side it
    limits (``clip(uint8, -1, 300)``) limits nothing and is dropped, not cast (which would wrap
    it); one beyond it on the other side (``clip(uint8, 300, 400)``) is refused."""
    x = as_array(x)
    if x.type.dtype.kind in "iu":
        info = np.iinfo(x.type.dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        return x  # np.clip gives a copy of x: the graph's values are never written to
    if a_min is None:
        return minimum(x, a_max)
    if a_max is None:
        return maximum(x, a_min)
    return Clip()(x, a_min, a_max)


def cast(x, dtype) -> Variable:
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    x = as_variable(x)
    try:
        dtype = as_dtype(dtype)
    except DTypeError as exc:
        raise _at_user_line(DTypeError(f"cast of {x.describe()}: {exc.args[0]}")) from None
    return x if x.type.dtype == dtype else Cast(dtype)(x)


def fit_gradient(g, x) -> Variable:
    """A gradient on a broadcast shape, summed to x's shape and cast to x's dtype."""
    return fit_dtype(sum_to_like(g, x), x)


def input_gradient(g, x, broadcast: bool = True) -> Variable | None:
    """The gradient ``g`` as it flows into input ``x`` of a rule that gives every input one:
    fitted to x (summed over broadcast axes unless ``broadcast`` is False, and cast), or
    None where x is an integer or boolean, which receives no gradient (``x @ i``)."""
    if not x.type.is_float:
        return None
    return fit_gradient(g, x) if broadcast else fit_dtype(g, x)


def fit_dtype(g, x) -> Variable:
    """g cast to x's dtype when x is a float of another precision."""
    return cast(g, x.type.dtype) if x.type.is_float and g.type.dtype != x.type.dtype else g
