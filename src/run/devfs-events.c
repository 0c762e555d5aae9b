// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devfs-events.c - hotplug in the private /dev and /run/udev.
 *
 * Hotplug follows udev's order: for an add, node and database entry
 * exist before the event is broadcast; for a remove, they go after it.
 *
 * An event's variables are not the device's: a client that triggers an
 * event on its own device may add any KEY=VALUE to it (DEVNAME, MAJOR,
 * MINOR, IFINDEX, DEVPATH_OLD...).  So the node and the database file an
 * add makes follow the device's own `uevent` file, read from the tree
 * itself (the environment's /sys); what a remove takes away is what was
 * made for that device (devfs.c notes it); a move renames a device's
 * entry only when the device it names is gone from the tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "devfs-internal.h"

static const char *ev_get(const struct classfs_uevent *ev, const char *key)
{
	const char *v = classfs_uevent_get(ev, key);

	return v && *v ? v : NULL;
}

/**
 * cfs_own_vars_parse() - the node variables of a device's `uevent` file
 * (@len bytes of "KEY=VALUE\n" lines at @text) into @o
 */
void cfs_own_vars_parse(const char *text, size_t len, struct own_vars *o)
{
	unsigned long ma = 0, mi = 0, v;
	bool have_ma = false, have_mi = false;

	memset(o, 0, sizeof(*o));
	for (const char *s = text, *e = text + len; s < e;) {
		const char *nl = memchr(s, '\n', (size_t)(e - s)), *end = nl ? nl : e;
		const char *eq = memchr(s, '=', (size_t)(end - s));
		size_t kl = eq ? (size_t)(eq - s) : 0, vl = eq ? (size_t)(end - eq - 1) : 0;

#define KEY_IS(k) (kl == strlen(k) && !memcmp(s, k, kl))
		if (!eq) {
			/* not a variable */
		} else if (KEY_IS("MAJOR")) {
			have_ma = cfs_parse_uint(eq + 1, vl, 0xfff, &ma);
		} else if (KEY_IS("MINOR")) {
			have_mi = cfs_parse_uint(eq + 1, vl, 0xfffff, &mi);
		} else if (KEY_IS("DEVNAME") && vl < sizeof(o->devname)) {
			memcpy(o->devname, eq + 1, vl);
			o->devname[vl] = '\0';
		} else if (KEY_IS("DEVMODE") && vl && vl <= 4 && strspn(eq + 1, "01234567") >= vl) {
			v = strtoul(eq + 1, NULL, 8);
			o->mode = (mode_t)(v & 07777);
		} else if (KEY_IS("IFINDEX") && cfs_parse_uint(eq + 1, vl, 0x7fffffff, &v)) {
			snprintf(o->ifindex, sizeof(o->ifindex), "%lu", v);
		}
#undef KEY_IS
		s = nl ? nl + 1 : e;
	}
	if (have_ma && have_mi && ma)
		o->devt = makedev(ma, mi);
}

/**
 * cfs_db_name() - the name of a device's file in /run/udev/data, as the
 * record loader names it: "b8:0"/"c189:10" for a device with a number,
 * "n3" for a network interface, else "+SUBSYSTEM:NAME"
 * Return: false when the device has none.
 */
bool cfs_db_name(const char *subsystem, const char *devpath, bool block, const struct own_vars *o,
		 char *buf, size_t size)
{
	const char *name;

	if (major(o->devt))
		return snprintf(buf, size, "%c%u:%u", block ? 'b' : 'c', major(o->devt),
				minor(o->devt)) < (int)size;
	if (!subsystem || !*subsystem || strchr(subsystem, '/') || !devpath)
		return false;
	if (!strcmp(subsystem, "net") && o->ifindex[0])
		return snprintf(buf, size, "n%s", o->ifindex) < (int)size;
	name = strrchr(devpath, '/');
	name = name ? name + 1 : devpath;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return snprintf(buf, size, "+%s:%s", subsystem, name) < (int)size;
}

/*
 * The device at @devpath as the tree has it now: its own `uevent` file,
 * asked of the daemon (one round trip) or read in the environment's /sys
 * (a walk of FUSE lookups).  Return: 0, -ENOENT when it is gone, or -errno.
 */
static int read_own(struct cfs_devfs *d, const char *devpath, struct own_vars *o)
{
	char rel[PATH_MAX], path[PATH_MAX + 16], text[8192];
	size_t len = 0;
	ssize_t n;
	int fd, r = 0;

	if (!devpath || devpath[0] != '/' || !cfs_dev_rel_name(devpath + 1, rel, sizeof(rel)))
		return -EINVAL;
	if (d->req) {
		n = classfs_client_attr_get_path(d->req, devpath, "uevent", text, sizeof(text));
		if (n < 0)
			return (int)n;
		cfs_own_vars_parse(text, (size_t)n, o);
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/%s/uevent", rel);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	while (len < sizeof(text)) {
		n = read(fd, text + len, sizeof(text) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
		/* short: the end of a regular file (no second FUSE read to learn it) */
		if (len < sizeof(text))
			break;
	}
	close(fd);
	if (r < 0)
		return r;
	cfs_own_vars_parse(text, len, o);
	return 0;
}

static bool ev_block(const struct classfs_uevent *ev)
{
	return ev->subsystem && !strcmp(ev->subsystem, "block");
}

/* what the kernel's uevent (and so the uevent file) already says: not udev properties */
static bool kernel_key(const char *kv)
{
	static const char *const keys[] = {
		"ACTION", "DEVPATH", "DEVPATH_OLD", "SUBSYSTEM", "SEQNUM", "MAJOR", "MINOR",
		"DEVNAME", "DEVTYPE", "DEVMODE", "DEVUID", "DEVGID", "TAGS", "CURRENT_TAGS",
		"SYNTH_UUID",
	};
	size_t n = strcspn(kv, "=");

	if (!strncmp(kv, "SYNTH_ARG_", 10))
		return true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == n && !strncmp(kv, keys[i], n))
			return true;
	return false;
}

/*
 * The database entry @name udev would write for a device it just
 * handled: the event's own properties and the @recorded ones (its rules').
 */
static int write_db(struct cfs_devfs *d, const struct classfs_uevent *ev, const char *name,
		    const struct cfs_props *recorded)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return -errno;
	/*
	 * USEC_INITIALIZED only where the record has it: umockdev's testbeds
	 * write no database time, and suites written for them check a
	 * device's property keys; libudev takes a device with a database
	 * entry as initialized either way.
	 */
	for (size_t i = 0, off = 0; recorded && i < recorded->count; i++) {
		const char *kv = recorded->buf + off;

		off += strlen(kv) + 1;
		if (!strncmp(kv, "USEC_INITIALIZED=", 17))
			fprintf(f, "I:%s\n", kv + 17);
	}
	for (int i = 0; i < ev->envc; i++)
		if (!kernel_key(ev->envp[i]))
			fprintf(f, "E:%s\n", ev->envp[i]);
	for (size_t i = 0, off = 0; recorded && i < recorded->count; i++) {
		const char *kv = recorded->buf + off;

		off += strlen(kv) + 1;
		/* links and the time have lines of their own (S:, I:), not E: */
		if (!kernel_key(kv) && strncmp(kv, "DEVLINKS=", 9) &&
		    strncmp(kv, "USEC_INITIALIZED=", 17))
			fprintf(f, "E:%s\n", kv);
	}
	cfs_put_tags(f, 'G', ev_get(ev, "TAGS"));
	cfs_put_tags(f, 'Q', ev_get(ev, "CURRENT_TAGS"));
	fputs("V:1\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = cfs_devdir_write(d->db_fd, name, buf, len, 0644);
	free(buf);
	return r;
}

/* an add: the device's node and database file, after its own variables */
static int event_add(struct cfs_devfs *d, const struct classfs_uevent *ev,
		     const struct cfs_props *recorded)
{
	char name[PATH_MAX];
	struct own_vars o;
	struct devent *e;
	int r;

	r = read_own(d, ev->devpath, &o);
	if (r == -ENOENT)
		return 0;	/* gone already: its remove follows */
	if (r < 0)
		return r;
	e = cfs_devent_get(d, ev->devpath, true);
	if (!e)
		return -ENOMEM;
	/* a record's `N:` without a number is an empty file, as when the tree is filled */
	if (!major(o.devt) && !o.devname[0] && recorded && recorded->node[0])
		snprintf(o.devname, sizeof(o.devname), "%s", recorded->node);
	if (major(o.devt) || o.devname[0]) {
		const char *devname = o.devname, *base = strrchr(ev->devpath, '/');

		if (!*devname)
			devname = base ? base + 1 : ev->devpath;
		/* udev's mode for a node no rule touched: 0600 */
		r = cfs_devfs_make_node(d, e, devname, ev_block(ev), o.devt, o.mode ? o.mode : 0600,
					NULL, 0);
		if (r < 0)
			return r;
	}
	if (!cfs_db_name(ev->subsystem, ev->devpath, ev_block(ev), &o, name, sizeof(name)))
		return 0;
	/* a device that already has its entry (the snapshot's) keeps it */
	if (e->db && !strcmp(e->db, name))
		return 0;
	/*
	 * Another device's: a "+SUBSYSTEM:NAME" goes to the device added last,
	 * as udev writes it (a class device whose class link was unlinked
	 * left its name to another, upower's test); a number's stays.
	 */
	if (faccessat(d->db_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (name[0] != '+' || !cfs_devfs_take_db(d, e, name))) {
		cfs_run_log(d->verbose, "%s: /run/udev/data/%s is another device's: left alone",
			    ev->devpath, name);
		return 0;
	}
	if (!cfs_devfs_claim_db(d, e, name))
		return e->db ? 0 : -ENOMEM;
	r = write_db(d, ev, name, recorded);
	if (r < 0)
		cfs_devfs_remove_db(d, e);
	return r;
}

/*
 * A move: the entry of the device at DEVPATH_OLD goes to DEVPATH, its
 * database file to its new name.  Only when the device at DEVPATH_OLD is
 * gone from the tree and DEVPATH had no entry yet, as after a rename: a
 * client's DEVPATH_OLD naming another device changes nothing.
 */
static int event_move(struct cfs_devfs *d, const struct classfs_uevent *ev)
{
	const char *old = ev_get(ev, "DEVPATH_OLD");
	char name[PATH_MAX];
	struct own_vars o;
	struct devent *e;
	int r;

	if (!old || !strcmp(old, ev->devpath))
		return 0;
	e = cfs_devent_get(d, old, false);
	if (!e || cfs_devent_get(d, ev->devpath, false) || read_own(d, old, &o) != -ENOENT ||
	    read_own(d, ev->devpath, &o) < 0)
		return 0;
	r = cfs_devent_refile(d, e, ev->devpath);
	if (r < 0)
		return r;
	if (!e->db || e->db[0] != '+' ||
	    !cfs_db_name(ev->subsystem, ev->devpath, ev_block(ev), &o, name, sizeof(name)) ||
	    !strcmp(name, e->db) || faccessat(d->db_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	return cfs_devfs_rename_db(d, e, name);
}

/**
 * cfs_devfs_event_before() - apply an event's effects that come before
 * its broadcast: for an add, the node and the database entry; for a
 * move, the database entry under its new name.  @recorded: for an add,
 * the device's properties beyond the event's (cfs_props_recorded()), for
 * its database entry; may be NULL.
 * Return: 0 or -errno (the event is broadcast anyway).
 */
int cfs_devfs_event_before(struct cfs_devfs *d, const struct classfs_uevent *ev,
			   const struct cfs_props *recorded)
{
	if (!ev->devpath)
		return -EINVAL;
	if (ev->action == CLASSFS_ACTION_ADD)
		return event_add(d, ev, recorded);
	if (ev->action == CLASSFS_ACTION_MOVE)
		return event_move(d, ev);
	return 0;
}

/**
 * cfs_devfs_event_after() - apply an event's effects that come after its
 * broadcast: for a remove, what was made for the device (node, links,
 * database entry) goes.
 * Return: 0 or -errno.
 */
int cfs_devfs_event_after(struct cfs_devfs *d, const struct classfs_uevent *ev)
{
	struct devent *e;

	if (ev->action != CLASSFS_ACTION_REMOVE || !ev->devpath)
		return 0;
	e = cfs_devent_get(d, ev->devpath, false);
	if (!e)
		return 0;
	cfs_devfs_remove_node(d, e);
	cfs_devfs_remove_db(d, e);
	cfs_devent_drop(d, e);
	return 0;
}
