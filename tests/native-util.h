/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * native-util.h - helpers shared by the native-API tests: reading the
 * tree by path, recording uevents, checking every link of a tree.
 * Include after harness.h.
 */
#ifndef CLASSFS_TEST_NATIVE_UTIL_H
#define CLASSFS_TEST_NATIVE_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

#include "classfs/classfs.h"

#define NU_UNUSED __attribute__((unused))
#define NU_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- paths ---- */

static char nu_bufs[8][CLASSFS_ATTR_MAX + 64];
static int nu_next;

static char *nu_buf(void)
{
	char *b = nu_bufs[nu_next];

	nu_next = (nu_next + 1) % 8;
	return b;
}

static NU_PRINTF(2, 0) void nu_vpath(char *out, const char *fmt, va_list ap)
{
	vsnprintf(out, 4096, fmt, ap);
}

/* the whole value at a path, or "ERR:-N" */
/* a device named @name, not added yet, freed by its release; NULL when the name is refused */
static NU_UNUSED struct classfs_device *nu_newdev(struct classfs_class *cls,
						  struct classfs_device *parent,
						  struct classfs_device *phys, const char *name,
						  dev_t devt)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	classfs_device_initialize(d);
	d->cls = cls;
	d->parent = parent;
	d->phys = phys;
	d->devt = devt;
	d->release = (void (*)(struct classfs_device *))free;
	if (classfs_device_set_name(d, "%s", name) < 0) {
		classfs_device_put(d);
		return NULL;
	}
	return d;
}

static NU_UNUSED NU_PRINTF(2, 3) const char *rd(struct classfs_tree *t, const char *fmt, ...)
{
	char path[4096];
	char *b = nu_buf();
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	nu_vpath(path, fmt, ap);
	va_end(ap);
	n = classfs_path_read(t, path, b, CLASSFS_ATTR_MAX + 32);
	if (n < 0)
		snprintf(b, 32, "ERR:%zd", n);
	else
		b[n] = '\0';
	return b;
}

/* a link's target at a path, or "ERR:-N" */
static NU_UNUSED NU_PRINTF(2, 3) const char *lnk(struct classfs_tree *t, const char *fmt, ...)
{
	char path[4096];
	char *b = nu_buf();
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	nu_vpath(path, fmt, ap);
	va_end(ap);
	n = classfs_path_readlink(t, path, b, 4096);
	if (n < 0)
		snprintf(b, 32, "ERR:%zd", n);
	return b;
}

/* the type of the entry at a path (last link not followed), or -errno */
static NU_UNUSED NU_PRINTF(2, 3) int ftype(struct classfs_tree *t, const char *fmt, ...)
{
	char path[4096];
	struct classfs_stat st;
	va_list ap;
	int r;

	va_start(ap, fmt);
	nu_vpath(path, fmt, ap);
	va_end(ap);
	r = classfs_path_stat(t, path, &st);
	return r < 0 ? r : (int)st.type;
}

static NU_UNUSED NU_PRINTF(2, 3) bool exists(struct classfs_tree *t, const char *fmt, ...)
{
	char path[4096];
	struct classfs_stat st;
	va_list ap;

	va_start(ap, fmt);
	nu_vpath(path, fmt, ap);
	va_end(ap);
	return classfs_path_stat(t, path, &st) == 0;
}

static NU_UNUSED ssize_t wr(struct classfs_tree *t, const char *path, const char *s)
{
	return classfs_path_write(t, path, s, strlen(s));
}

struct nu_count {
	const char *name;
	int n;
	int total;
};

static int nu_count_fn(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct nu_count *c = ctx;

	(void)st;
	c->total++;
	if (c->name && !strcmp(c->name, name))
		c->n++;
	return 0;
}

/* how often @name is listed in the directory at @dir (-errno on error) */
static NU_UNUSED int listed(struct classfs_tree *t, const char *dir, const char *name)
{
	struct nu_count c = { name, 0, 0 };
	int r = classfs_path_list(t, dir, nu_count_fn, &c);

	return r < 0 ? r : c.n;
}

/* number of entries of the directory at @dir (-errno on error) */
static NU_UNUSED int nentries(struct classfs_tree *t, const char *dir)
{
	struct nu_count c = { NULL, 0, 0 };
	int r = classfs_path_list(t, dir, nu_count_fn, &c);

	return r < 0 ? r : c.total;
}

/* ---- every link of a tree: relative, resolving inside, d_type right ---- */

struct nu_names {
	char **name;
	struct classfs_stat *st;
	int n, cap;
};

