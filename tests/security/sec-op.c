// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sec-op - one operation against a live classfsd (through the client
 * library) or one system call on its mount, with the outcome printed as
 * a single token on the first line of stdout: "ok" or the errno's name
 * ("EPERM", "EACCES"...).  Data the operation returns (a value, a
 * record, a count) follows on the next lines; the daemon's or the
 * kernel's message goes to stderr.
 *
 * test-security.sh runs it as root and as uid 65534 (tests/stage.sh's
 * cfs_as_uid, the build staged), so the uid the daemon and the kernel
 * see is the real one of this process:
 * nothing here pretends to be anyone.
 *
 *   sec-op SOCKET connect|hold|mkclass|rmclass|add|rm|rename|get|set|create|
 *                 trigger|load|save|tree|subscribe|replay ARGS...
 *   sec-op - fs-read|fs-write|fs-create|fs-unlink|fs-mkdir|fs-rmdir|
 *            fs-rename|fs-chmod|fs-chown|fs-symlink|fs-link|fs-stat ARGS...
 *
 * A class argument "-" means NULL (a physical device).  add takes
 * attributes as ATTR:MODE:VALUE (MODE in octal, VALUE stored with a
 * trailing newline), --parent NAME, --phys [CLASS/]NAME, --dev MAJ:MIN,
 * --open (others may publish below it) and --bind (the device is bound;
 * sec-op prints "ok" and keeps the connection until killed).  create
 * CLASS NAME ATTR VALUE makes a missing attribute (ATTR_SET CREATE).  hold [sub]
 * prints the outcome of connecting (and subscribing) and keeps the
 * connection until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <classfs/classfs.h>
#include <classfs/client.h>

static int result(int r, const char *msg)
{
	if (r >= 0) {
		printf("ok\n");
		return 0;
	}
	printf("%s\n", strerrorname_np(-r) ? strerrorname_np(-r) : "E?");
	if (msg && *msg)
		fprintf(stderr, "%s\n", msg);
	return 1;
}

static int sys_result(int r)
{
	return result(r < 0 ? -errno : 0, r < 0 ? strerror(errno) : NULL);
}

static const char *cls_arg(const char *s)
{
	return strcmp(s, "-") ? s : NULL;
}

static int need(int argc, int n, const char *op)
{
	if (argc < n) {
		fprintf(stderr, "sec-op: %s: missing operands\n", op);
		exit(2);
	}
	return 0;
}

