/* symnb's C runner: a compiled function's entry point (included by runner.c).
 *
 * ``f(...)`` of a Function (symnb/compile/function.py) reaches this object with no Python
 * frame in between: its ``__call__`` is a property returning it. A call goes straight to the
 * runner when the runner's results are the caller's as they come (``fast``: nothing to copy);
 * keywords are put in their inputs' places first (``names``), and a call whose keywords do
 * not bind (an unknown name, an input given twice or left out) goes to the Python path, which
 * names the problem. A call the runner declines (an argument not as planned, no step ran)
 * goes to ``declined``; any other call (the first call of a function that warns about its
 * shapes, results to copy) to ``call``, the Python path, with the function (held weakly: the
 * function holds its entry) as its first argument. The Python frame cost a call of ``a*b +
 * 1`` about 140 ns of its 420, keywords 7 us, a training step's updates 4 us or more
 * (docs/c_backend.md, "Calls").
 *
 * A function with shared values and updates (a training step) runs here too: holding its
 * ``turns`` (the function's lock: read, compute, write as one), the shared values' host arrays
 * follow the arguments, and each update's result becomes its shared variable's value as
 * ``SharedVariable.set_value(value, borrow=True)`` makes it (``fitted`` is called where the
 * result is not an array of the value's dtype and shape), every one checked before any is
 * written. A shared value that is only on a device goes to the Python path, before anything
 * ran.
 */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fast;      /* the Schedule whose results are the caller's, or None */
    PyObject *owner;     /* a weak reference to the function: no cycle keeps it alive */
    PyObject *call;      /* call(function, *args, **kwargs): the Python path, unbound */
    PyObject *declined;  /* declined(function, *args): a call the runner declined, unbound */
    PyObject *structure; /* None: the first result alone; else structure(results) */
    PyObject *names;     /* the inputs' names in order (None where one has none): keywords */
    PyObject *shared;    /* the SharedVariables whose values follow the arguments (a tuple) */
    PyObject *updates;   /* the SharedVariables the last results are written to (a tuple) */
    PyObject *labels;    /* how an error names each update (str), None where it always fits */
    PyObject *acquire;   /* the turns' acquire and release (bound methods), or None */
    PyObject *release;
    unsigned long holder; /* the thread whose call holds the turns (either path), or 0 */
} Entry;

static PyObject *str_value, *str_device, *str_fitted; /* interned by entry_init */

static int entry_init(void) {
    str_value = PyUnicode_InternFromString("_value");
    str_device = PyUnicode_InternFromString("_device");
    str_fitted = PyUnicode_InternFromString("fitted");
    return str_value && str_device && str_fitted ? 0 : -1;
}

#define ENTRY_STACK 8

