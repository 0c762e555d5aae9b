// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * run-nodes.c - <classfs/run.h>'s device nodes that answer: recordings
 * and functions put on an environment's nodes (src/devio does the work).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "run-internal.h"

int classfs_ioctl_read(const struct classfs_ioctl *call, uint64_t addr, void *buf, size_t len)
{
	if (!call || !call->mem || (!buf && len))
		return -EINVAL;
	return cfs_mem_read(call->mem, addr, buf, len);
}

int classfs_ioctl_write(const struct classfs_ioctl *call, uint64_t addr, const void *buf,
			size_t len)
{
	if (!call || !call->mem || (!buf && len))
		return -EINVAL;
	return cfs_mem_write(call->mem, addr, buf, len);
}

static int fail(struct classfs_run_error *err, int r, const char *msg)
{
	if (err)
		snprintf(err->message, sizeof(err->message), "%s", msg);
	return r;
}

/* read all of @file: 0 or -errno (@msg told) */
static int slurp(const char *file, char **data, size_t *len, char *msg, size_t size)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int fd, r = 0;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		snprintf(msg, size, "%s: %s", file, strerror(-r));
		return r;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			char *more = realloc(buf, cap ? cap * 2 : 65536);

			if (!more) {
				r = -ENOMEM;
				break;
			}
			buf = more;
			cap = cap ? cap * 2 : 65536;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			snprintf(msg, size, "%s: %s", file, strerror(-r));
			break;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*data = buf;
	*len = n;
	return 0;
}

