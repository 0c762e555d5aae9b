/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * seed-common.h - what the seed-driver tests share: the module's entry
 * points, an event recorder on the default tree, path helpers.
 */
#ifndef CLASSFS_SEED_COMMON_H
#define CLASSFS_SEED_COMMON_H

#include <unistd.h>

#include "classfs/classfs.h"
#include "../harness.h"
#include "classfs-internal/testing.h"

int classfs_module_init(void);
void classfs_module_exit(void);

#define MAX_EVENTS 256

struct recorded {
	enum classfs_action action;
	uint64_t seqnum;
	char devpath[256];
	char env[2048];		/* "KEY=VALUE\n..." */
};

static struct recorded events[MAX_EVENTS];
static int nevents;

static void record(const struct classfs_uevent *ev, void *data)
{
	struct recorded *r;
	size_t len = 0;

	(void)data;
	if (nevents == MAX_EVENTS)
		return;
	r = &events[nevents++];
	r->action = ev->action;
	r->seqnum = ev->seqnum;
	snprintf(r->devpath, sizeof(r->devpath), "%s", ev->devpath);
	r->env[0] = '\0';
	for (int i = 0; i < ev->envc; i++)
		len += (size_t)snprintf(r->env + len, sizeof(r->env) - len, "%s\n", ev->envp[i]);
}

/* the index of the first event (from @from) with @action and @devpath, or -1 */
static int find_event(int from, enum classfs_action action, const char *devpath)
{
	for (int i = from; i < nevents; i++)
		if (events[i].action == action && !strcmp(events[i].devpath, devpath))
			return i;
	return -1;
}

static bool event_has(int i, const char *line)
{
	char want[512];

	if (i < 0)
		return false;
	snprintf(want, sizeof(want), "%s\n", line);
	return strstr(events[i].env, want) != NULL;
}

static const char *read_attr(const char *path)
{
	static char buf[4097];
	ssize_t n = classfs_path_read(classfs_default_tree(), path, buf, sizeof(buf) - 1);

	if (n < 0)
		return "(error)";
	buf[n] = '\0';
	return buf;
}

static const char *read_link(const char *path)
{
	static char buf[4096];
	ssize_t n = classfs_path_readlink(classfs_default_tree(), path, buf, sizeof(buf));

	return n < 0 ? "(error)" : buf;
}

static int stat_type(const char *path)
{
	struct classfs_stat st;

	if (classfs_path_stat(classfs_default_tree(), path, &st) < 0)
		return 0;
	return st.type;
}

static size_t base_nodes;

/* record the tree's events, then run the module's init */
static int seed_module_start(struct classfs_tree *t)
{
	base_nodes = classfs_tree_node_count(t);
	if (classfs_listener_add(t, record, NULL) <= 0)
		return -1;
	return classfs_module_init();
}

static void check_seqnums(void)
{
	for (int i = 1; i < nevents; i++)
		CHECK_INT(events[i].seqnum, events[i - 1].seqnum + 1);
}

/* run @fn with stdout captured; return what it printed (static buffer) */
static const char *capture_stdout(void (*fn)(void))
{
	static char out[8192];
	char tmpl[] = "/tmp/classfs-seed-XXXXXX";
	int fd = mkstemp(tmpl), saved;
	ssize_t n;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(fd, STDOUT_FILENO);
	fn();
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(tmpl);
	return out;
}

#endif
