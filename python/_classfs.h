/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * _classfs.h - the pieces of the classfs._classfs extension module: the
 * client of a classfsd (client.c), the private environment (env.c) and
 * this process in and out of it (ns.c).
 */
#ifndef CLASSFS_PY_H
#define CLASSFS_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* client.c */
extern PyTypeObject cfs_py_client_type;

/* env.c */
struct classfs_run;
extern PyTypeObject cfs_py_run_type;
extern PyTypeObject cfs_py_sync_type;
/* the environment of a Run; NULL (ValueError raised) when it is stopped */
struct classfs_run *cfs_py_run_of(PyObject *run);

/* nodes.c: Run's device node methods */
extern PyTypeObject cfs_py_call_type;
PyObject *cfs_py_run_load(PyObject *self, PyObject *args);
PyObject *cfs_py_run_load_data(PyObject *self, PyObject *args);
PyObject *cfs_py_run_wait_script(PyObject *self, PyObject *args);
PyObject *cfs_py_run_dev_fd(PyObject *self, PyObject *args);
PyObject *cfs_py_run_attach_ioctl(PyObject *self, PyObject *args);
PyObject *cfs_py_run_detach_ioctl(PyObject *self, PyObject *args);

/* ns.c */
PyObject *cfs_py_enter(PyObject *self, PyObject *args);
PyObject *cfs_py_leave(PyObject *self, PyObject *args);
PyObject *cfs_py_own_namespaces(PyObject *self, PyObject *unused);
PyObject *cfs_py_userns_allowed(PyObject *self, PyObject *unused);

/* module.c: raise OSError(errno, "what: message") for a -errno; Return: NULL */
PyObject *cfs_py_error(int neg_errno, const char *what, const char *message);

#endif
