// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classfsd - owns one classfs tree, mounts it, and lets other processes
 * publish into it and follow its events through a Unix control socket
 * (docs/protocol.md).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/un.h>
#include <unistd.h>

#include <classfs/record.h>

#include "daemon.h"
#include "util.h"

struct cfsd cfsd;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void cfsd_log(const char *prefix, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	size_t n;

	if (!cfsd.cfg.verbose && !strcmp(prefix, LOG_PFX_DEBUG))
		return;
	va_start(ap, fmt);
	n = cfs_log_line(line, sizeof(line), prefix, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fwrite(line, 1, n, stderr);
	pthread_mutex_unlock(&log_lock);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: classfsd [OPTION]...\n"
		"Own a classfs tree, mount it, and serve it on a control socket.\n\n"
		"  -s, --socket PATH         control socket (default %s)\n"
		"  -m, --mount DIR           mount the tree at DIR (FUSE)\n"
		"  -L, --layout LAYOUT       class (default) or devices\n"
		"  -o, --mount-options OPTS  FUSE options (allow_other, ro, ...)\n"
		"      --dev-mount DIR       also serve the devices as a devtmpfs at DIR\n"
		"                            (always nodev; same FUSE options)\n"
		"  -l, --load FILE           load a umockdev record at start\n"
		"  -S, --sample              load the built-in sample machine\n"
		"  -g, --group GROUP         group of the socket (mode 0660)\n"
		"      --max-message BYTES   size limit per message (default 65536)\n"
		"      --call-timeout MS     remote show()/store() timeout (default 5000)\n"
		"      --ring-size N         events kept for replay (default 262144)\n"
		"      --ring-bytes BYTES    memory those events may take; the oldest go\n"
		"                            first (default %u)\n"
		"      --subscriber-queue N  events a subscriber may lag behind before a gap\n"
		"                            notice (default 16384)\n"
		"      --max-connections-per-uid N  connections one uid may hold (default %d)\n"
		"      --max-objects-per-uid N      classes and devices one uid may publish\n"
		"                                   (default %d)\n"
		"      --max-subscribers-per-uid N  event subscriptions one uid may hold\n"
		"                                   (default %d)\n"
		"      --max-entries-per-uid N      attributes in one uid's devices (default %d)\n"
		"      --max-bytes-per-uid N        bytes of values stored in one uid's devices\n"
		"                                   (default %u)\n"
		"      --max-requests-per-uid N     requests of one uid run at once (default %d,\n"
		"                                   at most %d); root has no limits\n"
		"      --uevent-helper PATH  run PATH for every event (/kernel/uevent_helper)\n"
		"      --uevent-helper-queue BYTES  memory the events waiting for their\n"
		"                            helper may take; past it events are dropped,\n"
		"                            counted and logged (default %zu)\n"
		"      --netlink             broadcast events in udev format on netlink group 2\n"
		"                            (use only in a private network namespace)\n"
		"  -v, --verbose             log debug messages\n"
		"  -h, --help                show this help\n",
		"/run/classfs/control", CFSD_RING_BYTES_DEFAULT, CFSD_MAX_CONNS_DEFAULT, CFSD_MAX_OBJS_DEFAULT,
		CFSD_MAX_SUBS_DEFAULT, CFSD_MAX_ENTRIES_DEFAULT, CFSD_MAX_BYTES_DEFAULT,
		CFSD_MAX_REQS_DEFAULT, CFSD_WORKERS_MAX, CLASSFS_HELPER_QUEUE_DEFAULT);
}

static int parse_size(const char *opt, const char *s, size_t min, size_t max, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "classfsd: %s: '%s' is not a number from %zu to %zu\n", opt, s, min,
			max);
		return -EINVAL;
	}
	*out = (size_t)v;
	return 0;
}

enum { OPT_MAX_MSG = 256, OPT_TIMEOUT, OPT_RING, OPT_RING_BYTES, OPT_QUEUE, OPT_NETLINK, OPT_HELPER,
       OPT_HELPER_QUEUE, OPT_MAX_CONNS, OPT_MAX_OBJS, OPT_MAX_SUBS, OPT_MAX_REQS, OPT_DEV_MOUNT,
       OPT_MAX_ENTRIES, OPT_MAX_BYTES };

