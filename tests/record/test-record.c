// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record.c - umockdev record import/export: every real recording
 * loads in both layouts with its class devices nested, saves back to
 * itself (canonical order) and round-trips byte for byte; ADD events come
 * once per device, parents first; malformed records are refused with
 * file, line and reason and change nothing; the udev database and the
 * node list say what was recorded.
 *
 * The repo's own recordings are read from $RECORD_DATA (meson sets it
 * to tests/record/data; see the README there); the checks of particular
 * devices use them.  Every recording in $RECORD_EXTRA_DATA (meson points
 * it at ../shared/testdata/umockdev) also goes through the checks that
 * hold for any recording, when that folder is there.
 */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness.h"
#include "classfs/classfs.h"
#include "classfs/record.h"
#include "classfs-internal/record-node.h"
#include "classfs-internal/testing.h"

/* the repo's recordings (tests/record/data) */
#define MOUSE "usb-mouse.umockdev"	/* input1/event1 under HID, USB, PCI */
#define SPI "spi-flash.umockdev"	/* spidev below a bus device below spi_master */
#define TOKEN "usb-token.umockdev"	/* hidraw; a usb1 of its own on another PCI device */

#define MAXREC 64
static char *recordings[MAXREC];
static size_t nrec;

/*
 * The recordings every general check runs over: the repo's own, then the
 * *.umockdev files of $RECORD_EXTRA_DATA when that folder exists (a name
 * with a '/' is opened as it is, see slurp()).
 */
static void list_recordings(void)
{
	const char *extra = getenv("RECORD_EXTRA_DATA");
	struct dirent **names;
	int n;

	if (nrec)
		return;
	recordings[nrec++] = strdup(MOUSE);
	recordings[nrec++] = strdup(SPI);
	recordings[nrec++] = strdup(TOKEN);
	if (!extra || (n = scandir(extra, &names, NULL, alphasort)) < 0) {
		printf("  (no extra recordings: %s absent)\n", extra ? extra : "$RECORD_EXTRA_DATA");
		return;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		char path[PATH_MAX];

		if (len > 9 && !strcmp(names[i]->d_name + len - 9, ".umockdev") && nrec < MAXREC) {
			snprintf(path, sizeof(path), "%s/%s", extra, names[i]->d_name);
			recordings[nrec++] = strdup(path);
		}
		free(names[i]);
	}
	free(names);
}

static char *slurp(const char *name, size_t *len)
{
	const char *dir = getenv("RECORD_DATA");
	char path[PATH_MAX];
	FILE *f;
	char *buf;
	long n;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/record/data", name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "  cannot open %s\n", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* ---- canonical form: paragraphs sorted by P:, lines sorted within ---- */

struct para {
	char *path;
	char **lines;
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_para(const void *a, const void *b)
{
	return strcmp(((const struct para *)a)->path, ((const struct para *)b)->path);
}

static char *canonical(const char *text)
{
	char *copy = strdup(text), *save = NULL, *out;
	struct para *v = calloc(1024, sizeof(*v));
	size_t np = 0, size = strlen(text) + 4096, off = 0;
	struct para *cur = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "P: ", 3)) {
			cur = &v[np++];
			cur->path = line + 3;
			cur->lines = calloc(4096, sizeof(char *));
		} else if (cur && *line) {
			cur->lines[cur->n++] = line;
		}
	}
	qsort(v, np, sizeof(*v), cmp_para);
	out = malloc(size);
	for (size_t i = 0; i < np; i++) {
		qsort(v[i].lines, v[i].n, sizeof(char *), cmp_str);
		off += (size_t)snprintf(out + off, size - off, "P: %s\n", v[i].path);
		for (size_t k = 0; k < v[i].n; k++)
			off += (size_t)snprintf(out + off, size - off, "%s\n", v[i].lines[k]);
		off += (size_t)snprintf(out + off, size - off, "\n");
		free(v[i].lines);
	}
	free(v);
	free(copy);
	return out;
}

/* the line of the last P: of recording @name (0 when unreadable) */
static unsigned long last_paragraph_line(const char *name)
{
	size_t len;
	char *text = slurp(name, &len);
	unsigned long line = 1, last = 0;

	for (size_t k = 0; text && k < len; k++) {
		if ((k == 0 || text[k - 1] == '\n') && !strncmp(text + k, "P: ", 3))
			last = line;
		line += text[k] == '\n';
	}
	free(text);
	return last;
}

