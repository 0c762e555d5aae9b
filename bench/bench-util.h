/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-util.h - what the benchmarks share */
#ifndef CLASSFS_BENCH_UTIL_H
#define CLASSFS_BENCH_UTIL_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* resident bytes of process @pid, from /proc/PID/statm; -1 on error */
static inline long rss_bytes(pid_t pid)
{
	char path[64];
	long size = 0, resident = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

#endif
