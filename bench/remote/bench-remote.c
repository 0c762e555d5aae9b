// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-remote - classfsd through its socket: devices published per
 * second, and events delivered per second to 1..N subscriber processes.
 *
 *   bench-remote publish N          N devices through one client, batched
 *                                   (and 10,000 one request each)
 *   bench-remote events N SUBS      N devices added in batches while SUBS
 *                                   subscriber processes follow live, then
 *                                   the same SUBS catching up on all N
 *                                   events from the replay ring
 *
 * Each run starts its own classfsd (CLASSFSD, else the build tree's) on a
 * temporary socket.  Subscribers are separate processes using the client
 * library; each checks that it saw every SEQNUM once, in order, with no
 * gap notice.  Prints markdown table rows.
 */
#include <poll.h>
#include <stdint.h>

#include "remote-util.h"

struct sub_result {
	uint64_t events;
	uint64_t gaps;
	uint64_t out_of_order;
	double first, last;	/* times of the first and last event */
};

struct sub_state {
	struct sub_result r;
	uint64_t expect;	/* next SEQNUM */
	uint64_t want_last;
};

static void sub_event(const struct classfs_uevent *ev, void *data)
{
	struct sub_state *s = data;

	if (!s->r.events)
		s->r.first = now_s();
	if (ev->seqnum != s->expect)
		s->r.out_of_order++;
	s->expect = ev->seqnum + 1;
	s->r.events++;
	if (ev->seqnum >= s->want_last)
		s->r.last = now_s();
}

static void sub_gap(uint64_t first, uint64_t last, void *data)
{
	struct sub_state *s = data;

	s->r.gaps++;
	s->expect = last + 1;
}

/*
 * A subscriber process: subscribe from @from, tell the parent on @ready,
 * receive until SEQNUM @last, write the result to @out.
 */
static pid_t spawn_subscriber(const char *sock, uint64_t from, uint64_t last, int ready, int out)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sub_state s = { .expect = from, .want_last = last };
		struct classfs_client *c = classfs_client_connect(sock, 0);

		if (!c || classfs_client_subscribe(c, from, sub_event, sub_gap, &s) < 0)
			_exit(1);
		if (write(ready, "r", 1) != 1)
			_exit(2);
		while (s.expect <= last) {
			if (classfs_client_dispatch(c, 10000) <= 0)
				break;
		}
		if (write(out, &s.r, sizeof(s.r)) != (ssize_t)sizeof(s.r))
			_exit(3);
		classfs_client_disconnect(c);
		_exit(0);
	}
	return pid;
}

/* CPU seconds (user + system) a process has used so far */
static double cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static struct classfs_client_device *make_devs(size_t n, char (**names)[16], const char *cls)
{
	struct classfs_client_device *d = calloc(n, sizeof(*d));

	*names = calloc(n, 16);
	if (!d || !*names) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf((*names)[i], 16, "d%u", (unsigned int)(i % 100000000u));
		d[i] = (struct classfs_client_device){ .cls = cls, .name = (*names)[i],
						       .devt = makedev(200, (unsigned int)i) };
	}
	return d;
}

static int publish_all(struct classfs_client *c, struct classfs_client_device *d, size_t n)
{
	size_t done = 0;
	int r = classfs_client_device_add_batch(c, d, n, &done);

	if (r < 0 || done != n) {
		fprintf(stderr, "publish: %s (%zu of %zu)\n", classfs_client_error_message(c), done, n);
		return -1;
	}
	return 0;
}

static int bench_publish(size_t n)
{
	const char *const args[] = { "--ring-size", "1024", NULL };
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_device *devs;
	char (*names)[16];
	size_t single = n < 10000 ? n : 10000;
	double t0, t1, t2, cpu0, cpu1, self0, self1;

	if (start_daemon(&d, false, args) < 0) {
		fprintf(stderr, "cannot start classfsd (%s)\n", classfsd_path());
		return 1;
	}
	c = classfs_client_connect(d.sock, 0);
	if (!c)
		goto fail;
	devs = make_devs(n, &names, "batched");
	cpu0 = cpu_of(d.pid);
	self0 = cpu_of(getpid());
	t0 = now_s();
	if (publish_all(c, devs, n) < 0)
		goto fail;
	t1 = now_s();
	cpu1 = cpu_of(d.pid);
	self1 = cpu_of(getpid());
	for (size_t i = 0; i < single; i++) {
		devs[i].cls = "single";
		if (classfs_client_device_add(c, &devs[i]) < 0) {
			fprintf(stderr, "add: %s\n", classfs_client_error_message(c));
			goto fail;
		}
	}
	t2 = now_s();
	printf("| publish, batched (%u KiB messages) | %zu | %.0f | %.2f s | %.2f | %.2f |\n", 64, n,
	       (double)n / (t1 - t0), t1 - t0, (cpu1 - cpu0) * 1e6 / (double)n,
	       (self1 - self0) * 1e6 / (double)n);
	printf("| publish, one request per device | %zu | %.0f | %.2f s | - | - |\n", single,
	       (double)single / (t2 - t1), t2 - t1);
	classfs_client_disconnect(c);
	free(devs);
	free(names);
	return stop_daemon(&d) < 0;
fail:
	stop_daemon(&d);
	return 1;
}

