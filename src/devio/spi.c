// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * spi.c - umockdev's SPI transfer logs ("@DEV /dev/spidev0.0 (SPI)")
 * replayed for SPI_IOC_MESSAGE(n), as umockdev's IoctlSpiHandler does.
 *
 * A log is a list of transfers the bus saw, one line per direction:
 *
 *	TW 03ff		a transfer writing 03 ff
 *	 R 0000		... reading 00 00 at the same time
 *	CR 81		a transfer reading 81, chip select held from the last
 *
 * The program's transfers are matched against the log byte by byte, not
 * transfer by transfer: its buffers may split or join the recorded ones
 * (umockdev's rule), so one recorded transfer may answer two of the
 * program's.  A byte written that the log does not have is ENOMSG, a
 * transfer past the log's end ENOENT.  Chip select (C against T) is not
 * checked, as umockdev does not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/spi/spidev.h>

#include "ioctl-tree.h"
#include "util.h"

/* one recorded transfer: what was written, read, or both */
struct spi_chunk {
	uint8_t *tx, *rx;
	size_t len;
	unsigned int lineno;	/* for a message about it */
};

struct spi_replay {
	struct spi_chunk *chunks;
	size_t n, cap;
	size_t chunk, byte;	/* the replay's position */
	struct cfs_once logged;	/* requests reported as not SPI_IOC_MESSAGE */
	char name[];
};

static void spi_free(void *data)
{
	struct spi_replay *r = data;

	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->chunks[i].tx);
		free(r->chunks[i].rx);
	}
	free(r->chunks);
	cfs_once_free(&r->logged);
	free(r);
}

