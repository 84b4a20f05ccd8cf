/* symnb's C runner: one call of a compiled function, from its arguments to its outputs.
 *
 * A Schedule holds what symnb/backends/c/linker.py planned: the inputs' dtypes and dims, the
 * constants' slots, and the steps. A kernel step ("map" for elementwise, "reduce") is called
 * here directly through its function pointer; any other step ("py": BLAS, library calls,
 * row kernels) through its Python ``run(*arrays)``. Calling the schedule checks the arguments
 * once, runs every step and returns the outputs as a tuple.
 *
 * Whenever anything is not as planned (an argument of another type or shape, a broadcast that
 * does not fit, a kernel declining a layout, an empty reduction, an exception in a Python step)
 * the call returns None and the Python runtime runs the call again: it converts what can be
 * converted and raises the error that names the input or the node and the user's line. Steps
 * have no side effects on the arguments (in-place steps only write buffers made in the call),
 * so running again is safe.
 *
 * Output buffers are kept between calls, up to POOL per step, and one is reused only when the
 * runner holds its only reference: an array the caller still holds, or a view of it, is never
 * written again. So a loop that drops its results allocates nothing and page-faults nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#define MAXDIM 32       /* more dims than this: the Python runtime runs the call */
#define POOL 2          /* output buffers kept per step */
#define MAXOPS 64       /* operands of one kernel step */
#define STACK_SLOTS 256 /* schedules with more slots allocate their slot array per call */
#define RELEASE_GIL_MIN (1 << 16) /* elements above which a kernel runs without the GIL */

typedef int (*sn_kernel_fn)(int64_t *a, char **ptr);

enum { STEP_MAP = 0, STEP_REDUCE = 1, STEP_PY = 2 };

typedef struct {
    int kind;
    sn_kernel_fn fn;
    int nin, nout;
    int *ins, *outs;         /* slot indices */
    int *out_types;          /* NumPy type numbers of the outputs */
    int inplace;             /* map: the operand whose buffer may take the result, or -1 */
    uint64_t axes;           /* reduce: bit i set when axis i is reduced */
    int keepdims;            /* reduce */
    PyObject *run;           /* py: run(*arrays) */
    PyObject *pool[POOL];    /* map/reduce: output buffers kept between calls */
    int next;                /* the pool entry to replace next when every entry is in use */
} Step;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t nargs;        /* arguments of a call: the inputs, then the shared values */
    int nchecked;            /* the first nchecked arguments are checked against a spec */
    int *in_types, *in_ndim; /* per checked input */
    int64_t **in_dims;       /* >= 0 fixed, -1 any, <= -2 the named dim number -(d+2) */
    int nnames;
    int nslots;
    PyObject **constants;    /* per slot: a constant's array or NULL */
    int nsteps;
    Step *steps;
    int nout;
    int *out_slots;
    Py_ssize_t runs, declined; /* calls run here, and calls handed back (returned None) */
} Schedule;

/* ---- one call ------------------------------------------------------------------------- */

/* The argument as an array of the planned type, shape and named dims (a new reference), or
 * NULL with no error set when it is not one. */
static PyObject *checked_input(Schedule *s, int i, PyObject *arg, int64_t *names) {
    PyObject *array;
    if (PyArray_CheckExact(arg)) {
        Py_INCREF(arg);
        array = arg;
    } else if (PyArray_IsScalar(arg, Generic) && s->in_ndim[i] == 0) {
        array = PyArray_FromScalar(arg, NULL);
        if (array == NULL) { PyErr_Clear(); return NULL; }
    } else {
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)array;
    int ok = PyArray_TYPE(a) == s->in_types[i] && PyArray_ISNOTSWAPPED(a)
             && PyArray_NDIM(a) == s->in_ndim[i];
    for (int d = 0; ok && d < s->in_ndim[i]; d++) {
        int64_t want = s->in_dims[i][d], got = PyArray_DIM(a, d);
        if (want >= 0) ok = want == got;
        else if (want <= -2) {
            int64_t *seen = &names[-want - 2];
            if (*seen < 0) *seen = got;
            ok = *seen == got;
        }
    }
    if (!ok) { Py_DECREF(array); return NULL; }
    return array;
}

