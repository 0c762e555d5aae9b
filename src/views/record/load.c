// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * load.c - building a parsed record in a tree, all or nothing.
 *
 * 1. parse.c checks every line; link.c places each device (its nesting
 *    parent, its physical parent, unrecorded ancestors) and orders them;
 * 2. devices are built parents first (by path depth: linear), uevents
 *    suppressed, with their values (their classes and buses: subsys.c);
 *    then every link (a link may point at a device built after its own).
 *    A `devices` layout tree takes each at its recorded path
 *    (classfs_device_add_at()), the class layout where its rules put it;
 * 3. ADD for each recorded device, parents first.
 * A failure in 2 removes what was built (a device that filled in a plain
 * directory of the tree gives it back); suppressed devices that never
 * sent ADD send no REMOVE, so nobody sees anything.
 *
 * Each device keeps its side data in the same allocation (struct rec_dev):
 * the recorded properties, links, node and `dev` text, attribute names.
 */
#include "record-internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* building                                                            */
/* ------------------------------------------------------------------ */

/* attributes the tree computes itself: their recorded text stays in the blob */
static bool computed_attr(const struct rec_parse *p, const struct rec_line *ln)
{
	return ln->tag == 'A' && ((ln->keylen == 3 && !memcmp(cfs_rec_key(p, ln), "dev", 3)) ||
				  (ln->keylen == 6 && !memcmp(cfs_rec_key(p, ln), "uevent", 6)));
}

static size_t blob_size(const struct rec_parse *p, const struct rec_pdev *d, size_t namelen)
{
	size_t n = 1 + namelen + 1;

	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *ln = &p->lines[d->first + i];

		n += 1 + ln->keylen + 1;
		/* A: and H: values live in the tree; computed ones ('D') stay here */
		if ((ln->tag != 'A' && ln->tag != 'H') || computed_attr(p, ln))
			n += ln->vallen + 1;
	}
	return n;
}

/*
 * One blob entry: @tag, @a (a name from keys.c's table as 0x01 CODE), and
 * when @two, @b.  Names repeat across devices (DEVNAME, SUBSYSTEM, size):
 * two bytes instead of each copy.
 */
static char *put(char *s, char tag, const char *a, size_t alen, bool name, const char *b,
		 size_t blen, bool two)
{
	unsigned int code = name ? cfs_rec_name_code(a, alen) : 0;

	*s++ = tag;
	if (code) {
		*s++ = CFS_REC_CODED;
		*s++ = (char)code;
	} else {
		memcpy(s, a, alen);
		s += alen;
		*s++ = '\0';
	}
	if (two) {
		if (blen)
			memcpy(s, b, blen);
		s += blen;
		*s++ = '\0';
	}
	return s;
}

/*
 * Does the device's `uevent` show this E: key (the hook adds it)?  Those
 * Linux emits for the subsystem, less what the core adds itself: DEVTYPE
 * (the type's name), and a numbered device's MAJOR, MINOR and DEVNAME.
 */
static bool uevent_key(const struct rec_parse *p, const struct rec_pdev *d, const char *subsystem,
		       const struct rec_line *ln)
{
	bool core_devnum = major(d->devt);
	const char *key = cfs_rec_key(p, ln);

	if (ln->keylen == 7 && !memcmp(key, "DEVTYPE", 7))
		return false;
	if (core_devnum && ((ln->keylen == 5 && (!memcmp(key, "MAJOR", 5) ||
						  !memcmp(key, "MINOR", 5))) ||
			    (ln->keylen == 7 && !memcmp(key, "DEVNAME", 7))))
		return false;
	return cfs_rec_uevent_key(subsystem, key, ln->keylen);
}

/* @p, *@cap elements of @size bytes, made to hold @n; NULL (@p kept): no memory */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap && p)
		return p;
	n = n < 2 * *cap ? 2 * *cap : n;
	p = realloc(p, (n ? n : 1) * size);
	if (p)
		*cap = n;
	return p;
}

/*
 * Would the tree compute an entry of this name in the device's directory
 * (cfs_name_is_virtual())?  Such an attribute is a value node, which the
 * tree refuses as it would refuse it from anyone.
 */
