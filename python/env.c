/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * env.c - private environments for Python tests: classfs._classfs.Run
 * (classfs_run_start() and classfs_run_stop()), which this very process
 * enters and leaves (ns.c), and Sync, which waits until the environment
 * has applied an event (its node, database entry and broadcast exist).
 */
#include "_classfs.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <classfs/run.h>
#include <classfs/wire.h>

/* ------------------------------------------------------------------ */
/* Run: an environment of our own                                      */
/* ------------------------------------------------------------------ */

struct cfs_py_run {
	PyObject_HEAD
	struct classfs_run *run;
};

static int run_init(struct cfs_py_run *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "records", "sample", "layout", "daemon", "verbose", NULL };
	struct classfs_run_options opt = { .layout = CLASSFS_LAYOUT_DEVICES };
	PyObject *records = Py_None, *fast = NULL;
	struct classfs_run_error err;
	const char **files = NULL;
	int sample = 0, verbose = 0, layout = CLASSFS_LAYOUT_DEVICES, r;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|Opizp", kwlist, &records, &sample, &layout,
					 &opt.daemon, &verbose))
		return -1;
	if (self->run) {
		PyErr_SetString(PyExc_RuntimeError, "environment already started");
		return -1;
	}
	if (records != Py_None) {
		Py_ssize_t n;

		fast = PySequence_Fast(records, "records: expected a sequence of paths");
		if (!fast)
			return -1;
		n = PySequence_Fast_GET_SIZE(fast);
		files = PyMem_Calloc((size_t)n + 1, sizeof(*files));
		if (!files) {
			Py_DECREF(fast);
			PyErr_NoMemory();
			return -1;
		}
		for (Py_ssize_t i = 0; i < n; i++) {
			files[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
			if (!files[i]) {
				PyMem_Free(files);
				Py_DECREF(fast);
				return -1;
			}
		}
	}
	opt.records = files;
	opt.sample = sample;
	opt.layout = (enum classfs_layout)layout;
	opt.verbose = verbose;
	r = classfs_run_start(&opt, &self->run, &err);
	PyMem_Free(files);
	Py_XDECREF(fast);
	if (r == -EINVAL && strchr(err.message, ':')) {
		PyErr_SetString(PyExc_ValueError, err.message);
		return -1;
	}
	if (r < 0) {
		cfs_py_error(r, "classfs environment", err.message);
		return -1;
	}
	return 0;
}

static PyObject *run_stop(struct cfs_py_run *self, PyObject *unused)
{
	int r = classfs_run_stop(self->run);

	self->run = NULL;
	if (r < 0)
		return cfs_py_error(r, "classfs environment",
				    "the holder reported a failure while running (see stderr)");
	Py_RETURN_NONE;
}

