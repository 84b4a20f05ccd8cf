/* symnb's C runner, continued: a plan's records (runner.py's tuples) as runner.c's structs.
 *
 * Included once by runner.c (one translation unit): it defines static functions.
 */
/* ---- building a schedule from runner.py's tuples ------------------------------------------ */

static int64_t *int64_list(PyObject *seq, int *n) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (fast == NULL) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int64_t *out = PyMem_Calloc(len ? len : 1, sizeof(int64_t));
    for (Py_ssize_t i = 0; out && i < len; i++)
        out[i] = (int64_t)PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    Py_DECREF(fast);
    if (out == NULL) { PyErr_NoMemory(); return NULL; }
    if (PyErr_Occurred()) { PyMem_Free(out); return NULL; }
    *n = (int)len;
    return out;
}

static int *int_list(PyObject *seq, int *n) {
    int64_t *wide = int64_list(seq, n);
    if (wide == NULL) return NULL;
    int *out = PyMem_Calloc(*n ? *n : 1, sizeof(int));
    for (int i = 0; out && i < *n; i++) out[i] = (int)wide[i];
    PyMem_Free(wide);
    if (out == NULL) PyErr_NoMemory();
    return out;
}

static int type_of(PyObject *dtype) {
    PyArray_Descr *descr = NULL;
    if (!PyArray_DescrConverter(dtype, &descr)) return -1;
    int t = descr->type_num;
    Py_DECREF(descr);
    return t;
}

static int *type_list(PyObject *seq, int *n) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of dtypes");
    if (fast == NULL) return NULL;
    *n = (int)PySequence_Fast_GET_SIZE(fast);
    int *out = PyMem_Calloc(*n ? *n : 1, sizeof(int));
    for (int i = 0; out && i < *n; i++)
        if ((out[i] = type_of(PySequence_Fast_GET_ITEM(fast, i))) < 0) {
            PyMem_Free(out);
            out = NULL;
        }
    Py_DECREF(fast);
    return out;
}

static void free_values(PyObject **values, int n) {
    for (int i = 0; values && i < n; i++) Py_XDECREF(values[i]);
    PyMem_Free(values);
}

static int invalid(const char *why) {
    PyErr_SetString(PyExc_ValueError, why);
    return -1;
}

/* params = (ndim, inplace, skip_empty, absent masks of the inputs then outputs, keepdims,
 * into: the slot output 0 is written into, -1 for none) */
static int parse_launch(Step *st, PyObject *target, PyObject *params) {
    PyObject *absent, *keepdims;
    int nmasks, nkeep;
    st->kind = STEP_LAUNCH;
    st->target = PyLong_AsVoidPtr(target);
    if (!PyArg_ParseTuple(params, "iiiOOi", &st->ndim, &st->inplace, &st->skip_empty, &absent,
                          &keepdims, &st->into))
        return -1;
    int64_t *masks = int64_list(absent, &nmasks);
    if (masks == NULL || !(st->keepdims = int_list(keepdims, &nkeep))) return -1;
    st->absent = (uint64_t *)masks;
    if (st->target == NULL || nmasks != st->nin + st->nout || nkeep != st->nout
        || st->ndim < 0 || st->ndim > MAXDIM || st->inplace >= st->nin || st->into < -1)
        return invalid("a launch needs a kernel, one mask per operand and ndim <= MAXDIM");
    return 0;
}

/* target = the ?gemm address (0: none found); params = (inplace, ilp64, the addresses of
 * its library's set_num_threads and get_num_threads, 0 when not found, loop_serial) */
static int parse_gemm(Step *st, PyObject *target, PyObject *params) {
    PyObject *set_threads, *get_threads;
    st->kind = STEP_GEMM;
    st->target = PyLong_AsVoidPtr(target);
    if (PyErr_Occurred()
        || !PyArg_ParseTuple(params, "iiOOi", &st->inplace, &st->ilp64, &set_threads,
                             &get_threads, &st->loop_serial))
        return -1;
    st->set_threads = (set_threads_fn)PyLong_AsVoidPtr(set_threads);
    st->get_threads = (get_threads_fn)PyLong_AsVoidPtr(get_threads);
    if (PyErr_Occurred()) return -1;
    if (st->set_threads == NULL || st->get_threads == NULL) st->set_threads = NULL;
    int t = st->out_types[0];
    if (st->nin != 5 || st->nout != 1 || (t != NPY_FLOAT32 && t != NPY_FLOAT64)
        || st->ins[GEMM_X] < 0 || st->ins[GEMM_Y] < 0)
        return invalid("a gemm step needs (z, alpha, x, y, beta) and one float output");
    return 0;
}

