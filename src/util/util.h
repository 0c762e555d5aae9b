/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.h - small helpers more than one layer needs (src/util): numbers
 * and names as the kernel and udev write them, the udev database's tag
 * lines, a user namespace's id maps, JSON members, and where the
 * installed data is; list.h beside it has an intrusive list.  The ground
 * layer: nothing here knows a tree, holds state (a variable, a lock) or
 * calls the library (its allocator included) - what does belongs to the
 * core or a view.  It is linked into libclassfs.so and, for the few
 * functions each calls, into classfsd, classctl and the Python extension:
 * stateless copies, deliberately (test util-ground checks it).
 */
#ifndef CLASSFS_UTIL_H
#define CLASSFS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* text.c */
bool cfs_parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out);
bool cfs_dev_rel_name(const char *devname, char *buf, size_t size);
void cfs_put_tags(FILE *f, char tag, const char *tags);
bool cfs_utf8_valid(const char *s, size_t len);
int cfs_hex_digit(char c);
size_t cfs_log_line(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap);

/* idmap.c */
int cfs_write_text_file(const char *path, const char *text);
int cfs_idmap_write(uid_t inner_uid, uid_t uid, gid_t inner_gid, gid_t gid);

/* paths.c */
const char *cfs_sample_path(void);

/* signals.c */
int cfs_signals_to_forward(void);
void cfs_forward_signals(pid_t child, int sfd);
int cfs_supervise_child(pid_t child, int sfd, int *sig);
_Noreturn void cfs_die_of(int sig);

/* json.c */
struct json_object;
int cfs_json_add(struct json_object *o, const char *key, struct json_object *v);

#endif
