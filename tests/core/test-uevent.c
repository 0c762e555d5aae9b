// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-uevent.c - uevents: the variables of each action, SEQNUM order
 * without gaps, class and type hooks (adding, vetoing, naming the node), the 64
 * variables / 2048 bytes limits, the `uevent` file (read and write),
 * kernel/uevent_seqnum, the kernel wire format, and listeners calling
 * back into the API.
 */
#include <pthread.h>

#include "../harness.h"
#include "../native-util.h"

static int index_of(struct recorder *r, int i, const char *key)
{
	size_t kl = strlen(key);

	for (int k = 0; k < r->ev[i].envc; k++)
		if (!strncmp(r->ev[i].envp[k], key, kl) && r->ev[i].envp[k][kl] == '=')
			return k;
	return -1;
}

TEST(add_remove_variables)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_device *sda, *sda1;
	struct recorder r;
	uint64_t base = classfs_tree_seqnum(t);

	CHECK(rec_start(&r, t) > 0);
	sda = classfs_device_create(blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = classfs_device_create(blk, sda, makedev(8, 1), NULL, NULL, "sda1");
	CHECK_INT(r.n, 2);
	CHECK_INT(r.ev[0].action, CLASSFS_ACTION_ADD);
	CHECK_STR(r.ev[0].devpath, "/class/block/sda");
	CHECK_STR(r.ev[0].subsystem, "block");
	CHECK_STR(r.ev[0].envp[0], "ACTION=add");
	CHECK_STR(r.ev[0].envp[1], "DEVPATH=/class/block/sda");
	CHECK_STR(r.ev[0].envp[2], "SUBSYSTEM=block");
	CHECK_STR(rec_get(&r, 0, "MAJOR"), "8");
	CHECK_STR(rec_get(&r, 0, "MINOR"), "0");
	CHECK_STR(rec_get(&r, 0, "DEVNAME"), "sda");
	CHECK(rec_get(&r, 0, "DEVTYPE") == NULL);
	CHECK(!strncmp(r.ev[0].envp[r.ev[0].envc - 1], "SEQNUM=", 7));
	CHECK_INT(r.ev[0].envc, 7);
	/* a nested device: its own ADD, after its parent's, SUBSYSTEM at every level */
	CHECK_STR(r.ev[1].devpath, "/class/block/sda/sda1");
	CHECK_STR(rec_get(&r, 1, "SUBSYSTEM"), "block");
	CHECK_STR(rec_get(&r, 1, "DEVNAME"), "sda1");
	CHECK(r.ev[1].seqnum > r.ev[0].seqnum);

	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, NULL), 0);
	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_ONLINE, NULL), 0);
	const char *const extra[] = { "DISK_MEDIA_CHANGE=1", "X=a=b", NULL };

	CHECK_INT(classfs_device_uevent(sda1, CLASSFS_ACTION_CHANGE, extra), 0);
	CHECK_INT(r.n, 5);
	CHECK_STR(rec_get(&r, 2, "ACTION"), "change");
	CHECK_STR(rec_get(&r, 3, "ACTION"), "online");
	CHECK_STR(rec_get(&r, 4, "DISK_MEDIA_CHANGE"), "1");
	CHECK_STR(rec_get(&r, 4, "X"), "a=b");
	CHECK(index_of(&r, 4, "DEVNAME") < index_of(&r, 4, "DISK_MEDIA_CHANGE"));
	CHECK(index_of(&r, 4, "X") < index_of(&r, 4, "SEQNUM"));

	/* bad calls send nothing */
	const char *const noeq[] = { "NOEQUALS", NULL };
	const char *const nokey[] = { "=value", NULL };

	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_COUNT, NULL), -EINVAL);
	CHECK_INT(classfs_device_uevent(sda, (enum classfs_action)-1, NULL), -EINVAL);
	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, noeq), -EINVAL);
	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, nokey), -EINVAL);
	CHECK_INT(classfs_device_uevent(NULL, CLASSFS_ACTION_CHANGE, NULL), -EINVAL);
	CHECK_INT(r.n, 5);

	classfs_device_get(sda1);
	CHECK_INT(classfs_device_unregister(sda), 0);
	CHECK_INT(r.n, 7);
	CHECK_STR(r.ev[5].devpath, "/class/block/sda/sda1");
	CHECK_STR(rec_get(&r, 5, "ACTION"), "remove");
	CHECK_STR(rec_get(&r, 5, "MAJOR"), "8");
	CHECK_STR(rec_get(&r, 5, "MINOR"), "1");
	CHECK_STR(r.ev[6].devpath, "/class/block/sda");
	CHECK_INT(classfs_device_uevent(sda1, CLASSFS_ACTION_CHANGE, NULL), -EINVAL);	/* gone */
	classfs_device_put(sda1);
	CHECK_INT(rec_check_seq(&r, base), 0);
	CHECK(classfs_tree_seqnum(t) == base + 7);
	rec_stop(&r);
	classfs_class_destroy(blk);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(seqnum_gap_free_and_file)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "sq");
	struct classfs_device *d[10];
	struct recorder r;
	char want[32];
	uint64_t s0 = classfs_tree_seqnum(t);

	/* nobody listening: numbers are still handed out */
	d[0] = classfs_device_create(c, NULL, 0, NULL, NULL, "d0");
	CHECK(classfs_tree_seqnum(t) == s0 + 1);
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)classfs_tree_seqnum(t));
	CHECK_STR(rd(t, "kernel/uevent_seqnum"), want);
	CHECK_INT(wr(t, "kernel/uevent_seqnum", "5\n"), -EACCES);

	uint64_t base = classfs_tree_seqnum(t);

	CHECK(rec_start(&r, t) > 0);
	for (int i = 1; i < 10; i++)
		d[i] = classfs_device_create(c, i % 2 ? d[i - 1] : NULL, 0, NULL, NULL, "d%d", i);
	for (int i = 0; i < 10; i += 3)
		classfs_device_uevent(d[i], CLASSFS_ACTION_CHANGE, NULL);
	CHECK_INT(classfs_device_rename(d[2], "moved"), 0);
	CHECK_INT(classfs_device_uevent(d[2], CLASSFS_ACTION_BIND, NULL), 0);
	for (int i = 0; i < 10; i += 2)
		classfs_device_unregister(d[i]);
	CHECK_INT(rec_check_seq(&r, base), 0);
	CHECK(classfs_tree_seqnum(t) == base + (uint64_t)r.n);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_ADD), 9);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_REMOVE), 10);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_MOVE), 1);
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)classfs_tree_seqnum(t));
	CHECK_STR(rd(t, "kernel/uevent_seqnum"), want);
	rec_stop(&r);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- hooks ---- */

