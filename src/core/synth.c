// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * synth.c - synthetic uevents: the events a writer asks for, through a
 * device's `uevent` file ("ACTION [UUID [KEY=VALUE ...]]") or the control
 * socket's TRIGGER, made as Linux's kobject_synth_uevent() (4.13+) makes
 * them.
 *
 * A writer names the action and may add variables, but never sets one of
 * the event's own: each KEY=VALUE it gives arrives as SYNTH_ARG_KEY=VALUE,
 * KEY of [A-Za-z0-9_] only, VALUE without control bytes.  So nothing it
 * writes becomes ACTION, DEVPATH, DEVNAME, MAJOR, ... (a reader takes the
 * last of a repeated key), a line of its own in `udevadm monitor` text,
 * or LD_PRELOAD, PATH or anything else in the environment of the uevent
 * helper, which runs as the tree's owner (root for classfsd).
 */
#include "internal.h"

#define SYNTH_ARG "SYNTH_ARG_"
#define SYNTH_UUID "SYNTH_UUID="

/* [A-Za-z0-9_], in any locale (isalnum() would follow LC_CTYPE) */
static bool key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/**
 * cfs_uevent_key_valid() - is @len bytes at @s a variable's name?
 * One or more of [A-Za-z0-9_]: what udev rules and a shell can name.
 */
bool cfs_uevent_key_valid(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!key_char(s[i]))
			return false;
	return true;
}

/**
 * cfs_uevent_value_clean() - no control byte (below 0x20, 0x7f) in @s?
 * A newline would start a line of its own in monitor text and in a
 * record, a carriage return or an escape would rewrite a terminal's.
 */
bool cfs_uevent_value_clean(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

int classfs_synth_arg_valid(const char *kv)
{
	const char *eq;

	if (!kv || !(eq = strchr(kv, '=')))
		return -EINVAL;
	if (!cfs_uevent_key_valid(kv, (size_t)(eq - kv)) || !eq[1] || !cfs_uevent_value_clean(eq + 1))
		return -EINVAL;
	return 0;
}

/* 8-4-4-4-12 hexadecimal digits */
static bool uuid_valid(const char *s, size_t len)
{
	if (len != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		char c = s[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			     (c >= 'A' && c <= 'F'))) {
			return false;
		}
	}
	return true;
}

/* append @prefix and @len bytes of @s to @store; false when it is full */
static bool store_var(char *store, size_t *used, const char *prefix, const char *s, size_t len)
{
	size_t pl = strlen(prefix);

	if (pl + len + 1 > CLASSFS_UEVENT_BUFFER - *used)
		return false;
	memcpy(store + *used, prefix, pl);
	memcpy(store + *used + pl, s, len);
	store[*used + pl + len] = '\0';
	*used += pl + len + 1;
	return true;
}

/*
 * The event carries the device's own variables as any other; the writer
 * adds only SYNTH_ variables.
 */
int classfs_device_synth_uevent(struct classfs_device *dev, enum classfs_action action,
				const char *uuid, const char *const *args)
{
	const char *extra[CLASSFS_UEVENT_NUM_ENVP + 1];
	char store[CLASSFS_UEVENT_BUFFER];
	size_t used = 0, i;
	int n = 0;

	if (uuid && strcmp(uuid, "0") && !uuid_valid(uuid, strlen(uuid)))
		return -EINVAL;
	/* all checked before any is stored: a bad one is -EINVAL, never -ENOMEM */
	for (i = 0; args && args[i]; i++)
		if (classfs_synth_arg_valid(args[i]) < 0)
			return -EINVAL;
	if (uuid) {
		store_var(store, &used, SYNTH_UUID, uuid, strlen(uuid));
		extra[n++] = store;
	}
	for (i = 0; args && args[i]; i++) {
		if (n == CLASSFS_UEVENT_NUM_ENVP)
			return -ENOMEM;
		extra[n++] = store + used;
		if (!store_var(store, &used, SYNTH_ARG, args[i], strlen(args[i])))
			return -ENOMEM;
	}
	extra[n] = NULL;
	return classfs_device_uevent(dev, action, extra);
}

/* the next word of [*p, end): words are separated by spaces only */
static bool next_word(const char **p, const char *end, const char **w, size_t *wl)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return false;
	*w = s;
	while (s < end && *s != ' ')
		s++;
	*wl = (size_t)(s - *w);
	*p = s;
	return true;
}

/*
 * Parse a write to a `uevent` file, "ACTION [UUID [KEY=VALUE ...]]" with
 * one trailing newline allowed (echo's), and send that event: SYNTH_UUID
 * is the UUID or "0", each KEY=VALUE a SYNTH_ARG_KEY=VALUE.  A tab, a
 * newline inside or any other control byte is no separator: the word
 * holding it is malformed.
 * Return: 0, -EINVAL for anything malformed, -ENOMEM past the limits
 * (nothing sent), or a hook's veto.
 */
int cfs_uevent_file_write(struct classfs_device *dev, const char *buf, size_t count)
{
	const char *p = buf, *end, *w;
	const char *args[CLASSFS_UEVENT_NUM_ENVP + 1];
	char words[CLASSFS_ATTR_MAX + 1], uuid[37] = "0";
	bool too_many = false;
	size_t wl;
	int n = 0, action;

	if (count && buf[count - 1] == '\n')
		count--;
	if (count > CLASSFS_ATTR_MAX || memchr(buf, '\0', count))
		return -EINVAL;
	end = buf + count;
	if (!next_word(&p, end, &w, &wl))
		return -EINVAL;
	action = classfs_action_parse(w, wl);
	if (action < 0)
		return -EINVAL;
	if (next_word(&p, end, &w, &wl)) {
		if (!uuid_valid(w, wl))
			return -EINVAL;
		memcpy(uuid, w, wl);
		uuid[wl] = '\0';
	}
	/* each argument NUL-terminated in a copy; all checked, then the count */
	memcpy(words, buf, count);
	while (next_word(&p, end, &w, &wl)) {
		char *arg = words + (w - buf);

		arg[wl] = '\0';
		if (classfs_synth_arg_valid(arg) < 0)
			return -EINVAL;
		if (n == CLASSFS_UEVENT_NUM_ENVP)
			too_many = true;
		else
			args[n++] = arg;
	}
	if (too_many)
		return -ENOMEM;
	args[n] = NULL;
	return classfs_device_synth_uevent(dev, (enum classfs_action)action, uuid, args);
}