static int fs_op(int argc, char **argv)
{
	const char *op = argv[2];
	struct stat st;
	char buf[4096];
	ssize_t n;
	int fd, r;

	need(argc, 4, op);
	if (!strcmp(op, "fs-read")) {
		fd = open(argv[3], O_RDONLY);
		if (fd < 0)
			return sys_result(-1);
		n = read(fd, buf, sizeof(buf));
		r = n < 0 ? -errno : 0;
		close(fd);
		result(r, r < 0 ? strerror(-r) : NULL);
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		return r < 0;
	}
	if (!strcmp(op, "fs-write")) {
		need(argc, 5, op);
		fd = open(argv[3], O_WRONLY);
		if (fd < 0)
			return sys_result(-1);
		n = write(fd, argv[4], strlen(argv[4]));
		r = n < 0 ? -errno : 0;
		if (close(fd) < 0 && r == 0)
			r = -errno;
		return result(r, r < 0 ? strerror(-r) : NULL);
	}
	if (!strcmp(op, "fs-create")) {
		fd = open(argv[3], O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0)
			close(fd);
		return sys_result(fd);
	}
	if (!strcmp(op, "fs-unlink"))
		return sys_result(unlink(argv[3]));
	if (!strcmp(op, "fs-mkdir"))
		return sys_result(mkdir(argv[3], 0755));
	if (!strcmp(op, "fs-rmdir"))
		return sys_result(rmdir(argv[3]));
	if (!strcmp(op, "fs-stat")) {
		r = stat(argv[3], &st);
		sys_result(r);
		if (r == 0)
			printf("%u %04o\n", (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		return r < 0;
	}
	need(argc, 5, op);
	if (!strcmp(op, "fs-rename"))
		return sys_result(rename(argv[3], argv[4]));
	if (!strcmp(op, "fs-chmod"))
		return sys_result(chmod(argv[3], (mode_t)strtoul(argv[4], NULL, 8)));
	if (!strcmp(op, "fs-chown"))
		return sys_result(chown(argv[3], (uid_t)strtoul(argv[4], NULL, 10), (gid_t)-1));
	if (!strcmp(op, "fs-symlink"))
		return sys_result(symlink(argv[3], argv[4]));
	if (!strcmp(op, "fs-link"))
		return sys_result(link(argv[3], argv[4]));
	fprintf(stderr, "sec-op: unknown operation %s\n", op);
	return 2;
}

static void count_event(const struct classfs_uevent *ev, void *data)
{
	(void)ev;
	++*(unsigned long *)data;
}

/*
 * add CLASS NAME [--parent P] [--phys [PCLASS/]PHYS] [--dev MAJ:MIN] [--bind] [--open]
 *     [ATTR:MODE:VALUE]...
 * --bind: bound to the connection, which is kept (until killed)
 */
static int op_add(struct classfs_client *c, int argc, char **argv)
{
	struct classfs_client_attr attrs[16];
	char *vals[16] = { NULL };
	struct classfs_client_device dev = {
		.cls = cls_arg(argv[3]),
		.name = argv[4],
		.attrs = attrs,
	};
	int i, r;

	for (i = 5; i < argc && dev.nattrs < 16; i++) {
		char *spec = argv[i], *m, *v;

		if (!strcmp(spec, "--parent") && i + 1 < argc) {
			dev.parent = argv[++i];
			continue;
		}
		if (!strcmp(spec, "--bind")) {
			dev.flags |= CLASSFS_CLIENT_BIND;
			continue;
		}
		if (!strcmp(spec, "--dev") && i + 1 < argc) {
			unsigned int ma, mi;

			if (sscanf(argv[++i], "%u:%u", &ma, &mi) != 2)
				exit(2);
			dev.devt = makedev(ma, mi);
			continue;
		}
		if (!strcmp(spec, "--open")) {
			dev.flags |= CLASSFS_CLIENT_OPEN;
			continue;
		}
		if (!strcmp(spec, "--phys") && i + 1 < argc) {
			char *slash = strchr(argv[++i], '/');

			dev.phys = slash ? slash + 1 : argv[i];
			if (slash) {
				*slash = '\0';
				dev.phys_class = argv[i];
			}
			continue;
		}
		m = strchr(spec, ':');
		v = m ? strchr(m + 1, ':') : NULL;
		if (!v) {
			fprintf(stderr, "sec-op: attribute '%s' is not ATTR:MODE:VALUE\n", spec);
			exit(2);
		}
		*m = *v = '\0';
		if (asprintf(&vals[dev.nattrs], "%s\n", v + 1) < 0)
			exit(2);
		attrs[dev.nattrs] = (struct classfs_client_attr){
			.name = spec,
			.mode = (mode_t)strtoul(m + 1, NULL, 8),
			.value = vals[dev.nattrs],
			.len = strlen(vals[dev.nattrs]),
		};
		dev.nattrs++;
	}
	r = classfs_client_device_add(c, &dev);
	for (size_t k = 0; k < dev.nattrs; k++)
		free(vals[k]);
	if (r == 0 && (dev.flags & CLASSFS_CLIENT_BIND)) {
		/* bound to this connection: keep it until killed */
		printf("ok\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return r;
}

static int client_op(struct classfs_client *c, int argc, char **argv)
{
	const char *op = argv[2];
	char buf[CLASSFS_ATTR_MAX];
	unsigned long events = 0;
	char *mem = NULL;
	size_t memlen = 0;
	FILE *f;
	ssize_t n;
	int r;

	if (!strcmp(op, "connect")) {
		struct classfs_client_status st;

		return result(classfs_client_status(c, &st), classfs_client_error_message(c));
	}
	if (!strcmp(op, "hold")) {
		/* connected (and subscribed: "hold sub"): say so, keep it until killed */
		r = classfs_client_status(c, &(struct classfs_client_status){ 0 });
		if (r == 0 && argc > 3 && !strcmp(argv[3], "sub"))
			r = classfs_client_subscribe(c, 0, count_event, NULL, &events);
		result(r, classfs_client_error_message(c));
		fflush(stdout);
		while (r == 0)
			pause();
		return 1;
	}
	if (!strcmp(op, "save") || !strcmp(op, "tree")) {
		f = open_memstream(&mem, &memlen);
		if (!f)
			return 2;
		r = !strcmp(op, "save") ? classfs_client_save(c, NULL, f)
					: classfs_client_tree(c, CLASSFS_CLIENT_JSON, f);
		fclose(f);
		result(r, classfs_client_error_message(c));
		if (r == 0)
			fwrite(mem, 1, memlen, stdout);
		free(mem);
		return r < 0;
	}
	if (!strcmp(op, "subscribe")) {
		/* from the first event in the ring: root's events included */
		r = classfs_client_subscribe(c, 1, count_event, NULL, &events);
		for (int i = 0; r == 0 && events == 0 && i < 20; i++)
			r = classfs_client_dispatch(c, 100) < 0 ? -EIO : 0;
		if (r == 0 && events == 0)
			r = -ENODATA;
		result(r, classfs_client_error_message(c));
		printf("%lu\n", events);
		return r < 0;
	}
	need(argc, 4, op);
	if (!strcmp(op, "mkclass"))
		return result(classfs_client_class_create(c, argv[3], 0),
			      classfs_client_error_message(c));
	if (!strcmp(op, "rmclass"))
		return result(classfs_client_class_remove(c, argv[3]),
			      classfs_client_error_message(c));
	if (!strcmp(op, "load")) {
		FILE *in = fopen(argv[3], "r");
		char *data;
		size_t len;

		if (!in)
			return sys_result(-1);
		data = malloc(1 << 20);
		len = data ? fread(data, 1, 1 << 20, in) : 0;
		fclose(in);
		r = classfs_client_load(c, data, len, argv[3]);
		free(data);
		return result(r, classfs_client_error_message(c));
	}
	need(argc, 5, op);
	if (!strcmp(op, "replay")) {
		r = classfs_client_replay(c, strtoull(argv[3], NULL, 10),
					  strtoull(argv[4], NULL, 10), count_event, &events);
		result(r, classfs_client_error_message(c));
		printf("%lu\n", events);
		return r < 0;
	}
	if (!strcmp(op, "add"))
		return result(op_add(c, argc, argv), classfs_client_error_message(c));
	if (!strcmp(op, "rm"))
		return result(classfs_client_device_remove(c, cls_arg(argv[3]), argv[4]),
			      classfs_client_error_message(c));
	need(argc, 6, op);
	if (!strcmp(op, "rename"))
		return result(classfs_client_device_rename(c, argv[3], argv[4], argv[5]),
			      classfs_client_error_message(c));
	if (!strcmp(op, "get")) {
		n = classfs_client_attr_get(c, cls_arg(argv[3]), argv[4], argv[5], buf,
					    sizeof(buf));
		result((int)(n < 0 ? n : 0), classfs_client_error_message(c));
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		return n < 0;
	}
	if (!strcmp(op, "trigger")) {
		const char *extra[8] = { NULL };
		int a;

		for (a = 0; a < CLASSFS_ACTION_COUNT; a++)
			if (!strcmp(classfs_action_name((enum classfs_action)a), argv[5]))
				break;
		for (int i = 6; i < argc && i - 6 < 7; i++)
			extra[i - 6] = argv[i];
		return result(classfs_client_trigger(c, cls_arg(argv[3]), argv[4],
						     (enum classfs_action)a, extra),
			      classfs_client_error_message(c));
	}
	need(argc, 7, op);
	if (!strcmp(op, "set"))
		return result(classfs_client_attr_set(c, cls_arg(argv[3]), argv[4], argv[5],
						      argv[6], strlen(argv[6])),
			      classfs_client_error_message(c));
	if (!strcmp(op, "create"))	/* ATTR_SET CREATE: made when missing */
		return result(classfs_client_attr_add(c, cls_arg(argv[3]), argv[4], argv[5],
						      argv[6], strlen(argv[6]), 0),
			      classfs_client_error_message(c));
	fprintf(stderr, "sec-op: unknown operation %s\n", op);
	return 2;
}

int main(int argc, char **argv)
{
	struct classfs_client *c;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: sec-op SOCKET|- OPERATION [ARG]...\n");
		return 2;
	}
	if (!strncmp(argv[2], "fs-", 3))
		return fs_op(argc, argv);
	c = classfs_client_connect(argv[1], 0);
	if (!c)
		return result(-errno, "cannot connect");
	r = client_op(c, argc, argv);
	classfs_client_disconnect(c);
	return r;
}
