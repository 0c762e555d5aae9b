// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * run.c - <classfs/run.h> from the caller's side: start the holder
 * process that makes and keeps the environment, run programs and
 * functions in children that join its namespaces, tear it down.
 *
 * The caller never enters the namespaces itself: a multi-threaded
 * process cannot change its mount namespace, and a test suite must keep
 * its own view.  Only forked children (single-threaded) join, by setns()
 * on descriptors of the holder's namespaces, then by chroot() to the
 * holder's root: setns() puts a process at the namespace's root, which is
 * the host's when the caller runs in a chroot (a build chroot), and the
 * tree is mounted on the chroot's /sys.  Before anything runs inside, the
 * child checks that its /sys is the tree; a child that cannot join tells
 * the caller through a pipe, and nothing runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "config.h"
#include "run-internal.h"

/* how long a holder may take to go once told to (then SIGKILL) */
#define STOP_TIMEOUT_MS 10000

void cfs_run_log(bool verbose, const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	fputs("classfs-run: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int set_err(struct classfs_run_error *err, int r, const char *fmt, ...)
	CLASSFS_PRINTF(3, 4);

static int set_err(struct classfs_run_error *err, int r, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return r;
}

static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/*
 * the classfsd to start: the option, else $CLASSFSD (tests and a build that
 * is not installed), else where meson installs it (config.h)
 */
static int find_daemon(const char *given, char *buf, size_t size)
{
	const char *env = getenv("CLASSFSD");
	int n;

	if (given)
		n = snprintf(buf, size, "%s", given);
	else if (env && *env)
		n = snprintf(buf, size, "%s", env);
	else
		n = snprintf(buf, size, "%s/classfsd", CLASSFS_SBINDIR);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return executable(buf) ? 0 : -ENOENT;
}

static int read_report(int fd, struct cfs_run_report *rep)
{
	size_t got = 0;

	while (got < sizeof(*rep)) {
		ssize_t n = read(fd, (char *)rep + got, sizeof(*rep) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		got += (size_t)n;
	}
	rep->message[sizeof(rep->message) - 1] = '\0';
	return 0;
}

/* wait for the holder to go, for at most @ms; then kill it.  Return its wait status */
static int reap(pid_t pid, int ms)
{
	int st = 0, pfd = (int)pidfd_open(pid, 0);

	if (pfd >= 0) {
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int n;

		do
			n = poll(&p, 1, ms);
		while (n < 0 && errno == EINTR);
		if (n == 0)
			kill(pid, SIGKILL);
		close(pfd);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

static void remove_tmpdir(const char *dir)
{
	char p[PATH_MAX];

	if (!dir[0])
		return;
	/* the daemon removes its socket when it stops; a killed one cannot */
	snprintf(p, sizeof(p), "%s/control", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/classfsd.log", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/nodes", dir);	/* the node server's (run-serve.c) */
	unlink(p);
	rmdir(dir);
}

/* what the caller asked for is usable: Return 0, or -errno with @err told why */
static int check_options(const struct classfs_run_options *opt, struct classfs_run_error *err)
{
	if (opt->layout != CLASSFS_LAYOUT_CLASS && opt->layout != CLASSFS_LAYOUT_DEVICES)
		return set_err(err, -EINVAL, "unknown layout %d", (int)opt->layout);
	for (const char *const *f = opt->records; f && *f; f++)
		if (access(*f, R_OK) < 0)
			return set_err(err, -errno, "cannot read %s: %s", *f, strerror(errno));
	/*
	 * another uid (or root of a container's user namespace: no mknod())
	 * gets a user namespace; a daemon it joins could serve it no /dev
	 */
	if (!cfs_userns_privileged() && opt->socket)
		return set_err(err, -EPERM,
			       "joining a running classfsd (--socket %s) needs root with CAP_MKNOD in "
			       "the initial user namespace: as uid %u here, classfs-run starts a "
			       "classfsd of its own", opt->socket,
			       (unsigned int)geteuid());
	return 0;
}

/*
 * The control socket: the running classfsd's to join, or one in a new
 * directory for the classfsd the holder starts (found into @daemon).
 */
static int choose_socket(struct classfs_run *run, const struct classfs_run_options *opt,
			 struct cfs_holder_args *a, char *daemon, size_t size,
			 struct classfs_run_error *err)
{
	const char *tmp = getenv("TMPDIR");
	int r;

	if (opt->socket) {
		if (snprintf(run->socket, sizeof(run->socket), "%s", opt->socket) >=
		    (int)sizeof(run->socket))
			return set_err(err, -ENAMETOOLONG, "socket path %s is too long",
				       opt->socket);
		return 0;
	}
	r = find_daemon(opt->daemon, daemon, size);
	if (r < 0)
		return set_err(err, r, "cannot find classfsd%s%s (set CLASSFSD)",
			       opt->daemon ? " at " : "", opt->daemon ? opt->daemon : "");
	a->daemon = daemon;
	/* socket paths are short (108 bytes): a long $TMPDIR falls back to /tmp */
	if (!tmp || !*tmp || strlen(tmp) > 64)
		tmp = "/tmp";
	snprintf(run->tmpdir, sizeof(run->tmpdir), "%s/classfs-run.XXXXXX", tmp);
	if (!mkdtemp(run->tmpdir)) {
		r = set_err(err, -errno, "cannot create a directory in %s: %s", tmp,
			    strerror(errno));
		run->tmpdir[0] = '\0';
		return r;
	}
	snprintf(run->socket, sizeof(run->socket), "%s/control", run->tmpdir);
	return 0;
}

/*
 * Fork the holder (holder.c) and read its report: 0 once the environment
 * is ready (the holder is @run's), or -errno with @err told why (the
 * holder, if started, is reaped).
 */
static int start_holder(struct classfs_run *run, struct cfs_holder_args *a,
			struct cfs_run_report *rep, struct classfs_run_error *err)
{
	int ready[2] = { -1, -1 }, ctl[2] = { -1, -1 }, r;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(ctl, O_CLOEXEC) < 0) {
		r = set_err(err, -errno, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		r = set_err(err, -errno, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(ready[0]);
		close(ctl[1]);
		a->ready_fd = ready[1];
		a->ctl_fd = ctl[0];
		cfs_holder_main(a);
	}
	run->holder = pid;
	run->ctl_fd = ctl[1];
	ctl[1] = -1;
	close(ready[1]);
	ready[1] = -1;

	r = read_report(ready[0], rep);
	if (r < 0)
		r = set_err(err, -EIO, "the environment's holder died while starting");
	else if (rep->status < 0)
		r = set_err(err, rep->status, "%s", rep->message);
	if (r < 0) {
		close(run->ctl_fd);
		run->ctl_fd = -1;
		reap(run->holder, STOP_TIMEOUT_MS);
	}
out:
	for (int i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (ctl[i] >= 0)
			close(ctl[i]);
	}
	return r;
}

/* the holder's namespaces and root, opened to join them: 0 or -errno (@err told) */
static int open_namespaces(struct classfs_run *run, bool userns, struct classfs_run_error *err)
{
	int pid = (int)run->holder;
	char p[64];

	if (userns) {
		snprintf(p, sizeof(p), "/proc/%d/ns/user", pid);
		run->ns_user = open(p, O_RDONLY | O_CLOEXEC);
		if (run->ns_user < 0)
			return set_err(err, -errno, "cannot open the user namespace of %d: %s", pid,
				       strerror(errno));
	}
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", pid);
	run->ns_mnt = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/ns/net", pid);
	run->ns_net = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/root", pid);
	run->root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (run->ns_mnt < 0 || run->ns_net < 0 || run->root < 0)
		return set_err(err, -errno, "cannot open the namespaces and root of %d: %s", pid,
			       strerror(errno));
	return 0;
}

/* the handle's descriptors and directory gone, the handle freed (the holder is reaped) */
static void run_free(struct classfs_run *run)
{
	cfs_node_server_stop(run->server);
	cfs_nodes_release(run->nodes);
	if (run->ctl_fd >= 0)
		close(run->ctl_fd);
	if (run->ns_user >= 0)
		close(run->ns_user);
	if (run->ns_mnt >= 0)
		close(run->ns_mnt);
	if (run->ns_net >= 0)
		close(run->ns_net);
	if (run->root >= 0)
		close(run->root);
	remove_tmpdir(run->tmpdir);
	free(run);
}

int classfs_run_start(const struct classfs_run_options *opt, struct classfs_run **out,
		      struct classfs_run_error *err)
{
	static const struct classfs_run_options none = { .layout = CLASSFS_LAYOUT_CLASS };
	struct cfs_holder_args a = { .ready_fd = -1, .ctl_fd = -1 };
	struct cfs_run_report rep = { 0 };
	char daemon[PATH_MAX];
	struct classfs_run *run;
	int r;

	if (err)
		err->message[0] = '\0';
	if (!out)
		return set_err(err, -EINVAL, "no place for the environment");
	*out = NULL;
	if (!opt)
		opt = &none;
	r = check_options(opt, err);
	if (r < 0)
		return r;

	run = calloc(1, sizeof(*run));
	if (!run)
		return set_err(err, -ENOMEM, "out of memory");
	run->ctl_fd = run->ns_user = run->ns_mnt = run->ns_net = run->root = -1;
	a.opt = opt;
	a.userns = !cfs_userns_privileged();
	/*
	 * A caller with the capabilities in a user namespace of its own (a
	 * test runner that made it to go in and out of environments) gets
	 * the environment in that namespace: from one made below it, the
	 * caller could never come back.  Mapping the caller to 0 needs a
	 * namespace of ours.
	 */
	a.new_userns = a.userns && (opt->root || !cfs_userns_capable());
	a.uid = geteuid();
	a.gid = getegid();
	r = choose_socket(run, opt, &a, daemon, sizeof(daemon), err);
	if (r < 0)
		goto fail;
	memcpy(a.socket, run->socket, sizeof(a.socket));
	memcpy(a.tmpdir, run->tmpdir, sizeof(a.tmpdir));

	r = start_holder(run, &a, &rep, err);
	if (r < 0)
		goto fail;
	r = open_namespaces(run, a.new_userns, err);
	if (r < 0)
		goto fail_holder;
	run->sys_dev = (dev_t)rep.sys_dev;
	/*
	 * The nodes answer where this process sees the environment's /dev:
	 * a caller outside the user namespace of a caller who is not root
	 * does not (classfs-run and the Python module make theirs first).
	 */
	r = cfs_nodes_new(run->root, &run->nodes);
	if (r < 0)
		cfs_run_log(opt->verbose, "device nodes do not answer: the environment's /dev: %s",
			    strerror(-r));
	run->verbose = opt->verbose;
	*out = run;
	return 0;

fail_holder:
	close(run->ctl_fd);
	run->ctl_fd = -1;
	reap(run->holder, STOP_TIMEOUT_MS);
fail:
	run_free(run);
	return r;
}

const char *classfs_run_socket(const struct classfs_run *run)
{
	return run ? run->socket : NULL;
}

/* no capability left: what an exec() as a non-zero uid inside the user namespace gives */
static int drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/*
 * The node server (run-serve.c) runs once a program may use it: started
 * with the first program, not with the environment, so that a caller
 * stays single-threaded until then (it may fork children of its own in
 * between, as a test's publishers are).
 */
static void serve_nodes(struct classfs_run *run)
{
	int r;

	if (!run->nodes || run->server || run->server_failed)
		return;
	r = cfs_node_server_start(run->nodes, run->root, run->tmpdir, &run->server,
				  run->nodes_socket, sizeof(run->nodes_socket));
	if (r < 0) {
		run->server_failed = true;
		cfs_run_log(run->verbose, "device nodes are not served to programs inside: %s",
			    strerror(-r));
	}
}

/*
 * Join @run's namespaces and root (and @cwd, when given and there), set
 * the programs' variables.  Return: 0 or -errno (-EXDEV: /sys is not the
 * tree).
 */
static int enter(struct classfs_run *run, const char *cwd)
{
	struct stat st;

	/* the user namespace first: it owns the others, and gives the right to join them */
	if (run->ns_user >= 0 && setns(run->ns_user, CLONE_NEWUSER) < 0)
		return -errno;
	if (setns(run->ns_net, CLONE_NEWNET) < 0 || setns(run->ns_mnt, CLONE_NEWNS) < 0)
		return -errno;
	/* setns() put us at the namespace's root: back to the holder's (a chroot's) */
	if (fchdir(run->root) < 0 || chroot(".") < 0)
		return -errno;
	if (stat("/sys", &st) < 0 || st.st_dev != run->sys_dev)
		return -EXDEV;
	/* where the caller was */
	if (cwd && chdir(cwd) < 0 && chdir("/") < 0)
		return -errno;
	if (setenv(CLASSFS_RUN_SOCKET_ENV, run->socket, 1) < 0 ||
	    setenv("SYSTEMD_DEVICE_VERIFY_SYSFS", "0", 1) < 0)
		return -errno;
	if (run->nodes_socket[0] ? setenv(CLASSFS_RUN_NODES_ENV, run->nodes_socket, 1) < 0
				 : unsetenv(CLASSFS_RUN_NODES_ENV) < 0)
		return -errno;
	/* joining a user namespace gave us every capability in it: a program has none */
	if (run->ns_user >= 0 && getuid() != 0)
		return drop_capabilities();
	return 0;
}

/* in a forked child: enter the environment; Return: 0 or -errno */
static int join(struct classfs_run *run, const char *cwd)
{
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* a program starts with the signals a shell would give it */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	return enter(run, cwd);
}

int classfs_run_enter(struct classfs_run *run)
{
	char cwd[PATH_MAX];
	int r;

	if (!run)
		return -EINVAL;
	serve_nodes(run);
	r = enter(run, getcwd(cwd, sizeof(cwd)) ? cwd : NULL);
	if (r < 0)
		return r;
	/* a thread of a process already in an environment keeps that one's nodes */
	r = cfs_supervise_self(run->nodes);
	return r == -EBUSY ? 0 : r;
}

int classfs_run_own_user_namespace(bool root, struct classfs_run_error *err)
{
	char msg[512] = "";
	int r;

	if (err)
		err->message[0] = '\0';
	if (cfs_userns_privileged())
		return 0;
	r = cfs_userns_enter(geteuid(), getegid(), root, msg, sizeof(msg));
	if (r < 0)
		return set_err(err, r, "%s", msg);
	return 1;
}

pid_t classfs_run_holder_pid(const struct classfs_run *run)
{
	return run ? run->holder : -EINVAL;
}

/**
 * cfs_run_fork_paired() - fork, the child and the caller each keeping an
 * end of a new close-on-exec SOCK_SEQPACKET socket pair (the child sends
 * its seccomp listener, or a -errno, on it)
 * @fd: receives the process's own end.
 *
 * The child starts with nothing of stdio's buffers to write twice.
 * Return: 0 in the child, its pid in the caller, or -errno (no child).
 */
pid_t cfs_run_fork_paired(int *fd)
{
	int sv[2], r;
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	fflush(NULL);
	p = fork();
	if (p < 0) {
		r = -errno;
		close(sv[0]);
		close(sv[1]);
		return r;
	}
	close(sv[p == 0 ? 0 : 1]);
	*fd = sv[p == 0 ? 1 : 0];
	return p;
}

/*
 * Fork a child that enters @run's namespaces in the caller's directory.
 * In the child, *@joined is the child's end of a close-on-exec socket:
 * close it once inside (exec does), or the caller waits for it.  Its
 * calls on device nodes are the supervisor's from then on.
 * Return: 0 in the child (inside), the child's pid in the caller once the
 * child is inside, or -errno (a child that could not join is reaped).
 */
static pid_t fork_inside(struct classfs_run *run, int *joined)
{
	char cwd[PATH_MAX];
	bool have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
	int sv, r = 0, fd;
	pid_t p;

	serve_nodes(run);
	p = cfs_run_fork_paired(&sv);
	if (p < 0)
		return p;
	if (p == 0) {
		r = join(run, have_cwd ? cwd : NULL);
		if (r == -EXDEV)
			fprintf(stderr, "classfs-run: /sys inside the environment is not the "
					"classfs tree: nothing runs against the host's\n");
		else if (r < 0)
			fprintf(stderr, "classfs-run: cannot enter the environment: %s\n",
				strerror(-r));
		if (r < 0) {
			if (write(sv, &r, sizeof(r)) != sizeof(r))
				_exit(127);
			_exit(125);
		}
		/*
		 * Its calls on device nodes go to the caller's supervisor; a
		 * child of a process supervised already (nested environments)
		 * keeps that one, and one whose caller cannot see the
		 * environment's /dev (no nodes) gets no filter.
		 */
		if (run->nodes)
			cfs_seccomp_send_listener(sv, false);
		*joined = sv;
		return 0;
	}
	/* EOF: the child is inside (it closed the socket, or exec did) */
	while ((r = cfs_seccomp_recv_listener(sv, &fd)) == 1) {
		if (fd >= 0)
			cfs_supervise(fd, run->nodes);
	}
	close(sv);
	if (r < 0) {
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		return r;
	}
	return p;
}

int classfs_run_spawn(struct classfs_run *run, char *const argv[], pid_t *pid)
{
	int joined;
	pid_t p;

	if (!run || !argv || !argv[0] || !pid)
		return -EINVAL;
	p = fork_inside(run, &joined);
	if (p < 0)
		return p;
	if (p == 0) {
		int r;

		/* the pipe closes on exec; a failed exec is COMMAND's status (127, 126) */
		execvp(argv[0], argv);
		r = errno;
		close(joined);
		fprintf(stderr, "classfs-run: %s: %s\n", argv[0], strerror(r));
		_exit(r == ENOENT ? 127 : 126);
	}
	*pid = p;
	return 0;
}

static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -ECHILD;
}

int classfs_run_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return decode_status(st);
}

int classfs_run_call(struct classfs_run *run, int (*fn)(void *data), void *data)
{
	int joined;
	pid_t p;

	if (!run || !fn)
		return -EINVAL;
	p = fork_inside(run, &joined);
	if (p < 0)
		return p;
	if (p == 0) {
		int r;

		close(joined);
		r = fn(data);

		/* not exit(): the caller's atexit handlers are not ours to run */
		fflush(NULL);
		_exit(r & 0xff);
	}
	return classfs_run_wait(p);
}

int classfs_run_stop(struct classfs_run *run)
{
	int st, r = 0;

	if (!run)
		return 0;
	/* EOF on the control pipe tells the holder to stop */
	if (run->ctl_fd >= 0)
		close(run->ctl_fd);
	run->ctl_fd = -1;
	st = reap(run->holder, STOP_TIMEOUT_MS);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		r = -EIO;
	run_free(run);
	return r;
}
