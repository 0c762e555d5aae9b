#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-uid-switch.sh TESTS_DIR - every test that runs something as
# another uid goes through the one helper of its language: cfs_as_uid
# (tests/stage.sh: stages what the uid runs, then setpriv) for the shell,
# cfs_test_as_uid() (tests/as-uid.h) for C, and conftest.py's as_uid()
# (through cfs_as_uid) for Python.  Root may have cloned the repository
# where no other uid can enter (/root is 0700): a uid switch that does not
# stage what it runs fails there only.  Fails naming each line of
# tests/ (comments aside) that calls setpriv, setuid(), setgid(),
# setres[ug]id() or setre[ug]id() outside those helpers.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
dir=${1:?usage: check-uid-switch.sh TESTS_DIR}
cd "$dir" || exit 1
# the helpers themselves
allowed='^(stage\.sh|as-uid\.h|python/conftest\.py|check-uid-switch\.sh):'
# the one switch that is no test's: test_testbed.py sets a user namespace
# limit as the namespace's own root, then drops to uid 65534 inside it
# (of the copies it staged itself), where cfs_as_uid cannot stage
pending='^python/test_testbed\.py:.*exec setpriv'
found=$(grep -rnE --include='*.sh' --include='*.c' --include='*.h' --include='*.py' \
	'(^|[^[:alnum:]_-])(setpriv|setuid|setgid|setresuid|setresgid|setreuid|setregid)([^[:alnum:]_-]|$)' . |
	sed 's|^\./||' |
	grep -vE "$allowed" |
	grep -vE "$pending" |
	# comments: shell and Python "#", C "/*", " *" and "//"
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(#|/\*|\*|//)')
if [[ -n $found ]]; then
	bad "a uid switch outside the helpers (tests/stage.sh cfs_as_uid, tests/as-uid.h" \
		"cfs_test_as_uid(), tests/python/conftest.py as_uid()):"
	echo "$found"
else
	n=$(grep -rlE --include='*.sh' --include='*.c' --include='*.py' 'cfs_as_uid|cfs_test_as_uid|as_uid\(' . | wc -l)
	ok "no uid switch outside the helpers ($n files use them)"
fi
cfs_summary
