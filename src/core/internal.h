/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - what the core's files share.
 *
 * Locking rules (the one place they are stated):
 *
 *  tree->lock   (L)  the structure of one tree: nodes, directories, ids,
 *                    class/bus lists, indexes, device state bits,
 *                    interface lists, pending renames.  Never held while
 *                    a caller's callback (show/store, hooks, add/remove,
 *                    release, listeners, watch sync/notify) runs, except
 *                    a watch's changed(), which only records (see
 *                    struct classfs_watch_ops).  Allocation under L is
 *                    allowed.  Functions named *_locked, and those whose
 *                    comment says "under L", require it:
 *                    cfs_assert_held() checks that in debug and
 *                    sanitizer builds (CFS_LOCK_CHECKS).
 *  tree->evlock (E)  the event queue and the listener table.  Taken
 *                    inside L (L -> E) to queue an event in the same
 *                    critical section as the change it reports, so
 *                    SEQNUM order is tree order.  Never held across a
 *                    listener call.  Waits: tree->evcond (the delivering
 *                    thread finished a batch).
 *  default_lock      creation of the default tree only.
 *  class I           a class's interface lock (interface.c): add() and
 *                    remove() of one class run on one thread at a time,
 *                    as under Linux's class mutex.  Its owner thread may
 *                    take it again (a callback adds and removes devices of
 *                    the class); its state (cls->p.intf_owner,
 *                    intf_depth) is under L, and I is held across the
 *                    callbacks (I -> L).
 *
 *  Waits under L, each on its own condition variable (cfs_wait_locked()
 *  releases L while waiting), each signalled under L:
 *   tree->drained      a deactivated node's last active reference went
 *                      (cfs_drain_locked(), cfs_subtree_drain_locked());
 *   tree->removed      a device's removal finished (a removal waiting for
 *                      dependents another thread is removing);
 *   tree->intf_free    a class's interface lock was released;
 *   tree->intf_idle    an interface call finished (unregister waits for
 *                      other threads' calls of the interface);
 *   tree->renamed      a rename's MOVE was numbered (the next rename of
 *                      the same device waits for it).
 *
 *  Active references (node->active) are taken under L (the node is then
 *  known alive) and dropped without it.  Active references, device state
 *  bits and device and class reference counts are fields of the public
 *  structs, accessed with the __atomic builtins (the one atomics style of
 *  the core).  A thread's own bookkeeping (its running callbacks,
 *  interface calls, removals) is thread-local, in struct cfs_thread.
 */
#ifndef CLASSFS_INTERNAL_H
#define CLASSFS_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/classfs.h"
#include "classfs-internal/attr-owned.h"
#include "classfs-internal/bytes.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "classfs-internal/watch.h"

#define cfs_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define CFS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (alloc.c) ---- */
void *cfs_malloc(size_t size);
void *cfs_zalloc(size_t size);
void *cfs_realloc(void *p, size_t size);
char *cfs_strdup(const char *s);
void cfs_free(void *p);

/* ---- hashing and names (alloc.c) ---- */
uint32_t cfs_hash_name(const char *name);
int cfs_name_hash_valid(const char *name, uint32_t *hash);
uint32_t cfs_hash_devt(dev_t devt);

/* ---- hashed, hash-ordered tables (htab.c) ---- */
/*
 * Chains are sorted by key = hash << CFS_HTAB_KEY2_BITS | key2 and bucket
 * = top bits of the hash, so walking buckets in order walks the whole
 * table in key order: readdir offsets are keys and stay valid while the
 * table grows, shrinks or changes.  key2 (the node id) tells apart
 * elements whose hashes collide, so that every element has a position of
 * its own to resume after.
 */
#define CFS_HTAB_KEY2_BITS 28

struct cfs_htab_ops {
	size_t next_off;			/* offset of the chain pointer */
	uint32_t (*hash)(const void *elem);
	uint32_t (*key2)(const void *elem);	/* < 2^CFS_HTAB_KEY2_BITS, fixed while in */
};

