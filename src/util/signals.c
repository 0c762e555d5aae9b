// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * signals.c - a program that runs a COMMAND and passes the signals a
 * user sends it on (classfs-run, classfs-record), as a shell's job does,
 * and ends as COMMAND ended: with its exit status, or killed by the same
 * signal (as umockdev-run, env or unshare --fork do), so that whoever
 * started it sees what it would have seen of COMMAND itself.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/**
 * cfs_signals_to_forward() - block SIGINT, SIGTERM, SIGHUP and SIGQUIT and
 * take them from a signalfd instead (a child started afterwards unblocks
 * them for itself)
 * Return: the signalfd (close-on-exec), or -errno.
 */
int cfs_signals_to_forward(void)
{
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	fd = signalfd(-1, &mask, SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/**
 * cfs_forward_signals() - pass what arrives on @sfd on to @child until it
 * exits (it is not reaped: the caller waits for it)
 * @child: the process.
 * @sfd: from cfs_signals_to_forward().
 */
void cfs_forward_signals(pid_t child, int sfd)
{
	int pfd = (int)pidfd_open(child, 0);

	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = pfd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				kill(child, (int)si.ssi_signo);
		}
		if (p[1].revents || pfd < 0)
			break;
	}
	if (pfd >= 0)
		close(pfd);
}

/**
 * cfs_supervise_child() - pass the signals of @sfd on to @child until it
 * ends, and reap it
 * @child: the process.
 * @sfd: from cfs_signals_to_forward().
 * @sig: receives the signal that killed @child, or 0.
 *
 * Return: @child's exit status (128 + N when signal N killed it), or
 * -errno of waiting.
 */
int cfs_supervise_child(pid_t child, int sfd, int *sig)
{
	int st;

	*sig = 0;
	cfs_forward_signals(child, sfd);
	while (waitpid(child, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(st)) {
		*sig = WTERMSIG(st);
		return 128 + *sig;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
}

/**
 * cfs_die_of() - end this process by signal @sig, as the COMMAND it ran
 * ended (no core of ours: COMMAND's, if any, is written already); when
 * @sig does not kill, exit 128 + @sig instead
 * @sig: a signal number.
 */
_Noreturn void cfs_die_of(int sig)
{
	struct rlimit none = { 0, 0 };
	sigset_t one;

	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	exit(128 + sig);
}