static bool computed_name(const struct rec_pdev *d, dev_t core_devt, const char *s, size_t n)
{
#define NAME_IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
	return NAME_IS("uevent") || (NAME_IS("dev") && major(core_devt)) ||
	       (NAME_IS("subsystem") && d->kind != REC_PLAIN) ||
	       (NAME_IS("device") && d->kind == REC_CLASS && d->phys != REC_NONE);
#undef NAME_IS
}

/*
 * The text attributes of @d for its shape (shape.c), in l->sattrs in
 * shape order: the top-level ones (a "dir/name" attribute is a value
 * node in a plain directory, which takes new files as any directory
 * does: iio-sensor-proxy's test writes buffer/length beside a recorded
 * buffer/enable).  Return: how many; 0 when it has none, or when they do
 * not fit a shape: a name the tree computes, a link or binary attribute
 * sharing a name with them, more than a group's slots.  Those devices'
 * attributes are all value nodes.
 */
static uint32_t shape_attrs(struct rec_load *l, const struct rec_pdev *d, dev_t core_devt)
{
	uint32_t n = 0, nother = 0;
	struct rec_shape_attr *v = grow(l->sattrs, &l->capsattrs, d->nlines, sizeof(*v));

	if (!v)
		return 0;	/* the device's attributes become value nodes, or fail */
	l->sattrs = v;
	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		const char *key = cfs_rec_key(&l->p, ln), *slash;

		if (ln->tag == 'L' || ln->tag == 'H')
			nother++;
		if (ln->tag != 'A' || (computed_attr(&l->p, ln) &&
				       (ln->keylen != 3 || major(core_devt))))
			continue;
		slash = memchr(key, '/', ln->keylen);
		if (computed_name(d, core_devt, key, slash ? (size_t)(slash - key) : ln->keylen))
			return 0;
		if (slash)
			continue;	/* a value node */
		l->sattrs[n++] = (struct rec_shape_attr){
			.name = key,
			.len = ln->keylen,
			.mode = computed_attr(&l->p, ln) ? 0444 : 0644,
			.line = d->first + i,
		};
	}
	if (!n || (nother && (size_t)nother * n > 4096))
		return 0;
	/* a link or binary attribute whose first component is one of theirs */
	for (uint32_t i = 0; i < d->nlines && nother; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		const char *key = cfs_rec_key(&l->p, ln), *slash;
		size_t clen;

		if (ln->tag != 'L' && ln->tag != 'H')
			continue;
		slash = memchr(key, '/', ln->keylen);
		clen = slash ? (size_t)(slash - key) : ln->keylen;
		for (uint32_t k = 0; k < n; k++) {
			if (l->sattrs[k].len == clen && !memcmp(l->sattrs[k].name, key, clen))
				return 0;
		}
	}
	if (n > REC_SHAPE_ATTRS)
		return 0;
	cfs_rec_shape_sort(l->sattrs, n);
	return n;
}

