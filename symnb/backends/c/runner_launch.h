/* runner.c's kernel launches (included by it, after the Step type, the output pool and the
 * library steps): a launch's index space from its inputs' broadcast, its outputs (a pooled
 * array, an in-place input's buffer, or the ``into`` array it writes through), the kernel
 * call without the GIL for large spaces, and a declining launch's fallback result copied
 * into its ``into`` array. */


/* For each of the nd space axes, the operand's axis on it (-1: the operand lacks it), its
 * axes right-aligned against those not in ``absent``; -1 when it has too many axes. */
static int place(int rank, uint64_t absent, int nd, int *axis_of) {
    int present = 0;
    for (int d = 0; d < nd; d++) present += !((absent >> d) & 1);
    if (rank > present) return -1;
    int skip = present - rank, i = 0;
    for (int d = 0; d < nd; d++) {
        if ((absent >> d) & 1) axis_of[d] = -1;
        else if (skip > 0) { axis_of[d] = -1; skip--; }
        else axis_of[d] = i++;
    }
    return 0;
}

/* The broadcast of the inputs over the space into shape[]; -1 when they do not broadcast. */
static int index_space(Step *st, PyObject **ops, npy_intp *shape) {
    int axis_of[MAXDIM];
    for (int d = 0; d < st->ndim; d++) shape[d] = 1;
    for (int k = 0; k < st->nin; k++) {
        if (!PyArray_Check(ops[k])) return -1;
        PyArrayObject *a = (PyArrayObject *)ops[k];
        if (place(PyArray_NDIM(a), st->absent[k], st->ndim, axis_of)) return -1;
        for (int d = 0; d < st->ndim; d++) {
            if (axis_of[d] < 0) continue;
            npy_intp got = PyArray_DIM(a, axis_of[d]);
            if (got == shape[d] || got == 1) continue;
            if (shape[d] != 1) return -1;
            shape[d] = got;
        }
    }
    return 0;
}

/* Byte strides of ``a`` over the space (0 on broadcast, length-1 and absent axes). */
static int64_t *strides_into(int64_t *at, PyArrayObject *a, uint64_t absent, int nd) {
    int axis_of[MAXDIM];
    place(PyArray_NDIM(a), absent, nd, axis_of);
    for (int d = 0; d < nd; d++) {
        int i = axis_of[d];
        at[d] = i < 0 || PyArray_DIM(a, i) == 1 ? 0 : PyArray_STRIDE(a, i);
    }
    if (nd == 0) at[0] = 0;
    return at + (nd ? nd : 1);
}

/* Output k's dims over the space: without its absent axes (length 1 when it keeps them). */
static int output_dims(Step *st, int k, const npy_intp *space, npy_intp *dims) {
    uint64_t absent = st->absent[st->nin + k];
    int n = 0;
    for (int d = 0; d < st->ndim; d++) {
        if (!((absent >> d) & 1)) dims[n++] = space[d];
        else if (st->keepdims[k]) dims[n++] = 1;
    }
    return n;
}

/* Whether the ``into`` array can take output 0 (any strides: the kernel follows them). */
static int into_fits(Step *st, PyObject *t, const npy_intp *space) {
    npy_intp dims[MAXDIM];
    int n = output_dims(st, 0, space, dims);
    return t != NULL && PyArray_Check(t)
           && has_shape((PyArrayObject *)t, n, dims, st->out_types[0]);
}

/* Output k: the ``into`` array, input ``inplace``'s buffer when it can take output 0, else
 * a pooled array of the space's shape without the output's absent axes. */
static PyObject *launch_output(Step *st, int k, PyObject **ops, PyObject **slots,
                               const npy_intp *space) {
    npy_intp dims[MAXDIM];
    int n = output_dims(st, k, space, dims);
    if (k == 0 && st->into >= 0) return Py_NewRef(slots[st->into]);
    if (k == 0 && st->inplace >= 0) {
        PyArrayObject *t = (PyArrayObject *)ops[st->inplace];
        if (can_hold(t, n, dims, st->out_types[0])) return Py_NewRef((PyObject *)t);
    }
    return pooled(st, k, n, dims, st->out_types[k]);
}

