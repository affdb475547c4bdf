/* _cte.c - the cte Python module's C half (python/cte/__init__.py re-exports it): Client, Tag
 * and the exception hierarchy, on libcte's public API only (cte/cte.h).
 *
 * Shape. One Client owns one libcte connection. Every call on a Client (or on a Tag, which
 * holds its Client) goes through client_enter/client_leave: a per-Client lock serialises the
 * calls, so a Client may be shared by threads (they take turns); the GIL is released around
 * every libcte call that can block (connect, each round trip) and while waiting for the lock,
 * so other Python threads run meanwhile. Replies are turned into Python objects after the GIL
 * is back but before the lock is released: libcte's reply memory is valid until the next call
 * on the connection, and the lock is what keeps that call from starting.
 *
 * Views. get_blob_view returns a memoryview over a _BlobView exporter that points into
 * libcte's reply (no copy). Such memory is only valid until the next call, so while any
 * buffer export of the current view is alive (the memoryview, or anything made from it) the
 * Client refuses every call with ViewInUseError, and close() defers freeing the connection
 * until the last export is released. An exporter left over from an older call (reachable as
 * memoryview.obj) refuses new exports: each call bumps the Client's generation. So no Python
 * code can read libcte memory after it changed or was freed.
 *
 * Arguments are parsed by hand (METH_FASTCALL): positional then keyword, by name. Data for
 * puts may be any buffer; a contiguous one is sent from its own memory (libcte references
 * payloads of 16 KiB or more, copies smaller ones into its request buffer), a non-contiguous
 * one is first gathered into a temporary copy. Names are str (UTF-8, surrogateescape) or bytes,
 * without NUL bytes (libcte's tag calls take C strings).
 *
 * Threads: any; the GIL protects the Python state, the Client's lock its connection. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <cte/cte.h>
#include <cte/dataset.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Copies of at least this many bytes out of a reply run without the GIL. */
#define BIG_COPY (1u << 20)

/* Runs stmt without the GIL (a blocking libcte call or a large copy). */
#define NOGIL(stmt)                                                                                \
    do {                                                                                           \
        Py_BEGIN_ALLOW_THREADS stmt;                                                               \
        Py_END_ALLOW_THREADS                                                                       \
    } while (0)

/* ---- exceptions ---- */

static PyObject *Error, *ConnError, *TimeoutErr, *AddressError, *ResponseError, *WrongTypeError,
    *AuthError, *NotFoundError, *ViewInUseError;

static const struct {
    PyObject **slot;
    const char *name;
    PyObject **base;
    PyObject **mixin; /* a builtin second base, or NULL */
    const char *doc;
} exc_table[] = {
    {&Error, "cte.Error", NULL, NULL, "Base class of every error this module raises."},
    {&ConnError, "cte.ConnectionError", &Error, &PyExc_ConnectionError,
     "The connection failed or is broken (refused, closed by the server, malformed reply, "
     "reply past a limit, client closed). A broken client stays broken: make a new one."},
    {&TimeoutErr, "cte.TimeoutError", &ConnError, &PyExc_TimeoutError,
     "The server sent nothing within the client's timeout (the connection is broken)."},
    {&AddressError, "cte.AddressError", &Error, &PyExc_ValueError,
     "The address does not parse or its host does not resolve."},
    {&ResponseError, "cte.ResponseError", &Error, NULL,
     "The server answered with an error; str(e) is the server's message."},
    {&WrongTypeError, "cte.WrongTypeError", &ResponseError, NULL,
     "A WRONGTYPE error: the key holds another type."},
    {&AuthError, "cte.AuthenticationError", &ResponseError, NULL,
     "NOAUTH or WRONGPASS from the server."},
    {&NotFoundError, "cte.NotFoundError", &Error, &PyExc_KeyError, "The blob does not exist."},
    {&ViewInUseError, "cte.ViewInUseError", &Error, &PyExc_BufferError,
     "A view from get_blob_view is still exported: release it (view.release(), or use it in a "
     "with block) before the next call on this client."},
};

static PyObject *text_str(const char *s, size_t len)
{
    return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)len, "surrogateescape");
}

/* Sets cls(msg); msg may hold any bytes (a server's message quotes what it was sent). */
static void set_exc(PyObject *cls, const char *msg)
{
    PyObject *m = text_str(msg, strlen(msg));
    if (m) PyErr_SetObject(cls, m);
    Py_XDECREF(m);
}

/* The class of a server error by its prefix. */
static PyObject *server_error_class(const char *msg)
{
    if (!strncmp(msg, "WRONGTYPE", 9)) return WrongTypeError;
    if (!strncmp(msg, "NOAUTH", 6) || !strncmp(msg, "WRONGPASS", 9)) return AuthError;
    return ResponseError;
}

/* Raises the exception for a failed libcte call; msg is the connection's message (or NULL). */
static void raise_status(int rc, const char *msg)
{
    if (!msg || !*msg) msg = cte_strerror(rc);
    switch (rc) {
    case CTE_E_SERVER:
        set_exc(server_error_class(msg), msg);
        return;
    case CTE_E_NOMEM:
        PyErr_NoMemory();
        return;
    case CTE_E_TIMEOUT:
        set_exc(TimeoutErr, msg);
        return;
    case CTE_E_ADDRESS:
        set_exc(AddressError, msg);
        return;
    case CTE_E_CLOSED:
    case CTE_E_PROTOCOL:
    case CTE_E_LIMIT:
        set_exc(ConnError, msg);
        return;
    default:
        break;
    }
    /* -errno (CTE_E_ADDRESS is the highest of libcte's own codes): ConnectionError(errno, msg) */
    if (rc < 0 && rc > CTE_E_ADDRESS) {
        PyObject *m = text_str(msg, strlen(msg));
        PyObject *args = m ? Py_BuildValue("(iO)", -rc, m) : NULL;
        if (args) PyErr_SetObject(ConnError, args);
        Py_XDECREF(m);
        Py_XDECREF(args);
        return;
    }
    set_exc(Error, msg);
}

/* ---- the Client ---- */

typedef struct {
    PyObject ob_base;
    cte_conn_t *conn;        /* NULL once freed (and for a Cluster) */
    cte_cluster_t *cluster;  /* a Cluster's handle, NULL for a Client or once freed */
    cte_conn_t *node;        /* a Cluster's dataset call: the tag's node (the cluster's) */
    PyThread_type_lock lock; /* held for the duration of each call */
    unsigned long owner;     /* the thread holding lock, 0 when none */
    int closed;              /* close() ran: no more calls */
    Py_ssize_t view_exports; /* live buffer exports of the current view */
    uint64_t gen;            /* bumped by every call: older views are stale */
    PyObject *uri;           /* str */
} ClientObject;

static PyTypeObject ClientType, TagType, ViewType, ClusterType;

static void client_free_conn(ClientObject *c)
{
    if (c->conn) cte_conn_free(c->conn);
    c->conn = NULL;
    cte_cluster_free(c->cluster);
    c->cluster = NULL;
}

/* The libcte call fn on a Client's connection, or its cte_cluster_ twin on a Cluster (same
 * arguments after the handle; routed by the tag, redirects followed). */
#define CALL(c, fn, ...)                                                                           \
    ((c)->cluster ? cte_cluster_##fn((c)->cluster, __VA_ARGS__) : cte_##fn((c)->conn, __VA_ARGS__))

/* The last failure's message: the connection's, the cluster's, or (a Cluster's dataset call)
 * the tag node's. */
static const char *client_msg(ClientObject *c)
{
    if (c->node) return cte_conn_errmsg(c->node);
    if (c->cluster) return cte_cluster_errmsg(c->cluster);
    return c->conn ? cte_conn_errmsg(c->conn) : NULL;
}

static int raise_closed(void)
{
    PyErr_SetString(ConnError, "the client is closed");
    return -1;
}

/* Takes the Client's lock, waiting without the GIL when another thread has it. A call from
 * the thread that holds it (a finalizer run by the garbage collector inside a call) would
 * deadlock: it gets cte.Error instead. 0, or -1 with an exception set. */
static int lock_take(ClientObject *c)
{
    unsigned long me = PyThread_get_thread_ident();
    if (!PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
        if (c->owner == me) {
            PyErr_SetString(Error, "re-entrant call on a client that is in a call on this "
                                   "thread (from a finalizer?)");
            return -1;
        }
        NOGIL(PyThread_acquire_lock(c->lock, WAIT_LOCK));
    }
    c->owner = me;
    return 0;
}

static void client_leave(ClientObject *c)
{
    c->owner = 0;
    PyThread_release_lock(c->lock);
}

/* Starts a call: takes the Client's lock, refuses a closed client or one with a live view,
 * and makes earlier views stale. 0 with the lock held, or -1 with an exception set and the
 * lock not held. End the call with client_leave. */
static int client_enter(ClientObject *c)
{
    if (c->closed) return raise_closed();
    if (lock_take(c)) return -1;
    if (c->closed) {
        client_leave(c);
        return raise_closed();
    }
    if (c->view_exports) {
        client_leave(c);
        PyErr_SetString(ViewInUseError,
                        "a view from get_blob_view is still in use: release it (view.release(), "
                        "or `with tag.get_blob_view(...) as v:`) before the next call");
        return -1;
    }
    c->gen++;
    c->node = NULL;
    return 0;
}

/* Raises for rc with the connection's message; call with the lock held. */
static void client_raise(ClientObject *c, int rc)
{
    raise_status(rc, client_msg(c));
}

/* ---- argument parsing ---- */

/* Fills out[0..nmax) from positional arguments, then keywords matched against names; absent
 * optional arguments stay NULL. Returns 0, or -1 with TypeError set. */
static int parse_args(const char *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      const char *const *names, int nreq, int nmax, PyObject **out)
{
    if (nargs > nmax) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, nmax,
                     nargs);
        return -1;
    }
    for (int i = 0; i < nmax; i++) out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < nmax && PyUnicode_CompareWithASCIIString(key, names[j]) != 0) j++;
        if (j == nmax) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, key);
            return -1;
        }
        if (out[j]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int j = 0; j < nreq; j++)
        if (!out[j]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[j]);
            return -1;
        }
    return 0;
}

