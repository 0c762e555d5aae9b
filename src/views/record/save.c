// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * save.c - writing a tree in umockdev's record format, in canonical
 * order: devices sorted by path, lines sorted within a device, so that
 * load -> save -> load -> save gives identical bytes.
 *
 * A loaded device is written from its side data (properties, links, node,
 * `dev` text as recorded) and its attribute values as the tree holds them
 * now; a device made through the API from what the tree shows: its
 * `uevent`, its files and its links.  Paths are Linux's (devices layout)
 * whatever the tree's layout.
 *
 * Every device's lines are made before any is written: a value whose
 * show() answers later (a remote attribute of classfsd) gets its line when
 * the answer comes, and all of those are waited for together (later.c),
 * so a save waits for slow publishers once, not once per attribute.
 */
#include "record-internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *v;

		while (cap < b->len + n + 1)
			cap *= 2;
		v = realloc(b->s, cap);
		if (!v) {
			b->oom = true;
			return;
		}
		b->s = v;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/*
 * A file's or node's name before its '=': that '=' ends it, so an '='
 * of the name, and the backslash that escapes it, are written \\x3d and
 * \\x5c (parse.c's key_unescape() takes them back); every other byte of
 * a name is itself.
 */
static void sb_key(struct sbuf *b, const char *s)
{
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "=\\");

		sb_add(b, p, n);
		p += n;
		if (*p) {
			sb_add(b, *p == '=' ? "\\x3d" : "\\x5c", 4);
			p++;
		}
	}
}

/* an A: value: C escapes for the backslash and control bytes */
static void sb_escape(struct sbuf *b, const char *s, size_t len)
{
	static const char hex[] = "01234567";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[4] = { '\\', 0, 0, 0 };

		switch (c) {
		case '\\': e[1] = '\\'; sb_add(b, e, 2); break;
		case '\n': e[1] = 'n'; sb_add(b, e, 2); break;
		case '\t': e[1] = 't'; sb_add(b, e, 2); break;
		case '\r': e[1] = 'r'; sb_add(b, e, 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char o[4] = { '\\', hex[c >> 6], hex[(c >> 3) & 7], hex[c & 7] };

				sb_add(b, o, 4);
			} else {
				sb_add(b, (const char *)&c, 1);
			}
		}
	}
}

static void sb_hex(struct sbuf *b, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		char h[2] = { hex[s[i] >> 4], hex[s[i] & 15] };

		sb_add(b, h, 2);
	}
}

/* end of one line: lines are NUL-separated in the buffer, sorted later */
static void sb_eol(struct sbuf *b)
{
	sb_add(b, "", 0);
	if (!b->oom)
		b->len++;	/* keep the NUL */
}

/* ------------------------------------------------------------------ */
/* reading the tree                                                    */
/* ------------------------------------------------------------------ */

/* the inode of @name ("dir/name") below directory @ino */
static int lookup_rel(struct classfs_tree *tree, uint64_t ino, const char *name,
		      struct classfs_stat *st)
{
	char comp[NAME_MAX + 1];

	for (;;) {
		const char *slash = strchr(name, '/');
		size_t n = slash ? (size_t)(slash - name) : strlen(name);
		int r;

		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, name, n);
		comp[n] = '\0';
		r = classfs_lookup(tree, ino, comp, st);
		if (r < 0 || !slash)
			return r;
		ino = st->ino;
		name = slash + 1;
	}
}

/* the line of a value: "A: NAME=escaped" or "H: NAME=hex" */
static void value_line(struct sbuf *b, char tag, const char *name, const char *val, size_t n)
{
	sb_add(b, tag == 'H' ? "H: " : "A: ", 3);
	sb_key(b, name);
	sb_add(b, "=", 1);
	if (tag == 'H')
		sb_hex(b, (const unsigned char *)val, n);
	else
		sb_escape(b, val, n);
	sb_eol(b);
}

/* an answer that came later: its line into the device's lines (@owner) */
static void later_line(void *owner, char tag, const char *name, const char *value, size_t len,
		       void *data)
{
	(void)data;
	value_line(owner, tag, name, value, len);
}

