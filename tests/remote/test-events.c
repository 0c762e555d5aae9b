// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-events.c - classfsd's events: order and replay, a client killed
 * with -9 (its 10,000 bound devices removed deepest first), a slow and a
 * fast subscriber (the slow one's gap filled from the ring), one lagging
 * past the ring (told of exactly what it holds no more), the opt-in udev
 * netlink broadcast, the uevent helper.  Each test starts a daemon of its own.
 */
#include <linux/netlink.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "../harness.h"
#include "remote-util.h"

#include <classfs/wire.h>

static const char *const quick_args[] = { "--call-timeout", "1000", NULL };

TEST(events_in_order)
{
	struct daemon d;
	struct classfs_client *c, *s;
	struct classfs_client_status st;
	struct evlog l = { 0 };

	CHECK_INT(start_daemon(&d, false, quick_args), 0);
	c = classfs_client_connect(d.sock, 0);
	s = classfs_client_connect(d.sock, 0);
	CHECK(c && s);
	if (!c || !s)
		goto out;
	CHECK_INT(classfs_client_subscribe(s, 0, evlog_add, evlog_gap, &l), 0);
	CHECK_INT(classfs_client_subscribe(s, 0, evlog_add, evlog_gap, &l), -EBUSY);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "net", .name = "eth0" }), 0);
	CHECK_INT(classfs_client_trigger(c, "net", "eth0", CLASSFS_ACTION_CHANGE, NULL), 0);
	CHECK_INT(classfs_client_device_remove(c, "net", "eth0"), 0);
	CHECK_INT(classfs_client_status(c, &st), 0);
	dispatch_until(s, &l, st.seqnum, 5);
	CHECK_INT(l.n, 3);
	if (l.n == 3) {
		CHECK_INT(l.action[0], CLASSFS_ACTION_ADD);
		CHECK_INT(l.action[1], CLASSFS_ACTION_CHANGE);
		CHECK_INT(l.action[2], CLASSFS_ACTION_REMOVE);
		CHECK_STR(l.devpath[0], "/class/net/eth0");
		CHECK(l.seq[0] + 1 == l.seq[1] && l.seq[1] + 1 == l.seq[2]);
	}
	CHECK_INT(l.gaps, 0);
	/* replay what we saw */
	{
		struct evlog r = { 0 };

		if (l.n == 3)
			CHECK_INT(classfs_client_replay(c, l.seq[0], l.seq[2], evlog_add, &r), 3);
		CHECK_INT(r.n, 3);
		CHECK_INT(classfs_client_replay(c, 1000000, 1000010, evlog_add, &r), -ENOENT);
		CHECK_INT(classfs_client_replay(c, 5, 4, evlog_add, &r), -EINVAL);
		evlog_free(&r);
	}
	/* subscribing from an old SEQNUM replays it first */
	{
		struct evlog r = { 0 };
		struct classfs_client *s2 = classfs_client_connect(d.sock, 0);

		CHECK(s2 != NULL);
		if (s2 && l.n == 3) {
			CHECK_INT(classfs_client_subscribe(s2, l.seq[0], evlog_add, NULL, &r), 0);
			dispatch_until(s2, &r, l.seq[2], 5);
			CHECK_INT(r.n, 3);
		}
		classfs_client_disconnect(s2);
		evlog_free(&r);
	}
	classfs_client_disconnect(s);
	classfs_client_disconnect(c);
out:
	evlog_free(&l);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- binding: a client killed with -9 leaves nothing behind ---- */

#define NPARENTS 1000
#define NCHILD 9	/* 10,000 devices in all */

