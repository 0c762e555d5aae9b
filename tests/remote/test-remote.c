// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-remote.c - classfsd and the client library: publishing, ownership,
 * attributes through the socket and the mount, remote show()/store(),
 * restart and republish, records and renderings (events: test-events.c).  Each test starts
 * a daemon of its own (temporary socket and mount) and stops it.
 */
#include <dirent.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "../harness.h"
#include "remote-util.h"
#include "../as-uid.h"

static const char *const quick_args[] = { "--call-timeout", "1000", NULL };

struct nobody_checks {
	const char *sock;
	int (*checks)(struct classfs_client *u);
};

/* as uid 65534 (cfs_test_as_uid()): connect, run the checks; 100 when it cannot connect */
static int nobody_run(void *data)
{
	const struct nobody_checks *n = data;
	struct classfs_client *u = classfs_client_connect(n->sock, 0);
	int bad;

	if (!u)
		return 100;
	bad = n->checks(u);
	classfs_client_disconnect(u);
	return bad;
}

/*
 * @checks run by uid 65534 on a connection of its own, in a child; its
 * return (a bit per failed check) is ours: 0 when all held, 100 when
 * the child could not connect, CFS_AS_UID_CANNOT when it could not
 * become uid 65534, -1 when it died.
 */
static int as_nobody(const char *sock, int (*checks)(struct classfs_client *u))
{
	struct nobody_checks n = { sock, checks };

	return cfs_test_as_uid(65534, 65534, nobody_run, &n);
}

/* ---- publishing and the basic operations ---- */

