// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * scsi_disk.c - SCSI disks with partitions written the way a Linux 2.6.15
 * driver used the class API: it includes only <classfs/kernel.h> and the
 * C library.
 *
 * A physical host adapter (struct device) that the disks point at; a
 * class made with class_create() and given a class attribute; disks
 * embedded in the driver's structure with class_device_register(), a
 * writable `ro`, a binary `ident` (the IDENTIFY page) and a device-level
 * hotplug hook; partitions as nested class devices made with
 * class_device_create() and given attributes afterwards; a rename of a
 * partition; and at exit one disk unregistered with its partitions still
 * present, which the core removes deepest first.
 *
 * After init: class/block/sda (8:0) with sda1, sda2 renamed sda5 (8:1,
 * 8:2); class/block/sdb (8:16) with sdb1 (8:17); devices/host0.
 */
#include <stdio.h>
#include <string.h>

#include <classfs/kernel.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("seed-era SCSI disk driver for the classfs tests");

#define SCSI_DISK0_MAJOR	8

struct sd_part {
	unsigned long long start, nr_sects;
	struct class_device *cdev;
};

struct scsi_disk {
	const char *name;
	int index;
	unsigned long long capacity;	/* 512-byte sectors */
	int ro;
	unsigned char ident[64];
	struct sd_part part[2];
	int nr_parts;
	struct class_device cdev;
};

#define to_scsi_disk(cd) container_of(cd, struct scsi_disk, cdev)

static struct class *sd_class;
static struct device host0;

static struct scsi_disk disks[] = {
	{ .name = "sda", .index = 0, .capacity = 2097152, .nr_parts = 2,
	  .part = { { 2048, 1024000 }, { 1026048, 1071104 } } },
	{ .name = "sdb", .index = 1, .capacity = 65536, .nr_parts = 1,
	  .part = { { 32, 65504 } } },
};

static ssize_t sd_class_version_show(struct class *cls, char *buf)
{
	return sprintf(buf, "sd 1.0\n");
}
static CLASS_ATTR(sd_version, 0444, sd_class_version_show, NULL);

static ssize_t size_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%llu\n", to_scsi_disk(cdev)->capacity);
}

static ssize_t ro_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%d\n", to_scsi_disk(cdev)->ro);
}

static ssize_t ro_store(struct class_device *cdev, const char *buf, size_t count)
{
	if (count < 1 || (buf[0] != '0' && buf[0] != '1') ||
	    (count > 1 && strncmp(buf + 1, "\n", count - 1)))
		return -EINVAL;
	to_scsi_disk(cdev)->ro = buf[0] - '0';
	return (ssize_t)count;
}

static CLASS_DEVICE_ATTR(size, 0444, size_show, NULL);
static CLASS_DEVICE_ATTR(ro, 0644, ro_show, ro_store);

static ssize_t ident_read(struct kobject *kobj, char *buf, loff_t off, size_t count)
{
	struct scsi_disk *sd = to_scsi_disk(to_class_dev(kobj));

	if (off >= (loff_t)sizeof(sd->ident))
		return 0;
	if (count > sizeof(sd->ident) - (size_t)off)
		count = sizeof(sd->ident) - (size_t)off;
	memcpy(buf, sd->ident + off, count);
	return (ssize_t)count;
}

static struct bin_attribute ident_attr = {
	.attr = { .name = "ident", .owner = THIS_MODULE, .mode = 0400 },
	.size = 64,
	.read = ident_read,
};

/* a partition's number and offsets: class_data points at its sd_part */
static ssize_t part_start_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%llu\n", ((struct sd_part *)class_get_devdata(cdev))->start);
}

static ssize_t part_size_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%llu\n", ((struct sd_part *)class_get_devdata(cdev))->nr_sects);
}

static ssize_t part_partition_show(struct class_device *cdev, char *buf)
{
	struct scsi_disk *sd = to_scsi_disk(cdev->parent);
	struct sd_part *p = class_get_devdata(cdev);

	return sprintf(buf, "%d\n", (int)(p - sd->part) + 1);
}

static struct class_device_attribute part_attrs[] = {
	__ATTR(start, 0444, part_start_show, NULL),
	__ATTR(size, 0444, part_size_show, NULL),
	__ATTR(partition, 0444, part_partition_show, NULL),
};