TEST(kill9_bound_cleanup)
{
	const char *const args[] = { "--call-timeout", "1000", "--subscriber-queue", "65536", NULL };
	struct daemon d;
	struct classfs_client *s, *c;
	struct classfs_client_status st0, st;
	struct evlog l = { 0 };
	int ready[2];
	pid_t pid;
	char ch;

	CHECK_INT(start_daemon(&d, true, args), 0);
	s = classfs_client_connect(d.sock, 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(s && c && pipe(ready) == 0);
	if (!s || !c)
		goto out;
	CHECK_INT(classfs_client_status(c, &st0), 0);
	CHECK_INT(classfs_client_subscribe(s, 0, evlog_add, evlog_gap, &l), 0);
	pid = fork();
	if (pid == 0) {
		struct classfs_client *p = classfs_client_connect(d.sock, 0);
		struct classfs_client_device *devs = calloc(NPARENTS * (NCHILD + 1), sizeof(*devs));
		char (*names)[16] = calloc(NPARENTS * (NCHILD + 1), 16);
		size_t n = 0, done = 0;

		if (!p || !devs || !names ||
		    classfs_client_class_create(p, "bound", CLASSFS_CLIENT_BIND) < 0)
			_exit(1);
		for (int i = 0; i < NPARENTS; i++) {
			size_t pi = n;

			snprintf(names[n], 16, "b%d", i);
			devs[n] = (struct classfs_client_device){ .cls = "bound", .name = names[n],
				.flags = CLASSFS_CLIENT_BIND };
			n++;
			for (int k = 0; k < NCHILD; k++) {
				snprintf(names[n], 16, "b%dc%d", i, k);
				devs[n] = (struct classfs_client_device){ .cls = "bound",
					.name = names[n], .parent = names[pi],
					.flags = CLASSFS_CLIENT_BIND };
				n++;
			}
		}
		if (classfs_client_device_add_batch(p, devs, n, &done) < 0 || done != n)
			_exit(2);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		pause();	/* until killed */
		_exit(0);
	}
	close(ready[1]);
	/* keep the subscription drained while the child publishes */
	for (double t0 = now_s(); now_s() - t0 < 60;) {
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };

		classfs_client_dispatch(s, 0);
		if (poll(&pfd, 1, 10) > 0)
			break;
	}
	CHECK_INT(read(ready[0], &ch, 1), 1);
	close(ready[0]);
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/class/bound/b999/b999c8", d.mnt);
		CHECK(access(path, F_OK) == 0);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* the daemon notices the dead connection and removes all of it */
	for (double t0 = now_s(); now_s() - t0 < 60;) {
		CHECK_INT(classfs_client_status(c, &st), 0);
		dispatch_until(s, &l, st.seqnum, 1);
		if (st.seqnum >= st0.seqnum + 2 * NPARENTS * (NCHILD + 1) &&
		    atomic_load(&l.last) >= st.seqnum &&
		    classfs_client_class_create(c, "bound", 0) == 0)
			break;
		usleep(50000);
	}
	CHECK_INT(l.gaps, 0);
	CHECK_INT(l.n, 2 * NPARENTS * (NCHILD + 1));
	{
		size_t adds = 0, removes = 0, bad_order = 0;
		char **removed = calloc(l.n, sizeof(*removed));
		size_t nremoved = 0;

		for (size_t i = 0; i < l.n; i++) {
			if (l.action[i] == CLASSFS_ACTION_ADD)
				adds++;
			if (l.action[i] != CLASSFS_ACTION_REMOVE)
				continue;
			removes++;
			/* deepest first: no device goes after its parent */
			for (size_t k = nremoved; k-- > 0 && nremoved - k < 20;)
				if (!strncmp(l.devpath[i], removed[k], strlen(removed[k])) &&
				    l.devpath[i][strlen(removed[k])] == '/')
					bad_order++;
			removed[nremoved++] = l.devpath[i];
		}
		free(removed);
		CHECK_INT(adds, NPARENTS * (NCHILD + 1));
		CHECK_INT(removes, NPARENTS * (NCHILD + 1));
		CHECK_INT(bad_order, 0);
		for (size_t i = 1; i < l.n; i++)
			if (l.seq[i] != l.seq[i - 1] + 1) {
				CHECK(l.seq[i] == l.seq[i - 1] + 1);
				break;
			}
	}
	/* nothing left: the class was bound too, and the name is free again */
	CHECK_INT(classfs_client_attr_get(c, "bound", "b0", "uevent", (char[64]){ 0 }, 64), -ENOENT);
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/class/bound/b0", d.mnt);
		CHECK(access(path, F_OK) < 0);
	}
	classfs_client_disconnect(s);
	classfs_client_disconnect(c);
out:
	evlog_free(&l);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- a slow and a fast subscriber ---- */

struct fast_ctx {
	struct classfs_client *c;
	struct evlog l;
	atomic_bool stop;
};

static void *fast_main(void *arg)
{
	struct fast_ctx *f = arg;

	while (!atomic_load(&f->stop))
		classfs_client_dispatch(f->c, 20);
	return NULL;
}