/* NumPy's broadcast of the operands' shapes into shape[]; -1 when they do not broadcast or
 * have too many dims. */
static int broadcast(PyArrayObject **ops, int n, npy_intp *shape) {
    int nd = 0;
    for (int k = 0; k < n; k++) nd = PyArray_NDIM(ops[k]) > nd ? PyArray_NDIM(ops[k]) : nd;
    if (nd > MAXDIM) return -1;
    for (int d = 0; d < nd; d++) shape[d] = 1;
    for (int k = 0; k < n; k++) {
        int pad = nd - PyArray_NDIM(ops[k]);
        for (int d = 0; d < PyArray_NDIM(ops[k]); d++) {
            npy_intp got = PyArray_DIM(ops[k], d), *have = &shape[pad + d];
            if (got == *have || got == 1) continue;
            if (*have != 1) return -1;
            *have = got;
        }
    }
    return nd;
}

/* Byte strides of ``a`` over an ``nd``-dim index space (0 on broadcast axes) into out[]. */
static void strides_over(PyArrayObject *a, int nd, int64_t *out) {
    int pad = nd - PyArray_NDIM(a);
    for (int d = 0; d < pad; d++) out[d] = 0;
    for (int d = 0; d < PyArray_NDIM(a); d++)
        out[pad + d] = PyArray_DIM(a, d) == 1 ? 0 : PyArray_STRIDE(a, d);
}

/* A C-ordered array of this shape and type from the step's pool (a new reference). */
static PyObject *pooled(Step *step, int nd, const npy_intp *shape, int type) {
    int free_slot = -1;
    for (int i = 0; i < POOL; i++) {
        PyObject *b = step->pool[i];
        if (b == NULL) { if (free_slot < 0) free_slot = i; continue; }
        if (Py_REFCNT(b) != 1) continue;
        PyArrayObject *a = (PyArrayObject *)b;
        if (PyArray_NDIM(a) == nd && PyArray_TYPE(a) == type
            && memcmp(PyArray_DIMS(a), shape, nd * sizeof(npy_intp)) == 0) {
            Py_INCREF(b);
            return b;
        }
        if (free_slot < 0) free_slot = i;
    }
    PyObject *fresh = PyArray_SimpleNew(nd, (npy_intp *)shape, type);
    if (fresh == NULL) return NULL;
    int i = free_slot >= 0 ? free_slot : step->next;
    step->next = (i + 1) % POOL;
    Py_XSETREF(step->pool[i], fresh);
    Py_INCREF(fresh);
    return fresh;
}

/* The in-place operand when it can hold the result, else a pooled buffer. */
static PyObject *map_output(Step *step, PyArrayObject **ops, int nd, const npy_intp *shape) {
    if (step->inplace >= 0) {
        PyArrayObject *t = ops[step->inplace];
        if (PyArray_NDIM(t) == nd && PyArray_TYPE(t) == step->out_types[0]
            && PyArray_ISWRITEABLE(t) && PyArray_IS_C_CONTIGUOUS(t)
            && memcmp(PyArray_DIMS(t), shape, nd * sizeof(npy_intp)) == 0) {
            Py_INCREF(t);
            return (PyObject *)t;
        }
    }
    return pooled(step, nd, shape, step->out_types[0]);
}

/* Calls the kernel; 1 when it declined the layout. */
static int call_kernel(Step *step, int64_t *args, char **ptrs, npy_intp size) {
    int rc;
    if (size >= RELEASE_GIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        rc = step->fn(args, ptrs);
        Py_END_ALLOW_THREADS
    } else {
        rc = step->fn(args, ptrs);
    }
    return rc != 0;
}

/* Index-space header of the kernel arguments: ndim (at least 1) then the shape. */
static int64_t *space_args(int64_t *args, int nd, const npy_intp *shape, npy_intp *size) {
    args[0] = nd ? nd : 1;
    *size = 1;
    for (int d = 0; d < nd; d++) { args[1 + d] = shape[d]; *size *= shape[d]; }
    if (nd == 0) args[1] = 1;
    return args + 1 + args[0];
}

