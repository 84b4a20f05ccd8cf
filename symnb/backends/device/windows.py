"""Padding and the max-pool gradient on the device (plan ``Layout`` steps "pad" and
"max_pool_grad"): two hand-written kernels, spelled in the runtime's dialect (OpenCL C or
CUDA C) and built once per runtime (``Runtime.program``).

They are not kernel descriptions (``symnb/backends/kernels``) because the description has no
way to say either: a map reads each operand at the index it writes (padding reads x at
(i - top, j - left) and writes the fill outside; a device array has no offset that a shifted
view could carry), and the max-pool gradient is a gather whose loops (the windows holding an
element, then each window's first maximum) have bounds that depend on the element.

- "pad": ``out[n, c, i, j] = x[n, c, i - top, j - left]`` inside, ``fill`` outside, for an
  x of 2 to 4 axes (the leading ones read as N = C = 1), one work-item per output element.
- "max_pool_grad": per input element, the sum of the output gradients of the windows whose
  first maximum it is, as ``MaxPool2dGrad.perform`` computes it: the windows read over the
  padded input (padding the lowest value), the first maximum np.argmax's (a NaN counts as
  the maximum), ``positive`` windows only where their maximum is above 0, and the sum taken
  in the order the reference's scatter adds (kernel row, then column), of ``hit * g`` in g's
  dtype. A gather per input element: no two work-items write one element (no races).

Each returns None where it does not apply (a dtype the device lacks, another rank, shapes
that do not match): the step's NumPy reference then runs on the host.
"""

from __future__ import annotations

import types

import numpy as np

from symnb.backends.device.runtime import DeviceArray

#: work-items per work-group, and at most this many work-groups (each item strides on)
GROUP, MAX_GROUPS = 256, 1 << 16
FLOATS = ("float32", "float64")

PAD = """{preamble}
{entry} void sn_pad({space}const int64_t *a, {space}const {T} *x, {space}{T} *out) {{
    const int64_t total = a[0], C = a[1], Hp = a[2], Wp = a[3], top = a[4], left = a[5];
    const int64_t H = a[6], W = a[7], s0 = a[8], s1 = a[9], s2 = a[10], s3 = a[11];
    for (int64_t i = {gid}; i < total; i += {gsize}) {{
        const int64_t j = i % Wp, r = i / Wp, y = r % Hp, q = r / Hp;
        const int64_t c = q % C, n = q / C, yy = y - top, xx = j - left;
        {T} v = {fill};
        if (yy >= 0 && yy < H && xx >= 0 && xx < W) v = x[n * s0 + c * s1 + yy * s2 + xx * s3];
        out[i] = v;
    }}
}}
"""

MAX_POOL_GRAD = """{preamble}
{entry} void sn_max_pool_grad({space}const int64_t *a, {space}const {T} *x,
                              {space}const {T} *g, {space}{T} *out) {{
    const int64_t total = a[0], C = a[1], H = a[2], W = a[3], OH = a[4], OW = a[5];
    const int64_t kh = a[6], kw = a[7], sh = a[8], sw = a[9], dh = a[10], dw = a[11];
    const int64_t pt = a[12], pl = a[13], positive = a[14];
    const int64_t x0 = a[15], x1 = a[16], x2 = a[17], x3 = a[18];
    const int64_t g0 = a[19], g1 = a[20], g2 = a[21], g3 = a[22];
    for (int64_t i = {gid}; i < total; i += {gsize}) {{
        const int64_t e = i % W, r = i / W, y = r % H, q = r / H, c = q % C, n = q / C;
        {space}const {T} *xs = x + n * x0 + c * x1;
        {space}const {T} *gs = g + n * g0 + c * g1;
        {T} acc = ({T})0;
        for (int64_t u = 0; u < kh; u++) {{
            const int64_t ty = y + pt - u * dh;
            if (ty < 0 || ty % sh != 0 || ty / sh >= OH) continue;
            const int64_t oy = ty / sh;
            for (int64_t v = 0; v < kw; v++) {{
                const int64_t tx = e + pl - v * dw;
                if (tx < 0 || tx % sw != 0 || tx / sw >= OW) continue;
                const int64_t ox = tx / sw;
                {T} best = {lowest};
                int64_t first = 0;
                for (int64_t k = 0; k < kh * kw; k++) {{
                    const int64_t iy = oy * sh + (k / kw) * dh - pt;
                    const int64_t ix = ox * sw + (k % kw) * dw - pl;
                    {T} value = {lowest};
                    if (iy >= 0 && iy < H && ix >= 0 && ix < W) value = xs[iy * x2 + ix * x3];
                    if (k == 0) {{
                        best = value;
                    }} else if (best == best && (value != value || value > best)) {{
                        best = value;
                        first = k;
                    }}
                }}
                const int hit = first == u * kw + v && (!positive || best > ({T})0);
                acc += (hit ? ({T})1 : ({T})0) * gs[oy * g2 + ox * g3];
            }}
        }}
        out[i] = acc;
    }}
}}
"""