static int nu_names_fn(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct nu_names *v = ctx;

	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->name = realloc(v->name, sizeof(*v->name) * (size_t)v->cap);
		v->st = realloc(v->st, sizeof(*v->st) * (size_t)v->cap);
	}
	v->name[v->n] = strdup(name);
	v->st[v->n] = *st;
	v->n++;
	return 0;
}

/* resolve @target relative to directory @dir lexically; false if it leaves the root */
static bool nu_join(const char *dir, const char *target, char *out, size_t size)
{
	char tmp[8192];
	char *comp[512];
	int n = 0;
	char *save = NULL;

	snprintf(tmp, sizeof(tmp), "%s/%s", dir, target);
	for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (n == 0)
				return false;
			n--;
			continue;
		}
		comp[n++] = c;
	}
	out[0] = '\0';
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? "/" : "", comp[i]);
	return true;
}

static int nu_check_dir(struct classfs_tree *t, const char *dir, int depth, int *nlinks)
{
	struct nu_names v = { 0 };
	int bad = 0;
	int r = classfs_path_list(t, dir, nu_names_fn, &v);

	if (r < 0) {
		fprintf(stderr, "  cannot list '%s': %d\n", dir, r);
		return 1;
	}
	for (int i = 0; i < v.n; i++) {
		char path[4096], target[4096], res[8192];
		struct classfs_stat st;

		snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", v.name[i]);
		if (classfs_path_stat(t, path, &st) < 0 || st.type != v.st[i].type ||
		    st.ino != v.st[i].ino) {
			fprintf(stderr, "  '%s': listed entry does not stat the same\n", path);
			bad++;
		} else if (st.type == CLASSFS_FT_LNK) {
			ssize_t n = classfs_path_readlink(t, path, target, sizeof(target));

			(*nlinks)++;
			if (n <= 0) {
				fprintf(stderr, "  '%s': readlink %zd\n", path, n);
				bad++;
			} else if (target[0] == '/') {
				fprintf(stderr, "  '%s' -> '%s': absolute\n", path, target);
				bad++;
			} else if (!nu_join(dir, target, res, sizeof(res))) {
				fprintf(stderr, "  '%s' -> '%s': leaves the tree\n", path, target);
				bad++;
			} else if (classfs_path_stat(t, res, &st) < 0) {
				fprintf(stderr, "  '%s' -> '%s': does not resolve\n", path, target);
				bad++;
			}
		} else if (st.type == CLASSFS_FT_DIR && depth < 64) {
			bad += nu_check_dir(t, path, depth + 1, nlinks);
		}
		free(v.name[i]);
	}
	free(v.name);
	free(v.st);
	return bad;
}

/* number of bad entries (each printed); *nlinks gets the links seen */
static NU_UNUSED int check_links(struct classfs_tree *t, int *nlinks)
{
	int dummy = 0;

	return nu_check_dir(t, "", 0, nlinks ? nlinks : &dummy);
}

/* @path with every link in it resolved (lexically, in the tree); false on error */
static bool nu_real(struct classfs_tree *t, const char *path, char *out, size_t size, int depth)
{
	char tmp[4096], cand[4096], target[4096], joined[4096];
	char *save = NULL;

	if (depth > 40)
		return false;
	snprintf(tmp, sizeof(tmp), "%s", path);
	out[0] = '\0';
	for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct classfs_stat st;

		snprintf(cand, sizeof(cand), "%s%s%s", out, *out ? "/" : "", c);
		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			if (!nu_join(out, c, joined, sizeof(joined)) || strlen(joined) >= size)
				return false;
			strcpy(out, joined);
			continue;
		}
		if (classfs_path_stat(t, cand, &st) < 0)
			return false;
		if (st.type == CLASSFS_FT_LNK) {
			if (classfs_path_readlink(t, cand, target, sizeof(target)) < 0 ||
			    !nu_join(out, target, joined, sizeof(joined)) ||
			    !nu_real(t, joined, out, size, depth + 1))
				return false;
		} else {
			if (strlen(cand) >= size)
				return false;
			strcpy(out, cand);
		}
	}
	return true;
}