/* A name as a C string: str (UTF-8; surrogateescape for names that are not valid UTF-8) or
 * bytes, without NUL bytes. *hold gets a new reference the caller releases (it owns *s). */
static int name_arg(const char *what, PyObject *o, const char **s, PyObject **hold)
{
    Py_ssize_t len;
    *hold = NULL;
    if (PyUnicode_Check(o)) {
        *s = PyUnicode_AsUTF8AndSize(o, &len);
        if (*s) {
            Py_INCREF(o);
            *hold = o;
        } else {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
            PyErr_Clear();
            if (!(*hold = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape"))) return -1;
            *s = PyBytes_AS_STRING(*hold);
            len = PyBytes_GET_SIZE(*hold);
        }
    } else if (PyBytes_Check(o)) {
        Py_INCREF(o);
        *hold = o;
        *s = PyBytes_AS_STRING(o);
        len = PyBytes_GET_SIZE(o);
    } else {
        PyErr_Format(PyExc_TypeError, "%s must be str or bytes, not %.100s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (strlen(*s) != (size_t)len) {
        Py_CLEAR(*hold);
        PyErr_Format(PyExc_ValueError,
                     "%s must not contain NUL bytes (client.command() takes "
                     "any bytes)",
                     what);
        return -1;
    }
    return 0;
}

/* A non-negative integer up to max (None allowed when none_ok: *v = UINT64_MAX). */
static int uint_arg(const char *what, PyObject *o, uint64_t max, int none_ok, uint64_t *v)
{
    if (o == Py_None && none_ok) {
        *v = UINT64_MAX;
        return 0;
    }
    if (!PyLong_Check(o) || PyBool_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow;
    long long s = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || (!overflow && s < 0)) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 0", what);
        return -1;
    }
    unsigned long long u = overflow ? PyLong_AsUnsignedLongLong(o) : (unsigned long long)s;
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        u = UINT64_MAX;
    }
    if (u > max) {
        PyErr_Format(PyExc_ValueError, "%s must be at most %llu", what, (unsigned long long)max);
        return -1;
    }
    *v = u;
    return 0;
}

/* A score: a real number in [0, 1]. */
static int score_arg(const char *what, PyObject *o, double *v)
{
    if (!PyFloat_Check(o) && !(PyLong_Check(o) && !PyBool_Check(o))) {
        PyErr_Format(PyExc_TypeError, "%s must be a float in [0, 1], not %.100s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyFloat_AsDouble(o);
    if (*v == -1.0 && PyErr_Occurred()) return -1;
    if (!(*v >= 0.0 && *v <= 1.0)) {
        PyErr_Format(PyExc_ValueError, "%s must be in [0, 1]", what);
        return -1;
    }
    return 0;
}

/* Data to send: any buffer, never str. A non-contiguous buffer is gathered into *tmp (freed
 * by the caller with PyMem_Free). Returns 0 with *b to release, or -1. */
static int data_arg(PyObject *o, Py_buffer *b, void **tmp)
{
    *tmp = NULL;
    if (PyUnicode_Check(o) || !PyObject_CheckBuffer(o)) {
        PyErr_Format(PyExc_TypeError,
                     "data must be bytes-like (bytes, bytearray, memoryview, ...), not %.100s%s",
                     Py_TYPE(o)->tp_name, PyUnicode_Check(o) ? ": encode it first" : "");
        return -1;
    }
    if (PyObject_GetBuffer(o, b, PyBUF_SIMPLE) == 0) return 0;
    Py_buffer full; /* not contiguous (or not simple): gather it */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyObject_GetBuffer(o, &full, PyBUF_FULL_RO) != 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (!(*tmp = PyMem_Malloc(full.len ? (size_t)full.len : 1))) {
        PyBuffer_Release(&full);
        PyErr_NoMemory();
        return -1;
    }
    if (PyBuffer_ToContiguous(*tmp, &full, full.len, 'C') != 0) {
        PyBuffer_Release(&full);
        PyMem_Free(*tmp);
        *tmp = NULL;
        return -1;
    }
    PyBuffer_Release(&full);
    /* b now describes the copy (releasing a buffer whose obj is NULL does nothing) */
    if (PyBuffer_FillInfo(b, NULL, *tmp, full.len, 1, PyBUF_SIMPLE) == 0) return 0;
    PyMem_Free(*tmp);
    *tmp = NULL;
    return -1;
}

static void data_release(Py_buffer *b, void *tmp)
{
    PyBuffer_Release(b);
    PyMem_Free(tmp);
}

/* ---- reply conversion ---- */

/* A string-like reply element as str; NULL with cte.Error when r is not one. */
static PyObject *reply_name(const cte_reply_t *r)
{
    size_t len;
    const char *s = r ? cte_reply_str(r, &len) : NULL;
    if (!s || (cte_reply_kind(r) != CTE_REPLY_BULK && cte_reply_kind(r) != CTE_REPLY_STRING)) {
        PyErr_SetString(Error, "unexpected reply shape from the server");
        return NULL;
    }
    return text_str(s, len);
}

static PyObject *reply_to_py(const cte_reply_t *r);

static PyObject *reply_items(const cte_reply_t *r)
{
    size_t n = cte_reply_len(r);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *v = reply_to_py(cte_reply_elem(r, i));
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, v);
    }
    return list;
}

/* A hashable form of a map key: lists become tuples. */
static PyObject *hashable(PyObject *k)
{
    if (!PyList_Check(k)) return k;
    PyObject *t = PyList_AsTuple(k);
    Py_DECREF(k);
    return t;
}

static PyObject *reply_map(const cte_reply_t *r)
{
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i + 1 < cte_reply_len(r); i += 2) {
        PyObject *k = hashable(reply_to_py(cte_reply_elem(r, i)));
        PyObject *v = k ? reply_to_py(cte_reply_elem(r, i + 1)) : NULL;
        if (!v || PyDict_SetItem(d, k, v) != 0) Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    return d;
}

/* A RESP3 set as a set (a list when an element is not hashable). */
static PyObject *reply_set(const cte_reply_t *r)
{
    PyObject *list = reply_items(r);
    if (!list) return NULL;
    PyObject *set = PySet_New(list);
    if (set || !PyErr_ExceptionMatches(PyExc_TypeError)) {
        Py_DECREF(list);
        return set;
    }
    PyErr_Clear();
    return list;
}

/* The Python value of a reply (docs/python.md, "command"); an ERROR element becomes a
 * ResponseError instance, not raised. */
static PyObject *reply_to_py(const cte_reply_t *r)
{
    size_t len;
    const char *s = cte_reply_str(r, &len);
    switch (cte_reply_kind(r)) {
    case CTE_REPLY_STRING:
    case CTE_REPLY_VERBATIM:
        return text_str(s, len);
    case CTE_REPLY_ERROR: {
        PyObject *m = text_str(s, len);
        PyObject *e = m ? PyObject_CallOneArg(server_error_class(s), m) : NULL;
        Py_XDECREF(m);
        return e;
    }
    case CTE_REPLY_INTEGER:
        return PyLong_FromLongLong(cte_reply_int(r));
    case CTE_REPLY_BULK:
        return PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
    case CTE_REPLY_NULL:
        Py_RETURN_NONE;
    case CTE_REPLY_ARRAY:
    case CTE_REPLY_PUSH:
        return reply_items(r);
    case CTE_REPLY_SET:
        return reply_set(r);
    case CTE_REPLY_MAP:
        return reply_map(r);
    case CTE_REPLY_DOUBLE:
        return PyFloat_FromDouble(cte_reply_double(r));
    case CTE_REPLY_BOOL:
        return PyBool_FromLong(cte_reply_int(r) != 0);
    case CTE_REPLY_BIGNUM:
        return PyLong_FromString(s, NULL, 10);
    }
    PyErr_SetString(Error, "unknown reply kind");
    return NULL;
}

/* ---- Client methods ---- */

/* timeout (None or seconds) as libcte's milliseconds (0: none); 0, or -1 with ValueError. */
static int timeout_arg(PyObject *timeout, int *ms)
{
    *ms = 0;
    if (timeout == Py_None) return 0;
    double t = PyFloat_AsDouble(timeout);
    if (t == -1.0 && PyErr_Occurred()) return -1;
    if (!(t > 0) || t > 86400.0 * 24) {
        PyErr_SetString(PyExc_ValueError, "timeout must be None or seconds in (0, 2073600]");
        return -1;
    }
    *ms = (int)ceil(t * 1000.0);
    return 0;
}

static PyObject *client_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"uri", "timeout", NULL};
    PyObject *uri, *timeout = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "U|O:Client", kwlist, &uri, &timeout)) return NULL;
    Py_ssize_t ulen;
    const char *addr = PyUnicode_AsUTF8AndSize(uri, &ulen);
    if (!addr) return NULL;
    if (strlen(addr) != (size_t)ulen) {
        PyErr_SetString(AddressError, "the address contains a NUL byte");
        return NULL;
    }
    int ms;
    if (timeout_arg(timeout, &ms)) return NULL;
    ClientObject *c = (ClientObject *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    Py_INCREF(uri);
    c->uri = uri;
    if (!(c->lock = PyThread_allocate_lock()) || !(c->conn = cte_conn_new())) {
        Py_DECREF(c);
        return PyErr_NoMemory();
    }
    cte_conn_set_timeout(c->conn, ms);
    int rc;
    NOGIL(rc = cte_conn_open(c->conn, addr, 0));
    if (rc) {
        client_raise(c, rc);
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static void client_dealloc(ClientObject *c)
{
    client_free_conn(c); /* views hold a reference: none is alive here */
    if (c->lock) PyThread_free_lock(c->lock);
    Py_XDECREF(c->uri);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *client_repr(ClientObject *c)
{
    return PyUnicode_FromFormat("<cte.Client %R%s>", c->uri, c->closed ? " closed" : "");
}

static PyObject *client_close(ClientObject *c, PyObject *unused)
{
    if (c->closed) Py_RETURN_NONE;
    if (lock_take(c)) return NULL;
    c->closed = 1;
    if (!c->view_exports) client_free_conn(c); /* else when the last view export goes */
    client_leave(c);
    Py_RETURN_NONE;
}

static PyObject *client_enter_ctx(ClientObject *c, PyObject *unused)
{
    if (c->closed) {
        raise_closed();
        return NULL;
    }
    Py_INCREF(c);
    return (PyObject *)c;
}

static PyObject *client_exit_ctx(ClientObject *c, PyObject *args)
{
    PyObject *r = client_close(c, NULL);
    Py_XDECREF(r);
    if (!r) return NULL;
    Py_RETURN_FALSE;
}

static PyObject *client_get_closed(ClientObject *c, void *unused)
{
    return PyBool_FromLong(c->closed);
}

static PyObject *client_get_uri(ClientObject *c, void *unused)
{
    Py_INCREF(c->uri);
    return c->uri;
}

static PyObject *tag_make(ClientObject *c, PyObject *name);

static PyObject *client_tag(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    static const char *const names[] = {"name"};
    PyObject *a[1];
    if (parse_args("tag", args, nargs, kwnames, names, 1, 1, a)) return NULL;
    return tag_make(c, a[0]);
}

/* The names after a TQUERY reply's total, as str (pairs: tuples of str). */
static PyObject *query_names(const cte_reply_t *r, int pairs)
{
    size_t n = cte_reply_len(r);
    PyObject *list = PyList_New(n ? (Py_ssize_t)n - 1 : 0);
    for (size_t i = 1; list && i < n; i++) {
        const cte_reply_t *e = cte_reply_elem(r, i);
        PyObject *v;
        if (!pairs) {
            v = reply_name(e);
        } else if (cte_reply_kind(e) != CTE_REPLY_ARRAY || cte_reply_len(e) != 2) {
            PyErr_SetString(Error, "unexpected reply shape from the server");
            v = NULL;
        } else {
            PyObject *t = reply_name(cte_reply_elem(e, 0));
            PyObject *b = t ? reply_name(cte_reply_elem(e, 1)) : NULL;
            v = b ? PyTuple_Pack(2, t, b) : NULL;
            Py_XDECREF(t);
            Py_XDECREF(b);
        }
        if (!v)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i - 1, v);
    }
    return list;
}

static PyObject *do_tag_query(ClientObject *c, const char *fn, const char *const *names,
                              PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[2], *hold = NULL, *res = NULL;
    const char *re;
    uint64_t max = 0;
    cte_reply_t *out = NULL;
    int rc;
    if (parse_args(fn, args, nargs, kwnames, names, 1, 2, a)) return NULL;
    if (a[1] && uint_arg(names[1], a[1], UINT32_MAX, 0, &max)) return NULL;
    if (name_arg(names[0], a[0], &re, &hold)) return NULL;
    if (client_enter(c)) goto done;
    NOGIL(rc = CALL(c, query_tags, re, (unsigned)max, NULL, &out));
    if (rc)
        client_raise(c, rc);
    else
        res = query_names(out, 0);
    cte_reply_free(out);
    client_leave(c);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *client_tag_query(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"tag_regex", "max_tags"};
    return do_tag_query(c, "tag_query", names, args, nargs, kwnames);
}

static PyObject *client_TagQuery(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"tag_regex", "max_tags"};
    return do_tag_query(c, "TagQuery", names, args, nargs, kwnames);
}

/* A time bound in ms: None -> -1. */
static int time_arg(const char *what, PyObject *o, int64_t *v)
{
    uint64_t u;
    if (!o || o == Py_None) {
        *v = -1;
        return 0;
    }
    if (uint_arg(what, o, INT64_MAX, 0, &u)) return -1;
    *v = (int64_t)u;
    return 0;
}

static PyObject *do_blob_query(ClientObject *c, const char *fn, const char *const *names,
                               PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[5], *h1 = NULL, *h2 = NULL, *res = NULL;
    const char *tre, *bre;
    uint64_t max = 0;
    int64_t since, until;
    cte_reply_t *out = NULL;
    int rc;
    if (parse_args(fn, args, nargs, kwnames, names, 2, 5, a)) return NULL;
    if (a[2] && uint_arg(names[2], a[2], UINT32_MAX, 0, &max)) return NULL;
    if (time_arg("since", a[3], &since) || time_arg("until", a[4], &until)) return NULL;
    if (name_arg(names[0], a[0], &tre, &h1) || name_arg(names[1], a[1], &bre, &h2)) goto done;
    if (client_enter(c)) goto done;
    NOGIL(rc = CALL(c, query_blobs, tre, bre, since, until, (unsigned)max, NULL, &out));
    if (rc)
        client_raise(c, rc);
    else
        res = query_names(out, 1);
    cte_reply_free(out);
    client_leave(c);
done:
    Py_XDECREF(h1);
    Py_XDECREF(h2);
    return res;
}

static PyObject *client_blob_query(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"tag_regex", "blob_regex", "max_blobs", "since", "until"};
    return do_blob_query(c, "blob_query", names, args, nargs, kwnames);
}

