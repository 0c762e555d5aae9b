// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classfs-run - run a program with a classfs tree as its /sys, a private
 * /dev and /run/udev holding the tree's devices, and hotplug events on
 * its libudev monitors.
 *
 *   classfs-run [--sample | --load FILE]... [--layout class|devices]
 *               [--ioctl DEV=FILE] [--script DEV=FILE] [--evemu-events DEV=FILE]
 *               [--pcap SYSPATH=FILE] [--unix-stream SOCKET=FILE]
 *               [--socket PATH] [--root] [--verbose] -- COMMAND [ARG...]
 *
 * Run under the name umockdev-run (a link: meson installs one in
 * LIBEXECDIR/classfs/umockdev, for the front of a runner's PATH), it
 * stands in for umockdev-run: the tree's layout is `devices` unless
 * --layout says otherwise (umockdev's records name today's paths, and
 * `udevadm info` is to show them), and --version prints the umockdev
 * release whose options and formats it follows: runners compare that
 * number to decide which recordings they may replay.
 *
 * The exit status is COMMAND's (killed by signal N, classfs-run dies of
 * N, once the environment is gone: a shell shows 128 + N); 125
 * when classfs-run itself failed, 126/127 when COMMAND could not be
 * executed / found.  SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to
 * COMMAND; the environment is torn down once it exits.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <classfs/run.h>

#include "config.h"
#include "util.h"

#define EXIT_OWN_FAILURE 125

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: classfs-run [OPTION]... -- COMMAND [ARG]...\n"
		"Run COMMAND with a classfs tree as /sys, a private /dev and /run/udev.\n\n"
		"  -S, --sample          load the built-in sample machine\n"
		"  -l, --load FILE       load a umockdev record (repeatable, in order)\n"
		"  -d, --device FILE     the same (umockdev-run's name for it)\n"
		"  -L, --layout LAYOUT   class (default; devices run as umockdev-run) or devices,\n"
		"                        for the daemon started here\n"
		"  -i, --ioctl DEV=FILE  answer DEV's ioctls from a umockdev ioctl recording\n"
		"  -s, --script DEV=FILE play a umockdev read/write script on DEV\n"
		"  -e, --evemu-events DEV=FILE  play evemu-record's events on event node DEV\n"
		"  -p, --pcap SYSPATH=FILE  replay a usbmon capture as the USB device's traffic\n"
		"  -u, --unix-stream SOCKET=FILE  play a script to each client of a Unix socket\n"
		"      --socket PATH     join the classfsd listening at PATH (its tree must\n"
		"                        be mounted) instead of starting one\n"
		"  -r, --root            not root: map the caller to uid 0 inside, for a\n"
		"                        COMMAND that insists on root (default: COMMAND\n"
		"                        keeps the caller's uid and gid, no capabilities)\n"
		"  -v, --verbose         log what happens to the environment\n"
		"  -h, --help            show this help\n"
		"      --version         print classfs's version (run as umockdev-run: the\n"
		"                        umockdev release whose umockdev-run it stands in for)\n\n"
		"COMMAND gets CLASSFS_SOCKET (for classctl) and SYSTEMD_DEVICE_VERIFY_SYSFS=0.\n"
		"Its device nodes answer (a pty, or the recording's contents); COMMAND runs\n"
		"with no_new_privs (a set-user-ID program gains nothing).\n"
		"The classfsd started is $CLASSFSD, else the installed one.\n"
		"Any uid may run it where the kernel allows unprivileged user namespaces.\n"
		"Exit status: COMMAND's; 125 when classfs-run failed.\n");
}

static int parse_layout(const char *s, enum classfs_layout *out)
{
	if (!strcmp(s, "class"))
		*out = CLASSFS_LAYOUT_CLASS;
	else if (!strcmp(s, "devices"))
		*out = CLASSFS_LAYOUT_DEVICES;
	else
		return -EINVAL;
	return 0;
}

/* a recording to replay: -i, -s, -e, -p, -u */
struct replay {
	enum classfs_recording kind;
	const char *option;
	char *arg;		/* TARGET=FILE, split at the last '=' */
};

static const char *const kind_option[] = {
	[CLASSFS_RECORDING_IOCTL] = "--ioctl",
	[CLASSFS_RECORDING_SCRIPT] = "--script",
	[CLASSFS_RECORDING_EVEMU] = "--evemu-events",
	[CLASSFS_RECORDING_PCAP] = "--pcap",
	[CLASSFS_RECORDING_UNIX_STREAM] = "--unix-stream",
};

/* load each recording into @run; 0, or -errno with a message printed */
static int load_replays(struct classfs_run *run, struct replay *rp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct classfs_run_error err = { 0 };
		char *eq = strrchr(rp[i].arg, '=');
		int r;

		if (!eq || eq == rp[i].arg || !eq[1]) {
			fprintf(stderr, "classfs-run: %s %s: expected TARGET=FILE\n",
				kind_option[rp[i].kind], rp[i].arg);
			return -EINVAL;
		}
		*eq = '\0';
		r = classfs_run_load(run, rp[i].kind, rp[i].arg, eq + 1, &err);
		if (r < 0) {
			fprintf(stderr, "classfs-run: %s %s=%s: %s\n", kind_option[rp[i].kind],
				rp[i].arg, eq + 1, err.message[0] ? err.message : strerror(-r));
			return r;
		}
	}
	return 0;
}

static void no_command(void)
{
	fprintf(stderr, "classfs-run: no COMMAND given: classfs-run [OPTION]... -- COMMAND "
		"(see --help)\n");
}