static size_t count_devices(const char *text)
{
	size_t n = 0;

	for (const char *s = text; s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		n += !strncmp(s, "P: ", 3);
	return n;
}

static char *save_string(struct classfs_tree *t, const char *syspath, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*rc = classfs_record_save(t, syspath, f);
	fclose(f);
	return buf;
}

static void teardown(struct classfs_tree *t)
{
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- events ---- */

#define MAXEV 256
struct evlog {
	int n;
	char devpath[MAXEV][512];
	char subsystem[MAXEV][64];
	enum classfs_action action[MAXEV];
};

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct evlog *log = data;

	if (log->n >= MAXEV)
		return;
	snprintf(log->devpath[log->n], sizeof(log->devpath[0]), "%s", ev->devpath);
	snprintf(log->subsystem[log->n], sizeof(log->subsystem[0]), "%s",
		 ev->subsystem ? ev->subsystem : "");
	log->action[log->n++] = ev->action;
}

static int warnings;

static void on_warning(const char *file, unsigned long line, const char *msg, void *data)
{
	warnings++;
}

static int load(struct classfs_tree *t, const char *name, struct classfs_record_error *err)
{
	size_t len;
	char *data = slurp(name, &len);
	struct classfs_record_options opt = { .filename = name, .warning = on_warning };
	int r;

	if (!data)
		return -ENOENT;
	r = classfs_record_load(t, data, len, &opt, err);
	if (r < 0)
		fprintf(stderr, "  load %s: %d %s:%lu: %s\n", name, r, err->file, err->line,
			err->reason);
	free(data);
	return r;
}

TEST(each_recording_loads_in_both_layouts)
{
	list_recordings();
	for (int layout = 0; layout < 2; layout++)
		for (size_t i = 0; i < nrec; i++) {
			struct classfs_tree *t = classfs_tree_new(layout);
			struct classfs_record_error err;
			size_t base = classfs_tree_node_count(t);

			CHECK_INT(load(t, recordings[i], &err), 0);
			CHECK(classfs_tree_node_count(t) > base);
			teardown(t);
		}
}

TEST(nested_class_devices_are_nested)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_stat st;
	char buf[4096];
	ssize_t n;

	CHECK_INT(load(t, MOUSE, &err), 0);
	CHECK_INT(classfs_path_stat(t, "class/input/input1/event1", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_DIR);
	/* the flat alias udevadm enumerates */
	CHECK_INT(classfs_path_stat(t, "class/input/event1", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_LNK);
	/* input1's physical device is the HID device (a bus device) */
	n = classfs_path_readlink(t, "class/input/input1/device", buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "0003:046D:C077.0001") != NULL);
	/* bus devices are listed under bus/BUS/devices */
	CHECK_INT(classfs_path_stat(t, "bus/hid/devices/0003:046D:C077.0001", &st), 0);
	CHECK_INT(classfs_path_stat(t, "bus/usb/devices/1-2:1.0", &st), 0);
	CHECK_INT(classfs_path_stat(t, "bus/pci/devices/0000:00:14.0", &st), 0);
	/* recorded values read back as recorded (C escapes decoded) */
	n = classfs_path_read(t, "class/input/input1/name", buf, sizeof(buf) - 1);
	CHECK_INT(n, 27);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "Logitech USB Optical Mouse\n");
	teardown(t);

	/* the devices layout: recorded paths, glue directories */
	t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	CHECK_INT(load(t, MOUSE, &err), 0);
	CHECK_INT(classfs_path_stat(t, "devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/"
				    "0003:046D:C077.0001/input/input1/event1", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_DIR);
	n = classfs_path_read(t, "devices/pci0000:00/0000:00:14.0/usb1/busnum", buf,
			      sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "1\n");
	teardown(t);

	/* SPI: a bus device below a class device (spi1), a class device below it */
	t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	CHECK_INT(load(t, SPI, &err), 0);
	CHECK_INT(classfs_path_stat(t, "devices/pci0000:00/0000:00:1e.3/pxa2xx-spi.4/spi_master/"
				    "spi1/spi-PRP0001:02/spidev/spidev1.0", &st), 0);
	CHECK_INT(classfs_path_stat(t, "class/spidev/spidev1.0", &st), 0);
	CHECK_INT(classfs_path_stat(t, "bus/spi/devices/spi-PRP0001:02", &st), 0);
	teardown(t);
}

TEST(uevent_has_only_kernel_keys)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	char buf[4096];
	ssize_t n;

	CHECK_INT(load(t, MOUSE, &err), 0);
	n = classfs_path_read(t, "class/input/input1/event1/uevent", buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "MAJOR=13\n") && strstr(buf, "MINOR=65\n"));
	CHECK(strstr(buf, "DEVNAME=input/event1\n") != NULL);
	CHECK(!strstr(buf, "ID_") && !strstr(buf, "XKB") && !strstr(buf, "DEVLINKS"));

	n = classfs_path_read(t, "class/input/input1/uevent", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "PRODUCT=3/46d/c077/111\n") && strstr(buf, "EV=17\n"));
	CHECK(strstr(buf, "NAME=\"Logitech USB Optical Mouse\"\n") != NULL);
	CHECK(!strstr(buf, "ID_") && !strstr(buf, "TAGS"));

	/* a USB device: its node name from the record, DEVTYPE, bus keys */
	n = classfs_path_read(t, "devices/pci0000:00/0000:00:14.0/usb1/1-2/uevent", buf,
			      sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "DEVNAME=bus/usb/001/002\n") && strstr(buf, "DEVTYPE=usb_device\n"));
	CHECK(strstr(buf, "BUSNUM=001\n") && strstr(buf, "DRIVER=usb\n"));
	CHECK(!strstr(buf, "ID_"));
	/* its number is the tree's, as a class device's: once in the uevent, in dev/char */
	CHECK(strstr(buf, "MAJOR=189\n") && strstr(buf, "MINOR=1\n"));
	CHECK(!strstr(strstr(buf, "DEVNAME=") + 1, "DEVNAME="));
	n = classfs_path_readlink(t, "dev/char/189:1", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "../../devices/pci0000:00/0000:00:14.0/usb1/1-2");
	n = classfs_path_read(t, "dev/char/189:1/dev", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "189:1\n");
	teardown(t);
}

TEST(round_trip_is_canonical_and_stable)
{
	list_recordings();
	for (int layout = 0; layout < 2; layout++)
		for (size_t i = 0; i < nrec; i++) {
			struct classfs_record_error err;
			struct classfs_tree *t = classfs_tree_new(layout), *t2;
			size_t len;
			char *orig = slurp(recordings[i], &len), *canon, *s1, *s2;
			int rc;

			if (!orig) {
				CHECK(orig);
				continue;
			}
			CHECK_INT(load(t, recordings[i], &err), 0);
			s1 = save_string(t, NULL, &rc);
			CHECK_INT(rc, 0);
			canon = canonical(orig);
			if (strcmp(s1, canon)) {
				fprintf(stderr, "  %s (layout %d): first save differs from the "
					"canonical original\n", recordings[i], layout);
				CHECK(!"save == canonical(original)");
			}
			t2 = classfs_tree_new(layout);
			CHECK_INT(classfs_record_load(t2, s1, strlen(s1), NULL, &err), 0);
			s2 = save_string(t2, NULL, &rc);
			CHECK_INT(rc, 0);
			CHECK(!strcmp(s1, s2));
			free(orig);
			free(canon);
			free(s1);
			free(s2);
			teardown(t);
			teardown(t2);
		}
}

