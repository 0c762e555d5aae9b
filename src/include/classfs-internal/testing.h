/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testing.h - hooks for the project's own tests, fuzzers and benchmarks.
 *
 * In-library interface (see fs.h beside it): not installed, and not
 * exported from libclassfs.so.  The tests, fuzzers and benchmarks that
 * call these link the layers' static libraries (classfs_internal_dep in
 * meson.build), so the hooks reach the copy of the core they run.
 */
#ifndef CLASSFS_INTERNAL_TESTING_H
#define CLASSFS_INTERNAL_TESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classfs/classfs.h"

/**
 * classfs_set_alloc_hook() - route every allocation of the library
 * @hook: called with the size of each allocation; returning false makes
 *        that allocation fail (the caller sees -ENOMEM). NULL removes it.
 * @data: passed to @hook.
 *
 * Tests use it to fail the Nth allocation of a scenario.  Set it while no
 * other thread is in the library.
 */
void classfs_set_alloc_hook(bool (*hook)(size_t size, void *data), void *data);

/**
 * classfs_tree_node_count() - the number of live nodes of @tree (every
 * directory, file and link), to check that a scenario gave back
 * everything it made.
 */
size_t classfs_tree_node_count(struct classfs_tree *tree);

/**
 * classfs_mount_requests() - the FUSE requests mount @m served so far: of
 * opcode @opcode (FUSE_LOOKUP, FUSE_READ, ... from <linux/fuse.h>; 0:
 * those above 63), or of all (-1).  What a reader costs the serving
 * process, counted where it reads them (bench-fs, test-fuse).
 */
uint64_t classfs_mount_requests(struct classfs_mount *m, int opcode);

#endif