/* how often @l's SEQNUMs, from @first on, are not the next one (0: all, in order) */
static size_t seq_breaks(const struct evlog *l, uint64_t first)
{
	size_t breaks = 0;

	for (size_t i = 0; i < l->n; i++)
		breaks += l->seq[i] != first + i;
	return breaks;
}

TEST(slow_and_fast_subscribers)
{
	const char *const args[] = { "--subscriber-queue", "1000", "--ring-size", "65536", NULL };
	struct daemon d;
	struct classfs_client *pub, *slow;
	struct classfs_client_status st0, st;
	struct fast_ctx fast = { 0 };
	struct evlog sl = { 0 }, rl = { 0 };
	pthread_t th;
	enum { BATCHES = 40, PER = 250 };	/* 10,000 events */
	static struct classfs_client_device devs[PER];
	static char names[PER][16];

	CHECK_INT(start_daemon(&d, false, args), 0);
	pub = classfs_client_connect(d.sock, 0);
	slow = classfs_client_connect(d.sock, 0);
	fast.c = classfs_client_connect(d.sock, 0);
	CHECK(pub && slow && fast.c);
	if (!pub || !slow || !fast.c)
		goto out;
	CHECK_INT(classfs_client_status(pub, &st0), 0);
	CHECK_INT(classfs_client_subscribe(fast.c, 0, evlog_add, evlog_gap, &fast.l), 0);
	CHECK_INT(classfs_client_subscribe(slow, 0, evlog_add, evlog_gap, &sl), 0);
	pthread_create(&th, NULL, fast_main, &fast);
	/* the slow one does not read at all while this runs: the tree and the fast one go on */
	for (int b = 0; b < BATCHES; b++) {
		for (int i = 0; i < PER; i++) {
			snprintf(names[i], sizeof(names[i]), "s%d", b * PER + i);
			devs[i] = (struct classfs_client_device){ .cls = "ev", .name = names[i] };
		}
		CHECK_INT(classfs_client_device_add_batch(pub, devs, PER, NULL), 0);
		CHECK_INT(classfs_client_status(pub, &st), 0);
		for (double t0 = now_s(); atomic_load(&fast.l.last) < st.seqnum && now_s() - t0 < 10;)
			usleep(1000);
	}
	atomic_store(&fast.stop, true);
	pthread_join(th, NULL);
	CHECK_INT(fast.l.gaps, 0);
	CHECK_INT(fast.l.n, BATCHES * PER);
	CHECK(fast.l.n && fast.l.seq[fast.l.n - 1] == st.seqnum);

	/*
	 * Now the slow one reads: the daemon told it of a gap (it lagged past
	 * its queue), which the library filled from the ring: every event,
	 * once, in SEQNUM order, and its gap callback never called.
	 */
	CHECK_INT(classfs_client_trigger(pub, "ev", "s0", CLASSFS_ACTION_CHANGE, NULL), 0);
	dispatch_until(slow, &sl, st.seqnum + 1, 10);
	CHECK_INT(sl.gaps, 0);
	CHECK_INT(sl.n, BATCHES * PER + 1);
	CHECK_INT(seq_breaks(&sl, st0.seqnum + 1), 0);
	/* and it follows live events again */
	CHECK_INT(classfs_client_trigger(pub, "ev", "s1", CLASSFS_ACTION_CHANGE, NULL), 0);
	dispatch_until(slow, &sl, st.seqnum + 2, 10);
	CHECK(sl.n && sl.seq[sl.n - 1] == st.seqnum + 2);
	CHECK_INT(sl.gaps, 0);
	/* the ring still holds them all: a replay of the whole run gives as many */
	CHECK_INT(classfs_client_replay(slow, st0.seqnum + 1, st.seqnum + 2, evlog_add, &rl),
		  BATCHES * PER + 2);
out:
	classfs_client_disconnect(pub);
	classfs_client_disconnect(slow);
	classfs_client_disconnect(fast.c);
	evlog_free(&fast.l);
	evlog_free(&sl);
	evlog_free(&rl);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- a subscriber that lags past the ring: told of exactly what it holds no more ---- */

/* events and gaps as one sequence: each must start where the last ended */
struct cover {
	uint64_t next;		/* the SEQNUM owed next; 0 before the first */
	size_t events, gaps, breaks;
	uint64_t missed, last_event;
};

static void cover_event(const struct classfs_uevent *ev, void *data)
{
	struct cover *c = data;

	c->breaks += c->next && ev->seqnum != c->next;
	c->next = ev->seqnum + 1;
	c->last_event = ev->seqnum;
	c->events++;
}

static void cover_gap(uint64_t first, uint64_t last, void *data)
{
	struct cover *c = data;

	c->breaks += (c->next && first != c->next) || last < first;
	c->next = last + 1;
	c->missed += last - first + 1;
	c->gaps++;
}

TEST(lagging_past_the_ring)
{
	/*
	 * The lag is made certain, not hoped for.  The slow subscriber reads
	 * nothing until the publisher is done, so all it can hold by then is
	 * what its socket holds: classfsd fixes a subscriber's SO_SNDBUF at 4
	 * messages (the kernel doubles that), and a send goes over it by at
	 * most one message, so the socket holds at most 9 x --max-message
	 * bytes.  Every event takes at least its 24-byte head and its
	 * DEVPATH=/class/lag/rI variable.  Past that many events the daemon's
	 * cursor for the subscriber stops, whatever the machine's speed; a
	 * ring's worth more after it, the ring holds none of what the cursor
	 * points at, and the subscriber must be told of a gap.
	 */
	enum {
		MSG = 4096,	/* --max-message: the smallest, the fewest events */
		RING = 1024,
		EVENT_MIN = 24 + sizeof("DEVPATH=/class/lag/r0"),
		SOCKET_HOLDS = 9 * MSG / EVENT_MIN,
		N = SOCKET_HOLDS + RING + 1,
	};
	const char *const args[] = { "--subscriber-queue", "100", "--ring-size", "1024",
				     "--max-message", "4096", NULL };
	static struct classfs_client_device devs[N];
	static char names[N][16];
	struct classfs_client_status st0, st;
	struct classfs_client *pub, *slow, *fast;
	struct cover cv = { 0 }, fv = { 0 };
	struct daemon d;

	CHECK_INT(start_daemon(&d, false, args), 0);
	pub = classfs_client_connect(d.sock, 0);
	slow = classfs_client_connect(d.sock, 0);
	fast = classfs_client_connect(d.sock, 0);
	CHECK(pub && slow && fast);
	if (!pub || !slow || !fast)
		goto out;
	CHECK_INT(classfs_client_status(pub, &st0), 0);
	CHECK_INT(classfs_client_subscribe(slow, 0, cover_event, cover_gap, &cv), 0);
	CHECK_INT(classfs_client_subscribe(fast, 0, cover_event, cover_gap, &fv), 0);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "r%d", i);
		devs[i] = (struct classfs_client_device){ .cls = "lag", .name = names[i] };
	}
	/* the events are in the ring when the batch is answered */
	CHECK_INT(classfs_client_device_add_batch(pub, devs, N, NULL), 0);
	CHECK_INT(classfs_client_status(pub, &st), 0);
	CHECK_INT(st.seqnum - st0.seqnum, N);
	/* a reader that drains its socket is told of every SEQNUM once too */
	for (double t0 = now_s(); fv.next <= st.seqnum && now_s() - t0 < 30;)
		classfs_client_dispatch(fast, 100);
	CHECK_INT(fv.next, st.seqnum + 1);
	CHECK_INT(fv.breaks, 0);
	/* only now does the slow one read: what it missed is past the ring */
	for (double t0 = now_s(); cv.next <= st.seqnum && now_s() - t0 < 30;)
		classfs_client_dispatch(slow, 100);
	/* every SEQNUM once: delivered or told missed, in order */
	CHECK_INT(cv.breaks, 0);
	CHECK_INT(cv.next, st.seqnum + 1);
	CHECK_INT(cv.events + cv.missed, N);
	CHECK(cv.gaps >= 1);
	CHECK(cv.missed >= N - SOCKET_HOLDS - RING);
	/* the ring's part is delivered (the client replays a gap from it), the newest last */
	CHECK(cv.events >= RING);
	CHECK_INT(cv.last_event, st.seqnum);
