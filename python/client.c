/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.c - classfs._classfs.Client: one connection to a classfsd
 * (<classfs/client.h>).  Devices are named as the client library names
 * them: a class device by (class, name), a physical device by (None, name).
 *
 * A client is used by one thread at a time; dispatch() waits without the
 * GIL, so every method first claims the client and refuses (RuntimeError)
 * while another thread is inside it.
 */
#include "_classfs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <classfs/client.h>

struct cfs_py_client {
	PyObject_HEAD
	struct classfs_client *c;
	bool busy;		/* a thread is inside a call (dispatch() drops the GIL) */
	PyObject *events;	/* events delivered since the last dispatch() (once subscribed) */
	PyObject *gaps;		/* (first, last) of skipped events, same */
	bool failed;		/* a callback could not build its object */
};

/* claim @self for one call; Return: false with an exception set */
static bool claim(struct cfs_py_client *self)
{
	if (!self->c) {
		PyErr_SetString(PyExc_ValueError, "classfs client is closed");
		return false;
	}
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError,
				"classfs client is in use by another thread (one client per thread)");
		return false;
	}
	self->busy = true;
	return true;
}

/* end a call: -errno @r becomes OSError naming @what and the daemon's message */
static PyObject *finish(struct cfs_py_client *self, long r, const char *what)
{
	self->busy = false;
	if (r < 0)
		return cfs_py_error((int)r, what, classfs_client_error_message(self->c));
	Py_RETURN_NONE;
}

static int client_init(struct cfs_py_client *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "socket", NULL };
	const char *path = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|z", kwlist, &path))
		return -1;
	if (self->c) {
		PyErr_SetString(PyExc_RuntimeError, "classfs client already connected");
		return -1;
	}
	self->c = classfs_client_connect(path, 0);
	if (!self->c) {
		PyErr_SetFromErrnoWithFilename(PyExc_OSError,
					       path ? path : CLASSFS_CLIENT_DEFAULT_SOCKET);
		return -1;
	}
	return 0;
}

static void client_dealloc(struct cfs_py_client *self)
{
	classfs_client_disconnect(self->c);
	Py_XDECREF(self->events);
	Py_XDECREF(self->gaps);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *client_close(struct cfs_py_client *self, PyObject *unused)
{
	if (self->busy) {
		PyErr_SetString(PyExc_RuntimeError, "classfs client is in use by another thread");
		return NULL;
	}
	classfs_client_disconnect(self->c);
	self->c = NULL;
	Py_RETURN_NONE;
}

static PyObject *client_status(struct cfs_py_client *self, PyObject *unused)
{
	struct classfs_client_status *st;
	PyObject *res;
	int r;

	if (!claim(self))
		return NULL;
	st = malloc(sizeof(*st));
	if (!st) {
		self->busy = false;
		return PyErr_NoMemory();
	}
	r = classfs_client_status(self->c, st);
	if (r < 0) {
		free(st);
		return finish(self, r, "status");
	}
	self->busy = false;
	res = Py_BuildValue("(iiKs)", (int)st->version, (int)st->layout,
			    (unsigned long long)st->seqnum, st->mountpoint);
	free(st);
	return res;
}

static PyObject *client_load(struct cfs_py_client *self, PyObject *args)
{
	const char *filename = NULL;
	Py_buffer data;
	int r;

	if (!PyArg_ParseTuple(args, "y*|z", &data, &filename))
		return NULL;
	if (!claim(self)) {
		PyBuffer_Release(&data);
		return NULL;
	}
	r = classfs_client_load(self->c, data.buf, (size_t)data.len, filename);
	PyBuffer_Release(&data);
	if (r == -EINVAL) {
		/* a bad record: the message names file, line and reason */
		const char *msg = classfs_client_error_message(self->c);
		PyObject *text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "backslashreplace");

		/* the message may quote a name's bytes that are not UTF-8: shown as \\xNN */
		self->busy = false;
		if (text) {
			PyErr_SetObject(PyExc_ValueError, text);
			Py_DECREF(text);
		}
		return NULL;
	}
	return finish(self, r, filename ? filename : "load");
}

