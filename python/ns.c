/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ns.c - this very process in and out of environments, so that libudev,
 * pyudev and plain file reads in it see an environment's /sys, /dev and
 * /run/udev: enter() (classfs_run_enter()) and leave(), back to the
 * namespaces and root directory it had.
 *
 * Root goes back to the host's namespaces.  Any other uid could not: an
 * environment of its own is made in a user namespace, and no process
 * returns to an ancestor's namespaces.  So own_namespaces() first makes
 * the process the owner of a user namespace (its uid and gid mapped to
 * themselves) with a copy of the host's mounts and a network namespace;
 * classfs_run_start() then makes each environment in that user namespace
 * (the caller has the capabilities there), and leave() comes back to
 * that copy, the host's /sys and /dev again.
 *
 * A mount namespace belongs to a thread, not to the process: enter()
 * first gives the calling thread a root and working directory of its own
 * (unshare(CLONE_FS)), which setns() into a mount namespace requires, so
 * the thread that makes a testbed joins it alone while the process's
 * other threads (GLib's, a D-Bus connection's) keep the view they had;
 * what the thread forks inherits its namespaces.  A user namespace cannot
 * be made by a process with threads: own_namespaces() runs when the
 * package is imported, before any thread exists (classfs/__init__.py).
 */
#include "_classfs.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <classfs/run.h>

#include "util.h"

/* own_namespaces() made them: a process does so once */
static bool owned;

enum { NS_USER, NS_MNT, NS_NET, NS_ROOT, NS_N };

