// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-nodes - device nodes that answer, through <classfs/run.h>: a
 * character node opens as a pty whose other end the caller holds, fstat()
 * says what the device is, an attached function answers ioctl()s with the
 * program's memory, a block node opens empty, the host's nodes and files
 * stay what they are, and bad targets and files are refused with the
 * right -errno and nothing changed.  Each program is a forked child
 * (classfs_run_call()) or this process's own thread after
 * classfs_run_enter() in a child of the test.
 *
 * Run as root, and as uid 65534 by tests/run/as-uid.sh: then, as
 * classfs-run does, the test first becomes the owner of a user namespace
 * of its own (the environment's /dev is shown to that namespace only).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <linux/input.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <classfs/run.h>

#include "../harness.h"

#define KBD "/dev/input/event3"
#define REQ_MAGIC _IOWR('x', 1, int)
#define REQ_BUSY _IOW('x', 2, int)

static const char record[] =
	"P: /devices/platform/kbd/input/input3/event3\n"
	"N: input/event3\n"
	"E: DEVNAME=/dev/input/event3\n"
	"E: MAJOR=13\nE: MINOR=67\nE: SUBSYSTEM=input\n"
	"A: dev=13:67\n\n"
	"P: /devices/platform/kbd/input/input3\nE: SUBSYSTEM=input\nA: name=test kbd\n\n"
	"P: /devices/platform/kbd\nE: SUBSYSTEM=platform\n\n"
	"P: /devices/platform/disk/block/vdz\nN: vdz\nE: DEVNAME=/dev/vdz\nE: DEVTYPE=disk\n"
	"E: MAJOR=252\nE: MINOR=0\nE: SUBSYSTEM=block\nA: dev=252:0\n\n"
	"P: /devices/platform/disk\nE: SUBSYSTEM=platform\n";

static char workdir[64], recfile[96];
static const char *records[2] = { recfile, NULL };
static bool usable;

/* not root: own a user namespace first, as classfs-run does (one thread: now) */
__attribute__((constructor)) static void setup(void)
{
	int fd;

	if (classfs_run_own_user_namespace(false, NULL) < 0)
		return;
	snprintf(workdir, sizeof(workdir), "/tmp/test-nodes.XXXXXX");
	if (!mkdtemp(workdir))
		return;
	snprintf(recfile, sizeof(recfile), "%s/kbd.umockdev", workdir);
	fd = open(recfile, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, record, sizeof(record) - 1) != (ssize_t)sizeof(record) - 1)
		return;
	close(fd);
	setenv("TMPDIR", workdir, 1);
	usable = true;
}

__attribute__((destructor)) static void teardown(void)
{
	if (recfile[0])
		unlink(recfile);
	if (workdir[0])
		rmdir(workdir);
}

static struct classfs_run *start(void)
{
	struct classfs_run_options opt = { .records = records, .layout = CLASSFS_LAYOUT_DEVICES };
	struct classfs_run_error err = { 0 };
	struct classfs_run *run = NULL;
	int r = classfs_run_start(&opt, &run, &err);

	if (r < 0)
		fprintf(stderr, "  classfs_run_start: %s (%s)\n", strerror(-r), err.message);
	return run;
}

/* ---- programs (forked children inside): exit 0 when all is as expected ---- */

static int child_pty(void *unused)
{
	char buf[16] = "";
	struct stat st;
	int fd = open(KBD, O_RDWR | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0)
		return 1;
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(13, 67) || !isatty(fd))
		return 2;
	if (write(fd, "ping", 4) != 4)
		return 3;
	/* the caller's thread answers on the other end */
	if (read(fd, buf, 4) != 4 || memcmp(buf, "pong", 4))
		return 4;
	close(fd);
	return 0;
}

/* the caller's side: read "ping" from the node's other end, answer "pong" */
static void *answer_pong(void *arg)
{
	int master = *(int *)arg;
	struct pollfd p = { .fd = master, .events = POLLIN };
	char buf[4];

	if (poll(&p, 1, 10000) == 1 && read(master, buf, 4) == 4 && !memcmp(buf, "ping", 4))
		(void)!write(master, "pong", 4);
	return NULL;
}

TEST(char_node_is_a_pty_with_the_devices_number)
{
	struct classfs_run *run;
	pthread_t t;
	int master;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
	run = start();
	REQUIRE(run);
	master = classfs_run_dev_fd(run, KBD);
	CHECK(master >= 0);
	/* through a link the same node */
	CHECK_INT(classfs_run_dev_fd(run, "/dev/char/13:67"), master);
	if (master >= 0) {
		pthread_create(&t, NULL, answer_pong, &master);
		CHECK_INT(classfs_run_call(run, child_pty, NULL), 0);
		pthread_join(t, NULL);
	}
	CHECK_INT(classfs_run_stop(run), 0);
}

