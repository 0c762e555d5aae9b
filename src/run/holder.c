// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * holder.c - the process that makes and keeps a classfs-run environment.
 *
 * Forked by classfs_run_start(), it enters new mount and network
 * namespaces, starts classfsd inside them (so the daemon's FUSE mount
 * lands on the private /sys) or binds a running daemon's mount there,
 * loads the records through the control socket, mounts and fills the
 * private /dev and /run/udev from a snapshot of the tree, and then
 * follows the daemon's events: each one updates /dev and the udev
 * database and is broadcast on udev netlink group 2 of the private
 * network namespace, where the programs' libudev monitors listen.  The
 * holder, not the daemon, broadcasts, so that an add is seen only once
 * its node exists and a remove only before its node goes, as with udev.
 *
 * A caller who is not root gets the same inside a user namespace of its
 * own (userns.c; the caller's own one when it already has the
 * capabilities there): there the holder mounts the daemon's FUSE file
 * systems itself, and /dev is the daemon's devtmpfs-style view of the
 * tree rather than a tmpfs of nodes (no mknod() there); the udev
 * database is kept the same way.
 *
 * It stops when the caller closes the control pipe, or dies with the
 * caller (PR_SET_PDEATHSIG); the daemon it started gets SIGTERM the same
 * two ways, and unmounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <classfs/client.h>
#include <classfs/wire.h>

#include "run-internal.h"

#define READY_TIMEOUT_MS 30000

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

struct holder {
	const struct cfs_holder_args *a;
	bool verbose;
	pid_t daemon;
	int daemon_pidfd;
	int notify_fd;
	struct classfs_client *client;	/* subscribed to the daemon's events */
	struct classfs_client *req;	/* requests made while handling one */
	struct cfs_devfs *devfs;
	int nl_fd;
	int sys_fuse, dev_fuse;		/* user namespace: the FUSE mounts the daemon serves */
	int sys_mnt, dev_mnt;		/* ... detached until it serves them */
	int host_dev;			/* user namespace: the host's /dev, under the view */
	uint64_t gap_first, gap_last;	/* events to fetch again (0, 0: none) */
	bool failed;			/* something went wrong after ready */
	struct cfs_run_report rep;
};

static int report(struct holder *h, int r, const char *fmt, ...) CLASSFS_PRINTF(3, 4);

/* note why setup failed (first failure wins) */
static int report(struct holder *h, int r, const char *fmt, ...)
{
	va_list ap;

	if (h->rep.status == 0) {
		h->rep.status = r;
		va_start(ap, fmt);
		vsnprintf(h->rep.message, sizeof(h->rep.message), fmt, ap);
		va_end(ap);
	}
	return r;
}

static int read_file(const char *path, char **data, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t got;

		if (n == cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!p) {
				r = -ENOMEM;
				break;
			}
			buf = p;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			break;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*data = buf;
	*len = n;
	return 0;
}