/* Operand strides over the space, for each of the step's inputs. */
static int64_t *input_args(int64_t *at, PyArrayObject **ops, int n, int nd, char **ptrs) {
    int space = nd ? nd : 1;
    for (int k = 0; k < n; k++) {
        if (nd) strides_over(ops[k], nd, at);
        else at[0] = 0;
        ptrs[k] = PyArray_BYTES(ops[k]);
        at += space;
    }
    return at;
}

static int run_map(Step *step, PyObject **slots) {
    PyArrayObject *ops[MAXOPS];
    npy_intp shape[MAXDIM], size;
    int64_t args[1 + MAXDIM + (MAXOPS + 1) * MAXDIM + 1];
    char *ptrs[MAXOPS + 1];
    for (int k = 0; k < step->nin; k++) ops[k] = (PyArrayObject *)slots[step->ins[k]];
    int nd = broadcast(ops, step->nin, shape);
    if (nd < 0) return 1;
    int64_t *at = input_args(space_args(args, nd, shape, &size), ops, step->nin, nd, ptrs);
    PyObject *out = map_output(step, ops, nd, shape);
    if (out == NULL) return -1;
    if (nd) strides_over((PyArrayObject *)out, nd, at);
    else at[0] = 0;
    ptrs[step->nin] = PyArray_BYTES((PyArrayObject *)out);
    if (size && call_kernel(step, args, ptrs, size)) { Py_DECREF(out); return 1; }
    slots[step->outs[0]] = out;
    return 0;
}

static int run_reduce(Step *step, PyObject **slots) {
    PyArrayObject *ops[MAXOPS];
    npy_intp shape[MAXDIM], kept[MAXDIM], size;
    int64_t args[1 + MAXDIM + (MAXOPS + 1) * MAXDIM + 2];
    char *ptrs[MAXOPS + 1];
    for (int k = 0; k < step->nin; k++) ops[k] = (PyArrayObject *)slots[step->ins[k]];
    int nd = broadcast(ops, step->nin, shape);
    if (nd < 0 || nd >= 64) return 1;
    for (int d = 0; d < nd; d++) {
        if (shape[d] == 0) return 1; /* NumPy decides what an empty reduction gives */
        kept[d] = (step->axes >> d) & 1 ? 1 : shape[d];
    }
    int64_t *at = input_args(space_args(args, nd, shape, &size), ops, step->nin, nd, ptrs);
    PyObject *out = pooled(step, nd, kept, step->out_types[0]);
    if (out == NULL) return -1;
    PyArrayObject *o = (PyArrayObject *)out;
    for (int d = 0; d < nd; d++) at[d] = (step->axes >> d) & 1 ? 0 : PyArray_STRIDE(o, d);
    if (nd == 0) at[0] = 0;
    at[nd ? nd : 1] = PyArray_SIZE(o);
    ptrs[step->nin] = PyArray_BYTES(o);
    if (call_kernel(step, args, ptrs, size)) { Py_DECREF(out); return 1; }
    if (!step->keepdims) {
        npy_intp dims[MAXDIM];
        int n = 0;
        for (int d = 0; d < nd; d++) if (!((step->axes >> d) & 1)) dims[n++] = shape[d];
        PyArray_Dims newshape = {dims, n};
        PyObject *view = PyArray_Newshape(o, &newshape, NPY_CORDER);
        Py_DECREF(out);
        if (view == NULL) return -1;
        out = view;
    }
    slots[step->outs[0]] = out;
    return 0;
}

/* ``value`` as an array of the planned type into the slot; 1 when it is not one. */
static int store_result(Step *step, PyObject **slots, int k, PyObject *value) {
    PyObject *array = PyArray_FROM_O(value);
    if (array == NULL) { PyErr_Clear(); return 1; }
    if (PyArray_TYPE((PyArrayObject *)array) != step->out_types[k]) {
        Py_DECREF(array);
        return 1;
    }
    slots[step->outs[k]] = array;
    return 0;
}

