// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-bounds.c - what a client makes classfsd hold stays within the
 * documented bounds: REPLAYs sent on connections that never read them
 * (the replay ring full of one uid's long-named events), and a REPLAY
 * whose events leave the ring while its client does not read.  The
 * requests are encoded by hand (the protocol's encoder is linked in), so
 * the test decides what it reads and when.  Each test starts a daemon of
 * its own.
 */
#include <poll.h>

#include "../harness.h"
#include "remote-util.h"
#include "../as-uid.h"
#include "protocol.h"

/* under a sanitizer the figures are printed, the bounds not checked (remote-util.h) */
#define SANITIZED CFS_TEST_SANITIZED

/* a daemon's peak RSS growth that the defaults bound (KiB) */
#define RSS_BOUND_KIB (128L * 1024L)

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int raw_send(int fd, struct cfs_buf *b)
{
	cfs_buf_seal(b);
	if (b->err)
		return b->err;
	return send(fd, b->p, b->len, MSG_NOSIGNAL) == (ssize_t)b->len ? 0 : -EIO;
}

/* the next message into @buf, decoded into @m; 0, -ETIMEDOUT or -errno */
static int raw_recv(int fd, uint8_t *buf, size_t size, struct cfs_msg *m, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = recv(fd, buf, size, 0);
	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET;
	return cfs_msg_decode(buf, (size_t)n, m);
}

static int raw_replay(int fd, uint32_t serial, uint64_t first, uint64_t last)
{
	struct cfs_buf b;
	int r;

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLAY, serial, 0);
	cfs_buf_u64(&b, CFS_T_SEQNUM, first);
	cfs_buf_u64(&b, CFS_T_SEQNUM_LAST, last);
	r = raw_send(fd, &b);
	cfs_buf_free(&b);
	return r;
}

/* the daemon's last SEQNUM (STATUS), 0 on failure */
static uint64_t raw_head(int fd)
{
	static uint8_t buf[65536];
	struct cfs_buf b;
	struct cfs_msg m;
	uint64_t head = 0;

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 77, 0);
	if (raw_send(fd, &b) == 0 && raw_recv(fd, buf, sizeof(buf), &m, 10000) == 0 &&
	    m.serial == 77 && m.error == 0)
		head = m.seqnum;
	cfs_buf_free(&b);
	return head;
}

/*
 * What a REPLAY's messages told: each SEQNUM must come once, in order,
 * as an event or inside a part reported gone from the ring.
 */
struct replay_check {
	uint64_t next;		/* the SEQNUM due next */
	uint64_t events, missed, count;
	unsigned int breaks;	/* a SEQNUM out of order, twice, or skipped unreported */
	bool done;
	int error;
};

static void replay_check_msg(struct replay_check *rc, const struct cfs_msg *m)
{
	const uint8_t *v;
	size_t off = 0, len;

	if (!(m->flags & CFS_F_MORE)) {
		rc->done = true;
		rc->error = m->error;
		rc->count = m->count;
		return;
	}
	if (CFS_HAS(m, CFS_T_SEQNUM_LAST)) {
		rc->breaks += m->seqnum != rc->next || m->seqnum_last < m->seqnum;
		rc->missed += m->seqnum_last - m->seqnum + 1;
		rc->next = m->seqnum_last + 1;
	}
	while (cfs_msg_next(m, &off, CFS_T_EVENT, &v, &len)) {
		struct cfs_event ev;

		if (cfs_event_decode(v, len, &ev) < 0) {
			rc->breaks++;
			continue;
		}
		rc->breaks += ev.seqnum != rc->next;
		rc->next = ev.seqnum + 1;
		rc->events++;
	}
}

/*
 * Read @n REPLAYs of serials 1..@n from @fd, each of @first..@last:
 * 0 when each told every SEQNUM once, in order, and its COUNT.
 */
static int read_replays(int fd, unsigned int n, uint64_t first, uint64_t last, uint64_t *events)
{
	static uint8_t buf[1 << 16];
	int bad = 0;

	*events = 0;
	for (unsigned int serial = 1; serial <= n && !bad; serial++) {
		struct replay_check rc = { .next = first };

		while (!rc.done) {
			struct cfs_msg m;

			if (raw_recv(fd, buf, sizeof(buf), &m, 30000) < 0 || m.op != CFS_OP_REPLY ||
			    m.serial != serial)
				return 1;
			replay_check_msg(&rc, &m);
		}
		bad |= rc.error != 0 ? 2 : 0;
		bad |= rc.breaks || rc.next != last + 1 ? 4 : 0;
		bad |= rc.count != rc.events ? 8 : 0;
		*events = rc.events;
	}
	return bad;
}

/* ---- a uid fills the ring with long-named events and never reads its REPLAYs ---- */

enum { CONNS = 4, REPLAYS = 8, FILL_EVENTS = 120000 };

struct attack {
	const char *sock;
	int ready[2];		/* attacker -> test: the REPLAYs are sent (8 bytes: the head) */
	int go[2];		/* test -> attacker: now read one connection */
};