TEST(subtree_save_is_the_device_and_its_parents)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	const char *input1 = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/"
			     "0003:046D:C077.0001/input/input1";
	const char *event1 = "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/"
			     "0003:046D:C077.0001/input/input1/event1";
	char *s, *s2;
	int rc;

	CHECK_INT(load(t, MOUSE, &err), 0);
	s = save_string(t, input1, &rc);
	CHECK_INT(rc, 0);
	CHECK_INT(count_devices(s), 6);
	CHECK(strstr(s, "P: /devices/pci0000:00/0000:00:14.0\n") != NULL);
	CHECK(!strstr(s, "event1\n"));
	free(s);
	s = save_string(t, "/devices/nothing/here", &rc);
	CHECK_INT(rc, -ENOENT);
	free(s);
	/* named by its DEVPATH in the class layout (what its events say): the same record */
	s = save_string(t, "/class/input/input1/event1", &rc);
	CHECK_INT(rc, 0);
	s2 = save_string(t, event1, &rc);
	CHECK_INT(rc, 0);
	CHECK_INT(count_devices(s), 7);
	CHECK_STR(s, s2);
	free(s);
	free(s2);
	s = save_string(t, "/class/input/event1", &rc);	/* not its DEVPATH */
	CHECK_INT(rc, -ENOENT);
	free(s);
	s = save_string(t, "/class/input/input1/nothing", &rc);
	CHECK_INT(rc, -ENOENT);
	free(s);
	teardown(t);
}

TEST(add_events_once_parents_first)
{
	list_recordings();
	for (size_t i = 0; i < nrec; i++) {
		struct classfs_record_error err;
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		struct evlog *log = calloc(1, sizeof(*log));
		size_t len;
		char *orig = slurp(recordings[i], &len);
		int id = classfs_listener_add(t, on_event, log);

		CHECK_INT(load(t, recordings[i], &err), 0);
		CHECK_INT(log->n, (int)count_devices(orig));
		for (int k = 0; k < log->n; k++) {
			char want[600];

			CHECK_INT(log->action[k], CLASSFS_ACTION_ADD);
			/* DEVPATH is the recorded path in this layout */
			snprintf(want, sizeof(want), "P: %s\n", log->devpath[k]);
			CHECK(strstr(orig, want) != NULL);
			CHECK(log->subsystem[k][0] != '\0');
			/* no later event is an ancestor of this one */
			for (int j = k + 1; j < log->n; j++) {
				size_t n = strlen(log->devpath[j]);

				CHECK(!(strncmp(log->devpath[j], log->devpath[k], n) == 0 &&
					log->devpath[k][n] == '/'));
			}
		}
		classfs_listener_remove(t, id);
		free(orig);
		free(log);
		teardown(t);
	}
}

struct bad_case {
	const char *text;
	unsigned long line;
	const char *reason;	/* a substring of the reason */
	bool class_only;	/* the devices layout takes the recorded paths: loads there */
};

static const struct bad_case bad_cases[] = {
	{ "P: /devices/a\nX: foo=bar\n", 2, "unknown tag", false },
	{ "E: A=b\nP: /devices/a\n", 1, "before the first P:", false },
	{ "P: /devices/a\nE: A=b\n\nE: C=d\n", 4, "outside a device", false },
	{ "P: /sys/devices/a\n", 1, "not under /devices/", false },
	{ "P: /dev/a\n", 1, "not under /devices/", false },
	{ "P: /devices/a/../b\n", 1, "'..'", false },
	{ "P: /devices/a//b\n", 1, "empty", false },
	{ "P: /devices/a\nE: SUBSYSTEM=pci\n\nP: /devices/a/b\nH: config=0G\n", 5, "bad hex", false },
	{ "P: /devices/a\nH: config=ABC\n", 2, "bad hex", false },
	{ "P: /devices/a\nN: bus/usb/001/001=XY\n", 2, "bad hex", false },
	{ "P: /devices/a\n\nP: /devices/b\n\nP: /devices/a\n", 5, "duplicate device", false },
	{ "P: /devices/a\nA: x=abc\\\n", 2, "ends inside an escape", false },
	{ "P: /devices/a\nA: x=abc\\x\n", 2, "ends inside an escape", false },
	{ "P: /devices/a\nA: x=a\\qb\n", 2, "unknown escape", false },
	{ "P: /devices/a\nA: x=a\0b\n", 2, "NUL byte", false },
	{ "\x7f\x45LF\x02\x01\x01\0\0\0", 1, "control character", false },
	{ "P: /devices/a\nA: x=1\nA: x=2\n", 3, "duplicate attribute", false },
	{ "P: /devices/a\nA: noequals\n", 2, "without '='", false },
	{ "P: /devices/a\nA: ../x=1\n", 2, "invalid attribute name", false },
	{ "P: /devices/a\nL: driver=\n", 2, "without a target", false },
	{ "P:/devices/a\n", 1, "no space", false },
	{ "", 0, "no device", false },
	{ "P: /devices/a\nA: dev=x:y\n", 2, "MAJOR:MINOR", false },
	{ "P: /devices/virtual/foo\nE: SUBSYSTEM=foo\n", 1, "/devices/virtual", true },
	/* a class device right below /devices goes in /devices/virtual/block/ */
	{ "P: /devices/a\nE: SUBSYSTEM=block\n\nP: /devices/a/b\n", 4,
	  "physical device /devices/a/b would be below /devices/a, which goes in /devices/virtual",
	  true },
};

/* lengths: the NUL cases need their true length */
static size_t case_len(const struct bad_case *c)
{
	if (strstr(c->reason, "NUL"))
		return strlen(c->text) + 1 + strlen(c->text + strlen(c->text) + 1);
	if (strstr(c->reason, "control"))
		return 10;
	return strlen(c->text);
}

