// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uevent.c - building uevents, numbering them, delivering them in order.
 *
 * A change and the event reporting it are made in one critical section
 * (L, then E): the event gets its SEQNUM there, so SEQNUM order is the
 * order of changes.  Delivery is "combining": whichever thread finds the
 * queue idle delivers everything queued, one event at a time, with no
 * lock held; other producers just queue.  Listeners thus see events one
 * at a time in SEQNUM order and may call back into the API.
 */
#include <stdarg.h>

#include "internal.h"

static const char *const action_names[CLASSFS_ACTION_COUNT] = {
	[CLASSFS_ACTION_ADD] = "add",
	[CLASSFS_ACTION_REMOVE] = "remove",
	[CLASSFS_ACTION_CHANGE] = "change",
	[CLASSFS_ACTION_MOVE] = "move",
	[CLASSFS_ACTION_ONLINE] = "online",
	[CLASSFS_ACTION_OFFLINE] = "offline",
	[CLASSFS_ACTION_BIND] = "bind",
	[CLASSFS_ACTION_UNBIND] = "unbind",
};

const char *classfs_action_name(enum classfs_action action)
{
	if ((unsigned int)action >= CLASSFS_ACTION_COUNT)
		return NULL;
	return action_names[action];
}

int classfs_action_parse(const char *s, size_t len)
{
	for (int i = 0; i < CLASSFS_ACTION_COUNT; i++)
		if (strlen(action_names[i]) == len && !memcmp(s, action_names[i], len))
			return i;
	return -EINVAL;
}

/* the room left is too small: nothing added, as vsnprintf's truncation would say */
static int env_full(struct classfs_uevent_env *env, int room)
{
	if (room > 0)
		env->buf[env->buflen] = '\0';
	return -ENOMEM;
}

static int env_vadd(struct classfs_uevent_env *env, const char *fmt, va_list ap)
{
	int room = CLASSFS_UEVENT_BUFFER - env->buflen;
	int len;

	if (env->envp_idx >= CLASSFS_UEVENT_NUM_ENVP)
		return -ENOMEM;
	len = vsnprintf(&env->buf[env->buflen], (size_t)room, fmt, ap);
	if (len < 0 || len >= room)
		return env_full(env, room);
	env->envp[env->envp_idx++] = &env->buf[env->buflen];
	env->buflen += len + 1;
	return 0;
}

/*
 * Append "@a=@b" (@b NULL: @a alone) without a format: what "%s=%s" and
 * "%s" give, at a fraction of vsnprintf's cost (every event of every
 * device goes through here).  Same limits and same result as env_vadd().
 */
static int env_put(struct classfs_uevent_env *env, const char *a, const char *b)
{
	int room = CLASSFS_UEVENT_BUFFER - env->buflen;
	size_t alen, blen, len;
	char *p;

	if (env->envp_idx >= CLASSFS_UEVENT_NUM_ENVP)
		return -ENOMEM;
	alen = strlen(a);
	blen = b ? strlen(b) : 0;
	len = alen + (b ? 1 + blen : 0);
	if (room <= 0 || len >= (size_t)room)
		return env_full(env, room);
	p = &env->buf[env->buflen];
	memcpy(p, a, alen);
	if (b) {
		p[alen] = '=';
		memcpy(p + alen + 1, b, blen);
	}
	p[len] = '\0';
	env->envp[env->envp_idx++] = p;
	env->buflen += (int)len + 1;
	return 0;
}

