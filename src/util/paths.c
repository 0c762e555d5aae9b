// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * paths.c - where the installed data is (config.h: the paths meson
 * configured), and the source tree's copy for a build that is not
 * installed.
 */
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

/**
 * cfs_sample_path() - the sample machine's record (data/sample.umockdev):
 * $CLASSFS_SAMPLE when set (a copy another uid than the build's can read,
 * the source tree being out of its reach), else the installed one, else
 * the source tree's; the installed path when neither is readable (the
 * caller's open names it).
 */
const char *cfs_sample_path(void)
{
	static const char *const candidates[] = {
		CLASSFS_DATADIR "/sample.umockdev",
		CLASSFS_SOURCE_DATADIR "/sample.umockdev",
	};
	const char *env = getenv("CLASSFS_SAMPLE");

	if (env && *env)
		return env;

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (access(candidates[i], R_OK) == 0)
			return candidates[i];
	return candidates[0];
}