static PyObject *client_BlobQuery(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"tag_regex", "blob_regex", "max_blobs", "since", "until"};
    return do_blob_query(c, "BlobQuery", names, args, nargs, kwnames);
}

/* One TSEARCH WITHSCORES row: (tag, blob, score). */
static PyObject *search_row(const cte_reply_t *e)
{
    if (cte_reply_kind(e) != CTE_REPLY_ARRAY || cte_reply_len(e) != 3) {
        PyErr_SetString(Error, "unexpected reply shape from the server");
        return NULL;
    }
    const cte_reply_t *sc = cte_reply_elem(e, 2);
    double score;
    if (cte_reply_kind(sc) == CTE_REPLY_DOUBLE || cte_reply_kind(sc) == CTE_REPLY_INTEGER) {
        score = cte_reply_double(sc);
    } else {
        const char *s = cte_reply_str(sc, NULL);
        if (!s) {
            PyErr_SetString(Error, "unexpected reply shape from the server");
            return NULL;
        }
        score = PyOS_string_to_double(s, NULL, NULL);
        if (score == -1.0 && PyErr_Occurred()) return NULL;
    }
    PyObject *t = reply_name(cte_reply_elem(e, 0));
    PyObject *b = t ? reply_name(cte_reply_elem(e, 1)) : NULL;
    PyObject *row = b ? Py_BuildValue("(OOd)", t, b, score) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(b);
    return row;
}

static PyObject *client_search(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"text", "k", "tag_regex", "blob_regex"};
    PyObject *a[4], *hq = NULL, *ht = NULL, *hb = NULL, *res = NULL;
    const char *q, *tre = NULL, *bre = NULL;
    uint64_t k = 10;
    cte_reply_t *out = NULL;
    int rc;
    if (parse_args("search", args, nargs, kwnames, names, 1, 4, a)) return NULL;
    if (a[1] && uint_arg("k", a[1], UINT32_MAX, 0, &k)) return NULL;
    if (k == 0) {
        PyErr_SetString(PyExc_ValueError, "k must be >= 1");
        return NULL;
    }
    if (name_arg("text", a[0], &q, &hq)) return NULL;
    if (a[2] && a[2] != Py_None && name_arg("tag_regex", a[2], &tre, &ht)) goto done;
    if (a[3] && a[3] != Py_None && name_arg("blob_regex", a[3], &bre, &hb)) goto done;
    if (client_enter(c)) goto done;
    NOGIL(rc = CALL(c, search, q, tre, bre, (unsigned)k, 1, &out));
    if (rc) {
        client_raise(c, rc);
    } else {
        size_t n = cte_reply_len(out);
        res = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; res && i < n; i++) {
            PyObject *row = search_row(cte_reply_elem(out, i));
            if (!row)
                Py_CLEAR(res);
            else
                PyList_SET_ITEM(res, (Py_ssize_t)i, row);
        }
    }
    cte_reply_free(out);
    client_leave(c);
done:
    Py_XDECREF(hq);
    Py_XDECREF(ht);
    Py_XDECREF(hb);
    return res;
}

/* One command argument as bytes: bytes-like, str (UTF-8), int or float (their repr). *hold
 * keeps whatever backs the bytes; b is used for buffers (b->obj NULL otherwise). */
static int command_arg(PyObject *o, const char **s, size_t *len, PyObject **hold, Py_buffer *b)
{
    Py_ssize_t n;
    *hold = NULL;
    b->obj = NULL;
    if (PyBool_Check(o) || o == Py_None) {
        PyErr_Format(PyExc_TypeError,
                     "command arguments must be bytes, str, int or float, "
                     "not %.100s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (PyLong_Check(o) || PyFloat_Check(o)) {
        if (!(*hold = PyObject_Repr(o))) return -1;
        o = *hold;
    }
    if (PyUnicode_Check(o)) {
        if (!(*s = PyUnicode_AsUTF8AndSize(o, &n))) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
            PyErr_Clear();
            PyObject *enc = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
            Py_XDECREF(*hold);
            if (!(*hold = enc)) return -1;
            *s = PyBytes_AS_STRING(enc);
            n = PyBytes_GET_SIZE(enc);
        }
        *len = (size_t)n;
        return 0;
    }
    if (PyObject_GetBuffer(o, b, PyBUF_SIMPLE) != 0) {
        if (!PyObject_CheckBuffer(o)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "command arguments must be bytes, str, int or float, "
                         "not %.100s",
                         Py_TYPE(o)->tp_name);
        }
        b->obj = NULL;
        return -1;
    }
    *s = b->buf;
    *len = (size_t)b->len;
    return 0;
}

