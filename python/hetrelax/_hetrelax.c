/*
 * hetrelax._hetrelax: the thin layer between Python and the C library. It turns NumPy arrays
 * and plain values into the library's structs and back, releases the GIL around every call
 * that computes, and turns statuses into exceptions carrying the library's message. Names,
 * defaults and friendly argument checking live in the Python package (the .py files beside this one); this
 * file checks again only what would crash it (array types, sizes, NULLs).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "hetrelax/hetrelax.h"
#include "hetrelax/sparse.h"

/* ------------------------------------------------------------------ exceptions */

static PyObject *Error, *InvalidArgumentError, *UnsupportedError, *NoDeviceError, *DeviceError,
    *DivergedError, *FormatError, *OutOfMemoryError;

/* Raises the exception of `st` with `msg` (the library's words) and the status's name. */
static PyObject *raise_status(hr_status st, const char *msg)
{
    PyObject *type = Error;
    switch (st) {
    case HR_ERR_INVALID_ARG: type = InvalidArgumentError; break;
    case HR_ERR_UNSUPPORTED: type = UnsupportedError; break;
    case HR_ERR_NO_DEVICE: type = NoDeviceError; break;
    case HR_ERR_DEVICE: type = DeviceError; break;
    case HR_ERR_DIVERGED: type = DivergedError; break;
    case HR_ERR_FORMAT: type = FormatError; break;
    case HR_ERR_NO_MEMORY: type = OutOfMemoryError; break;
    default: break;
    }
    const char *status = hr_status_string(st);
    PyObject *text = PyUnicode_FromString(msg && *msg ? msg : status ? status : "error");
    if (!text) return NULL;
    PyObject *exc = PyObject_CallOneArg(type, text);
    Py_DECREF(text);
    if (!exc) return NULL;
    PyObject *code = PyLong_FromLong((long)st);
    PyObject *name = PyUnicode_FromString(status ? status : "");
    if (code && name && PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "status_name", name) == 0)
        PyErr_SetObject(type, exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_DECREF(exc);
    return NULL;
}

/* ------------------------------------------------------------------ arrays */

/* A NumPy array of `type` (NPY_DOUBLE, NPY_FLOAT, ...), C-contiguous, aligned, of `count`
 * elements (count < 0: any), writable when `writable`: its data, else NULL and a TypeError or
 * ValueError naming `what`. The Python layer converts and checks first; this guards the C. */
static void *array_data(PyObject *o, const char *what, int type, Py_ssize_t count, int writable)
{
    if (!PyArray_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a NumPy array, got %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type) {
        /* by name: NumPy 2 hides the descriptor's fields */
        const char *want = type == NPY_DOUBLE  ? "float64"
                           : type == NPY_FLOAT ? "float32"
                           : type == NPY_INT32 ? "int32"
                                               : "int64";
        PyErr_Format(PyExc_TypeError, "%s: expected dtype %s, got %S", what, want,
                     (PyObject *)PyArray_DESCR(a));
        return NULL;
    }
    if (!PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError, "%s: the array must be C-contiguous and aligned", what);
        return NULL;
    }
    if (writable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError, "%s: the array is read-only", what);
        return NULL;
    }
    if (count >= 0 && PyArray_SIZE(a) != count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd values, got %zd", what, count,
                     (Py_ssize_t)PyArray_SIZE(a));
        return NULL;
    }
    return PyArray_DATA(a);
}

/* A new 1-D array of `n` elements of `type` holding a copy of `src`. */
static PyObject *array_copy(const void *src, npy_intp n, int type, size_t elsize)
{
    PyObject *a = PyArray_SimpleNew(1, &n, type);
    if (a && n > 0) memcpy(PyArray_DATA((PyArrayObject *)a), src, (size_t)n * elsize);
    return a;
}

/* ------------------------------------------------------------------ Ctrl-C */

/* While a solve runs without the GIL on the main thread, SIGINT asks the solve to stop
 * (hr_grid_solver_request_stop is safe in a signal handler) instead of waiting for Python's
 * handler, which cannot run until the solve returns. */
static hr_grid_solver *volatile sig_target;
static volatile sig_atomic_t sig_fired;

static void on_sigint(int sig)
{
    (void)sig;
    sig_fired = 1;
    hr_grid_solver *s = sig_target;
    if (s) hr_grid_solver_request_stop(s);
}

typedef struct {
    int installed;
    struct sigaction old;
    hr_grid_solver *prev_target;
    sig_atomic_t prev_fired;
} sig_guard;

/* Installs the handler (want: the caller is on the main thread and asked for it), unless
 * SIGINT is ignored. Nested solves (from a callback) stack. Call with the GIL held. */
static void sig_enter(sig_guard *g, int want, hr_grid_solver *target)
{
    g->installed = 0;
    if (!want) return;
    struct sigaction cur;
    if (sigaction(SIGINT, NULL, &cur) != 0) return;
    if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_IGN) return;
    g->prev_target = sig_target;
    g->prev_fired = sig_fired;
    sig_target = target;
    sig_fired = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, &g->old) != 0) {
        sig_target = g->prev_target;
        return;
    }
    g->installed = 1;
}

/* Restores the previous handler; 1 when SIGINT came in between. May run without the GIL. */
static int sig_leave(sig_guard *g)
{
    if (!g->installed) return 0;
    sigaction(SIGINT, &g->old, NULL);
    const int fired = sig_fired != 0;
    sig_target = g->prev_target;
    sig_fired = g->prev_fired;
    g->installed = 0;
    return fired;
}

/* With the GIL: hands a SIGINT that came during the solve to Python's own handler (by default
 * KeyboardInterrupt). -1 with an exception set when the handler raised. */
static int sig_deliver(int fired)
{
    if (!fired) return 0;
#if PY_VERSION_HEX >= 0x030A0000
    PyErr_SetInterruptEx(SIGINT);
#else
    PyErr_SetInterrupt();
#endif
    return PyErr_CheckSignals();
}

/* ------------------------------------------------------------------ the problem */