static int cls_hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	if (!strncmp(classfs_device_name(dev), "veto", 4))
		return -EPERM;
	return classfs_uevent_add_var(env, "CLS=1");
}

static int type_hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	if (!strncmp(classfs_device_name(dev), "tveto", 5))
		return -EAGAIN;
	return classfs_uevent_add_var(env, "TYPE=%s", classfs_device_name(dev));
}

static const struct classfs_device_type evtype = { .name = "evdev", .uevent = type_hook };

static struct classfs_device *typed(struct classfs_class *c, struct classfs_device *parent,
				    const char *name)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	classfs_device_initialize(d);
	d->cls = c;
	d->parent = parent;
	d->type = &evtype;
	d->devt = makedev(13, 64);
	d->release = (void (*)(struct classfs_device *))free;
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	CHECK_INT(classfs_device_add(d), 0);
	return d;
}

TEST(class_and_type_hooks)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class c = { .name = "input", .dev_uevent = cls_hook };
	struct classfs_device *in, *ev, *v, *tv;
	struct recorder r;
	uint64_t s;

	CHECK_INT(classfs_class_register(t, &c), 0);
	CHECK(rec_start(&r, t) > 0);
	in = classfs_device_create(&c, NULL, 0, NULL, NULL, "input0");
	ev = typed(&c, in, "event0");
	CHECK_INT(r.n, 2);
	CHECK_STR(rec_get(&r, 0, "CLS"), "1");
	CHECK(rec_get(&r, 0, "TYPE") == NULL);
	CHECK(rec_get(&r, 0, "DEVTYPE") == NULL);
	CHECK_STR(rec_get(&r, 1, "DEVTYPE"), "evdev");
	CHECK_STR(rec_get(&r, 1, "CLS"), "1");
	CHECK_STR(rec_get(&r, 1, "TYPE"), "event0");
	CHECK(index_of(&r, 1, "DEVTYPE") < index_of(&r, 1, "CLS"));
	CHECK(index_of(&r, 1, "CLS") < index_of(&r, 1, "TYPE"));
	CHECK_STR(rd(t, "class/input/event0/uevent"),
		  "MAJOR=13\nMINOR=64\nDEVNAME=event0\nDEVTYPE=evdev\nCLS=1\nTYPE=event0\n");
	CHECK_STR(rd(t, "class/input/input0/uevent"), "CLS=1\n");

	/* a veto: the device is added, no event, no SEQNUM used */
	s = classfs_tree_seqnum(t);
	v = classfs_device_create(&c, NULL, 0, NULL, NULL, "veto0");
	CHECK(v != NULL);
	CHECK_INT(ftype(t, "class/input/veto0"), CLASSFS_FT_DIR);
	tv = typed(&c, in, "tveto0");
	CHECK_INT(ftype(t, "class/input/tveto0"), CLASSFS_FT_LNK);
	CHECK_INT(r.n, 2);
	CHECK(classfs_tree_seqnum(t) == s);
	CHECK_INT(classfs_device_uevent(v, CLASSFS_ACTION_CHANGE, NULL), -EPERM);
	CHECK_INT(classfs_device_uevent(tv, CLASSFS_ACTION_CHANGE, NULL), -EAGAIN);
	CHECK_INT(wr(t, "class/input/veto0/uevent", "change\n"), -EPERM);
	CHECK_INT(r.n, 2);
	CHECK(classfs_tree_seqnum(t) == s);
	/* the uevent file still shows what there is */
	CHECK_STR(rd(t, "class/input/tveto0/uevent"),
		  "MAJOR=13\nMINOR=64\nDEVNAME=tveto0\nDEVTYPE=evdev\nCLS=1\n");
	classfs_device_unregister(v);
	classfs_device_unregister(tv);
	CHECK_INT(r.n, 2);
	CHECK(classfs_tree_seqnum(t) == s);

	classfs_device_unregister(in);
	CHECK_INT(r.n, 4);
	CHECK_STR(r.ev[2].devpath, "/class/input/input0/event0");
	CHECK_STR(rec_get(&r, 2, "TYPE"), "event0");
	(void)ev;
	rec_stop(&r);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- limits ---- */