TEST(malformed_records_are_refused_and_change_nothing)
{
	for (int layout = 0; layout < 2; layout++) {
		struct classfs_tree *t = classfs_tree_new(layout);
		struct classfs_record_error err;
		struct evlog *log = calloc(1, sizeof(*log));
		int id;
		size_t base;
		uint64_t seq;

		/* something already there, to see that it stays */
		CHECK_INT(load(t, SPI, &err), 0);
		base = classfs_tree_node_count(t);
		seq = classfs_tree_seqnum(t);
		id = classfs_listener_add(t, on_event, log);
		for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
			const struct bad_case *c = &bad_cases[i];
			struct classfs_record_options opt = { .filename = "bad.umockdev" };
			int r;

			if (c->class_only && layout == CLASSFS_LAYOUT_DEVICES)
				continue;
			r = classfs_record_load(t, c->text, case_len(c), &opt, &err);

			CHECK_INT(r, -EINVAL);
			CHECK_STR(err.file, "bad.umockdev");
			CHECK_INT(err.line, c->line);
			if (!strstr(err.reason, c->reason)) {
				fprintf(stderr, "  case %zu: reason \"%s\", expected \"%s\"\n", i,
					err.reason, c->reason);
				CHECK(!"reason");
			}
			CHECK_INT(classfs_tree_node_count(t), base);
		}
		/* a record whose devices are already there: built, then undone */
		CHECK_INT(load(t, SPI, &err), -EEXIST);
		CHECK(strstr(err.reason, "already in the tree") != NULL);
		/* the first device already there, parents first: the last paragraph */
		CHECK_INT(err.line, last_paragraph_line(SPI));
		CHECK_INT(classfs_tree_node_count(t), base);
		/* a record that clashes only at its last device: all undone */
		{
			size_t len;
			char *kbd = slurp(MOUSE, &len);
			char *both = malloc(len + 512);
			unsigned long lines = 0;

			for (size_t k = 0; k < len; k++)
				lines += kbd[k] == '\n';
			/* the deepest device's attribute clashes with its subsystem link */
			snprintf(both, len + 512, "%s\nP: /devices/pci0000:00/0000:00:14.0/usb1/1-2/"
				 "1-2:1.0/0003:046D:C077.0001/input/input1/event1/zz\n"
				 "E: SUBSYSTEM=pci\nA: subsystem=x\n", kbd);
			CHECK_INT(classfs_record_load(t, both, strlen(both), NULL, &err), -EEXIST);
			CHECK(strstr(err.reason, "attribute 'subsystem'") != NULL);
			CHECK_INT(err.line, lines + 4);	/* its A: subsystem line */
			CHECK_INT(classfs_tree_node_count(t), base);
			free(kbd);
			free(both);
		}
		CHECK_INT(log->n, 0);
		CHECK_INT(classfs_tree_seqnum(t), seq);
		classfs_listener_remove(t, id);
		free(log);
		teardown(t);
	}
}

/*
 * @text is refused at @line for @reason, and nothing changes: in both
 * layouts, or (@class_only) in the class layout, which places devices by
 * its own rules, and then it loads in the devices layout, which takes the
 * recorded paths as they are.
 */
static void refused_in(const char *text, size_t len, unsigned long line, const char *reason,
		       bool class_only)
{
	for (int layout = 0; layout < 2; layout++) {
		if (class_only && layout == CLASSFS_LAYOUT_DEVICES) {
			struct classfs_tree *t = classfs_tree_new(layout);
			struct classfs_record_error err;

			CHECK_INT(classfs_record_load(t, text, len, NULL, &err), 0);
			teardown(t);
			continue;
		}
		struct classfs_tree *t = classfs_tree_new(layout);
		struct classfs_record_error err;
		size_t nodes = classfs_tree_node_count(t);

		CHECK_INT(classfs_record_load(t, text, len, NULL, &err), -EINVAL);
		CHECK_INT(err.line, line);
		if (!strstr(err.reason, reason)) {
			fprintf(stderr, "  reason \"%s\", expected \"%s\"\n", err.reason, reason);
			CHECK(!"reason");
		}
		CHECK_INT(classfs_tree_node_count(t), nodes);
		CHECK_INT(classfs_tree_seqnum(t), 0);
		teardown(t);
	}
}

static void refused(const char *text, size_t len, unsigned long line, const char *reason)
{
	refused_in(text, len, line, reason, false);
}

/*
 * One path both a device and a glue directory: the order of the record
 * does not decide (physical devices are placed first), and a true
 * contradiction is refused.  Found by the record fuzzer.
 */
TEST(glue_directory_or_device)
{
	static const char *const orders[] = {
		"P: /devices/a/block/sda1\nE: SUBSYSTEM=block\nA: dev=8:1\n\n"
		"P: /devices/a/block/sda\n",
		"P: /devices/a/block/sda\n\n"
		"P: /devices/a/block/sda1\nE: SUBSYSTEM=block\nA: dev=8:1\n",
	};
	static const char *const contradictions[] = {
		"P: /devices/a/block/sda1\nE: SUBSYSTEM=block\n\n"
		"P: /devices/a/block/x/block/sda2\nE: SUBSYSTEM=block\n",
		/* sdb, right below /devices/a, would go in the glue directory a/block */
		"P: /devices/a/block/sda\n\n"
		"P: /devices/a/sdb\nE: SUBSYSTEM=block\n",
	};

	for (int layout = 0; layout < 2; layout++) {
		for (size_t i = 0; i < 2; i++) {
			struct classfs_tree *t = classfs_tree_new(layout);
			struct classfs_record_options opt = { .warning = on_warning };
			struct classfs_record_error err;
			struct classfs_device *dev;
			char path[PATH_MAX];
			const char *want;

			CHECK_INT(classfs_record_load(t, orders[i], strlen(orders[i]), &opt, &err), 0);
			/*
			 * Class layout: "block" is the plain device; sda1 sits in
			 * its own glue directory.  Devices layout: sda1 is where it
			 * was recorded, "block" a plain directory.
			 */
			want = layout == CLASSFS_LAYOUT_CLASS ? "/devices/a/block/block/sda1"
							      : "/devices/a/block/sda1";
			dev = classfs_tree_find_device(t, want);
			CHECK(dev != NULL);
			if (dev) {
				CHECK(classfs_device_syspath(dev, path, sizeof(path)) > 0);
				CHECK_STR(path, want);
				CHECK(layout == CLASSFS_LAYOUT_CLASS ? dev->phys != NULL : !dev->phys);
				classfs_device_put(dev);
			}
			teardown(t);
		}
	}
	for (size_t i = 0; i < 2; i++)
		refused_in(contradictions[i], strlen(contradictions[i]), i ? 3 : 1,
			   "/devices/a/block is both a device and the 'block' glue directory", true);
}