/* BATCHes of DEVICE_ADD and DEVICE_REMOVE of one 250-byte name: ~820-byte events */
static int fill_ring(int fd, unsigned int nevents)
{
	static uint8_t buf[65536];
	char cls[244], name[251];
	struct cfs_buf b;
	int bad = 0;

	memset(cls, 'c', sizeof(cls) - 1);
	cls[sizeof(cls) - 1] = '\0';
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	cfs_buf_init(&b);
	for (unsigned int sent = 0; sent < nevents && !bad;) {
		struct cfs_msg m;

		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 1, 0);
		while (b.len < 60000 && sent < nevents) {
			size_t mark = cfs_buf_sub_begin(&b);

			cfs_buf_hdr(&b, sent % 2 ? CFS_OP_DEVICE_REMOVE : CFS_OP_DEVICE_ADD, 0, 0);
			cfs_buf_str(&b, CFS_T_CLASS, cls);
			cfs_buf_str(&b, CFS_T_NAME, name);
			cfs_buf_sub_end(&b, mark);
			sent++;
		}
		if (raw_send(fd, &b) < 0 || raw_recv(fd, buf, sizeof(buf), &m, 30000) < 0 ||
		    m.error != 0)
			bad = 1;
	}
	cfs_buf_free(&b);
	return bad;
}

static int attack_run(void *data)
{
	struct attack *a = data;
	int ctl = raw_connect(a->sock), fds[CONNS], bad = 0;
	uint64_t head, events;
	char go;

	if (ctl < 0)
		return 100;
	if (fill_ring(ctl, FILL_EVENTS))
		return 101;
	head = raw_head(ctl);
	for (int i = 0; i < CONNS; i++) {
		fds[i] = raw_connect(a->sock);
		for (uint32_t s = 1; s <= REPLAYS && fds[i] >= 0; s++)
			bad |= raw_replay(fds[i], s, 1, UINT64_MAX) < 0;
	}
	if (bad || write(a->ready[1], &head, sizeof(head)) != sizeof(head))
		return 102;
	if (read(a->go[0], &go, 1) != 1)
		return 103;
	/* a reader that reads at last gets its 8 REPLAYs whole */
	bad = read_replays(fds[0], REPLAYS, 1, head, &events);
	if (!bad && events < 50000)
		bad = 16;
	for (int i = 0; i < CONNS; i++)
		close(fds[i]);
	close(ctl);
	return bad;
}

static void replay_count(const struct classfs_uevent *ev, void *data)
{
	struct replay_check *rc = data;

	if (rc->events == 0)
		rc->next = ev->seqnum;
	rc->breaks += ev->seqnum != rc->next;
	rc->next = ev->seqnum + 1;
	rc->events++;
}