TEST(add_var_limits)
{
	struct classfs_uevent_env *env = calloc(1, sizeof(*env));
	char big[CLASSFS_UEVENT_BUFFER + 10];

	for (int i = 0; i < CLASSFS_UEVENT_NUM_ENVP; i++)
		CHECK_INT(classfs_uevent_add_var(env, "V%d=%d", i, i), 0);
	CHECK_INT(env->envp_idx, CLASSFS_UEVENT_NUM_ENVP);
	CHECK_INT(classfs_uevent_add_var(env, "ONE=MORE"), -ENOMEM);
	CHECK_INT(env->envp_idx, CLASSFS_UEVENT_NUM_ENVP);
	CHECK_STR(env->envp[63], "V63=63");

	memset(env, 0, sizeof(*env));
	memset(big, 'x', sizeof(big));
	big[CLASSFS_UEVENT_BUFFER - 10] = '\0';
	CHECK_INT(classfs_uevent_add_var(env, "A=%s", big), 0);
	int used = env->buflen;

	CHECK_INT(classfs_uevent_add_var(env, "B=%s", "0123456789"), -ENOMEM);
	CHECK_INT(env->envp_idx, 1);
	CHECK_INT(env->buflen, used);
	CHECK_INT(classfs_uevent_add_var(env, "C=1"), 0);
	CHECK_INT(classfs_uevent_add_var(NULL, "C=1"), -EINVAL);
	free(env);
}

static int many_vars;

static int many_hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	(void)dev;
	for (int i = 0; i < many_vars; i++) {
		int r = classfs_uevent_add_var(env, "H%d=%d", i, i);

		if (r)
			return r;
	}
	return 0;
}

TEST(event_limits)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class c = { .name = "lim", .dev_uevent = many_hook };
	struct classfs_device *d;
	struct recorder r;
	char *vars[80];
	const char *extra[81];
	uint64_t s;
	int n, maxn = -1;

	many_vars = 0;
	CHECK_INT(classfs_class_register(t, &c), 0);
	d = classfs_device_create(&c, NULL, makedev(1, 2), NULL, NULL, "d");
	CHECK(rec_start(&r, t) > 0);
	for (int i = 0; i < 80; i++) {
		vars[i] = malloc(16);
		snprintf(vars[i], 16, "E%d=%d", i, i);
	}
	/* more and more variables: delivered events never exceed 64 */
	for (n = 0; n <= 80; n++) {
		for (int i = 0; i < n; i++)
			extra[i] = vars[i];
		extra[n] = NULL;
		s = classfs_tree_seqnum(t);
		int ret = classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, extra);

		if (ret == 0) {
			CHECK(r.n > 0 && r.ev[r.n - 1].envc <= CLASSFS_UEVENT_NUM_ENVP);
			maxn = n;
		} else {
			CHECK_INT(ret, -ENOMEM);
			CHECK(classfs_tree_seqnum(t) == s);	/* no number used */
			break;
		}
	}
	CHECK(maxn >= 50);
	CHECK(maxn < 64);
	CHECK_INT(r.n, maxn + 1);
	for (int i = 0; i < 70; i++)
		extra[i] = vars[i];
	extra[70] = NULL;
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, extra), -ENOMEM);

	/* bytes: a variable too long for 2048 bytes */
	{
		char *longv = malloc(CLASSFS_UEVENT_BUFFER + 16);
		const char *one[2] = { longv, NULL };
		int maxlen = 0;

		memcpy(longv, "L=", 2);
		for (int len = 1800; len < CLASSFS_UEVENT_BUFFER + 8; len += 4) {
			memset(longv + 2, 'y', (size_t)len);
			longv[2 + len] = '\0';
			int ret = classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, one);

			if (ret) {
				CHECK_INT(ret, -ENOMEM);
				break;
			}
			maxlen = len;
			size_t bytes = 0;

			for (int k = 0; k < r.ev[r.n - 1].envc; k++)
				bytes += strlen(r.ev[r.n - 1].envp[k]) + 1;
			CHECK(bytes <= CLASSFS_UEVENT_BUFFER);
		}
		CHECK(maxlen > 1800);
		CHECK(maxlen < CLASSFS_UEVENT_BUFFER);
		free(longv);
	}

	/* a hook over the limit: -ENOMEM, no event; the device is still added */
	many_vars = 70;
	s = classfs_tree_seqnum(t);
	rec_clear(&r);
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, NULL), -ENOMEM);
	struct classfs_device *d2 = classfs_device_create(&c, NULL, 0, NULL, NULL, "d2");

	CHECK(d2 != NULL);
	CHECK_INT(r.n, 0);
	CHECK(classfs_tree_seqnum(t) == s);
	many_vars = 0;
	classfs_device_unregister(d2);
	classfs_device_unregister(d);
	for (int i = 0; i < 80; i++)
		free(vars[i]);
	rec_stop(&r);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- the uevent file ---- */