/* the last non-empty line of the daemon's log, for an error message */
static void daemon_log_tail(const struct holder *h, char *buf, size_t size)
{
	char path[PATH_MAX], *data = NULL, *end, *start;
	size_t len = 0;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/classfsd.log", h->a->tmpdir);
	if (read_file(path, &data, &len) < 0 || len == 0) {
		free(data);
		return;
	}
	end = data + len;
	while (end > data && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	start = end;
	while (start > data && start[-1] != '\n')
		start--;
	snprintf(buf, size, ": %.*s", (int)(end - start), start);
	free(data);
}

/* start classfsd in our namespaces, mounted on /sys; wait for READY=1 */
static int start_daemon(struct holder *h)
{
	const struct classfs_run_options *o = h->a->opt;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char notify[64], logpath[PATH_MAX], tail[300];
	socklen_t salen;
	int logfd, r;
	pid_t pid;

	/* abstract name: lives in our network namespace, leaves no file */
	snprintf(notify, sizeof(notify), "@classfs-run/%d/%ld", (int)getpid(), (long)time(NULL));
	memcpy(sa.sun_path + 1, notify + 1, strlen(notify) - 1);
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(notify));
	h->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (h->notify_fd < 0 || bind(h->notify_fd, (struct sockaddr *)&sa, salen) < 0)
		return report(h, -errno, "cannot make a notify socket: %s", strerror(errno));
	snprintf(logpath, sizeof(logpath), "%s/classfsd.log", h->a->tmpdir);
	logfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0)
		return report(h, -errno, "cannot create %s: %s", logpath, strerror(errno));

	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(logfd);
		return report(h, r, "fork: %s", strerror(-r));
	}
	if (pid == 0) {
		char sys[32], dev[32];
		char *argv[] = {
			(char *)h->a->daemon, "--socket", (char *)h->a->socket, "--mount", sys,
			"--mount-options", "allow_other", "--layout",
			o->layout == CLASSFS_LAYOUT_DEVICES ? "devices" : "class",
			h->verbose ? "--verbose" : NULL, NULL, NULL, NULL,
		};
		sigset_t none;

		/* in a user namespace the daemon serves what we mounted (it cannot mount) */
		snprintf(sys, sizeof(sys), "/sys");
		if (h->sys_fuse >= 0) {
			size_t i = h->verbose ? 10 : 9;

			snprintf(sys, sizeof(sys), "/dev/fd/%d", h->sys_fuse);
			snprintf(dev, sizeof(dev), "/dev/fd/%d", h->dev_fuse);
			argv[i] = "--dev-mount";
			argv[i + 1] = dev;
			if (fcntl(h->sys_fuse, F_SETFD, 0) < 0 || fcntl(h->dev_fuse, F_SETFD, 0) < 0)
				_exit(127);
			/*
			 * A mount namespace of its own, copied before the views are
			 * attached: the daemon never walks into its own mounts (glibc
			 * opens /sys/devices/system/cpu/online for a thread's malloc
			 * arena; served by the daemon itself, that lookup can wait
			 * on the very threads that would answer it).
			 */
			if (unshare(CLONE_NEWNS) < 0)
				_exit(127);
		}

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (!h->verbose) {
			dup2(logfd, STDOUT_FILENO);
			dup2(logfd, STDERR_FILENO);
		}
		setenv("NOTIFY_SOCKET", notify, 1);
		execv(argv[0], argv);
		fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(logfd);
	h->daemon = pid;
	h->daemon_pidfd = (int)pidfd_open(pid, 0);
	if (h->daemon_pidfd < 0)
		return report(h, -errno, "pidfd_open: %s", strerror(errno));

	for (;;) {
		struct pollfd p[2] = { { .fd = h->notify_fd, .events = POLLIN },
				       { .fd = h->daemon_pidfd, .events = POLLIN } };
		char msg[256];
		ssize_t n;
		int st;

		n = poll(p, 2, READY_TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return report(h, n < 0 ? -errno : -ETIMEDOUT,
				      "classfsd did not get ready within %d s", READY_TIMEOUT_MS / 1000);
		if (p[1].revents) {
			waitpid(pid, &st, 0);
			h->daemon = 0;
			daemon_log_tail(h, tail, sizeof(tail));
			return report(h, -EIO, "classfsd exited (%s %d)%s",
				      WIFEXITED(st) ? "status" : "signal",
				      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), tail);
		}
		n = recv(h->notify_fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
		if (n <= 0)
			continue;
		msg[n] = '\0';
		if (strstr(msg, "READY=1"))
			return 0;
	}
}

static void stop_daemon(struct holder *h)
{
	int st;

	if (h->daemon <= 0)
		return;
	kill(h->daemon, SIGTERM);
	if (h->daemon_pidfd >= 0) {
		struct pollfd p = { .fd = h->daemon_pidfd, .events = POLLIN };

		if (poll(&p, 1, 10000) == 0) {
			cfs_run_log(true, "classfsd did not stop within 10 s: killing it");
			kill(h->daemon, SIGKILL);
		}
	}
	while (waitpid(h->daemon, &st, 0) < 0 && errno == EINTR)
		;
	h->daemon = 0;
}

static int load_one(struct holder *h, const char *path)
{
	char *data = NULL, why[sizeof(h->rep.message)];
	size_t len = 0;
	int r = read_file(path, &data, &len);

	if (r < 0)
		return report(h, r, "cannot read %s: %s", path, strerror(-r));
	/* before the daemon has any of it: refused, the record changes nothing */
	r = cfs_dev_check_record(data, len, path, why, sizeof(why));
	if (r < 0) {
		free(data);
		return report(h, r, "%s", why);
	}
	r = classfs_client_load(h->client, data, len, path);
	free(data);
	if (r < 0) {
		const char *m = classfs_client_error_message(h->client);

		return report(h, r, "cannot load %s: %s", path, *m ? m : strerror(-r));
	}
	cfs_run_log(h->verbose, "loaded %s", path);
	return 0;
}

/*
 * One event: /dev and the database before, broadcast with the database
 * entry's properties (udev-props.c), /dev after.
 */
static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct cfs_props recorded = { 0 };
	struct holder *h = data;
	int r;

	if (ev->action == CLASSFS_ACTION_ADD && ev->devpath &&
	    (r = cfs_props_recorded(h->req, ev, &recorded)) < 0 && r != -ENOENT)
		cfs_run_log(true, "event %llu (add %s): its recorded properties: %s",
			    (unsigned long long)ev->seqnum, ev->devpath, strerror(-r));
	r = cfs_devfs_event_before(h->devfs, ev, &recorded);
	cfs_props_free(&recorded);
	if (r < 0)
		cfs_run_log(true, "event %llu (%s %s): %s", (unsigned long long)ev->seqnum,
			    classfs_action_name(ev->action), ev->devpath, strerror(-r));
	r = cfs_devfs_broadcast(h->devfs, h->nl_fd, ev);
	if (r < 0)
		cfs_run_log(true, "cannot broadcast event %llu (%s %s): %s",
			    (unsigned long long)ev->seqnum, classfs_action_name(ev->action),
			    ev->devpath, strerror(-r));
	r = cfs_devfs_event_after(h->devfs, ev);
	if (r < 0)
		cfs_run_log(true, "event %llu (%s %s): %s", (unsigned long long)ev->seqnum,
			    classfs_action_name(ev->action), ev->devpath, strerror(-r));
	cfs_run_log(h->verbose, "event %llu: %s %s", (unsigned long long)ev->seqnum,
		    classfs_action_name(ev->action), ev->devpath);
}

