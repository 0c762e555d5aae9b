// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devices.c - classctl's commands on classes, devices and attributes:
 * mkclass, rmclass, add, rm, rename, set, get, trigger.
 *
 * What the daemon checks (names, modes, existence) it also explains, so
 * these only check what the command line alone can tell: the shape of
 * --dev and --attr, the action's name.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "classctl.h"
#include "util.h"

/* Linux's device numbers: 12-bit major (0 means none), 20-bit minor */
#define MAJOR_MAX 4095u
#define MINOR_MAX 1048575u

bool ctl_no_options(int argc, char **argv)
{
	static const struct option none[] = { { 0 } };

	opterr = 0;
	while (getopt_long(argc, argv, "", none, NULL) != -1) {
		ctl_usage("%s: unknown option '%s'", argv[0], argv[optind - 1]);
		return false;
	}
	return true;
}

/* "MAJ:MIN" with MAJ in 1..4095 and MIN in 0..1048575 */
static bool parse_devt(const char *s, dev_t *out)
{
	const char *colon = strchr(s, ':');
	char maj[16];
	unsigned long ma, mi;

	if (!colon || (size_t)(colon - s) >= sizeof(maj))
		return false;
	memcpy(maj, s, (size_t)(colon - s));
	maj[colon - s] = '\0';
	if (!cfs_parse_uint(maj, strlen(maj), MAJOR_MAX, &ma) || !ma ||
	    !cfs_parse_uint(colon + 1, strlen(colon + 1), MINOR_MAX, &mi))
		return false;
	*out = makedev(ma, mi);
	return true;
}

int cmd_mkclass(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 1, 1, "mkclass"))
		return EXIT_USAGE;
	if (!ctl_names_valid("mkclass", "class", argv[optind], NULL))
		return 1;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_class_create(c, argv[optind], 0);
	return r ? ctl_fail(c, r, "mkclass %s", argv[optind]) : 0;
}

int cmd_rmclass(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 1, 1, "rmclass"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_class_remove(c, argv[optind]);
	return r ? ctl_fail(c, r, "rmclass %s", argv[optind]) : 0;
}

/* the tree as a new daemon's: every device, class and file made removed */
int cmd_reset(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 0, 0, "reset"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_reset(c);
	return r ? ctl_fail(c, r, "reset") : 0;
}

static void free_attrs(struct classfs_client_attr *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)a[i].name);
		free((void *)a[i].value);
	}
	free(a);
}

/* KEY=VALUE -> a 0644 stored attribute holding "VALUE\n" */
static int push_attr(struct classfs_client_attr **a, size_t *n, const char *kv)
{
	const char *eq = strchr(kv, '=');
	struct classfs_client_attr *v;
	size_t len;

	if (!eq || eq == kv)
		return ctl_usage("add: --attr '%s' is not KEY=VALUE", kv);
	v = realloc(*a, (*n + 1) * sizeof(**a));
	if (!v)
		return ctl_fail(NULL, -ENOMEM, "add");
	*a = v;
	v[*n] = (struct classfs_client_attr){
		.name = strndup(kv, (size_t)(eq - kv)),
		.mode = 0644,
		.value = ctl_sysfs_value(eq + 1, &len),
	};
	v[*n].len = len;
	(*n)++;
	if (!v[*n - 1].name || !v[*n - 1].value)
		return ctl_fail(NULL, -ENOMEM, "add");
	return 0;
}