/* an event over the limits, or a path too deep, refuses the whole record */
TEST(oversized_event_refuses_the_record)
{
	size_t size = 8192, n;
	char *text = malloc(size);

	n = (size_t)snprintf(text, size, "P: /devices/a\nE: SUBSYSTEM=pci\n\n"
			     "P: /devices/a/block/sda\nE: SUBSYSTEM=block\nA: dev=8:0\n"
			     "E: DEVNAME=/dev");
	for (int k = 0; k < 250; k++)
		n += (size_t)snprintf(text + n, size - n, "/xxxxxxx");
	n += (size_t)snprintf(text + n, size - n, "\n");
	refused(text, n, 4, "uevent limits");
	/* deeper than the core's paths allow: refused at its P: line */
	n = (size_t)snprintf(text, size, "P: /devices/a\n\nP: /devices");
	for (int k = 0; k < 70; k++)
		n += (size_t)snprintf(text + n, size - n, "/d%d", k);
	n += (size_t)snprintf(text + n, size - n, "\n");
	refused(text, n, 3, "71 components, more than 60");
	/* 60 components recorded, 61 once a glue directory is added: refused too */
	n = (size_t)snprintf(text, size, "P: /devices");
	for (int k = 0; k < 58; k++)
		n += (size_t)snprintf(text + n, size - n, "/d%d", k);
	n += (size_t)snprintf(text + n, size - n, "/sdx\nE: SUBSYSTEM=block\n");
	refused_in(text, n, 1, "path would have 61 components, more than 60", true);
	free(text);
}

TEST(links_recomputed_or_kept)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	char buf[4096];
	ssize_t n;

	warnings = 0;
	CHECK_INT(load(t, MOUSE, &err), 0);
	/* the port link points at an interface not in the record: kept, warned */
	CHECK(warnings >= 1);
	n = classfs_path_readlink(t, "devices/pci0000:00/0000:00:14.0/usb1/1-2/port", buf,
				  sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "../1-0:1.0/usb1-port2");
	/* event1's device link points at input1 in this layout */
	n = classfs_path_readlink(t, "class/input/input1/event1/device", buf, sizeof(buf) - 1);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "../../input1");
	/* and the PCI controller's driver link */
	n = classfs_path_readlink(t, "devices/pci0000:00/0000:00:14.0/driver", buf,
				  sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "../../../bus/pci/drivers/xhci_hcd");
	teardown(t);
}

struct nodes {
	int n;
	bool event1, usb;
};

static int on_node(const struct classfs_record_node *node, void *data)
{
	struct nodes *s = data;

	s->n++;
	if (!strcmp(node->devname, "/dev/input/event1")) {
		s->event1 = !node->block && node->devt == makedev(13, 65) && node->nsymlinks == 2 &&
			    !strcmp(node->symlinks[0],
				    "input/by-id/usb-Logitech_USB_Optical_Mouse-event-mouse") &&
			    !node->contents;
	}
	if (!strcmp(node->devname, "/dev/bus/usb/001/002"))
		s->usb = node->devt == makedev(189, 1) && node->contents_len == 52 &&
			 node->contents[0] == 0x12 && node->contents[51] == 0x0A;
	return 0;
}

TEST(nodes_for_dev)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct nodes s = { 0 };

	CHECK_INT(load(t, MOUSE, &err), 0);
	CHECK_INT(classfs_record_for_each_node(t, on_node, &s), 0);
	CHECK_INT(s.n, 3);	/* event1 and two USB devices */
	CHECK(s.event1);
	CHECK(s.usb);
	teardown(t);
}

static char *read_file(const char *dir, const char *name)
{
	char path[PATH_MAX], *buf = calloc(1, 65536);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f) {
		free(buf);
		return NULL;
	}
	if (fread(buf, 1, 65535, f) == 0)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

TEST(udev_database_export)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	char dir[] = "/tmp/classfs-udevdb.XXXXXX", *s;
	DIR *d;
	struct dirent *e;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(load(t, MOUSE, &err), 0);
	CHECK_INT(classfs_record_export_udevdb(t, dir), 0);
	s = read_file(dir, "c13:65");
	CHECK(s != NULL);
	if (s) {
		CHECK(strstr(s, "E:ID_INPUT_MOUSE=1\n") && strstr(s, "E:ID_INPUT=1\n"));
		CHECK(strstr(s, "S:input/by-id/usb-Logitech_USB_Optical_Mouse-event-mouse\n") != NULL);
		CHECK(!strstr(s, "DEVLINKS"));
	}
	free(s);
	s = read_file(dir, "+input:input1");
	CHECK(s && strstr(s, "G:seat\n") && strstr(s, "E:ID_FOR_SEAT="));
	free(s);
	s = read_file(dir, "c189:1");
	CHECK(s && strstr(s, "E:ID_MODEL_FROM_DATABASE=M105 Optical Mouse\n"));
	free(s);
	s = read_file(dir, "+pci:0000:00:14.0");
	CHECK(s && strstr(s, "E:PCI_SLOT_NAME=0000:00:14.0\n"));
	free(s);
	/* clean up the folder */
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char p[PATH_MAX];

		if (e->d_name[0] == '.' && (!e->d_name[1] || e->d_name[1] == '.'))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	CHECK_INT(rmdir(dir), 0);
	CHECK_INT(classfs_record_export_udevdb(t, "/nonexistent/dir"), -ENOENT);
	teardown(t);
}

