/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * list.h - an intrusive doubly linked list, circular through its head (as
 * the kernel's list_head): a node is a struct cfs_list in its object, the
 * object found back with cfs_list_entry().  Adding and removing take
 * constant time and need no "first"/"last" special cases; the list's
 * lock, if any, is its user's.
 */
#ifndef CLASSFS_UTIL_LIST_H
#define CLASSFS_UTIL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct cfs_list {
	struct cfs_list *prev, *next;
};

/* a head initialized where it is defined: static struct cfs_list l = CFS_LIST_INIT(l); */
#define CFS_LIST_INIT(head) { &(head), &(head) }

/* the object of type @type whose member @member is the node @node */
#define cfs_list_entry(node, type, member) \
	((type *)((char *)(node) - offsetof(type, member)))

/* each node of @head, front to back; @pos may be removed, @tmp keeps the next */
#define cfs_list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

static inline void cfs_list_init(struct cfs_list *head)
{
	head->prev = head->next = head;
}

static inline bool cfs_list_empty(const struct cfs_list *head)
{
	return head->next == head;
}

static inline void cfs_list_link(struct cfs_list *node, struct cfs_list *prev,
				 struct cfs_list *next)
{
	node->prev = prev;
	node->next = next;
	prev->next = node;
	next->prev = node;
}

/* @node at the front of @head */
static inline void cfs_list_add(struct cfs_list *node, struct cfs_list *head)
{
	cfs_list_link(node, head, head->next);
}

/* @node at the back of @head */
static inline void cfs_list_add_tail(struct cfs_list *node, struct cfs_list *head)
{
	cfs_list_link(node, head->prev, head);
}

/* @node out of its list; it is then an empty list of its own */
static inline void cfs_list_del(struct cfs_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	cfs_list_init(node);
}

#endif
