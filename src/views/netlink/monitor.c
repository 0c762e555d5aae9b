// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * monitor.c - an event for people and for scripts: the text `udevadm
 * monitor --kernel --property` prints, and one JSON object per line.
 *
 * The text is udevadm's to the byte (systemd's udevadm-monitor.c: the
 * source padded to 6 columns, the monotonic time with microseconds, the
 * action padded to 8 columns, then the properties and an empty line), so
 * scripts written against udevadm read ours.  udevadm prints properties
 * as sd-device holds them after parsing the message: in message order,
 * except that DEVNAME becomes absolute ("/dev/sda") and MAJOR and MINOR
 * come after the others (the device number is set once all are read),
 * then the tag and link lists it rebuilds; test-udevadm.sh compares us
 * with the real udevadm on the same events.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <json-c/json.h>

#include "util.h"
#include "wire-internal.h"

static struct timespec now_or(const struct timespec *when)
{
	struct timespec ts = { 0 };

	if (when)
		return *when;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

static const char *or_na(const char *s)
{
	return s ? s : "n/a";
}

static int finish(FILE *out)
{
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

static bool is_key(const char *var, const char *key)
{
	size_t kl = strlen(key);

	return !strncmp(var, key, kl) && var[kl] == '=';
}

/* 0: in message order; 1: the device number; 2: the rebuilt lists */
static int monitor_pass(const char *var)
{
	if (is_key(var, "MAJOR") || is_key(var, "MINOR"))
		return 1;
	if (is_key(var, "TAGS") || is_key(var, "CURRENT_TAGS") || is_key(var, "DEVLINKS"))
		return 2;
	return 0;
}

static void put_property(const char *var, FILE *out)
{
	if (is_key(var, "DEVNAME") && var[8] && var[8] != '/')
		fprintf(out, "DEVNAME=/dev/%s\n", var + 8);
	else
		fprintf(out, "%s\n", var);
}

/**
 * classfs_uevent_print_monitor() - print @ev as `udevadm monitor --kernel --property`
 * @ev: the event.
 * @when: its time, NULL: now (CLOCK_MONOTONIC).
 * @out: where to print.
 *
 * Return: 0, -EINVAL, -EIO.
 */
int classfs_uevent_print_monitor(const struct classfs_uevent *ev, const struct timespec *when,
				 FILE *out)
{
	struct timespec ts = now_or(when);
	const char *devpath, *subsystem;

	if (!ev || !out || (ev->envc && !ev->envp))
		return -EINVAL;
	devpath = ev->devpath ? ev->devpath : classfs_uevent_get(ev, "DEVPATH");
	subsystem = ev->subsystem ? ev->subsystem : classfs_uevent_get(ev, "SUBSYSTEM");
	fprintf(out, "%-6s[%jd.%06ld] %-8s %s (%s)\n", "KERNEL", (intmax_t)ts.tv_sec,
		ts.tv_nsec / 1000, or_na(classfs_action_name(ev->action)), or_na(devpath),
		or_na(subsystem));
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < ev->envc; i++)
			if (monitor_pass(ev->envp[i]) == pass)
				put_property(ev->envp[i], out);
	fputc('\n', out);
	return finish(out);
}

static int add_str(struct json_object *o, const char *key, const char *val)
{
	struct json_object *v = val ? json_object_new_string(val) : json_object_new_null();

	if (val && !v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/**
 * classfs_uevent_print_json() - print @ev as one line of JSON
 * @ev: the event.
 * @when: its time, NULL: now (CLOCK_MONOTONIC).
 * @out: where to print.
 *
 * Return: 0, -EINVAL, -ENOMEM, -EIO.
 */
int classfs_uevent_print_json(const struct classfs_uevent *ev, const struct timespec *when,
			      FILE *out)
{
	struct timespec ts = now_or(when);
	struct json_object *o, *props;
	int r = -ENOMEM;

	if (!ev || !out || (ev->envc && !ev->envp))
		return -EINVAL;
	o = json_object_new_object();
	props = json_object_new_object();
	if (!o || !props)
		goto out;
	for (int i = 0; i < ev->envc; i++) {
		const char *eq = strchr(ev->envp[i], '=');
		char key[256];
		size_t kl;

		if (!eq)
			continue;	/* not a variable: nothing to name it by */
		kl = (size_t)(eq - ev->envp[i]);
		if (kl >= sizeof(key))
			kl = sizeof(key) - 1;
		memcpy(key, ev->envp[i], kl);
		key[kl] = '\0';
		if (add_str(props, key, eq + 1))
			goto out;
	}
	if (cfs_json_add(o, "seqnum", json_object_new_uint64(ev->seqnum)) ||
	    add_str(o, "action", classfs_action_name(ev->action)) ||
	    add_str(o, "devpath", ev->devpath ? ev->devpath : classfs_uevent_get(ev, "DEVPATH")) ||
	    add_str(o, "subsystem",
		    ev->subsystem ? ev->subsystem : classfs_uevent_get(ev, "SUBSYSTEM")) ||
	    cfs_json_add(o, "usec",
		    json_object_new_uint64((uint64_t)ts.tv_sec * 1000000u +
					   (uint64_t)ts.tv_nsec / 1000u)))
		goto out;
	r = cfs_json_add(o, "properties", props);
	props = NULL;	/* owned by @o now, or freed by cfs_json_add() */
	if (r)
		goto out;
	fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	r = finish(out);
out:
	json_object_put(props);
	json_object_put(o);
	return r;
}