/*
 * The line of the value of file @st (@name in its device's directory)
 * into @b, now or, when its show() answers later, once @later has the
 * answer.  A value that cannot be read has no line.
 */
static void read_line(struct classfs_tree *tree, const struct classfs_stat *st, struct sbuf *b,
		      struct rec_later_set *later, char tag, const char *name)
{
	char *val;
	ssize_t n = cfs_rec_read_value(tree, st, &val, later, b, tag, name);

	if (n < 0)
		return;
	value_line(b, tag, name, val, (size_t)n);
	free(val);
}

/* the directory of @dev in @tree: its inode */
static int device_dir(struct classfs_tree *tree, struct classfs_device *dev,
		      struct classfs_stat *st)
{
	char devpath[PATH_MAX];
	int r = classfs_device_devpath(dev, devpath, sizeof(devpath));

	if (r < 0)
		return r;
	return classfs_path_stat(tree, devpath + 1, st);
}

/*
 * Linux's text for a link in directory @from to @to (both syspaths): up
 * to the deepest common ancestor of @from and @to's parent, then down
 * (kernfs_get_target_path()).
 */
static void link_text(struct sbuf *b, const char *from, const char *to)
{
	size_t tparent = strlen(to), common = 0;

	while (tparent && to[tparent - 1] != '/')
		tparent--;
	if (tparent)
		tparent--;
	/* common prefix ending at a component boundary */
	for (size_t i = 0;; i++) {
		bool fend = !from[i] || from[i] == '/', tend = i == tparent || to[i] == '/';

		if (fend && tend)
			common = i;
		if (!from[i] || i == tparent || from[i] != to[i])
			break;
	}
	for (const char *s = from + common; *s; s++)
		if (*s == '/')
			sb_add(b, "../", 3);
	sb_str(b, to + common + 1);
}

/* ------------------------------------------------------------------ */
/* the lines of a device                                               */
/* ------------------------------------------------------------------ */

struct list_ctx {
	struct classfs_tree *tree;
	struct classfs_device *dev;
	const char *syspath;
	const char *relpath;
	struct sbuf *b;
	const struct rec_dev *rd;	/* a loaded device: only what its record does not name */
	const char *prefix;		/* the names' directory below the device's: "" or "d/.../" */
	int depth;
	struct rec_later_set *later;	/* where answers that come later go */
};

/* does @rd's record name @name (an attribute or a link), or is it the tree's own? */
static bool loaded_has(const struct rec_dev *rd, const char *name)
{
	struct rec_entry e;
	size_t off = 0;

	if (!strcmp(name, "device") || !strcmp(name, "dev"))
		return true;	/* the tree makes them (the parent, the device number) */
	while (cfs_rec_next(rd, &off, &e))
		if (strchr("AHLD", e.tag) && !strcmp(e.a, name))
			return true;
	return false;
}

/*
 * A plain directory of the device's (a group, or one ATTR_SET CREATE
 * made): its files are the device's, named "dir/name".  Not a child
 * device's directory (its `uevent` says so), nor a glue directory's
 * devices below it.
 */
static int list_entry(void *data, const char *name, const struct classfs_stat *st);

static void list_subdir(struct list_ctx *c, const char *path, const char *key)
{
	char uev[PATH_MAX + 8], prefix[PATH_MAX];
	struct list_ctx sub = *c;
	struct classfs_stat st;

	if (c->depth >= 8 || snprintf(uev, sizeof(uev), "%s/uevent", path) >= (int)sizeof(uev) ||
	    classfs_path_stat(c->tree, uev, &st) == 0 ||
	    snprintf(prefix, sizeof(prefix), "%s/", key) >= (int)sizeof(prefix))
		return;
	sub.relpath = path;
	sub.prefix = prefix;
	sub.depth = c->depth + 1;
	classfs_path_list(c->tree, path, list_entry, &sub);
}