static int collect(pid_t *pids, int *outs, int nsubs, uint64_t n, const char *what, double t0)
{
	double min_rate = 0, sum = 0;
	uint64_t lost = 0, gaps = 0, disorder = 0;
	int bad = 0;

	for (int i = 0; i < nsubs; i++) {
		struct sub_result r = { 0 };
		int st;

		if (read(outs[i], &r, sizeof(r)) != (ssize_t)sizeof(r))
			bad = 1;
		close(outs[i]);
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
		if (r.events < n)
			lost += n - r.events;
		gaps += r.gaps;
		disorder += r.out_of_order;
		{
			/* from the start of the run to the last event: what this subscriber sustained */
			double rate = r.last > t0 ? (double)r.events / (r.last - t0) : 0;

			sum += rate;
			if (i == 0 || rate < min_rate)
				min_rate = rate;
		}
	}
	printf("| events, %s | %llu | %d | %.0f | %.0f | %llu | %llu | %llu |\n", what,
	       (unsigned long long)n, nsubs, min_rate, sum / nsubs, (unsigned long long)lost,
	       (unsigned long long)gaps, (unsigned long long)disorder);
	return bad || lost || gaps || disorder;
}

static int bench_events(size_t n, int nsubs)
{
	char ring[32], queue[32];
	const char *args[] = { "--ring-size", ring, "--subscriber-queue", queue, NULL };
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_status st;
	struct classfs_client_device *devs;
	char (*names)[16];
	pid_t pids[64];
	int outs[64], ready[2], bad = 0;
	uint64_t base;
	double t0;
	char ch;

	/* the ring holds the whole run, so the catch-up part replays all of it */
	snprintf(ring, sizeof(ring), "%zu", n + 16);
	snprintf(queue, sizeof(queue), "%zu", 2 * n + 16);
	if (nsubs > 64 || start_daemon(&d, false, args) < 0) {
		fprintf(stderr, "cannot start classfsd (%s)\n", classfsd_path());
		return 1;
	}
	c = classfs_client_connect(d.sock, 0);
	if (!c || classfs_client_status(c, &st) < 0 || pipe(ready) < 0)
		goto fail;
	base = st.seqnum;
	devs = make_devs(n, &names, "ev");

	/* live: subscribers follow the bulk add */
	for (int i = 0; i < nsubs; i++) {
		int p[2];

		if (pipe(p) < 0)
			goto fail;
		pids[i] = spawn_subscriber(d.sock, base + 1, base + n, ready[1], p[1]);
		close(p[1]);
		outs[i] = p[0];
	}
	for (int i = 0; i < nsubs; i++)
		if (read(ready[0], &ch, 1) != 1)
			goto fail;
	t0 = now_s();
	if (publish_all(c, devs, n) < 0)
		goto fail;
	bad |= collect(pids, outs, nsubs, n, "live during the bulk add", t0);

	/* catch-up: all n events are in the ring; each subscriber takes them from SEQNUM 1 */
	for (int i = 0; i < nsubs; i++) {
		int p[2];

		if (pipe(p) < 0)
			goto fail;
		pids[i] = spawn_subscriber(d.sock, base + 1, base + n, ready[1], p[1]);
		close(p[1]);
		outs[i] = p[0];
	}
	t0 = now_s();
	for (int i = 0; i < nsubs; i++)
		if (read(ready[0], &ch, 1) != 1)
			goto fail;
	bad |= collect(pids, outs, nsubs, n, "catch-up from the ring", t0);
	close(ready[0]);
	close(ready[1]);
	classfs_client_disconnect(c);
	free(devs);
	free(names);
	return stop_daemon(&d) < 0 || bad;
fail:
	fprintf(stderr, "events bench failed\n");
	stop_daemon(&d);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "publish"))
		return bench_publish(strtoul(argv[2], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "events"))
		return bench_events(strtoul(argv[2], NULL, 10), atoi(argv[3]));
	fprintf(stderr, "usage: bench-remote publish N | events N SUBSCRIBERS\n");
	return 2;
}
