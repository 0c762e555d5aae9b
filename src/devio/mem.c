// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mem.c - the memory a handler reads a call's arguments from and writes
 * its results to: this process's own (unit tests, a program that
 * answers itself), or another process's through process_vm_readv() and
 * process_vm_writev(), which the kernel allows to a tracer of it (same
 * uid and dumpable, or CAP_SYS_PTRACE over it).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "classfs-internal/devio.h"

static int self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

static int self_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	if (!addr)
		return -EFAULT;
	memcpy((void *)(uintptr_t)addr, buf, len);
	return 0;
}

const struct cfs_mem cfs_mem_self = { .read = self_read, .write = self_write };

/* the whole range or -EFAULT: a short transfer means an unmapped page */
static int process_rw(const pid_t *pid, uint64_t addr, void *buf, size_t len, bool write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = write ? process_vm_writev(*pid, &local, 1, &remote, 1, 0)
		  : process_vm_readv(*pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int process_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return process_rw(ctx, addr, buf, len, false);
}

static int process_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	return process_rw(ctx, addr, (void *)buf, len, true);
}

/**
 * cfs_mem_process() - @m reads and writes the memory of process @pid
 * @m: filled in.
 * @pid: the process (its thread id will do); must outlive @m's use.
 */
void cfs_mem_process(struct cfs_mem *m, const pid_t *pid)
{
	*m = (struct cfs_mem){ .read = process_read, .write = process_write, .ctx = (void *)pid };
}
