// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-paths.c - names and paths from outside: classfs_name_valid(), the
 * path API's walk (links followed, "..", long and odd names) and the
 * paths of stored values.  Checked here: no crash; a name is valid only
 * when it is a single component of UTF-8 without control characters; a value
 * added at a path reads back and goes again, leaving the tree as it was;
 * so do a file, a directory and a link of that name (or with it as the
 * link's text) made, renamed and removed as through the filesystem.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "classfs/classfs.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct classfs_tree *tree;
static struct classfs_device sda, sda1;
static size_t base_nodes;
static uint64_t sda_ino;

static void setup(void)
{
	struct classfs_class *cls;

	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	cls = classfs_class_create(tree, "block");
	if (!tree || !cls)
		abort();
	classfs_device_initialize(&sda);
	sda.cls = cls;
	sda.devt = makedev(8, 0);
	classfs_device_set_name(&sda, "sda");
	classfs_device_initialize(&sda1);
	sda1.cls = cls;
	sda1.parent = &sda;
	sda1.devt = makedev(8, 1);
	classfs_device_set_name(&sda1, "sda1");
	if (classfs_device_add_to(tree, &sda) || classfs_device_add_to(tree, &sda1) ||
	    classfs_device_add_value(&sda, "queue/rotational", 0644, "1\n", 2, 0) ||
	    classfs_device_add_link(&sda, "loop", "../sda"))
		abort();
	base_nodes = classfs_tree_node_count(tree);
	struct classfs_stat st;

	if (classfs_path_stat(tree, "class/block/sda", &st))
		abort();
	sda_ino = st.ino;
}

/*
 * UTF-8 by decoding each code point: the shortest form, no surrogate,
 * nothing past U+10FFFF (RFC 3629)
 */
static int utf8_decodes(const unsigned char *s, size_t len)
{
	static const uint32_t least[] = { 0, 0x80, 0x800, 0x10000 };

	for (size_t i = 0; i < len;) {
		size_t n;	/* continuation bytes */
		uint32_t cp;

		if (s[i] < 0x80)
			n = 0;
		else if ((s[i] & 0xe0) == 0xc0)
			n = 1;
		else if ((s[i] & 0xf0) == 0xe0)
			n = 2;
		else if ((s[i] & 0xf8) == 0xf0)
			n = 3;
		else
			return 0;	/* a continuation byte first, or 0xf8 and above */
		if (i + n >= len && n)
			return 0;	/* cut short */
		cp = n ? s[i] & (0x3f >> n) : s[i];
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

/* the name rules, stated independently of the library's code */
static int expect_valid(const char *s)
{
	size_t len = strlen(s);

	if (!len || len > 255 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return utf8_decodes((const unsigned char *)s, len);
}

/* @s as an entry made through the filesystem in sda's directory, and away again */
static void plain_entries(const char *s)
{
	uint64_t root = classfs_root_ino();
	struct classfs_stat st;
	char buf[4200];
	int r;

	r = classfs_create(tree, sda_ino, s, 0644, &st);
	if (r == 0) {
		if (!expect_valid(s) || classfs_write(tree, st.ino, "w", 1, 3) != 1 ||
		    classfs_read(tree, st.ino, buf, sizeof(buf), 0) != 4 ||
		    classfs_rename(tree, sda_ino, s, root, "fuzz-moved", 0) ||
		    classfs_rename(tree, root, "fuzz-moved", sda_ino, s, 0) ||
		    classfs_unlink(tree, sda_ino, s))
			abort();
	} else if (r == -EEXIST ? !expect_valid(s) : r != -EINVAL && r != -ENOMEM) {
		abort();
	}
	r = classfs_mkdir(tree, sda_ino, s, 0755, &st);
	if (r == 0 && (!expect_valid(s) || classfs_rmdir(tree, sda_ino, s)))
		abort();
	r = classfs_symlink(tree, sda_ino, "fuzz-link", s, &st);
	if (r == 0) {
		ssize_t n = classfs_readlink(tree, st.ino, buf, sizeof(buf));

		if (n < 0 || strcmp(buf, s) || classfs_unlink(tree, sda_ino, "fuzz-link"))
			abort();
	} else if (r != -EINVAL && r != -ENOMEM) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), buf[4200];
	struct classfs_stat st;
	int r;

	if (!tree)
		setup();
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if ((classfs_name_valid(s) == 0) != expect_valid(s))
		abort();
	/* the walk: any outcome but a crash; results must be well-formed */
	r = classfs_path_stat(tree, s, &st);
	if (r == 0 && st.type != CLASSFS_FT_DIR && st.type != CLASSFS_FT_REG &&
	    st.type != CLASSFS_FT_LNK)
		abort();
	ssize_t n = classfs_path_read(tree, s, buf, sizeof(buf));
	if (n > (ssize_t)sizeof(buf))
		abort();
	n = classfs_path_readlink(tree, s, buf, sizeof(buf));
	if (n >= 0 && (size_t)n != strlen(buf))
		abort();

	/* a value at that path below sda1, and away again */
	r = classfs_device_add_value(&sda1, s, 0444, "v\n", 2, 0);
	if (r == 0) {
		char path[4300];

		snprintf(path, sizeof(path), "class/block/sda/sda1/%s", s);
		if (classfs_path_read(tree, path, buf, sizeof(buf)) != 2 || memcmp(buf, "v\n", 2))
			abort();
		if (classfs_device_remove_entry(&sda1, s))
			abort();
		/* the plain directories made for it, deepest first */
		for (char *slash; (slash = strrchr(s, '/'));) {
			*slash = '\0';
			if (classfs_device_remove_entry(&sda1, s))
				abort();
		}
	} else if (r != -EINVAL && r != -EEXIST && r != -ENOMEM) {
		abort();
	}
	plain_entries(s);
	if (classfs_tree_node_count(tree) != base_nodes)
		abort();
	free(s);
	return 0;
}