int cfs_htab_reserve(struct classfs_htab *t);	/* make insert infallible */
void cfs_htab_insert(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem);
void cfs_htab_remove(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem);
void cfs_htab_remove_keep(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem);
void *cfs_htab_chain(const struct classfs_htab *t, uint32_t hash);
void cfs_htab_prefetch(const struct classfs_htab *t, uint32_t hash);
void *cfs_htab_first_from(const struct classfs_htab *t, const struct cfs_htab_ops *ops,
			  uint64_t key);
void *cfs_htab_next(const struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem);
void cfs_htab_destroy(struct classfs_htab *t);

/* an element's position in its table (< 2^60) */
static inline uint64_t cfs_htab_key(const struct cfs_htab_ops *ops, const void *elem)
{
	return (uint64_t)ops->hash(elem) << CFS_HTAB_KEY2_BITS | (ops->key2 ? ops->key2(elem) : 0);
}


/* ---- nodes (node.c) ---- */
enum {
	CFS_NT_DIR = 1,
	CFS_NT_REG,	/* text attribute: u.attr per the owner's kind */
	CFS_NT_BIN,	/* binary attribute */
	CFS_NT_LNK,
};

enum {
	CFS_NF_DEVICE = 0x01,	/* embedded in a struct classfs_device */
	CFS_NF_CLASS = 0x02,	/* embedded in a struct classfs_class */
	CFS_NF_BUS = 0x04,	/* embedded in a struct classfs_bus */
	CFS_NF_ALLOC = 0x08,	/* allocated: freed when removed */
	CFS_NF_OWN_NAME = 0x10,	/* name allocated on its own */
	CFS_NF_OWN_ATTR = 0x20,	/* u.attr allocated: freed with the node */
	CFS_NF_DEAD = 0x40,	/* removed */
	CFS_NF_TREEATTR = 0x80,	/* u.attr is a struct cfs_tree_attr */
	CFS_NF_VALUE = 0x100,	/* u.attr is a struct cfs_value (value.c) */
	CFS_NF_USER_LINK = 0x200,	/* a link a publisher added (value.c) */
	CFS_NF_LINK_TEXT = 0x400,	/* its target is text (u.attr points at it) */
	CFS_NF_PLAIN_DIR = 0x800,	/* a directory no device was added for (value.c,
					 * placement.c, exact.c, plain.c) */
	CFS_NF_MADE_DIR = 0x1000,	/* a plain directory made for a device's path: goes with
					 * the last device below it, when nothing else is in it */
	CFS_NF_PLAIN = 0x2000,		/* made through the filesystem (plain.c) */
	CFS_NF_IMMUTABLE = 0x4000,	/* a stored value made immutable (chattr +i): not
					 * written, truncated, chmod-ed, removed nor renamed
					 * through the filesystem (plain.c) */
	CFS_NF_APPEND = 0x8000,		/* a file made through the filesystem made
					 * append-only (chattr +a): written at its end only,
					 * not truncated, chmod-ed, removed nor renamed */
	CFS_NF_PINNED = CFS_NF_IMMUTABLE | CFS_NF_APPEND,
};

#define CFS_ACTIVE_BIAS (INT_MIN + 1)	/* kernfs's KN_DEACTIVATED_BIAS */

extern const struct cfs_htab_ops cfs_node_htab_ops;

static inline struct classfs_device *cfs_node_device(const struct classfs_node *n)
{
	return cfs_container_of(n, struct classfs_device, p.node);
}

static inline struct classfs_class *cfs_node_class(const struct classfs_node *n)
{
	return cfs_container_of(n, struct classfs_class, p.node);
}

struct classfs_tree *cfs_node_tree(const struct classfs_node *n);

