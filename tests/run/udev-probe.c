// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * udev-probe - a small libudev program, the kind of code classfs-run is
 * for: it knows nothing of classfs.  Run it under classfs-run (or
 * umockdev-run, for comparison).
 *
 *   udev-probe summary [--list]
 *       enumerate every device, then each subsystem on its own; read every
 *       device's properties and attributes; check each device node against
 *       the device's number.  Prints what it saw; exit 1 when something
 *       does not hold (no devices, a node missing or of the wrong type or
 *       number, a per-subsystem enumeration that disagrees).
 *   udev-probe monitor READYFILE SUBSYSTEM NAME [TIMEOUT_S]
 *       open a "udev" monitor, write $CLASSFS_SOCKET to READYFILE (so a
 *       script outside knows where to send classctl), then wait for an
 *       add of NAME (its node must exist then, of the right number, and
 *       the device must be initialized; then READYFILE.added is created)
 *       and a remove of it.  Exit 0 when both came in that order, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

struct subsys {
	char name[64];
	unsigned long count;
};

static struct subsys subs[256];
static size_t nsubs;

static void count_subsystem(const char *s)
{
	for (size_t i = 0; i < nsubs; i++)
		if (!strcmp(subs[i].name, s)) {
			subs[i].count++;
			return;
		}
	if (nsubs < sizeof(subs) / sizeof(subs[0])) {
		snprintf(subs[nsubs].name, sizeof(subs[nsubs].name), "%s", s);
		subs[nsubs++].count = 1;
	}
}

static int cmp_subsys(const void *a, const void *b)
{
	return strcmp(((const struct subsys *)a)->name, ((const struct subsys *)b)->name);
}

/* the node of @d agrees with its number and type; Return: true, or false with why */
static bool node_ok(struct udev_device *d, const char **why)
{
	const char *node = udev_device_get_devnode(d);
	dev_t devt = udev_device_get_devnum(d);
	bool block = !strcmp(udev_device_get_subsystem(d) ?: "", "block");
	struct stat st;

	if (stat(node, &st) < 0) {
		*why = strerror(errno);
		return false;
	}
	/* a recording may give a node contents instead of a number: a plain file */
	if (S_ISREG(st.st_mode))
		return true;
	if (block ? !S_ISBLK(st.st_mode) : !S_ISCHR(st.st_mode)) {
		*why = "wrong node type";
		return false;
	}
	if (st.st_rdev != devt) {
		*why = "wrong device number";
		return false;
	}
	return true;
}