/* The problem as the Python layer describes it (hetrelax/problem.py, Poisson._desc): a tuple
 *   (n, lengths, faces, coef, coef_values, rhs, rhs_values[, rhs_seed])
 * n: (nx, ny) or (nx, ny, nz), the C axis order; lengths: (lx, ly, lz) or None (the model's);
 * faces: 2 * dim tuples (kind, value, values or None) in hr_face order; coef: a float;
 * coef_values, rhs_values: float64 arrays or None; rhs: an hr_rhs; rhs_seed: HR_RHS_RANDOM's
 * seed, an int in [0, 2^64) (default 1). The arrays stay owned by the tuple, which the caller
 * holds through the call. */
static int fill_problem(PyObject *desc, hr_problem *p)
{
    PyObject *n, *lengths, *faces, *coef_values, *rhs_values, *rhs_seed = NULL;
    double coef;
    int rhs;
    if (!PyArg_ParseTuple(desc, "O!OO!dOiO|O!;problem description", &PyTuple_Type, &n, &lengths,
                          &PyTuple_Type, &faces, &coef, &coef_values, &rhs, &rhs_values, &PyLong_Type,
                          &rhs_seed))
        return -1;
    const Py_ssize_t dim = PyTuple_GET_SIZE(n);
    if (dim != 2 && dim != 3) {
        PyErr_SetString(PyExc_ValueError, "problem: 2 or 3 extents");
        return -1;
    }
    int ext[3] = {1, 1, 1};
    for (Py_ssize_t a = 0; a < dim; a++) {
        const long v = PyLong_AsLong(PyTuple_GET_ITEM(n, a));
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 1 || v > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "problem: extent %ld out of range", v);
            return -1;
        }
        ext[a] = (int)v;
    }
    hr_status st = hr_problem_init_model(p, (int)dim, ext[0], ext[1], ext[2]);
    if (st != HR_OK) {
        raise_status(st, hr_last_error());
        return -1;
    }
    if (lengths != Py_None) {
        double l[3];
        if (!PyArg_ParseTuple(lengths, "ddd;lengths: three floats", &l[0], &l[1], &l[2])) return -1;
        if ((st = hr_problem_set_lengths(p, l[0], l[1], l[2])) != HR_OK) {
            raise_status(st, hr_last_error());
            return -1;
        }
    }
    if (PyTuple_GET_SIZE(faces) != 2 * dim) {
        PyErr_Format(PyExc_ValueError, "problem: %zd faces, expected %zd", PyTuple_GET_SIZE(faces), 2 * dim);
        return -1;
    }
    /* the fields directly, as given: periodic pairs are hr_problem_validate's to judge */
    for (Py_ssize_t f = 0; f < 2 * dim; f++) {
        int kind;
        double value;
        PyObject *values;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(faces, f), "idO;face: (kind, value, values)", &kind, &value,
                              &values))
            return -1;
        if (kind < HR_BC_DIRICHLET || kind > HR_BC_PERIODIC) {
            PyErr_Format(PyExc_ValueError, "face %s: unknown kind %d", hr_face_name((hr_face)f), kind);
            return -1;
        }
        p->bc[f].kind = (hr_bc_kind)kind;
        p->bc[f].value = value;
        p->bc[f].values = NULL;
        if (values != Py_None) {
            char what[32];
            snprintf(what, sizeof what, "bc[%s]", hr_face_name((hr_face)f));
            /* the count depends on the other faces' kinds: checked once all are set */
            const double *v = array_data(values, what, NPY_DOUBLE, -1, 0);
            if (!v) return -1;
            p->bc[f].values = v;
        }
    }
    p->coef = coef;
    const size_t count = hr_problem_unknowns(p);
    if (coef_values != Py_None) {
        if (!(p->coef_values = array_data(coef_values, "coef", NPY_DOUBLE, (Py_ssize_t)count, 0))) return -1;
    }
    if (rhs < HR_RHS_SPIKE || rhs > HR_RHS_RANDOM) {
        PyErr_Format(PyExc_ValueError, "f: unknown right-hand side %d", rhs);
        return -1;
    }
    p->rhs = (hr_rhs)rhs;
    if (rhs_seed) {
        const unsigned long long seed = PyLong_AsUnsignedLongLong(rhs_seed);
        if (seed == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "f: a random seed is an int in [0, 2**64)");
            return -1;
        }
        p->rhs_seed = seed;
    }
    if (rhs_values != Py_None) {
        if (!(p->rhs_values = array_data(rhs_values, "f", NPY_DOUBLE, (Py_ssize_t)count, 0))) return -1;
    }
    for (Py_ssize_t f = 0; f < 2 * dim; f++) {
        if (!p->bc[f].values) continue;
        const Py_ssize_t need = (Py_ssize_t)hr_problem_face_points(p, (hr_face)f);
        PyArrayObject *a = (PyArrayObject *)PyTuple_GET_ITEM(PyTuple_GET_ITEM(faces, f), 2);
        if (PyArray_SIZE(a) != need) {
            PyErr_Format(PyExc_ValueError, "bc[%s]: expected %zd values, got %zd", hr_face_name((hr_face)f),
                         need, (Py_ssize_t)PyArray_SIZE(a));
            return -1;
        }
    }
    char why[300];
    if ((st = hr_problem_validate(p, why, sizeof why)) != HR_OK) {
        raise_status(st, why);
        return -1;
    }
    return 0;
}

static PyObject *py_problem_describe(PyObject *self, PyObject *desc)
{
    (void)self;
    hr_problem p;
    if (fill_problem(desc, &p)) return NULL;
    PyObject *h = PyTuple_New(p.dim);
    if (!h) return NULL;
    for (int a = 0; a < p.dim; a++)
        PyTuple_SET_ITEM(h, a, PyFloat_FromDouble(hr_problem_spacing(&p, a)));
    PyObject *len = Py_BuildValue("(ddd)", p.length[0], p.length[1], p.length[2]);
    PyObject *r = Py_BuildValue("{s:N,s:N,s:n,s:O,s:O}", "spacing", h, "lengths", len, "unknowns",
                                (Py_ssize_t)hr_problem_unknowns(&p), "model",
                                hr_problem_is_model(&p) ? Py_True : Py_False, "singular",
                                hr_problem_is_singular(&p) ? Py_True : Py_False);
    return r;
}