int cmd_add(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "parent", required_argument, NULL, 'p' },
		{ "dev", required_argument, NULL, 'd' },
		{ "attr", required_argument, NULL, 'a' },
		{ "type", required_argument, NULL, 't' },
		{ "open", no_argument, NULL, 'o' },
		{ 0 },
	};
	struct classfs_client_device dev = { 0 };
	struct classfs_client_attr *attrs = NULL;
	struct classfs_client *c;
	size_t nattrs = 0;
	int o, r = 0;

	opterr = 0;
	while (!r && (o = getopt_long(argc, argv, ":p:d:a:t:", opts, NULL)) != -1) {
		switch (o) {
		case 'p':
			dev.parent = optarg;
			break;
		case 'd':
			if (!parse_devt(optarg, &dev.devt))
				r = ctl_usage("add: --dev '%s' is not MAJOR:MINOR "
					      "(MAJOR 1-%u, MINOR 0-%u)", optarg, MAJOR_MAX, MINOR_MAX);
			break;
		case 'a':
			r = push_attr(&attrs, &nattrs, optarg);
			break;
		case 't':
			dev.devtype = optarg;
			break;
		case 'o':
			dev.flags |= CLASSFS_CLIENT_OPEN;	/* others may publish below it */
			break;
		case ':':
			r = ctl_usage("add: option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			r = ctl_usage("add: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!r && !ctl_nargs(argc - optind, 2, 2, "add"))
		r = EXIT_USAGE;
	if (!r && !ctl_names_valid("add", "class", argv[optind], "device", argv[optind + 1],
				   "parent", dev.parent, NULL))
		r = 1;
	if (!r && !(c = ctl_connect()))
		r = 1;
	if (!r) {
		dev.cls = argv[optind];
		dev.name = argv[optind + 1];
		dev.attrs = attrs;
		dev.nattrs = nattrs;
		r = classfs_client_device_add(c, &dev);
		if (r)
			r = ctl_fail(c, r, "add %s %s", dev.cls, dev.name);
	}
	free_attrs(attrs, nattrs);
	return r;
}

int cmd_rm(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 2, 2, "rm"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_device_remove(c, argv[optind], argv[optind + 1]);
	return r ? ctl_fail(c, r, "rm %s %s", argv[optind], argv[optind + 1]) : 0;
}

int cmd_rename(int argc, char **argv)
{
	struct classfs_client *c;
	char **a;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 3, 3, "rename"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	a = argv + optind;
	if (!ctl_names_valid("rename", "device", a[2], NULL))
		return 1;
	r = classfs_client_device_rename(c, a[0], a[1], a[2]);
	return r ? ctl_fail(c, r, "rename %s %s %s", a[0], a[1], a[2]) : 0;
}

int cmd_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "create", no_argument, NULL, 'c' },
		{ 0 },
	};
	struct classfs_client *c;
	bool create = false;
	char **a, *value;
	size_t len;
	int o, r;

	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o != 'c')
			return ctl_usage("set: unknown option '%s'", argv[optind - 1]);
		create = true;
	}
	if (!ctl_nargs(argc - optind, 4, 4, "set"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	a = argv + optind;
	/* as `echo VALUE > ATTR` writes it */
	value = ctl_sysfs_value(a[3], &len);
	if (!value)
		return ctl_fail(NULL, -ENOMEM, "set");
	/* --create: a missing attribute is made (umockdev's set_attribute) */
	r = create ? classfs_client_attr_add(c, a[0], a[1], a[2], value, len, 0)
		   : classfs_client_attr_set(c, a[0], a[1], a[2], value, len);
	free(value);
	return r ? ctl_fail(c, r, "set %s %s %s", a[0], a[1], a[2]) : 0;
}

int cmd_get(int argc, char **argv)
{
	struct classfs_client *c;
	char buf[CLASSFS_ATTR_MAX];
	char **a;
	ssize_t n;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 3, 3, "get"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	a = argv + optind;
	n = classfs_client_attr_get(c, a[0], a[1], a[2], buf, sizeof(buf));
	if (n < 0)
		return ctl_fail(c, (int)n, "get %s %s %s", a[0], a[1], a[2]);
	/* the bytes as they are, as cat(1) would show them */
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

/*
 * trigger CLASS NAME [ACTION [KEY=VALUE...]]: the variables arrive as
 * SYNTH_ARG_KEY=VALUE, as after `echo "ACTION UUID KEY=VALUE" > uevent`.
 */
int cmd_trigger(int argc, char **argv)
{
	const char *action = "change";	/* udevadm trigger's default */
	const char *const *vars = NULL;
	struct classfs_client *c;
	char **a;
	int act, r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 2, INT_MAX, "trigger"))
		return EXIT_USAGE;
	a = argv + optind;
	if (argc - optind >= 3)
		action = a[2];
	if (argc - optind > 3) {
		vars = (const char *const *)(a + 3);	/* argv ends with NULL */
		for (const char *const *v = vars; *v; v++)
			if (classfs_synth_arg_valid(*v) < 0)
				return ctl_usage("trigger: '%s' is not a valid variable (KEY=VALUE: "
						 "KEY of letters, digits and '_', VALUE not empty, "
						 "without control characters)", *v);
	}
	act = classfs_action_parse(action, strlen(action));
	if (act < 0) {
		fprintf(stderr, "classctl: trigger: unknown action '%s' (one of:", action);
		for (int i = 0; i < CLASSFS_ACTION_COUNT; i++)
			fprintf(stderr, " %s", classfs_action_name((enum classfs_action)i));
		fputs(")\n", stderr);
		return EXIT_USAGE;
	}
	if (!(c = ctl_connect()))
		return 1;
	r = classfs_client_trigger(c, a[0], a[1], (enum classfs_action)act, vars);
	return r ? ctl_fail(c, r, "trigger %s %s %s", a[0], a[1], action) : 0;
}