out:
	classfs_client_disconnect(pub);
	classfs_client_disconnect(slow);
	classfs_client_disconnect(fast);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- --netlink: udev-format events on group 2, in a private network namespace ---- */

TEST(netlink_opt_in)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		const char *const args[] = { "--netlink", NULL };
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 2 };
		struct classfs_wire_event *we = calloc(1, sizeof(*we));
		struct classfs_client *c;
		struct daemon d;
		char buf[8192];
		int fd, bad = 0, seen = 0;

		/* everything below lives in this namespace only */
		if (unshare(CLONE_NEWNET) < 0)
			_exit(100);
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(101);
		if (start_daemon(&d, false, args) < 0)
			_exit(102);
		c = classfs_client_connect(d.sock, 0);
		bad |= !c;
		bad |= c && classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "nl", .name = "nl0", .devt = makedev(10, 1) }) != 0;
		for (double t0 = now_s(); !bad && !seen && now_s() - t0 < 5;) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			ssize_t n;

			if (poll(&pfd, 1, 100) <= 0)
				continue;
			n = recv(fd, buf, sizeof(buf), 0);
			if (n > 0 && classfs_uevent_decode_udev(buf, (size_t)n, we) == 0 &&
			    !strcmp(we->ev.devpath, "/class/nl/nl0") &&
			    we->ev.action == CLASSFS_ACTION_ADD)
				seen = 1;
		}
		classfs_client_disconnect(c);
		bad |= stop_daemon(&d) != 0;
		/* drain the REMOVE, then: without --netlink, nothing is broadcast */
		while (poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 200) > 0)
			if (recv(fd, buf, sizeof(buf), 0) < 0)
				break;
		if (start_daemon(&d, false, NULL) < 0)
			_exit(103);
		c = classfs_client_connect(d.sock, 0);
		bad |= !c || classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "nl", .name = "nl1" }) != 0;
		if (poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 300) > 0)
			bad |= 4;
		classfs_client_disconnect(c);
		bad |= stop_daemon(&d) != 0;
		free(we);
		_exit(bad ? bad : seen ? 0 : 2);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
}

