// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stress-remote.c - the daemon under load, for a bounded time: client
 * processes publish, rename, change and remove nested devices through the
 * socket (remote show()/store() served by them, devices bound to their
 * connections, some clients leaving without cleaning up), reader
 * processes walk the daemon's mount, and subscriber processes follow the
 * events, replaying what a gap notice says they missed.
 *
 * Violations counted (all must be zero):
 *  - a remote show()/store() reaching a client after it removed the device;
 *  - a subscriber missing a SEQNUM it could not replay, or seeing a REMOVE
 *    without its ADD (checked while it had no gap);
 *  - a request failing for a reason other than the ones the test provokes;
 *  - a reader error a sysfs reader would not get;
 *  - devices left in the class at the end; the daemon's memory growing;
 *    the daemon not ending cleanly on SIGTERM (mount and socket gone).
 *
 * usage: stress-remote --classfsd PATH [--seconds N] [--clients N]
 *                      [--subscribers N] [--readers N] [--results FILE]
 */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "classfs/client.h"
#include "stress-util.h"

#define MAX_PROCS 8
#define CLASS "stress"

static char sock[256], mnt[256];
static int seconds;

/* ---- clients ---- */

struct rdev {
	char name[48];
	atomic_bool removed;
	int value;
	long calls;
	struct rdev *next;
};

static ssize_t rdev_show(void *data, char *buf, size_t size)
{
	struct rdev *d = data;

	if (atomic_load(&d->removed))
		VIOLATION("remote show() after the removal of its device\n");
	d->calls++;
	return snprintf(buf, size, "%d\n", d->value);
}

static ssize_t rdev_store(void *data, const char *buf, size_t count)
{
	struct rdev *d = data;

	if (atomic_load(&d->removed))
		VIOLATION("remote store() after the removal of its device\n");
	d->calls++;
	d->value = atoi(buf);
	return (ssize_t)count;
}

static struct classfs_client *connect_retry(unsigned int flags)
{
	for (int i = 0; i < 200; i++) {
		struct classfs_client *c = classfs_client_connect(sock, flags);

		if (c)
			return c;
		usleep(50000);
	}
	return NULL;
}

#define CLIENT_CHECK(c, r, what)                                                       \
	do {                                                                           \
		if ((r) < 0)                                                           \
			VIOLATION("client: %s: %s (%s)\n", what, strerror(-(int)(r)), \
				  classfs_client_error_message(c));                    \
	} while (0)

static void client(int id, int report)
{
	struct classfs_client *c = connect_retry(0);
	unsigned int seed = (unsigned int)id * 104729u;
	long ops = 0, calls = 0;
	struct rdev *kept = NULL;
	char line[64];
	double end;

	if (!c)
		_exit(3);
	end = now() + seconds;
	for (unsigned long round = 0; now() < end; round++) {
		struct rdev *disk = calloc(1, sizeof(*disk)), *part = calloc(1, sizeof(*part));
		char newname[56];
		int r;

		snprintf(disk->name, sizeof(disk->name), "c%dd%lu", id, round % 32);
		snprintf(part->name, sizeof(part->name), "c%dd%lup1", id, round % 32);
		struct classfs_client_attr dattrs[] = {
			{ .name = "size", .mode = 0444, .value = "2048\n", .len = 5 },
			{ .name = "state", .mode = 0644, .show = rdev_show, .store = rdev_store,
			  .data = disk },
		};
		struct classfs_client_attr pattrs[] = {
			{ .name = "state", .mode = 0644, .show = rdev_show, .store = rdev_store,
			  .data = part },
		};
		struct classfs_client_device devs[] = {
			{ .cls = CLASS, .name = disk->name, .devt = makedev(230 + id, (round % 32) * 2),
			  .devtype = "disk", .attrs = dattrs, .nattrs = 2, .flags = CLASSFS_CLIENT_BIND },
			{ .cls = CLASS, .name = part->name, .parent = disk->name,
			  .devt = makedev(230 + id, (round % 32) * 2 + 1), .devtype = "partition",
			  .attrs = pattrs, .nattrs = 1, .flags = CLASSFS_CLIENT_BIND },
		};
		r = classfs_client_device_add_batch(c, devs, 2, NULL);
		CLIENT_CHECK(c, r, "add");
		ops += 2;
		classfs_client_dispatch(c, 0);
		r = classfs_client_attr_set(c, CLASS, disk->name, "state", "5\n", 2);
		CLIENT_CHECK(c, r, "set");
		r = classfs_client_trigger(c, CLASS, part->name, CLASSFS_ACTION_CHANGE, NULL);
		CLIENT_CHECK(c, r, "trigger");
		ops += 2;
		const char *name = disk->name;

		if (rand_r(&seed) % 3 == 0) {
			snprintf(newname, sizeof(newname), "%sr", disk->name);
			r = classfs_client_device_rename(c, CLASS, disk->name, newname);
			CLIENT_CHECK(c, r, "rename");
			name = newname;
			ops++;
		}
		for (int i = 0; i < 3; i++)
			classfs_client_dispatch(c, 1);
		r = classfs_client_device_remove(c, CLASS, name);
		CLIENT_CHECK(c, r, "remove");
		atomic_store(&disk->removed, true);
		atomic_store(&part->removed, true);
		ops++;
		/* calls already queued for them must not reach the driver */
		classfs_client_dispatch(c, 0);
		calls += disk->calls + part->calls;
		/* kept until the end, so a late call is seen rather than a use after free */
		disk->next = part;
		part->next = kept;
		kept = disk;
	}
	/* odd clients publish one last device and leave it to the daemon */
	if (id % 2) {
		struct classfs_client_device last = { .cls = CLASS, .name = "leftover",
						      .flags = CLASSFS_CLIENT_BIND };
		char lname[32];

		snprintf(lname, sizeof(lname), "left%d", id);
		last.name = lname;
		classfs_client_device_add(c, &last);
		snprintf(line, sizeof(line), "%ld %ld %ld\n", ops, calls, atomic_load(&violations));
		_exit(write(report, line, strlen(line)) < 0 ? 2 : 0);	/* no disconnect */
	}
	classfs_client_disconnect(c);
	snprintf(line, sizeof(line), "%ld %ld %ld\n", ops, calls, atomic_load(&violations));
	_exit(write(report, line, strlen(line)) < 0 ? 2 : 0);
}