/* run under umockdev-run's name (a link), to stand in for it */
static bool as_umockdev_run(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	return base && !strcmp(base, "umockdev-run");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sample", no_argument, NULL, 'S' },
		{ "load", required_argument, NULL, 'l' },
		{ "device", required_argument, NULL, 'd' },	/* umockdev-run's name */
		{ "layout", required_argument, NULL, 'L' },
		{ "ioctl", required_argument, NULL, 'i' },
		{ "script", required_argument, NULL, 's' },
		{ "evemu-events", required_argument, NULL, 'e' },
		{ "pcap", required_argument, NULL, 'p' },
		{ "unix-stream", required_argument, NULL, 'u' },
		{ "socket", required_argument, NULL, 'J' },
		{ "root", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	/* umockdev-run's records name today's paths: the devices layout is its */
	struct classfs_run_options o = { .layout = as_umockdev_run(argv[0]) ?
						   CLASSFS_LAYOUT_DEVICES : CLASSFS_LAYOUT_CLASS };
	struct classfs_run_error err = { 0 };
	struct classfs_run *run = NULL;
	const char **records;
	struct replay *replays;
	bool layout_given = false;
	size_t nrec = 0, nrep = 0;
	pid_t child;
	int c, r, sfd, status, sig = 0;

	records = calloc((size_t)argc + 1, sizeof(*records));
	replays = calloc((size_t)argc + 1, sizeof(*replays));
	if (!records || !replays) {
		fprintf(stderr, "classfs-run: out of memory\n");
		return EXIT_OWN_FAILURE;
	}
	/* '+': stop at the first non-option, COMMAND's options are its own */
	while ((c = getopt_long(argc, argv, "+Sl:d:L:i:s:e:p:u:rvh", opts, NULL)) != -1) {
		switch (c) {
		case 'i': replays[nrep++] = (struct replay){ CLASSFS_RECORDING_IOCTL, NULL, optarg }; break;
		case 's': replays[nrep++] = (struct replay){ CLASSFS_RECORDING_SCRIPT, NULL, optarg }; break;
		case 'e': replays[nrep++] = (struct replay){ CLASSFS_RECORDING_EVEMU, NULL, optarg }; break;
		case 'p': replays[nrep++] = (struct replay){ CLASSFS_RECORDING_PCAP, NULL, optarg }; break;
		case 'u': replays[nrep++] = (struct replay){ CLASSFS_RECORDING_UNIX_STREAM, NULL, optarg }; break;
		case 'S': o.sample = true; break;
		case 'l':
		case 'd': records[nrec++] = optarg; break;
		case 'L':
			if (parse_layout(optarg, &o.layout) < 0) {
				fprintf(stderr, "classfs-run: --layout: '%s' is neither class nor devices\n",
					optarg);
				free(records);
				free(replays);
				return EXIT_OWN_FAILURE;
			}
			layout_given = true;
			break;
		case 'J': o.socket = optarg; break;
		case 'r': o.root = true; break;
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); free(records); free(replays); return 0;
		case 'V':
			printf("%s\n", as_umockdev_run(argv[0]) ? CLASSFS_UMOCKDEV_VERSION :
								  CLASSFS_VERSION);
			free(records);
			free(replays);
			return 0;
		default: usage(stderr); free(records); free(replays); return EXIT_OWN_FAILURE;
		}
	}
	/* with nothing to load, nothing to check: else what is given is checked first */
	if (optind >= argc && !nrec && !nrep && !o.sample) {
		no_command();
		free(records);
		free(replays);
		return EXIT_OWN_FAILURE;
	}
	if (o.socket && layout_given) {
		fprintf(stderr, "classfs-run: --layout is the joined daemon's own: it cannot be "
				"given with --socket\n");
		free(records);
		free(replays);
		return EXIT_OWN_FAILURE;
	}
	o.records = records;
	/*
	 * Not root: a user namespace of our own first, while we have one
	 * thread (the supervisor of COMMAND's device nodes is a thread of
	 * ours, and the environment's /dev is shown to its namespace only);
	 * where that is refused, classfs_run_start() says why.
	 */
	if (!o.socket && classfs_run_own_user_namespace(o.root, NULL) == 1)
		o.root = false;

	/* signals for COMMAND arrive through sfd; the children start with none blocked */
	sfd = cfs_signals_to_forward();
	if (sfd < 0) {
		fprintf(stderr, "classfs-run: signalfd: %s\n", strerror(-sfd));
		free(records);
		free(replays);
		return EXIT_OWN_FAILURE;
	}

	r = classfs_run_start(&o, &run, &err);
	if (r < 0) {
		fprintf(stderr, "classfs-run: %s\n", err.message[0] ? err.message : strerror(-r));
		close(sfd);
		free(records);
		free(replays);
		return EXIT_OWN_FAILURE;
	}
	status = EXIT_OWN_FAILURE;
	if (load_replays(run, replays, nrep) < 0) {
		/* said why */
	} else if (optind >= argc) {
		no_command();
	} else if ((r = classfs_run_spawn(run, argv + optind, &child)) < 0) {
		fprintf(stderr, "classfs-run: cannot start %s: %s\n", argv[optind], strerror(-r));
	} else {
		status = cfs_supervise_child(child, sfd, &sig);
		if (status < 0) {
			fprintf(stderr, "classfs-run: waiting for %s: %s\n", argv[optind],
				strerror(-status));
			status = EXIT_OWN_FAILURE;
		}
	}
	r = classfs_run_stop(run);
	if (r < 0)
		fprintf(stderr, "classfs-run: the environment failed while %s ran (see above)\n",
			optind < argc ? argv[optind] : "nothing");
	close(sfd);
	free(records);
	free(replays);
	/* the environment gone: end as COMMAND ended */
	if (sig && status == 128 + sig)
		cfs_die_of(sig);
	return status;
}
