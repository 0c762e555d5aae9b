// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * subsys.c - the classes and buses of one load: found in the tree or made
 * (then remembered per tree, side.c, so that unloading removes them),
 * referenced for the load, and unmade again when the load fails.
 */
#include "record-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/**
 * cfs_rec_subsys_get() - the class or bus of recorded device @d: found in
 * the tree, or made (and remembered per tree, side.c).
 * Return: it, or NULL with errno set (ENOMEM, or the registration's error).
 */
struct rec_subsys *cfs_rec_subsys_get(struct rec_load *l, const struct rec_pdev *d)
{
	struct rec_subsys *s;
	char name[NAME_MAX + 1];
	int r;

	for (size_t i = l->nsubs; i-- > 0;)
		if (l->subs[i].len == d->subsyslen && l->subs[i].kind == d->kind &&
		    !memcmp(l->subs[i].name, d->subsys, d->subsyslen))
			return &l->subs[i];
	if (l->nsubs == l->capsubs) {
		size_t cap = l->capsubs ? l->capsubs * 2 : 8;
		struct rec_subsys *v = realloc(l->subs, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->subs = v;
		l->capsubs = cap;
	}
	memcpy(name, d->subsys, d->subsyslen);
	name[d->subsyslen] = '\0';
	s = &l->subs[l->nsubs];
	*s = (struct rec_subsys){ .name = d->subsys, .len = d->subsyslen, .kind = d->kind };
	if (d->kind == REC_CLASS) {
		s->cls = classfs_class_find(l->tree, name);
		if (!s->cls) {
			struct rec_class *c = calloc(1, sizeof(*c) + d->subsyslen + 1);

			if (!c)
				return NULL;
			memcpy(c->name, name, d->subsyslen + 1);
			c->cls.name = c->name;
			c->cls.devnode = cfs_rec_devnode;
			c->cls.class_release = cfs_rec_class_release;
			r = classfs_class_register(l->tree, &c->cls);
			if (r < 0) {
				free(c);
				errno = -r;
				return NULL;
			}
			if (cfs_rec_remember(l->tree, c, NULL) < 0) {
				classfs_class_unregister(&c->cls);
				return NULL;
			}
			/* our reference: dropped at the end of the load */
			s->cls = classfs_class_get(&c->cls);
			s->made = true;
		}
	} else {
		s->bus = classfs_bus_find(l->tree, name);
		if (!s->bus) {
			struct rec_bus *b = calloc(1, sizeof(*b) + d->subsyslen + 1);

			if (!b)
				return NULL;
			memcpy(b->name, name, d->subsyslen + 1);
			b->bus.name = b->name;
			r = classfs_bus_register(l->tree, &b->bus);
			if (r < 0) {
				free(b);
				errno = -r;
				return NULL;
			}
			if (cfs_rec_remember(l->tree, NULL, b) < 0) {
				classfs_bus_unregister(&b->bus);
				free(b);
				return NULL;
			}
			s->bus = &b->bus;
			s->made = true;
		}
	}
	l->nsubs++;
	return s;
}

/** cfs_rec_subsys_unmake() - a failed load: the classes and buses it made go */
void cfs_rec_subsys_unmake(struct rec_load *l)
{
	for (size_t i = l->nsubs; i-- > 0;) {
		struct rec_subsys *s = &l->subs[i];

		if (!s->made)
			continue;
		if (s->cls) {
			struct classfs_class *cls = s->cls;

			cfs_rec_forget((struct rec_class *)((char *)cls - offsetof(struct rec_class, cls)),
			       NULL);
			classfs_class_unregister(cls);
		} else if (classfs_bus_unregister(s->bus) == 0) {
			struct rec_bus *b = (struct rec_bus *)((char *)s->bus -
							       offsetof(struct rec_bus, bus));

			cfs_rec_forget(NULL, b);
			free(b);
		}
		s->made = false;
	}
}
/** cfs_rec_subsys_release() - the end of a load: its references go, the list too */
void cfs_rec_subsys_release(struct rec_load *l)
{
	for (size_t i = 0; i < l->nsubs; i++)
		classfs_class_put(l->subs[i].cls);
	free(l->subs);
	l->subs = NULL;
	l->nsubs = l->capsubs = 0;
}
