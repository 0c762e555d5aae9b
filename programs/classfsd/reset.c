// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reset.c - RESET: the tree as a new daemon's, for a testbed replaced by
 * a new one in an environment that stays (classfs-run --socket, the
 * Python Testbed joining a daemon): every device goes, deepest first
 * with its REMOVE event, then every class and bus, what the record
 * loader made, and every entry made through the filesystem.  The mount,
 * the connections and their subscriptions stay; SEQNUM goes on.
 *
 * Only root and the daemon's own uid (the testbed's user) may: the
 * tree holds other uids' devices, which nobody else may remove.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <classfs/record.h>

#include "daemon.h"

/**
 * cfsd_reset() - return the tree to a new daemon's state
 * @uid: who asks: root or the daemon's uid, else -EACCES
 * @msg: receives why it failed
 * @msgsz: its size
 *
 * Return: 0, -EACCES, -ENOMEM (the devices could not be listed: nothing
 * removed; or the plain entries could not: the devices are gone).
 */
int cfsd_reset(uid_t uid, char *msg, size_t msgsz)
{
	struct cfsd_removal rm;
	int r;

	if (uid != 0 && uid != geteuid()) {
		snprintf(msg, msgsz, "uid %u may not reset the tree: only root and uid %u may",
			 (unsigned int)uid, (unsigned int)geteuid());
		return -EACCES;
	}
	cfsd_removal_init(&rm);
	cfsd_lock();
	r = cfsd_remove_all_devices(&rm, msg, msgsz);
	cfsd_unlock();
	/* without the lock: the tree waits for the calls running on them */
	cfsd_removal_finish(&rm);
	if (r == 0) {
		/* the classes (records' ones only let go of), then the record's own */
		cfsd_registry_clear();
		cfsd_lock();
		(void)classfs_record_unload(cfsd.tree);
		cfsd_unlock();
	}
	if (r == 0) {
		r = classfs_tree_remove_plain(cfsd.tree);
		if (r < 0)
			snprintf(msg, msgsz, "cannot remove the files made: %s", strerror(-r));
	}
	if (r == 0)
		log_info("uid %u reset the tree", (unsigned int)uid);
	return r;
}