/* ``method(function, *args)`` with the call's own keywords. */
static PyObject *call_owner(Entry *e, PyObject *method, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *owner = NULL;
    if (PyWeakref_GetRef(e->owner, &owner) < 0) return NULL;
#else
    PyObject *owner = PyWeakref_GetObject(e->owner); /* borrowed */
    if (owner == NULL) return NULL;
    owner = owner == Py_None ? NULL : Py_NewRef(owner);
#endif
    if (owner == NULL) {
        PyErr_SetString(PyExc_ReferenceError, "this compiled function was deleted");
        return NULL;
    }
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t n = nargs + (kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[ENTRY_STACK + 1], **stack = small;
    if (n + 1 > ENTRY_STACK + 1 && !(stack = PyMem_Malloc((n + 1) * sizeof(PyObject *)))) {
        Py_DECREF(owner);
        return PyErr_NoMemory();
    }
    stack[0] = owner;
    if (n > 0) memcpy(stack + 1, args, n * sizeof(PyObject *));
    PyObject *result = PyObject_Vectorcall(method, stack, nargs + 1, kwnames);
    if (stack != small) PyMem_Free(stack);
    Py_DECREF(owner);
    return result;
}

/* The place of the input named ``key`` (the last of that name, as the Python path binds), or
 * -1 where no input has it. Keywords are usually the very strings of the names (interned). */
static Py_ssize_t entry_place(Entry *e, PyObject *key) {
    Py_ssize_t n = PyTuple_GET_SIZE(e->names);
    for (Py_ssize_t i = n - 1; i >= 0; i--)
        if (PyTuple_GET_ITEM(e->names, i) == key) return i;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        PyObject *name = PyTuple_GET_ITEM(e->names, i);
        if (name != Py_None && PyUnicode_Compare(name, key) == 0) return i;
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return -1;
}

/* ``args`` and the keywords' values in the inputs' places, in ``bound`` (n inputs long): 1
 * when every input has exactly one value, 0 when the Python path must say what is wrong. */
static int entry_bind(Entry *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      PyObject **bound, Py_ssize_t n) {
    if (nargs > n) return 0;
    for (Py_ssize_t i = 0; i < n; i++) bound[i] = i < nargs ? args[i] : NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
        Py_ssize_t at = entry_place(e, PyTuple_GET_ITEM(kwnames, k));
        if (at < 0 || bound[at] != NULL) return 0;
        bound[at] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (bound[i] == NULL) return 0;
    return 1;
}

static PyObject *entry_run(Entry *e, PyObject *const *args, size_t nargsf);

/* A call with keywords: bound to the inputs' places, then run as a positional call. */
static PyObject *entry_keywords(Entry *e, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
    Py_ssize_t n = e->names == Py_None ? -1 : PyTuple_GET_SIZE(e->names);
    PyObject *small[ENTRY_STACK], **bound = small;
    if (n > ENTRY_STACK && !(bound = PyMem_Malloc(n * sizeof(PyObject *))))
        return PyErr_NoMemory();
    PyObject *result;
    if (n >= 0 && entry_bind(e, args, PyVectorcall_NARGS(nargsf), kwnames, bound, n))
        result = entry_run(e, bound, (size_t)n);
    else
        result = call_owner(e, e->call, args, nargsf, kwnames);
    if (bound != small) PyMem_Free(bound);
    return result;
}

static PyObject *entry_call(PyObject *self, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames) {
    Entry *e = (Entry *)self;
    int keywords = kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0;
    if (e->fast == Py_None) return call_owner(e, e->call, args, nargsf, kwnames);
    if (keywords) return entry_keywords(e, args, nargsf, kwnames);
    return entry_run(e, args, nargsf);
}

/* The results in the user's structure: the first result, or ``structure`` of the results
 * less the updates' values. Steals ``results``. */
static PyObject *entry_shaped(Entry *e, PyObject *results) {
    Py_ssize_t n = PyTuple_GET_SIZE(results) - PyTuple_GET_SIZE(e->updates);
    if (e->structure != Py_None) {
        PyObject *outputs = PyTuple_GET_SIZE(e->updates) ? PyTuple_GetSlice(results, 0, n)
                                                         : Py_NewRef(results);
        Py_DECREF(results);
        if (outputs == NULL) return NULL;
        PyObject *shaped = PyObject_CallOneArg(e->structure, outputs);
        Py_DECREF(outputs);
        return shaped;
    }
    PyObject *first = n >= 1 ? Py_NewRef(PyTuple_GET_ITEM(results, 0)) : NULL;
    Py_DECREF(results);
    if (first == NULL)
        PyErr_SetString(PyExc_SystemError, "symnb runner: a call returned no results");
    return first;
}

/* ``value`` as ``shared`` will keep it (a new reference), or NULL with an error: as it is
 * where it is an array of the old value's dtype and shape (what a training step's updates
 * are), else what ``shared.fitted(value, True, label)`` makes of it (checked, cast; ``label``,
 * how its error names the update, may be None). */
static PyObject *entry_fitted(PyObject *shared, PyObject *value, PyObject *label) {
    PyObject *old = PyObject_GetAttr(shared, str_value);
    if (old == NULL) return NULL;
    int same = PyArray_CheckExact(value) && PyArray_CheckExact(old)
               && PyArray_EquivTypes(PyArray_DESCR((PyArrayObject *)value),
                                     PyArray_DESCR((PyArrayObject *)old))
               && same_dims(PyArray_NDIM((PyArrayObject *)value),
                            PyArray_DIMS((PyArrayObject *)value),
                            PyArray_NDIM((PyArrayObject *)old), PyArray_DIMS((PyArrayObject *)old));
    Py_DECREF(old);
    if (same) return Py_NewRef(value);
    if (label == Py_None)
        return PyObject_CallMethodObjArgs(shared, str_fitted, value, Py_True, NULL);
    return PyObject_CallMethodObjArgs(shared, str_fitted, value, Py_True, label, NULL);
}

/* The updates' values (the last results) written to their shared variables as
 * ``SharedVariable.set_value(value, borrow=True)`` writes one, every value checked before
 * any is written: a call whose update does not fit changes no shared value. 0, or -1 with an
 * error. */
static int entry_write(Entry *e, PyObject *results) {
    Py_ssize_t nup = PyTuple_GET_SIZE(e->updates), first = PyTuple_GET_SIZE(results) - nup;
    PyObject *small[ENTRY_STACK], **kept = small;
    if (nup > ENTRY_STACK && !(kept = PyMem_Malloc(nup * sizeof(PyObject *)))) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t got = 0;
    int status = 0;
    for (; got < nup; got++) {
        PyObject *label = got < PyTuple_GET_SIZE(e->labels) ? PyTuple_GET_ITEM(e->labels, got)
                                                             : Py_None;
        kept[got] = entry_fitted(PyTuple_GET_ITEM(e->updates, got),
                                 PyTuple_GET_ITEM(results, first + got), label);
        if (kept[got] == NULL) {
            status = -1;
            break;
        }
    }
    for (Py_ssize_t i = 0; status == 0 && i < nup; i++) {
        PyObject *shared = PyTuple_GET_ITEM(e->updates, i);
        if (PyObject_SetAttr(shared, str_value, kept[i]) < 0
            || PyObject_SetAttr(shared, str_device, Py_None) < 0) /* (a stale device copy) */
            status = -1;
    }
    for (Py_ssize_t i = 0; i < got; i++) Py_DECREF(kept[i]);
    if (kept != small) PyMem_Free(kept);
    return status;
}

/* The runner on the arguments then the shared values' host arrays; NULL with an error, or
 * Py_None (new) where a shared value is only on a device (nothing ran). */
static PyObject *entry_with_shared(Entry *e, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t nshared = PyTuple_GET_SIZE(e->shared), n = nargs + nshared;
    PyObject *small[ENTRY_STACK * 2], **stack = small;
    if (n > ENTRY_STACK * 2 && !(stack = PyMem_Malloc(n * sizeof(PyObject *))))
        return PyErr_NoMemory();
    if (nargs > 0) memcpy(stack, args, nargs * sizeof(PyObject *));
    Py_ssize_t got = 0;
    PyObject *results = NULL;
    for (; got < nshared; got++) {
        PyObject *value = PyObject_GetAttr(PyTuple_GET_ITEM(e->shared, got), str_value);
        if (value == NULL) goto done;
        stack[nargs + got] = value;
        if (value == Py_None) {
            got++;
            results = Py_NewRef(Py_None);
            goto done;
        }
    }
    results = PyObject_Vectorcall(e->fast, stack, (size_t)n, NULL);
done:
    for (Py_ssize_t i = 0; i < got; i++) Py_DECREF(stack[nargs + i]);
    if (stack != small) PyMem_Free(stack);
    return results;
}

/* The function's turns taken for this thread: 1; -1 with an error; 0 where this thread
 * holds them already (a print hook or a Python op of the call calling the function again,
 * which would wait for itself forever): the Python path raises the ReentrantCallError. Only
 * the holder writes its id in ``holder`` (after taking the turns, 0 before letting go), so
 * finding its own id there means it holds them. */
static int entry_take_turn(Entry *e) {
    unsigned long me = PyThread_get_thread_ident();
    if (e->holder == me) return 0;
    PyObject *held = PyObject_CallNoArgs(e->acquire); /* waits without the GIL */
    if (held == NULL) return -1;
    Py_DECREF(held);
    e->holder = me;
    return 1;
}

/* The turns given back (``holder`` cleared first): 0, or -1 with an error. */
static int entry_give_turn(Entry *e) {
    e->holder = 0;
    PyObject *done = PyObject_CallNoArgs(e->release);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

/* ``entry.enter()``: the Python path takes the turns here, so one ``holder`` sees calls of
 * both paths; False where this thread holds them already (the caller raises the
 * ReentrantCallError). ``entry.leave()`` gives them back. */
static PyObject *entry_enter(PyObject *self, PyObject *unused) {
    (void)unused;
    Entry *e = (Entry *)self;
    if (e->acquire == Py_None) Py_RETURN_TRUE; /* no turns: calls need none */
    int taken = entry_take_turn(e);
    if (taken < 0) return NULL;
    return PyBool_FromLong(taken);
}

static PyObject *entry_leave(PyObject *self, PyObject *unused) {
    (void)unused;
    Entry *e = (Entry *)self;
    if (e->release != Py_None && entry_give_turn(e) < 0) return NULL;
    Py_RETURN_NONE;
}

/* A positional call through the runner (``fast``); with shared values or updates, inside
 * the function's turns. */
static PyObject *entry_run(Entry *e, PyObject *const *args, size_t nargsf) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (PyTuple_GET_SIZE(e->shared) == 0 && PyTuple_GET_SIZE(e->updates) == 0) {
        PyObject *results = PyObject_Vectorcall(e->fast, args, nargsf, NULL);
        if (results == NULL) return NULL;
        if (results == Py_None) {
            Py_DECREF(results);
            return call_owner(e, e->declined, args, nargsf, NULL);
        }
        return entry_shaped(e, results);
    }
    if (e->acquire != Py_None) {
        switch (entry_take_turn(e)) {
        case -1: return NULL;
        case 0: return call_owner(e, e->declined, args, nargsf, NULL); /* it says why */
        }
    }
    PyObject *results = entry_with_shared(e, args, nargs);
    if (results != NULL && results != Py_None && entry_write(e, results) < 0) Py_CLEAR(results);
    if (e->release != Py_None) { /* the error of the call, if any, survives the release */
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        if (entry_give_turn(e) < 0) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(traceback);
            Py_XDECREF(results);
            return NULL;
        }
        PyErr_Restore(type, value, traceback);
    }
    if (results == NULL) return NULL;
    if (results == Py_None) { /* declined, or a value only on a device: nothing ran */
        Py_DECREF(results);
        return call_owner(e, e->declined, args, nargsf, NULL);
    }
    return entry_shaped(e, results);
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *keywords[] = {"fast",  "owner",  "call",    "declined", "structure",
                               "names", "shared", "updates", "turns",    "labels", NULL};
    PyObject *fast, *owner, *call, *declined, *structure, *names;
    PyObject *shared = NULL, *updates = NULL, *turns = Py_None, *labels = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|O!O!OO!", keywords, &fast, &owner,
                                     &call, &declined, &structure, &names, &PyTuple_Type,
                                     &shared, &PyTuple_Type, &updates, &turns, &PyTuple_Type,
                                     &labels))
        return NULL;
    PyObject *acquire = Py_None, *release = Py_None;
    if (turns != Py_None) {
        acquire = PyObject_GetAttrString(turns, "acquire");
        release = acquire ? PyObject_GetAttrString(turns, "release") : NULL;
        if (release == NULL) {
            Py_XDECREF(acquire);
            return NULL;
        }
    } else {
        Py_INCREF(acquire);
        Py_INCREF(release);
    }
    int named = names == Py_None || PyTuple_Check(names);
    for (Py_ssize_t i = 0; named && names != Py_None && i < PyTuple_GET_SIZE(names); i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        named = name == Py_None || PyUnicode_Check(name);
    }
    if (!PyWeakref_CheckRef(owner) || !PyCallable_Check(call) || !PyCallable_Check(declined)
        || (fast != Py_None && !PyCallable_Check(fast))
        || (structure != Py_None && !PyCallable_Check(structure)) || !named) {
        PyErr_SetString(PyExc_TypeError,
                        "Entry(fast, owner, call, declined, structure, names): owner a weak "
                        "reference, the rest callables (fast and structure may be None), names "
                        "a tuple of str or None (or None)");
        Py_DECREF(acquire);
        Py_DECREF(release);
        return NULL;
    }
    Entry *e = (Entry *)type->tp_alloc(type, 0);
    if (e == NULL) {
        Py_DECREF(acquire);
        Py_DECREF(release);
        return NULL;
    }
    e->shared = shared ? Py_NewRef(shared) : PyTuple_New(0);
    e->updates = updates ? Py_NewRef(updates) : PyTuple_New(0);
    e->labels = labels ? Py_NewRef(labels) : PyTuple_New(0);
    e->acquire = acquire; /* (new references) */
    e->release = release;
    e->vectorcall = entry_call;
    e->fast = Py_NewRef(fast);
    e->owner = Py_NewRef(owner);
    e->call = Py_NewRef(call);
    e->declined = Py_NewRef(declined);
    e->structure = Py_NewRef(structure);
    e->names = Py_NewRef(names);
    if (e->shared == NULL || e->updates == NULL || e->labels == NULL) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