TEST(uevent_file_write)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *d = classfs_device_create(c, NULL, makedev(8, 0), NULL, NULL, "sda");
	struct recorder r;
	uint64_t s;
	static const char *const garbage[] = {
		"", "\n", "bogus\n", "ADD\n", "add 1234\n",
		"add 12345678-1234-1234-1234-123456789abz\n",
		"add 12345678-1234-1234-1234-123456789abc A\n",
		"add 12345678-1234-1234-1234-123456789abc =1\n",
		"add 12345678-1234-1234-1234-123456789abc A-B=1\n",
		"change\nadd", "addd",
		/* a value never holds a line of its own, nor another control byte */
		"change 12345678-1234-1234-1234-123456789abc FOO=x\nACTION=remove\n",
		"change 12345678-1234-1234-1234-123456789abc FOO=x\nACTION=remove",
		"change 12345678-1234-1234-1234-123456789abc FOO=a\rACTION=remove\n",
		"change 12345678-1234-1234-1234-123456789abc FOO=\x1b[2J\n",
		"change 12345678-1234-1234-1234-123456789abc FOO=a\x7f\n",
		"change 12345678-1234-1234-1234-123456789abc FOO=a\tb\n",
		"change\t12345678-1234-1234-1234-123456789abc\n", "change\n\n",
		"add 12345678-1234-1234-1234-123456789abc A=\n",
		"add 12345678-1234-1234-1234-123456789abc A.B=1\n",
		"add 12345678-1234-1234-1234-123456789abc \xc3\x89=1\n",
	};

	CHECK(rec_start(&r, t) > 0);
	CHECK_INT(wr(t, "class/block/sda/uevent", "change\n"), 7);
	CHECK_INT(r.n, 1);
	CHECK_INT(r.ev[0].action, CLASSFS_ACTION_CHANGE);
	CHECK_STR(rec_get(&r, 0, "SYNTH_UUID"), "0");
	CHECK_STR(rec_get(&r, 0, "DEVNAME"), "sda");
	CHECK_STR(r.ev[0].devpath, "/class/block/sda");

	CHECK_INT(wr(t, "class/block/sda/uevent", "add 12345678-1234-1234-1234-123456789abc\n"), 41);
	CHECK_INT(r.n, 2);
	CHECK_INT(r.ev[1].action, CLASSFS_ACTION_ADD);
	CHECK_STR(rec_get(&r, 1, "SYNTH_UUID"), "12345678-1234-1234-1234-123456789abc");

	CHECK_INT(wr(t, "class/block/sda/uevent",
		     "add 12345678-1234-1234-1234-123456789ABC A=1 B_2=two"), 52);
	CHECK_INT(r.n, 3);
	CHECK_STR(rec_get(&r, 2, "SYNTH_UUID"), "12345678-1234-1234-1234-123456789ABC");
	CHECK_STR(rec_get(&r, 2, "SYNTH_ARG_A"), "1");
	CHECK_STR(rec_get(&r, 2, "SYNTH_ARG_B_2"), "two");
	CHECK_INT(wr(t, "class/block/sda/uevent", "add"), 3);	/* echo without newline */
	CHECK_INT(wr(t, "class/block/sda/uevent", "remove\n"), 7);
	CHECK_INT(r.n, 5);
	CHECK_INT(r.ev[4].action, CLASSFS_ACTION_REMOVE);
	CHECK(classfs_device_is_added(d));	/* a synthetic remove is only an event */

	s = classfs_tree_seqnum(t);
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		ssize_t ret = wr(t, "class/block/sda/uevent", garbage[i]);

		if (ret != -EINVAL)
			fprintf(stderr, "  '%s' -> %zd\n", garbage[i], ret);
		CHECK_INT(ret, -EINVAL);
	}
	CHECK_INT(classfs_path_write(t, "class/block/sda/uevent", "add\0x", 5), -EINVAL);
	CHECK_INT(r.n, 5);
	CHECK(classfs_tree_seqnum(t) == s);
	CHECK_INT(rec_check_seq(&r, r.ev[0].seqnum - 1), 0);
	/* reading it gives the variables only */
	CHECK_STR(rd(t, "class/block/sda/uevent"), "MAJOR=8\nMINOR=0\nDEVNAME=sda\n");

	rec_stop(&r);
	classfs_device_unregister(d);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* does any variable of event @i hold a control byte? */
