// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-records.c - records and renderings through the client library:
 * LOAD streams a record in chunks, SAVE/TREE/INFO stream their output.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client-internal.h"

int classfs_client_load(struct classfs_client *c, const void *data, size_t len,
			const char *filename)
{
	const uint8_t *p = data;
	size_t off = 0, chunk;
	struct cfs_buf b;
	int r = 0;

	if (!c || (!data && len))
		return -EINVAL;
	cfs_buf_init(&b);
	/* room for the header, the file name and the data field's header */
	chunk = c->max_msg - CFS_HDR_SIZE - 2 * CFS_FIELD_HDR_SIZE -
		(filename ? strlen(filename) + 1 : 0);
	if (chunk < 1024 || chunk > c->max_msg)
		return cfs_client_error(c, -ENAMETOOLONG, "file name too long");
	do {
		size_t n = len - off < chunk ? len - off : chunk;

		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_LOAD, 0, off + n < len ? CFS_F_MORE : 0);
		cfs_buf_str(&b, CFS_T_FILENAME, filename);
		cfs_buf_bytes(&b, CFS_T_DATA, p + off, n);
		r = cfs_client_transact(c, &b, NULL);
		off += n;
	} while (r == 0 && off < len);
	cfs_buf_free(&b);
	return r;
}

static int write_part(struct classfs_client *c, const struct cfs_msg *m, void *data)
{
	FILE *out = data;

	if (m->data_len && fwrite(m->data, 1, m->data_len, out) != m->data_len)
		return -EIO;
	return 0;
}

/* a request whose reply is streamed into @out */
static int stream_to(struct classfs_client *c, struct cfs_buf *b, FILE *out)
{
	struct call_ctx ctx = { write_part, out, { 0 } };
	int r = cfs_client_transact(c, b, &ctx);

	if (r == 0 && !ctx.part)
		r = -EIO;	/* a local write failed midway */
	if (r == 0 && ctx.reply.data_len)
		r = write_part(c, &ctx.reply, out);
	if (r == 0 && fflush(out) != 0)
		r = cfs_client_error(c, -EIO, "cannot write the output");
	return r;
}

int classfs_client_usage(struct classfs_client *c, FILE *out)
{
	struct cfs_buf b;
	int r;

	if (!c || !out)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 0, 0);
	r = stream_to(c, &b, out);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_save(struct classfs_client *c, const char *syspath, FILE *out)
{
	struct cfs_buf b;
	int r;

	if (!c || !out)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_SAVE, 0, 0);
	cfs_buf_str(&b, CFS_T_SYSPATH, syspath);
	r = stream_to(c, &b, out);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_tree(struct classfs_client *c, enum classfs_client_format fmt, FILE *out)
{
	struct cfs_buf b;
	int r;

	if (!c || !out)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_TREE, 0, 0);
	cfs_buf_u32(&b, CFS_T_FORMAT, (uint32_t)fmt);
	r = stream_to(c, &b, out);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_info(struct classfs_client *c, const char *cls, const char *name,
			enum classfs_client_format fmt, FILE *out)
{
	struct cfs_buf b;
	int r;

	if (!c || !name || !out)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_INFO, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	cfs_buf_u32(&b, CFS_T_FORMAT, (uint32_t)fmt);
	r = stream_to(c, &b, out);
	cfs_buf_free(&b);
	return r;
}