static int run_py(Step *step, PyObject **slots) {
    PyObject *args[MAXOPS];
    for (int k = 0; k < step->nin; k++) args[k] = slots[step->ins[k]];
    PyObject *result = PyObject_Vectorcall(step->run, args, step->nin, NULL);
    if (result == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1; /* KeyboardInterrupt... */
        PyErr_Clear();
        return 1;
    }
    int rc = 0;
    if (step->nout == 1) {
        rc = store_result(step, slots, 0, result);
    } else if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != step->nout) {
        rc = 1;
    } else {
        for (int k = 0; k < step->nout && !rc; k++)
            rc = store_result(step, slots, k, PyTuple_GET_ITEM(result, k));
    }
    Py_DECREF(result);
    return rc;
}

/* Runs every step over ``slots``: 0 done, 1 not as planned, -1 an error is set. */
static int run_steps(Schedule *s, PyObject **slots) {
    for (int i = 0; i < s->nsteps; i++) {
        Step *step = &s->steps[i];
        int rc = step->kind == STEP_MAP      ? run_map(step, slots)
                 : step->kind == STEP_REDUCE ? run_reduce(step, slots)
                                             : run_py(step, slots);
        if (rc) return rc;
    }
    return 0;
}

/* Fills the argument slots: 0 done, 1 an argument is not as planned. */
static int bind_arguments(Schedule *s, PyObject *const *args, PyObject **slots) {
    int64_t names[MAXDIM * 4];
    int nnames = s->nnames < MAXDIM * 4 ? s->nnames : MAXDIM * 4;
    for (int d = 0; d < nnames; d++) names[d] = -1;
    for (Py_ssize_t i = 0; i < s->nargs; i++) {
        if (i < s->nchecked) {
            slots[i] = checked_input(s, (int)i, args[i], names);
            if (slots[i] == NULL) return 1;
        } else {
            Py_INCREF(args[i]);
            slots[i] = args[i];
        }
    }
    return 0;
}

