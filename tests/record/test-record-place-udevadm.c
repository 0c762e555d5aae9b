// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record-place-udevadm.c - what libudev makes of devices loaded at
 * their recorded paths in a `devices` layout tree: the real `udevadm
 * info --query=all --path=` finds each at its path, and `udevadm info
 * -a`, walking parents as sd_device_get_parent() does, passes over the
 * plain directories between (no `uevent`) to the nearest device, as it
 * does in umockdev's tree; a parent loaded after its child becomes the
 * child's parent there.  The tree is mounted and bound over /sys in a
 * private mount namespace of a child process (its mounts go with it).
 *
 * Needs root (skipped, exit 77, otherwise) and udevadm (package udev).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "classfs/record.h"
#include "record-util.h"
#include "udevadm-ns.h"

static const char machine[] =
	"P: /devices/pci0000:00/0000:00:02.0\n"
	"E: SUBSYSTEM=pci\n"
	"E: PCI_SLOT_NAME=0000:00:02.0\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:02.0/dri/card0\n"
	"E: SUBSYSTEM=drm\n"
	"E: DEVNAME=/dev/dri/card0\n"
	"E: DEVTYPE=drm_minor\n"
	"A: dev=226:0\\n\n"
	"N: dri/card0\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0\n"
	"E: SUBSYSTEM=pci\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0/hci0:01\n"
	"E: SUBSYSTEM=bluetooth\n"
	"\n"
	"P: /devices/BAT0\n"
	"E: SUBSYSTEM=power_supply\n"
	"E: POWER_SUPPLY_NAME=BAT0\n"
	"\n"
	"P: /devices/pci0000:20/0000:20:08.1/usb3\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_device\n";

static const char later[] =
	"P: /devices/pci0000:20/0000:20:08.1\n"
	"E: SUBSYSTEM=pci\n";

/*
 * `udevadm info -a` of @syspath (below /sys): its first parent device is
 * @parent (NULL: it has none), and no plain directory is taken for one.
 */
static int parents(const char *syspath, const char *parent, const char *const *not)
{
	char cmd[PATH_MAX + 64], want[PATH_MAX + 64], *out, *first;
	int status, fails = 0;

	snprintf(cmd, sizeof(cmd), "udevadm info -a --path=/sys%s 2>&1", syspath);
	out = ns_run(cmd, &status);
	if (status != 0 || !out) {
		fprintf(stderr, "  %s: status %d\n%s", cmd, status, out ? out : "");
		free(out);
		return 1;
	}
	snprintf(want, sizeof(want), "looking at device '%s':", syspath);
	if (!strstr(out, want)) {
		fprintf(stderr, "  %s: no \"%s\"\n", cmd, want);
		fails++;
	}
	first = strstr(out, "looking at parent device '");
	if (parent) {
		snprintf(want, sizeof(want), "looking at parent device '%s':", parent);
		if (!first || strncmp(first, want, strlen(want))) {
			fprintf(stderr, "  %s: first parent is not %s\n", cmd, parent);
			fails++;
		}
	} else if (first) {
		fprintf(stderr, "  %s: a parent, expected none\n", cmd);
		fails++;
	}
	for (; not && *not; not++) {
		snprintf(want, sizeof(want), "device '%s':", *not);
		if (strstr(out, want)) {
			fprintf(stderr, "  %s: the plain directory %s taken for a device\n", cmd, *not);
			fails++;
		}
	}
	if (fails || getenv("VERBOSE"))
		fprintf(stderr, "%s", out);
	free(out);
	return fails;
}

/* `udevadm info --query=all --path=` of @syspath shows @lines */
static int query(const char *syspath, const char *const *lines)
{
	char cmd[PATH_MAX + 64], want[PATH_MAX + 8], *out;
	int status, fails = 0;

	snprintf(cmd, sizeof(cmd), "udevadm info --query=all --path=/sys%s 2>&1", syspath);
	out = ns_run(cmd, &status);
	if (status != 0) {
		fprintf(stderr, "  %s: status %d\n", cmd, status);
		fails++;
	}
	snprintf(want, sizeof(want), "P: %s\n", syspath);
	if (!out || !strstr(out, want)) {
		fprintf(stderr, "  %s: no \"%s\"\n", cmd, syspath);
		fails++;
	}
	for (; lines && *lines; lines++) {
		snprintf(want, sizeof(want), "%s\n", *lines);
		if (!out || !strstr(out, want)) {
			fprintf(stderr, "  %s: no \"%s\"\n", cmd, *lines);
			fails++;
		}
	}
	if (fails)
		fprintf(stderr, "%s", out ? out : "");
	free(out);
	return fails;
}

static int load(struct classfs_tree *t, const char *text)
{
	struct classfs_record_error err;

	return cfs_test_load(t, text, NULL, &err);
}

/* in the child: everything in a private mount namespace */
static int run(void)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct ns_sys ns;
	int fails = 0;

	if (ns_private() < 0 || !t || load(t, machine) < 0)
		return 1;
	if (ns_sys_bind(t, &ns) < 0) {
		ns_sys_unbind(&ns);
		return 1;
	}
	fails += query("/devices/pci0000:00/0000:00:02.0/dri/card0",
		       (const char *const[]){ "E: SUBSYSTEM=drm", "E: DEVNAME=/dev/dri/card0",
					      "E: MAJOR=226", NULL });
	fails += parents("/devices/pci0000:00/0000:00:02.0/dri/card0",
			 "/devices/pci0000:00/0000:00:02.0",
			 (const char *const[]){ "/devices/pci0000:00/0000:00:02.0/dri",
						"/devices/pci0000:00", NULL });
	/* usb1/bluetooth/hci0/hci0:01 below the PCI device: all plain between */
	fails += query("/devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0/hci0:01",
		       (const char *const[]){ "E: SUBSYSTEM=bluetooth", NULL });
	fails += parents("/devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0/hci0:01",
			 "/devices/pci0000:00/0000:00:14.0",
			 (const char *const[]){ "/devices/pci0000:00/0000:00:14.0/usb1", NULL });
	/* a class device right below /devices, no parent */
	fails += query("/devices/BAT0", (const char *const[]){ "E: SUBSYSTEM=power_supply",
							       "E: POWER_SUPPLY_NAME=BAT0", NULL });
	fails += parents("/devices/BAT0", NULL, NULL);
	/* a device whose parent is not there yet: none; then loaded, it is */
	fails += parents("/devices/pci0000:20/0000:20:08.1/usb3", NULL,
			 (const char *const[]){ "/devices/pci0000:20/0000:20:08.1", NULL });
	if (load(t, later) < 0) {
		fails++;
	} else {
		fails += query("/devices/pci0000:20/0000:20:08.1",
			       (const char *const[]){ "E: SUBSYSTEM=pci", NULL });
		fails += parents("/devices/pci0000:20/0000:20:08.1/usb3",
				 "/devices/pci0000:20/0000:20:08.1",
				 (const char *const[]){ "/devices/pci0000:20", NULL });
	}
	ns_sys_unbind(&ns);
	classfs_record_unload(t);
	classfs_tree_free(t);
	return fails ? 1 : 0;
}

int main(void)
{
	pid_t pid;
	int status = 1;

	int unavailable = udevadm_ns_unavailable();

	if (unavailable >= 0)
		return unavailable;
	pid = fork();
	if (pid == 0)
		_exit(run());
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 1;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	printf("%s udevadm_parent_is_the_nearest_device\n", status ? "FAIL" : "ok  ");
	return status ? 1 : 0;
}
