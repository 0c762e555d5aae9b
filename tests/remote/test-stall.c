// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-stall.c - a publisher that never answers its remote attributes
 * stalls only those who wait on it: a removal of its device waits for the
 * running show() with no lock of the daemon held (other uids' requests go
 * on), and a SAVE of its device waits about one call timeout for all of
 * its attributes together, not one per attribute; so does a classfs-run
 * environment's /dev, which saves each added device for its properties.
 * A request that reaches the daemon together with one that stalls gets a
 * worker of its own.
 *
 * The figures (the slowest request of another uid while a removal waits,
 * a save's duration) are printed; the checks have margins wide enough for
 * a busy machine, far below what the stall they catch takes.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include <classfs/run.h>

#include "../harness.h"
#include "remote-util.h"
#include "../as-uid.h"

#define CALL_TIMEOUT_MS 4000
#define CALL_TIMEOUT_S (CALL_TIMEOUT_MS / 1000.0)

static const char *const timeout_args[] = { "--call-timeout", "4000", "--group", "nogroup", NULL };

static int ready_fd = -1;

/*
 * Runs only for a CALL that came while the publisher still waited for the
 * reply of its last add (a classfs-run holder saving the device at once):
 * the device is there, the publisher is ready; it never answers.
 */
static ssize_t never_answers(void *data, char *buf, size_t size)
{
	if (write(ready_fd, "r", 1) != 1)
		_exit(3);
	for (;;)
		pause();
	return -EIO;
}

/*
 * A publisher (root, a child of its own) of plain/p0 with a stored value,
 * then of stall/s0 with @nremote remote attributes r0.. and one stored
 * one: once they are added it never reads its socket again (or it is
 * stuck for good in the show() of one), so no CALL is ever answered.
 * Return: its pid, or -1.
 */
static pid_t start_silent_publisher(const char *sock, unsigned int nremote)
{
	int ready[2];
	char c;
	pid_t pid;

	if (pipe(ready) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct classfs_client_attr a[17] = { 0 };
		char names[16][8];
		struct classfs_client *p = classfs_client_connect(sock, 0);
		unsigned int n = 0;

		close(ready[0]);
		ready_fd = ready[1];
		for (; n < nremote && n < 16; n++) {
			snprintf(names[n], sizeof(names[n]), "r%u", n);
			a[n] = (struct classfs_client_attr){ .name = names[n], .mode = 0444,
							     .show = never_answers };
		}
		a[n++] = (struct classfs_client_attr){ .name = "label", .mode = 0444,
						       .value = "kept\n", .len = 5 };
		if (!p || classfs_client_device_add(p, &(struct classfs_client_device){
				.cls = "plain", .name = "p0", .attrs = &a[n - 1], .nattrs = 1 }) < 0 ||
		    classfs_client_device_add(p, &(struct classfs_client_device){
				.cls = "stall", .name = "s0", .attrs = a, .nattrs = n }) < 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

static void stop_publisher(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* ---- a removal waits for a running show() without the registry lock ---- */

struct bg {
	const char *sock;
	bool by_class;		/* CLASS_REMOVE stall, else DEVICE_REMOVE stall/s0 */
	ssize_t r;
	double start, end;
	atomic_bool done;
};

/* a read of the never-answered attribute: EIO at the call timeout */
static void *bg_read(void *arg)
{
	struct bg *b = arg;
	struct classfs_client *c = classfs_client_connect(b->sock, 0);
	char buf[64];

	b->start = now_s();
	b->r = c ? classfs_client_attr_get(c, "stall", "s0", "r0", buf, sizeof(buf)) : -ENOTCONN;
	b->end = now_s();
	classfs_client_disconnect(c);
	atomic_store(&b->done, true);
	return NULL;
}

/* the removal, which waits for that read */
static void *bg_remove(void *arg)
{
	struct bg *b = arg;
	struct classfs_client *c = classfs_client_connect(b->sock, 0);

	b->start = now_s();
	if (!c)
		b->r = -ENOTCONN;
	else if (b->by_class)
		b->r = classfs_client_class_remove(c, "stall");
	else
		b->r = classfs_client_device_remove(c, "stall", "s0");
	b->end = now_s();
	classfs_client_disconnect(c);
	atomic_store(&b->done, true);
	return NULL;
}

/* what uid 65534's loop measured (shared with its child) */
struct loop_result {
	double start, slowest;
	unsigned int rounds, failed;
	int status;		/* cfs_test_as_uid()'s */
};

struct loop_args {
	const char *sock;
	struct loop_result *res;
};

/* as uid 65534: add and remove a device of its own for 1.5 s, timing each round */
static int nobody_loop(void *data)
{
	struct loop_args *a = data;
	struct classfs_client *u = classfs_client_connect(a->sock, 0);

	if (!u)
		return 100;
	a->res->start = now_s();
	for (double t0 = now_s(); now_s() - t0 < 1.5;) {
		double t = now_s();

		if (classfs_client_device_add(u, &(struct classfs_client_device){
				.cls = "nobody", .name = "n0" }) < 0 ||
		    classfs_client_device_remove(u, "nobody", "n0") < 0)
			a->res->failed++;
		t = now_s() - t;
		if (t > a->res->slowest)
			a->res->slowest = t;
		a->res->rounds++;
	}
	classfs_client_disconnect(u);
	return 0;
}

static void *bg_nobody_loop(void *arg)
{
	struct loop_args *a = arg;

	a->res->status = cfs_test_as_uid(65534, 65534, nobody_loop, a);
	return NULL;
}

static void removal_does_not_stall(bool by_class)
{
	struct loop_result *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct bg rd = { 0 }, rm = { .by_class = by_class };
	pthread_t rt, mt, lt;
	struct loop_args la;
	struct daemon d;
	struct classfs_client *c = NULL;
	double root_slowest = 0, measured_at, added_at = 0;
	char buf[64];
	pid_t pub;

	REQUIRE(res != MAP_FAILED);
	*res = (struct loop_result){ 0 };
	REQUIRE(start_daemon(&d, false, timeout_args) == 0);
	rd.sock = rm.sock = d.sock;
	pub = start_silent_publisher(d.sock, 1);
	CHECK(pub > 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (pub <= 0 || !c)
		goto out;
	pthread_create(&rt, NULL, bg_read, &rd);
	usleep(300000);		/* the read's CALL is out */
	pthread_create(&mt, NULL, bg_remove, &rm);
	usleep(300000);		/* the removal waits for it */
	measured_at = now_s();
	/* another uid adds and removes a device of its own, round after round ... */
	la = (struct loop_args){ d.sock, res };
	pthread_create(&lt, NULL, bg_nobody_loop, &la);
	/* ... while root reads another device by name */
	for (int i = 0; i < 3; i++) {
		double t = now_s();

		CHECK_INT(classfs_client_attr_get(c, "plain", "p0", "label", buf, sizeof(buf)), 5);
		t = now_s() - t;
		if (t > root_slowest)
			root_slowest = t;
	}
	pthread_join(lt, NULL);
	CHECK_INT(res->status, 0);
	/*
	 * A device of the class being removed waits for the class to go and
	 * then makes it anew, as when the removal held the registry's lock
	 * (not EEXIST from a class the tree still holds).
	 */
	if (by_class) {
		CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
				.cls = "stall", .name = "s1" }), 0);
		added_at = now_s();
	}
	printf("  %s: root's ATTR_GET by name took at most %.3f s; uid 65534's add+remove: "
	       "%u rounds, the slowest %.3f s (call timeout %.1f s)\n",
	       by_class ? "CLASS_REMOVE" : "DEVICE_REMOVE", root_slowest, res->rounds,
	       res->slowest, CALL_TIMEOUT_S);
	pthread_join(mt, NULL);
	pthread_join(rt, NULL);
	printf("  the read ended after %.3f s (%zd), the removal after %.3f s (%zd)\n",
	       rd.end - rd.start, rd.r, rm.end - rm.start, rm.r);
	/* it all happened while the removal waited */
	CHECK(measured_at < rm.end && res->start < rm.end);
	CHECK(!by_class || added_at >= rm.end - 0.1);
	CHECK_INT(rd.r, -EIO);
	CHECK_INT(rm.r, 0);
	CHECK_INT(res->failed, 0);
	CHECK(res->rounds >= 3);
	/* the targets are 0.5 s; the stall this catches takes the call timeout (4 s) */
	CHECK(root_slowest < 1.5);
	CHECK(res->slowest < 1.5);
	/* the removal happened: gone by name, and its name is free again */
	CHECK_INT(classfs_client_attr_get(c, "stall", "s0", "label", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "stall", .name = "s0" }), 0);
	CHECK_INT(classfs_client_device_remove(c, "stall", "s0"), 0);
	if (by_class)
		CHECK_INT(classfs_client_device_remove(c, "stall", "s1"), 0);
out:
	classfs_client_disconnect(c);
	stop_publisher(pub);
	CHECK_INT(stop_daemon(&d), 0);
	munmap(res, sizeof(*res));
}

TEST(device_remove_waits_unlocked)
{
	removal_does_not_stall(false);
}

TEST(class_remove_waits_unlocked)
{
	removal_does_not_stall(true);
}

/* ---- a request never waits for a worker that a stalled one took ---- */

#define RACE_ROUNDS 12

struct race {
	const char *sock;
	pthread_barrier_t *go;
	ssize_t r;
};

/* at the barrier: a read of the never-answered attribute (EIO at the call timeout) */
static void *race_read(void *arg)
{
	struct race *a = arg;
	struct classfs_client *c = classfs_client_connect(a->sock, 0);
	char buf[64];

	pthread_barrier_wait(a->go);
	a->r = c ? classfs_client_attr_get(c, "stall", "s0", "r0", buf, sizeof(buf)) : -ENOTCONN;
	classfs_client_disconnect(c);
	return NULL;
}

/*
 * Round after round, a read that stalls and a read of a stored value by
 * another
 * connection reach the daemon together, while its workers are idle or
 * stalled: the idle worker woken for one must not count for both, or the
 * second read waits the call timeout behind the first.
 */
TEST(request_finds_a_worker)
{
	struct race rd[RACE_ROUNDS];
	pthread_t t[RACE_ROUNDS];
	pthread_barrier_t go;
	struct classfs_client *c = NULL;
	double slowest = 0;
	struct daemon d;
	int started = 0;
	pid_t pub;

	REQUIRE(start_daemon(&d, false, timeout_args) == 0);
	pub = start_silent_publisher(d.sock, 1);
	CHECK(pub > 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (pub <= 0 || !c)
		goto out;
	pthread_barrier_init(&go, NULL, 2);
	for (; started < RACE_ROUNDS; started++) {
		double s;

		rd[started] = (struct race){ .sock = d.sock, .go = &go };
		if (pthread_create(&t[started], NULL, race_read, &rd[started]) != 0)
			break;
		usleep(20000);		/* connected; the workers idle again */
		pthread_barrier_wait(&go);
		s = now_s();
		CHECK_INT(classfs_client_attr_get(c, "plain", "p0", "label", (char[16]){ 0 }, 16), 5);
		s = now_s() - s;
		if (s > slowest)
			slowest = s;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(rd[i].r, -EIO);
	}
	pthread_barrier_destroy(&go);
	printf("  %d reads of a stored value, each sent with a read that stalls: the slowest took "
	       "%.3f s "
	       "(call timeout %.1f s)\n", started, slowest, CALL_TIMEOUT_S);
	CHECK_INT(started, RACE_ROUNDS);
	CHECK(slowest < CALL_TIMEOUT_S / 2);
out:
	classfs_client_disconnect(c);
	stop_publisher(pub);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- a save waits for every slow attribute together ---- */

#define SLOW_ATTRS 4

TEST(save_waits_once)
{
	struct daemon d;
	struct classfs_client *c = NULL;
	char *rec = NULL;
	size_t len = 0;
	double t;
	FILE *f;
	pid_t pub;
	int r;

	REQUIRE(start_daemon(&d, false, timeout_args) == 0);
	pub = start_silent_publisher(d.sock, SLOW_ATTRS);
	CHECK(pub > 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (pub <= 0 || !c)
		goto out;
	f = open_memstream(&rec, &len);
	REQUIRE(f != NULL);
	t = now_s();
	r = classfs_client_save(c, NULL, f);
	t = now_s() - t;
	fclose(f);
	printf("  SAVE of a device with %d never-answered remote attributes: %.3f s "
	       "(call timeout %.1f s)\n", SLOW_ATTRS, t, CALL_TIMEOUT_S);
	CHECK_INT(r, 0);
	/* one call timeout, not one per attribute (4 of them: 16 s) */
	CHECK(t < 2 * CALL_TIMEOUT_S);
	CHECK(t >= CALL_TIMEOUT_S - 0.5);	/* it did wait for them */
	/* what was answered is there, what was not is left out */
	CHECK(rec && strstr(rec, "P: /devices/virtual/stall/s0\n"));
	CHECK(rec && strstr(rec, "A: label=kept\\n\n"));
	CHECK(rec && strstr(rec, "P: /devices/virtual/plain/p0\n"));
	CHECK(rec && !strstr(rec, "A: r0="));
	/* and the daemon serves on: a value it holds, at once */
	t = now_s();
	CHECK_INT(classfs_client_attr_get(c, "plain", "p0", "label", (char[16]){ 0 }, 16), 5);
	CHECK(now_s() - t < 1.0);
out:
	free(rec);
	classfs_client_disconnect(c);
	stop_publisher(pub);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- a classfs-run environment's /dev waits once for such a device ---- */

/* inside the environment: until /dev/fast0 is there (0), at most 60 s */
static int wait_fast0(void *data)
{
	(void)data;
	for (double t0 = now_s(); now_s() - t0 < 60; usleep(5000))
		if (access("/dev/fast0", F_OK) == 0)
			return 0;
	return 1;
}

/*
 * In a private mount namespace (nothing shows on the host): an
 * environment (devices layout) whose holder saves every added device for
 * its properties; stall/s0 with 6 never-answered remote attributes comes
 * first, then fast/fast0 (240:2) from another connection.  *@delay: how
 * long /dev/fast0 took.  Return: 0, or the step that failed.
 */
static int run_env_delay(double *delay)
{
	struct classfs_run_options o = { .layout = CLASSFS_LAYOUT_DEVICES };
	struct classfs_run *run = NULL;
	struct classfs_client *c = NULL;
	pid_t pub = -1;
	int r = 1;
	double t0;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 2;
	if (classfs_run_start(&o, &run, NULL) < 0)
		return 3;
	pub = start_silent_publisher(classfs_run_socket(run), 6);
	c = classfs_client_connect(classfs_run_socket(run), 0);
	if (pub <= 0 || !c) {
		r = 4;
		goto out;
	}
	usleep(100000);		/* the holder is saving stall/s0 */
	t0 = now_s();
	if (classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "fast", .name = "fast0", .devt = makedev(240, 2) }) < 0) {
		r = 5;
		goto out;
	}
	r = classfs_run_call(run, wait_fast0, NULL) == 0 ? 0 : 6;
	*delay = now_s() - t0;
out:
	classfs_client_disconnect(c);
	stop_publisher(pub);
	if (classfs_run_stop(run) < 0 && r == 0)
		r = 7;
	return r;
}

TEST(run_dev_node_waits_once)
{
	double *delay;
	pid_t pid;
	int st;

	if (CFS_TEST_TSAN)
		SKIP_TEST("classfs-run cannot enter namespaces beside TSan's own thread");
	delay = mmap(NULL, sizeof(*delay), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	REQUIRE(delay != MAP_FAILED);
	*delay = -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(run_env_delay(delay));
	REQUIRE(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
	printf("  classfs-run, devices layout: /dev/fast0 appeared %.3f s after its add, behind a "
	       "device with 6 never-answered remote attributes (call timeout 5 s)\n", *delay);
	/* one call timeout (5 s), not one per attribute (30 s) */
	CHECK(*delay >= 0 && *delay < 12);
	CHECK(*delay > 2);	/* the holder did wait on the silent publisher */
	munmap(delay, sizeof(*delay));
}
