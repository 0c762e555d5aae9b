/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testing.h - hooks for the project's own tests, fuzzers and benchmarks.
 *
 * Not part of the API: this header is not installed, and the functions it
 * declares (exported from libclassfs only so that the tests linking it
 * can reach them) may change or go in any release.  Programs using
 * libclassfs must not call them.
 */
#ifndef CLASSFS_TESTING_H
#define CLASSFS_TESTING_H

#include <stdbool.h>
#include <stddef.h>

#include "classfs/classfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * classfs_set_alloc_hook() - test-only: route every allocation of the library
 * @hook: called with the size of each allocation; returning false makes
 *        that allocation fail (the caller sees -ENOMEM). NULL removes it.
 * @data: passed to @hook.
 *
 * Tests use it to fail the Nth allocation of a scenario.  Set it while no
 * other thread is in the library.
 */
CLASSFS_PUBLIC void classfs_set_alloc_hook(bool (*hook)(size_t size, void *data), void *data);

/**
 * classfs_tree_node_count() - test-only: the number of live nodes of
 * @tree (every directory, file and link), to check that a scenario gave
 * back everything it made.
 */
CLASSFS_PUBLIC size_t classfs_tree_node_count(struct classfs_tree *tree);

#ifdef __cplusplus
}
#endif
#endif