/* told of a gap from inside dispatch: fetch the events once it returns */
static void on_gap(uint64_t first, uint64_t last, void *data)
{
	struct holder *h = data;

	if (!h->gap_first || first < h->gap_first)
		h->gap_first = first;
	if (last > h->gap_last)
		h->gap_last = last;
}

/*
 * The devices already in the tree: the daemon's record of them, loaded
 * into a tree of our own, gives each one's node (type, number, mode,
 * recorded contents and links) and its udev database entry.
 */
static int snapshot(struct holder *h, enum classfs_layout layout)
{
	struct classfs_record_error rerr = { 0 };
	struct classfs_record_options ropt = { .filename = "<daemon's tree>" };
	struct classfs_tree *tree;
	char *buf = NULL;
	size_t len = 0;
	int r;

	r = cfs_client_save_mem(h->client, NULL, &buf, &len);
	if (r < 0) {
		const char *m = classfs_client_error_message(h->client);

		free(buf);
		return report(h, r, "cannot fetch the daemon's tree: %s", *m ? m : strerror(-r));
	}
	if (!memchr(buf, 'P', len)) {
		/* an empty tree: nothing for /dev (the loader refuses an empty record) */
		free(buf);
		return 0;
	}
	tree = classfs_tree_new(layout);
	if (!tree) {
		free(buf);
		return report(h, -ENOMEM, "cannot create a tree");
	}
	r = classfs_record_load(tree, buf, len, &ropt, &rerr);
	free(buf);
	if (r < 0) {
		report(h, r, "cannot read the daemon's tree back: %s:%lu: %s", rerr.file, rerr.line,
		       rerr.reason[0] ? rerr.reason : strerror(-r));
		goto out;
	}
	r = cfs_devfs_fill(h->devfs, tree);
	if (r < 0)
		report(h, r, "cannot fill the private /dev and the udev database: %s",
		       strerror(-r));
out:
	classfs_record_unload(tree);
	if (classfs_tree_free(tree) < 0)
		cfs_run_log(h->verbose, "snapshot tree not empty after unload");
	return r;
}

/*
 * /sys in our namespace must be the daemon's FUSE tree: a daemon joined
 * with --socket that says it is mounted on /sys may be so in another
 * mount namespace, leaving the host's sysfs here.  Its device number goes
 * in the report: each child checks that its /sys is that one.
 */
static int check_sys(struct holder *h)
{
	struct statfs sfs;
	struct stat st;

	if (statfs("/sys", &sfs) < 0 || stat("/sys", &st) < 0)
		return report(h, -errno, "cannot look at /sys in the environment: %s",
			      strerror(errno));
	if (sfs.f_type != FUSE_SUPER_MAGIC)
		return report(h, -EXDEV,
			      "/sys in the environment is not the classfs tree (filesystem magic "
			      "0x%lx; classfsd at %s is not mounted here): refusing to run "
			      "anything against the host's /sys",
			      (unsigned long)sfs.f_type, h->a->socket);
	h->rep.sys_dev = st.st_dev;
	return 0;
}

/*
 * Nothing we mount may reach the host: every mount of our new namespace
 * becomes private.  In a chroot whose directory is not a mount point (a
 * plain directory, as pbuilder's) "/" names no mount; setns() into our
 * own namespace puts us at its real root for that, then we go back to
 * the chroot and the directory we were in.
 */