/* target = how; params = (axes, target dims) */
static int parse_view(Step *st, PyObject *target, PyObject *params) {
    PyObject *axes, *dims;
    st->kind = STEP_VIEW;
    st->how = (int)PyLong_AsLong(target);
    if (PyErr_Occurred() || !PyArg_ParseTuple(params, "OO", &axes, &dims)) return -1;
    if (!(st->axes = int_list(axes, &st->naxes)) || !(st->dims = int64_list(dims, &st->ndims)))
        return -1;
    /* (src, like), and for "basic" its symbolic ints after them */
    int operands_ok = st->how == VIEW_BASIC ? st->nin >= 2 : st->nin == 2;
    if (st->how < VIEW_AXES || st->how > VIEW_BASIC || !operands_ok || st->nout != 1
        || st->ins[0] < 0 || st->naxes > MAXDIM || st->ndims > MAXDIM * (MAXDIM + 2) + 1)
        return invalid("a view step needs (src, like), one output and at most MAXDIM axes");
    for (int k = 2; k < st->nin; k++)
        if (st->ins[k] < 0) return invalid("a basic view's symbolic ints need slots");
    return 0;
}

static int parse_step(PyObject *spec, Step *st);
static void free_step(Step *st);

/* A library step's params: () (its results' shapes not checked), or (the outputs' ranks,
 * their promised sizes in turn, -1 where any). */
static int parse_promise(Step *st, PyObject *params) {
    PyObject *ranks, *dims;
    int nranks = 0, ndims = 0, total = 0;
    if (PyTuple_Check(params) && PyTuple_GET_SIZE(params) == 0) return 0;
    if (!PyArg_ParseTuple(params, "OO", &ranks, &dims)) return -1;
    if (!(st->out_ndim = int_list(ranks, &nranks)) || !(st->out_dims = int64_list(dims, &ndims)))
        return -1;
    for (int k = 0; k < nranks; k++) total += st->out_ndim[k];
    if (nranks != st->nout || total != ndims)
        return invalid("a library step's promised shapes do not match its outputs");
    return 0;
}

/* A list of step records into a new array of steps. */
static int parse_step_list(PyObject *seq, Step **steps, int *n) {
    PyObject *fast = PySequence_Fast(seq, "steps: expected a sequence");
    if (fast == NULL) return -1;
    *n = (int)PySequence_Fast_GET_SIZE(fast);
    *steps = PyMem_Calloc(*n ? *n : 1, sizeof(Step));
    int rc = *steps ? 0 : -1;
    for (int i = 0; rc == 0 && i < *n; i++)
        rc = parse_step(PySequence_Fast_GET_ITEM(fast, i), &(*steps)[i]);
    Py_DECREF(fast);
    if (rc && !PyErr_Occurred()) PyErr_NoMemory();
    return rc;
}

/* params = (then steps, then results, else steps, else results, n_leaves); ins = [cond] */
static int parse_branch(Step *st, PyObject *params) {
    PyObject *steps[2], *results[2];
    st->kind = STEP_BRANCH;
    if (!PyArg_ParseTuple(params, "OOOOi", &steps[0], &results[0], &steps[1], &results[1],
                          &st->n_leaves))
        return -1;
    for (int side = 0; side < 2; side++) {
        int n = 0;
        if (parse_step_list(steps[side], &st->sub[side], &st->nsub[side])) return -1;
        if (!(st->results[side] = int_list(results[side], &n))) return -1;
        if (n != st->nout) return invalid("a branch needs one result per output on each side");
    }
    return st->nin == 1 ? 0 : invalid("a branch reads one condition");
}

static PyObject **slot_values(int nslots, PyObject *pairs);

/* A step inside a loop's body (in a branch of it too): its small products run on one thread. */
static void mark_in_loop(Step *st) {
    st->in_loop = 1;
    for (int side = 0; st->kind == STEP_BRANCH && side < 2; side++)
        for (int i = 0; i < st->nsub[side]; i++) mark_in_loop(&st->sub[side][i]);
}

/* params = (n_seqs, n_states, history, until, backwards, counted, (nargs, nslots, constants,
 * steps, outputs): the body's plan); ins = (n_steps, sequences, states, non-sequences) */
