// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-run.c - <classfs/run.h> from a C test suite, no shell: start an
 * environment, run libudev code in it, hotplug from outside through the
 * client library, join a running daemon, refuse bad input, leave nothing;
 * another uid's event variables name no node of the environment.
 *
 * The test process first moves into a private mount namespace of its
 * own, so the joined daemon's mount never shows on the host.  Needs root,
 * fuse3 and $CLASSFSD (meson sets it); run as another uid (meson's
 * test-run-unpriv, through tests/run/as-uid.sh) the same tests run in the
 * user namespace classfs-run makes then, but those that need root
 * (joining a daemon: refused, checked; unmounting /sys inside).
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include <classfs/client.h>
#include <classfs/run.h>

#include "../harness.h"
#include "../as-uid.h"

static char workdir[64], tmpdir[80];
static bool can_run;

static bool as_root;
/* why this process may not make a user namespace; empty when it may */
static char userns_refused[512];

/*
 * A user namespace, made in a child: the kernel refuses one to a process
 * in a chroot (its root not its mount namespace's), root included, as in
 * the build chroots of distributions; a setting may refuse it to others.
 */
static void probe_userns(void)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || !WEXITSTATUS(st))
		return;
	snprintf(userns_refused, sizeof(userns_refused),
		 "uid %u may not make a user namespace here (%s)%s", (unsigned int)geteuid(),
		 strerror(WEXITSTATUS(st)),
		 as_root && WEXITSTATUS(st) == EPERM ?
		 ": a chroot? the kernel refuses one there even to root" : "");
}

/* a test of an environment as another uid than root: one needs a user namespace */
#define SKIP_UNLESS_ENVIRONMENTS()                                    \
	do {                                                          \
		if (!as_root && userns_refused[0])                    \
			SKIP_TEST("%s: classfs-run needs one", userns_refused); \
	} while (0)

__attribute__((constructor)) static void private_namespace(void)
{
	/* another uid (tests/run/as-uid.sh) runs the same tests: classfs-run makes a user namespace */
	as_root = geteuid() == 0;
	if (as_root &&
	    (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)) {
		perror("test-run: private mount namespace");
		return;
	}
	snprintf(workdir, sizeof(workdir), "/tmp/test-run.XXXXXX");
	if (!mkdtemp(workdir))
		return;
	/* classfs-run's socket directories go here, to check they are removed */
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", workdir);
	if (mkdir(tmpdir, 0700) < 0)
		return;
	setenv("TMPDIR", tmpdir, 1);
	probe_userns();
	can_run = true;
}

__attribute__((destructor)) static void remove_workdir(void)
{
	if (tmpdir[0])
		rmdir(tmpdir);
	if (workdir[0])
		rmdir(workdir);
}

