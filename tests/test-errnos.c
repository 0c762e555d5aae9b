// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-errnos.c - the errnos classfs.h lists for each function are
 * returned where it says.
 */
#include "harness.h"
#include "native-util.h"

/* a constant: usable where a function call is not */
_Static_assert(CLASSFS_ROOT_INO == 1, "CLASSFS_ROOT_INO is the constant 1");

TEST(root_ino)
{
	CHECK_INT(classfs_root_ino(), CLASSFS_ROOT_INO);
}