/* Calls the kernel, without the GIL for large spaces; nonzero when it declined. */
static int call_kernel(Step *st, int64_t *args, char **ptrs, npy_intp size) {
    sn_kernel_fn fn = (sn_kernel_fn)st->target;
    int rc;
    if (size >= RELEASE_GIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        rc = fn(args, ptrs);
        Py_END_ALLOW_THREADS
    } else {
        rc = fn(args, ptrs);
    }
    return rc;
}

/* a = [nd (>= 1), shape, strides of each input then output, each output's element count]. */
static int run_launch(Step *st, PyObject **slots) {
    PyObject *ops[MAXOPS], *outs[MAXOUTS];
    npy_intp space[MAXDIM], size = 1;
    int64_t args[1 + MAXDIM + (MAXOPS + MAXOUTS) * MAXDIM + MAXOUTS];
    char *ptrs[MAXOPS + MAXOUTS];
    int nd = st->ndim;
    for (int k = 0; k < st->nin; k++) ops[k] = slots[st->ins[k]];
    if (index_space(st, ops, space)) return FALLBACK;
    for (int d = 0; d < nd; d++) size *= space[d];
    if (size == 0 && !st->skip_empty) return FALLBACK;
    if (st->into >= 0 && !into_fits(st, slots[st->into], space)) return FALLBACK;
    args[0] = nd ? nd : 1;
    args[1] = 1;
    for (int d = 0; d < nd; d++) args[1 + d] = space[d];
    int64_t *at = args + 1 + args[0];
    for (int k = 0; k < st->nin; k++) {
        at = strides_into(at, (PyArrayObject *)ops[k], st->absent[k], nd);
        ptrs[k] = PyArray_BYTES((PyArrayObject *)ops[k]);
    }
    for (int k = 0; k < st->nout; k++) {
        outs[k] = launch_output(st, k, ops, slots, space);
        if (outs[k] == NULL) {
            while (k--) Py_DECREF(outs[k]);
            return -1;
        }
        uint64_t absent = st->keepdims[k] ? 0 : st->absent[st->nin + k];
        at = strides_into(at, (PyArrayObject *)outs[k], absent, nd);
        ptrs[st->nin + k] = PyArray_BYTES((PyArrayObject *)outs[k]);
    }
    for (int k = 0; k < st->nout; k++) *at++ = PyArray_SIZE((PyArrayObject *)outs[k]);
    if (size && call_kernel(st, args, ptrs, size)) {
        for (int k = 0; k < st->nout; k++) Py_DECREF(outs[k]);
        return FALLBACK;
    }
    for (int k = 0; k < st->nout; k++) Py_XSETREF(slots[st->outs[k]], outs[k]);
    return 0;
}

/* A launch's fallback result copied into its ``into`` array, which then holds output 0 as
 * when the kernel ran; 1 (Python then runs the step and raises the error) when it cannot
 * take it. */
static int fill_into(Step *st, PyObject **slots) {
    PyObject *dst = slots[st->into], *src = slots[st->outs[0]];
    if (dst == src) return 0;
    if (!PyArray_Check(dst) || !PyArray_Check(src)) return 1;
    PyArrayObject *d = (PyArrayObject *)dst, *s = (PyArrayObject *)src;
    if (!has_shape(d, PyArray_NDIM(s), PyArray_DIMS(s), PyArray_TYPE(s))) return 1;
    /* the plan's own view of storage made in the call: written as the kernel would */
    int readonly = !PyArray_ISWRITEABLE(d);
    if (readonly) PyArray_ENABLEFLAGS(d, NPY_ARRAY_WRITEABLE);
    int rc = PyArray_CopyInto(d, s);
    if (readonly) PyArray_CLEARFLAGS(d, NPY_ARRAY_WRITEABLE);
    if (rc < 0) return -1;
    Py_XSETREF(slots[st->outs[0]], Py_NewRef(dst));
    return 0;
}