static int list_entry(void *data, const char *name, const struct classfs_stat *st)
{
	struct list_ctx *c = data;
	char path[PATH_MAX], key[PATH_MAX];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/%s", c->relpath, name) >= (int)sizeof(path) ||
	    snprintf(key, sizeof(key), "%s%s", c->prefix ? c->prefix : "", name) >= (int)sizeof(key))
		return 0;
	if (c->rd && loaded_has(c->rd, key))
		return 0;
	if (st->type == CLASSFS_FT_REG) {
		if (!strcmp(name, "uevent") || !(st->mode & 0444))
			return 0;
		read_line(c->tree, st, c->b, c->later, 'A', key);
	} else if (st->type == CLASSFS_FT_LNK) {
		char text[PATH_MAX], target[PATH_MAX];

		/* made by the tree: subsystem, class backlinks; device follows */
		if (!c->depth && (!strcmp(name, "subsystem") || strchr(name, ':')))
			return 0;
		if (!c->depth && !strcmp(name, "device") && c->dev->phys &&
		    classfs_device_syspath(c->dev->phys, target, sizeof(target)) >= 0) {
			sb_add(c->b, "L: device=", 10);
			link_text(c->b, c->syspath, target);
			sb_eol(c->b);
			return 0;
		}
		n = classfs_path_readlink(c->tree, path, text, sizeof(text) - 1);
		if (n < 0)
			return 0;
		text[n] = '\0';
		sb_add(c->b, "L: ", 3);
		sb_key(c->b, key);
		sb_add(c->b, "=", 1);
		sb_str(c->b, text);
		sb_eol(c->b);
	} else if (st->type == CLASSFS_FT_DIR) {
		list_subdir(c, path, key);
	}
	return 0;
}

static void lines_loaded(struct classfs_tree *tree, struct rec_dev *rd, struct sbuf *b,
			 struct rec_later_set *later)
{
	char devpath[PATH_MAX], syspath[PATH_MAX];
	struct list_ctx c = { .tree = tree, .dev = &rd->dev, .syspath = syspath, .relpath = devpath + 1,
			      .b = b, .rd = rd, .prefix = "", .later = later };
	struct classfs_stat dir, st;
	bool have_dir = device_dir(tree, &rd->dev, &dir) == 0;
	struct rec_entry e;
	size_t off = 0;

	while (cfs_rec_next(rd, &off, &e)) {
		switch (e.tag) {
		case 'E':
		case 'U':
		case 'L':
			sb_add(b, e.tag == 'L' ? "L: " : "E: ", 3);
			if (e.tag == 'L')
				sb_key(b, e.a);
			else
				sb_str(b, e.a);
			sb_add(b, "=", 1);
			sb_str(b, e.b);
			sb_eol(b);
			break;
		case 'D':
			sb_add(b, "A: ", 3);
			sb_key(b, e.a);
			sb_add(b, "=", 1);
			sb_str(b, e.b);
			sb_eol(b);
			break;
		case 'S':
			sb_add(b, "S: ", 3);
			sb_str(b, e.a);
			sb_eol(b);
			break;
		case 'N':
			sb_add(b, "N: ", 3);
			sb_key(b, e.a);
			if (*e.b) {
				sb_add(b, "=", 1);
				sb_str(b, e.b);
			}
			sb_eol(b);
			break;
		case 'A':
		case 'H':
			/* as the tree holds it now: writes show */
			if (have_dir && lookup_rel(tree, dir.ino, e.a, &st) == 0 &&
			    st.type == CLASSFS_FT_REG)
				read_line(tree, &st, b, later, e.tag, e.a);
			break;
		}
	}
	/* and what was added to it since (ATTR_SET making a missing attribute) */
	if (have_dir && classfs_device_devpath(&rd->dev, devpath, sizeof(devpath)) >= 0 &&
	    classfs_device_syspath(&rd->dev, syspath, sizeof(syspath)) >= 0)
		classfs_path_list(tree, devpath + 1, list_entry, &c);
}

static void lines_api(struct classfs_tree *tree, struct classfs_device *dev, const char *syspath,
		      struct sbuf *b, struct rec_later_set *later)
{
	const char *subsystem = cfs_rec_subsystem(dev);
	char devpath[PATH_MAX], path[PATH_MAX + 8], uev[CLASSFS_ATTR_MAX + 1];
	struct list_ctx c = { .tree = tree, .dev = dev, .syspath = syspath, .relpath = devpath + 1,
			      .b = b, .prefix = "", .later = later };
	ssize_t n;

