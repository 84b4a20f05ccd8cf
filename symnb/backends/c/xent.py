"""The fused softmax cross-entropy and its gradient as row kernels (ops in symnb/ops/nnet.py).

Forward, per row: a SIMD max pass, a SIMD pass writing and summing ``exp(x - max)``, the loss
from the label's logit, and a pass normalising the softmax (which the gradient reads instead
of exponentiating again: exp is most of the cost). The sum runs in the row's dtype over parts
of 512 elements, added up in double (float32 SIMD lanes, not converted to double: 16% off W2's
forward pass); the softmax is multiplied by ``1 / sum`` (NumPy divides: within 2 ulp).
Gradient, per row: one SIMD pass writing ``softmax * dloss``, then the label's element
``(softmax - 1) * dloss``. A row stays in cache between passes, so memory is read once each way
and no one-hot array exists. Rows are split between threads when the matrix is big enough.

The kernels take C-ordered float32/float64 rows along the last axis with int64 labels (other
integer labels but uint64 are converted); other layouts and dtypes run the op's NumPy
reference. A label out of range makes the kernel return 1, and the reference then raises its
clear error.
"""

from __future__ import annotations

import numpy as np

from symnb.backends.c import dialect, driver
from symnb.backends.c.dialect import CDialect
from symnb.backends.c.listing import KernelInfo
from symnb.backends.c.rownorm import PART_DEFINE, SOFTMAX_END, SOFTMAX_EXP, exp_sum_passes
from symnb.backends.c.steps import LibraryStep, ffi, pointer
from symnb.backends.c.vecmath import simd_declarations
from symnb.backends.kernel_ir import Unsupported

#: op class name -> kernel kind
OPS = {"SoftmaxCrossEntropy": "forward", "SoftmaxCrossEntropyGrad": "grad"}
#: rows * classes from which rows are split between threads: the backend's threshold for
#: loops calling exp (W2's 512x1000 stays on one thread: measured in one process on the loaded
#: machine, 0.43 ms per call on one thread, 0.46 ms split from 2^18 elements)
PARALLEL_MIN = dialect.PARALLEL_MIN
FLOATS = ("float32", "float64")
NOTE = "last axis, float32/float64; otherwise the NumPy reference runs"


def xent_source(kind: str, dtype: str, parallel_min: int = PARALLEL_MIN) -> str:
    """The translation unit of the forward or gradient kernel for ``dtype``."""
    if dtype not in FLOATS:
        raise Unsupported(f"softmax cross-entropy of {dtype} runs in NumPy")
    c = CDialect()
    names = {
        "t": c.type_name(dtype),
        "exp": c.function_name("exp", dtype),
        "log": c.function_name("log", dtype),
        "par": parallel_min,
        "out": "p",
    }
    if kind == "forward":
        passes = exp_sum_passes(names, SOFTMAX_EXP)  # the softmax row kernel's passes
        row = _FORWARD.format(passes=passes, normalise=SOFTMAX_END.format(**names), **names)
        row, entry = PART_DEFINE + "\n" + row, _FORWARD_ENTRY
    else:
        row, entry = _GRAD.format(**names), _GRAD_ENTRY
    decls = simd_declarations(sorted(c.math_used))
    return "\n".join([driver.INCLUDES, decls, row, entry.format(**names)])


def xent_step(linker, node):
    """(step, source) for a fused cross-entropy node of a CLinker's graph."""
    kind = OPS[type(node.op).__name__]
    dtype = node.outputs[0].type.dtype.name
    floats = [v.type.dtype.name for v in node.inputs if v.type.dtype.kind == "f"]
    if any(d != dtype for d in floats):
        raise Unsupported("mixed float dtypes run in NumPy")
    source = xent_source(kind, dtype)
    ins = [linker.slot[id(v)] for v in node.inputs]
    outs = [linker._new_slot(v) for v in node.outputs]
    cls = XentStep if kind == "forward" else XentGradStep
    step = cls(node, ins, outs if len(outs) > 1 else outs[0], NOTE)
    linker.kernels.append(KernelInfo("kernel", node, source, NOTE))
    return step, source


