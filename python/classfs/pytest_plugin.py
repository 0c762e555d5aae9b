# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures for classfs: a fresh testbed for each test.

In a conftest.py:

    pytest_plugins = ["classfs.pytest_plugin"]

then a test takes `testbed` (a classfs.Testbed) or `umockdev_testbed`
(the same through classfs.umockdev's names).  Where no testbed can be
made (not root and no unprivileged environments here), the test is
skipped with the reason.
"""

import pytest

from .testbed import Testbed


def _make(factory):
    try:
        return factory()
    except PermissionError as e:
        pytest.skip(f"no classfs environment for this user: {e}")


@pytest.fixture
def testbed():
    """A classfs.Testbed of its own for the test, closed after it."""
    tb = _make(Testbed)
    try:
        yield tb
    finally:
        tb.close()


@pytest.fixture
def umockdev_testbed():
    """A classfs.umockdev.Testbed of its own for the test, closed after it."""
    from . import umockdev
    tb = _make(umockdev.Testbed.new)
    try:
        yield tb
    finally:
        tb.close()