def _source(template: str, runtime, dtype: np.dtype, **values) -> str:
    dialect = runtime.dialect
    probe = types.SimpleNamespace(values=(), inputs=(types.SimpleNamespace(dtype=dtype.name),))
    probe.outputs = ()
    entry = dialect.entry_signature(1).split("void")[0].strip()
    return template.format(
        preamble=dialect.preamble(probe),
        entry=entry,
        space=dialect.space,
        T=dialect.type_name(dtype.name),
        gid=dialect.global_id,
        gsize=dialect.global_size,
        **values,
    )


def source_of(runtime, how: str, dtype, fill=0.0) -> str:
    """The source of the "pad" or "max_pool_grad" kernel for ``dtype`` (``f.kernels``)."""
    dtype = np.dtype(dtype)
    if how == "pad":
        value = np.asarray(fill).astype(dtype).item()
        return _source(PAD, runtime, dtype, fill=runtime.dialect.literal(value, dtype.name))
    lowest = runtime.dialect.literal(-np.inf, dtype.name)
    return _source(MAX_POOL_GRAD, runtime, dtype, lowest=lowest)


def _launch(runtime, source: str, name: str, ints: list, arrays: list, total: int) -> None:
    kernel = runtime.program(source, name)
    size = max(1, min(GROUP, runtime.facts.max_group))
    groups = max(1, min(-(-total // size), MAX_GROUPS))
    params = runtime.ints_on_device([total, *ints])
    runtime.launch(kernel, groups, size, [params, *(a.buffer for a in arrays)])


def _elements(array: DeviceArray) -> tuple | None:
    """The array's strides in elements (None where one is not a whole element)."""
    size = array.dtype.itemsize
    if any(s % size for s in array.strides):
        return None
    return tuple(s // size for s in array.strides)


def _usable(runtime, dtype: np.dtype) -> bool:
    if dtype.kind not in "fiu" or dtype.itemsize < 4 and dtype.kind == "f":
        return False
    return runtime.float64 or dtype != np.float64


def pad(x: DeviceArray, pads: tuple, fill) -> DeviceArray | None:
    """``x`` (2 to 4 axes) with ``pads`` = ((top, bottom), (left, right)) of ``fill``
    around its last two axes, a new C-ordered array; None where the kernel does not apply."""
    runtime = x.runtime
    (top, bottom), (left, right) = pads
    if not 2 <= x.ndim <= 4 or min(top, bottom, left, right) < 0 or not _usable(runtime, x.dtype):
        return None
    lead = (1,) * (4 - x.ndim)
    strides = _elements(x)
    if strides is None:
        return None
    n, c, h, w = lead + x.shape
    s0, s1, s2, s3 = (0,) * len(lead) + strides
    shape = x.shape[:-2] + (h + top + bottom, w + left + right)
    out = runtime.empty(shape, x.dtype)
    total = out.size
    if total:
        source = source_of(runtime, "pad", x.dtype, fill)
        ints = [c, shape[-2], shape[-1], top, left, h, w, s0, s1, s2, s3]
        _launch(runtime, source, "sn_pad", ints, [x, out], total)
    return out


def max_pool_grad(x: DeviceArray, g: DeviceArray, op) -> DeviceArray | None:
    """``MaxPool2dGrad(op)`` of x (N, C, H, W) and g (N, C, out_h, out_w), a new array of x's
    shape; None where the kernel does not apply (the reference then runs, or raises)."""
    runtime = x.runtime
    if x.ndim != 4 or g.ndim != 4 or x.dtype != g.dtype or x.dtype.name not in FLOATS:
        return None
    if not _usable(runtime, x.dtype):
        return None
    axes = op._geometry()
    pads = [ax.pads(n) for ax, n in zip(axes, x.shape[2:])]
    sizes = tuple(
        (n + a + b - ax.dilation * (ax.kernel - 1) - 1) // ax.stride + 1
        for n, (a, b), ax in zip(x.shape[2:], pads, axes)
    )
    if g.shape != x.shape[:2] + sizes:
        return None  # the reference's error
    xs, gs = _elements(x), _elements(g)
    if xs is None or gs is None:
        return None
    out = runtime.empty(x.shape, x.dtype)
    if out.size and g.size:
        source = source_of(runtime, "max_pool_grad", x.dtype)
        ah, aw = axes
        ints = [
            *(x.shape[1:]),
            *sizes,
            ah.kernel,
            aw.kernel,
            ah.stride,
            aw.stride,
            ah.dilation,
            aw.dilation,
            pads[0][0],
            pads[1][0],
            int(bool(op.positive)),
            *xs,
            *gs,
        ]
        _launch(runtime, source, "sn_max_pool_grad", ints, [x, g, out], out.size)
    elif out.size:
        return None  # no windows: the reference's zeros (or its error)
    return out


def pad_layout(step, arrays: list, ints: list, dense) -> DeviceArray | None:
    """A "pad" layout step: ``params`` = (pads of the last two axes, fill)."""
    (x,), (pads, fill) = arrays, step.params
    return pad(x, pads, fill)


def max_pool_grad_layout(step, arrays: list, ints: list, dense) -> DeviceArray | None:
    """A "max_pool_grad" layout step: ``params`` = (the MaxPool2dGrad op,)."""
    (x, g), (op,) = arrays, step.params
    return max_pool_grad(x, g, op)


KERNELS = {"pad": pad_layout, "max_pool_grad": max_pool_grad_layout}