	if (classfs_device_devpath(dev, devpath, sizeof(devpath)) < 0)
		return;
	if (subsystem) {
		sb_str(b, "E: SUBSYSTEM=");
		sb_str(b, subsystem);
		sb_eol(b);
	}
	/*
	 * A load takes a SUBSYSTEM in keys.c's list of buses for a bus, any
	 * other for a class; where that would misread the device, its
	 * `subsystem` link says which, as Linux's does.
	 */
	if (subsystem && (dev->bus != NULL) != cfs_rec_is_bus(subsystem, strlen(subsystem))) {
		snprintf(path, sizeof(path), "/%s/%s", dev->bus ? "bus" : "class", subsystem);
		sb_str(b, "L: subsystem=");
		link_text(b, syspath, path);
		sb_eol(b);
	}
	snprintf(path, sizeof(path), "%s/uevent", devpath + 1);
	n = classfs_path_read(tree, path, uev, sizeof(uev) - 1);
	if (n > 0) {
		uev[n] = '\0';
		for (char *s = uev, *nl; *s; s = nl + 1) {
			nl = strchr(s, '\n');
			if (!nl)
				nl = s + strlen(s) - 1;
			else
				*nl = '\0';
			if (!*s)
				continue;
			sb_str(b, "E: ");
			if (!strncmp(s, "DEVNAME=", 8)) {
				sb_str(b, "DEVNAME=/dev/");
				sb_str(b, s + 8);
				sb_eol(b);
				sb_str(b, "N: ");
				sb_key(b, s + 8);
			} else {
				sb_str(b, s);
			}
			sb_eol(b);
		}
	}
	classfs_path_list(tree, devpath + 1, list_entry, &c);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sort the NUL-separated lines of @b and write them */
static int write_lines(struct sbuf *b, FILE *out)
{
	size_t n = 0, i = 0;
	const char **v;

	for (size_t off = 0; off < b->len; off += strlen(b->s + off) + 1)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t off = 0; off < b->len; off += strlen(b->s + off) + 1)
		v[i++] = b->s + off;
	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++) {
		fputs(v[i], out);
		fputc('\n', out);
	}
	free(v);
	return 0;
}

struct saved {
	char *syspath;
	struct classfs_device *dev;
};

static int cmp_saved(const void *a, const void *b)
{
	return strcmp(((const struct saved *)a)->syspath, ((const struct saved *)b)->syspath);
}

/* is @a @b or an ancestor of it? */
static bool is_ancestor(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && (b[n] == '/' || !b[n]);
}

/*
 * The devices at @want and at each directory above it, parents first,
 * referenced: found by name along the path, not by walking the whole tree
 * (a client following hotplug saves each new device on its own).
 */
static int collect_path(struct classfs_tree *tree, const char *want, struct rec_devlist *l)
{
	char path[PATH_MAX];
	size_t len = strlen(want);

	*l = (struct rec_devlist){ 0 };
	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	for (size_t i = 1; i <= len; i++) {
		struct classfs_device *dev;

		if (i < len && want[i] != '/')
			continue;
		memcpy(path, want, i);
		path[i] = '\0';
		dev = classfs_tree_find_device(tree, path);
		if (!dev)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 16;
			struct classfs_device **v = realloc(l->v, cap * sizeof(*v));

			if (!v) {
				classfs_device_put(dev);
				cfs_rec_devlist_free(l);
				return -ENOMEM;
			}
			l->v = v;
			l->cap = cap;
		}
		l->v[l->n++] = dev;
	}
	return 0;
}

/*
 * The syspath (devices layout) of the class device whose DEVPATH in a
 * class-layout tree is @devpath ("/class/CLS/[PARENT/...]NAME"): a class
 * device's name is unique in its class.  Return: length, -ENOENT.
 */