static bool workdir_empty(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	bool empty = true;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

/* a record of tests/record/data: as another uid, the copy as-uid.sh staged */
static const char *rec_path(const char *name)
{
	static char buf[512];
	const char *staged = getenv("CLASSFS_TEST_RECORDS");

	if (staged && *staged)
		snprintf(buf, sizeof(buf), "%s/%s", staged, name);
	else
		snprintf(buf, sizeof(buf), "%s/tests/record/data/%s", SOURCE_ROOT, name);
	return buf;
}

/* ---- code that runs inside the environment (returns an exit status) ---- */

static int enumerate_block(void *data)
{
	struct udev *udev = udev_new();
	struct udev_enumerate *e = udev_enumerate_new(udev);
	struct udev_list_entry *it;
	int disks = 0, parts = 0, bad = 0, fd;
	char c;
	struct stat st;

	udev_enumerate_add_match_subsystem(e, "block");
	udev_enumerate_scan_devices(e);
	udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d = udev_device_new_from_syspath(udev,
								    udev_list_entry_get_name(it));
		const char *type = d ? udev_device_get_devtype(d) : NULL;

		if (type && !strcmp(type, "disk"))
			disks++;
		if (type && !strcmp(type, "partition"))
			parts++;
		if (d && !strcmp(udev_device_get_sysname(d), "sda")) {
			const char *size = udev_device_get_sysattr_value(d, "size");
			const char *serial = udev_device_get_property_value(d, "ID_SERIAL_SHORT");

			/* an attribute from /sys, a property from the udev database */
			if (!size || strcmp(size, "1953525168"))
				bad |= 1;
			if (!serial || !udev_device_get_is_initialized(d))
				bad |= 2;
			if (strcmp(udev_device_get_devnode(d) ?: "", "/dev/sda"))
				bad |= 4;
		}
		if (d)
			udev_device_unref(d);
	}
	udev_enumerate_unref(e);
	udev_unref(udev);
	if (disks < 2 || parts < 5)
		bad |= 8;
	/* the node is there, of the right number */
	if (stat("/dev/sda", &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(8, 0))
		bad |= 16;
	/*
	 * As root it opens as its (empty) recorded contents.  Another uid
	 * that does not own a user namespace (classfs_run_own_user_namespace())
	 * cannot see the environment's /dev from its supervisor: the node
	 * stays unopenable (nodev), as before nodes answered.
	 */
	fd = open("/dev/sda", O_RDONLY | O_CLOEXEC);
	if (as_root ? fd < 0 || fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) ||
		      st.st_rdev != makedev(8, 0) || read(fd, &c, 1) != 0
		    : fd >= 0 || errno != EACCES)
		bad |= 32;
	if (fd >= 0)
		close(fd);
	if (strcmp(getenv("SYSTEMD_DEVICE_VERIFY_SYSFS") ?: "", "0"))
		bad |= 64;
	return bad;
}

struct monitor_args {
	int ready_fd;			/* 'r' once the monitor listens, 'a' once it checked the add */
	const char *name;
};

/* wait for an add then a remove of args->name; 0 when both came right */
static int monitor_add_remove(void *data)
{
	struct monitor_args *a = data;
	struct udev *udev = udev_new();
	struct udev_monitor *m = udev_monitor_new_from_netlink(udev, "udev");
	bool added = false, removed = false;
	time_t end = time(NULL) + 20;
	int bad = 0;

	if (!m || udev_monitor_enable_receiving(m) < 0)
		return 100;
	if (write(a->ready_fd, "r", 1) != 1)
		return 101;
	while (!removed && time(NULL) < end) {
		struct pollfd p = { .fd = udev_monitor_get_fd(m), .events = POLLIN };
		struct udev_device *d;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		d = udev_monitor_receive_device(m);
		if (!d)
			continue;
		if (!strcmp(udev_device_get_sysname(d), a->name)) {
			const char *action = udev_device_get_action(d);
			struct stat st;

			if (!strcmp(action, "add")) {
				added = true;
				/* udev's order: the node exists when the add is heard */
				if (stat("/dev/testdev0", &st) < 0 || !S_ISCHR(st.st_mode) ||
				    st.st_rdev != makedev(240, 7)) {
					fprintf(stderr, "  add heard, /dev/testdev0: %m\n");
					bad |= 1;
				}
				if (access("/run/udev/data/c240:7", F_OK) < 0) {
					fprintf(stderr, "  add heard, /run/udev/data/c240:7: %m\n");
					bad |= 2;
				}
				/* checked: the remover may go on (else it races our stat()) */
				if (write(a->ready_fd, "a", 1) != 1)
					bad |= 32;
			} else if (!strcmp(action, "remove")) {
				removed = added;
				if (!added)
					bad |= 4;
			}
		}
		udev_device_unref(d);
	}
	udev_monitor_unref(m);
	udev_unref(udev);
	return bad | (added ? 0 : 8) | (removed ? 0 : 16);
}

/*
 * run monitor_add_remove in the environment while this process (outside)
 * adds and removes a device through @sock
 */
