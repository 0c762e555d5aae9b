// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * monitor.c - classctl monitor: print every event of the daemon as
 * `udevadm monitor --kernel --property` does (or one JSON object per
 * line), from a SEQNUM on when asked.
 *
 * Lossless: a monitor that falls behind catches up from the daemon's
 * replay ring (the client library replays each gap it is told of), so
 * only events the ring no longer holds are missed.  Those are told on
 * stderr and end the monitor with status 1, unless --lossy lets it go on.
 *
 * Events are printed into a memory stream and written out in chunks:
 * whenever 64 KiB are pending and whenever the events at hand are done
 * (before waiting for more), so a burst costs one write per chunk rather
 * than one per event, and a quiet stream shows each event at once.
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
#define CHUNK (64 * 1024)	/* pending output written out at this size */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

struct watch {
	bool json;
	bool lossy;		/* go on after missed events */
	bool out_closed;
	bool lost;		/* events missed, and not --lossy: stopping */
	FILE *pending;		/* events printed, not yet written out */
	char *text;		/* its buffer and length, as of its last fflush() */
	size_t len;
};

/* write the pending events to standard output */
static void put_out(struct watch *w)
{
	if (fflush(w->pending) || !w->len)
		return;
	if (!w->out_closed && (fwrite(w->text, 1, w->len, stdout) != w->len || fflush(stdout))) {
		/* a reader that went away (| head): stop quietly */
		w->out_closed = true;
		stop = 1;
	}
	rewind(w->pending);
	w->len = 0;
}

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct watch *w = data;
	int r;

	if (w->out_closed || w->lost)
		return;
	r = w->json ? classfs_uevent_print_json(ev, NULL, w->pending)
		    : classfs_uevent_print_monitor(ev, NULL, w->pending);
	if (r) {
		fprintf(stderr, "classctl: monitor: cannot format event %" PRIu64 ": %s\n",
			ev->seqnum, strerror(-r));
		w->out_closed = true;
		stop = 1;
		return;
	}
	if (w->len >= CHUNK)	/* as of the printer's own fflush() */
		put_out(w);
}

/* told only of events the daemon's replay ring no longer holds */
static void on_gap(uint64_t first, uint64_t last, void *data)
{
	struct watch *w = data;

	if (w->lost)
		return;
	put_out(w);	/* what came before the gap, before the notice */
	if (first == last)
		fprintf(stderr, "classctl: monitor: missed event %" PRIu64 "\n", first);
	else
		fprintf(stderr, "classctl: monitor: missed events %" PRIu64 "-%" PRIu64 "\n",
			first, last);
	if (w->lossy)
		return;
	fprintf(stderr, "classctl: monitor: stopping: the daemon's replay ring no longer "
		"holds them (--lossy goes on)\n");
	w->lost = true;
	stop = 1;
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "lossy", no_argument, NULL, 'l' },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct watch w = { 0 };
	int status = 0;
	struct classfs_client *c;
	uint64_t since = 0;
	char *end;
	int o, r;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":s:jl", opts, NULL)) != -1) {
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
		case 'l':
			w.lossy = true;
			break;
		case ':':
			return ctl_usage("monitor: option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_usage("monitor: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!ctl_nargs(argc - optind, 0, 0, "monitor"))
		return EXIT_USAGE;
	w.pending = open_memstream(&w.text, &w.len);
	if (!w.pending) {
		fprintf(stderr, "classctl: monitor: %s\n", strerror(errno));
		return 1;
	}
	if (!(c = ctl_connect())) {
		fclose(w.pending);
		free(w.text);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a closed reader shows as a write error */
	r = classfs_client_subscribe(c, since, on_event, on_gap, &w);
	if (r)
		status = ctl_fail(c, r, "monitor");
	while (!status && !stop) {
		r = classfs_client_dispatch(c, WAIT_MS);
		put_out(&w);	/* the events at hand are done: show them */
		if (r < 0 && r != -EINTR)
			status = ctl_fail(c, r, "monitor");
	}
	put_out(&w);
	fclose(w.pending);
	free(w.text);
	return status ? status : w.lost ? 1 : 0;
}