static int class_devpath_syspath(struct classfs_tree *tree, const char *devpath, char *buf,
				 size_t size)
{
	const char *cls_name = devpath + 7, *name = strrchr(devpath, '/') + 1;
	size_t cl = strcspn(cls_name, "/");
	char cname[NAME_MAX + 1], own[PATH_MAX];
	struct classfs_class *cls;
	struct classfs_device *dev = NULL;
	int r = -ENOENT;

	if (!cl || cl >= sizeof(cname) || cls_name[cl] != '/' || !*name)
		return -ENOENT;
	memcpy(cname, cls_name, cl);
	cname[cl] = '\0';
	cls = classfs_class_find(tree, cname);
	if (cls)
		dev = classfs_class_find_device(cls, name);
	/* the name's device, if it is the one at that path */
	if (dev && classfs_device_devpath(dev, own, sizeof(own)) >= 0 && !strcmp(own, devpath))
		r = classfs_device_syspath(dev, buf, size);
	classfs_device_put(dev);
	classfs_class_put(cls);
	return r < 0 ? -ENOENT : r;
}

/**
 * classfs_record_save() - write @tree (or @syspath and its parents) in
 * umockdev format, canonical order.  @syspath may also be a class
 * device's DEVPATH in a class-layout tree ("/class/block/sda/sda1"), what
 * its events name it by; the record names it by its syspath.
 * Return: 0, -EINVAL, -ENOENT (no device at @syspath), -ENOMEM, -EIO.
 */
int classfs_record_save(struct classfs_tree *tree, const char *syspath, FILE *out)
{
	struct rec_later_set later;
	struct rec_devlist l;
	struct saved *v;
	struct sbuf *b = NULL;
	size_t n = 0, k = 0;
	char path[PATH_MAX], named[PATH_MAX];
	const char *want = NULL;
	int r = 0;

	if (!tree || !out)
		return -EINVAL;
	if (syspath) {
		want = strncmp(syspath, "/sys/", 5) ? syspath : syspath + 4;
		if (!strncmp(want, "/class/", 7)) {
			r = class_devpath_syspath(tree, want, named, sizeof(named));
			if (r < 0)
				return r;
			want = named;
		}
		if (strncmp(want, "/devices/", 9))
			return -EINVAL;
	}
	r = want ? collect_path(tree, want, &l) : cfs_rec_collect(tree, &l);
	if (r < 0)
		return r;
	cfs_rec_later_init(&later);
	v = calloc(l.n ? l.n : 1, sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < l.n; i++) {
		struct rec_dev *rd = cfs_rec_of(l.v[i]);

		if (rd && (rd->flags & REC_F_PLACEHOLDER))
			continue;
		if (classfs_device_syspath(l.v[i], path, sizeof(path)) < 0)
			continue;
		if (want && !is_ancestor(path, want))
			continue;
		v[n].syspath = strdup(path);
		if (!v[n].syspath) {
			r = -ENOMEM;
			goto out;
		}
		v[n++].dev = l.v[i];
	}
	if (want) {
		bool found = false;

		for (size_t i = 0; i < n; i++)
			found |= !strcmp(v[i].syspath, want);
		if (!found) {
			r = -ENOENT;
			goto out;
		}
	}
	qsort(v, n, sizeof(*v), cmp_saved);
	b = calloc(n ? n : 1, sizeof(*b));
	if (!b) {
		r = -ENOMEM;
		goto out;
	}
	/* every device's lines, the values answered later waited for together */
	for (k = 0; k < n; k++) {
		struct rec_dev *rd = cfs_rec_of(v[k].dev);

		if (rd)
			lines_loaded(tree, rd, &b[k], &later);
		else
			lines_api(tree, v[k].dev, v[k].syspath, &b[k], &later);
	}
	cfs_rec_later_each(&later, later_line, NULL);
	for (k = 0; k < n; k++) {
		if (b[k].oom) {
			r = -ENOMEM;
			goto out;
		}
		fprintf(out, "P: %s\n", v[k].syspath);
		r = write_lines(&b[k], out);
		if (r < 0)
			goto out;
		fputc('\n', out);
	}
	if (ferror(out) || fflush(out))
		r = -EIO;
out:
	/* (answers still to come write into the set: waited for first) */
	cfs_rec_later_free(&later);
	for (size_t i = 0; i < n; i++) {
		free(v[i].syspath);
		if (b)
			free(b[i].s);
	}
	free(v);
	free(b);
	cfs_rec_devlist_free(&l);
	return r;
}