static struct rec_dev *make_dev(struct rec_load *l, struct rec_pdev *d,
				 const struct classfs_class *cls)
{
	const char *name = d->path + cfs_rec_parent_len(d->path, d->pathlen) + 1;
	size_t namelen = (size_t)(d->path + d->pathlen - name);
	size_t size = blob_size(&l->p, d, namelen), bloblen, valbytes = 0;
	dev_t core_devt = d->devt;
	const struct classfs_device_type *type;
	char subsystem[NAME_MAX + 1];
	struct cfs_bytes *vals;
	struct rec_dev *rd;
	uint32_t nvals;
	char *s;

	/* the blob is made aside, then allocated at its exact size with the device */
	if (!(s = grow(l->blob, &l->blobcap, size, 1)))
		return NULL;
	l->blob = s;
	if (d->subsys) {
		memcpy(subsystem, d->subsys, d->subsyslen);
		subsystem[d->subsyslen] = '\0';
	}
	s = put(l->blob, 'n', name, namelen, false, NULL, 0, false);
	l->evbytes = NAME_MAX + 1;	/* DEVNAME: the node's name, or (below) N: or E: */
	l->evvars = 0;
	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		const char *key = cfs_rec_key(&l->p, ln), *val = cfs_rec_val(&l->p, ln);
		bool in_uevent;

		switch (ln->tag) {
		case 'S':
			s = put(s, 'S', val, ln->vallen, false, NULL, 0, false);
			break;
		case 'A':
			if (computed_attr(&l->p, ln))
				s = put(s, 'D', key, ln->keylen, true, val, ln->vallen, true);
			else
				s = put(s, 'A', key, ln->keylen, true, NULL, 0, false);
			break;
		case 'H':
			s = put(s, 'H', key, ln->keylen, true, NULL, 0, false);
			break;
		case 'E':
			in_uevent = uevent_key(&l->p, d, d->subsys ? subsystem : NULL, ln);
			s = put(s, in_uevent ? 'U' : 'E', key, ln->keylen, true, val, ln->vallen,
				true);
			if (in_uevent || (ln->keylen == 7 && !memcmp(key, "DEVNAME", 7)))
				l->evbytes += ln->keylen + ln->vallen + 2, l->evvars++;
			break;
		case 'L':
			s = put(s, 'L', key, ln->keylen, true, val, ln->vallen, true);
			break;
		default:	/* N: the node's name is its own */
			s = put(s, ln->tag, key, ln->keylen, false, val, ln->vallen, true);
			l->evbytes += ln->keylen + 1;
		}
	}
	bloblen = (size_t)(s - l->blob);

	/* the type: the shape of its text attributes, else one per DEVTYPE */
	/*
	 * A class of someone else's with default groups (a tree the record
	 * joins): its groups come first and may hold the same names, so
	 * value nodes, which the tree checks against them.
	 */
	nvals = cls && cls->dev_groups ? 0 : shape_attrs(l, d, core_devt);
	if (nvals) {
		s = grow(l->sig, &l->capsig, cfs_rec_shape_siglen(d->devtypelen, l->sattrs, nvals),
			 1);
		if (!s)
			return NULL;
		l->sig = s;
		type = cfs_rec_shape_get(d->devtype, d->devtypelen, l->sattrs, nvals, l->sig);
		for (uint32_t i = 0; i < nvals; i++)
			valbytes += l->p.lines[l->sattrs[i].line].vallen;
	} else {
		type = cfs_rec_intern_type(d->devtype, d->devtypelen);
	}
	if (!type)
		return NULL;

	/* the device, its blob, its values' slots and their bytes: one allocation */
	size = offsetof(struct rec_dev, blob) + bloblen + _Alignof(struct cfs_bytes) +
	       nvals * sizeof(struct cfs_bytes) + valbytes;
	rd = classfs_zalloc(size > sizeof(*rd) ? size : sizeof(*rd));
	if (!rd) {
		if (nvals)
			cfs_rec_shape_put(type);
		return NULL;
	}
	rd->bloblen = (uint32_t)bloblen;
	memcpy(rd->blob, l->blob, bloblen);
	rd->nvals = (uint16_t)nvals;
	vals = cfs_rec_vals(rd);
	s = (char *)(vals + nvals);
	for (uint32_t i = 0; i < nvals; i++) {
		const struct rec_line *ln = &l->p.lines[l->sattrs[i].line];
		const char *why;
		size_t n;

		/* checked by the parser: it cannot fail, and fits CLASSFS_ATTR_MAX */
		cfs_rec_unescape(cfs_rec_val(&l->p, ln), ln->vallen, l->scratch, &n, &why);
		cfs_bytes_init(&vals[i], s, l->scratch, n);
		s += n;
	}
	rd->devt = d->devt;
	if (d->placeholder)
		rd->flags |= REC_F_PLACEHOLDER;
	if (d->kind == REC_CLASS && d->subsyslen == 5 && !memcmp(d->subsys, "block", 5))
		rd->flags |= REC_F_BLOCK;
	classfs_device_initialize(&rd->dev);
	rd->dev.type = type;
	rd->dev.release = cfs_rec_release;
	return rd;
}