static PyObject *client_command(ClientObject *c, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "command() takes no keyword arguments");
        return NULL;
    }
    if (nargs < 1 || nargs > INT32_MAX) {
        PyErr_SetString(PyExc_TypeError, "command() needs the command's name and arguments");
        return NULL;
    }
    const char **argv = PyMem_Calloc((size_t)nargs, sizeof *argv);
    size_t *lens = PyMem_Calloc((size_t)nargs, sizeof *lens);
    PyObject **holds = PyMem_Calloc((size_t)nargs, sizeof *holds);
    Py_buffer *bufs = PyMem_Calloc((size_t)nargs, sizeof *bufs);
    PyObject *res = NULL;
    cte_reply_t *r = NULL;
    Py_ssize_t i, got = 0;
    int rc;
    if (!argv || !lens || !holds || !bufs) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < nargs; i++, got++)
        if (command_arg(args[i], &argv[i], &lens[i], &holds[i], &bufs[i])) goto done;
    if (client_enter(c)) goto done;
    NOGIL(rc = CALL(c, command, &r, (int)nargs, argv, lens));
    if (rc)
        client_raise(c, rc);
    else
        res = reply_to_py(r);
    cte_reply_free(r);
    client_leave(c);
done:
    for (i = 0; bufs && holds && i < got; i++) {
        if (bufs[i].obj) PyBuffer_Release(&bufs[i]);
        Py_XDECREF(holds[i]);
    }
    PyMem_Free(argv);
    PyMem_Free(lens);
    PyMem_Free(holds);
    PyMem_Free(bufs);
    return res;
}

/* ---- Tag ---- */

typedef struct {
    PyObject ob_base;
    ClientObject *client;
    PyObject *name;  /* str, as given (bytes names are decoded with surrogateescape) */
    PyObject *cname; /* bytes: the UTF-8 (or given) bytes, NUL-free */
} TagObject;

static PyObject *tag_make(ClientObject *c, PyObject *name)
{
    const char *s;
    PyObject *hold;
    if (name_arg("tag name", name, &s, &hold)) return NULL;
    TagObject *t = PyObject_New(TagObject, &TagType);
    if (!t) {
        Py_DECREF(hold);
        return NULL;
    }
    Py_INCREF(c);
    t->client = c;
    t->cname = PyBytes_FromString(s);
    t->name = PyUnicode_Check(name) ? (Py_INCREF(name), name) : text_str(s, strlen(s));
    Py_DECREF(hold);
    if (!t->cname || !t->name) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

static PyObject *tag_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"client", "name", NULL};
    PyObject *client, *name;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O:Tag", kwlist, &ClientType, &client, &name))
        return NULL;
    return tag_make((ClientObject *)client, name);
}

static void tag_dealloc(TagObject *t)
{
    Py_XDECREF(t->client);
    Py_XDECREF(t->name);
    Py_XDECREF(t->cname);
    PyObject_Free(t);
}

static PyObject *tag_repr(TagObject *t)
{
    return PyUnicode_FromFormat("<cte.Tag %R>", t->name);
}

#define TAGNAME(t) PyBytes_AS_STRING((t)->cname)

static PyObject *notfound(TagObject *t, const char *blob)
{
    PyObject *b = text_str(blob, strlen(blob));
    if (b) PyErr_Format(NotFoundError, "no blob %R in tag %R", b, t->name);
    Py_XDECREF(b);
    return NULL;
}

/* The raise for a failed blob call: NotFoundError for a missing blob, else the status's. */
static PyObject *blob_fail(TagObject *t, int rc, const char *blob)
{
    if (rc == CTE_E_NOTFOUND) return notfound(t, blob);
    client_raise(t->client, rc);
    return NULL;
}

static PyObject *do_put(TagObject *t, const char *fn, const char *const *names,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[4], *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t off = 0, size = 0;
    double score = -1;
    Py_buffer b;
    void *tmp = NULL;
    int rc;
    if (parse_args(fn, args, nargs, kwnames, names, 2, 4, a)) return NULL;
    if (a[2] && uint_arg(names[2], a[2], INT64_MAX, 0, &off)) return NULL;
    if (a[3] && a[3] != Py_None && score_arg("score", a[3], &score)) return NULL;
    if (name_arg("blob name", a[0], &blob, &hold)) return NULL;
    if (data_arg(a[1], &b, &tmp)) goto done;
    if (client_enter(t->client)) goto release;
    NOGIL(rc = CALL(t->client, put, TAGNAME(t), blob, off, b.buf, (size_t)b.len, score, &size));
    if (rc)
        blob_fail(t, rc, blob);
    else
        res = PyLong_FromUnsignedLongLong(size);
    client_leave(t->client);
release:
    data_release(&b, tmp);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *tag_put_blob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"name", "data", "offset", "score"};
    return do_put(t, "put_blob", names, args, nargs, kwnames);
}

static PyObject *tag_PutBlob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"blob_name", "data", "off", "score"};
    return do_put(t, "PutBlob", names, args, nargs, kwnames);
}

/* TGET as a view (the GIL and the lock held by the caller's enter). */
static int get_view(TagObject *t, const char *blob, uint64_t off, uint64_t size, const void **p,
                    size_t *len)
{
    int rc;
    int64_t count = size == UINT64_MAX ? -1 : (int64_t)size;
    NOGIL(rc = CALL(t->client, get_view, TAGNAME(t), blob, off, count, p, len));
    return rc;
}

/* The bytes of a view (a copy; without the GIL when large). */
static PyObject *bytes_of(const void *p, size_t len)
{
    if (len < BIG_COPY) return PyBytes_FromStringAndSize(p, (Py_ssize_t)len);
    PyObject *o = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)len);
    if (!o) return NULL;
    char *dst = PyBytes_AS_STRING(o);
    NOGIL(memcpy(dst, p, len));
    return o;
}

/* name, size, offset of the get calls. */
static int get_common(const char *fn, const char *const *names, int nreq, PyObject *const *args,
                      Py_ssize_t nargs, PyObject *kwnames, const char **blob, PyObject **hold,
                      uint64_t *size, uint64_t *off)
{
    PyObject *a[3];
    *size = UINT64_MAX;
    *off = 0;
    if (parse_args(fn, args, nargs, kwnames, names, nreq, 3, a)) return -1;
    if (a[1] && uint_arg(names[1], a[1], INT64_MAX, 1, size)) return -1;
    if (a[2] && uint_arg(names[2], a[2], INT64_MAX, 0, off)) return -1;
    return name_arg("blob name", a[0], blob, hold);
}

static PyObject *do_get(TagObject *t, const char *fn, const char *const *names, int nreq,
                        PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t size, off;
    const void *p;
    size_t len;
    if (get_common(fn, names, nreq, args, nargs, kwnames, &blob, &hold, &size, &off)) return NULL;
    if (client_enter(t->client)) goto done;
    int rc = get_view(t, blob, off, size, &p, &len);
    res = rc ? blob_fail(t, rc, blob) : bytes_of(p, len);
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *tag_get_blob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"name", "size", "offset"};
    return do_get(t, "get_blob", names, 1, args, nargs, kwnames);
}

static PyObject *tag_GetBlob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"blob_name", "data_size", "off"};
    return do_get(t, "GetBlob", names, 2, args, nargs, kwnames);
}

/* ---- views ---- */

typedef struct {
    PyObject ob_base;
    ClientObject *client;
    const void *data;
    size_t len;
    uint64_t gen;       /* the client's generation when made */
    Py_ssize_t exports; /* of this exporter */
} ViewObject;

static int view_getbuffer(ViewObject *v, Py_buffer *b, int flags)
{
    ClientObject *c = v->client;
    if (c->gen != v->gen || (!c->conn && !c->cluster)) {
        PyErr_SetString(PyExc_BufferError,
                        "stale blob view: the client made another call (or was closed) since");
        b->obj = NULL;
        return -1;
    }
    if (PyBuffer_FillInfo(b, (PyObject *)v, (void *)(v->data ? v->data : ""), (Py_ssize_t)v->len, 1,
                          flags) != 0)
        return -1;
    v->exports++;
    c->view_exports++;
    return 0;
}

static void view_releasebuffer(ViewObject *v, Py_buffer *b)
{
    ClientObject *c = v->client;
    v->exports--;
    if (--c->view_exports == 0 && c->closed) client_free_conn(c); /* close() deferred it */
}

static void view_dealloc(ViewObject *v)
{
    Py_XDECREF(v->client);
    PyObject_Free(v);
}

static PyBufferProcs view_as_buffer = {
    .bf_getbuffer = (getbufferproc)view_getbuffer,
    .bf_releasebuffer = (releasebufferproc)view_releasebuffer,
};

/* PyVarObject_HEAD_INIT ends in a comma */
/* clang-format off */
static PyTypeObject ViewType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cte._BlobView",
    /* clang-format on */
    .tp_basicsize = sizeof(ViewObject),
    .tp_dealloc = (destructor)view_dealloc,
    .tp_as_buffer = &view_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The exporter behind a get_blob_view memoryview (libcte's reply memory).",
};