TEST(basic_publish)
{
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_status st;
	char buf[4096], path[512];
	ssize_t n;
	static const struct classfs_client_attr attrs[] = {
		{ .name = "size", .mode = 0444, .value = "2048\n", .len = 5 },
		{ .name = "mode", .mode = 0644, .value = "auto\n", .len = 5 },
		{ .name = "power/control", .mode = 0644, .value = "on\n", .len = 3 },
	};
	struct classfs_client_device dev = {
		.cls = "widget", .name = "w0", .devt = makedev(240, 0), .devtype = "gizmo",
		.attrs = attrs, .nattrs = 3,
	};

	CHECK_INT(start_daemon(&d, true, quick_args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(classfs_client_status(c, &st), 0);
	CHECK_STR(st.mountpoint, d.mnt);
	CHECK_INT(st.layout, CLASSFS_LAYOUT_CLASS);
	CHECK_INT(st.version, 1);

	CHECK_INT(classfs_client_device_add(c, &dev), 0);
	/* the class was created on the way; a second add of the name is refused */
	CHECK_INT(classfs_client_device_add(c, &dev), -EEXIST);
	CHECK(strstr(classfs_client_error_message(c), "exists") != NULL);
	CHECK_INT(classfs_client_class_create(c, "widget", 0), -EEXIST);

	n = classfs_client_attr_get(c, "widget", "w0", "size", buf, sizeof(buf));
	CHECK_INT(n, 5);
	CHECK(n == 5 && !memcmp(buf, "2048\n", 5));
	n = classfs_client_attr_get(c, "widget", "w0", "dev", buf, sizeof(buf));
	CHECK(n == 6 && !memcmp(buf, "240:0\n", 6));
	n = classfs_client_attr_get(c, "widget", "w0", "power/control", buf, sizeof(buf));
	CHECK(n == 3 && !memcmp(buf, "on\n", 3));
	n = classfs_client_attr_get(c, "widget", "w0", "uevent", buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "DEVTYPE=gizmo\n") != NULL);
	CHECK(strstr(buf, "MAJOR=240\n") != NULL);

	/* the mount shows the same */
	snprintf(path, sizeof(path), "%s/class/widget/w0/size", d.mnt);
	CHECK_INT(read_file(path, buf, sizeof(buf)), 5);
	CHECK_STR(buf, "2048\n");

	/* modes hold through the socket as through the filesystem */
	CHECK_INT(classfs_client_attr_set(c, "widget", "w0", "size", "1\n", 2), -EACCES);
	CHECK_INT(classfs_client_attr_set(c, "widget", "w0", "mode", "manual\n", 7), 0);
	snprintf(path, sizeof(path), "%s/class/widget/w0/mode", d.mnt);
	CHECK_INT(read_file(path, buf, sizeof(buf)), 7);
	CHECK_STR(buf, "manual\n");
	CHECK_INT(classfs_client_attr_get(c, "widget", "w0", "nope", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_client_attr_get(c, "widget", "w9", "size", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_client_attr_get(c, "widget", "w0", "size", buf, 2), -ERANGE);

	/* nesting, a physical parent, rename, trigger, remove */
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.name = "pci0", .bus = "pci" }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "widget", .name = "w0p1", .parent = "w0", .phys = "pci0" }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "widget", .name = "wx", .parent = "none" }), -ENOENT);
	snprintf(path, sizeof(path), "%s/class/widget/w0/w0p1/device", d.mnt);
	CHECK(readlink(path, buf, sizeof(buf)) > 0);
	CHECK_INT(classfs_client_device_rename(c, "widget", "w0p1", "w0p2"), 0);
	snprintf(path, sizeof(path), "%s/class/widget/w0/w0p2", d.mnt);
	CHECK(access(path, F_OK) == 0);
	CHECK_INT(classfs_client_trigger(c, "widget", "w0p2", CLASSFS_ACTION_CHANGE,
					 (const char *const[]){ "FOO=bar", NULL }), 0);
	CHECK_INT(classfs_client_trigger(c, "widget", "w0p2", CLASSFS_ACTION_CHANGE,
					 (const char *const[]){ "no-equals", NULL }), -EINVAL);
	CHECK_INT(classfs_client_device_remove(c, "widget", "w0"), 0);
	/* its child went with it */
	CHECK_INT(classfs_client_attr_get(c, "widget", "w0p2", "dev", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_client_device_remove(c, "widget", "w0p2"), -ENOENT);
	CHECK_INT(classfs_client_device_remove(c, NULL, "pci0"), 0);
	CHECK_INT(classfs_client_class_remove(c, "widget"), 0);
	CHECK_INT(classfs_client_class_remove(c, "widget"), -ENOENT);
	snprintf(path, sizeof(path), "%s/class/widget", d.mnt);
	CHECK(access(path, F_OK) < 0);
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* two processes publish into one daemon */
TEST(two_clients)
{
	struct daemon d;
	struct classfs_client *c;
	char buf[64];
	pid_t pids[2];

	CHECK_INT(start_daemon(&d, true, quick_args), 0);
	for (int i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct classfs_client *cc = classfs_client_connect(d.sock, 0);
			int bad = !cc;

			for (int k = 0; cc && k < 100; k++) {
				char name[32];

				snprintf(name, sizeof(name), "p%dd%d", i, k);
				bad |= classfs_client_device_add(cc, &(struct classfs_client_device){
					.cls = "shared", .name = name,
					.attrs = &(struct classfs_client_attr){ .name = "who",
						.mode = 0444, .value = name, .len = strlen(name) },
					.nattrs = 1 }) != 0;
			}
			classfs_client_disconnect(cc);
			_exit(bad);
		}
	}
	for (int i = 0; i < 2; i++) {
		int st;

		CHECK(waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(classfs_client_attr_get(c, "shared", "p0d99", "who", buf, sizeof(buf)), 5);
		CHECK_INT(classfs_client_attr_get(c, "shared", "p1d0", "who", buf, sizeof(buf)), 4);
		CHECK(!memcmp(buf, "p1d0", 4));
	}
	/* unbound: they stay after their publishers left */
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/class/shared/p1d57/who", d.mnt);
		CHECK_INT(read_file(path, buf, sizeof(buf)), 5);
	}
	classfs_client_disconnect(c);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- ownership ---- */

/* what uid 65534 may do to root's ttyS0 (not change it) and of its own; bit per failed check */
static int tty_unowned(struct classfs_client *u)
{
	int bad = 0;

	bad |= (classfs_client_device_remove(u, "tty", "ttyS0") != -EPERM) << 0;
	bad |= (classfs_client_attr_set(u, "tty", "ttyS0", "baud", "1\n", 2) != -EPERM) << 1;
	bad |= (classfs_client_device_rename(u, "tty", "ttyS0", "x") != -EPERM) << 2;
	bad |= (classfs_client_class_remove(u, "tty") != -EPERM) << 3;
	bad |= (classfs_client_trigger(u, "tty", "ttyS0", CLASSFS_ACTION_CHANGE, NULL) !=
		-EPERM) << 4;
	bad |= !strstr(classfs_client_error_message(u), "65534") << 5;
	/* reading is allowed, and it may publish its own */
	bad |= (classfs_client_attr_get(u, "tty", "ttyS0", "baud", (char[8]){ 0 }, 8) != 5) << 6;
	bad |= (classfs_client_device_add(u, &(struct classfs_client_device){
		.cls = "tty", .name = "ttyUSB0" }) != 0) << 7;
	bad |= (classfs_client_device_remove(u, "tty", "ttyUSB0") != 0) << 8;
	bad |= (classfs_client_device_add(u, &(struct classfs_client_device){
		.cls = "tty", .name = "ttyUSB1" }) != 0) << 9;
	return bad;
}

TEST(non_owner_refused)
{
	const char *const args[] = { "--group", "nogroup", NULL };
	struct daemon d;
	struct classfs_client *c;
	struct stat sb;

	CHECK_INT(start_daemon(&d, false, args), 0);
	CHECK(stat(d.sock, &sb) == 0 && (sb.st_mode & 0777) == 0660);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "tty", .name = "ttyS0",
		.attrs = &(struct classfs_client_attr){ .name = "baud", .mode = 0666,
			.value = "9600\n", .len = 5 }, .nattrs = 1 }), 0);
	CHECK_INT(as_nobody(d.sock, tty_unowned), 0);
	/* root may remove what uid 65534 made; ttyS0 is unchanged */
	CHECK_INT(classfs_client_device_remove(c, "tty", "ttyUSB1"), 0);
	{
		char buf[16];

		CHECK_INT(classfs_client_attr_get(c, "tty", "ttyS0", "baud", buf, sizeof(buf)), 5);
		CHECK(!memcmp(buf, "9600\n", 5));
	}
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* what uid 65534 may not make in ttyS0 (root's); bit per failed check */
static int attr_add_unowned(struct classfs_client *u)
{
	char buf[8];
	int bad = 0;

	bad |= (classfs_client_attr_add(u, "tty", "ttyS0", "x", "1", 1, 0) != -EPERM) << 0;
	bad |= !strstr(classfs_client_error_message(u), "65534") << 1;
	bad |= (classfs_client_attr_get(u, "tty", "ttyS0", "x", buf, 8) != -ENOENT) << 2;
	/* its own device: values yes, links no */
	bad |= (classfs_client_device_add(u, &(struct classfs_client_device){
		.cls = "tty", .name = "ttyN" }) != 0) << 3;
	bad |= (classfs_client_attr_add(u, "tty", "ttyN", "x", "1", 1, 0) != 0) << 4;
	bad |= (classfs_client_attr_get(u, "tty", "ttyN", "x", buf, 8) != 1) << 5;
	bad |= (classfs_client_attr_add(u, "tty", "ttyN", "l", "x", 1, CLASSFS_CLIENT_ADD_LINK) !=
		-EPERM) << 6;
	return bad;
}

TEST(attr_add)
{
	const char *const args[] = { "--group", "nogroup", NULL };
	struct daemon d;
	struct classfs_client *c;
	char buf[64], path[512];

	CHECK_INT(start_daemon(&d, true, args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "tty", .name = "ttyS0",
		.attrs = &(struct classfs_client_attr){ .name = "ro", .mode = 0444,
			.value = "1\n", .len = 2 }, .nattrs = 1 }), 0);
	/* a missing attribute is made, and shows through the socket and the mount */
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "speed", "9600\n", 5, 0), 0);
	snprintf(path, sizeof(path), "%s/class/tty/ttyS0/speed", d.mnt);
	CHECK_INT(read_file(path, buf, sizeof(buf)), 5);
	CHECK_STR(buf, "9600\n");
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "q/depth", "4", 1, 0), 0);
	CHECK_INT(classfs_client_attr_get(c, "tty", "ttyS0", "q/depth", buf, sizeof(buf)), 1);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "blob", "\0\1", 2,
					  CLASSFS_CLIENT_ADD_BINARY), 0);
	CHECK_INT(classfs_client_attr_get(c, "tty", "ttyS0", "blob", buf, sizeof(buf)), 2);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "port", "../ttyS1", 8,
					  CLASSFS_CLIENT_ADD_LINK), 0);
	snprintf(path, sizeof(path), "%s/class/tty/ttyS0/port", d.mnt);
	CHECK_INT(readlink(path, buf, sizeof(buf)), 8);
	/* an existing one is written, its mode holding; a link's path must be free */
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "speed", "5\n", 2, 0), 0);
	CHECK_INT(classfs_client_attr_get(c, "tty", "ttyS0", "speed", buf, sizeof(buf)), 2);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "ro", "0\n", 2, 0), -EACCES);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "speed", "x", 1,
					  CLASSFS_CLIENT_ADD_LINK), -EEXIST);
	/* bad paths and flags: refused, nothing made */
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "../x", "1", 1, 0), -EINVAL);
	CHECK(strstr(classfs_client_error_message(c), "path") != NULL);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "subsystem/x", "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "n/1/2/3/4/5/6/7/8", "1", 1, 0),
		  -EINVAL);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "speed/x", "1", 1, 0), -ENOTDIR);
	CHECK_INT(classfs_client_attr_add(c, "tty", "ttyS0", "y", "1", 1, 3), -EINVAL);
	CHECK_INT(classfs_client_attr_add(c, "tty", "nope", "y", "1", 1, 0), -ENOENT);
	snprintf(path, sizeof(path), "%s/class/tty/ttyS0/n", d.mnt);
	CHECK(access(path, F_OK) < 0);
	CHECK_INT(as_nobody(d.sock, attr_add_unowned), 0);
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- remote show()/store() ---- */

