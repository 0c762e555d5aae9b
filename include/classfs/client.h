/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client.h - remote drivers: publish into a classfsd daemon's tree from
 * another process, and follow its events.
 *
 * A client is one connection to the daemon's control socket (a Unix
 * SOCK_SEQPACKET socket, protocol in docs/protocol.md).  Every call is a
 * request and its reply: it returns 0 (or a length) or a negative errno,
 * and the daemon's explanation of the last failure is available from
 * classfs_client_error_message().
 *
 * Threads: a client is used by one thread at a time (calls on one client
 * are not serialized by the library); use one client per thread.
 *
 * Callbacks (remote attributes' show()/store(), event and gap callbacks)
 * run in the caller's thread, inside classfs_client_dispatch() or inside
 * any other call of the same client while it waits for its reply (so a
 * driver that reads its own remote attribute through the daemon does not
 * deadlock).  A callback must not call the same client.
 *
 * Identity of objects: a class by its name; a class device by its class
 * and name (names are unique within a class); a physical (bus) device by
 * its name, unique among the daemon's physical devices.
 */
#ifndef CLASSFS_CLIENT_H
#define CLASSFS_CLIENT_H

#include <stdio.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* where classfsd listens unless told otherwise (--socket) */
#define CLASSFS_CLIENT_DEFAULT_SOCKET "/run/classfs/control"

/* classfs_client_connect() flags */
#define CLASSFS_CLIENT_RECONNECT 0x1u	/* reconnect and republish after a daemon restart */

/* object flags (struct classfs_client_device.flags, classfs_client_class_create()) */
#define CLASSFS_CLIENT_BIND 0x1u	/* removed when this connection closes or its process dies */
#define CLASSFS_CLIENT_OPEN 0x2u	/* a device: other uids may publish devices below it */

struct classfs_client;

/**
 * classfs_client_connect() - connect to a daemon
 * @path: the control socket; NULL for %CLASSFS_CLIENT_DEFAULT_SOCKET.
 * @flags: 0 or %CLASSFS_CLIENT_RECONNECT: when the connection is lost
 *         (daemon restarted), the next call reconnects (retrying for up
 *         to 5 s) and first publishes again, in their original order,
 *         every class and device still bound (%CLASSFS_CLIENT_BIND) by
 *         this client (under the names its own renames gave them), with
 *         their remote attributes; a subscription
 *         is renewed first, from the new daemon's next event (a new
 *         daemon numbers its events afresh), so the republished
 *         objects' ADD events are delivered.
 *
 * Return: the client, or NULL with errno set (ENOENT, ECONNREFUSED,
 * EACCES, EMFILE when the connecting uid holds as many connections as
 * the daemon allows it, EPROTONOSUPPORT when the daemon speaks another
 * protocol version, ENOMEM, EINVAL).
 */
CLASSFS_PUBLIC struct classfs_client *classfs_client_connect(const char *path, unsigned int flags);

/**
 * classfs_client_disconnect() - close the connection and free the client
 * @c: the client; NULL is ignored.
 *
 * Objects bound to the connection are removed by the daemon (deepest
 * first, with REMOVE events); other objects stay.
 */
CLASSFS_PUBLIC void classfs_client_disconnect(struct classfs_client *c);

/**
 * classfs_client_error_message() - why the last call failed
 * @c: the client.
 *
 * Return: the daemon's message for the last failed request (or the
 * library's own, e.g. "connection lost"); "" after a successful call.
 * Valid until the next call on @c.
 */
CLASSFS_PUBLIC const char *classfs_client_error_message(const struct classfs_client *c);

/**
 * classfs_client_fd() - a file descriptor that polls readable when
 * classfs_client_dispatch() has work (a remote attribute call, events)
 * @c: the client.
 *
 * An epoll descriptor over the client's sockets: it stays the same
 * across reconnects.  Return: the descriptor (owned by @c).
 */
CLASSFS_PUBLIC int classfs_client_fd(const struct classfs_client *c);

/**
 * classfs_client_dispatch() - serve remote attribute calls and deliver
 * events and gap notices
 * @c: the client.
 * @timeout_ms: how long to wait for the first message: 0 = do not wait,
 *              -1 = forever.
 *
 * After the first message, handles those already queued, at most 64
 * per socket, so that a busy subscription does not starve remote
 * attribute calls (call it again while it returns > 0 to drain).
 * Return: number of messages handled (0 on timeout), or -errno
 * (-ECONNRESET when the daemon went away and no reconnect was possible).
 */
CLASSFS_PUBLIC int classfs_client_dispatch(struct classfs_client *c, int timeout_ms);

/* ------------------------------------------------------------------ */
/* the daemon                                                          */
/* ------------------------------------------------------------------ */

/**
 * struct classfs_client_status - what the daemon tells about itself
 * @version: protocol version it speaks.
 * @layout: the tree's layout.
 * @seqnum: the last SEQNUM handed out.
 * @mountpoint: where the tree is mounted ("" when not mounted).
 */
struct classfs_client_status {
	unsigned int version;
	enum classfs_layout layout;
	uint64_t seqnum;
	char mountpoint[4096];
};

/**
 * classfs_client_status() - query the mount point, layout and SEQNUM
 * @c: the client.
 * @st: filled on success.
 *
 * Return: 0 or -errno.
 */
CLASSFS_PUBLIC int classfs_client_status(struct classfs_client *c, struct classfs_client_status *st);

/**
 * classfs_client_usage() - write what each uid holds in the daemon
 * @c: the client.
 * @out: receives a table: a header, the per-uid limits, then one line
 *       per uid other than root that holds anything (connections,
 *       classes and devices, subscriptions, attributes, value bytes).
 *
 * Return: 0 or -errno.
 */
CLASSFS_PUBLIC int classfs_client_usage(struct classfs_client *c, FILE *out);

/* ------------------------------------------------------------------ */
/* classes and devices                                                 */
/* ------------------------------------------------------------------ */

/**
 * classfs_client_class_create() - create a class
 * @c: the client.
 * @cls: its name.
 * @flags: 0 or %CLASSFS_CLIENT_BIND.
 *
 * The connecting uid owns the class: only it or root may remove it.
 * Return: 0, -EEXIST (name taken), -EINVAL (bad name), -EDQUOT (the uid
 * holds as many classes and devices as the daemon allows it), -ENOMEM,
 * or a transport error (-ECONNRESET, -EMSGSIZE).
 */
CLASSFS_PUBLIC int classfs_client_class_create(struct classfs_client *c, const char *cls,
					       unsigned int flags);

/**
 * classfs_client_class_remove() - remove a class and every device in it
 * (deepest first, with REMOVE events)
 * @c: the client.
 * @cls: the class.
 *
 * Return: 0, -ENOENT (no such class), -EPERM (neither owner nor root),
 * -EBUSY (a device of another uid is in it or depends on one of its
 * devices, and the caller is not root: nothing removed; the message
 * names that device).
 */
CLASSFS_PUBLIC int classfs_client_class_remove(struct classfs_client *c, const char *cls);

/**
 * struct classfs_client_attr - one attribute of a published device
 * @name: "name" (in the device's directory).
 * @mode: permission bits (e.g. 0644, 0444); enforced for writes through
 *        the filesystem and through the socket alike.
 * @value: stored value (@len bytes, read back byte for byte; give the
 *         trailing '\n' sysfs values have), used when @show is NULL.
 * @len: length of @value (at most %CLASSFS_ATTR_MAX).
 * @show: NULL for a stored value; else a remote attribute: every read
 *        is forwarded to this process, which fills @buf (@size =
 *        %CLASSFS_ATTR_MAX) and returns the length or -errno.  A process
 *        that does not answer within the daemon's timeout (5 s by
 *        default) makes the read fail with EIO.  The reader gets the
 *        errno as it is when classfs_io_error() lets it through, else
 *        EIO (errnos outside 1..511 and those a read cannot end with).
 * @store: for a remote attribute: takes @count bytes, returns bytes
 *         consumed or -errno, told to the writer as a show()'s are
 *         (NULL: writes fail with EACCES).
 * @data: passed to @show and @store.
 *
 * A stored value is replaced by a write (filesystem or
 * classfs_client_attr_set()) when @mode allows it.
 */
struct classfs_client_attr {
	const char *name;
	mode_t mode;
	const void *value;
	size_t len;
	ssize_t (*show)(void *data, char *buf, size_t size);
	ssize_t (*store)(void *data, const char *buf, size_t count);
	void *data;
};

/**
 * struct classfs_client_device - a device to publish
 * @cls: class of a class device; NULL for a physical (bus) device.
 * @name: its name.
 * @parent: a class device's parent class device (same class: nesting),
 *          or a physical device's physical parent; NULL for none.
 * @devt: device number (a `dev` file exists when major(devt) != 0).
 * @phys: a class device's physical device: the name of a physical
 *        device, or, with @phys_class, of a class device of that class.
 * @phys_class: see @phys; NULL when @phys names a physical device.
 * @bus: a physical device's bus type (registered on first use); NULL none.
 * @devtype: the DEVTYPE of its uevents; NULL for none.
 * @attrs: @nattrs attributes, present before the ADD event.
 * @flags: 0, %CLASSFS_CLIENT_BIND, %CLASSFS_CLIENT_OPEN (other uids may
 *         publish devices below it, as in a world-writable sticky
 *         directory: each owns, and may remove, what it put there; the
 *         device's owner may then not remove it while they do), or both.
 *
 * A class device's class is created when missing (owned by the caller).
 */
struct classfs_client_device {
	const char *cls;
	const char *name;
	const char *parent;
	dev_t devt;
	const char *phys;
	const char *phys_class;
	const char *bus;
	const char *devtype;
	const struct classfs_client_attr *attrs;
	size_t nattrs;
	unsigned int flags;
};

/**
 * classfs_client_device_add() - publish a device with its attributes
 * @c: the client.
 * @dev: the device.
 *
 * The device and all its attributes exist before its ADD event.  The
 * connecting uid owns it.  Remote attributes (those with @show) are
 * served by this client until the device goes.
 * Return: 0, -EEXIST (name taken), -ENOENT (parent or physical device
 * not found), -EINVAL (bad name, bad mode, parent of another class),
 * -E2BIG (value too long), -EMSGSIZE (the request exceeds the daemon's
 * message size limit), -EDQUOT (the uid holds as many classes and
 * devices as the daemon allows it; a class made for the device counts
 * too), -ENOMEM.  On error nothing is published.
 */
CLASSFS_PUBLIC int classfs_client_device_add(struct classfs_client *c,
					     const struct classfs_client_device *dev);

/**
 * classfs_client_device_add_batch() - publish many devices with few
 * messages (as many per message as the daemon's size limit allows)
 * @c: the client.
 * @devs: @n devices, parents before children.
 * @n: how many.
 * @done: NULL, or set to the number of devices published.
 *
 * Stops at the first failure: the devices before it stay published.
 * Return: 0 or the first failure's -errno (as classfs_client_device_add()).
 */
CLASSFS_PUBLIC int classfs_client_device_add_batch(struct classfs_client *c,
						   const struct classfs_client_device *devs,
						   size_t n, size_t *done);

/**
 * classfs_client_device_remove() - remove a device and the devices that
 * depend on it: those below it and those whose physical device it is, in
 * turn with theirs (deepest first, with REMOVE events)
 * @c: the client.
 * @cls: its class, NULL for a physical device.
 * @name: its name.
 *
 * Return: 0, -ENOENT, -EPERM (neither owner nor root), -EBUSY (a device
 * of another uid depends on it and the caller is not root: nothing
 * removed; the message names that device).
 */
CLASSFS_PUBLIC int classfs_client_device_remove(struct classfs_client *c, const char *cls,
						const char *name);

/**
 * classfs_client_device_remove_path() - classfs_client_device_remove() of
 * the device at @syspath ("/devices/..."): also one that its class and
 * name no longer find (its class link unlinked through the filesystem,
 * the name another device's).
 * Return: 0, -EINVAL, -ENOENT, -EPERM, -EBUSY.
 */
CLASSFS_PUBLIC int classfs_client_device_remove_path(struct classfs_client *c,
						     const char *syspath);

/**
 * classfs_client_reset() - return the daemon's tree to a new daemon's
 * state, for a testbed replaced by a new one in an environment that stays
 * (classfs-run --socket): every device removed (each after those below
 * it and on it, with its REMOVE event, as classfs_client_device_remove()),
 * every class and bus, and every file, directory and link made through
 * the filesystem or classfs_client_attr_set() with create.  The mount,
 * the connections and subscriptions stay; SEQNUM goes on.  What @c had
 * published and bound is forgotten.
 * @c: the client.
 *
 * Return: 0, -EACCES (neither root nor the daemon's own uid), -EINVAL.
 */
CLASSFS_PUBLIC int classfs_client_reset(struct classfs_client *c);

/**
 * classfs_client_device_rename() - rename a class device (MOVE event)
 * @c: the client.
 * @cls: its class.
 * @name: its name.
 * @new_name: the new name.
 *
 * Return: 0, -ENOENT, -EEXIST, -EINVAL (bad name), -EPERM.
 */
CLASSFS_PUBLIC int classfs_client_device_rename(struct classfs_client *c, const char *cls,
						const char *name, const char *new_name);

/**
 * classfs_client_attr_get() - read an attribute of a device
 * @c: the client.
 * @cls: the class, NULL for a physical device.
 * @name: the device.
 * @attr: the attribute ("name" or "dir/name"; also computed files such as
 *        `uevent` and `dev`).
 * @buf: receives the value (not NUL-terminated).
 * @size: size of @buf; %CLASSFS_ATTR_MAX is always enough.
 *
 * Return: the value's length, or -errno (-ENOENT, -EACCES when not
 * readable, -EIO when a remote attribute's process does not answer,
 * -ERANGE when @size is too small, the show()'s own error).
 */
CLASSFS_PUBLIC ssize_t classfs_client_attr_get(struct classfs_client *c, const char *cls,
					       const char *name, const char *attr, void *buf,
					       size_t size);

/**
 * classfs_client_attr_get_path() - read a file of the device at @syspath
 * @c: the client.
 * @syspath: the device's path as Linux's devices layout names it
 *           ("/devices/virtual/input/event3"): any device of the tree,
 *           also one a record loaded, however its class names it.
 * @attr: the file, as for classfs_client_attr_get().
 * @buf: receives the value (not NUL-terminated).
 * @size: size of @buf; %CLASSFS_ATTR_MAX is always enough.
 *
 * One round trip instead of a path walk through the mount: what a udev
 * reads of a new device (its `uevent`) when it follows the events.
 *
 * Return: the value's length, or -errno: -EINVAL (@syspath does not
 * start with '/', or a NULL argument), -ENOENT (no device there, or no
 * such file), and those of classfs_client_attr_get().
 */
CLASSFS_PUBLIC ssize_t classfs_client_attr_get_path(struct classfs_client *c, const char *syspath,
						    const char *attr, void *buf, size_t size);

/**
 * classfs_client_attr_set() - write an attribute of a device (one store()
 * with the whole buffer, as a write(2) through the filesystem)
 * @c: the client.
 * @cls: the class, NULL for a physical device.
 * @name: the device.
 * @attr: the attribute.
 * @value: the bytes (at most %CLASSFS_ATTR_MAX).
 * @len: their number.
 *
 * Return: 0, -ENOENT, -EACCES (mode forbids writing: a 0444 attribute
 * cannot be set through the socket either), -EPERM (neither owner nor
 * root), -E2BIG, -EIO (remote process does not answer), store()'s error.
 */
CLASSFS_PUBLIC int classfs_client_attr_set(struct classfs_client *c, const char *cls,
					   const char *name, const char *attr, const void *value,
					   size_t len);

/* classfs_client_attr_add() flags */
#define CLASSFS_CLIENT_ADD_BINARY 0x1u	/* a binary attribute (random access) */
#define CLASSFS_CLIENT_ADD_LINK	  0x2u	/* a symlink whose text is @value */

/**
 * classfs_client_attr_add() - write an attribute of a device, making it
 * when the path does not exist (umockdev's set_attribute)
 * @c: the client.
 * @cls: the class, NULL for a physical device.
 * @name: the device.
 * @attr: the attribute: "name" or "dir/sub/name" inside the device's own
 *        directory (missing plain directories are made, and go with it).
 * @value: the bytes (at most %CLASSFS_ATTR_MAX); with
 *         %CLASSFS_CLIENT_ADD_LINK the link's target, without a NUL.
 * @len: their number.
 * @flags: 0 (a text value), %CLASSFS_CLIENT_ADD_BINARY or
 *         %CLASSFS_CLIENT_ADD_LINK.
 *
 * An existing attribute is written as classfs_client_attr_set() does.  A
 * missing one is made as a stored value of mode 0644 holding @value (or
 * a link), by the device's owner or root; links are root's only.  A
 * device loaded from a record is root's.  No event is sent.
 *
 * Return: 0, -EINVAL (unknown or conflicting @flags, a bad path, an empty
 * link target), -ENOENT (no such device), -EEXIST (a component of @attr
 * is a link, a child device or a file, or a name the tree makes itself:
 * uevent, dev, subsystem, device; a link's path exists), -EPERM
 * (neither owner nor root; a link by non-root), -EDQUOT (the device's
 * owner holds as many attributes or value bytes as the daemon allows
 * it), -E2BIG, -ENOMEM, and for an existing attribute those of
 * classfs_client_attr_set().
 */
CLASSFS_PUBLIC int classfs_client_attr_add(struct classfs_client *c, const char *cls,
					   const char *name, const char *attr, const void *value,
					   size_t len, unsigned int flags);

/**
 * classfs_client_trigger() - send an event for a device
 * @c: the client.
 * @cls: the class, NULL for a physical device.
 * @name: the device.
 * @action: e.g. %CLASSFS_ACTION_CHANGE.
 * @extra: NULL or a NULL-terminated list of "KEY=VALUE", KEY of
 *         [A-Za-z0-9_] and VALUE of one or more bytes without control
 *         bytes (classfs_synth_arg_valid()); each arrives as
 *         SYNTH_ARG_KEY=VALUE, as from a write of "ACTION UUID KEY=VALUE"
 *         to the device's `uevent` file.
 *
 * Return: 0, -ENOENT, -EINVAL (bad action or variable; a KEY of ACTION,
 * DEVPATH, DEVPATH_OLD, SUBSYSTEM or SEQNUM), -EPERM, -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_client_trigger(struct classfs_client *c, const char *cls,
					  const char *name, enum classfs_action action,
					  const char *const *extra);

/* ------------------------------------------------------------------ */
/* events                                                              */
/* ------------------------------------------------------------------ */

/**
 * typedef classfs_client_event_fn - receives one event
 * @ev: the event; valid during the call only.
 * @data: the subscriber's data.
 */
typedef void (*classfs_client_event_fn)(const struct classfs_uevent *ev, void *data);

/**
 * typedef classfs_client_gap_fn - told that events were lost
 * @first: first missed SEQNUM.
 * @last: last missed SEQNUM (inclusive).
 * @data: the subscriber's data.
 *
 * Called only for events the daemon's replay ring no longer holds: the
 * subscriber fell behind by more than the ring's size, or asked for older
 * events than it holds.  A subscriber that merely lags more than its
 * queue allows is sent a gap notice by the daemon, which the library
 * answers itself by replaying the range from the ring, in order, before
 * the events after it: @fn sees every event the ring still had.
 */
typedef void (*classfs_client_gap_fn)(uint64_t first, uint64_t last, void *data);

/**
 * classfs_client_subscribe() - receive every event in SEQNUM order
 * @c: the client.
 * @from: first SEQNUM wanted (from the replay ring); 0 = the next event.
 * @fn: called for each event from classfs_client_dispatch().
 * @gap: called for each gap notice (may be NULL).
 * @data: passed to @fn and @gap.
 *
 * Events travel on a second connection of their own, so a subscriber
 * that is slow never delays the client's requests.  A gap notice is
 * filled from the replay ring on the client's request connection, within
 * classfs_client_dispatch(), before any later event is delivered; only
 * what the ring no longer holds reaches @gap.  One subscription per
 * client.
 * Return: 0, -EBUSY (already subscribed), -EMFILE (the uid holds as many
 * subscriptions, or connections, as the daemon allows it), or -errno.
 */
CLASSFS_PUBLIC int classfs_client_subscribe(struct classfs_client *c, uint64_t from,
					    classfs_client_event_fn fn,
					    classfs_client_gap_fn gap, void *data);

/**
 * classfs_client_unsubscribe() - stop receiving events
 * @c: the client.
 *
 * Return: 0 or -ENOENT when not subscribed.
 */
CLASSFS_PUBLIC int classfs_client_unsubscribe(struct classfs_client *c);

/**
 * classfs_client_replay() - fetch past events from the replay ring
 * @c: the client.
 * @first: first SEQNUM wanted.
 * @last: last SEQNUM wanted (inclusive).
 * @fn: called for each event, in SEQNUM order, before this returns.
 * @data: passed to @fn.
 *
 * Return: number of events delivered; -ENOENT when none of the range is
 * in the ring any more; -EINVAL when @first > @last.  Events of the
 * range already gone from the ring are simply not delivered (compare the
 * count).
 */
CLASSFS_PUBLIC int classfs_client_replay(struct classfs_client *c, uint64_t first, uint64_t last,
					 classfs_client_event_fn fn, void *data);

/* ------------------------------------------------------------------ */
/* records and renderings                                              */
/* ------------------------------------------------------------------ */

/**
 * classfs_client_load() - load a umockdev record into the daemon's tree
 * @c: the client.
 * @data: the record's bytes (streamed in chunks: the daemon never opens
 *        a path a client names).
 * @len: their number.
 * @filename: name used in the daemon's error messages (may be NULL).
 *
 * All or nothing.  Return: 0, -EINVAL (bad record; the message names
 * file, line and reason), -EEXIST, -ENOSYS (daemon built without the
 * record loader), -EFBIG (record too large for the daemon).
 */
CLASSFS_PUBLIC int classfs_client_load(struct classfs_client *c, const void *data, size_t len,
				       const char *filename);

/**
 * classfs_client_save() - receive the tree (or one device and its
 * parents) as a umockdev record
 * @c: the client.
 * @syspath: NULL for the whole tree, else a device's path as Linux's
 *           devices layout names it ("/devices/..."), or a class device's
 *           DEVPATH when the daemon's tree is in the class layout
 *           ("/class/..."), as classfs_record_save() takes it.
 * @out: receives the record.
 *
 * Return: 0, -ENOENT, -ENOSYS (no record support), -EIO (writing @out).
 */
CLASSFS_PUBLIC int classfs_client_save(struct classfs_client *c, const char *syspath, FILE *out);

/** enum classfs_client_format - rendering formats (as print.h's classfs_print_format) */
enum classfs_client_format {
	CLASSFS_CLIENT_TEXT = 0,
	CLASSFS_CLIENT_JSON = 1,
	CLASSFS_CLIENT_DOT = 2,
};

/**
 * classfs_client_tree() - the daemon's tree rendered in @fmt
 * @c: the client.
 * @fmt: text, JSON or DOT.
 * @out: receives the rendering.
 *
 * Return: 0, -EINVAL (bad format), -ENOSYS (no printer), -EIO.
 */
CLASSFS_PUBLIC int classfs_client_tree(struct classfs_client *c, enum classfs_client_format fmt,
				       FILE *out);

/**
 * classfs_client_info() - one device's information rendered in @fmt
 * @c: the client.
 * @cls: the class, NULL for a physical device.
 * @name: the device.
 * @fmt: text, JSON or DOT.
 * @out: receives the rendering.
 *
 * Return: 0, -ENOENT, -EINVAL, -ENOSYS, -EIO.
 */
CLASSFS_PUBLIC int classfs_client_info(struct classfs_client *c, const char *cls, const char *name,
				       enum classfs_client_format fmt, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