static void hotplug_from_outside(struct classfs_run *run, const char *sock)
{
	struct monitor_args a = { .name = "testdev0" };
	int p[2], st = -1;
	struct classfs_client *c;
	pid_t pid;
	char b;

	CHECK(pipe(p) == 0);
	a.ready_fd = p[1];
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(classfs_run_call(run, monitor_add_remove, &a));
	}
	close(p[1]);
	CHECK_INT(read(p[0], &b, 1), 1);
	CHECK_INT(b, 'r');

	c = classfs_client_connect(sock, 0);
	CHECK(c != NULL);
	if (c) {
		struct classfs_client_device dev = {
			.cls = "testclass", .name = "testdev0", .devt = makedev(240, 7),
		};

		struct pollfd pf = { .fd = p[0], .events = POLLIN };

		CHECK_INT(classfs_client_device_add(c, &dev), 0);
		CHECK_INT(poll(&pf, 1, 20000), 1);
		CHECK_INT(read(p[0], &b, 1), 1);
		CHECK_INT(b, 'a');
		CHECK_INT(classfs_client_device_remove(c, "testclass", "testdev0"), 0);
		CHECK_INT(classfs_client_class_remove(c, "testclass"), 0);
		classfs_client_disconnect(c);
	}
	close(p[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
}

/* ------------------------------------------------------------------ */

TEST(sample_libudev)
{
	struct classfs_run_options o = { .sample = true };
	struct classfs_run_error err;
	struct classfs_run *run = NULL;

	if (!can_run) {
		printf("skip: needs root\n");
		return;
	}
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(&o, &run, &err), 0);
	if (!run) {
		fprintf(stderr, "  %s\n", err.message);
		return;
	}
	CHECK_INT(classfs_run_call(run, enumerate_block, NULL), 0);
	CHECK(!strncmp(classfs_run_socket(run), tmpdir, strlen(tmpdir)));
	hotplug_from_outside(run, classfs_run_socket(run));
	CHECK_INT(classfs_run_stop(run), 0);
	CHECK(workdir_empty());
}

static int count_nodes(void *data)
{
	struct stat st;

	/* the repo's mouse recording: event1 is 13:65 */
	if (stat("/dev/input/event1", &st) < 0 || st.st_rdev != makedev(13, 65))
		return 1;
	/* the sample machine is not there */
	return stat("/dev/sda", &st) == 0 ? 2 : 0;
}

TEST(recording_devices_layout_and_spawn)
{
	const char *recs[] = { rec_path("usb-mouse.umockdev"), NULL };
	struct classfs_run_options o = { .records = recs, .layout = CLASSFS_LAYOUT_DEVICES };
	char *argv[] = { "sh", "-c",
			 "test -L /sys/class/input/event1 && test -d /sys/devices/pci0000:00 && "
			 "exit 3", NULL };
	struct classfs_run *run = NULL;
	pid_t pid;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(&o, &run, NULL), 0);
	if (!run)
		return;
	CHECK_INT(classfs_run_call(run, count_nodes, NULL), 0);
	CHECK_INT(classfs_run_spawn(run, argv, &pid), 0);
	CHECK_INT(classfs_run_wait(pid), 3);
	CHECK_INT(classfs_run_stop(run), 0);
}

/*
 * classfs_run_enter() in a forked child, as a language binding's worker
 * does it: the child itself is inside (its /sys the tree, its /dev the
 * environment's, the variables set), its parent is not.
 */
