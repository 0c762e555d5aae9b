// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * info.c - one device, as `udevadm info` would want it: identity,
 * relatives, the `uevent` variables, attributes with their values and
 * links, all read through the path API so what we print is what a reader
 * of the mounted filesystem sees (mode bits and show() included).
 *
 * Subdirectories that are devices of their own (they hold a `uevent`)
 * are not descended into; plain ones (attribute groups) are, and their
 * files are named "dir/name".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "print-internal.h"

#define INFO_MAX_DEPTH 8

struct entry {
	char *name;		/* relative to the device's directory */
	char *value;		/* value or link target; NULL when unreadable */
	size_t len;
	int err;		/* -errno of the read when @value is NULL */
	bool link;
};

struct info {
	struct classfs_tree *tree;
	char path[4096];	/* the device's directory, below the root */
	struct entry *e;
	size_t n, cap;
	int err;
};

struct lister {
	struct info *in;
	const char *prefix;	/* "" or "dir/" */
	char (*dirs)[512];	/* plain subdirectories found */
	size_t ndirs, dircap;
};

static int add_entry(struct info *in, const char *name, bool link)
{
	struct classfs_tree *t = in->tree;
	char path[8192], buf[CLASSFS_ATTR_MAX + 1];
	struct entry *e;
	ssize_t n;

	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 32;
		struct entry *v = realloc(in->e, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		in->e = v;
		in->cap = cap;
	}
	e = &in->e[in->n];
	*e = (struct entry){ .name = strdup(name), .link = link };
	if (!e->name)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", in->path, name);
	n = link ? classfs_path_readlink(t, path, buf, sizeof(buf) - 1)
		 : classfs_path_read(t, path, buf, sizeof(buf) - 1);
	if (n < 0) {
		e->err = (int)n;
	} else {
		e->value = malloc((size_t)n + 1);
		if (!e->value) {
			free(e->name);
			return -ENOMEM;
		}
		memcpy(e->value, buf, (size_t)n);
		e->value[n] = '\0';
		e->len = (size_t)n;
	}
	in->n++;
	return 0;
}

static int list_one(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct lister *l = ctx;
	char rel[512];

	snprintf(rel, sizeof(rel), "%s%s", l->prefix, name);
	if (st->type == CLASSFS_FT_DIR) {
		if (l->ndirs == l->dircap) {
			size_t cap = l->dircap ? 2 * l->dircap : 8;
			char(*d)[512] = realloc(l->dirs, cap * sizeof(*d));

			if (!d)
				return l->in->err = -ENOMEM;
			l->dirs = d;
			l->dircap = cap;
		}
		memcpy(l->dirs[l->ndirs++], rel, sizeof(rel));
		return 0;
	}
	if (st->type == CLASSFS_FT_REG && !strcmp(rel, "uevent"))
		return 0;	/* printed as variables */
	l->in->err = add_entry(l->in, rel, st->type == CLASSFS_FT_LNK);
	return l->in->err;
}

