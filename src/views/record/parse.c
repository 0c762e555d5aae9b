// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * parse.c - reading an umockdev record into struct rec_parse, checking
 * every line, in time linear in the record's size: one pass to count, one
 * to parse; devices are found by path in a hash table.  Nothing here
 * touches a tree: a record is refused before anything is built.
 */
#include "record-internal.h"
#include "util.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/**
 * cfs_rec_error() - fill the caller's error (file, line, reason); -EINVAL
 */
int cfs_rec_error(struct rec_parse *p, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	if (p->err) {
		snprintf(p->err->file, sizeof(p->err->file), "%s", p->file);
		p->err->line = line;
		va_start(ap, fmt);
		vsnprintf(p->err->reason, sizeof(p->err->reason), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* the index of the device at @path whose hash is @h, or REC_NONE */
static uint32_t lookup_hashed(const struct rec_parse *p, const char *path, size_t len, uint32_t h)
{
	size_t mask = p->hashsize - 1;

	if (!p->hashsize)
		return REC_NONE;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		uint64_t v = p->hash[i];
		const struct rec_pdev *d;

		if (!v)
			return REC_NONE;
		if ((uint32_t)(v >> 32) != h)
			continue;	/* the slot keeps the hash: no visit to the device */
		d = &p->devs[(uint32_t)v - 1];
		if (d->pathlen == len && !memcmp(d->path, path, len))
			return (uint32_t)v - 1;
	}
}

/**
 * cfs_rec_lookup() - the index of the device at @path (@len bytes), or
 * REC_NONE.
 */
uint32_t cfs_rec_lookup(const struct rec_parse *p, const char *path, size_t len)
{
	return lookup_hashed(p, path, len, cfs_rec_hash(path, len));
}

static void insert_hashed(struct rec_parse *p, uint32_t idx, uint32_t h)
{
	size_t mask = p->hashsize - 1;
	size_t i = h & mask;

	while (p->hash[i])
		i = (i + 1) & mask;
	p->hash[i] = (uint64_t)h << 32 | (idx + 1);
}

static void hash_insert(struct rec_parse *p, uint32_t idx)
{
	const struct rec_pdev *d = &p->devs[idx];

	insert_hashed(p, idx, cfs_rec_hash(d->path, d->pathlen));
}

/* room for @n devices (and their hash slots at load factor <= 1/2) */
static int reserve(struct rec_parse *p, size_t n)
{
	if (n > p->capdevs) {
		size_t cap = p->capdevs ? p->capdevs : 64;
		struct rec_pdev *v;

		while (cap < n)
			cap *= 2;
		v = realloc(p->devs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->devs = v;
		p->capdevs = cap;
	}
	if (n * 2 > p->hashsize) {
		size_t size = p->hashsize ? p->hashsize : 128;
		uint64_t *h;

		while (size < n * 2)
			size *= 2;
		h = calloc(size, sizeof(*h));

		if (!h)
			return -ENOMEM;
		free(p->hash);
		p->hash = h;
		p->hashsize = size;
		for (size_t i = 0; i < p->ndevs; i++)
			hash_insert(p, (uint32_t)i);
	}
	return 0;
}

/*
 * Append a device (its path must not be there yet): its index, or REC_NONE
 * on ENOMEM.  A recorded device joins the hash index when its paragraph
 * ends (finish_dev()); others at once (@index).
 */
static uint32_t add_dev(struct rec_parse *p, const char *path, size_t len, uint32_t lineno,
			bool index)
{
	uint32_t idx;

	if (reserve(p, p->ndevs + 1) < 0)
		return REC_NONE;
	idx = (uint32_t)p->ndevs++;
	p->devs[idx] = (struct rec_pdev){
		.path = path,
		.pathlen = (uint32_t)len,
		.lineno = lineno,
		.up = REC_NONE,
		.parent = REC_NONE,
		.phys = REC_NONE,
	};
	if (index)
		hash_insert(p, idx);
	return idx;
}

/** cfs_rec_add_placeholder() - a device that is not recorded (link.c) */
uint32_t cfs_rec_add_placeholder(struct rec_parse *p, const char *path, size_t len)
{
	uint32_t idx = add_dev(p, path, len, 0, true);

	if (idx != REC_NONE)
		p->devs[idx].placeholder = true;
	return idx;
}

/**
 * cfs_rec_unhex() - decode @len hex digits into @out (@len / 2 bytes)
 * Return: 0, or -EINVAL for an odd length or a non-hex digit.
 */
int cfs_rec_unhex(const char *s, size_t len, unsigned char *out)
{
	if (len % 2)
		return -EINVAL;
	for (size_t i = 0; i < len; i += 2) {
		int hi = cfs_hex_digit(s[i]), lo = cfs_hex_digit(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		if (out)
			out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/**
 * cfs_rec_unescape() - decode the C escapes of an A: value
 * @out: NULL to only check, else room for @len bytes.
 * @why: set to the reason on error.
 * Return: 0 or -EINVAL.
 */
int cfs_rec_unescape(const char *s, size_t len, char *out, size_t *outlen, const char **why)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned int c = (unsigned char)s[i];

		if (c == '\\') {
			if (++i == len) {
				*why = "value ends inside an escape";
				return -EINVAL;
			}
			c = (unsigned char)s[i];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'v': c = '\v'; break;
			case '\\': case '"': case '\'': case '?': break;
			case 'x': {
				int n = 0;
				unsigned int v = 0;

				while (n < 2 && i + 1 < len && cfs_hex_digit(s[i + 1]) >= 0)
					v = v << 4 | (unsigned int)cfs_hex_digit(s[++i]), n++;
				if (!n) {
					*why = i + 1 == len ? "value ends inside an escape"
							    : "\\x without hex digits";
					return -EINVAL;
				}
				c = v;
				break;
			}
			default:
				if (c >= '0' && c <= '7') {
					unsigned int v = c - '0';

					for (int n = 1; n < 3 && i + 1 < len && s[i + 1] >= '0' &&
							s[i + 1] <= '7'; n++)
						v = v * 8 + (unsigned int)(s[++i] - '0');
					if (v > 0xff) {
						*why = "octal escape above \\377";
						return -EINVAL;
					}
					c = v;
				} else {
					*why = "unknown escape";
					return -EINVAL;
				}
			}
		}
		if (out)
			out[o] = (char)c;
		o++;
	}
	if (outlen)
		*outlen = o;
	return 0;
}

/*
 * A name or a "dir/sub/name" made of valid names (attributes, links,
 * device paths); *@ncomp gets the number of components.
 */
static bool valid_relpath_n(const char *s, size_t len, uint32_t *ncomp)
{
	const char *end = s + len;
	uint32_t k = 0;

	if (!len || len > PATH_MAX)
		return false;
	for (const char *c = s; c <= end; k++) {
		const char *slash = memchr(c, '/', (size_t)(end - c));
		size_t n;

		if (!slash)
			slash = end;
		n = (size_t)(slash - c);
		if (!n || n > NAME_MAX || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.') || !cfs_utf8_valid(c, n))
			return false;
		c = slash + 1;
	}
	*ncomp = k;
	return true;
}

static bool valid_relpath(const char *s, size_t len)
{
	uint32_t n;

	return valid_relpath_n(s, len, &n);
}

static int check_path(struct rec_parse *p, uint32_t lineno, const char *s, size_t len,
		      uint32_t *depth)
{
	static const char prefix[] = "/devices/";

	if (len < sizeof(prefix) || memcmp(s, prefix, sizeof(prefix) - 1))
		return cfs_rec_error(p, lineno, "device path '%.*s' is not under /devices/",
				     (int)(len > 200 ? 200 : len), s);
	if (!valid_relpath_n(s + 1, len - 1, depth))
		return cfs_rec_error(p, lineno,
				     "device path '%.*s' has an empty, '.', '..' or non-UTF-8 component",
				     (int)(len > 200 ? 200 : len), s);
	if (len == 16 && !memcmp(s, "/devices/virtual", 16))
		return cfs_rec_error(p, lineno, "/devices/virtual is not a device");
	/*
	 * The core's paths have at most 128 components, and a device placed
	 * elsewhere may gain a glue directory per level: half of it, with
	 * room to spare (Linux's deepest paths have about 25).
	 */
	if (*depth > REC_MAX_DEPTH)
		return cfs_rec_error(p, lineno, "device path '%.*s...' has %u components, more than %d",
				     100, s, *depth, REC_MAX_DEPTH);
	return 0;
}

/* first @c in [s, s+len), else NULL */
static const char *find(const char *s, size_t len, char c)
{
	return memchr(s, c, len);
}

/*
 * A file's or node's name that holds '=' or '\\' is saved with them as
 * \\x3d and \\x5c (save.c's sb_key()), for the first '=' of a line ends its
 * name; any other byte stands for itself, so a record of names without
 * them reads as it always did.  Decode the name at *@rest (*@keylen
 * bytes) in place, right-aligned against what follows it, so that its
 * value still starts one byte after it: in a copy of the record, made at
 * the first name that needs it.  *@rest then points into the copy.
 */
static int key_unescape(struct rec_parse *p, uint32_t lineno, const char **rest, size_t *keylen)
{
	const char *k = *rest;
	char buf[PATH_MAX + 1];
	size_t n = 0, off;
	char *w;

	if (!memchr(k, '\\', *keylen))
		return 0;
	for (size_t i = 0; i < *keylen; i++) {
		unsigned char c = (unsigned char)k[i];

		if (c == '\\' && i + 3 < *keylen &&
		    k[i + 1] == 'x' && cfs_rec_unhex(k + i + 2, 2, &c) == 0) {
			if (c < 0x20 || c == 0x7f || c == '/')
				return cfs_rec_error(p, lineno, "name '%.*s' escapes byte 0x%02x, "
						     "which no name holds", (int)*keylen, k, c);
			i += 3;
		}
		buf[n++] = (char)c;
	}
	off = (size_t)(k - p->data);
	if (!p->own) {
		p->own = malloc(p->len ? p->len : 1);
		if (!p->own)
			return -ENOMEM;
		memcpy(p->own, p->data, p->len);
		p->data = p->own;
	}
	w = p->own + off + *keylen - n;
	memcpy(w, buf, n);
	*rest = w;
	*keylen = n;
	return 0;
}

static bool key_is(const struct rec_parse *p, const struct rec_line *l, const char *key)
{
	size_t n = strlen(key);

	return l->keylen == n && !memcmp(cfs_rec_key(p, l), key, n);
}

/* properties (E:) and files (A:, H:, L:) are names of their own */
/*
 * Lines by tag (E: last) and name, a '/' before any other byte: an entry
 * "x" is followed by the entries of its directory "x/..." if there are any.
 */
static int cmp_linename(const void *a, const void *b, void *parse)
{
	const struct rec_line *x = *(const struct rec_line *const *)a;
	const struct rec_line *y = *(const struct rec_line *const *)b;
	const struct rec_parse *p = parse;
	const unsigned char *kx = (const unsigned char *)cfs_rec_key(p, x);
	const unsigned char *ky = (const unsigned char *)cfs_rec_key(p, y);
	size_t n = x->keylen < y->keylen ? x->keylen : y->keylen;
	int r = (x->tag == 'E') - (y->tag == 'E');

	if (r)
		return r;
	for (size_t i = 0; i < n; i++)
		if (kx[i] != ky[i])
			return (kx[i] == '/' ? 0 : kx[i]) < (ky[i] == '/' ? 0 : ky[i]) ? -1 : 1;
	return (x->keylen > y->keylen) - (x->keylen < y->keylen);
}

/* is attribute or link @x the directory of @y ("x" and "x/y")? */
static bool is_dir_of(const struct rec_parse *p, const struct rec_line *x, const struct rec_line *y)
{
	return x->tag != 'E' && y->tag != 'E' && y->keylen > x->keylen &&
	       cfs_rec_key(p, y)[x->keylen] == '/' &&
	       !memcmp(cfs_rec_key(p, x), cfs_rec_key(p, y), x->keylen);
}

/* the lines of one paragraph that say what the device is */
struct rec_keys {
	const struct rec_line *sub;	/* L: subsystem */
	const struct rec_line *devattr;	/* A: dev */
	const struct rec_line *major, *minor;	/* E: MAJOR, E: MINOR */
};

/*
 * The named lines of @d (attributes, links, properties) into @names, and
 * the lines that say what the device is into @keys; SUBSYSTEM and DEVTYPE
 * are taken at once.  Returns how many names.
 */
static size_t collect_names(struct rec_parse *p, struct rec_pdev *d,
			    const struct rec_line **names, struct rec_keys *keys)
{
	size_t nnames = 0;

	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *l = &p->lines[d->first + i];

		switch (l->tag) {
		case 'A':
		case 'H':
		case 'L':
			names[nnames++] = l;
			if (l->tag == 'L' && key_is(p, l, "subsystem"))
				keys->sub = l;
			if (l->tag == 'A' && key_is(p, l, "dev"))
				keys->devattr = l;
			break;
		case 'E':
			/* a property twice would make the line order matter */
			names[nnames++] = l;
			if (key_is(p, l, "SUBSYSTEM") && !d->subsys) {
				d->subsys = cfs_rec_val(p, l);
				d->subsyslen = l->vallen;
			} else if (key_is(p, l, "DEVTYPE")) {
				d->devtype = cfs_rec_val(p, l);
				d->devtypelen = l->vallen;
			} else if (key_is(p, l, "MAJOR")) {
				keys->major = l;
			} else if (key_is(p, l, "MINOR")) {
				keys->minor = l;
			}
			break;
		}
	}
	return nnames;
}

/* @names in cmp_linename() order */
static void sort_names(struct rec_parse *p, const struct rec_line **names, size_t nnames)
{
	/* few names per device: an insertion sort beats qsort()'s calls */
	if (nnames > 16) {
		qsort_r(names, nnames, sizeof(*names), cmp_linename, p);
		return;
	}
	for (size_t i = 1; i < nnames; i++) {
		const struct rec_line *x = names[i];
		size_t k = i;

		for (; k > 0 && cmp_linename(&names[k - 1], &x, p) > 0; k--)
			names[k] = names[k - 1];
		names[k] = x;
	}
}

/* sorted @names: no name twice, none both an entry and a directory */
static int check_names(struct rec_parse *p, const struct rec_pdev *d,
		       const struct rec_line **names, size_t nnames)
{
	for (size_t i = 1; i < nnames; i++) {
		/* the error names the later of the two lines */
		const struct rec_line *l = names[i] > names[i - 1] ? names[i] : names[i - 1];

		if (is_dir_of(p, names[i - 1], names[i]))
			return cfs_rec_error(p, cfs_rec_lineno(p, d, l), "'%.*s' is both an entry and the "
					     "directory of '%.*s' in device %.*s", (int)names[i - 1]->keylen,
					     cfs_rec_key(p, names[i - 1]), (int)names[i]->keylen,
					     cfs_rec_key(p, names[i]), (int)d->pathlen, d->path);
		if (!cmp_linename(&names[i - 1], &names[i], p))
			return cfs_rec_error(p, cfs_rec_lineno(p, d, l), "duplicate %s '%.*s' in device %.*s",
					     l->tag == 'E' ? "property" : "attribute", (int)l->keylen,
					     cfs_rec_key(p, l), (int)d->pathlen, d->path);
	}
	return 0;
}

/*
 * What @d is: a bus, class or plain device, and its subsystem.  A
 * subsystem link decides (".../bus/NAME" or ".../class/NAME"), else the
 * SUBSYSTEM property and the buses the library knows.
 */
static int classify(struct rec_parse *p, struct rec_pdev *d, const struct rec_line *sub)
{
	d->kind = REC_PLAIN;
	if (sub) {
		const char *target = cfs_rec_val(p, sub), *base = target + sub->vallen;

		while (base > target && base[-1] != '/')
			base--;
		d->subsys = base;
		d->subsyslen = (uint32_t)(target + sub->vallen - base);
		if (!d->subsyslen)
			return cfs_rec_error(p, cfs_rec_lineno(p, d, sub), "subsystem link without a name");
		if (base - target >= 5 && !memcmp(base - 5, "/bus/", 5))
			d->kind = REC_BUS;
		else if (base - target >= 7 && !memcmp(base - 7, "/class/", 7))
			d->kind = REC_CLASS;
		else
			d->kind = cfs_rec_is_bus(d->subsys, d->subsyslen) ? REC_BUS : REC_CLASS;
	} else if (d->subsys) {
		d->kind = cfs_rec_is_bus(d->subsys, d->subsyslen) ? REC_BUS : REC_CLASS;
	}
	if (d->subsys && (!d->subsyslen || d->subsyslen > NAME_MAX ||
			  find(d->subsys, d->subsyslen, '/') ||
			  (d->subsyslen <= 2 && d->subsys[0] == '.')))
		return cfs_rec_error(p, d->lineno, "invalid SUBSYSTEM '%.*s'", (int)d->subsyslen,
				     d->subsys);
	/* the class layout's places; the devices layout takes the recorded path */
	if (!p->exact && d->kind == REC_CLASS && d->pathlen > 17 &&
	    !memcmp(d->path, "/devices/virtual/", 17) && d->depth < 4)
		return cfs_rec_error(p, d->lineno, "class device %.*s is not in /devices/virtual/CLASS/",
				     (int)d->pathlen, d->path);
	return 0;
}

/* the device number: the `dev` attribute (MAJOR:MINOR) first, else MAJOR and MINOR */
static int parse_devt(struct rec_parse *p, struct rec_pdev *d, const struct rec_keys *keys)
{
	const struct rec_line *devattr = keys->devattr;

	if (devattr) {
		char buf[64], *end;
		size_t n;
		const char *why;
		unsigned long ma = 0, mi = 0;
		bool ok = false;

		if (devattr->vallen >= sizeof(buf) ||
		    cfs_rec_unescape(cfs_rec_val(p, devattr), devattr->vallen, buf, &n, &why) < 0)
			return cfs_rec_error(p, cfs_rec_lineno(p, d, devattr), "invalid dev attribute");
		buf[n] = '\0';
		if (buf[0] >= '0' && buf[0] <= '9') {
			ma = strtoul(buf, &end, 10);
			if (*end == ':' && end[1] >= '0' && end[1] <= '9') {
				mi = strtoul(end + 1, &end, 10);
				ok = (!*end || !strcmp(end, "\n")) && ma <= 0xfff && mi <= 0xfffff;
			}
		}
		if (!ok)
			return cfs_rec_error(p, cfs_rec_lineno(p, d, devattr),
					     "dev attribute '%s' is not MAJOR:MINOR", buf);
		d->devt = makedev((unsigned int)ma, (unsigned int)mi);
	} else if (keys->major && keys->minor) {
		char *end;
		unsigned long ma = strtoul(cfs_rec_val(p, keys->major), &end, 10);
		unsigned long mi = strtoul(cfs_rec_val(p, keys->minor), &end, 10);

		d->devt = makedev((unsigned int)ma, (unsigned int)mi);
	}
	return 0;
}

/* the end of a device's paragraph: duplicate names, and what its lines say */
static int finish_dev(struct rec_parse *p, struct rec_pdev *d)
{
	const struct rec_line *stack[64], **names = stack;
	struct rec_keys keys = { 0 };
	size_t nnames;
	uint32_t idx;
	int r;

	idx = lookup_hashed(p, d->path, d->pathlen, p->pending_hash);
	if (idx != REC_NONE)
		return cfs_rec_error(p, d->lineno, "duplicate device %.*s (first at line %u)",
				     (int)d->pathlen, d->path, p->devs[idx].lineno);
	insert_hashed(p, (uint32_t)(d - p->devs), p->pending_hash);
	if (d->nlines > 64 && !(names = malloc(d->nlines * sizeof(*names))))
		return -ENOMEM;
	nnames = collect_names(p, d, names, &keys);
	sort_names(p, names, nnames);
	r = check_names(p, d, names, nnames);
	if (!r)
		r = classify(p, d, keys.sub);
	if (!r)
		r = parse_devt(p, d, &keys);
	if (names != stack)
		free(names);
	return r;
}

/*
 * Does a line hold a control byte (a tab aside)?  Eight bytes at a time:
 * bytes below 0x20 or equal to 0x7f set their top bit in the mask; a word
 * with a hit is looked at byte by byte (tabs are rare).  This is most of
 * the parser's time otherwise.
 */
static bool has_control(const char *s, size_t len)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t x, lt, del;

		memcpy(&x, s + i, 8);
		lt = (x - 0x20 * ones) & ~x & high;		/* bytes < 0x20 */
		del = ((x ^ 0x7f * ones) - ones) & ~(x ^ 0x7f * ones) & high;	/* == 0x7f */
		if (lt | del) {
			for (size_t k = i; k < i + 8; k++)
				if (((unsigned char)s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f)
					return true;
		}
	}
	for (; i < len; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return true;
	return false;
}

/* lines matching `TAG: ...` */
static int parse_line(struct rec_parse *p, const char *s, size_t len, uint32_t lineno,
		      uint32_t *cur)
{
	struct rec_line *l;
	const char *rest, *eq, *val;
	size_t restlen, keylen;
	char tag;
	int r;

	bool bad = has_control(s, len);

	for (size_t i = 0; bad && i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!c)
			return cfs_rec_error(p, lineno, "NUL byte in column %zu", i + 1);
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return cfs_rec_error(p, lineno, "control character 0x%02x in column %zu",
					     c, i + 1);
	}
	if (len < 3 || s[1] != ':' || s[2] != ' ') {
		if (len >= 2 && s[1] == ':')
			return cfs_rec_error(p, lineno, "no space after '%c:'", s[0]);
		return cfs_rec_error(p, lineno, "not a record line (expected 'TAG: ...')");
	}
	tag = s[0];
	rest = s + 3;
	restlen = len - 3;
	if (!strchr("PNSEAHL", tag) || !tag)
		return cfs_rec_error(p, lineno, "unknown tag '%c:'", tag);

	if (tag == 'P') {
		uint32_t idx, depth;

		if (*cur != REC_NONE && (r = finish_dev(p, &p->devs[*cur])) < 0)
			return r;
		r = check_path(p, lineno, rest, restlen, &depth);
		if (r < 0)
			return r;
		/*
		 * The duplicate check and the index wait for the end of the
		 * paragraph: the slot, a cache miss in a large record, is
		 * fetched meanwhile.
		 */
		p->pending_hash = cfs_rec_hash(rest, restlen);
		__builtin_prefetch(&p->hash[p->pending_hash & (p->hashsize - 1)], 1);
		idx = add_dev(p, rest, restlen, lineno, false);
		if (idx == REC_NONE)
			return -ENOMEM;
		p->devs[idx].first = (uint32_t)p->nlines;
		p->devs[idx].depth = depth;
		*cur = idx;
		return 0;
	}
	if (*cur == REC_NONE)
		return cfs_rec_error(p, lineno, p->ndevs ? "'%c:' line outside a device (a blank "
				     "line ends one; no P: line since)" :
				     "'%c:' line before the first P: line", tag);

	l = &p->lines[p->nlines];
	*l = (struct rec_line){ .off = (uint32_t)(rest - p->data), .tag = tag };
	switch (tag) {
	case 'S':
		if (!restlen)
			return cfs_rec_error(p, lineno, "empty S: line");
		l->vallen = (uint32_t)restlen;
		break;
	case 'N':
		eq = find(rest, restlen, '=');
		keylen = eq ? (size_t)(eq - rest) : restlen;
		if (eq)
			l->vallen = (uint32_t)(rest + restlen - eq - 1);
		if (keylen && keylen <= PATH_MAX && (r = key_unescape(p, lineno, &rest, &keylen)) < 0)
			return r;
		l->off = (uint32_t)(rest - p->data);
		if (!keylen || !valid_relpath(rest, keylen))
			return cfs_rec_error(p, lineno, "invalid node name in N: line");
		l->keylen = (uint16_t)keylen;
		if (eq) {
			if (cfs_rec_unhex(eq + 1, l->vallen, NULL) < 0)
				return cfs_rec_error(p, lineno, "bad hex in N: contents");
		}
		break;
	default:
		eq = find(rest, restlen, '=');
		if (!eq)
			return cfs_rec_error(p, lineno, "'%c:' line without '='", tag);
		keylen = (size_t)(eq - rest);
		val = eq + 1;
		l->vallen = (uint32_t)(rest + restlen - eq - 1);
		if (!keylen)
			return cfs_rec_error(p, lineno, "'%c:' line with an empty name", tag);
		if (keylen > PATH_MAX)
			return cfs_rec_error(p, lineno, "'%c:' name longer than %d bytes", tag,
					     PATH_MAX);
		l->keylen = (uint16_t)keylen;
		if (tag == 'E')
			break;
		if ((r = key_unescape(p, lineno, &rest, &keylen)) < 0)
			return r;
		l->off = (uint32_t)(rest - p->data);
		l->keylen = (uint16_t)keylen;
		if (!valid_relpath(rest, keylen))
			return cfs_rec_error(p, lineno, "invalid attribute name '%.*s' (empty, '.', '..' or not UTF-8)",
					     (int)keylen, rest);
		if (tag == 'A') {
			const char *why;
			size_t n;

			n = l->vallen;
			if (memchr(val, '\\', l->vallen) &&
			    cfs_rec_unescape(val, l->vallen, NULL, &n, &why) < 0)
				return cfs_rec_error(p, lineno, "attribute '%.*s': %s",
						     (int)keylen, rest, why);
			if (n > CLASSFS_ATTR_MAX)
				return cfs_rec_error(p, lineno,
						     "attribute '%.*s' longer than %d bytes",
						     (int)keylen, rest, CLASSFS_ATTR_MAX);
		} else if (tag == 'H') {
			if (cfs_rec_unhex(val, l->vallen, NULL) < 0)
				return cfs_rec_error(p, lineno, "bad hex in binary attribute '%.*s'",
						     (int)keylen, rest);
		} else if (!l->vallen) {
			return cfs_rec_error(p, lineno, "link '%.*s' without a target",
					     (int)keylen, rest);
		}
		break;
	}
	p->nlines++;
	p->devs[*cur].nlines++;
	return 0;
}

/**
 * cfs_rec_parse() - parse and check a whole record
 * Return: 0, -EINVAL (error filled), -ENOMEM.  On error the caller still
 * calls cfs_rec_parse_free().
 */
int cfs_rec_parse(struct rec_parse *p, const char *data, size_t len)
{
	size_t nlines = 0, off = 0;
	uint32_t cur = REC_NONE, lineno = 0;
	int r;

	size_t npaths = 0;

	/* count lines and devices: the arrays are made once, at their size */
	for (const char *s = data, *e = data + len; s < e; nlines++) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));

		npaths += s[0] == 'P';
		s = nl ? nl + 1 : e;
	}
	if (nlines >= UINT32_MAX || len > UINT32_MAX)
		return cfs_rec_error(p, 0, "record too large (4 GiB at most)");
	p->data = data;
	p->len = len;
	p->lines = malloc((nlines ? nlines : 1) * sizeof(*p->lines));
	if (!p->lines || reserve(p, npaths + npaths / 4 + 16) < 0)
		return -ENOMEM;

	while (off < len) {
		/* p->data: the record, or its copy once a name was decoded */
		const char *s = p->data + off, *nl = memchr(s, '\n', len - off);
		size_t n = nl ? (size_t)(nl - s) : len - off;

		lineno++;
		off += n + (nl ? 1 : 0);
		if (!n) {
			/* a blank line ends the paragraph */
			if (cur != REC_NONE && (r = finish_dev(p, &p->devs[cur])) < 0)
				return r;
			cur = REC_NONE;
			continue;
		}
		r = parse_line(p, s, n, lineno, &cur);
		if (r < 0)
			return r;
	}
	if (cur != REC_NONE && (r = finish_dev(p, &p->devs[cur])) < 0)
		return r;
	if (!p->ndevs)
		return cfs_rec_error(p, lineno, "no device in the record");
	return 0;
}

/** cfs_rec_parse_free() - free what cfs_rec_parse() and the loader allocated */
void cfs_rec_parse_free(struct rec_parse *p)
{
	free(p->lines);
	free(p->devs);
	free(p->hash);
	free(p->own);
	*p = (struct rec_parse){ 0 };
}