/* add the attribute values of a built device */
static int add_values(struct rec_load *l, struct rec_pdev *d, struct rec_dev *rd)
{
	char name[PATH_MAX + 1];
	int r;

	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		size_t n;

		/* top-level text attributes are the shape's, when the device has one */
		if ((ln->tag != 'A' && ln->tag != 'H') ||
		    (ln->tag == 'A' && rd->nvals &&
		     !memchr(cfs_rec_key(&l->p, ln), '/', ln->keylen)))
			continue;
		/*
		 * Computed attributes stay as recorded in the blob; a `dev`
		 * without a device number (not MAJOR:MINOR) is a read-only value.
		 */
		if (computed_attr(&l->p, ln) && (ln->keylen != 3 || major(rd->dev.devt)))
			continue;
		memcpy(name, cfs_rec_key(&l->p, ln), ln->keylen);
		name[ln->keylen] = '\0';
		if (ln->tag == 'A') {
			const char *why;

			cfs_rec_unescape(cfs_rec_val(&l->p, ln), ln->vallen, l->scratch, &n, &why);
			r = classfs_device_add_value(&rd->dev, name, computed_attr(&l->p, ln) ? 0444 : 0644,
						     l->scratch, n, 0);
		} else {
			unsigned char *bin = malloc(ln->vallen / 2 + 1);

			if (!bin)
				return -ENOMEM;
			cfs_rec_unhex(cfs_rec_val(&l->p, ln), ln->vallen, bin);
			r = classfs_device_add_value(&rd->dev, name, 0644, bin, ln->vallen / 2,
						     CLASSFS_VALUE_BINARY);
			free(bin);
		}
		if (r < 0) {
			cfs_rec_error(&l->p, cfs_rec_lineno(&l->p, d, ln), "attribute '%s' of %.*s: %s", name,
				      (int)d->pathlen, d->path, strerror(-r));
			return r;
		}
	}
	return 0;
}

/**
 * cfs_rec_resolve_link() - resolve a recorded relative link text to a
 * device path, in l->scratch.  Return: its length, 0 when it leaves /.
 */
size_t cfs_rec_resolve_link(struct rec_load *l, const struct rec_pdev *d, const struct rec_line *ln)
{
	char *buf = l->scratch;
	size_t n = d->pathlen, cap = sizeof(l->scratch) - 1;
	const char *key = cfs_rec_key(&l->p, ln), *t = cfs_rec_val(&l->p, ln);
	const char *end = t + ln->vallen, *dirend = key + ln->keylen;

	if (*t == '/' || n + ln->keylen + 1 > cap)
		return 0;
	memcpy(buf, d->path, n);
	/* the link's own directory: the device's, or a subdirectory of it */
	while (dirend > key && dirend[-1] != '/')
		dirend--;
	if (dirend > key) {
		buf[n++] = '/';
		memcpy(buf + n, key, (size_t)(dirend - key - 1));
		n += (size_t)(dirend - key - 1);
	}
	while (t < end) {
		const char *c = memchr(t, '/', (size_t)(end - t));
		size_t clen;

		if (!c)
			c = end;
		clen = (size_t)(c - t);
		if (clen == 2 && t[0] == '.' && t[1] == '.') {
			if (!n)
				return 0;
			n = cfs_rec_parent_len(buf, n);
		} else if (clen && !(clen == 1 && t[0] == '.')) {
			if (n + 1 + clen > cap)
				return 0;
			buf[n++] = '/';
			memcpy(buf + n, t, clen);
			n += clen;
		}
		t = c + (c < end);
	}
	return n;
}

