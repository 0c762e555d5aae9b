/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devfs-internal.h - the private /dev and /run/udev of a classfs-run
 * environment, shared by devfs.c (setup, what a device owns there, the
 * snapshot) and devfs-events.c (hotplug).
 *
 * Every node, link and database file made for a device is noted as that
 * device's (by its DEVPATH): a name another device holds is never taken
 * over, and what a device's REMOVE takes away is what was made for that
 * device, not what the event's variables name.
 */
#ifndef CLASSFS_RUN_DEVFS_INTERNAL_H
#define CLASSFS_RUN_DEVFS_INTERNAL_H

#include "run-internal.h"
#include "classfs-internal/record-node.h"

/* what the environment made for one device */
struct devent {
	char *devpath;		/* the device's DEVPATH, as its events give it */
	char *node;		/* its node, relative to /dev; NULL: none */
	bool block;
	dev_t devt;
	char *db;		/* its file in /run/udev/data; NULL: none */
};

/* a recorded `S:` link we made, to remove with the node it points to */
struct devlink {
	char *path;		/* relative to /dev: "disk/by-id/..." */
	char *node;		/* relative to /dev: "sda" */
};

struct cfs_devfs {
	bool verbose;
	int dev_fd;		/* the private /dev */
	int db_fd;		/* /run/udev/data */
	struct classfs_client *req;	/* reads a device's `uevent`; NULL: through /sys */
	void *by_devpath;	/* tsearch() trees of struct devent */
	void *by_node;
	void *by_db;
	struct devlink *links;
	size_t nlinks, clinks;
};

/* the variables a device's own `uevent` file shows (not an event's) */
struct own_vars {
	dev_t devt;		/* 0: no number */
	char devname[PATH_MAX];	/* "" when none */
	mode_t mode;		/* DEVMODE; 0 when none */
	char ifindex[16];	/* "" when none */
};

void cfs_own_vars_parse(const char *text, size_t len, struct own_vars *o);
bool cfs_db_name(const char *subsystem, const char *devpath, bool block, const struct own_vars *o,
		 char *buf, size_t size);

struct devent *cfs_devent_get(struct cfs_devfs *d, const char *devpath, bool create);
void cfs_devent_drop(struct cfs_devfs *d, struct devent *e);
int cfs_devent_refile(struct cfs_devfs *d, struct devent *e, const char *devpath);
const struct devent *cfs_devfs_node_owner(struct cfs_devfs *d, const char *rel);
int cfs_devfs_make_node(struct cfs_devfs *d, struct devent *e, const char *devname, bool block,
			dev_t devt, mode_t mode, const unsigned char *contents, size_t len);
void cfs_devfs_remove_node(struct cfs_devfs *d, struct devent *e);
bool cfs_devfs_claim_db(struct cfs_devfs *d, struct devent *e, const char *name);
bool cfs_devfs_take_db(struct cfs_devfs *d, struct devent *e, const char *name);
void cfs_devfs_remove_db(struct cfs_devfs *d, struct devent *e);
int cfs_devfs_rename_db(struct cfs_devfs *d, struct devent *e, const char *name);

#endif
