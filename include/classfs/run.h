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
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* set for every program run in the environment */
#define CLASSFS_RUN_SOCKET_ENV	"CLASSFS_SOCKET"
/*
 * ... and where its device nodes are served to the programs inside, which
 * report to the environment's supervisor and may have none of their own
 * (the Python module in an environment it was started in uses it)
 */
#define CLASSFS_RUN_NODES_ENV	"CLASSFS_NODES_SOCKET"

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
 * classfs_run_own_user_namespace() - make the calling process, if it is
 * not root, the owner of a user namespace of its own
 * @root: map the caller's uid and gid to 0 there (else to themselves).
 * @err: NULL, or told why it failed (the setting that refuses user
 *       namespaces, as classfs_run_start() names it).
 *
 * For a caller who is not root and whose programs' device nodes must
 * answer: the kernel shows an environment's /dev, mounted in a user
 * namespace, to that namespace only, and the supervisor is a thread of
 * the caller; environments started afterwards are made in the caller's
 * namespace (its programs keep its uid, or 0 with @root, and their
 * capabilities go at exec() as a uid other than 0).  classfs-run and the
 * Python module do this first.  Call while the process is single-threaded;
 * there is no way back.
 * Return: 1 when made, 0 when the caller is root (none is needed),
 * -EINVAL (threads), -EPERM and the like (refused: @err says by what).
 */
CLASSFS_PUBLIC int classfs_run_own_user_namespace(bool root, struct classfs_run_error *err);

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


/*
 * Device nodes that answer.  Every program the environment runs
 * (classfs_run_spawn(), classfs_run_call(), and the caller's own thread
 * after classfs_run_enter()) reports its open(), ioctl() and fstat() of
 * the environment's device nodes to a supervisor thread in the calling
 * process (a seccomp filter with user notification; the program gets
 * no_new_privs, so a set-user-ID program gains nothing inside).  As in
 * umockdev's testbeds, a character device node opens as a raw pty whose
 * other end is the device's (classfs_run_dev_fd(), or a script playing
 * there); a block or USB device node opens as a file of its recorded
 * contents; fstat() of either says what the device is.  Its ioctl()s are
 * answered by a recording or a function, else by the descriptor itself
 * (a pty answers terminal requests, anything else ENOTTY).  Statically
 * linked programs and programs that make system calls without libc are
 * served alike.  docs/classfs-run.md says what it costs.
 */

/* what a classfs_ioctl_fn returns for a request it leaves to the descriptor */
#define CLASSFS_IOCTL_PASS (-1000000L)

/**
 * struct classfs_ioctl - an ioctl() a program made on a node
 * @node: the node's path ("/dev/input/event5").
 * @request: its request number.
 * @arg: its third argument, an address in the program for most requests
 *       (classfs_ioctl_read(), classfs_ioctl_write()).
 * @pid: the calling thread (in the caller's pid namespace).
 * @mem: the program's memory (opaque).
 */
struct classfs_ioctl {
	const char *node;
	unsigned long request;
	uint64_t arg;
	pid_t pid;
	const void *mem;
};

/**
 * classfs_ioctl_read() - copy @len bytes at @addr of the calling program into @buf
 * Return: 0, -EFAULT (not mapped), -ESRCH (the program is gone), -EINVAL.
 */
CLASSFS_PUBLIC int classfs_ioctl_read(const struct classfs_ioctl *call, uint64_t addr, void *buf,
				      size_t len);

/**
 * classfs_ioctl_write() - copy @buf to @addr of the calling program
 * Return: as classfs_ioctl_read().
 */
CLASSFS_PUBLIC int classfs_ioctl_write(const struct classfs_ioctl *call, uint64_t addr,
				       const void *buf, size_t len);

/*
 * answers @call: the ioctl's result (>= 0), a -errno the program gets,
 * or CLASSFS_IOCTL_PASS.  Runs in the supervisor thread, one call at a
 * time per node.
 */
typedef long (*classfs_ioctl_fn)(const struct classfs_ioctl *call, void *data);

/**
 * enum classfs_recording - what a recording holds (umockdev-record's formats)
 * @CLASSFS_RECORDING_IOCTL: a node's ioctls (`--ioctl`): an ioctl tree or
 *                           an SPI transfer log; target: the node.
 * @CLASSFS_RECORDING_SCRIPT: a node's read()/write() dialogue with its
 *                            timing (`--script`); target: the node.
 * @CLASSFS_RECORDING_EVEMU: input events (evemu-record); target: an
 *                           event node.
 * @CLASSFS_RECORDING_PCAP: a usbmon capture of one USB device; target:
 *                          the device's /sys path.
 * @CLASSFS_RECORDING_UNIX_STREAM: a script played to every client of a
 *                                 Unix stream socket; target: its path.
 */
enum classfs_recording {
	CLASSFS_RECORDING_IOCTL,
	CLASSFS_RECORDING_SCRIPT,
	CLASSFS_RECORDING_EVEMU,
	CLASSFS_RECORDING_PCAP,
	CLASSFS_RECORDING_UNIX_STREAM,
};

/**
 * classfs_run_load() - replay a recording on a node of the environment
 * @run: the environment.
 * @kind: what @file holds.
 * @target: the node (an absolute path as the environment's programs
 *          name it, links followed), the /sys path of a USB device for
 *          a capture, or a socket's path.
 * @file: the recording.
 * @err: NULL, or told why it failed.
 *
 * An ioctl recording or capture replaces the handler the node had; a
 * script or event file starts playing at once on the node's other end.
 * An ioctl the recording does not hold fails as umockdev's replay fails
 * it (ENOTTY; ENOENT for evdev), logged on stderr with its number and
 * size.
 * Return: 0; -EINVAL (a bad recording: @err says "FILE:LINE: reason"),
 * -ENOENT (@file or @target missing), -ENODEV (@target is no device
 * node of the environment), or another -errno.
 */