static void close_all(int *fd)
{
	for (int i = 0; i < NS_N; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* open our namespaces and root directory, to come back to */
static int open_self(int *fd)
{
	static const char *const path[NS_N] = { "/proc/self/ns/user", "/proc/self/ns/mnt",
						"/proc/self/ns/net", "/" };

	for (int i = 0; i < NS_N; i++)
		fd[i] = -1;
	for (int i = 0; i < NS_N; i++) {
		fd[i] = open(path[i], O_RDONLY | O_CLOEXEC | (i == NS_ROOT ? O_DIRECTORY : 0));
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

/* whether we are still in the user namespace @fd names (else there is no way back) */
static int in_user_ns(int fd, bool *same)
{
	int now = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);

	if (now < 0)
		return -errno;
	*same = same_file(now, fd);
	close(now);
	return 0;
}

static int loopback_up(void);

/*
 * A network namespace of this thread's own, its loopback up: where a
 * thread goes back to when the one it came from was the host's, which a
 * process in a user namespace of its own may not join again.
 */
static int own_net(void)
{
	if (unshare(CLONE_NEWNET) < 0)
		return -errno;
	return loopback_up();
}

/*
 * Back to the network and mount namespaces and root directory in @fd:
 * setns() leaves us at the mount namespace's root, so the root directory
 * follows (a chroot's, as the environment's children do it).  The
 * network namespace is the host's when own_namespaces() kept it for the
 * process (EPERM to join again): the thread gets one of its own instead.
 */
static int go_back(const int *fd)
{
	int r = 0;

	/* threads this one started since it entered share its root and directory */
	if (unshare(CLONE_FS) < 0)
		return -errno;
	if (setns(fd[NS_NET], CLONE_NEWNET) < 0)
		r = errno == EPERM ? own_net() : -errno;
	if (r < 0 || setns(fd[NS_MNT], CLONE_NEWNS) < 0 || fchdir(fd[NS_ROOT]) < 0 ||
	    chroot(".") < 0)
		return r < 0 ? r : -errno;
	return 0;
}

/*
 * enter(run) -> saved: into the environment; saved is for leave().  A
 * failure is undone (raised), unless the process joined a user namespace
 * on the way, which it cannot leave: then it is half inside.
 */
PyObject *cfs_py_enter(PyObject *self, PyObject *args)
{
	struct classfs_run *run;
	PyObject *obj;
	int here[NS_N], r;
	bool same = false;

	if (!PyArg_ParseTuple(args, "O!", &cfs_py_run_type, &obj))
		return NULL;
	run = cfs_py_run_of(obj);
	if (!run)
		return NULL;
	/* this thread's own root and working directory: setns(CLONE_NEWNS) needs them */
	if (unshare(CLONE_FS) < 0)
		return cfs_py_error(-errno, "cannot enter the environment", "unshare(CLONE_FS)");
	r = open_self(here);
	if (r < 0)
		return cfs_py_error(r, "/proc/self/ns", NULL);
	r = classfs_run_enter(run);
	if (r == 0)
		return Py_BuildValue("(iiii)", here[NS_USER], here[NS_MNT], here[NS_NET],
				     here[NS_ROOT]);
	if (in_user_ns(here[NS_USER], &same) == 0 && same)
		go_back(here);
	close_all(here);
	if (!same)
		return cfs_py_error(r, "cannot enter the environment",
				    "failed after joining its user namespace: this process "
				    "is half inside and cannot leave");
	return cfs_py_error(r, "cannot enter the environment",
			    r == -EXDEV  ? "/sys there is not the environment's tree"
			    : r == -EINVAL ? "setns() refused: is another thread running?"
					   : NULL);
}

/*
 * leave(saved) -> bool: back to the network and mount namespaces and the
 * root directory enter() left; False (nothing changed) when enter() also
 * joined a user namespace, since no process can go back to an ancestor's.
 */
PyObject *cfs_py_leave(PyObject *self, PyObject *args)
{
	int fd[NS_N], r;
	bool same = false;

	if (!PyArg_ParseTuple(args, "(iiii)", &fd[NS_USER], &fd[NS_MNT], &fd[NS_NET],
			      &fd[NS_ROOT]))
		return NULL;
	r = in_user_ns(fd[NS_USER], &same);
	if (r == 0 && same)
		r = go_back(fd);
	close_all(fd);
	if (r < 0)
		return cfs_py_error(r, "cannot leave the environment", NULL);
	return PyBool_FromLong(same);
}

/* the loopback interface up, as in the host's network namespace */
static int loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		r = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (r == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		r = -errno;
	close(fd);
	return r;
}

/*
 * own_namespaces(net=True) -> bool: make this (single-threaded) process
 * the owner of a user namespace, its uid and gid mapped to themselves,
 * with a mount namespace (a copy of the host's) and, with @net, a network
 * namespace (its loopback up) of its own; without, the process keeps the
 * host's network, and a thread that leaves an environment gets a network
 * namespace of its own (go_back()).  False when it did so already.
 */
PyObject *cfs_py_own_namespaces(PyObject *self, PyObject *args)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int net = 1, r;

	if (!PyArg_ParseTuple(args, "|p", &net))
		return NULL;
	if (owned)
		Py_RETURN_FALSE;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | (net ? CLONE_NEWNET : 0)) < 0) {
		r = -errno;
		return cfs_py_error(r, "cannot make a user namespace for this process",
				    r == -EINVAL ? "the process has threads already: import classfs "
						   "before starting any (a user namespace is made "
						   "then)" : NULL);
	}
	/* from here on we are in it, for better or worse: no way back */
	owned = true;
	r = cfs_idmap_write(uid, uid, gid, gid);
	if (r < 0)
		return cfs_py_error(r, "cannot map this process's uid and gid in its user namespace",
				    NULL);
	r = net ? loopback_up() : 0;
	if (r < 0)
		return cfs_py_error(r, "cannot bring up the loopback of this process's network "
				       "namespace", NULL);
	Py_RETURN_TRUE;
}

/*
 * userns_allowed() -> bool: whether this process may make a user
 * namespace (a forked child tries), or has its own already.
 */
PyObject *cfs_py_userns_allowed(PyObject *self, PyObject *unused)
{
	int st = 0;
	pid_t pid;

	if (owned)
		Py_RETURN_TRUE;
	pid = fork();
	if (pid < 0)
		return cfs_py_error(-errno, "fork", NULL);
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return cfs_py_error(-errno, "waitpid", NULL);
	return PyBool_FromLong(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