static PyObject *outputs_of(Schedule *s, PyObject **slots) {
    PyObject *out = PyTuple_New(s->nout);
    if (out == NULL) return NULL;
    for (int i = 0; i < s->nout; i++) {
        PyObject *v = slots[s->out_slots[i]];
        Py_INCREF(v);
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *schedule_call(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    Schedule *s = (Schedule *)self;
    if (PyVectorcall_NARGS(nargsf) != s->nargs || kwnames != NULL || s->nnames > MAXDIM * 4) {
        s->declined++;
        Py_RETURN_NONE;
    }
    PyObject *stack[STACK_SLOTS];
    PyObject **slots = s->nslots <= STACK_SLOTS ? stack : PyMem_Malloc(s->nslots * sizeof(void *));
    if (slots == NULL) return PyErr_NoMemory();
    for (int i = 0; i < s->nslots; i++) {
        slots[i] = s->constants[i];
        Py_XINCREF(slots[i]);
    }
    PyObject *result = NULL;
    int rc = bind_arguments(s, args, slots);
    if (rc == 0) rc = run_steps(s, slots);
    if (rc == 0) result = outputs_of(s, slots);
    else if (rc == 1) result = Py_NewRef(Py_None);
    s->runs += rc == 0;
    s->declined += rc == 1;
    for (int i = 0; i < s->nslots; i++) Py_XDECREF(slots[i]);
    if (slots != stack) PyMem_Free(slots);
    return result;
}

/* ---- building a schedule from linker.py's plan ---------------------------------------- */

static int *int_list(PyObject *seq, int *n) {
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of ints");
    if (fast == NULL) return NULL;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int *out = PyMem_Calloc(len ? len : 1, sizeof(int));
    for (Py_ssize_t i = 0; out && i < len; i++)
        out[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    Py_DECREF(fast);
    if (out == NULL) { PyErr_NoMemory(); return NULL; }
    if (PyErr_Occurred()) { PyMem_Free(out); return NULL; }
    *n = (int)len;
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

/* One step from ("map", fnptr, ins, outs, types, inplace) / ("reduce", fnptr, ins, outs,
 * types, axes, keepdims) / ("py", run, ins, outs, types). */
static int parse_step(PyObject *spec, Step *step) {
    const char *kind;
    PyObject *target, *ins, *outs, *types, *extra = NULL;
    int keepdims = 0;
    if (!PyArg_ParseTuple(spec, "sOOOO|Op", &kind, &target, &ins, &outs, &types, &extra,
                          &keepdims))
        return -1;
    int ntypes = 0;
    step->inplace = -1;
    if (!(step->ins = int_list(ins, &step->nin)) || !(step->outs = int_list(outs, &step->nout))
        || !(step->out_types = type_list(types, &ntypes)))
        return -1;
    if (step->nin > MAXOPS || ntypes != step->nout) {
        PyErr_SetString(PyExc_ValueError, "a step has too many operands or mismatched types");
        return -1;
    }
    if (strcmp(kind, "py") == 0) {
        step->kind = STEP_PY;
        Py_INCREF(target);
        step->run = target;
        return 0;
    }
    step->fn = (sn_kernel_fn)PyLong_AsVoidPtr(target);
    if (step->fn == NULL || step->nout != 1) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a kernel step needs a pointer");
        return -1;
    }
    if (strcmp(kind, "map") == 0) {
        step->kind = STEP_MAP;
        step->inplace = extra == NULL || extra == Py_None ? -1 : (int)PyLong_AsLong(extra);
        return PyErr_Occurred() ? -1 : 0;
    }
    step->kind = STEP_REDUCE;
    step->keepdims = keepdims;
    int naxes, *axes = extra ? int_list(extra, &naxes) : NULL;
    if (axes == NULL) return -1;
    for (int i = 0; i < naxes; i++) step->axes |= (uint64_t)1 << (axes[i] & 63);
    PyMem_Free(axes);
    return 0;
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
    int rc = s->in_types && s->in_ndim && s->in_dims ? 0 : -1;
    for (int i = 0; rc == 0 && i < s->nchecked; i++) {
        PyObject *dtype, *dims;
        int nd, *d;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "OO", &dtype, &dims)
            || (s->in_types[i] = type_of(dtype)) < 0 || !(d = int_list(dims, &nd))) {
            rc = -1;
            break;
        }
        s->in_ndim[i] = nd;
        s->in_dims[i] = PyMem_Calloc(nd ? nd : 1, sizeof(int64_t));
        for (int k = 0; s->in_dims[i] && k < nd; k++) s->in_dims[i][k] = d[k];
        PyMem_Free(d);
        if (s->in_dims[i] == NULL || nd > MAXDIM) rc = -1;
    }
    Py_DECREF(fast);
    if (rc && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad input specs");
    return rc;
}

static int parse_constants(Schedule *s, PyObject *constants) {
    s->constants = PyMem_Calloc(s->nslots ? s->nslots : 1, sizeof(PyObject *));
    if (s->constants == NULL) return -1;
    PyObject *fast = PySequence_Fast(constants, "constants: expected (slot, array) pairs");
    if (fast == NULL) return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(fast); i++) {
        int slot;
        PyObject *value;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "iO", &slot, &value)
            || slot < 0 || slot >= s->nslots)
            rc = -1;
        else
            s->constants[slot] = Py_NewRef(value);
    }
    Py_DECREF(fast);
    if (rc && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad constant slot");
    return rc;
}

static int parse_steps(Schedule *s, PyObject *steps) {
    PyObject *fast = PySequence_Fast(steps, "steps: expected a sequence");
    if (fast == NULL) return -1;
    s->nsteps = (int)PySequence_Fast_GET_SIZE(fast);
    s->steps = PyMem_Calloc(s->nsteps ? s->nsteps : 1, sizeof(Step));
    int rc = s->steps ? 0 : -1;
    for (int i = 0; rc == 0 && i < s->nsteps; i++)
        rc = parse_step(PySequence_Fast_GET_ITEM(fast, i), &s->steps[i]);
    Py_DECREF(fast);
    return rc;
}

