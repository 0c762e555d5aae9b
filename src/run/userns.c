// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * userns.c - a classfs-run environment for a caller who is not root (or
 * is uid 0 in a user namespace other than the initial one): the
 * holder makes a user namespace of its own, in which it may make the
 * mount and network namespaces and mount what the environment needs.
 *
 * The caller's uid and gid are mapped to themselves (or to 0 for a
 * COMMAND that insists on root): files written in the host's directories
 * belong to the caller.  The capabilities the new namespace gives belong
 * to the holder, which never exec()s: it mounts the FUSE file systems
 * itself (the daemon gets the /dev/fuse descriptors as /dev/fd/N,
 * mounted nowhere until the daemon is ready) and
 * broadcasts the events.  Programs run there keep none (an exec() as a
 * non-zero uid drops them).  Every file system mounted in the namespace
 * is nodev to the kernel, so the private /dev is the daemon's
 * devtmpfs-style view (special files made by no mknod()).
 *
 * A caller that made a user namespace itself and still has its
 * capabilities there (a test runner that goes in and out of environments
 * with setns()) gets the environment in that namespace instead: one made
 * below it would own the mounts, and the caller could enter them only by
 * joining it, never to come back.
 *
 * Distributions refuse user namespaces to other uids in several ways;
 * when one of them does, the message names the setting.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "run-internal.h"

/* the first number in @path, or -1 when there is no such file */
static long read_setting(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/**
 * cfs_userns_refusal() - why user namespaces are refused here, in @msg
 * @err: the error of the step that failed (-EPERM, -ENOSPC, ...).
 * @step: what failed ("cannot make a user namespace").
 *
 * Names the switch that refuses them and what to change: the limit
 * user.max_user_namespaces, Debian's kernel.unprivileged_userns_clone,
 * Ubuntu's AppArmor restriction kernel.apparmor_restrict_unprivileged_userns.
 * Return: @err.
 */
int cfs_userns_refusal(int err, const char *step, char *msg, size_t size)
{
	long max = read_setting("/proc/sys/user/max_user_namespaces");
	long clone = read_setting("/proc/sys/kernel/unprivileged_userns_clone");
	long apparmor = read_setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");

	if (max == 0)
		snprintf(msg, size,
			 "%s: %s: user namespaces are disabled (user.max_user_namespaces = 0); "
			 "allow them with `sysctl -w user.max_user_namespaces=10000`, or run as root",
			 step, strerror(-err));
	else if (err == -ENOSPC)
		snprintf(msg, size,
			 "%s: %s: the limit user.max_user_namespaces (%ld) is reached; raise it "
			 "with `sysctl -w user.max_user_namespaces=N`, or run as root",
			 step, strerror(-err), max);
	else if (clone == 0)
		snprintf(msg, size,
			 "%s: %s: this kernel refuses user namespaces to other users than root "
			 "(kernel.unprivileged_userns_clone = 0); allow them with "
			 "`sysctl -w kernel.unprivileged_userns_clone=1`, or run as root",
			 step, strerror(-err));
	else if (apparmor == 1)
		snprintf(msg, size,
			 "%s: %s: AppArmor restricts unprivileged user namespaces "
			 "(kernel.apparmor_restrict_unprivileged_userns = 1); give classfs-run an "
			 "AppArmor profile with `userns,`, or `sysctl -w "
			 "kernel.apparmor_restrict_unprivileged_userns=0`, or run as root",
			 step, strerror(-err));
	else
		snprintf(msg, size,
			 "%s: %s (no setting refuses user namespaces here: a seccomp filter or a "
			 "chroot? classfs-run in a chroot needs root)",
			 step, strerror(-err));
	return err;
}

/**
 * cfs_userns_enter() - make the calling (single-threaded) process the
 * owner of a new user namespace, @uid and @gid mapped to themselves, or
 * to 0 when @as_root
 * @msg: told why it failed (the setting that refuses it).
 * @size: its size.
 * Return: 0 or -errno.
 */
int cfs_userns_enter(uid_t uid, gid_t gid, bool as_root, char *msg, size_t size)
{
	int r;

	if (unshare(CLONE_NEWUSER) < 0)
		return cfs_userns_refusal(-errno, "cannot make a user namespace", msg, size);
	r = cfs_idmap_write(as_root ? 0 : uid, uid, as_root ? 0 : gid, gid);
	if (r < 0)
		return cfs_userns_refusal(r, "cannot map the caller's uid and gid in a user namespace",
					  msg, size);
	return 0;
}

/* the initial user namespace maps every uid to itself, and only it (systemd's test too) */
static bool in_initial_userns(void)
{
	char buf[256];
	unsigned long inside, outside, count;
	ssize_t n;
	int fd, end = 0;

	fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* no /proc: nothing says otherwise */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	return sscanf(buf, " %lu %lu %lu %n", &inside, &outside, &count, &end) == 3 &&
	       inside == 0 && outside == 0 && count == 4294967295ul && !buf[end];
}

/**
 * cfs_userns_privileged() - whether the caller may make the environment
 * as root does: device nodes in a tmpfs /dev.  The kernel lets mknod()
 * make a device only to a process with CAP_MKNOD in the initial user
 * namespace; uid 0 of a container's user namespace gets EPERM and takes
 * the way of a caller who is not root (a FUSE /dev view).
 */
bool cfs_userns_privileged(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (geteuid() != 0 || !in_initial_userns())
		return false;
	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[CAP_TO_INDEX(CAP_MKNOD)].effective & CAP_TO_MASK(CAP_MKNOD);
}

/**
 * cfs_userns_capable() - whether the calling process (not root) can make
 * the environment where it is: it has CAP_SYS_ADMIN (namespaces, mounts),
 * CAP_NET_ADMIN (the broadcasts) and CAP_SYS_CHROOT (joining) in its user
 * namespace, as a process has in one it made with unshare(CLONE_NEWUSER)
 * until it executes a program.
 */
bool cfs_userns_capable(void)
{
	static const int need[] = { CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SYS_CHROOT };
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!(data[CAP_TO_INDEX(need[i])].effective & CAP_TO_MASK(need[i])))
			return false;
	return true;
}