static PyObject *tag_get_blob_view(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"name", "size", "offset"};
    PyObject *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t size, off;
    const void *p;
    size_t len;
    if (get_common("get_blob_view", names, 1, args, nargs, kwnames, &blob, &hold, &size, &off))
        return NULL;
    if (client_enter(t->client)) goto done;
    int rc = get_view(t, blob, off, size, &p, &len);
    if (rc) {
        blob_fail(t, rc, blob);
    } else {
        ViewObject *v = PyObject_New(ViewObject, &ViewType);
        if (v) {
            Py_INCREF(t->client);
            v->client = t->client;
            v->data = p;
            v->len = len;
            v->gen = t->client->gen;
            v->exports = 0;
            res = PyMemoryView_FromObject((PyObject *)v); /* holds the export and v */
            Py_DECREF(v);
        }
    }
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *tag_get_blob_into(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"name", "buffer", "offset"};
    PyObject *a[3], *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t off = 0;
    size_t len;
    Py_buffer b;
    int rc;
    if (parse_args("get_blob_into", args, nargs, kwnames, names, 2, 3, a)) return NULL;
    if (a[2] && uint_arg("offset", a[2], INT64_MAX, 0, &off)) return NULL;
    if (name_arg("blob name", a[0], &blob, &hold)) return NULL;
    if (PyObject_GetBuffer(a[1], &b, PyBUF_WRITABLE) != 0) {
        if (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "buffer must be a writable contiguous bytes-like object (bytearray, "
                         "memoryview, array, ...), not %.100s",
                         Py_TYPE(a[1])->tp_name);
        }
        goto done;
    }
    if (client_enter(t->client)) goto release;
    NOGIL(rc = CALL(t->client, get, TAGNAME(t), blob, off, (int64_t)b.len, b.buf, (size_t)b.len,
                    &len));
    if (rc)
        blob_fail(t, rc, blob);
    else
        res = PyLong_FromSize_t(len);
    client_leave(t->client);
release:
    PyBuffer_Release(&b);
done:
    Py_XDECREF(hold);
    return res;
}

/* The single-name calls: size, score, del, info. */
enum name_op { OP_SIZE, OP_SCORE, OP_DEL, OP_INFO };

static PyObject *info_dict(const cte_blob_info_t *i)
{
    return Py_BuildValue("{s:K,s:d,s:s,s:L,s:L,s:L,s:K,s:K}", "size", (unsigned long long)i->size,
                         "score", i->score, "tier", i->tier, "ctime", (long long)i->ctime, "mtime",
                         (long long)i->mtime, "atime", (long long)i->atime, "reads",
                         (unsigned long long)i->reads, "writes", (unsigned long long)i->writes);
}

/* The libcte call of one single-name op (without the GIL). */
static int name_op_call(ClientObject *c, enum name_op op, const char *tag, const char *blob,
                        uint64_t *n, double *score, cte_blob_info_t *info)
{
    switch (op) {
    case OP_SIZE:
        return CALL(c, size, tag, blob, n);
    case OP_SCORE:
        return CALL(c, score, tag, blob, score);
    case OP_DEL:
        return CALL(c, delete, tag, &blob, 1, n);
    case OP_INFO:
        return CALL(c, info, tag, blob, info);
    }
    return CTE_E_INVAL;
}

static PyObject *do_name_op(TagObject *t, const char *fn, const char *argname, enum name_op op,
                            PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *const names[] = {argname};
    PyObject *a[1], *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t n = 0;
    double score = 0;
    cte_blob_info_t info;
    int rc;
    if (parse_args(fn, args, nargs, kwnames, names, 1, 1, a)) return NULL;
    if (name_arg("blob name", a[0], &blob, &hold)) return NULL;
    if (client_enter(t->client)) goto done;
    NOGIL(rc = name_op_call(t->client, op, TAGNAME(t), blob, &n, &score, &info));
    if (rc)
        blob_fail(t, rc, blob);
    else if (op == OP_SIZE)
        res = PyLong_FromUnsignedLongLong(n);
    else if (op == OP_SCORE)
        res = PyFloat_FromDouble(score);
    else if (op == OP_DEL)
        res = PyBool_FromLong(n > 0);
    else
        res = info_dict(&info);
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

#define NAME_OP(cname, pyname, argname, op)                                                        \
    static PyObject *cname(TagObject *t, PyObject *const *args, Py_ssize_t nargs,                  \
                           PyObject *kwnames)                                                      \
    {                                                                                              \
        return do_name_op(t, pyname, argname, op, args, nargs, kwnames);                           \
    }
NAME_OP(tag_get_blob_size, "get_blob_size", "name", OP_SIZE)
NAME_OP(tag_GetBlobSize, "GetBlobSize", "blob_name", OP_SIZE)
NAME_OP(tag_get_blob_score, "get_blob_score", "name", OP_SCORE)
NAME_OP(tag_GetBlobScore, "GetBlobScore", "blob_name", OP_SCORE)
NAME_OP(tag_del_blob, "del_blob", "name", OP_DEL)
NAME_OP(tag_get_blob_info, "get_blob_info", "name", OP_INFO)

static PyObject *tag_truncate_blob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"name", "size"};
    PyObject *a[2], *hold = NULL, *res = NULL;
    const char *blob;
    uint64_t size, newsize = 0;
    int rc;
    if (parse_args("truncate_blob", args, nargs, kwnames, names, 2, 2, a)) return NULL;
    if (uint_arg("size", a[1], INT64_MAX, 0, &size)) return NULL;
    if (name_arg("blob name", a[0], &blob, &hold)) return NULL;
    if (client_enter(t->client)) goto done;
    NOGIL(rc = CALL(t->client, truncate, TAGNAME(t), blob, size, &newsize));
    if (rc)
        blob_fail(t, rc, blob);
    else
        res = PyLong_FromUnsignedLongLong(newsize);
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *do_reorg(TagObject *t, const char *fn, const char *const *names,
                          PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *a[2], *hold = NULL, *res = NULL;
    const char *blob, *tier = NULL;
    double score;
    int rc;
    if (parse_args(fn, args, nargs, kwnames, names, 2, 2, a)) return NULL;
    if (score_arg(names[1], a[1], &score)) return NULL;
    if (name_arg("blob name", a[0], &blob, &hold)) return NULL;
    if (client_enter(t->client)) goto done;
    NOGIL(rc = CALL(t->client, reorg, TAGNAME(t), blob, score, &tier));
    if (rc)
        blob_fail(t, rc, blob);
    else
        res = text_str(tier, strlen(tier));
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

static PyObject *tag_reorganize_blob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"name", "score"};
    return do_reorg(t, "reorganize_blob", names, args, nargs, kwnames);
}

static PyObject *tag_ReorganizeBlob(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    static const char *const names[] = {"blob_name", "new_score"};
    return do_reorg(t, "ReorganizeBlob", names, args, nargs, kwnames);
}

static PyObject *tag_get_contained_blobs(TagObject *t, PyObject *unused)
{
    cte_reply_t *out = NULL;
    PyObject *res = NULL;
    int rc;
    if (client_enter(t->client)) return NULL;
    NOGIL(rc = CALL(t->client, list, TAGNAME(t), &out));
    if (rc) {
        client_raise(t->client, rc);
    } else {
        size_t n = cte_reply_len(out);
        res = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; res && i < n; i++) {
            PyObject *s = reply_name(cte_reply_elem(out, i));
            if (!s)
                Py_CLEAR(res);
            else
                PyList_SET_ITEM(res, (Py_ssize_t)i, s);
        }
    }
    cte_reply_free(out);
    client_leave(t->client);
    return res;
}

/* ---- datasets (cte/dataset.h): the buffer-level calls; python/cte/_dataset.py brings numpy ----
 */

typedef struct dims {
    int rank;
    uint64_t v[CTE_DATASET_MAX_RANK];
} dims_t;

/* A tuple or list of 1 to 8 ints >= 0 (>= 1 when positive). */
static int dims_arg(const char *what, PyObject *o, int positive, dims_t *d)
{
    PyObject *seq = PySequence_Fast(o, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence of ints", what);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n < 1 || n > CTE_DATASET_MAX_RANK) {
        PyErr_Format(PyExc_ValueError, "%s must have 1 to %d entries", what, CTE_DATASET_MAX_RANK);
        rc = -1;
    }
    for (Py_ssize_t i = 0; !rc && i < n; i++) {
        rc = uint_arg(what, PySequence_Fast_GET_ITEM(seq, i), (1ull << 48), 0, &d->v[i]);
        if (!rc && positive && !d->v[i]) {
            PyErr_Format(PyExc_ValueError, "%s entries must be >= 1", what);
            rc = -1;
        }
    }
    d->rank = (int)n;
    Py_DECREF(seq);
    return rc;
}

static uint64_t dims_product(const dims_t *d)
{
    uint64_t p = 1;
    for (int k = 0; k < d->rank; k++) p *= d->v[k];
    return p;
}

/* The connection a dataset call of t goes through (without the GIL, lock held): the Client's,
 * or on a Cluster the node that owns the tag's slot now (the dataset's requests go there
 * without following redirects: datasets do not move while they are used). */
static int tag_conn(TagObject *t, cte_conn_t **conn)
{
    ClientObject *c = t->client;
    if (!c->cluster) {
        *conn = c->conn;
        return 0;
    }
    int rc = cte_cluster_conn_for_key(c->cluster, TAGNAME(t), strlen(TAGNAME(t)), conn);
    if (rc == 0) c->node = *conn;
    return rc;
}

/* The raise for a failed dataset call (lock held): NotFoundError or the status's. */
static PyObject *dataset_fail(TagObject *t, int rc)
{
    const char *msg = client_msg(t->client);
    if (rc == CTE_E_NOTFOUND || rc == CTE_E_INVAL || rc == CTE_E_EXISTS || rc == CTE_E_FORMAT) {
        PyObject *cls = rc == CTE_E_NOTFOUND ? NotFoundError : Error;
        set_exc(cls, msg && *msg ? msg : cte_strerror(rc));
    } else {
        client_raise(t->client, rc);
    }
    return NULL;
}

