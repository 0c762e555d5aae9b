#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-check-layers.sh SOURCE_ROOT - scripts/check-layers.sh, the include
# rules every build runs, catches what it is there to catch: on a small
# tree of its own, a program, the Python extension or an example that
# includes the in-library interface (src/include/classfs-internal/) in
# any spelling, and a layer that reaches into another's folder, each
# fails with the file and line named and no stamp written; the same tree
# without them, where layers do include the in-library interface, passes.
# Last, the source tree itself passes.
set -uo pipefail
root=${1:?usage: test-check-layers.sh SOURCE_ROOT}
check=$root/scripts/check-layers.sh
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run_check NAME: check-layers.sh on $tmp/t; its status, stderr in $tmp/NAME.err
run_check() {
	rm -f "$tmp/stamp"
	"$check" "$tmp/stamp" "$tmp/t/src" --users "$tmp/t/programs" "$tmp/t/python" \
		"$tmp/t/examples" 2>"$tmp/$1.err"
}

# expect_refused NAME FILE TEXT: FILE (below $tmp/t) holding TEXT fails the check
expect_refused() {
	local name=$1 file=$2 text=$3 rc
	mkdir -p "$(dirname "$tmp/t/$file")"
	printf '#include <stdio.h>\n%s\nint x;\n' "$text" >"$tmp/t/$file"
	run_check "$name"
	rc=$?
	if ((rc != 1)); then
		bad "$name: $file with '$text': exit $rc, expected 1"
	elif [[ -e $tmp/stamp ]]; then
		bad "$name: refused, but the stamp was written"
	elif ! grep -qF "$file:2:" "$tmp/$name.err"; then
		bad "$name: the refusal does not name $file:2:"
		cat "$tmp/$name.err"
	else
		ok "$name refused ($file:2)"
	fi
	rm -f "$tmp/t/$file"
}

# a tree that keeps the rules: layers include the public headers, their
# own, and the in-library interface; users include the public headers only
mkdir -p "$tmp/t/src/core" "$tmp/t/src/views/fuse" "$tmp/t/programs/classfsd" \
	"$tmp/t/python" "$tmp/t/examples"
printf '#include "classfs/classfs.h"\n#include "classfs-internal/fs.h"\n#include "internal.h"\n' \
	>"$tmp/t/src/core/io.c"
printf '#include <classfs/classfs.h>\n#include "classfs-internal/watch.h"\n#include <sys/stat.h>\n' \
	>"$tmp/t/src/views/fuse/ops.c"
printf '#include <classfs/client.h>\n#include "daemon.h"\n#include "util.h"\n' \
	>"$tmp/t/programs/classfsd/main.c"
printf '#include <classfs/run.h>\n#include "_classfs.h"\n' >"$tmp/t/python/module.c"
printf '#include <classfs/kernel.h>\n' >"$tmp/t/examples/demo.c"
if run_check good && [[ -e $tmp/stamp ]]; then
	ok "a tree that keeps the rules passes (layers include classfs-internal/)"
else
	bad "a tree that keeps the rules was refused:"
	cat "$tmp/good.err"
fi

expect_refused program-quoted programs/classfsd/ops.c '#include "classfs-internal/fs.h"'
expect_refused program-angled programs/classctl/main.c '#  include <classfs-internal/testing.h>'
expect_refused program-header programs/classfsd/daemon2.h '#include "classfs-internal/watch.h"'
expect_refused python-ext python/client.c '#include "classfs-internal/fs.h"'
expect_refused python-ext-angled python/env.c '#include <classfs-internal/record-node.h>'
expect_refused example-relative examples/demo2.c \
	'#include "../src/include/classfs-internal/fs.h"'
expect_refused layer-outside src/views/fuse/notify.c '#include "../../core/internal.h"'
expect_refused layer-outside-angled src/views/fuse/loop.c '#include <../core/internal.h>'

# the source tree itself, as the build runs it
rm -f "$tmp/stamp"
if "$check" "$tmp/stamp" "$root/src" --users "$root/programs" "$root/python" "$root/examples" \
	2>"$tmp/tree.err" && [[ -e $tmp/stamp ]]; then
	ok "the source tree keeps the rules"
else
	bad "the source tree breaks the rules:"
	cat "$tmp/tree.err"
fi

cfs_summary
