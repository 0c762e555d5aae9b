// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * replay-main.c - runs a fuzz target over files and directories of
 * inputs without libFuzzer, so that every build (gcc, sanitizers) replays
 * the committed corpus and the crashes found before as regression tests.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;

		if (stat(argv[i], &st) < 0)
			continue;	/* an empty corpus folder may be absent */
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]) < 0;
			files++;
			continue;
		}
		d = opendir(argv[i]);
		for (struct dirent *e; d && (e = readdir(d));) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			bad += run_file(path) < 0;
			files++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", files);
	return bad ? 1 : 0;
}