static PyObject *py_problem_rhs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *desc, *fo;
    if (!PyArg_ParseTuple(args, "OO", &desc, &fo)) return NULL;
    hr_problem p;
    if (fill_problem(desc, &p)) return NULL;
    const npy_intp n = (npy_intp)hr_problem_unknowns(&p);
    const double *f = NULL;
    if (fo != Py_None && !(f = array_data(fo, "f", NPY_DOUBLE, n, 0))) return NULL;
    PyObject *b = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (!b) return NULL;
    hr_system_info info;
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_problem_rhs(&p, f, PyArray_DATA((PyArrayObject *)b), (size_t)n, &info);
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) {
        Py_DECREF(b);
        return raise_status(st, hr_last_error());
    }
    return Py_BuildValue("N{s:O,s:d,s:d}", b, "singular", info.singular ? Py_True : Py_False, "rhs_shift",
                         info.rhs_shift, "rhs_projection", info.rhs_projection);
}

/* ------------------------------------------------------------------ CSR */

typedef struct {
    PyObject_HEAD hr_csr *A;
} CsrObject;

static void csr_dealloc(CsrObject *self)
{
    hr_csr_free(self->A);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject CsrType;

static PyObject *csr_wrap(hr_csr *A)
{
    CsrObject *o = PyObject_New(CsrObject, &CsrType);
    if (!o) {
        hr_csr_free(A);
        return NULL;
    }
    o->A = A;
    return (PyObject *)o;
}

static PyObject *csr_arrays(CsrObject *self, PyObject *unused)
{
    (void)unused;
    const hr_csr *A = self->A;
    PyObject *ptr = array_copy(A->row_ptr, (npy_intp)A->n_rows + 1, NPY_INT64, sizeof(int64_t));
    PyObject *col = ptr ? array_copy(A->col, (npy_intp)A->nnz, NPY_INT32, sizeof(int32_t)) : NULL;
    PyObject *val = col ? array_copy(A->val, (npy_intp)A->nnz, NPY_DOUBLE, sizeof(double)) : NULL;
    if (!val) {
        Py_XDECREF(ptr);
        Py_XDECREF(col);
        return NULL;
    }
    return Py_BuildValue("NNN", ptr, col, val);
}

static PyObject *csr_get_shape(CsrObject *self, void *unused)
{
    (void)unused;
    return Py_BuildValue("(ii)", self->A->n_rows, self->A->n_cols);
}

static PyObject *csr_get_nnz(CsrObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromLongLong((long long)self->A->nnz);
}

static PyObject *csr_is_symmetric(CsrObject *self, PyObject *unused)
{
    (void)unused;
    return PyBool_FromLong(hr_csr_is_symmetric(self->A));
}

static PyMethodDef csr_methods[] = {
    {"arrays", (PyCFunction)csr_arrays, METH_NOARGS, "(indptr int64, indices int32, data float64): copies."},
    {"is_symmetric", (PyCFunction)csr_is_symmetric, METH_NOARGS, "A equals its transpose exactly."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef csr_getset[] = {{"shape", (getter)csr_get_shape, NULL, "(rows, columns)", NULL},
                                   {"nnz", (getter)csr_get_nnz, NULL, "stored entries", NULL},
                                   {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject CsrType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hetrelax._hetrelax.Csr",
    .tp_basicsize = sizeof(CsrObject),
    .tp_dealloc = (destructor)csr_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A matrix held by the C library (hr_csr): made by csr_from_coo, mm_read or problem_matrix.",
    .tp_methods = csr_methods,
    .tp_getset = csr_getset,
};

static PyObject *py_csr_from_coo(PyObject *self, PyObject *args)
{
    (void)self;
    int rows, cols;
    PyObject *ri, *ci, *v;
    if (!PyArg_ParseTuple(args, "iiOOO", &rows, &cols, &ri, &ci, &v)) return NULL;
    const int32_t *r = array_data(ri, "row indices", NPY_INT32, -1, 0);
    if (!r) return NULL;
    const Py_ssize_t nnz = PyArray_SIZE((PyArrayObject *)ri);
    const int32_t *c = array_data(ci, "column indices", NPY_INT32, nnz, 0);
    const double *x = c ? array_data(v, "data", NPY_DOUBLE, nnz, 0) : NULL;
    if (!x) return NULL;
    hr_csr *A = NULL;
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_csr_from_coo(rows, cols, (int64_t)nnz, r, c, x, &A);
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) return raise_status(st, hr_last_error());
    return csr_wrap(A);
}

static PyObject *py_problem_matrix(PyObject *self, PyObject *desc)
{
    (void)self;
    hr_problem p;
    if (fill_problem(desc, &p)) return NULL;
    hr_csr *A = NULL;
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_problem_matrix(&p, &A);
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) return raise_status(st, hr_last_error());
    return csr_wrap(A);
}

static PyObject *mm_error(hr_status st, const char *path, const hr_mm_error *e)
{
    char msg[512];
    if (e->msg[0] && e->line > 0)
        snprintf(msg, sizeof msg, "%s:%ld: %s", path, e->line, e->msg);
    else if (e->msg[0])
        snprintf(msg, sizeof msg, "%s: %s", path, e->msg);
    else
        snprintf(msg, sizeof msg, "%s: %s", path, hr_status_string(st));
    if (st == HR_ERR_IO) {
        PyErr_SetString(PyExc_OSError, msg); /* a file that cannot be read: Python's usual error */
        return NULL;
    }
    return raise_status(st, msg);
}

static PyObject *py_mm_read(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    const char *path = PyBytes_AS_STRING(bytes);
    hr_csr *A = NULL;
    hr_mm_error e;
    memset(&e, 0, sizeof e);
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_mm_read_csr(path, &A, &e);
    Py_END_ALLOW_THREADS;
    PyObject *r = st == HR_OK ? csr_wrap(A) : mm_error(st, path, &e);
    Py_DECREF(bytes);
    return r;
}

static PyObject *py_mm_read_vector(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *bytes;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    const char *path = PyBytes_AS_STRING(bytes);
    double *v = NULL;
    int n = 0;
    hr_mm_error e;
    memset(&e, 0, sizeof e);
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_mm_read_vector(path, &v, &n, &e);
    Py_END_ALLOW_THREADS;
    PyObject *r = st == HR_OK ? array_copy(v, n, NPY_DOUBLE, sizeof(double)) : mm_error(st, path, &e);
    free(v);
    Py_DECREF(bytes);
    return r;
}

/* ------------------------------------------------------------------ callbacks */

/* What a monitor needs: the Python callable, where an exception it raised waits until the
 * solve returns, and (sparse solves) the Ctrl-C flag to answer. */
typedef struct {
    PyObject *callback; /* or NULL */
    PyObject *exc;      /* the callback's exception (3.11: type, value, traceback) */
    PyObject *exc_value, *exc_tb;
    int check_sigint; /* sparse: no request_stop entry, so the monitor answers SIGINT */
} monitor_ctx;

static int monitor_trampoline(long iteration, double residual, void *user)
{
    monitor_ctx *m = user;
    if (m->check_sigint && sig_fired) return 1;
    if (!m->callback) return 0;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = 0;
    if (!m->exc) {
        PyObject *r = PyObject_CallFunction(m->callback, "ld", iteration, residual);
        if (!r) {
            PyErr_Fetch(&m->exc, &m->exc_value, &m->exc_tb);
            stop = 1;
        } else {
            stop = PyObject_IsTrue(r);
            Py_DECREF(r);
            if (stop < 0) {
                PyErr_Fetch(&m->exc, &m->exc_value, &m->exc_tb);
                stop = 1;
            }
        }
    } else {
        stop = 1;
    }
    PyGILState_Release(g);
    return stop;
}

/* With the GIL: re-raises the callback's exception, 1; else 0. */
static int monitor_reraise(monitor_ctx *m)
{
    if (!m->exc) return 0;
    PyErr_Restore(m->exc, m->exc_value, m->exc_tb);
    m->exc = m->exc_value = m->exc_tb = NULL;
    return 1;
}

/* ------------------------------------------------------------------ the grid solver */

typedef struct {
    PyObject_HEAD hr_grid_solver *s;
    int busy;         /* a solve of this handle is under way (the GIL guards it) */
    monitor_ctx mon;  /* the callback of the solve under way */
    int has_monitor;  /* created with the trampoline as its monitor */
    Py_ssize_t count; /* unknowns: the length of every grid array */
} GridSolverObject;

static void gs_dealloc(GridSolverObject *self)
{
    if (self->s) {
        hr_grid_solver *s = self->s;
        self->s = NULL;
        Py_BEGIN_ALLOW_THREADS; /* a GPU or thread team may take a moment to shut down */
        hr_grid_solver_free(s);
        Py_END_ALLOW_THREADS;
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int gs_init(GridSolverObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"problem",
                            "method",
                            "omega",
                            "kernel",
                            "alpha",
                            "precision",
                            "cycle",
                            "pre",
                            "post",
                            "smoother",
                            "levels",
                            "backend",
                            "threads",
                            "bind",
                            "device",
                            "gpus",
                            "split",
                            "tol",
                            "max_iters",
                            "check_every",
                            "divtol",
                            "monitor",
                            "monitor_every",
                            "keep_history",
                            "symmetric",
                            "flush_subnormals",
                            NULL};
    PyObject *desc;
    hr_grid_options o;
    hr_grid_options_default(&o);
    int method = 0, precision = 0, cycle = 0, backend = 0, bind = 0, monitor = 0;
    const char *kernel = NULL, *smoother = NULL;
    if (self->s) {
        PyErr_SetString(PyExc_RuntimeError, "GridSolver: already set up");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw,
                                     "O|$idzii"
                                     "iiizi"
                                     "iiiiid"
                                     "dlld"
                                     "pl"
                                     "ppp",
                                     names, &desc, &method, &o.omega, &kernel, &o.alpha, &precision, &cycle,
                                     &o.pre, &o.post, &smoother, &o.levels, &backend, &o.threads, &bind,
                                     &o.device, &o.gpus, &o.split, &o.tol, &o.max_iters, &o.check_every,
                                     &o.divtol, &monitor, &o.monitor_every, &o.keep_history, &o.symmetric,
                                     &o.flush_subnormals))
        return -1;
    hr_problem p;
    if (fill_problem(desc, &p)) return -1;
    o.method = (hr_method)method;
    o.kernel = kernel;
    o.precision = (hr_precision)precision;
    o.cycle = (hr_cycle)cycle;
    o.smoother = smoother;
    o.backend = (hr_backend)backend;
    o.bind = (hr_bind)bind;
    if (monitor) {
        o.monitor = monitor_trampoline;
        o.monitor_user = &self->mon;
    }
    self->has_monitor = monitor;
    hr_grid_solver *s = NULL;
    hr_status st;
    char msg[512];
    Py_BEGIN_ALLOW_THREADS;
    st = hr_grid_solver_create(&p, &o, &s);
    if (st != HR_OK) snprintf(msg, sizeof msg, "%s", hr_last_error()); /* the thread's: read it here */
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) {
        raise_status(st, msg);
        return -1;
    }
    self->s = s;
    self->count = (Py_ssize_t)hr_problem_unknowns(&p);
    return 0;
}

static int gs_ready(GridSolverObject *self)
{
    if (!self->s) {
        PyErr_SetString(PyExc_ValueError, "the solver is closed");
        return 0;
    }
    if (self->busy) {
        PyErr_SetString(
            PyExc_RuntimeError,
            "the solver is solving already (another thread, or its own callback): one solve at a time "
            "per Solver");
        return 0;
    }
    return 1;
}

static PyObject *result_dict(const hr_result *r)
{
    return Py_BuildValue(
        "{s:l,s:s,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:d,s:d,s:s,s:s,s:s,s:s,s:s}", "iterations",
        r->iterations, "reason", hr_reason_string(r->reason), "relative_residual", r->relative_residual,
        "time_s", r->time_s, "time_sweeps_s", r->time_sweeps_s, "time_setup_s", r->time_setup_s, "time_h2d_s",
        r->time_h2d_s, "time_d2h_s", r->time_d2h_s, "time_residual_s", r->time_residual_s,
        "convergence_factor", r->convergence_factor, "last_factor", r->last_factor, "levels", r->levels,
        "rhs_projection", r->rhs_projection, "max_error", r->max_error, "backend", r->backend, "kernel",
        r->kernel, "method", hr_method_name(r->method) ? hr_method_name(r->method) : "", "precision",
        hr_precision_name(r->precision) ? hr_precision_name(r->precision) : "", "device_name",
        r->device_name);
}

/* What one solve reads and writes: host arrays (NumPy's) or device arrays. */
typedef struct solve_call {
    int device;
    const double *f, *x0; /* host */
    void *dst;
    hr_precision prec;
    hr_device_arrays a; /* device */
} solve_call;

/* The solve of c with the callback cb (or None) and Ctrl-C caught (catch_sigint): returns
 * (status, result dict); raises for statuses other than HR_OK and HR_ERR_DIVERGED, which the
 * Python layer turns into its exception with the result. */
static PyObject *run_solve(GridSolverObject *self, PyObject *cb, int catch_sigint, const solve_call *c)
{
    if (!gs_ready(self)) return NULL;
    if (cb != Py_None && !PyCallable_Check(cb)) {
        PyErr_SetString(PyExc_TypeError, "callback: must be callable");
        return NULL;
    }
    if (cb != Py_None && !self->has_monitor) {
        PyErr_SetString(PyExc_ValueError, "callback: this GridSolver was set up without a monitor");
        return NULL;
    }
    const size_t n = (size_t)self->count;
    self->busy = 1;
    self->mon.callback = cb == Py_None ? NULL : cb;
    self->mon.check_sigint = 0;
    Py_XINCREF(self->mon.callback);
    sig_guard g;
    sig_enter(&g, catch_sigint, self->s);
    hr_result r;
    memset(&r, 0, sizeof r);
    hr_status st, cst = HR_OK;
    int fired;
    char msg[512] = "";
    Py_BEGIN_ALLOW_THREADS;
    st = c->device ? hr_grid_solver_solve_device(self->s, &c->a, &r) : hr_grid_solver_solve(self->s, c->f, c->x0, &r);
    fired = sig_leave(&g);
    if (st != HR_OK && st != HR_ERR_DIVERGED)
        snprintf(msg, sizeof msg, "%s", hr_grid_solver_last_error(self->s));
    if ((st == HR_OK || st == HR_ERR_DIVERGED) && !c->device && c->dst) {
        cst = hr_grid_solver_solution(self->s, c->prec, c->dst, n);
        if (cst != HR_OK) snprintf(msg, sizeof msg, "%s", hr_grid_solver_last_error(self->s));
    }
    Py_END_ALLOW_THREADS;
    Py_XDECREF(self->mon.callback);
    self->mon.callback = NULL;
    self->busy = 0;
    if (monitor_reraise(&self->mon)) return NULL;
    if (sig_deliver(fired) < 0) return NULL;
    if (st != HR_OK && st != HR_ERR_DIVERGED) return raise_status(st, msg);
    if (cst != HR_OK) return raise_status(cst, msg);
    PyObject *d = result_dict(&r);
    if (!d) return NULL;
    return Py_BuildValue("iN", (int)st, d);
}

/* solve(f, x0, out, callback, catch_sigint): one solve from NumPy arrays; the solution into
 * `out` (float64 or float32, or None). */
static PyObject *gs_solve(GridSolverObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"f", "x0", "out", "callback", "catch_sigint", NULL};
    PyObject *fo = Py_None, *xo = Py_None, *out = Py_None, *cb = Py_None;
    int catch_sigint = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOOp", names, &fo, &xo, &out, &cb, &catch_sigint))
        return NULL;
    if (!gs_ready(self)) return NULL;
    const Py_ssize_t n = self->count;
    solve_call c;
    memset(&c, 0, sizeof c);
    c.prec = HR_PREC_DOUBLE;
    if (out != Py_None) {
        if (!PyArray_Check(out)) {
            PyErr_SetString(PyExc_TypeError, "out: expected a NumPy array");
            return NULL;
        }
        const int t = PyArray_TYPE((PyArrayObject *)out);
        c.prec = t == NPY_FLOAT ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
        if (!(c.dst = array_data(out, "out", t == NPY_FLOAT ? NPY_FLOAT : NPY_DOUBLE, n, 1))) return NULL;
    }
    if (fo != Py_None && !(c.f = array_data(fo, "f", NPY_DOUBLE, n, 0))) return NULL;
    if (xo != Py_None && !(c.x0 = array_data(xo, "x0", NPY_DOUBLE, n, 0))) return NULL;
    return run_solve(self, cb, catch_sigint, &c);
}