TEST(enter_from_a_forked_child)
{
	struct classfs_run *run = NULL;
	struct stat host_sys, st;
	int fds[2], status;
	pid_t pid;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(&(struct classfs_run_options){ .sample = true }, &run, NULL), 0);
	if (!run)
		return;
	CHECK(classfs_run_holder_pid(run) > 0);
	CHECK_INT(classfs_run_holder_pid(NULL), -EINVAL);
	CHECK_INT(classfs_run_enter(NULL), -EINVAL);
	REQUIRE(stat("/sys", &host_sys) == 0 && pipe(fds) == 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char ns_here[64] = "";
		int bad = 0;

		close(fds[0]);
		if (classfs_run_enter(run) < 0)
			_exit(100);
		/* the node of the sample's disk, the tree's attribute, the holder's namespace */
		if (stat("/dev/sda", &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(8, 0))
			bad |= 1;
		if (access("/sys/class/block/sda/size", R_OK) < 0)
			bad |= 2;
		if (strcmp(getenv(CLASSFS_RUN_SOCKET_ENV) ?: "", classfs_run_socket(run)) ||
		    strcmp(getenv("SYSTEMD_DEVICE_VERIFY_SYSFS") ?: "", "0"))
			bad |= 4;
		/* the parent compares (a process with no capability may not look at the holder's) */
		if (readlink("/proc/self/ns/mnt", ns_here, sizeof(ns_here) - 1) < 0 ||
		    write(fds[1], ns_here, sizeof(ns_here)) != sizeof(ns_here))
			bad |= 8;
		if (stat("/sys", &st) < 0 || st.st_dev == host_sys.st_dev)
			bad |= 16;
		_exit(bad);
	}
	close(fds[1]);
	{
		char ns_child[64] = "", ns_holder[64] = "", p[64];

		snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)classfs_run_holder_pid(run));
		CHECK(read(fds[0], ns_child, sizeof(ns_child)) == sizeof(ns_child));
		CHECK(readlink(p, ns_holder, sizeof(ns_holder) - 1) > 0);
		CHECK_STR(ns_child, ns_holder);
	}
	close(fds[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	/* the parent stayed where it was */
	CHECK(stat("/sys", &st) == 0 && st.st_dev == host_sys.st_dev);
	CHECK_INT(classfs_run_stop(run), 0);
	CHECK(workdir_empty());
}

/* ---- a caller in a user namespace of its own goes in and out ---- */

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		r = -errno;
	close(fd);
	return r;
}

static bool same_ns(const char *a, const char *b)
{
	char la[64] = "", lb[64] = "";

	return readlink(a, la, sizeof(la) - 1) > 0 && readlink(b, lb, sizeof(lb) - 1) > 0 &&
	       strcmp(la, lb) == 0;
}

/*
 * In a forked child, as a language binding's test process does it: a user
 * namespace of its own (uid and gid 65534 inside, the caller's outside:
 * not root there) with its mount and network namespaces, its capabilities
 * kept; then three environments in turn, each entered by the process
 * itself and left for its own namespaces again.  Return: a bit for each
 * step that failed, in the exit status.
 */
static int in_and_out(void)
{
	unsigned int uid = geteuid(), gid = getegid();
	struct classfs_run_error err;
	struct stat home_sys, st;
	int home_mnt, home_net, home_root, bad = 0;
	char map[64];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) < 0)
		return 1;
	snprintf(map, sizeof(map), "65534 %u 1\n", uid);
	if (write_text("/proc/self/setgroups", "deny") < 0 ||
	    write_text("/proc/self/uid_map", map) < 0)
		return 1;
	snprintf(map, sizeof(map), "65534 %u 1\n", gid);
	if (write_text("/proc/self/gid_map", map) < 0)
		return 1;
	home_mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	home_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	home_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (home_mnt < 0 || home_net < 0 || home_root < 0 || stat("/sys", &home_sys) < 0)
		return 1;
	for (int i = 0; i < 3; i++) {
		struct classfs_run *run = NULL;
		char holder_user[64];

		if (classfs_run_start(&(struct classfs_run_options){ .sample = true }, &run,
				      &err) < 0) {
			fprintf(stderr, "  environment %d: %s\n", i, err.message);
			return bad | 2;
		}
		/* in our user namespace: one below it could be entered, never left */
		snprintf(holder_user, sizeof(holder_user), "/proc/%d/ns/user",
			 (int)classfs_run_holder_pid(run));
		if (!same_ns(holder_user, "/proc/self/ns/user"))
			bad |= 4;
		if (classfs_run_enter(run) < 0) {
			bad |= 8;
		} else if (stat("/dev/sda", &st) < 0 || !S_ISBLK(st.st_mode) ||
			   st.st_rdev != makedev(8, 0) ||
			   access("/sys/class/block/sda/size", R_OK) < 0) {
			bad |= 16;
		}
		/* back home: the host's /sys again, in the same user namespace */
		if (setns(home_net, CLONE_NEWNET) < 0 || setns(home_mnt, CLONE_NEWNS) < 0 ||
		    fchdir(home_root) < 0 || chroot(".") < 0)
			bad |= 32;
		if (stat("/sys", &st) < 0 || st.st_dev != home_sys.st_dev)
			bad |= 64;
		if (classfs_run_stop(run) < 0)
			bad |= 128;
		if (bad)
			return bad;
	}
	return 0;
}

