/* symnb's C runner: one call of a compiled function, from its arguments to its outputs.
 *
 * A Schedule is a plan (symnb/backends/plan.py) converted once into C structs by runner.py:
 * the inputs' dtypes and dims, the constants' slots, and the steps. It runs every kind of step
 * itself: a kernel launch (the generic ABI: shape, strides, element counts), a ?gemm call
 * through the BLAS address in the plan, a view (layout ops through NumPy's C API), a lazy
 * branch, a loop, and a library step through its Python callable. A launch, gemm or view that
 * cannot run as planned (inputs that do not broadcast, a kernel declining a layout, an empty
 * reduction, a layout BLAS cannot take) runs its fallback, the node's NumPy reference.
 *
 * It is the executor of record for backend "c", and declines one step at a time: a step it
 * cannot run as planned (an exception in a Python step or a fallback, a result of another
 * dtype, a branch condition with no truth value, a loop whose state changes shape or that
 * has no step to run) is handed to Python for that step only (its record's ``decline``
 * callable, symnb/backends/execute.py's ``run_declined``, over a list holding the slots; the
 * slots it wrote are copied back), and the runner goes on with the next step. A Python
 * step's exception is raised by the call itself, as the error naming the node and the
 * user's line. Only arguments not as planned (another type or shape, a Python number) make a
 * call return None before any step ran: the function converts them with its input checks
 * (which raise the error naming the input) and calls the runner again.
 *
 * A loop (a scan) runs here too: per step its body's steps run over slots of their own that
 * take the sequences' rows (views), the states and the non-sequences; the results are checked
 * and written into storage allocated once per call (see run_repeat).
 *
 * ``Schedule.profile(*args)`` runs a call timing each step (a loop's body steps summed over
 * its iterations): ``f.profile()`` measures the path a plain call takes.
 *
 * Output buffers are kept between calls, up to POOL per step output, and one is reused only
 * when the runner holds its only reference: an array the caller still holds, or a view of it,
 * is never written again. So a loop that drops its results allocates nothing.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef SN_MAX_RANK
#error "define SN_MAX_RANK as symnb.core.types.MAX_RANK (runner.py and setup.py do)"
#endif
#define MAXDIM SN_MAX_RANK /* dims of any value: more is an error when the graph is built */
#define POOL 2             /* output buffers kept per step output */
#define MAXOPS 64          /* inputs of a launch, gemm or view (a wider one runs its fallback) */
#define MAXOUTS 16         /* outputs of a launch, gemm or view (a loop takes more) */
#define STACK_SLOTS 256    /* schedules with more slots allocate their slot array per call */
#define RELEASE_GIL_MIN (1 << 16) /* elements (or multiply-adds) above which the GIL is let go */
#define FALLBACK 2         /* a step's result: run its fallback */
#define RAISED 3           /* a library step raised: its exception is set (run_step) */
#if defined(_MSC_VER)
#define SN_THREAD_LOCAL __declspec(thread)
#else
#define SN_THREAD_LOCAL _Thread_local
#endif

/* The kernels' index helpers (symnb/backends/render/runtime.h), exported as snrt_*: runner.py
 * makes this library's symbols global, and kernels compiled while it is loaded call these
 * instead of each compiling its own copy (about a third of a small kernel's compile). */
#define SN_RT __attribute__((visibility("default")))
#define SN_RT_INLINE SN_RT
#define sn_collapse snrt_collapse
#define sn_locate snrt_locate
#define sn_advance snrt_advance
#define sn_decode snrt_decode
#define sn_inner_axis snrt_inner_axis
#define sn_reduce_axis snrt_reduce_axis
#define sn_outer_distinct snrt_outer_distinct
#define sn_tile snrt_tile
#define SN_MAXDIM MAXDIM
#include "../render/runtime.h"
#undef sn_collapse
#undef sn_locate
#undef sn_advance
#undef sn_decode
#undef sn_inner_axis
#undef sn_outer_distinct
#undef sn_tile

typedef int (*sn_kernel_fn)(int64_t *a, char **ptr);
typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const void *, int,
                         const void *, int, float, void *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const void *, int,
                         const void *, int, double, void *, int);
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const void *,
                           int64_t, const void *, int64_t, float, void *, int64_t);
typedef void (*dgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, double, const void *,
                           int64_t, const void *, int64_t, double, void *, int64_t);

