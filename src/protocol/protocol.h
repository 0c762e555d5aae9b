/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol.h - the control protocol between classfsd and its clients
 * (docs/protocol.md): one message per SOCK_SEQPACKET packet, a 20-byte
 * header then tagged fields.  Shared by the daemon and the client
 * library; cfs_msg_decode() is a pure function from bytes, so a fuzzer
 * can drive it directly.
 */
#ifndef CLASSFS_PROTOCOL_PROTOCOL_H
#define CLASSFS_PROTOCOL_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CFS_PROTO_MAGIC		0x31534643u	/* "CFS1" in little-endian byte order */
#define CFS_PROTO_VERSION	1
#define CFS_HDR_SIZE		20
#define CFS_FIELD_HDR_SIZE	8
#define CFS_MSG_MAX_DEFAULT	(64u * 1024u)
#define CFS_MSG_MAX_LIMIT	(16u * 1024u * 1024u)	/* largest --max-message */
#define CFS_VALUE_MAX		4096u		/* one attribute value (CLASSFS_ATTR_MAX) */
#define CFS_PATH_MAX		4096u
#define CFS_ENV_MAX		2048u		/* one KEY=VALUE (CLASSFS_UEVENT_BUFFER) */
#define CFS_EVENT_VARS_MAX	128u

/* header flags */
#define CFS_F_MORE	0x1u	/* reply: more messages of this reply follow; LOAD: more chunks follow */
#define CFS_F_BIND	0x2u	/* CLASS_CREATE, DEVICE_ADD: bound to the connection */
#define CFS_F_CREATE	0x4u	/* ATTR_SET: make the attribute when the path does not exist */
#define CFS_F_BINARY	0x8u	/* ATTR_SET with CFS_F_CREATE: a binary attribute */
#define CFS_F_LINK	0x10u	/* ATTR_SET with CFS_F_CREATE: a symlink, VALUE its target */
#define CFS_F_OPEN	0x20u	/* DEVICE_ADD: other uids may publish devices below it */
#define CFS_F_KNOWN	(CFS_F_MORE | CFS_F_BIND | CFS_F_CREATE | CFS_F_BINARY | CFS_F_LINK | CFS_F_OPEN)

enum cfs_op {
	CFS_OP_REPLY = 1,
	CFS_OP_STATUS,
	CFS_OP_CLASS_CREATE,
	CFS_OP_CLASS_REMOVE,
	CFS_OP_DEVICE_ADD,
	CFS_OP_DEVICE_REMOVE,
	CFS_OP_RENAME,
	CFS_OP_ATTR_GET,
	CFS_OP_ATTR_SET,
	CFS_OP_TRIGGER,
	CFS_OP_SUBSCRIBE,
	CFS_OP_REPLAY,
	CFS_OP_LOAD,
	CFS_OP_SAVE,
	CFS_OP_TREE,
	CFS_OP_INFO,
	CFS_OP_BATCH,
	CFS_OP_EVENTS,		/* daemon -> subscriber */
	CFS_OP_GAP,		/* daemon -> subscriber */
	CFS_OP_CALL,		/* daemon -> driver: run a remote show()/store() */
	CFS_OP_CALL_REPLY,	/* driver -> daemon */
	CFS_OP_RESET,		/* the tree as a new daemon's: every device and plain entry removed */
	CFS_OP_COUNT,
};

enum cfs_tag {
	CFS_T_ERROR = 1,	/* i32: 0 or -errno */
	CFS_T_MESSAGE,		/* string */
	CFS_T_CLASS,		/* name */
	CFS_T_NAME,		/* name */
	CFS_T_PARENT,		/* name */
	CFS_T_DEVT,		/* u64 */
	CFS_T_PHYS,		/* name */
	CFS_T_PHYS_CLASS,	/* name */
	CFS_T_BUS,		/* name */
	CFS_T_DEVTYPE,		/* name */
	CFS_T_ATTR,		/* attribute record, repeated */
	CFS_T_ATTR_NAME,	/* relative path */
	CFS_T_VALUE,		/* bytes, <= CFS_VALUE_MAX */
	CFS_T_NEW_NAME,		/* name */
	CFS_T_ACTION,		/* u32 */
	CFS_T_ENV,		/* string KEY=VALUE, repeated */
	CFS_T_SEQNUM,		/* u64 */
	CFS_T_SEQNUM_LAST,	/* u64 */
	CFS_T_FORMAT,		/* u32 */
	CFS_T_DATA,		/* bytes */
	CFS_T_SYSPATH,		/* string starting with '/' */
	CFS_T_LAYOUT,		/* u32 */
	CFS_T_MOUNT,		/* string */
	CFS_T_VERSION,		/* u32 */
	CFS_T_EVENT,		/* event record, repeated */
	CFS_T_CALL_ID,		/* u64 */
	CFS_T_CALL_KIND,	/* u32: CFS_CALL_SHOW or CFS_CALL_STORE */
	CFS_T_SUB,		/* a whole request message, repeated (BATCH) */
	CFS_T_COUNT,		/* u64 */
	CFS_T_FILENAME,		/* string */
	CFS_T_COUNT_TAGS,
};