/* where the link at a path leads, resolved from its real directory, or "ERR:..." */
static NU_UNUSED NU_PRINTF(2, 3) const char *res(struct classfs_tree *t, const char *fmt, ...)
{
	char path[4096], target[4096], dir[4096];
	char *b = nu_buf(), *slash;
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	nu_vpath(path, fmt, ap);
	va_end(ap);
	n = classfs_path_readlink(t, path, target, sizeof(target));
	if (n < 0) {
		snprintf(b, 32, "ERR:%zd", n);
		return b;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		dir[0] = '\0';
	if (!nu_real(t, dir, path, sizeof(path), 0))
		snprintf(b, 32, "ERR:dir");
	else if (!nu_join(path, target, b, CLASSFS_ATTR_MAX))
		snprintf(b, 32, "ERR:outside");
	return b;
}

/* ---- recording uevents ---- */

struct nu_event {
	uint64_t seqnum;
	enum classfs_action action;
	char *devpath;
	char *subsystem;
	int envc;
	char **envp;
	char *kernel;		/* classfs_uevent_format_kernel() */
	size_t klen;
};

struct recorder {
	pthread_mutex_t lock;
	struct classfs_tree *tree;
	int id;
	struct nu_event *ev;
	int n, cap;
	/* optional: called from the listener after recording */
	void (*hook)(struct recorder *r, const struct classfs_uevent *ev);
	void *data;
};

static char *nu_strdup0(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void nu_listener(const struct classfs_uevent *ev, void *data)
{
	struct recorder *r = data;
	struct nu_event e = { .seqnum = ev->seqnum, .action = ev->action };

	e.devpath = nu_strdup0(ev->devpath);
	e.subsystem = nu_strdup0(ev->subsystem);
	e.envc = ev->envc;
	e.envp = calloc((size_t)ev->envc + 1, sizeof(char *));
	for (int i = 0; i < ev->envc; i++)
		e.envp[i] = strdup(ev->envp[i]);
	e.klen = classfs_uevent_format_kernel(ev, NULL, 0);
	e.kernel = malloc(e.klen + 1);
	classfs_uevent_format_kernel(ev, e.kernel, e.klen);
	pthread_mutex_lock(&r->lock);
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->ev = realloc(r->ev, sizeof(*r->ev) * (size_t)r->cap);
	}
	r->ev[r->n++] = e;
	pthread_mutex_unlock(&r->lock);
	if (r->hook)
		r->hook(r, ev);
}

static NU_UNUSED void rec_clear(struct recorder *r)
{
	pthread_mutex_lock(&r->lock);
	for (int i = 0; i < r->n; i++) {
		struct nu_event *e = &r->ev[i];

		free(e->devpath);
		free(e->subsystem);
		for (int k = 0; k < e->envc; k++)
			free(e->envp[k]);
		free(e->envp);
		free(e->kernel);
	}
	r->n = 0;
	pthread_mutex_unlock(&r->lock);
}

static NU_UNUSED int rec_start(struct recorder *r, struct classfs_tree *t)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->tree = t;
	r->id = classfs_listener_add(t, nu_listener, r);
	return r->id;
}

static NU_UNUSED void rec_stop(struct recorder *r)
{
	if (r->id > 0)
		classfs_listener_remove(r->tree, r->id);
	r->id = 0;
	rec_clear(r);
	free(r->ev);
	r->ev = NULL;
	r->cap = 0;
	pthread_mutex_destroy(&r->lock);
}

/* value of @key in event @i, or NULL */
static NU_UNUSED const char *rec_get(struct recorder *r, int i, const char *key)
{
	size_t kl = strlen(key);

	if (i < 0 || i >= r->n)
		return NULL;
	for (int k = 0; k < r->ev[i].envc; k++)
		if (!strncmp(r->ev[i].envp[k], key, kl) && r->ev[i].envp[k][kl] == '=')
			return r->ev[i].envp[k] + kl + 1;
	return NULL;
}

/* index of the first event with @action for @devpath (NULL: any), or -1 */
static NU_UNUSED int rec_find(struct recorder *r, enum classfs_action action, const char *devpath)
{
	for (int i = 0; i < r->n; i++)
		if (r->ev[i].action == action && (!devpath || !strcmp(r->ev[i].devpath, devpath)))
			return i;
	return -1;
}

/* number of events with @action (-1: any) */
static NU_UNUSED int rec_count(struct recorder *r, int action)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += action < 0 || r->ev[i].action == (enum classfs_action)action;
	return n;
}

/* SEQNUMs strictly increasing by one, starting after @base (0 when all good) */
static NU_UNUSED int rec_check_seq(struct recorder *r, uint64_t base)
{
	for (int i = 0; i < r->n; i++) {
		char want[32];
		const char *s = rec_get(r, i, "SEQNUM");

		snprintf(want, sizeof(want), "%llu", (unsigned long long)(base + 1 + (uint64_t)i));
		if (r->ev[i].seqnum != base + 1 + (uint64_t)i || !s || strcmp(s, want)) {
			fprintf(stderr, "  event %d: SEQNUM %llu (%s), expected %s\n", i,
				(unsigned long long)r->ev[i].seqnum, s ? s : "(none)", want);
			return -1;
		}
	}
	return 0;
}

#endif
