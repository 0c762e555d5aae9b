/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * env.c - private environments for Python tests: classfs._classfs.Run
 * (classfs_run_start() and classfs_run_stop()), enter()/leave() that move
 * this very process into an environment's namespaces and back, so that
 * libudev, pyudev and plain file reads in it see the environment's /sys,
 * /dev and /run/udev, and Sync, which waits until the environment has
 * applied an event (its node, database entry and broadcast exist).
 */
#include "_classfs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

/* the process whose namespaces enter() joins: the holder's, else the daemon's */
static PyObject *run_get_pid(struct cfs_py_run *self, void *unused)
{
	if (!self->run)
		Py_RETURN_NONE;
#ifdef CFS_PY_HAVE_HOLDER_PID
	return PyLong_FromLong(classfs_run_holder_pid(self->run));
#else
	/* the daemon the holder started runs in its namespaces, with its root */
	{
		PyObject *args = Py_BuildValue("(s)", classfs_run_socket(self->run)), *pid;

		if (!args)
			return NULL;
		pid = cfs_py_peer_pid(NULL, args);
		Py_DECREF(args);
		return pid;
	}
#endif
}

static PyMethodDef run_methods[] = {
	{ "stop", (PyCFunction)run_stop, METH_NOARGS,
	  "stop(): tear the environment down (its daemon, mounts, namespaces)" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef run_getset[] = {
	{ "socket", (getter)run_get_socket, NULL, "the control socket of its classfsd", NULL },
	{ "pid", (getter)run_get_pid, NULL,
	  "a process in the environment's namespaces, with its root (for enter())", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

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
/* enter() and leave(): this process in and out of the namespaces      */
/* ------------------------------------------------------------------ */

enum { NS_USER, NS_MNT, NS_NET, NS_ROOT, NS_N };

static void close_all(int *fd)
{
	for (int i = 0; i < NS_N; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* open the namespaces and root directory of @proc ("self" or a pid) */
static int open_ns(const char *proc, int *fd)
{
	static const char *const name[NS_N] = { "ns/user", "ns/mnt", "ns/net", "root" };
	char path[64];

	for (int i = 0; i < NS_N; i++)
		fd[i] = -1;
	for (int i = 0; i < NS_N; i++) {
		snprintf(path, sizeof(path), "/proc/%s/%s", proc, name[i]);
		fd[i] = open(path, O_RDONLY | O_CLOEXEC | (i == NS_ROOT ? O_DIRECTORY : 0));
		if (fd[i] < 0) {
			int e = errno;

			close_all(fd);
			return -e;
		}
	}
	return 0;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Join @to's namespaces: the user namespace first when it is another
 * (the environment of an unprivileged user owns its mounts there), then
 * network and mount; setns() leaves us at the mount namespace's root, so
 * the root directory follows (a chroot's, as classfs_run_spawn() does).
 */
static int join_ns(const int *to, const int *from)
{
	if (!same_file(to[NS_USER], from[NS_USER]) && setns(to[NS_USER], CLONE_NEWUSER) < 0)
		return -errno;
	if (setns(to[NS_NET], CLONE_NEWNET) < 0 || setns(to[NS_MNT], CLONE_NEWNS) < 0)
		return -errno;
	if (fchdir(to[NS_ROOT]) < 0 || chroot(".") < 0)
		return -errno;
	return 0;
}

PyObject *cfs_py_enter(PyObject *self, PyObject *args)
{
	int pid, here[NS_N], there[NS_N], r;
	char proc[16];

	if (!PyArg_ParseTuple(args, "i", &pid))
		return NULL;
	snprintf(proc, sizeof(proc), "%d", pid);
	r = open_ns("self", here);
	if (r < 0)
		return cfs_py_error(r, "/proc/self/ns", NULL);
	r = open_ns(proc, there);
	if (r < 0) {
		close_all(here);
		return cfs_py_error(r, "the environment's namespaces", NULL);
	}
	r = join_ns(there, here);
	close_all(there);
	if (r < 0) {
		/* a failed setns() changes nothing; a later step's failure is undone */
		join_ns(here, here);
		close_all(here);
		return cfs_py_error(r, "cannot enter the environment",
				    r == -EINVAL ? "setns() refused: is another thread running?"
						 : NULL);
	}
	return Py_BuildValue("(iiii)", here[NS_USER], here[NS_MNT], here[NS_NET], here[NS_ROOT]);
}

/*
 * leave(saved) -> bool: back to the network and mount namespaces and the
 * root directory enter() left; False (nothing changed) when enter() also
 * joined a user namespace, since no process can go back to an ancestor's.
 */
PyObject *cfs_py_leave(PyObject *self, PyObject *args)
{
	int fd[NS_N], now, r = 0;
	bool same;

	if (!PyArg_ParseTuple(args, "(iiii)", &fd[NS_USER], &fd[NS_MNT], &fd[NS_NET],
			      &fd[NS_ROOT]))
		return NULL;
	now = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	if (now < 0) {
		r = -errno;
		close_all(fd);
		return cfs_py_error(r, "/proc/self/ns/user", NULL);
	}
	same = same_file(now, fd[NS_USER]);
	close(now);
	if (same && (setns(fd[NS_NET], CLONE_NEWNET) < 0 || setns(fd[NS_MNT], CLONE_NEWNS) < 0 ||
		     fchdir(fd[NS_ROOT]) < 0 || chroot(".") < 0))
		r = -errno;
	close_all(fd);
	if (r < 0)
		return cfs_py_error(r, "cannot leave the environment", NULL);
	return PyBool_FromLong(same);
}

PyObject *cfs_py_peer_pid(PyObject *self, PyObject *args)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char *path;
	int fd, r = 0;

	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return cfs_py_error(-ENAMETOOLONG, path, NULL);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cfs_py_error(-errno, path, NULL);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		return cfs_py_error(r, path, NULL);
	return PyLong_FromLong(cred.pid);
}

/* ------------------------------------------------------------------ */
/* Sync: wait for the environment's broadcast of an event              */
/* ------------------------------------------------------------------ */

struct cfs_py_sync {
	PyObject_HEAD
	int fd;			/* NETLINK_KOBJECT_UEVENT, udev group */
	unsigned long long seen;	/* highest SEQNUM received */
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
		if (classfs_uevent_decode_udev(self->buf, (size_t)n, self->msg) == 0 &&
		    self->msg->ev.seqnum > self->seen)
			self->seen = self->msg->ev.seqnum;
	}
}

/*
 * wait(seqnum, timeout_ms) -> bool: true once the environment broadcast
 * the event numbered seqnum or a later one, false after timeout_ms.
 */
static PyObject *sync_wait(struct cfs_py_sync *self, PyObject *args)
{
	unsigned long long want;
	int timeout, r = 0;
	long long end;

	if (!PyArg_ParseTuple(args, "Ki", &want, &timeout))
		return NULL;
	if (self->fd <= 0) {
		PyErr_SetString(PyExc_ValueError, "Sync not initialized");
		return NULL;
	}
	end = now_ms() + timeout;
	Py_BEGIN_ALLOW_THREADS
	while ((r = sync_drain(self)) == 0 && self->seen < want) {
		struct pollfd p = { .fd = self->fd, .events = POLLIN };
		long long left = end - now_ms();

		if (left <= 0)
			break;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	Py_END_ALLOW_THREADS
	if (r < 0)
		return cfs_py_error(r, "udev netlink socket", NULL);
	return PyBool_FromLong(self->seen >= want);
}

static PyMethodDef sync_methods[] = {
	{ "wait", (PyCFunction)sync_wait, METH_VARARGS,
	  "wait(seqnum, timeout_ms) -> True once event seqnum (or a later one) was broadcast" },
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