CLASSFS_PUBLIC int classfs_run_load(struct classfs_run *run, enum classfs_recording kind,
				    const char *target, const char *file,
				    struct classfs_run_error *err);

/**
 * classfs_run_load_data() - classfs_run_load() of a recording in memory
 * @name: names it in messages ("<string>").
 * (%CLASSFS_RECORDING_PCAP takes a file only: -EINVAL.)
 */
CLASSFS_PUBLIC int classfs_run_load_data(struct classfs_run *run, enum classfs_recording kind,
					 const char *target, const void *data, size_t len,
					 const char *name, struct classfs_run_error *err);

/**
 * classfs_run_wait_script() - wait until the scripts and event files
 * playing on @node played to their end
 * Return: 0; -EPROTO when the program wrote what the script did not
 * expect, -EPIPE when it closed before the end (@err says where); -ENODEV.
 */
CLASSFS_PUBLIC int classfs_run_wait_script(struct classfs_run *run, const char *node,
					   struct classfs_run_error *err);

/**
 * classfs_run_dev_fd() - the other end of a character device node (a pty's
 * master): what the caller writes there, the program reads from the node,
 * and the other way round.
 * Return: the descriptor (the environment's: valid until
 * classfs_run_stop(), do not close it), or -errno (-ENODEV: not a node,
 * or a block or USB device, which have none).
 */
CLASSFS_PUBLIC int classfs_run_dev_fd(struct classfs_run *run, const char *node);

/**
 * classfs_run_attach_ioctl() - @fn answers @node's ioctls from now on
 * @release: NULL, or called with @data when the handler is replaced,
 *           detached or the environment stops (at once when attaching
 *           fails).
 * Return: 0 or -errno (-ENODEV: not a node of the environment).
 */
CLASSFS_PUBLIC int classfs_run_attach_ioctl(struct classfs_run *run, const char *node,
					    classfs_ioctl_fn fn, void *data,
					    void (*release)(void *data));

/**
 * classfs_run_detach_ioctl() - @node's ioctls go to its descriptor again
 * Return: 0 or -errno.
 */
CLASSFS_PUBLIC int classfs_run_detach_ioctl(struct classfs_run *run, const char *node);

/*
 * Recording a real device (classfs-record): a program runs on this
 * machine, with no environment, and what it does with a device of the
 * host's /dev is recorded in umockdev-record's formats, which
 * classfs_run_load() and umockdev-run replay.  Its calls on the device
 * go through a supervisor thread of the caller (a seccomp filter with
 * user notification, as the environment's nodes): made there on a copy
 * of its descriptor (pidfd_getfd(), Linux 5.6), with the arguments
 * copied from and to its memory, and recorded.  A caller without
 * CAP_SYS_ADMIN runs the program with no_new_privs.
 */
struct classfs_recorder;

/**
 * classfs_recorder_new() - a recorder with nothing to record yet
 * @out: receives it.
 * Return: 0 or -errno (-ENOMEM).
 */
CLASSFS_PUBLIC int classfs_recorder_new(struct classfs_recorder **out);

/**
 * classfs_recorder_add() - record the program's calls on @dev into @file
 * @rec: the recorder (before classfs_recorder_spawn()).
 * @kind: %CLASSFS_RECORDING_IOCTL (its ioctls, an ioctl tree: usbdevfs,
 *        evdev, hidraw, cros_ec and plain _IOR/_IOW requests),
 *        %CLASSFS_RECORDING_SCRIPT (its reads and writes, a script) or
 *        %CLASSFS_RECORDING_EVEMU (the input events it reads, evemu's
 *        format).
 * @dev: the device node: a character device.
 * @file: the recording: created, or added to when it holds a recording
 *        of @dev already (as umockdev-record does), else emptied when the
 *        program starts.
 * @err: NULL, or told why it failed (naming @dev or @file).
 * Return: 0; -ENOENT (no @dev), -ENODEV (no character device), -EINVAL
 * (another @kind; @file holds another node's recording), -errno of
 * opening @file.
 */
CLASSFS_PUBLIC int classfs_recorder_add(struct classfs_recorder *rec, enum classfs_recording kind,
					const char *dev, const char *file,
					struct classfs_run_error *err);

/**
 * classfs_recorder_spawn() - run @argv recorded (once per recorder)
 * @pid: receives the program's pid; classfs_run_wait() waits for it.
 * Return: 0 or -errno (-EINVAL: nothing to record, or spawned already;
 * -EBUSY: the caller runs under a supervisor already, an environment's).
 */
CLASSFS_PUBLIC int classfs_recorder_spawn(struct classfs_recorder *rec, char *const argv[],
					  pid_t *pid);

/**
 * classfs_recorder_finish() - stop recording, write the recordings and
 * free @rec (once the program exited: calls it or its children make
 * afterwards fail with ENOSYS)
 * @err: NULL, or told which recording could not be written.
 * Return: 0 or the first -errno of writing a recording.
 */
CLASSFS_PUBLIC int classfs_recorder_finish(struct classfs_recorder *rec,
					   struct classfs_run_error *err);

#ifdef __cplusplus
}
#endif
#endif
