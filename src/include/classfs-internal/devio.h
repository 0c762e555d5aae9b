/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * classfs-internal/devio.h - device nodes that answer (src/devio): the
 * pieces the supervisor of an environment's programs (run layer) puts
 * together.  A program's open() of an emulated node is answered with a
 * descriptor the supervisor injects (a pty's slave, a memfd), and its
 * ioctl() of that descriptor with what a *handler* says: a recording
 * replayed (umockdev's .ioctl trees, SPI transfers, usbmon captures) or
 * a caller's function.  read() and write() go to the descriptor's other
 * end, which a *player* serves (umockdev's read/write scripts, evemu
 * event files) or a test holds.
 *
 * Handlers never touch the calling program directly: they see its
 * memory through struct cfs_mem (process_vm_readv/writev in the
 * supervisor, plain memory in unit tests), so a recording can be
 * replayed and checked without any process around it.
 *
 * Errors of a file are -errno with "FILE:LINE: reason" in @msg; errors of
 * a call are the -errno the program gets.
 */
#ifndef CLASSFS_INTERNAL_DEVIO_H
#define CLASSFS_INTERNAL_DEVIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/**
 * struct cfs_mem - the memory of the process whose call is answered
 * @read: copy @len bytes at @addr into @buf: 0, or -EFAULT (unmapped) or
 *        -ESRCH (the process is gone).
 * @write: copy @buf to @addr: the same returns.
 * @ctx: passed to both.
 */
struct cfs_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	void *ctx;
};

/* mem.c: the calling process's own memory (unit tests, in-process callers) */
extern const struct cfs_mem cfs_mem_self;
/* process_vm_readv/writev of another process (@pid's memory) */
void cfs_mem_process(struct cfs_mem *m, const pid_t *pid);

static inline int cfs_mem_read(const struct cfs_mem *m, uint64_t addr, void *buf, size_t len)
{
	return len ? m->read(m->ctx, addr, buf, len) : 0;
}

static inline int cfs_mem_write(const struct cfs_mem *m, uint64_t addr, const void *buf, size_t len)
{
	return len ? m->write(m->ctx, addr, buf, len) : 0;
}

/**
 * struct cfs_ioctl_call - one ioctl() a program made on an emulated node
 * @request: its request number (the second argument, as the kernel sees it:
 *           the low 32 bits)
 * @arg: its third argument (an address for most requests)
 * @mem: the program's memory
 * @node: the node's path ("/dev/bus/usb/001/011"), for messages
 * @pid: the calling thread (0: unknown)
 * @opens: how many times the node has been opened so far: a handler that
 *         keeps a position per open file starts again when it changes (an
 *         ioctl tree's replay, as umockdev's per client)
 */
struct cfs_ioctl_call {
	unsigned long request;
	uint64_t arg;
	const struct cfs_mem *mem;
	const char *node;
	pid_t pid;
	unsigned long opens;
};

/*
 * What a handler's ioctl() returns when the request is none of its own:
 * the supervisor then lets the call go to the descriptor the program
 * holds (a pty answers the terminal requests, anything else ENOTTY).
 */
#define CFS_IOCTL_PASS (-1000000L)

/**
 * struct cfs_ioctl_handler - what answers ioctl() of one node
 * @ioctl: answer @call: the result the program gets (>= 0), -errno, or
 *         CFS_IOCTL_PASS.  Called for one node from one thread at a time.
 * @free: release @data (NULL: nothing to release).
 * @data: the handler's state (a recording, its replay position, ...).
 * @may_block: @ioctl waits for another process that reports to the
 *             supervisor (a handler in a program inside the environment):
 *             it is called in a thread of its own, so that the supervisor
 *             goes on answering, that process's calls included.
 */
struct cfs_ioctl_handler {
	long (*ioctl)(void *data, const struct cfs_ioctl_call *call);
	void (*free)(void *data);
	void *data;
	bool may_block;
};

/* thread.c: a thread of ours, with a root and working directory of its own */
int cfs_thread_create(pthread_t *thread, bool detached, void *(*fn)(void *arg), void *arg);

/* fdpass.c: one message on a Unix socket with at most one descriptor beside it */
struct iovec;
int cfs_send_fd(int sock, const struct iovec *iov, int iovcnt, int fd);
ssize_t cfs_recv_fd(int sock, void *buf, size_t size, int *fd);

/* log.c: one line on stderr, "classfs: " first; what a user needs to see
 * (an ioctl a recording lacks, a script that went out of step) */
void cfs_devio_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ... and what is told once per key (a request a recording lacks) */
struct cfs_once {
	unsigned long *seen;
	size_t n, cap;
};
bool cfs_once(struct cfs_once *o, unsigned long key);
void cfs_once_free(struct cfs_once *o);

/*
 * ioctl-file.c: a umockdev ioctl recording (`umockdev-record --ioctl`):
 * an ioctl tree (usbdevfs, evdev, hidraw, generic _IOR/_IOW requests, with
 * or without an "@DEV path" first line) or an SPI transfer log ("@DEV
 * path (SPI)").  @node is the node it is loaded for; a file whose @DEV
 * names another node is refused (-EINVAL, message).
 * Return: 0 and *@out filled; -EINVAL (@msg "FILE:LINE: reason"),
 * -ENOENT or another -errno of reading @path, -ENOMEM.
 */
int cfs_ioctl_file_load(const char *path, const char *node, struct cfs_ioctl_handler *out,
			char *msg, size_t msgsize);
int cfs_ioctl_text_load(const char *text, size_t len, const char *name, const char *node,
			struct cfs_ioctl_handler *out, char *msg, size_t msgsize);
/* the tree of an existing recording of @node, for a recorder to add to */
struct cfs_ioctl_tree;
int cfs_ioctl_file_tree(const char *path, const char *node, struct cfs_ioctl_tree **out,
			char *msg, size_t msgsize);

/*
 * ioctl-tree.c: an ioctl tree a recorder builds, written in umockdev's
 * format (what cfs_ioctl_text_load() and umockdev-run read back).
 * cfs_ioctl_tree_add() adds one call that succeeded: @arg holds the
 * argument's @len bytes after the call (_IOC_SIZE(request) of them; for
 * CROS_EC_DEV_IOCXCMD_V2 the command and its insize bytes of answer; for
 * USBDEVFS_REAPURB(NDELAY) the reaped struct usbdevfs_urb followed by
 * its buffer: actual_length bytes of an IN endpoint's, buffer_length of
 * an OUT endpoint's).  Return: 0 (added, or nothing to add: a failed
 * call, a request answered without a recording, an answer the tree
 * already holds), -EOPNOTSUPP (a request the format cannot hold),
 * -EINVAL (@len too short), -ENOMEM.
 */
struct cfs_ioctl_tree;
struct cfs_ioctl_tree *cfs_ioctl_tree_new(void);
int cfs_ioctl_tree_add(struct cfs_ioctl_tree *t, unsigned long request, const void *arg,
		       size_t len, long result);
/* "@DEV @dev" (none when NULL) and the tree; 0 or -EIO */
int cfs_ioctl_tree_write(const struct cfs_ioctl_tree *t, const char *dev, FILE *f);
void cfs_ioctl_tree_free(struct cfs_ioctl_tree *t);

/*
 * record.c: a recorder's side of a program's ioctl() of a real device
 * (classfs-record --ioctl): the call made again through @exec with the
 * argument copied from and back to the program's memory (usbdevfs URBs
 * kept from their submission to their reap, transfers' data pointers,
 * cros_ec commands, every _IOR/_IOW/_IOWR request by its size), and what
 * succeeded added to a tree written in umockdev's format.  A request
 * without a size is CFS_IOCTL_PASS: the caller lets the program's own
 * call run.  Thread-safe: calls of several threads may be in flight.
 */
typedef long (*cfs_record_exec_fn)(void *ctx, unsigned long request, unsigned long arg);
struct cfs_ioctl_recorder;
struct cfs_ioctl_recorder *cfs_ioctl_recorder_new(struct cfs_ioctl_tree *tree);
long cfs_ioctl_record(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		      cfs_record_exec_fn exec, void *ctx);
int cfs_ioctl_recorder_write(struct cfs_ioctl_recorder *r, const char *dev, FILE *f);
void cfs_ioctl_recorder_free(struct cfs_ioctl_recorder *r);

/*
 * recorder.c: the supervisor of a recording: a thread serving the
 * listener of a program that runs on the host (no environment), whose
 * calls on the recorded devices are made on a copy of its descriptor
 * (pidfd_getfd()) and recorded: ioctl() as above into an ioctl tree,
 * read()/write() (and readv, writev, pread64, pwrite64: the filter of
 * cfs_seccomp_install_flags(true)) into a read/write script, or the
 * input events read into an evemu file (writes run unrecorded).  Every
 * other call continues.  cfs_recorder_add() checks the device (a
 * character device) and opens @file for writing (-errno, @msg naming
 * what); cfs_recorder_start() takes the listener; cfs_recorder_finish()
 * stops the thread (once the program's calls are answered), writes the
 * recordings and frees the recorder.
 */
enum cfs_record_kind { CFS_RECORD_IOCTL, CFS_RECORD_SCRIPT, CFS_RECORD_EVEMU };
struct cfs_recorder;
int cfs_recorder_new(struct cfs_recorder **out);
int cfs_recorder_add(struct cfs_recorder *rec, enum cfs_record_kind kind, const char *dev,
		     const char *file, char *msg, size_t msgsize);
bool cfs_recorder_wants_io(const struct cfs_recorder *rec);
int cfs_recorder_start(struct cfs_recorder *rec, int listener);
int cfs_recorder_finish(struct cfs_recorder *rec, char *msg, size_t msgsize);

/*
 * pcap.c: a usbmon capture (pcap or pcapng, LINKTYPE_USB_LINUX or
 * LINKTYPE_USB_LINUX_MMAPPED) of USB device @busnum/@devnum replayed as
 * its usbdevfs node's traffic.  Same returns as cfs_ioctl_file_load().
 */
int cfs_pcap_file_load(const char *path, unsigned busnum, unsigned devnum,
		       struct cfs_ioctl_handler *out, char *msg, size_t msgsize);

/*
 * script.c, evemu.c: players.  A player runs in a thread of its own on
 * @fd, the node's other end (a pty's master): a script's 'r' blocks are
 * written to it after their delay, its 'w' blocks must be read from it;
 * an evemu file's events are written as struct input_event at their
 * times.  cfs_player_wait() waits for the end: 0 when everything was
 * played, -EPROTO when the program wrote something else than the script
 * says (@msg: "FILE:LINE: expected ..., got ..."), -EPIPE when the
 * other side closed before the end.  cfs_player_stop() stops it (at
 * once) and frees it; @fd stays the caller's.
 */
struct cfs_player;
int cfs_script_start(const char *text, size_t len, const char *name, int fd,
		     struct cfs_player **out, char *msg, size_t msgsize);
int cfs_evemu_start(const char *text, size_t len, const char *name, int fd,
		    struct cfs_player **out, char *msg, size_t msgsize);
/* a Unix stream socket at @path: the script is played to each client */
int cfs_socket_script_start(const char *text, size_t len, const char *name, const char *path,
			    struct cfs_player **out, char *msg, size_t msgsize);
int cfs_player_wait(struct cfs_player *p, char *msg, size_t msgsize);
void cfs_player_stop(struct cfs_player *p);

/*
 * The node a recording was made of, for a caller given none: a script's
 * "d 0 NODE" first line (only comments before it), an evemu file's
 * "# device NODE" line.  Return: 0 and @node filled; -ENOENT when the
 * recording names none; -ENAMETOOLONG when @size is too small.
 */
int cfs_script_node(const char *text, size_t len, char *node, size_t size);
int cfs_evemu_node(const char *text, size_t len, char *node, size_t size);

/*
 * script-writer.c: a recorder's side of the read/write scripts: the
 * program's reads ('r') and writes ('w') of a node, each with the time
 * since the operation before (ms, CLOCK_MONOTONIC: cfs_script_now_ms()),
 * written to @f as umockdev's script lines.  A read or write less than
 * 10 ms after one of the same kind joins its block, as umockdev-record
 * does.  @node (NULL: none) is written as the "d 0 NODE" first line.
 * cfs_script_writer_finish() ends the last line and frees the writer;
 * @f stays the caller's.  The functions return 0 or the first -errno of
 * writing @f (-EINVAL for an op that is not 'r' or 'w').
 * cfs_script_escape() escapes a block as the scripts do; it returns the
 * escaped length and fills @out (cut to @outsize, never in an escape).
 */
struct cfs_script_writer;
int cfs_script_writer_new(FILE *f, const char *node, uint64_t now_ms,
			  struct cfs_script_writer **out);
int cfs_script_writer_add(struct cfs_script_writer *w, char op, const void *buf, size_t len,
			  uint64_t now_ms);
int cfs_script_writer_finish(struct cfs_script_writer *w);
uint64_t cfs_script_now_ms(void);
size_t cfs_script_escape(const void *buf, size_t len, char *out, size_t outsize);

/*
 * nodes.c: the emulated nodes of one environment, named by their path
 * in it ("/dev/input/event5", resolved in its root directory @root: only
 * a character or block device of its /dev, or a regular file there that
 * holds a node's recorded contents, is a node).  A character device is
 * a pty whose master is the node's other end (cfs_nodes_dev_fd(), the
 * players'), a block device or a USB device (major 189) a memfd.
 * Errors: -ENOENT (no such path), -ENODEV (not a node), -EINVAL with
 * @msg for a bad recording, -ENOMEM.  cfs_nodes_release() stops the
 * players and drops the owner's reference; calls in flight keep the
 * rest until they are answered.
 */
struct cfs_nodes;
int cfs_nodes_new(int root, struct cfs_nodes **out);
void cfs_nodes_release(struct cfs_nodes *n);
/* a reference for a user that may outlive the owner's release (a server) */
void cfs_nodes_get(struct cfs_nodes *n);
void cfs_nodes_put(struct cfs_nodes *n);
/* takes @h: freed on error too */
int cfs_nodes_set_handler(struct cfs_nodes *n, const char *path, struct cfs_ioctl_handler *h,
			  char *msg, size_t msgsize);
enum cfs_player_kind { CFS_PLAYER_SCRIPT, CFS_PLAYER_EVEMU };
int cfs_nodes_play(struct cfs_nodes *n, const char *path, enum cfs_player_kind kind,
		   const char *text, size_t len, const char *name, char *msg, size_t msgsize);
int cfs_nodes_play_socket(struct cfs_nodes *n, const char *path, const char *text, size_t len,
			  const char *name, char *msg, size_t msgsize);
int cfs_nodes_wait(struct cfs_nodes *n, const char *path, char *msg, size_t msgsize);
int cfs_nodes_dev_fd(struct cfs_nodes *n, const char *path);

/*
 * supervisor.c: one thread per process answers the calls its listeners
 * send.  cfs_supervise() serves a listener a child installed (its
 * programs' calls go to @nodes; the thread takes a reference to @nodes
 * for each call in flight); cfs_supervise_self() installs the filter
 * on the calling thread (once per thread) and makes its calls, and
 * those of every thread that did so, go to @nodes from now on (NULL:
 * to none: every call runs as without the filter).  cfs_seccomp_install()
 * is what a child calls before it executes a program.
 */
int cfs_seccomp_install(void);
/* @io: read, write, readv, writev, pread64, pwrite64 sent too (a recorder's) */
int cfs_seccomp_install_flags(bool io);
enum cfs_filter_mode { CFS_FILTER_DEFAULT, CFS_FILTER_IO, CFS_FILTER_NO_OPEN };
int cfs_seccomp_install_mode(enum cfs_filter_mode mode);
int cfs_seccomp_send_listener(int sock, bool io);
int cfs_seccomp_recv_listener(int sock, int *listener);
int cfs_supervise(int listener, struct cfs_nodes *nodes);
int cfs_supervise_self(struct cfs_nodes *nodes);
void cfs_supervise_forget(struct cfs_nodes *nodes);

#endif
