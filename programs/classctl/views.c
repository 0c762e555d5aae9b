// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * views.c - classctl's read-only looks at the daemon: tree, info, mount.
 * The daemon renders trees and device info with the printers of
 * <classfs/print.h>; we copy what it sends to stdout.
 */
#include <getopt.h>
#include <string.h>

#include "classctl.h"

/* --json / --dot (the last one given wins); -1 on a bad option */
static int parse_format(int argc, char **argv, bool dot_ok)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "dot", no_argument, NULL, 'd' },
		{ 0 },
	};
	int fmt = CLASSFS_CLIENT_TEXT, o;

	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'j') {
			fmt = CLASSFS_CLIENT_JSON;
		} else if (o == 'd' && dot_ok) {
			fmt = CLASSFS_CLIENT_DOT;
		} else {
			ctl_usage("%s: unknown option '%s'", argv[0], argv[optind - 1]);
			return -1;
		}
	}
	return fmt;
}

int cmd_tree(int argc, char **argv)
{
	struct classfs_client *c;
	int fmt = parse_format(argc, argv, true), r;

	if (fmt < 0 || !ctl_nargs(argc - optind, 0, 0, "tree"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_tree(c, (enum classfs_client_format)fmt, stdout);
	return r ? ctl_fail(c, r, "tree") : 0;
}

int cmd_info(int argc, char **argv)
{
	struct classfs_client *c;
	int fmt = parse_format(argc, argv, false), r;

	if (fmt < 0 || !ctl_nargs(argc - optind, 2, 2, "info"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_info(c, argv[optind], argv[optind + 1],
				(enum classfs_client_format)fmt, stdout);
	return r ? ctl_fail(c, r, "info %s %s", argv[optind], argv[optind + 1]) : 0;
}

int cmd_mount(int argc, char **argv)
{
	struct classfs_client_status st;
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 0, 0, "mount"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_status(c, &st);
	if (r)
		return ctl_fail(c, r, "mount");
	printf("mountpoint: %s\n", st.mountpoint[0] ? st.mountpoint : "-");
	printf("layout: %s\n", st.layout == CLASSFS_LAYOUT_DEVICES ? "devices" : "class");
	return 0;
}

/* the daemon's state and what each uid holds in it, within which limits */
int cmd_status(int argc, char **argv)
{
	struct classfs_client_status st;
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 0, 0, "status"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_status(c, &st);
	if (r)
		return ctl_fail(c, r, "status");
	printf("protocol: %u\n", st.version);
	printf("mountpoint: %s\n", st.mountpoint[0] ? st.mountpoint : "-");
	printf("layout: %s\n", st.layout == CLASSFS_LAYOUT_DEVICES ? "devices" : "class");
	printf("seqnum: %llu\n", (unsigned long long)st.seqnum);
	printf("held per uid (root is not counted):\n");
	fflush(stdout);
	r = classfs_client_usage(c, stdout);
	return r ? ctl_fail(c, r, "status") : 0;
}