/* _dataset_write(name, dtype, shape, chunks, data, start, count, score): creates the dataset
 * (or opens it when it exists with this layout), writes the hyperslab from data (C order,
 * product(count) elements) and waits for it. */
static PyObject *tag_dataset_write(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"name", "dtype", "shape", "chunks",
                                        "data", "start", "count", "score"};
    PyObject *a[8], *hold = NULL, *thold = NULL, *res = NULL;
    const char *name, *tname;
    dims_t shape, chunks, start, count;
    cte_dtype_t type;
    double score = -1;
    Py_buffer b;
    void *tmp = NULL;
    int rc;
    if (parse_args("_dataset_write", args, nargs, kwnames, names, 7, 8, a)) return NULL;
    if (dims_arg("shape", a[2], 1, &shape) || dims_arg("chunks", a[3], 1, &chunks) ||
        dims_arg("start", a[5], 0, &start) || dims_arg("count", a[6], 0, &count))
        return NULL;
    if (chunks.rank != shape.rank || start.rank != shape.rank || count.rank != shape.rank) {
        PyErr_SetString(PyExc_ValueError, "shape, chunks, start and count need the same rank");
        return NULL;
    }
    if (a[7] && a[7] != Py_None && score_arg("score", a[7], &score)) return NULL;
    if (name_arg("dataset name", a[0], &name, &hold)) return NULL;
    if (name_arg("dtype", a[1], &tname, &thold)) goto done;
    if (cte_dtype_parse(tname, &type)) {
        PyErr_Format(PyExc_TypeError, "unsupported element type '%s'", tname);
        goto done;
    }
    if (data_arg(a[4], &b, &tmp)) goto done;
    if ((uint64_t)b.len != dims_product(&count) * cte_dtype_size(type)) {
        PyErr_Format(PyExc_ValueError, "data holds %zd bytes, the hyperslab %llu", b.len,
                     (unsigned long long)(dims_product(&count) * cte_dtype_size(type)));
        goto release;
    }
    if (client_enter(t->client)) goto release;
    cte_dataset_t *d = NULL;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn);
          if (!rc) rc =
              cte_dataset_create(conn, TAGNAME(t), name, type, shape.rank, shape.v, chunks.v, &d);
          if (!rc) rc = cte_dataset_write(d, start.v, count.v, b.buf, score); if (d) {
              int wrc = cte_dataset_close(d);
              if (!rc) rc = wrc;
          });
    if (rc)
        dataset_fail(t, rc);
    else
        res = Py_NewRef(Py_None);
    client_leave(t->client);
release:
    data_release(&b, tmp);
done:
    Py_XDECREF(hold);
    Py_XDECREF(thold);
    return res;
}

/* _dataset_read(name, start, count, buffer): reads the hyperslab into buffer (a writable
 * C-contiguous buffer of exactly its bytes). */
static PyObject *tag_dataset_read(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"name", "start", "count", "buffer"};
    PyObject *a[4], *hold = NULL, *res = NULL;
    const char *name;
    dims_t start, count;
    Py_buffer b;
    int rc;
    if (parse_args("_dataset_read", args, nargs, kwnames, names, 4, 4, a)) return NULL;
    if (dims_arg("start", a[1], 0, &start) || dims_arg("count", a[2], 0, &count)) return NULL;
    if (PyObject_GetBuffer(a[3], &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)) return NULL;
    if (name_arg("dataset name", a[0], &name, &hold)) goto release;
    if (client_enter(t->client)) goto release;
    cte_dataset_t *d = NULL;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn); if (!rc) rc = cte_dataset_open(conn, TAGNAME(t), name, &d));
    if (!rc && (start.rank != count.rank || start.rank != cte_dataset_rank(d))) {
        PyErr_Format(PyExc_ValueError, "start and count need %d entries", cte_dataset_rank(d));
    } else if (!rc &&
               (uint64_t)b.len != dims_product(&count) * cte_dtype_size(cte_dataset_type(d))) {
        PyErr_SetString(PyExc_ValueError, "the buffer's size is not the hyperslab's");
    } else {
        if (!rc) NOGIL(rc = cte_dataset_read(d, start.v, count.v, b.buf));
        if (rc)
            dataset_fail(t, rc);
        else
            res = Py_NewRef(Py_None);
    }
    if (d) cte_dataset_close(d);
    client_leave(t->client);
release:
    PyBuffer_Release(&b);
    Py_XDECREF(hold);
    return res;
}

static PyObject *dims_tuple(const uint64_t *v, int rank)
{
    PyObject *t = PyTuple_New(rank);
    for (int k = 0; t && k < rank; k++) {
        PyObject *n = PyLong_FromUnsignedLongLong(v[k]);
        if (!n)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, k, n);
    }
    return t;
}

/* _dataset_info(name) -> (dtype, shape, chunks, attrs dict) */
static PyObject *tag_dataset_info(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    static const char *const names[] = {"name"};
    PyObject *a[1], *hold = NULL, *res = NULL;
    const char *name;
    cte_dataset_t *d = NULL;
    int rc;
    if (parse_args("dataset_info", args, nargs, kwnames, names, 1, 1, a)) return NULL;
    if (name_arg("dataset name", a[0], &name, &hold)) return NULL;
    if (client_enter(t->client)) goto done;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn); if (!rc) rc = cte_dataset_open(conn, TAGNAME(t), name, &d));
    if (rc) {
        dataset_fail(t, rc);
    } else {
        PyObject *attrs = PyDict_New();
        for (size_t i = 0; attrs && i < cte_dataset_attr_count(d); i++) {
            const char *k = cte_dataset_attr_key(d, i), *v = cte_dataset_attr(d, k);
            PyObject *ks = text_str(k, strlen(k)), *vs = text_str(v, strlen(v));
            if (!ks || !vs || PyDict_SetItem(attrs, ks, vs)) Py_CLEAR(attrs);
            Py_XDECREF(ks);
            Py_XDECREF(vs);
        }
        PyObject *sh = dims_tuple(cte_dataset_shape(d), cte_dataset_rank(d));
        PyObject *ch = dims_tuple(cte_dataset_chunk(d), cte_dataset_rank(d));
        if (attrs && sh && ch)
            res = Py_BuildValue("(sOOO)", cte_dtype_name(cte_dataset_type(d)), sh, ch, attrs);
        Py_XDECREF(attrs);
        Py_XDECREF(sh);
        Py_XDECREF(ch);
        cte_dataset_close(d);
    }
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

/* _dataset_set_attr(name, key, value or None) */
static PyObject *tag_dataset_set_attr(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                      PyObject *kwnames)
{
    static const char *const names[] = {"name", "key", "value"};
    PyObject *a[3], *h1 = NULL, *h2 = NULL, *h3 = NULL, *res = NULL;
    const char *name, *key, *value = NULL;
    cte_dataset_t *d = NULL;
    int rc;
    if (parse_args("_dataset_set_attr", args, nargs, kwnames, names, 3, 3, a)) return NULL;
    if (name_arg("dataset name", a[0], &name, &h1) || name_arg("attribute key", a[1], &key, &h2) ||
        (a[2] != Py_None && name_arg("attribute value", a[2], &value, &h3)))
        goto done;
    if (client_enter(t->client)) goto done;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn); if (!rc) rc = cte_dataset_open(conn, TAGNAME(t), name, &d);
          if (!rc) rc = cte_dataset_set_attr(d, key, value));
    if (rc)
        dataset_fail(t, rc);
    else
        res = Py_NewRef(Py_None);
    if (d) cte_dataset_close(d);
    client_leave(t->client);
done:
    Py_XDECREF(h1);
    Py_XDECREF(h2);
    Py_XDECREF(h3);
    return res;
}

static PyObject *tag_list_datasets(TagObject *t, PyObject *unused)
{
    char **names = NULL;
    size_t n = 0;
    PyObject *res = NULL;
    int rc;
    if (client_enter(t->client)) return NULL;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn); if (!rc) rc = cte_dataset_list(conn, TAGNAME(t), &names, &n));
    if (rc) {
        dataset_fail(t, rc);
    } else {
        res = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; res && i < n; i++) {
            PyObject *s = text_str(names[i], strlen(names[i]));
            if (!s)
                Py_CLEAR(res);
            else
                PyList_SET_ITEM(res, (Py_ssize_t)i, s);
        }
    }
    free(names);
    client_leave(t->client);
    return res;
}

static PyObject *tag_delete_dataset(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames)
{
    static const char *const names[] = {"name"};
    PyObject *a[1], *hold = NULL, *res = NULL;
    const char *name;
    int rc;
    if (parse_args("delete_dataset", args, nargs, kwnames, names, 1, 1, a)) return NULL;
    if (name_arg("dataset name", a[0], &name, &hold)) return NULL;
    if (client_enter(t->client)) goto done;
    cte_conn_t *conn;
    NOGIL(rc = tag_conn(t, &conn); if (!rc) rc = cte_dataset_delete(conn, TAGNAME(t), name));
    if (rc)
        dataset_fail(t, rc);
    else
        res = Py_NewRef(Py_None);
    client_leave(t->client);
done:
    Py_XDECREF(hold);
    return res;
}

/* write_dataset, read_dataset and dataset_info live in python/cte/_dataset.py (numpy): these
 * forward to it with the tag first. */
static PyObject *forward(const char *fn, TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    PyObject *mod = PyImport_ImportModule("cte._dataset");
    PyObject *f = mod ? PyObject_GetAttrString(mod, fn) : NULL;
    Py_XDECREF(mod);
    if (!f) return NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject **all = PyMem_Malloc((size_t)(1 + nargs + nkw) * sizeof *all);
    if (!all) {
        Py_DECREF(f);
        return PyErr_NoMemory();
    }
    all[0] = (PyObject *)t;
    memcpy(all + 1, args, (size_t)(nargs + nkw) * sizeof *all);
    PyObject *res = PyObject_Vectorcall(f, all, (size_t)(1 + nargs), kwnames);
    PyMem_Free(all);
    Py_DECREF(f);
    return res;
}

