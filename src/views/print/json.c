// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * json.c - the tree for scripts (docs/json.md):
 *
 *   {"layout": "class", "seqnum": 12,
 *    "classes": [{"name": "block", "devices": [DEVICE...]}],
 *    "devices": [DEVICE...]}
 *
 * DEVICE: {"name", "devpath", "syspath", "class" (null for a physical
 * device), "dev" ("MAJ:MIN" or null), "devtype", "bus", "device" (the
 * physical device's DEVPATH or null), "children": [DEVICE...]}.
 */
#include <errno.h>

#include "print-internal.h"

int cfs_json_add_str(struct json_object *o, const char *key, const char *s)
{
	if (!s)
		return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
	return cfs_json_add(o, key, json_object_new_string(s));
}

int cfs_json_print(struct json_object *o, FILE *out)
{
	fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	return cfs_print_finish(out);
}

static struct json_object *dev_list(const struct cfs_psnap *s, size_t i);

static struct json_object *dev_obj(const struct cfs_psnap *s, const struct cfs_pdev *d)
{
	struct json_object *o = json_object_new_object();
	char devt[32];

	if (!o)
		return NULL;
	cfs_pdev_devt(d, devt, sizeof(devt));
	if (cfs_json_add_str(o, "name", d->name) || cfs_json_add_str(o, "devpath", d->devpath) ||
	    cfs_json_add_str(o, "syspath", d->syspath) || cfs_json_add_str(o, "class", d->cls) ||
	    cfs_json_add_str(o, "dev", d->has_devt ? devt : NULL) ||
	    cfs_json_add_str(o, "devtype", d->devtype) || cfs_json_add_str(o, "bus", d->bus) ||
	    cfs_json_add_str(o, "device", d->phys != CFS_NONE ? s->dev[d->phys].devpath : NULL) ||
	    cfs_json_add(o, "children", dev_list(s, d->child))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *dev_list(const struct cfs_psnap *s, size_t i)
{
	struct json_object *a = json_object_new_array();

	for (; a && i != CFS_NONE; i = s->dev[i].next) {
		struct json_object *o = dev_obj(s, &s->dev[i]);

		if (!o || json_object_array_add(a, o)) {
			json_object_put(o);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

int cfs_print_json(const struct cfs_psnap *s, FILE *out)
{
	struct json_object *root = json_object_new_object(), *classes = json_object_new_array();
	int r = -ENOMEM;

	if (!root || !classes)
		goto out;
	for (size_t c = 0; c < s->ncls; c++) {
		struct json_object *o = json_object_new_object();

		if (!o || json_object_array_add(classes, o)) {
			json_object_put(o);
			goto out;
		}
		if (cfs_json_add_str(o, "name", s->cls[c].name) ||
		    cfs_json_add(o, "devices", dev_list(s, s->cls[c].first)))
			goto out;
	}
	r = cfs_json_add_str(root, "layout",
			     classfs_tree_layout(s->tree) == CLASSFS_LAYOUT_DEVICES ? "devices" : "class");
	if (!r)
		r = cfs_json_add(root, "seqnum", json_object_new_uint64(classfs_tree_seqnum(s->tree)));
	if (!r) {
		r = cfs_json_add(root, "classes", classes);
		classes = NULL;
	}
	if (!r)
		r = cfs_json_add(root, "devices", dev_list(s, s->phys_first));
	if (!r)
		r = cfs_json_print(root, out);
out:
	json_object_put(classes);
	json_object_put(root);
	return r;
}