TEST(in_and_out_from_a_user_namespace_of_the_callers)
{
	int status;
	pid_t pid;

	if (!can_run)
		return;
	if (userns_refused[0])
		SKIP_TEST("%s", userns_refused);	/* it makes one, as root too */
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(in_and_out());
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), 0);
	CHECK(workdir_empty());
}

static int die_by_signal(void *data)
{
	raise(SIGKILL);
	return 0;
}

TEST(exit_statuses)
{
	char *missing[] = { "/nonexistent/program", NULL };
	struct classfs_run *run = NULL;
	pid_t pid;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(NULL, &run, NULL), 0);
	if (!run)
		return;
	CHECK_INT(classfs_run_call(run, die_by_signal, NULL), 128 + SIGKILL);
	CHECK_INT(classfs_run_spawn(run, missing, &pid), 0);
	CHECK_INT(classfs_run_wait(pid), 127);
	CHECK_INT(classfs_run_call(NULL, die_by_signal, NULL), -EINVAL);
	CHECK_INT(classfs_run_spawn(run, NULL, &pid), -EINVAL);
	CHECK_INT(classfs_run_stop(run), 0);
	CHECK_INT(classfs_run_stop(NULL), 0);
	CHECK(workdir_empty());
}

TEST(bad_input)
{
	const char *missing[] = { "/nonexistent/record.umockdev", NULL };
	char bad_path[128];
	const char *bad[] = { bad_path, NULL };
	struct classfs_run_options o = { .records = missing };
	struct classfs_run_error err;
	struct classfs_run *run = (struct classfs_run *)&o;
	FILE *f;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(&o, &run, &err), -ENOENT);
	CHECK(run == NULL);
	CHECK(strstr(err.message, "/nonexistent/record.umockdev") != NULL);

	snprintf(bad_path, sizeof(bad_path), "%s/bad.umockdev", workdir);
	f = fopen(bad_path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("P: /devices/virtual/foo/bar\nQ: nonsense\n", f);
		fclose(f);
	}
	o.records = bad;
	CHECK_INT(classfs_run_start(&o, &run, &err), -EINVAL);
	CHECK(strstr(err.message, "bad.umockdev:2") != NULL);
	unlink(bad_path);

	o.records = NULL;
	o.layout = (enum classfs_layout)7;
	CHECK_INT(classfs_run_start(&o, &run, &err), -EINVAL);
	o.layout = CLASSFS_LAYOUT_CLASS;
	o.socket = "/nonexistent/socket";
	CHECK(classfs_run_start(&o, &run, &err) < 0);
	CHECK(strstr(err.message, "/nonexistent/socket") != NULL);
	o.socket = NULL;
	o.daemon = "/nonexistent/classfsd";
	CHECK_INT(classfs_run_start(&o, &run, &err), -ENOENT);
	CHECK(strstr(err.message, "classfsd") != NULL);
	CHECK_INT(classfs_run_start(NULL, NULL, &err), -EINVAL);
	CHECK(workdir_empty());
}