enum cfs_call_kind { CFS_CALL_SHOW = 1, CFS_CALL_STORE = 2 };

/* attribute record flags */
#define CFS_A_REMOTE	0x1u	/* show()/store() run in the publishing process */
#define CFS_A_STORE	0x2u	/* remote attribute with a store() */
#define CFS_A_KNOWN	(CFS_A_REMOTE | CFS_A_STORE)

/* an attribute record: u32 mode, u32 flags, name NUL, value bytes (the rest) */
struct cfs_attr {
	uint32_t mode;
	uint32_t flags;
	const char *name;
	const uint8_t *value;
	size_t len;
};

/* an event record: u64 seqnum, u32 action, u32 envc, envc NUL-terminated strings */
struct cfs_event {
	uint64_t seqnum;
	uint32_t action;
	uint32_t envc;
	const char *env;	/* envc strings one after the other */
	size_t env_len;
};

/*
 * A decoded message: strings and bytes point into the decoded buffer
 * (which must outlive it).  Repeated fields are walked with cfs_msg_next().
 */
struct cfs_msg {
	uint16_t version;
	uint16_t op;
	uint32_t serial;
	uint32_t flags;
	uint64_t present;		/* 1 << tag for each tag present */
	int32_t error;
	const char *message, *cls, *name, *parent, *phys, *phys_class, *bus, *devtype;
	const char *attr_name, *new_name, *syspath, *mount, *filename;
	uint64_t devt, seqnum, seqnum_last, call_id, count;
	uint32_t action, format, layout, proto_version, call_kind;
	const uint8_t *value;
	size_t value_len;
	const uint8_t *data;
	size_t data_len;
	unsigned int nattrs, nenv, nevents, nsubs;
	const uint8_t *body;		/* the fields, for cfs_msg_next() */
	size_t body_len;
};

#define CFS_HAS(m, tag) (((m)->present >> (tag)) & 1u)

/*
 * cfs_msg_decode() - decode and validate one message: header, every
 * field's type and size, names, the operation's required and allowed
 * fields, nested BATCH requests.  Pure: reads @len bytes of @buf only.
 * Returns 0, -EPROTO (bad magic or header), -EPROTONOSUPPORT (version),
 * -EOPNOTSUPP (unknown operation), -EBADMSG (truncated, wrong types,
 * unknown, duplicate, missing or unexpected fields), -EINVAL (bad name,
 * path or variable), -E2BIG (value too long).  On error @m->serial and
 * @m->op are set when the header could be read (0 otherwise).
 */
int cfs_msg_decode(const void *buf, size_t len, struct cfs_msg *m);
/* cfs_msg_error_text() - what a decode error means, for replies */
const char *cfs_msg_error_text(int err);
/* cfs_msg_next() - the next field of @tag from *@off (start at 0): 1 found, 0 at the end */
int cfs_msg_next(const struct cfs_msg *m, size_t *off, uint16_t tag, const uint8_t **val,
		 size_t *len);
/* cfs_attr_decode(), cfs_event_decode() - records of a message cfs_msg_decode() accepted */
int cfs_attr_decode(const uint8_t *val, size_t len, struct cfs_attr *a);
int cfs_event_decode(const uint8_t *val, size_t len, struct cfs_event *ev);
const char *cfs_op_name(unsigned int op);

/* an output message being built; a failed append sets @err and makes later appends no-ops */
struct cfs_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;
};

void cfs_buf_init(struct cfs_buf *b);
void cfs_buf_free(struct cfs_buf *b);
void cfs_buf_hdr(struct cfs_buf *b, uint16_t op, uint32_t serial, uint32_t flags);
/* write the message's total length into its header: call before sending */
void cfs_buf_seal(struct cfs_buf *b);
void cfs_buf_bytes(struct cfs_buf *b, uint16_t tag, const void *v, size_t len);
void cfs_buf_str(struct cfs_buf *b, uint16_t tag, const char *s);	/* NULL: nothing */
void cfs_buf_u32(struct cfs_buf *b, uint16_t tag, uint32_t v);
void cfs_buf_i32(struct cfs_buf *b, uint16_t tag, int32_t v);
void cfs_buf_u64(struct cfs_buf *b, uint16_t tag, uint64_t v);
void cfs_buf_attr(struct cfs_buf *b, uint32_t mode, uint32_t flags, const char *name,
		  const void *value, size_t len);
void cfs_buf_event(struct cfs_buf *b, uint64_t seqnum, uint32_t action, int envc,
		   const char *const *envp);
/* a nested message (BATCH): open, append its header and fields, close */
size_t cfs_buf_sub_begin(struct cfs_buf *b);
void cfs_buf_sub_end(struct cfs_buf *b, size_t mark);
/* append @len raw bytes (an already encoded field) */
void cfs_buf_raw(struct cfs_buf *b, const void *v, size_t len);
/* cut back to @len bytes (undo appends) */
void cfs_buf_truncate(struct cfs_buf *b, size_t len);

#endif
