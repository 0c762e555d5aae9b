// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-helper.c - kernel/uevent_helper: runs once per event with the
 * event's variables in its environment and SUBSYSTEM as argv[1]; empty
 * disables it; a helper that hangs does not hold the tree up, nor its
 * stop (a bounded queue, the running ones killed after a grace); its
 * environment is the event's variables and a fixed HOME and PATH, nothing
 * of the process's own and nothing a writer names (only SYNTH_ARG_KEY).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "../harness.h"

static char dir[] = "/tmp/classfs-helper-XXXXXX";
static char script[256], logfile[256];

static void write_script(const char *body)
{
	FILE *f = fopen(script, "w");

	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(script, 0755);
}

static int count_lines(void)
{
	FILE *f = fopen(logfile, "r");
	int n = 0, c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int wait_lines(int want)
{
	for (int i = 0; i < 500 && count_lines() < want; i++)
		usleep(10000);
	return count_lines();
}

TEST(helper_runs_per_event)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "block");
	char cmd[600], buf[4096], line[512];
	struct classfs_device *sda, *sda1;
	ssize_t n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(script, sizeof(script), "%s/hotplug", dir);
	snprintf(logfile, sizeof(logfile), "%s/log", dir);
	snprintf(cmd, sizeof(cmd), "echo \"$1 $ACTION $DEVPATH $MAJOR:$MINOR $SEQNUM $HOME\" >> %s",
		 logfile);
	write_script(cmd);

	n = classfs_path_read(t, "kernel/uevent_helper", buf, sizeof(buf));
	CHECK_INT(n, 1);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", "relative/path\n", 14), -EINVAL);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", script, strlen(script)),
		  (long long)strlen(script));
	n = classfs_path_read(t, "kernel/uevent_helper", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line, sizeof(line), "%s\n", script);
	CHECK_STR(buf, line);

	sda = classfs_device_create(cls, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = classfs_device_create(cls, sda, makedev(8, 1), NULL, NULL, "sda1");
	CHECK(sda && sda1);
	CHECK_INT(wait_lines(2), 2);
	/* helpers run detached, like Linux's UMH_NO_WAIT: in any order */
	FILE *f = fopen(logfile, "r");
	char all[1024] = "";

	while (f && fgets(line, sizeof(line), f))
		strncat(all, line, sizeof(all) - strlen(all) - 1);
	if (f)
		fclose(f);
	CHECK(strstr(all, "block add /class/block/sda 8:0 1 /\n") != NULL);
	CHECK(strstr(all, "block add /class/block/sda/sda1 8:1 2 /\n") != NULL);

	/* a helper that hangs: the tree goes on (helpers run detached) */
	char pidfile[300];

	snprintf(pidfile, sizeof(pidfile), "%s/pids", dir);
	/* a second program: helpers still starting keep reading the first */
	snprintf(script, sizeof(script), "%s/hotplug-hang", dir);
	snprintf(cmd, sizeof(cmd), "echo $$ >> %s; exec sleep 30", pidfile);
	write_script(cmd);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", script, strlen(script)),
		  (long long)strlen(script));
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, NULL);
	classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1000);

	/* both hanging helpers started (they wrote their pids) */
	for (int i = 0; i < 500; i++) {
		int lines = 0, c;
		FILE *pf = fopen(pidfile, "r");

		while (pf && (c = fgetc(pf)) != EOF)
			lines += c == '\n';
		if (pf)
			fclose(pf);
		if (lines >= 2)
			break;
		usleep(10000);
	}
	/* empty disables it: no more runs, the log stays as it is */
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", "\n", 1), 1);
	classfs_device_unregister(sda1);
	usleep(200000);
	CHECK_INT(count_lines(), 2);

	classfs_device_unregister(sda);
	classfs_class_destroy(cls);
	/* the sleeping helpers are waited for by tree_free: end them first */
	f = fopen(pidfile, "r");
	for (int pid; f && fscanf(f, "%d", &pid) == 1;)
		kill(pid, SIGTERM);
	if (f)
		fclose(f);
	unlink(pidfile);
	CHECK_INT(classfs_tree_free(t), 0);
	unlink(script);
	snprintf(script, sizeof(script), "%s/hotplug", dir);
	unlink(script);
	unlink(logfile);
	rmdir(dir);
}

/* a class whose hook tries to set the helper's HOME and PATH */
static int path_hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	if (classfs_uevent_add_var(env, "PATH=/evil/bin") || classfs_uevent_add_var(env, "HOME=/evil"))
		return -ENOMEM;
	return 0;
}

/* the raw environment (NUL-separated, duplicates kept) the helper got for event @seq */
static int read_env(uint64_t seq, char *buf, size_t size)
{
	char path[300];
	ssize_t n = -1;

	snprintf(path, sizeof(path), "%s/env.%llu", dir, (unsigned long long)seq);
	for (int i = 0; i < 500 && n < 0; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			n = (ssize_t)fread(buf, 1, size - 1, f);
			fclose(f);
		} else {
			usleep(10000);
		}
	}
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* how many entries of @env (@len bytes) start with @prefix; the last in *last */
static int env_count(const char *env, int len, const char *prefix, const char **last)
{
	int n = 0;

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (!strncmp(p, prefix, strlen(prefix))) {
			n++;
			if (last)
				*last = p;
		}
	return n;
}

