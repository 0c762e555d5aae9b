/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * module.c - classfs._classfs: the C half of the Python package.  Thin
 * wrappers over <classfs/client.h> and <classfs/run.h>; the Python half
 * (python/classfs/) gives them the shape of a testbed.
 */
#include "_classfs.h"

#include <classfs/classfs.h>
#include <classfs/client.h>
#include <classfs/record.h>
#include <classfs/run.h>

PyObject *cfs_py_error(int neg_errno, const char *what, const char *message)
{
	int e = neg_errno < 0 ? -neg_errno : neg_errno;
	char text[1024];
	PyObject *args;

	/* a message that names its object already needs no prefix */
	if (what && message && strstr(message, what))
		what = NULL;
	snprintf(text, sizeof(text), "%s%s%s", what ? what : "", what ? ": " : "",
		 message && *message ? message : strerror(e));
	/* a message may quote a name's bytes that are not UTF-8: shown as \\xNN */
	args = Py_BuildValue("(iN)", e, PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text),
							 "backslashreplace"));
	if (args) {
		/* OSError's constructor picks the subclass (FileNotFoundError, ...) */
		PyErr_SetObject(PyExc_OSError, args);
		Py_DECREF(args);
	}
	return NULL;
}

/* is_bus(subsystem): is it one of Linux's bus types, as the record loader decides? */
static PyObject *py_is_bus(PyObject *self, PyObject *args)
{
	const char *name;

	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	return PyBool_FromLong(classfs_record_subsystem_is_bus(name));
}

static PyMethodDef module_methods[] = {
	{ "is_bus", py_is_bus, METH_VARARGS,
	  "is_bus(subsystem) -> whether a record's device of that subsystem is a bus "
	  "(physical) device rather than a class device" },
	{ "enter", cfs_py_enter, METH_VARARGS,
	  "enter(run) -> saved: this process into the environment of a Run "
	  "(classfs_run_enter()); saved is for leave()" },
	{ "leave", cfs_py_leave, METH_VARARGS,
	  "leave(saved) -> bool: back to the namespaces and root enter() left; False "
	  "(nothing changed) when enter() joined a user namespace: there is no way back" },
	{ "own_namespaces", cfs_py_own_namespaces, METH_VARARGS,
	  "own_namespaces(net=True) -> bool: this process the owner of a user namespace (its uid "
	  "and gid mapped to themselves) with a mount and (net) a network namespace, where "
	  "environments are made and leave() comes back to; False when it is already" },
	{ "userns_allowed", cfs_py_userns_allowed, METH_NOARGS,
	  "userns_allowed() -> bool: whether this process may make a user namespace" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "classfs._classfs",
	.m_doc = "libclassfs's client and private environments (use the classfs package)",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__classfs(void);

PyMODINIT_FUNC PyInit__classfs(void)
{
	PyObject *m;

	if (PyType_Ready(&cfs_py_client_type) < 0 || PyType_Ready(&cfs_py_run_type) < 0 ||
	    PyType_Ready(&cfs_py_sync_type) < 0 || PyType_Ready(&cfs_py_call_type) < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddObjectRef(m, "Client", (PyObject *)&cfs_py_client_type) < 0 ||
	    PyModule_AddObjectRef(m, "Run", (PyObject *)&cfs_py_run_type) < 0 ||
	    PyModule_AddObjectRef(m, "Sync", (PyObject *)&cfs_py_sync_type) < 0 ||
	    PyModule_AddIntConstant(m, "LAYOUT_CLASS", CLASSFS_LAYOUT_CLASS) < 0 ||
	    PyModule_AddIntConstant(m, "LAYOUT_DEVICES", CLASSFS_LAYOUT_DEVICES) < 0 ||
	    PyModule_AddIntConstant(m, "ADD_BINARY", CLASSFS_CLIENT_ADD_BINARY) < 0 ||
	    PyModule_AddIntConstant(m, "ADD_LINK", CLASSFS_CLIENT_ADD_LINK) < 0 ||
	    PyModule_AddIntConstant(m, "RECORDING_IOCTL", CLASSFS_RECORDING_IOCTL) < 0 ||
	    PyModule_AddIntConstant(m, "RECORDING_SCRIPT", CLASSFS_RECORDING_SCRIPT) < 0 ||
	    PyModule_AddIntConstant(m, "RECORDING_EVEMU", CLASSFS_RECORDING_EVEMU) < 0 ||
	    PyModule_AddIntConstant(m, "RECORDING_PCAP", CLASSFS_RECORDING_PCAP) < 0 ||
	    PyModule_AddIntConstant(m, "RECORDING_UNIX_STREAM", CLASSFS_RECORDING_UNIX_STREAM) < 0 ||
	    PyModule_AddIntConstant(m, "IOCTL_PASS", CLASSFS_IOCTL_PASS) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