static PyObject *client_save(struct cfs_py_client *self, PyObject *args)
{
	const char *syspath = NULL;
	char *buf = NULL;
	size_t len = 0;
	PyObject *res;
	FILE *out;
	int r;

	if (!PyArg_ParseTuple(args, "|z", &syspath))
		return NULL;
	if (!claim(self))
		return NULL;
	out = open_memstream(&buf, &len);
	if (!out) {
		self->busy = false;
		return PyErr_NoMemory();
	}
	r = classfs_client_save(self->c, syspath, out);
	if (fclose(out) != 0 && r == 0)
		r = -EIO;
	if (r < 0) {
		free(buf);
		return finish(self, r, syspath ? syspath : "save");
	}
	self->busy = false;
	res = PyBytes_FromStringAndSize(buf, (Py_ssize_t)len);
	free(buf);
	return res;
}

static PyObject *client_attr_get(struct cfs_py_client *self, PyObject *args)
{
	const char *cls, *name, *attr;
	char *buf;
	PyObject *res;
	ssize_t n;

	if (!PyArg_ParseTuple(args, "zss", &cls, &name, &attr))
		return NULL;
	if (!claim(self))
		return NULL;
	buf = malloc(CLASSFS_ATTR_MAX);
	if (!buf) {
		self->busy = false;
		return PyErr_NoMemory();
	}
	n = classfs_client_attr_get(self->c, cls, name, attr, buf, CLASSFS_ATTR_MAX);
	if (n < 0) {
		free(buf);
		return finish(self, n, attr);
	}
	self->busy = false;
	res = PyBytes_FromStringAndSize(buf, n);
	free(buf);
	return res;
}

static PyObject *client_attr_set(struct cfs_py_client *self, PyObject *args)
{
	const char *cls, *name, *attr;
	Py_buffer value;
	int r;

	if (!PyArg_ParseTuple(args, "zssy*", &cls, &name, &attr, &value))
		return NULL;
	if (!claim(self)) {
		PyBuffer_Release(&value);
		return NULL;
	}
	r = classfs_client_attr_set(self->c, cls, name, attr, value.buf, (size_t)value.len);
	PyBuffer_Release(&value);
	return finish(self, r, attr);
}

static PyObject *client_attr_add(struct cfs_py_client *self, PyObject *args)
{
	const char *cls, *name, *attr;
	unsigned int flags = 0;
	Py_buffer value;
	int r;

	if (!PyArg_ParseTuple(args, "zssy*|I", &cls, &name, &attr, &value, &flags))
		return NULL;
	if (!claim(self)) {
		PyBuffer_Release(&value);
		return NULL;
	}
	r = classfs_client_attr_add(self->c, cls, name, attr, value.buf, (size_t)value.len, flags);
	PyBuffer_Release(&value);
	return finish(self, r, attr);
}

/* @seq of str as a NULL-terminated array pointing into its items; Return: NULL + exception */
static const char **str_array(PyObject *seq, PyObject **fast)
{
	const char **v;
	Py_ssize_t n;

	*fast = PySequence_Fast(seq, "expected a sequence of str");
	if (!*fast)
		return NULL;
	n = PySequence_Fast_GET_SIZE(*fast);
	v = PyMem_Calloc((size_t)n + 1, sizeof(*v));
	if (!v) {
		Py_CLEAR(*fast);
		PyErr_NoMemory();
		return NULL;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(*fast, i));
		if (!v[i]) {
			PyMem_Free(v);
			Py_CLEAR(*fast);
			return NULL;
		}
	}
	return v;
}

static PyObject *client_trigger(struct cfs_py_client *self, PyObject *args)
{
	const char *cls, *name, *action, **extra = NULL;
	PyObject *extra_obj = Py_None, *fast = NULL;
	int a, r;

	if (!PyArg_ParseTuple(args, "zss|O", &cls, &name, &action, &extra_obj))
		return NULL;
	a = classfs_action_parse(action, strlen(action));
	if (a < 0) {
		PyErr_Format(PyExc_ValueError, "unknown uevent action '%s'", action);
		return NULL;
	}
	if (extra_obj != Py_None && !(extra = str_array(extra_obj, &fast)))
		return NULL;
	if (!claim(self)) {
		PyMem_Free(extra);
		Py_XDECREF(fast);
		return NULL;
	}
	r = classfs_client_trigger(self->c, cls, name, (enum classfs_action)a, extra);
	PyMem_Free(extra);
	Py_XDECREF(fast);
	return finish(self, r, name);
}

static PyObject *client_device_remove(struct cfs_py_client *self, PyObject *args)
{
	const char *cls, *name;

	if (!PyArg_ParseTuple(args, "zs", &cls, &name))
		return NULL;
	if (!claim(self))
		return NULL;
	return finish(self, classfs_client_device_remove(self->c, cls, name), name);
}