static int add_links(struct rec_load *l, struct rec_pdev *d, struct rec_dev *rd)
{
	char name[PATH_MAX + 1], *text = NULL;
	int r = 0;

	for (uint32_t i = 0; i < d->nlines && !r; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		uint32_t target = REC_NONE;
		size_t n;

		if (ln->tag != 'L')
			continue;
		memcpy(name, cfs_rec_key(&l->p, ln), ln->keylen);
		name[ln->keylen] = '\0';
		/* the tree makes these itself */
		if ((!strcmp(name, "subsystem") && d->kind != REC_PLAIN) ||
		    (!strcmp(name, "device") && rd->dev.phys))
			continue;
		n = cfs_rec_resolve_link(l, d, ln);
		/* the tree's devices it may name joined the index in cfs_rec_link_all() */
		if (n)
			target = cfs_rec_lookup(&l->p, l->scratch, n);
		if (target != REC_NONE && l->p.devs[target].dev) {
			r = classfs_device_add_link_to(&rd->dev, name, l->p.devs[target].dev);
		} else {
			text = strndup(cfs_rec_val(&l->p, ln), ln->vallen);
			if (!text)
				return -ENOMEM;
			r = classfs_device_add_link(&rd->dev, name, text);
			free(text);
			if (!r && strcmp(name, "driver"))
				cfs_rec_warn(l, cfs_rec_lineno(&l->p, d, ln),
					     "link %s of %.*s: target not in the tree, kept as recorded",
					     name, (int)d->pathlen, d->path);
		}
		if (r < 0)
			cfs_rec_error(&l->p, cfs_rec_lineno(&l->p, d, ln), "link '%s' of %.*s: %s", name,
				      (int)d->pathlen, d->path, strerror(-r));
	}
	return r;
}

static bool moved(const struct rec_load *l, uint32_t idx)
{
	return idx != REC_NONE && (l->p.devs[idx].moved || l->p.devs[idx].existing);
}

/*
 * Will the device's ADD fit the uevent limits?  Asked of every device
 * before the first ADD is sent (all or none), while it is in the cache.
 * The answer is certain without running the hooks when they are the
 * loader's own and the device is where it was recorded: the most its
 * variables can take (l->evbytes, from make_dev()), the core's (MAJOR,
 * MINOR, DEVTYPE, ACTION, SUBSYSTEM, SEQNUM) and a DEVPATH at most the
 * recorded path with "/class/CLASS" are then well inside the limits for
 * any real record.  Else the core is asked (classfs_device_uevent_check()).
 */
static int check_event(struct rec_load *l, struct rec_pdev *d, struct rec_dev *rd)
{
	size_t most;

	most = l->evbytes + 2 * (sizeof("MAJOR=4294967295")) +
	       sizeof("DEVTYPE=") + (rd->dev.type->name ? strlen(rd->dev.type->name) : 0) +
	       sizeof("ACTION=remove") + sizeof("DEVPATH=/class//") + d->subsyslen + d->pathlen +
	       sizeof("SUBSYSTEM=") + d->subsyslen + sizeof("SEQNUM=18446744073709551615");
	if (!d->moved && cfs_rec_own_hooks(&rd->dev) && most <= CLASSFS_UEVENT_BUFFER &&
	    l->evvars + 9 <= CLASSFS_UEVENT_NUM_ENVP)
		return 0;
	return classfs_device_uevent_check(&rd->dev, CLASSFS_ACTION_ADD, NULL);
}

/*
 * A device placed elsewhere than recorded (a glue directory added on its
 * way) is saved at its new path: that path, too, must be one a record may
 * hold (at most REC_MAX_DEPTH components), or a save would not load.
 */
static int check_depth(struct rec_load *l, const struct rec_pdev *d)
{
	uint32_t n = 0;
	int r = classfs_device_syspath(d->dev, l->scratch, sizeof(l->scratch));

	if (r < 0)
		return cfs_rec_error(&l->p, d->lineno, "device %.*s: no path in this tree (%s)",
				     (int)d->pathlen, d->path, strerror(-r));
	for (const char *c = l->scratch + 1; *c; c++)
		n += *c == '/';
	if (n + 1 > REC_MAX_DEPTH)
		return cfs_rec_error(&l->p, d->lineno, "placed in this tree the device's path "
				     "would have %u components, more than %d: %s", n + 1,
				     REC_MAX_DEPTH, l->scratch);
	return 0;
}

/* a `devices` layout tree: the device at its recorded path (classfs_device_add_at()) */
static int add_exact(struct rec_load *l, const struct rec_pdev *d, struct rec_dev *rd)
{
	size_t plen = cfs_rec_parent_len(d->path, d->pathlen);
	char dir[PATH_MAX];

	if (plen >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, d->path, plen);
	dir[plen] = '\0';
	return classfs_device_add_at(l->tree, &rd->dev, dir);
}

