// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * static-probe - a statically linked program (no dynamic loader, so no
 * LD_PRELOAD can steer it) that reports what it finds at each PATH given:
 *
 *   PATH c|b MAJ:MIN open=ok|ERRNO-NAME   a device node, and whether it opens
 *   PATH = FIRST-LINE                     a regular file's first line
 *   PATH -> TARGET                        a symlink
 *   PATH dir N                            a directory of N entries
 *   PATH missing                          nothing there
 *
 * Exit 0 unless an argument is missing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static const char *errname(int e)
{
	switch (e) {
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENXIO: return "ENXIO";
	case ENODEV: return "ENODEV";
	case ENOENT: return "ENOENT";
	default: return strerror(e);
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *p = argv[i];
		struct stat st;

		if (lstat(p, &st) < 0) {
			printf("%s missing\n", p);
			continue;
		}
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

			printf("%s %c %u:%u open=%s\n", p, S_ISCHR(st.st_mode) ? 'c' : 'b',
			       major(st.st_rdev), minor(st.st_rdev), fd >= 0 ? "ok" : errname(errno));
			if (fd >= 0)
				close(fd);
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t n = readlink(p, t, sizeof(t) - 1);

			t[n < 0 ? 0 : n] = '\0';
			printf("%s -> %s\n", p, t);
		} else if (S_ISDIR(st.st_mode)) {
			DIR *d = opendir(p);
			unsigned long n = 0;
			struct dirent *de;

			while (d && (de = readdir(d)))
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					n++;
			if (d)
				closedir(d);
			printf("%s dir %lu\n", p, n);
		} else {
			char buf[4097];
			int fd = open(p, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

			if (fd >= 0)
				close(fd);
			if (n < 0) {
				printf("%s unreadable %s\n", p, errname(errno));
				continue;
			}
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			printf("%s = %s\n", p, buf);
		}
	}
	return 0;
}