static PyObject *client_device_remove_path(struct cfs_py_client *self, PyObject *args)
{
	const char *syspath;

	if (!PyArg_ParseTuple(args, "s", &syspath))
		return NULL;
	if (!claim(self))
		return NULL;
	return finish(self, classfs_client_device_remove_path(self->c, syspath), syspath);
}

static PyObject *client_class_remove(struct cfs_py_client *self, PyObject *args)
{
	const char *cls;

	if (!PyArg_ParseTuple(args, "s", &cls))
		return NULL;
	if (!claim(self))
		return NULL;
	return finish(self, classfs_client_class_remove(self->c, cls), cls);
}

static PyObject *client_reset(struct cfs_py_client *self, PyObject *unused)
{
	if (!claim(self))
		return NULL;
	return finish(self, classfs_client_reset(self->c), "reset");
}

/* @s as str (undecodable bytes as surrogates), or None for NULL; NULL on no memory */
static PyObject *text_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

/* the subscription's callbacks: run inside dispatch(), with the GIL taken back */
static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct cfs_py_client *self = data;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *props = PyDict_New(), *item = NULL;

	for (int i = 0; props && i < ev->envc; i++) {
		const char *kv = ev->envp[i], *eq = strchr(kv, '=');
		PyObject *k, *v;

		if (!eq)
			continue;
		k = PyUnicode_DecodeUTF8(kv, eq - kv, "surrogateescape");
		v = PyUnicode_DecodeUTF8(eq + 1, (Py_ssize_t)strlen(eq + 1), "surrogateescape");
		if (!k || !v || PyDict_SetItem(props, k, v) < 0)
			Py_CLEAR(props);
		Py_XDECREF(k);
		Py_XDECREF(v);
	}
	/*
	 * Text as the rest of the module takes it: bytes that are not UTF-8
	 * become lone surrogates (os.fsdecode()'s way), so no name the
	 * daemon sends can fail the decode and lose its event.
	 */
	if (props) {
		PyObject *devpath = text_or_none(ev->devpath), *subsystem = text_or_none(ev->subsystem);

		if (devpath && subsystem)
			item = Py_BuildValue("(KsNNN)", (unsigned long long)ev->seqnum,
					     classfs_action_name(ev->action), devpath, subsystem, props);
		else {
			Py_XDECREF(devpath);
			Py_XDECREF(subsystem);
			Py_DECREF(props);
		}
	}
	if (!item)
		PyErr_Clear();
	if (!item || !self->events || PyList_Append(self->events, item) < 0) {
		self->failed = true;
		PyErr_Clear();
	}
	Py_XDECREF(item);
	PyGILState_Release(g);
}

static void on_gap(uint64_t first, uint64_t last, void *data)
{
	struct cfs_py_client *self = data;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *item = Py_BuildValue("(KK)", (unsigned long long)first, (unsigned long long)last);

	if (!item || !self->gaps || PyList_Append(self->gaps, item) < 0) {
		self->failed = true;
		PyErr_Clear();
	}
	Py_XDECREF(item);
	PyGILState_Release(g);
}

static PyObject *client_subscribe(struct cfs_py_client *self, PyObject *args)
{
	unsigned long long from = 0;
	int r;

	if (!PyArg_ParseTuple(args, "|K", &from))
		return NULL;
	if (!claim(self))
		return NULL;
	if (!self->events) {
		self->events = PyList_New(0);
		self->gaps = PyList_New(0);
		if (!self->events || !self->gaps) {
			Py_CLEAR(self->events);
			Py_CLEAR(self->gaps);
			self->busy = false;
			return NULL;
		}
	}
	r = classfs_client_subscribe(self->c, from, on_event, on_gap, self);
	return finish(self, r, "subscribe");
}

static PyObject *client_unsubscribe(struct cfs_py_client *self, PyObject *unused)
{
	if (!claim(self))
		return NULL;
	return finish(self, classfs_client_unsubscribe(self->c), "unsubscribe");
}

/* a fresh list in *@slot; the old one returned (NULL + exception on failure) */
static PyObject *take(PyObject **slot)
{
	PyObject *fresh = PyList_New(0), *old = *slot;

	if (!fresh)
		return NULL;
	*slot = fresh;
	return old;
}

/*
 * dispatch(timeout_ms) -> (events, gaps): events as (seqnum, action,
 * devpath, subsystem, {KEY: VALUE}), gaps as (first, last), in the order
 * they arrived (also those delivered while another call waited for its
 * reply); waits up to timeout_ms for the first (-1: forever) unless some
 * are already here.
 */