/* ---- --uevent-helper: runs for every event with its variables ---- */

/*
 * A daemon running a helper whose script is @body (a printf format: each
 * %s is the output file), one device of class @cls added: what the
 * helper wrote once @done(buf) holds (5 s at most), into @buf.
 */
static void helper_output(const char *tag, const char *body, const char *cls,
			  bool (*done)(const char *buf), char *buf, size_t size)
{
	char script[128], out[128];
	const char *args[] = { "--uevent-helper", script, NULL };
	struct daemon d;
	struct classfs_client *c;
	FILE *f;

	buf[0] = '\0';
	snprintf(out, sizeof(out), "/tmp/classfsd-helper-%s-%d.out", tag, (int)getpid());
	snprintf(script, sizeof(script), "/tmp/classfsd-helper-%s-%d.sh", tag, (int)getpid());
	f = fopen(script, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, body, out, out, out);
	fclose(f);
	chmod(script, 0755);
	unlink(out);
	CHECK_INT(start_daemon(&d, false, args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (c)
		CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = cls, .name = "dev0" }), 0);
	for (double t0 = now_s(); now_s() - t0 < 5;) {
		if (read_file(out, buf, size) >= 0 && done(buf))
			break;
		buf[0] = '\0';
		usleep(20000);
	}
	classfs_client_disconnect(c);
	CHECK_INT(stop_daemon(&d), 0);
	unlink(script);
	unlink(out);
}

static bool saw_add(const char *buf)
{
	return strstr(buf, "hp add /class/hp/dev0") != NULL;
}

TEST(uevent_helper)
{
	char buf[4096];

	helper_output("add", "#!/bin/sh\necho \"$1 $ACTION $DEVPATH\" >> %s\n", "hp", saw_add, buf,
		      sizeof(buf));
	CHECK(saw_add(buf));
}

static bool written(const char *buf)
{
	(void)buf;
	return true;
}

/*
 * The helper starts as a fresh program: classfsd blocks SIGTERM, SIGINT
 * and SIGHUP (its signalfd) and ignores SIGPIPE, none of which the helper
 * inherits.
 */
TEST(uevent_helper_signals)
{
	char buf[4096];

	/* the shell's builtins read its own status: a child it forks would see it mid-fork */
	helper_output("sig", "#!/bin/sh\nwhile read -r k v; do case $k in SigBlk:|SigIgn:) "
		      "echo \"$k $v\";; esac; done < /proc/self/status > %s.tmp\nmv %s.tmp %s\n",
		      "hs", written, buf, sizeof(buf));
	fprintf(stderr, "# the helper's signal state:\n%s", buf);
	CHECK(strstr(buf, "SigBlk: 0000000000000000\n") != NULL);
	CHECK(strstr(buf, "SigIgn: 0000000000000000\n") != NULL);
}
