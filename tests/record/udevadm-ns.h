/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udevadm-ns.h - what the record tests that run the real udevadm share:
 * in a child process, a private mount namespace where a tree is mounted,
 * its udev database exported to a private /run/udev/data and the mount
 * bound over /sys (whatever happens, the mounts go with the child); and
 * a command's whole output.  Needs root.
 */
#ifndef CLASSFS_TEST_UDEVADM_NS_H
#define CLASSFS_TEST_UDEVADM_NS_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "classfs/record.h"

struct ns_sys {
	char dir[64];
	struct classfs_mount *m;
	int stage;		/* how far ns_sys_bind() went */
};

/* this process's own mount namespace, nothing propagated out; 0 or -1 */
static int ns_private(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("  private mount namespace");
		return -1;
	}
	return 0;
}

/*
 * @t mounted, a private /run with its udev database, the mount over /sys,
 * SYSTEMD_DEVICE_VERIFY_SYSFS=0 (a FUSE mount is no sysfs).  Return: 0 or
 * -1; ns_sys_unbind() undoes what was done either way.
 */
static int ns_sys_bind(struct classfs_tree *t, struct ns_sys *ns)
{
	snprintf(ns->dir, sizeof(ns->dir), "/tmp/classfs-rec-udevadm.XXXXXX");
	ns->m = NULL;
	ns->stage = 0;
	if (!mkdtemp(ns->dir) || !(ns->m = classfs_mount_tree(t, ns->dir, NULL))) {
		perror("  mount");
		return -1;
	}
	ns->stage = 1;
	if (mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0)
		goto fail;
	ns->stage = 2;
	if (mkdir("/run/udev", 0755) < 0 || mkdir("/run/udev/data", 0755) < 0 ||
	    classfs_record_export_udevdb(t, "/run/udev/data") < 0 ||
	    mount(ns->dir, "/sys", NULL, MS_BIND, NULL) < 0)
		goto fail;
	ns->stage = 3;
	setenv("SYSTEMD_DEVICE_VERIFY_SYSFS", "0", 1);
	return 0;
fail:
	perror("  /run, /run/udev/data, /sys");
	return -1;
}

static void ns_sys_unbind(struct ns_sys *ns)
{
	if (ns->stage >= 3)
		umount2("/sys", MNT_DETACH);
	if (ns->stage >= 2)
		umount2("/run", MNT_DETACH);
	if (ns->m)
		classfs_mount_close(ns->m);
	rmdir(ns->dir);
	ns->stage = 0;
	ns->m = NULL;
}

/* the whole output of @cmd (malloc'd), its exit status in *@status */
static char *ns_run(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r"), *o;
	char *out = NULL, buf[4096];
	size_t len = 0, n;

	o = open_memstream(&out, &len);
	while (p && o && (n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, o);
	if (o)
		fclose(o);
	*status = p ? pclose(p) : -1;
	return out;
}

/*
 * Whether a udevadm test can run here: -1 when it can, else the exit
 * status main() returns (77, skipped, without root; 1 without udevadm).
 */
static inline int udevadm_ns_unavailable(void)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (mount namespaces, FUSE)\n");
		return 77;
	}
	if (system("command -v udevadm >/dev/null") != 0) {
		printf("FAIL: udevadm missing (apt-get install udev)\n");
		return 1;
	}
	return -1;
}

#endif