static PyObject *tag_write_dataset(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    return forward("write_dataset", t, args, nargs, kwnames);
}

static PyObject *tag_read_dataset(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    return forward("read_dataset", t, args, nargs, kwnames);
}

static PyObject *tag_dataset_meta(TagObject *t, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    return forward("dataset_info", t, args, nargs, kwnames);
}

static PyObject *tag_get_name(TagObject *t, void *unused)
{
    Py_INCREF(t->name);
    return t->name;
}

static PyObject *tag_get_client(TagObject *t, void *unused)
{
    Py_INCREF(t->client);
    return (PyObject *)t->client;
}

/* ---- the Cluster ---- */

static PyObject *cluster_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"seeds", "timeout", NULL};
    PyObject *seeds, *timeout = Py_None, *list = NULL;
    const char **addrs = NULL;
    ClientObject *c = NULL;
    int ms, rc;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:Cluster", kwlist, &seeds, &timeout) ||
        timeout_arg(timeout, &ms))
        return NULL;
    list = PyUnicode_Check(seeds) ? PyTuple_Pack(1, seeds)
                                  : PySequence_Fast(seeds, "seeds: an address or a list of them");
    if (!list) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(list);
    if (n == 0) {
        PyErr_SetString(AddressError, "no seed address");
        goto done;
    }
    if (!(addrs = PyMem_Calloc((size_t)n, sizeof *addrs))) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(list, i);
        Py_ssize_t len;
        if (!PyUnicode_Check(o)) {
            PyErr_SetString(PyExc_TypeError, "seeds must be str addresses");
            goto done;
        }
        if (!(addrs[i] = PyUnicode_AsUTF8AndSize(o, &len))) goto done;
        if (strlen(addrs[i]) != (size_t)len) {
            PyErr_SetString(AddressError, "an address contains a NUL byte");
            goto done;
        }
    }
    if (!(c = (ClientObject *)type->tp_alloc(type, 0))) goto done;
    c->uri = Py_NewRef(PySequence_Fast_GET_ITEM(list, 0));
    if (!(c->lock = PyThread_allocate_lock()) || !(c->cluster = cte_cluster_new())) {
        Py_CLEAR(c);
        PyErr_NoMemory();
        goto done;
    }
    cte_cluster_set_timeout(c->cluster, ms);
    NOGIL(rc = cte_cluster_open(c->cluster, addrs, (size_t)n, 0));
    if (rc) {
        client_raise(c, rc);
        Py_CLEAR(c);
    }
done:
    PyMem_Free(addrs);
    Py_XDECREF(list);
    return (PyObject *)c;
}

static PyObject *cluster_repr(ClientObject *c)
{
    return PyUnicode_FromFormat("<cte.Cluster %R%s>", c->uri, c->closed ? " closed" : "");
}

/* One pipelined command: its arguments (held until the reply) and, once answered, its
 * outcome. */
typedef struct pipe_cmd {
    int argc;
    const char **argv;
    size_t *lens;
    PyObject **holds;
    Py_buffer *bufs;
    int status; /* 1 until answered */
    cte_reply_t *reply;
} pipe_cmd_t;

static void pipe_done(cte_cluster_t *cl, int status, const cte_reply_t *r, void *ud)
{
    pipe_cmd_t *p = ud;
    (void)cl;
    p->status = status;
    if (r && !(p->reply = cte_reply_copy(r))) p->status = CTE_E_NOMEM;
}

static void pipe_release(pipe_cmd_t *p, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; p && i < n; i++) {
        for (int j = 0; p[i].holds && j < p[i].argc; j++) {
            if (p[i].bufs[j].obj) PyBuffer_Release(&p[i].bufs[j]);
            Py_XDECREF(p[i].holds[j]);
        }
        PyMem_Free(p[i].argv);
        PyMem_Free(p[i].lens);
        PyMem_Free(p[i].holds);
        PyMem_Free(p[i].bufs);
        cte_reply_free(p[i].reply);
    }
    PyMem_Free(p);
}

/* Converts one command (a sequence of arguments) into p; 0, or -1 with an exception. */
static int pipe_args(PyObject *cmd, pipe_cmd_t *p)
{
    PyObject *seq = PySequence_Fast(cmd, "each pipelined command is a sequence of arguments");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = -1;
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_TypeError, "a pipelined command needs the command's name");
        goto done;
    }
    p->argv = PyMem_Calloc((size_t)n, sizeof *p->argv);
    p->lens = PyMem_Calloc((size_t)n, sizeof *p->lens);
    p->holds = PyMem_Calloc((size_t)n, sizeof *p->holds);
    p->bufs = PyMem_Calloc((size_t)n, sizeof *p->bufs);
    if (!p->argv || !p->lens || !p->holds || !p->bufs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++, p->argc++)
        if (command_arg(PySequence_Fast_GET_ITEM(seq, i), &p->argv[i], &p->lens[i], &p->holds[i],
                        &p->bufs[i]))
            goto done;
    rc = 0;
done:
    Py_DECREF(seq);
    return rc;
}

static PyObject *cluster_execute(ClientObject *c, PyObject *commands)
{
    PyObject *seq = PySequence_Fast(commands, "_execute takes a list of commands"), *res = NULL;
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), i;
    pipe_cmd_t *p = PyMem_Calloc(n ? (size_t)n : 1, sizeof *p);
    int rc = 0;
    if (!p) {
        PyErr_NoMemory();
        goto done;
    }
    for (i = 0; i < n; i++)
        if (pipe_args(PySequence_Fast_GET_ITEM(seq, i), &p[i])) goto done;
    if (client_enter(c)) goto done;
    NOGIL(for (i = 0; i < n; i++) {
        const char *key = p[i].argc > 1 ? p[i].argv[1] : NULL;
        size_t klen = p[i].argc > 1 ? p[i].lens[1] : 0;
        p[i].status = 1;
        int q = cte_cluster_command_async(c->cluster, key, klen, p[i].argc, p[i].argv, p[i].lens,
                                          pipe_done, &p[i]);
        if (q) {
            p[i].status = q;
            break;
        }
    } rc = cte_cluster_wait_all(c->cluster));
    for (i = 0; i < n && !rc; i++)
        if (p[i].status != 0 && p[i].status != CTE_E_SERVER)
            rc = p[i].status == 1 ? CTE_E_CLOSED : p[i].status;
    if (rc) {
        client_raise(c, rc);
    } else if ((res = PyList_New(n))) {
        for (i = 0; i < n; i++) {
            PyObject *v = reply_to_py(p[i].reply);
            if (!v) {
                Py_CLEAR(res);
                break;
            }
            PyList_SET_ITEM(res, i, v);
        }
    }
    client_leave(c);
done:
    pipe_release(p, n);
    Py_DECREF(seq);
    return res;
}

static PyObject *cluster_primaries(ClientObject *c, PyObject *unused)
{
    if (client_enter(c)) return NULL;
    size_t n = cte_cluster_primaries(c->cluster);
    PyObject *res = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; res && i < n; i++) {
        const char *host;
        int port;
        cte_cluster_primary(c->cluster, i, &host, &port);
        PyObject *t = Py_BuildValue("(si)", host, port);
        if (!t)
            Py_CLEAR(res);
        else
            PyList_SET_ITEM(res, (Py_ssize_t)i, t);
    }
    client_leave(c);
    return res;
}

static PyObject *cluster_reload(ClientObject *c, PyObject *unused)
{
    int rc;
    if (client_enter(c)) return NULL;
    NOGIL(rc = cte_cluster_reload(c->cluster));
    if (rc) client_raise(c, rc);
    client_leave(c);
    if (rc) return NULL;
    Py_RETURN_NONE;
}

/* ---- type and module tables ---- */

#define FAST (METH_FASTCALL | METH_KEYWORDS)
#define M(name, fn, flags, doc)                                                                    \
    {                                                                                              \
        name, (PyCFunction)(void (*)(void))fn, flags, doc                                          \
    }