/* A device pointer argument: an int (0: none). */
static int device_pointer(PyObject *o, const char *what, void **p)
{
    *p = NULL;
    if (o == Py_None) return 1;
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a device pointer (int), got %.100s", what, Py_TYPE(o)->tp_name);
        return 0;
    }
    *p = PyLong_AsVoidPtr(o);
    return !PyErr_Occurred();
}

/* solve_device(f, x0, out, single, stream, callback, catch_sigint): one solve from device
 * pointers (ints, or None; `__cuda_array_interface__`'s data, checked by the Python layer for
 * shape and type) of fp32 (single) or fp64 values; stream: the producers' cudaStream_t (int,
 * or None: the legacy default stream). The solution is written into `out` on the device. */
static PyObject *gs_solve_device(GridSolverObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"f", "x0", "out", "single", "stream", "callback", "catch_sigint", NULL};
    PyObject *fo = Py_None, *xo = Py_None, *out = Py_None, *so = Py_None, *cb = Py_None;
    int single = 0, catch_sigint = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOpOOp", names, &fo, &xo, &out, &single, &so, &cb,
                                     &catch_sigint))
        return NULL;
    solve_call c;
    memset(&c, 0, sizeof c);
    c.device = 1;
    c.a.prec = single ? HR_PREC_SINGLE : HR_PREC_DOUBLE;
    void *f, *x0, *dst, *stream;
    if (!device_pointer(fo, "f", &f) || !device_pointer(xo, "x0", &x0) || !device_pointer(out, "out", &dst) ||
        !device_pointer(so, "stream", &stream))
        return NULL;
    c.a.rhs = f, c.a.x0 = x0, c.a.x = dst, c.a.stream = stream;
    return run_solve(self, cb, catch_sigint, &c);
}