TEST(unread_replays_bounded)
{
	const char *const args[] = { "--group", "nogroup", NULL };
	struct attack a = { 0 };
	struct classfs_client *c = NULL;
	long rss0, hwm;
	uint64_t head = 0;
	struct daemon d;
	pid_t pid;
	int st;

	REQUIRE(pipe2(a.ready, O_CLOEXEC) == 0 && pipe2(a.go, O_CLOEXEC) == 0);
	CHECK_INT(start_daemon(&d, false, args), 0);
	a.sock = d.sock;
	rss0 = proc_status(d.pid, "VmRSS");
	pid = fork();
	if (pid == 0)
		_exit(cfs_test_as_uid(65534, 65534, attack_run, &a));
	close(a.ready[1]);
	close(a.go[0]);
	if (poll(&(struct pollfd){ .fd = a.ready[0], .events = POLLIN }, 1, 120000) == 1 &&
	    read(a.ready[0], &head, sizeof(head)) == sizeof(head)) {
		/* 32 REPLAYs of the whole ring, nobody reading: give them time to grow */
		usleep(1500 * 1000);
		hwm = proc_status(d.pid, "VmHWM");
		fprintf(stderr, "# daemon RSS %ld KiB at start, peak %ld KiB (+%ld MiB) with %d unread "
			"REPLAYs of the whole ring (head %llu)\n", rss0, hwm, (hwm - rss0) / 1024,
			CONNS * REPLAYS, (unsigned long long)head);
		CHECK(SANITIZED || hwm - rss0 < RSS_BOUND_KIB);
		/* another reader meanwhile: every event the ring holds, in order, once */
		c = classfs_client_connect(d.sock, 0);
		CHECK(c != NULL);
		if (c) {
			struct replay_check rc = { 0 };
			int n = classfs_client_replay(c, 1, head, replay_count, &rc);

			CHECK(n >= 50000);
			CHECK_INT((uint64_t)n, rc.events);
			CHECK_INT(rc.breaks, 0);
			CHECK_INT(rc.next, head + 1);
		}
	}
	CHECK(head > 0);
	CHECK(write(a.go[1], "g", 1) == 1);
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_INT(pid > 0 ? WEXITSTATUS(st) : -1, 0);
	classfs_client_disconnect(c);
	close(a.ready[0]);
	close(a.go[1]);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- the events of an unread REPLAY leave the ring: told, as a gap, in order ---- */

TEST(replay_outlived_by_the_ring)
{
	/* small messages and ring: the socket and the bound hold a part of the ring only */
	const char *const args[] = { "--ring-size", "16384", "--max-message", "4096", NULL };
	enum { N = 16384 };
	static struct classfs_client_device devs[2 * N];
	static char names[2 * N][16];
	struct classfs_client *pub;
	uint64_t head0;
	struct daemon d;
	uint8_t buf[4096];
	int fd;

	CHECK_INT(start_daemon(&d, false, args), 0);
	pub = classfs_client_connect(d.sock, 0);
	fd = raw_connect(d.sock);
	CHECK(pub && fd >= 0);
	if (!pub || fd < 0)
		goto out;
	for (int i = 0; i < 2 * N; i++) {
		snprintf(names[i], sizeof(names[i]), "g%d", i);
		devs[i] = (struct classfs_client_device){ .cls = "gone", .name = names[i] };
	}
	CHECK_INT(classfs_client_device_add_batch(pub, devs, N, NULL), 0);
	head0 = raw_head(fd);
	CHECK(head0 >= N);
	/* the REPLAY of the whole ring, unread, while as many new events overwrite it */
	CHECK_INT(raw_replay(fd, 1, 1, head0), 0);
	usleep(200 * 1000);
	CHECK_INT(classfs_client_device_add_batch(pub, devs + N, N, NULL), 0);
	{
		struct replay_check rc = { .next = 1 };

		while (!rc.done) {
			struct cfs_msg m;

			if (raw_recv(fd, buf, sizeof(buf), &m, 10000) < 0 || m.serial != 1)
				break;
			replay_check_msg(&rc, &m);
		}
		fprintf(stderr, "# replay of 1-%llu: %llu events, %llu told gone\n",
			(unsigned long long)head0, (unsigned long long)rc.events,
			(unsigned long long)rc.missed);
		CHECK(rc.done);
		CHECK_INT(rc.error, 0);
		CHECK_INT(rc.breaks, 0);
		CHECK_INT(rc.next, head0 + 1);
		CHECK_INT(rc.count, rc.events);
		/* what the socket and the bound held was sent; the rest was overwritten */
		CHECK(rc.events > 0 && rc.missed > N / 2);
	}
out:
	if (fd >= 0)
		close(fd);
	classfs_client_disconnect(pub);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- a flood of events for a slow uevent helper: a bounded queue, a prompt SIGTERM ---- */

TEST(uevent_helper_flood)
{
	char dir[] = "/tmp/classfsd-flood-XXXXXX", script[128], pids[128];
	const char *args[] = { "--uevent-helper", script, NULL };
	long rss0, hwm;
	struct daemon d;
	double t0, took = -1;
	int fd, st, gone = 0, alive = 0;
	char line[32];
	FILE *f;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(script, sizeof(script), "%s/hotplug", dir);
	snprintf(pids, sizeof(pids), "%s/pids", dir);
	f = fopen(script, "w");
	REQUIRE(f != NULL);
	/* 8 of them hold every helper slot until the stop kills them */
	fprintf(f, "#!/bin/sh\necho $$ >> %s\nexec sleep 60\n", pids);
	fclose(f);
	chmod(script, 0755);
	CHECK_INT(start_daemon(&d, false, args), 0);
	rss0 = proc_status(d.pid, "VmRSS");
	fd = raw_connect(d.sock);
	CHECK(fd >= 0);
	/* ~1 KiB per queued helper run: 150 MiB of them without a bound */
	if (fd >= 0)
		CHECK_INT(fill_ring(fd, 150000), 0);
	hwm = proc_status(d.pid, "VmHWM");
	fprintf(stderr, "# daemon RSS %ld KiB at start, peak %ld KiB (+%ld MiB) after 150,000 events "
		"for a helper that never ends\n", rss0, hwm, (hwm - rss0) / 1024);
	CHECK(SANITIZED || hwm - rss0 < RSS_BOUND_KIB);
	if (fd >= 0)
		close(fd);
	/* SIGTERM stops it promptly: the queue dropped, the 8 running helpers killed */
	t0 = now_s();
	kill(d.pid, SIGTERM);
	while (now_s() - t0 < 20) {
		if (waitpid(d.pid, &st, WNOHANG) == d.pid) {
			took = now_s() - t0;
			break;
		}
		usleep(1000);
	}
	if (took < 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, &st, 0);
	}
	d.pid = 0;
	fprintf(stderr, "# SIGTERM to exit: %.3f s\n", took);
	CHECK(took >= 0 && took < 3.0);
	CHECK(took >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* none of the helpers is left */
	f = fopen(pids, "r");
	while (f && fgets(line, sizeof(line), f)) {
		pid_t pid = (pid_t)atoi(line);

		if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
			gone++;
		else
			alive++;
	}
	if (f)
		fclose(f);
	CHECK(gone >= 1);
	CHECK_INT(alive, 0);
	CHECK_INT(stop_daemon(&d), 0);
	unlink(pids);
	unlink(script);
	rmdir(dir);
}
