// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * node-probe - what a program that talks to an input device sees of it,
 * printed: linked statically in the tests (umockdev's preload library
 * cannot reach such a program; classfs's supervisor must).
 *
 *   node-probe evdev NODE COUNT   fstat(), EVIOCGVERSION, EVIOCGID,
 *                                 EVIOCGNAME, EVIOCGBIT(EV_KEY), then
 *                                 COUNT events read
 *   node-probe ioctl NODE REQUEST [HEX]  one ioctl of REQUEST (hex) with a
 *                                 64-byte buffer holding HEX; prints the
 *                                 result, errno and the buffer's first
 *                                 8 bytes
 *   node-probe echo NODE TEXT     write TEXT, then print one read's bytes
 *
 * Its system calls are made with syscall(2), not through libc's
 * wrappers, as a Go program's are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/input.h>

static long sys_ioctl(int fd, unsigned long req, void *arg)
{
	return syscall(SYS_ioctl, fd, req, arg);
}

static int open_node(const char *node, int flags)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, node, flags | O_CLOEXEC);

	if (fd < 0) {
		printf("open %s: %s\n", node, strerror(errno));
		exit(1);
	}
	return fd;
}

static int evdev(const char *node, int count)
{
	int fd = open_node(node, O_RDONLY), version = 0;
	unsigned char keys[KEY_MAX] = { 0 };	/* evtest's size */
	char name[256] = "";
	struct input_id id = { 0 };
	struct stat st;
	int nkeys = 0;

	if (syscall(SYS_fstat, fd, &st) == 0)
		printf("fstat: %s %u:%u\n", S_ISCHR(st.st_mode) ? "char" : "other",
		       major(st.st_rdev), minor(st.st_rdev));
	if (sys_ioctl(fd, EVIOCGVERSION, &version) < 0)
		printf("EVIOCGVERSION: %s\n", strerror(errno));
	else
		printf("version: %#x\n", version);
	if (sys_ioctl(fd, EVIOCGID, &id) == 0)
		printf("id: bus %#x vendor %#x product %#x version %#x\n", id.bustype, id.vendor,
		       id.product, id.version);
	if (sys_ioctl(fd, EVIOCGNAME(sizeof(name)), name) >= 0)
		printf("name: %s\n", name);
	if (sys_ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keys)), keys) >= 0) {
		for (int k = 0; k <= KEY_MAX; k++)
			nkeys += keys[k / 8] >> (k % 8) & 1;
		printf("keys: %d\n", nkeys);
	}
	for (int i = 0; i < count; i++) {
		struct input_event ev;
		ssize_t n = syscall(SYS_read, fd, &ev, sizeof(ev));

		if (n != sizeof(ev)) {
			printf("read: %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
			return 1;
		}
		printf("event: type %u code %u value %d\n", ev.type, ev.code, ev.value);
	}
	close(fd);
	return 0;
}

static int one_ioctl(const char *node, unsigned long req, const char *hex)
{
	unsigned char buf[64] = { 0 };
	int fd = open_node(node, O_RDWR);
	long r;

	for (size_t i = 0; hex && hex[2 * i] && hex[2 * i + 1] && i < sizeof(buf); i++)
		sscanf(hex + 2 * i, "%2hhx", &buf[i]);
	r = sys_ioctl(fd, req, buf);
	printf("ioctl %#lx: %ld errno %d buf", req, r, r < 0 ? errno : 0);
	for (int i = 0; i < 8; i++)
		printf(" %02x", buf[i]);
	printf("\n");
	close(fd);
	return 0;
}

static int echo(const char *node, const char *text)
{
	int fd = open_node(node, O_RDWR);
	char buf[256];
	ssize_t n;

	if (syscall(SYS_write, fd, text, strlen(text)) != (long)strlen(text)) {
		printf("write: %s\n", strerror(errno));
		return 1;
	}
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		printf("read: %s\n", strerror(errno));
		return 1;
	}
	buf[n] = '\0';
	printf("read: %s\n", buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "evdev"))
		return evdev(argv[2], atoi(argv[3]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "ioctl"))
		return one_ioctl(argv[2], strtoul(argv[3], NULL, 16), argc == 5 ? argv[4] : NULL);
	if (argc == 4 && !strcmp(argv[1], "echo"))
		return echo(argv[2], argv[3]);
	fprintf(stderr, "usage: node-probe evdev NODE COUNT | ioctl NODE REQUEST [HEX] | "
			"echo NODE TEXT\n");
	return 2;
}