struct temp_attr {
	char value[64];
	int stores;
};

static ssize_t temp_show(void *data, char *buf, size_t size)
{
	struct temp_attr *t = data;

	return snprintf(buf, size, "%s", t->value);
}

static ssize_t temp_store(void *data, const char *buf, size_t count)
{
	struct temp_attr *t = data;

	if (count >= sizeof(t->value) || !strncmp(buf, "bad", 3))
		return -EINVAL;
	memcpy(t->value, buf, count);
	t->value[count] = '\0';
	t->stores++;
	return (ssize_t)count;
}

static ssize_t fail_show(void *data, char *buf, size_t size)
{
	return -ENXIO;
}

static void *blocked_reader(void *arg)
{
	char buf[64];

	read_file(arg, buf, sizeof(buf));	/* EIO after the call timeout */
	return NULL;
}

TEST(remote_show_store)
{
	struct daemon d;
	struct classfs_client *c;
	char buf[128], path[256];
	int ready[2];
	pid_t pid;
	double t0;
	ssize_t n;

	CHECK_INT(start_daemon(&d, true, quick_args), 0);
	CHECK(pipe(ready) == 0);
	pid = fork();
	if (pid == 0) {
		struct temp_attr t = { .value = "42\n" };
		struct classfs_client_attr attrs[] = {
			{ .name = "temp", .mode = 0644, .show = temp_show, .store = temp_store, .data = &t },
			{ .name = "broken", .mode = 0444, .show = fail_show },
			{ .name = "label", .mode = 0444, .value = "x\n", .len = 2 },
		};
		struct classfs_client *p = classfs_client_connect(d.sock, 0);

		if (!p || classfs_client_device_add(p, &(struct classfs_client_device){
			.cls = "hwmon", .name = "hwmon0", .attrs = attrs, .nattrs = 3,
			.flags = CLASSFS_CLIENT_BIND }) < 0)
			_exit(1);
		/* reading its own remote attribute through the daemon works too */
		if (classfs_client_attr_get(p, "hwmon", "hwmon0", "temp", buf, sizeof(buf)) != 3)
			_exit(2);
		if (write(ready[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			classfs_client_dispatch(p, -1);
	}
	close(ready[1]);
	CHECK_INT(read(ready[0], buf, 1), 1);
	close(ready[0]);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c)
		goto out;
	n = classfs_client_attr_get(c, "hwmon", "hwmon0", "temp", buf, sizeof(buf));
	CHECK(n == 3 && !memcmp(buf, "42\n", 3));
	snprintf(path, sizeof(path), "%s/class/hwmon/hwmon0/temp", d.mnt);
	CHECK_INT(read_file(path, buf, sizeof(buf)), 3);
	CHECK_STR(buf, "42\n");
	/* store() runs in the driver, and show() then tells its new value */
	CHECK_INT(classfs_client_attr_set(c, "hwmon", "hwmon0", "temp", "17\n", 3), 0);
	n = classfs_client_attr_get(c, "hwmon", "hwmon0", "temp", buf, sizeof(buf));
	CHECK(n == 3 && !memcmp(buf, "17\n", 3));
	CHECK_INT(classfs_client_attr_set(c, "hwmon", "hwmon0", "temp", "bad\n", 4), -EINVAL);
	{
		int fd = open(path, O_WRONLY);

		CHECK(fd >= 0);
		CHECK(write(fd, "23\n", 3) == 3);
		CHECK(write(fd, "bad", 3) < 0 && errno == EINVAL);
		close(fd);
	}
	CHECK_INT(read_file(path, buf, sizeof(buf)), 3);
	CHECK_STR(buf, "23\n");
	/* renamed by another connection (root): the driver still serves it */
	CHECK_INT(classfs_client_device_rename(c, "hwmon", "hwmon0", "hwmon9"), 0);
	n = classfs_client_attr_get(c, "hwmon", "hwmon9", "temp", buf, sizeof(buf));
	CHECK(n == 3 && !memcmp(buf, "23\n", 3));
	CHECK_INT(classfs_client_device_rename(c, "hwmon", "hwmon9", "hwmon0"), 0);
	/* the driver's own errors come through; a 0444 one is not writable */
	CHECK_INT(classfs_client_attr_get(c, "hwmon", "hwmon0", "broken", buf, sizeof(buf)), -ENXIO);
	CHECK_INT(classfs_client_attr_set(c, "hwmon", "hwmon0", "broken", "1", 1), -EACCES);

	/* a driver that stops answering: EIO within the timeout (1 s here), not a hang */
	kill(pid, SIGSTOP);
	t0 = now_s();
	CHECK_INT(classfs_client_attr_get(c, "hwmon", "hwmon0", "temp", buf, sizeof(buf)), -EIO);
	CHECK(now_s() - t0 < 3);
	t0 = now_s();
	CHECK_INT(read_file(path, buf, sizeof(buf)), -EIO);
	CHECK(now_s() - t0 < 3);
	/* a stored value of the same device is served without the driver */
	CHECK_INT(classfs_client_attr_get(c, "hwmon", "hwmon0", "label", buf, sizeof(buf)), 2);
	/* a reader blocked in the stopped driver's show() blocks only its own FUSE thread */
	{
		pthread_t th;
		char lpath[256];
		double t1;

		pthread_create(&th, NULL, blocked_reader, path);
		usleep(100000);
		snprintf(lpath, sizeof(lpath), "%s/class/hwmon/hwmon0/label", d.mnt);
		t1 = now_s();
		CHECK_INT(read_file(lpath, buf, sizeof(buf)), 2);
		CHECK(now_s() - t1 < 0.5);
		pthread_join(th, NULL);
	}
	kill(pid, SIGKILL);
	kill(pid, SIGCONT);
	waitpid(pid, NULL, 0);
	/* bound: gone with its driver */
	for (t0 = now_s(); now_s() - t0 < 5 && access(path, F_OK) == 0;)
		usleep(10000);
	CHECK(access(path, F_OK) < 0);
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- the daemon restarts: the client republishes what it bound ---- */

TEST(restart_republish)
{
	struct daemon d;
	struct classfs_client *c, *o;
	struct classfs_client_status st;
	struct evlog l = { 0 };
	struct temp_attr t = { .value = "on\n" };
	char buf[64];
	struct classfs_client_attr attrs[] = {
		{ .name = "state", .mode = 0644, .show = temp_show, .store = temp_store, .data = &t },
		{ .name = "id", .mode = 0444, .value = "7\n", .len = 2 },
	};

	CHECK_INT(start_daemon(&d, false, quick_args), 0);
	c = classfs_client_connect(d.sock, CLASSFS_CLIENT_RECONNECT);
	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(classfs_client_class_create(c, "led", CLASSFS_CLIENT_BIND), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "led", .name = "led0", .attrs = attrs, .nattrs = 2,
		.flags = CLASSFS_CLIENT_BIND }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "led", .name = "led1", .flags = CLASSFS_CLIENT_BIND }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "led", .name = "tmp", .flags = CLASSFS_CLIENT_BIND }), 0);
	CHECK_INT(classfs_client_device_remove(c, "led", "tmp"), 0);
	/* renamed by its publisher: its remote attribute follows */
	CHECK_INT(classfs_client_device_rename(c, "led", "led0", "led7"), 0);
	CHECK_INT(classfs_client_attr_get(c, "led", "led7", "state", buf, sizeof(buf)), 3);
	CHECK_INT(classfs_client_device_rename(c, "led", "led7", "led0"), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "led", .name = "led1c", .parent = "led1", .flags = CLASSFS_CLIENT_BIND }), 0);
	CHECK_INT(classfs_client_device_rename(c, "led", "led1", "led5"), 0);
	CHECK_INT(classfs_client_subscribe(c, 0, evlog_add, evlog_gap, &l), 0);

	/* restart on the same socket */
	CHECK_INT(kill_daemon(&d), 0);
	CHECK_INT(daemon_exec(&d, false, quick_args), 0);
	/* the next call notices, reconnects and publishes again first */
	CHECK_INT(classfs_client_status(c, &st), 0);
	o = classfs_client_connect(d.sock, 0);
	CHECK(o != NULL);
	if (o) {
		CHECK_INT(classfs_client_attr_get(o, "led", "led0", "id", buf, sizeof(buf)), 2);
		/* under the name it had when the daemon went */
		CHECK_INT(classfs_client_attr_get(o, "led", "led5", "uevent", buf, sizeof(buf)) >= 0, 1);
		CHECK_INT(classfs_client_attr_get(o, "led", "led1", "uevent", buf, sizeof(buf)), -ENOENT);
		/* and its child found its renamed parent */
		CHECK_INT(classfs_client_attr_get(o, "led", "led1c", "uevent", buf, sizeof(buf)) >= 0, 1);
		CHECK_INT(classfs_client_attr_get(o, "led", "tmp", "uevent", buf, sizeof(buf)), -ENOENT);
		/* its remote attribute is served again (the owner dispatches meanwhile) */
		CHECK_INT(classfs_client_attr_get(c, "led", "led0", "state", buf, sizeof(buf)), 3);
		classfs_client_disconnect(o);
	}
	/* the subscription followed the new daemon: the republished ADD events came */
	CHECK_INT(classfs_client_status(c, &st), 0);
	dispatch_until(c, &l, st.seqnum, 5);
	{
		int adds = 0;

		for (size_t i = 0; i < l.n; i++)
			adds += l.action[i] == CLASSFS_ACTION_ADD &&
				(!strcmp(l.devpath[i], "/class/led/led0") ||
				 !strcmp(l.devpath[i], "/class/led/led5"));
		CHECK_INT(adds, 2);
	}
	classfs_client_disconnect(c);
