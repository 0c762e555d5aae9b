// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * udev-props.c - the properties udev adds to a device's events.
 *
 * udevd broadcasts an event once its rules ran, with every property of
 * the device's database entry (ID_*, ...), not only the kernel's; the
 * entry is what it wrote for the device.  Here a device's "rules" are
 * its recorded E: lines that the kernel's event does not carry (a device
 * loaded from a record, or added by a Python testbed with properties):
 * the daemon gives them in the device's record, asked on a connection of
 * the holder's own for requests (its first one is subscribed).  The
 * broadcast then carries what the entry holds when it goes out, which
 * for a change is also what a test set in the entry since.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <classfs/client.h>
#include <classfs/wire.h>

#include "devfs-internal.h"

/* largest database entry read back for a broadcast */
#define DB_MAX 65536

/**
 * cfs_props_free() - release what @p holds; it is empty afterwards
 */
void cfs_props_free(struct cfs_props *p)
{
	free(p->buf);
	*p = (struct cfs_props){ 0 };
}

/* append "KEY=VALUE" (@len bytes) as one NUL-terminated string */
static int props_add(struct cfs_props *p, const char *kv, size_t len)
{
	char *b = realloc(p->buf, p->len + len + 1);

	if (!b)
		return -ENOMEM;
	memcpy(b + p->len, kv, len);
	b[p->len + len] = '\0';
	p->buf = b;
	p->len += len + 1;
	p->count++;
	return 0;
}

/**
 * cfs_props_in_event() - whether @ev has a variable of the key of @kv
 * ("KEY=VALUE" or "KEY")
 */
bool cfs_props_in_event(const struct classfs_uevent *ev, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (int i = 0; i < ev->envc; i++)
		if (!strncmp(ev->envp[i], kv, n) && ev->envp[i][n] == '=')
			return true;
	return false;
}

/*
 * The E: lines of the last paragraph of the record @rec (@len bytes)
 * whose keys @ev lacks, into @out.  A record of a device and its parents
 * is sorted by path, so it ends with the device's own paragraph (named by
 * its syspath, whatever DEVPATH @ev names it by).
 */
static int paragraph_props(const char *rec, size_t len, const struct classfs_uevent *ev,
			   struct cfs_props *out)
{
	int r;

	for (const char *s = rec, *e = rec + len; s < e;) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t ll = nl ? (size_t)(nl - s) : (size_t)(e - s);

		if (ll >= 3 && !memcmp(s, "P: ", 3)) {
			cfs_props_free(out);	/* a later paragraph: the device's is later still */
			out->node[0] = '\0';
		} else if (ll > 3 && !memcmp(s, "N: ", 3)) {
			size_t nl3 = strcspn(s + 3, "=\n");

			if (nl3 > ll - 3)
				nl3 = ll - 3;
			if (nl3 < sizeof(out->node)) {
				memcpy(out->node, s + 3, nl3);
				out->node[nl3] = '\0';
			}
		} else if (ll > 3 && !memcmp(s, "E: ", 3) && memchr(s + 3, '=', ll - 3)) {
			char key[256];
			size_t kl = strcspn(s + 3, "=");

			if (kl && kl < sizeof(key)) {
				memcpy(key, s + 3, kl);
				key[kl] = '\0';
				if (!cfs_props_in_event(ev, key) &&
				    (r = props_add(out, s + 3, ll - 3)) < 0)
					return r;
			}
		}
		s = nl ? nl + 1 : e;
	}
	return 0;
}

/**
 * cfs_client_save_mem() - the daemon's record of @devpath (NULL: the whole
 * tree) in a buffer of its own
 * @buf, @len: receive it on success (free() *@buf, even on error).
 *
 * Return: 0 or classfs_client_save()'s -errno; -ENOMEM.
 */