static int parse_repeat(Step *st, PyObject *params) {
    PyObject *history, *plan, *constants, *steps, *outputs;
    int nhistory = 0;
    st->kind = STEP_REPEAT;
    if (!PyArg_ParseTuple(params, "iiOiiiO", &st->n_seqs, &st->n_states, &history, &st->until,
                          &st->backwards, &st->counted, &plan)
        || !(st->history = int_list(history, &nhistory)))
        return -1;
    Body *b = st->body = PyMem_Calloc(1, sizeof(Body));
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    if (!PyArg_ParseTuple(plan, "iiOOO", &b->nargs, &b->nslots, &constants, &steps, &outputs))
        return -1;
    if (b->nslots < b->nargs || b->nargs < 0) return invalid("a loop body has too few slots");
    if (!(b->constants = slot_values(b->nslots, constants))
        || parse_step_list(steps, &b->steps, &b->nsteps)
        || !(b->outs = int_list(outputs, &b->nout)))
        return -1;
    for (int i = 0; i < b->nsteps; i++) mark_in_loop(&b->steps[i]);
    int k = st->n_seqs, m = st->n_states;
    if (k < 0 || m < 0 || m > st->nout || nhistory != m || b->nargs != st->nin - 1
        || 1 + k + m > st->nin || b->nout != st->nout + (st->until != 0))
        return invalid("a loop needs n_steps, its sequences, states and non-sequences, and a "
                       "body with one result per output");
    return 0;
}

/* One step from (kind, target, ins, outs, types, fallback or None, params, decline): decline
 * is the callable that runs the step in Python when the runner cannot (runner.c's
 * decline_step). */
static int parse_step(PyObject *spec, Step *st) {
    const char *kind;
    PyObject *target, *ins, *outs, *types, *fallback, *params, *decline;
    int ntypes = 0;
    if (!PyArg_ParseTuple(spec, "sOOOOOOO", &kind, &target, &ins, &outs, &types, &fallback,
                          &params, &decline))
        return -1;
    if (!PyCallable_Check(decline)) return invalid("a step needs a callable to decline it");
    st->decline = Py_NewRef(decline);
    if (!(st->ins = int_list(ins, &st->nin)) || !(st->outs = int_list(outs, &st->nout))
        || !(st->out_types = type_list(types, &ntypes)))
        return -1;
    if (ntypes != st->nout) return invalid("a step's output types do not match its outputs");
    /* more operands than a launch's arrays hold (a branch or a loop takes any number) */
    int wide = st->nin > MAXOPS || st->nout > MAXOUTS;
    st->pool = PyMem_Calloc(st->nout * POOL + 1, sizeof(PyObject *));
    st->next = PyMem_Calloc(st->nout + 1, sizeof(int));
    if (st->pool == NULL || st->next == NULL) { PyErr_NoMemory(); return -1; }
    if (fallback != Py_None) {
        if (!(st->fallback = PyMem_Calloc(1, sizeof(Step)))) { PyErr_NoMemory(); return -1; }
        if (parse_step(fallback, st->fallback)) return -1;
    }
    if (strcmp(kind, "library") == 0) {
        st->kind = STEP_LIBRARY;
        st->fn = Py_NewRef(target);
        return parse_promise(st, params);
    }
    if (wide && st->fallback != NULL && st->fallback->kind == STEP_LIBRARY) {
        /* a launch, gemm or view of more operands than runner.c's arrays hold (a concatenate
         * of 100 tensors): the step runs as its fallback, the rest of the plan as planned */
        Step *library = st->fallback;
        st->fallback = NULL;
        free_step(st);
        *st = *library;
        PyMem_Free(library);
        return 0;
    }
    if (strcmp(kind, "branch") == 0) return parse_branch(st, params);
    if (strcmp(kind, "loop") == 0) return parse_repeat(st, params);
    if (st->fallback == NULL || st->fallback->kind != STEP_LIBRARY)
        return invalid("a launch, gemm or view step needs a library fallback");
    if (strcmp(kind, "launch") == 0) return parse_launch(st, target, params);
    if (strcmp(kind, "gemm") == 0) return parse_gemm(st, target, params);
    if (strcmp(kind, "view") == 0) return parse_view(st, target, params);
    return invalid("unknown step kind");
}

/* Input specs from [(dtype, dims), ...]. */
static int parse_specs(Schedule *s, PyObject *specs) {
    PyObject *fast = PySequence_Fast(specs, "specs: expected a sequence");
    if (fast == NULL) return -1;
    s->nchecked = (int)PySequence_Fast_GET_SIZE(fast);
    int n = s->nchecked ? s->nchecked : 1;
    s->in_types = PyMem_Calloc(n, sizeof(int));
    s->in_ndim = PyMem_Calloc(n, sizeof(int));
    s->in_dims = PyMem_Calloc(n, sizeof(int64_t *));
    s->in_scalars = PyMem_Calloc(n, sizeof(PyObject *));
    s->in_scalar_types = PyMem_Calloc(n, sizeof(PyObject *));
    int rc = s->in_types && s->in_ndim && s->in_dims && s->in_scalars && s->in_scalar_types
             ? 0 : -1;
    for (int i = 0; rc == 0 && i < s->nchecked; i++) {
        PyObject *dtype, *dims;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "OO", &dtype, &dims)
            || (s->in_types[i] = type_of(dtype)) < 0
            || !(s->in_dims[i] = int64_list(dims, &s->in_ndim[i])) || s->in_ndim[i] > MAXDIM
            || !(s->in_scalar_types[i] = PyArray_TypeObjectFromType(s->in_types[i])))
            rc = -1;
    }
    Py_DECREF(fast);
    if (rc && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad input specs");
    return rc;
}