static PyObject *gs_solution(GridSolverObject *self, PyObject *out)
{
    if (!gs_ready(self)) return NULL;
    if (!PyArray_Check(out)) {
        PyErr_SetString(PyExc_TypeError, "out: expected a NumPy array");
        return NULL;
    }
    const int single = PyArray_TYPE((PyArrayObject *)out) == NPY_FLOAT;
    void *dst = array_data(out, "out", single ? NPY_FLOAT : NPY_DOUBLE, self->count, 1);
    if (!dst) return NULL;
    const size_t n = (size_t)self->count;
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_grid_solver_solution(self->s, single ? HR_PREC_SINGLE : HR_PREC_DOUBLE, dst, n);
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) return raise_status(st, hr_grid_solver_last_error(self->s));
    Py_RETURN_NONE;
}

static PyObject *gs_history(GridSolverObject *self, PyObject *unused)
{
    (void)unused;
    if (!gs_ready(self)) return NULL;
    const long *it = NULL;
    const double *res = NULL;
    const size_t n = hr_grid_solver_history(self->s, &it, &res);
    PyObject *a = PyArray_SimpleNew(1, (npy_intp[]){(npy_intp)n}, NPY_INT64);
    PyObject *b = a ? array_copy(res, (npy_intp)n, NPY_DOUBLE, sizeof(double)) : NULL;
    if (!b) {
        Py_XDECREF(a);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        ((int64_t *)PyArray_DATA((PyArrayObject *)a))[i] = (int64_t)it[i];
    return Py_BuildValue("NN", a, b);
}

static PyObject *gs_info(GridSolverObject *self, PyObject *unused)
{
    (void)unused;
    if (!self->s) {
        PyErr_SetString(PyExc_ValueError, "the solver is closed");
        return NULL;
    }
    hr_grid_info i;
    hr_status st = hr_grid_solver_info(self->s, &i);
    if (st != HR_OK) return raise_status(st, hr_grid_solver_last_error(self->s));
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:d,s:O,s:O}", "method",
                         hr_method_name(i.method) ? hr_method_name(i.method) : "", "precision",
                         hr_precision_name(i.precision) ? hr_precision_name(i.precision) : "", "backend",
                         hr_backend_name(i.backend) ? hr_backend_name(i.backend) : "", "engine", i.engine,
                         "kernel", i.kernel, "threads", i.threads, "gpus", i.gpus, "ranks", i.ranks, "omega",
                         i.omega, "general", i.general ? Py_True : Py_False, "singular",
                         i.singular ? Py_True : Py_False);
}

