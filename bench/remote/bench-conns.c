// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-conns - many concurrent clients of one classfsd, each subscribed
 * and publishing a device: what the daemon holds for them (threads,
 * memory) and whether every subscriber gets every event.
 *
 *   bench-conns LABEL N
 *
 * Starts classfsd (CLASSFSD, else the build tree's) on a temporary
 * socket, creates a class, then connects N clients one after the other
 * (the client library: a request connection, and its subscription's own
 * connection), each subscribing from the SEQNUM after the class's and
 * publishing one device bound to it, and no client reads its events
 * meanwhile.  Then it reads the daemon's threads and memory, and serves
 * every client until each has N ADD events (N x N in all) or 120 s
 * pass.  Raises RLIMIT_NOFILE to its hard limit (inherited by the
 * daemon) to hold them.
 * Prints one markdown table row; exit status 1 when an event was lost.
 */
#include <poll.h>
#include <stdint.h>
#include <sys/resource.h>

#include "remote-util.h"

struct sub {
	uint64_t events, gaps, out_of_order, expect;
};

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct sub *s = data;

	if (ev->action != CLASSFS_ACTION_ADD)
		return;
	if (ev->seqnum != s->expect)
		s->out_of_order++;
	s->expect = ev->seqnum + 1;
	s->events++;
}

static void on_gap(uint64_t first, uint64_t last, void *data)
{
	struct sub *s = data;

	s->gaps++;
	s->expect = last + 1;
}

int main(int argc, char **argv)
{
	const char *const args[] = { "--max-connections-per-uid", "100000", NULL };
	struct rlimit rl;
	struct classfs_client **cl;
	struct classfs_client *admin;
	struct classfs_client_status st;
	struct pollfd *pfd;
	struct sub *subs;
	struct daemon d;
	uint64_t s0, total = 0, gaps = 0, disorder = 0;
	long threads, rss, hwm;
	double t0, t_setup, t_all = -1;
	size_t n, done = 0;
	int status = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: bench-conns LABEL N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	/* two descriptors per client here and in the daemon: as many as allowed */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			fprintf(stderr, "bench-conns: RLIMIT_NOFILE: %s\n", strerror(errno));
	}
	cl = calloc(n, sizeof(*cl));
	subs = calloc(n, sizeof(*subs));
	pfd = calloc(n, sizeof(*pfd));
	if (!cl || !subs || !pfd || start_daemon(&d, false, args) < 0) {
		fprintf(stderr, "bench-conns: cannot start classfsd\n");
		return 1;
	}
	admin = classfs_client_connect(d.sock, 0);
	if (!admin || classfs_client_class_create(admin, "conns", 0) < 0 ||
	    classfs_client_status(admin, &st) < 0) {
		fprintf(stderr, "bench-conns: %s\n", admin ? classfs_client_error_message(admin) : "connect");
		stop_daemon(&d);
		return 1;
	}
	s0 = st.seqnum;
	t0 = now_s();
	for (size_t i = 0; i < n; i++) {
		char name[32];
		struct classfs_client_device dev = { .cls = "conns", .name = name,
						     .flags = CLASSFS_CLIENT_BIND };

		snprintf(name, sizeof(name), "c%zu", i);
		subs[i].expect = s0 + 1;
		cl[i] = classfs_client_connect(d.sock, 0);
		if (!cl[i] || classfs_client_subscribe(cl[i], s0 + 1, on_event, on_gap, &subs[i]) < 0 ||
		    classfs_client_device_add(cl[i], &dev) < 0) {
			fprintf(stderr, "bench-conns: client %zu: %s\n", i,
				cl[i] ? classfs_client_error_message(cl[i]) : strerror(errno));
			n = i + (cl[i] != NULL);
			status = 1;
			break;
		}
	}
	t_setup = now_s() - t0;
	threads = proc_status(d.pid, "Threads");
	rss = proc_status(d.pid, "VmRSS");
	for (size_t i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = classfs_client_fd(cl[i]), .events = POLLIN };
	while (done < n && now_s() - t0 < 120) {
		if (poll(pfd, n, 1000) <= 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (!pfd[i].revents || pfd[i].fd < 0)
				continue;
			classfs_client_dispatch(cl[i], 0);
			if (subs[i].events >= n) {
				pfd[i].fd = -1;	/* has them all */
				done++;
			}
		}
	}
	if (done == n)
		t_all = now_s() - t0;
	hwm = proc_status(d.pid, "VmHWM");
	for (size_t i = 0; i < n; i++) {
		total += subs[i].events;
		gaps += subs[i].gaps;
		disorder += subs[i].out_of_order;
		classfs_client_disconnect(cl[i]);
	}
	classfs_client_disconnect(admin);
	if (total != (uint64_t)n * n || gaps || disorder)
		status = 1;
	if (stop_daemon(&d) < 0) {
		fprintf(stderr, "bench-conns: classfsd did not exit cleanly\n");
		status = 1;
	}
	printf("| %s | %zu | %zu | %ld | %.1f | %.1f | %.2f | ", argv[1], n, 2 * n, threads,
	       rss / 1024.0, hwm / 1024.0, t_setup);
	if (t_all < 0)
		printf("not within 120 s");
	else
		printf("%.2f", t_all);
	printf(" | %llu of %llu | %llu | %llu |\n", (unsigned long long)total,
	       (unsigned long long)n * n, (unsigned long long)gaps, (unsigned long long)disorder);
	free(cl);
	free(subs);
	free(pfd);
	return status;
}