static PyObject *client_dispatch(struct cfs_py_client *self, PyObject *args)
{
	PyObject *events, *gaps, *res;
	int timeout = 0, r;

	if (!PyArg_ParseTuple(args, "|i", &timeout))
		return NULL;
	if (!claim(self))
		return NULL;
	if (!self->events) {
		self->busy = false;
		PyErr_SetString(PyExc_RuntimeError, "dispatch() without subscribe()");
		return NULL;
	}
	if (PyList_GET_SIZE(self->events) || PyList_GET_SIZE(self->gaps))
		timeout = 0;
	Py_BEGIN_ALLOW_THREADS
	r = classfs_client_dispatch(self->c, timeout);
	/* drain what is already queued */
	while (r > 0 && classfs_client_dispatch(self->c, 0) > 0)
		;
	Py_END_ALLOW_THREADS
	self->busy = false;
	if (r < 0)
		return cfs_py_error(r, "dispatch", classfs_client_error_message(self->c));
	if (self->failed) {
		/* an event could not be kept: say so rather than lose it quietly */
		self->failed = false;
		return PyErr_NoMemory();
	}
	events = take(&self->events);
	if (!events)
		return NULL;
	gaps = take(&self->gaps);
	if (!gaps) {
		Py_SETREF(self->events, events);
		return NULL;
	}
	res = PyTuple_Pack(2, events, gaps);
	Py_DECREF(events);
	Py_DECREF(gaps);
	return res;
}

static PyObject *client_fileno(struct cfs_py_client *self, PyObject *unused)
{
	if (!self->c) {
		PyErr_SetString(PyExc_ValueError, "classfs client is closed");
		return NULL;
	}
	return PyLong_FromLong(classfs_client_fd(self->c));
}

static PyMethodDef client_methods[] = {
	{ "close", (PyCFunction)client_close, METH_NOARGS, "disconnect" },
	{ "status", (PyCFunction)client_status, METH_NOARGS,
	  "status() -> (version, layout, seqnum, mountpoint)" },
	{ "load", (PyCFunction)client_load, METH_VARARGS,
	  "load(data, filename=None): load a umockdev record (ValueError: bad record)" },
	{ "save", (PyCFunction)client_save, METH_VARARGS,
	  "save(syspath=None) -> bytes: the tree, or one device and its parents, as a record" },
	{ "attr_get", (PyCFunction)client_attr_get, METH_VARARGS,
	  "attr_get(cls, name, attr) -> bytes" },
	{ "attr_set", (PyCFunction)client_attr_set, METH_VARARGS,
	  "attr_set(cls, name, attr, value: bytes)" },
	{ "attr_add", (PyCFunction)client_attr_add, METH_VARARGS,
	  "attr_add(cls, name, attr, value: bytes, flags=0): write, or make when missing "
	  "(flags: ADD_BINARY, ADD_LINK)" },
	{ "trigger", (PyCFunction)client_trigger, METH_VARARGS,
	  "trigger(cls, name, action, extra=None): send an event (extra: KEY=VALUE strings)" },
	{ "device_remove", (PyCFunction)client_device_remove, METH_VARARGS,
	  "device_remove(cls, name): remove a device and those depending on it" },
	{ "device_remove_path", (PyCFunction)client_device_remove_path, METH_VARARGS,
	  "device_remove_path(syspath): device_remove() of the device at syspath "
	  "(\"/devices/...\")" },
	{ "class_remove", (PyCFunction)client_class_remove, METH_VARARGS,
	  "class_remove(cls): remove a class and its devices" },
	{ "reset", (PyCFunction)client_reset, METH_NOARGS,
	  "reset(): the tree as a new daemon's (every device and every file made removed); "
	  "root or the daemon's uid" },
	{ "subscribe", (PyCFunction)client_subscribe, METH_VARARGS,
	  "subscribe(from_seqnum=0): receive every event from dispatch()" },
	{ "unsubscribe", (PyCFunction)client_unsubscribe, METH_NOARGS, "stop receiving events" },
	{ "dispatch", (PyCFunction)client_dispatch, METH_VARARGS,
	  "dispatch(timeout_ms=0) -> (events, gaps)" },
	{ "fileno", (PyCFunction)client_fileno, METH_NOARGS,
	  "a descriptor that polls readable when dispatch() has work" },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject cfs_py_client_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "classfs._classfs.Client",
	.tp_basicsize = sizeof(struct cfs_py_client),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Client(socket=None): a connection to a classfsd control socket",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)client_init,
	.tp_dealloc = (destructor)client_dealloc,
	.tp_methods = client_methods,
};