struct classfs_node *cfs_node_new(const char *name, int type, mode_t mode);
void cfs_node_init(struct classfs_node *n, const char *name, int type, mode_t mode, int flags);
void cfs_node_free(struct classfs_node *n);
int cfs_node_id_alloc(struct classfs_tree *t, struct classfs_node *n);
void cfs_node_id_release(struct classfs_tree *t, struct classfs_node *n);
struct classfs_node *cfs_node_by_id(struct classfs_tree *t, uint32_t id);
struct classfs_node *cfs_dir_lookup(const struct classfs_node *dir, const char *name);
int cfs_dir_reserve(struct classfs_node *dir);
void cfs_dir_link(struct classfs_node *dir, struct classfs_node *n);
void cfs_dir_unlink(struct classfs_node *n);
void cfs_dir_unlink_keep(struct classfs_node *n);
int cfs_node_add(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n);
struct classfs_node *cfs_mkdir(struct classfs_tree *t, struct classfs_node *dir,
			       const char *name);
int cfs_node_path(const struct classfs_node *n, char *buf, size_t size);
int cfs_event_path_locked(struct classfs_tree *t, const struct classfs_node *n, char *buf,
			  size_t size);
int cfs_rel_path(const struct classfs_node *from_dir, const struct classfs_node *to,
		 char *buf, size_t size);

/* active references */
bool cfs_active_get(struct classfs_node *n);
void cfs_active_put(struct classfs_tree *t, struct classfs_node *n);
void cfs_deactivate(struct classfs_node *n);
bool cfs_drain_locked(struct classfs_tree *t, struct classfs_node *n);

/* removal of a node and everything real below it; under L */
void cfs_subtree_deactivate(struct classfs_node *n);
bool cfs_subtree_drain_locked(struct classfs_tree *t, struct classfs_node *n);
void cfs_subtree_unlink(struct classfs_tree *t, struct classfs_node *n,
			struct classfs_node **freelist);
void cfs_free_list(struct classfs_node *freelist);
int cfs_node_remove_locked(struct classfs_tree *t, struct classfs_node *n,
			   struct classfs_node **freelist);
int cfs_file_add_unlock(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n,
			int r, bool owned);

/* ---- the tree (tree.c) ---- */
struct cfs_listener {
	classfs_listener_fn fn;
	void *data;
	int id;
};

#define CFS_MAX_LISTENERS 64

struct cfs_event;
struct cfs_helper;

/* a rename between its change and its MOVE event (device.c) */
struct cfs_move {
	struct classfs_device *dev;
	const char *old_name;		/* what events still call it */
	const void *owner;		/* the renaming thread */
	struct cfs_move *next;
};

/* a computed attribute of a device unlinked through the filesystem (hide.c) */
struct cfs_hidden {
	uint32_t id, gen;		/* the device's node */
	unsigned int slot;
};

struct cfs_watch {
	const struct classfs_watch_ops *ops;
	void *data;
	int id;
};

#define CFS_MAX_WATCHES 8

struct classfs_tree {
	pthread_mutex_t lock;
	uintptr_t lock_owner;		/* its holder's pthread_self() (lock checks) */
	pthread_cond_t drained;		/* the waits under L (see the top) */
	pthread_cond_t removed;
	pthread_cond_t intf_free;
	pthread_cond_t intf_idle;
	pthread_cond_t renamed;
	enum classfs_layout layout;
	struct classfs_node root;
	struct classfs_node *class_dir, *devices_dir, *virtual_dir, *block_dir;
	struct classfs_node *dev_dir, *dev_block, *dev_char, *bus_dir, *kernel_dir;
	struct classfs_class *classes;
	struct classfs_bus *buses;
	struct classfs_class *block_class;
	struct classfs_htab devts;	/* every added device with a major */

	/* node ids: live slots hold the node, free ones a FIFO link */
	uintptr_t *ids;
	uint32_t nids, ids_cap;
	uint32_t free_head, free_tail, nfree;
	size_t live_nodes;
	size_t ndevices;

