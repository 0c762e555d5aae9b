/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon.h - classfsd's parts: options, registry of published objects,
 * connections, the event loop that serves them and the worker pool that
 * runs their requests, remote attribute calls, request handlers, the
 * event ring and its subscribers.
 *
 * Locking rules (the one place they are stated):
 *
 *  cfsd.lock (R)  the registry: its name tables (cfsd.devs, cfsd.classes),
 *                 the object lists (cfsd.all, each connection's bound),
 *                 every entry's owner and removing flag, cfsd.buses.
 *                 Taken with cfsd_lock(); every function that touches
 *                 what it guards asserts it (cfsd_assert_held()), in
 *                 -O0 and sanitizer builds (CFSD_LOCK_CHECKS).
 *                 R is never held across a wait on a client: not across a
 *                 remote call (cfsd_remote_call() asserts it), and not
 *                 across the core's removal of a device or a class, which
 *                 waits for the show()/store() calls running on it, each
 *                 of which may wait for its publisher up to the call
 *                 timeout.  A removal follows Linux's device_del() order:
 *                 under R its objects leave the registry (struct
 *                 cfsd_removal), so no lookup finds them and no request
 *                 starts on them; R is dropped; then the tree removes them
 *                 and drains their calls (cfsd_removal_finish() asserts R
 *                 is not held).  R may be held across core calls that wait
 *                 for no callback: adding a device or a class, a rename,
 *                 creating a file, lookups and walks.  One wait releases
 *                 it: what is made in the name of a class being removed
 *                 waits for that removal on a condition of R's
 *                 (registry.c's class_wait_removed()).
 *  cfsd.vlock (V) the stored attribute values and each cfsd_rdev.name.
 *                 Taken inside R (R -> V) and by the attribute callbacks,
 *                 which never take R.
 *  Inside R a thread may also take V, the quota lock (quota.c), the tree's
 *  own locks and what the tree's event listener takes (events.c); no lock
 *  taken inside R takes R.  Other locks are private to their file and
 *  stated there (call.c's calls_lock, pool.c's, each connection's olock).
 */
#ifndef CLASSFSD_DAEMON_H
#define CLASSFSD_DAEMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#include "list.h"
#include "protocol.h"

/* sd-daemon(3) priority prefixes: journald takes them from stderr */
#define LOG_PFX_ERR	"<3>"
#define LOG_PFX_WARNING	"<4>"
#define LOG_PFX_NOTICE	"<5>"
#define LOG_PFX_INFO	"<6>"
#define LOG_PFX_DEBUG	"<7>"

void cfsd_log(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_err(...) cfsd_log(LOG_PFX_ERR, __VA_ARGS__)
#define log_warn(...) cfsd_log(LOG_PFX_WARNING, __VA_ARGS__)
#define log_info(...) cfsd_log(LOG_PFX_INFO, __VA_ARGS__)
#define log_debug(...) cfsd_log(LOG_PFX_DEBUG, __VA_ARGS__)

struct cfsd_config {
	const char *socket_path;
	const char *mountpoint;
	const char *mount_options;
	const char *dev_mountpoint;	/* the devtmpfs-style view of the tree; NULL: none */
	enum classfs_layout layout;
	const char *load_file;
	bool sample;
	bool netlink;
	bool verbose;
	const char *group;
	size_t max_msg;
	int call_timeout_ms;
	size_t ring_size;
	size_t ring_bytes;	/* memory the ring's events may take */
	size_t helper_queue;	/* memory the events waiting for the uevent helper may take */
	size_t sub_queue;
	/* per-uid limits (root has none): quota.c */
	size_t max_conns;
	size_t max_objs;
	size_t max_subs;
	size_t max_entries;	/* attributes in a uid's devices */
	size_t max_bytes;	/* stored value bytes in a uid's devices */
	size_t max_reqs;	/* requests running at once (pool.c) */
};

struct cfsd_conn;

/*
 * A thing the event loop (loop.c) serves: a descriptor, the epoll events
 * it waits for, and what to do about them.  The loop knows nothing else
 * of it.  dispatch() runs on the loop's thread with the events seen, or
 * with none (revents 0) when another thread kicked it (cfsd_loop_kick()).
 */
struct cfsd_source {
	int fd;
	uint32_t events;		/* EPOLLIN, EPOLLOUT, EPOLLET ... */
	void (*dispatch)(struct cfsd_source *s, uint32_t revents);
	void *userdata;
	/* NULL for a source that lives as long as the loop: else a kick holds its userdata */
	void (*hold)(void *userdata);
	void (*release)(void *userdata);
	/* the loop's (its kick lock) */
	bool kicked;
	struct cfsd_source *kick_next;
};

/* every published object: its owner and, when bound, its connection (all under R) */
struct cfsd_obj {
	uid_t owner;
	struct cfsd_conn *bound;		/* NULL: not bound */
	struct cfs_list bound_link;	/* in its connection's bound objects, in creation order */
	struct cfs_list all_link;	/* in cfsd.all: every object, in creation order */
	bool is_class;
	bool open;			/* a device other uids may publish below (CFS_F_OPEN) */
	bool removing;			/* out of the registry: a removal unregisters it */
};

struct cfsd_rclass {
	struct cfsd_obj o;
	struct classfs_class *cls;	/* a reference held */
	char *name;
	bool foreign;			/* made by the record loader: it unregisters it */
	struct cfsd_rclass *hnext;
	uint32_t hash;			/* of name */
};

struct cfsd_rdev;

/* one attribute of a published device: a stored value or a remote one */
struct cfsd_rattr {
	struct classfs_device_attribute a;
	struct cfsd_rdev *d;
	char *path;			/* "name" or "dir/name" as the client named it */
	uint8_t *value;			/* stored value (under the value lock) */
	size_t len;
	bool remote;
};

/*
 * What a device holds that counts against its owner's entries and bytes
 * (quota.c): under quota.c's lock.  @gone: the device left the registry,
 * its charges went with it and nothing more is charged.
 */
struct cfsd_charge {
	size_t entries;
	size_t bytes;
	bool gone;
};

/*
 * Who may keep a name, and for how long.  A published device's names
 * change on RENAME, which runs under cfsd.lock and frees the old strings:
 * the core's name (classfs_device_name()), ->key, and ->name (also under
 * cfsd.vlock).  So a device's name is read, and copied out if it is to
 * be used after, with cfsd.lock held; a pointer to it is kept no longer
 * than the lock (a reference on the device keeps the device, not its
 * name).  ->name is read under cfsd.vlock by remote calls.  ->cls_name,
 * ->devtype and a class's name do not change while the object lives.  A
 * record's devices are never renamed.
 */
struct cfsd_rdev {
	struct cfsd_obj o;
	struct cfsd_charge q;
	struct classfs_device dev;
	struct classfs_device_type type;
	struct classfs_attribute_group *groups;		/* ngroups of them */
	const struct classfs_attribute_group **group_ptrs;
	const struct classfs_device_attribute **attr_ptrs;
	struct cfsd_rattr *attrs;
	unsigned int nattrs, ngroups;
	char *key;			/* "CLASS/NAME" or "/NAME" (physical) */
	char *name;			/* the name its publisher knows it by (under cfsd.vlock): names it in
					 * remote calls; follows renames the publisher makes */
	char *cls_name;			/* NULL for a physical device */
	char *devtype;
	struct cfsd_conn *remote;		/* serves the remote attributes (a reference) */
	struct cfsd_rdev *hnext;
	uint32_t hash;			/* of key */
};

struct cfsd {
	struct cfsd_config cfg;
	struct classfs_tree *tree;
	struct classfs_mount *mount;
	struct classfs_mount *dev_mount;
	int listen_fd;
	int netlink_fd;
	/* registry: classes and devices, their owners and bindings */
	pthread_mutex_t lock;
	/* values of stored attributes and the rdev -> conn links of remote ones */
	pthread_mutex_t vlock;
	struct cfs_list all;		/* every object (cfsd_obj.all_link) */
	struct cfsd_rclass **classes;
	size_t nclass_buckets, nclasses;
	struct cfsd_rdev **devs;
	size_t ndev_buckets, ndevs;
	struct classfs_bus **buses;
	size_t nbuses;
	uintptr_t lock_owner;		/* the thread holding R (CFSD_LOCK_CHECKS), else 0 */
};

extern struct cfsd cfsd;

/*
 * R's owner is recorded, and the assertions check it, where the core
 * checks its own lock (src/core/internal.h): not in the optimized build,
 * nor with NDEBUG.
 */
#ifdef __has_feature
#define CFSD_HAS_FEATURE(f) __has_feature(f)
#else
#define CFSD_HAS_FEATURE(f) 0
#endif
#if !defined(NDEBUG) &&                                                             \
	(!defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) ||                \
	 defined(__SANITIZE_THREAD__) || CFSD_HAS_FEATURE(address_sanitizer) ||    \
	 CFSD_HAS_FEATURE(thread_sanitizer))
#define CFSD_LOCK_CHECKS 1
#endif

#ifdef CFSD_LOCK_CHECKS
void cfsd_assert_held_fn(const char *fn);
void cfsd_assert_not_held_fn(const char *fn);
#define cfsd_assert_held() cfsd_assert_held_fn(__func__)
#define cfsd_assert_not_held() cfsd_assert_not_held_fn(__func__)
#define cfsd_owner_set(t) __atomic_store_n(&cfsd.lock_owner, (t), __ATOMIC_RELAXED)
#else
#define cfsd_assert_held() ((void)0)
#define cfsd_assert_not_held() ((void)0)
#define cfsd_owner_set(t) ((void)0)
#endif

/* take R (cfsd.lock) */
static inline void cfsd_lock(void)
{
	pthread_mutex_lock(&cfsd.lock);
	cfsd_owner_set((uintptr_t)pthread_self());
}

/* release R */
static inline void cfsd_unlock(void)
{
	cfsd_owner_set((uintptr_t)0);
	pthread_mutex_unlock(&cfsd.lock);
}

/*
 * A removal in progress: the devices and classes a request removes, taken
 * out of the registry under R, in the order the tree is to remove them
 * (each device before those it depends on, a class after its devices).
 * Each holds a reference until cfsd_removal_finish() has removed it.
 */
struct cfsd_gone {
	struct classfs_device *dev;	/* a device (referenced) ... */
	struct cfsd_rclass *rc;		/* ... or a class (its entry, removing) */
};

struct cfsd_removal {
	struct cfsd_gone *v;
	size_t n, cap;
	struct cfsd_gone inl[16];	/* a removal always takes this many */
};

/* registry.c */
int cfsd_registry_init(void);
struct cfsd_rclass *cfsd_class_lookup(const char *name);
struct cfsd_rdev *cfsd_dev_lookup(const char *cls, const char *name);
int cfsd_class_create(const char *name, uid_t owner, struct cfsd_conn *bind, struct cfsd_rclass **out,
		      char *msg, size_t msgsz);
int cfsd_dev_add(const struct cfs_msg *m, uid_t owner, struct cfsd_conn *c, char *msg, size_t msgsz);
int cfsd_dev_rename(struct cfsd_rdev *rd, const char *new_name, const struct cfsd_conn *by);
bool cfsd_may_change(const struct cfsd_obj *o, uid_t uid);
bool cfsd_dev_is_entry(const struct classfs_device *dev);
struct cfsd_rdev *cfsd_dev_entry(const struct classfs_device *dev);
bool cfsd_dev_removing(const struct classfs_device *dev);
/* (for removal.c) */
void cfsd_dev_unpublish(struct cfsd_rdev *rd);
void cfsd_class_unpublish(struct cfsd_rclass *rc);
void cfsd_class_drop(struct cfsd_rclass *rc, bool fresh);
void cfsd_removals_done(void);
void cfsd_forget_dead(void);

/* removal.c */
void cfsd_removal_init(struct cfsd_removal *rm);
int cfsd_removal_reserve(struct cfsd_removal *rm, size_t n);
void cfsd_removal_add_dev(struct cfsd_removal *rm, struct classfs_device *dev);
void cfsd_removal_add_class(struct cfsd_removal *rm, struct cfsd_rclass *rc);
void cfsd_removal_finish(struct cfsd_removal *rm);
void cfsd_registry_clear(void);
void cfsd_registry_shutdown(void);
void cfsd_unbind_all(struct cfsd_conn *c);

/* attrs.c */
int cfsd_attrs_check(const struct cfs_msg *m, char *msg, size_t msgsz);
int cfsd_attrs_build(struct cfsd_rdev *rd, const struct cfs_msg *m, char *msg, size_t msgsz);
int cfsd_attrs_charge(struct cfsd_rdev *rd, char *msg, size_t msgsz);
bool cfsd_name_reserved(const char *s, size_t len);
int cfsd_path_reserved(const char *path, char *msg, size_t msgsz);

/* access.c */
uid_t cfsd_dev_owner(const struct classfs_device *dev);
struct cfsd_rdev *cfsd_rdev_of(const struct classfs_device *dev);
int cfsd_file_owner(struct classfs_device *dev, char *path, const char *attr, uid_t *owner,
		    char *who, size_t whosz);
int cfsd_dev_place_check(const struct cfs_msg *m, uid_t owner, const struct cfsd_rdev *parent,
			 const struct cfsd_rdev *phys, char *msg, size_t msgsz);

/* attr-create.c */
int cfsd_attr_create_check(const struct cfs_msg *m, char *msg, size_t msgsz);
int cfsd_attr_create(const struct cfsd_conn *c, const struct cfs_msg *m,
		     struct classfs_device *dev, uid_t owner, const char *who, char *msg,
		     size_t msgsz);

/* remove.c */
int cfsd_remove_with_dependents(uid_t uid, struct cfsd_rclass *rc, struct classfs_device *top,
				const char *what, struct cfsd_removal *rm, char *msg, size_t msgsz);
int cfsd_remove_all_devices(struct cfsd_removal *rm, char *msg, size_t msgsz);

/* reset.c */
int cfsd_reset(uid_t uid, char *msg, size_t msgsz);

/* quota.c: what each uid holds, within its limits */
enum cfsd_quota {
	CFSD_Q_CONN,	/* connections */
	CFSD_Q_OBJ,	/* classes and devices published */
	CFSD_Q_SUB,	/* event subscriptions */
	CFSD_Q_ENTRY,	/* attributes in its devices (DEVICE_ADD's and ATTR_SET CREATE's) */
	CFSD_Q_BYTES,	/* bytes of the values stored in its devices */
	CFSD_Q_COUNT
};

#define CFSD_RING_BYTES_DEFAULT	(64u << 20)
#define CFSD_MAX_CONNS_DEFAULT	64
#define CFSD_MAX_OBJS_DEFAULT	50000
#define CFSD_MAX_SUBS_DEFAULT	16
#define CFSD_MAX_ENTRIES_DEFAULT 250000
#define CFSD_MAX_BYTES_DEFAULT	(64u * 1024 * 1024)

int cfsd_quota_charge(uid_t uid, enum cfsd_quota q, size_t n, char *msg, size_t msgsz);
void cfsd_quota_uncharge(uid_t uid, enum cfsd_quota q, size_t n);
void cfsd_quota_shutdown(void);
/*
 * The uid a worker thread's request runs for (cfsd_handle() sets it), 0
 * on every other thread (the mount's): a change of a device's values is
 * refused past its owner's limits only when a uid other than root asked.
 */
extern __thread uid_t cfsd_quota_caller;
int cfsd_quota_dev_charge(struct cfsd_rdev *rd, long entries, long bytes, char *msg, size_t msgsz);
void cfsd_quota_dev_gone(struct cfsd_rdev *rd);
int cfsd_quota_usage(struct cfs_buf *b);
int cfsd_quota_conn_admit(int fd, uid_t uid);
void cfsd_quota_conn_end(struct cfsd_conn *c);

/*
 * One client connection.  The event loop (loop.c) reads it and writes its
 * output; its requests run one at a time, in order, on a thread of the
 * worker pool (pool.c).  Each field says who may touch it.
 */
struct cfsd_conn {
	int fd;
	struct cfsd_source src;		/* its socket in the loop; userdata: the connection */
	uid_t uid;
	pid_t pid;
	int refs;
	bool dead;		/* no more output, no more calls (set under olock) */
	/* the loop's only */
	bool readable;			/* EPOLLIN seen, not yet read to EAGAIN */
	bool ended;			/* hung up: its teardown is the pool's */
	struct cfsd_sub *sub;		/* the subscription the loop serves (events.c) */
	struct cfs_list loop_link;	/* in the connections served (conn.c) */
	/* requests waiting for the pool (its lock: pool.c) */
	struct cfsd_req *qhead, *qtail;
	unsigned int qlen;
	bool scheduled;			/* on the pool's run list or being run */
	bool closing;			/* no more requests: tear down when idle */
	bool read_paused;	/* the loop stopped reading: qlen reached its bound */
	bool parked;		/* off the run list while its output is blocked (still scheduled) */
	struct cfsd_conn *run_next;
	/* output not yet taken by the socket, in order (olock) */
	pthread_mutex_t olock;
	struct cfsd_out *out_head, *out_tail;
	size_t out_bytes;
	/*
	 * Set while out_bytes is over its bound or a stream runs: the pool
	 * runs none of its requests meanwhile.  Written under olock, read
	 * by the pool without it.
	 */
	bool out_blocked;
	const struct cfsd_stream_ops *stream;	/* a request's output still to be made */
	void *stream_data;
	uint32_t stream_serial;
	uint64_t sub_from;		/* a subscription to start from this SEQNUM (0: none) */
	/* bound objects (under cfsd.lock) */
	struct cfs_list bound;		/* the objects bound to it (cfsd_obj.bound_link) */
	/* the requests' own (one runs at a time) */
	uint8_t *load;			/* LOAD chunks so far */
	size_t load_len, load_cap;
	bool subscribed;
	bool sub_charged;		/* counted in its uid's subscriptions (quota.c) */
};

/*
 * A request's output made as its client takes it (REPLAY): the loop asks
 * for the next message whenever the connection's output is under its
 * bound, so a connection never holds more than the bound plus one
 * message of it.
 */
struct cfsd_stream_ops {
	/*
	 * the next message into @b (under the connection's olock): true when
	 * more follow, false when @b holds the last (the final REPLY)
	 */
	bool (*next)(struct cfsd_conn *c, struct cfs_buf *b, void *data);
	void (*free)(void *data);
};

/* conn.c */
int cfsd_conn_start(int fd);
void cfsd_conn_stream(struct cfsd_conn *c, uint32_t serial, const struct cfsd_stream_ops *ops,
		      void *data);
struct cfsd_conn *cfsd_conn_get(struct cfsd_conn *c);
void cfsd_conn_put(struct cfsd_conn *c);
int cfsd_conn_send(struct cfsd_conn *c, struct cfs_buf *b);
int cfsd_conn_post(struct cfsd_conn *c, const struct cfs_buf *b, uint64_t call_id);
void cfsd_conn_kick(struct cfsd_conn *c);
void cfsd_conn_end(struct cfsd_conn *c);
void cfsd_conn_end_all(void);
void cfsd_conn_teardown(struct cfsd_conn *c);

/* loop.c */
int cfsd_loop_init(void);
int cfsd_source_add(struct cfsd_source *s);
int cfsd_source_set_events(struct cfsd_source *s, uint32_t events);
void cfsd_source_del(struct cfsd_source *s);
void cfsd_loop_kick(struct cfsd_source *s);
void cfsd_loop_exit(void);
int cfsd_loop_run(void);
void cfsd_loop_shutdown(void);
void cfsd_loop_free(void);

/* listen.c */
int cfsd_listen_start(int fd);
void cfsd_listen_stop(void);
void cfsd_listen_fd_freed(void);

/* pool.c */
#define CFSD_QUEUE_MAX 64	/* requests of one connection read ahead of their execution */
#define CFSD_WORKERS_MAX 32	/* threads that run requests */
#define CFSD_MAX_REQS_DEFAULT 8	/* requests one uid (not root) runs at a time */
bool cfsd_pool_queue(struct cfsd_conn *c, const uint8_t *msg, size_t len);
void cfsd_pool_close(struct cfsd_conn *c);
void cfsd_pool_unblock(struct cfsd_conn *c);
void cfsd_pool_stop(void);
unsigned int cfsd_pool_threads(void);

/* call.c */
ssize_t cfsd_remote_call(struct cfsd_conn *c, struct cfsd_rattr *ra, unsigned int kind, char *buf,
			 const char *in, size_t count);
void cfsd_call_reply(struct cfsd_conn *c, const uint8_t *msg, size_t len);
void cfsd_call_failed(struct cfsd_conn *c, uint64_t id);
void cfsd_calls_fail(struct cfsd_conn *c);

/* ops.c */
void cfsd_handle(struct cfsd_conn *c, const uint8_t *buf, size_t len);
void cfsd_reply_error(struct cfsd_conn *c, uint32_t serial, int err, const char *msg);

/* events.c */
int cfsd_events_init(void);
void cfsd_events_shutdown(void);
int cfsd_subscribe(struct cfsd_conn *c, uint32_t serial, uint64_t from);
void cfsd_events_start(struct cfsd_conn *c, uint64_t from);
void cfsd_events_send(struct cfsd_conn *c);
void cfsd_events_stop(struct cfsd_conn *c);
void cfsd_events_busy(bool busy);
void cfsd_events_writable(struct cfsd_conn *c);
int cfsd_replay(struct cfsd_conn *c, uint32_t serial, uint64_t first, uint64_t last, char *msg,
		size_t msgsz);

#endif
