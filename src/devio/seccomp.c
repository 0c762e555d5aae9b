// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * seccomp.c - the filter that sends a program's calls on device nodes to
 * the supervisor (seccomp user notification), and the few operations on
 * a notification the supervisor needs.
 *
 * What the filter sends: every open()/openat()/openat2() (the path is in
 * the program's memory, which a filter cannot read), ioctl() but the few
 * requests every program makes on terminals and descriptors (TCGETS for
 * isatty(), TIOCGWINSZ, FIONBIO, FIOCLEX, FIONCLEX: the descriptor the
 * program holds answers them as a device would), fstat(), and
 * newfstatat()/statx() of a descriptor (AT_EMPTY_PATH).  Everything else
 * runs as it would without the filter, at the cost of the filter's few
 * instructions.  Calls of another architecture (a 32-bit program) are
 * not sent: their nodes do not answer.
 *
 * A recorder's variant (cfs_seccomp_install_flags(true)) sends read(),
 * write(), readv(), writev(), pread64() and pwrite64() too: the data a
 * program exchanges with a device goes through the supervisor, which
 * records it.  Every read and write of the program then costs a round
 * trip to the supervisor, which is why only a recorder asks for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "devio-internal.h"

#define ARG_LO(n) offsetof(struct seccomp_data, args[n])

static const struct sock_filter filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* x32 calls (bit 30) are not ours */
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 7, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 6, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fstat, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_newfstatat, 11, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_statx, 14, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* notify: */
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	/* ioctl: the request's low 32 bits (the kernel's cmd is unsigned int) */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TCGETS, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCGWINSZ, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FIONBIO, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FIOCLEX, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FIONCLEX, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* newfstatat(dirfd, path, buf, flags): of a descriptor only */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* statx(dirfd, path, flags, mask, buf): the same */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_EMPTY_PATH, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* where the io calls go in: after the x32 check, the number in A */
#define IO_AT 6

/* the io calls to the notification, the rest on to the filter's list */
static const struct sock_filter io_calls[] = {
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 6, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_readv, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_writev, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pread64, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
};

#define N_FILTER (sizeof(filter) / sizeof(filter[0]))
#define N_IO (sizeof(io_calls) / sizeof(io_calls[0]))

/**
 * cfs_seccomp_install() - send the calling thread's node calls to a supervisor
 *
 * Installs the filter on the calling thread (and what it starts from now
 * on: threads, children, programs it executes).  A thread without
 * CAP_SYS_ADMIN gets no_new_privs first, as the kernel requires: a
 * set-user-ID program it runs then gains no privileges.
 * Return: the listener descriptor (close-on-exec) from which the
 * supervisor reads the notifications; -EBUSY when the thread already
 * reports to a supervisor (a filter with a listener is installed:
 * nested environments share the outer one's), or another -errno.
 */
int cfs_seccomp_install(void)
{
	return cfs_seccomp_install_mode(CFS_FILTER_DEFAULT);
}

/*
 * A listener; and no speculation mitigation forced on the program
 * (SPEC_ALLOW): the filter emulates devices, it guards nothing, and the
 * kernel's default for a filtered task (speculative store bypass
 * disabled) would slow every instruction of it, not only its calls.
 */
#define FILTER_FLAGS (SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_SPEC_ALLOW)

/* the place of open() in the list (patched out by CFS_FILTER_NO_OPEN) */
#define OPEN_AT 7

/**
 * cfs_seccomp_install_flags() - cfs_seccomp_install(), for a recorder too
 * @io: send the program's reads and writes as well (see above).
 *
 * Return: as cfs_seccomp_install().
 */
int cfs_seccomp_install_flags(bool io)
{
	return cfs_seccomp_install_mode(io ? CFS_FILTER_IO : CFS_FILTER_DEFAULT);
}

/**
 * cfs_seccomp_install_mode() - cfs_seccomp_install() with @mode's variant
 * @mode: CFS_FILTER_IO: reads and writes too (a recorder's);
 *        CFS_FILTER_NO_OPEN: open() (the old call, not openat()) runs as
 *        without the filter.  That one is for a thread of the
 *        supervisor's own process: a sanitizer's leak check stops every
 *        thread of the process, the supervisor's included, then opens
 *        /proc files with open(), which would wait for ever.  glibc,
 *        Python and Go open with openat(); only musl's static programs
 *        use open().
 * Return: as cfs_seccomp_install().
 */
int cfs_seccomp_install_mode(enum cfs_filter_mode mode)
{
	bool io = mode == CFS_FILTER_IO;
	/*
	 * The io block goes in before the list; no jump of the list crosses
	 * that place, the jumps being relative and all after it.
	 */
	struct sock_filter both[N_FILTER + N_IO], no_open[N_FILTER];
	struct sock_fprog prog = {
		.len = N_FILTER,
		.filter = (struct sock_filter *)filter,
	};
	int fd;

	if (mode == CFS_FILTER_NO_OPEN) {
		memcpy(no_open, filter, sizeof(filter));
		/* a number no call has: the jump is never taken */
		no_open[OPEN_AT].k = 0xffffffffu;
		prog.filter = no_open;
	}
	if (io) {
		memcpy(both, filter, IO_AT * sizeof(both[0]));
		memcpy(both + IO_AT, io_calls, sizeof(io_calls));
		memcpy(both + IO_AT + N_IO, filter + IO_AT, (N_FILTER - IO_AT) * sizeof(both[0]));
		prog = (struct sock_fprog){ .len = N_FILTER + N_IO, .filter = both };
	}

	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, FILTER_FLAGS, &prog);
	if (fd < 0 && errno == EACCES) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return -errno;
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, FILTER_FLAGS, &prog);
	}
	if (fd < 0)
		return -errno;
	/* the listener is the supervisor's: a program run from here must not hold it */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/**
 * cfs_seccomp_receive() - the next notification of @listener
 * @listener: from cfs_seccomp_install().
 * @req: filled in.
 * Return: 0; -ENOENT when the caller went away before it was read (read
 * the next one), another -errno.
 */