/* "%u" without a format; @buf holds at least 11 bytes */
static const char *fmt_uint(char *buf, unsigned int v)
{
	char *p = buf + 10;

	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

int classfs_uevent_add_var(struct classfs_uevent_env *env, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (!env || !fmt)
		return -EINVAL;
	va_start(ap, fmt);
	/* the formats hooks use most, without vsnprintf ("(null)" as glibc prints it) */
	if (!strcmp(fmt, "%s=%s")) {
		const char *k = va_arg(ap, const char *), *v = va_arg(ap, const char *);

		r = env_put(env, k ? k : "(null)", v ? v : "(null)");
	} else if (!strcmp(fmt, "%s")) {
		const char *k = va_arg(ap, const char *);

		r = env_put(env, k ? k : "(null)", NULL);
	} else {
		r = env_vadd(env, fmt, ap);
	}
	va_end(ap);
	return r;
}

static bool has_hooks(const struct classfs_device *dev)
{
	return (dev->cls && (dev->cls->dev_uevent || dev->cls->devnode)) ||
	       (dev->type && (dev->type->uevent || dev->type->devnode));
}

/* @devname: the device's name, read under L (a rename frees the old one) */
static int env_device_vars(struct classfs_device *dev, struct classfs_uevent_env *env,
			   const char *devname)
{
	int r;

	if (major(dev->devt)) {
		char buf[256], num[12];
		const char *name = NULL;

		if (dev->cls && dev->cls->devnode)
			name = dev->cls->devnode(dev, buf, sizeof(buf));
		if (!name && dev->type && dev->type->devnode)
			name = dev->type->devnode(dev, buf, sizeof(buf));
		if (!name)
			name = devname;
		if ((r = env_put(env, "MAJOR", fmt_uint(num, major(dev->devt)))) < 0 ||
		    (r = env_put(env, "MINOR", fmt_uint(num, minor(dev->devt)))) < 0 ||
		    (r = env_put(env, "DEVNAME", name ? name : "(null)")) < 0)
			return r;
	}
	if (dev->type && dev->type->name && (r = env_put(env, "DEVTYPE", dev->type->name)) < 0)
		return r;
	if (dev->cls && dev->cls->dev_uevent && (r = dev->cls->dev_uevent(dev, env)))
		return r;
	if (dev->type && dev->type->uevent && (r = dev->type->uevent(dev, env)))
		return r;
	return 0;
}

/*
 * The variables a device contributes (what its `uevent` file shows):
 * MAJOR, MINOR, DEVNAME, DEVTYPE, then the class's and the type's hook.
 * Runs callbacks: never under L.  Return: 0, -ENOMEM, or a hook's veto.
 */
int cfs_env_device_vars(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	char name[NAME_MAX + 1] = "";

	if (major(dev->devt)) {
		struct classfs_tree *t = dev->cls ? dev->cls->p.tree : cfs_device_tree_of(dev);

		cfs_lock(t);
		if (dev->p.node.name) {
			size_t n = strnlen(dev->p.node.name, sizeof(name) - 1);

			memcpy(name, dev->p.node.name, n);
			name[n] = '\0';
		}
		cfs_unlock(t);
	}
	return env_device_vars(dev, env, name);
}

static const char *subsystem_of(const struct classfs_device *dev)
{
	if (dev->cls)
		return dev->cls->name;
	if (dev->bus)
		return dev->bus->name;
	return NULL;
}

/*
 * An event in the making.  It is allocated before the change it reports
 * (so reporting cannot fail for lack of memory), its device variables are
 * collected without locks (hooks run there), and DEVPATH and SEQNUM are
 * added under L, in the critical section of the change.
 */
struct cfs_event {
	struct cfs_event *next;
	struct classfs_uevent ev;
	bool filled;			/* env holds the device's variables */
	struct classfs_uevent_env env;
	const char *envp[CLASSFS_UEVENT_NUM_ENVP];
	char data[CLASSFS_UEVENT_BUFFER];
};

bool cfs_events_wanted(struct classfs_tree *t)
{
	/* read without E: a listener added meanwhile gets the events of
	 * changes that start after classfs_listener_add() returned */
	return __atomic_load_n(&t->nlisteners, __ATOMIC_ACQUIRE) > 0 || cfs_helper_active(t);
}

/* must an event for @dev be prepared (someone listens, or a hook may veto)? */
bool cfs_event_needed(struct classfs_device *dev)
{
	if (cfs_dev_state(dev, CFS_DS_SUPPRESS))
		return false;
	return has_hooks(dev) || cfs_events_wanted(cfs_device_tree_of(dev));
}

struct cfs_event *cfs_event_alloc(void)
{
	return cfs_malloc(sizeof(struct cfs_event));
}

void cfs_event_discard(struct cfs_event *ev)
{
	cfs_free(ev);
}

/*
 * A caller's variables: KEY of [A-Za-z0-9_], a VALUE without control
 * bytes (a newline in it would make a line of its own in monitor text).
 */
static int add_extra(struct classfs_uevent_env *env, const char *const *extra)
{
	for (; extra && *extra; extra++) {
		const char *eq = strchr(*extra, '=');

		if (!eq || !cfs_uevent_key_valid(*extra, (size_t)(eq - *extra)) ||
		    !cfs_uevent_value_clean(eq + 1))
			return -EINVAL;
		if (env_put(env, *extra, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Collect the variables of @dev (and @extra) into @ev, without locks.
 * Return: 0, -EINVAL (malformed extra), -ENOMEM (limits), or a hook's
 * non-zero return (a veto).
 */
int cfs_event_fill(struct classfs_device *dev, struct cfs_event *ev, const char *const *extra)
{
	int r;

	ev->env.envp_idx = 0;
	ev->env.buflen = 0;
	ev->filled = true;
	r = cfs_env_device_vars(dev, &ev->env);
	if (!r)
		r = add_extra(&ev->env, extra);
	return r;
}

/* @key then @val and a NUL at @p; the end */
static char *put_var(char *p, const char *key, const char *val)
{
	size_t k = strlen(key), v = strlen(val);

	memcpy(p, key, k);
	memcpy(p + k, val, v);
	p[k + v] = '\0';
	return p + k + v + 1;
}

/*
 * Under L: the DEVPATH of @dev into @devpath (PATH_MAX bytes) and a check
 * that the whole event (ACTION, DEVPATH, SUBSYSTEM, [DEVPATH_OLD], @ev's
 * variables, SEQNUM) fits 64 variables and 2048 bytes.
 * Return: the length of DEVPATH, or -ENOMEM.
 */
static int event_measure_locked(struct classfs_tree *t, const struct cfs_event *ev,
				enum classfs_action action, struct classfs_device *dev,
				const char *devpath_old, char *devpath)
{
	const char *subsystem = subsystem_of(dev);
	int len = cfs_event_path_locked(t, &dev->p.node, devpath, PATH_MAX);
	size_t need;

	if (len < 0)
		return -ENOMEM;
	need = strlen("ACTION=") + strlen(action_names[action]) + 1 + strlen("DEVPATH=") +
	       (size_t)len + 1 + (subsystem ? strlen("SUBSYSTEM=") + strlen(subsystem) + 1 : 0) +
	       (devpath_old ? strlen("DEVPATH_OLD=") + strlen(devpath_old) + 1 : 0) +
	       (size_t)ev->env.buflen + strlen("SEQNUM=") + 21;
	if (ev->env.envp_idx + 5 > CLASSFS_UEVENT_NUM_ENVP || need > CLASSFS_UEVENT_BUFFER)
		return -ENOMEM;
	return len;
}

/* Under L: would the filled @ev for @dev fit the limits?  0 or -ENOMEM */
int cfs_event_check_locked(struct classfs_tree *t, const struct cfs_event *ev,
			   enum classfs_action action, struct classfs_device *dev)
{
	char devpath[PATH_MAX];
	int len = event_measure_locked(t, ev, action, dev, NULL, devpath);

	cfs_assert_held(t);
	return len < 0 ? len : 0;
}

/*
 * Under L: give @ev its DEVPATH and final strings.  @ev may be NULL when
 * nothing was prepared: if listeners appeared meanwhile one is made here
 * (the device has no hooks, else it would have been prepared).
 * Return: the event, or NULL when nobody is to get one (*err = 0) or it
 * exceeds the limits (*err = -ENOMEM).
 */
static struct cfs_event *event_finish_locked(struct classfs_tree *t, struct cfs_event *ev,
					     enum classfs_action action,
					     struct classfs_device *dev, const char *devpath_old,
					     int *err)
{
	char devpath[PATH_MAX];
	const char *subsystem = subsystem_of(dev);
	char *p;
	int n = 0;

	*err = 0;
	if (!ev) {
		if (!t->nlisteners && !__atomic_load_n(&t->helper, __ATOMIC_ACQUIRE))
			return NULL;
		ev = cfs_event_alloc();
		if (!ev)
			return NULL;	/* a listener that appeared during this change */
		ev->filled = false;
	}
	if (!ev->filled) {
		ev->env.envp_idx = 0;
		ev->env.buflen = 0;
		ev->filled = true;
		if (env_device_vars(dev, &ev->env, dev->p.node.name) < 0) {
			*err = -ENOMEM;
			goto fail;
		}
	}
	if (event_measure_locked(t, ev, action, dev, devpath_old, devpath) < 0) {
		*err = -ENOMEM;
		goto fail;
	}
	/*
	 * Nobody to deliver to (read under E, as delivery does): the event
	 * is numbered (SEQNUM counts every change) but its strings are not
	 * built.  The hooks ran and the limits were checked as for a heard one.
	 */
	if (!t->nlisteners && !__atomic_load_n(&t->helper, __ATOMIC_ACQUIRE)) {
		cfs_event_discard(ev);
		return NULL;
	}
	p = ev->data;
	/* memcpy, not snprintf: the sizes are checked above */
#define PUT(key, val) do { ev->envp[n++] = p; p = put_var(p, key, val); } while (0)
	PUT("ACTION=", action_names[action]);
	ev->ev.devpath = p + strlen("DEVPATH=");
	PUT("DEVPATH=", devpath);
	ev->ev.subsystem = NULL;
	if (subsystem) {
		ev->ev.subsystem = p + strlen("SUBSYSTEM=");
		PUT("SUBSYSTEM=", subsystem);
	}
	if (devpath_old)
		PUT("DEVPATH_OLD=", devpath_old);
	for (int i = 0; i < ev->env.envp_idx; i++)
		PUT("", ev->env.envp[i]);
#undef PUT
	ev->envp[n++] = p;	/* SEQNUM, written when numbered */
	*p = '\0';
	ev->ev.action = action;
	ev->ev.envc = n;
	ev->ev.envp = ev->envp;
	return ev;
fail:
	cfs_event_discard(ev);
	return NULL;
}

/*
 * Under L: finish @ev (NULL: nothing prepared), number it and queue it,
 * in the critical section of the change it reports; @ev is consumed.
 * Return: 0, or -ENOMEM when the event exceeds the limits (not sent, no
 * SEQNUM used).
 */
int cfs_event_emit_locked(struct classfs_tree *t, struct cfs_event *ev,
			  enum classfs_action action, struct classfs_device *dev,
			  const char *devpath_old)
{
	int err;

	cfs_assert_held(t);
	/*
	 * A suppressed device sends nothing, and one whose ADD was never
	 * numbered sends no REMOVE: nobody heard of it.
	 */
	if (dev) {
		unsigned int st = __atomic_load_n(&dev->p.state, __ATOMIC_ACQUIRE);

		if ((st & CFS_DS_SUPPRESS) ||
		    (action == CLASSFS_ACTION_REMOVE && !(st & CFS_DS_ADD_SENT))) {
			cfs_event_discard(ev);
			return 0;
		}
	}
	pthread_mutex_lock(&t->evlock);
	ev = event_finish_locked(t, ev, action, dev, devpath_old, &err);
	if (!err && dev && action == CLASSFS_ACTION_ADD)
		__atomic_or_fetch(&dev->p.state, CFS_DS_ADD_SENT, __ATOMIC_RELEASE);
	if (!err) {
		t->seqnum++;
		if (ev) {
			char *s = (char *)ev->envp[ev->ev.envc - 1];

			ev->ev.seqnum = t->seqnum;
			sprintf(s, "SEQNUM=%llu", (unsigned long long)t->seqnum);
			ev->next = NULL;
			*t->evq_tail = ev;
			t->evq_tail = &ev->next;
		}
	}
	pthread_mutex_unlock(&t->evlock);
	return err;
}

/* deliver everything queued, unless another thread is doing it */
void cfs_events_deliver(struct classfs_tree *t)
{
	struct cfs_listener ls[CFS_MAX_LISTENERS];
	struct cfs_event *ev;
	int n;

	pthread_mutex_lock(&t->evlock);
	if (t->delivering) {
		pthread_mutex_unlock(&t->evlock);
		return;
	}
	t->delivering = true;
	t->deliverer = pthread_self();
	while ((ev = t->evq_head)) {
		t->evq_head = ev->next;
		if (!t->evq_head)
			t->evq_tail = &t->evq_head;
		n = t->nlisteners;
		memcpy(ls, t->listeners, sizeof(ls[0]) * (size_t)n);
		pthread_mutex_unlock(&t->evlock);
		for (int i = 0; i < n; i++)
			ls[i].fn(&ev->ev, ls[i].data);
		cfs_helper_event(t, &ev->ev);
		cfs_event_discard(ev);
		pthread_mutex_lock(&t->evlock);
		t->delivered++;
		pthread_cond_broadcast(&t->evcond);
	}
	t->delivering = false;
	pthread_cond_broadcast(&t->evcond);
	pthread_mutex_unlock(&t->evlock);
}

int classfs_listener_add(struct classfs_tree *tree, classfs_listener_fn fn, void *data)
{
	int id;

	if (!tree || !fn)
		return -EINVAL;
	pthread_mutex_lock(&tree->evlock);
	if (tree->nlisteners == CFS_MAX_LISTENERS) {
		pthread_mutex_unlock(&tree->evlock);
		return -ENOSPC;
	}
	id = tree->next_listener_id++;
	tree->listeners[tree->nlisteners] = (struct cfs_listener){ fn, data, id };
	__atomic_store_n(&tree->nlisteners, tree->nlisteners + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tree->evlock);
	return id;
}

int classfs_listener_remove(struct classfs_tree *tree, int id)
{
	int i;

	if (!tree)
		return -EINVAL;
	pthread_mutex_lock(&tree->evlock);
	for (i = 0; i < tree->nlisteners; i++)
		if (tree->listeners[i].id == id)
			break;
	if (i == tree->nlisteners) {
		pthread_mutex_unlock(&tree->evlock);
		return -ENOENT;
	}
	memmove(&tree->listeners[i], &tree->listeners[i + 1],
		sizeof(tree->listeners[0]) * (size_t)(tree->nlisteners - i - 1));
	__atomic_store_n(&tree->nlisteners, tree->nlisteners - 1, __ATOMIC_RELEASE);
	if (tree->delivering && !pthread_equal(tree->deliverer, pthread_self())) {
		uint64_t seen = tree->delivered;

		while (tree->delivering && tree->delivered == seen)
			pthread_cond_wait(&tree->evcond, &tree->evlock);
	}
	pthread_mutex_unlock(&tree->evlock);
	return 0;
}

const char *classfs_uevent_get(const struct classfs_uevent *ev, const char *key)
{
	size_t kl;

	if (!ev || !key)
		return NULL;
	kl = strlen(key);
	for (int i = 0; i < ev->envc; i++)
		if (!strncmp(ev->envp[i], key, kl) && ev->envp[i][kl] == '=')
			return ev->envp[i] + kl + 1;
	return NULL;
}

size_t classfs_uevent_format_kernel(const struct classfs_uevent *ev, char *buf, size_t size)
{
	size_t len = 0;
	char head[PATH_MAX + 32];
	int hl = snprintf(head, sizeof(head), "%s@%s", classfs_action_name(ev->action),
			  ev->devpath);

	if (hl < 0)
		return 0;
#define APPEND(s, l) do { if (len + (l) <= size) memcpy(buf + len, s, l); len += (l); } while (0)
	APPEND(head, (size_t)hl + 1);
	for (int i = 0; i < ev->envc; i++)
		APPEND(ev->envp[i], strlen(ev->envp[i]) + 1);
#undef APPEND
	return len;
}

void classfs_device_set_uevent_suppress(struct classfs_device *dev, bool suppress)
{
	if (!dev)
		return;
	if (suppress)
		__atomic_or_fetch(&dev->p.state, CFS_DS_SUPPRESS, __ATOMIC_RELEASE);
	else
		__atomic_and_fetch(&dev->p.state, ~(unsigned int)CFS_DS_SUPPRESS, __ATOMIC_RELEASE);
}