TEST(helper_environment)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_class hooked = { .name = "hooked", .dev_uevent = path_hook };
	struct classfs_device *sda, *h0;
	char cmd[600], env[8192];
	const char *last = NULL;
	uint64_t seq;
	int n;

	snprintf(dir, sizeof(dir), "/tmp/classfs-helper-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(script, sizeof(script), "%s/hotplug", dir);
	/* /proc/PID/environ: what execve() passed, before the shell tidies it */
	snprintf(cmd, sizeof(cmd), "cat /proc/$$/environ > %s/tmp.$SEQNUM && mv %s/tmp.$SEQNUM %s/env.$SEQNUM",
		 dir, dir, dir);
	write_script(cmd);
	setenv("CLASSFS_TEST_OWN_ENV", "leaked", 1);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", script, strlen(script)),
		  (long long)strlen(script));
	CHECK_INT(classfs_class_register(t, &hooked), 0);
	sda = classfs_device_create(blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	h0 = classfs_device_create(&hooked, NULL, 0, NULL, NULL, "h0");
	CHECK(sda && h0);

	/* a writer's LD_PRELOAD reaches the helper only as SYNTH_ARG_LD_PRELOAD */
	CHECK_INT(classfs_path_write(t, "class/block/sda/uevent",
				     "change 12345678-1234-1234-1234-123456789abc LD_PRELOAD=/tmp/evil.so\n",
				     68), 68);
	seq = classfs_tree_seqnum(t);
	n = read_env(seq, env, sizeof(env));
	CHECK(n > 0);
	if (n > 0) {
		CHECK_INT(env_count(env, n, "SYNTH_ARG_LD_PRELOAD=/tmp/evil.so", NULL), 1);
		CHECK_INT(env_count(env, n, "LD_PRELOAD=", NULL), 0);
		CHECK_INT(env_count(env, n, "ACTION=change", NULL), 1);
		CHECK_INT(env_count(env, n, "ACTION=", NULL), 1);
		CHECK_INT(env_count(env, n, "CLASSFS_TEST_OWN_ENV=", NULL), 0);
		CHECK_INT(env_count(env, n, "HOME=", &last), 1);
		CHECK_STR(last, "HOME=/");
		CHECK_INT(env_count(env, n, "PATH=", &last), 1);
		CHECK_STR(last, "PATH=/sbin:/bin:/usr/sbin:/usr/bin");
	}

	/* a hook's HOME and PATH do not replace the fixed ones */
	CHECK_INT(classfs_device_uevent(h0, CLASSFS_ACTION_CHANGE, NULL), 0);
	seq = classfs_tree_seqnum(t);
	n = read_env(seq, env, sizeof(env));
	CHECK(n > 0);
	if (n > 0) {
		CHECK_INT(env_count(env, n, "DEVPATH=/class/hooked/h0", NULL), 1);
		CHECK_INT(env_count(env, n, "HOME=", &last), 1);
		CHECK_STR(last, "HOME=/");
		CHECK_INT(env_count(env, n, "PATH=", &last), 1);
		CHECK_STR(last, "PATH=/sbin:/bin:/usr/sbin:/usr/bin");
	}

	unsetenv("CLASSFS_TEST_OWN_ENV");
	classfs_device_unregister(h0);
	classfs_device_unregister(sda);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", "\n", 1), 1);
	classfs_class_unregister(&hooked);
	classfs_class_destroy(blk);
	CHECK_INT(classfs_tree_free(t), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

static unsigned int overflows;
static uint64_t overflow_dropped;

static void on_overflow(const struct classfs_helper_stats *st, void *data)
{
	(void)data;
	overflows++;
	overflow_dropped = st->dropped;
}

/*
 * A helper that never ends: 8 run, the queue holds what its bound allows,
 * the rest is dropped and told; the stop drops the queue and kills the 8
 * within its grace; the process's own child is not reaped by the library.
 */
TEST(helper_queue_bounded)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "q");
	struct classfs_device *dev;
	struct classfs_helper_stats st;
	struct timespec a, b;
	char cmd[600];
	double took;
	pid_t own;
	int ws;

	snprintf(dir, sizeof(dir), "/tmp/classfs-helper-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(script, sizeof(script), "%s/hotplug", dir);
	write_script("exec sleep 60");
	own = fork();
	if (own == 0) {
		pause();
		_exit(0);
	}
	CHECK_INT(classfs_helper_set_queue(NULL, 0, NULL, NULL), -EINVAL);
	CHECK_INT(classfs_helper_set_queue(t, 8192, on_overflow, NULL), 0);
	CHECK_INT(classfs_path_write(t, "kernel/uevent_helper", script, strlen(script)),
		  (long long)strlen(script));
	dev = classfs_device_create(cls, NULL, 0, NULL, NULL, "q0");
	CHECK(dev != NULL);
	for (int i = 0; dev && i < 2000; i++)
		classfs_device_uevent(dev, CLASSFS_ACTION_CHANGE, NULL);
	/* what is delivered by now: the 8 running, the queue at its bound, the rest dropped */
	usleep(300 * 1000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_INT(classfs_helper_stop(t, &st), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fprintf(stderr, "# started %llu, dropped %llu, killed %llu; stop took %.3f s\n",
		(unsigned long long)st.started, (unsigned long long)st.dropped,
		(unsigned long long)st.killed, took);
	CHECK_INT(st.started, 8);
	CHECK_INT(st.killed, 8);
	CHECK_INT(st.queued, 0);
	CHECK(st.dropped > 1900);
	CHECK(overflows >= 1 && overflow_dropped >= 1);
	CHECK(took < 1.0);
	/* stopped for good: later events run nothing */
	if (dev)
		classfs_device_uevent(dev, CLASSFS_ACTION_CHANGE, NULL);
	CHECK_INT(classfs_helper_stop(t, &st), 0);
	CHECK_INT(st.started, 8);
	/* the test's own child is still its to reap */
	kill(own, SIGTERM);
	CHECK(waitpid(own, &ws, 0) == own);
	classfs_device_unregister(dev);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}
