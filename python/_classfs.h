/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * _classfs.h - the pieces of the classfs._classfs extension module: the
 * client of a classfsd (client.c), the private environment and the
 * joining of it by this process (env.c).
 */
#ifndef CLASSFS_PY_H
#define CLASSFS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* client.c */
extern PyTypeObject cfs_py_client_type;

/* env.c */
extern PyTypeObject cfs_py_run_type;
extern PyTypeObject cfs_py_sync_type;
PyObject *cfs_py_enter(PyObject *self, PyObject *args);
PyObject *cfs_py_leave(PyObject *self, PyObject *args);
PyObject *cfs_py_peer_pid(PyObject *self, PyObject *args);

/* module.c: raise OSError(errno, "what: message") for a -errno; Return: NULL */
PyObject *cfs_py_error(int neg_errno, const char *what, const char *message);

#endif