class _XentKernelStep(LibraryStep):
    """A library step whose ``run`` calls a row kernel when the layout suits it."""

    kind = "kernel"

    def __init__(self, node, ins, out, reason=""):
        super().__init__(node, ins, out, reason)
        self.fn = None  # set by the linker once the kernel is loaded
        self.dtype = self.dtypes[0]
        self.axis = node.op.axis

    def _takes(self, x, labels) -> bool:
        """The kernel's layout: rows along the last axis, one label per row, no empty rows;
        labels that int64 holds (uint64 ones could wrap to valid negative labels)."""
        return (
            x.dtype == self.dtype
            and labels.dtype != np.uint64
            and x.ndim >= 1
            and self.axis == x.ndim - 1
            and x.shape[-1] > 0
            and labels.shape == x.shape[:-1]
        )

    def _call(self, x, arrays) -> bool:
        """Run the kernel on C-ordered arrays (rows of ``x``): True when all labels were in
        range."""
        args = ffi.new("int64_t[]", [x.size // x.shape[-1], x.shape[-1]])
        keep = [pointer(a) for a in arrays]
        # per call, not kept on the step: the kernel runs without the GIL, and another thread
        # calling the same function must not rewrite its arguments meanwhile
        return self.fn(args, ffi.new("char *[]", keep)) == 0


def _stretches_to(shape: tuple, rows: tuple) -> bool:
    """An array of ``shape`` broadcasts to ``rows`` (one loss gradient per row)."""
    try:
        return np.broadcast_shapes(shape, rows) == rows
    except ValueError:
        return False


def _labels(labels: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(labels, dtype=np.int64)


class XentStep(_XentKernelStep):
    """(losses, softmax) = softmax_cross_entropy(logits, labels)."""

    def run(self, logits, labels):
        x, labels = np.asarray(logits), np.asarray(labels)
        if not self._takes(x, labels):
            return super().run(logits, labels)
        x = np.ascontiguousarray(x)
        loss, probs = np.empty(x.shape[:-1], self.dtype), np.empty(x.shape, self.dtype)
        if not self._call(x, [x, _labels(labels), loss, probs]):
            return super().run(logits, labels)  # raises the label error
        return loss, probs


class XentGradStep(_XentKernelStep):
    """dlogits = softmax_cross_entropy_grad(dloss, probs, labels)."""

    def run(self, dloss, probs, labels):
        p, labels, dloss = np.asarray(probs), np.asarray(labels), np.asarray(dloss)
        rows = p.shape[:-1]
        ok = dloss.dtype == self.dtype and _stretches_to(dloss.shape, rows)
        if not (ok and self._takes(p, labels)):
            return super().run(dloss, probs, labels)
        p, out = np.ascontiguousarray(p), np.empty(p.shape, self.dtype)
        d = np.ascontiguousarray(np.broadcast_to(dloss, rows))
        if not self._call(p, [d, p, _labels(labels), out]):
            return super().run(dloss, probs, labels)
        return out


_FORWARD = """
static int sn_row(int64_t n, const {t} *x, int64_t label, {t} *loss, {t} *p) {{
{passes}
    if (label < 0) label += n;
    if (label < 0 || label >= n) return 1;
    *loss = {log}(({t})s) - (x[label] - m);
{normalise}
    return 0;
}}"""

_FORWARD_ENTRY = """
int sn_kernel(int64_t *a, char **ptr) {{
    const int64_t rows = a[0], n = a[1];
    const {t} *x = (const {t} *)ptr[0];
    const int64_t *labels = (const int64_t *)ptr[1];
    {t} *loss = ({t} *)ptr[2], *p = ({t} *)ptr[3];
    int bad = 0;
    #pragma omp parallel for if(rows > 1 && rows * n >= {par}) schedule(static) reduction(|:bad)
    for (int64_t r = 0; r < rows; r++) bad |= sn_row(n, x + r * n, labels[r], loss + r, p + r * n);
    return bad;
}}"""

_GRAD = """
static int sn_row(int64_t n, const {t} *p, {t} d, int64_t label, {t} *y) {{
    if (label < 0) label += n;
    if (label < 0 || label >= n) return 1;
    #pragma omp simd
    for (int64_t i = 0; i < n; i++) y[i] = p[i] * d;
    y[label] = (p[label] - 1) * d;
    return 0;
}}"""

_GRAD_ENTRY = """
int sn_kernel(int64_t *a, char **ptr) {{
    const int64_t rows = a[0], n = a[1];
    const {t} *d = (const {t} *)ptr[0], *p = (const {t} *)ptr[1];
    const int64_t *labels = (const int64_t *)ptr[2];
    {t} *y = ({t} *)ptr[3];
    int bad = 0;
    #pragma omp parallel for if(rows > 1 && rows * n >= {par}) schedule(static) reduction(|:bad)
    for (int64_t r = 0; r < rows; r++) bad |= sn_row(n, p + r * n, d[r], labels[r], y + r * n);
    return bad;
}}"""