static bool has_control(struct recorder *r, int i)
{
	for (int k = 0; k < r->ev[i].envc; k++)
		for (const char *c = r->ev[i].envp[k]; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				return true;
	return false;
}

/*
 * A writer's variables (TRIGGER, the `uevent` file) arrive only as
 * SYNTH_ARG_KEY=VALUE: no LD_PRELOAD, ACTION or DEVPATH of its own, and
 * no value holding a newline that would make a line of its own.
 */
TEST(synth_uevent)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *d = classfs_device_create(c, NULL, makedev(8, 0), NULL, NULL, "sda");
	struct recorder r;
	uint64_t s;
	const char *const preload[] = { "LD_PRELOAD=/tmp/evil.so", "DEVPATH=/devices/evil",
					"NAME=two words", NULL };
	static const char *const bad_args[] = {
		"FOO=x\nACTION=remove", "FOO=a\rb", "FOO=\x1b[2J", "FOO=a\x7f", "FOO=a\tb",
		"FOO=", "=1", "FOO", "A-B=1", "A B=1", "LD.PRELOAD=x", "\xc3\x89=1", "",
	};
	static const char *const bad_uuids[] = {
		"", "1", "00", "12345678-1234-1234-1234-123456789abz",
		"12345678-1234-1234-1234-123456789abc\n", "12345678_1234-1234-1234-123456789abc",
	};
	const char *args[CLASSFS_UEVENT_NUM_ENVP + 2];

	CHECK(rec_start(&r, t) > 0);
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, NULL, preload), 0);
	CHECK_INT(r.n, 1);
	CHECK_STR(rec_get(&r, 0, "SYNTH_ARG_LD_PRELOAD"), "/tmp/evil.so");
	CHECK_STR(rec_get(&r, 0, "SYNTH_ARG_DEVPATH"), "/devices/evil");
	CHECK_STR(rec_get(&r, 0, "SYNTH_ARG_NAME"), "two words");
	CHECK(rec_get(&r, 0, "LD_PRELOAD") == NULL);
	CHECK_STR(rec_get(&r, 0, "DEVPATH"), "/class/block/sda");
	CHECK(rec_get(&r, 0, "SYNTH_UUID") == NULL);	/* none asked for */
	CHECK_STR(rec_get(&r, 0, "ACTION"), "change");
	/* the last of a repeated key is the tree's too: the writer adds only SYNTH_ */
	for (int k = 0; k < r.ev[0].envc; k++) {
		const char *kv = r.ev[0].envp[k];

		CHECK(!strncmp(kv, "SYNTH_", 6) || !strncmp(kv, "ACTION=", 7) ||
		      !strncmp(kv, "DEVPATH=", 8) || !strncmp(kv, "SUBSYSTEM=", 10) ||
		      !strncmp(kv, "MAJOR=", 6) || !strncmp(kv, "MINOR=", 6) ||
		      !strncmp(kv, "DEVNAME=", 8) || !strncmp(kv, "SEQNUM=", 7));
	}
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_ADD, "0", NULL), 0);
	CHECK_STR(rec_get(&r, 1, "SYNTH_UUID"), "0");
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_ADD,
					      "12345678-1234-1234-1234-123456789abc",
					      (const char *const[]){ "A=1", NULL }), 0);
	CHECK_STR(rec_get(&r, 2, "SYNTH_UUID"), "12345678-1234-1234-1234-123456789abc");
	CHECK_STR(rec_get(&r, 2, "SYNTH_ARG_A"), "1");

	/* refused: nothing sent, no SEQNUM used */
	s = classfs_tree_seqnum(t);
	for (size_t i = 0; i < sizeof(bad_args) / sizeof(bad_args[0]); i++) {
		const char *one[] = { "OK=1", bad_args[i], NULL };

		CHECK_INT(classfs_synth_arg_valid(bad_args[i]), -EINVAL);
		CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, NULL, one), -EINVAL);
		/* a driver's own variables follow the same rule for KEY and VALUE */
		if (strcmp(bad_args[i], "FOO="))
			CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, one + 1), -EINVAL);
	}
	CHECK_INT(classfs_synth_arg_valid(NULL), -EINVAL);
	CHECK_INT(classfs_synth_arg_valid("Key_9=any value: =/ \xc3\x89"), 0);
	for (size_t i = 0; i < sizeof(bad_uuids) / sizeof(bad_uuids[0]); i++)
		CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, bad_uuids[i], NULL),
			  -EINVAL);
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_COUNT, NULL, NULL), -EINVAL);
	CHECK_INT(classfs_device_synth_uevent(NULL, CLASSFS_ACTION_CHANGE, NULL, NULL), -EINVAL);
	/* past 64 variables: -ENOMEM; a bad one among them is still -EINVAL */
	for (int i = 0; i < CLASSFS_UEVENT_NUM_ENVP + 1; i++)
		args[i] = "K=v";
	args[CLASSFS_UEVENT_NUM_ENVP + 1] = NULL;
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, NULL, args), -ENOMEM);
	args[CLASSFS_UEVENT_NUM_ENVP] = "K=\n";
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, NULL, args), -EINVAL);
	CHECK_INT(r.n, 3);
	CHECK(classfs_tree_seqnum(t) == s);

	/* through the file: the same variables, and no control byte in any */
	CHECK_INT(wr(t, "class/block/sda/uevent",
		     "change 12345678-1234-1234-1234-123456789abc LD_PRELOAD=/tmp/evil.so\n"), 68);
	CHECK_INT(r.n, 4);
	CHECK_STR(rec_get(&r, 3, "SYNTH_ARG_LD_PRELOAD"), "/tmp/evil.so");
	CHECK(rec_get(&r, 3, "LD_PRELOAD") == NULL);
	for (int i = 0; i < r.n; i++)
		CHECK(!has_control(&r, i));

	rec_stop(&r);
	classfs_device_unregister(d);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- wire format and helpers ---- */

