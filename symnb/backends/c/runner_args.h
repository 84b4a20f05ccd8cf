/* runner.c's arguments (included by it before the output buffers): each checked input
 * taken as planned, an exact ndarray as it is, a 0-d input's Python number or NumPy scalar
 * written into the array the last call used for it; NULL (no error set) for anything else,
 * which the input checks in Python convert or refuse. */

/* The 0-d array (of input i's type) its value is written into: the one the last call used
 * when nothing else holds it now (no result, view or user took it), else a new one kept for
 * the next call. A new reference, or NULL with an error set. */
static PyObject *scalar_slot(Schedule *s, int i) {
    PyObject *last = s->in_scalars[i];
    if (last != NULL && Py_REFCNT(last) == 1) return Py_NewRef(last);
    PyObject *fresh = PyArray_SimpleNew(0, NULL, s->in_types[i]);
    if (fresh == NULL) return NULL;
    Py_XSETREF(s->in_scalars[i], Py_NewRef(fresh));
    return fresh;
}

/* A Python float, int or bool for a 0-d input i, converted as the input checks convert it
 * (symnb/compile/inputs.py's _from_python): a float into a float input rounded to it, an
 * int into an integer or float input and a bool into a bool input where the value survives
 * unchanged. NULL (no error set) for anything else: the input checks then convert it or
 * raise the error naming the input. */
static PyObject *python_number(Schedule *s, int i, PyObject *arg) {
    int type = s->in_types[i];
    double real = 0.0;
    long long whole = 0;
    int kind = 0; /* 1 a float, 2 an int, 3 a bool */
    if (PyFloat_CheckExact(arg)) {
        real = PyFloat_AS_DOUBLE(arg);
        kind = 1;
        if (type == NPY_FLOAT32 && isfinite(real) && fabs(real) > FLT_MAX) return NULL;
        if (type != NPY_FLOAT64 && type != NPY_FLOAT32) return NULL;
    } else if (PyLong_CheckExact(arg)) {
        int overflow = 0;
        whole = PyLong_AsLongLongAndOverflow(arg, &overflow);
        if (overflow || (whole == -1 && PyErr_Occurred())) { PyErr_Clear(); return NULL; }
        kind = 2;
        /* Only the four types stored below: a narrower input (bool, int8, uint16, float16...)
         * would get 8 bytes written into its smaller element. */
        if (type != NPY_FLOAT64 && type != NPY_FLOAT32 && type != NPY_INT32 && type != NPY_INT64)
            return NULL;
        long long exact = type == NPY_FLOAT64 ? (1LL << 53) : type == NPY_FLOAT32 ? (1LL << 24)
                          : type == NPY_INT32 ? INT32_MAX : LLONG_MAX;
        if (whole > exact || whole < -exact) return NULL;
    } else if (PyBool_Check(arg)) {
        if (type != NPY_BOOL) return NULL;
        kind = 3;
    } else {
        return NULL;
    }
    PyObject *out = scalar_slot(s, i);
    if (out == NULL) { PyErr_Clear(); return NULL; }
    void *at = PyArray_DATA((PyArrayObject *)out);
    if (kind == 3) *(npy_bool *)at = arg == Py_True;
    else if (type == NPY_FLOAT64) *(double *)at = kind == 1 ? real : (double)whole;
    else if (type == NPY_FLOAT32) *(float *)at = kind == 1 ? (float)real : (float)whole;
    else if (type == NPY_INT32) *(int32_t *)at = (int32_t)whole;
    else *(int64_t *)at = (int64_t)whole;
    return out;
}

/* A NumPy scalar (np.float64(2.5)) for a 0-d input i: its value in input i's array when it
 * is exactly the input's scalar type, else a new array of its own type (the checks below
 * then decline one of another type). NULL with no error set when it fails. */
static PyObject *numpy_scalar(Schedule *s, int i, PyObject *arg) {
    int type = s->in_types[i];
    PyObject *array;
    if (Py_TYPE(arg) == (PyTypeObject *)s->in_scalar_types[i]) {
        array = scalar_slot(s, i);
        if (array == NULL) { PyErr_Clear(); return NULL; }
        void *at = PyArray_DATA((PyArrayObject *)array);
        if (type == NPY_FLOAT64) *(double *)at = ((PyDoubleScalarObject *)arg)->obval;
        else if (type == NPY_FLOAT32) *(float *)at = ((PyFloatScalarObject *)arg)->obval;
        else PyArray_ScalarAsCtype(arg, at);
        return array;
    }
    array = PyArray_FromScalar(arg, NULL);
    if (array == NULL) PyErr_Clear();
    return array;
}

/* The argument as an array of the planned type, shape and named dims (a new reference), or
 * NULL with no error set when it is not one. */
static PyObject *checked_input(Schedule *s, int i, PyObject *arg, int64_t *names) {
    PyObject *array;
    if (PyArray_CheckExact(arg)) {
        Py_INCREF(arg);
        array = arg;
    } else if (s->in_ndim[i] == 0 && PyArray_IsScalar(arg, Generic)) {
        array = numpy_scalar(s, i, arg);
        if (array == NULL) return NULL;
    } else if (s->in_ndim[i] == 0) {
        array = python_number(s, i, arg);
        if (array == NULL) return NULL;
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
