/* runner.c's views (included by it after the launches and products): a View step's new
 * array over its source's memory (axes moved, broadcast, reshaped, windows, strided), in C
 * with NumPy's C API; a view that cannot be made as planned runs its fallback. */

/* A view of ``src`` with these dims and strides (writeable only when ``writeable`` and src
 * is); it keeps src alive. */
static PyObject *view_at(PyArrayObject *src, npy_intp offset, int nd, npy_intp *dims,
                         npy_intp *strides, int writeable) {
    PyArray_Descr *descr = PyArray_DESCR(src);
    Py_INCREF(descr);
    int flags = writeable && PyArray_ISWRITEABLE(src) ? NPY_ARRAY_WRITEABLE : 0;
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides,
                                          PyArray_BYTES(src) + offset, flags, NULL);
    if (view != NULL && PyArray_SetBaseObject((PyArrayObject *)view, Py_NewRef(src)) < 0)
        Py_CLEAR(view);
    return view;
}

static PyObject *view_of(PyArrayObject *src, int nd, npy_intp *dims, npy_intp *strides,
                         int writeable) {
    return view_at(src, 0, nd, dims, strides, writeable);
}

/* Out axis i is input axis axes[i] (-1: a new length-1 axis); dropped axes have length 1. */
static PyObject *view_axes(Step *st, PyArrayObject *src) {
    npy_intp dims[MAXDIM], strides[MAXDIM];
    uint64_t kept = 0;
    for (int i = 0; i < st->naxes; i++) {
        int a = st->axes[i];
        if (a >= PyArray_NDIM(src)) return NULL;
        dims[i] = a < 0 ? 1 : PyArray_DIM(src, a);
        strides[i] = a < 0 ? 0 : PyArray_STRIDE(src, a);
        if (a >= 0) kept |= (uint64_t)1 << a;
    }
    for (int d = 0; d < PyArray_NDIM(src); d++)
        if (!((kept >> d) & 1) && PyArray_DIM(src, d) != 1) return NULL;
    return view_of(src, st->naxes, dims, strides, 1);
}

/* Every window of a 4-d src's last two axes, without a copy: the canonical axes (N, C, out_h,
 * out_w, kh, kw) in the order ``axes`` gives; dims = (kh, kw, sh, sw, dh, dw, top, left), the
 * first window starting at row top, column left. Read-only. */
static PyObject *view_windows(Step *st, PyArrayObject *src) {
    const int64_t *g = st->dims;
    if (PyArray_NDIM(src) != 4 || st->ndims != 8 || st->naxes != 6) return NULL;
    npy_intp dims[6], strides[6], out_dims[6], out_strides[6], offset = 0;
    for (int a = 0; a < 2; a++) {
        npy_intp size = PyArray_DIM(src, 2 + a) - g[6 + a], span = g[4 + a] * (g[a] - 1) + 1;
        if (g[6 + a] < 0 || size < span) return NULL;
        offset += g[6 + a] * PyArray_STRIDE(src, 2 + a);
        dims[2 + a] = (size - span) / g[2 + a] + 1;
        strides[2 + a] = PyArray_STRIDE(src, 2 + a) * g[2 + a];
        dims[4 + a] = g[a];
        strides[4 + a] = PyArray_STRIDE(src, 2 + a) * g[4 + a];
        dims[a] = PyArray_DIM(src, a);
        strides[a] = PyArray_STRIDE(src, a);
    }
    for (int i = 0; i < 6; i++) {
        if (st->axes[i] < 0 || st->axes[i] > 5) return NULL;
        out_dims[i] = dims[st->axes[i]];
        out_strides[i] = strides[st->axes[i]];
    }
    return view_at(src, offset, 6, out_dims, out_strides, 0);
}

/* The bytes [low, high) an array of these dims and strides touches from its first element. */
static void span(int nd, const npy_intp *dims, const npy_intp *strides, npy_intp item,
                 npy_intp *low, npy_intp *high) {
    *low = 0, *high = item;
    for (int d = 0; d < nd; d++) {
        if (strides[d] < 0) *low += (dims[d] - 1) * strides[d];
        else *high += (dims[d] - 1) * strides[d];
    }
}