int cfs_seccomp_receive(int listener, struct seccomp_notif *req)
{
	*req = (struct seccomp_notif){ 0 };
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
		return -errno;
	return 0;
}

/**
 * cfs_seccomp_valid() - whether @id still waits for an answer
 *
 * What was read from the caller's memory or /proc/PID before is its own
 * only while the call waits: a caller killed meanwhile, its pid reused,
 * would be another process.
 */
bool cfs_seccomp_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* answer @id: @val, or -@error */
static int respond(int listener, uint64_t id, int64_t val, int32_t error, uint32_t flags)
{
	struct seccomp_notif_resp resp = { .id = id, .val = val, .error = error, .flags = flags };

	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
		return -errno;
	return 0;
}

/**
 * cfs_seccomp_continue() - let the call run in the kernel as it would
 * without the filter.  Return: 0 or -errno (-ENOENT: the caller is gone).
 */
int cfs_seccomp_continue(int listener, uint64_t id)
{
	return respond(listener, id, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/**
 * cfs_seccomp_answer() - the call returns @result (>= 0) or fails with
 * -@result (< 0: an -errno).  Return: 0 or -errno.
 */
int cfs_seccomp_answer(int listener, uint64_t id, long result)
{
	if (result < 0)
		return respond(listener, id, 0, (int32_t)result, 0);
	return respond(listener, id, result, 0, 0);
}

/**
 * cfs_seccomp_send_fd() - the call returns a new descriptor of the caller
 * that refers to @fd's open file
 * @cloexec: the new descriptor is close-on-exec (the caller's O_CLOEXEC).
 * Return: the descriptor's number in the caller, or -errno (-EMFILE: it
 * has no free number; the call then fails with that error).
 */
int cfs_seccomp_send_fd(int listener, uint64_t id, int fd, bool cloexec)
{
	struct seccomp_notif_addfd addfd = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);

	if (r < 0) {
		r = -errno;
		/* the call must not wait for ever: it fails as an open would */
		if (r != -ENOENT)
			cfs_seccomp_answer(listener, id, r);
	}
	return r;
}

/**
 * cfs_seccomp_send_listener() - in a child about to run a program: the
 * filter on the calling thread, its listener sent to the parent
 * @sock: a SOCK_SEQPACKET socket to the parent.
 * @io: the filter also sends read() and write() (a recorder's).
 *
 * The parent reads it with cfs_seccomp_recv_listener().  The child's own
 * descriptor of the listener is closed: the supervisor is the parent's.
 * Return: 0, or -errno (no filter: -EBUSY when the child reports to a
 * supervisor already).
 */
int cfs_seccomp_send_listener(int sock, bool io)
{
	int one = 1, fd = cfs_seccomp_install_flags(io), r;
	struct iovec iov = { .iov_base = &one, .iov_len = sizeof(one) };

	if (fd < 0)
		return fd;
	r = cfs_send_fd(sock, &iov, 1, fd);
	close(fd);
	return r;
}

/**
 * cfs_seccomp_recv_listener() - what a child said on @sock: its listener
 * (cfs_seccomp_send_listener()), or an int it wrote (its -errno)
 * @listener: receives the listener (close-on-exec), or -1.
 * Return: 1 with the listener, the child's value (< 0: its -errno), or 0
 * at EOF (it closed @sock, or executed a program).
 */
int cfs_seccomp_recv_listener(int sock, int *listener)
{
	int v = 0;

	if (cfs_recv_fd(sock, &v, sizeof(v), listener) != sizeof(v)) {
		if (*listener >= 0)
			close(*listener);
		*listener = -1;
		return 0;
	}
	if (v != 1 && *listener >= 0) {
		close(*listener);
		*listener = -1;
	}
	return v;
}
