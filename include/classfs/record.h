/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record.h - umockdev record files: import into a tree, export from it,
 * and the udev database of recorded properties.
 *
 * The format and its rules are described in docs/records.md.
 */
#ifndef CLASSFS_RECORD_H
#define CLASSFS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct classfs_record_error - why a record was refused
 * @file: the options' filename (or "<record>").
 * @line: 1-based line of the fault (0 when not tied to a line).
 * @reason: what was wrong, in words.
 */
struct classfs_record_error {
	char file[256];
	unsigned long line;
	char reason[256];
};

/**
 * struct classfs_record_options - optional settings of classfs_record_load()
 * @filename: named in errors and warnings.
 * @progress: called now and then while devices are built (done of total).
 * @warning: called for what is loaded but not as recorded (a link whose
 *           target is not in the tree, a path the layout places elsewhere).
 */
struct classfs_record_options {
	const char *filename;
	void (*progress)(size_t done, size_t total, void *data);
	void *progress_data;
	void (*warning)(const char *file, unsigned long line, const char *msg, void *data);
	void *warning_data;
};

/**
 * classfs_record_load() - build the devices of an umockdev record in @tree
 * @tree: the tree (either layout).
 * @data: the record's bytes (need not be NUL-terminated).
 * @len: their number.
 * @opt: NULL or options.
 * @err: NULL or filled when the record is refused.
 *
 * All or nothing: the whole record is parsed and checked first, then the
 * devices are built with their uevents suppressed, then ADD is sent for
 * each recorded device, parents first.  On any error nothing stays in the
 * tree and no event is sent.
 * Warnings (see @opt) do not make the load fail.
 * Return: 0, -EINVAL for a malformed record
 * (@err tells file, line and reason), -EEXIST when a device is already in
 * the tree, -ENOMEM, or another error of the tree.
 */
CLASSFS_PUBLIC int classfs_record_load(struct classfs_tree *tree, const char *data, size_t len,
				       const struct classfs_record_options *opt,
				       struct classfs_record_error *err);

/**
 * classfs_record_subsystem_is_bus() - how classfs_record_load() reads a
 * device's SUBSYSTEM: true for one of Linux's bus types (pci, usb,
 * platform, ...: a physical device on that bus), false for anything else
 * (a class: block, input, net, ...); a device's `subsystem` link, when
 * recorded, decides instead
 * @subsystem: the name (NULL: false).
 *
 * A program that writes records for classfs to load (the Python
 * testbed's add_device()) places a device by the same rule.
 * Return: true for a bus type, false otherwise.
 */
CLASSFS_PUBLIC bool classfs_record_subsystem_is_bus(const char *subsystem);

/**
 * classfs_record_save() - write @tree in umockdev format, canonical order
 * @syspath: NULL for every device, else a device's Linux path
 *           ("/devices/...", with or without "/sys"), or a class
 *           device's DEVPATH in a class-layout tree ("/class/block/sda/sda1",
 *           what its events name it by): that device and its parents, as
 *           umockdev-record writes them (by their devices-layout paths, the
 *           device last).
 * @out: where to write.
 *
 * Devices sorted by path, lines sorted within a device.  Loaded devices
 * keep their recorded properties, links and `dev` text; their attributes
 * are read from the tree (so writes show); devices made through the API
 * are written from what the tree shows.
 * Return: 0, -ENOENT (no device at @syspath), -EIO (write error), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_record_save(struct classfs_tree *tree, const char *syspath, FILE *out);

/**
 * classfs_record_export_udevdb() - write the udev database of the loaded
 * devices into @dir (the files of /run/udev/data: "c189:10", "b8:0",
 * "n3", "+usb:1-1"), so libudev users see the recorded properties.
 * Return: 0 or -errno of the first file that could not be written.
 */
CLASSFS_PUBLIC int classfs_record_export_udevdb(struct classfs_tree *tree, const char *dir);

/**
 * classfs_record_unload() - remove every device loaded from records
 * (deepest first, with REMOVE events), then the classes and buses the
 * loader made that are left empty.  Return: the number of devices removed.
 */
CLASSFS_PUBLIC int classfs_record_unload(struct classfs_tree *tree);

#ifdef __cplusplus
}
#endif
#endif