TEST(join_running_daemon)
{
	char sock[128], mnt[128];
	struct classfs_run_options o = { .socket = sock };
	struct classfs_run_error err;
	struct classfs_run *run = NULL;
	pid_t d;
	int st;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	if (!as_root) {
		/* a daemon it joins could serve no /dev in the user namespace */
		snprintf(sock, sizeof(sock), "%s/join.sock", workdir);
		CHECK_INT(classfs_run_start(&o, &run, &err), -EPERM);
		CHECK(strstr(err.message, "needs root") != NULL);
		CHECK(run == NULL);
		printf("note: joining a daemon needs root: refused as uid %u\n", geteuid());
		return;
	}
	snprintf(sock, sizeof(sock), "%s/join.sock", workdir);
	snprintf(mnt, sizeof(mnt), "%s/join.mnt", workdir);
	CHECK(mkdir(mnt, 0755) == 0);
	d = fork();
	if (d == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execl(getenv("CLASSFSD"), "classfsd", "--socket", sock, "--mount", mnt, "--sample",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && access(sock, F_OK) < 0; i++)
		usleep(20000);
	CHECK_INT(classfs_run_start(&o, &run, &err), 0);
	if (run) {
		CHECK_STR(classfs_run_socket(run), sock);
		CHECK_INT(classfs_run_call(run, enumerate_block, NULL), 0);
		/* events of a daemon outside the namespace: re-broadcast inside */
		hotplug_from_outside(run, sock);
		CHECK_INT(classfs_run_stop(run), 0);
	} else {
		fprintf(stderr, "  %s\n", err.message);
	}
	kill(d, SIGTERM);
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rmdir(mnt);
}

/* ---- another uid's event variables name no node ---- */

/* a daemon as the attacker met it: --group nogroup, allow_other, the sample */
static pid_t start_shared_daemon(const char *sock, const char *mnt)
{
	pid_t d = fork();

	if (d == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execl(getenv("CLASSFSD"), "classfsd", "--socket", sock, "--mount", mnt, "--sample",
		      "--group", "nogroup", "--mount-options", "allow_other", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && access(sock, F_OK) < 0; i++)
		usleep(20000);
	return d;
}

/*
 * As uid 65534: its own devices, with events whose variables name root's
 * sda (8:0) and root's drm connector card0-eDP-1.  A device in the sample's
 * class `block` with no number: an add saying DEVNAME=sda MAJOR=1 MINOR=3,
 * a remove saying DEVNAME=sda MAJOR=8 MINOR=0; a move saying DEVPATH_OLD
 * is root's connector; a numbered device of its own named sda (refused:
 * a number is root's to give).  Last, the
 * marker mark/m0 (its database file tells the events were handled).
 * Return: 0, or bits of the calls that failed.
 */
static int attack_as_nobody(void *data)
{
	const char *sock = data;
	static const char *const add_vars[] = { "DEVNAME=sda", "MAJOR=1", "MINOR=3",
						"DEVMODE=0666", NULL };
	static const char *const rm_vars[] = { "DEVNAME=sda", "MAJOR=8", "MINOR=0", NULL };
	static const char *const mv_vars[] = { "DEVPATH_OLD=/class/drm/card0-eDP-1", NULL };
	struct classfs_client *c;
	int bad = 0, r;

	c = classfs_client_connect(sock, 0);
	if (!c)
		return 0x80;
	bad |= (classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "block", .name = "evil" }) != 0) << 0;
	bad |= (classfs_client_trigger(c, "block", "evil", CLASSFS_ACTION_ADD, add_vars) != 0) << 1;
	bad |= (classfs_client_trigger(c, "block", "evil", CLASSFS_ACTION_REMOVE, rm_vars) != 0) << 2;
	bad |= (classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "drm", .name = "evil2" }) != 0) << 3;
	/* classfsd refuses a caller's DEVPATH_OLD today; were it let through, nothing moves */
	r = classfs_client_trigger(c, "drm", "evil2", CLASSFS_ACTION_MOVE, mv_vars);
	bad |= (r != 0 && r != -EINVAL) << 4;
	/* a number, and so a /dev node, is root's to give (docs/security.md, "Squatting") */
	bad |= (classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "mine", .name = "sda", .devt = makedev(1, 3) }) != -EPERM) << 5;
	bad |= (classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "mark", .name = "m0" }) != 0) << 6;
	classfs_client_disconnect(c);
	return bad;
}

