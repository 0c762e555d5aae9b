// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-find.c - classfs_tree_find_device(): every device of a tree with
 * every kind of placement (plain and bus devices, glue directories,
 * nested class devices, class devices below class devices, virtual ones)
 * is found by its syspath in both layouts, and a physical device named
 * like its siblings' glue directory is refused in both; paths that name
 * nothing, removed devices and bad arguments give NULL.
 */
#include <stdbool.h>
#include <sys/sysmacros.h>

#include "../harness.h"
#include "classfs/classfs.h"

#define NDEV 12

struct machine {
	struct classfs_bus pci, spi;
	struct classfs_device root, ctrl, blockdir, elan;
	struct classfs_class *blk, *spim, *nvme;
	struct classfs_device *v[NDEV];
	int n;
};

static void plain(struct classfs_device *d, const char *name, struct classfs_bus *bus,
		  struct classfs_device *parent)
{
	classfs_device_initialize(d);
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	d->bus = bus;
	d->parent = parent;
}

static void build(struct classfs_tree *t, struct machine *m)
{
	struct classfs_device *sda, *nvme0, *nvme0n1, *spi0;

	*m = (struct machine){ .pci = { .name = "pci" }, .spi = { .name = "spi" } };
	CHECK_INT(classfs_bus_register(t, &m->pci), 0);
	CHECK_INT(classfs_bus_register(t, &m->spi), 0);
	m->blk = classfs_class_create(t, "block");
	m->spim = classfs_class_create(t, "spi_master");
	m->nvme = classfs_class_create(t, "nvme");
	CHECK(m->blk && m->spim && m->nvme);

	plain(&m->root, "pci0000:00", NULL, NULL);
	CHECK_INT(classfs_device_add_to(t, &m->root), 0);
	plain(&m->ctrl, "0000:00:1f.2", &m->pci, &m->root);
	CHECK_INT(classfs_device_add(&m->ctrl), 0);
	m->v[m->n++] = &m->root;
	m->v[m->n++] = &m->ctrl;
	/*
	 * A physical device named like the glue directory of its sibling
	 * class devices: refused in both layouts, as a record would read
	 * .../0000:00:1f.2/block as both (tried once sda is there).
	 */
	plain(&m->blockdir, "block", NULL, &m->ctrl);
	m->v[m->n++] = NULL;
	/* .../0000:00:1f.2/block/sda (glue), .../sda/sda1 (nested) */
	m->v[m->n++] = sda = classfs_device_create(m->blk, NULL, makedev(8, 0), &m->ctrl, NULL, "sda");
	CHECK_INT(classfs_device_add(&m->blockdir), -EEXIST);
	m->v[m->n++] = classfs_device_create(m->blk, sda, makedev(8, 1), NULL, NULL, "sda1");
	/* /devices/virtual/nvme/nvme0/nvme0n1 (class below class)/nvme0n1p1 */
	m->v[m->n++] = nvme0 = classfs_device_create(m->nvme, NULL, makedev(241, 0), NULL, NULL,
						     "nvme0");
	m->v[m->n++] = nvme0n1 = classfs_device_create(m->blk, NULL, makedev(259, 0), nvme0, NULL,
						       "nvme0n1");
	m->v[m->n++] = classfs_device_create(m->blk, nvme0n1, makedev(259, 1), NULL, NULL,
					     "nvme0n1p1");
	/* a bus device below a class device, a class device below the bus device */
	m->v[m->n++] = spi0 = classfs_device_create(m->spim, NULL, 0, &m->ctrl, NULL, "spi0");
	plain(&m->elan, "spi-ELAN7001:00", &m->spi, spi0);
	CHECK_INT(classfs_device_add(&m->elan), 0);
	m->v[m->n++] = &m->elan;
	m->v[m->n++] = classfs_device_create(m->blk, NULL, makedev(8, 16), &m->elan, NULL, "sdb");
	for (int i = 0; i < m->n; i++)
		CHECK(i == 2 || m->v[i] != NULL);
}

static void check_all_found(struct classfs_tree *t, struct machine *m)
{
	char path[4096];

	for (int i = 0; i < m->n; i++) {
		struct classfs_device *d;

		if (!m->v[i])
			continue;
		CHECK(classfs_device_syspath(m->v[i], path, sizeof(path)) > 0);
		d = classfs_tree_find_device(t, path);
		if (d != m->v[i])
			fprintf(stderr, "  %s: found %p, expected %p\n", path, (void *)d,
				(void *)m->v[i]);
		CHECK(d == m->v[i]);
		classfs_device_put(d);
	}
}

static void none(struct classfs_tree *t, const char *path)
{
	struct classfs_device *d = classfs_tree_find_device(t, path);

	if (d)
		fprintf(stderr, "  %s: found %s\n", path, classfs_device_name(d));
	CHECK(d == NULL);
	classfs_device_put(d);
}

static void layout(enum classfs_layout lay)
{
	struct classfs_tree *t = classfs_tree_new(lay);
	struct machine m;
	char sda1[4096];

	build(t, &m);
	check_all_found(t, &m);
	CHECK_INT(classfs_device_syspath(m.v[4], sda1, sizeof(sda1)) > 0, 1);
	CHECK_STR(sda1, "/devices/pci0000:00/0000:00:1f.2/block/sda/sda1");

	none(t, NULL);
	CHECK(classfs_tree_find_device(NULL, sda1) == NULL);
	none(t, "");
	none(t, "/devices");
	none(t, "/devices/");
	none(t, "/sys/devices/pci0000:00");
	none(t, "devices/pci0000:00");
	none(t, "/devices/pci0000:00/");			/* empty last component */
	none(t, "/devices/pci0000:00//0000:00:1f.2");	/* empty component */
	none(t, "/devices/pci0000:00/0000:00:1f.2/block/sdz");
	none(t, "/devices/pci0000:00/0000:00:1f.2/sda");	/* without its glue directory */
	none(t, "/devices/pci0000:00/0000:00:1f.2/block/sda1");	/* not nested */
	none(t, "/devices/virtual/block/sda");		/* it has a physical device */
	none(t, "/devices/virtual/nvme");
	none(t, "/devices/virtual/nvme/nvme0/nvme/nvme0n1");	/* no glue below a class device */
	none(t, "/devices/pci0000:00/0000:00:1f.2/block/sda/sda1/uevent");

	/* a removed device is not found; its path then names nothing */
	CHECK_INT(classfs_device_unregister(m.v[4]), 0);
	none(t, sda1);
	m.v[4] = NULL;
	check_all_found(t, &m);

	classfs_device_unregister(m.v[10]);
	classfs_device_unregister(m.v[9]);
	classfs_device_unregister(m.v[8]);
	classfs_device_unregister(m.v[5]);
	classfs_device_unregister(m.v[3]);
	if (m.v[2])
		classfs_device_unregister(&m.blockdir);
	else
		classfs_device_put(&m.blockdir);	/* never added: its name goes */
	classfs_device_unregister(&m.ctrl);
	classfs_device_unregister(&m.root);
	classfs_class_destroy(m.blk);
	classfs_class_destroy(m.spim);
	classfs_class_destroy(m.nvme);
	CHECK_INT(classfs_bus_unregister(&m.spi), 0);
	CHECK_INT(classfs_bus_unregister(&m.pci), 0);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(find_layout_class)
{
	layout(CLASSFS_LAYOUT_CLASS);
}

TEST(find_layout_devices)
{
	layout(CLASSFS_LAYOUT_DEVICES);
}