	/* events (E) */
	pthread_mutex_t evlock;
	pthread_cond_t evcond;
	uint64_t seqnum;
	struct cfs_event *evq_head, **evq_tail;
	struct cfs_move *moves;		/* (L) renames whose MOVE is pending */
	bool delivering;
	pthread_t deliverer;
	uint64_t delivered;
	struct cfs_listener listeners[CFS_MAX_LISTENERS];
	int nlisteners;
	int next_listener_id;
	bool default_tree;
	struct cfs_helper *helper;	/* kernel/uevent_helper, NULL until set */
	/* (L) classfs_helper_set_queue()'s, for a helper started later */
	size_t helper_queue_max;
	classfs_helper_overflow_fn helper_overflow;
	void *helper_overflow_data;
	struct cfs_watch watches[CFS_MAX_WATCHES];
	int nwatches;
	int watch_ids;
	/*
	 * (L) plain directories taken out of the tree that an unlocked walk
	 * of a device's directory parents (cfs_device_tree_of()) may still
	 * be on: freed with the tree (placement.c)
	 */
	struct classfs_node *graveyard;
	struct cfs_hidden *hidden;	/* (L) hide.c */
	size_t nhidden, hidden_cap;
};

/* files of the tree itself (kernel/uevent_seqnum) */
struct cfs_tree_attr {
	const char *name;
	mode_t mode;
	ssize_t (*show)(struct classfs_tree *t, char *buf);
	ssize_t (*store)(struct classfs_tree *t, const char *buf, size_t count);
};

/*
 * Lock checks (cfs_assert_held()) in debug (-O0) and sanitizer builds,
 * as check.sh makes them; not in the default optimized build, whose
 * benchmarks they would slow, nor with NDEBUG.
 */
#ifdef __has_feature
#define CFS_HAS_FEATURE(f) __has_feature(f)
#else
#define CFS_HAS_FEATURE(f) 0
#endif
#if !defined(NDEBUG) &&                                                              \
	(!defined(__OPTIMIZE__) || defined(__SANITIZE_ADDRESS__) ||                 \
	 defined(__SANITIZE_THREAD__) || CFS_HAS_FEATURE(address_sanitizer) ||     \
	 CFS_HAS_FEATURE(thread_sanitizer))
#define CFS_LOCK_CHECKS 1
#endif

/* ---- what this thread is doing (thread.c) ---- */
#define CFS_MAX_NESTED_CALLS 16	/* attribute callbacks nested on one thread */

/* an attribute callback running on this thread, for -EDEADLK and remove-self */
struct cfs_frame {
	struct classfs_node *node;	/* whose active reference is held */
	bool released;			/* given up by remove-self */
	struct classfs_node *held;	/* held instead: the removed device's parent */
	struct classfs_device *put;	/* reference to drop after the callback */
	struct classfs_node *deferred;	/* nodes to free after the callback */
	struct classfs_reply_offer *offer;	/* the caller's, for classfs_defer() */
	bool taken;			/* the offer was taken */
};
struct cfs_frame *cfs_frame_push(struct classfs_node *n);
struct cfs_frame *cfs_frame_top(void);
void cfs_frame_pop(struct classfs_tree *t, struct cfs_frame *f);
void cfs_frame_release_locked(struct classfs_tree *t, struct cfs_frame *f,
			      struct classfs_node *hold);
struct cfs_frame *cfs_frame_find_device(const struct classfs_device *dev);
struct cfs_frame *cfs_frame_find_released(const struct classfs_device *dev);

bool cfs_active_held_below(const struct classfs_node *top);

/* a removal running on this thread (device-del.c) */
struct cfs_removal {
	struct classfs_device *dev;
	struct cfs_removal *prev;
};

/* an interface's add() or remove() running on this thread (interface.c) */
struct cfs_intf_call {
	struct classfs_interface *intf;
	struct cfs_intf_call *prev;
};

struct cfs_thread {
	struct cfs_frame frames[CFS_MAX_NESTED_CALLS];	/* innermost last */
	int nframes;
	struct cfs_intf_call *intf_calls;	/* innermost first */
	struct cfs_removal *removals;		/* innermost first */
	unsigned int watch_deferred;		/* cfs_watch_defer() depth */
};

