// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * seccomp-allow PROGRAM [ARG...] - PROGRAM under a seccomp filter of one
 * instruction that allows everything: what any filter costs a call on
 * this kernel (the system call's slow entry), the floor of classfs-run's
 * own (bench/nodes/nodes.sh shows both).
 */
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

int main(int argc, char **argv)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = allow };

	if (argc < 2) {
		fprintf(stderr, "usage: seccomp-allow PROGRAM [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) < 0) {
		perror("seccomp-allow");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