out:
	evlog_free(&l);
	CHECK_INT(stop_daemon(&d), 0);
}

/* ---- records and renderings through the socket ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *data = NULL;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);

		rewind(f);
		data = n >= 0 ? malloc((size_t)n + 1) : NULL;
		if (data && fread(data, 1, (size_t)n, f) == (size_t)n) {
			data[n] = '\0';
			*len = (size_t)n;
		} else {
			free(data);
			data = NULL;
		}
	}
	fclose(f);
	return data;
}

TEST(load_save_tree)
{
	const char *const args[] = { "--max-message", "4096", NULL };	/* many chunks */
	struct daemon d;
	struct classfs_client *c;
	char *rec, *out = NULL, path[256], buf[64];
	size_t len = 0, olen = 0;
	FILE *f;

	rec = slurp(TESTDATA "/usb-mouse.umockdev", &len);
	CHECK(rec != NULL);
	CHECK_INT(start_daemon(&d, true, args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c || !rec)
		goto out;
	CHECK_INT(classfs_client_load(c, rec, len, "usb-mouse.umockdev"), 0);
	snprintf(path, sizeof(path), "%s/class/input/event1/dev", d.mnt);
	CHECK(read_file(path, buf, sizeof(buf)) > 0);
	/* loading it again: all or nothing, and the message names the problem */
	CHECK(classfs_client_load(c, rec, len, "usb-mouse.umockdev") < 0);
	CHECK(classfs_client_error_message(c)[0] != '\0');
	/* a malformed record names file and line */
	CHECK_INT(classfs_client_load(c, "P: /devices/x\nbogus line\n", 26, "bad.umockdev"), -EINVAL);
	CHECK(strstr(classfs_client_error_message(c), "bad.umockdev") != NULL);

	f = open_memstream(&out, &olen);
	CHECK_INT(classfs_client_save(c, NULL, f), 0);
	fclose(f);
	CHECK(out && strstr(out, "P: /devices/pci0000:00/0000:00:14.0/usb1") != NULL);
	free(out);
	out = NULL;
	f = open_memstream(&out, &olen);
	CHECK_INT(classfs_client_tree(c, CLASSFS_CLIENT_TEXT, f), 0);
	fclose(f);
	CHECK(out && strstr(out, "event1") != NULL);
	free(out);
	out = NULL;
	f = open_memstream(&out, &olen);
	CHECK_INT(classfs_client_tree(c, CLASSFS_CLIENT_JSON, f), 0);
	fclose(f);
	CHECK(out && out[0] == '{');
	free(out);
	out = NULL;
	f = open_memstream(&out, &olen);
	CHECK_INT(classfs_client_info(c, "input", "event1", CLASSFS_CLIENT_TEXT, f), 0);
	fclose(f);
	CHECK(out && strstr(out, "event1") != NULL);
	free(out);
	out = NULL;
	f = open_memstream(&out, &olen);
	CHECK_INT(classfs_client_info(c, "input", "nope", CLASSFS_CLIENT_TEXT, f), -ENOENT);
	CHECK_INT(classfs_client_tree(c, (enum classfs_client_format)7, f), -EINVAL);
	fclose(f);
	free(out);
	/* a loaded device is root's: readable, and root may set and remove it */
	CHECK(classfs_client_attr_get(c, "input", "event1", "dev", buf, sizeof(buf)) > 0);
	CHECK_INT(classfs_client_device_remove(c, "input", "event1"), 0);
	CHECK(access(path, F_OK) < 0);
	classfs_client_disconnect(c);
out:
	free(rec);
	CHECK_INT(stop_daemon(&d), 0);
}