static PyObject *gs_request_stop(GridSolverObject *self, PyObject *unused)
{
    (void)unused;
    if (self->s) hr_grid_solver_request_stop(self->s); /* safe from any thread, no GIL needed */
    Py_RETURN_NONE;
}

static PyObject *gs_close(GridSolverObject *self, PyObject *unused)
{
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "close: a solve is under way");
        return NULL;
    }
    hr_grid_solver *s = self->s;
    self->s = NULL;
    Py_BEGIN_ALLOW_THREADS;
    hr_grid_solver_free(s);
    Py_END_ALLOW_THREADS;
    Py_RETURN_NONE;
}

static PyMethodDef gs_methods[] = {
    {"solve", (PyCFunction)(void (*)(void))gs_solve, METH_VARARGS | METH_KEYWORDS,
     "solve(f=None, x0=None, out=None, callback=None, catch_sigint=False) -> (status, result)"},
    {"solve_device", (PyCFunction)(void (*)(void))gs_solve_device, METH_VARARGS | METH_KEYWORDS,
     "solve_device(f=None, x0=None, out=None, single=False, stream=None, callback=None, catch_sigint=False) "
     "-> (status, result): device pointers"},
    {"solution", (PyCFunction)gs_solution, METH_O, "solution(out): the last solution into out"},
    {"history", (PyCFunction)gs_history, METH_NOARGS, "(iterations, residuals) of the last solve"},
    {"info", (PyCFunction)gs_info, METH_NOARGS, "what the handle runs (hr_grid_info)"},
    {"request_stop", (PyCFunction)gs_request_stop, METH_NOARGS, "ask a running solve to stop"},
    {"close", (PyCFunction)gs_close, METH_NOARGS, "release the handle"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject GridSolverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hetrelax._hetrelax.GridSolver",
    .tp_basicsize = sizeof(GridSolverObject),
    .tp_dealloc = (destructor)gs_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An hr_grid_solver handle (use hetrelax.Solver).",
    .tp_methods = gs_methods,
    .tp_init = (initproc)gs_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ sparse solves */

static PyObject *py_sparse_solve(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"A",
                            "b",
                            "x",
                            "method",
                            "backend",
                            "threads",
                            "local_iters",
                            "block",
                            "tol",
                            "max_iters",
                            "check_every",
                            "tau",
                            "allow_divergent",
                            "divtol",
                            "device",
                            "gpus",
                            "callback",
                            "monitor_every",
                            "catch_sigint",
                            "b_ptr",
                            "x_ptr",
                            "stream",
                            NULL};
    PyObject *Ao, *bo, *xo, *cb = Py_None, *bpo = Py_None, *xpo = Py_None, *so = Py_None;
    hr_sparse_options o;
    hr_sparse_options_default(&o);
    const char *method = NULL;
    int backend = (int)o.backend, catch_sigint = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OO|$ziiiidlldpdiiOlpOOO", names, &CsrType, &Ao, &bo, &xo,
                                     &method, &backend, &o.threads, &o.local_iters, &o.block, &o.tol,
                                     &o.max_iters, &o.check_every, &o.tau, &o.allow_divergent, &o.divtol,
                                     &o.device, &o.gpus, &cb, &o.monitor_every, &catch_sigint, &bpo, &xpo, &so))
        return NULL;
    const hr_csr *A = ((CsrObject *)Ao)->A;
    /* b_ptr, x_ptr: fp64 vectors in the GPU's memory (checked for length and type by the
     * Python layer); b and x are then None */
    void *db, *dx, *stream;
    if (!device_pointer(bpo, "b_ptr", &db) || !device_pointer(xpo, "x_ptr", &dx) ||
        !device_pointer(so, "stream", &stream))
        return NULL;
    const int on_device = bpo != Py_None;
    const double *b = on_device ? db : array_data(bo, "b", NPY_DOUBLE, A->n_rows, 0);
    double *x = !b ? NULL : on_device ? dx : array_data(xo, "x", NPY_DOUBLE, A->n_cols, 1);
    if (!x) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "x_ptr: a null device pointer");
        return NULL;
    }
    if (cb != Py_None && !PyCallable_Check(cb)) {
        PyErr_SetString(PyExc_TypeError, "callback: must be callable");
        return NULL;
    }
    o.method = method;
    o.backend = (hr_backend)backend;
    monitor_ctx mon;
    memset(&mon, 0, sizeof mon);
    mon.callback = cb == Py_None ? NULL : cb;
    /* Ctrl-C needs a monitor (hr_sparse_solve has no stop entry): on the CPU methods only, where
     * a monitor point costs a function call; a GPU method gets one for a callback only */
    hr_entry_info e;
    const int cpu = hr_registry_find(HR_KIND_SPARSE, o.backend, method, 0, &e) == HR_OK &&
                    e.backend != HR_BACKEND_GPU && o.backend != HR_BACKEND_GPU;
    mon.check_sigint = catch_sigint && cpu;
    if (mon.callback || mon.check_sigint) {
        o.monitor = monitor_trampoline;
        o.monitor_user = &mon;
        if (o.monitor_every <= 0) o.monitor_every = o.check_every > 0 ? o.check_every : 1;
    }
    Py_XINCREF(mon.callback);
    sig_guard g;
    sig_enter(&g, catch_sigint, NULL);
    hr_sparse_result r;
    memset(&r, 0, sizeof r);
    hr_status st;
    int fired;
    Py_BEGIN_ALLOW_THREADS;
    st = on_device ? hr_sparse_solve_device(A, b, x, stream, &o, &r) : hr_sparse_solve(A, b, x, &o, &r);
    fired = sig_leave(&g);
    Py_END_ALLOW_THREADS;
    Py_XDECREF(mon.callback);
    if (monitor_reraise(&mon)) return NULL;
    if (sig_deliver(fired) < 0) return NULL;
    if (st != HR_OK && st != HR_ERR_DIVERGED) return raise_status(st, r.message);
    /* a stop the monitor asked for because of Ctrl-C reads "stopped", as the grid solves do */
    return Py_BuildValue("i{s:l,s:s,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:s,s:s,s:s,s:s}", (int)st, "iterations",
                         r.iterations, "reason", hr_reason_string(r.reason), "relative_residual",
                         r.relative_residual, "initial_residual", r.initial_residual, "time_s", r.time_s,
                         "time_setup_s", r.time_setup_s, "time_iter_s", r.time_iter_s, "tau", r.tau, "colors",
                         r.colors, "method", r.method, "backend", r.backend, "message", r.message, "warning",
                         r.warning);
}

