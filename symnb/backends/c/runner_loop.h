/* runner.c's loops (included by it, after the branches and before run_step, which a loop's
 * body calls): a scan's Repeat step binding each sequence's row, running the body's steps,
 * checking the states and keeping their values in storage taken once per call. */

/* Row ``t`` of ``a``: a view without its first axis (writeable when ``writeable`` and a is). */
static PyObject *row_of(PyArrayObject *a, npy_intp t, int writeable) {
    return view_at(a, t * PyArray_STRIDE(a, 0), PyArray_NDIM(a) - 1, PyArray_DIMS(a) + 1,
                   PyArray_STRIDES(a) + 1, writeable);
}

/* The steps to run into *n: n_steps, or (-1, when no count was given) the rows every
 * sequence has. 1 (Python runs the loop step and names the problem) when n_steps is not an
 * int or a negative count, a sequence is shorter, or there is no step to run. */
static int loop_length(Step *st, PyObject **slots, npy_intp *n) {
    npy_intp want = PyArray_PyIntAsIntp(slots[st->ins[0]]), fewest = -1;
    if (want == -1 && PyErr_Occurred()) { PyErr_Clear(); return 1; }
    if (want < 0 && st->counted) return 1;
    for (int i = 0; i < st->n_seqs; i++) {
        PyObject *seq = slots[st->ins[1 + i]];
        if (!PyArray_Check(seq) || PyArray_NDIM((PyArrayObject *)seq) < 1) return 1;
        npy_intp rows = PyArray_DIM((PyArrayObject *)seq, 0);
        if (fewest < 0 || rows < fewest) fewest = rows;
    }
    if (want >= 0 && fewest >= 0 && fewest < want) return 1;
    *n = want >= 0 ? want : fewest;
    return *n > 0 ? 0 : 1;
}

/* Storage for each state keeping its history: (n,) + its shape, from the step's pool. */
static int state_storage(Step *st, PyObject **state, PyObject **kept, npy_intp n) {
    for (int j = 0; j < st->n_states; j++) {
        if (!PyArray_Check(state[j])) return 1;
        PyArrayObject *a = (PyArrayObject *)state[j];
        if (PyArray_TYPE(a) != st->out_types[j] || PyArray_NDIM(a) >= MAXDIM) return 1;
        if (!st->history[j]) continue;
        npy_intp dims[MAXDIM];
        dims[0] = n;
        memcpy(dims + 1, PyArray_DIMS(a), PyArray_NDIM(a) * sizeof(npy_intp));
        if (!(kept[j] = pooled(st, j, PyArray_NDIM(a) + 1, dims, st->out_types[j]))) return -1;
    }
    return 0;
}

/* The body's argument slots for step t: each sequence's row, the states, the non-sequences
 * (and the constants in their slots). */
static int bind_step(Step *st, PyObject **slots, PyObject **in, PyObject **state, npy_intp t) {
    Body *b = st->body;
    int k = st->n_seqs, m = st->n_states;
    for (int i = 0; i < b->nslots; i++) in[i] = Py_XNewRef(b->constants[i]);
    for (int i = 0; i < k; i++) {
        PyArrayObject *seq = (PyArrayObject *)slots[st->ins[1 + i]];
        npy_intp row = st->backwards ? PyArray_DIM(seq, 0) - 1 - t : t;
        if (!(in[i] = row_of(seq, row, 0))) return -1;
    }
    for (int j = 0; j < m; j++) in[k + j] = Py_NewRef(state[j]);
    for (int i = k + m; i < b->nargs; i++) in[i] = Py_NewRef(slots[st->ins[1 + i]]);
    return 0;
}

/* Result j of a step into row ``at`` of its storage (a plain output's, made on the first
 * step); a state's next value is that row, or the result itself when only the last value is
 * kept. 1 when the result is not of the planned type and shape (Python runs the loop step and
 * names the problem). */
static int keep_result(Step *st, int j, PyObject *value, PyObject **state, PyObject **kept,
                       npy_intp at, npy_intp n) {
    if (value == NULL || !PyArray_Check(value)) return 1;
    PyArrayObject *v = (PyArrayObject *)value;
    int nd = PyArray_NDIM(v), is_state = j < st->n_states;
    if (PyArray_TYPE(v) != st->out_types[j] || nd >= MAXDIM) return 1;
    if (is_state) {
        PyArrayObject *before = (PyArrayObject *)state[j];
        if (!same_dims(nd, PyArray_DIMS(v), PyArray_NDIM(before), PyArray_DIMS(before))) return 1;
        if (kept[j] == NULL) {
            Py_SETREF(state[j], Py_NewRef(value));
            return 0;
        }
    } else if (kept[j] == NULL) {
        npy_intp dims[MAXDIM];
        dims[0] = n;
        memcpy(dims + 1, PyArray_DIMS(v), nd * sizeof(npy_intp));
        if (!(kept[j] = pooled(st, j, nd + 1, dims, st->out_types[j]))) return -1;
    }
    PyArrayObject *rows = (PyArrayObject *)kept[j];
    if (!same_dims(nd, PyArray_DIMS(v), PyArray_NDIM(rows) - 1, PyArray_DIMS(rows) + 1)) return 1;
    PyObject *row = row_of(rows, at, 1);
    if (row == NULL || PyArray_CopyInto((PyArrayObject *)row, v) < 0) {
        Py_XDECREF(row);
        return -1;
    }
    if (is_state) Py_SETREF(state[j], row);
    else Py_DECREF(row);
    return 0;
}