static ssize_t api_show(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			char *buf)
{
	return sprintf(buf, "hello\n");
}

static const struct classfs_device_attribute api_attr = {
	.attr = { .name = "greeting", .mode = 0444 },
	.show = api_show,
};

TEST(api_devices_are_saved_from_the_tree)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS), *t2;
	struct classfs_class *cls = classfs_class_create(t, "misc");
	struct classfs_device *dev = classfs_device_create(cls, NULL, makedev(10, 200), NULL, NULL,
							   "thing");
	char *s, *s2;
	int rc;

	CHECK(dev != NULL);
	CHECK_INT(classfs_device_create_file(dev, &api_attr), 0);
	s = save_string(t, NULL, &rc);
	CHECK_INT(rc, 0);
	CHECK(strstr(s, "P: /devices/virtual/misc/thing\n") != NULL);
	CHECK(strstr(s, "E: SUBSYSTEM=misc\n") && strstr(s, "E: MAJOR=10\n"));
	CHECK(strstr(s, "E: DEVNAME=/dev/thing\n") && strstr(s, "N: thing\n"));
	CHECK(strstr(s, "A: greeting=hello\\n\n") != NULL);
	/* and it loads back as a recorded device */
	t2 = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	CHECK_INT(classfs_record_load(t2, s, strlen(s), NULL, &err), 0);
	s2 = save_string(t2, NULL, &rc);
	CHECK_STR(s2, s);
	free(s);
	free(s2);
	teardown(t2);
	classfs_device_unregister(dev);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

static void on_progress(size_t done, size_t total, void *data)
{
	size_t *last = data;

	CHECK(done <= total && done >= last[0]);
	last[0] = done;
	last[1] = total;
}

TEST(progress_and_misplaced_devices)
{
	static const char rec[] = "P: /devices/platform/serial8250/ttyS0\nE: SUBSYSTEM=tty\n\n"
				  "P: /devices/platform/serial8250\nE: SUBSYSTEM=platform\n";

	for (int layout = 0; layout < 2; layout++) {
		struct classfs_tree *t = classfs_tree_new(layout);
		struct classfs_record_error err;
		size_t last[2] = { 0, 0 };
		struct classfs_record_options opt = { .filename = "tty.umockdev",
						      .progress = on_progress,
						      .progress_data = last, .warning = on_warning };
		struct classfs_device *dev;
		char path[PATH_MAX];
		bool exact = layout == CLASSFS_LAYOUT_DEVICES;

		warnings = 0;
		CHECK_INT(classfs_record_load(t, rec, sizeof(rec) - 1, &opt, &err), 0);
		/*
		 * Class layout: 3 devices, the two recorded and /devices/platform;
		 * a class device without glue directory goes where the layout puts
		 * it, warned.  Devices layout: at the recorded paths, platform a
		 * plain directory.
		 */
		CHECK_INT(last[0], exact ? 2 : 3);
		CHECK_INT(last[1], exact ? 2 : 3);
		CHECK_INT(warnings, exact ? 0 : 1);
		dev = classfs_tree_find_device(t, exact ? "/devices/platform/serial8250/ttyS0"
							: "/devices/platform/serial8250/tty/ttyS0");
		CHECK(dev != NULL);
		CHECK(dev && classfs_device_syspath(dev, path, sizeof(path)) > 0);
		classfs_device_put(dev);
		teardown(t);
	}
}

TEST(records_sharing_ancestors_load_together)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	/* (TOKEN has a usb1 of its own: two usb1 on bus usb cannot be, see below) */
	const char *names[] = { MOUSE, SPI };
	char *all = calloc(1, 65536), *canon, *s;
	struct evlog *log = calloc(1, sizeof(*log));
	int id = classfs_listener_add(t, on_event, log), rc, before;

	for (int i = 0; i < 2; i++) {
		size_t len;
		char *data = slurp(names[i], &len);

		before = log->n;
		CHECK_INT(load(t, names[i], &err), 0);
		CHECK_INT(log->n - before, (int)count_devices(data));
		strcat(all, data);
		strcat(all, "\n");
		free(data);
	}
	/* /devices/pci0000:00 is one plain device, made once, never saved */
	s = save_string(t, NULL, &rc);
	canon = canonical(all);
	CHECK_INT(rc, 0);
	CHECK(s && !strcmp(s, canon));
	/* a bus device name already on its bus: refused while building, undone */
	{
		size_t base = classfs_tree_node_count(t);

		before = log->n;
		CHECK_INT(load(t, TOKEN, &err), -EEXIST);
		CHECK(strstr(err.reason, "/usb1: File exists") != NULL);
		CHECK_INT(classfs_tree_node_count(t), base);
		CHECK_INT(log->n, before);
	}
	classfs_listener_remove(t, id);
	free(s);
	free(canon);
	free(all);
	free(log);
	teardown(t);
}

