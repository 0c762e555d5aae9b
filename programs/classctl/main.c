// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - classctl: drive a classfsd daemon from the command line.
 *
 *   classctl [--socket PATH] COMMAND [ARG]...
 *
 * Global options come before the command (parsing stops at the first
 * operand), each command parses its own.  Every request goes through
 * <classfs/client.h>; a failure prints the daemon's own explanation and
 * exits 1, a wrong command line exits 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "classctl.h"

const char *ctl_socket;
static struct classfs_client *client;

struct classfs_client *ctl_connect(void)
{
	if (!client) {
		client = classfs_client_connect(ctl_socket, 0);
		if (!client)
			fprintf(stderr, "classctl: cannot connect to %s: %s%s\n", ctl_socket,
				strerror(errno), errno == EMFILE ?
				" (this uid holds as many connections as classfsd allows it)" : "");
	}
	return client;
}

static const struct cmd cmds[] = {
	{ "mkclass", "CLASS", cmd_mkclass },
	{ "rmclass", "CLASS", cmd_rmclass },
	{ "add", "CLASS NAME [--parent NAME] [--dev MAJ:MIN] [--attr KEY=VALUE]... [--type TYPE] [--open]",
	  cmd_add },
	{ "rm", "CLASS NAME", cmd_rm },
	{ "rename", "CLASS NAME NEWNAME", cmd_rename },
	{ "set", "[--create] CLASS NAME ATTR VALUE", cmd_set },
	{ "get", "CLASS NAME ATTR", cmd_get },
	{ "tree", "[--json|--dot]", cmd_tree },
	{ "info", "CLASS NAME [--json]", cmd_info },
	{ "trigger", "CLASS NAME [ACTION [KEY=VALUE]...]", cmd_trigger },
	{ "monitor", "[--since SEQNUM] [--json] [--lossy]", cmd_monitor },
	{ "load", "FILE", cmd_load },
	{ "save", "[FILE]", cmd_save },
	{ "mount", "", cmd_mount },
	{ "status", "", cmd_status },
	{ "reset", "", cmd_reset },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: classctl [--socket PATH] COMMAND [ARG]...\n"
		"Drive a classfsd daemon: classes, devices, attributes, events, records.\n"
		"\n"
		"  -s, --socket PATH  the daemon's control socket (default $CLASSFS_SOCKET,\n"
		"                     else %s)\n"
		"  -h, --help         show this help\n"
		"\n"
		"Commands:\n", CLASSFS_CLIENT_DEFAULT_SOCKET);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %s%s%s\n", cmds[i].name, *cmds[i].args ? " " : "", cmds[i].args);
	fprintf(out, "\nSee classctl(1).\n");
}

/* @s for a message: control bytes and backslashes as C escapes, never raw to a terminal */
static void put_escaped(FILE *f, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '\t')
			fputs("\\t", f);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	}
}

/* "classctl: " and the formatted message, escaped (names come from users and daemons) */
static void put_message(const char *fmt, va_list ap)
{
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fputs("classctl: ", stderr);
	put_escaped(stderr, buf);
}

int ctl_fail(struct classfs_client *c, int err, const char *fmt, ...)
{
	const char *msg = c ? classfs_client_error_message(c) : "";
	va_list ap;

	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	/* the daemon's explanation names what was wrong; errno's text says what kind */
	if (msg && *msg) {
		fputs(": ", stderr);
		put_escaped(stderr, msg);
		if (!strstr(msg, strerror(-err)))
			fprintf(stderr, " (%s)", strerror(-err));
		fputc('\n', stderr);
	} else {
		fprintf(stderr, ": %s\n", strerror(-err));
	}
	return 1;
}

int ctl_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_message(fmt, ap);
	va_end(ap);
	fputs("\nTry 'classctl --help'.\n", stderr);
	return EXIT_USAGE;
}

bool ctl_nargs(int argc, int min, int max, const char *cmd)
{
	if (argc < min) {
		ctl_usage("%s: missing operand", cmd);
		return false;
	}
	if (argc > max) {
		ctl_usage("%s: unexpected operand", cmd);
		return false;
	}
	return true;
}

bool ctl_names_valid(const char *cmd, const char *what, ...)
{
	const char *name;
	va_list ap;
	bool ok = true;

	va_start(ap, what);
	for (; what && ok; what = va_arg(ap, const char *)) {
		name = va_arg(ap, const char *);
		if (name && classfs_name_valid(name) < 0) {
			fprintf(stderr, "classctl: %s: '", cmd);
			put_escaped(stderr, name);
			fprintf(stderr, "' is not a valid %s name (empty, \".\", \"..\", or "
				"holds '/' or a control character)\n", what);
			ok = false;
		}
	}
	va_end(ap);
	return ok;
}

char *ctl_sysfs_value(const char *s, size_t *len)
{
	size_t l = strlen(s);
	bool nl = l && s[l - 1] == '\n';
	char *v = malloc(l + 2);

	if (!v)
		return NULL;
	memcpy(v, s, l);
	if (!nl)
		v[l++] = '\n';
	v[l] = '\0';
	*len = l;
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct cmd *cmd = NULL;
	int o, r;

	ctl_socket = getenv("CLASSFS_SOCKET");
	if (!ctl_socket || !*ctl_socket)
		ctl_socket = CLASSFS_CLIENT_DEFAULT_SOCKET;
	/* '+': stop at the command, whose options are its own */
	while ((o = getopt_long(argc, argv, "+s:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			ctl_socket = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fputs("Try 'classctl --help'.\n", stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return ctl_usage("no command given");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			cmd = &cmds[i];
	if (!cmd)
		return ctl_usage("unknown command '%s'", argv[optind]);

	/* the command sees argv[0] = its name, its options and operands after it */
	argc -= optind;
	argv += optind;
	optind = 0;	/* a full reset: getopt_long starts over on the command's argv */
	r = cmd->run(argc, argv);
	classfs_client_disconnect(client);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "classctl: writing the output: %s\n", strerror(errno));
		return 1;
	}
	return r;
}
