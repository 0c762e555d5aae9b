// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dot.c - the tree for Graphviz (`dot -Tsvg`).
 *
 * One cluster per class and one for /devices, so nesting is visible at a
 * glance: nested class devices are solid edges parent -> child inside
 * their class's cluster; physical parents are dashed edges physical
 * device -> device, crossing clusters.  Node ids are "dN" (N the
 * snapshot index): device names may hold any character but '/' and
 * control characters, so they only ever appear in escaped labels.
 */
#include <errno.h>

#include "print-internal.h"

/* text inside a DOT double-quoted string: '"' and '\' escaped ('\' starts escString sequences) */
static void put_escaped(const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void put_node(const struct cfs_pdev *d, size_t i, const char *extra, FILE *out)
{
	fprintf(out, "\t\td%zu [label=", i);
	fputc('"', out);
	put_escaped(d->name, out);
	if (d->has_devt)
		fprintf(out, "\\n%u:%u", d->major, d->minor);
	if (d->devtype) {
		fputs(d->has_devt ? " " : "\\n", out);
		put_escaped(d->devtype, out);
	}
	fputc('"', out);
	fprintf(out, "%s];\n", extra ? extra : "");
}

static void put_nodes(const struct cfs_psnap *s, size_t i, FILE *out)
{
	for (; i != CFS_NONE; i = s->dev[i].next) {
		put_node(&s->dev[i], i, NULL, out);
		put_nodes(s, s->dev[i].child, out);
	}
}

static void put_edges(const struct cfs_psnap *s, FILE *out)
{
	for (size_t i = 0; i < s->ndev; i++) {
		const struct cfs_pdev *d = &s->dev[i];

		if (d->parent != CFS_NONE)
			fprintf(out, "\td%zu -> d%zu%s;\n", d->parent, i,
				cfs_psnap_is_root(s, i) ? " [style=dashed]" : "");
		if (d->phys != CFS_NONE)
			fprintf(out, "\td%zu -> d%zu [style=dashed];\n", d->phys, i);
	}
}

static void put_head(FILE *out)
{
	fputs("digraph classfs {\n"
	      "\trankdir=LR;\n"
	      "\tnode [shape=box, fontname=\"monospace\"];\n", out);
}

int cfs_print_dot(const struct cfs_psnap *s, FILE *out)
{
	put_head(out);
	for (size_t c = 0; c < s->ncls; c++) {
		fprintf(out, "\tsubgraph cluster_c%zu {\n\t\tlabel=", c);
		fputs("\"class ", out);
		put_escaped(s->cls[c].name, out);
		fputs("\";\n", out);
		put_nodes(s, s->cls[c].first, out);
		fputs("\t}\n", out);
	}
	if (s->phys_first != CFS_NONE) {
		fputs("\tsubgraph cluster_devices {\n\t\tlabel=\"/devices\";\n\t\tstyle=dotted;\n", out);
		put_nodes(s, s->phys_first, out);
		fputs("\t}\n", out);
	}
	put_edges(s, out);
	fputs("}\n", out);
	return cfs_print_finish(out);
}

static size_t index_of(const struct cfs_psnap *s, const struct classfs_device *dev)
{
	for (size_t i = 0; i < s->ndev; i++)
		if (s->dev[i].dev == dev)
			return i;
	return CFS_NONE;
}

/* the device (bold), its ancestors, its children and its physical device */
int cfs_print_info_dot(struct classfs_device *dev, FILE *out)
{
	struct cfs_psnap s;
	size_t me;
	int r = cfs_psnap_take(classfs_device_tree(dev), &s);

	if (r)
		return r;
	me = index_of(&s, dev);
	if (me == CFS_NONE) {
		cfs_psnap_free(&s);
		return -EINVAL;	/* removed meanwhile */
	}
	put_head(out);
	fputs("\tsubgraph cluster_dev {\n\t\tlabel=\"", out);
	put_escaped(s.dev[me].devpath, out);
	fputs("\";\n", out);
	put_node(&s.dev[me], me, ", style=bold", out);
	for (size_t a = s.dev[me].parent, prev = me; a != CFS_NONE; prev = a, a = s.dev[a].parent) {
		put_node(&s.dev[a], a, NULL, out);
		fprintf(out, "\t\td%zu -> d%zu%s;\n", a, prev,
			cfs_psnap_is_root(&s, prev) ? " [style=dashed]" : "");
	}
	for (size_t c = s.dev[me].child; c != CFS_NONE; c = s.dev[c].next) {
		put_node(&s.dev[c], c, NULL, out);
		fprintf(out, "\t\td%zu -> d%zu;\n", me, c);
	}
	if (s.dev[me].phys != CFS_NONE) {
		put_node(&s.dev[s.dev[me].phys], s.dev[me].phys, NULL, out);
		fprintf(out, "\t\td%zu -> d%zu [style=dashed];\n", s.dev[me].phys, me);
	}
	fputs("\t}\n}\n", out);
	cfs_psnap_free(&s);
	return cfs_print_finish(out);
}