enum { STEP_LIBRARY = 0, STEP_LAUNCH = 1, STEP_GEMM = 2, STEP_VIEW = 3, STEP_BRANCH = 4,
       STEP_REPEAT = 5 };
enum { VIEW_AXES = 0, VIEW_BROADCAST = 1, VIEW_RESHAPE = 2, VIEW_SIZE = 3, VIEW_WINDOWS = 4,
       VIEW_STRIDED = 5, VIEW_SAME_SHAPE = 6, VIEW_SHAPE = 7, VIEW_BASIC = 8 };
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
enum { GEMM_Z, GEMM_ALPHA, GEMM_X, GEMM_Y, GEMM_BETA };

typedef struct Step Step;

/* A loop's step as a plan of its own: its slots (the step's arguments first), constants,
 * steps and the slots of its results. */
typedef struct {
    int nargs, nslots, nsteps, nout;
    PyObject **constants;    /* per slot: a constant's value or NULL */
    Step *steps;
    int *outs;
} Body;

struct Step {
    int kind;
    int nin, nout;
    int *ins, *outs;         /* slot indices; -1 for an absent gemm/view operand */
    int *out_types;          /* NumPy type numbers of the outputs */
    int *out_ndim;           /* library: per output its promised rank (NULL: not checked) */
    int64_t *out_dims;       /* library: the outputs' promised sizes, in turn (-1: any) */
    Step *fallback;          /* launch/gemm/view: the node's NumPy reference */
    PyObject *fn;            /* library: fn(*arrays) */
    void *target;            /* launch: the kernel; gemm: the ?gemm (NULL: none found) */
    int ndim;                /* launch: rank of the index space */
    int inplace;             /* launch: input whose buffer output 0 may take; gemm: 1 into z */
    int skip_empty;          /* launch: an empty space gives empty outputs (else fallback) */
    int into;                /* launch: the slot whose array output 0 is written into, or -1 */
    int ilp64;               /* gemm: 64-bit dimension arguments */
    set_threads_fn set_threads; /* gemm: the BLAS's thread count (NULL: not found) */
    get_threads_fn get_threads;
    int in_loop;             /* a step of a loop's body (gemm: small products on one thread) */
    int loop_serial;         /* gemm in a loop: small products on one BLAS thread */
    uint64_t *absent;        /* launch: per input then output, bit d set when axis d lacks */
    int *keepdims;           /* launch: per output */
    int how, naxes, ndims;   /* view */
    int *axes;               /* view: "axes" source axes (-1 new), "size" counted axes */
    int64_t *dims;           /* view: "reshape" dims (>= 0, -1 the rest, -(k+2) input axis k);
                                "windows" (kh, kw, stride h, w, dilation h, w); "basic" the
                                index (plan.py's basic_index), its symbolic ints in ins[2:] */
    PyObject **pool;         /* nout * POOL buffers kept between calls */
    int *next;               /* per output: the pool entry to replace when all are in use */
    Step *sub[2];            /* branch: the then-steps and the else-steps */
    int nsub[2];
    int *results[2];         /* branch: the slots the outputs take, per side */
    int n_leaves;            /* branch: results in slots below this are copied */
    Body *body;              /* loop: the plan of one step */
    int n_seqs, n_states;    /* loop: ins = (n_steps, sequences, states, non-sequences) */
    int until, backwards;    /* loop: the body's last result stops it; last row first */
    int counted;             /* loop: n_steps is a count (else -1: the sequences' rows) */
    int *history;            /* loop: per state, 1 when every value is kept */
    PyObject *decline;       /* decline(slots, raised): Python runs this step (execute.py) */
    int nslots;              /* the slots the step runs over (a loop body's own) */
    int forced;              /* tests: always hand this step to Python (force_decline) */
    Py_ssize_t declines;     /* times it was handed to Python */
    double seconds;          /* profiled calls: time in the step, its calls, bytes it touched */
    Py_ssize_t calls, iterations;
    int64_t bytes;
};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t nargs;        /* arguments of a call: the inputs, then the shared values */
    int nchecked;            /* the first nchecked arguments are checked against a spec */
    int *in_types, *in_ndim; /* per checked input */
    PyObject **in_scalars;   /* per checked 0-d input: its array of the last call, reused */
    PyObject **in_scalar_types; /* per checked input: NumPy's scalar type of its dtype */
    int64_t **in_dims;       /* >= 0 fixed, -1 any, <= -2 the named dim number -(d+2) */
    int nnames;
    int nslots;
    PyObject **constants;    /* per slot: a constant's value or NULL */
    int nsteps;
    Step *steps;
    int nout;
    int *out_slots;
    Py_ssize_t runs, declined; /* calls run here, and calls whose arguments it declined */
} Schedule;