/* ---- subscribers ---- */

struct sub {
	uint64_t expect;	/* next SEQNUM in order */
	uint64_t gap_first, gap_last;
	long events, gaps, replayed;
	bool gapped;		/* ADD/REMOVE matching stops after a gap */
	int adds;		/* ADDs minus REMOVEs of this run's class */
};

static void sub_event(const struct classfs_uevent *ev, void *data)
{
	struct sub *s = data;

	if (s->expect && ev->seqnum != s->expect && !s->gap_last)
		VIOLATION("subscriber: SEQNUM %llu, expected %llu, no gap notice\n",
			  (unsigned long long)ev->seqnum, (unsigned long long)s->expect);
	s->expect = ev->seqnum + 1;
	s->events++;
	if (!s->gapped && !strcmp(ev->subsystem, CLASS)) {
		if (ev->action == CLASSFS_ACTION_ADD)
			s->adds++;
		else if (ev->action == CLASSFS_ACTION_REMOVE && --s->adds < 0)
			VIOLATION("subscriber: REMOVE of %s without ADD\n", ev->devpath);
	}
}

static void sub_gap(uint64_t first, uint64_t last, void *data)
{
	struct sub *s = data;

	s->gaps++;
	s->gapped = true;
	s->gap_first = first;
	s->gap_last = last;
}

static void sub_replayed(const struct classfs_uevent *ev, void *data)
{
	(void)ev;
	((struct sub *)data)->replayed++;
}

static void subscriber(int id, int ready, int final, int report)
{
	struct classfs_client *c = connect_retry(0);
	struct sub s = { .expect = 0 };
	uint64_t last = 0;
	char line[96];
	bool have_last = false;

	(void)id;
	if (!c || classfs_client_subscribe(c, 0, sub_event, sub_gap, &s) < 0)
		_exit(3);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;) {
		int r = classfs_client_dispatch(c, 100);

		if (r < 0) {
			VIOLATION("subscriber: dispatch: %s\n", strerror(-r));
			break;
		}
		if (s.gap_last) {
			uint64_t n = s.gap_last - s.gap_first + 1;
			long before = s.replayed;

			r = classfs_client_replay(c, s.gap_first, s.gap_last, sub_replayed, &s);
			if (r < 0 || (uint64_t)(s.replayed - before) != n)
				VIOLATION("subscriber: replay of %llu..%llu gave %ld\n",
					  (unsigned long long)s.gap_first,
					  (unsigned long long)s.gap_last, s.replayed - before);
			s.gap_last = 0;
		}
		if (!have_last) {
			struct pollfd p = { final, POLLIN, 0 };

			if (poll(&p, 1, 0) == 1 && read(final, &last, sizeof(last)) == sizeof(last))
				have_last = true;
		}
		if (have_last && s.expect > last)
			break;
	}
	snprintf(line, sizeof(line), "%ld %ld %ld %d %d %ld\n", s.events, s.gaps, s.replayed,
		 s.gapped ? -1 : s.adds, (int)(s.expect > last), atomic_load(&violations));
	classfs_client_disconnect(c);
	_exit(write(report, line, strlen(line)) < 0 ? 2 : 0);
}