/* a record of a partition after the record of its virtual disk: nested in it */
TEST(virtual_class_device_of_the_tree_holds_a_later_records_child)
{
	static const char disk[] = "P: /devices/virtual/block/loop0\n"
				   "E: SUBSYSTEM=block\nE: DEVTYPE=disk\nA: dev=7:0\n";
	static const char part[] = "P: /devices/virtual/block/loop0/loop0p1\n"
				   "E: SUBSYSTEM=block\nE: DEVTYPE=partition\nA: dev=259:0\n";
	static const char orphan[] = "P: /devices/virtual/block/loop9/loop9p1\n"
				     "E: SUBSYSTEM=block\nA: dev=259:9\n";
	struct classfs_record_options opt = { .filename = "part", .warning = on_warning };
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	struct classfs_stat st;
	char buf[256];
	size_t base;
	ssize_t n;

	CHECK_INT(classfs_record_load(t, disk, sizeof(disk) - 1, &opt, &err), 0);
	CHECK_INT(classfs_record_load(t, part, sizeof(part) - 1, &opt, &err), 0);
	CHECK_INT(classfs_path_stat(t, "devices/virtual/block/loop0/loop0p1", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_DIR);
	n = classfs_path_read(t, "devices/virtual/block/loop0/loop0p1/uevent", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "DEVTYPE=partition") != NULL);
	/* the same record again: the device is there, nothing changes */
	base = classfs_tree_node_count(t);
	CHECK_INT(classfs_record_load(t, part, sizeof(part) - 1, &opt, &err), -EEXIST);
	CHECK_INT(classfs_tree_node_count(t), base);
	/* a parent neither recorded nor in the tree: a plain directory in this layout */
	CHECK_INT(classfs_record_load(t, orphan, sizeof(orphan) - 1, &opt, &err), 0);
	CHECK_INT(classfs_path_stat(t, "devices/virtual/block/loop9/loop9p1/uevent", &st), 0);
	CHECK_INT(classfs_path_stat(t, "devices/virtual/block/loop9/uevent", &st), -ENOENT);
	teardown(t);

	/* the class layout places it by class: its parent can only be refused */
	t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	base = classfs_tree_node_count(t);
	CHECK_INT(classfs_record_load(t, orphan, sizeof(orphan) - 1, &opt, &err), -EINVAL);
	CHECK(strstr(err.reason, "under /devices/virtual") != NULL);
	CHECK_INT(classfs_tree_node_count(t), base);
	teardown(t);
}

/* fail the Nth allocation of the library during a load: all or nothing */
static long alloc_budget = -1;

static bool alloc_hook(size_t size, void *data)
{
	if (alloc_budget < 0)
		return true;
	return alloc_budget-- > 0;
}

TEST(allocation_failures_leave_nothing)
{
	size_t len;
	char *data = slurp(SPI, &len);
	int ok = 0, failed = 0;

	for (long n = 0; n < 5000 && !ok; n++) {
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		struct classfs_record_error err;
		struct evlog *log = calloc(1, sizeof(*log));
		int id = classfs_listener_add(t, on_event, log), r;
		size_t base = classfs_tree_node_count(t);

		classfs_set_alloc_hook(alloc_hook, NULL);
		alloc_budget = n;
		r = classfs_record_load(t, data, len, NULL, &err);
		alloc_budget = -1;
		classfs_set_alloc_hook(NULL, NULL);
		if (r == 0) {
			ok = 1;
			CHECK_INT(log->n, (int)count_devices(data));
		} else {
			failed++;
			CHECK_INT(r, -ENOMEM);
			CHECK_INT(classfs_tree_node_count(t), base);
			/* nothing heard, or every ADD taken back by its REMOVE */
			CHECK(log->n % 2 == 0);
			for (int k = 0; k < log->n / 2; k++) {
				CHECK_INT(log->action[k], CLASSFS_ACTION_ADD);
				CHECK_INT(log->action[log->n - 1 - k], CLASSFS_ACTION_REMOVE);
				CHECK_STR(log->devpath[k], log->devpath[log->n - 1 - k]);
			}
		}
		classfs_listener_remove(t, id);
		free(log);
		teardown(t);
	}
	CHECK(ok);
	CHECK(failed >= 10);
	if (failed < 10)
		fprintf(stderr, "  only %d failing allocations\n", failed);
	free(data);
}

/*
 * Text attributes of loaded devices are the groups of a type shared by
 * the devices recorded with the same attributes (a shape), their bytes
 * kept with each device: read, written (a longer value grows out of the
 * device's allocation), saved as written, each device's own.  Attributes
 * a shape cannot hold (deeper paths, a link in their directory) are value
 * nodes and read the same.
 */
static const char shaped[] =
	"P: /devices/pci0000:00/0000:00:01.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: device=0x1234\\n\n"
	"A: power/control=auto\\n\n"
	"A: power/wakeup=disabled\\n\n"
	"A: vendor=0x8086\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:01.0/block/sda\n"
	"N: sda\n"
	"E: DEVNAME=/dev/sda\n"
	"E: DEVTYPE=disk\n"
	"E: SUBSYSTEM=block\n"
	"A: dev=8:0\\n\n"
	"A: removable=0\\n\n"
	"A: size=100\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:01.0/block/sda/sda1\n"
	"N: sda1\n"
	"E: DEVNAME=/dev/sda1\n"
	"E: DEVTYPE=partition\n"
	"E: SUBSYSTEM=block\n"
	"A: dev=8:1\\n\n"
	"A: partition=1\\n\n"
	"A: size=50\\n\n"
	"A: start=2048\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:01.0/block/sda/sda2\n"
	"N: sda2\n"
	"E: DEVNAME=/dev/sda2\n"
	"E: DEVTYPE=partition\n"
	"E: SUBSYSTEM=block\n"
	"A: dev=8:2\\n\n"
	"A: start=4096\\n\n"
	"A: partition=2\\n\n"
	"A: size=40\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:02.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: queue/iosched/quantum=4\\n\n"
	"A: vendor=0x1\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:03.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: power/control=on\\n\n"
	"L: power/supplier=../../0000:00:01.0\n"
	"\n";

static void check_read(struct classfs_tree *t, const char *path, const char *want)
{
	char buf[4096];
	ssize_t n = classfs_path_read(t, path, buf, sizeof(buf) - 1);

	CHECK(n >= 0);
	buf[n > 0 ? n : 0] = '\0';
	if (strcmp(buf, want))
		fprintf(stderr, "  %s: \"%s\", expected \"%s\"\n", path, buf, want);
	CHECK_STR(buf, want);
}

