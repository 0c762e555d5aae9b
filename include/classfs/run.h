/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.h - run programs against a classfs tree: a private environment in
 * which a classfsd tree is /sys, a private /dev holds the devices' nodes
 * and /run/udev their udev database, and hotplug events reach libudev
 * monitors (udev netlink group 2 of a private network namespace).
 *
 * classfs_run_start() makes the environment: a holder process (a child
 * of the caller) enters a new mount and network namespace, starts a
 * classfsd there (or joins a running one), mounts the tree over /sys and
 * tmpfs on /dev and /run/udev, then follows the daemon's events, keeping
 * /dev and /run/udev/data in step and re-broadcasting each event after
 * (for a removal: before) it changed them.  classfs_run_spawn() and
 * classfs_run_call() run a program or a function in a child that joins
 * those namespaces; classfs_run_stop() tears everything down.
 *
 * As root, /dev is a nodev tmpfs holding device nodes made with mknod().
 * Any other uid gets the same environment inside a user namespace of its
 * own (the kernel must allow unprivileged user namespaces): its uid and
 * gid mapped to themselves (or to 0, @root of the options), the holder
 * mounting and broadcasting with the capabilities that namespace gives
 * it, and /dev the daemon's devtmpfs-style view of the tree
 * (classfs_mount_devtmpfs(): special files no mknod() made, nodev like
 * the tmpfs).  Programs run there have the caller's uid and gid and no
 * capabilities; joining a running daemon (@socket) needs root.  A caller
 * that made a user namespace itself (unshare(CLONE_NEWUSER)) and still
 * has CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SYS_CHROOT in it gets the
 * environment in that namespace rather than one below it, so that it can
 * join the environment's mount and network namespaces with setns() and
 * go back to its own (a test process that enters one environment after
 * another); @root still makes a namespace below.  Nothing stays mounted
 * or running after classfs_run_stop(), nor after the caller dies (the
 * holder and daemon get SIGKILL/SIGTERM as parent-death signals and the
 * namespaces die with their last process).  Call from a process that is single-threaded
 * at that moment, or at least holds no lock another thread could hold
 * (the holder and the children are forked without exec).
 */
#ifndef CLASSFS_RUN_H
#define CLASSFS_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* set for every program run in the environment */
#define CLASSFS_RUN_SOCKET_ENV	"CLASSFS_SOCKET"

/**
 * struct classfs_run_options - what the environment holds
 * @records: NULL, or a NULL-terminated list of umockdev record files,
 *           loaded in order into the daemon (all or nothing each).
 * @sample: load the built-in sample machine (data/sample.umockdev) first.
 * @layout: layout of a daemon started here (ignored when joining).
 * @socket: NULL to start a classfsd of our own inside the namespaces;
 *          else the control socket of a running classfsd to join (its
 *          tree must be mounted; records are loaded into it, and stay).
 * @daemon: the classfsd to start; NULL: $CLASSFSD, else the installed
 *          one (the sbindir the library was configured with; a build
 *          that is not installed sets $CLASSFSD).
 * @verbose: log what the holder does to stderr.
 * @root: for a caller who is not root: map the caller's uid and gid to 0
 *        inside (for programs that insist on root; they have every
 *        capability there, and none outside).  Ignored for root.
 */
struct classfs_run_options {
	const char *const *records;
	bool sample;
	enum classfs_layout layout;
	const char *socket;
	const char *daemon;
	bool verbose;
	bool root;
};

/**
 * struct classfs_run_error - why an environment could not be made
 * @message: one line naming what failed ("" when nothing did).
 */
struct classfs_run_error {
	char message[512];
};

struct classfs_run;

/**
 * classfs_run_start() - make a private environment
 * @opt: what it holds; NULL for an empty tree of the default layout.
 * @out: receives the environment.
 * @err: NULL, or told why it failed.
 *
 * Returns once the tree is mounted over /sys, /dev and /run/udev are
 * filled, and events are followed.
 * Return: 0; -EINVAL (bad options, bad record: @err names file, line
 * and reason), -ENOENT (a record file, the daemon or its socket missing),
 * -EPERM (joining a daemon when not root; user namespaces refused to a
 * caller who is not root: @err names the setting that refuses them and
 * what to change), -ENOMEM, or another -errno of a step.
 */
CLASSFS_PUBLIC int classfs_run_start(const struct classfs_run_options *opt,
				     struct classfs_run **out, struct classfs_run_error *err);