struct cfs_thread *cfs_self(void);

/* ---- the tree lock L: taken, released, waited on, checked (thread.c) ---- */
#ifdef CFS_LOCK_CHECKS
void cfs_assert_held_fn(struct classfs_tree *t, const char *fn);
#define cfs_assert_held(t) cfs_assert_held_fn((t), __func__)
static inline void cfs_owner_set(struct classfs_tree *t, uintptr_t owner)
{
	__atomic_store_n(&t->lock_owner, owner, __ATOMIC_RELAXED);
}
#else
#define cfs_assert_held(t) ((void)(t))
#define cfs_owner_set(t, owner) ((void)(t))
#endif

static inline void cfs_lock(struct classfs_tree *t)
{
	pthread_mutex_lock(&t->lock);
	cfs_owner_set(t, (uintptr_t)pthread_self());
}

static inline void cfs_unlock(struct classfs_tree *t)
{
	cfs_owner_set(t, 0);
	pthread_mutex_unlock(&t->lock);
}

/* under L: wait on one of the tree's condition variables, L released meanwhile */
static inline void cfs_wait_locked(struct classfs_tree *t, pthread_cond_t *cond)
{
	cfs_assert_held(t);
	cfs_owner_set(t, 0);
	pthread_cond_wait(cond, &t->lock);
	cfs_owner_set(t, (uintptr_t)pthread_self());
}

/* ---- devices (device.c) ---- */
enum {
	CFS_DS_INIT = 0x1,	/* initialized */
	CFS_DS_ADDED = 0x2,	/* published */
	CFS_DS_LISTED = 0x4,	/* in the class's list (interfaces, iteration) */
	CFS_DS_REMOVING = 0x8,	/* del in progress */
	CFS_DS_NAMED = 0x10,	/* has a name */
	CFS_DS_CLASSREF = 0x20,	/* holds a class reference (until release) */
	CFS_DS_SUPPRESS = 0x40,	/* sends no uevents (dev_set_uevent_suppress) */
	CFS_DS_ADD_SENT = 0x80,	/* its ADD was numbered: a REMOVE must follow */
	CFS_DS_MARK = 0x100,	/* visited by a tree walk (under L) */
	CFS_DS_VIRTUAL = 0x200,	/* a physical device in devices/virtual (add_virtual) */
	/*
	 * out of its class's name index: its class/CLASS/NAME was unlinked
	 * through the filesystem (plain.c), so another device may take the
	 * name.  It stays in the names table (the class's device list:
	 * iteration, interfaces, class unregister, its own removal and
	 * rename), but lookups by name (cfs_class_lookup_locked()) skip it
	 * and it shows no class/CLASS/NAME nor block/NAME.
	 */
	CFS_DS_UNINDEXED = 0x400,
	/* computed entries unlinked through the filesystem (plain.c): hidden */
	CFS_DS_HIDE_DEV = 0x10000,
	CFS_DS_HIDE_SUBSYSTEM = 0x20000,
	CFS_DS_HIDE_DEVICE = 0x40000,
	CFS_DS_HIDE_ALIAS = 0x80000,
	CFS_DS_HIDE_BLOCK = 0x100000,
	CFS_DS_HIDE_DEVNUM = 0x200000,
	CFS_DS_HIDE_ALL = 0x3F0000,
};

extern const struct cfs_htab_ops cfs_name_htab_ops;
extern const struct cfs_htab_ops cfs_devt_htab_ops;

static inline bool cfs_dev_state(const struct classfs_device *dev, unsigned int bit)
{
	return __atomic_load_n(&dev->p.state, __ATOMIC_ACQUIRE) & bit;
}

static inline void cfs_dev_state_set(struct classfs_device *dev, unsigned int bits)
{
	__atomic_or_fetch(&dev->p.state, bits, __ATOMIC_RELEASE);
}