TEST(shaped_attributes_are_each_devices_own)
{
	static const char *const pci1 = "devices/pci0000:00/0000:00:01.0";
	char longer[300], *saved;
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	struct classfs_device *p1, *p2;
	struct classfs_stat st;
	char path[256];
	int rc;

	CHECK_INT(classfs_record_load(t, shaped, sizeof(shaped) - 1, NULL, &err), 0);
	/* partitions recorded with the same attributes share one type */
	p1 = classfs_tree_find_device(t, "/devices/pci0000:00/0000:00:01.0/block/sda/sda1");
	p2 = classfs_tree_find_device(t, "/devices/pci0000:00/0000:00:01.0/block/sda/sda2");
	CHECK(p1 && p2);
	CHECK(p1 && p2 && p1->type == p2->type && p1->type->groups);
	CHECK_STR(p1 && p1->type ? p1->type->name : "", "partition");
	classfs_device_put(p1);
	classfs_device_put(p2);

	snprintf(path, sizeof(path), "%s/block/sda/sda1/size", pci1);
	check_read(t, path, "50\n");
	snprintf(path, sizeof(path), "%s/block/sda/sda2/size", pci1);
	check_read(t, path, "40\n");
	snprintf(path, sizeof(path), "%s/block/sda/sda2/start", pci1);
	check_read(t, path, "4096\n");
	snprintf(path, sizeof(path), "%s/device", pci1);
	check_read(t, path, "0x1234\n");
	snprintf(path, sizeof(path), "%s/power/wakeup", pci1);
	check_read(t, path, "disabled\n");
	CHECK_INT(classfs_path_stat(t, path, &st), 0);
	CHECK_INT(st.mode & 07777, 0644);
	/* the fallbacks: a deeper path, a link beside the attribute */
	check_read(t, "devices/pci0000:00/0000:00:02.0/queue/iosched/quantum", "4\n");
	check_read(t, "devices/pci0000:00/0000:00:03.0/power/control", "on\n");
	CHECK(classfs_path_readlink(t, "devices/pci0000:00/0000:00:03.0/power/supplier", path,
				    sizeof(path)) > 0);

	/* written: longer (its own buffer), then shorter; the other partition keeps its own */
	memset(longer, '7', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/block/sda/sda1/size", pci1);
	CHECK_INT(classfs_path_write(t, path, longer, strlen(longer)), (ssize_t)strlen(longer));
	check_read(t, path, longer);
	CHECK_INT(classfs_path_write(t, path, "60\n", 3), 3);
	check_read(t, path, "60\n");
	snprintf(path, sizeof(path), "%s/block/sda/sda2/size", pci1);
	check_read(t, path, "40\n");
	snprintf(path, sizeof(path), "%s/power/control", pci1);
	CHECK_INT(classfs_path_write(t, path, "on\n", 3), 3);

	/* past a shape's limits: 13 directories, 300 attributes in one; value nodes */
	{
		struct classfs_tree *t2 = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		size_t size = 64 * 1024, off = 0;
		char *rec = malloc(size);

		off += (size_t)snprintf(rec + off, size - off,
					"P: /devices/platform/many\nE: SUBSYSTEM=platform\n");
		for (int i = 0; i < 13; i++)
			off += (size_t)snprintf(rec + off, size - off, "A: d%d/a=%d\n", i, i);
		off += (size_t)snprintf(rec + off, size - off,
					"\nP: /devices/platform/wide\nE: SUBSYSTEM=platform\n");
		for (int i = 0; i < 300; i++)
			off += (size_t)snprintf(rec + off, size - off, "A: x/a%d=%d\n", i, i);
		CHECK_INT(classfs_record_load(t2, rec, off, NULL, &err), 0);
		check_read(t2, "devices/platform/many/d12/a", "12");
		check_read(t2, "devices/platform/wide/x/a299", "299");
		free(rec);
		teardown(t2);
	}

	/* saved as the tree holds them now */
	saved = save_string(t, NULL, &rc);
	CHECK_INT(rc, 0);
	CHECK(saved && strstr(saved, "A: size=60\\n\n"));
	CHECK(saved && strstr(saved, "A: power/control=on\\n\n"));
	CHECK(saved && strstr(saved, "A: queue/iosched/quantum=4\\n\n"));
	free(saved);
	teardown(t);
}

/* the rule a record's SUBSYSTEM is read by, as programs that write records see it */
TEST(subsystem_is_bus_as_the_loader_reads_it)
{
	static const char *const buses[] = { "pci", "usb", "platform", "scsi", "hid", "i2c" };
	static const char *const classes[] = { "block", "input", "net", "tty", "sound", "",
					       "usbx", "pc" };

	for (size_t i = 0; i < sizeof(buses) / sizeof(buses[0]); i++)
		CHECK(classfs_record_subsystem_is_bus(buses[i]));
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		CHECK(!classfs_record_subsystem_is_bus(classes[i]));
	CHECK(!classfs_record_subsystem_is_bus(NULL));
	/* and a load agrees: a physical device on the bus, a class device */
	{
		struct classfs_tree *tree = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		static const char rec[] = "P: /devices/platform/thing\nE: SUBSYSTEM=platform\n\n"
					  "P: /devices/virtual/tty/ttyX\nE: SUBSYSTEM=tty\n\n";
		struct classfs_stat st;

		CHECK(tree != NULL);
		if (!tree)
			return;
		CHECK_INT(classfs_record_load(tree, rec, sizeof(rec) - 1, NULL, NULL), 0);
		CHECK_INT(classfs_path_stat(tree, "bus/platform/devices/thing", &st), 0);
		CHECK_INT(classfs_path_stat(tree, "class/tty/ttyX", &st), 0);
		classfs_tree_free(tree);
	}
}