/* what uid 65534 may read by path of root's devices; bit per failed check */
static int attr_get_path_unowned(struct classfs_client *u)
{
	char buf[64];
	int bad = 0;

	bad |= (classfs_client_attr_get_path(u, "/devices/virtual/widget/w0", "secret", buf,
					     sizeof(buf)) != -EACCES) << 0;
	bad |= (classfs_client_attr_get_path(u, "/devices/virtual/widget/w0", "size", buf,
					     sizeof(buf)) != 5) << 1;
	return bad;
}

/* classfs_client_attr_get_path(): a device found by its path, whatever made it */
TEST(attr_get_path)
{
	static const char mouse[] = "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/"
				    "0003:046D:C077.0001/input/input1/event1";
	static const struct classfs_client_attr attrs[] = {
		{ .name = "size", .mode = 0444, .value = "2048\n", .len = 5 },
		{ .name = "secret", .mode = 0400, .value = "s3cret\n", .len = 7 },
	};
	const char *const args[] = { "--group", "nogroup", NULL };
	struct daemon d;
	struct classfs_client *c;
	char *rec = NULL, buf[4096];
	size_t len = 0;
	ssize_t n;

	CHECK_INT(start_daemon(&d, true, args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "widget", .name = "w0", .devt = makedev(240, 3), .attrs = attrs,
		.nattrs = 2 }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.name = "pci0", .bus = "pci" }), 0);
	rec = slurp(TESTDATA "/usb-mouse.umockdev", &len);
	CHECK(rec != NULL && classfs_client_load(c, rec, len, "usb-mouse.umockdev") == 0);

	/* a published class device, a physical one, a loaded one */
	n = classfs_client_attr_get_path(c, "/devices/virtual/widget/w0", "uevent", buf,
					 sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "MAJOR=240\nMINOR=3\n") != NULL);
	/* (a physical device without a driver has an empty `uevent`) */
	CHECK_INT(classfs_client_attr_get_path(c, "/devices/pci0", "uevent", buf, sizeof(buf)), 0);
	n = classfs_client_attr_get_path(c, mouse, "dev", buf, sizeof(buf) - 1);
	CHECK_INT(n, 6);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "13:65\n");
	/* the same file as by class and name */
	CHECK_INT(classfs_client_attr_get(c, "input", "event1", "dev", buf, sizeof(buf)), 6);

	/* refusals */
	CHECK_INT(classfs_client_attr_get_path(c, "devices/pci0", "uevent", buf, sizeof(buf)),
		  -EINVAL);
	CHECK_INT(classfs_client_attr_get_path(c, NULL, "uevent", buf, sizeof(buf)), -EINVAL);
	CHECK_INT(classfs_client_attr_get_path(c, "/devices/virtual/widget/w9", "uevent", buf,
					       sizeof(buf)), -ENOENT);
	CHECK(strstr(classfs_client_error_message(c), "/devices/virtual/widget/w9") != NULL);
	CHECK_INT(classfs_client_attr_get_path(c, "/devices/virtual/widget/w0", "nope", buf,
					       sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_client_attr_get_path(c, "/devices/virtual/widget/w0", "size", buf, 2),
		  -ERANGE);
	/* another uid: the mode bits, as by class and name */
	CHECK_INT(as_nobody(d.sock, attr_get_path_unowned), 0);
	/* gone with its device */
	CHECK_INT(classfs_client_device_remove(c, "widget", "w0"), 0);
	CHECK_INT(classfs_client_attr_get_path(c, "/devices/virtual/widget/w0", "uevent", buf,
					       sizeof(buf)), -ENOENT);
	classfs_client_disconnect(c);
out:
	free(rec);
	CHECK_INT(stop_daemon(&d), 0);
}

