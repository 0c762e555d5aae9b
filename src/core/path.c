// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * path.c - the in-process path API: resolve "class/block/sda/dev" below
 * a tree's root with the same lookup, readlink, read, write and readdir
 * the filesystem uses.  Links inside a path are followed (relative to the
 * directory holding them, as the kernel does); ".." goes up.
 */
#include "internal.h"

#define MAX_LINKS 40
#define MAX_DEPTH 128

static int path_walk(struct classfs_tree *t, const char *path, bool follow_last,
		     struct classfs_stat *out)
{
	uint64_t stack[MAX_DEPTH];
	int depth = 0, links = 0;
	char buf[PATH_MAX * 2], *p;
	size_t cap = sizeof(buf);
	int r = 0;

	if (!t || !path)
		return -EINVAL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	snprintf(buf, cap, "%s", path);
	stack[0] = 1;
	r = classfs_getattr(t, 1, out);
	p = buf;
	while (!r) {
		char *comp, target[PATH_MAX];
		struct classfs_stat st;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - comp);
		if (len == 1 && comp[0] == '.')
			continue;
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			if (depth > 0)
				depth--;
			r = classfs_getattr(t, stack[depth], out);
			continue;
		}
		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			break;
		}
		char name[NAME_MAX + 1];

		memcpy(name, comp, len);
		name[len] = '\0';
		if (out->type != CLASSFS_FT_DIR) {
			r = -ENOTDIR;
			break;
		}
		r = classfs_lookup(t, stack[depth], name, &st);
		if (r < 0)
			break;
		/* "link/" names the link's target, as in POSIX path resolution */
		bool last = !*p;

		if (st.type == CLASSFS_FT_LNK && (!last || follow_last)) {
			ssize_t tl;

			if (++links > MAX_LINKS) {
				r = -ELOOP;
				break;
			}
			tl = classfs_readlink(t, st.ino, target, sizeof(target));
			if (tl < 0) {
				r = (int)tl;
				break;
			}
			/* continue with the target, then the rest of the path */
			size_t rest = strlen(p);

			if ((size_t)tl + rest + 1 > cap) {
				r = -ENAMETOOLONG;
				break;
			}
			memmove(buf + tl, p, rest + 1);
			memcpy(buf, target, (size_t)tl);
			p = buf;
			if (target[0] == '/') {
				depth = 0;
				r = classfs_getattr(t, 1, out);
			}
			continue;
		}
		if (depth + 1 == MAX_DEPTH) {
			r = -ELOOP;
			break;
		}
		stack[++depth] = st.ino;
		*out = st;
	}
	return r;
}

int classfs_path_stat(struct classfs_tree *t, const char *path, struct classfs_stat *st)
{
	if (!st)
		return -EINVAL;
	return path_walk(t, path, false, st);
}

ssize_t classfs_path_read(struct classfs_tree *t, const char *path, char *buf, size_t size)
{
	struct classfs_stat st;
	int r = path_walk(t, path, true, &st);

	if (r < 0)
		return r;
	return classfs_read(t, st.ino, buf, size, 0);
}

ssize_t classfs_path_write(struct classfs_tree *t, const char *path, const char *buf, size_t size)
{
	struct classfs_stat st;
	int r = path_walk(t, path, true, &st);

	if (r < 0)
		return r;
	return classfs_write(t, st.ino, buf, size, 0);
}

ssize_t classfs_path_readlink(struct classfs_tree *t, const char *path, char *buf, size_t size)
{
	struct classfs_stat st;
	int r = path_walk(t, path, false, &st);

	if (r < 0)
		return r;
	return classfs_readlink(t, st.ino, buf, size);
}

struct list_ctx {
	int (*fn)(void *ctx, const char *name, const struct classfs_stat *st);
	void *ctx;
	int count;
	int stop;
};

static int list_fill(void *ctx, const char *name, const struct classfs_stat *st, uint64_t next)
{
	struct list_ctx *l = ctx;

	(void)next;
	l->count++;
	if (l->fn && (l->stop = l->fn(l->ctx, name, st)))
		return 1;
	return 0;
}

int classfs_path_list(struct classfs_tree *t, const char *path,
		      int (*fn)(void *ctx, const char *name, const struct classfs_stat *st),
		      void *ctx)
{
	struct list_ctx l = { fn, ctx, 0, 0 };
	struct classfs_stat st;
	int r = path_walk(t, path, true, &st);

	if (r < 0)
		return r;
	r = classfs_readdir(t, st.ino, 0, list_fill, &l);
	if (r < 0)
		return r;
	return l.stop ? l.stop : l.count;
}
