// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * monitor.c - classctl monitor: print every event of the daemon as
 * `udevadm monitor --kernel --property` does (or one JSON object per
 * line), from a SEQNUM on when asked; missed ranges are told on stderr.
 *
 * SIGINT and SIGTERM end it cleanly: the handler only sets a flag, which
 * the loop checks between short waits (the client library resumes its
 * wait after a signal, so the wait is bounded instead).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <classfs/wire.h>

#include "classctl.h"

#define WAIT_MS 100	/* longest delay between a signal and the exit */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct watch {
	bool json;
	bool out_closed;
};

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct watch *w = data;
	int r;

	if (w->out_closed)
		return;
	r = w->json ? classfs_uevent_print_json(ev, NULL, stdout)
		    : classfs_uevent_print_monitor(ev, NULL, stdout);
	if (r) {
		/* a reader that went away (| head): stop quietly */
		w->out_closed = true;
		stop = 1;
	}
}

static void on_gap(uint64_t first, uint64_t last, void *data)
{
	if (first == last)
		fprintf(stderr, "classctl: monitor: missed event %" PRIu64 "\n", first);
	else
		fprintf(stderr, "classctl: monitor: missed events %" PRIu64 "-%" PRIu64 "\n",
			first, last);
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct watch w = { 0 };
	struct classfs_client *c;
	uint64_t since = 0;
	char *end;
	int o, r;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":s:j", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			errno = 0;
			since = strtoull(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || errno || *end)
				return ctl_usage("monitor: --since '%s' is not a SEQNUM", optarg);
			break;
		case 'j':
			w.json = true;
			break;
		case ':':
			return ctl_usage("monitor: option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_usage("monitor: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!ctl_nargs(argc - optind, 0, 0, "monitor"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a closed reader shows as a write error */
	r = classfs_client_subscribe(c, since, on_event, on_gap, &w);
	if (r)
		return ctl_fail(c, r, "monitor");
	while (!stop) {
		r = classfs_client_dispatch(c, WAIT_MS);
		if (r < 0 && r != -EINTR)
			return ctl_fail(c, r, "monitor");
	}
	return 0;
}