static long handler(const struct classfs_ioctl *call, void *data)
{
	int v;

	/* the supervisor thread counts; the test reads after the program's calls were answered */
	__atomic_fetch_add((int *)data, 1, __ATOMIC_SEQ_CST);
	if (strcmp(call->node, KBD) != 0)
		return -EINVAL;
	if (call->request == REQ_BUSY)
		return -EBUSY;
	if (call->request != REQ_MAGIC)
		return CLASSFS_IOCTL_PASS;
	if (classfs_ioctl_read(call, call->arg, &v, sizeof(v)) < 0)
		return -EFAULT;
	v = v * 2 + 1;
	if (classfs_ioctl_write(call, call->arg, &v, sizeof(v)) < 0)
		return -EFAULT;
	return 42;
}

static int child_ioctl(void *unused)
{
	int fd = open(KBD, O_RDONLY | O_CLOEXEC), v = 20;

	if (fd < 0)
		return 1;
	if (ioctl(fd, REQ_MAGIC, &v) != 42 || v != 41)
		return 2;
	if (ioctl(fd, REQ_BUSY, &v) != -1 || errno != EBUSY)
		return 3;
	/* passed on to the pty: a terminal does not know it */
	if (ioctl(fd, _IOR('E', 0x01, int), &v) != -1 || errno != ENOTTY)
		return 4;
	/* a bad pointer is the program's EFAULT */
	if (ioctl(fd, REQ_MAGIC, (void *)8) != -1 || errno != EFAULT)
		return 5;
	/* a dup()ed descriptor is the same node */
	if (ioctl(dup(fd), REQ_MAGIC, &v) != 42 || v != 83)
		return 6;
	return 0;
}

static int child_detached(void *unused)
{
	int fd = open(KBD, O_RDONLY | O_CLOEXEC), v = 1;

	if (fd < 0)
		return 1;
	return ioctl(fd, REQ_MAGIC, &v) == -1 && errno == ENOTTY ? 0 : 2;
}

static int released;

static void release(void *data)
{
	__atomic_fetch_add(&released, 1, __ATOMIC_SEQ_CST);
}

TEST(attached_function_answers_ioctls)
{
	struct classfs_run *run;
	int calls = 0;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
	run = start();
	REQUIRE(run);
	__atomic_store_n(&released, 0, __ATOMIC_SEQ_CST);
	CHECK_INT(classfs_run_attach_ioctl(run, KBD, handler, &calls, release), 0);
	CHECK_INT(classfs_run_call(run, child_ioctl, NULL), 0);
	CHECK_INT(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 5);
	CHECK_INT(classfs_run_detach_ioctl(run, KBD), 0);
	CHECK_INT(__atomic_load_n(&released, __ATOMIC_SEQ_CST), 1);
	CHECK_INT(classfs_run_call(run, child_detached, NULL), 0);
	CHECK_INT(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 5);
	/* one attached at the end goes with the environment */
	CHECK_INT(classfs_run_attach_ioctl(run, KBD, handler, &calls, release), 0);
	CHECK_INT(classfs_run_stop(run), 0);
	CHECK_INT(__atomic_load_n(&released, __ATOMIC_SEQ_CST), 2);
}

static int child_others(void *unused)
{
	char buf[8];
	struct stat st;
	int fd;

	/* the host's /dev/null bound in stays itself */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_rdev != makedev(1, 3) || read(fd, buf, 1) != 0)
		return 1;
	close(fd);
	/* a block node opens as its (empty) contents, and says it is a block device */
	fd = open("/dev/vdz", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return 2;
	if (!S_ISBLK(st.st_mode) || st.st_rdev != makedev(252, 0) || read(fd, buf, 1) != 0)
		return 3;
	close(fd);
	/* files and directories as they are; O_PATH and O_DIRECTORY are the kernel's */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, 4) != 4 || memcmp(buf, "Name", 4))
		return 4;
	close(fd);
	fd = open(KBD, O_PATH | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return 5;
	close(fd);
	/* a missing node is ENOENT, as without the filter */
	if (open("/dev/input/event99", O_RDONLY) != -1 || errno != ENOENT)
		return 6;
	return 0;
}

/* two answers recorded for EVIOCGVERSION: each open of the node starts from the first */
static const char two_versions[] = "@DEV " KBD "\n"
				   "EVIOCGVERSION 0 01000100\n"
				   "EVIOCGVERSION 0 02000100\n";

static int version_of(int fd)
{
	int v = 0;

	return ioctl(fd, EVIOCGVERSION, &v) == 0 ? v : -1;
}

static int child_reopens(void *unused)
{
	int a = open(KBD, O_RDONLY | O_CLOEXEC), b;

	if (a < 0)
		return 1;
	if (version_of(a) != 0x10001)
		return 2;
	/* (without the new start, the next line would answer: the second) */
	b = open(KBD, O_RDONLY | O_CLOEXEC);
	if (b < 0)
		return 3;
	if (version_of(b) != 0x10001 || version_of(b) != 0x10002)
		return 4;
	close(a);
	close(b);
	return 0;
}

