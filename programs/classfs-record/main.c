// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classfs-record - run a program on this machine and record what it does
 * with a real device, in umockdev-record's formats, for classfs-run and
 * umockdev-run to replay.
 *
 *   classfs-record [--ioctl DEV=FILE]... [--script DEV=FILE]...
 *                  [--evemu-events DEV=FILE]... -- COMMAND [ARG...]
 *
 * The exit status is COMMAND's (killed by signal N, classfs-record dies
 * of N once the recordings are written: a shell shows 128 + N); 1 when
 * classfs-record refused its arguments (nothing is run then) or could
 * not write a recording, as umockdev-record's errors; 126/127 when
 * COMMAND could not be executed / found.  SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT are passed on to COMMAND.  The recordings are written once
 * COMMAND exits, whatever its status.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <classfs/run.h>

#include "util.h"

/* umockdev-record's status for what it refuses */
#define EXIT_REFUSED 1

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: classfs-record [OPTION]... -- COMMAND [ARG]...\n"
		"Run COMMAND on this machine and record what it does with real devices.\n\n"
		"  -i, --ioctl DEV=FILE   record COMMAND's ioctls of DEV into FILE (an ioctl\n"
		"                         tree, umockdev-record --ioctl's format)\n"
		"  -s, --script DEV=FILE  record COMMAND's reads and writes of DEV, with their\n"
		"                         timing, into FILE (umockdev-record --script's format)\n"
		"  -e, --evemu-events DEV=FILE  record the input events COMMAND reads from\n"
		"                         DEV into FILE (umockdev-record --evemu-events's format)\n"
		"  -h, --help             show this help\n\n"
		"Each option may be given more than once; DEV is a character device.\n"
		"A FILE holding a recording of DEV is added to, as umockdev-record does.\n"
		"classfs-run -i/-s DEV=FILE (and umockdev-run) replay the recordings.\n"
		"COMMAND runs with a seccomp filter; its calls on DEV are made by\n"
		"classfs-record on a copy of its descriptor (Linux 5.6 or later).  Not\n"
		"root: COMMAND runs with no_new_privs (a set-user-ID program gains nothing).\n"
		"Exit status: COMMAND's; 1 when the arguments are refused (nothing runs)\n"
		"or a recording cannot be written.\n");
}

/* a --ioctl, --script or --evemu-events argument */
struct target {
	enum classfs_recording kind;
	char *arg;		/* DEV=FILE, split at the first '=' as umockdev-record */
};

static const char *option_of(enum classfs_recording kind)
{
	return kind == CLASSFS_RECORDING_IOCTL ? "--ioctl" :
	       kind == CLASSFS_RECORDING_SCRIPT ? "--script" : "--evemu-events";
}

/* add each target to @rec; 0, or -errno with a message printed */
static int add_targets(struct classfs_recorder *rec, struct target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct classfs_run_error err = { 0 };
		char *eq = strchr(t[i].arg, '=');
		int r;

		if (!eq || eq == t[i].arg || !eq[1]) {
			fprintf(stderr, "classfs-record: %s %s: expected DEV=FILE\n",
				option_of(t[i].kind), t[i].arg);
			return -EINVAL;
		}
		*eq = '\0';
		r = classfs_recorder_add(rec, t[i].kind, t[i].arg, eq + 1, &err);
		if (r < 0) {
			fprintf(stderr, "classfs-record: %s %s=%s: %s\n", option_of(t[i].kind),
				t[i].arg, eq + 1, err.message[0] ? err.message : strerror(-r));
			return r;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ioctl", required_argument, NULL, 'i' },
		{ "script", required_argument, NULL, 's' },
		{ "evemu-events", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct classfs_run_error err = { 0 };
	struct classfs_recorder *rec = NULL;
	struct target *targets;
	size_t n = 0;
	int c, r, sfd = -1, status = EXIT_REFUSED, sig = 0;
	pid_t child;

	targets = calloc((size_t)argc + 1, sizeof(*targets));
	if (!targets) {
		fprintf(stderr, "classfs-record: out of memory\n");
		return EXIT_REFUSED;
	}
	/* '+': stop at the first non-option, COMMAND's options are its own */
	while ((c = getopt_long(argc, argv, "+i:s:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i': targets[n++] = (struct target){ CLASSFS_RECORDING_IOCTL, optarg }; break;
		case 's': targets[n++] = (struct target){ CLASSFS_RECORDING_SCRIPT, optarg }; break;
		case 'e': targets[n++] = (struct target){ CLASSFS_RECORDING_EVEMU, optarg }; break;
		case 'h': usage(stdout); free(targets); return 0;
		default: usage(stderr); goto out;
		}
	}
	if (!n) {
		fprintf(stderr, "classfs-record: nothing to record (--ioctl DEV=FILE, "
				"--script DEV=FILE or --evemu-events DEV=FILE)\n");
		goto out;
	}
	if (optind >= argc) {
		fprintf(stderr, "classfs-record: no COMMAND given (classfs-record [OPTION]... -- "
				"COMMAND)\n");
		goto out;
	}
	r = classfs_recorder_new(&rec);
	if (r < 0) {
		fprintf(stderr, "classfs-record: %s\n", strerror(-r));
		goto out;
	}
	if (add_targets(rec, targets, n) < 0)
		goto out;

	/* signals for COMMAND arrive through sfd; the child starts with none blocked */
	sfd = cfs_signals_to_forward();
	if (sfd < 0) {
		fprintf(stderr, "classfs-record: signalfd: %s\n", strerror(-sfd));
		goto out;
	}
	r = classfs_recorder_spawn(rec, argv + optind, &child);
	if (r < 0) {
		fprintf(stderr, "classfs-record: cannot start %s: %s%s\n", argv[optind],
			strerror(-r), r == -EBUSY ? " (a supervisor of an environment's "
			"device nodes serves this process already)" : "");
		goto out;
	}
	status = cfs_supervise_child(child, sfd, &sig);
	if (status < 0) {
		fprintf(stderr, "classfs-record: waiting for %s: %s\n", argv[optind],
			strerror(-status));
		status = EXIT_REFUSED;
	}
out:
	r = classfs_recorder_finish(rec, &err);
	if (r < 0) {
		fprintf(stderr, "classfs-record: %s\n", err.message[0] ? err.message : strerror(-r));
		status = EXIT_REFUSED;
	}
	if (sfd >= 0)
		close(sfd);
	free(targets);
	/* killed, the recording written: as COMMAND ended */
	if (sig && status == 128 + sig)
		cfs_die_of(sig);
	return status;
}