/**
 * classfs_run_socket() - the control socket of the environment's daemon
 * (what %CLASSFS_RUN_SOCKET_ENV holds for its programs): classctl and the
 * client library reach it from inside and outside the environment.
 */
CLASSFS_PUBLIC const char *classfs_run_socket(const struct classfs_run *run);

/**
 * classfs_run_spawn() - start a program in the environment
 * @run: the environment.
 * @argv: program (searched in $PATH) and arguments, NULL-terminated.
 * @pid: receives the child's pid; the caller reaps it (waitpid()).
 *
 * The child joins the mount and network namespaces and the holder's
 * root directory (the caller's, also in a chroot), keeps the caller's
 * working directory when it exists there, gets %CLASSFS_RUN_SOCKET_ENV
 * and SYSTEMD_DEVICE_VERIFY_SYSFS=0 in its environment and SIGKILL as
 * parent-death signal.  A program that cannot be executed makes the
 * child exit with 127 (126: not executable), as a shell does.
 * Return: 0 once the child is inside; -EINVAL; -EXDEV when /sys inside
 * is not the environment's tree (nothing was run); the -errno of fork or
 * of joining.
 */
CLASSFS_PUBLIC int classfs_run_spawn(struct classfs_run *run, char *const argv[], pid_t *pid);

/**
 * classfs_run_call() - call a function in the environment and wait
 * @run: the environment.
 * @fn: runs in a forked child that joined the namespaces (with the
 *      environment variables of classfs_run_spawn()); its return value is
 *      the child's exit status (0..255).
 * @data: passed to @fn (the child's copy of the caller's memory).
 *
 * Return: @fn's exit status (0..255), 128 + N when the child died of
 * signal N, or -errno when it could not be run (-EXDEV: /sys inside is
 * not the environment's tree, @fn did not run).
 */
CLASSFS_PUBLIC int classfs_run_call(struct classfs_run *run, int (*fn)(void *data), void *data);

/**
 * classfs_run_enter() - make the calling process join the environment
 * @run: the environment.
 *
 * For a process that wants to be inside itself (a test runner forked for
 * one test, a language binding's worker): it joins the environment's user
 * namespace (when it has one of its own), its network and mount
 * namespaces and the holder's root directory, keeps its working
 * directory when that exists inside (else "/"), and gets
 * %CLASSFS_RUN_SOCKET_ENV and SYSTEMD_DEVICE_VERIFY_SYSFS=0 in its
 * environment.  Inside a user namespace of the environment's own where it
 * is not uid 0 it keeps no capability, as a program classfs_run_spawn()
 * runs, and there is no way back: the caller keeps @run only to stop it
 * (from its parent, usually).  An environment made in the caller's own
 * user namespace (above) joins none: the caller may go back to the
 * namespaces and root it had with setns() and chroot().
 *
 * The caller must be single-threaded (the kernel refuses a multithreaded
 * process a new mount or user namespace: -EINVAL).
 * Return: 0; -EINVAL; -EXDEV when /sys inside is not the environment's
 * tree (the process may then be half inside: it should exit); the -errno
 * of setns(), chroot() or setenv().
 */
CLASSFS_PUBLIC int classfs_run_enter(struct classfs_run *run);

/**
 * classfs_run_holder_pid() - the pid of the process that holds the
 * environment's namespaces (/proc/PID/ns/{user,mnt,net}, /proc/PID/root)
 * @run: the environment.
 *
 * Return: the pid, or -EINVAL when @run is NULL.
 */
CLASSFS_PUBLIC pid_t classfs_run_holder_pid(const struct classfs_run *run);

/**
 * classfs_run_wait() - reap a child of classfs_run_spawn()
 * @pid: the child.
 *
 * Return: its exit status (0..255), 128 + N when it died of signal N,
 * or -errno of waitpid().
 */
CLASSFS_PUBLIC int classfs_run_wait(pid_t pid);

/**
 * classfs_run_stop() - tear the environment down and free @run
 * @run: the environment; NULL is ignored.
 *
 * Stops the event follower and the daemon it started (whose REMOVE
 * events go nowhere: nothing listens any more), and removes its socket
 * directory.  Programs still running in the environment keep the
 * namespaces alive until they exit, with their /sys no longer served.
 * Return: 0, or -EIO when the holder reported a failure while running
 * (a lost daemon, an event it could not apply).
 */
CLASSFS_PUBLIC int classfs_run_stop(struct classfs_run *run);

#ifdef __cplusplus
}
#endif
#endif
