/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mount-guard.h - the directories a FUSE test mounts on, undone on every
 * path, crashes included: a fatal signal, the test's alarm, a sanitizer's
 * death and exit all detach and remove them (only in the process that
 * made them: a forked checker leaves them alone).
 *
 * Define MOUNT_GUARD_NAME (the test's name, for messages and directory
 * names) before including; include after harness.h.  A test sets
 * current_test as it starts, for the message of a fatal signal.
 */
#ifndef CLASSFS_TEST_MOUNT_GUARD_H
#define CLASSFS_TEST_MOUNT_GUARD_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#define MAX_DIRS 64

static char dirs[MAX_DIRS][64];		/* every directory this run made */
static volatile sig_atomic_t dir_live[MAX_DIRS];
static volatile sig_atomic_t ndirs;
static const char *current_test = "?";
static pid_t main_pid;

static void emergency_cleanup(void)
{
	if (getpid() != main_pid)
		return;		/* a forked checker: the mounts are not its own */
	for (int i = 0; i < ndirs; i++) {
		if (!dir_live[i])
			continue;
		umount2(dirs[i], MNT_DETACH);
		rmdir(dirs[i]);
		dir_live[i] = 0;
	}
}

static void on_signal(int sig)
{
	static const char msg[] = "test-" MOUNT_GUARD_NAME ": fatal signal or timeout in test ";

	if (getpid() == main_pid &&
	    (write(2, msg, sizeof(msg) - 1) < 0 ||
	     write(2, current_test, strlen(current_test)) < 0 || write(2, "\n", 1) < 0)) {
		/* nothing more to tell */
	}
	emergency_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

__attribute__((constructor)) static void install_cleanup(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL,
				    SIGTERM, SIGINT, SIGHUP, SIGALRM };

	main_pid = getpid();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	atexit(emergency_cleanup);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(emergency_cleanup);
}

/* a fresh empty directory under /tmp, registered for cleanup; NULL when it cannot */
static const char *new_dir(void)
{
	char tmpl[64] = "/tmp/classfs-" MOUNT_GUARD_NAME "-XXXXXX";
	int i = ndirs;

	if (i == MAX_DIRS || !mkdtemp(tmpl))
		return NULL;
	snprintf(dirs[i], sizeof(dirs[i]), "%s", tmpl);
	dir_live[i] = 1;
	ndirs = i + 1;
	return dirs[i];
}

/* remove directory @d (one new_dir() gave), no longer mounted on */
static void drop_dir(const char *d)
{
	for (int i = 0; i < ndirs; i++)
		if (dirs[i] == d && dir_live[i]) {
			CHECK_INT(rmdir(d) == 0 ? 0 : errno, 0);
			dir_live[i] = 0;
		}
}

#endif