static int make_private(void)
{
	int root, cwd, ns, r = 0;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (root < 0 || cwd < 0 || ns < 0)
		r = -errno;
	else if (setns(ns, CLONE_NEWNS) < 0)
		r = -errno;
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		r = -errno;
	/* back in the chroot whatever happened: never stay at the host's root */
	if (root >= 0 && (fchdir(root) < 0 || chroot(".") < 0 || (cwd >= 0 && fchdir(cwd) < 0)))
		_exit(125);
	if (ns >= 0)
		close(ns);
	if (cwd >= 0)
		close(cwd);
	if (root >= 0)
		close(root);
	return r;
}

/*
 * In a user namespace: the daemon will serve the tree on /sys and its
 * devtmpfs-style view on /dev, both mounted here (it cannot mount), and
 * attached once it serves them.  The host's /dev stays reachable below
 * the view, for the nodes bound in.
 */
static int mount_views(struct holder *h, char *why, size_t size)
{
	uid_t uid = h->a->opt->root ? 0 : h->a->uid;
	gid_t gid = h->a->opt->root ? 0 : h->a->gid;
	int r;

	h->host_dev = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->host_dev < 0) {
		r = -errno;
		snprintf(why, size, "cannot open /dev: %s", strerror(-r));
		return r;
	}
	r = cfs_userns_fuse_detached("classfs", uid, gid, &h->sys_fuse, &h->sys_mnt, why, size);
	if (r == 0)
		r = cfs_userns_fuse_detached("classfs-dev", uid, gid, &h->dev_fuse, &h->dev_mnt,
					     why, size);
	return r;
}

/* the daemon serves them: the views go on /sys and /dev */
static int attach_views(struct holder *h)
{
	int r = cfs_userns_attach(h->sys_mnt, "/sys");

	h->sys_mnt = -1;
	if (r < 0) {
		close(h->dev_mnt);
		h->dev_mnt = -1;
		return report(h, r, "cannot mount the tree on /sys: %s", strerror(-r));
	}
	r = cfs_userns_attach(h->dev_mnt, "/dev");
	h->dev_mnt = -1;
	if (r < 0)
		return report(h, r, "cannot mount the devices on /dev: %s", strerror(-r));
	return 0;
}

static int setup(struct holder *h)
{
	const struct classfs_run_options *o = h->a->opt;
	char why[sizeof(h->rep.message)];
	struct classfs_client_status st;
	int r;

	if (h->a->new_userns) {
		r = cfs_userns_enter(h->a->uid, h->a->gid, o->root, why, sizeof(why));
		if (r < 0)
			return report(h, r, "%s", why);
	}
	if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0) {
		r = -errno;
		if (h->a->userns)
			cfs_userns_refusal(r, "cannot make private namespaces", why, sizeof(why));
		else
			snprintf(why, sizeof(why), "cannot make private namespaces: %s", strerror(-r));
		return report(h, r, "%s", why);
	}
	r = make_private();
	if (r < 0)
		return report(h, r, "cannot make the mounts of the namespace private: %s",
			      strerror(-r));
	if (h->a->userns) {
		r = mount_views(h, why, sizeof(why));
		if (r < 0)
			return report(h, r, "%s", why);
	}

	if (h->a->daemon) {
		r = start_daemon(h);
		/* the daemon's now: a copy here would keep the mounts alive after it died */
		if (h->sys_fuse >= 0)
			close(h->sys_fuse);
		if (h->dev_fuse >= 0)
			close(h->dev_fuse);
		h->sys_fuse = h->dev_fuse = -1;
		if (r < 0)
			return r;
	}
	if (h->a->userns) {
		r = attach_views(h);
		if (r < 0)
			return r;
	}
	h->client = classfs_client_connect(h->a->socket, 0);
	if (!h->client)
		return report(h, -errno, "cannot connect to classfsd at %s: %s", h->a->socket,
			      strerror(errno));
	h->req = classfs_client_connect(h->a->socket, 0);
	if (!h->req)
		return report(h, -errno, "cannot connect to classfsd at %s: %s", h->a->socket,
			      strerror(errno));
	r = classfs_client_status(h->client, &st);
	if (r < 0)
		return report(h, r, "classfsd at %s: status: %s", h->a->socket,
			      classfs_client_error_message(h->client));
	if (!h->a->daemon) {
		if (!st.mountpoint[0])
			return report(h, -ENOENT,
				      "classfsd at %s serves no mount (start it with --mount DIR)",
				      h->a->socket);
		if (strcmp(st.mountpoint, "/sys") &&
		    mount(st.mountpoint, "/sys", NULL, MS_BIND | MS_REC, NULL) < 0)
			return report(h, -errno, "cannot bind %s over /sys: %s", st.mountpoint,
				      strerror(errno));
	}

	r = check_sys(h);
	if (r < 0)
		return r;

	if (o->sample && (r = load_one(h, cfs_sample_path())) < 0)
		return r;
	for (const char *const *f = o->records; f && *f; f++)
		if ((r = load_one(h, *f)) < 0)
			return r;

	/* events from here on are followed; what came before is the snapshot */
	r = classfs_client_status(h->client, &st);
	if (r < 0)
		return report(h, r, "status: %s", classfs_client_error_message(h->client));
	r = classfs_client_subscribe(h->client, st.seqnum + 1, on_event, on_gap, h);
	if (r < 0)
		return report(h, r, "cannot follow the daemon's events: %s",
			      classfs_client_error_message(h->client));

	umask(0);
	r = cfs_devfs_setup(&h->devfs, h->host_dev,
			    st.layout == CLASSFS_LAYOUT_DEVICES ? h->req : NULL, h->verbose, why,
			    sizeof(why));
	if (r < 0)
		return report(h, r, "%s", why);
	r = snapshot(h, st.layout);
	if (r < 0)
		return r;
	h->nl_fd = classfs_netlink_udev_open();
	if (h->nl_fd < 0)
		return report(h, h->nl_fd, "cannot open a netlink socket: %s", strerror(-h->nl_fd));
	return 0;
}

