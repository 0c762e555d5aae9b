// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * records.c - classctl load and save: umockdev records in and out.
 *
 * load reads the file itself (the daemon never opens a path a client
 * names) and hands the bytes to the client library, which streams them
 * to the daemon in chunks; on a terminal it shows how far reading got.
 * save writes to a temporary file next to the target and renames it
 * over the target only once everything is written and synced, so a
 * failed save leaves the old file as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classctl.h"

#define CHUNK (256 * 1024)

/* the whole file (or stdin for "-"), with progress on a terminal */
static int read_all(const char *path, char **data, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	bool tty;
	size_t cap = 0, total = 0;
	struct stat st;
	char *buf = NULL;
	int r = 0;

	if (fd < 0)
		return -errno;
	tty = isatty(STDERR_FILENO);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		total = (size_t)st.st_size;
	*len = 0;
	for (;;) {
		ssize_t n;

		if (cap - *len < CHUNK) {
			char *b = realloc(buf, cap + CHUNK + (total > cap ? total - cap : 0) + 1);

			if (!b) {
				r = -ENOMEM;
				break;
			}
			cap += CHUNK + (total > cap ? total - cap : 0);
			buf = b;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		*len += (size_t)n;
		if (tty && total)
			fprintf(stderr, "\rreading %s: %3zu%%", path, *len * 100 / total);
	}
	if (tty && total)
		fputc('\n', stderr);
	if (fd != STDIN_FILENO)
		close(fd);
	if (r) {
		free(buf);
		return r;
	}
	*data = buf;
	return 0;
}

int cmd_load(int argc, char **argv)
{
	struct classfs_client *c;
	const char *path;
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 1, 1, "load"))
		return EXIT_USAGE;
	path = argv[optind];
	r = read_all(path, &data, &len);
	if (r)
		return ctl_fail(NULL, r, "load: %s", path);
	if (!(c = ctl_connect())) {
		free(data);
		return 1;
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "loading %zu bytes into the daemon...\n", len);
	r = classfs_client_load(c, data, len, strcmp(path, "-") ? path : "(stdin)");
	free(data);
	if (r)
		return ctl_fail(c, r, "load %s", path);
	if (isatty(STDERR_FILENO))
		fputs("loaded\n", stderr);
	return 0;
}

/* FILE via DIR/.BASE.XXXXXX, synced, then renamed over FILE */
static int save_to(struct classfs_client *c, const char *path)
{
	char *d = strdup(path), *b = strdup(path), *tmp = NULL;
	mode_t mask;
	FILE *f = NULL;
	int fd = -1, r;

	if (!d || !b || asprintf(&tmp, "%s/.%s.XXXXXX", dirname(d), basename(b)) < 0) {
		tmp = NULL;
		r = ctl_fail(NULL, -ENOMEM, "save");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = ctl_fail(NULL, -errno, "save: cannot create a file next to %s", path);
		goto out;
	}
	/* mkstemp makes 0600; give what a new file would get */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	f = fdopen(fd, "w");
	if (!f) {
		r = ctl_fail(NULL, -errno, "save");
		close(fd);
		goto fail;
	}
	errno = 0;
	r = classfs_client_save(c, NULL, f);
	if (r && ferror(f) && errno) {
		/* the daemon answered; writing it here failed */
		r = ctl_fail(NULL, -errno, "save: writing %s", path);
		fclose(f);
		goto fail;
	}
	if (r) {
		r = ctl_fail(c, r, "save %s", path);
		fclose(f);
		goto fail;
	}
	if (fflush(f) || fsync(fileno(f))) {
		r = ctl_fail(NULL, -errno, "save: writing %s", path);
		fclose(f);
		goto fail;
	}
	if (fclose(f)) {
		r = ctl_fail(NULL, -errno, "save: writing %s", path);
		goto fail;
	}
	if (rename(tmp, path)) {
		r = ctl_fail(NULL, -errno, "save: renaming to %s", path);
		goto fail;
	}
	r = 0;
	goto out;
fail:
	unlink(tmp);
out:
	free(tmp);
	free(d);
	free(b);
	return r;
}

int cmd_save(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (!ctl_no_options(argc, argv) || !ctl_nargs(argc - optind, 0, 1, "save"))
		return EXIT_USAGE;
	if (!(c = ctl_connect()))
		return 1;
	if (argc - optind == 1)
		return save_to(c, argv[optind]);
	r = classfs_client_save(c, NULL, stdout);
	return r ? ctl_fail(c, r, "save") : 0;
}