TEST(kernel_format_and_get)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "tty");
	struct classfs_device *d;
	struct recorder r;
	char want[256], buf[256];
	size_t wl;

	CHECK(rec_start(&r, t) > 0);
	d = classfs_device_create(c, NULL, makedev(4, 1), NULL, NULL, "tty1");
	CHECK_INT(r.n, 1);
	wl = (size_t)snprintf(want, sizeof(want),
			      "add@/class/tty/tty1|ACTION=add|DEVPATH=/class/tty/tty1|SUBSYSTEM=tty|"
			      "MAJOR=4|MINOR=1|DEVNAME=tty1|SEQNUM=%llu|",
			      (unsigned long long)r.ev[0].seqnum);
	for (size_t i = 0; i < wl; i++)
		if (want[i] == '|')
			want[i] = '\0';
	CHECK_INT(r.ev[0].klen, wl);
	CHECK(r.ev[0].klen == wl && !memcmp(r.ev[0].kernel, want, wl));

	/* nothing written past the size given, the size needed returned */
	{
		struct classfs_uevent ev = {
			.seqnum = r.ev[0].seqnum, .action = CLASSFS_ACTION_ADD,
			.devpath = r.ev[0].devpath, .subsystem = r.ev[0].subsystem,
			.envc = r.ev[0].envc, .envp = (const char *const *)r.ev[0].envp,
		};

		memset(buf, '#', sizeof(buf));
		CHECK_INT(classfs_uevent_format_kernel(&ev, buf, 10), wl);
		CHECK_INT(buf[10], '#');
		CHECK_INT(classfs_uevent_format_kernel(&ev, buf, sizeof(buf)), wl);
		CHECK(!memcmp(buf, want, wl));
		CHECK_INT(buf[wl], '#');
		CHECK_STR(classfs_uevent_get(&ev, "DEVNAME"), "tty1");
		CHECK_STR(classfs_uevent_get(&ev, "ACTION"), "add");
		CHECK(classfs_uevent_get(&ev, "DEV") == NULL);
		CHECK(classfs_uevent_get(&ev, "NOPE") == NULL);
		CHECK(classfs_uevent_get(NULL, "ACTION") == NULL);
	}
	classfs_device_unregister(d);
	rec_stop(&r);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(action_names)
{
	static const char *const names[] = { "add", "remove", "change", "move",
					     "online", "offline", "bind", "unbind" };

	for (int i = 0; i < CLASSFS_ACTION_COUNT; i++) {
		CHECK_STR(classfs_action_name((enum classfs_action)i), names[i]);
		CHECK_INT(classfs_action_parse(names[i], strlen(names[i])), i);
	}
	CHECK(classfs_action_name(CLASSFS_ACTION_COUNT) == NULL);
	CHECK(classfs_action_name((enum classfs_action)-1) == NULL);
	CHECK_INT(classfs_action_parse("chang", 5), -EINVAL);
	CHECK_INT(classfs_action_parse("change", 5), -EINVAL);
	CHECK_INT(classfs_action_parse("changes", 7), -EINVAL);
	CHECK_INT(classfs_action_parse("add\n", 3), CLASSFS_ACTION_ADD);
	CHECK_INT(classfs_action_parse("", 0), -EINVAL);
}

/* ---- listeners ---- */

static char lg[32][64];
static int nlg;
static struct classfs_class *cb_class;
static struct classfs_device *cb_made;