/* follow events until told to stop; Return: 0, or -errno when following failed */
static int follow(struct holder *h)
{
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = h->a->ctl_fd, .events = POLLIN },
			{ .fd = classfs_client_fd(h->client), .events = POLLIN },
			{ .fd = h->daemon_pidfd, .events = POLLIN },
		};
		int n, r;

		n = poll(p, 3, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[0].revents)
			return 0;	/* EOF (or stray data): the caller wants us gone */
		if (p[2].revents) {
			cfs_run_log(true, "classfsd exited while the environment ran");
			waitpid(h->daemon, NULL, 0);
			h->daemon = 0;
			return -ECONNRESET;
		}
		r = classfs_client_dispatch(h->client, 0);
		if (r < 0) {
			cfs_run_log(true, "lost classfsd's events: %s", strerror(-r));
			return r;
		}
		if (h->gap_first) {
			uint64_t first = h->gap_first, last = h->gap_last;

			h->gap_first = h->gap_last = 0;
			r = classfs_client_replay(h->client, first, last, on_event, h);
			if (r < 0 || (uint64_t)r != last - first + 1)
				cfs_run_log(true, "events %llu-%llu lost: /dev may be stale",
					    (unsigned long long)first, (unsigned long long)last);
		}
	}
}

_Noreturn void cfs_holder_main(const struct cfs_holder_args *a)
{
	struct holder h = { .a = a, .verbose = a->opt->verbose, .daemon_pidfd = -1,
			    .notify_fd = -1, .nl_fd = -1, .sys_fuse = -1, .dev_fuse = -1,
			    .sys_mnt = -1, .dev_mnt = -1, .host_dev = -1 };
	ssize_t n;
	int r, lo, hi;

	/* die with the caller; a terminal's ^C is for the program, not for us */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* descriptors of the caller (another environment's pipes) are not ours to keep */
	lo = a->ready_fd < a->ctl_fd ? a->ready_fd : a->ctl_fd;
	hi = a->ready_fd < a->ctl_fd ? a->ctl_fd : a->ready_fd;
	if (lo > 3)
		close_range(3, (unsigned int)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
	close_range((unsigned int)hi + 1, ~0u, 0);

	r = setup(&h);
	if (r < 0 && h.rep.status == 0)
		report(&h, r, "%s", strerror(-r));
	do
		n = write(a->ready_fd, &h.rep, sizeof(h.rep));
	while (n < 0 && errno == EINTR);
	close(a->ready_fd);
	if (r == 0)
		r = follow(&h);

	classfs_client_disconnect(h.req);
	classfs_client_disconnect(h.client);
	stop_daemon(&h);
	cfs_devfs_free(h.devfs);
	if (h.nl_fd >= 0)
		close(h.nl_fd);
	if (h.notify_fd >= 0)
		close(h.notify_fd);
	if (h.daemon_pidfd >= 0)
		close(h.daemon_pidfd);
	if (h.host_dev >= 0)
		close(h.host_dev);
	if (h.sys_mnt >= 0)
		close(h.sys_mnt);
	if (h.dev_mnt >= 0)
		close(h.dev_mnt);
	_exit(r < 0 ? 1 : 0);
}
