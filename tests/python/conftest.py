# SPDX-License-Identifier: LGPL-2.1-or-later
# The classfs package's own tests: each takes a fresh testbed from the
# package's pytest plugin (run-pytest.sh puts the build tree's package on
# sys.path and names the classfsd to start).
import os

import pytest

pytest_plugins = ["classfs.pytest_plugin"]

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sample.umockdev")


@pytest.fixture
def sample_record():
    return SAMPLE