static inline void cfs_dev_state_clear(struct classfs_device *dev, unsigned int bits)
{
	__atomic_and_fetch(&dev->p.state, ~bits, __ATOMIC_RELEASE);
}

struct classfs_tree *cfs_device_tree_of(const struct classfs_device *dev);
struct classfs_device *cfs_class_lookup_locked(struct classfs_class *cls, const char *name);

static inline bool cfs_dev_alive(const struct classfs_device *d)
{
	return cfs_dev_state(d, CFS_DS_ADDED) && !cfs_dev_state(d, CFS_DS_REMOVING);
}

/* ---- where entries go in the layout (placement.c) ---- */
int cfs_placement_locked(struct classfs_tree *t, struct classfs_device *dev,
			 struct classfs_node **dirp, struct classfs_node **glue);
bool cfs_is_glue_dir(struct classfs_tree *t, const struct classfs_node *n);
bool cfs_layout_clash_locked(struct classfs_tree *t, struct classfs_device *dev,
			     const char *name);
void cfs_glue_put_locked(struct classfs_tree *t, struct classfs_node *g,
			 struct classfs_node **freelist);
bool cfs_wants_backlink(struct classfs_tree *t, const struct classfs_device *dev);
struct classfs_node *cfs_backlink_new(struct classfs_device *dev, const char *name);
struct classfs_node *cfs_backlink_find(struct classfs_device *dev);
int cfs_reserve_link(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n);
void cfs_unreserve_dir(struct classfs_tree *t, struct classfs_node *dir);
void cfs_unreserve_htab(struct classfs_tree *t, struct classfs_htab *h);

/* ---- exact places: a device at the directory its caller names (placement.c) ---- */
#define CFS_EXACT_DEPTH 128	/* components of the directory, as node.c's paths */

struct cfs_exact {
	struct classfs_tree *tree;
	int n;
	char *comp[CFS_EXACT_DEPTH];
	char buf[PATH_MAX];
};

int cfs_exact_split(struct cfs_exact *ex, const char *dir);
int cfs_place_exact_locked(struct classfs_tree *t, struct classfs_device *dev,
			   const struct cfs_exact *ex, struct classfs_node **dirp,
			   struct classfs_node **made, struct classfs_node **freelist);
int cfs_adopt_check(const struct classfs_device *dev, const struct classfs_node *x);
unsigned int cfs_adopt_locked(struct classfs_tree *t, struct classfs_device *dev,
			      struct classfs_node *x);
unsigned int cfs_unfill_locked(struct classfs_tree *t, struct classfs_device *dev,
			       struct classfs_node *x);
struct classfs_device *cfs_dev_base(const struct classfs_device *dev);
void cfs_made_put_locked(struct classfs_tree *t, struct classfs_node *dir, bool keep,
			 struct classfs_node **freelist);

/* ---- entries of the view (view.c; read and written by io.c) ---- */
struct cfs_entry {
	struct classfs_node *n;		/* the node */
	unsigned int slot;		/* 0: the node itself, else a computed entry */
};

struct classfs_device *cfs_entry_device(const struct cfs_entry *e);
const struct classfs_attribute *cfs_group_attr(const struct classfs_attribute_group *grp,
						  unsigned int a,
						  const struct classfs_device_attribute **text,
						  const struct classfs_bin_attribute **bin);
int cfs_resolve_locked(struct classfs_tree *t, uint64_t ino, struct cfs_entry *e);
void cfs_entry_stat(const struct cfs_entry *e, struct classfs_stat *st);
uint64_t cfs_entry_dir(const struct cfs_entry *e, const char **name, char *buf, size_t size);
int cfs_lookup_locked(struct classfs_tree *t, const struct cfs_entry *dir, const char *name,
		      struct cfs_entry *out);

const struct classfs_attribute_group *cfs_vgroup(const struct classfs_device *dev, unsigned int g);
bool cfs_name_is_virtual(const struct classfs_device *dev, const char *name);