/* ---- the run ---- */

static pid_t spawn(int kind, int id, int *report, int go_or_ready, int final)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (kind == 0)
			reader(mnt, CLASS, go_or_ready, p[1], seconds);
		else if (kind == 1)
			client(id, p[1]);
		else
			subscriber(id, go_or_ready, final, p[1]);
		_exit(4);
	}
	close(p[1]);
	*report = p[0];
	return pid;
}

static bool collect(pid_t pid, int fd, char *line, size_t size)
{
	int status = 0;
	ssize_t n = read(fd, line, size - 1);

	close(fd);
	waitpid(pid, &status, 0);
	line[n > 0 ? n : 0] = '\0';
	return n > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "classfsd", required_argument, NULL, 'd' },
		{ "seconds", required_argument, NULL, 's' },
		{ "clients", required_argument, NULL, 'c' },
		{ "subscribers", required_argument, NULL, 'u' },
		{ "readers", required_argument, NULL, 'r' },
		{ "results", required_argument, NULL, 'o' },
		{ "no-memcheck", no_argument, NULL, 'm' },
		{ 0 },
	};
	int nclients = 3, nsubs = 2, nreaders = 2, memcheck = !STRESS_SANITIZED, opt;
	const char *daemon_path = NULL, *results = NULL;
	pid_t rp[MAX_PROCS], cp[MAX_PROCS], sp[MAX_PROCS], daemon;
	int rfd[MAX_PROCS], cfd[MAX_PROCS], sfd[MAX_PROCS], go[2], ready[2], final[2];
	char dir[] = "/tmp/classfs-stressd-XXXXXX", line[128];
	long early = 0, late = 0, rss[256], ops = 0, calls = 0, rops = 0, rbad = 0, events = -1, gaps = 0, replayed = 0;
	int nrss = 0;

	seconds = stress_default_seconds();
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': daemon_path = optarg; break;
		case 's': seconds = atoi(optarg); break;
		case 'c': nclients = atoi(optarg); break;
		case 'u': nsubs = atoi(optarg); break;
		case 'r': nreaders = atoi(optarg); break;
		case 'o': results = optarg; break;
		case 'm': memcheck = 0; break;
		default:
			fprintf(stderr, "usage: %s --classfsd PATH [--seconds N] [--clients N] "
					"[--subscribers N] [--readers N] [--results FILE]\n", argv[0]);
			return 2;
		}
	}
	if (!daemon_path || seconds < 1 || nclients < 1 || nclients > MAX_PROCS || nsubs < 1 ||
	    nsubs > MAX_PROCS || nreaders < 0 || nreaders > MAX_PROCS) {
		fprintf(stderr, "stress-remote: --classfsd is needed; counts are 1..%d\n",
			MAX_PROCS);
		return 2;
	}
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) < 0) {
		printf("SKIP: needs root and /dev/fuse\n");
		return 77;
	}
	if (!mkdtemp(dir) || pipe(go) < 0 || pipe(ready) < 0 || pipe(final) < 0)
		return 1;
	snprintf(sock, sizeof(sock), "%s/control", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	mkdir(mnt, 0755);

	/* readers first: forked before this process has any thread */
	for (int i = 0; i < nreaders; i++)
		rp[i] = spawn(0, i, &rfd[i], go[0], -1);
	daemon = fork();
	if (daemon == 0) {
		/* a ring that fills within seconds: from then on memory must stay flat */
		execl(daemon_path, daemon_path, "--socket", sock, "--mount", mnt,
		      "--subscriber-queue", "2048", "--ring-size", "8192", (char *)NULL);
		_exit(127);
	}
	struct classfs_client *ctl = connect_retry(0);

	if (!ctl) {
		VIOLATION("daemon did not come up\n");
		goto out_daemon;
	}
	if (classfs_client_class_create(ctl, CLASS, 0) < 0)
		VIOLATION("class: %s\n", classfs_client_error_message(ctl));
	for (int i = 0; i < nsubs; i++)
		sp[i] = spawn(2, i, &sfd[i], ready[1], final[0]);
	for (int i = 0; i < nsubs; i++)
		if (read(ready[0], line, 1) != 1)
			VIOLATION("subscriber %d did not start\n", i);
	for (int i = 0; i < nreaders; i++)
		if (write(go[1], "g", 1) != 1)
			return 1;
	for (int i = 0; i < nclients; i++)
		cp[i] = spawn(1, i, &cfd[i], -1, -1);

	for (int s = 0; s < seconds; s++) {
		sleep(1);
		if (nrss < 256)
			rss[nrss++] = rss_kib(daemon);
	}
	for (int i = 0; i < nclients; i++) {
		long o = 0, k = 0, v = 0;

		if (!collect(cp[i], cfd[i], line, sizeof(line)) ||
		    sscanf(line, "%ld %ld %ld", &o, &k, &v) != 3)
			VIOLATION("client %d failed\n", i);
		atomic_fetch_add(&violations, v);
		ops += o;
		calls += k;
	}
	for (int i = 0; i < nreaders; i++) {
		long o = 0, b = 0;

		if (!collect(rp[i], rfd[i], line, sizeof(line)) ||
		    sscanf(line, "%ld %ld", &o, &b) != 2)
			VIOLATION("reader %d failed\n", i);
		rops += o;
		rbad += b;
	}
	if (rbad)
		VIOLATION("%ld unexpected reader errors\n", rbad);

	/* the bound leftovers of the clients that left go with their connections */
	for (int i = 0; i < 100 && count_entries(mnt) >= 0; i++) {
		char cdir[300];

		snprintf(cdir, sizeof(cdir), "%s/class/" CLASS, mnt);
		if (count_entries(cdir) == 0)
			break;
		usleep(50000);
	}
	char cdir[300];

	snprintf(cdir, sizeof(cdir), "%s/class/" CLASS, mnt);
	if (count_entries(cdir) != 0)
		VIOLATION("%d devices left in class/" CLASS "\n", count_entries(cdir));

	struct classfs_client_status st;

	if (classfs_client_status(ctl, &st) < 0)
		VIOLATION("status: %s\n", classfs_client_error_message(ctl));
	for (int i = 0; i < nsubs; i++)
		if (write(final[1], &st.seqnum, sizeof(st.seqnum)) != sizeof(st.seqnum))
			return 1;
	for (int i = 0; i < nsubs; i++) {
		long e = 0, g = 0, r = 0, v = 0;
		int adds = 0, done = 0;

		if (!collect(sp[i], sfd[i], line, sizeof(line)) ||
		    sscanf(line, "%ld %ld %ld %d %d %ld", &e, &g, &r, &adds, &done, &v) != 6 ||
		    !done)
			VIOLATION("subscriber %d failed (%s)\n", i, line);
		atomic_fetch_add(&violations, v);
		if (adds > 0)
			VIOLATION("subscriber %d: %d ADDs without REMOVE\n", i, adds);
		if (events < 0 || e + r < events)
			events = e + r;
		gaps += g;
		replayed += r;
	}
	classfs_client_disconnect(ctl);

	for (int i = nrss / 4; i < nrss / 2; i++)
		early = rss[i] > early ? rss[i] : early;
	for (int i = 3 * nrss / 4; i < nrss; i++)
		late = rss[i] > late ? rss[i] : late;
	if (memcheck && nrss >= 8 && late > early + early / 4 + 8192)
		VIOLATION("daemon memory grew from %ld to %ld KiB\n", early, late);

out_daemon:;
	int status = 0;

	kill(daemon, SIGTERM);
	for (int i = 0; i < 100 && waitpid(daemon, &status, WNOHANG) == 0; i++)
		usleep(100000);
	if (waitpid(daemon, &status, WNOHANG) == 0) {
		VIOLATION("daemon did not stop on SIGTERM\n");
		kill(daemon, SIGKILL);
		waitpid(daemon, &status, 0);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		VIOLATION("daemon exit status %d\n", status);
	}
	if (access(sock, F_OK) == 0)
		VIOLATION("socket left behind\n");
	if (umount2(mnt, MNT_DETACH) == 0)
		VIOLATION("mount left behind\n");
	unlink(sock);
	rmdir(mnt);
	rmdir(dir);

	snprintf(line, sizeof(line), "stress-remote\t%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld/%ld\t%ld\n",
		 seconds, ops, calls, rops, events, gaps, replayed, early, late,
		 atomic_load(&violations));
	printf("seconds client-ops remote-calls reader-ops events gaps replayed "
	       "daemon-rss-KiB(early/late) violations\n%s", strchr(line, '\t') + 1);
	stress_record(results, line);
	return atomic_load(&violations) ? 1 : 0;
}
