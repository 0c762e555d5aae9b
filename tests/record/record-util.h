/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record-util.h - what the record tests share: a record given as text
 * loaded, the whole tree saved as text.
 */
#ifndef CLASSFS_TEST_RECORD_UTIL_H
#define CLASSFS_TEST_RECORD_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/record.h"

/* load @text into @t (@opt may be NULL); a failure is told on stderr. Return: as classfs_record_load() */
static inline int cfs_test_load(struct classfs_tree *t, const char *text,
				const struct classfs_record_options *opt,
				struct classfs_record_error *err)
{
	int r = classfs_record_load(t, text, strlen(text), opt, err);

	if (r < 0)
		fprintf(stderr, "  load: %d line %lu: %s\n", r, err->line, err->reason);
	return r;
}

/* the whole tree as a record (malloc'd), NULL (told on stderr) when it cannot be saved */
static inline char *cfs_test_save(struct classfs_tree *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return NULL;
	r = classfs_record_save(t, NULL, f);
	fclose(f);
	if (r < 0) {
		fprintf(stderr, "  save: %d\n", r);
		free(buf);
		return NULL;
	}
	return buf;
}

#endif