/* ---- the names of a device's computed entries (entries.c) ---- */
int cfs_device_names_check(const struct classfs_device *dev);

/* ---- classes and their files (class.c) ---- */
void cfs_class_devices_unregister(struct classfs_class *cls);
int cfs_remove_file(struct classfs_tree *t, struct classfs_node *dir, const char *name,
		    const void *attr);

/* ---- uevents (uevent.c) ---- */
int cfs_env_device_vars(struct classfs_device *dev, struct classfs_uevent_env *env);
bool cfs_events_wanted(struct classfs_tree *t);
bool cfs_event_needed(struct classfs_device *dev);
struct cfs_event *cfs_event_alloc(void);
int cfs_event_fill(struct classfs_device *dev, struct cfs_event *ev, const char *const *extra);
int cfs_event_check_locked(struct classfs_tree *t, const struct cfs_event *ev,
			   enum classfs_action action, struct classfs_device *dev);
int cfs_event_emit_locked(struct classfs_tree *t, struct cfs_event *ev,
			  enum classfs_action action, struct classfs_device *dev,
			  const char *devpath_old);
void cfs_event_discard(struct cfs_event *ev);
void cfs_events_deliver(struct classfs_tree *t);

/* ---- synthetic uevents (synth.c) ---- */
bool cfs_uevent_key_valid(const char *s, size_t len);
bool cfs_uevent_value_clean(const char *s);
int cfs_uevent_file_write(struct classfs_device *dev, const char *buf, size_t count);

/* ---- values, publishers' links, plain directories (value.c) ---- */
struct classfs_node *cfs_value_node_new(const char *name, mode_t mode, const void *value,
					size_t len, bool binary);
struct classfs_node *cfs_link_node_new(const char *name, const char *text);
struct cfs_bytes *cfs_value_bytes(const struct classfs_node *n);
ssize_t cfs_value_read(struct classfs_node *n, char *buf, size_t size, off_t off);
ssize_t cfs_value_write(struct classfs_tree *t, struct classfs_node *n, const char *buf,
			size_t size, off_t off, bool append);
int cfs_value_truncate(struct classfs_tree *t, struct classfs_node *n, off_t size);
void cfs_value_set_name_mode(struct classfs_node *n);
void cfs_value_free(const void *attr);
void cfs_user_link_free(struct classfs_node *n);
const char *cfs_link_text(const struct classfs_node *n);

/* ---- entries made through the filesystem (plain.c, plain-rename.c) ---- */
bool cfs_node_going(const struct classfs_node *n);
int cfs_plain_movable(const struct classfs_node *n);
bool cfs_plain_only_data(const struct classfs_node *n);
bool cfs_plain_adoptable(const struct classfs_node *p, const struct classfs_device *dev);

/* ---- computed attributes unlinked through the filesystem (hide.c) ---- */
bool cfs_hide_any(void);
bool cfs_hidden_locked(const struct classfs_tree *t, const struct classfs_node *n,
		       unsigned int slot);
int cfs_hide_locked(struct classfs_tree *t, const struct classfs_node *n, unsigned int slot);
void cfs_unhide_all_locked(struct classfs_tree *t);

/* ---- kernel/uevent_helper (helper.c) ---- */
extern const struct cfs_tree_attr cfs_uevent_helper_attr;
void cfs_helper_event(struct classfs_tree *t, const struct classfs_uevent *ev);
bool cfs_helper_active(struct classfs_tree *t);
void cfs_helper_stop(struct classfs_tree *t);

/* ---- views following the tree (watch.c) ---- */
void cfs_watch_entry_locked(struct classfs_tree *t, const struct classfs_node *dir,
			    unsigned int slot, const char *name);
