// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * json.c - a member added to a JSON object, the value freed when it
 * cannot be (the printers and the event formats build objects this way).
 */
#include <errno.h>

#include <json-c/json.h>

#include "util.h"

/**
 * cfs_json_add() - add @v to @o as @key; @v is @o's then, or freed
 * Return: 0, or -ENOMEM when @v is NULL (its allocation failed) or the add failed.
 */
int cfs_json_add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}