TEST(sample_machine)
{
	const char *const args[] = { "--sample", "--layout", "devices", NULL };
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_status st;
	char *out = NULL;
	size_t olen = 0;
	FILE *f;

	CHECK_INT(start_daemon(&d, true, args), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(classfs_client_status(c, &st), 0);
		CHECK_INT(st.layout, CLASSFS_LAYOUT_DEVICES);
		CHECK(st.seqnum > 0);	/* the sample's ADD events */
		f = open_memstream(&out, &olen);
		CHECK_INT(classfs_client_tree(c, CLASSFS_CLIENT_TEXT, f), 0);
		fclose(f);
		CHECK(olen > 100);
		free(out);
		classfs_client_disconnect(c);
	}
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/devices", d.mnt);
		CHECK(access(path, F_OK) == 0);
	}
	CHECK_INT(stop_daemon(&d), 0);
}


/* ---- many clients at once, readers of the mount, a subscriber ---- */

#define STRESS_THREADS 4
#define STRESS_ROUNDS 300

struct stress_ctx {
	const char *sock;
	const char *mnt;
	int id;
	int failures;
	atomic_bool *stop;
};

static void *stress_publisher(void *arg)
{
	struct stress_ctx *s = arg;
	struct classfs_client *c = classfs_client_connect(s->sock, 0);
	char name[32], renamed[32], buf[64];

	if (!c) {
		s->failures++;
		return NULL;
	}
	for (int i = 0; i < STRESS_ROUNDS; i++) {
		snprintf(name, sizeof(name), "t%dn%d", s->id, i);
		snprintf(renamed, sizeof(renamed), "t%dr%d", s->id, i);
		s->failures += classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "stress", .name = name, .devt = makedev(240, (unsigned int)(s->id * 1000 + i)),
			.attrs = &(struct classfs_client_attr){ .name = "v", .mode = 0644,
				.value = "0\n", .len = 2 }, .nattrs = 1 }) != 0;
		s->failures += classfs_client_attr_set(c, "stress", name, "v", "1\n", 2) != 0;
		s->failures += classfs_client_attr_get(c, "stress", name, "v", buf, sizeof(buf)) != 2;
		s->failures += classfs_client_device_rename(c, "stress", name, renamed) != 0;
		s->failures += classfs_client_trigger(c, "stress", renamed, CLASSFS_ACTION_CHANGE,
						      NULL) != 0;
		s->failures += classfs_client_device_remove(c, "stress", renamed) != 0;
	}
	classfs_client_disconnect(c);
	return NULL;
}