int cfs_client_save_mem(struct classfs_client *c, const char *devpath, char **buf, size_t *len)
{
	FILE *f;
	int r;

	*buf = NULL;
	*len = 0;
	f = open_memstream(buf, len);
	if (!f)
		return -errno;
	r = classfs_client_save(c, devpath, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	return r;
}

/**
 * cfs_props_recorded() - the properties the daemon keeps for the device
 * of @ev beyond what @ev carries (its recorded E: lines), asked by the
 * event's DEVPATH: the devices layout's syspath, or a class-layout tree's
 * "/class/..." (classfs_record_save() takes either)
 * @c: a connection to the daemon that is not subscribed.
 * @ev: an add event.
 * @out: receives them (empty when none); cfs_props_free() it.
 *
 * Return: 0, -ENOENT when the device is gone already, or -errno.
 */
int cfs_props_recorded(struct classfs_client *c, const struct classfs_uevent *ev,
		       struct cfs_props *out)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	*out = (struct cfs_props){ 0 };
	r = cfs_client_save_mem(c, ev->devpath, &buf, &len);
	if (r == 0)
		r = paragraph_props(buf, len, ev, out);
	free(buf);
	if (r < 0)
		cfs_props_free(out);
	return r;
}

/*
 * The E: lines of the database entry of the device of @ev whose keys @ev
 * lacks, into @out (empty when it has no entry).
 */
static int db_props(struct cfs_devfs *d, const struct classfs_uevent *ev, struct cfs_props *out)
{
	const struct devent *e = cfs_devent_get(d, ev->devpath, false);
	char *text;
	ssize_t n;
	int fd, r = 0;

	*out = (struct cfs_props){ 0 };
	if (!e || !e->db)
		return 0;
	fd = openat(d->db_fd, e->db, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	text = malloc(DB_MAX);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, text, DB_MAX);
	close(fd);
	if (n < 0)
		r = -errno;
	for (const char *s = text, *end = text + (n > 0 ? n : 0); r == 0 && s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t ll = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (ll > 2 && !memcmp(s, "E:", 2) && memchr(s + 2, '=', ll - 2)) {
			char kv[4096];

			if (ll - 2 < sizeof(kv)) {
				memcpy(kv, s + 2, ll - 2);
				kv[ll - 2] = '\0';
				if (!cfs_props_in_event(ev, kv))
					r = props_add(out, kv, ll - 2);
			}
		}
		s = nl ? nl + 1 : end;
	}
	free(text);
	if (r < 0)
		cfs_props_free(out);
	return r;
}

/**
 * cfs_devfs_broadcast() - send @ev on the udev group of @nl_fd as udevd
 * would: with the properties of the device's database entry
 * @d: the environment's /dev and database.
 * @nl_fd: a socket from classfs_netlink_udev_open().
 * @ev: the event (its node and entry made before, for an add).
 *
 * An entry that cannot be read, or one too large for a message, leaves
 * the event as the kernel made it.
 * Return: 0 or -errno from the send.
 */
int cfs_devfs_broadcast(struct cfs_devfs *d, int nl_fd, const struct classfs_uevent *ev)
{
	struct classfs_uevent full = *ev;
	struct cfs_props p;
	const char **envp;
	size_t len;
	int r;

	if (!ev->devpath || db_props(d, ev, &p) < 0 || !p.count)
		return classfs_netlink_udev_send(nl_fd, ev);
	if ((size_t)ev->envc + p.count > CLASSFS_WIRE_MAX_VARS) {
		cfs_props_free(&p);
		return classfs_netlink_udev_send(nl_fd, ev);
	}
	envp = malloc(((size_t)ev->envc + p.count) * sizeof(*envp));
	if (!envp) {
		cfs_props_free(&p);
		return classfs_netlink_udev_send(nl_fd, ev);
	}
	memcpy(envp, ev->envp, (size_t)ev->envc * sizeof(*envp));
	for (size_t off = 0, i = 0; i < p.count; i++, off += strlen(p.buf + off) + 1)
		envp[ev->envc + (int)i] = p.buf + off;
	full.envp = envp;
	full.envc = ev->envc + (int)p.count;
	/* what a listener's CLASSFS_WIRE_MAX buffer would cut: the kernel's event alone */
	len = classfs_uevent_format_udev(&full, NULL, 0);
	if (len && len <= CLASSFS_WIRE_MAX)
		r = classfs_netlink_udev_send(nl_fd, &full);
	else
		r = classfs_netlink_udev_send(nl_fd, ev);
	free(envp);
	cfs_props_free(&p);
	return r;
}