/* the entries of "@in->path/@sub", then those of its plain subdirectories */
static int collect(struct info *in, const char *sub, int depth)
{
	struct lister l = { .in = in, .prefix = sub };
	char path[8192];
	int r;

	snprintf(path, sizeof(path), "%s/%s", in->path, sub);
	r = classfs_path_list(in->tree, path, list_one, &l);
	if (r >= 0)
		r = in->err;
	for (size_t i = 0; r >= 0 && i < l.ndirs; i++) {
		struct classfs_stat st;
		char d[8192];

		snprintf(d, sizeof(d), "%s/%s/uevent", in->path, l.dirs[i]);
		if (classfs_path_stat(in->tree, d, &st) == 0)
			continue;	/* a device of its own */
		if (depth >= INFO_MAX_DEPTH)
			continue;
		snprintf(d, sizeof(d), "%s/", l.dirs[i]);
		r = collect(in, d, depth + 1);
	}
	free(l.dirs);
	return r < 0 ? r : 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static void info_free(struct info *in)
{
	for (size_t i = 0; i < in->n; i++) {
		free(in->e[i].name);
		free(in->e[i].value);
	}
	free(in->e);
}

/* a value for a line of text: one trailing '\n' dropped, bytes that are not printable escaped */
static void put_value(const char *v, size_t len, const char *indent, FILE *out)
{
	if (len && v[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c == '\n')
			fprintf(out, "\n%s", indent);
		else if (c == '\t' || (c >= 0x20 && c != 0x7f))
			fputc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

static const char *rel_path(struct classfs_device *dev, char *buf, size_t size)
{
	if (!dev || classfs_device_devpath(dev, buf, size) < 0)
		return NULL;
	return buf;
}

static int print_text(struct classfs_device *dev, struct info *in, const char *uevent,
		      size_t ulen, FILE *out)
{
	char p[4096], sys[4096];
	const char *parent = rel_path(dev->parent, p, sizeof(p));

	fprintf(out, "name: %s\n", strrchr(in->path, '/') ? strrchr(in->path, '/') + 1 : in->path);
	fprintf(out, "class: %s\n", dev->cls ? dev->cls->name : "-");
	fprintf(out, "devpath: /%s\n", in->path);
	fprintf(out, "syspath: %s\n", classfs_device_syspath(dev, sys, sizeof(sys)) >= 0 ? sys : "-");
	fprintf(out, "parent: %s\n", parent ? parent : "-");
	parent = rel_path(dev->phys, p, sizeof(p));
	fprintf(out, "physical parent: %s\n", parent ? parent : "-");
	if (major(dev->devt))
		fprintf(out, "devt: %u:%u\n", major(dev->devt), minor(dev->devt));
	else
		fputs("devt: -\n", out);
	fprintf(out, "DEVTYPE: %s\n", dev->type && dev->type->name ? dev->type->name : "-");
	fputs("uevent:\n", out);
	for (size_t o = 0; o < ulen;) {
		const char *nl = memchr(uevent + o, '\n', ulen - o);
		size_t l = nl ? (size_t)(nl - uevent - o) : ulen - o;

		fputs("  ", out);
		put_value(uevent + o, l, "  ", out);
		fputc('\n', out);
		o += l + 1;
	}
	fputs("attributes:\n", out);
	for (size_t i = 0; i < in->n; i++) {
		if (in->e[i].link)
			continue;
		fprintf(out, "  %s: ", in->e[i].name);
		if (in->e[i].value)
			put_value(in->e[i].value, in->e[i].len, "    ", out);
		else
			fprintf(out, "(%s)", strerror(-in->e[i].err));
		fputc('\n', out);
	}
	fputs("links:\n", out);
	for (size_t i = 0; i < in->n; i++)
		if (in->e[i].link)
			fprintf(out, "  %s -> %s\n", in->e[i].name,
				in->e[i].value ? in->e[i].value : "?");
	return cfs_print_finish(out);
}

static int print_json(struct classfs_device *dev, struct info *in, const char *uevent,
		      size_t ulen, FILE *out)
{
	struct json_object *o = json_object_new_object(), *vars = json_object_new_object();
	struct json_object *attrs = json_object_new_object(), *links = json_object_new_object();
	char p[4096 + 8], sys[4096], devt[32];
	int r = -ENOMEM;

	if (!o || !vars || !attrs || !links)
		goto out;
	for (size_t off = 0; off < ulen;) {
		const char *nl = memchr(uevent + off, '\n', ulen - off);
		size_t l = nl ? (size_t)(nl - uevent - off) : ulen - off;
		const char *eq = memchr(uevent + off, '=', l);

		if (eq) {
			char *key = strndup(uevent + off, (size_t)(eq - uevent - off));
			struct json_object *v =
				json_object_new_string_len(eq + 1, (int)(uevent + off + l - eq - 1));

			if (!key) {
				json_object_put(v);
				goto out;
			}
			r = cfs_json_add(vars, key, v);
			free(key);
			if (r)
				goto out;
		}
		off += l + 1;
	}
	for (size_t i = 0; i < in->n; i++) {
		struct entry *e = &in->e[i];
		struct json_object *v = NULL;

		if (e->value) {
			v = json_object_new_string_len(e->value, (int)e->len);
			if (!v)
				goto out;
		}
		/* unreadable attributes are null: present, but no value to show */
		r = v ? cfs_json_add(e->link ? links : attrs, e->name, v)
		      : (json_object_object_add(e->link ? links : attrs, e->name, NULL) ? -ENOMEM : 0);
		if (r)
			goto out;
	}
	snprintf(devt, sizeof(devt), "%u:%u", major(dev->devt), minor(dev->devt));
	snprintf(p, sizeof(p), "/%s", in->path);
	r = cfs_json_add_str(o, "name", strrchr(p, '/') + 1);
	if (!r)
		r = cfs_json_add_str(o, "class", dev->cls ? dev->cls->name : NULL);
	if (!r)
		r = cfs_json_add_str(o, "devpath", p);
	if (!r)
		r = cfs_json_add_str(o, "syspath",
				     classfs_device_syspath(dev, sys, sizeof(sys)) >= 0 ? sys : NULL);
	if (!r)
		r = cfs_json_add_str(o, "parent", rel_path(dev->parent, p, sizeof(p)));
	if (!r)
		r = cfs_json_add_str(o, "device", rel_path(dev->phys, p, sizeof(p)));
	if (!r)
		r = cfs_json_add_str(o, "dev", major(dev->devt) ? devt : NULL);
	if (!r)
		r = cfs_json_add_str(o, "devtype", dev->type ? dev->type->name : NULL);
	if (!r) {
		r = cfs_json_add(o, "uevent", vars);
		vars = NULL;
	}
	if (!r) {
		r = cfs_json_add(o, "attributes", attrs);
		attrs = NULL;
	}
	if (!r) {
		r = cfs_json_add(o, "links", links);
		links = NULL;
	}
	if (!r)
		r = cfs_json_print(o, out);
out:
	json_object_put(vars);
	json_object_put(attrs);
	json_object_put(links);
	json_object_put(o);
	return r;
}

int cfs_print_info(struct classfs_device *dev, enum classfs_print_format fmt, FILE *out)
{
	struct info in = { .tree = classfs_device_tree(dev) };
	char devpath[4096], uevent[CLASSFS_ATTR_MAX + 1], path[8192];
	ssize_t ulen;
	int r;

	if (!in.tree || classfs_device_devpath(dev, devpath, sizeof(devpath)) < 0)
		return -EINVAL;
	snprintf(in.path, sizeof(in.path), "%s", devpath + 1);	/* below the root */
	snprintf(path, sizeof(path), "%s/uevent", in.path);
	ulen = classfs_path_read(in.tree, path, uevent, sizeof(uevent) - 1);
	if (ulen < 0)
		ulen = 0;	/* a vetoing hook: no variables to show */
	r = collect(&in, "", 0);
	if (r == 0) {
		if (in.n)
			qsort(in.e, in.n, sizeof(*in.e), cmp_entry);
		r = fmt == CLASSFS_PRINT_JSON ? print_json(dev, &in, uevent, (size_t)ulen, out)
					      : print_text(dev, &in, uevent, (size_t)ulen, out);
	}
	info_free(&in);
	return r;
}
