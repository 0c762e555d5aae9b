// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sample-serve.c - serve a record file (the sample machine) as a live
 * sysfs for the real-tool test, with the library alone: a tree of its own,
 * classfs_record_load(), classfs_mount_tree().
 *
 *   sample-serve --mount DIR [--layout class|devices] [--udevdb DIR] RECORD
 *
 * Prints "ready" once the mount serves the whole machine (and the udev
 * database is written, with --udevdb), then waits for SIGTERM or SIGINT,
 * unmounts and removes every device again.  Load warnings go to stderr
 * and make the exit status 3 (the sample must load without any), so a
 * test sees them even though the mount works.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/classfs.h"
#include "classfs/record.h"

static unsigned int warnings;

static void on_warning(const char *file, unsigned long line, const char *msg, void *data)
{
	fprintf(stderr, "sample-serve: %s:%lu: warning: %s\n", file, line, msg);
	warnings++;
}

/* the whole file in one buffer: the loader takes bytes, never a path */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nbuf = realloc(buf, cap ? cap * 2 : 65536);

			if (!nbuf)
				goto fail;
			buf = nbuf;
			cap = cap ? cap * 2 : 65536;
		}
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0) {
			if (ferror(f))
				goto fail;
			break;
		}
	}
	fclose(f);
	*len = n;
	return buf;
fail:
	free(buf);
	fclose(f);
	errno = EIO;
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: sample-serve --mount DIR [--layout class|devices] [--udevdb DIR] RECORD\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "layout", required_argument, NULL, 'l' },
		{ "udevdb", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	enum classfs_layout layout = CLASSFS_LAYOUT_CLASS;
	const char *mountpoint = NULL, *udevdb = NULL;
	struct classfs_record_error err = {};
	struct classfs_mount *m = NULL;
	struct classfs_tree *tree = NULL;
	char *data = NULL;
	size_t len = 0;
	sigset_t set;
	int c, r, sig, status = 1;

	while ((c = getopt_long(argc, argv, "m:l:u:h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			mountpoint = optarg;
			break;
		case 'l':
			if (!strcmp(optarg, "class")) {
				layout = CLASSFS_LAYOUT_CLASS;
			} else if (!strcmp(optarg, "devices")) {
				layout = CLASSFS_LAYOUT_DEVICES;
			} else {
				fprintf(stderr, "sample-serve: unknown layout '%s' (class or devices)\n", optarg);
				return 2;
			}
			break;
		case 'u':
			udevdb = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!mountpoint || optind != argc - 1) {
		usage(stderr);
		return 2;
	}

	/* block the stop signals before any thread exists: sigwait() takes them */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	data = read_file(argv[optind], &len);
	if (!data) {
		fprintf(stderr, "sample-serve: cannot read %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	tree = classfs_tree_new(layout);
	if (!tree) {
		fprintf(stderr, "sample-serve: cannot create a tree: %s\n", strerror(errno));
		goto out;
	}
	struct classfs_record_options ropt = {
		.filename = argv[optind],
		.warning = on_warning,
	};
	r = classfs_record_load(tree, data, len, &ropt, &err);
	if (r < 0) {
		fprintf(stderr, "sample-serve: %s:%lu: %s (%s)\n", err.file, err.line, err.reason,
			strerror(-r));
		goto out;
	}
	if (udevdb) {
		r = classfs_record_export_udevdb(tree, udevdb);
		if (r < 0) {
			fprintf(stderr, "sample-serve: udev database in %s: %s\n", udevdb, strerror(-r));
			goto out;
		}
	}
	m = classfs_mount_tree(tree, mountpoint, NULL);
	if (!m) {
		fprintf(stderr, "sample-serve: cannot mount at %s: %s\n", mountpoint, strerror(errno));
		goto out;
	}
	printf("ready\n");
	fflush(stdout);

	if (sigwait(&set, &sig) == 0)
		status = warnings ? 3 : 0;
out:
	if (m && classfs_mount_close(m) < 0) {
		fprintf(stderr, "sample-serve: unmounting %s failed\n", mountpoint);
		status = 1;
	}
	if (tree) {
		classfs_record_unload(tree);
		r = classfs_tree_free(tree);
		if (r < 0) {
			fprintf(stderr, "sample-serve: tree not empty after unload: %s\n", strerror(-r));
			status = 1;
		}
	}
	free(data);
	return status;
}
