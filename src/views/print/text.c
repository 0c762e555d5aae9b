// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * text.c - the tree for people: an indented outline.
 *
 *   class block
 *     sda [8:0] (disk) -> /devices/pci0000:00/0000:00:1f.2
 *       sda1 [8:1] (partition)
 *   /devices
 *     pci0000:00
 *       0000:00:1f.2 (bus pci)
 *
 * Two spaces per level; "[MAJ:MIN]" when the device has a number,
 * "(DEVTYPE)" when it has a type, "-> DEVPATH" for its physical device,
 * "(bus NAME)" for a physical device's bus, "on DEVPATH" for a physical
 * device whose parent is a class device.
 */
#include "print-internal.h"

static void print_dev(const struct cfs_psnap *s, size_t i, int depth, FILE *out)
{
	for (; i != CFS_NONE; i = s->dev[i].next) {
		const struct cfs_pdev *d = &s->dev[i];

		fprintf(out, "%*s%s", 2 * depth, "", d->name);
		if (d->has_devt)
			fprintf(out, " [%u:%u]", d->major, d->minor);
		if (d->devtype)
			fprintf(out, " (%s)", d->devtype);
		if (d->bus)
			fprintf(out, " (bus %s)", d->bus);
		if (d->phys != CFS_NONE)
			fprintf(out, " -> %s", s->dev[d->phys].devpath);
		if (!d->cls && d->parent != CFS_NONE && s->dev[d->parent].cls)
			fprintf(out, " on %s", s->dev[d->parent].devpath);
		fputc('\n', out);
		print_dev(s, d->child, depth + 1, out);
	}
}

int cfs_print_text(const struct cfs_psnap *s, FILE *out)
{
	for (size_t c = 0; c < s->ncls; c++) {
		fprintf(out, "class %s\n", s->cls[c].name);
		print_dev(s, s->cls[c].first, 1, out);
	}
	if (s->phys_first != CFS_NONE) {
		fputs("/devices\n", out);
		print_dev(s, s->phys_first, 1, out);
	}
	return cfs_print_finish(out);
}