/* The function holds its entry; the entry holds the function only weakly, so a function
 * nothing else holds goes at once (its device memory with it), not at the next collection. */
static int entry_traverse(PyObject *self, visitproc visit, void *arg) {
    Entry *e = (Entry *)self;
    Py_VISIT(e->fast);
    Py_VISIT(e->owner);
    Py_VISIT(e->call);
    Py_VISIT(e->declined);
    Py_VISIT(e->structure);
    Py_VISIT(e->names);
    Py_VISIT(e->shared);
    Py_VISIT(e->updates);
    Py_VISIT(e->labels);
    Py_VISIT(e->acquire);
    Py_VISIT(e->release);
    return 0;
}

static int entry_clear(PyObject *self) {
    Entry *e = (Entry *)self;
    Py_CLEAR(e->fast);
    Py_CLEAR(e->owner);
    Py_CLEAR(e->call);
    Py_CLEAR(e->declined);
    Py_CLEAR(e->structure);
    Py_CLEAR(e->names);
    Py_CLEAR(e->shared);
    Py_CLEAR(e->updates);
    Py_CLEAR(e->labels);
    Py_CLEAR(e->acquire);
    Py_CLEAR(e->release);
    return 0;
}

static void entry_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    entry_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* ``fast`` is set once the first call has warned (None until then); never NULL. */
static int entry_set_fast(PyObject *self, PyObject *value, void *unused) {
    (void)unused;
    if (value == NULL || (value != Py_None && !PyCallable_Check(value))) {
        PyErr_SetString(PyExc_TypeError, "Entry.fast: the runner or None");
        return -1;
    }
    Py_XSETREF(((Entry *)self)->fast, Py_NewRef(value));
    return 0;
}

static PyObject *entry_get_fast(PyObject *self, void *unused) {
    (void)unused;
    PyObject *fast = ((Entry *)self)->fast;
    return Py_NewRef(fast != NULL ? fast : Py_None);
}

static PyMethodDef entry_methods[] = {
    {"enter", entry_enter, METH_NOARGS,
     "Take the function's turns for this thread (the Python path's calls): True, or False "
     "where this thread holds them already."},
    {"leave", entry_leave, METH_NOARGS, "Give the turns back."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef entry_getset[] = {
    {"fast", entry_get_fast, entry_set_fast,
     "The runner called directly (its results are the caller's as they come), or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "symnb.backends.c._runner.Entry",
    .tp_doc = "A compiled function's entry point: "
              "Entry(fast, owner, call, declined, structure, names, shared=(), updates=(), "
              "turns=None, labels=()).",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_new = entry_new,
    .tp_dealloc = entry_dealloc,
    .tp_traverse = entry_traverse,
    .tp_clear = entry_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_getset = entry_getset,
    .tp_methods = entry_methods,
};