static int build_one(struct rec_load *l, uint32_t idx)
{
	struct rec_pdev *d = &l->p.devs[idx];
	struct rec_subsys *s = NULL;
	struct rec_dev *rd;
	int r;

	errno = ENOMEM;
	if (d->kind != REC_PLAIN && !(s = cfs_rec_subsys_get(l, d))) {
		r = -errno;
		cfs_rec_error(&l->p, d->lineno, "subsystem '%.*s': %s", (int)d->subsyslen,
			      d->subsys, strerror(-r));
		return r;
	}
	rd = make_dev(l, d, s ? s->cls : NULL);
	if (!rd)
		return -ENOMEM;
	/* any device may have a number: a USB device's node is /dev/bus/usb/... */
	rd->dev.devt = d->devt;
	if (d->kind == REC_CLASS) {
		rd->dev.cls = s->cls;
		if (d->parent != REC_NONE)
			rd->dev.parent = l->p.devs[d->parent].dev;
		if (d->phys != REC_NONE)
			rd->dev.phys = l->p.devs[d->phys].dev;
	} else {
		rd->dev.bus = s ? s->bus : NULL;
		if (d->parent != REC_NONE)
			rd->dev.parent = l->p.devs[d->parent].dev;
	}
	r = classfs_device_set_name_static(&rd->dev, rd->blob + 1);
	if (r < 0) {
		/* the message first: the last put frees the name with the device */
		r = cfs_rec_error(&l->p, d->lineno, "invalid device name '%s'", rd->blob + 1);
		classfs_device_put(&rd->dev);
		return r;
	}
	classfs_device_set_uevent_suppress(&rd->dev, true);
	if (l->p.exact)
		r = add_exact(l, d, rd);
	else if (d->vroot)
		r = classfs_device_add_virtual(l->tree, &rd->dev);
	else if (!rd->dev.cls && !rd->dev.bus && !rd->dev.parent)
		r = classfs_device_add_to(l->tree, &rd->dev);
	else
		r = classfs_device_add(&rd->dev);
	if (r < 0) {
		classfs_device_put(&rd->dev);
		cfs_rec_error(&l->p, d->lineno, "device %.*s: %s", (int)d->pathlen, d->path,
			      strerror(-r));
		return r;
	}
	d->built = rd;
	d->dev = &rd->dev;
	d->moved = d->misplaced || moved(l, d->up) || moved(l, d->parent) || moved(l, d->phys);
	if (d->moved && !d->placeholder && (r = check_depth(l, d)) < 0)
		return r;
	r = d->placeholder ? 0 : check_event(l, d, rd);
	if (r == -E2BIG)
		return cfs_rec_error(&l->p, d->lineno, "the ADD event of %.*s would exceed the "
				     "uevent limits (64 variables, 2048 bytes)",
				     (int)d->pathlen, d->path);
	if (r < 0)
		return r;	/* a hook's veto (> 0) leaves the device unannounced */
	return add_values(l, d, rd);
}

/*
 * Undo a device that filled in a plain directory of the tree: the entries
 * this load added to it go (a value's directories too, when empty: also
 * one that was there before, empty), then the device, leaving what the
 * directory held as it was (classfs_device_del_keep()).  Out of memory
 * for that, it goes with what it holds.
 */
static void unfill(struct rec_load *l, struct rec_pdev *d)
{
	struct classfs_device *dev = &d->built->dev;
	char name[PATH_MAX + 1];

	for (uint32_t i = 0; i < d->nlines; i++) {
		const struct rec_line *ln = &l->p.lines[d->first + i];
		char *slash;

		if ((ln->tag != 'A' && ln->tag != 'H' && ln->tag != 'L') || ln->keylen > PATH_MAX)
			continue;
		memcpy(name, cfs_rec_key(&l->p, ln), ln->keylen);
		name[ln->keylen] = '\0';
		classfs_device_remove_entry(dev, name);
		while ((slash = strrchr(name, '/'))) {
			*slash = '\0';
			classfs_device_remove_entry(dev, name);	/* -ENOTEMPTY: it stays */
		}
	}
	if (classfs_device_del_keep(dev) == 0)
		classfs_device_put(dev);
	else
		classfs_device_unregister(dev);
}