static void run_dealloc(struct cfs_py_run *self)
{
	classfs_run_stop(self->run);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *run_get_socket(struct cfs_py_run *self, void *unused)
{
	if (!self->run)
		Py_RETURN_NONE;
	return PyUnicode_FromString(classfs_run_socket(self->run));
}

static PyMethodDef run_methods[] = {
	{ "stop", (PyCFunction)run_stop, METH_NOARGS,
	  "stop(): tear the environment down (its daemon, mounts, namespaces)" },
	{ "load", cfs_py_run_load, METH_VARARGS,
	  "load(kind, target, file): replay a recording on a node (classfs_run_load())" },
	{ "load_data", cfs_py_run_load_data, METH_VARARGS,
	  "load_data(kind, target, data, name): the same, of bytes" },
	{ "wait_script", cfs_py_run_wait_script, METH_VARARGS,
	  "wait_script(node): until its scripts played to their end" },
	{ "dev_fd", cfs_py_run_dev_fd, METH_VARARGS,
	  "dev_fd(node) -> the node's other end (a pty master), -1 for none" },
	{ "attach_ioctl", cfs_py_run_attach_ioctl, METH_VARARGS,
	  "attach_ioctl(node, fn): fn(IoctlCall) answers the node's ioctls" },
	{ "detach_ioctl", cfs_py_run_detach_ioctl, METH_VARARGS,
	  "detach_ioctl(node): its ioctls go to the descriptor again" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef run_getset[] = {
	{ "socket", (getter)run_get_socket, NULL, "the control socket of its classfsd", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

struct classfs_run *cfs_py_run_of(PyObject *obj)
{
	struct cfs_py_run *self = (struct cfs_py_run *)obj;

	if (!self->run)
		PyErr_SetString(PyExc_ValueError, "the environment is stopped");
	return self->run;
}

PyTypeObject cfs_py_run_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "classfs._classfs.Run",
	.tp_basicsize = sizeof(struct cfs_py_run),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Run(records=None, sample=False, layout=LAYOUT_DEVICES, daemon=None, "
		  "verbose=False): a private environment (classfs_run_start())",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)run_init,
	.tp_dealloc = (destructor)run_dealloc,
	.tp_methods = run_methods,
	.tp_getset = run_getset,
};

/* ------------------------------------------------------------------ */
/* Sync: wait for the environment's broadcast of an event              */
/* ------------------------------------------------------------------ */

struct cfs_py_sync {
	PyObject_HEAD
	int fd;			/* NETLINK_KOBJECT_UEVENT, udev group */
	unsigned long long seen;	/* highest SEQNUM received */
	unsigned long long want_seen;	/* wait(): the SEQNUM that ends the wait */
	const char *want_devpath;	/* wait_add(): the device whose add ends the wait */
	unsigned long long want_after;	/* ... in an event after this SEQNUM */
	unsigned long long found;	/* ... its SEQNUM once seen; 0: not yet */
	struct classfs_wire_event *msg;
	char *buf;		/* CLASSFS_WIRE_MAX bytes */
};

static int sync_init(struct cfs_py_sync *self, PyObject *args, PyObject *kw)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CLASSFS_NETLINK_GROUP_UDEV };
	int size = 8 << 20;

	if (!PyArg_ParseTuple(args, ""))
		return -1;
	if (self->fd > 0)
		close(self->fd);
	self->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
			  NETLINK_KOBJECT_UEVENT);
	if (self->fd < 0 || bind(self->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		cfs_py_error(-errno, "udev netlink socket", NULL);
		return -1;
	}
	/* a burst must not overflow it: privileged processes may go past rmem_max */
	if (setsockopt(self->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(self->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (!self->msg)
		self->msg = PyMem_Malloc(sizeof(*self->msg));
	if (!self->buf)
		self->buf = PyMem_Malloc(CLASSFS_WIRE_MAX);
	if (!self->msg || !self->buf) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static void sync_dealloc(struct cfs_py_sync *self)
{
	if (self->fd > 0)
		close(self->fd);
	PyMem_Free(self->msg);
	PyMem_Free(self->buf);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Read what is queued.  An overflow (ENOBUFS) lost some broadcasts: the
 * later ones still tell how far the environment got.
 * Return: 0 or -errno.
 */
static int sync_drain(struct cfs_py_sync *self)
{
	for (;;) {
		ssize_t n = recv(self->fd, self->buf, CLASSFS_WIRE_MAX, 0);

		if (n < 0 && (errno == ENOBUFS || errno == EINTR))
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (classfs_uevent_decode_udev(self->buf, (size_t)n, self->msg) < 0)
			continue;
		if (self->msg->ev.seqnum > self->seen)
			self->seen = self->msg->ev.seqnum;
		if (self->want_devpath && self->msg->ev.seqnum > self->want_after &&
		    self->msg->ev.action == CLASSFS_ACTION_ADD && self->msg->ev.devpath &&
		    !strcmp(self->msg->ev.devpath, self->want_devpath))
			self->found = self->msg->ev.seqnum;
	}
}

static bool seen_enough(const struct cfs_py_sync *self)
{
	return self->seen >= self->want_seen;
}

static bool found_add(const struct cfs_py_sync *self)
{
	return self->found != 0;
}

/*
 * Read the socket until @done or the clock passes @end (ms); called
 * without the GIL.  Return: 0 (done or timed out: @done tells) or -errno.
 */
static int sync_wait_until(struct cfs_py_sync *self, long long end,
			   bool (*done)(const struct cfs_py_sync *self))
{
	int r;

	while ((r = sync_drain(self)) == 0 && !done(self)) {
		struct pollfd p = { .fd = self->fd, .events = POLLIN };
		long long left = end - now_ms();

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	return r;
}

/*
 * wait(seqnum, timeout_ms) -> bool: true once the environment broadcast
 * the event numbered seqnum or a later one, false after timeout_ms.
 */
static PyObject *sync_wait(struct cfs_py_sync *self, PyObject *args)
{
	unsigned long long want;
	int timeout, r = 0;

	if (!PyArg_ParseTuple(args, "Ki", &want, &timeout))
		return NULL;
	if (self->fd <= 0) {
		PyErr_SetString(PyExc_ValueError, "Sync not initialized");
		return NULL;
	}
	self->want_seen = want;
	Py_BEGIN_ALLOW_THREADS
	r = sync_wait_until(self, now_ms() + timeout, seen_enough);
	Py_END_ALLOW_THREADS
	if (r < 0)
		return cfs_py_error(r, "udev netlink socket", NULL);
	return PyBool_FromLong(self->seen >= want);
}

/*
 * wait_add(devpath, after, timeout_ms) -> SEQNUM of the broadcast add of
 * the device at devpath numbered after `after`, or 0 after timeout_ms.
 * The caller that just loaded the device knows its add is on the way:
 * no STATUS round trip to learn the daemon's last SEQNUM.
 */
static PyObject *sync_wait_add(struct cfs_py_sync *self, PyObject *args)
{
	unsigned long long after;
	const char *devpath;
	int timeout, r = 0;

	if (!PyArg_ParseTuple(args, "sKi", &devpath, &after, &timeout))
		return NULL;
	if (self->fd <= 0) {
		PyErr_SetString(PyExc_ValueError, "Sync not initialized");
		return NULL;
	}
	self->want_devpath = devpath;
	self->want_after = after;
	self->found = 0;
	Py_BEGIN_ALLOW_THREADS
	r = sync_wait_until(self, now_ms() + timeout, found_add);
	Py_END_ALLOW_THREADS
	self->want_devpath = NULL;
	if (r < 0)
		return cfs_py_error(r, "udev netlink socket", NULL);
	return PyLong_FromUnsignedLongLong(self->found);
}

static PyMethodDef sync_methods[] = {
	{ "wait", (PyCFunction)sync_wait, METH_VARARGS,
	  "wait(seqnum, timeout_ms) -> True once event seqnum (or a later one) was broadcast" },
	{ "wait_add", (PyCFunction)sync_wait_add, METH_VARARGS,
	  "wait_add(devpath, after, timeout_ms) -> SEQNUM of the broadcast add of devpath "
	  "after SEQNUM `after`, 0 on timeout" },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject cfs_py_sync_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "classfs._classfs.Sync",
	.tp_basicsize = sizeof(struct cfs_py_sync),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Sync(): follows the udev broadcasts of this network namespace",
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)sync_init,
	.tp_dealloc = (destructor)sync_dealloc,
	.tp_methods = sync_methods,
};
