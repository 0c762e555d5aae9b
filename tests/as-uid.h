/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * as-uid.h - the one way a C test runs code as another uid (the shell
 * tests' is cfs_as_uid in tests/stage.sh; the test uid-switch fails on a
 * setuid(), setres[ug]id() or setpriv anywhere else in tests/).
 *
 * cfs_test_as_uid() forks; the child drops its supplementary groups,
 * takes @gid and @uid (real, effective and saved) and exits with
 * @fn(@data).  What it runs is the test's own code, already
 * loaded: a program of the build tree exec()ed there could fail to load,
 * the build tree being out of the uid's reach (/root is 0700), so a test
 * that needs one runs it through tests/stage.sh instead.
 */
#ifndef CLASSFS_TEST_AS_UID_H
#define CLASSFS_TEST_AS_UID_H

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* the child's status when it could not become the uid */
#define CFS_AS_UID_CANNOT 125

/**
 * cfs_test_as_uid() - @fn(@data) run as @uid:@gid in a child, waited for
 * Return: @fn's return (0-254 as they are; any other, as 255),
 * CFS_AS_UID_CANNOT when
 * the child could not become @uid, -1 when it could not be forked or did
 * not exit.
 */
static inline int cfs_test_as_uid(uid_t uid, gid_t gid, int (*fn)(void *data), void *data)
{
	pid_t pid;
	int st;

	fflush(NULL);	/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(CFS_AS_UID_CANNOT);
		st = fn(data);
		_exit(st < 0 || st > 255 ? 255 : st);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