static int summary(bool list)
{
	struct udev *udev = udev_new();
	struct udev_enumerate *e;
	struct udev_list_entry *it;
	unsigned long devices = 0, devnodes = 0, nodes_ok = 0, initialized = 0, props = 0,
		      attrs = 0, attr_bytes = 0;
	int bad = 0;

	if (!udev) {
		perror("udev_new");
		return 1;
	}
	e = udev_enumerate_new(udev);
	if (!e || udev_enumerate_scan_devices(e) < 0) {
		fprintf(stderr, "udev-probe: cannot enumerate devices\n");
		return 1;
	}
	udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d = udev_device_new_from_syspath(udev,
								    udev_list_entry_get_name(it));
		struct udev_list_entry *p;
		const char *node, *why = NULL;

		if (!d) {
			fprintf(stderr, "udev-probe: %s: cannot read: %s\n",
				udev_list_entry_get_name(it), strerror(errno));
			bad = 1;
			continue;
		}
		devices++;
		count_subsystem(udev_device_get_subsystem(d) ?: "(none)");
		udev_list_entry_foreach(p, udev_device_get_properties_list_entry(d))
			props++;
		udev_list_entry_foreach(p, udev_device_get_sysattr_list_entry(d)) {
			const char *v = udev_device_get_sysattr_value(d, udev_list_entry_get_name(p));

			if (v) {
				attrs++;
				attr_bytes += strlen(v);
			}
		}
		if (udev_device_get_is_initialized(d))
			initialized++;
		node = udev_device_get_devnode(d);
		if (node) {
			devnodes++;
			if (node_ok(d, &why)) {
				nodes_ok++;
			} else {
				fprintf(stderr, "udev-probe: %s: node %s: %s\n",
					udev_device_get_syspath(d), node, why);
				bad = 1;
			}
		}
		if (list)
			printf("device %s %s %s%s\n", udev_device_get_subsystem(d) ?: "-",
			       udev_device_get_sysname(d), node ? node : "-",
			       udev_device_get_is_initialized(d) ? " initialized" : "");
		udev_device_unref(d);
	}
	udev_enumerate_unref(e);

	/* each subsystem on its own must find what the full scan found */
	qsort(subs, nsubs, sizeof(subs[0]), cmp_subsys);
	for (size_t i = 0; i < nsubs; i++) {
		unsigned long n = 0;

		/* sd-device's pseudo-subsystems (buses and classes themselves,
		 * modules, drivers) are matched by their own scans */
		if (!strcmp(subs[i].name, "subsystem") || !strcmp(subs[i].name, "module") ||
		    !strcmp(subs[i].name, "drivers"))
			continue;

		e = udev_enumerate_new(udev);
		udev_enumerate_add_match_subsystem(e, subs[i].name);
		udev_enumerate_scan_devices(e);
		udev_list_entry_foreach(it, udev_enumerate_get_list_entry(e))
			n++;
		udev_enumerate_unref(e);
		if (n != subs[i].count) {
			fprintf(stderr, "udev-probe: subsystem %s: %lu by match, %lu in the scan\n",
				subs[i].name, n, subs[i].count);
			bad = 1;
		}
	}
	printf("devices %lu\n", devices);
	printf("subsystems");
	for (size_t i = 0; i < nsubs; i++)
		printf(" %s=%lu", subs[i].name, subs[i].count);
	printf("\n");
	printf("devnodes %lu\nnodes-ok %lu\ninitialized %lu\nproperties %lu\n", devnodes, nodes_ok,
	       initialized, props);
	printf("attributes %lu\nattribute-bytes %lu\n", attrs, attr_bytes);
	udev_unref(udev);
	if (devices == 0) {
		fprintf(stderr, "udev-probe: no devices\n");
		bad = 1;
	}
	return bad;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int monitor(const char *ready, const char *subsystem, const char *name, double timeout)
{
	struct udev *udev = udev_new();
	struct udev_monitor *m;
	const char *sock = getenv("CLASSFS_SOCKET");
	bool added = false, removed = false;
	double end;
	FILE *f;
	int bad = 0;

	m = udev ? udev_monitor_new_from_netlink(udev, "udev") : NULL;
	if (!m || udev_monitor_filter_add_match_subsystem_devtype(m, subsystem, NULL) < 0 ||
	    udev_monitor_enable_receiving(m) < 0) {
		fprintf(stderr, "udev-probe: cannot open a udev monitor\n");
		return 1;
	}
	/* written aside and renamed: the script reads it whole */
	{
		char tmp[4096];

		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%s\n", sock ? sock : "") < 0 || fclose(f) != 0 ||
		    rename(tmp, ready) < 0) {
			perror(ready);
			return 1;
		}
	}
	end = now_s() + timeout;
	while (!removed && now_s() < end) {
		struct pollfd p = { .fd = udev_monitor_get_fd(m), .events = POLLIN };
		struct udev_device *d;
		const char *action, *why = NULL;

		if (poll(&p, 1, (int)((end - now_s()) * 1000) + 1) <= 0)
			continue;
		d = udev_monitor_receive_device(m);
		if (!d)
			continue;
		action = udev_device_get_action(d) ?: "";
		if (strcmp(udev_device_get_sysname(d), name)) {
			udev_device_unref(d);
			continue;
		}
		printf("%s %s %s %s\n", action, udev_device_get_subsystem(d),
		       udev_device_get_sysname(d), udev_device_get_devnode(d) ?: "-");
		if (!strcmp(action, "add")) {
			struct udev_device *fresh;

			added = true;
			if (udev_device_get_devnode(d) && !node_ok(d, &why)) {
				fprintf(stderr, "udev-probe: add %s: node %s: %s\n", name,
					udev_device_get_devnode(d), why);
				bad = 1;
			}
			/* read back from /sys and the database: as udev leaves it after an add */
			fresh = udev_device_new_from_syspath(udev, udev_device_get_syspath(d));
			if (!fresh || !udev_device_get_is_initialized(fresh)) {
				fprintf(stderr, "udev-probe: add %s: %s\n", name,
					fresh ? "not initialized" : "not in /sys");
				bad = 1;
			}
			if (fresh)
				udev_device_unref(fresh);
			/* READYFILE.added: the script may remove the device now */
			{
				char marker[4096];
				FILE *af;

				snprintf(marker, sizeof(marker), "%s.added", ready);
				af = fopen(marker, "w");
				if (af)
					fclose(af);
			}
		} else if (!strcmp(action, "remove")) {
			if (!added) {
				fprintf(stderr, "udev-probe: remove of %s before its add\n", name);
				bad = 1;
			}
			removed = true;
		}
		udev_device_unref(d);
	}
	fflush(stdout);
	udev_monitor_unref(m);
	udev_unref(udev);
	if (!added || !removed) {
		fprintf(stderr, "udev-probe: timed out: add %s, remove %s\n",
			added ? "seen" : "missing", removed ? "seen" : "missing");
		return 1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "summary"))
		return summary(argc > 2 && !strcmp(argv[2], "--list"));
	if (argc >= 5 && !strcmp(argv[1], "monitor"))
		return monitor(argv[2], argv[3], argv[4], argc > 5 ? atof(argv[5]) : 20.0);
	fprintf(stderr, "usage: udev-probe summary [--list]\n"
			"       udev-probe monitor READYFILE SUBSYSTEM NAME [TIMEOUT_S]\n");
	return 2;
}