/* Any strides over src, read-only: dims = (nd, dims[nd], coefficients[nd][src ndim],
 * offsets[src ndim]); out axis k has stride sum_a coefficients[k][a] * src stride a, a dim < 0
 * is like's axis -(dim + 2), and the view starts at sum_a offsets[a] * src stride a. NULL when
 * it would reach outside the bytes src spans (col2im's shifted reads, pools' window elements;
 * see convolution.py). */
static PyObject *view_strided(Step *st, PyArrayObject *src, PyObject *like) {
    const int64_t *t = st->dims;
    int m = PyArray_NDIM(src), nd = st->ndims > 0 ? (int)t[0] : -1;
    if (nd < 0 || nd > MAXDIM || st->ndims != 1 + nd + nd * m + m) return NULL;
    npy_intp dims[MAXDIM], strides[MAXDIM], offset = 0, low, high, src_low, src_high;
    int empty = 0;
    for (int a = 0; a < m; a++) offset += t[1 + nd + nd * m + a] * PyArray_STRIDE(src, a);
    for (int k = 0; k < nd; k++) {
        int64_t d = t[1 + k];
        if (d < 0 && (like == NULL || !PyArray_Check(like)
                      || -d - 2 >= PyArray_NDIM((PyArrayObject *)like)))
            return NULL;
        dims[k] = d >= 0 ? d : PyArray_DIM((PyArrayObject *)like, (int)(-d - 2));
        strides[k] = 0;
        for (int a = 0; a < m; a++) strides[k] += t[1 + nd + k * m + a] * PyArray_STRIDE(src, a);
        empty |= dims[k] == 0;
    }
    if (empty) return view_at(src, 0, nd, dims, strides, 0);
    npy_intp item = PyArray_ITEMSIZE(src);
    span(nd, dims, strides, item, &low, &high);
    span(m, PyArray_DIMS(src), PyArray_STRIDES(src), item, &src_low, &src_high);
    if (PyArray_SIZE(src) == 0 || offset + low < src_low || offset + high > src_high) return NULL;
    return view_at(src, offset, nd, dims, strides, 0);
}

/* src broadcast to like's shape, read-only. */
static PyObject *view_broadcast(PyArrayObject *src, PyObject *like) {
    if (like == NULL || !PyArray_Check(like)) return NULL;
    PyArrayObject *l = (PyArrayObject *)like;
    int nd = PyArray_NDIM(l), pad = nd - PyArray_NDIM(src);
    npy_intp strides[MAXDIM];
    if (pad < 0) return NULL;
    for (int d = 0; d < nd; d++) {
        npy_intp got = d < pad ? 1 : PyArray_DIM(src, d - pad);
        if (got != 1 && got != PyArray_DIM(l, d)) return NULL;
        strides[d] = got == 1 ? 0 : PyArray_STRIDE(src, d - pad);
    }
    return view_of(src, nd, PyArray_DIMS(l), strides, 0);
}

/* src, read-only, where like has its shape (a SumToLike that sums nothing: the gradient of a
 * bias added to a batch whose sizes were unknown when compiling); else the fallback sums. */
static PyObject *view_same_shape(PyArrayObject *src, PyObject *like) {
    if (like == NULL || !PyArray_Check(like)) return NULL;
    PyArrayObject *l = (PyArrayObject *)like;
    int nd = PyArray_NDIM(l);
    if (nd != PyArray_NDIM(src) || !PyArray_CompareLists(PyArray_DIMS(l), PyArray_DIMS(src), nd))
        return NULL;
    return view_of(src, nd, PyArray_DIMS(src), PyArray_STRIDES(src), 0);
}