static int disk_hotplug(struct class_device *cdev, char **envp, int num_envp,
			char *buffer, int buffer_size)
{
	int i = 0, len = 0;

	if (add_hotplug_env_var(envp, num_envp, &i, buffer, buffer_size, &len,
				"DEVTYPE=disk") ||
	    add_hotplug_env_var(envp, num_envp, &i, buffer, buffer_size, &len,
				"SCSI_INDEX=%d", to_scsi_disk(cdev)->index))
		return -ENOMEM;
	envp[i] = NULL;
	return 0;
}

static void disk_release(struct class_device *cdev)
{
	printf("sd: %s released\n", to_scsi_disk(cdev)->name);
}

static void host_release(struct device *dev)
{
	printf("sd: %s released\n", dev->bus_id);
}

static int __init add_partition(struct scsi_disk *sd, int n)
{
	struct sd_part *p = &sd->part[n];
	int err = 0;

	p->cdev = class_device_create(sd_class, &sd->cdev,
				      MKDEV(SCSI_DISK0_MAJOR, sd->index * 16 + n + 1), NULL,
				      "%s%d", sd->name, n + 1);
	if (IS_ERR(p->cdev)) {
		err = PTR_ERR(p->cdev);
		p->cdev = NULL;
		return err;
	}
	class_set_devdata(p->cdev, p);
	for (size_t i = 0; i < sizeof(part_attrs) / sizeof(part_attrs[0]) && !err; i++)
		err = class_device_create_file(p->cdev, &part_attrs[i]);
	return err;
}

static void remove_disk(struct scsi_disk *sd);

/* a disk with its files and partitions; on failure nothing of it stays */
static int __init add_disk(struct scsi_disk *sd)
{
	struct class_device *cd = &sd->cdev;
	int err;

	for (size_t i = 0; i < sizeof(sd->ident); i++)
		sd->ident[i] = (unsigned char)(i * 7 + sd->index);
	cd->class = sd_class;
	cd->dev = &host0;
	cd->devt = MKDEV(SCSI_DISK0_MAJOR, sd->index * 16);
	cd->release = disk_release;
	cd->hotplug = disk_hotplug;
	strlcpy(cd->class_id, sd->name, BUS_ID_SIZE);
	err = class_device_register(cd);
	if (err)
		return err;
	if ((err = class_device_create_file(cd, &class_device_attr_size)) ||
	    (err = class_device_create_file(cd, &class_device_attr_ro)) ||
	    (err = class_device_create_bin_file(cd, &ident_attr)))
		goto fail;
	for (int n = 0; n < sd->nr_parts; n++) {
		err = add_partition(sd, n);
		if (err)
			goto fail;
	}
	return 0;
fail:
	remove_disk(sd);
	return err;
}

static void remove_disk(struct scsi_disk *sd)
{
	/* partitions first, as a driver does; a disk still holding some
	 * takes them with it (sdb at exit) */
	for (int n = 0; n < sd->nr_parts; n++)
		if (sd->part[n].cdev)
			class_device_unregister(sd->part[n].cdev);
	class_device_unregister(&sd->cdev);
}

static void sd_cleanup(int ndisks)
{
	while (ndisks-- > 0)
		remove_disk(&disks[ndisks]);
	class_remove_file(sd_class, &class_attr_sd_version);
	class_destroy(sd_class);
	device_unregister(&host0);
}

static int __init init_sd(void)
{
	int err, n = 0;

	strlcpy(host0.bus_id, "host0", BUS_ID_SIZE);
	host0.release = host_release;
	err = device_register(&host0);
	if (err)
		return err;
	sd_class = class_create(THIS_MODULE, "block");
	if (IS_ERR(sd_class)) {
		err = PTR_ERR(sd_class);
		device_unregister(&host0);
		return err;
	}
	err = class_create_file(sd_class, &class_attr_sd_version);
	if (err)
		goto out;
	for (n = 0; n < (int)(sizeof(disks) / sizeof(disks[0])); n++) {
		err = add_disk(&disks[n]);
		if (err)
			goto out;
	}
	/* a partition renumbered, as a partition table change would */
	err = class_device_rename(disks[0].part[1].cdev, "sda5");
	if (err)
		goto out;	/* n is the number of disks added */
	return 0;
out:
	sd_cleanup(n);
	return err;
}

static void __exit exit_sd(void)
{
	/* sdb goes with its partition still there: the core removes it first */
	disks[1].part[0].cdev = NULL;
	sd_cleanup(2);
}

module_init(init_sd);
module_exit(exit_sd);