/* ------------------------------------------------------------------ the module */

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(hr_version_string());
}

static PyObject *str_or_none(const char *s)
{
    if (s) return PyUnicode_FromString(s);
    Py_RETURN_NONE;
}

static const char *name_method(int i)
{
    return hr_method_name((hr_method)i);
}
static const char *name_backend(int i)
{
    return hr_backend_name((hr_backend)i);
}
static const char *name_precision(int i)
{
    return hr_precision_name((hr_precision)i);
}
static const char *name_cycle(int i)
{
    return hr_cycle_name((hr_cycle)i);
}
static const char *name_reason(int i)
{
    return hr_reason_string((hr_reason)i);
}
static const char *name_face(int i)
{
    return hr_face_name((hr_face)i);
}
static const char *name_bc(int i)
{
    return hr_bc_kind_name((hr_bc_kind)i);
}
static const char *name_status(int i)
{
    return hr_status_string((hr_status)i);
}

/* names(): the library's names of its enums, in enum order, so that the Python layer maps
 * strings to values without a copy of the tables. */
static PyObject *py_names(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    struct {
        const char *key;
        int count;
        const char *(*name)(int);
    } const tables[] = {
        {"method", HR_METHOD_COUNT, name_method},
        {"backend", HR_BACKEND_COUNT, name_backend},
        {"precision", HR_PREC_MIXED + 1, name_precision},
        {"cycle", HR_CYCLE_FMG + 1, name_cycle},
        {"reason", HR_REASON_STAGNATED + 1, name_reason},
        {"face", HR_FACE_COUNT, name_face},
        {"bc", HR_BC_PERIODIC + 1, name_bc},
        {"status", HR_STATUS_COUNT, name_status},
    };
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        PyObject *l = PyList_New(tables[t].count);
        if (!l) goto fail;
        for (int i = 0; i < tables[t].count; i++)
            PyList_SET_ITEM(l, i, str_or_none(tables[t].name(i)));
        const int rc = PyDict_SetItemString(d, tables[t].key, l);
        Py_DECREF(l);
        if (rc) goto fail;
    }
    return d;
fail:
    Py_DECREF(d);
    return NULL;
}

static PyObject *py_registry(PyObject *self, PyObject *arg)
{
    (void)self;
    const long kind = PyLong_AsLong(arg);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    if (kind < 0 || kind >= HR_KIND_COUNT) {
        PyErr_Format(PyExc_ValueError, "registry: unknown kind %ld", kind);
        return NULL;
    }
    const int n = hr_registry_count((hr_kind)kind);
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++) {
        hr_entry_info e;
        if (hr_registry_info_at((hr_kind)kind, i, &e) != HR_OK) continue;
        PyObject *t =
            Py_BuildValue("{s:s,s:s,s:s,s:I,s:I,s:i}", "name", e.name, "backend",
                          e.backend == HR_BACKEND_AUTO ? "any" : hr_backend_name(e.backend), "summary",
                          e.summary ? e.summary : "", "caps", e.caps, "problems", e.problems, "id", e.id);
        if (!t || PyList_Append(l, t)) {
            Py_XDECREF(t);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(t);
    }
    return l;
}

static PyObject *py_sysinfo(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    hr_sysinfo s;
    memset(&s, 0, sizeof s);
    hr_status st;
    Py_BEGIN_ALLOW_THREADS;
    st = hr_sysinfo_get(&s);
    Py_END_ALLOW_THREADS;
    if (st != HR_OK) return raise_status(st, hr_last_error());
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:O,s:O,s:O,s:s}", "cores", s.cores, "pus", s.pus, "numa_nodes",
                         s.numa_nodes, "gpus", s.gpus, "cuda", s.have_cuda ? Py_True : Py_False, "hwloc",
                         s.have_hwloc ? Py_True : Py_False, "png", s.have_png ? Py_True : Py_False,
                         "cpu_model", s.cpu_model);
}

