/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nodes.c - device nodes that answer, for Python tests: the Run methods
 * over <classfs/run.h>'s classfs_run_load() and friends, and IoctlCall,
 * what a Python function attached to a node gets for each ioctl().
 *
 * An attached function runs in the supervisor thread (a C thread of
 * this process, which takes the GIL for it) while the program's
 * ioctl() waits; the program may be this very process (its thread
 * released the GIL in the call).  An IoctlCall is valid during the call
 * only: its read() and write() reach the program's memory then.
 */
#include "_classfs.h"

#include <errno.h>

#include <classfs/run.h>

/* ------------------------------------------------------------------ */
/* IoctlCall                                                           */
/* ------------------------------------------------------------------ */

struct cfs_py_call {
	PyObject_HEAD
	const struct classfs_ioctl *call;	/* NULL once answered */
	PyObject *node;
	unsigned long request;
	unsigned long long arg;
	long pid;
};

static const struct classfs_ioctl *call_of(struct cfs_py_call *self)
{
	if (!self->call)
		PyErr_SetString(PyExc_ValueError, "the ioctl was answered: its memory is gone");
	return self->call;
}

static PyObject *call_read(struct cfs_py_call *self, PyObject *args)
{
	const struct classfs_ioctl *c = call_of(self);
	unsigned long long addr;
	Py_ssize_t len;
	PyObject *out;
	int r;

	if (!c || !PyArg_ParseTuple(args, "Kn", &addr, &len))
		return NULL;
	if (len < 0 || len > (1 << 26)) {
		PyErr_SetString(PyExc_ValueError, "read(): length out of range");
		return NULL;
	}
	out = PyBytes_FromStringAndSize(NULL, len);
	if (!out)
		return NULL;
	r = classfs_ioctl_read(c, addr, PyBytes_AS_STRING(out), (size_t)len);
	if (r < 0) {
		Py_DECREF(out);
		return cfs_py_error(r, "reading the program's memory", NULL);
	}
	return out;
}

static PyObject *call_write(struct cfs_py_call *self, PyObject *args)
{
	const struct classfs_ioctl *c = call_of(self);
	unsigned long long addr;
	Py_buffer data;
	int r;

	if (!c || !PyArg_ParseTuple(args, "Ky*", &addr, &data))
		return NULL;
	r = classfs_ioctl_write(c, addr, data.buf, (size_t)data.len);
	PyBuffer_Release(&data);
	if (r < 0)
		return cfs_py_error(r, "writing the program's memory", NULL);
	Py_RETURN_NONE;
}