static int parse_args(int argc, char **argv, const char **helper)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mount", required_argument, NULL, 'm' },
		{ "layout", required_argument, NULL, 'L' },
		{ "mount-options", required_argument, NULL, 'o' },
		{ "dev-mount", required_argument, NULL, OPT_DEV_MOUNT },
		{ "load", required_argument, NULL, 'l' },
		{ "sample", no_argument, NULL, 'S' },
		{ "group", required_argument, NULL, 'g' },
		{ "max-message", required_argument, NULL, OPT_MAX_MSG },
		{ "call-timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "ring-size", required_argument, NULL, OPT_RING },
		{ "ring-bytes", required_argument, NULL, OPT_RING_BYTES },
		{ "subscriber-queue", required_argument, NULL, OPT_QUEUE },
		{ "max-connections-per-uid", required_argument, NULL, OPT_MAX_CONNS },
		{ "max-objects-per-uid", required_argument, NULL, OPT_MAX_OBJS },
		{ "max-subscribers-per-uid", required_argument, NULL, OPT_MAX_SUBS },
		{ "max-requests-per-uid", required_argument, NULL, OPT_MAX_REQS },
		{ "max-entries-per-uid", required_argument, NULL, OPT_MAX_ENTRIES },
		{ "max-bytes-per-uid", required_argument, NULL, OPT_MAX_BYTES },
		{ "uevent-helper", required_argument, NULL, OPT_HELPER },
		{ "uevent-helper-queue", required_argument, NULL, OPT_HELPER_QUEUE },
		{ "netlink", no_argument, NULL, OPT_NETLINK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t v;
	int c;

	cfsd.cfg = (struct cfsd_config){
		.socket_path = "/run/classfs/control",
		.layout = CLASSFS_LAYOUT_CLASS,
		.max_msg = CFS_MSG_MAX_DEFAULT,
		.call_timeout_ms = 5000,
		.ring_size = 262144,
		.ring_bytes = CFSD_RING_BYTES_DEFAULT,
		.helper_queue = CLASSFS_HELPER_QUEUE_DEFAULT,
		.sub_queue = 16384,
		.max_conns = CFSD_MAX_CONNS_DEFAULT,
		.max_objs = CFSD_MAX_OBJS_DEFAULT,
		.max_subs = CFSD_MAX_SUBS_DEFAULT,
		.max_entries = CFSD_MAX_ENTRIES_DEFAULT,
		.max_bytes = CFSD_MAX_BYTES_DEFAULT,
		.max_reqs = CFSD_MAX_REQS_DEFAULT,
	};
	while ((c = getopt_long(argc, argv, "s:m:L:o:l:Sg:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's': cfsd.cfg.socket_path = optarg; break;
		case 'm': cfsd.cfg.mountpoint = optarg; break;
		case 'o': cfsd.cfg.mount_options = optarg; break;
		case OPT_DEV_MOUNT: cfsd.cfg.dev_mountpoint = optarg; break;
		case 'l': cfsd.cfg.load_file = optarg; break;
		case 'S': cfsd.cfg.sample = true; break;
		case 'g': cfsd.cfg.group = optarg; break;
		case 'v': cfsd.cfg.verbose = true; break;
		case 'L':
			if (!strcmp(optarg, "class")) {
				cfsd.cfg.layout = CLASSFS_LAYOUT_CLASS;
			} else if (!strcmp(optarg, "devices")) {
				cfsd.cfg.layout = CLASSFS_LAYOUT_DEVICES;
			} else {
				fprintf(stderr, "classfsd: --layout: '%s' is neither class nor devices\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_MAX_MSG:
			if (parse_size("--max-message", optarg, 4096, CFS_MSG_MAX_LIMIT, &cfsd.cfg.max_msg))
				return -EINVAL;
			break;
		case OPT_TIMEOUT:
			if (parse_size("--call-timeout", optarg, 1, 600000, &v))
				return -EINVAL;
			cfsd.cfg.call_timeout_ms = (int)v;
			break;
		case OPT_RING:
			if (parse_size("--ring-size", optarg, 16, 1u << 26, &cfsd.cfg.ring_size))
				return -EINVAL;
			break;
		case OPT_RING_BYTES:
			if (parse_size("--ring-bytes", optarg, 1u << 16, (size_t)1 << 40,
				       &cfsd.cfg.ring_bytes))
				return -EINVAL;
			break;
		case OPT_QUEUE:
			if (parse_size("--subscriber-queue", optarg, 1, 1u << 26, &cfsd.cfg.sub_queue))
				return -EINVAL;
			break;
		case OPT_MAX_CONNS:
			if (parse_size("--max-connections-per-uid", optarg, 1, 1u << 20,
				       &cfsd.cfg.max_conns))
				return -EINVAL;
			break;
		case OPT_MAX_OBJS:
			if (parse_size("--max-objects-per-uid", optarg, 1, 1u << 30, &cfsd.cfg.max_objs))
				return -EINVAL;
			break;
		case OPT_MAX_SUBS:
			if (parse_size("--max-subscribers-per-uid", optarg, 1, 1u << 20,
				       &cfsd.cfg.max_subs))
				return -EINVAL;
			break;
		case OPT_MAX_REQS:
			if (parse_size("--max-requests-per-uid", optarg, 1, CFSD_WORKERS_MAX,
				       &cfsd.cfg.max_reqs))
				return -EINVAL;
			break;
		case OPT_MAX_ENTRIES:
			if (parse_size("--max-entries-per-uid", optarg, 1, (size_t)1 << 40,
				       &cfsd.cfg.max_entries))
				return -EINVAL;
			break;
		case OPT_MAX_BYTES:
			if (parse_size("--max-bytes-per-uid", optarg, 1, (size_t)1 << 50,
				       &cfsd.cfg.max_bytes))
				return -EINVAL;
			break;
		case OPT_HELPER: *helper = optarg; break;
		case OPT_HELPER_QUEUE:
			if (parse_size("--uevent-helper-queue", optarg, 4096, (size_t)1 << 40,
				       &cfsd.cfg.helper_queue))
				return -EINVAL;
			break;
		case OPT_NETLINK: cfsd.cfg.netlink = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "classfsd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (cfsd.cfg.sample && cfsd.cfg.load_file) {
		fprintf(stderr, "classfsd: --sample and --load exclude each other\n");
		return -EINVAL;
	}
	return 0;
}

/* the daemon's own record file (an option's path, never a client's) */
static int load_file(const char *path)
{
	struct classfs_record_options opt = { .filename = path };
	struct classfs_record_error err = { 0 };
	char *data = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "re");
	int r;

	if (!f) {
		log_err("cannot open %s: %m", path);
		return -errno;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *p = realloc(data, cap = cap ? cap * 2 : 65536);

			if (!p) {
				free(data);
				fclose(f);
				return -ENOMEM;
			}
			data = p;
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	r = ferror(f) ? -EIO : 0;
	fclose(f);
	if (r == 0)
		r = classfs_record_load(cfsd.tree, data, len, &opt, &err);
	free(data);
	if (r < 0) {
		if (err.reason[0])
			log_err("%s:%lu: %s", err.file[0] ? err.file : path, err.line, err.reason);
		else
			log_err("cannot load %s: %s", path, strerror(-r));
		return r;
	}
	log_info("loaded %s", path);
	return 0;
}

/* the socket's directory (/run/classfs): made when missing, its parent must exist */
static int mkdir_parent(const char *path)
{
	char buf[PATH_MAX];
	char *slash;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int listen_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe, r;

	if (strlen(cfsd.cfg.socket_path) >= sizeof(sa.sun_path)) {
		log_err("socket path %s is too long", cfsd.cfg.socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, cfsd.cfg.socket_path);
	r = mkdir_parent(cfsd.cfg.socket_path);
	if (r < 0) {
		log_err("cannot create the directory of %s: %s", cfsd.cfg.socket_path, strerror(-r));
		return r;
	}
	/* a live daemon there keeps its socket; a stale file is replaced */
	probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(probe);
		log_err("another daemon listens on %s", cfsd.cfg.socket_path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	unlink(cfsd.cfg.socket_path);
	/* non-blocking: the event loop accepts until EAGAIN */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* owner, group and mode before listen(): nobody connects through looser rights */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		log_err("cannot listen on %s: %s", cfsd.cfg.socket_path, strerror(-r));
		close(fd);
		return r;
	}
	if (cfsd.cfg.group) {
		struct group *g = getgrnam(cfsd.cfg.group);

		if (!g || chown(cfsd.cfg.socket_path, (uid_t)-1, g->gr_gid) < 0) {
			r = g ? -errno : -ENOENT;
			log_err("cannot give %s to group %s: %s", cfsd.cfg.socket_path, cfsd.cfg.group,
				g ? strerror(-r) : "no such group");
			close(fd);
			unlink(cfsd.cfg.socket_path);
			return r;
		}
	}
	if (chmod(cfsd.cfg.socket_path, 0660) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		log_err("cannot listen on %s: %s", cfsd.cfg.socket_path, strerror(-r));
		close(fd);
		unlink(cfsd.cfg.socket_path);
		return r;
	}
	return fd;
}

/* tell systemd (Type=notify) without linking libsystemd */
static void sd_notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/* what the record loader made (not in the registry): remove it, deepest first */
struct devvec {
	struct classfs_device **v;
	size_t n, cap;
};

static int collect_dev(struct classfs_device *dev, void *data)
{
	struct devvec *dv = data;

	if (dv->n == dv->cap) {
		size_t cap = dv->cap ? dv->cap * 2 : 256;
		struct classfs_device **v = realloc(dv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		dv->v = v;
		dv->cap = cap;
	}
	dv->v[dv->n++] = classfs_device_get(dev);
	return 0;
}

static int collect_class(struct classfs_class *cls, void *data)
{
	classfs_class_unregister(cls);
	return 0;
}

static void remove_rest(void)
{
	struct devvec dv = { 0 };

	classfs_tree_for_each_device(cfsd.tree, collect_dev, &dv);
	/*
	 * Reversed, each comes before its parent and physical device, so none
	 * has gone with another; the registration reference is the tree's.
	 */
	while (dv.n--) {
		if (classfs_device_is_added(dv.v[dv.n]))
			classfs_device_unregister(dv.v[dv.n]);
		classfs_device_put(dv.v[dv.n]);
	}
	free(dv.v);
	classfs_tree_for_each_class(cfsd.tree, collect_class, NULL);
}

/* the uevent helper's queue is full: events are being dropped (at most once a second) */
static void helper_overflow(const struct classfs_helper_stats *st, void *data)
{
	(void)data;
	log_warn("uevent helper: %zu events (%zu bytes, --uevent-helper-queue %zu) wait for a "
		 "helper: dropping events, %llu dropped so far", st->queued, st->queued_bytes,
		 cfsd.cfg.helper_queue, (unsigned long long)st->dropped);
}

/*
 * At shutdown: no helper starts any more (not for the shutdown's REMOVE
 * events either); what waits is dropped, what still runs after the grace
 * is killed.
 */
static void helper_stop(void)
{
	struct classfs_helper_stats st;

	classfs_helper_stop(cfsd.tree, &st);
	if (st.dropped || st.killed)
		log_info("uevent helper stopped: %llu events dropped without their helper, %llu "
			 "running helpers killed (%llu started)", (unsigned long long)st.dropped,
			 (unsigned long long)st.killed, (unsigned long long)st.started);
}

/* the loop: SIGTERM, SIGINT or SIGHUP came */
static void signal_dispatch(struct cfsd_source *s, uint32_t revents)
{
	struct signalfd_siginfo si;

	(void)revents;
	if (read(s->fd, &si, sizeof(si)) == sizeof(si))
		log_info("signal %u: shutting down", si.ssi_signo);
	cfsd_loop_exit();
}

int main(int argc, char **argv)
{
	struct cfsd_source signals;
	const char *helper = NULL;
	sigset_t mask;
	int sfd, r, status = 1;

	if (parse_args(argc, argv, &helper) < 0)
		return 2;
	/*
	 * glibc's limit of malloc arenas, fixed now at its own default (8 per
	 * CPU): left unset, the thread that makes the 9th arena reads
	 * /sys/devices/system/cpu/online, which is our own mount once we
	 * serve /sys, and that lookup can wait on the very threads that
	 * would answer it.
	 */
	mallopt(M_ARENA_MAX, 8 * get_nprocs());
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* every thread made from here on inherits the mask: signals come through sfd */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		log_err("signalfd: %m");
		return 1;
	}
	cfsd.listen_fd = -1;
	cfsd.netlink_fd = -1;
	cfsd.tree = classfs_tree_new(cfsd.cfg.layout);
	if (!cfsd.tree) {
		log_err("cannot create the tree: %m");
		return 1;
	}
	classfs_helper_set_queue(cfsd.tree, cfsd.cfg.helper_queue, helper_overflow, NULL);
	cfsd_registry_init();
	r = cfsd_loop_init();
	if (r == 0)
		r = cfsd_events_init();
	if (r == 0) {
		signals = (struct cfsd_source){ .fd = sfd, .events = EPOLLIN,
						.dispatch = signal_dispatch };
		r = cfsd_source_add(&signals);
	}
	if (r < 0) {
		log_err("cannot start event delivery: %s", strerror(-r));
		goto out_tree;
	}
	if (helper) {
		ssize_t n = classfs_path_write(cfsd.tree, "kernel/uevent_helper", helper, strlen(helper));

		if (n < 0) {
			log_err("cannot set the uevent helper: %s", strerror((int)-n));
			goto out_mount;
		}
	}
	if (cfsd.cfg.sample && load_file(cfs_sample_path()) < 0)
		goto out_mount;
	if (cfsd.cfg.load_file && load_file(cfsd.cfg.load_file) < 0)
		goto out_mount;
	if (cfsd.cfg.mountpoint) {
		cfsd.mount = classfs_mount_tree(cfsd.tree, cfsd.cfg.mountpoint, cfsd.cfg.mount_options);
		if (!cfsd.mount) {
			log_err("cannot mount at %s: %m", cfsd.cfg.mountpoint);
			goto out_mount;
		}
	}
	if (cfsd.cfg.dev_mountpoint) {
		cfsd.dev_mount = classfs_mount_devtmpfs(cfsd.tree, cfsd.cfg.dev_mountpoint,
						     cfsd.cfg.mount_options);
		if (!cfsd.dev_mount) {
			log_err("cannot mount the devices at %s: %m", cfsd.cfg.dev_mountpoint);
			goto out_mount;
		}
	}
	cfsd.listen_fd = listen_socket();
	if (cfsd.listen_fd < 0)
		goto out_mount;
	r = cfsd_listen_start(cfsd.listen_fd);
	if (r < 0) {
		log_err("cannot accept connections: %s", strerror(-r));
		close(cfsd.listen_fd);
		unlink(cfsd.cfg.socket_path);
		goto out_mount;
	}
	log_info("listening on %s%s%s, layout %s", cfsd.cfg.socket_path,
		 cfsd.mount ? ", tree mounted at " : "", cfsd.mount ? cfsd.cfg.mountpoint : "",
		 cfsd.cfg.layout == CLASSFS_LAYOUT_CLASS ? "class" : "devices");
	sd_notify_ready();

	r = cfsd_loop_run();
	if (r < 0)
		log_err("event loop: %s", strerror(-r));
	else
		status = 0;
	/* first: whatever is queued, the stop takes its grace at most */
	helper_stop();

	cfsd_listen_stop();
	close(cfsd.listen_fd);
	unlink(cfsd.cfg.socket_path);
	/* every connection ends (what it bound goes), then the workers, then pending kicks */
	cfsd_conn_end_all();
	cfsd_pool_stop();
	cfsd_loop_shutdown();
out_mount:
	/* REMOVE events for everything while the sinks still listen */
	cfsd_registry_shutdown();
	classfs_record_unload(cfsd.tree);
	remove_rest();
	if (cfsd.dev_mount && classfs_mount_close(cfsd.dev_mount) < 0)
		log_warn("cannot unmount %s", cfsd.cfg.dev_mountpoint);
	cfsd.dev_mount = NULL;
	if (cfsd.mount && classfs_mount_close(cfsd.mount) < 0)
		log_warn("cannot unmount %s", cfsd.cfg.mountpoint);
	cfsd.mount = NULL;
	cfsd_events_shutdown();
	cfsd_quota_shutdown();
out_tree:
	cfsd_loop_free();
	r = classfs_tree_free(cfsd.tree);
	if (r < 0)
		log_debug("tree not freed: %s", strerror(-r));
	close(sfd);
	return status;
}