/* The dims a reshape asks for with its -1 filled into dims[]; -1 when they do not fit. */
static int reshape_dims(Step *st, PyArrayObject *src, PyObject *like, npy_intp *dims) {
    int nd = st->ndims, fill = -1;
    npy_intp known = 1;
    if (like != NULL) {
        if (!PyArray_Check(like)) return -1;
        nd = PyArray_NDIM((PyArrayObject *)like);
        memcpy(dims, PyArray_DIMS((PyArrayObject *)like), nd * sizeof(npy_intp));
    }
    for (int i = 0; like == NULL && i < nd; i++) {
        int64_t t = st->dims[i];
        if (t <= -2 && -t - 2 >= PyArray_NDIM(src)) return -1;
        dims[i] = t <= -2 ? PyArray_DIM(src, -t - 2) : t;
    }
    for (int i = 0; i < nd; i++) {
        if (dims[i] == -1) fill = i;
        else known *= dims[i];
    }
    if (fill >= 0) {
        if (known == 0 || PyArray_SIZE(src) % known) return -1;
        dims[fill] = PyArray_SIZE(src) / known;
        known *= dims[fill];
    }
    return known == PyArray_SIZE(src) ? nd : -1;
}

static PyObject *view_reshape(Step *st, PyArrayObject *src, PyObject *like) {
    npy_intp dims[MAXDIM];
    int nd = reshape_dims(st, src, like, dims);
    if (nd < 0 || !PyArray_IS_C_CONTIGUOUS(src)) return NULL;
    PyArray_Dims shape = {dims, nd};
    PyObject *view = PyArray_Newshape(src, &shape, NPY_CORDER);
    if (view == NULL) PyErr_Clear();
    return view;
}

/* The int64 element count of src over the counted axes, as a 0-d array. */
static PyObject *view_size(Step *st, PyArrayObject *src) {
    int64_t n = 1;
    for (int i = 0; i < st->naxes; i++) {
        if (st->axes[i] >= PyArray_NDIM(src)) return NULL;
        n *= PyArray_DIM(src, st->axes[i]);
    }
    PyObject *out = PyArray_SimpleNew(0, NULL, NPY_INT64);
    if (out != NULL) *(int64_t *)PyArray_DATA((PyArrayObject *)out) = n;
    else PyErr_Clear();
    return out;
}

/* src's dims as an int64 vector (Shape: ``x.shape[0]``, the zeros a gradient allocates). */
static PyObject *view_shape(PyArrayObject *src) {
    npy_intp nd = PyArray_NDIM(src);
    PyObject *out = PyArray_SimpleNew(1, &nd, NPY_INT64);
    if (out == NULL) {
        PyErr_Clear();
        return NULL;
    }
    for (npy_intp d = 0; d < nd; d++)
        ((int64_t *)PyArray_DATA((PyArrayObject *)out))[d] = PyArray_DIM(src, (int)d);
    return out;
}

/* The int in a 0-d integer array, into *out; 1 for anything else (the fallback runs). */
static int bound_value(PyObject *value, npy_intp *out) {
    if (!PyArray_Check(value)) return 1;
    PyArrayObject *a = (PyArrayObject *)value;
    if (PyArray_NDIM(a) != 0) return 1;
    const void *p = PyArray_DATA(a);
    switch (PyArray_TYPE(a)) {
    case NPY_INT64: *out = (npy_intp) * (const int64_t *)p; return 0;
    case NPY_INT32: *out = *(const int32_t *)p; return 0;
    case NPY_INT16: *out = *(const int16_t *)p; return 0;
    case NPY_INT8: *out = *(const int8_t *)p; return 0;
    case NPY_UINT32: *out = (npy_intp) * (const uint32_t *)p; return 0;
    case NPY_UINT16: *out = *(const uint16_t *)p; return 0;
    case NPY_UINT8: *out = *(const uint8_t *)p; return 0;
    case NPY_UINT64: {
        uint64_t v = *(const uint64_t *)p;
        if (v > (uint64_t)PY_SSIZE_T_MAX) return 1;
        *out = (npy_intp)v;
        return 0;
    }
    default: return 1;
    }
}