static PyMethodDef tag_methods[] = {
    M("put_blob", tag_put_blob, FAST,
      "put_blob(name, data, offset=0, score=None) -> int\n\nWrites data (any bytes-like object) "
      "at offset, creating the blob as needed; with score (0..1) sets its score. Returns the "
      "blob's size after the write."),
    M("get_blob", tag_get_blob, FAST,
      "get_blob(name, size=None, offset=0) -> bytes\n\nReads size bytes (None: to the end) from "
      "offset; fewer when the blob is shorter. NotFoundError when it does not exist."),
    M("get_blob_view", tag_get_blob_view, FAST,
      "get_blob_view(name, size=None, offset=0) -> memoryview\n\nAs get_blob, without a copy: a "
      "read-only view of the client's reply memory. Until it is released (view.release(), or "
      "leave its with block) every other call on this client raises ViewInUseError."),
    M("get_blob_into", tag_get_blob_into, FAST,
      "get_blob_into(name, buffer, offset=0) -> int\n\nReads up to len(buffer) bytes from offset "
      "straight into buffer (any writable contiguous buffer); returns how many it read."),
    M("get_blob_size", tag_get_blob_size, FAST, "get_blob_size(name) -> int"),
    M("get_blob_score", tag_get_blob_score, FAST, "get_blob_score(name) -> float"),
    M("get_blob_info", tag_get_blob_info, FAST,
      "get_blob_info(name) -> dict\n\nsize, score, tier, ctime, mtime, atime (Unix ms), reads, "
      "writes."),
    M("get_contained_blobs", tag_get_contained_blobs, METH_NOARGS,
      "get_contained_blobs() -> list of str\n\nThe names of the tag's blobs."),
    M("del_blob", tag_del_blob, FAST,
      "del_blob(name) -> bool\n\nDeletes the blob; True when it existed."),
    M("truncate_blob", tag_truncate_blob, FAST,
      "truncate_blob(name, size) -> int\n\nShrinks the blob, or grows it with zero bytes "
      "(creating it when missing); returns the new size."),
    M("reorganize_blob", tag_reorganize_blob, FAST,
      "reorganize_blob(name, score) -> str\n\nSets the blob's score (0..1) and moves it to the "
      "tier placement picks for it; returns that tier's name."),
    M("write_dataset", tag_write_dataset, FAST,
      "write_dataset(name, array, chunks=None, start=None, shape=None, score=None, attrs=None)\n\n"
      "Stores a numpy array (or anything numpy.asarray takes) as the chunked dataset name: the "
      "whole dataset, or the hyperslab at start of a dataset of the given shape. chunks: the "
      "chunk shape (default: about 4 MiB of whole trailing rows); attrs: a dict of str; score: "
      "the chunks' score (0..1). Waits until every chunk is stored."),
    M("read_dataset", tag_read_dataset, FAST,
      "read_dataset(name, start=None, count=None) -> numpy.ndarray\n\nThe dataset, or the "
      "hyperslab start + count of it (None: from 0, to the end); chunks never written read as "
      "zeros. NotFoundError when there is no such dataset."),
    M("dataset_info", tag_dataset_meta, FAST,
      "dataset_info(name) -> dict\n\ndtype (numpy), shape, chunks and attrs of the dataset."),
    M("list_datasets", tag_list_datasets, METH_NOARGS,
      "list_datasets() -> list of str\n\nThe names of the tag's datasets, sorted."),
    M("delete_dataset", tag_delete_dataset, FAST,
      "delete_dataset(name)\n\nDeletes the dataset's chunks and metadata (NotFoundError when "
      "there is none)."),
    M("_dataset_write", tag_dataset_write, FAST,
      "_dataset_write(name, dtype, shape, chunks, data, start, count, score=None): the buffer "
      "level of write_dataset (data: C order, exactly the hyperslab's bytes)."),
    M("_dataset_read", tag_dataset_read, FAST,
      "_dataset_read(name, start, count, buffer): the buffer level of read_dataset."),
    M("_dataset_info", tag_dataset_info, FAST,
      "_dataset_info(name) -> (dtype name, shape, chunks, attrs)"),
    M("_dataset_set_attr", tag_dataset_set_attr, FAST,
      "_dataset_set_attr(name, key, value): value None removes the attribute."),
    M("PutBlob", tag_PutBlob, FAST, "CTE's spelling: PutBlob(blob_name, data, off=0, score=None)"),
    M("GetBlob", tag_GetBlob, FAST, "CTE's spelling: GetBlob(blob_name, data_size, off=0)"),
    M("GetBlobSize", tag_GetBlobSize, FAST, "CTE's spelling: GetBlobSize(blob_name)"),
    M("GetBlobScore", tag_GetBlobScore, FAST, "CTE's spelling: GetBlobScore(blob_name)"),
    M("GetContainedBlobs", tag_get_contained_blobs, METH_NOARGS,
      "CTE's spelling: GetContainedBlobs()"),
    M("ReorganizeBlob", tag_ReorganizeBlob, FAST,
      "CTE's spelling: ReorganizeBlob(blob_name, new_score)"),
    {NULL},
};

static PyGetSetDef tag_getset[] = {
    {"name", (getter)tag_get_name, NULL, "The tag's name (str).", NULL},
    {"client", (getter)tag_get_client, NULL, "The Client this tag talks through.", NULL},
    {NULL},
};

/* PyVarObject_HEAD_INIT ends in a comma */
/* clang-format off */
static PyTypeObject TagType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cte.Tag",
    /* clang-format on */
    .tp_basicsize = sizeof(TagObject),
    .tp_dealloc = (destructor)tag_dealloc,
    .tp_repr = (reprfunc)tag_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Tag(client, name): the blobs of one tag, through client (same as client.tag(name)).",
    .tp_methods = tag_methods,
    .tp_getset = tag_getset,
    .tp_new = tag_new,
};

static PyMethodDef client_methods[] = {
    M("tag", client_tag, FAST, "tag(name) -> Tag"),
    M("tag_query", client_tag_query, FAST,
      "tag_query(tag_regex, max_tags=0) -> list of str\n\nTag names that fully match the regex "
      "(PCRE2); max_tags 0: all."),
    M("blob_query", client_blob_query, FAST,
      "blob_query(tag_regex, blob_regex, max_blobs=0, since=None, until=None) -> list of "
      "(tag, blob)\n\nBlobs whose tag and name fully match; since/until (Unix ms) bound the last "
      "modification time (then oldest first)."),
    M("search", client_search, FAST,
      "search(text, k=10, tag_regex=None, blob_regex=None) -> list of (tag, blob, score)\n\n"
      "BM25 keyword search over blob contents, best first."),
    M("command", client_command, FAST,
      "command(*args) -> reply\n\nAny command; arguments are bytes-like, str, int or float. "
      "Replies: simple strings str, bulk strings bytes, integers int, nil None, arrays list, maps "
      "dict, sets set, doubles float, booleans bool; an error reply raises ResponseError (inside "
      "an array it is a ResponseError instance)."),
    M("TagQuery", client_TagQuery, FAST, "CTE's spelling: TagQuery(tag_regex, max_tags=0)"),
    M("BlobQuery", client_BlobQuery, FAST,
      "CTE's spelling: BlobQuery(tag_regex, blob_regex, max_blobs=0)"),
    M("close", client_close, METH_NOARGS,
      "close()\n\nCloses the connection (idempotent); later calls raise ConnectionError."),
    M("__enter__", client_enter_ctx, METH_NOARGS, NULL),
    M("__exit__", client_exit_ctx, METH_VARARGS, NULL),
    {NULL},
};

static PyGetSetDef client_getset[] = {
    {"closed", (getter)client_get_closed, NULL, "True after close().", NULL},
    {"uri", (getter)client_get_uri, NULL, "The address the client connected to.", NULL},
    {NULL},
};

/* PyVarObject_HEAD_INIT ends in a comma */
/* clang-format off */
static PyTypeObject ClientType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cte.Client",
    /* clang-format on */
    .tp_basicsize = sizeof(ClientObject),
    .tp_dealloc = (destructor)client_dealloc,
    .tp_repr = (reprfunc)client_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Client(uri, timeout=None): one connection to a cte-server.\n\n"
              "uri: tcp://[:password@]host[:port][/db], unix:PATH or shm:PATH (PATH: the "
              "server's Unix socket). timeout: seconds to wait for the server (None: for ever).",
    .tp_methods = client_methods,
    .tp_getset = client_getset,
    .tp_new = client_new,
};

static PyMethodDef cluster_methods[] = {
    M("_execute", cluster_execute, METH_O,
      "_execute(commands) -> list\n\nSends every command (a sequence of arguments), each to the "
      "node owning its first key (argv[1]), all at once, and returns their replies in order "
      "(error replies as ResponseError instances). Use pipeline() instead."),
    M("primaries", cluster_primaries, METH_NOARGS,
      "primaries() -> list of (host, port)\n\nThe primaries of the slot map."),
    M("reload", cluster_reload, METH_NOARGS, "reload()\n\nReloads the slot map (CLUSTER SLOTS)."),
    {NULL},
};

/* PyVarObject_HEAD_INIT ends in a comma */
/* clang-format off */
static PyTypeObject ClusterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cte.Cluster",
    /* clang-format on */
    .tp_basicsize = sizeof(ClientObject),
    .tp_dealloc = (destructor)client_dealloc,
    .tp_repr = (reprfunc)cluster_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Cluster(seeds, timeout=None): a cluster of cte-servers (Redis Cluster protocol).\n\n"
              "seeds: a tcp:// address or a list of them. The calls of Client, routed by hash "
              "slot; tag_query, blob_query and search run on every primary and are merged.",
    .tp_methods = cluster_methods,
    .tp_base = &ClientType,
    .tp_new = cluster_new,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cte._cte",
    .m_doc = "The C half of the cte module (import cte instead).",
    .m_size = -1,
};

static int add_exceptions(PyObject *m)
{
    for (size_t i = 0; i < sizeof exc_table / sizeof exc_table[0]; i++) {
        PyObject *base = exc_table[i].base ? *exc_table[i].base : PyExc_Exception;
        PyObject *bases =
            exc_table[i].mixin ? PyTuple_Pack(2, base, *exc_table[i].mixin) : PyTuple_Pack(1, base);
        if (!bases) return -1;
        *exc_table[i].slot =
            PyErr_NewExceptionWithDoc(exc_table[i].name, exc_table[i].doc, bases, NULL);
        Py_DECREF(bases);
        if (!*exc_table[i].slot) return -1;
        if (PyModule_AddObjectRef(m, strchr(exc_table[i].name, '.') + 1, *exc_table[i].slot))
            return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__cte(void)
{
    if (PyType_Ready(&ClientType) || PyType_Ready(&TagType) || PyType_Ready(&ViewType) ||
        PyType_Ready(&ClusterType))
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (add_exceptions(m) || PyModule_AddObjectRef(m, "Client", (PyObject *)&ClientType) ||
        PyModule_AddObjectRef(m, "Tag", (PyObject *)&TagType) ||
        PyModule_AddObjectRef(m, "Cluster", (PyObject *)&ClusterType) ||
        PyModule_AddIntConstant(m, "LIBCTE_VERSION_MAJOR", CTE_VERSION_MAJOR) ||
        PyModule_AddIntConstant(m, "LIBCTE_VERSION_MINOR", CTE_VERSION_MINOR)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
