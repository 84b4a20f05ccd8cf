/* runner.c's thread policy (included by it before the steps): each call's team, the threads
 * its OpenMP kernels and BLAS products may use.
 *
 * The team is symnb/backends/c/threads.py's ``team()`` (sn.config.threads, else the cores
 * this process may use that other processes leave free), asked at most every
 * TEAM_INTERVAL_NS (a call pays one clock read; threads.py samples the machine less often
 * while the whole team is free), never more than the calling thread's OpenMP
 * limit (OMP_NUM_THREADS, omp_set_num_threads) nor, for a product, the BLAS's own count.
 * team_begin lowers the calling thread's OpenMP limit to it for the call and team_end puts
 * it back: every parallel region of the kernels takes its threads from omp_get_max_threads(),
 * and run_gemm gives a product at most call_team BLAS threads (or parts). */
#include <time.h>

#define TEAM_INTERVAL_NS 10000000LL /* threads.PEEK_S */

static PyObject *team_policy = NULL; /* threads.team, registered by runner.py */
static int team_size = 0;            /* its last answer; 0: ask on the next call */
static long long team_asked = 0;     /* when (CLOCK_MONOTONIC ns) */
static _Thread_local int call_team = 0; /* the running call's team in this thread; 0: none */

typedef struct {
    int omp_limit; /* the calling thread's OpenMP limit to restore, 0 when not changed */
    int outer;     /* call_team of a call this one runs inside (a library step's function) */
} Team;

/* A coarse clock where there is one (Linux: the last tick's time, a few ns to read, where a
 * precise read costs 20-30 ns in a virtual machine, 3% of a scalar call): the interval is
 * 10 ms, the tick 1-10 ms. */
#ifdef CLOCK_MONOTONIC_COARSE
#define TEAM_CLOCK CLOCK_MONOTONIC_COARSE
#else
#define TEAM_CLOCK CLOCK_MONOTONIC
#endif

static long long monotonic_ns(void) {
    struct timespec t;
    clock_gettime(TEAM_CLOCK, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The policy's team, asked again when TEAM_INTERVAL_NS has passed (the GIL is held); 0 when
 * no policy is registered (every thread the runtimes allow). */
static int policy_team(void) {
    if (team_policy == NULL) return 0;
    long long now = monotonic_ns();
    if (team_size > 0 && now - team_asked < TEAM_INTERVAL_NS) return team_size;
    team_asked = now;
    PyObject *answer = PyObject_CallNoArgs(team_policy);
    long n = answer != NULL ? PyLong_AsLong(answer) : -1;
    Py_XDECREF(answer);
    if (n < 1) { /* a policy that fails keeps its last answer (or one thread) */
        PyErr_Clear();
        n = team_size > 0 ? team_size : 1;
    }
    team_size = n > 4096 ? 4096 : (int)n;
    return team_size;
}

static void team_begin(Team *t) {
    int team = policy_team();
    t->outer = call_team;
    t->omp_limit = 0;
#ifdef _OPENMP
    int limit = omp_get_max_threads();
    if (team > 0 && team < limit) {
        omp_set_num_threads(team);
        t->omp_limit = limit;
    }
#endif
    call_team = team;
}

static void team_end(Team *t) {
#ifdef _OPENMP
    if (t->omp_limit > 0) omp_set_num_threads(t->omp_limit);
#endif
    call_team = t->outer;
}

/* The threads a product may use of the ``threads`` its BLAS would. */
static int team_limit(int threads) {
    return call_team > 0 && call_team < threads ? call_team : threads;
}

/* _runner.set_team_policy(fn or None): the function runner.c asks for a call's team; setting
 * it (again) makes the next call ask (sn.config.threads changed). */
static PyObject *set_team_policy(PyObject *self, PyObject *fn) {
    (void)self;
    if (fn != Py_None && !PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "set_team_policy takes a callable or None");
        return NULL;
    }
    Py_XSETREF(team_policy, fn == Py_None ? NULL : Py_NewRef(fn));
    team_size = 0;
    Py_RETURN_NONE;
}

/* _runner.team(): the team the next call runs with (asking the policy when it is due). */
static PyObject *current_team(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    int team = policy_team();
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromLong(team);
}

static PyMethodDef thread_methods[] = {
    {"set_team_policy", set_team_policy, METH_O,
     "Register the thread policy's team(); the next call asks it."},
    {"team", current_team, METH_NOARGS, "The team of the next call (0: no policy)."},
    {NULL, NULL, 0, NULL},
};