/* src[index], read-only, for Subtensor's basic index: per entry of st->dims (kind, start,
 * stop, step, mask) as plan.py's basic_index writes it (kind 0 a new axis, 1 an int, 2 a
 * slice; mask bit k a None, bit k + 3 a symbolic value read from the 0-d array in slot
 * ins[2 + value]); the axes the index does not reach are kept. NULL where NumPy raises (an
 * int out of range, a zero step: the fallback raises it, naming the node). */
static PyObject *view_basic(Step *st, PyArrayObject *src, PyObject **slots) {
    npy_intp dims[MAXDIM], strides[MAXDIM], offset = 0;
    int nd = 0, axis = 0, m = PyArray_NDIM(src);
    if (st->ndims % 5) return NULL;
    for (const int64_t *e = st->dims; e < st->dims + st->ndims; e += 5) {
        int64_t mask = e[4];
        npy_intp v[3];
        for (int k = 0; k < 3; k++) {
            v[k] = (npy_intp)e[1 + k];
            if (!((mask >> (k + 3)) & 1)) continue;
            if (e[1 + k] < 0 || e[1 + k] >= st->nin - 2
                || bound_value(slots[st->ins[2 + e[1 + k]]], &v[k]))
                return NULL;
        }
        if (e[0] != 0 && axis == m) return NULL;
        if (e[0] == 1) { /* an int: the axis goes */
            npy_intp size = PyArray_DIM(src, axis), at = v[0] < 0 ? v[0] + size : v[0];
            if (at < 0 || at >= size) return NULL;
            offset += at * PyArray_STRIDE(src, axis++);
            continue;
        }
        if (nd == MAXDIM) return NULL;
        if (e[0] == 0) { /* a new axis of length 1 */
            dims[nd] = 1, strides[nd++] = 0;
            continue;
        }
        Py_ssize_t step = mask & 4 ? 1 : v[2];
        if (step == 0) return NULL;
        if (step < -PY_SSIZE_T_MAX) step = -PY_SSIZE_T_MAX; /* as Python's slices clamp it */
        Py_ssize_t start = mask & 1 ? (step < 0 ? PY_SSIZE_T_MAX : 0) : v[0];
        Py_ssize_t stop = mask & 2 ? (step < 0 ? PY_SSIZE_T_MIN : PY_SSIZE_T_MAX) : v[1];
        npy_intp stride = PyArray_STRIDE(src, axis), length =
            PySlice_AdjustIndices(PyArray_DIM(src, axis++), &start, &stop, step);
        if (length > 0) offset += start * stride;
        dims[nd] = length, strides[nd++] = length > 1 ? step * stride : stride;
    }
    for (; axis < m; axis++) {
        if (nd == MAXDIM) return NULL;
        dims[nd] = PyArray_DIM(src, axis), strides[nd++] = PyArray_STRIDE(src, axis);
    }
    return view_at(src, offset, nd, dims, strides, 0);
}

static int run_view(Step *st, PyObject **slots) {
    PyObject *src = slots[st->ins[0]], *like = st->ins[1] >= 0 ? slots[st->ins[1]] : NULL;
    if (!PyArray_Check(src)) return FALLBACK;
    PyArrayObject *a = (PyArrayObject *)src;
    PyObject *out = st->how == VIEW_AXES        ? view_axes(st, a)
                    : st->how == VIEW_BROADCAST ? view_broadcast(a, like)
                    : st->how == VIEW_RESHAPE   ? view_reshape(st, a, like)
                    : st->how == VIEW_WINDOWS   ? view_windows(st, a)
                    : st->how == VIEW_STRIDED   ? view_strided(st, a, like)
                    : st->how == VIEW_SAME_SHAPE ? view_same_shape(a, like)
                    : st->how == VIEW_SHAPE     ? view_shape(a)
                    : st->how == VIEW_BASIC     ? view_basic(st, a, slots)
                                                : view_size(st, a);
    if (out == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
        PyErr_Clear();
        return FALLBACK;
    }
    Py_XSETREF(slots[st->outs[0]], out);
    return 0;
}