static int check_slots(Schedule *s) {
    for (int i = 0; i < s->nsteps; i++) {
        Step *st = &s->steps[i];
        for (int k = 0; k < st->nin; k++) if (st->ins[k] < 0 || st->ins[k] >= s->nslots) goto bad;
        for (int k = 0; k < st->nout; k++)
            if (st->outs[k] < s->nargs || st->outs[k] >= s->nslots) goto bad;
    }
    for (int i = 0; i < s->nout; i++)
        if (s->out_slots[i] < 0 || s->out_slots[i] >= s->nslots) goto bad;
    if (s->nargs > s->nslots || s->nchecked > s->nargs) goto bad;
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "a slot index is out of range");
    return -1;
}

static void schedule_dealloc(PyObject *self) {
    Schedule *s = (Schedule *)self;
    for (int i = 0; s->steps && i < s->nsteps; i++) {
        Step *st = &s->steps[i];
        PyMem_Free(st->ins);
        PyMem_Free(st->outs);
        PyMem_Free(st->out_types);
        Py_XDECREF(st->run);
        for (int k = 0; k < POOL; k++) Py_XDECREF(st->pool[k]);
    }
    PyMem_Free(s->steps);
    for (int i = 0; s->constants && i < s->nslots; i++) Py_XDECREF(s->constants[i]);
    PyMem_Free(s->constants);
    for (int i = 0; s->in_dims && i < s->nchecked; i++) PyMem_Free(s->in_dims[i]);
    PyMem_Free(s->in_dims);
    PyMem_Free(s->in_types);
    PyMem_Free(s->in_ndim);
    PyMem_Free(s->out_slots);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *schedule_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"nargs", "specs", "nnames", "nslots", "constants", "steps",
                               "out_slots", NULL};
    Py_ssize_t nargs;
    int nnames, nslots;
    PyObject *specs, *constants, *steps, *out_slots;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nOiiOOO", keywords, &nargs, &specs, &nnames,
                                     &nslots, &constants, &steps, &out_slots))
        return NULL;
    Schedule *s = (Schedule *)type->tp_alloc(type, 0);
    if (s == NULL) return NULL;
    s->vectorcall = schedule_call;
    s->nargs = nargs;
    s->nnames = nnames;
    s->nslots = nslots;
    if (parse_specs(s, specs) || parse_constants(s, constants) || parse_steps(s, steps)
        || !(s->out_slots = int_list(out_slots, &s->nout)) || check_slots(s)) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

static PyObject *schedule_pooled(PyObject *self, PyObject *unused) {
    (void)unused;
    Schedule *s = (Schedule *)self;
    Py_ssize_t n = 0;
    for (int i = 0; i < s->nsteps; i++)
        for (int k = 0; k < POOL; k++) n += s->steps[i].pool[k] != NULL;
    return PyLong_FromSsize_t(n);
}

static PyMethodDef schedule_methods[] = {
    {"pooled", schedule_pooled, METH_NOARGS, "How many output buffers are kept between calls."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef schedule_members[] = {
    {"runs", T_PYSSIZET, offsetof(Schedule, runs), READONLY, "Calls this runner ran."},
    {"declined", T_PYSSIZET, offsetof(Schedule, declined), READONLY,
     "Calls handed back to the Python runtime (an argument or a layout not as planned)."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ScheduleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "symnb.backends.c._runner.Schedule",
    .tp_doc = "A compiled function's schedule; calling it runs one call (None: not as planned).",
    .tp_basicsize = sizeof(Schedule),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = schedule_new,
    .tp_dealloc = schedule_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Schedule, vectorcall),
    .tp_methods = schedule_methods,
    .tp_members = schedule_members,
};

static struct PyModuleDef runner_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_runner",
    .m_doc = "symnb's C runner of compiled schedules.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__runner(void) {
    import_array();
    if (PyType_Ready(&ScheduleType) < 0) return NULL;
    PyObject *m = PyModule_Create(&runner_module);
    if (m == NULL) return NULL;
#ifdef SN_RUNNER_HASH
    if (PyModule_AddStringConstant(m, "SOURCE_HASH", SN_RUNNER_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    Py_INCREF(&ScheduleType);
    if (PyModule_AddObject(m, "Schedule", (PyObject *)&ScheduleType) < 0) {
        Py_DECREF(&ScheduleType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