void cfs_watch_node_locked(const struct classfs_node *n);
void cfs_watch_gone_locked(const struct classfs_node *n);
void cfs_watch_moved_locked(struct classfs_tree *t);
void cfs_watch_device_locked(struct classfs_tree *t, const struct classfs_device *dev);
void cfs_watch_sync(struct classfs_tree *t);
void cfs_watch_notify(struct classfs_tree *t, uint64_t ino);
void cfs_watch_value(struct classfs_tree *t, uint64_t ino);

/* ---- interfaces (interface.c) ---- */
void cfs_interfaces_add_device(struct classfs_device *dev);
void cfs_interfaces_remove_device(struct classfs_device *dev);

/* ---- the view: inode numbers and entries (view.c) ---- */
#define CFS_INO_SLOT_BITS 12
#define CFS_INO_ID_BITS 28
#define CFS_MAX_ID ((1u << CFS_INO_ID_BITS) - 1)

enum {
	CFS_SLOT_SELF = 0,
	CFS_SLOT_UEVENT = 1,
	CFS_SLOT_DEV = 2,
	CFS_SLOT_SUBSYSTEM = 3,
	CFS_SLOT_DEVICE = 4,
	CFS_SLOT_FIXED_MAX = 4,
	CFS_SLOT_ALIAS = 0xFF1,		/* class/CLASS/NAME -> nested dir */
	CFS_SLOT_BLOCK = 0xFF2,		/* block/NAME */
	CFS_SLOT_DEVNUM = 0xFF3,	/* dev/{block,char}/M:m */
	CFS_SLOT_GROUP_DIR = 0xFF,	/* low byte of a named group's dir */
};

/*
 * A default group's entries: slot = group << CFS_SLOT_GROUP_SHIFT |
 * attribute, groups 1..CFS_MAX_VGROUPS (the slot's top nibble, below
 * the 0xFFx of the fixed slots elsewhere), attributes 0..
 * CFS_GROUP_MAX_ATTRS - 1 (CFS_SLOT_GROUP_DIR is the group's directory).
 */
#define CFS_SLOT_GROUP_SHIFT 8
#define CFS_SLOT_ATTR_MASK 0xFFu
#define CFS_SLOT_GROUP_MASK 0xF00u
#define CFS_MAX_VGROUPS 14		/* default groups a device shows */
#define CFS_GROUP_MAX_ATTRS CFS_SLOT_GROUP_DIR	/* attributes a group shows */
#define CFS_MAX_COMPUTED 512		/* computed entries a directory shows */

/* the device state bit that hides computed entry @slot, or 0: it cannot be unlinked */
static inline unsigned int cfs_slot_hide_bit(unsigned int slot)
{
	switch (slot) {
	case CFS_SLOT_DEV: return CFS_DS_HIDE_DEV;
	case CFS_SLOT_SUBSYSTEM: return CFS_DS_HIDE_SUBSYSTEM;
	case CFS_SLOT_DEVICE: return CFS_DS_HIDE_DEVICE;
	case CFS_SLOT_ALIAS: return CFS_DS_HIDE_ALIAS;
	case CFS_SLOT_BLOCK: return CFS_DS_HIDE_BLOCK;
	case CFS_SLOT_DEVNUM: return CFS_DS_HIDE_DEVNUM;
	}
	return 0;
}

static inline unsigned int cfs_slot_group(unsigned int slot)
{
	return (slot & CFS_SLOT_GROUP_MASK) >> CFS_SLOT_GROUP_SHIFT;
}

static inline unsigned int cfs_slot_attr(unsigned int slot)
{
	return slot & CFS_SLOT_ATTR_MASK;
}

static inline unsigned int cfs_group_slot(unsigned int g, unsigned int a)
{
	return g << CFS_SLOT_GROUP_SHIFT | a;
}

static inline uint64_t cfs_ino(const struct classfs_node *n, unsigned int slot)
{
	if (n->id == 0 && slot == 0)
		return CLASSFS_ROOT_INO;
	return ((uint64_t)(n->gen & 0xFFFFFF) << 40) | ((uint64_t)n->id << CFS_INO_SLOT_BITS) | slot;
}

#endif