/* one setting of a file system context; Return: 0 or -errno */
static int fs_set(int fsfd, const char *key, const char *value)
{
	if (fsconfig(fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0)
		return -errno;
	return 0;
}

/**
 * cfs_userns_fuse_detached() - a FUSE mount attached nowhere yet, served
 * by whoever reads the /dev/fuse descriptor
 * @fsname: its source in /proc/mounts.
 * @uid: the uid and gid the mount belongs to, inside.
 * @fuse_fd: receives the /dev/fuse descriptor (close-on-exec).
 * @mnt_fd: receives the mount, for cfs_userns_attach().
 * @msg: told what failed.
 * @size: its size.
 *
 * Detached, because the daemon that serves it opens files (/dev/null)
 * before it serves anything: a /dev already covered by its own view
 * would wait for it forever.
 * Return: 0 or -errno.
 */
int cfs_userns_fuse_detached(const char *fsname, uid_t uid, gid_t gid, int *fuse_fd, int *mnt_fd,
			     char *msg, size_t size)
{
	char num[32];
	int f, fsfd, m, r;

	f = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (f < 0) {
		r = -errno;
		snprintf(msg, size, "cannot open /dev/fuse: %s", strerror(-r));
		return r;
	}
	fsfd = fsopen("fuse", FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		r = -errno;
		close(f);
		if (r == -EPERM || r == -EACCES)
			return cfs_userns_refusal(r, "cannot mount FUSE in the user namespace", msg,
						  size);
		snprintf(msg, size, "cannot make a FUSE file system: %s", strerror(-r));
		return r;
	}
	snprintf(num, sizeof(num), "%d", f);
	r = fs_set(fsfd, "fd", num);
	if (r == 0)
		r = fs_set(fsfd, "rootmode", "40000");
	if (r == 0) {
		snprintf(num, sizeof(num), "%u", (unsigned int)uid);
		r = fs_set(fsfd, "user_id", num);
	}
	if (r == 0) {
		snprintf(num, sizeof(num), "%u", (unsigned int)gid);
		r = fs_set(fsfd, "group_id", num);
	}
	/* other uids inside (a COMMAND that changes its uid) may look too, as in sysfs */
	if (r == 0)
		r = fs_set(fsfd, "allow_other", NULL);
	if (r == 0)
		r = fs_set(fsfd, "default_permissions", NULL);
	if (r == 0)
		r = fs_set(fsfd, "source", fsname);
	if (r == 0)
		r = fs_set(fsfd, "subtype", "classfs");
	if (r == 0 && fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		r = -errno;
	m = r == 0 ? fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : -1;
	if (r == 0 && m < 0)
		r = -errno;
	close(fsfd);
	if (r < 0) {
		close(f);
		if (r == -EPERM || r == -EACCES)
			return cfs_userns_refusal(r, "cannot mount FUSE in the user namespace", msg,
						  size);
		snprintf(msg, size, "cannot mount FUSE (%s): %s", fsname, strerror(-r));
		return r;
	}
	*fuse_fd = f;
	*mnt_fd = m;
	return 0;
}

/**
 * cfs_userns_attach() - put the detached mount @mnt_fd on @where (closed)
 * Return: 0 or -errno.
 */
int cfs_userns_attach(int mnt_fd, const char *where)
{
	int r = 0;

	if (move_mount(mnt_fd, "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		r = -errno;
	close(mnt_fd);
	return r;
}