/* Set while Schedule.profile runs a call on this thread: run_step times each step. */
static SN_THREAD_LOCAL int timing;

static double seconds_now(void) {
#ifdef _WIN32
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#endif
}

#include "runner_args.h" /* checked_input: each argument as planned, or NULL */

/* ---- output buffers -------------------------------------------------------------------- */

/* A C-ordered array of this shape and type from the pool of output k (a new reference). */
static PyObject *pooled(Step *step, int k, int nd, const npy_intp *shape, int type) {
    PyObject **pool = step->pool + k * POOL;
    int free_slot = -1;
    for (int i = 0; i < POOL; i++) {
        PyObject *b = pool[i];
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
    int i = free_slot >= 0 ? free_slot : step->next[k];
    step->next[k] = (i + 1) % POOL;
    Py_XSETREF(pool[i], fresh);
    Py_INCREF(fresh);
    return fresh;
}

/* Two arrays' dims, of nd and nd_b axes, are the same. */
static int same_dims(int nd, const npy_intp *a, int nd_b, const npy_intp *b) {
    return nd == nd_b && memcmp(a, b, nd * sizeof(npy_intp)) == 0;
}

/* ``t`` has this shape and type, whatever its strides. */
static int has_shape(PyArrayObject *t, int nd, const npy_intp *shape, int type) {
    return PyArray_TYPE(t) == type && same_dims(PyArray_NDIM(t), PyArray_DIMS(t), nd, shape);
}

/* ``t`` can take a result of this shape and type in place. */
static int can_hold(PyArrayObject *t, int nd, const npy_intp *shape, int type) {
    return has_shape(t, nd, shape, type) && PyArray_ISWRITEABLE(t) && PyArray_IS_C_CONTIGUOUS(t);
}

/* ---- library steps ------------------------------------------------------------------------ */

/* Whether ``a`` has the rank and fixed sizes promised for output k (execute.py's
 * ``keeps_promise``). */
static int keeps_promise(Step *step, int k, PyArrayObject *a) {
    if (step->out_ndim == NULL) return 1;
    int64_t *dims = step->out_dims;
    for (int j = 0; j < k; j++) dims += step->out_ndim[j];
    int nd = step->out_ndim[k];
    if (PyArray_NDIM(a) != nd) return 0;
    for (int d = 0; d < nd; d++)
        if (dims[d] >= 0 && PyArray_DIM(a, d) != dims[d]) return 0;
    return 1;
}

/* ``value`` as an array of the planned type and promised shape into the slot; 1 when it is
 * not one (Python runs the step again and raises the error naming the op: execute.py's
 * ``broken_promise``). */
static int store_result(Step *step, PyObject **slots, int k, PyObject *value) {
    PyObject *array = PyArray_FROM_O(value);
    if (array == NULL) { PyErr_Clear(); return 1; }
    if (PyArray_TYPE((PyArrayObject *)array) != step->out_types[k]
        || !keeps_promise(step, k, (PyArrayObject *)array)) {
        Py_DECREF(array);
        return 1;
    }
    Py_XSETREF(slots[step->outs[k]], array);
    return 0;
}

/* 0 done, 1 a result not of the planned type, RAISED an exception is set, -1 an error. */
static int run_library(Step *step, PyObject **slots) {
    PyObject *stack[MAXOPS], **args = stack;
    if (step->nin > MAXOPS && !(args = PyMem_Malloc(step->nin * sizeof(PyObject *)))) {
        PyErr_NoMemory();
        return -1;
    }
    for (int k = 0; k < step->nin; k++) args[k] = slots[step->ins[k]];
    PyObject *result = PyObject_Vectorcall(step->fn, args, step->nin, NULL);
    if (args != stack) PyMem_Free(args);
    if (result == NULL) /* an Exception: run_step hands it to Python, which names the node */
        return PyErr_ExceptionMatches(PyExc_Exception) ? RAISED : -1; /* KeyboardInterrupt */
    int rc = 0;
    if (step->nout == 1) {
        rc = store_result(step, slots, 0, result);
    } else if (!(PyTuple_Check(result) || PyList_Check(result))
               || PySequence_Fast_GET_SIZE(result) != step->nout) {
        rc = 1;
    } else {
        for (int k = 0; k < step->nout && !rc; k++)
            rc = store_result(step, slots, k, PySequence_Fast_GET_ITEM(result, k));
    }
    Py_DECREF(result);
    return rc;
}

#include "runner_threads.h" /* team_begin, team_end: a call's threads (threads.py) */

#include "runner_launch.h" /* run_launch, and fill_into for its fallback */

#include "runner_gemm.h" /* run_gemm: one ?gemm call, or parts of one on OpenMP threads */

#include "runner_views.h" /* run_view: a View step in C */

/* ---- one call ------------------------------------------------------------------------- */

/* ---- branches (lazy ifelse) ----------------------------------------------------------- */

static int run_step(Step *st, PyObject **slots);

/* Result k of the side taken into its output slot: the value itself, or a copy of a leaf's
 * (an argument or a constant), so an output never aliases one; 1 when it is not an array of
 * the planned type. */
static int take_result(Step *st, PyObject **slots, int k, int side) {
    int from = st->results[side][k];
    PyObject *value = slots[from];
    if (value == NULL) return 1;
    if (from < st->n_leaves) {
        PyObject *array = PyArray_FROM_O(value);
        if (array == NULL) { PyErr_Clear(); return 1; }
        value = PyArray_NewCopy((PyArrayObject *)array, NPY_CORDER);
        Py_DECREF(array);
        if (value == NULL) return -1;
    } else {
        Py_INCREF(value);
    }
    if (!PyArray_Check(value) || PyArray_TYPE((PyArrayObject *)value) != st->out_types[k]) {
        Py_DECREF(value);
        return 1;
    }
    Py_XSETREF(slots[st->outs[k]], value);
    return 0;
}

/* Only the steps of the side the condition picks run. */
static int run_branch(Step *st, PyObject **slots) {
    int truth = PyObject_IsTrue(slots[st->ins[0]]);
    if (truth < 0) { PyErr_Clear(); return 1; }
    int side = truth ? 0 : 1, rc = 0;
    for (int i = 0; rc == 0 && i < st->nsub[side]; i++) rc = run_step(&st->sub[side][i], slots);
    for (int k = 0; rc == 0 && k < st->nout; k++) rc = take_result(st, slots, k, side);
    return rc;
}

#include "runner_loop.h" /* run_repeat: a scan's loop */


/* The step as planned: 0 done, 1 not as planned, RAISED, or -1 an error is set. */
static int run_planned(Step *st, PyObject **slots) {
    int rc = st->kind == STEP_LAUNCH   ? run_launch(st, slots)
             : st->kind == STEP_GEMM   ? run_gemm(st, slots)
             : st->kind == STEP_VIEW   ? run_view(st, slots)
             : st->kind == STEP_BRANCH ? run_branch(st, slots)
             : st->kind == STEP_REPEAT ? run_repeat(st, slots)
                                       : run_library(st, slots);
    if (rc != FALLBACK) return rc;
    rc = run_library(st->fallback, slots);
    return rc == 0 && st->kind == STEP_LAUNCH && st->into >= 0 ? fill_into(st, slots) : rc;
}

/* The pending exception, normalised, with its traceback (a new reference). */
static PyObject *raised_exception(void) {
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

/* The step run by Python (its ``decline`` callable) over a list holding the slots, with the
 * exception a library step raised (or None); the slots it wrote copied back. 0 done, -1 an
 * error is set (the step's error, raised by the call). */
static int decline_step(Step *st, PyObject **slots, int raised) {
    PyObject *exc = raised ? raised_exception() : Py_NewRef(Py_None);
    if (exc == NULL) return -1;
    st->declines++;
    PyObject *list = PyList_New(st->nslots);
    if (list == NULL) { Py_DECREF(exc); return -1; }
    for (int i = 0; i < st->nslots; i++)
        PyList_SET_ITEM(list, i, Py_NewRef(slots[i] ? slots[i] : Py_None));
    PyObject *done = PyObject_CallFunctionObjArgs(st->decline, list, exc, NULL);
    Py_DECREF(exc);
    if (done != NULL) {
        Py_DECREF(done);
        for (int i = 0; i < st->nslots; i++) {
            PyObject *value = PyList_GET_ITEM(list, i);
            if (value != (slots[i] ? slots[i] : Py_None)) Py_XSETREF(slots[i], Py_NewRef(value));
        }
    }
    Py_DECREF(list);
    return done == NULL ? -1 : 0;
}

/* Bytes of the step's operands and results as they are after it ran (profiled calls); a
 * view and a branch hand a value on without copying it: none (plan.py's ``step_bytes``). */
static int64_t step_bytes(Step *st, PyObject **slots) {
    int64_t n = 0;
    if (st->kind == STEP_VIEW || st->kind == STEP_BRANCH) return 0;
    for (int k = 0; k < st->nin + st->nout; k++) {
        int slot = k < st->nin ? st->ins[k] : st->outs[k - st->nin];
        PyObject *v = slot >= 0 ? slots[slot] : NULL;
        if (v != NULL && PyArray_Check(v)) n += PyArray_NBYTES((PyArrayObject *)v);
    }
    if (st->kind == STEP_LAUNCH && st->into >= 0 && PyArray_Check(slots[st->into]))
        n += PyArray_NBYTES((PyArrayObject *)slots[st->into]);
    return n;
}

/* Runs one step, handing it to Python when it is not as planned: 0 done, -1 an error is
 * set. On a profiled call (``timing``) its seconds and bytes are added to its counters. */
static int run_step(Step *st, PyObject **slots) {
    double start = timing ? seconds_now() : 0.0;
    int rc = st->forced ? 1 : run_planned(st, slots);
    /* an error in C (no memory for a result too big to exist, NumPy's "array is too big"):
     * Python raises it naming the node and the user's line (not KeyboardInterrupt) */
    if (rc == -1 && PyErr_ExceptionMatches(PyExc_Exception)) rc = RAISED;
    if (rc == 1 || rc == RAISED) rc = decline_step(st, slots, rc == RAISED);
    if (timing) {
        st->seconds += seconds_now() - start;
        st->calls++;
        if (rc == 0) st->bytes += step_bytes(st, slots);
    }
    return rc;
}

/* Fills the argument slots: 0 done, 1 an argument is not as planned. */
static int bind_arguments(Schedule *s, PyObject *const *args, PyObject **slots) {
    int64_t names[MAXDIM * 4];
    for (int d = 0; d < s->nnames; d++) names[d] = -1;
    for (Py_ssize_t i = 0; i < s->nargs; i++) {
        if (i < s->nchecked) {
            slots[i] = checked_input(s, (int)i, args[i], names);
            if (slots[i] == NULL) return 1;
        } else {
            slots[i] = Py_NewRef(args[i]);
        }
    }
    return 0;
}

static PyObject *outputs_of(Schedule *s, PyObject **slots) {
    PyObject *out = PyTuple_New(s->nout);
    if (out == NULL) return NULL;
    for (int i = 0; i < s->nout; i++)
        PyTuple_SET_ITEM(out, i, Py_NewRef(slots[s->out_slots[i]]));
    return out;
}

static PyObject *schedule_call(PyObject *self, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames) {
    Schedule *s = (Schedule *)self;
    if (PyVectorcall_NARGS(nargsf) != s->nargs || kwnames != NULL) {
        s->declined++;
        Py_RETURN_NONE;
    }
    PyObject *stack[STACK_SLOTS];
    PyObject **slots = s->nslots <= STACK_SLOTS ? stack : PyMem_Malloc(s->nslots * sizeof(void *));
    if (slots == NULL) return PyErr_NoMemory();
    for (int i = 0; i < s->nslots; i++) slots[i] = Py_XNewRef(s->constants[i]);
    PyObject *result = NULL;
    int rc = bind_arguments(s, args, slots);
    Team team;
    team_begin(&team);
    for (int i = 0; rc == 0 && i < s->nsteps; i++) rc = run_step(&s->steps[i], slots);
    team_end(&team);
    if (rc == 0) result = outputs_of(s, slots);
    else if (rc == 1) result = Py_NewRef(Py_None); /* an argument not as planned */
    s->runs += rc == 0;
    s->declined += rc == 1;
    for (int i = 0; i < s->nslots; i++) Py_XDECREF(slots[i]);
    if (slots != stack) PyMem_Free(slots);
    return result;
}

#include "runner_plan.h" /* parse_step, parse_specs, ... and free_step */

static void schedule_dealloc(PyObject *self) {
    Schedule *s = (Schedule *)self;
    for (int i = 0; s->steps && i < s->nsteps; i++) free_step(&s->steps[i]);
    PyMem_Free(s->steps);
    for (int i = 0; s->constants && i < s->nslots; i++) Py_XDECREF(s->constants[i]);
    PyMem_Free(s->constants);
    for (int i = 0; s->in_dims && i < s->nchecked; i++) PyMem_Free(s->in_dims[i]);
    PyMem_Free(s->in_dims);
    for (int i = 0; s->in_scalars && i < s->nchecked; i++) Py_XDECREF(s->in_scalars[i]);
    PyMem_Free(s->in_scalars);
    for (int i = 0; s->in_scalar_types && i < s->nchecked; i++)
        Py_XDECREF(s->in_scalar_types[i]);
    PyMem_Free(s->in_scalar_types);
    PyMem_Free(s->in_types);
    PyMem_Free(s->in_ndim);
    PyMem_Free(s->out_slots);
    Py_TYPE(self)->tp_free(self);
}

static void set_nslots(Step *steps, int n, int nslots);

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
    set_nslots(s->steps, s->nsteps, s->nslots);
    return (PyObject *)s;
}

/* ---- walking the steps: each step, then a branch's sides and a loop's body ------------- */

typedef void (*step_visit)(Step *st, void *arg);

static void walk_steps(Step *steps, int n, step_visit visit, void *arg) {
    for (int i = 0; i < n; i++) {
        Step *st = &steps[i];
        visit(st, arg);
        for (int side = 0; st->kind == STEP_BRANCH && side < 2; side++)
            walk_steps(st->sub[side], st->nsub[side], visit, arg);
        if (st->kind == STEP_REPEAT) walk_steps(st->body->steps, st->body->nsteps, visit, arg);
    }
}

/* Each step learns how many slots it runs over (a loop body's steps, the body's), as does
 * the fallback it runs in its place. */
static void set_nslots(Step *steps, int n, int nslots) {
    for (int i = 0; i < n; i++) {
        Step *st = &steps[i];
        st->nslots = nslots;
        if (st->fallback != NULL) st->fallback->nslots = nslots;
        for (int side = 0; st->kind == STEP_BRANCH && side < 2; side++)
            set_nslots(st->sub[side], st->nsub[side], nslots);
        if (st->kind == STEP_REPEAT)
            set_nslots(st->body->steps, st->body->nsteps, st->body->nslots);
    }
}

static void force_visit(Step *st, void *arg) { st->forced = (*(long *)arg >> st->kind) & 1; }

static void reset_visit(Step *st, void *arg) {
    (void)arg;
    st->seconds = 0.0;
    st->calls = st->iterations = 0;
    st->bytes = 0;
}

static void count_visit(Step *st, void *arg) { *(Py_ssize_t *)arg += st->declines; }

/* (seconds, calls, bytes, iterations) of each step, in walk_steps' order; NULL on error. */
static void times_visit(Step *st, void *arg) {
    PyObject **list = arg;
    if (*list == NULL) return;
    PyObject *row = Py_BuildValue("(dnLn)", st->seconds, st->calls, (long long)st->bytes,
                                  st->iterations);
    if (row == NULL || PyList_Append(*list, row) < 0) Py_CLEAR(*list);
    Py_XDECREF(row);
}

static PyObject *schedule_profile(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Schedule *s = (Schedule *)self;
    walk_steps(s->steps, s->nsteps, reset_visit, NULL);
    int before = timing;
    timing = 1;
    PyObject *result = schedule_call(self, args, (size_t)nargs, NULL);
    timing = before;
    if (result == NULL) return NULL;
    PyObject *times = PyList_New(0);
    walk_steps(s->steps, s->nsteps, times_visit, &times);
    if (times == NULL) { Py_DECREF(result); return NULL; }
    PyObject *pair = PyTuple_Pack(2, result, times);
    Py_DECREF(result);
    Py_DECREF(times);
    return pair;
}

static PyObject *schedule_force_decline(PyObject *self, PyObject *mask) {
    long bits = PyLong_AsLong(mask);
    if (bits == -1 && PyErr_Occurred()) return NULL;
    Schedule *s = (Schedule *)self;
    walk_steps(s->steps, s->nsteps, force_visit, &bits);
    Py_RETURN_NONE;
}

static PyObject *schedule_declined(PyObject *self, void *unused) {
    (void)unused;
    Schedule *s = (Schedule *)self;
    Py_ssize_t n = s->declined;
    walk_steps(s->steps, s->nsteps, count_visit, &n);
    return PyLong_FromSsize_t(n);
}

static PyObject *schedule_pooled(PyObject *self, PyObject *unused) {
    (void)unused;
    Schedule *s = (Schedule *)self;
    Py_ssize_t n = 0;
    for (int i = 0; i < s->nsteps; i++)
        for (int k = 0; k < s->steps[i].nout * POOL; k++) n += s->steps[i].pool[k] != NULL;
    return PyLong_FromSsize_t(n);
}

static PyMethodDef schedule_methods[] = {
    {"pooled", schedule_pooled, METH_NOARGS, "How many output buffers are kept between calls."},
    {"profile", (PyCFunction)(void (*)(void))schedule_profile, METH_FASTCALL,
     "profile(*args): (the call's outputs or None, [(seconds, calls, bytes, iterations) per "
     "step: each step, then a branch's sides and a loop's body]), each step timed."},
    {"force_decline", schedule_force_decline, METH_O,
     "force_decline(mask): tests: hand every step whose kind's bit is set to Python "
     "(runner.py's KIND_BITS)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef schedule_getset[] = {
    {"declined", schedule_declined, NULL,
     "Calls whose arguments were not as planned (returned None) and steps handed to Python.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef schedule_members[] = {
    {"runs", T_PYSSIZET, offsetof(Schedule, runs), READONLY, "Calls this runner ran."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ScheduleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "symnb.backends.c._runner.Schedule",
    .tp_doc = "A compiled function's schedule; calling it runs one call (None: an argument "
              "not as planned).",
    .tp_basicsize = sizeof(Schedule),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = schedule_new,
    .tp_dealloc = schedule_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Schedule, vectorcall),
    .tp_methods = schedule_methods,
    .tp_members = schedule_members,
    .tp_getset = schedule_getset,
};

#include "runner_entry.h" /* Entry: a compiled function's __call__, straight to the runner */

/* The OpenMP runtime this build links (runner.openmp_runtime names the kernels' the same way):
 * the runner's team (omp_set_num_threads) reaches only kernels that link the same one. */
#if !defined(_OPENMP)
#define SN_OPENMP_RUNTIME ""
#elif defined(__clang__)
#define SN_OPENMP_RUNTIME "libomp"
#elif defined(__GNUC__)
#define SN_OPENMP_RUNTIME "libgomp"
#else
#define SN_OPENMP_RUNTIME "other"
#endif

#ifdef SN_RUNNER_HASH
/* What runner.py reads from the file before it imports a build (runner.build_of): its source
 * hash and OpenMP runtime, so that one it will not use is never loaded (loading pip's libgomp
 * build beside clang's libomp kernels would put two OpenMP runtimes in the process). */
static const char build_id[] = "SYMNB-RUNNER-BUILD " SN_RUNNER_HASH " " SN_OPENMP_RUNTIME ";";
#endif

static struct PyModuleDef runner_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_runner",
    .m_doc = "symnb's C runner of compiled schedules.",
    .m_size = -1,
    .m_methods = thread_methods,
};

PyMODINIT_FUNC PyInit__runner(void) {
    import_array();
    if (PyType_Ready(&ScheduleType) < 0 || PyType_Ready(&EntryType) < 0 || entry_init() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&runner_module);
    if (m == NULL) return NULL;
#ifdef SN_RUNNER_HASH
    if (PyModule_AddStringConstant(m, "SOURCE_HASH", SN_RUNNER_HASH) < 0
        || PyModule_AddStringConstant(m, "OPENMP", SN_OPENMP_RUNTIME) < 0
        || PyModule_AddStringConstant(m, "BUILD", build_id) < 0
        || PyModule_AddIntConstant(m, "MAX_RANK", MAXDIM) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    if (PyModule_AddObjectRef(m, "Schedule", (PyObject *)&ScheduleType) < 0
        || PyModule_AddObjectRef(m, "Entry", (PyObject *)&EntryType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