__attribute__((format(printf, 5, 6)))
static int bad(const char *name, unsigned int lineno, char *msg, size_t msgsize,
	       const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(msg, msgsize, "%s:%u: ", name, lineno);
	if (n >= 0 && (size_t)n < msgsize) {
		va_start(ap, fmt);
		vsnprintf(msg + n, msgsize - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* one more chunk's room */
static int grow_chunks(struct spi_replay *r)
{
	size_t cap = r->cap ? r->cap * 2 : 16;
	void *p;

	if (r->n < r->cap)
		return 0;
	p = reallocarray(r->chunks, cap, sizeof(*r->chunks));
	if (!p)
		return -ENOMEM;
	r->chunks = p;
	r->cap = cap;
	return 0;
}

/* "T/C/space, W/R, space, HEX": the line into the log's chunks */
static int parse_line(struct spi_replay *r, const char *line, size_t l, unsigned int lineno,
		      const char *name, char *msg, size_t msgsize)
{
	size_t digits, len;
	struct spi_chunk *c;
	uint8_t **dst, *bin;

	if (l < 4 || line[2] != ' ')
		return bad(name, lineno, msg, msgsize,
			   "not \"TW HEX\", \"TR HEX\", \"CW HEX\", \"CR HEX\", \" W HEX\" or \" R HEX\"");
	if (line[0] == 'T' || line[0] == 'C') {
		if (line[0] == 'C' && !r->n)
			return bad(name, lineno, msg, msgsize,
				   "a continued transfer (C) with no transfer before it");
		if (grow_chunks(r))
			return -ENOMEM;
		r->chunks[r->n++] = (struct spi_chunk){ .lineno = lineno };
	} else if (line[0] != ' ' || !r->n) {
		return bad(name, lineno, msg, msgsize,
			   "a line starts with T (a transfer), C (one continuing it) or a space (its other direction)");
	}
	c = &r->chunks[r->n - 1];
	if (line[1] != 'W' && line[1] != 'R')
		return bad(name, lineno, msg, msgsize, "'%c' is no direction (W or R)", line[1]);
	dst = line[1] == 'W' ? &c->tx : &c->rx;
	if (*dst)
		return bad(name, lineno, msg, msgsize, "a second %c in one transfer", line[1]);
	digits = l - 3;
	len = digits / 2;
	for (size_t i = 3; i < l; i++)
		if (cfs_hex_digit(line[i]) < 0)
			return bad(name, lineno, msg, msgsize,
				   "'%c' in the data is no hexadecimal digit", line[i]);
	if (digits % 2)
		return bad(name, lineno, msg, msgsize,
			   "the data has an odd number of hexadecimal digits (%zu)", digits);
	if ((c->tx || c->rx) && c->len != len)
		return bad(name, lineno, msg, msgsize,
			   "%zu bytes, the transfer's other direction %zu (SPI moves both at once)",
			   len, c->len);
	bin = malloc(len);
	if (!bin)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++)
		bin[i] = (uint8_t)(cfs_hex_digit(line[3 + 2 * i]) << 4 | cfs_hex_digit(line[4 + 2 * i]));
	*dst = bin;
	c->len = len;
	return 0;
}

static void log_once(struct spi_replay *r, const struct cfs_ioctl_call *call, unsigned long req)
{
	char desc[64];

	if (!cfs_once(&r->logged, req))
		return;
	ioctl_describe(req, desc, sizeof(desc));
	cfs_devio_log("%s: ioctl 0x%lx (%s, size %u) is not in the recording %s "
		      "(an SPI recording answers SPI_IOC_MESSAGE only)",
		      call->node ? call->node : "?", req, desc, (unsigned int)_IOC_SIZE(req), r->name);
}

/*
 * one of the program's transfers of @len bytes (@tx, @rx: its buffers, 0
 * for none) against the log from the replay's position: the bytes
 * transferred, or -ENOMSG (other bytes written, or a direction the log
 * has and the program not), -ENOENT (past the log's end), -EFAULT
 */
static long transfer(struct spi_replay *r, const struct cfs_ioctl_call *call, uint64_t tx,
		     uint64_t rx, size_t len)
{
	size_t offset = 0;
	uint8_t *buf;
	int err;

	while (offset < len) {
		const struct spi_chunk *c;
		size_t trans = len - offset;

		if (r->chunk >= r->n) {
			cfs_devio_log("%s: an SPI transfer past the end of the recording %s",
				      call->node ? call->node : "?", r->name);
			return -ENOENT;
		}
		c = &r->chunks[r->chunk];
		if (trans > c->len - r->byte)
			trans = c->len - r->byte;
		if ((c->tx && !tx) || (c->rx && !rx))
			goto mismatch;
		if (c->tx) {
			buf = malloc(trans);
			if (!buf)
				return -ENOMEM;
			err = cfs_mem_read(call->mem, tx + offset, buf, trans);
			if (!err && memcmp(buf, c->tx + r->byte, trans))
				err = 1;
			free(buf);
			if (err < 0)
				return err;
			if (err)
				goto mismatch;
		}
		if (c->rx) {
			err = cfs_mem_write(call->mem, rx + offset, c->rx + r->byte, trans);
			if (err)
				return err;
		}
		r->byte += trans;
		if (r->byte == c->len) {
			r->chunk++;
			r->byte = 0;
		}
		offset += trans;
	}
	return (long)offset;
mismatch:
	cfs_devio_log("%s: an SPI transfer is not the one at %s:%u (%s)",
		      call->node ? call->node : "?", r->name, r->chunks[r->chunk].lineno,
		      (r->chunks[r->chunk].tx && !tx) ? "the program writes nothing" :
		      (r->chunks[r->chunk].rx && !rx) ? "the program reads nothing" :
		      "other bytes written");
	return -ENOMSG;
}

static long spi_ioctl(void *data, const struct cfs_ioctl_call *call)
{
	struct spi_replay *r = data;
	unsigned long req = ioctl_req32(call->request);
	size_t size = _IOC_SIZE(req), count;
	struct spi_ioc_transfer *xfers;
	long total = 0, res;
	int err;

	if ((req & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) != SPI_IOC_MESSAGE(0)) {
		/* the mode, speed and word size requests: umockdev neither */
		log_once(r, call, req);
		return -ENOTTY;
	}
	/* spidev's answer to a size that is no number of transfers */
	if (size % sizeof(*xfers))
		return -EINVAL;
	count = size / sizeof(*xfers);
	if (!count)
		return 0;
	xfers = malloc(size);
	if (!xfers)
		return -ENOMEM;
	err = cfs_mem_read(call->mem, call->arg, xfers, size);
	if (err) {
		free(xfers);
		return err;
	}
	for (size_t i = 0; i < count; i++) {
		/* no buffer at all: a delay on the bus, nothing a log holds */
		if (!xfers[i].tx_buf && !xfers[i].rx_buf)
			continue;
		res = transfer(r, call, xfers[i].tx_buf, xfers[i].rx_buf, xfers[i].len);
		if (res < 0) {
			total = res;
			break;
		}
		total += res;
	}
	free(xfers);
	return total;
}

/**
 * spi_text_load() - a handler replaying an SPI transfer log
 * @text: the log (need not end in NUL), its "@DEV" line included.
 * @len: its length.
 * @name: its file name, for messages.
 * @out: filled in.
 * @msg: "NAME:LINE: reason" on -EINVAL.
 * @msgsize: @msg's size.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int spi_text_load(const char *text, size_t len, const char *name,
		  struct cfs_ioctl_handler *out, char *msg, size_t msgsize)
{
	size_t name_len = strlen(name) + 1, pos = 0;
	struct spi_replay *r = calloc(1, sizeof(*r) + name_len);
	unsigned int lineno = 0;
	int err = 0;

	if (!r)
		return -ENOMEM;
	memcpy(r->name, name, name_len);
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - line) : len - pos;

		lineno++;
		pos += l + 1;
		if (memchr(line, '\0', l)) {
			err = bad(name, lineno, msg, msgsize, "a NUL byte in the line");
			goto fail;
		}
		while (l && strchr(" \t\r", line[l - 1]))
			l--;
		if (!l || line[0] == '#' || line[0] == '@')
			continue;
		err = parse_line(r, line, l, lineno, name, msg, msgsize);
		if (err)
			goto fail;
	}
	*out = (struct cfs_ioctl_handler){ .ioctl = spi_ioctl, .free = spi_free, .data = r };
	return 0;
fail:
	if (err == -ENOMEM)
		snprintf(msg, msgsize, "%s:%u: out of memory", name, lineno);
	spi_free(r);
	return err;
}
