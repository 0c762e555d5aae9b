/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * attr-owned.h - attributes whose definition the core frees with the
 * file: the kernel-compatible layer (src/compat) wraps each 2.6.15
 * attribute in one it allocates and hands it over.  A native driver owns
 * its attribute definitions and frees them after classfs_*_remove_file(),
 * as a Linux driver does.
 *
 * In-library interface (see fs.h beside it): not installed, not exported.
 */
#ifndef CLASSFS_INTERNAL_ATTR_OWNED_H
#define CLASSFS_INTERNAL_ATTR_OWNED_H

#include "classfs/classfs.h"

/**
 * classfs_class_create_file_owned() - as classfs_class_create_file(); @attr
 * (from classfs_malloc()) is freed with the file, or on error.
 * Return: as classfs_class_create_file().
 */
int classfs_class_create_file_owned(struct classfs_class *cls,
				    struct classfs_class_attribute *attr);
/**
 * classfs_device_create_file_owned() - as classfs_device_create_file(),
 * and @attr (from classfs_malloc()) is freed with classfs_free() by the
 * library when the file goes (also on error).
 * Return: as classfs_device_create_file().
 */
int classfs_device_create_file_owned(struct classfs_device *dev,
				     struct classfs_device_attribute *attr);
/**
 * classfs_device_create_bin_file_owned() - as classfs_device_create_file_owned(),
 * for a binary attribute.  Return: as classfs_device_create_file().
 */
int classfs_device_create_bin_file_owned(struct classfs_device *dev,
					 struct classfs_bin_attribute *attr);

#endif