static void reentrant_listener(const struct classfs_uevent *ev, void *data)
{
	(void)data;
	if (nlg < 32)
		snprintf(lg[nlg++], sizeof(lg[0]), "enter %s %s", classfs_action_name(ev->action),
			 ev->devpath);
	if (ev->action == CLASSFS_ACTION_ADD && !strcmp(ev->devpath, "/class/cb/a")) {
		/* back into the API from a listener: no deadlock */
		cb_made = classfs_device_create(cb_class, NULL, 0, NULL, NULL, "b");
		CHECK(cb_made != NULL);
		CHECK_INT(classfs_device_uevent(cb_made, CLASSFS_ACTION_CHANGE, NULL), 0);
		CHECK_INT(ftype(cb_class->p.tree, "class/cb/b"), CLASSFS_FT_DIR);
	}
	if (nlg < 32)
		snprintf(lg[nlg++], sizeof(lg[0]), "leave %s %s", classfs_action_name(ev->action),
			 ev->devpath);
}

static int self_removing_id;
static int self_removing_calls;

static void self_removing_listener(const struct classfs_uevent *ev, void *data)
{
	struct classfs_tree *t = data;

	(void)ev;
	self_removing_calls++;
	CHECK_INT(classfs_listener_remove(t, self_removing_id), 0);
}

static void noop_listener(const struct classfs_uevent *ev, void *data)
{
	(void)ev;
	(void)data;
}

TEST(listeners)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_device *a;
	struct recorder r;
	int id, ids[64], n = 0;

	cb_class = classfs_class_create(t, "cb");
	CHECK(rec_start(&r, t) > 0);
	id = classfs_listener_add(t, reentrant_listener, NULL);
	CHECK(id > 0 && id != r.id);
	nlg = 0;
	a = classfs_device_create(cb_class, NULL, 0, NULL, NULL, "a");
	CHECK(a != NULL);
	CHECK_INT(nlg, 6);
	CHECK_STR(lg[0], "enter add /class/cb/a");
	CHECK_STR(lg[1], "leave add /class/cb/a");	/* its own events come after it returns */
	CHECK_STR(lg[2], "enter add /class/cb/b");
	CHECK_STR(lg[3], "leave add /class/cb/b");
	CHECK_STR(lg[4], "enter change /class/cb/b");
	CHECK_INT(r.n, 3);
	CHECK_INT(rec_check_seq(&r, r.ev[0].seqnum - 1), 0);
	CHECK_INT(classfs_listener_remove(t, id), 0);
	CHECK_INT(classfs_listener_remove(t, id), -ENOENT);
	CHECK_INT(classfs_listener_remove(t, 9999), -ENOENT);
	CHECK_INT(classfs_listener_add(t, NULL, NULL), -EINVAL);
	CHECK_INT(classfs_listener_add(NULL, noop_listener, NULL), -EINVAL);
	nlg = 0;
	classfs_device_uevent(a, CLASSFS_ACTION_CHANGE, NULL);
	CHECK_INT(nlg, 0);	/* removed: not called again */
	CHECK_INT(r.n, 4);

	/* a listener removing itself */
	self_removing_calls = 0;
	self_removing_id = classfs_listener_add(t, self_removing_listener, t);
	classfs_device_uevent(a, CLASSFS_ACTION_CHANGE, NULL);
	classfs_device_uevent(a, CLASSFS_ACTION_CHANGE, NULL);
	CHECK_INT(self_removing_calls, 1);

	/* the table is bounded */
	for (;;) {
		int x = classfs_listener_add(t, noop_listener, NULL);

		if (x < 0) {
			CHECK_INT(x, -ENOSPC);
			break;
		}
		if (n == 64) {
			CHECK(n < 64);
			break;
		}
		ids[n++] = x;
	}
	CHECK(n > 8);
	for (int i = 0; i < n; i++)
		CHECK_INT(classfs_listener_remove(t, ids[i]), 0);

	classfs_device_unregister(a);
	classfs_device_unregister(cb_made);
	rec_stop(&r);
	classfs_class_destroy(cb_class);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* events of many threads arrive one at a time, in SEQNUM order */

struct order_state {
	pthread_mutex_t lock;
	uint64_t last;
	int n, bad, concurrent, inside;
};

static void order_listener(const struct classfs_uevent *ev, void *data)
{
	struct order_state *s = data;
	int inside = __atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);

	if (inside > 1)
		s->concurrent++;
	pthread_mutex_lock(&s->lock);
	if (s->n && ev->seqnum != s->last + 1)
		s->bad++;
	s->last = ev->seqnum;
	s->n++;
	pthread_mutex_unlock(&s->lock);
	__atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
}

struct worker {
	struct classfs_class *cls;
	int id;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 300; i++) {
		struct classfs_device *p = classfs_device_create(w->cls, NULL, makedev(200, (unsigned)(w->id * 1000 + i)), NULL, NULL, "p%d-%d", w->id, i);
		struct classfs_device *c = classfs_device_create(w->cls, p, 0, NULL, NULL, "c%d-%d", w->id, i);

		if (!p || !c)
			continue;
		classfs_device_uevent(c, CLASSFS_ACTION_CHANGE, NULL);
		classfs_device_unregister(p);
	}
	return NULL;
}