/* a USB device's bus and device numbers, from its /sys directory in the environment */
static int usb_numbers(int root, const char *syspath, unsigned *bus, unsigned *dev, char *msg,
		       size_t size)
{
	const char *names[2] = { "busnum", "devnum" };
	unsigned *out[2] = { bus, dev };

	for (int i = 0; i < 2; i++) {
		char p[PATH_MAX], text[32];
		ssize_t k;
		int fd;

		if (snprintf(p, sizeof(p), "%s/%s", syspath + 1, names[i]) >= (int)sizeof(p))
			return -ENAMETOOLONG;
		fd = openat(root, p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int r = -errno;

			snprintf(msg, size, "%s: no USB device there (%s: %s)", syspath, names[i],
				 strerror(-r));
			return r == -ENOENT ? -ENODEV : r;
		}
		k = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (k <= 0 || sscanf((text[k] = '\0', text), "%u", out[i]) != 1) {
			snprintf(msg, size, "%s/%s: not a number", syspath, names[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * cfs_run_load() - a recording put on a node of the environment whose
 * nodes are @nodes and root directory @root
 * @file: where a capture is read from (the others are in @data, @len).
 * @name: names the recording in messages.
 * Return: 0 or -errno (@msg says what).
 */
int cfs_run_load(struct cfs_nodes *nodes, int root, enum classfs_recording kind,
		 const char *target, const char *file, const char *data, size_t len,
		 const char *name, char *msg, size_t size)
{
	struct cfs_ioctl_handler h = { 0 };
	char node[64];
	unsigned bus, dev;
	int r;

	switch (kind) {
	case CLASSFS_RECORDING_IOCTL:
		/* a recording made of another node may answer this one, as umockdev's does */
		r = cfs_ioctl_text_load(data, len, name, NULL, &h, msg, size);
		if (r < 0)
			return r;
		return cfs_nodes_set_handler(nodes, target, &h, msg, size);
	case CLASSFS_RECORDING_SCRIPT:
		return cfs_nodes_play(nodes, target, CFS_PLAYER_SCRIPT, data, len, name, msg,
				      size);
	case CLASSFS_RECORDING_EVEMU:
		return cfs_nodes_play(nodes, target, CFS_PLAYER_EVEMU, data, len, name, msg,
				      size);
	case CLASSFS_RECORDING_UNIX_STREAM:
		return cfs_nodes_play_socket(nodes, target, data, len, name, msg, size);
	case CLASSFS_RECORDING_PCAP:
		if (!file) {
			snprintf(msg, size, "a usbmon capture is read from a file");
			return -EINVAL;
		}
		r = usb_numbers(root, target, &bus, &dev, msg, size);
		if (r < 0)
			return r;
		r = cfs_pcap_file_load(file, bus, dev, &h, msg, size);
		if (r < 0)
			return r;
		snprintf(node, sizeof(node), "/dev/bus/usb/%03u/%03u", bus, dev);
		return cfs_nodes_set_handler(nodes, node, &h, msg, size);
	}
	snprintf(msg, size, "unknown kind of recording %d", (int)kind);
	return -EINVAL;
}

static int check(struct classfs_run *run, enum classfs_recording kind, const char *target,
		 struct classfs_run_error *err)
{
	if (!run || !target || target[0] != '/')
		return fail(err, -EINVAL, "the target must be an absolute path");
	if (!run->nodes)
		return fail(err, -EOPNOTSUPP, "this environment has no emulated nodes");
	if (kind == CLASSFS_RECORDING_PCAP && strncmp(target, "/sys/", 5) != 0)
		return fail(err, -EINVAL, "a capture's target is a USB device's /sys path");
	return 0;
}

int classfs_run_load(struct classfs_run *run, enum classfs_recording kind, const char *target,
		     const char *file, struct classfs_run_error *err)
{
	char msg[512] = "";
	char *data = NULL;
	size_t len = 0;
	int r;

	r = check(run, kind, target, err);
	if (r < 0)
		return r;
	if (!file)
		return fail(err, -EINVAL, "no recording file");
	if (kind != CLASSFS_RECORDING_PCAP) {
		r = slurp(file, &data, &len, msg, sizeof(msg));
		if (r < 0)
			return fail(err, r, msg);
	}
	r = cfs_run_load(run->nodes, run->root, kind, target, file, data, len, file, msg,
			 sizeof(msg));
	free(data);
	return r < 0 ? fail(err, r, msg) : 0;
}

int classfs_run_load_data(struct classfs_run *run, enum classfs_recording kind,
			  const char *target, const void *data, size_t len, const char *name,
			  struct classfs_run_error *err)
{
	char msg[512] = "";
	int r;

	r = check(run, kind, target, err);
	if (r < 0)
		return r;
	if (!data && len)
		return fail(err, -EINVAL, "no data");
	r = cfs_run_load(run->nodes, run->root, kind, target, NULL, data ? data : "", len,
			 name ? name : "<string>", msg, sizeof(msg));
	return r < 0 ? fail(err, r, msg) : 0;
}

int classfs_run_wait_script(struct classfs_run *run, const char *node,
			    struct classfs_run_error *err)
{
	char msg[512] = "";
	int r;

	r = check(run, CLASSFS_RECORDING_SCRIPT, node, err);
	if (r < 0)
		return r;
	r = cfs_nodes_wait(run->nodes, node, msg, sizeof(msg));
	return r < 0 ? fail(err, r, msg) : 0;
}

int classfs_run_dev_fd(struct classfs_run *run, const char *node)
{
	int r = check(run, CLASSFS_RECORDING_SCRIPT, node, NULL);

	return r < 0 ? r : cfs_nodes_dev_fd(run->nodes, node);
}

/* a caller's function as a handler */
struct attached {
	classfs_ioctl_fn fn;
	void *data;
	void (*release)(void *data);
};

static long attached_ioctl(void *data, const struct cfs_ioctl_call *call)
{
	struct attached *a = data;
	struct classfs_ioctl pub = {
		.node = call->node,
		.request = call->request,
		.arg = call->arg,
		.pid = call->pid,
		.mem = call->mem,
	};
	long r = a->fn(&pub, a->data);

	return r == CLASSFS_IOCTL_PASS ? CFS_IOCTL_PASS : r;
}

static void attached_free(void *data)
{
	struct attached *a = data;

	if (a->release)
		a->release(a->data);
	free(a);
}

int classfs_run_attach_ioctl(struct classfs_run *run, const char *node, classfs_ioctl_fn fn,
			     void *data, void (*release)(void *data))
{
	struct cfs_ioctl_handler h = { .ioctl = attached_ioctl, .free = attached_free };
	struct attached *a;
	char msg[512];
	int r;

	r = check(run, CLASSFS_RECORDING_IOCTL, node, NULL);
	if (r < 0)
		return r;
	if (!fn)
		return -EINVAL;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = (struct attached){ .fn = fn, .data = data, .release = release };
	h.data = a;
	return cfs_nodes_set_handler(run->nodes, node, &h, msg, sizeof(msg));
}

int classfs_run_detach_ioctl(struct classfs_run *run, const char *node)
{
	struct cfs_ioctl_handler none = { 0 };
	char msg[512];
	int r;

	r = check(run, CLASSFS_RECORDING_IOCTL, node, NULL);
	if (r < 0)
		return r;
	return cfs_nodes_set_handler(run->nodes, node, &none, msg, sizeof(msg));
}
