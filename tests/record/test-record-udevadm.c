// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record-udevadm.c - `udevadm info --export-db` sees what a record
 * holds: a recording is loaded, the tree mounted, its udev database
 * exported to a private /run/udev/data, the mount bound over /sys, all in
 * a private mount namespace of a child process (whatever happens, its
 * mounts go with it); once per layout.  The repo's mouse recording
 * (tests/record/data, $RECORD_DATA) always; the keyboard of
 * ../shared/testdata/umockdev ($RECORD_EXTRA_DATA) too when it is there.
 *
 * Needs root (skipped, exit 77, otherwise) and udevadm (package udev).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "classfs/record.h"
#include "udevadm-ns.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* a copy of the paragraph of `udevadm info --export-db` output holding @needle */
static char *paragraph(const char *out, const char *needle)
{
	const char *hit = out ? strstr(out, needle) : NULL, *start, *end;

	if (!hit)
		return NULL;
	for (start = hit; start > out + 1 && !(start[-1] == '\n' && start[-2] == '\n'); start--)
		;
	end = strstr(hit, "\n\n");
	return strndup(start, end ? (size_t)(end - start + 1) : strlen(start));
}

static int expect(const char *para, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "%s\n", line);
	if (para && strstr(para, want))
		return 0;
	fprintf(stderr, "  missing \"%s\"\n", line);
	return 1;
}

/* what `udevadm info --export-db` must show of one recording */
struct recording {
	const char *dir_env;	/* the folder's environment variable */
	const char *file;
	const char *node;	/* the input event node's N: line */
	const char *props[6];	/* its paragraph's lines (NULL: no more) */
	const char *devpath;	/* its P: line in the devices layout */
	const char *usb_node;	/* a USB device's N: line */
	const char *usb_model;	/* a line of its paragraph */
	const char *pci_slot;	/* the PCI controller's PCI_SLOT_NAME line */
	const char *pci_driver;	/* a line of its paragraph */
};

static const struct recording recordings[] = {
	{
		.dir_env = "RECORD_DATA",
		.file = "usb-mouse.umockdev",
		.node = "N: input/event1\n",
		.props = { "E: SUBSYSTEM=input", "E: DEVNAME=/dev/input/event1", "E: MAJOR=13",
			   "E: ID_INPUT_MOUSE=1",
			   "S: input/by-id/usb-Logitech_USB_Optical_Mouse-event-mouse" },
		.devpath = "P: /devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/"
			   "0003:046D:C077.0001/input/input1/event1",
		.usb_node = "N: bus/usb/001/002\n",
		.usb_model = "E: ID_MODEL_FROM_DATABASE=M105 Optical Mouse",
		.pci_slot = "E: PCI_SLOT_NAME=0000:00:14.0\n",
		.pci_driver = "E: DRIVER=xhci_hcd",
	},
	{
		.dir_env = "RECORD_EXTRA_DATA",
		.file = "usbkbd.umockdev",
		.node = "N: input/event5\n",
		.props = { "E: SUBSYSTEM=input", "E: DEVNAME=/dev/input/event5", "E: MAJOR=13",
			   "E: ID_INPUT_KEYBOARD=1", "E: XKBLAYOUT=us",
			   "S: input/by-id/usb-05f3_0007-event-kbd" },
		.devpath = "P: /devices/pci0000:00/0000:00:1a.0/usb1/1-1/1-1.5/"
			   "1-1.5.4/1-1.5.4.2/1-1.5.4.2:1.0/input/input5/event5",
		.usb_node = "N: bus/usb/001/009\n",
		.usb_model = "E: ID_MODEL_FROM_DATABASE=Kinesis Advantage PRO MPC/USB Keyboard",
		.pci_slot = "E: PCI_SLOT_NAME=0000:00:1a.0\n",
		.pci_driver = "E: DRIVER=ehci-pci",
	},
};

/* in the child: everything in a private mount namespace */
static int run(enum classfs_layout layout, const char *record, const struct recording *rec)
{
	struct classfs_record_error err;
	struct classfs_tree *t = classfs_tree_new(layout);
	struct ns_sys ns;
	char *data, *out, *para;
	size_t len;
	int fails = 0, r;

	if (ns_private() < 0)
		return 1;
	data = slurp(record, &len);
	if (!data) {
		fprintf(stderr, "  cannot read %s\n", record);
		return 1;
	}
	r = classfs_record_load(t, data, len, NULL, &err);
	free(data);
	if (r < 0) {
		fprintf(stderr, "  load: %d %s:%lu: %s\n", r, err.file, err.line, err.reason);
		return 1;
	}
	if (ns_sys_bind(t, &ns) < 0) {
		ns_sys_unbind(&ns);
		return 1;
	}
	out = ns_run("udevadm info --export-db 2>&1", &r);
	if (r != 0) {
		fprintf(stderr, "  udevadm info --export-db: status %d\n%s", r, out);
		fails++;
	}

	/* the event node: the udev database's properties, devlinks, the kernel's keys */
	para = paragraph(out, rec->node);
	for (size_t i = 0; i < sizeof(rec->props) / sizeof(rec->props[0]) && rec->props[i]; i++)
		fails += expect(para, rec->props[i]);
	if (layout == CLASSFS_LAYOUT_DEVICES)
		fails += expect(para, rec->devpath);
	free(para);
	/* a USB device (a bus device with a node) and the PCI controller */
	para = paragraph(out, rec->usb_node);
	fails += expect(para, "E: SUBSYSTEM=usb");
	fails += expect(para, "E: DEVTYPE=usb_device");
	fails += expect(para, "E: DRIVER=usb");
	fails += expect(para, rec->usb_model);
	free(para);
	para = paragraph(out, rec->pci_slot);
	fails += expect(para, "E: SUBSYSTEM=pci");
	fails += expect(para, rec->pci_driver);
	fails += expect(para, "E: ID_VENDOR_FROM_DATABASE=Intel Corporation");
	free(para);
	if (fails)
		fprintf(stderr, "  udevadm output:\n%s", out ? out : "");
	free(out);
	ns_sys_unbind(&ns);
	classfs_record_unload(t);
	classfs_tree_free(t);
	return fails ? 1 : 0;
}

int main(void)
{
	char record[PATH_MAX];
	int failed = 0, ran = 0;

	int unavailable = udevadm_ns_unavailable();

	if (unavailable >= 0)
		return unavailable;
	for (size_t i = 0; i < sizeof(recordings) / sizeof(recordings[0]); i++) {
		const struct recording *rec = &recordings[i];
		const char *dir = getenv(rec->dir_env);

		snprintf(record, sizeof(record), "%s/%s", dir ? dir : "", rec->file);
		if (i > 0 && access(record, R_OK) < 0) {
			printf("skip: %s absent\n", record);
			continue;
		}
		for (int layout = 0; layout < 2; layout++) {
			pid_t pid = fork();
			int status = 1;

			if (pid == 0)
				_exit(run(layout, record, rec));
			if (pid < 0 || waitpid(pid, &status, 0) < 0)
				status = 1;
			printf("%s udevadm_export_db_%s %s\n",
			       WIFEXITED(status) && !WEXITSTATUS(status) ? "ok  " : "FAIL",
			       layout ? "devices" : "class", rec->file);
			failed += !(WIFEXITED(status) && !WEXITSTATUS(status));
			ran++;
		}
	}
	printf("%d passed, %d failed\n", ran - failed, failed);
	return failed ? 1 : 0;
}