TEST(each_open_replays_from_the_top)
{
	struct classfs_run_error err = { 0 };
	struct classfs_run *run;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
	run = start();
	REQUIRE(run);
	CHECK_INT(classfs_run_load_data(run, CLASSFS_RECORDING_IOCTL, KBD, two_versions,
				       sizeof(two_versions) - 1, "two.ioctl", &err), 0);
	CHECK_INT(classfs_run_call(run, child_reopens, NULL), 0);
	/* and a second program, as umockdev's next client */
	CHECK_INT(classfs_run_call(run, child_reopens, NULL), 0);
	CHECK_INT(classfs_run_stop(run), 0);
}

TEST(other_files_and_block_nodes)
{
	struct classfs_run *run;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
	run = start();
	REQUIRE(run);
	CHECK_INT(classfs_run_call(run, child_others, NULL), 0);
	/* a block node has no other end */
	CHECK_INT(classfs_run_dev_fd(run, "/dev/vdz"), -ENODEV);
	CHECK_INT(classfs_run_stop(run), 0);
}

TEST(bad_targets_and_files)
{
	struct classfs_run_error err = { 0 };
	struct classfs_run *run;
	int calls = 0;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
	run = start();
	REQUIRE(run);
	CHECK_INT(classfs_run_attach_ioctl(run, "/dev/input/event99", handler, &calls, NULL),
		 -ENOENT);
	/* the host's nodes and the environment's other files are no device of its own */
	CHECK_INT(classfs_run_attach_ioctl(run, "/dev/null", handler, &calls, NULL), -ENODEV);
	CHECK_INT(classfs_run_attach_ioctl(run, "/dev/input", handler, &calls, NULL), -ENODEV);
	CHECK_INT(classfs_run_attach_ioctl(run, "input/event3", handler, &calls, NULL), -EINVAL);
	CHECK_INT(classfs_run_attach_ioctl(run, KBD, NULL, &calls, NULL), -EINVAL);
	CHECK_INT(classfs_run_load(run, CLASSFS_RECORDING_IOCTL, KBD, "/nonexistent.ioctl", &err),
		 -ENOENT);
	CHECK(strstr(err.message, "/nonexistent.ioctl") != NULL);
	CHECK_INT(classfs_run_load(run, CLASSFS_RECORDING_PCAP, KBD, recfile, &err), -EINVAL);
	CHECK_INT(classfs_run_load(run, CLASSFS_RECORDING_PCAP, "/sys/devices/platform/kbd",
				  recfile, &err), -ENODEV);
	CHECK(strstr(err.message, "no USB device") != NULL);
	CHECK_INT(classfs_run_load_data(run, CLASSFS_RECORDING_PCAP, "/sys/devices/platform/kbd",
				       "x", 1, "x", &err), -EINVAL);
	CHECK_INT(classfs_run_load(NULL, CLASSFS_RECORDING_IOCTL, KBD, recfile, &err), -EINVAL);
	CHECK_INT(classfs_run_dev_fd(run, "/dev/input/event99"), -ENOENT);
	CHECK_INT(classfs_ioctl_read(NULL, 0, NULL, 0), -EINVAL);
	/* nothing of it changed the node: it still opens as a pty */
	CHECK_INT(classfs_run_call(run, child_detached, NULL), 0);
	CHECK_INT(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 0);
	CHECK_INT(classfs_run_stop(run), 0);
}

/* this process's own thread, after classfs_run_enter() (a child of the test's) */
static int entered(struct classfs_run *run)
{
	int calls = 0, fd, v = 1;

	if (classfs_run_enter(run) < 0)
		return 10;
	if (classfs_run_attach_ioctl(run, KBD, handler, &calls, NULL) < 0)
		return 11;
	fd = open(KBD, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 12;
	if (ioctl(fd, REQ_MAGIC, &v) != 42 || v != 3 || __atomic_load_n(&calls, __ATOMIC_SEQ_CST) != 1)
		return 13;
	return 0;
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

TEST(entered_process_answers_itself)
{
	struct classfs_run *run;
	pid_t pid;
	int st;

	if (!usable)
		SKIP_TEST("no user namespace for uid %u here", (unsigned)geteuid());
#ifdef UNDER_TSAN
	/* setns() refuses a process of two threads, and TSan runs one of its own */
	SKIP_TEST("classfs_run_enter(): EINVAL beside ThreadSanitizer's own thread");
#endif
	run = start();
	REQUIRE(run);
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(entered(run));
	REQUIRE(pid > 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
	CHECK_INT(classfs_run_stop(run), 0);
}

