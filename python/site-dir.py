# SPDX-License-Identifier: LGPL-2.1-or-later
"""site-dir.py PREFIX - where under PREFIX the classfs package goes: the
directory of PREFIX that this python3 searches for packages.  Debian's
/usr/bin/python3 searches PREFIX/lib/python3/dist-packages for /usr (its
packages'), PREFIX/lib/python3.X/dist-packages for /usr/local (what a
user installs); meson's own choice (lib/python3/dist-packages under any
prefix) is searched for /usr only.  A prefix this python3 searches no
directory of gets CPython's own layout, lib/python3.X/site-packages, for
PYTHONPATH to name."""
import os
import site
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
for d in site.getsitepackages():
    rel = os.path.relpath(d, prefix)
    # directly under PREFIX/lib: for /usr, not /usr/local's
    if rel.split(os.sep)[0] == "lib":
        print(d)
        break
else:
    print(sysconfig.get_path("platlib", "posix_prefix",
                             vars={"base": prefix, "platbase": prefix}))