/* Per slot, the constant's value from (slot, value) pairs, else NULL (an array of nslots). */
static PyObject **slot_values(int nslots, PyObject *pairs) {
    PyObject **values = PyMem_Calloc(nslots ? nslots : 1, sizeof(PyObject *));
    if (values == NULL) { PyErr_NoMemory(); return NULL; }
    PyObject *fast = PySequence_Fast(pairs, "constants: expected (slot, value) pairs");
    int rc = fast ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(fast); i++) {
        int slot;
        PyObject *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iO", &slot, &value)
            || slot < 0 || slot >= nslots)
            rc = -1;
        else
            Py_XSETREF(values[slot], Py_NewRef(value));
    }
    Py_XDECREF(fast);
    if (rc == 0) return values;
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad constant slot");
    free_values(values, nslots);
    return NULL;
}

static int parse_constants(Schedule *s, PyObject *constants) {
    s->constants = slot_values(s->nslots, constants);
    return s->constants ? 0 : -1;
}

static int parse_steps(Schedule *s, PyObject *steps) {
    return parse_step_list(steps, &s->steps, &s->nsteps);
}

/* Every slot a step names exists among ``nslots`` (its outputs past the ``nargs``
 * arguments); only gemm and view operands may be absent (-1). A loop's body is checked
 * against its own slots. */
static int step_slots_ok(int nslots, int nargs, Step *st) {
    int lowest = st->kind == STEP_GEMM || st->kind == STEP_VIEW ? -1 : 0;
    for (int k = 0; k < st->nin; k++)
        if (st->ins[k] < lowest || st->ins[k] >= nslots) return 0;
    for (int k = 0; k < st->nout; k++)
        if (st->outs[k] < nargs || st->outs[k] >= nslots) return 0;
    for (int side = 0; st->kind == STEP_BRANCH && side < 2; side++) {
        for (int k = 0; k < st->nout; k++)
            if (st->results[side][k] < 0 || st->results[side][k] >= nslots) return 0;
        for (int i = 0; i < st->nsub[side]; i++)
            if (!step_slots_ok(nslots, nargs, &st->sub[side][i])) return 0;
    }
    if (st->kind == STEP_REPEAT) {
        Body *b = st->body;
        for (int k = 0; k < b->nout; k++)
            if (b->outs[k] < 0 || b->outs[k] >= b->nslots) return 0;
        for (int i = 0; i < b->nsteps; i++)
            if (!step_slots_ok(b->nslots, b->nargs, &b->steps[i])) return 0;
    }
    return st->fallback == NULL || step_slots_ok(nslots, nargs, st->fallback);
}

static int check_slots(Schedule *s) {
    int ok = s->nargs <= s->nslots && s->nchecked <= s->nargs && s->nnames <= MAXDIM * 4;
    for (int i = 0; ok && i < s->nsteps; i++)
        ok = step_slots_ok(s->nslots, s->nargs, &s->steps[i]);
    for (int i = 0; ok && i < s->nout; i++) ok = s->out_slots[i] >= 0 && s->out_slots[i] < s->nslots;
    return ok ? 0 : invalid("a slot index is out of range");
}

static void free_step(Step *st) {
    PyMem_Free(st->ins);
    PyMem_Free(st->outs);
    PyMem_Free(st->out_types);
    PyMem_Free(st->out_ndim);
    PyMem_Free(st->out_dims);
    PyMem_Free(st->absent);
    PyMem_Free(st->keepdims);
    PyMem_Free(st->axes);
    PyMem_Free(st->dims);
    Py_XDECREF(st->fn);
    Py_XDECREF(st->decline);
    for (int k = 0; st->pool && k < st->nout * POOL; k++) Py_XDECREF(st->pool[k]);
    PyMem_Free(st->pool);
    PyMem_Free(st->next);
    if (st->fallback) free_step(st->fallback);
    PyMem_Free(st->fallback);
    for (int side = 0; side < 2; side++) {
        for (int i = 0; st->sub[side] && i < st->nsub[side]; i++) free_step(&st->sub[side][i]);
        PyMem_Free(st->sub[side]);
        PyMem_Free(st->results[side]);
    }
    PyMem_Free(st->history);
    if (st->body) {
        Body *b = st->body;
        free_values(b->constants, b->nslots);
        for (int i = 0; b->steps && i < b->nsteps; i++) free_step(&b->steps[i]);
        PyMem_Free(b->steps);
        PyMem_Free(b->outs);
        PyMem_Free(b);
    }
}

