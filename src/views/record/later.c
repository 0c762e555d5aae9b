// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * later.c - a save's reads of attribute values that are answered later.
 *
 * A device attribute's show() may take its read's offer (classfs_defer()):
 * classfsd's remote attributes do, sending the read to their publisher and
 * answering when it replies or when the daemon's call timeout ends the
 * call.  A save offers every read it makes, so all such reads are out
 * before it waits for any of them: a record of N attributes whose
 * publishers never answer waits one call timeout, not N.  Each answer is
 * kept with what the save needs to write its line; an answer that is an
 * error leaves the line out, as a read that fails at once does.
 *
 * The answers come from other threads (the daemon's event loop or its
 * timer), each exactly once (struct classfs_reply); the set's lock guards
 * what they fill in.
 */
#include <pthread.h>
#include <stdlib.h>

#include "record-internal.h"

struct rec_later {
	struct classfs_reply reply;	/* first: what the show() completes */
	struct rec_later_set *set;
	struct rec_later *next;		/* in set->list */
	void *owner;			/* whose line it is (the caller's) */
	char tag;			/* its line's tag */
	bool done;
	ssize_t result;			/* the value's length or -errno */
	char page[CLASSFS_ATTR_MAX];
	char name[];
};

/* what the save offers each read: the line the answer is to make */
struct later_offer {
	struct classfs_reply_offer offer;	/* first */
	struct rec_later_set *set;
	void *owner;
	char tag;
	const char *name;
};

/**
 * cfs_rec_later_init() - an empty set of answers to come
 */
void cfs_rec_later_init(struct rec_later_set *set)
{
	*set = (struct rec_later_set){ 0 };
	pthread_mutex_init(&set->lock, NULL);
	pthread_cond_init(&set->cond, NULL);
}

/* the answer of @reply's read, from whichever thread ends it */
static void later_done(struct classfs_reply *reply, ssize_t result, const char *page)
{
	struct rec_later *l = (struct rec_later *)reply;
	struct rec_later_set *set = l->set;

	if (result > CLASSFS_ATTR_MAX)
		result = CLASSFS_ATTR_MAX;
	pthread_mutex_lock(&set->lock);
	if (result > 0 && page)
		memcpy(l->page, page, (size_t)result);
	l->result = result > 0 && !page ? -EIO : result;
	l->done = true;
	set->pending--;
	pthread_cond_broadcast(&set->cond);
	pthread_mutex_unlock(&set->lock);
}

/* the show() answers later: a place for its answer, in the set */
static struct classfs_reply *later_take(struct classfs_reply_offer *offer)
{
	struct later_offer *o = (struct later_offer *)offer;
	size_t nl = strlen(o->name);
	struct rec_later *l = malloc(sizeof(*l) + nl + 1);

	if (!l)
		return NULL;	/* the show() answers now */
	*l = (struct rec_later){ .reply.done = later_done, .set = o->set, .owner = o->owner,
				 .tag = o->tag };
	memcpy(l->name, o->name, nl + 1);
	pthread_mutex_lock(&o->set->lock);
	l->next = o->set->list;
	o->set->list = l;
	o->set->pending++;
	pthread_mutex_unlock(&o->set->lock);
	return &l->reply;
}

/**
 * cfs_rec_read_value() - the whole value of the file @st, now or later
 * @tree: the tree.
 * @st: a regular file of it.
 * @buf: receives the value, malloc()ed (the caller frees it), when read now.
 * @set: where an answer that comes later goes, with @owner, @tag and
 *       @name: the line it makes (cfs_rec_later_each()).
 *
 * Return: the value's length; -CLASSFS_DEFERRED: it comes later; -errno.
 */
ssize_t cfs_rec_read_value(struct classfs_tree *tree, const struct classfs_stat *st, char **buf,
			   struct rec_later_set *set, void *owner, char tag, const char *name)
{
	size_t size = st->size > CLASSFS_ATTR_MAX ? (size_t)st->size : CLASSFS_ATTR_MAX;
	struct later_offer o = { .offer.take = later_take, .set = set, .owner = owner, .tag = tag,
				 .name = name };
	ssize_t n;

	*buf = malloc(size + 1);
	if (!*buf)
		return -ENOMEM;
	n = classfs_read_offer(tree, st->ino, *buf, size, 0, set ? &o.offer : NULL);
	if (n < 0) {
		free(*buf);
		*buf = NULL;
	}
	return n;
}

/**
 * cfs_rec_later_each() - wait for every answer of @set, then call @fn
 * with each value that came (an error leaves its line out), newest first
 */
void cfs_rec_later_each(struct rec_later_set *set,
			void (*fn)(void *owner, char tag, const char *name, const char *value,
				   size_t len, void *data),
			void *data)
{
	pthread_mutex_lock(&set->lock);
	while (set->pending)
		pthread_cond_wait(&set->cond, &set->lock);
	pthread_mutex_unlock(&set->lock);
	for (struct rec_later *l = set->list; l; l = l->next)
		if (l->result >= 0)
			fn(l->owner, l->tag, l->name, l->page, (size_t)l->result, data);
}

/**
 * cfs_rec_later_free() - wait for the answers still to come (they write
 * into the set), then free it
 */
void cfs_rec_later_free(struct rec_later_set *set)
{
	pthread_mutex_lock(&set->lock);
	while (set->pending)
		pthread_cond_wait(&set->cond, &set->lock);
	pthread_mutex_unlock(&set->lock);
	while (set->list) {
		struct rec_later *l = set->list;

		set->list = l->next;
		free(l);
	}
	pthread_cond_destroy(&set->cond);
	pthread_mutex_destroy(&set->lock);
}