static void call_dealloc(struct cfs_py_call *self)
{
	Py_XDECREF(self->node);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *call_get_node(struct cfs_py_call *self, void *unused)
{
	return Py_NewRef(self->node);
}

static PyObject *call_get_request(struct cfs_py_call *self, void *unused)
{
	return PyLong_FromUnsignedLong(self->request);
}

static PyObject *call_get_arg(struct cfs_py_call *self, void *unused)
{
	return PyLong_FromUnsignedLongLong(self->arg);
}

static PyObject *call_get_pid(struct cfs_py_call *self, void *unused)
{
	return PyLong_FromLong(self->pid);
}

static PyMethodDef call_methods[] = {
	{ "read", (PyCFunction)call_read, METH_VARARGS,
	  "read(addr, length) -> bytes of the calling program's memory" },
	{ "write", (PyCFunction)call_write, METH_VARARGS,
	  "write(addr, data): into the calling program's memory" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef call_getset[] = {
	{ "node", (getter)call_get_node, NULL, "the node's path", NULL },
	{ "request", (getter)call_get_request, NULL, "the ioctl request number", NULL },
	{ "arg", (getter)call_get_arg, NULL, "the ioctl's third argument", NULL },
	{ "pid", (getter)call_get_pid, NULL, "the calling thread", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject cfs_py_call_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "classfs._classfs.IoctlCall",
	.tp_basicsize = sizeof(struct cfs_py_call),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "an ioctl() a program made on an emulated node (valid while it waits)",
	.tp_dealloc = (destructor)call_dealloc,
	.tp_methods = call_methods,
	.tp_getset = call_getset,
};

/* the attached function: its result as the ioctl's (None: the descriptor answers) */
static long py_ioctl(const struct classfs_ioctl *call, void *data)
{
	PyGILState_STATE g = PyGILState_Ensure();
	struct cfs_py_call *obj;
	PyObject *res = NULL;
	long r = -EIO;

	obj = PyObject_New(struct cfs_py_call, &cfs_py_call_type);
	if (obj) {
		obj->call = call;
		obj->request = call->request;
		obj->arg = call->arg;
		obj->pid = call->pid;
		obj->node = PyUnicode_DecodeFSDefault(call->node ? call->node : "");
		if (obj->node)
			res = PyObject_CallOneArg(data, (PyObject *)obj);
		obj->call = NULL;
		Py_DECREF(obj);
	}
	if (!res) {
		/* the program gets EIO; the test sees the traceback */
		PyErr_WriteUnraisable(data);
	} else if (res == Py_None) {
		r = CLASSFS_IOCTL_PASS;
	} else {
		r = PyLong_AsLong(res);
		if (r == -1 && PyErr_Occurred()) {
			PyErr_WriteUnraisable(data);
			r = -EIO;
		}
	}
	Py_XDECREF(res);
	PyGILState_Release(g);
	return r;
}

static void py_release(void *data)
{
	PyGILState_STATE g = PyGILState_Ensure();

	Py_DECREF((PyObject *)data);
	PyGILState_Release(g);
}

/* ------------------------------------------------------------------ */
/* Run methods                                                         */
/* ------------------------------------------------------------------ */

static PyObject *load_error(int r, const struct classfs_run_error *err)
{
	if (r == -EINVAL) {
		PyErr_SetString(PyExc_ValueError, err->message);
		return NULL;
	}
	return cfs_py_error(r, "loading a recording", err->message);
}

/* load(kind, target, file): classfs_run_load() */
PyObject *cfs_py_run_load(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	struct classfs_run_error err = { 0 };
	const char *target, *file;
	int kind, r;

	if (!run || !PyArg_ParseTuple(args, "izs", &kind, &target, &file))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_load(run, (enum classfs_recording)kind, target, file, &err);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return load_error(r, &err);
	Py_RETURN_NONE;
}

/* load_data(kind, target, data, name): classfs_run_load_data() */
PyObject *cfs_py_run_load_data(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	struct classfs_run_error err = { 0 };
	const char *target, *name;
	Py_buffer data;
	int kind, r;

	if (!run || !PyArg_ParseTuple(args, "izy*s", &kind, &target, &data, &name))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_load_data(run, (enum classfs_recording)kind, target, data.buf,
				  (size_t)data.len, name, &err);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&data);
	if (r < 0)
		return load_error(r, &err);
	Py_RETURN_NONE;
}

/* wait_script(node): classfs_run_wait_script() */
PyObject *cfs_py_run_wait_script(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	struct classfs_run_error err = { 0 };
	const char *node;
	int r;

	if (!run || !PyArg_ParseTuple(args, "s", &node))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_wait_script(run, node, &err);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return cfs_py_error(r, node, err.message);
	Py_RETURN_NONE;
}

/* dev_fd(node) -> int, -1 when the node has no other end */
PyObject *cfs_py_run_dev_fd(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	const char *node;
	int r;

	if (!run || !PyArg_ParseTuple(args, "s", &node))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_dev_fd(run, node);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(r < 0 ? -1 : r);
}

/* attach_ioctl(node, fn): fn(IoctlCall) -> int result, -errno, or None */
PyObject *cfs_py_run_attach_ioctl(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	const char *node;
	PyObject *fn;
	int r;

	if (!run || !PyArg_ParseTuple(args, "sO", &node, &fn))
		return NULL;
	if (!PyCallable_Check(fn)) {
		PyErr_SetString(PyExc_TypeError, "attach_ioctl(): the handler must be callable");
		return NULL;
	}
	Py_INCREF(fn);
	/* without the GIL: a call in flight on the node holds its lock and waits for the GIL */
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_attach_ioctl(run, node, py_ioctl, fn, py_release);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return cfs_py_error(r, node, "cannot attach an ioctl handler");
	Py_RETURN_NONE;
}

PyObject *cfs_py_run_detach_ioctl(PyObject *self, PyObject *args)
{
	struct classfs_run *run = cfs_py_run_of(self);
	const char *node;
	int r;

	if (!run || !PyArg_ParseTuple(args, "s", &node))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_run_detach_ioctl(run, node);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return cfs_py_error(r, node, "cannot detach its ioctl handler");
	Py_RETURN_NONE;
}
