/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * classctl.h - what the command files of classctl share.
 */
#ifndef CLASSCTL_H
#define CLASSCTL_H

#include <stdbool.h>
#include <stdio.h>

#include <classfs/client.h>

/* exit statuses: 0 done, 1 the operation failed, 2 the command line is wrong */
#define EXIT_USAGE 2

struct cmd {
	const char *name;
	const char *args;	/* synopsis after the name, for --help */
	int (*run)(int argc, char **argv);
};

/* the client's socket path, for messages */
extern const char *ctl_socket;

/* connect to the daemon once the command line is known good; NULL: message printed */
struct classfs_client *ctl_connect(void);

/* print "classctl: WHAT: REASON" for a failed request, with the daemon's message; returns 1 */
int ctl_fail(struct classfs_client *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* print "classctl: MESSAGE" and a hint to --help; returns EXIT_USAGE */
int ctl_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a command without options: reject any, honour "--"; true when fine */
bool ctl_no_options(int argc, char **argv);
/* check the number of operands left after the options of a command */
bool ctl_nargs(int argc, int min, int max, const char *cmd);
/*
 * ctl_names_valid() - check names before asking the daemon, to say which
 * one is wrong: pairs of (what, name) ending with a NULL what; a NULL
 * name is skipped.  False (message printed) when one is invalid.
 */
bool ctl_names_valid(const char *cmd, const char *what, ...);
/* a value as a sysfs file holds it: ending in '\n' (malloc'ed, length in *len) */
char *ctl_sysfs_value(const char *s, size_t *len);

int cmd_mkclass(int argc, char **argv);
int cmd_rmclass(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_rename(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_save(int argc, char **argv);

#endif