TEST(threads_deliver_in_order)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "mt");
	struct order_state s = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0 };
	struct worker w[4];
	pthread_t th[4];
	uint64_t base = classfs_tree_seqnum(t);
	int id = classfs_listener_add(t, order_listener, &s);

	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){ c, i };
		pthread_create(&th[i], NULL, worker, &w[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	CHECK_INT(s.bad, 0);
	CHECK_INT(s.concurrent, 0);
	CHECK_INT(s.n, 4 * 300 * 5);
	CHECK(classfs_tree_seqnum(t) == base + 4 * 300 * 5);
	CHECK(s.last == classfs_tree_seqnum(t));
	classfs_listener_remove(t, id);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* bus devices: SUBSYSTEM is the bus */
TEST(bus_device_events)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_bus usb = { .name = "usb" };
	struct classfs_device u = { 0 };
	struct recorder r;

	CHECK_INT(classfs_bus_register(t, &usb), 0);
	CHECK(rec_start(&r, t) > 0);
	classfs_device_initialize(&u);
	CHECK_INT(classfs_device_set_name(&u, "1-1"), 0);
	u.bus = &usb;
	u.devt = makedev(189, 1);
	CHECK_INT(classfs_device_add(&u), 0);
	CHECK_INT(r.n, 1);
	CHECK_STR(r.ev[0].devpath, "/devices/1-1");
	CHECK_STR(r.ev[0].subsystem, "usb");
	CHECK_STR(rec_get(&r, 0, "DEVNAME"), "1-1");
	CHECK_STR(rd(t, "devices/1-1/uevent"), "MAJOR=189\nMINOR=1\nDEVNAME=1-1\n");
	CHECK_INT(wr(t, "bus/usb/devices/1-1/uevent", "change"), 6);
	CHECK_INT(r.n, 2);
	CHECK_INT(classfs_device_unregister(&u), 0);
	CHECK_INT(r.n, 3);
	CHECK_STR(rec_get(&r, 2, "ACTION"), "remove");
	CHECK_INT(rec_check_seq(&r, r.ev[0].seqnum - 1), 0);
	rec_stop(&r);
	CHECK_INT(classfs_bus_unregister(&usb), 0);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* a device type names its devices' nodes when the class does not */
static const char *usb_devnode(struct classfs_device *dev, char *buf, size_t size)
{
	snprintf(buf, size, "bus/usb/001/%03u", minor(dev->devt) + 1);
	return buf;
}

static const char *class_devnode(struct classfs_device *dev, char *buf, size_t size)
{
	return "from-class";
}

/* add @dev named @name with @devt, of @type, on @bus or in @cls */
static int add_numbered(struct classfs_device *dev, const char *name, dev_t devt,
			const struct classfs_device_type *type, struct classfs_bus *bus,
			struct classfs_class *cls)
{
	classfs_device_initialize(dev);
	if (classfs_device_set_name(dev, "%s", name) < 0)
		return -1;
	dev->bus = bus;
	dev->cls = cls;
	dev->type = type;
	dev->devt = devt;
	return classfs_device_add(dev);
}

TEST(type_devnode)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	static const struct classfs_device_type usb_device = {
		.name = "usb_device",
		.devnode = usb_devnode,
	};
	struct classfs_bus usb = { .name = "usb" };
	struct classfs_class cls = { .name = "misc", .devnode = class_devnode };
	struct classfs_device u = { 0 }, m = { 0 };
	struct recorder r;

	CHECK_INT(classfs_bus_register(t, &usb), 0);
	CHECK_INT(classfs_class_register(t, &cls), 0);
	CHECK(rec_start(&r, t) > 0);
	CHECK_INT(add_numbered(&u, "1-1", makedev(189, 1), &usb_device, &usb, NULL), 0);
	CHECK_STR(rec_get(&r, 0, "DEVNAME"), "bus/usb/001/002");
	CHECK_STR(rd(t, "devices/1-1/uevent"),
		  "MAJOR=189\nMINOR=1\nDEVNAME=bus/usb/001/002\nDEVTYPE=usb_device\n");
	CHECK_STR(rd(t, "dev/char/189:1/dev"), "189:1\n");
	/* the class's devnode first */
	CHECK_INT(add_numbered(&m, "m0", makedev(10, 1), &usb_device, NULL, &cls), 0);
	CHECK_STR(rec_get(&r, 1, "DEVNAME"), "from-class");
	CHECK_INT(classfs_device_unregister(&m), 0);
	CHECK_INT(classfs_device_unregister(&u), 0);
	rec_stop(&r);
	classfs_class_unregister(&cls);
	CHECK_INT(classfs_bus_unregister(&usb), 0);
	CHECK_INT(classfs_tree_free(t), 0);
}