static PyMethodDef module_methods[] = {
    {"version", py_version, METH_NOARGS, "the C library's version"},
    {"names", py_names, METH_NOARGS, "the library's names of its enums"},
    {"registry", py_registry, METH_O, "registry(kind): the entries of one kind"},
    {"sysinfo", py_sysinfo, METH_NOARGS, "hr_sysinfo_get"},
    {"problem_describe", py_problem_describe, METH_O, "validate a problem; its spacings and kind"},
    {"problem_rhs", py_problem_rhs, METH_VARARGS, "problem_rhs(desc, f): (b, info)"},
    {"problem_matrix", py_problem_matrix, METH_O, "problem_matrix(desc): Csr"},
    {"csr_from_coo", py_csr_from_coo, METH_VARARGS, "csr_from_coo(rows, cols, ri, ci, v): Csr"},
    {"mm_read", py_mm_read, METH_O, "mm_read(path): Csr"},
    {"mm_read_vector", py_mm_read_vector, METH_O, "mm_read_vector(path): float64 array"},
    {"sparse_solve", (PyCFunction)(void (*)(void))py_sparse_solve, METH_VARARGS | METH_KEYWORDS,
     "sparse_solve(A, b, x, **options) -> (status, result); x updated in place (b_ptr, x_ptr, stream: "
     "device vectors, b and x None)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_hetrelax",
    .m_doc = "The C layer of hetrelax (use the hetrelax package).",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_exception(PyObject *m, PyObject **slot, const char *name, PyObject *bases, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "hetrelax.%s", name);
    *slot = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!*slot) return -1;
    Py_INCREF(*slot);
    return PyModule_AddObject(m, name, *slot);
}

PyMODINIT_FUNC PyInit__hetrelax(void)
{
    import_array();
    if (PyType_Ready(&CsrType) < 0 || PyType_Ready(&GridSolverType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    PyObject *b;
    if (add_exception(
            m, &Error, "Error", PyExc_RuntimeError,
            "An error of the hetrelax library: its message, and the status in .status (the hr_status "
            "value) and .status_name."))
        goto fail;
    if (!(b = PyTuple_Pack(2, Error, PyExc_ValueError))) goto fail;
    if (add_exception(m, &InvalidArgumentError, "InvalidArgumentError", b,
                      "The library refused an argument or option (HR_ERR_INVALID_ARG); also a ValueError.")) {
        Py_DECREF(b);
        goto fail;
    }
    if (add_exception(m, &FormatError, "FormatError", b,
                      "A file's contents are malformed (HR_ERR_FORMAT).")) {
        Py_DECREF(b);
        goto fail;
    }
    Py_DECREF(b);
    if (!(b = PyTuple_Pack(2, Error, PyExc_MemoryError))) goto fail;
    if (add_exception(m, &OutOfMemoryError, "OutOfMemoryError", b,
                      "The problem does not fit in memory (HR_ERR_NO_MEMORY); also a MemoryError.")) {
        Py_DECREF(b);
        goto fail;
    }
    Py_DECREF(b);
    if (add_exception(
            m, &UnsupportedError, "UnsupportedError", Error,
            "A combination that does not run yet, or a feature not built in (HR_ERR_UNSUPPORTED).") ||
        add_exception(m, &NoDeviceError, "NoDeviceError", Error,
                      "A GPU backend was asked for and no GPU is present (HR_ERR_NO_DEVICE).") ||
        add_exception(m, &DeviceError, "DeviceError", Error,
                      "A device (CUDA) call failed (HR_ERR_DEVICE).") ||
        add_exception(
            m, &DivergedError, "DivergedError", Error,
            "The iteration diverged (HR_ERR_DIVERGED): NaN/Inf, a growing residual, or a breakdown. "
            ".x holds the last iterate and .info the solve's record."))
        goto fail;
    if (PyModule_AddIntConstant(m, "HR_NONE", HR_NONE) ||
        PyModule_AddIntConstant(m, "ERR_DIVERGED", HR_ERR_DIVERGED) ||
        PyModule_AddIntConstant(m, "BC_PERIODIC", HR_BC_PERIODIC) ||
        PyModule_AddIntConstant(m, "RHS_SPIKE", HR_RHS_SPIKE) ||
        PyModule_AddIntConstant(m, "RHS_MANUFACTURED", HR_RHS_MANUFACTURED) ||
        PyModule_AddIntConstant(m, "RHS_ARRAY", HR_RHS_ARRAY) ||
        PyModule_AddIntConstant(m, "RHS_ZERO", HR_RHS_ZERO) ||
        PyModule_AddIntConstant(m, "RHS_RANDOM", HR_RHS_RANDOM) ||
        PyModule_AddIntConstant(m, "KIND_KERNEL", HR_KIND_KERNEL) ||
        PyModule_AddIntConstant(m, "KIND_METHOD", HR_KIND_METHOD) ||
        PyModule_AddIntConstant(m, "KIND_SMOOTHER", HR_KIND_SMOOTHER) ||
        PyModule_AddIntConstant(m, "KIND_SPARSE", HR_KIND_SPARSE) ||
        PyModule_AddIntConstant(m, "CAP_DETERMINISTIC", HR_CAP_DETERMINISTIC) ||
        PyModule_AddIntConstant(m, "CAP_ALPHA", HR_CAP_ALPHA) ||
        PyModule_AddIntConstant(m, "CAP_2D", HR_CAP_2D) || PyModule_AddIntConstant(m, "CAP_3D", HR_CAP_3D) ||
        PyModule_AddIntConstant(m, "CAP_REDBLACK", HR_CAP_REDBLACK) ||
        PyModule_AddObject(m, "SPARSE_TAU_AUTO", PyFloat_FromDouble(HR_SPARSE_TAU_AUTO)))
        goto fail;
    Py_INCREF(&CsrType);
    if (PyModule_AddObject(m, "Csr", (PyObject *)&CsrType)) goto fail;
    Py_INCREF(&GridSolverType);
    if (PyModule_AddObject(m, "GridSolver", (PyObject *)&GridSolverType)) goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
