// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * udev-send.c - test helper: build a small tree whose listener multicasts
 * every event with classfs_netlink_udev_send(): ADD of block/sda (disk),
 * ADD of input/input0, CHANGE of sda with a TAGS variable, REMOVE of all.
 * With an argument FILE, also prints each event there as
 * classfs_uevent_print_monitor() does, to compare with udevadm's output.
 * Run it only inside a private network namespace (test-udevadm.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classfs/wire.h"

static int sent, failed;
static FILE *text;

static void send_one(const struct classfs_uevent *ev, void *data)
{
	int r = classfs_netlink_udev_send(*(int *)data, ev);

	if (r < 0) {
		fprintf(stderr, "udev-send: %s %s: %s\n", classfs_action_name(ev->action),
			ev->devpath, strerror(-r));
		failed++;
	} else {
		sent++;
	}
	if (text && classfs_uevent_print_monitor(ev, NULL, text) < 0)
		failed++;
}

static const struct classfs_device_type disk = { .name = "disk" };

int main(int argc, char **argv)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *blk, *input;
	struct classfs_device *sda, *in0;
	const char *const tags[] = { "TAGS=:seat:uaccess:", NULL };
	int fd = classfs_netlink_udev_open(), id;

	if (argc > 1 && !(text = fopen(argv[1], "w"))) {
		perror(argv[1]);
		return 1;
	}
	if (fd < 0) {
		fprintf(stderr, "udev-send: socket: %s\n", strerror(-fd));
		return 1;
	}
	if (!t || (id = classfs_listener_add(t, send_one, &fd)) < 0)
		return 1;
	blk = classfs_class_create(t, "block");
	input = classfs_class_create(t, "input");
	sda = classfs_zalloc(sizeof(*sda));
	if (!blk || !input || !sda)
		return 1;
	classfs_device_initialize(sda);
	sda->cls = blk;
	sda->devt = makedev(8, 0);
	sda->type = &disk;
	sda->release = (void (*)(struct classfs_device *))classfs_free;
	if (classfs_device_set_name(sda, "sda") || classfs_device_add(sda))
		return 1;
	in0 = classfs_device_create(input, NULL, 0, NULL, NULL, "input0");
	if (!in0 || classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, tags))
		return 1;
	classfs_class_destroy(blk);
	classfs_class_destroy(input);
	classfs_listener_remove(t, id);
	if (classfs_tree_free(t))
		failed++;
	close(fd);
	printf("sent %d, failed %d\n", sent, failed);
	if (text && fclose(text))
		failed++;
	return failed || sent != 5;
}
