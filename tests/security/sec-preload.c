// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sec-preload - a probe for LD_PRELOAD: once loaded into a process it
 * appends "uid=N" (the process's real uid) to the file named as itself
 * plus ".ran".  test-security.sh offers its path as LD_PRELOAD in a
 * client's TRIGGER: the uevent helper runs as root, so that file must
 * never appear; a row first checks that the probe does leave its mark
 * when it is preloaded for real.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void sec_preload_ran(void)
{
	char path[4096];
	Dl_info info;
	FILE *f;

	if (!dladdr((void *)sec_preload_ran, &info) || !info.dli_fname)
		return;
	snprintf(path, sizeof(path), "%s.ran", info.dli_fname);
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "uid=%u\n", (unsigned int)getuid());
	fclose(f);
}
