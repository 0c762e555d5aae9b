// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * recorder.c - <classfs/run.h>'s recorder (classfs-record): a program
 * started with the recording filter on the host, its listener served by
 * src/devio's recorder.  Nothing of an environment: the program sees
 * this machine's /sys and /dev.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <classfs/run.h>

#include "classfs-internal/devio.h"
#include "run-internal.h"

struct classfs_recorder {
	struct cfs_recorder *rec;
	bool spawned;
	size_t n;
};

int classfs_recorder_new(struct classfs_recorder **out)
{
	struct classfs_recorder *r;
	int err;

	if (!out)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	err = cfs_recorder_new(&r->rec);
	if (err < 0) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

int classfs_recorder_add(struct classfs_recorder *rec, enum classfs_recording kind,
			 const char *dev, const char *file, struct classfs_run_error *err)
{
	char msg[sizeof(err->message)] = "";
	int r;

	if (err)
		err->message[0] = '\0';
	if (!rec || !dev || !file || rec->spawned)
		return -EINVAL;
	if (kind != CLASSFS_RECORDING_IOCTL && kind != CLASSFS_RECORDING_SCRIPT &&
	    kind != CLASSFS_RECORDING_EVEMU) {
		if (err)
			snprintf(err->message, sizeof(err->message),
				 "only ioctls, read/write scripts and input events are recorded");
		return -EINVAL;
	}
	r = cfs_recorder_add(rec->rec,
			     kind == CLASSFS_RECORDING_IOCTL ? CFS_RECORD_IOCTL :
			     kind == CLASSFS_RECORDING_SCRIPT ? CFS_RECORD_SCRIPT : CFS_RECORD_EVEMU,
			     dev, file, msg, sizeof(msg));
	if (r < 0 && err)
		snprintf(err->message, sizeof(err->message), "%s", msg);
	if (r == 0)
		rec->n++;
	return r;
}

int classfs_recorder_spawn(struct classfs_recorder *rec, char *const argv[], pid_t *pid)
{
	int sv, r, listener;
	pid_t p;

	if (!rec || !argv || !argv[0] || !pid || rec->spawned || !rec->n)
		return -EINVAL;
	p = cfs_run_fork_paired(&sv);
	if (p < 0)
		return p;
	if (p == 0) {
		sigset_t none;

		/* a program starts with the signals a shell would give it */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		r = cfs_seccomp_send_listener(sv, cfs_recorder_wants_io(rec->rec));
		if (r < 0) {
			/* the parent says why; nothing runs unrecorded */
			(void)!write(sv, &r, sizeof(r));
			_exit(125);
		}
		execvp(argv[0], argv);
		r = errno;
		fprintf(stderr, "classfs-record: %s: %s\n", argv[0], strerror(r));
		_exit(r == ENOENT ? 127 : 126);
	}
	r = cfs_seccomp_recv_listener(sv, &listener);
	close(sv);
	if (r == 1)
		r = cfs_recorder_start(rec->rec, listener);
	else if (r == 0)
		r = -EIO;
	if (r < 0) {
		/* the child is stopped before it runs anything, or never started */
		kill(p, SIGKILL);
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		return r;
	}
	rec->spawned = true;
	*pid = p;
	return 0;
}

int classfs_recorder_finish(struct classfs_recorder *rec, struct classfs_run_error *err)
{
	char msg[sizeof(err->message)] = "";
	int r;

	if (err)
		err->message[0] = '\0';
	if (!rec)
		return 0;
	r = cfs_recorder_finish(rec->rec, msg, sizeof(msg));
	if (r < 0 && err)
		snprintf(err->message, sizeof(err->message), "%s", msg);
	free(rec);
	return r;
}