/* The loop's outputs: the rows of the steps run (all n, or the first ``done``; the last
 * ``done`` rows going backwards), a state's last value where no history is kept. */
static int loop_outputs(Step *st, PyObject **slots, PyObject **state, PyObject **kept,
                        npy_intp n, npy_intp done) {
    for (int j = 0; j < st->nout; j++) {
        PyObject *value;
        if (kept[j] == NULL) {
            value = Py_NewRef(state[j]);
        } else if (done == n) {
            value = Py_NewRef(kept[j]);
        } else {
            PyArrayObject *rows = (PyArrayObject *)kept[j];
            npy_intp dims[MAXDIM];
            memcpy(dims, PyArray_DIMS(rows), PyArray_NDIM(rows) * sizeof(npy_intp));
            dims[0] = done;
            npy_intp offset = st->backwards ? (n - done) * PyArray_STRIDE(rows, 0) : 0;
            value = view_at(rows, offset, PyArray_NDIM(rows), dims, PyArray_STRIDES(rows), 1);
            if (value == NULL) return -1;
        }
        Py_XSETREF(slots[st->outs[j]], value);
    }
    return 0;
}

static void clear_slots(PyObject **in, int n) {
    for (int i = 0; i < n; i++) Py_CLEAR(in[i]);
}

/* One step of the loop over the body's slots ``in``; *stop set when until says so. */
static int loop_step(Step *st, PyObject **slots, PyObject **in, PyObject **state,
                     PyObject **kept, npy_intp t, npy_intp n, int *stop) {
    Body *b = st->body;
    npy_intp at = st->backwards ? n - 1 - t : t;
    int rc = bind_step(st, slots, in, state, t);
    for (int i = 0; rc == 0 && i < b->nsteps; i++) rc = run_step(&b->steps[i], in);
    for (int j = 0; rc == 0 && j < st->nout; j++)
        rc = keep_result(st, j, in[b->outs[j]], state, kept, at, n);
    if (rc == 0 && st->until) {
        int truth = PyObject_IsTrue(in[b->outs[st->nout]]);
        if (truth < 0) PyErr_Clear();
        rc = truth < 0 ? 1 : 0;
        *stop = truth > 0;
    }
    clear_slots(in, b->nslots);
    return rc;
}

/* A scan: the body's steps once per step, no Python call in between (docs/loops.md). */
static int run_repeat(Step *st, PyObject **slots) {
    Body *b = st->body;
    PyObject *held[2 * MAXOUTS] = {NULL}, *stack[STACK_SLOTS];
    npy_intp n = 0, t = 0;
    int rc = loop_length(st, slots, &n), stop = 0;
    if (rc) return rc;
    /* each output's state and kept rows: on the stack, or taken for a loop of more outputs */
    PyObject **state = st->nout <= MAXOUTS ? held : PyMem_Calloc(2 * st->nout, sizeof(void *));
    PyObject **in = b->nslots <= STACK_SLOTS ? stack : PyMem_Calloc(b->nslots, sizeof(void *));
    if (in == NULL || state == NULL) {
        if (state != held) PyMem_Free(state);
        if (in != stack) PyMem_Free(in);
        PyErr_NoMemory();
        return -1;
    }
    PyObject **kept = state + st->nout;
    memset(in, 0, b->nslots * sizeof(PyObject *));
    for (int j = 0; j < st->n_states; j++) state[j] = Py_NewRef(slots[st->ins[1 + st->n_seqs + j]]);
    rc = state_storage(st, state, kept, n);
    for (; rc == 0 && t < n && !stop; t++) rc = loop_step(st, slots, in, state, kept, t, n, &stop);
    if (rc == 0) rc = loop_outputs(st, slots, state, kept, n, t);
    if (timing) st->iterations += t;
    for (int j = 0; j < st->nout; j++) {
        Py_XDECREF(state[j]);
        Py_XDECREF(kept[j]);
    }
    clear_slots(in, b->nslots);
    if (in != stack) PyMem_Free(in);
    if (state != held) PyMem_Free(state);
    return rc;
}