/* undo a failed load: built devices deepest first, then made subsystems */
static void unbuild(struct rec_load *l)
{
	for (size_t k = l->p.ndevs; k-- > 0;) {
		struct rec_pdev *d = &l->p.devs[l->order[k]];

		if (d->built && classfs_device_is_added(&d->built->dev) && d->fills)
			unfill(l, d);
		else if (d->built && classfs_device_is_added(&d->built->dev))
			classfs_device_unregister(&d->built->dev);
		d->built = NULL;
		d->dev = NULL;
	}
	cfs_rec_subsys_unmake(l);
}

static void progress(struct rec_load *l, size_t done)
{
	if (l->opt && l->opt->progress)
		l->opt->progress(done, l->p.ndevs, l->opt->progress_data);
}

/**
 * classfs_record_load() - build the devices of an umockdev record in @tree
 * (see <classfs/record.h>): parse and check, build quietly, announce.
 * Return: 0, -EINVAL (malformed: @err says where), -EEXIST, -ENOMEM, ...
 */
int classfs_record_load(struct classfs_tree *tree, const char *data, size_t len,
			const struct classfs_record_options *opt, struct classfs_record_error *err)
{
	bool deferred = false;
	struct rec_load *l;
	int r;

	if (err)
		*err = (struct classfs_record_error){ .line = 0 };
	if (!tree || (!data && len))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->tree = tree;
	l->opt = opt;
	l->p.err = err;
	l->p.file = opt && opt->filename ? opt->filename : "<record>";
	l->p.exact = classfs_tree_layout(tree) == CLASSFS_LAYOUT_DEVICES;

	r = cfs_rec_parse(&l->p, data, len);
	if (r < 0)
		goto out;
	r = cfs_rec_link_all(l);
	if (r < 0)
		goto out;

	/* quiet devices: the mounts catch up as they go, the load waits for them once */
	classfs_sync_defer();
	deferred = true;
	for (size_t k = 0; k < l->p.ndevs; k++) {
		if (l->p.devs[l->order[k]].existing)
			continue;
		r = build_one(l, l->order[k]);
		if (r < 0)
			goto fail;
		if ((k & 4095) == 4095)
			progress(l, k + 1);
	}
	for (size_t k = 0; k < l->p.ndevs; k++) {
		struct rec_pdev *d = &l->p.devs[l->order[k]];

		if (d->existing)
			continue;
		r = add_links(l, d, d->built);
		if (r < 0)
			goto fail;
	}
	progress(l, l->p.ndevs);
	/* before any ADD: a listener may look at the new devices through a mount */
	classfs_sync_resume(tree);
	deferred = false;

	/* everything exists: announce, parents first */
	for (size_t k = 0; k < l->p.ndevs; k++) {
		struct rec_pdev *d = &l->p.devs[l->order[k]];

		if (d->misplaced && !d->placeholder) {
			char path[PATH_MAX];

			if (classfs_device_syspath(&d->built->dev, path, sizeof(path)) >= 0)
				cfs_rec_warn(l, d->lineno, "device %.*s is at %s in this tree",
				     (int)d->pathlen, d->path, path);
		}
		if (d->placeholder || d->existing)
			continue;
		classfs_device_set_uevent_suppress(&d->built->dev, false);
		r = classfs_device_uevent(&d->built->dev, CLASSFS_ACTION_ADD, NULL);
		/*
		 * Out of memory for an event: undone rather than left unheard
		 * (the devices announced so far send their REMOVE).  A hook's
		 * veto leaves the device without an event, as Linux does.
		 */
		if (r == -ENOMEM)
			goto fail;
	}
	r = 0;
	goto out;

fail:
	unbuild(l);
out:
	if (deferred)
		classfs_sync_resume(tree);
	cfs_rec_subsys_release(l);
	for (size_t i = 0; i < l->p.ndevs; i++)
		if (l->p.devs[i].existing)
			free((char *)l->p.devs[i].path);
	cfs_rec_devlist_free(&l->existing);
	free(l->order);
	free(l->blob);
	free(l->sattrs);
	free(l->sig);
	cfs_rec_parse_free(&l->p);
	free(l);
	return r;
}