/* inside: once the marker is in, root's nodes and database files are as they were */
static int roots_entries_intact(void *data)
{
	char link[64];
	struct stat st;
	ssize_t n;
	int bad = 0;

	for (int i = 0; i < 500 && access("/run/udev/data/+mark:m0", F_OK) < 0; i++)
		usleep(20000);
	if (access("/run/udev/data/+mark:m0", F_OK) < 0)
		return 0x80;
	if (stat("/dev/sda", &st) < 0 || !S_ISBLK(st.st_mode) || st.st_rdev != makedev(8, 0)) {
		fprintf(stderr, "  /dev/sda is not root's block 8:0 any more\n");
		bad |= 1;
	}
	if (access("/run/udev/data/b8:0", F_OK) < 0) {
		fprintf(stderr, "  /run/udev/data/b8:0: %m\n");
		bad |= 2;
	}
	n = readlink("/dev/block/8:0", link, sizeof(link) - 1);
	if (n < 0 || (link[n] = '\0', strcmp(link, "../sda"))) {
		fprintf(stderr, "  /dev/block/8:0 does not lead to sda\n");
		bad |= 4;
	}
	if (access("/run/udev/data/+drm:card0-eDP-1", F_OK) < 0 ||
	    access("/run/udev/data/+drm:evil2", F_OK) < 0) {
		fprintf(stderr, "  the move renamed root's connector's database file\n");
		bad |= 8;
	}
	/* its own unnumbered device got no node of any name */
	if (lstat("/dev/evil", &st) == 0 || access("/run/udev/data/b1:3", F_OK) == 0) {
		fprintf(stderr, "  a node or database file for the variables of evil's add\n");
		bad |= 16;
	}
	return bad;
}

TEST(client_variables_name_no_node)
{
	char sock[128], mnt[128];
	struct classfs_run_options o = { .socket = sock };
	struct classfs_run_error err;
	struct classfs_run *run = NULL;
	pid_t d;
	int st;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	if (!as_root) {
		printf("skip: a daemon of root's shared with uid 65534 needs root\n");
		return;
	}
	/* uid 65534 reaches the socket */
	CHECK(chmod(workdir, 0755) == 0);
	snprintf(sock, sizeof(sock), "%s/shared.sock", workdir);
	snprintf(mnt, sizeof(mnt), "%s/shared.mnt", workdir);
	CHECK(mkdir(mnt, 0755) == 0);
	d = start_shared_daemon(sock, mnt);
	CHECK_INT(classfs_run_start(&o, &run, &err), 0);
	if (run) {
		CHECK_INT(cfs_test_as_uid(65534, 65534, attack_as_nobody, sock), 0);
		CHECK_INT(classfs_run_call(run, roots_entries_intact, NULL), 0);
		CHECK_INT(classfs_run_stop(run), 0);
	} else {
		fprintf(stderr, "  %s\n", err.message);
	}
	kill(d, SIGTERM);
	CHECK(waitpid(d, &st, 0) == d && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	rmdir(mnt);
	chmod(workdir, 0700);
}

/* ---- nothing runs unless /sys is the tree ---- */

static int unmount_sys(void *data)
{
	return umount2("/sys", MNT_DETACH) < 0 ? 1 : 0;
}

static int reached(void *data)
{
	return 42;
}

/* /sys gone from under the environment: no child runs (it would see the host's) */
TEST(refused_when_sys_is_not_the_tree)
{
	char *argv[] = { "true", NULL };
	struct classfs_run_options o = { .sample = true };
	struct classfs_run *run = NULL;
	pid_t pid = 0;

	if (!can_run)
		return;
	SKIP_UNLESS_ENVIRONMENTS();
	CHECK_INT(classfs_run_start(&o, &run, NULL), 0);
	if (!run)
		return;
	CHECK_INT(classfs_run_call(run, reached, NULL), 42);
	if (!as_root) {
		/* a program inside has no capability to unmount /sys with */
		CHECK_INT(classfs_run_call(run, unmount_sys, NULL), 1);
		CHECK_INT(classfs_run_stop(run), 0);
		printf("note: /sys cannot be unmounted from inside as uid %u\n", geteuid());
		return;
	}
	CHECK_INT(classfs_run_call(run, unmount_sys, NULL), 0);
	CHECK_INT(classfs_run_call(run, reached, NULL), -EXDEV);
	CHECK_INT(classfs_run_spawn(run, argv, &pid), -EXDEV);
	/* the daemon's mount went with /sys: the holder may report that on stop */
	classfs_run_stop(run);
	CHECK(workdir_empty());
}