static void *stress_reader(void *arg)
{
	struct stress_ctx *s = arg;
	char path[512], buf[64];

	while (!atomic_load(s->stop)) {
		for (int t = 0; t < STRESS_THREADS; t++) {
			for (int i = 0; i < STRESS_ROUNDS; i += 37) {
				snprintf(path, sizeof(path), "%s/class/stress/t%dn%d/v", s->mnt, t, i);
				read_file(path, buf, sizeof(buf));	/* present or not: no crash, no hang */
				snprintf(path, sizeof(path), "%s/class/stress/t%dr%d/uevent", s->mnt, t, i);
				read_file(path, buf, sizeof(buf));
			}
		}
	}
	return NULL;
}

TEST(concurrent_clients)
{
	struct daemon d;
	struct classfs_client *sub;
	struct classfs_client_status st;
	struct stress_ctx ctx[STRESS_THREADS + 1];
	pthread_t th[STRESS_THREADS + 1];
	atomic_bool stop = false;
	struct evlog l = { 0 };
	int failures = 0;

	CHECK_INT(start_daemon(&d, true, quick_args), 0);
	sub = classfs_client_connect(d.sock, 0);
	CHECK(sub != NULL);
	if (!sub)
		goto out;
	CHECK_INT(classfs_client_subscribe(sub, 0, evlog_add, evlog_gap, &l), 0);
	for (int i = 0; i <= STRESS_THREADS; i++) {
		ctx[i] = (struct stress_ctx){ .sock = d.sock, .mnt = d.mnt, .id = i, .stop = &stop };
		pthread_create(&th[i], NULL, i < STRESS_THREADS ? stress_publisher : stress_reader,
			       &ctx[i]);
	}
	for (int i = 0; i < STRESS_THREADS; i++) {
		/* keep the subscription drained meanwhile */
		for (;;) {
			struct timespec ts;

			classfs_client_dispatch(sub, 10);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 1000000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_timedjoin_np(th[i], NULL, &ts) == 0)
				break;
		}
		failures += ctx[i].failures;
	}
	atomic_store(&stop, true);
	pthread_join(th[STRESS_THREADS], NULL);
	CHECK_INT(failures, 0);
	CHECK_INT(classfs_client_status(sub, &st), 0);
	dispatch_until(sub, &l, st.seqnum, 10);
	CHECK_INT(l.gaps, 0);
	{
		int count[CLASSFS_ACTION_COUNT] = { 0 };

		for (size_t i = 0; i < l.n; i++)
			count[l.action[i]]++;
		CHECK_INT(count[CLASSFS_ACTION_ADD], STRESS_THREADS * STRESS_ROUNDS);
		CHECK_INT(count[CLASSFS_ACTION_REMOVE], STRESS_THREADS * STRESS_ROUNDS);
		CHECK_INT(count[CLASSFS_ACTION_MOVE], STRESS_THREADS * STRESS_ROUNDS);
		CHECK_INT(count[CLASSFS_ACTION_CHANGE], STRESS_THREADS * STRESS_ROUNDS);
	}
	/* nothing left in the class */
	{
		char path[256];
		int n = 0;
		DIR *dir;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/class/stress", d.mnt);
		dir = opendir(path);
		CHECK(dir != NULL);
		while (dir && (e = readdir(dir)))
			n += e->d_name[0] != '.';
		if (dir)
			closedir(dir);
		CHECK_INT(n, 0);
	}
	classfs_client_disconnect(sub);
out:
	evlog_free(&l);
	CHECK_INT(stop_daemon(&d), 0);
}
